"""Tests for cranax.dtypes: canonicalization, weak types and JAX's type-promotion table.

The expected promotion results are hard-coded from the binary promotion table in JAX's
docs/type_promotion.rst, restricted to the dtypes cranax supports (b1, u1, u2, u4, i1, i2, i4, i8, f4, f8)
and the weak nodes i* (Python int) and f* (Python float).
"""
import importlib.util
import os
import sys
import warnings

import numpy as np
import pytest

if importlib.util.find_spec("cranax") is None:  # run from a checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

from cranax import dtypes  # noqa: E402
from cranax.config import config  # noqa: E402


@pytest.fixture
def x64():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        config.update("jax_enable_x64", old)


@pytest.fixture
def x32():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", False)
    try:
        yield
    finally:
        config.update("jax_enable_x64", old)


# JAX's table (docs/type_promotion.rst), rows/columns in this order; "i*"/"f*" are weak results.
NAMES = ["b1", "u1", "u2", "u4", "i1", "i2", "i4", "i8", "f4", "f8", "i*", "f*"]
JAX_TABLE = {
    "b1": ["b1", "u1", "u2", "u4", "i1", "i2", "i4", "i8", "f4", "f8", "i*", "f*"],
    "u1": ["u1", "u1", "u2", "u4", "i2", "i2", "i4", "i8", "f4", "f8", "u1", "f*"],
    "u2": ["u2", "u2", "u2", "u4", "i4", "i4", "i4", "i8", "f4", "f8", "u2", "f*"],
    "u4": ["u4", "u4", "u4", "u4", "i8", "i8", "i8", "i8", "f4", "f8", "u4", "f*"],
    "i1": ["i1", "i2", "i4", "i8", "i1", "i2", "i4", "i8", "f4", "f8", "i1", "f*"],
    "i2": ["i2", "i2", "i4", "i8", "i2", "i2", "i4", "i8", "f4", "f8", "i2", "f*"],
    "i4": ["i4", "i4", "i4", "i8", "i4", "i4", "i4", "i8", "f4", "f8", "i4", "f*"],
    "i8": ["i8", "i8", "i8", "i8", "i8", "i8", "i8", "i8", "f4", "f8", "i8", "f*"],
    "f4": ["f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f4", "f8", "f4", "f4"],
    "f8": ["f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8", "f8"],
    "i*": ["i*", "u1", "u2", "u4", "i1", "i2", "i4", "i8", "f4", "f8", "i*", "f*"],
    "f*": ["f*", "f*", "f*", "f*", "f*", "f*", "f*", "f*", "f4", "f8", "f*", "f*"],
}
PAIRS = [(a, b, JAX_TABLE[a][j]) for a in NAMES for j, b in enumerate(NAMES)]

STRONG = {"b1": np.bool_, "u1": np.uint8, "u2": np.uint16, "i1": np.int8, "i2": np.int16,
          "u4": np.uint32, "i4": np.int32, "i8": np.int64,
          "f4": np.float32, "f8": np.float64}
PY_SCALAR = {"i*": 3, "f*": 2.5}

# Expected (dtype, weak) of a table entry, with x64 off / on.
EXPECT_X32 = {"b1": (np.bool_, False), "u1": (np.uint8, False), "u2": (np.uint16, False),
              "i1": (np.int8, False), "i2": (np.int16, False), "u4": (np.uint32, False), "i4": (np.int32, False),
              "i8": (np.int32, False), "f4": (np.float32, False), "f8": (np.float32, False),
              "i*": (np.int32, True), "f*": (np.float32, True)}
EXPECT_X64 = {"b1": (np.bool_, False), "u1": (np.uint8, False), "u2": (np.uint16, False),
              "i1": (np.int8, False), "i2": (np.int16, False), "u4": (np.uint32, False), "i4": (np.int32, False),
              "i8": (np.int64, False), "f4": (np.float32, False), "f8": (np.float64, False),
              "i*": (np.int64, True), "f*": (np.float64, True)}


def value_of(name):
    """A value of the given lattice node: a NumPy array for strong dtypes, a Python scalar for weak."""
    if name in PY_SCALAR:
        return PY_SCALAR[name]
    return np.zeros((2,), STRONG[name])


class FakeAval:
    def __init__(self, dtype, weak_type=False):
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.shape = ()


class FakeTracer:
    """Stands in for a tracer / cranax array: has ``.aval``."""

    def __init__(self, dtype, weak_type=False):
        self.aval = FakeAval(dtype, weak_type)


def tracer_of(name, x64_on):
    """The same node as a tracer (weak nodes: a weak-typed tracer of the default dtype)."""
    if name == "i*":
        return FakeTracer(np.int64 if x64_on else np.int32, True)
    if name == "f*":
        return FakeTracer(np.float64 if x64_on else np.float32, True)
    return FakeTracer(STRONG[name])


@pytest.mark.parametrize("a,b,expected", PAIRS, ids=[f"{a}+{b}" for a, b, _ in PAIRS])
def test_promotion_table_x32(x32, a, b, expected):
    dt, weak = EXPECT_X32[expected]
    got = dtypes.result_type(value_of(a), value_of(b), return_weak_type_flag=True)
    assert got == (np.dtype(dt), weak)
    assert dtypes.result_type(value_of(a), value_of(b)) == np.dtype(dt)
    # tracers (values seen during tracing) promote identically
    assert dtypes.result_type(tracer_of(a, False), tracer_of(b, False),
                              return_weak_type_flag=True) == (np.dtype(dt), weak)


@pytest.mark.parametrize("a,b,expected", PAIRS, ids=[f"{a}+{b}" for a, b, _ in PAIRS])
def test_promotion_table_x64(x64, a, b, expected):
    dt, weak = EXPECT_X64[expected]
    got = dtypes.result_type(value_of(a), value_of(b), return_weak_type_flag=True)
    assert got == (np.dtype(dt), weak)
    assert dtypes.result_type(tracer_of(a, True), tracer_of(b, True),
                              return_weak_type_flag=True) == (np.dtype(dt), weak)


@pytest.mark.parametrize("a,b,expected", PAIRS, ids=[f"{a}+{b}" for a, b, _ in PAIRS])
def test_promote_types_table(x32, a, b, expected):
    # jnp.promote_types: Python int/float types are the weak nodes; the result is not canonicalized.
    spec = {"i*": int, "f*": float, **STRONG}
    want = {"i*": np.int64, "f*": np.float64, **STRONG}[expected]
    assert dtypes.promote_types(spec[a], spec[b]) == np.dtype(want)


def test_promotion_is_symmetric_and_associative():
    vals = [value_of(n) for n in NAMES]
    for a in vals:
        for b in vals:
            assert dtypes.result_type(a, b, return_weak_type_flag=True) == \
                dtypes.result_type(b, a, return_weak_type_flag=True)
            for c in vals:
                assert dtypes.result_type(a, b, c) == dtypes.result_type(c, b, a)


def test_brief_examples(x32):
    i32 = np.zeros(3, np.int32)
    u32 = np.zeros(3, np.uint32)
    f32 = np.zeros(3, np.float32)
    b = np.zeros(3, np.bool_)
    r = dtypes.result_type
    assert r(i32, 1, return_weak_type_flag=True) == (np.dtype(np.int32), False)
    assert r(u32, 1, return_weak_type_flag=True) == (np.dtype(np.uint32), False)
    assert r(i32, 1.5, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    assert r(f32, 1, return_weak_type_flag=True) == (np.dtype(np.float32), False)
    assert r(b, True, return_weak_type_flag=True) == (np.dtype(np.bool_), False)
    assert r(i32, u32) == np.dtype(np.int32)          # joins at i64, canonicalized
    assert r(1, 2.0, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    assert r(True, 1, return_weak_type_flag=True) == (np.dtype(np.int32), True)


def test_result_type_single_and_many_args(x32):
    r = dtypes.result_type
    assert r(1, return_weak_type_flag=True) == (np.dtype(np.int32), True)
    assert r(1.0, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    assert r(True, return_weak_type_flag=True) == (np.dtype(np.bool_), False)
    assert r(np.float64) == np.dtype(np.float32)
    assert r(np.ones(2), return_weak_type_flag=True) == (np.dtype(np.float32), False)
    assert r(FakeTracer(np.float32, True), return_weak_type_flag=True) == \
        (np.dtype(np.float32), True)
    assert r(np.int32, np.uint32, 1.0, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    assert r(np.int32, 1, 2, 3) == np.dtype(np.int32)
    # dtype specifiers: the types int/float are weak (as in JAX), np types and names are not
    assert r(np.int32, int) == np.dtype(np.int32)
    assert r(np.uint32, float, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    assert r("float32", "int32") == np.dtype(np.float32)
    assert r(np.dtype("uint32"), np.dtype("int32")) == np.dtype(np.int32)
    assert r(None) == np.dtype(np.float32)
    with pytest.raises(ValueError):
        r()


def test_result_type_x64_single(x64):
    r = dtypes.result_type
    assert r(1, return_weak_type_flag=True) == (np.dtype(np.int64), True)
    assert r(np.ones(2)) == np.dtype(np.float64)
    assert r(np.int32, np.uint32) == np.dtype(np.int64)
    assert r(np.zeros(2, np.int32), 1.5, return_weak_type_flag=True) == (np.dtype(np.float64), True)


def test_result_type_rejects_unsupported():
    # complex is supported (tests/test_complex.py): a Python complex is weak
    assert dtypes.result_type(np.zeros(2, np.float32), 1j) == np.complex64
    assert dtypes.result_type(np.complex64, np.float32) == np.complex64
    with pytest.raises(TypeError, match="uint64"):
        dtypes.result_type(np.zeros(2, np.uint64), 1)
    with pytest.raises(TypeError, match="uint64"):
        dtypes.result_type(FakeTracer(np.uint64), 1.0)


def test_canonicalize_dtype_x32(x32):
    c = dtypes.canonicalize_dtype
    assert c(np.float32) == np.dtype(np.float32)
    assert c(np.float64) == np.dtype(np.float32)
    assert c(np.int64) == np.dtype(np.int32)
    assert c("int64") == np.dtype(np.int32)
    assert c(np.dtype("uint32")) == np.dtype(np.uint32)
    assert c(float) == np.dtype(np.float32)
    assert c(int) == np.dtype(np.int32)
    assert c(bool) == np.dtype(np.bool_)
    assert c(np.bool_) == np.dtype(np.bool_)
    for x in (np.float32, np.int64, float, "bool"):
        assert isinstance(c(x), np.dtype)


def test_canonicalize_dtype_x64(x64):
    c = dtypes.canonicalize_dtype
    assert c(np.float64) == np.dtype(np.float64)
    assert c(np.int64) == np.dtype(np.int64)
    assert c(float) == np.dtype(np.float64)
    assert c(int) == np.dtype(np.int64)
    assert c(np.float32) == np.dtype(np.float32)


def test_x64_toggle_is_seen_immediately():
    old = config.jax_enable_x64
    try:
        config.update("jax_enable_x64", True)
        assert dtypes.canonicalize_dtype(np.float64) == np.dtype(np.float64)
        assert dtypes.result_type(1.0) == np.dtype(np.float64)
        config.update("jax_enable_x64", False)
        assert dtypes.canonicalize_dtype(np.float64) == np.dtype(np.float32)
        assert dtypes.result_type(1.0) == np.dtype(np.float32)
    finally:
        config.update("jax_enable_x64", old)


@pytest.mark.parametrize("bad,name", [
    (object, "object"), (np.object_, "object"), (str, "str"),
    (np.uint64, "uint64"), ("S3", "bytes24"),
])
def test_unsupported_dtypes_raise_type_error(bad, name):
    with pytest.raises(TypeError, match=f"cranax does not support dtype {name}"):
        dtypes.canonicalize_dtype(bad)
    with pytest.raises(TypeError, match="cranax does not support dtype"):
        dtypes.check_user_dtype_supported(bad, "zeros")


def test_dtype_of_values(x32):
    d = dtypes.dtype
    assert d(True) == np.dtype(np.bool_)
    assert d(1) == np.dtype(np.int32)
    assert d(1.0) == np.dtype(np.float32)
    assert d(np.float64(1.0)) == np.dtype(np.float64)
    assert d(np.float64(1.0), canonicalize=True) == np.dtype(np.float32)
    assert d(np.ones(2, np.int64), canonicalize=True) == np.dtype(np.int32)
    assert d(np.ones(2, np.uint32)) == np.dtype(np.uint32)
    assert d(FakeTracer(np.float32, True)) == np.dtype(np.float32)
    assert d(np.float32) == np.dtype(np.float32)
    assert d("int32") == np.dtype(np.int32)
    assert d(float) == np.dtype(np.float64)
    assert d(float, canonicalize=True) == np.dtype(np.float32)

    class HasDtype:
        dtype = np.dtype(np.uint32)

    assert d(HasDtype()) == np.dtype(np.uint32)
    assert d(1j) == np.dtype(np.complex64)
    assert d(np.ones(2, np.complex64)) == np.dtype(np.complex64)
    with pytest.raises(TypeError):
        d(object())


def test_dtype_of_python_scalars_x64(x64):
    assert dtypes.dtype(1) == np.dtype(np.int64)
    assert dtypes.dtype(1.0) == np.dtype(np.float64)
    assert dtypes.dtype(True) == np.dtype(np.bool_)


def test_is_weakly_typed():
    w = dtypes.is_weakly_typed
    assert w(1) and w(1.5)
    assert not w(True)
    assert not w(np.float32(1)) and not w(np.ones(2)) and not w(np.int64(3))
    assert w(FakeTracer(np.float32, True))
    assert not w(FakeTracer(np.float32, False))

    class WeakThing:
        weak_type = True
        dtype = np.dtype(np.float32)

    assert w(WeakThing())
    assert not w("str") and not w(None)


def test_short_names():
    pairs = [(np.float32, "f32"), (np.int32, "i32"), (np.uint32, "u32"), (np.int64, "i64"),
             (np.float64, "f64"), (np.bool_, "bool"), (np.int8, "i8"), (np.uint8, "u8"),
             (np.int16, "i16"), (np.uint16, "u16")]
    for dt, s in pairs:
        assert dtypes.short_name(np.dtype(dt)) == s
        assert dtypes.short_name(dt) == s
        assert dtypes.from_short_name(s) == np.dtype(dt)
    assert dtypes.short_name(np.complex64) == "c64" and dtypes.from_short_name("c128") == np.complex128
    with pytest.raises(ValueError):
        dtypes.from_short_name("u64")
    with pytest.raises(TypeError):
        dtypes.short_name(np.uint64)


def test_names_and_defaults(x32):
    assert dtypes.bool_ is np.bool_ and dtypes.int32 is np.int32 and dtypes.uint32 is np.uint32
    assert dtypes.int64 is np.int64 and dtypes.float32 is np.float32 and dtypes.float64 is np.float64
    assert dtypes.canonicalize_dtype(dtypes.float_) == np.dtype(np.float32)
    assert dtypes.canonicalize_dtype(dtypes.int_) == np.dtype(np.int32)
    assert dtypes.default_float_dtype() == np.dtype(np.float32)
    assert dtypes.default_int_dtype() == np.dtype(np.int32)


def test_issubdtype_finfo_iinfo_scalar_type_of():
    assert dtypes.issubdtype(np.float32, np.floating)
    assert dtypes.issubdtype(np.dtype("int32"), np.integer)
    assert dtypes.issubdtype(np.uint32, np.unsignedinteger)
    assert not dtypes.issubdtype(np.int32, np.floating)
    assert dtypes.issubdtype(np.float32, float)
    assert dtypes.issubdtype(np.int32, int)
    assert not dtypes.issubdtype(np.float32, int)
    assert dtypes.issubdtype(np.bool_, bool)
    assert dtypes.issubdtype(FakeTracer(np.float32), np.inexact)
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dtypes.finfo(FakeTracer(np.float64)).bits == 64
    assert dtypes.iinfo(np.int32).max == 2 ** 31 - 1
    assert dtypes.iinfo(np.zeros(2, np.uint32)).max == 2 ** 32 - 1
    assert dtypes.scalar_type_of(np.float32(1)) is float
    assert dtypes.scalar_type_of(np.zeros(2, np.uint32)) is int
    assert dtypes.scalar_type_of(True) is bool
    assert dtypes.scalar_type_of(FakeTracer(np.int32)) is int


def test_check_user_dtype_supported(x32):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dtypes.check_user_dtype_supported(None, "zeros")
        dtypes.check_user_dtype_supported(np.float32, "zeros")
        dtypes.check_user_dtype_supported(float, "zeros")
        dtypes.check_user_dtype_supported(int, "zeros")
    with pytest.warns(UserWarning, match="float64 in zeros is not available"):
        dtypes.check_user_dtype_supported(np.float64, "zeros")


def test_check_user_dtype_supported_x64_no_warning(x64):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dtypes.check_user_dtype_supported(np.float64, "zeros")
        dtypes.check_user_dtype_supported("int64", "zeros")


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16])
def test_small_ints_canonicalize_to_themselves(dt):
    for flag in (False, True):
        old = config.jax_enable_x64
        config.update("jax_enable_x64", flag)
        try:
            assert dtypes.canonicalize_dtype(dt) == np.dtype(dt)
            assert dtypes.dtype(np.zeros(2, dt)) == np.dtype(dt)
            # a weak small int promotes like any weak int: the default int (uint32 for unsigned alone)
            want = np.uint32 if np.dtype(dt).kind == "u" else (np.int64 if flag else np.int32)
            assert dtypes.result_type(FakeTracer(dt, True), return_weak_type_flag=True) == (np.dtype(want), True)
            assert dtypes.result_type(FakeTracer(dt, True), np.int8) == np.dtype(np.int8)
        finally:
            config.update("jax_enable_x64", old)


def test_jnp_full_of_a_python_scalar_is_weakly_typed():
    # jax.typeof(jnp.full((2,), v)) recorded from JAX 0.10.2: weak for Python int/float/complex, not for
    # bool or NumPy scalars; so jnp.where(c, jnp.full(s, jnp.nan), x_bf16) stays bfloat16 (optax's
    # schedule_free relies on it).
    import cranax
    import cranax.numpy as jnp
    want = [(1.0, "~float32[2]"), (3, "~int32[2]"), (1j, "~complex64[2]"), (True, "bool[2]"),
            (np.float64(1), "float32[2]"), (np.int64(2), "int32[2]"), (np.float32(2), "float32[2]")]
    for v, t in want:
        assert str(cranax.typeof(jnp.full((2,), v))) == t, (v, t)
    x = jnp.array([1.0, 2.0], jnp.bfloat16)
    f = lambda c, x: jnp.where(c, jnp.full(x.shape, jnp.nan), x)
    assert f(True, x).dtype == jnp.bfloat16 and cranax.jit(f)(True, x).dtype == jnp.bfloat16
    assert str(cranax.typeof(jnp.full((2,), 1.0, jnp.float32))) == "float32[2]"
