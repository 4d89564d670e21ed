"""float8 end to end (float8_e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, e4m3b11fnuz, e3m4, e4m3): the dtypes (ml_dtypes', as
JAX), storage, conversions of every bit pattern, rounding from float32, JAX's promotion rules and error texts,
elementwise arithmetic rounded per operation, jit/vmap/grad, printing.

Oracles: ml_dtypes (each operation computed in float32 by NumPy, rounded by ``astype``: XLA's CPU semantics), and
values recorded from JAX 0.10.2 on this machine's CPU (written into the tests; JAX itself is not needed).
"""
import ml_dtypes
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import dtypes

F32 = np.float32
NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4",
         "float8_e4m3"]
FMTS = [np.dtype(getattr(ml_dtypes, n)) for n in NAMES]


def bits(a):
    return np.asarray(a).view(np.uint8)


def rnd(x, dt):
    """float32 values rounded to `dt` by ml_dtypes."""
    with np.errstate(all="ignore"):
        return np.asarray(x, F32).astype(dt)


def assert_same(got, want):
    """Bit-identical float8 arrays (NaNs too: each format has its own NaN patterns, as ml_dtypes makes them)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    bad = np.nonzero(np.atleast_1d(bits(got) != bits(want)))[0]
    assert bad.size == 0, f"{bad.size} differ, first at {bad[:5]}: got {bits(got)[bad[:5]]}, want {bits(want)[bad[:5]]}"


def f32_inputs(dt):
    """Every value of `dt`, the midpoints between neighbours and their float32 neighbours, specials, randoms."""
    v = np.arange(256, dtype=np.uint8).view(dt).astype(F32)
    v = np.unique(v[np.isfinite(v)])
    mid = (v[1:] + v[:-1]) / 2
    s = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e30, -1e30, 3e38, 1e-30, -1e-30, 1e-40]
    rng = np.random.default_rng(0)
    m = float(ml_dtypes.finfo(dt).max)
    r = rng.uniform(-1.2 * m, 1.2 * m, 5000).astype(F32)
    t = (rng.standard_normal(5000) * float(ml_dtypes.finfo(dt).tiny)).astype(F32)
    x = np.concatenate([v, mid, np.nextafter(mid, F32(np.inf)), np.nextafter(mid, F32(-np.inf)), np.array(s, F32), r,
                        t, -mid, m * np.array([1.03, 1.06, 1.1, 1.2, 2.0], F32)])
    return x.astype(F32)


# ------------------------------------------------------------------------------------------ dtypes, promotion

@pytest.mark.parametrize("name", NAMES)
def test_names_and_info(name):
    t = getattr(jnp, name)
    assert np.dtype(t) == np.dtype(getattr(ml_dtypes, name))
    assert jnp.issubdtype(t, jnp.floating)
    assert jnp.finfo(t).max == ml_dtypes.finfo(getattr(ml_dtypes, name)).max
    assert dtypes.short_name(np.dtype(t)) == "f8_" + name[7:]
    assert jnp.array([1.0, 2.5], dtype=t).dtype == np.dtype(t)


def test_promotion_like_jax():
    e4, e5 = jnp.float8_e4m3fn, jnp.float8_e5m2
    x = jnp.array([1.0, 2.5], dtype=e4)
    # JAX 0.10.2: weak scalars and integers join into the float8 type
    assert (x + 2.5).dtype == np.dtype(e4) and (x * 2).dtype == np.dtype(e4)
    assert (x + jnp.int32(1)).dtype == np.dtype(e4) and (x + jnp.bool_(True)).dtype == np.dtype(e4)
    assert (x + jnp.array([1], jnp.int8)).dtype == np.dtype(e4)
    assert jnp.promote_types(e5, e5) == np.dtype(e5)
    assert jnp.result_type(e5, float) == np.dtype(e5)
    tail = ("have no available implicit dtype promotion path. To avoid unintended promotion, 8-bit floats do not "
            "support implicit promotion. If you'd like your inputs to be promoted to another type, you can do so "
            "explicitly using e.g. x.astype('float32')")
    for other in (jnp.float32(1), jnp.float16(1), jnp.bfloat16(1), jnp.array([1.0], e5)):
        with pytest.raises(dtypes.TypePromotionError) as e:
            x + other
        assert str(e.value).startswith("Input dtypes (") and str(e.value).endswith(tail)
        assert "'float8_e4m3fn'" in str(e.value) and f"'{np.dtype(other.dtype).name}'" in str(e.value)
    with pytest.raises(dtypes.TypePromotionError, match="8-bit floats do not support implicit promotion"):
        jnp.promote_types(e5, e4)
    # explicit conversions are fine
    assert (x.astype(jnp.float32) + jnp.float32(1)).dtype == np.float32


@pytest.mark.parametrize("name", ["float8_e8m0fnu", "float4_e2m1fn"])
def test_unsupported_narrow_floats_raise(name):
    with pytest.raises(TypeError, match=f"cranax does not support dtype {name}"):
        jnp.array([1.0, 2.0], dtype=getattr(jnp, name))


# ------------------------------------------------------------------------------------------ storage, conversions

@pytest.mark.parametrize("dt", FMTS, ids=NAMES)
def test_every_bit_pattern(dt):
    allb = np.arange(256, dtype=np.uint8).view(dt)
    a = jnp.asarray(allb)
    assert a.dtype == dt
    assert np.array_equal(bits(a), bits(allb))
    assert np.array_equal(bits(jnp.asarray(allb[::3])), bits(allb[::3]))   # a strided source
    want = allb.astype(F32)
    nan = np.isnan(want)
    for f in (lambda v: v.astype(jnp.float32), jax.jit(lambda v: v.astype(jnp.float32))):
        got = np.asarray(f(a))
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))   # -0 kept where it exists


@pytest.mark.parametrize("dt", FMTS, ids=NAMES)
@pytest.mark.parametrize("jit", [False, True])
def test_f32_to_float8_rounds_like_ml_dtypes(dt, jit):
    x = f32_inputs(dt)
    f = lambda a: a.astype(dt)   # noqa: E731
    f = jax.jit(f) if jit else f
    assert_same(f(jnp.asarray(x)), rnd(x, dt))
    assert_same(jnp.array(x, dt), rnd(x, dt))


@pytest.mark.parametrize("dt", FMTS, ids=NAMES)
def test_float8_to_int_and_other_floats(dt):
    allb = np.arange(256, dtype=np.uint8).view(dt)
    fin = allb[np.isfinite(allb.astype(F32))]
    a = jnp.asarray(fin)
    assert np.array_equal(np.asarray(a.astype(jnp.int32)), fin.astype(F32).astype(np.int32))
    assert np.array_equal(np.asarray(jax.jit(lambda v: v.astype(jnp.float16))(a)), fin.astype(F32).astype(np.float16))
    assert np.array_equal(np.asarray(a.astype(jnp.bfloat16)).astype(F32), fin.astype(F32))
    i = np.arange(-300, 300, 7, dtype=np.int32)
    assert_same(jax.jit(lambda v: v.astype(dt))(jnp.asarray(i)), rnd(i.astype(F32), dt))
    # float8 -> another float8 (explicit): through float32, one rounding
    other = FMTS[(FMTS.index(dt) + 1) % len(FMTS)]
    assert_same(a.astype(other), rnd(fin.astype(F32), other))


def test_scalars_and_constants():
    # JAX 0.10.2: jnp.float8_e5m2(3.3) -> Array(3.5, dtype=float8_e5m2)
    assert repr(jnp.float8_e5m2(3.3)) == "Array(3.5, dtype=float8_e5m2)"
    # constants folded under jit round as the runtime does
    for dt in FMTS:
        got = jax.jit(lambda: jnp.array([0.3, 1e6, -1e6, -0.0], dt) * 1)()
        assert_same(got, rnd(np.array([0.3, 1e6, -1e6, -0.0], F32), dt))


# ------------------------------------------------------------------------------------------ arithmetic

@pytest.mark.parametrize("dt", FMTS, ids=NAMES)
@pytest.mark.parametrize("jit", [False, True])
def test_binary_ops_round_like_ml_dtypes(dt, jit):
    rng = np.random.default_rng(1)
    m = float(ml_dtypes.finfo(dt).max)
    x = rng.uniform(-m / 4, m / 4, 2000).astype(dt)
    y = rng.uniform(-8, 8, 2000).astype(dt)
    xf, yf = x.astype(F32), y.astype(F32)
    with np.errstate(all="ignore"):
        cases = {"add": (jnp.add, xf + yf), "sub": (jnp.subtract, xf - yf), "mul": (jnp.multiply, xf * yf),
                 "div": (jnp.divide, xf / yf), "max": (jnp.maximum, np.maximum(xf, yf))}
    for name, (op, want) in cases.items():
        f = jax.jit(op) if jit else op
        got = f(jnp.asarray(x), jnp.asarray(y))
        assert_same(got, rnd(want, dt))


@pytest.mark.parametrize("dt", FMTS, ids=NAMES)
def test_each_op_rounds_and_comparisons(dt):
    x = np.array([1.0, 2.5, 0.3, -7.0, 13.0, 0.01, -0.6, 3.3], F32).astype(dt)
    xf = x.astype(F32)
    got = jax.jit(lambda a: a * 2 + 1)(jnp.asarray(x))
    assert_same(got, rnd(rnd(xf * 2, dt).astype(F32) + 1, dt))
    assert np.asarray(jnp.asarray(x) < 2).tolist() == (xf < 2).tolist()
    assert np.asarray(jnp.asarray(x) == jnp.asarray(x)).tolist() == (xf == xf).tolist()


# Recorded from JAX 0.10.2 (CPU) for x = jnp.array([1.0, 2.5, 0.3, -7.0, 13.0, 0.01, -0.6, 3.3], dtype): the bits of
# x, x*2+1, jit(lambda x: jnp.sin(x)*x + x/3)(x), vmap(lambda v: jnp.sum(v*v))(x.reshape(2, 4)),
# grad(lambda x: jnp.sum(x*x*x))(x), jnp.dot(x, x), jnp.max(x), and repr(x).
JAX = {
    "float8_e3m4": {"x": [48, 68, 19, 220, 106, 1, 163, 74], "lin": [72, 88, 58, 234, 112, 48, 140, 94], "jit": [51, 67, 12, 65, 100, 0, 8, 38], "vmap": [112, 112], "grad": [72, 112, 18, 112, 112, 0, 49, 112], "dot": 112, "max": 106, "repr": 'Array([1, 2.5, 0.296875, -7, 13, 0.015625, -0.59375, 3.25], dtype=float8_e3m4)'},
    "float8_e4m3": {"x": [56, 66, 42, 206, 85, 5, 178, 69], "lin": [68, 76, 61, 213, 94, 56, 168, 79], "jit": [57, 65, 36, 67, 82, 2, 33, 52], "vmap": [102, 116], "grad": [68, 89, 41, 113, 120, 0, 57, 96], "dot": 119, "max": 85, "repr": 'Array([1, 2.5, 0.3125, -7, 13, 0.00976562, -0.625, 3.25], dtype=float8_e4m3)'},
    "float8_e4m3b11fnuz": {"x": [88, 98, 74, 238, 117, 34, 210, 101], "lin": [100, 108, 93, 245, 126, 88, 200, 111], "jit": [89, 97, 68, 99, 114, 22, 65, 84], "vmap": [128, 128], "grad": [100, 121, 73, 128, 128, 3, 89, 128], "dot": 128, "max": 117, "repr": 'Array([1, 2.5, 0.3125, -7, 13, 0.00976562, -0.625, 3.25],      dtype=float8_e4m3b11fnuz)'},
    "float8_e4m3fn": {"x": [56, 66, 42, 206, 85, 5, 178, 69], "lin": [68, 76, 61, 213, 94, 56, 168, 79], "jit": [57, 65, 36, 67, 82, 2, 33, 52], "vmap": [102, 116], "grad": [68, 89, 41, 113, 127, 0, 57, 96], "dot": 119, "max": 85, "repr": 'Array([1, 2.5, 0.3125, -7, 13, 0.00976562, -0.625, 3.25], dtype=float8_e4m3fn)'},
    "float8_e4m3fnuz": {"x": [64, 74, 50, 214, 93, 10, 186, 77], "lin": [76, 84, 69, 221, 102, 64, 176, 87], "jit": [65, 73, 44, 75, 90, 3, 41, 60], "vmap": [110, 124], "grad": [76, 97, 49, 121, 128, 0, 65, 104], "dot": 127, "max": 93, "repr": 'Array([1, 2.5, 0.3125, -7, 13, 0.00976562, -0.625, 3.25], dtype=float8_e4m3fnuz)'},
    "float8_e5m2": {"x": [60, 65, 53, 199, 74, 33, 185, 67], "lin": [66, 70, 62, 202, 78, 60, 180, 72], "jit": [61, 65, 50, 62, 192, 27, 49, 0], "vmap": [83, 88], "grad": [66, 76, 52, 88, 94, 12, 60, 80], "dot": 91, "max": 74, "repr": 'Array([1, 2.5, 0.3125, -7, 12, 0.00976562, -0.625, 3.5], dtype=float8_e5m2)'},
    "float8_e5m2fnuz": {"x": [64, 69, 57, 203, 78, 37, 189, 71], "lin": [70, 74, 66, 206, 82, 64, 184, 76], "jit": [65, 69, 54, 66, 196, 31, 53, 0], "vmap": [87, 92], "grad": [70, 80, 56, 92, 98, 16, 64, 84], "dot": 95, "max": 78, "repr": 'Array([1, 2.5, 0.3125, -7, 12, 0.00976562, -0.625, 3.5], dtype=float8_e5m2fnuz)'},
}


def _x(name):
    return jnp.array([1.0, 2.5, 0.3, -7.0, 13.0, 0.01, -0.6, 3.3], dtype=getattr(jnp, name))


@pytest.mark.parametrize("name", NAMES)
def test_matches_recorded_jax(name):
    r, x = JAX[name], _x(name)
    assert bits(x).tolist() == r["x"]
    assert bits(x * 2 + 1).tolist() == r["lin"]
    assert bits(jax.jit(lambda a: jnp.sin(a) * a + a / 3)(x)).tolist() == r["jit"]
    assert bits(jax.grad(lambda a: jnp.sum(a * a * a))(x)).tolist() == r["grad"]
    assert int(bits(jnp.max(x))) == r["max"]
    assert repr(x) == r["repr"]


@pytest.mark.parametrize("dt", FMTS, ids=NAMES)
def test_reductions_and_dot_accumulate_in_f32(dt):
    # cranax accumulates float8 sums and dots in float32 and rounds once (as for bfloat16); see the module notes
    # in cranax.dtypes for where JAX's CPU backend differs (short float8 sums accumulate in float8).
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 2, 100).astype(dt)
    xf = x.astype(F32)
    assert_same(jnp.sum(jnp.asarray(x)), rnd(xf.sum(dtype=F32), dt))
    a = rng.uniform(-2, 2, (3, 40)).astype(dt)
    b = rng.uniform(-2, 2, (40, 2)).astype(dt)
    assert_same(jnp.dot(jnp.asarray(a), jnp.asarray(b)), rnd(a.astype(F32) @ b.astype(F32), dt))
    v = jax.vmap(lambda r: jnp.sum(r * r))(jnp.asarray(a))
    assert_same(v, rnd((rnd(a.astype(F32) ** 2, dt).astype(F32)).sum(axis=1, dtype=F32), dt))
