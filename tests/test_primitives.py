"""Every primitive of ``cranax/primitives/`` against an oracle, eagerly and under ``cranax.jit``.

Oracles: NumPy computing in float64 and rounding to float32 (arithmetic: at most 1 ulp; transcendental
functions: at most 4 ulp), exact integer arithmetic in Python ints with XLA's documented semantics for the
corner cases (division by zero, INT_MIN / -1, shifts by at least the bit width, float -> int saturation),
and values recorded from JAX 0.10.2 where NumPy has no equivalent. The op lists, domains, oracles and
bounds of the sweeps come from the op records (tests/op_records.py).
"""
import numpy as np
import pytest

import cranax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax.config import config

from denormals import closer, flush
from op_records import OPS, names, select

MODES = ["eager", "jit"]
RNG_SEED = 1234

F32_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1.2e-38, -1.2e-38, 1.0, -1.0, 0.5,
                         -2.5], dtype=np.float32)

INT32_MIN = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1


# ----------------------------------------------------------------------------------------------- helpers

def run(mode, fn, *args):
    """``fn(*args)`` eagerly or through ``cranax.jit``; the arguments are put on the device first."""
    args = [cranax.device_put(a) if isinstance(a, np.ndarray) else a for a in args]
    if mode == "jit":
        return cranax.jit(fn)(*args)
    return fn(*args)


def use_dtype(name):
    """The NumPy dtype for ``name``; turns 64-bit mode on for 64-bit dtypes (the autouse fixture restores)."""
    dt = np.dtype(name)
    if dt.itemsize == 8:
        config.update("jax_enable_x64", True)
    return dt


def _check_meta(actual, expected_dtype, expected_shape):
    assert isinstance(actual, cranax.Array), type(actual)
    assert actual.dtype == np.dtype(expected_dtype), (actual.dtype, expected_dtype)
    assert actual.shape == tuple(expected_shape), (actual.shape, expected_shape)


def assert_exact(actual, expected, check_zero_sign=True):
    """Same dtype, shape and values; NaNs match NaNs and (optionally) the sign of zeros matters."""
    expected = np.asarray(expected)
    _check_meta(actual, expected.dtype, expected.shape)
    a = np.asarray(actual)
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(a), np.isnan(expected))
        mask = ~np.isnan(expected)
        np.testing.assert_array_equal(a[mask], expected[mask])
        if check_zero_sign:
            np.testing.assert_array_equal(np.signbit(a[mask]), np.signbit(expected[mask]))
    else:
        np.testing.assert_array_equal(a, expected)


def _ordered(x):
    bits = {4: np.int32, 8: np.int64}[x.dtype.itemsize]
    i = x.view(bits).astype(np.int64) if x.dtype.itemsize == 4 else x.view(np.int64)
    sign_mask = np.int64(0x7FFFFFFF) if x.dtype.itemsize == 4 else np.int64(0x7FFFFFFFFFFFFFFF)
    return np.where(i < 0, -(i & sign_mask), i)


def assert_ulp(actual, expected, maxulp, atol=0.0):
    """Float results within ``maxulp`` units in the last place (or ``atol``); NaN and inf positions equal."""
    expected = np.asarray(expected)
    _check_meta(actual, expected.dtype, expected.shape)
    a = np.asarray(actual)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(expected), err_msg="NaN positions differ")
    fin = np.isfinite(expected)
    np.testing.assert_array_equal(a[~fin & ~np.isnan(expected)], expected[~fin & ~np.isnan(expected)],
                                  err_msg="infinities differ")
    if fin.any():
        af, ef = a[fin], expected[fin]
        assert np.isfinite(af).all(), (af, ef)
        dist = np.abs(_ordered(af) - _ordered(ef))
        bad = (dist > maxulp) & (np.abs(af.astype(np.float64) - ef.astype(np.float64)) > atol)
        assert not bad.any(), (f"more than {maxulp} ulp apart at {np.nonzero(bad)}: got {af[bad]}, "
                               f"expected {ef[bad]} ({dist[bad]} ulp)")


def oracle64(fn, *xs, out_dtype=None):
    """``fn`` evaluated in float64 on ``xs`` (float32 or float64) and rounded to their dtype."""
    dt = out_dtype or np.result_type(*[np.asarray(x).dtype for x in xs])
    with np.errstate(all="ignore"):
        r = fn(*[np.asarray(x, np.float64) for x in xs])
        return np.asarray(r).astype(dt)


def rand(dtype, shape, lo=-10.0, hi=10.0, seed=0):
    rng = np.random.default_rng(RNG_SEED + seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        return rng.uniform(lo, hi, shape).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, max(int(hi), 1) * 100, shape).astype(dt)
    return rng.integers(int(lo) * 100, int(hi) * 100, shape).astype(dt)


def loguniform(shape, lo, hi, seed=0):
    rng = np.random.default_rng(RNG_SEED + seed)
    return np.exp(rng.uniform(np.log(lo), np.log(hi), shape)).astype(np.float32)


_erf = OPS["erf"].oracle
_lgamma = OPS["lgamma"].oracle


# ----------------------------------------------------------------------------------------------- unary float ops

_UNARY_SWEPT = select("unary", where=lambda r: r.domain is not None)
# name -> (cranax function, float64 oracle, (lo, hi) sampling range or "log:lo:hi", max ulp)
UNARY_FLOAT = {r.name: (r.lax, r.oracle, r.domain, r.ulp["float32"]) for r in _UNARY_SWEPT}

# ops whose special-value behaviour (nan, +-inf, +-0, huge, tiny) is checked against the float64 oracle
SPECIAL_OK = names(r for r in _UNARY_SWEPT if r.special)


def _sample(rng_spec, shape, seed=0):
    if isinstance(rng_spec, str):
        _, lo, hi = rng_spec.split(":")
        return loguniform(shape, float(lo), float(hi), seed)
    return rand(np.float32, shape, *rng_spec, seed=seed)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float_values(name, mode):
    fn, ref, rng_spec, ulp = UNARY_FLOAT[name]
    x = _sample(rng_spec, (4, 25))
    out = run(mode, fn, x)
    # Subnormal operands/results may be flushed (JAX's CPU semantics): either answer is accepted here.
    expected = closer(out, oracle64(ref, x), flush(oracle64(ref, flush(x))))
    if ulp == 0:
        assert_exact(out, expected)
    else:
        assert_ulp(out, expected, ulp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SPECIAL_OK)
def test_unary_float_special_values(name, mode):
    fn, ref, _, ulp = UNARY_FLOAT[name]
    x = F32_SPECIALS
    out = run(mode, fn, x)
    # Subnormal operands/results may be flushed (JAX's CPU semantics): either answer is accepted here.
    expected = closer(out, oracle64(ref, x), flush(oracle64(ref, flush(x))))
    if ulp == 0:
        assert_exact(out, expected)
    else:
        assert_ulp(out, expected, ulp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_special_values(name, mode):
    fn, ref, _, _ = UNARY_FLOAT[name]
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.2e-38, np.pi / 4, -np.pi / 4], np.float32)
    out = np.asarray(run(mode, fn, x))
    assert np.isnan(out[:3]).all()
    assert_ulp(run(mode, fn, x[3:]), oracle64(ref, x[3:]), 4)
    if name != "cos":  # sin(-0) = -0, tan(-0) = -0
        assert np.signbit(out[4]) and out[4] == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", names(r for r in _UNARY_SWEPT if "float64" in r.ulp))
def test_unary_float64(name, mode):
    use_dtype("float64")
    fn, ref, rng_spec, _ = UNARY_FLOAT[name]
    ulp = OPS[name].ulp["float64"]
    x = _sample(rng_spec, (30,)).astype(np.float64)
    out = run(mode, fn, x)
    expected = ref(x)
    if ulp == 0:
        assert_exact(out, expected)
    else:
        assert_ulp(out, np.asarray(expected, np.float64), ulp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 1, 2), (2, 0, 5)])
def test_unary_shapes(shape, mode):
    x = rand(np.float32, shape, 0.5, 4.0)
    assert_ulp(run(mode, lax.exp, x), oracle64(np.exp, x), 4)
    assert_exact(run(mode, lax.neg, x), -x)


def test_unary_float_ops_reject_integers():
    # every unary primitive whose record admits only float dtypes (stop_gradient passes others through)
    fns = [r.lax for r in select("unary", where=lambda r: set(r.dtypes) <= {"float32", "float64"}
                                 and r.name != "stop_gradient")]
    assert len(fns) >= 7
    for fn in fns:
        with pytest.raises(TypeError, match="int32"):
            fn(jnp.arange(3))


def test_digamma_recorded_values():
    # scipy.special.digamma / JAX's lax.digamma
    x = np.array([1.0, 2.0, 0.5, 10.0, 3.5], np.float32)
    expected = np.array([-0.5772156649015329, 0.42278433509846713, -1.9635100260214235, 2.251752589066721,
                         1.1031566406452432]).astype(np.float32)
    for mode in MODES:
        assert_ulp(run(mode, lax.digamma, x), expected, 8)


def test_erf_inv():
    x = np.array([-0.99, -0.5, 0.0, 0.25, 0.5, 0.9, 0.999], np.float32)
    for mode in MODES:
        y = np.asarray(run(mode, lax.erf_inv, x)).astype(np.float64)
        np.testing.assert_allclose(_erf(y), x.astype(np.float64), rtol=1e-6, atol=2e-7)
    # erfinv(0.5) = 0.4769362762044699; erfinv(+-1) = +-inf
    assert_ulp(lax.erf_inv(np.array([0.5], np.float32)), np.array([0.4769362762044699], np.float32), 4)
    assert_exact(lax.erf_inv(np.array([1.0, -1.0], np.float32)), np.array([np.inf, -np.inf], np.float32))


def test_lgamma_special_values():
    x = np.array([1.0, 2.0, 0.5, 100.0, 1e-30], np.float32)
    assert_ulp(lax.lgamma(x), oracle64(_lgamma, x), 4)
    out = np.asarray(lax.lgamma(np.array([np.inf, np.nan], np.float32)))
    assert out[0] == np.inf and np.isnan(out[1])


@pytest.mark.parametrize("mode", MODES)
def test_is_finite(mode):
    x = F32_SPECIALS
    assert_exact(run(mode, lax.is_finite, x), np.isfinite(x))


@pytest.mark.parametrize("mode", MODES)
def test_sign(mode):
    x = np.array([-3.5, -0.0, 0.0, 2.0, np.inf, -np.inf, 1e-38, -1e-38], np.float32)
    # XLA: sign(-0) = -0; subnormals read as zeros of their sign (JAX 0.10.2 gives 0.0, -0.0 for ±1e-38).
    expected = np.array([-1.0, -0.0, 0.0, 1.0, 1.0, -1.0, 0.0, -0.0], np.float32)
    assert_exact(run(mode, lax.sign, x), expected)
    assert np.isnan(np.asarray(run(mode, lax.sign, np.array([np.nan], np.float32)))).all()
    i = np.array([-7, 0, 5, INT32_MIN, INT32_MAX], np.int32)
    assert_exact(run(mode, lax.sign, i), np.sign(i))
    u = np.array([0, 1, 2 ** 32 - 1], np.uint32)
    assert_exact(run(mode, lax.sign, u), np.array([0, 1, 1], np.uint32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64"])
def test_integer_neg_abs_wrap(dtype, mode):
    dt = use_dtype(dtype)
    info = np.iinfo(dt)
    if dt.kind == "u":
        x = np.array([0, 1, 5, info.max], dt)
    else:
        x = np.array([0, 1, -5, info.max, info.min], dt)
    with np.errstate(over="ignore"):
        assert_exact(run(mode, lax.neg, x), -x)  # wraps: -INT_MIN == INT_MIN, -1u == 0xffffffff
        if dt.kind != "u":
            assert_exact(run(mode, lax.abs, x), np.abs(x))  # abs(INT_MIN) == INT_MIN


@pytest.mark.parametrize("mode", MODES)
def test_rounding(mode):
    # lax.round: half away from zero; rounding_method=1 and jnp.round: half to even (recorded from JAX)
    v = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999], np.float32)
    assert_exact(run(mode, lax.round, v), np.array([1.0, 2.0, 3.0, -1.0, -2.0, 2.0], np.float32))
    assert_exact(run(mode, lambda x: lax.round(x, 1), v), np.array([0.0, 2.0, 2.0, -0.0, -2.0, 2.0], np.float32))
    assert_exact(run(mode, jnp.round, v), np.array([0.0, 2.0, 2.0, -0.0, -2.0, 2.0], np.float32))
    assert_exact(run(mode, jnp.floor, v), np.array([0.0, 1.0, 2.0, -1.0, -2.0, 2.0], np.float32))
    assert_exact(run(mode, jnp.ceil, v), np.array([1.0, 2.0, 3.0, -0.0, -1.0, 3.0], np.float32))
    assert_exact(run(mode, jnp.trunc, v), np.array([0.0, 1.0, 2.0, -0.0, -1.0, 2.0], np.float32))
    s = np.array([np.nan, np.inf, -np.inf, -0.0, 8388609.0, -0.49999997], np.float32)
    expected = np.array([np.nan, np.inf, -np.inf, -0.0, 8388609.0, -0.0], np.float32)
    assert_exact(run(mode, lax.round, s), expected)
    assert_exact(run(mode, jnp.round, s), expected)
    assert_exact(run(mode, lambda x: jnp.round(x, 1), np.array([1.25, 2.675], np.float32)),
                 np.array([1.2000000476837158, 2.700000047683716], np.float32))


# ----------------------------------------------------------------------------------------------- binary ops

LAX_SHAPES = [((), ()), ((5,), ()), ((), (5,)), ((2, 3), (2, 3)), ((0,), (0,)), ((2, 0, 3), ()),
              ((1,), (1,)), ((3, 1, 2), (3, 1, 2))]

_BINARY_SWEPT = select("binary", where=lambda r: "float32" in r.ulp)
# name -> (cranax function, float64 oracle, max ulp)
FLOAT_BINARY = {r.name: (r.lax, r.oracle, r.ulp["float32"]) for r in _BINARY_SWEPT}


def _operands(dt, sx, sy, seed=0, domain=None):
    lo, hi = domain or (-10.0, 10.0)
    x = rand(dt, sx, lo, hi, seed)
    y = rand(dt, sy, lo, hi, seed + 1)
    return x, y


def _away_from_zero(name, y):
    """Second operands of ops whose record keeps them away from 0 (div, rem) moved to ``y_min_abs``."""
    m = OPS[name].y_min_abs
    return y if m is None else np.where(np.abs(y) < m, y.dtype.type(m), y).astype(y.dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", LAX_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_binary_float32(name, shapes, mode):
    fn, ref, ulp = FLOAT_BINARY[name]
    x, y = _operands(np.float32, *shapes, domain=OPS[name].domain)
    y = _away_from_zero(name, y)
    out = run(mode, fn, x, y)
    # results in the subnormal range may be flushed (FTZ, as JAX's CPU backend)
    expected = closer(out, oracle64(ref, x, y), flush(oracle64(ref, flush(x), flush(y))))
    if ulp == 0:
        assert_exact(out, expected)
    else:
        assert_ulp(out, expected, ulp)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", names(r for r in _BINARY_SWEPT if r.special))
def test_binary_float32_special_values(name, mode):
    fn, ref, ulp = FLOAT_BINARY[name]
    s = F32_SPECIALS
    x = np.repeat(s, len(s))
    y = np.tile(s, len(s))
    out = run(mode, fn, x, y)
    expected = closer(out, oracle64(ref, x, y), flush(oracle64(ref, flush(x), flush(y))))
    assert_ulp(out, expected, max(ulp, 1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", names(r for r in _BINARY_SWEPT if "float64" in r.ulp))
def test_binary_float64(name, mode):
    use_dtype("float64")
    fn, ref, _ = FLOAT_BINARY[name]
    ulp = OPS[name].ulp["float64"]
    x, y = _operands(np.float64, (20,), (20,), domain=OPS[name].domain)
    y = _away_from_zero(name, y)
    out = run(mode, fn, x, y)
    with np.errstate(all="ignore"):
        expected = ref(x, y)
    if ulp == 0:
        assert_exact(out, expected)
    else:
        assert_ulp(out, expected, ulp)


@pytest.mark.parametrize("mode", MODES)
def test_float_division_by_zero(mode):
    x = np.array([1.0, -1.0, 0.0, np.nan, np.inf], np.float32)
    z = np.zeros(5, np.float32)
    assert_exact(run(mode, lax.div, x, z), np.array([np.inf, -np.inf, np.nan, np.nan, np.inf], np.float32))
    assert_exact(run(mode, lax.div, x, -z), np.array([-np.inf, np.inf, np.nan, np.nan, -np.inf], np.float32))
    assert np.isnan(np.asarray(run(mode, lax.rem, x, z))).all()
    assert_exact(run(mode, jnp.true_divide, x, z), np.array([np.inf, -np.inf, np.nan, np.nan, np.inf], np.float32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [lax.max, lax.min, jnp.maximum, jnp.minimum], ids=lambda f: f.__name__)
def test_max_min_nan_propagation(fn, mode):
    x = np.array([np.nan, 1.0, np.nan, -np.inf, np.inf, 2.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 5.0, 5.0, 2.0], np.float32)
    ref = np.maximum if fn.__name__ in ("max", "maximum") else np.minimum
    assert_exact(run(mode, fn, x, y), ref(x, y), check_zero_sign=False)


@pytest.mark.parametrize("mode", MODES)
def test_pow_special_cases(mode):
    x = np.array([-2.0, -2.0, 0.0, 0.0, np.inf, np.nan, 1.0, 2.0, -0.0], np.float32)
    y = np.array([3.0, 0.5, 0.0, -1.0, 0.0, 0.0, np.nan, -np.inf, -1.0], np.float32)
    expected = np.array([-8.0, np.nan, 1.0, np.inf, 1.0, 1.0, 1.0, 0.0, -np.inf], np.float32)
    assert_exact(run(mode, lax.pow, x, y), expected)


@pytest.mark.parametrize("mode", MODES)
def test_nextafter(mode):
    x = np.array([1.0, 1.0, 0.0, -0.0, 3e38, np.inf, np.nan, 2.0], np.float32)
    y = np.array([2.0, 0.0, 1.0, -1.0, np.inf, 0.0, 1.0, 2.0], np.float32)
    assert_exact(run(mode, lax.nextafter, x, y), np.nextafter(x, y), check_zero_sign=False)


# -- integers

def _wrap(v, dt):
    dt = np.dtype(dt)
    bits = dt.itemsize * 8
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _int_oracle(op, x, y, dt):
    """Elementwise integer op in Python ints with XLA's semantics, wrapped to ``dt``."""
    dt = np.dtype(dt)
    bits = dt.itemsize * 8
    out = []
    for a, b in zip(np.asarray(x, dt).ravel().tolist(), np.asarray(y, dt).ravel().tolist()):
        if op == "div":
            if b == 0:
                r = -1  # all ones, also for unsigned
            else:
                q = abs(a) // abs(b)
                r = q if (a < 0) == (b < 0) else -q
        elif op == "rem":
            if b == 0:
                r = a
            else:
                q = abs(a) // abs(b)
                q = q if (a < 0) == (b < 0) else -q
                r = a - b * q
        elif op == "floor_divide":
            if b == 0:
                r = -1 if dt.kind == "u" else (-1 if a == 0 else -2)
            else:
                r = a // b
        elif op == "remainder":
            r = 0 if b == 0 else a % b
        elif op == "shift_left":
            r = a << b if 0 <= b < bits else 0
        elif op == "shift_right_logical":
            r = (a & ((1 << bits) - 1)) >> b if 0 <= b < bits else 0
        elif op == "shift_right_arithmetic":
            sa = _wrap(a, np.dtype(f"int{bits}"))  # the bit pattern as signed
            r = sa >> b if 0 <= b < bits else (-1 if sa < 0 else 0)
        else:
            raise AssertionError(op)
        out.append(_wrap(r, dt))
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    return np.array(out, dtype=dt).reshape(shape)


INT_DTYPES = ["int32", "uint32", "int64"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", LAX_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", names(select("binary", where=lambda r: r.int_semantics == "wrap")))
def test_binary_int_wrapping(name, dtype, shapes, mode):
    dt = use_dtype(dtype)
    x, y = _operands(dt, *shapes)
    fn, ref = OPS[name].lax, OPS[name].oracle
    with np.errstate(over="ignore"):
        assert_exact(run(mode, fn, x, y), ref(x, y).astype(dt))
    # overflow wraps around
    info = np.iinfo(dt)
    big = np.array([info.max, info.min, info.max, 7], dt)
    other = np.array([1, info.max, info.max, 3], dt)
    with np.errstate(over="ignore"):
        assert_exact(run(mode, fn, big, other), ref(big, other).astype(dt))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", names(select("binary", where=lambda r: r.int_semantics == "xla")))
def test_integer_div_rem(name, dtype, mode):
    dt = use_dtype(dtype)
    info = np.iinfo(dt)
    vals = [0, 1, 7, 100, info.max] + ([] if dt.kind == "u" else [-1, -7, -100, info.min])
    x = np.array([a for a in vals for _ in vals], dt)
    y = np.array([b for _ in vals for b in vals], dt)  # includes every x / 0 and INT_MIN / -1
    assert_exact(run(mode, OPS[name].lax, x, y), _int_oracle(name, x, y, dt))


@pytest.mark.parametrize("mode", MODES)
def test_integer_division_by_zero_recorded(mode):
    x = np.array([7, -7, 0, 5], np.int32)
    z = np.zeros(4, np.int32)
    assert_exact(run(mode, lax.div, x, z), np.array([-1, -1, -1, -1], np.int32))
    assert_exact(run(mode, lax.rem, x, z), x)
    assert_exact(run(mode, jnp.floor_divide, x[:3], z[:3]), np.array([-2, -2, -1], np.int32))
    assert_exact(run(mode, lambda a: jnp.floor_divide(a, 0), x[:3]), np.array([-2, -2, -1], np.int32))
    assert_exact(run(mode, jnp.remainder, x, z), np.zeros(4, np.int32))
    assert_exact(run(mode, lambda a: a // 0, x[:3]), np.array([-2, -2, -1], np.int32))
    assert_exact(run(mode, lambda a: a % 0, x), np.zeros(4, np.int32))
    # INT_MIN / -1 overflows to INT_MIN; INT_MIN % -1 == 0
    m = np.array([INT32_MIN], np.int32)
    n = np.array([-1], np.int32)
    assert_exact(run(mode, lax.div, m, n), m)
    assert_exact(run(mode, lax.rem, m, n), np.array([0], np.int32))
    assert_exact(run(mode, jnp.floor_divide, m, n), m)
    assert_exact(run(mode, jnp.remainder, m, n), np.array([0], np.int32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", names(select("composite", composites=True)))
def test_jnp_integer_floor_divide_remainder(name, dtype, mode):
    dt = use_dtype(dtype)
    info = np.iinfo(dt)
    vals = [0, 1, 3, 7, 100, info.max] + ([] if dt.kind == "u" else [-1, -3, -7, -100])
    x = np.array([a for a in vals for _ in vals], dt)
    y = np.array([b for _ in vals for b in vals], dt)
    assert_exact(run(mode, OPS[name].jnp, x, y), _int_oracle(name, x, y, dt))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", names(select("composite", composites=True, where=lambda r: "float32" in r.dtypes)))
def test_jnp_float_floor_divide_remainder(name, mode):
    x = rand(np.float32, (40,), -20, 20)
    y = rand(np.float32, (40,), -5, 5, seed=3)
    y = np.where(np.abs(y) < 0.25, np.float32(0.25), y).astype(np.float32)
    assert_exact(run(mode, OPS[name].jnp, x, y), oracle64(OPS[name].oracle, x, y), check_zero_sign=False)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", names(select("shift")))
def test_shifts(name, dtype, mode):
    dt = use_dtype(dtype)
    bits = dt.itemsize * 8
    info = np.iinfo(dt)
    vals = [0, 1, 5, info.max, 0x40000001] + ([-1, -8, info.min] if dt.kind == "i" else [info.max - 3])
    shifts = [0, 1, 3, bits - 1, bits, bits + 1, 100] + ([-1] if dt.kind == "i" else [])
    x = np.array([a for a in vals for _ in shifts], dt)
    s = np.array([b for _ in vals for b in shifts], dt)
    assert_exact(run(mode, OPS[name].lax, x, s), _int_oracle(name, x, s, dt))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", names(select("shift")))
def test_shifts_by_constant_amounts(name, dtype):
    # a literal amount compiles to one vector shift per lane group (threefry's rotations); out-of-range
    # amounts follow the same rules as computed ones
    dt = use_dtype(dtype)
    bits = dt.itemsize * 8
    info = np.iinfo(dt)
    x = np.array(([0, 1, 5, info.max, info.min, 0x40000001 & info.max, 3, 77] * 5)[:37], dt)
    for amount in [0, 1, 3, 13, bits - 1, bits, bits + 1, 100] + ([-1] if dt.kind == "i" else []):
        a = dt.type(amount)
        got = cranax.jit(lambda v, a=a: OPS[name].lax(v, a))(x)
        assert_exact(got, _int_oracle(name, x, np.full(x.shape, a, dt), dt))


@pytest.mark.parametrize("mode", MODES)
def test_jnp_shifts(mode):
    x = np.array([1, -8, 255, INT32_MIN], np.int32)
    assert_exact(run(mode, jnp.left_shift, x, np.int32(4)), np.left_shift(x, 4))
    assert_exact(run(mode, jnp.right_shift, x, np.int32(2)), np.right_shift(x, 2))
    u = np.array([1, 2 ** 31, 2 ** 32 - 1], np.uint32)
    assert_exact(run(mode, jnp.right_shift, u, np.uint32(3)), np.right_shift(u, np.uint32(3)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_integer_pow(dtype, mode):
    dt = np.dtype(dtype)
    x = np.array([0, 1, 2, 3, 7, 1000, 65537] + ([-3, -1000] if dt.kind == "i" else []), dt)
    for y in [0, 1, 2, 3, 5]:
        expected = np.array([_wrap(int(v) ** y, dt) for v in x.tolist()], dt)
        assert_exact(run(mode, lambda a: lax.integer_pow(a, y), x), expected)
    with pytest.raises(TypeError, match="negative powers"):
        lax.integer_pow(x, -1)


@pytest.mark.parametrize("mode", MODES)
def test_integer_pow_float(mode):
    x = rand(np.float32, (3, 7), -3, 3)
    x = np.where(np.abs(x) < 0.1, np.float32(0.5), x).astype(np.float32)
    for y in [-3, -2, -1, 0, 1, 2, 3, 4, 7]:
        assert_ulp(run(mode, lambda a: lax.integer_pow(a, y), x), oracle64(lambda v: v ** y, x), 4)
    s = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    assert_exact(run(mode, lambda a: lax.integer_pow(a, 2), s), np.array([0, 0, np.inf, np.inf, np.nan], np.float32))
    assert_exact(run(mode, lambda a: lax.integer_pow(a, 0), s), np.ones(5, np.float32))
    assert_exact(run(mode, lambda a: lax.integer_pow(a, -1), s),
                 np.array([np.inf, -np.inf, 0.0, -0.0, np.nan], np.float32))


def test_binary_rejects_bool_and_mixed_dtypes():
    b = np.array([True, False])
    with pytest.raises(TypeError, match="bool"):
        lax.add(b, b)
    with pytest.raises(TypeError, match="bool"):
        lax.mul(b, b)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.add(np.ones(3, np.float32), np.ones(3, np.int32))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.add(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError):
        lax.shift_left(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError):
        lax.pow(np.ones(3, np.int32), np.ones(3, np.int32))


@pytest.mark.parametrize("mode", MODES)
def test_lax_python_scalar_is_its_default_dtype(mode):
    # As JAX 0.10.2's lax: a Python scalar is a value of its default dtype (int32, float32); no promotion.
    x = np.arange(4, dtype=np.float32)
    assert_exact(run(mode, lambda a: lax.add(a, 2.0), x), x + 2)
    out = run(mode, lambda a: lax.mul(3, a), np.arange(4, dtype=np.int32))
    assert_exact(out, np.arange(4, dtype=np.int32) * 3)
    tip = " (Tip: jnp.{} is a similar function that does automatic type promotion on inputs)."
    with pytest.raises(TypeError) as e:
        run(mode, lambda a: lax.add(a, 2), x)
    assert str(e.value) == "lax.add requires arguments to have the same dtypes, got float32, int32." + tip.format("add")
    with pytest.raises(TypeError) as e:
        run(mode, lambda a: lax.sub(a, 1), np.array([0, 5], np.uint32))
    assert str(e.value) == ("lax.sub requires arguments to have the same dtypes, got uint32, int32."
                            + tip.format("subtract"))
    with pytest.raises(TypeError) as e:
        lax.add(1, 1.0)
    assert str(e.value) == "lax.add requires arguments to have the same dtypes, got int32, float32." + tip.format("add")
    with pytest.raises(TypeError, match=r"lax\.lt requires arguments to have the same dtypes, got int32, float32\.$"):
        lax.lt(np.int32(1), 2.0)


# ----------------------------------------------------------------------------------------------- comparisons, logic

CMP = {r.name: r.oracle for r in select("compare")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,dtype", [(r.name, d) for r in select("compare") for d in r.dtypes])
def test_comparisons(name, dtype, mode):
    dt = use_dtype(dtype)
    x, y = _operands(dt, (6, 7), (6, 7))
    y[0] = x[0]  # some ties
    if dt.kind == "f":
        x[1, :] = F32_SPECIALS[:7]
        y[1, :] = F32_SPECIALS[3:10]
        x[2, :] = np.nan
    out = run(mode, OPS[name].lax, x, y)
    assert_exact(out, CMP[name](x, y))
    # rank-0 against array
    out = run(mode, OPS[name].lax, x, x[3, 3].copy())
    assert_exact(out, CMP[name](x, x[3, 3]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint32", "int64"])
def test_bitwise(dtype, mode):
    dt = use_dtype(dtype)
    x, y = _operands(dt, (4, 5), (4, 5), seed=7)
    if dt.kind in "iu":
        x[0, :] = np.array([np.iinfo(dt).max, np.iinfo(dt).min, 0, -1 if dt.kind == "i" else 7, 0x5555], dt)
    assert_exact(run(mode, lax.bitwise_and, x, y), x & y)
    assert_exact(run(mode, lax.bitwise_or, x, y), x | y)
    assert_exact(run(mode, lax.bitwise_xor, x, y), x ^ y)
    assert_exact(run(mode, lax.bitwise_not, x), ~x)


@pytest.mark.parametrize("mode", MODES)
def test_bitwise_rejects_float(mode):
    with pytest.raises(TypeError):
        lax.bitwise_and(np.ones(2, np.float32), np.ones(2, np.float32))
    with pytest.raises(TypeError):
        lax.bitwise_not(np.ones(2, np.float32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", names(select("unary", where=lambda r: r.int_semantics == "exact")))
def test_unary_integer_exact(name, mode):
    """Integer unary ops with an exact NumPy oracle (bit counting), on each recorded integer dtype: the
    extremes, small values and random bit patterns."""
    r = OPS[name]
    for dtype in r.dtypes:
        dt = use_dtype(dtype)
        info = np.iinfo(dt)
        x = np.concatenate([np.array([0, 1, 2, 3, 255, 256, info.max, info.min, info.max // 3], dt),
                            np.random.default_rng(0).integers(info.min, info.max, 300, dtype=dt, endpoint=True)])
        if dt.kind == "i":
            x = np.concatenate([x, np.array([-1, -2, info.min + 1], dt)])
        assert_exact(run(mode, r.lax, x), r.oracle(x))


def test_integer_unary_ops_reject_floats_and_bool():
    for r in select("unary", where=lambda r: r.int_semantics == "exact"):
        for bad in (np.ones(2, np.float32), np.ones(2, bool)):
            with pytest.raises(TypeError, match=f"{r.name} does not accept dtype"):
                r.lax(bad)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_population_count(dtype, mode):
    dt = np.dtype(dtype)
    x = np.array([0, 1, 3, 255, 2 ** 31 - 1, 12345], dt)
    if dt.kind == "i":
        x = np.concatenate([x, np.array([-1, INT32_MIN], dt)])
    expected = np.array([bin(v & 0xFFFFFFFF).count("1") for v in x.tolist()], dt)
    assert_exact(run(mode, lax.population_count, x), expected)


# ----------------------------------------------------------------------------------------------- select, clamp

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint32", "float32"])
def test_select_n(dtype, mode):
    dt = np.dtype(dtype)
    a, b = _operands(dt, (3, 4), (3, 4), seed=11)
    c = rand(dt, (3, 4), seed=13)
    pred = rand(np.bool_, (3, 4), seed=5)
    assert_exact(run(mode, lax.select_n, pred, a, b), np.where(pred, b, a))
    assert_exact(run(mode, lax.select, pred, a, b), np.where(pred, a, b))
    which = (np.arange(12).reshape(3, 4) % 3).astype(np.int32)
    assert_exact(run(mode, lax.select_n, which, a, b, c), np.choose(which, [a, b, c]))
    # scalar predicate
    assert_exact(run(mode, lax.select_n, np.array(True), a, b), b)
    assert_exact(run(mode, lax.select_n, np.array(False), a, b), a)


def test_select_n_errors():
    a = np.ones((3,), np.float32)
    with pytest.raises(TypeError):
        lax.select_n(np.array([True, False]), a, a)  # which shape mismatch
    with pytest.raises(TypeError):
        lax.select_n(np.array([1.0, 0.0, 1.0], np.float32), a, a)  # float which
    with pytest.raises(TypeError):
        lax.select_n(np.array([True, False, True]), a, a.astype(np.int32))


@pytest.mark.parametrize("mode", MODES)
def test_clamp(mode):
    x = np.array([-5.0, 0.5, 7.0, np.nan, -np.inf, np.inf], np.float32)
    assert_exact(run(mode, lambda v: lax.clamp(np.float32(-1.0), v, np.float32(2.0)), x),
                 np.array([-1.0, 0.5, 2.0, np.nan, -1.0, 2.0], np.float32))
    lo = np.array([0, 1, 2, 3, 4, 5], np.int32)
    xi = np.array([-9, 1, 9, 3, 0, 6], np.int32)
    assert_exact(run(mode, lambda a, b: lax.clamp(a, b, np.int32(5)), lo, xi), np.array([0, 1, 5, 3, 4, 5], np.int32))
    assert_exact(run(mode, lambda v: jnp.clip(v, -1, 2), x), np.array([-1.0, 0.5, 2.0, np.nan, -1.0, 2.0], np.float32))


# ----------------------------------------------------------------------------------------------- conversions

def _convert_oracle(x, to):
    to = np.dtype(to)
    if to == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and to.kind in "iu":
        info = np.iinfo(to)
        with np.errstate(invalid="ignore"):
            t = np.trunc(x.astype(np.float64))
            t = np.where(np.isnan(t), 0, t)
        vals = [info.max if v >= info.max else info.min if v <= info.min else int(v) for v in t.tolist()]
        return np.array(vals, dtype=object).astype(to)
    with np.errstate(all="ignore"):
        return x.astype(to)


CONV_DTYPES = ["bool", "int32", "uint32", "float32"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("to", CONV_DTYPES)
@pytest.mark.parametrize("frm", CONV_DTYPES)
def test_convert_element_type(frm, to, mode):
    src = np.dtype(frm)
    if src == np.bool_:
        x = np.array([True, False, True], src)
    elif src.kind == "f":
        x = np.array([-1.7, 2.9, -0.5, 0.0, -0.0, 3.5e9, -3.5e9, 2147483520.0, np.nan, np.inf, -np.inf,
                      4294967040.0, 1e20, 16777217.0], src)
    elif src.kind == "u":
        x = np.array([0, 1, 7, 2 ** 31, 2 ** 32 - 1, 16777217], src)
    else:
        x = np.array([0, 1, -1, INT32_MIN, INT32_MAX, 16777217], src)
    out = run(mode, lambda v: lax.convert_element_type(v, np.dtype(to)), x)
    assert_exact(out, _convert_oracle(x, to))
    assert out.weak_type is False


@pytest.mark.parametrize("mode", MODES)
def test_float_to_int_saturates_recorded(mode):
    x = np.array([-1.7, 2.9, -0.5], np.float32)
    assert_exact(run(mode, lambda v: jnp.array(v).astype(jnp.int32), x), np.array([-1, 2, 0], np.int32))
    y = np.array([1e10, -1e10, np.inf, -np.inf, np.nan], np.float32)
    assert_exact(run(mode, lambda v: v.astype(jnp.int32), y),
                 np.array([INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0], np.int32))
    assert_exact(run(mode, lambda v: v.astype(jnp.uint32), y),
                 np.array([2 ** 32 - 1, 0, 2 ** 32 - 1, 0, 0], np.uint32))


@pytest.mark.parametrize("mode", MODES)
def test_convert_64bit(mode):
    use_dtype("int64")
    x = np.array([-1.5, 2.5, 1e19, -1e19, np.nan, 9007199254740993.0], np.float64)
    assert_exact(run(mode, lambda v: lax.convert_element_type(v, np.int64), x), _convert_oracle(x, np.int64))
    i = np.array([2 ** 40 + 1, -(2 ** 62), 2 ** 31], np.int64)
    assert_exact(run(mode, lambda v: lax.convert_element_type(v, np.int32), i), i.astype(np.int32))
    assert_exact(run(mode, lambda v: lax.convert_element_type(v, np.float32), i), i.astype(np.float32))
    assert_exact(run(mode, lambda v: lax.convert_element_type(v, np.float64), i), i.astype(np.float64))
    f = np.array([1e-40, 3.4e39, 0.1], np.float64)
    # A result that is subnormal in float32 is flushed to zero, as JAX 0.10.2 gives [0.0, inf, 0.1].
    with np.errstate(over="ignore"):
        assert_exact(run(mode, lambda v: lax.convert_element_type(v, np.float32), f),
                     flush(f.astype(np.float32)))


@pytest.mark.parametrize("mode", MODES)
def test_bitcast_convert_type(mode):
    x = np.array([1.0, -2.0, 0.0, -0.0, np.inf, 1e-45], np.float32)
    assert_exact(run(mode, lambda v: lax.bitcast_convert_type(v, np.int32), x), x.view(np.int32))
    assert_exact(run(mode, lambda v: lax.bitcast_convert_type(v, np.uint32), x), x.view(np.uint32))
    i = np.array([0x3F800000, -1, 0x7F800000], np.int32)
    assert_exact(run(mode, lambda v: lax.bitcast_convert_type(v, np.float32), i), i.view(np.float32),
                 check_zero_sign=True)
    with pytest.raises(TypeError):
        lax.bitcast_convert_type(np.array([True]), np.int32)


# ----------------------------------------------------------------------------------------------- shape primitives

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint32", "float32"])
def test_broadcast_in_dim(dtype, mode):
    x = rand(dtype, (3, 1))
    assert_exact(run(mode, lambda v: lax.broadcast_in_dim(v, (2, 3, 4), (1, 2)), x),
                 np.broadcast_to(x[None], (2, 3, 4)))
    assert_exact(run(mode, lambda v: lax.broadcast_in_dim(v, (3, 5), (0, 1)), x), np.broadcast_to(x, (3, 5)))
    s = rand(dtype, ())
    assert_exact(run(mode, lambda v: lax.broadcast_in_dim(v, (2, 2), ()), s), np.broadcast_to(s, (2, 2)))
    assert_exact(run(mode, lambda v: lax.broadcast_in_dim(v, (0, 3), ()), s), np.broadcast_to(s, (0, 3)))
    v = rand(dtype, (4,))
    assert_exact(run(mode, lambda a: lax.broadcast_in_dim(a, (4, 3), (0,)), v), np.broadcast_to(v[:, None], (4, 3)))
    assert_exact(run(mode, lambda a: lax.broadcast(a, (2,)), v), np.broadcast_to(v, (2, 4)))


def test_broadcast_in_dim_errors():
    with pytest.raises(TypeError):
        lax.broadcast_in_dim(np.ones(3, np.float32), (4,), (0,))
    with pytest.raises(TypeError):
        lax.broadcast_in_dim(np.ones((2, 3), np.float32), (2, 3), (0,))
    with pytest.raises(TypeError):
        lax.broadcast_in_dim(np.ones((2, 3), np.float32), (3, 2, 3), (2, 1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
def test_reshape_squeeze_expand_dims(dtype, mode):
    x = rand(dtype, (2, 3, 4))
    assert_exact(run(mode, lambda v: lax.reshape(v, (4, 6)), x), x.reshape(4, 6))
    assert_exact(run(mode, lambda v: lax.reshape(v, (24,)), x), x.reshape(24))
    assert_exact(run(mode, lambda v: lax.reshape(v, (3, 2, 4), dimensions=(1, 0, 2)), x),
                 x.transpose(1, 0, 2).reshape(3, 2, 4))
    assert_exact(run(mode, lambda v: jnp.reshape(v, (-1, 2)), x), x.reshape(-1, 2))
    assert_exact(run(mode, lambda v: v.reshape(4, -1), x), x.reshape(4, -1))
    y = rand(dtype, (1, 3, 1, 2))
    assert_exact(run(mode, lambda v: lax.squeeze(v, (0, 2)), y), y.reshape(3, 2))
    assert_exact(run(mode, lambda v: lax.squeeze(v, (-2,)), y), y.reshape(1, 3, 2))
    assert_exact(run(mode, jnp.squeeze, y), np.squeeze(y))
    assert_exact(run(mode, lambda v: jnp.squeeze(v, axis=0), y), np.squeeze(y, axis=0))
    assert_exact(run(mode, lambda v: lax.expand_dims(v, (0, 3)), x), x.reshape(1, 2, 3, 1, 4))
    assert_exact(run(mode, lambda v: jnp.expand_dims(v, -1), x), np.expand_dims(x, -1))
    assert_exact(run(mode, lambda v: jnp.expand_dims(v, (0, 2)), x), np.expand_dims(x, (0, 2)))
    s = rand(dtype, ())
    assert_exact(run(mode, lambda v: lax.reshape(v, (1, 1)), s), s.reshape(1, 1))
    z = rand(dtype, (0, 3))
    assert_exact(run(mode, lambda v: lax.reshape(v, (3, 0, 1)), z), z.reshape(3, 0, 1))


def test_reshape_squeeze_errors():
    with pytest.raises(TypeError):
        lax.reshape(np.ones(6, np.float32), (4,))
    with pytest.raises(ValueError):
        lax.squeeze(np.ones((2, 3), np.float32), (0,))
    with pytest.raises((TypeError, ValueError)):
        jnp.reshape(jnp.ones(6), (4, -1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint32", "float32"])
def test_transpose(dtype, mode):
    x = rand(dtype, (2, 3, 4))
    for perm in [(0, 1, 2), (2, 1, 0), (1, 0, 2), (1, 2, 0), (2, 0, 1)]:
        assert_exact(run(mode, lambda v: lax.transpose(v, perm), x), x.transpose(perm))
    assert_exact(run(mode, jnp.transpose, x), x.T)
    assert_exact(run(mode, lambda v: v.T, x[0]), x[0].T)
    assert_exact(run(mode, lambda v: jnp.transpose(v, (0, 2, 1)), x), x.transpose(0, 2, 1))
    z = rand(dtype, (0, 3))
    assert_exact(run(mode, lambda v: v.T, z), z.T)
    with pytest.raises(TypeError):
        lax.transpose(x, (0, 0, 1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32"])
def test_iota(dtype, mode):
    dt = np.dtype(dtype)
    assert_exact(run(mode, lambda: lax.iota(dt, 5)), np.arange(5, dtype=dt))
    assert_exact(run(mode, lambda: lax.iota(dt, 0)), np.arange(0, dtype=dt))
    assert_exact(run(mode, lambda: lax.broadcasted_iota(dt, (2, 3), 1)),
                 np.broadcast_to(np.arange(3, dtype=dt), (2, 3)))
    assert_exact(run(mode, lambda: lax.broadcasted_iota(dt, (2, 3), 0)),
                 np.broadcast_to(np.arange(2, dtype=dt)[:, None], (2, 3)))


@pytest.mark.parametrize("mode", MODES)
def test_iota_64(mode):
    use_dtype("int64")
    assert_exact(run(mode, lambda: lax.iota(np.int64, 4)), np.arange(4, dtype=np.int64))
    assert_exact(run(mode, lambda: lax.iota(np.float64, 4)), np.arange(4, dtype=np.float64))


# ----------------------------------------------------------------------------------------------- reductions

AXIS_SUBSETS = [(), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("axes", AXIS_SUBSETS, ids=str)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32"])
@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
def test_lax_reductions(name, dtype, axes, mode):
    dt = np.dtype(dtype)
    if name == "reduce_prod":
        x = rand(dt, (2, 3, 4), 0.5, 1.5)
        if dt.kind != "f":  # small factors, some negative, so products stay exact
            x = (np.random.default_rng(5).integers(-3, 4, (2, 3, 4)) % (4 if dt.kind == "u" else 7) - (
                0 if dt.kind == "u" else 3)).astype(dt)
    else:
        x = rand(dt, (2, 3, 4))
    out = run(mode, lambda v: getattr(lax, name)(v, axes), x)
    ref = {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod}[name]
    if dt.kind == "f" and name in ("reduce_sum", "reduce_prod"):
        expected = ref(x.astype(np.float64), axis=axes).astype(dt)
        _check_meta(out, dt, expected.shape)
        np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6, atol=1e-6)
    else:
        with np.errstate(over="ignore"):
            assert_exact(out, np.asarray(ref(x, axis=axes)).astype(dt))


@pytest.mark.parametrize("mode", MODES)
def test_lax_reduce_empty_and_bool(mode):
    e = np.zeros((0, 3), np.float32)
    assert_exact(run(mode, lambda v: lax.reduce_sum(v, (0,)), e), np.zeros(3, np.float32))
    assert_exact(run(mode, lambda v: lax.reduce_prod(v, (0,)), e), np.ones(3, np.float32))
    assert_exact(run(mode, lambda v: lax.reduce_max(v, (0,)), e), np.full(3, -np.inf, np.float32))
    assert_exact(run(mode, lambda v: lax.reduce_min(v, (0,)), e), np.full(3, np.inf, np.float32))
    ei = np.zeros((3, 0), np.int32)
    assert_exact(run(mode, lambda v: lax.reduce_max(v, (1,)), ei), np.full(3, INT32_MIN, np.int32))
    assert_exact(run(mode, lambda v: lax.reduce_min(v, (1,)), ei), np.full(3, INT32_MAX, np.int32))
    b = np.array([[True, False, True], [True, True, True]])
    assert_exact(run(mode, lambda v: lax.reduce_and(v, (1,)), b), np.array([False, True]))
    assert_exact(run(mode, lambda v: lax.reduce_or(v, (0,)), b), np.array([True, True, True]))
    assert_exact(run(mode, lambda v: lax.reduce_max(v, (0, 1)), b), np.array(True))
    assert_exact(run(mode, lambda v: lax.reduce_min(v, (0, 1)), b), np.array(False))
    with pytest.raises(TypeError):
        lax.reduce_sum(b, (0,))


@pytest.mark.parametrize("mode", MODES)
def test_lax_reduce_max_min_nan(mode):
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, np.inf]], np.float32)
    assert_exact(run(mode, lambda v: lax.reduce_max(v, (1,)), x), np.array([np.nan, np.inf], np.float32))
    assert_exact(run(mode, lambda v: lax.reduce_min(v, (1,)), x), np.array([np.nan, -np.inf], np.float32))
    assert_exact(run(mode, lambda v: lax.reduce_sum(v, (0,)), x), np.array([-np.inf, np.nan, np.inf], np.float32))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "bool"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_lax_argmax_argmin(name, dtype, mode):
    x = rand(dtype, (3, 4, 5))
    ref = getattr(np, name)
    for axis in range(3):
        out = run(mode, lambda v: getattr(lax, name)(v, axis, np.int32), x)
        assert_exact(out, ref(x, axis=axis).astype(np.int32))


@pytest.mark.parametrize("mode", MODES)
def test_argmax_ties_and_nan(mode):
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf]],
                 np.float32)
    assert_exact(run(mode, lambda v: jnp.argmax(v, axis=1), x), np.array([1, 1, 0], np.int32))
    assert_exact(run(mode, lambda v: jnp.argmin(v, axis=1), x), np.array([3, 1, 0], np.int32))
    assert_exact(run(mode, jnp.argmax, x), np.array(5, np.int32))


# ----------------------------------------------------------------------------------------------- slice / rev / copy

@pytest.mark.parametrize("mode", MODES)
def test_slice_rev_copy_through_indexing(mode):
    x = rand(np.float32, (4, 5, 6))
    assert_exact(run(mode, lambda v: v[1:3, ::2, 4:1:-1], x), x[1:3, ::2, 4:1:-1])
    assert_exact(run(mode, lambda v: v[::-1], x), x[::-1])
    assert_exact(run(mode, jnp.copy, x), x)


@pytest.mark.parametrize("mode", MODES)
def test_stop_gradient_value(mode):
    x = rand(np.float32, (3, 4))
    assert_exact(run(mode, lax.stop_gradient, x), x)
    assert_exact(run(mode, lambda v: lax.stop_gradient(v) * 2.0 + v, x), x * 2.0 + x)
    i = np.arange(5, dtype=np.int32)
    assert_exact(run(mode, lax.stop_gradient, i), i)
    tree = run(mode, lambda a, b: lax.stop_gradient({"a": a, "b": (b,)}), x, i)
    assert_exact(tree["a"], x)
    assert_exact(tree["b"][0], i)


def _np_pad(x, value, config):
    out = x
    for axis, (lo, hi, interior) in enumerate(config):
        if interior:
            n = out.shape[axis]
            shape = list(out.shape)
            shape[axis] = n + max(n - 1, 0) * interior
            tmp = np.full(shape, value, out.dtype)
            idx = [slice(None)] * out.ndim
            idx[axis] = slice(None, None, interior + 1)
            tmp[tuple(idx)] = out
            out = tmp
        width = [(0, 0)] * out.ndim
        width[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, width, constant_values=value)
        idx = [slice(None)] * out.ndim
        idx[axis] = slice(-lo if lo < 0 else 0, out.shape[axis] + hi if hi < 0 else None)
        out = out[tuple(idx)]
    return out


@pytest.mark.parametrize("mode", MODES)
def test_pad(mode):
    x = rand(np.float32, (3, 4))
    for config in [((1, 2, 0), (0, 0, 0)), ((0, 0, 1), (2, 1, 2)), ((-1, 1, 0), (1, -2, 1))]:
        out = run(mode, lambda v: lax.pad(v, np.float32(-7.0), config), x)
        assert_exact(out, _np_pad(x, np.float32(-7.0), config))

# That every primitive has a record, a jvp rule and a batching rule: tests/test_op_records.py.
