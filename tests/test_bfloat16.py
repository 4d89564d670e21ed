"""bfloat16 end to end: the dtype (ml_dtypes', as JAX), storage, conversions, JAX's promotion lattice, printing,
elementwise arithmetic rounded per operation, reductions and dot accumulating in float32, jit/grad/vmap, random.

Oracles: ml_dtypes' rounding (each operation computed in float32 by NumPy, rounded to bfloat16 by
``astype(ml_dtypes.bfloat16)``: XLA's CPU semantics), exact bit patterns for conversions, and values recorded
from JAX 0.10.2 on this machine's CPU (written into the tests; JAX itself is not needed).
"""
import ml_dtypes
import numpy as np
import pytest

import cranax as jax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax import dtypes

from op_records import OPS, select

BF = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32
ALL_BITS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(BF)


def bits(a):
    return np.asarray(a).view(np.uint16).tolist()


def rb(x):
    """float32 values rounded to bfloat16 by ml_dtypes (the oracle's rounding)."""
    with np.errstate(all="ignore"):
        return np.asarray(x, F32).astype(BF)


TINY = np.float32(2.0 ** -126)


def ftz(x):
    """Subnormals flushed to (signed) zero: JAX's CPU arithmetic runs with denormals-are-zero and
    flush-to-zero (conversions keep subnormals)."""
    x = np.asarray(x, F32)
    return np.where(np.abs(x) < TINY, np.copysign(F32(0), x), x).astype(F32)


def assert_same_bf16(got, want):
    """Bit-identical bfloat16 arrays, except that any NaN matches any NaN."""
    got = np.asarray(got)
    want = np.asarray(want).astype(BF)
    assert got.dtype == BF, got.dtype
    assert got.shape == want.shape
    gn, wn = np.isnan(got.astype(F32)), np.isnan(want.astype(F32))
    assert (gn == wn).all(), (got, want)
    g, w = got.view(np.uint16)[~gn], want.view(np.uint16)[~wn]
    bad = np.nonzero(g != w)[0]
    assert bad.size == 0, f"{bad.size} differ, first at {bad[:5]}: got {got[~gn][bad[:5]]}, want {want[~wn][bad[:5]]}"


def ulps_bf16(a, b):
    a = np.asarray(a).astype(BF)
    b = np.asarray(b).astype(BF)
    both_nan = np.isnan(a.astype(F32)) & np.isnan(b.astype(F32))
    a = a.view(np.int16).astype(np.int64)
    b = b.view(np.int16).astype(np.int64)
    a = np.where(a < 0, -(a & 0x7FFF), a)
    b = np.where(b < 0, -(b & 0x7FFF), b)
    return np.where(both_nan, 0, np.abs(a - b))


def finite_bf16(n, seed, lo, hi):
    return rb(np.random.default_rng(seed).uniform(lo, hi, n))


# ------------------------------------------------------------------------------------------ the dtype

def test_names_and_scalar_type():
    assert jnp.bfloat16.dtype == BF
    assert np.dtype(jnp.bfloat16) == BF
    assert dtypes.bfloat16 is ml_dtypes.bfloat16
    assert repr(jnp.bfloat16(2.5)) == "Array(2.5, dtype=bfloat16)"
    assert jnp.zeros(3, jnp.bfloat16).dtype == BF
    assert jnp.ones((2,), dtype="bfloat16").dtype == BF
    assert jnp.zeros(2, ml_dtypes.bfloat16).dtype == BF
    assert dtypes.short_name(BF) == "bf16"
    assert dtypes.from_short_name("bf16") == BF
    assert dtypes.canonicalize_dtype(BF) == BF
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating) and jnp.issubdtype(BF, np.inexact)
    assert not jnp.issubdtype(jnp.bfloat16, jnp.integer) and not jnp.issubdtype(np.float32, jnp.bfloat16)
    assert jnp.issubdtype(jnp.bfloat16, jnp.bfloat16)


# JAX 0.10.2: jnp.promote_types(bfloat16, other) and jnp.result_type(bfloat16, other)
PROMOTE = [(np.int8, BF), (np.uint8, BF), (np.int16, BF), (np.uint16, BF), (np.int32, BF), (np.uint32, BF),
           (np.float16, F32), (F32, F32), (BF, BF), (np.bool_, BF), (np.complex64, np.complex64)]


@pytest.mark.parametrize("other,want", PROMOTE)
def test_promotion_like_jax(other, want):
    assert jnp.promote_types(jnp.bfloat16, other) == want
    assert jnp.promote_types(other, jnp.bfloat16) == want
    assert jnp.result_type(jnp.bfloat16, other) == want


def test_x64_keeps_bfloat16(x64):
    assert dtypes.canonicalize_dtype(BF) == BF
    assert jnp.result_type(BF, 1.0) == BF and jnp.promote_types(BF, np.float64) == np.float64
    assert (jnp.ones(2, jnp.bfloat16) + 1.5).dtype == BF


def test_weak_scalars_keep_bfloat16():
    x = jnp.ones(3, jnp.bfloat16)
    assert jnp.result_type(BF, 1) == BF and jnp.result_type(BF, 1.0) == BF
    assert jnp.result_type(BF, 1j) == np.complex64
    assert jnp.promote_types(BF, float) == BF and jnp.promote_types(BF, int) == BF
    for y in (x + 1.0, x * 2, 3 - x, x + jnp.int32(2), x / 3):
        assert y.dtype == BF
    assert (x + x.astype(jnp.float16)).dtype == F32
    assert (x + jnp.ones(3)).dtype == F32


def test_finfo_is_ml_dtypes():
    fi = jnp.finfo(jnp.bfloat16)
    assert fi.eps == 2.0 ** -7 and float(fi.max) == 3.3895313892515355e38 and fi.bits == 16 and fi.nmant == 7
    assert dtypes.finfo(jnp.ones(2, jnp.bfloat16)).eps == 2.0 ** -7


def test_printing_like_jax():
    x = jnp.array([1e10, -3e-5, 1 / 3], jnp.bfloat16)
    assert repr(x) == "Array([9.99922e+09, -3.00407e-05, 0.333984], dtype=bfloat16)"
    assert str(x) == "[9.99922e+09 -3.00407e-05 0.333984]"
    assert repr(jnp.array([1.5, 2, 3.1], jnp.bfloat16)) == "Array([1.5, 2, 3.09375], dtype=bfloat16)"
    assert repr(jnp.zeros((2, 2), jnp.bfloat16)) == "Array([[0, 0],\n       [0, 0]], dtype=bfloat16)"
    assert repr(jnp.array(2.5, jnp.bfloat16)) == "Array(2.5, dtype=bfloat16)"


def test_jaxpr_prints_bf16():
    x = jnp.ones(3, jnp.bfloat16)
    assert str(jax.make_jaxpr(lambda a: a * 2 + 1)(x)) == (
        "{ lambda ; a:bf16[3]. let\n    b:bf16[3] = mul a 2.0:bf16[]\n    c:bf16[3] = add b 1.0:bf16[]\n  in (c,) }")


# ------------------------------------------------------------------------------------------ storage, conversions

def test_numpy_round_trip_every_bit_pattern():
    got = np.asarray(jnp.asarray(ALL_BITS))
    assert got.dtype == BF
    assert np.array_equal(got.view(np.uint16), ALL_BITS.view(np.uint16))
    # a strided (non-contiguous) source
    got = np.asarray(jnp.asarray(ALL_BITS[::3]))
    assert np.array_equal(got.view(np.uint16), ALL_BITS[::3].view(np.uint16))


@pytest.mark.parametrize("jit", [False, True])
def test_bf16_to_f32_every_bit_pattern(jit):
    f = (lambda a: a.astype(jnp.float32))
    f = jax.jit(f) if jit else f
    got = np.asarray(f(jnp.asarray(ALL_BITS)))
    want = ALL_BITS.astype(F32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def f32_specials():
    s = [0.0, -0.0, 1.0, -1.0, 3.3895313892515355e38, 3.39e38, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan,
         1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -8 + 2.0 ** -20, 257.0, 259.0, 1e-38, 1e-40, 9.2e-41, 4.6e-41,
         -1e-45, 0.1, 1 / 3]
    rng = np.random.default_rng(0)
    r = rng.integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32).view(F32)
    d = rng.uniform(-1000, 1000, 20_000).astype(F32)
    return np.concatenate([np.array(s, F32), r, d])


@pytest.mark.parametrize("jit", [False, True])
def test_f32_to_bf16_rounds_like_ml_dtypes(jit):
    x = f32_specials()
    f = (lambda a: a.astype(jnp.bfloat16))
    f = jax.jit(f) if jit else f
    assert_same_bf16(f(jnp.asarray(x)), rb(x))
    # host conversions (jnp.array with a dtype) round the same way
    assert_same_bf16(jnp.array(x, jnp.bfloat16), rb(x))


def test_nan_becomes_the_quiet_nan():
    x = np.array([np.nan, -np.nan], F32)
    assert [b & 0x7FC0 for b in bits(jax.jit(lambda a: a.astype(jnp.bfloat16))(x))] == [0x7FC0, 0x7FC0]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
def test_int_to_bf16(dt):
    info = np.iinfo(dt)
    x = np.unique(np.clip(np.array([0, 1, -1, 255, 256, 257, 259, 300, 1000, -129, info.min, info.max, 65535,
                                    123456], np.int64), info.min, info.max)).astype(dt)
    for f in (lambda a: a.astype(jnp.bfloat16), jax.jit(lambda a: a.astype(jnp.bfloat16))):
        assert_same_bf16(f(jnp.asarray(x)), rb(x.astype(np.float64)))
    # JAX 0.10.2: jnp.arange(300).astype(bfloat16)[-3:]
    assert np.asarray(jnp.arange(300).astype(jnp.bfloat16)[-3:]).astype(F32).tolist() == [296, 298, 300]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.uint32])
def test_bf16_to_int_saturates(dt):
    info = np.iinfo(dt)
    x = np.array([0.5, -0.5, 2.75, -2.75, 100.5, 1e10, -1e10, np.inf, -np.inf, np.nan], F32).astype(BF)
    want = np.clip(np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=info.max, neginf=info.min),
                   info.min, info.max).astype(dt)
    for f in (lambda a: a.astype(dt), jax.jit(lambda a: a.astype(dt))):
        got = np.asarray(f(jnp.asarray(x)))
        assert got.dtype == dt and got.tolist() == want.tolist()
    assert np.asarray(jnp.asarray(x).astype(bool)).tolist() == [True] * 9 + [True]


def test_bf16_f16_both_ways():
    x = ALL_BITS[~np.isnan(ALL_BITS.astype(F32))]
    got = np.asarray(jax.jit(lambda a: a.astype(jnp.float16))(jnp.asarray(x)))
    with np.errstate(over="ignore"):
        want = x.astype(F32).astype(np.float16)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = h[~np.isnan(h)]
    got = np.asarray(jax.jit(lambda a: a.astype(jnp.bfloat16))(jnp.asarray(h)))
    assert_same_bf16(got, rb(h.astype(F32)))


def test_bitcast_convert_type():
    x = jnp.array([0.1, -2.5, 3.7, 100.3], jnp.bfloat16)
    # JAX 0.10.2: lax.bitcast_convert_type(x, uint16)
    assert np.asarray(lax.bitcast_convert_type(x, jnp.uint16)).tolist() == [15821, 49184, 16493, 17097]
    back = lax.bitcast_convert_type(jnp.array([15821, 49184], jnp.uint16), jnp.bfloat16)
    assert back.dtype == BF and bits(back) == [15821, 49184]


# ------------------------------------------------------------------------------------------ elementwise

# the binary ops whose float16 record rounds exactly like NumPy's float16 (each op in float32, rounded once)
EXACT_BINARY = [(r.name, r.numpy_fn) for r in select("binary", where=lambda r: r.f16 is not None and r.f16.ulp == 0)]


@pytest.mark.parametrize("name,npf", EXACT_BINARY)
@pytest.mark.parametrize("jit", [False, True])
def test_binary_ops_round_like_ml_dtypes(name, npf, jit):
    a = np.concatenate([finite_bf16(3000, 1, -1e5, 1e5), finite_bf16(3000, 2, -2, 2),
                        np.array([np.inf, -np.inf, np.nan, 0, 1e-40, 3e38, 3e38], F32).astype(BF)])
    b = np.concatenate([finite_bf16(3000, 3, -1e5, 1e5), finite_bf16(3000, 4, -2, 2),
                        np.array([1, np.inf, 2, -0.5, 1, 3e38, -3e38], F32).astype(BF)])
    f = OPS[name].jnp
    f = jax.jit(f) if jit else f
    with np.errstate(all="ignore"):
        want = rb(ftz(npf(ftz(a.astype(F32)), ftz(b.astype(F32)))))
    assert_same_bf16(f(jnp.asarray(a), jnp.asarray(b)), want)


@pytest.mark.parametrize("name", [r.name for r in select("unary", where=lambda r: r.f16 is not None)])
def test_unary_math_within_one_ulp(name):
    r = OPS[name]
    x = np.concatenate([finite_bf16(4000, 5, -10, 10), finite_bf16(1000, 6, 0, 3),
                        np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 1e-5, 3e38], F32).astype(BF)])
    if r.f16.nonneg:
        x = np.abs(x)
    with np.errstate(all="ignore"):
        want = rb(ftz(r.numpy_fn(ftz(x.astype(F32)).astype(np.float64))))
    for g in (r.face, jax.jit(r.face)):
        got = np.asarray(g(jnp.asarray(x)))
        assert got.dtype == BF
        wn = np.isnan(want.astype(F32))
        assert (np.isnan(got.astype(F32)) == wn).all(), name
        d = ulps_bf16(got, want)[~wn]
        assert d.max() <= max(r.f16.ulp, 1), (name, x[~wn][d.argmax()], d.max())


# JAX 0.10.2 on x = [0.1, -2.5, 3.7, 100.3] (bfloat16), printed values
JAX_X = [0.1, -2.5, 3.7, 100.3]
JAX_OPS = {
    "tanh": (jnp.tanh, [0.0996094, -0.988281, 1, 1]),
    "sin": (jnp.sin, [0.100098, -0.597656, -0.53125, -0.0310059]),
    "log_abs": (lambda v: jnp.log(jnp.abs(v)), [-2.29688, 0.917969, 1.3125, 4.625]),
    "sqrt_abs": (lambda v: jnp.sqrt(jnp.abs(v)), [0.316406, 1.57812, 1.92188, 10]),
    "div3": (lambda v: v / 3, [0.0334473, -0.832031, 1.23438, 33.5]),
    "square": (lambda v: v ** 2, [0.0100098, 6.25, 13.6875, 10112]),
    "plus_i32": (lambda v: v + jnp.int32(2), [2.09375, -0.5, 5.6875, 102.5]),
    "floor": (jnp.floor, [0, -3, 3, 100]),
    "round": (jnp.round, [0, -2, 4, 100]),
    "clip": (lambda v: jnp.clip(v, -1, 1), [0.100098, -1, 1, 1]),
    "gelu": (jax.nn.gelu, [0.0539551, -0.0146484, 3.70312, 100.5]),
    "sin2": (lambda v: jnp.sin(v) * 2, [0.200195, -1.19531, -1.0625, -0.0620117]),
    "sort": (jnp.sort, [-2.5, 0.100098, 3.70312, 100.5]),
    "where": (lambda v: jnp.where(v > 0, v, 0), [0.100098, 0, 3.70312, 100.5]),
}


@pytest.mark.parametrize("name", sorted(JAX_OPS))
def test_matches_recorded_jax(name):
    f, want = JAX_OPS[name]
    x = jnp.array(JAX_X, jnp.bfloat16)
    for g in (f, jax.jit(f)):
        got = g(x)
        assert got.dtype == BF
        # the printed 6 significant digits identify a bfloat16 value (8 significant bits) exactly
        assert_same_bf16(got, np.array(want, F32).astype(BF))


def test_each_op_rounds_under_jit():
    # JAX 0.10.2: (a + 256) - 256 in bfloat16 loses the fraction in jit as well as op by op
    x = jnp.array([1.0, 0.5, 3.0, 0.3], jnp.bfloat16)
    c = jnp.array(256.0, jnp.bfloat16)
    f = lambda a, c: (a + c) - c
    for g in (f, jax.jit(f)):
        assert np.asarray(g(x, c)).astype(F32).tolist() == [0, 0, 4, 0]
    # 20 multiply-adds (JAX: bits 16622 op by op and in jit)
    body = lambda i, c: c * jnp.bfloat16(1.1) + jnp.bfloat16(0.01)
    assert bits(lax.fori_loop(0, 20, body, jnp.bfloat16(1.0))) == 16622
    assert bits(jax.jit(lambda c: lax.fori_loop(0, 20, body, c))(jnp.bfloat16(1.0))) == 16622


def test_no_multiply_add_contraction():
    # JAX 0.10.2's CPU backend rounds a bfloat16 product before the add, in jit too (checked bit for bit on
    # 64 random triples; float16 products too, except on hosts with float16 arithmetic, test_float16.py)
    x, y, z = (finite_bf16(3000, s, -30, 30) for s in (17, 18, 19))
    xs, ys, zs = (v.astype(F32) for v in (x, y, z))
    want = rb(rb(xs * ys).astype(F32) + zs)
    assert_same_bf16(jax.jit(lambda a, b, c: a * b + c)(x, y, z), want)
    assert_same_bf16(jnp.add(jnp.multiply(x, y), z), want)


def test_subnormals_flush_in_arithmetic_like_jax():
    # JAX 0.10.2 on [1e-40, 2, 9.25, 3e-39]: arithmetic flushes subnormal inputs and results, conversions keep them
    x = jnp.array([1e-40, 2.0, 9.25, 3e-39], jnp.bfloat16)
    for g in (lambda f: f, jax.jit):
        assert np.asarray(g(jnp.sqrt)(x)).astype(F32).tolist() == [0, 1.4140625, 3.046875, 0]
        assert np.asarray(g(jnp.log)(x)).astype(F32)[[0, 3]].tolist() == [-np.inf, -np.inf]
        assert np.asarray(g(jnp.sign)(x)).astype(F32).tolist() == [0, 1, 1, 0]
        assert np.asarray(g(lambda v: jnp.minimum(v, 1.0))(x)).astype(F32).tolist() == [0, 1, 1, 0]
    assert np.asarray(x.astype(jnp.float32)).tolist() == np.array([1e-40, 2, 9.25, 3e-39], F32).astype(BF).astype(F32).tolist()


def test_comparisons_and_predicates():
    x = jnp.array([0.1, -2.5, np.nan, np.inf], jnp.bfloat16)
    assert np.asarray(jnp.isnan(x)).tolist() == [False, False, True, False]
    assert np.asarray(jnp.isfinite(x)).tolist() == [True, True, False, False]
    assert np.asarray(x > 0).tolist() == [True, False, False, True]
    assert np.asarray(jax.jit(lambda a: a == jnp.bfloat16(0.1))(x)).tolist() == [True, False, False, False]


# ------------------------------------------------------------------------------------------ reductions, dot

RNG_A = np.random.RandomState(0).randn(64).astype(BF)


def test_reductions_accumulate_in_f32():
    a = jnp.asarray(RNG_A)
    got = jnp.stack([jnp.sum(a), jnp.mean(a), jnp.var(a), jnp.std(a), jnp.prod(a[:20]), jnp.max(a)])
    # JAX 0.10.2 bits of sum, mean, var, std, prod(a[:20]), max
    assert bits(got) == [16259, 15491, 16272, 16264, 46728, 16401]
    a32 = RNG_A.astype(F32)
    assert bits(jnp.sum(a)) == bits(rb(np.sum(a32, dtype=np.float64)))
    # a long sum: per-op bfloat16 rounding would stall at 256
    ones = jnp.ones(4096, jnp.bfloat16)
    assert float(jnp.sum(ones)) == 4096.0 and float(jax.jit(jnp.sum)(ones)) == 4096.0
    assert float(jnp.mean(jnp.arange(4), dtype=jnp.bfloat16)) == 1.5


def test_dot_accumulates_in_f32():
    rng = np.random.RandomState(0)
    rng.randn(64)
    A = rng.randn(16, 32).astype(BF)
    B = rng.randn(32, 8).astype(BF)
    want = rb(A.astype(F32) @ B.astype(F32))   # JAX 0.10.2 agrees on all 128 entries
    for f in (jnp.dot, jax.jit(jnp.dot), lambda a, b: a @ b):
        assert_same_bf16(f(jnp.asarray(A), jnp.asarray(B)), want)
    x = jnp.array(JAX_X, jnp.bfloat16)
    assert float(jnp.einsum("i,i->", x, x)) == 10112.0
    # JAX: lax.dot(x, x, preferred_element_type=float32) == 10120.224
    got = lax.dot(x, x, preferred_element_type=jnp.float32)
    assert got.dtype == F32 and np.isclose(float(got), 10120.224, rtol=1e-6)


# ------------------------------------------------------------------------------------------ transformations

def test_grad_vmap_jit():
    x = jnp.array(JAX_X, jnp.bfloat16)
    g = jax.grad(lambda v: jnp.sum(v * v))(x)
    assert g.dtype == BF
    assert_same_bf16(g, np.array([0.200195, -5, 7.40625, 201], F32))      # JAX 0.10.2
    g = jax.grad(lambda v: jnp.sum(jnp.exp(v / 100)))(x)
    assert_same_bf16(g, np.array([0.0100098, 0.00976562, 0.010376, 0.0273438], F32))
    assert_same_bf16(jax.vmap(lambda v: v * 3)(x), np.array([0.300781, -7.5, 11.125, 302], F32))
    assert_same_bf16(jax.nn.relu(x), np.array([0.100098, 0, 3.70312, 100.5], F32))
    assert_same_bf16(jax.nn.logsumexp(x), np.array(100.5, F32))


def test_movement_primitives():
    x = jnp.asarray(ALL_BITS[:1000])
    for f in (lambda a: jnp.concatenate([a, a[::-1]]), lambda a: a.reshape(10, 100).T,
              lambda a: jnp.pad(a, 3), lambda a: a[jnp.array([5, 1, 999])], lambda a: a[::7]):
        want = f(np.asarray(x).view(np.uint16).astype(np.int64))
        got = np.asarray(jax.jit(f)(x))
        assert got.dtype == BF and np.array_equal(got.view(np.uint16), np.asarray(want).astype(np.uint16))


# ------------------------------------------------------------------------------------------ random

def test_random_uniform_normal_bit_exact_with_jax():
    # JAX 0.10.2 (threefry, partitionable): the first 8 draws, as bfloat16 bits
    k = jax.random.PRNGKey(0)
    u = jax.random.uniform(k, (8,), jnp.bfloat16)
    assert u.dtype == BF and bits(u) == [16166, 16146, 15904, 15952, 16182, 16004, 16120, 16254]
    n = jax.random.normal(k, (8,), jnp.bfloat16)
    assert n.dtype == BF and bits(n) == [16070, 15931, 49024, 48979, 16144, 48933, 48397, 16417]
    r = jax.random.uniform(jax.random.PRNGKey(3), (8,), jnp.bfloat16, -2.0, 5.0)
    assert bits(r) == [16312, 16472, 16514, 48944, 16432, 16188, 49047, 48958]
    # and the whole 1000-draw arrays (sha256 of the bytes, first 16 hex digits)
    import hashlib
    dig = lambda v: hashlib.sha256(np.asarray(v).tobytes()).hexdigest()[:16]
    assert dig(jax.random.uniform(k, (1000,), jnp.bfloat16)) == "449a02f7523375d3"
    assert dig(jax.random.normal(k, (1000,), jnp.bfloat16)) == "b5781eff6741a4d4"


# bfloat16 samplers as JAX 0.10.2 draws them (AMD EPYC): every op rounded to bfloat16, and the gamma
# sampler's c = (1/3) / sqrt(d) kept as a division (XLA's rsqrt rewrite is float16/32/64's); sha256 prefixes
JAX_BF16_SAMPLERS = {
    "gamma_bf16": "878851f02b92d2277deaf29749b937b8",
    "loggamma_bf16": "1688d806e2424f278a09ea2f5b3abf82",
    "beta_bf16": "2b570f64ce6c08608244b62d636b19a5",
    "generalized_normal_bf16": "83ad9eb2203f76de037b703433e380cd",
    # ball below 4096 elements: |g|**p summed in float32 unrounded, g * (1 / r) with a float32 reciprocal
    "ball_bf16_small": "215c11a028f4557b7352523b6ce96a55",
    "ball_bf16_d1": "012d41e713db5a83ba209aac918aaca3",
    # dirichlet below 4096 elements: exp in float32 summed unrounded, a float32 reciprocal of the rounded sum
    "dirichlet_bf16_small": "92b740c9672a30bf73b5ef59ef7138b6",
    "dirichlet_bf16_k4": "1e064d7e26fe1260d4e747cf68d1df3c",
    "dirichlet_bf16_k1": "471e9a5601d1669574d9bf96f7a65cd3",
}


def test_bfloat16_gamma_family_bit_identical_to_jax():
    import hashlib
    from test_random_xla_f32 import _as_recorded
    K = jax.random.PRNGKey
    a = np.array([0.5, 1.0, 3.0], BF)
    got = {
        "gamma_bf16": jax.random.gamma(K(3), a, (20000, 3), BF),
        "loggamma_bf16": jax.random.loggamma(K(4), a, (20000, 3), BF),
        "beta_bf16": jax.random.beta(K(6), np.array(0.5, BF), np.array(2.0, BF), (20000,), BF),
        "generalized_normal_bf16": jax.random.generalized_normal(K(7), 2.0, (20000,), BF),
        "ball_bf16_small": jax.random.ball(K(3), 3, 2, (500,), BF),
        "ball_bf16_d1": jax.random.ball(K(5), 1, 2, (500,), BF),
        "dirichlet_bf16_small": jax.random.dirichlet(K(5), np.array([0.5, 1.0, 3.0], BF), (500,), BF),
        "dirichlet_bf16_k4": jax.random.dirichlet(K(6), np.array([0.2, 1.0, 2.0, 7.0], BF), (1000,), BF),
        "dirichlet_bf16_k1": jax.random.dirichlet(K(7), np.array([2.0], BF), (100,), BF),
    }
    # they read the C library's pow (the boost, generalized_normal): digests where it is the recording host's
    as_recorded = _as_recorded("pow")
    for name, v in got.items():
        v = np.asarray(v)
        assert v.dtype == BF
        if as_recorded:
            assert hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:32] == JAX_BF16_SAMPLERS[name], name
    g = np.asarray(got["gamma_bf16"]).astype(np.float32)
    np.testing.assert_allclose(g.mean(0), a.astype(np.float32), rtol=0.05)
    # alpha = 3: d = 2.671875, c = 0.333984375 / 1.6328125 rounded = 0.2041015625 (the rsqrt form: 0.2050781)
    b = np.asarray(jax.random.gamma(K(9), np.array(3.0, BF), (4000,), BF)).astype(np.float32)
    assert abs(b.mean() - 3.0) < 0.1


# From 4096 rows (draws, vmapped batches included) XLA:CPU runs the tail of a bfloat16 ball (generalized_normal's
# r * (d·V·boost)**(1/p), the exponential's log1p, the norm) or dirichlet (the log-gamma's logs, the softmax) in
# one YNNPACK fusion, float32 throughout and rounded once (dirichlet's log-gamma is rounded once more, where the
# row max reads it); below that each op rounds (``_prng.ynn_chain``). JAX 0.10.2 on this AMD EPYC host,
# x64 off, sha256 prefixes of the raw bytes; the ball's read the C library's pow.
A3_BF, A4_BF = np.array([0.5, 1.0, 3.0], BF), np.array([0.2, 1.0, 2.0, 7.0], BF)
JAX_BF16_YNN = {
    "ball_bf16_4096": ("da5651e4da8cce13f374f5a7ccab0225", lambda: jax.random.ball(jax.random.PRNGKey(0), 3, 2, (4096,), BF)),
    "ball_bf16_8192_d2": ("769bf56e68edd4f0388444810897fda2", lambda: jax.random.ball(jax.random.PRNGKey(1), 2, 2, (8192,), BF)),
    "ball_bf16_2x2048_p15": ("29c9f6afa4e3a2c26e18cd4f2d47c72b",
                             lambda: jax.random.ball(jax.random.PRNGKey(3), 3, 1.5, (2, 2048), BF)),
    "ball_bf16_5000_d5": ("caeccffb0cd86521ceff84abfdfb845a", lambda: jax.random.ball(jax.random.PRNGKey(4), 5, 2, (5000,), BF)),
    "ball_bf16_4095": ("cec071cf356bcfd28a7050cdb2449403", lambda: jax.random.ball(jax.random.PRNGKey(5), 3, 2, (4095,), BF)),
    # 3 keys x 1500 draws: 4500 rows, fused; 3 x 1000: per op
    "ball_bf16_vmap_big": ("79d63318653b0770dbc7c8916e885f14", lambda: jax.vmap(
        lambda k: jax.random.ball(k, 3, 2, (1500,), BF))(jax.random.split(jax.random.PRNGKey(6), 3))),
    "ball_bf16_vmap_small": ("eb8eb3dbc1b5542c922e0c2b73fd1af3", lambda: jax.vmap(
        lambda k: jax.random.ball(k, 3, 2, (1000,), BF))(jax.random.split(jax.random.PRNGKey(7), 3))),
    "ball_bf16_jit_small": ("d0d46261dfbc07cea8e36dca26e0aff7",
                            lambda: jax.jit(lambda k: jax.random.ball(k, 3, 2.0, (1000,), BF))(jax.random.PRNGKey(2))),
    "dirichlet_bf16_4096": ("ab09694ed21dd32afcf7415676638676", lambda: jax.random.dirichlet(jax.random.PRNGKey(0), A3_BF, (4096,), BF)),
    "dirichlet_bf16_8192": ("d705ba0a48252e25474d3297fc630605", lambda: jax.random.dirichlet(jax.random.PRNGKey(1), A3_BF, (8192,), BF)),
    "dirichlet_bf16_k4_4096": ("1ef33968f7992c5e10bd9e1fc151e2cd",
                               lambda: jax.random.dirichlet(jax.random.PRNGKey(3), A4_BF, (4096,), BF)),
    "dirichlet_bf16_2x2048": ("c5ecc54ac77d48522af9b97e09912a12",
                              lambda: jax.random.dirichlet(jax.random.PRNGKey(8), A3_BF, (2, 2048), BF)),
    "dirichlet_bf16_4095": ("449b99b360a169ab4e4996ec0b824ac9", lambda: jax.random.dirichlet(jax.random.PRNGKey(4), A3_BF, (4095,), BF)),
    "dirichlet_bf16_vmap_big": ("912e39172e857d668a5dc2383817b10f", lambda: jax.vmap(
        lambda k: jax.random.dirichlet(k, A3_BF, (1500,), BF))(jax.random.split(jax.random.PRNGKey(6), 3))),
    "dirichlet_bf16_vmap_small": ("7ba4c9518c84c737fa25570c2e182a2c", lambda: jax.vmap(
        lambda k: jax.random.dirichlet(k, A3_BF, (1000,), BF))(jax.random.split(jax.random.PRNGKey(7), 3))),
    "dirichlet_bf16_vmap_alpha": ("9282a6b7ed50f4b40b4fa094b9d2fd8a", lambda: jax.vmap(
        lambda a: jax.random.dirichlet(jax.random.PRNGKey(9), a, (2000,), BF))(
            np.array([[0.5, 1, 3], [2, 2, 2], [0.3, 4, 1]], BF))),
    "dirichlet_bf16_jit": ("74af910349bb1fa1007a29b1842c951b",
                           lambda: jax.jit(lambda k: jax.random.dirichlet(k, A3_BF, (4096,), BF))(jax.random.PRNGKey(2))),
}


@pytest.mark.parametrize("name", list(JAX_BF16_YNN))
def test_bfloat16_ball_dirichlet_from_4096_rows_bit_identical_to_jax(name):
    import hashlib
    from test_random_xla_f32 import _as_recorded
    digest, fn = JAX_BF16_YNN[name]
    v = np.asarray(fn())
    assert v.dtype == BF
    # dirichlet reads only cranax's own log/exp/sum: its bits hold on every host; the ball's read pow
    if name.startswith("dirichlet") or _as_recorded("pow"):
        assert hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:32] == digest, name
    f = v.astype(np.float32)
    if name.startswith("dirichlet"):
        assert np.all(f >= 0) and np.allclose(f.sum(-1), 1, atol=0.02)
    else:
        p = 1.5 if "p15" in name else 2.0
        assert np.all(np.sum(np.abs(f) ** p, -1) <= 1.02)


# Tangents and gradients of the bfloat16 chains, JAX 0.10.2 (this AMD EPYC host). The chains keep their primal
# bits and differentiate as JAX's ops do (gamma's implicit gradient, then the softmax / norm): small jvps agree
# to one bfloat16 ulp (most bit for bit), gradients of large draws to the rounding of JAX's fused jvp program.
JAX_BF16_CHAIN_JVP = {
    "dirichlet": [0.125, -0.1142578125, -0.009521484375, 0.0751953125, -0.1396484375, 0.06396484375,
                  0.10107421875, -0.185546875, 0.0849609375, 0.11328125, -0.1611328125, 0.04736328125],
    "ball_d3": [-0.216796875, 0.1904296875, 0.1435546875, -0.193359375, -0.09814453125, 0.19140625,
                0.027099609375, 0.020263671875, 0.0546875, -0.078125, 0.1650390625, 0.1708984375],
    "ball_d1": [-0.0234375, 0.0185546875, -0.0498046875, -0.07421875, 0.0732421875, 0.056640625],
}


def _within_ulps(got, want, ulps):
    got, want = np.asarray(got, np.float32).ravel(), np.asarray(want, np.float32)
    tol = ulps * 2.0 ** (np.floor(np.log2(np.maximum(np.abs(want), 1e-30))) - 7)
    assert np.all(np.abs(got - want) <= tol), (got, want)


def test_ynn_chain_derivatives_and_errors():
    from cranax import _prng
    K = jax.random.PRNGKey
    a = np.array([1.0, 2.0, 3.0], BF)
    t = np.array([1.0, -0.5, 0.25], BF)
    _within_ulps(jax.jvp(lambda v: jax.random.dirichlet(K(3), v, (4,), BF), (a,), (t,))[1],
                 JAX_BF16_CHAIN_JVP["dirichlet"], 1)
    _within_ulps(jax.jvp(lambda p: jax.random.ball(K(2), 3, p, (4,), BF), (np.array(1.5, BF),), (np.array(1.0, BF),))[1],
                 JAX_BF16_CHAIN_JVP["ball_d3"], 1)
    _within_ulps(jax.jvp(lambda p: jax.random.ball(K(2), 1, p, (6,), BF), (np.array(1.5, BF),), (np.array(1.0, BF),))[1],
                 JAX_BF16_CHAIN_JVP["ball_d1"], 1)
    # grad, under jit and vmap (the chain's batching rule, then its tangent rule)
    f = lambda v: jax.random.dirichlet(K(0), v, (5,), BF)[:, 0].astype(np.float32).sum()  # noqa: E731
    _within_ulps(jax.grad(f)(a), [0.494140625, -0.05810546875, -0.083984375], 0)
    _within_ulps(jax.jit(jax.vmap(jax.grad(f)))(np.stack([a, a * 2])),
                 [0.494140625, -0.05810546875, -0.083984375, 0.29296875, -0.040771484375, -0.04931640625], 1)
    # from 4096 rows (the fused primal): JAX's jvp program rounds in its own fusions
    sq = lambda x: (x.astype(np.float32) ** 2).sum()  # noqa: E731
    assert float(jax.grad(lambda p: sq(jax.random.ball(K(2), 3, p, (4096,), BF)))(1.5)) == \
        pytest.approx(1210.138916015625, rel=0.03)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda v: sq(jax.random.dirichlet(K(3), v, (4096,), BF)))(a),
                                          np.float32), [-308.0, -116.5, 79.5], rtol=0.02)
    # second order: the chain's tangent rule is differentiated again (gamma's implicit gradient to every order)
    hd = jax.hessian(lambda v: jax.random.dirichlet(K(0), v, (3,), BF)[:, 0].astype(np.float32).sum())(a)
    np.testing.assert_allclose(np.asarray(hd, np.float32), [[0.00537109, -0.0390625, -0.0673828],
                                                             [-0.0390625, 0.0025177, 0.0130615],
                                                             [-0.0673828, 0.0130615, 0.0258789]], atol=1e-3)
    # a tangent-free use differentiates to zero (the key is the only input)
    g = lambda x: x * jax.random.dirichlet(K(1), a, (4,), BF).astype(np.float32).sum()  # noqa: E731
    assert float(jax.grad(g)(np.float32(1.0))) == pytest.approx(4.0, rel=0.02)
    with pytest.raises(ValueError, match="unknown chain"):
        _prng.ynn_chain("no_such_chain", jnp.ones((2, 3), np.float32))


# JAX 0.10.2: a non-weak float32 p with bfloat16 (or float16) draws promotes g ** (1 / p), so generalized_normal
# and ball return float32 (a Python p is weak: the draws' type)
def test_generalized_normal_ball_promote_with_a_wider_p():
    K = jax.random.PRNGKey
    for dt in (BF, np.float16):
        assert jax.random.generalized_normal(K(0), 2.0, (3,), dt).dtype == dt
        assert jax.random.ball(K(0), 3, 2, (2,), dt).dtype == dt
        assert jax.random.generalized_normal(K(0), np.float32(2.0), (3,), dt).dtype == np.float32
        assert jax.random.ball(K(0), 3, np.float32(2.0), (1,), dt).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(jax.random.ball(K(0), 3, np.float32(2.0), (1,), BF)).ravel(),
                                  np.array([0.7691926, 0.48672724, 0.13680193], np.float32))
    np.testing.assert_array_equal(np.asarray(jax.random.ball(K(0), 1, np.float32(2.0), (2,), np.float16)).ravel(),
                                  np.array([0.98218554, 0.87582064], np.float32))
    # (standalone bfloat16 generalized_normal: XLA keeps the last gamma product unrounded there; cranax rounds it)
    np.testing.assert_allclose(np.asarray(jax.random.generalized_normal(K(0), np.float32(2.0), (3,), BF)),
                               [0.37948972, 0.13559105, -0.25495577], rtol=4e-3)


# JAX 0.10.2 lowers integer_pow to square-and-multiply in the dtype: each half-float product rounds
# (bfloat16 1.8046875 ** -2 is 0.30859375, not the once-rounded 0.306640625)
JAX_HALF_INTEGER_POW = {
    "bfloat16": {-2: "0.308594 0.824219 0.0917969 2.04688 0.59375", -3: "0.169922 0.75 0.0279541 2.92188 0.460938",
                 3: "5.875 1.33594 35.75 0.341797 2.17188", 5: "19 1.61719 390 0.166992 3.67188"},
    "float16": {-2: "0.307 0.827 0.09174 2.04 0.592", -3: "0.17 0.7524 0.0278 2.914 0.4556",
                3: "5.88 1.329 35.97 0.3433 2.195", 5: "19.16 1.607 392.0 0.1683 3.709"},
}


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_integer_pow_rounds_each_product_as_jax(dt):
    d = BF if dt == "bfloat16" else np.dtype(np.float16)
    x = np.array([1.80469, 1.1, 3.3, 0.7, 1.3], np.float32).astype(d)
    for y, want in JAX_HALF_INTEGER_POW[dt].items():
        want = np.array([float(w) for w in want.split()], np.float32).astype(d)
        np.testing.assert_array_equal(np.asarray(jax.lax.integer_pow(x, y)), want, err_msg=f"{dt} y={y}")
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jax.lax.integer_pow(v, y))(x)), want)
