"""``cranax.numpy`` and ``Array``: broadcasting, type promotion with weak types, creation functions,
reductions over every axis subset, static indexing, operators, conversions, repr, devices and transfers.

Expected values come from NumPy (same dtype, or float64 rounded to float32) and from outputs recorded with
JAX 0.10.2 (the conformance corpus and the seed documents), copied in here.
"""
import operator

import numpy as np
import pytest

import cranax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax.config import config

MODES = ["eager", "jit"]


def run(mode, fn, *args):
    args = [cranax.device_put(a) if isinstance(a, np.ndarray) else a for a in args]
    if mode == "jit":
        return cranax.jit(fn)(*args)
    return fn(*args)


def check(actual, expected, dtype=None, weak=None, rtol=0.0, atol=0.0):
    """``actual`` is an Array with ``expected``'s shape and dtype (or ``dtype``) and values."""
    expected = np.asarray(expected)
    dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    assert isinstance(actual, cranax.Array), type(actual)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if weak is not None:
        assert actual.weak_type is weak, (actual.weak_type, weak)
    a = np.asarray(actual)
    assert a.dtype == dtype
    if rtol or atol:
        np.testing.assert_allclose(a, expected.astype(dtype), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(a, expected.astype(dtype))


def rand(dtype, shape, seed=0):
    rng = np.random.default_rng(99 + seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        return rng.uniform(-10, 10, shape).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 1000, shape).astype(dt)
    return rng.integers(-1000, 1000, shape).astype(dt)


# ----------------------------------------------------------------------------------------------- broadcasting

BCAST = [((), ()), ((3,), ()), ((), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((1,), (4,)), ((0, 3), (1, 3)),
         ((4, 0), (1,)), ((2, 1, 3), (4, 1)), ((1, 1), ()), ((5,), (5,))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", BCAST, ids=str)
@pytest.mark.parametrize("op,dtype", [(op, dt) for op in ["add", "subtract", "multiply", "maximum", "minimum",
                                                         "equal", "less", "greater_equal", "not_equal"]
                                       for dt in ["bool", "int32", "uint32", "float32"]
                                       if not (dt == "bool" and op == "subtract")])  # see test_bool_subtract_rejected
def test_binary_broadcasting(op, dtype, shapes, mode):
    x = rand(dtype, shapes[0])
    y = rand(dtype, shapes[1], seed=1)
    out = run(mode, getattr(jnp, op), x, y)
    with np.errstate(over="ignore"):
        expected = getattr(np, op)(x, y)
    check(out, expected)


def test_bool_subtract_rejected():
    with pytest.raises(TypeError):
        jnp.subtract(jnp.array([True]), jnp.array([False]))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", BCAST, ids=str)
def test_float_divide_power_broadcasting(shapes, mode):
    x = np.abs(rand(np.float32, shapes[0])) + 0.5
    y = rand(np.float32, shapes[1], seed=2) / 4
    check(run(mode, jnp.divide, x, y), (x.astype(np.float64) / y).astype(np.float32), rtol=1e-6)
    check(run(mode, jnp.power, x, y), np.power(x.astype(np.float64), y).astype(np.float32), rtol=4e-6)
    check(run(mode, lambda a, b: jnp.where(a > b, a, b), x, y), np.where(x > y, x, y))


def test_incompatible_broadcast_raises():
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)\."):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises((TypeError, ValueError)):
        jnp.ones((2, 3)) * jnp.ones((3, 2))


# ----------------------------------------------------------------------------------------------- type promotion

# JAX's promotion table (docs/type_promotion.rst), x64 off: 64-bit results canonicalize to 32 bits.
# "i*"/"f*" are weakly typed int32/float32 (Python scalars).
NAMES = ["b1", "u4", "i4", "f4", "i*", "f*"]
TABLE_X32 = {
    "b1": ["b1", "u4", "i4", "f4", "i*", "f*"],
    "u4": ["u4", "u4", "i4", "f4", "u4", "f*"],
    "i4": ["i4", "i4", "i4", "f4", "i4", "f*"],
    "f4": ["f4", "f4", "f4", "f4", "f4", "f4"],
    "i*": ["i*", "u4", "i4", "f4", "i*", "f*"],
    "f*": ["f*", "f*", "f*", "f4", "f*", "f*"],
}
NAMES64 = ["b1", "u4", "i4", "i8", "f4", "f8", "i*", "f*"]
TABLE_X64 = {
    "b1": ["b1", "u4", "i4", "i8", "f4", "f8", "i*", "f*"],
    "u4": ["u4", "u4", "i8", "i8", "f4", "f8", "u4", "f*"],
    "i4": ["i4", "i8", "i4", "i8", "f4", "f8", "i4", "f*"],
    "i8": ["i8", "i8", "i8", "i8", "f4", "f8", "i8", "f*"],
    "f4": ["f4", "f4", "f4", "f4", "f4", "f8", "f4", "f4"],
    "f8": ["f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8"],
    "i*": ["i*", "u4", "i4", "i8", "f4", "f8", "i*", "f*"],
    "f*": ["f*", "f*", "f*", "f*", "f4", "f8", "f*", "f*"],
}
STRONG = {"b1": np.bool_, "u4": np.uint32, "i4": np.int32, "i8": np.int64, "f4": np.float32, "f8": np.float64}
VALUES = {"b1": True, "u4": 7, "i4": -3, "i8": 5, "f4": 1.5, "f8": 2.25, "i*": 2, "f*": 0.5}


def _operand(code):
    if code == "i*":
        return 2
    if code == "f*":
        return 0.5
    return jnp.array(VALUES[code], dtype=STRONG[code])


def _expected(code, x64):
    if code == "i*":
        return np.dtype(np.int64 if x64 else np.int32), True
    if code == "f*":
        return np.dtype(np.float64 if x64 else np.float32), True
    return np.dtype(STRONG[code]), False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("a,b,res", [(a, b, TABLE_X32[a][j]) for a in NAMES for j, b in enumerate(NAMES)])
def test_promotion_table_x32(a, b, res, mode):
    config.update("jax_enable_x64", False)
    x, y = _operand(a), _operand(b)
    want_dt, want_weak = _expected(res, False)
    if mode == "jit":
        out = cranax.jit(lambda u, v: jnp.add(u, v))(x, y)
    else:
        out = jnp.add(x, y)
    assert out.dtype == want_dt, (a, b, out.dtype, want_dt)
    assert out.weak_type is want_weak, (a, b, out.weak_type)
    if want_dt == np.bool_:
        expected = np.logical_or(bool(VALUES[a]), bool(VALUES[b]))
    else:
        expected = np.asarray(VALUES[a], np.float64) + np.asarray(VALUES[b], np.float64)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected).astype(want_dt))


@pytest.mark.parametrize("a,b,res", [(a, b, TABLE_X64[a][j]) for a in NAMES64 for j, b in enumerate(NAMES64)])
def test_promotion_table_x64(a, b, res):
    config.update("jax_enable_x64", True)
    x, y = _operand(a), _operand(b)
    want_dt, want_weak = _expected(res, True)
    out = jnp.multiply(x, y)
    assert out.dtype == want_dt, (a, b, out.dtype, want_dt)
    assert out.weak_type is want_weak, (a, b, out.weak_type)
    if want_dt == np.bool_:
        expected = bool(VALUES[a]) and bool(VALUES[b])
    else:
        expected = np.asarray(VALUES[a], np.float64) * np.asarray(VALUES[b], np.float64)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected).astype(want_dt))


@pytest.mark.parametrize("mode", MODES)
def test_weak_type_examples(mode):
    ones_i = jnp.ones(3, jnp.int32)
    out = run(mode, lambda v: v + 1.5, ones_i)
    check(out, [2.5, 2.5, 2.5], np.float32, weak=True)  # i4 + f* = f* (JAX's table)
    f = jnp.array([1.0, 2.0], jnp.float32)
    check(run(mode, lambda v: v + 1, f), [2.0, 3.0], np.float32, weak=False)
    check(run(mode, lambda v: v * 2.5, f), [2.5, 5.0], np.float32, weak=False)
    u = jnp.array([0, 5], jnp.uint32)
    check(run(mode, lambda v: v + 1, u), [1, 6], np.uint32, weak=False)
    check(run(mode, lambda v: v - 1, u), [2 ** 32 - 1, 4], np.uint32, weak=False)
    i = jnp.array([1, -2], jnp.int32)
    check(run(mode, lambda v, w: v + w, i, u), [1, 3], np.int32, weak=False)
    # recorded from JAX (dtype_weak_scalars_keep_array_dtype / sharp_default_32bit_dtypes)
    check(run(mode, lambda v: v + 1, jnp.array([True, False])), [2, 1], np.int32, weak=True)
    check(run(mode, lambda v: v + 1.0, jnp.arange(2)), [1.0, 2.0], np.float32, weak=True)
    check(run(mode, lambda v: v + 1, jnp.array(2 ** 31 - 1, dtype=jnp.int32)), -2 ** 31, np.int32)


def test_weak_type_attribute():
    assert jnp.asarray(2.0).weak_type is True
    assert jnp.array(2.0).weak_type is True
    assert jnp.array(3).weak_type is True
    assert jnp.array(True).weak_type is False
    assert jnp.array([1.0, 2.0]).weak_type is False
    assert jnp.array(2.0, dtype=jnp.float32).weak_type is False
    assert jnp.ones(3).weak_type is False
    assert (jnp.ones(3) * 2).weak_type is False
    assert (jnp.asarray(2.0) * 3).weak_type is True
    assert jnp.asarray(2.0).astype(jnp.float32).weak_type is False
    w = jnp.asarray(2.0) * jnp.array([1.0, 2.0], dtype=jnp.float32)
    assert w.dtype == np.float32 and w.weak_type is False


def test_scalar_type_constructors_make_strong_arrays():
    # JAX: jnp.float32(2.0) is Array(2., dtype=float32), a strongly typed array (not a NumPy scalar)
    v = jnp.float32(2.0)
    assert isinstance(v, cranax.Array) and v.dtype == np.float32 and v.weak_type is False
    i = jnp.int32(3)
    assert isinstance(i, cranax.Array) and i.dtype == np.int32 and i.weak_type is False
    assert np.dtype(jnp.float32) == np.float32  # still usable as a dtype


def test_x64_dtypes():
    config.update("jax_enable_x64", True)
    assert jnp.array(1.0).dtype == np.float64
    assert jnp.arange(3).dtype == np.int64
    assert jnp.zeros(2).dtype == np.float64
    check(jnp.ones(3, jnp.int32) + 1.5, [2.5] * 3, np.float64, weak=True)
    check(jnp.ones(2, jnp.float32) + 1.5, [2.5] * 2, np.float32, weak=False)
    check(jnp.array([1, -2], jnp.int32) + jnp.array([0, 5], jnp.uint32), [1, 3], np.int64)
    check(jnp.array(2 ** 40) + 1, 2 ** 40 + 1, np.int64, weak=True)
    config.update("jax_enable_x64", False)
    assert jnp.array(1.0).dtype == np.float32
    assert jnp.array([1, 2], dtype=jnp.float64).dtype == np.float32
    assert jnp.array(np.arange(3, dtype=np.int64)).dtype == np.int32


@pytest.mark.parametrize("mode", MODES)
def test_int_true_divide_and_power(mode):
    a = np.array([1, 2, 7], np.int32)
    check(run(mode, lambda v: v / 2, a), [0.5, 1.0, 3.5], np.float32)
    check(run(mode, lambda v: v ** 2, a), [1, 4, 49], np.int32)
    check(run(mode, lambda v: 2 ** v, a), [2, 4, 128], np.int32)
    check(run(mode, lambda v: v ** 0.5, a), np.sqrt(a.astype(np.float64)).astype(np.float32), rtol=1e-6)
    check(run(mode, jnp.sqrt, a), np.sqrt(a.astype(np.float64)).astype(np.float32), rtol=1e-6)
    check(run(mode, jnp.exp, a), np.exp(a.astype(np.float64)).astype(np.float32), rtol=4e-7)


# ----------------------------------------------------------------------------------------------- creation

def test_creation_recorded():
    # sharp_default_32bit_dtypes, recorded from JAX 0.10.2
    check(jnp.array(1.0), 1.0, np.float32)
    check(jnp.arange(3), [0, 1, 2], np.int32)
    check(jnp.zeros(2), [0.0, 0.0], np.float32)
    check(jnp.array([True, False]), [True, False], np.bool_)
    check(jnp.linspace(0, 1, 5), [0.0, 0.25, 0.5, 0.75, 1.0], np.float32)
    check(jnp.arange(0, 1, 0.25), [0.0, 0.25, 0.5, 0.75], np.float32)
    check(jnp.full((2,), 3), [3, 3], np.int32)
    check(jnp.eye(2), [[1.0, 0.0], [0.0, 1.0]], np.float32)
    check(jnp.zeros_like(jnp.arange(3)), [0, 0, 0], np.int32)
    check(jnp.array([1, 2], dtype=jnp.float64), [1.0, 2.0], np.float32)


def test_creation_functions():
    check(jnp.ones((2, 3), jnp.int32), np.ones((2, 3), np.int32))
    check(jnp.zeros((0, 2)), np.zeros((0, 2), np.float32))
    check(jnp.full((2, 2), 1.5), np.full((2, 2), 1.5, np.float32))
    check(jnp.full((3,), 7, dtype=jnp.uint32), np.full(3, 7, np.uint32))
    check(jnp.full((), True), np.array(True))
    x = jnp.arange(6.0).reshape(2, 3)
    check(jnp.ones_like(x), np.ones((2, 3), np.float32))
    check(jnp.zeros_like(x, dtype=jnp.int32), np.zeros((2, 3), np.int32))
    check(jnp.full_like(x, 4), np.full((2, 3), 4, np.float32))
    check(jnp.full_like(jnp.arange(3), 2.7), np.full(3, 2, np.int32))
    check(jnp.arange(5, 1, -1), np.arange(5, 1, -1, dtype=np.int32))
    check(jnp.arange(0.5, 3), np.arange(0.5, 3, dtype=np.float32))
    check(jnp.arange(2, 11, 3), np.arange(2, 11, 3, dtype=np.int32))
    check(jnp.arange(4, dtype=jnp.float32), np.arange(4, dtype=np.float32))
    check(jnp.arange(0), np.arange(0, dtype=np.int32))
    check(jnp.linspace(0, 1, 4, endpoint=False), [0.0, 0.25, 0.5, 0.75], np.float32)
    check(jnp.linspace(-1, 1, 3), [-1.0, 0.0, 1.0], np.float32)
    check(jnp.linspace(2, 3, 1), [2.0], np.float32)
    check(jnp.eye(2, 3), np.eye(2, 3, dtype=np.float32))
    check(jnp.eye(3, k=1), np.eye(3, k=1, dtype=np.float32))
    check(jnp.eye(3, k=-2, dtype=jnp.int32), np.eye(3, k=-2, dtype=np.int32))
    check(jnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]], np.int32))
    check(jnp.array([1, 2.5]), np.array([1, 2.5], np.float32))
    check(jnp.array(np.arange(4, dtype=np.uint32)), np.arange(4, dtype=np.uint32))
    check(jnp.asarray([[True], [False]]), np.array([[True], [False]]))
    check(jnp.array(jnp.arange(3)), np.arange(3, dtype=np.int32))
    check(jnp.array([jnp.array(1.0), 2.0]), np.array([1.0, 2.0], np.float32))


# ----------------------------------------------------------------------------------------------- where

@pytest.mark.parametrize("mode", MODES)
def test_where(mode):
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    check(run(mode, lambda v: jnp.where(v > 0, v, 0.0 * v), x), np.where(x > 0, x, 0.0 * x))
    a = np.array([True, False, True, False])
    check(run(mode, lambda c: jnp.where(c, jnp.arange(4), -1), a), [0, -1, 2, -1], np.int32)  # recorded
    check(run(mode, lambda v: jnp.where((v > 1) & (v < 4), v, 0), np.arange(6, dtype=np.int32)),
          [0, 0, 2, 3, 0, 0], np.int32)  # recorded
    c = np.array([[True], [False]])
    y = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(run(mode, lambda p, v: jnp.where(p, v, -v), c, y), np.where(c, y, -y))
    check(run(mode, lambda p: jnp.where(p, 1, 2.5), c), np.where(c, 1, 2.5).astype(np.float32))
    check(run(mode, lambda p, v: jnp.where(p, v, 7), c, np.arange(3, dtype=np.uint32)),
          np.where(c, np.arange(3, dtype=np.uint32), 7).astype(np.uint32))
    # selu from the JIT tutorial (recorded)
    selu = lambda v, alpha=1.67, lmbda=1.05: lmbda * jnp.where(v > 0, v, alpha * jnp.exp(v) - alpha)  # noqa
    check(run(mode, selu, np.arange(-3.0, 3.0, 0.75, dtype=np.float32)),
          [-1.6661982536315918, -1.568682312965393, -1.3622411489486694, -0.9252052307128906, 0.0,
           0.7874999642372131, 1.5749999284744263, 2.362499952316284], np.float32, rtol=1e-6)


# ----------------------------------------------------------------------------------------------- reductions

AXES = [None, 0, 1, 2, -1, (0, 1), (0, 2), (1, 2), (0, 1, 2), (), (-3, -1)]


def _np_axes(axis):
    return axis


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint32", "float32"])
@pytest.mark.parametrize("name", ["sum", "max", "min", "prod", "mean"])
def test_reductions(name, dtype, axis, keepdims, mode):
    x = rand(dtype, (2, 3, 4))
    if name == "prod" and dtype != "bool":
        x = (np.random.default_rng(3).integers(1, 4, (2, 3, 4))).astype(dtype)
        if dtype == "float32":
            x = x * np.float32(0.75)
    out = run(mode, lambda v: getattr(jnp, name)(v, axis=axis, keepdims=keepdims), x)
    if name in ("sum", "prod"):
        acc = {"bool": np.int32, "int32": np.int32, "uint32": np.uint32, "float32": np.float64}[dtype]
        out_dt = np.float32 if dtype == "float32" else acc
        expected = getattr(np, name)(x.astype(acc), axis=axis, keepdims=keepdims).astype(out_dt)
        check(out, expected, rtol=1e-6 if dtype == "float32" else 0, atol=1e-5 if dtype == "float32" else 0)
    elif name == "mean":
        expected = np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims).astype(np.float32)
        check(out, expected, rtol=1e-6, atol=1e-6)
    else:
        check(out, getattr(np, name)(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ["bool", "int32", "uint32", "float32"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argreductions(name, dtype, axis, keepdims, mode):
    x = rand(dtype, (2, 3, 4))
    if dtype != "bool":
        x = (x % 5).astype(dtype)  # ties: the first index wins
    out = run(mode, lambda v: getattr(jnp, name)(v, axis=axis, keepdims=keepdims), x)
    check(out, getattr(np, name)(x, axis=axis, keepdims=keepdims).astype(np.int32))


def test_reductions_recorded():
    # reduce_axis_keepdims and dtype_reduction_results, recorded from JAX 0.10.2
    x = jnp.arange(24.0).reshape(2, 3, 4)
    check(x.sum(), 276.0, np.float32)
    check(jnp.sum(x, axis=0), np.arange(12, 35, 2, dtype=np.float32).reshape(3, 4))
    check(jnp.sum(x, axis=(0, 2)), [60.0, 92.0, 124.0], np.float32)
    check(jnp.mean(x, axis=-1), [[1.5, 5.5, 9.5], [13.5, 17.5, 21.5]], np.float32)
    check(jnp.max(x, axis=1, keepdims=True), np.array([[[8.0, 9.0, 10.0, 11.0]], [[20.0, 21.0, 22.0, 23.0]]]),
          np.float32)
    check(jnp.min(x, axis=(1, 2)), [0.0, 12.0], np.float32)
    check(jnp.prod(jnp.arange(1.0, 6.0)), 120.0, np.float32)
    check(jnp.sum(jnp.arange(6).reshape(2, 3), axis=1, keepdims=True), [[3], [12]], np.int32)
    check(jnp.sum(jnp.array([True, True, False])), 2, np.int32)
    check(jnp.mean(jnp.arange(4)), 1.5, np.float32)
    check(jnp.mean(jnp.array([True, False, False, False])), 0.25, np.float32)
    check(jnp.sum(jnp.ones(3, dtype=jnp.uint32)), 3, np.uint32)
    check(jnp.any(x > 22, axis=2), [[False, False, False], [False, False, True]], np.bool_)
    check(jnp.all(x >= 0, axis=0, keepdims=True), np.ones((1, 3, 4), bool))


def test_var_and_std_methods_of_traced_arrays():
    # The tracer's own slots must not hide the array methods (a slot named `var` did: TypeError under jit).
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 1.5
    got = cranax.jit(lambda a: (a.var(axis=-1), a.std(axis=0, ddof=1), a.var()))(x)
    want = (x.var(axis=-1), x.std(axis=0, ddof=1), x.var())
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6)
    np.testing.assert_allclose(np.asarray(cranax.grad(lambda a: a.var())(x)), 2 * (x - x.mean()) / x.size, rtol=1e-5)


def test_reductions_empty_and_methods():
    e = jnp.zeros((0, 3))
    check(jnp.sum(e, axis=0), np.zeros(3, np.float32))
    check(jnp.prod(e, axis=0), np.ones(3, np.float32))
    check(jnp.sum(e), 0.0, np.float32)
    with pytest.raises(ValueError):
        jnp.max(e)
    with pytest.raises(ValueError):
        jnp.min(e, axis=0)
    assert np.isnan(float(jnp.mean(e)))
    x = jnp.arange(6.0).reshape(2, 3)
    check(x.sum(axis=1), [3.0, 12.0], np.float32)
    check(x.mean(), 2.5, np.float32)
    check(x.max(axis=0), [3.0, 4.0, 5.0], np.float32)
    check(x.min(keepdims=True), [[0.0]], np.float32)
    check(x.prod(axis=1), [0.0, 60.0], np.float32)
    check(x.argmax(), 5, np.int32)
    check(x.argmin(axis=1), [0, 0], np.int32)
    with pytest.raises(ValueError):
        jnp.sum(x, axis=2)


# ----------------------------------------------------------------------------------------------- elementwise math

@pytest.mark.parametrize("mode", MODES)
def test_elementwise_math(mode):
    x = np.array([0.25, 1.0, 2.5, 9.0, 100.0], np.float32)
    for name in ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "arctan", "log1p", "expm1", "sinh", "cosh",
                 "cbrt", "exp2", "log2", "log10", "arcsinh"]:
        if not hasattr(jnp, name):
            continue
        fn = getattr(jnp, name)
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
        check(run(mode, fn, x), expected, rtol=5e-7, atol=0)
    n = np.array([-2.5, -0.0, 3.0], np.float32)
    check(run(mode, jnp.abs, n), np.abs(n))
    check(run(mode, jnp.square, n), np.square(n))
    check(run(mode, jnp.negative, n), -n)
    check(run(mode, jnp.sign, n), np.sign(n))
    check(run(mode, jnp.square, np.array([3, -4], np.int32)), [9, 16], np.int32)
    check(run(mode, jnp.abs, np.array([3, -4], np.int32)), [3, 4], np.int32)
    check(run(mode, lambda v: jnp.clip(v, 0, 2), n), np.clip(n, 0, 2))
    check(run(mode, lambda v: jnp.clip(v, min=-1), n), np.clip(n, -1, None))
    check(run(mode, lambda v: jnp.clip(v, max=1), np.array([-5, 5], np.int32)), [-5, 1], np.int32)
    check(run(mode, jnp.maximum, n, np.float32(0.0)), np.maximum(n, 0.0))
    check(run(mode, jnp.minimum, n, np.float32(0.0)), np.minimum(n, 0.0))


# ----------------------------------------------------------------------------------------------- shapes

@pytest.mark.parametrize("mode", MODES)
def test_shape_functions(mode):
    x = rand(np.float32, (2, 3, 4))
    check(run(mode, lambda v: jnp.reshape(v, (6, 4)), x), x.reshape(6, 4))
    check(run(mode, lambda v: v.reshape((4, -1)), x), x.reshape(4, -1))
    check(run(mode, lambda v: v.reshape(-1), x), x.reshape(-1))
    check(run(mode, jnp.transpose, x), x.T)
    check(run(mode, lambda v: v.T, x), x.T)
    check(run(mode, lambda v: jnp.transpose(v, (1, 0, 2)), x), x.transpose(1, 0, 2))
    check(run(mode, lambda v: v.transpose(2, 0, 1), x), x.transpose(2, 0, 1))
    check(run(mode, lambda v: jnp.broadcast_to(v, (5, 2, 3, 4)), x), np.broadcast_to(x, (5, 2, 3, 4)))
    check(run(mode, lambda v: jnp.broadcast_to(v[:, :1], (2, 7, 4)), x), np.broadcast_to(x[:, :1], (2, 7, 4)))
    check(run(mode, lambda v: jnp.expand_dims(v, 1), x), np.expand_dims(x, 1))
    check(run(mode, lambda v: jnp.squeeze(jnp.expand_dims(v, 0)), x), x)
    check(run(mode, lambda v: v.astype(jnp.int32), x), x.astype(np.int32))
    check(run(mode, lambda v: jnp.astype(v, jnp.bool_), x), x.astype(bool))
    check(run(mode, lambda v: v.astype(jnp.uint32), np.abs(x)), np.abs(x).astype(np.uint32))
    s = np.float32(3.0)
    check(run(mode, lambda v: jnp.broadcast_to(v, (2, 2)), s), np.full((2, 2), 3.0, np.float32))
    with pytest.raises(ValueError):
        jnp.broadcast_to(jnp.ones(3), (4,))


def test_array_attributes():
    x = jnp.zeros((2, 3, 4), jnp.int32)
    assert x.shape == (2, 3, 4)
    assert x.dtype == np.int32
    assert x.ndim == 3
    assert x.size == 24
    assert len(x) == 2
    s = jnp.array(1.0)
    assert s.shape == () and s.ndim == 0 and s.size == 1
    e = jnp.zeros((3, 0))
    assert e.size == 0 and e.shape == (3, 0)
    assert jnp.shape(x) == (2, 3, 4) and jnp.ndim(x) == 3 and jnp.size(x) == 24


# ----------------------------------------------------------------------------------------------- indexing

INDICES = [1, -1, 0, slice(1, 3), slice(None, None, -1), slice(None, None, -2), slice(5, 1, -1), slice(-2, None),
           slice(None, 100), slice(100, None), None, Ellipsis, (Ellipsis, 0), (1, Ellipsis, None),
           (slice(None), slice(None, None, -2), slice(1, None)), (0, 0, 0), (), (-1, slice(None), -2),
           (None, 1, None, slice(0, 2)), (slice(None), None, 2), (Ellipsis, None, 1), (slice(3, 0, -2), 1),
           (slice(None, None, 3), Ellipsis, slice(None, None, -1))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_static_indexing(idx, mode):
    x = np.arange(4 * 3 * 5, dtype=np.float32).reshape(4, 3, 5)
    check(run(mode, lambda v: v[idx], x), x[idx])


@pytest.mark.parametrize("mode", MODES)
def test_static_indexing_other_dtypes_and_shapes(mode):
    b = rand(np.bool_, (6,))
    check(run(mode, lambda v: v[::-2], b), b[::-2])
    u = np.arange(10, dtype=np.uint32)
    check(run(mode, lambda v: v[2:9:3], u), u[2:9:3])
    z = np.zeros((0, 3), np.int32)
    check(run(mode, lambda v: v[:, 1], z), z[:, 1])
    s = np.array(5, np.int32)
    check(run(mode, lambda v: v[()], s), s[()])
    check(run(mode, lambda v: v[None], s), s[None])
    check(run(mode, lambda v: v[...], s), s[...])


def test_indexing_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(TypeError):
        x[0] = 1.0


# ----------------------------------------------------------------------------------------------- operators

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_operators(dtype, mode):
    x = rand(dtype, (3, 4))
    y = rand(dtype, (4,), seed=4)
    y = np.where(y == 0, 3, y).astype(dtype)
    ops = {
        "add": (operator.add, np.add), "sub": (operator.sub, np.subtract), "mul": (operator.mul, np.multiply),
        "floordiv": (operator.floordiv, np.floor_divide), "mod": (operator.mod, np.remainder),
        "lt": (operator.lt, np.less), "le": (operator.le, np.less_equal), "gt": (operator.gt, np.greater),
        "ge": (operator.ge, np.greater_equal), "eq": (operator.eq, np.equal), "ne": (operator.ne, np.not_equal),
    }
    for name, (op, ref) in ops.items():
        with np.errstate(all="ignore"):
            expected = ref(x, y) if dtype == "int32" or name in ("lt", "le", "gt", "ge", "eq", "ne", "add", "sub", "mul") \
                else ref(x.astype(np.float64), y).astype(np.float32)
        out = run(mode, op, x, y)
        if dtype == "float32" and name in ("floordiv", "mod"):
            check(out, expected, rtol=1e-5, atol=1e-5)
        else:
            check(out, expected)
    check(run(mode, operator.truediv, x, y), (x.astype(np.float64) / y).astype(np.float32), rtol=1e-6)
    check(run(mode, operator.neg, x), -x)
    check(run(mode, abs, x), np.abs(x))
    check(run(mode, lambda v: 2 - v, x), 2 - x)
    check(run(mode, lambda v: 3 * v, x), 3 * x)
    check(run(mode, lambda v: v ** 2, x), x ** 2)
    check(run(mode, lambda v: 10 // v, y), np.floor_divide(np.asarray(10, dtype), y) if dtype == "int32"
          else np.floor_divide(10.0, y.astype(np.float64)).astype(np.float32))
    check(run(mode, lambda v: 7 % v, y), np.remainder(np.asarray(7, dtype), y) if dtype == "int32"
          else np.remainder(7.0, y.astype(np.float64)).astype(np.float32), rtol=1e-6, atol=1e-6)
    check(run(mode, lambda v: 1 / v, y), (1.0 / y.astype(np.float64)).astype(np.float32), rtol=1e-6)
    check(run(mode, lambda v: v == 1, x), x == 1)
    check(run(mode, lambda v: 0 < v, x), 0 < x)


@pytest.mark.parametrize("mode", MODES)
def test_bitwise_operators(mode):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    check(run(mode, operator.and_, a, b), a & b)
    check(run(mode, operator.or_, a, b), a | b)
    check(run(mode, operator.xor, a, b), a ^ b)
    check(run(mode, operator.invert, a), ~a)
    check(run(mode, operator.invert, np.array([1, 2], np.int32)), [-2, -3], np.int32)  # recorded
    check(run(mode, lambda v: v & 3, np.array([1, 2, 3], np.int32)), [1, 2, 3], np.int32)  # recorded
    check(run(mode, jnp.logical_and, a, b), a & b)
    check(run(mode, jnp.logical_or, a, b), a | b)
    check(run(mode, jnp.logical_not, a), ~a)
    check(run(mode, jnp.logical_xor, a, b), a ^ b)
    check(run(mode, lambda v: v << 2, np.array([1, -3], np.int32)), [4, -12], np.int32)
    check(run(mode, lambda v: v >> 1, np.array([8, -3], np.int32)), [4, -2], np.int32)


# ----------------------------------------------------------------------------------------------- conversions

def test_asarray_waits_and_copies_out():
    x = jnp.arange(6.0).reshape(2, 3) * 2 + 1
    a = np.asarray(x)
    assert type(a) is np.ndarray and a.dtype == np.float32
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3) * 2 + 1)
    np.testing.assert_array_equal(np.array(jnp.array([True, False])), [True, False])
    assert np.asarray(jnp.arange(3, dtype=jnp.uint32)).dtype == np.uint32
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert x.tolist() == [[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]]
    assert jnp.array(3).item() == 3


def test_scalar_conversions():
    assert float(jnp.array(2.5)) == 2.5
    assert float(jnp.sum(jnp.arange(4.0))) == 6.0
    assert int(jnp.array(7)) == 7
    assert int(jnp.array(-2.9)) == -2
    assert bool(jnp.array(0.0)) is False
    assert bool(jnp.array(3)) is True
    assert bool(jnp.ones(3).sum() > 2) is True
    assert operator.index(jnp.array(3)) == 3
    assert [10, 11, 12, 13][jnp.array(2)] == 12
    assert list(range(5))[jnp.array(1):jnp.array(3)] == [1, 2]
    assert operator.index(jnp.array(4, dtype=jnp.uint32)) == 4
    with pytest.raises(TypeError):
        operator.index(jnp.array(3.0))
    with pytest.raises(TypeError):
        float(jnp.ones(3))
    with pytest.raises(TypeError):
        int(jnp.ones(2))
    with pytest.raises(ValueError):
        bool(jnp.ones(3))
    assert f"{jnp.array(2.5):.2f}" == "2.50"


# ----------------------------------------------------------------------------------------------- repr

def test_repr_seed_and_simple():
    assert repr(jnp.array([1.0, 2.0])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.array(30)) == "Array(30, dtype=int32, weak_type=True)"
    assert repr(jnp.array(3.0)) == "Array(3., dtype=float32, weak_type=True)"
    assert repr(jnp.array(3.0, dtype=jnp.float32)) == "Array(3., dtype=float32)"
    assert repr(jnp.array([True, False])) == "Array([ True, False], dtype=bool)"
    assert repr(jnp.arange(3, dtype=jnp.uint32)) == "Array([0, 1, 2], dtype=uint32)"
    assert repr(jnp.array([np.nan, np.inf, -np.inf])) == "Array([ nan,  inf, -inf], dtype=float32)"
    assert repr(jnp.arange(4.0).reshape(2, 2)) == "Array([[0., 1.],\n       [2., 3.]], dtype=float32)"
    assert repr(jnp.sum(jnp.arange(3))) == "Array(3, dtype=int32)"
    assert str(jnp.array([1.0, 2.0])) == "[1. 2.]"


def test_repr_seed_loop_body_weak():
    # The seed's g_inner_jitted(10, 20) prints Array(30, dtype=int32, weak_type=True)
    @cranax.jit
    def loop_body(prev_i):
        return prev_i + 1

    def g_inner_jitted(x, n):
        i = 0
        while i < n:
            i = loop_body(i)
        return x + i

    assert repr(g_inner_jitted(10, 20)) == "Array(30, dtype=int32, weak_type=True)"


def test_repr_empty():
    # JAX: `if self.size == 0: s = f"[], shape={self.shape}"`
    assert repr(jnp.zeros(0)) == "Array([], shape=(0,), dtype=float32)"
    assert repr(jnp.zeros((2, 0), jnp.int32)) == "Array([], shape=(2, 0), dtype=int32)"


def test_repr_long_wraps_like_jax():
    # JAX formats with np.array2string(prefix='Array(', suffix=',') and then appends the dtype
    assert repr(jnp.arange(30.0)) == (
        "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n"
        "       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n"
        "       26., 27., 28., 29.], dtype=float32)")
    assert repr(jnp.arange(20, dtype=jnp.int32) * 1000) == (
        "Array([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,\n"
        "        9000, 10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000,\n"
        "       18000, 19000], dtype=int32)")


def test_repr_x64():
    config.update("jax_enable_x64", True)
    assert repr(jnp.array([1.0, 2.0])) == "Array([1., 2.], dtype=float64)"
    assert repr(jnp.array(5)) == "Array(5, dtype=int64, weak_type=True)"


# ----------------------------------------------------------------------------------------------- runtime API

def test_block_until_ready():
    x = jnp.arange(1000.0)
    y = jnp.sin(x) * 2.0
    assert y.block_until_ready() is y
    np.testing.assert_allclose(np.asarray(y), np.sin(np.arange(1000.0)).astype(np.float32) * 2, rtol=1e-6,
                               atol=1e-6)
    a = jnp.arange(3.0)
    assert a.block_until_ready() is a
    tree = {"x": a * 2.0, "y": (a,), "z": None, "w": 3}
    out = cranax.block_until_ready(tree)
    assert out is tree
    check(out["x"], [0.0, 2.0, 4.0], np.float32)
    check(out["y"][0], [0.0, 1.0, 2.0], np.float32)
    assert cranax.block_until_ready(5) == 5


def test_devices():
    devs = cranax.devices()
    assert isinstance(devs, list) and len(devs) >= 1
    d = devs[0]
    assert d.platform == "cpu"
    assert "cpu" in repr(d).lower()
    assert cranax.device_count() == len(devs)
    assert cranax.default_backend() == "cpu"
    x = jnp.ones(3)
    assert x.devices() == {d}
    assert cranax.devices("cpu")[0] == d


def test_device_put():
    a = cranax.device_put(np.arange(4, dtype=np.float32))
    check(a, np.arange(4, dtype=np.float32), weak=False)
    b = cranax.device_put(np.arange(3, dtype=np.int64))  # x64 off: canonicalized
    check(b, [0, 1, 2], np.int32)
    c = cranax.device_put(np.float64(2.5))
    check(c, 2.5, np.float32)
    i = cranax.device_put(3)
    check(i, 3, np.int32)
    f = cranax.device_put(1.5)
    check(f, 1.5, np.float32)
    t = cranax.device_put(True)
    check(t, True, np.bool_)
    # recorded: device_put over pytrees (a list is a pytree of scalars)
    lst = cranax.device_put([1.0, 2.0])
    assert isinstance(lst, list) and len(lst) == 2
    check(lst[0], 1.0, np.float32)
    check(lst[1], 2.0, np.float32)
    tree = cranax.device_put({"a": 1, "b": (2.0, [3])})
    check(tree["a"], 1, np.int32)
    check(tree["b"][0], 2.0, np.float32)
    check(tree["b"][1][0], 3, np.int32)
    on_dev = cranax.device_put(jnp.ones(2), cranax.devices()[0])
    check(on_dev, [1.0, 1.0], np.float32)
    check(cranax.device_put(jnp.arange(3)).block_until_ready(), [0, 1, 2], np.int32)
    u = cranax.device_put(np.array([1, 2], np.uint32))
    check(u, [1, 2], np.uint32)
    m = cranax.device_put(np.array([[True, False]]))
    check(m, [[True, False]], np.bool_)
    # the device copy is independent of the host array
    h = np.arange(3, dtype=np.float32)
    d = cranax.device_put(h)
    h[0] = 99.0
    check(d, [0.0, 1.0, 2.0], np.float32)


def test_device_put_x64():
    config.update("jax_enable_x64", True)
    check(cranax.device_put(np.arange(3, dtype=np.int64)), [0, 1, 2], np.int64)
    check(cranax.device_put(np.array([0.1], np.float64)), [0.1], np.float64)
    check(cranax.device_put(0.1), 0.1, np.float64)
