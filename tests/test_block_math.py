"""Strip mode: math functions run by AVX-512 / AVX2 block routines on strips of a row, and large outputs
written with non-temporal stores (rust/backend/cpu/blockmath.rs, loop_plan.rs (planned) and codegen.rs (emitted)).

The routines must give the inline code's bits, so every program below must give byte-identical results
with the routines off, on AVX2, on AVX-512 (where the host has them), on one thread and on two; values are
also checked against NumPy (float64, or float32 where the result is exact).
"""
import hashlib
import math
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax
from denormals import flush

CHILD = r'''
import sys
import numpy as np
import cranax
import cranax.numpy as jnp
from cranax import lax

rng = np.random.default_rng(7)
out = {}

def selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)

for n in (0, 1, 3, 5, 511, 512, 513, 1025, 1_000_003):
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    out[f"selu_{n}"] = np.asarray(cranax.jit(selu)(x))
wide = (rng.standard_normal(100_003) * 30).astype(np.float32)
pos = np.abs(wide) + np.float32(1e-3)
unary = {"exp": jnp.exp, "exp2": jnp.exp2, "expm1": jnp.expm1, "tanh": jnp.tanh, "logistic": lax.logistic,
         "erf": lax.erf, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan}
for name, f in unary.items():
    out[name] = np.asarray(cranax.jit(f)(wide))
# Huge arguments (the exact reduction) mixed with ordinary ones, lane by lane.
huge = np.where(np.arange(wide.size) % 5 == 0, wide * np.float32(1e5), wide).astype(np.float32)
for name in ("sin", "cos", "tan"):
    out[name + "_huge"] = np.asarray(cranax.jit(getattr(jnp, name))(huge))
# The clamp bounds of exp/exp2/expm1/erf and the values around them, NaN, infinities and signed zeros, tiled
# so the block routines (not only the tails) see every one of them in every lane position.
edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, -104.0, 89.0, -18.0, -152.0, 129.0, 1.25, 3.93, -1.25, -3.93]
edges = np.array(edges + [np.nextafter(np.float32(e), np.float32(s)) for e in edges[5:] for s in (-np.inf, np.inf)],
                 dtype=np.float32)
specials = np.tile(edges, 4096 // edges.size + 1)
specials = np.concatenate([specials, np.roll(specials, 3)])
for name in ("exp", "exp2", "expm1", "erf", "tanh", "logistic"):
    out[name + "_specials"] = np.asarray(cranax.jit(unary[name])(specials)).view(np.uint32)
for name, f in {"log": jnp.log, "log1p": jnp.log1p}.items():
    out[name] = np.asarray(cranax.jit(f)(pos))
out["chain"] = np.asarray(cranax.jit(lambda v: jnp.tanh(jnp.exp(v * 0.1)) + jnp.log1p(jnp.abs(v)))(wide))
# pow: f64 lanes plus powf on the lanes near a float32 rounding midpoint must give the inline code's powf bits;
# negative bases with integer exponents, operands computed in the kernel (the routine maps them in place), and
# the C library's special cases through every lane position (their own generator: the draws below stay as they were).
prng = np.random.default_rng(11)
pbase = (np.abs(prng.standard_normal(100_003)) * 3 + 0.05).astype(np.float32)
pexp = (prng.standard_normal(100_003) * 4).astype(np.float32)
out["pow"] = np.asarray(cranax.jit(jnp.power)(pbase, pexp))
out["pow_neg_int"] = np.asarray(cranax.jit(jnp.power)(-pbase, np.round(pexp)))
out["pow_computed"] = np.asarray(cranax.jit(lambda a, b: jnp.power(a * 0.5 + 0.25, b * 0.5) + 1.0)(pbase, pexp))
pe = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, 3e38],
              np.float32)
px, py = np.meshgrid(pe, np.concatenate([pe, np.float32([3.0, -3.0, 2.5, 150.0, -150.0])]))
out["pow_specials"] = np.asarray(cranax.jit(jnp.power)(np.tile(px.ravel(), 40), np.tile(py.ravel(), 40)[::-1].copy())).view(np.uint32)
m = rng.standard_normal((300, 700)).astype(np.float32)
row = rng.standard_normal(700).astype(np.float32)
out["bcast"] = np.asarray(cranax.jit(lambda a, r: jnp.exp(a + r) * 0.5)(m, row))
out["f16"] = np.asarray(cranax.jit(jnp.exp)(wide[:5000].astype(np.float16) / np.float16(8))).view(np.uint16)
# Values both a routine's operand and later loops need (kept in strip arrays, masks too), on rows and on
# a row reduction.
def kept(v):
    w = v * v * 0.01 + jnp.abs(v)
    m = w > 1.0
    return jnp.log(w + 1.0) + lax.lgamma(jnp.where(m, w, 2.0) + 1.0) + jnp.where(m, w, -w)
out["kept"] = np.asarray(cranax.jit(kept)(wide))
out["kept_red"] = np.asarray(cranax.jit(lambda v: jnp.sum(kept(v)))(wide))
# An operand that a later routine and the last loop read too (a routine maps its array in place).
out["kept_operand"] = np.asarray(cranax.jit(lambda v: jnp.log(jnp.abs(v) * 0.01 + 1e-3) - jnp.log1p(jnp.abs(v) * 0.01 + 1e-3)
                                            + (jnp.abs(v) * 0.01 + 1e-3))(wide))
e, d = cranax.jit(lambda v: (jnp.exp(v), v * 2.0))(wide)
out["two_outputs_a"], out["two_outputs_b"] = np.asarray(e), np.asarray(d)
many = lambda v: sum(jnp.exp(v * (0.01 * i)) for i in range(10))
out["many"] = np.asarray(cranax.jit(many)(wide))
out["donated"] = np.asarray(cranax.jit(jnp.tanh, donate_argnums=0)(cranax.device_put(wide.copy())))
# Row reductions run strips too (the reduced axis): per row, whole-array (split across threads), softmax.
rows = (rng.standard_normal((40, 1537)) * 3).astype(np.float32)
out["red_rows"] = np.asarray(cranax.jit(lambda a: jnp.sum(jnp.exp(a - jnp.max(a, axis=1, keepdims=True)), axis=1))(rows))
out["red_all"] = np.asarray(cranax.jit(lambda v: jnp.sum(jnp.tanh(v)))(wide))
out["red_max"] = np.asarray(cranax.jit(lambda v: jnp.max(jnp.log1p(jnp.abs(v))))(wide))
out["softmax"] = np.asarray(cranax.jit(cranax.nn.softmax)(rows))
# Outputs of 16 MiB or more are streamed (non-temporal stores), with and without math, iota, int32.
big = (rng.standard_normal(4_200_007) * 3).astype(np.float32)
out["stream_axpb"] = np.asarray(cranax.jit(lambda v: v * 2.0 + 1.0)(big))
ea, eb = cranax.jit(lambda v: (jnp.exp(v), v + jnp.arange(v.shape[0], dtype=jnp.float32)))(big)
out["stream_exp"], out["stream_iota"] = np.asarray(ea), np.asarray(eb)
out["stream_int"] = np.asarray(cranax.jit(lambda v: (v * 1000.0).astype(jnp.int32))(big))
out["stream_2d"] = np.asarray(cranax.jit(lambda a, r: jnp.tanh(a) * r)(big[:4_194_304].reshape(2048, 2048), big[:2048]))
# jax.random's threefry hash runs per strip on 16/8 lanes (rust/backend/cpu/threefry.rs): the key once per
# strip, keys per row (vmap over keys), a tail after the strips, and samplers built on the hash.
from cranax import random
out["rng_bits"] = np.asarray(random.bits(random.PRNGKey(3), (1000, 1000)))
out["rng_uniform_odd"] = np.asarray(random.uniform(random.PRNGKey(5), (100_003,)))
out["rng_vmap_keys"] = np.asarray(cranax.vmap(lambda k: random.bits(k, (2_000,)))(random.split(random.PRNGKey(1), 3)))
out["rng_poisson4"] = np.asarray(random.poisson(random.PRNGKey(2), 4.0, (100_000,)))
out["rng_normal"] = np.asarray(random.normal(random.PRNGKey(4), (50_001,)))
np.savez(sys.argv[1], **out)
'''


def _run(tmp_path, name, **env_extra):
    env = dict(os.environ)
    env.pop("CRANAX_CPU_BLOCK_MATH", None)
    env.update(env_extra)
    path = tmp_path / f"{name}.npz"
    r = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _host_has(flag):
    if platform.machine() not in ("x86_64", "AMD64") or not os.path.exists("/proc/cpuinfo"):
        return False
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return flag in line.split()
    return False


def test_block_routines_bit_identical_across_isas_and_threads(tmp_path):
    base = _run(tmp_path, "off", CRANAX_CPU_BLOCK_MATH="off", CRANAX_NUM_THREADS="2")
    configs = {
        "default_1thread": dict(CRANAX_NUM_THREADS="1"),
        "default_2threads": dict(CRANAX_NUM_THREADS="2"),
        "avx2_2threads": dict(CRANAX_CPU_BLOCK_MATH="avx2", CRANAX_NUM_THREADS="2"),
    }
    for name, env in configs.items():
        got = _run(tmp_path, name, **env)
        assert sorted(got) == sorted(base)
        for k in base:
            assert base[k].dtype == got[k].dtype and base[k].shape == got[k].shape, (name, k)
            assert base[k].tobytes() == got[k].tobytes(), f"{name}: {k} differs from the inline code"
    # The values themselves, against NumPy float64 (loose: the accuracy tables are tested elsewhere).
    rng = np.random.default_rng(7)
    xs = {}
    for n in (0, 1, 3, 5, 511, 512, 513, 1025, 1_000_003):
        xs[n] = (rng.standard_normal(n) * 4).astype(np.float32)
    for n, x in xs.items():
        x64 = x.astype(np.float64)
        want = 1.05 * np.where(x64 > 0, x64, 1.67 * np.exp(x64) - 1.67)
        np.testing.assert_allclose(base[f"selu_{n}"], want, rtol=2e-6, atol=1e-6)
    wide = (rng.standard_normal(100_003) * 30).astype(np.float32)
    w64 = wide.astype(np.float64)
    with np.errstate(over="ignore"):
        # exp's results below float32's smallest normal are flushed to zero, as JAX's CPU backend does
        np.testing.assert_allclose(base["exp"], flush(np.exp(w64).astype(np.float32)), rtol=3e-7)
        np.testing.assert_allclose(base["tanh"], np.tanh(w64), rtol=3e-7, atol=1e-30)
        np.testing.assert_allclose(base["log1p"], np.log1p(np.abs(w64) + 1e-3), rtol=3e-7)
        huge = np.where(np.arange(wide.size) % 5 == 0, wide * np.float32(1e5), wide).astype(np.float32).astype(np.float64)
        for name in ("sin", "cos", "tan"):
            f = getattr(np, name)
            # the accuracy table's 4-ulp bound (measured maxima: test_math_accuracy.py)
            for key, v in ((name, w64), (name + "_huge", huge)):
                want = f(v)
                tol = 4 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
                assert np.all(np.abs(base[key] - want) <= tol), key
        w = w64 * w64 * 0.01 + np.abs(w64)
        lg = np.vectorize(math.lgamma)(np.where(w > 1.0, w, 2.0) + 1.0)
        want_kept = np.log(w + 1.0) + lg + np.where(w > 1.0, w, -w)
        np.testing.assert_allclose(base["kept"], want_kept, rtol=1e-5)
        np.testing.assert_allclose(base["kept_red"], want_kept.sum(), rtol=1e-5)
        w = np.abs(w64) * 0.01 + 1e-3
        np.testing.assert_allclose(base["kept_operand"], np.log(w) - np.log1p(w) + w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(base["two_outputs_b"], w64 * 2, rtol=0)
        np.testing.assert_allclose(base["donated"], np.tanh(w64), rtol=3e-7, atol=1e-30)
        want_many = sum(np.exp(w64 * (0.01 * i)) for i in range(10))
        np.testing.assert_allclose(base["many"], want_many, rtol=2e-6)
        prng = np.random.default_rng(11)
        pbase = (np.abs(prng.standard_normal(100_003)) * 3 + 0.05).astype(np.float32).astype(np.float64)
        pexp = (prng.standard_normal(100_003) * 4).astype(np.float32).astype(np.float64)
        # powf is within 1 ulp (0.82 documented for glibc); results below float32's normal range are flushed
        for key, b, e in (("pow", pbase, pexp), ("pow_neg_int", -pbase, np.round(pexp))):
            want = flush(np.power(b, e).astype(np.float32)).astype(np.float64)
            np.testing.assert_allclose(base[key], want, rtol=2.4e-7, atol=0)
        assert np.sum(np.abs(base["pow_neg_int"]) > 0) > 50_000 and np.sum(base["pow_neg_int"] < 0) > 20_000
    rng.standard_normal((300, 700)), rng.standard_normal(700)  # the child's draws before `rows`
    rows = (rng.standard_normal((40, 1537)) * 3).astype(np.float64)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    np.testing.assert_allclose(base["red_rows"], e.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(base["softmax"], e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(base["red_all"], np.tanh(w64).sum(), rtol=1e-5)
    np.testing.assert_allclose(base["red_max"], np.log1p(np.abs(w64)).max(), rtol=3e-7)
    big = (rng.standard_normal(4_200_007) * 3).astype(np.float32)
    np.testing.assert_array_equal(base["stream_axpb"], big * np.float32(2) + np.float32(1))
    np.testing.assert_allclose(base["stream_exp"], np.exp(big.astype(np.float64)), rtol=3e-7)
    np.testing.assert_array_equal(base["stream_iota"], big + np.arange(big.size, dtype=np.float32))
    np.testing.assert_array_equal(base["stream_int"], (big * np.float32(1000)).astype(np.int32))
    a2 = big[:4_194_304].reshape(2048, 2048).astype(np.float64)
    np.testing.assert_allclose(base["stream_2d"], np.tanh(a2) * big[:2048], rtol=3e-6, atol=1e-37)
    # The hash's bits are JAX 0.10.2's (sha256 prefix recorded from JAX, as in test_random.py), and the vmapped
    # keys give each key's own draws.
    assert hashlib.sha256(base["rng_bits"].tobytes()).hexdigest()[:32] == "21a184e7ce4d90eb7ad165e5042c23bf"
    for i, k in enumerate(cranax.random.split(cranax.random.PRNGKey(1), 3)):
        np.testing.assert_array_equal(base["rng_vmap_keys"][i], np.asarray(cranax.random.bits(k, (2_000,))))
    assert abs(base["rng_poisson4"].mean() - 4.0) < 0.05 and abs(base["rng_normal"].std() - 1.0) < 0.02


@pytest.mark.skipif(not (_host_has("avx2") and _host_has("fma")), reason="strip mode needs AVX2+FMA (x86-64)")
@pytest.mark.skipif(os.environ.get("CRANAX_CPU_BLOCK_MATH", "").lower() == "off",
                    reason="CRANAX_CPU_BLOCK_MATH=off turns strip mode off in this process")
def test_strip_mode_is_used_where_the_host_has_the_lanes():
    x = np.zeros(10_000, np.float32)
    text = cranax.jit(lambda v: 1.05 * jnp.where(v > 0, v, 1.67 * jnp.exp(v) - 1.67)).lower(x).compile().as_text()
    # 10000 points: 20 strips of 500, rounded down to the vector loop's 8 points.
    assert "; strips of 496 points" in text and "Exp" in text and "streamed" not in text
    big = np.zeros(5_000_000, np.float32)
    assert "outputs streamed" in cranax.jit(lambda v: v * 2.0 + 1.0).lower(big).compile().as_text()
    # Short rows and arg-reductions stay inline; reductions of long rows run strips.
    assert "; strips" not in cranax.jit(jnp.exp).lower(np.zeros(100, np.float32)).compile().as_text()
    assert "; strips" in cranax.jit(lambda v: jnp.sum(jnp.exp(v))).lower(x).compile().as_text()
    assert "; strips" not in cranax.jit(lambda v: jnp.sum(jnp.exp(v))).lower(x[:500]).compile().as_text()
    assert "; strips" not in cranax.jit(lambda v: jnp.argmax(jnp.exp(v))).lower(x).compile().as_text()
    # jax.random's hash runs its rounds in the threefry routine.
    key = cranax.random.PRNGKey(0)
    assert "threefry2x32" in cranax.jit(lambda k: cranax.random.uniform(k, (10_000,))).lower(key).compile().as_text()


@pytest.mark.skipif(not (_host_has("avx2") and _host_has("fma")), reason="strip mode needs AVX2+FMA (x86-64)")
@pytest.mark.skipif(os.environ.get("CRANAX_CPU_BLOCK_MATH", "").lower() == "off",
                    reason="CRANAX_CPU_BLOCK_MATH=off turns strip mode off in this process")
@pytest.mark.skipif(os.environ.get("CRANAX_CPU_NO_SIMD") == "1", reason="no SIMD: every kernel is scalar")
def test_float64_strips_call_the_float64_routines(x64):
    # float64 kernels run f64x2 lanes: their strips call the float64 routines (exp, expm1, tanh, logistic, sinh,
    # cosh, exp2); the C library's functions (sin, log, ...) stay per element. Values: the scalar functions' bits,
    # checked against JAX's digests in every mode by test_math_xla64; here against NumPy within XLA's errors.
    x = np.random.default_rng(5).uniform(-20, 20, 10_003)
    f = lambda v: jnp.tanh(v) + jnp.exp(-jnp.abs(v)) * cranax.nn.sigmoid(v)
    text = cranax.jit(f).lower(x).compile().as_text()
    assert "float64 routines" in text and "Tanh" in text and "Exp" in text and "Logistic" in text
    assert "; strips" not in cranax.jit(jnp.sin).lower(x).compile().as_text()
    got = np.asarray(cranax.jit(f)(x))
    want = np.tanh(x) + np.exp(-np.abs(x)) / (1 + np.exp(-x))
    np.testing.assert_allclose(got, want, rtol=4e-15, atol=5e-16)  # (tanh + ... cancels near -1)


def test_strip_mode_values_on_odd_rows_and_views():
    # Rows of 513 points (one strip + a tail), a transposed input (not strip mode: strided) and a slice.
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((7, 1537)) * 3).astype(np.float32)
    f = cranax.jit(lambda v: jnp.tanh(v) * jnp.exp(-jnp.abs(v)))
    want = np.tanh(a.astype(np.float64)) * np.exp(-np.abs(a.astype(np.float64)))
    np.testing.assert_allclose(np.asarray(f(a)), want, rtol=3e-6, atol=1e-37)
    np.testing.assert_allclose(np.asarray(f(a[:, 5:518])), want[:, 5:518], rtol=3e-6, atol=1e-37)
    np.testing.assert_allclose(np.asarray(cranax.jit(lambda v: jnp.exp(v.T))(a)), np.exp(a.T.astype(np.float64)), rtol=3e-7)
