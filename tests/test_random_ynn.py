"""dirichlet, ball and float64 f bit for bit as JAX 0.10.2 draws them on the CPU (issue 22).

XLA:CPU in jaxlib 0.10.2 hands a fusion rooted at a reduce whose ops span >= 4096 elements to YNNPACK: there
``exp``/``log``/``log1p`` are YNNPACK's polynomials and the row sum runs in YNNPACK's lane-tree order; below that
size XLA sums a row left to right (in 32-wide windows past 32). ``random.dirichlet`` (softmax of log-gamma draws)
and ``random.ball`` (norm of generalized-normal draws) go through both. ``_prng.ynn_*``/``xla_sum_last`` mirror
them; the digests are sha256 prefixes of the raw bytes of JAX's results, recorded with JAX 0.10.2 on an AMD EPYC
host with AVX-512/FMA and glibc 2.36 (YNNPACK grids via ``exp(x - max(x))``-style fusions, sums via
``jnp.sum``). YNNPACK's arithmetic and the sums are plain IEEE operations and fused multiply-adds, so cranax's
values are the same on every host and asserted everywhere; the samplers also read the gamma sampler's rsqrt and
the C library's pow, so their digests are asserted only on hosts that compute those as the recording one did.
"""
import hashlib

import numpy as np
import pytest

import cranax
from cranax import _prng, random

from test_random_f64 import _avx512
from test_random_xla_f32 import _as_recorded

K = random.PRNGKey
F4, F8 = "float32", "float64"

JAX = {
    "dirichlet_ynn": "ec171f3272fbab418ea4c66aa14f07e7",
    "dirichlet_small": "7330a19791a77e82dbcfb95fd8ce2660",
    "dirichlet_wide": "2c597c43611d41264a95924561604b3b",
    "ball_ynn": "d54d71cf169f22afb20b5008b91348d7",
    "ball_p15": "85ee8eba53574dd2f4180187d671a1bc",
    "ball_small": "cbeff8ca7abcc425bf795bcc532c29e0",
    "ball_mixed": "d8ecc35e670b1438edfb4074b484ba14",
    "ball_d1": "83ed7b174a137994d982413f8f339a8f",
    "dirichlet_ynn_f64": "d02af74d6a401d75bf8f466d03e50962",
    "dirichlet_small_f64": "fea3b140e435c229da609e084682f8ba",
    "dirichlet_wide_f64": "379efaa19d6d45bf54a6b947e51d95e7",
    "dirichlet_tiny_alpha_f64": "db8521f23605596f4650566fa499e763",
    "ball_ynn_f64": "91cd066433ffe6434a6c35b66fc22a0d",
    "ball_p15_f64": "2bf119e6f712af595f972b3bb64f3cad",
    "ball_small_f64": "21433b7aa90ee2af55c9c3e0c06f1433",
    "ball_mixed_f64": "56af0d5a6e48801cb33f30bb2cf84d64",
    "f_f64": "04f6681c82837d9256869022d4aef362",
    "generalized_normal_p17_x64_f32": "c45cb712459772bd8adc93b0d94f9dd5",
    "ball_p17_x64_f32": "8864abd6152309ac23979b346239a6ed",
    "ynn_exp_float32": "6aeeaca7588f30766d8bf6e9c6dc8726",
    "ynn_log_float32": "be30523e7587b2fb2ba9baf9752f34e5",
    "ynn_log1p_float32": "944df87d491fdd759bbb52ab18b7e79e",
    "sum_1366x3_float32": "991e9583facab2b92f99b71c534241d5",
    "sum_200x33_float32": "45e0c2d85cf5bc3fee14e7325207a584",
    "sum_64x100_float32": "3731c5004ac8f6e7b65a9dfe578e65b5",
    "sum_16x1100_float32": "8393b86a57f87d263b48f0e6683d36ba",
    "sum_64x5000_float32": "c44bfd9fc17ecdbd879b4c9046a27b9b",
    "sum_500x8_float32": "9fde724b2416d2030be62006cdd491aa",
    "sum_121x33_float32": "ff60261b69d89df71d948883a3564c6b",
    "sum_40x100_float32": "60e197e3c06f2e1644aa83e9fcdbec10",
    "ynn_exp_float64": "05fd00049923e1bce277a05e5a26b161",
    "ynn_log_float64": "0e13ea8573a37d768155b5e73089ec25",
    "ynn_log1p_float64": "df2ecf712ed3aaa22c04d24504014cab",
    "sum_1366x3_float64": "1adab54fac49ec0282722cecb85b1146",
    "sum_200x33_float64": "eb28a644d36e398470870fd17bb8a86d",
    "sum_64x100_float64": "69106ddbb78d0e3714cbac571384fbc3",
    "sum_16x1100_float64": "9fffb41f185c2281e9e0ac4942ebdc51",
    "sum_64x5000_float64": "ebd0ffc7ef5f45facd69a06c4b4d0b1b",
    "sum_500x8_float64": "f3cb7bd7ec4d4b724f98e8b98c1a115b",
    "sum_121x33_float64": "ca2f879ae2d5243c3a93ed4b94f99a62",
    "sum_40x100_float64": "61144dd20daf61a58a37379deb8e3582",
    # under vmap XLA decides on the batched shape: 3 keys x (1000, 3) draws span 9000 elements (YNNPACK's),
    # each draw 3000 (XLA's own); 3 x (300, 3) stays below 4096
    "dirichlet_vmap_keys": "5631e369ef6bb7b0af54322f31a80eff",
    "dirichlet_vmap_alpha": "f1dd6405fad7c8aa6a67e0ea7fe6aebe",
    "dirichlet_vmap_small": "2564f7dd0b2380cabe7a0ae132e0e725",
    "ball_vmap_keys": "f6b3fe7be87ea3fe81cc7134e797e64f",
    "ball_vmap2": "26dc50dfceae2a08eb445f6e448f019a",
    "dirichlet_vmap_keys_f64": "03d9d3fc238d032d65c9373f8342547f",
    "dirichlet_vmap_alpha_f64": "d0550dfbb11be66fce5ee64ae6071ae7",
    "dirichlet_vmap_small_f64": "f3fab1e66bf6385bb6193702aefa7511",
    "ball_vmap_keys_f64": "e1a7657817c1929a82611c56d01b99fc",
    "ball_vmap2_f64": "242a0ab2a55628e0bb76b0a525d73050",
}


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(np.asarray(a)).tobytes()).hexdigest()[:32]


def _grids(dt):
    v = -np.concatenate([[0.0], np.geomspace(1e-8, 100.0, 100000)]).astype(dt)
    w = np.geomspace(1e-37, 1.0, 100001).astype(dt)
    u = np.linspace(-0.999, 1.0, 100001).astype(dt)
    return v, w, u


def _sum_input(n, k, dt):
    i = np.arange(n * k, dtype=np.float64)
    x = np.mod(i * 0.6180339887498949, 1.0) * np.exp2(np.mod(i, 7.0) * 3 - 9)
    return x.reshape(n, k).astype(dt)


# (1366, 3) .. (64, 5000) span >= 4096 elements (YNNPACK's sum), the last three fewer (XLA's own)
SUM_SHAPES = [(1366, 3), (200, 33), (64, 100), (16, 1100), (64, 5000), (500, 8), (121, 33), (40, 100)]


@pytest.mark.parametrize("dt", [F4, F8])
def test_ynn_exp_log_log1p_bits_match_jax(dt, x64):
    v, w, u = _grids(dt)
    assert _digest(cranax.jit(_prng.ynn_exp)(v)) == JAX[f"ynn_exp_{dt}"]
    assert _digest(cranax.jit(_prng.ynn_log)(w)) == JAX[f"ynn_log_{dt}"]
    assert _digest(cranax.jit(_prng.ynn_log1p)(u)) == JAX[f"ynn_log1p_{dt}"]


@pytest.mark.parametrize("dt", [F4, F8])
def test_ynn_functions_accurate(dt, x64):
    # a float64 (float128 for float64) NumPy oracle: YNNPACK's polynomials are within a few ulp
    v, w, u = _grids(dt)
    hi = np.float64 if dt == F4 else np.longdouble
    tol = 4 if dt == F4 else 8
    for fn, ref, x in ((_prng.ynn_exp, np.exp, v[v > -80]), (_prng.ynn_log, np.log, w),
                       (_prng.ynn_log1p, np.log1p, u)):
        got = np.asarray(cranax.jit(fn)(x)).astype(hi)
        want = ref(x.astype(hi))
        ulp = np.spacing(np.abs(want).astype(dt)).astype(hi)
        assert np.max(np.abs(got - want) / ulp) <= tol, fn.__name__


@pytest.mark.parametrize("dt", [F4, F8])
def test_ynn_special_values(dt, x64):
    x = np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 100.0, -100.0, 800.0, -800.0], dt)
    e = np.asarray(cranax.jit(_prng.ynn_exp)(x))
    assert e[0] == 1 and e[1] == 1 and e[3] == np.inf and e[4] == 0 and np.isnan(e[5])
    if dt == F4:
        assert e[6] == np.inf and e[7] == 0  # past YNNPACK's clamp: 2^128 -> inf, 2^-127 -> 0
    assert e[8] == np.inf and e[9] == 0
    lg = np.asarray(cranax.jit(_prng.ynn_log)(np.array([0.0, -1.0, np.inf, np.nan, 1.0], dt)))
    assert lg[0] == -np.inf and np.isnan(lg[1]) and lg[2] == np.inf and np.isnan(lg[3]) and lg[4] == 0
    l1 = np.asarray(cranax.jit(_prng.ynn_log1p)(np.array([-1.0, -2.0, np.inf, 0.0, 1e-30], dt)))
    assert l1[0] == -np.inf and np.isnan(l1[1]) and l1[2] == np.inf and l1[3] == 0 and l1[4] == np.dtype(dt).type(1e-30)


@pytest.mark.parametrize("dt", [F4, F8])
@pytest.mark.parametrize("n,k", SUM_SHAPES)
def test_row_sums_in_jax_order(n, k, dt, x64):
    x = _sum_input(n, k, dt)
    fn = _prng.ynn_sum_last if _prng.ynn_sized((n, k)) else _prng.xla_sum_last
    got = np.asarray(cranax.jit(fn)(x))
    assert _digest(got) == JAX[f"sum_{n}x{k}_{dt}"]
    np.testing.assert_allclose(got, x.astype(np.float64).sum(-1), rtol=1e-5 if dt == F4 else 1e-13)


def test_sum_helpers_reject_scalars():
    with pytest.raises(ValueError, match="rank >= 1"):
        _prng.ynn_sum_last(np.float32(1.0))
    with pytest.raises(ValueError, match="rank >= 1"):
        _prng.xla_sum_last(np.float32(1.0))
    with pytest.raises(TypeError, match="float32 or float64"):
        _prng.ynn_exp(np.arange(3, dtype=np.int32))


def _vmapped(dt):
    ks = random.split(K(0), 3)
    a = np.array([0.5, 1., 3.], dt)
    at = np.array([[0.5, 1., 3.], [2., .3, 1.]], dt).T
    sfx = "" if dt == F4 else "_f64"
    return {
        "dirichlet_vmap_keys" + sfx: lambda: cranax.vmap(lambda k: random.dirichlet(k, a, (1000,), dt))(ks),
        # alpha mapped along its last axis, the result's batch axis last
        "dirichlet_vmap_alpha" + sfx: lambda: cranax.vmap(lambda al: random.dirichlet(K(5), al, (1000,), dt),
                                                          in_axes=1, out_axes=1)(at),
        "dirichlet_vmap_small" + sfx: lambda: cranax.vmap(lambda k: random.dirichlet(k, a, (300,), dt))(ks),
        "ball_vmap_keys" + sfx: lambda: cranax.vmap(lambda k: random.ball(k, 3, 2, (1500,), dt))(ks),
        "ball_vmap2" + sfx: lambda: cranax.vmap(cranax.vmap(lambda k: random.ball(k, 4, 2, (500,), dt)))(
            random.split(K(2), 6).reshape(2, 3, 2)),
    }


def _cases(x64):
    c = {
        "dirichlet_ynn": lambda: random.dirichlet(K(3), np.array([0.5, 1.0, 3.0], F4), (66666,), F4),
        "dirichlet_small": lambda: random.dirichlet(K(4), np.linspace(0.3, 4.0, 40).astype(F4), (50,), F4),
        "dirichlet_wide": lambda: random.dirichlet(K(5), np.linspace(0.3, 4.0, 100).astype(F4), (100,), F4),
        "ball_ynn": lambda: random.ball(K(3), 3, 2, (66666,), F4),
        "ball_p15": lambda: random.ball(K(6), 5, 1.5, (20000,), F4),
        "ball_small": lambda: random.ball(K(7), 7, 2, (500,), F4),
        "ball_mixed": lambda: random.ball(K(8), 40, 2, (500,), F4),
        "ball_d1": lambda: random.ball(K(9), 1, 2, (5000,), F4),
        **_vmapped(F4),
    }
    if not x64:
        return c
    return {
        "dirichlet_ynn_f64": lambda: random.dirichlet(K(3), np.array([0.5, 1.0, 3.0]), (66666,), F8),
        "dirichlet_small_f64": lambda: random.dirichlet(K(4), np.linspace(0.3, 4.0, 40), (50,), F8),
        "dirichlet_wide_f64": lambda: random.dirichlet(K(5), np.linspace(0.3, 4.0, 100), (100,), F8),
        "dirichlet_tiny_alpha_f64": lambda: random.dirichlet(K(12), np.array([1e-3, 1e-2, 5e-3]), (3000,), F8),
        "ball_ynn_f64": lambda: random.ball(K(3), 3, 2, (66666,), F8),
        "ball_p15_f64": lambda: random.ball(K(6), 5, 1.5, (20000,), F8),
        "ball_small_f64": lambda: random.ball(K(7), 7, 2, (500,), F8),
        "ball_mixed_f64": lambda: random.ball(K(8), 40, 2, (500,), F8),
        "f_f64": lambda: random.f(K(3), 3.0, 5.0, (200000,), F8),
        # under x64 a Python float p reaches JAX's jitted sampler as float64: 1/p is taken there
        "generalized_normal_p17_x64_f32": lambda: random.generalized_normal(K(11), 1.7, (5000,), F4),
        "ball_p17_x64_f32": lambda: random.ball(K(11), 3, 1.7, (1366,), F4),
        **_vmapped(F8),
    }


def _check(name, v):
    v = np.asarray(v)
    assert np.all(np.isfinite(v)), name
    f64 = v.dtype == np.float64
    # every case draws gamma variates (rsqrt) and, but dirichlet and f, takes pow
    needs_pow = not (name.startswith("dirichlet") or name.startswith("f_"))
    as_recorded = (_avx512() if f64 else _as_recorded("rsqrt")) and (not needs_pow or _as_recorded("pow"))
    if as_recorded:
        assert _digest(v) == JAX[name], name
    if name.startswith("dirichlet"):
        np.testing.assert_allclose(v.sum(-1), 1.0, rtol=1e-5 if not f64 else 1e-12)
        assert np.all(v >= 0)
    elif name.startswith("ball"):
        assert np.all(np.abs(v) <= 1)


@pytest.mark.parametrize("name", list(_cases(False)))
def test_float32_draws_bit_identical_to_jax(name, x32):
    _check(name, _cases(False)[name]())


@pytest.mark.parametrize("name", list(_cases(True)))
def test_x64_draws_bit_identical_to_jax(name, x64):
    _check(name, _cases(True)[name]())


def test_ball_norm_within_unit_ball_and_dirichlet_mean():
    # distribution checks that hold on every host: E[dirichlet] = alpha / sum(alpha); ball points have norm < 1
    a = np.array([0.5, 1.0, 3.0], np.float32)
    d = np.asarray(random.dirichlet(K(21), a, (40000,), F4))
    np.testing.assert_allclose(d.mean(0), a / a.sum(), atol=5e-3)
    b = np.asarray(random.ball(K(22), 3, 2, (20000,), F4))
    r = np.linalg.norm(b, axis=-1)
    assert np.all(r < 1)
    # uniform in the 3-ball: P(r < 1/2) = 1/8
    assert abs(np.mean(r < 0.5) - 0.125) < 0.01


def test_ynn_choice_decides_on_the_batched_shape(x32):
    # 3 x (1000, 3) = 9000 elements under vmap: YNNPACK's sum; one (1000, 3) row block alone: XLA's order
    x = _sum_input(3000, 3, F4).reshape(3, 1000, 3)
    got = np.asarray(cranax.vmap(lambda r: _prng.ynn_choice("sum_last", r))(x))
    np.testing.assert_array_equal(got, np.asarray(cranax.jit(_prng.ynn_sum_last)(x)))
    one = np.asarray(cranax.jit(lambda r: _prng.ynn_choice("sum_last", r))(x[0]))
    np.testing.assert_array_equal(one, np.asarray(cranax.jit(_prng.xla_sum_last)(x[0])))
    # mapped along the reduced axis: the batch axis moves to the front, the row stays last
    t = np.asarray(cranax.vmap(lambda r: _prng.ynn_choice("sum_last", r), in_axes=2)(x.transpose(1, 2, 0)))
    np.testing.assert_array_equal(t, got)
    # log_add with d unmapped (broadcast into the batched fusion, as XLA fuses it)
    d, v, b = (np.linspace(0.5, 3.0, 3000, dtype=F4) for _ in range(3))
    la = cranax.vmap(lambda vv: _prng.ynn_choice("log_add", d, vv, b))(np.stack([v, v]))
    want = np.asarray(cranax.jit(lambda a, c, e: _prng.ynn_log(a) + _prng.ynn_log(c) + e)(d, v, b))
    np.testing.assert_array_equal(np.asarray(la), np.stack([want, want]))


def test_ynn_choice_derivatives_and_errors(x32):
    x = (np.arange(12, dtype=F4).reshape(4, 3) + 1) / 7
    f = lambda v: _prng.ynn_choice("sum_last", _prng.ynn_choice("exp", v)).sum()  # noqa: E731
    np.testing.assert_allclose(np.asarray(cranax.grad(f)(x)), np.exp(x), rtol=1e-6)
    g = cranax.grad(lambda d: _prng.ynn_choice("log_add", d, x, x).sum())(x)
    np.testing.assert_allclose(np.asarray(g), 1 / x, rtol=1e-6)
    h = cranax.grad(lambda v: _prng.ynn_choice("log1p", v).sum())(x)
    np.testing.assert_allclose(np.asarray(h), 1 / (1 + x), rtol=1e-6)
    with pytest.raises(TypeError, match="takes 3 operands"):
        _prng.ynn_choice("log_add", x, x)
    with pytest.raises(ValueError, match="unknown fn"):
        _prng.ynn_choice("tan", x)
    with pytest.raises(TypeError, match="float32 or float64"):
        _prng.ynn_choice("exp", np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match="rank >= 1"):
        _prng.ynn_choice("sum_last", np.float32(1))
