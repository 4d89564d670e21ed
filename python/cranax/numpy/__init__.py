"""``cranax.numpy``: NumPy's API built from cranax primitives. Mirrors ``jax.numpy``.

Binary functions promote dtypes with JAX's lattice (Python scalars are weakly typed) and broadcast with
NumPy's rules; incompatible shapes raise ``TypeError: add got incompatible shapes for broadcasting:
(3,), (4,).``. Default dtypes are float32/int32 (64-bit under ``jax_enable_x64``).
"""
import builtins
import math as _math

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..array import Array, _from_host
from ..core import Tracer, TypedScalar, get_aval, typed_scalar
from ..primitives import structural as _st
from ._indexing import getitem as _getitem

# dtypes and constants (the canonical ones; 64-bit names exist and canonicalize)
class _ScalarMeta(type):
    """``jnp.float32`` & co.: usable as a dtype (``np.dtype(jnp.float32)``) and, called, make a strongly
    typed array (``jnp.float32(2.0)`` is ``Array(2., dtype=float32)``), as in JAX."""

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __call__(cls, x):
        return array(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'cranax.numpy.{cls.__name__}'>"


def _scalar_type(t):
    return _ScalarMeta(t.__name__, (object,), {"dtype": _np.dtype(t)})


bool_ = _scalar_type(_np.bool_)
int32 = _scalar_type(_np.int32)
uint32 = _scalar_type(_np.uint32)
int64 = _scalar_type(_np.int64)
float32 = _scalar_type(_np.float32)
float64 = _scalar_type(_np.float64)
int8 = _scalar_type(_np.int8)
uint8 = _scalar_type(_np.uint8)
int16 = _scalar_type(_np.int16)
uint16 = _scalar_type(_np.uint16)
float16 = _scalar_type(_np.float16)
uint64 = _np.uint64
complex64, complex128 = _np.complex64, _np.complex128
dtype = _np.dtype
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None
ndarray = Array
integer = _np.integer
floating = _np.floating
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
inexact = _np.inexact
number = _np.number
generic = _np.generic
finfo = _np.finfo
iinfo = _np.iinfo


def issubdtype(arg1, arg2):
    return _dtypes.issubdtype(arg1, arg2)


def result_type(*args):
    """The dtype of combining ``args`` under JAX's promotion rules. Mirrors ``jax.numpy.result_type``."""
    return _dtypes.result_type(*args)


def promote_types(a, b):
    return _dtypes.promote_types(a, b)


def isscalar(x):
    return _np.isscalar(x) or (isinstance(x, (Array, Tracer)) and x.ndim == 0)


def _is_array(x):
    return isinstance(x, (Array, Tracer))


# ------------------------------------------------------------------------------------ array creation

def _contains_traced(x):
    if isinstance(x, (list, tuple)):
        return builtins.any(_contains_traced(v) for v in x)
    return _is_array(x)


def _contains_tracer(x):
    if isinstance(x, (list, tuple)):
        return builtins.any(_contains_tracer(v) for v in x)
    return isinstance(x, Tracer)


def _host_value(x):
    if isinstance(x, (list, tuple)):
        return [_host_value(v) for v in x]
    if isinstance(x, Array):
        return x._value()
    return x


def array(object, dtype=None, copy=True, order="K", ndmin=0):
    """A new array from ``object`` (array, NumPy array, scalar or nested lists of these). ``dtype`` defaults
    to the promoted type (float32/int32 by default). Unsupported dtypes raise ``TypeError``. Mirrors
    ``jax.numpy.array``."""
    if dtype is not None:
        dtype = _dtypes.canonicalize_dtype(dtype)
    if _is_array(object):
        out = object if dtype is None else astype(object, dtype)
    elif isinstance(object, TypedScalar):
        out = _from_host(object) if dtype is None else astype(_from_host(object), dtype)
    elif isinstance(object, (list, tuple)) and _contains_tracer(object):
        out = stack([array(v) for v in object])
        if dtype is not None:
            out = astype(out, dtype)
    else:
        if isinstance(object, (bool, int, float)):
            dt = dtype if dtype is not None else _dtypes.dtype(object, canonicalize=True)
            return _from_host(_np.asarray(object, dt), dt, weak_type=dtype is None and not isinstance(object, bool))  # JAX: jnp.array(3.0) is weak
        if isinstance(object, (list, tuple)) and object and dtype is None:
            # Python scalars in a list give the default (not NumPy's 64-bit) dtypes.
            arrays_in = _contains_traced(object)
            host = _np.asarray(_host_value(object))
            if arrays_in:
                vals = [v for v in _flat(object) if isinstance(v, Array)]
                return _from_host(host.astype(_dtypes.result_type(*vals, *[v for v in _flat(object) if not isinstance(v, Array)])))
            if host.dtype == _np.float64:
                host = host.astype(_dtypes.canonicalize_dtype(_np.float64))
            elif host.dtype == _np.int64:
                host = host.astype(_dtypes.canonicalize_dtype(_np.int64))
            return _from_host(host)
        return _from_host(object, dtype)
    if ndmin and out.ndim < ndmin:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _flat(x):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


def asarray(a, dtype=None, order=None, copy=None):
    """``a`` as an array (no copy for arrays of the right dtype). Mirrors ``jax.numpy.asarray``."""
    if _is_array(a) and (dtype is None or _np.dtype(dtype) == a.dtype):
        return a
    return array(a, dtype=dtype)


def _shape_tuple(shape):
    if isinstance(shape, (int, _np.integer)):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}.") from None


def _check_shape(shape, fn):
    shape = _shape_tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"{fn}: negative dimensions are not allowed, got shape {shape}")
    return shape


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``. Mirrors ``jax.numpy.full``."""
    shape = _check_shape(shape, "full")
    if dtype is None and not _is_array(fill_value):
        dt = _dtypes.dtype(fill_value, canonicalize=True)
        return lax.full(shape, fill_value, dt)
    if _is_array(fill_value) and fill_value.ndim > 0:
        return broadcast_to(asarray(fill_value, dtype), shape)
    return lax.full(shape, fill_value, dtype)


def zeros(shape, dtype=None):
    """An array of zeros (float32 by default). Mirrors ``jax.numpy.zeros``."""
    return lax.full(_check_shape(shape, "zeros"), 0, _dtypes.canonicalize_dtype(dtype or float_))


def ones(shape, dtype=None):
    """An array of ones (float32 by default). Mirrors ``jax.numpy.ones``."""
    return lax.full(_check_shape(shape, "ones"), 1, _dtypes.canonicalize_dtype(dtype or float_))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    av = get_aval(asarray(a) if not _is_array(a) else a)
    return (av.shape if shape is None else _shape_tuple(shape)), (av.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return lax.full(s, 0, d)


def ones_like(a, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return lax.full(s, 1, d)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return lax.full(s, fill_value, d)


float_ = _np.float64  # canonicalizes to float32 unless x64 is on
int_ = _np.int64


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``. Bounds must be concrete. Mirrors ``jax.numpy.arange``."""
    from ..core import concrete_or_error
    start = concrete_or_error(start, "It arose in the jnp.arange argument 'start'.")
    stop = concrete_or_error(stop, "It arose in the jnp.arange argument 'stop'.")
    step = concrete_or_error(step, "It arose in the jnp.arange argument 'step'.")
    if dtype is None:
        vals = [v for v in (start, stop, step) if v is not None]
        dtype = _dtypes.result_type(*[_np.asarray(v).item() if isinstance(v, Array) else v for v in vals])
        if builtins.all(isinstance(v, (bool, int, _np.integer)) for v in vals):
            dtype = _dtypes.canonicalize_dtype(int_)
    dtype = _dtypes.canonicalize_dtype(dtype)
    if stop is None and step is None and _dtypes.issubdtype(dtype, _np.integer):
        n = int(_np.ceil(start)) if start > 0 else 0
        return lax.iota(dtype, n)
    host = _np.arange(start, stop, step) if step is not None else (
        _np.arange(start, stop) if stop is not None else _np.arange(start))
    return _from_host(host.astype(dtype), dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced samples over ``[start, stop]``. Mirrors ``jax.numpy.linspace``."""
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else float_)
    if _is_array(start) or _is_array(stop):
        start = asarray(start, _np.float32 if not _dtypes.issubdtype(dt, _np.floating) else dt)
        stop = asarray(stop, start.dtype)
        div = (num - 1) if endpoint else num
        step = (stop - start) / builtins.max(div, 1)
        it = lax.iota(start.dtype, num)
        out = start + it * step
        if endpoint and num > 1:
            out = where(it == num - 1, stop, out)
        out = astype(out, dt)
        return (out, step) if retstep else out
    host, step = _np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    out = _from_host(host.astype(dt), dt)
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=None):
    """The ``N×M`` identity (ones on diagonal ``k``). Mirrors ``jax.numpy.eye``."""
    M = N if M is None else M
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else float_)
    r = lax.broadcasted_iota(_np.int32, (N, M), 0)
    c = lax.broadcasted_iota(_np.int32, (N, M), 1)
    return lax.convert_element_type(lax.eq(lax.add(r, int(k)), c), dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else float_)
    r = lax.broadcasted_iota(_np.int32, (N, M), 0)
    c = lax.broadcasted_iota(_np.int32, (N, M), 1)
    return lax.convert_element_type(lax.ge(lax.add(r, int(k)), c), dt)


# ------------------------------------------------------------------------------------ promotion

def _broadcast_shapes(name, shapes):
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dims = set()
        for s in shapes:
            j = i - (nd - len(s))
            if j >= 0 and s[j] != 1:
                dims.add(s[j])
        if len(dims) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(tuple(s)) for s in shapes)}.")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _operand(x, name="jnp function", pos=0):
    if isinstance(x, (Array, Tracer, TypedScalar, bool, int, float)):
        return x
    if isinstance(x, (_np.ndarray, _np.generic)):
        dt = _dtypes.canonicalize_dtype(x.dtype)
        return x.astype(dt) if x.dtype != dt else x
    if isinstance(x, (list, tuple)):
        # JAX's check_arraylike: jnp functions take arrays and scalars, not lists.
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position {pos}.")
    if isinstance(x, complex):
        raise TypeError("cranax does not support dtype complex128 (got a Python complex)")
    raise TypeError(f"{type(x).__name__} is not a valid JAX array type; got {x!r}")


def _broadcast_to(x, shape):
    av = get_aval(x)
    if av.shape == shape:
        return x
    nd = len(shape)
    if av.ndim > nd or builtins.any(d != 1 and d != shape[i + nd - av.ndim] for i, d in enumerate(av.shape)):
        raise ValueError(f"Incompatible shapes for broadcasting: {av.shape} and requested shape {shape}")
    return lax.broadcast_in_dim(x, shape, tuple(range(nd - av.ndim, nd)))


def _convert(x, dt, weak):
    av = get_aval(x)
    if av.dtype == dt and av.weak_type == weak:
        return x
    return lax._convert(x, dt, weak)


def _to_inexact(dt, weak):
    """JAX's ``to_inexact_dtype``: integers up to 32 bits become float32 even under x64, 64-bit ones
    float64 (8-bit ints included, as in JAX). A weakly typed int
    becomes the default float."""
    if weak:
        return _dtypes.canonicalize_dtype(float_)
    if dt.itemsize == 8:
        return _dtypes.canonicalize_dtype(_np.float64)
    return _np.dtype(_np.float32)


def _promote(name, *args, to_float=False, numeric=False):
    """JAX's ``promote_args``: a common dtype (weak types give way) and a common shape. Python scalars
    stay rank-0 literals; other rank-0 values broadcast explicitly."""
    if len(args) == 2 and not to_float and not numeric:
        fast = _promote2_fast(args[0], args[1])
        if fast is not None:
            return fast
    elif len(args) == 1:
        av = getattr(args[0], "aval", None)
        if av is not None and type(args[0]) is not TypedScalar and (not to_float or av.dtype.kind == "f"):
            return [args[0]]
    args = [_operand(a, name, i) for i, a in enumerate(args)]
    dt, weak = _dtypes.result_type(*args, return_weak_type_flag=True)
    if to_float and not _dtypes.issubdtype(dt, _np.floating):
        dt = _to_inexact(dt, weak)
        weak = weak and False
    if numeric and dt == _np.bool_:
        raise TypeError(f"{name} does not accept dtype bool.")
    avals = [get_aval(a) for a in args]
    shape = _broadcast_shapes(name, [a.shape for a in avals])
    out = []
    for a, av in zip(args, avals):
        a = _convert(a, dt, weak) if av.dtype != dt else a  # JAX: every operand takes the result's weak flag
        if av.shape != shape and not (av.ndim == 0 and lax._is_literal_scalar(a)):
            a = _broadcast_to(a, shape)
        out.append(a)
    return out


_FLOAT_KINDS = frozenset("f")


def _promote2_fast(x, y):
    """The common cases of ``_promote`` for two operands: arrays of one aval, or an array and a Python
    scalar of no higher kind (float array with int/float scalar; int array with int scalar)."""
    ax = getattr(x, "aval", None)
    ay = getattr(y, "aval", None)
    if ax is not None and ay is not None:
        if (type(x) is not TypedScalar and type(y) is not TypedScalar and ax.dtype == ay.dtype
                and ax.weak_type == ay.weak_type and (ax.shape == ay.shape)):
            return [x, y]
        return None
    if ax is not None:
        arr, av, s, first = x, ax, y, True
    elif ay is not None:
        arr, av, s, first = y, ay, x, False
    else:
        return None
    ts = type(s)
    if type(arr) is TypedScalar or ts is bool:
        return None
    k = av.dtype.kind
    if ts is float and k == "f" or ts is int and k in "fiu":
        if av.weak_type and ts is float and k != "f":
            return None
        c = typed_scalar(s, av.dtype, True)
        return [arr, c] if first else [c, arr]
    return None


def _unary(name, fn, to_float=True, allow_int=True):
    def op(x, /):
        (x,) = _promote(name, x, to_float=to_float)
        out = fn(x)
        # Identity cases (floor of an int, positive) must still return an array, never a Python scalar.
        return out if isinstance(out, (Array, Tracer)) else asarray(out)
    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}``. Mirrors ``jax.numpy.{name}``."
    return op


def _binary(name, fn, to_float=False):
    def op(x1, x2, /):
        return fn(*_promote(name, x1, x2, to_float=to_float))
    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` with NumPy broadcasting and JAX type promotion. Mirrors "
                  f"``jax.numpy.{name}``. Raises ``TypeError`` for incompatible shapes.")
    return op


# ------------------------------------------------------------------------------------ elementwise

add = _binary("add", lax.add)
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply", lax.mul)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, to_float=True)
atan2 = arctan2
nextafter = _binary("nextafter", lax.nextafter, to_float=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
left_shift = _binary("left_shift", lax.shift_left)


def add(x1, x2, /):  # noqa: F811 -- bool + bool is logical or, as in NumPy
    """Elementwise ``x1 + x2`` (logical or for bools). Mirrors ``jax.numpy.add``."""
    a, b = _promote("add", x1, x2)
    if get_aval(a).dtype == _np.bool_:
        return lax.bitwise_or(a, b)
    return lax.add(a, b)


def multiply(x1, x2, /):  # noqa: F811
    """Elementwise ``x1 * x2`` (logical and for bools). Mirrors ``jax.numpy.multiply``."""
    a, b = _promote("multiply", x1, x2)
    if get_aval(a).dtype == _np.bool_:
        return lax.bitwise_and(a, b)
    return lax.mul(a, b)


def right_shift(x1, x2, /):
    a, b = _promote("right_shift", x1, x2)
    if _dtypes.issubdtype(get_aval(a).dtype, _np.unsignedinteger):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


def logical_and(x1, x2, /):
    return lax.bitwise_and(*_promote("logical_and", astype(x1, bool), astype(x2, bool)))


def logical_or(x1, x2, /):
    return lax.bitwise_or(*_promote("logical_or", astype(x1, bool), astype(x2, bool)))


def logical_xor(x1, x2, /):
    return lax.bitwise_xor(*_promote("logical_xor", astype(x1, bool), astype(x2, bool)))


def logical_not(x, /):
    return lax.bitwise_not(astype(x, bool))


def invert(x, /):
    (x,) = _promote("invert", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


def true_divide(x1, x2, /):
    """``x1 / x2`` in floating point (ints promote to float). Mirrors ``jax.numpy.true_divide``."""
    return lax.div(*_promote("true_divide", x1, x2, to_float=True))


divide = true_divide


def floor_divide(x1, x2, /):
    """``x1 // x2`` rounding toward -inf. Integer division by zero gives JAX's values (``7 // 0 == -2``).
    Mirrors ``jax.numpy.floor_divide``."""
    a, b = _promote("floor_divide", x1, x2)
    dt = get_aval(a).dtype
    if dt == _np.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    if _dtypes.issubdtype(dt, _np.unsignedinteger):
        return lax.div(a, b)
    if _dtypes.issubdtype(dt, _np.integer):
        q = lax.div(a, b)
        fix = lax.bitwise_and(lax.ne(lax.sign(a), lax.sign(b)), lax.ne(lax.rem(a, b), 0))
        return lax.select(fix, lax.sub(q, 1), q)
    return _float_divmod(a, b)[0]


def _float_divmod(a, b):
    mod = lax.rem(a, b)
    div = lax.div(lax.sub(a, mod), b)
    ind = lax.bitwise_and(lax.ne(mod, 0), lax.ne(lax.sign(b), lax.sign(mod)))
    mod = lax.select(ind, lax.add(mod, b), mod)
    div = lax.select(ind, lax.sub(div, 1), div)
    return lax.round(div), mod


def remainder(x1, x2, /):
    """``x1 % x2`` with the sign of ``x2`` (integer ``x % 0 == 0``). Mirrors ``jax.numpy.remainder``."""
    a, b = _promote("remainder", x1, x2)
    dt = get_aval(a).dtype
    if dt == _np.bool_:
        raise TypeError("remainder does not accept dtype bool.")
    if _dtypes.issubdtype(dt, _np.integer):
        b = lax.select(lax.eq(b, 0), lax.full_like(b, 1), b)
    t = lax.rem(a, b)
    if _dtypes.issubdtype(dt, _np.unsignedinteger):
        return t
    plus = lax.bitwise_and(lax.ne(lax.lt(t, 0), lax.lt(b, 0)), lax.ne(t, 0))
    return lax.select(plus, lax.add(t, b), t)


mod = remainder


def fmod(x1, x2, /):
    a, b = _promote("fmod", x1, x2)
    if _dtypes.issubdtype(get_aval(a).dtype, _np.integer):
        b = lax.select(lax.eq(b, 0), lax.full_like(b, 1), b)
    return lax.rem(a, b)


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def power(x1, x2, /):
    """``x1 ** x2``. A static integer exponent uses ``integer_pow``; integer arrays use exact repeated
    squaring. Mirrors ``jax.numpy.power``."""
    if isinstance(x2, (int, _np.integer)) and not isinstance(x2, bool):
        (a,) = _promote("power", x1)
        if int(x2) < 0 and _dtypes.issubdtype(get_aval(a).dtype, _np.integer):
            raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow(x, {int(x2)})")
        return lax.integer_pow(a, int(x2))
    a, b = _promote("power", x1, x2)
    dt = get_aval(a).dtype
    if _dtypes.issubdtype(dt, _np.integer):
        shape = _broadcast_shapes("power", [get_aval(a).shape, get_aval(b).shape])
        a, b = _broadcast_to(a, shape), _broadcast_to(b, shape)  # a scalar base or exponent broadcasts
        acc = lax.full_like(a, 1)
        base = a
        e = b
        for _ in range(dt.itemsize * 8):
            acc = lax.select(lax.ne(lax.bitwise_and(e, 1), 0), lax.mul(acc, base), acc)
            base = lax.mul(base, base)
            e = lax.shift_right_logical(e, 1)
        return acc
    if dt == _np.bool_:
        raise TypeError("power does not accept dtype bool.")
    return lax.pow(a, b)


pow = power


def float_power(x1, x2, /):
    return lax.pow(*_promote("float_power", x1, x2, to_float=True))


negative = _unary("negative", lax.neg, to_float=False)
positive = _unary("positive", lambda x: x, to_float=False)
sign = _unary("sign", lax.sign, to_float=False)
floor = _unary("floor", lambda x: lax.floor(x) if _is_float(x) else x, to_float=False)
ceil = _unary("ceil", lambda x: lax.ceil(x) if _is_float(x) else x, to_float=False)
trunc = _unary("trunc", lambda x: lax.select(lax.lt(x, 0), lax.ceil(x), lax.floor(x)) if _is_float(x) else x,
               to_float=False)
fix = trunc
rint = _unary("rint", lambda x: lax.round(x, 1) if _is_float(x) else x, to_float=False)
exp = _unary("exp", lax.exp)
exp2 = _unary("exp2", lax.exp2)
expm1 = _unary("expm1", lax.expm1)
log = _unary("log", lax.log)
log1p = _unary("log1p", lax.log1p)
log2 = _unary("log2", lambda x: lax.div(lax.log(x), lax.log(lax.full_like(x, 2))))
log10 = _unary("log10", lambda x: lax.div(lax.log(x), lax.log(lax.full_like(x, 10))))
sqrt = _unary("sqrt", lax.sqrt)
cbrt = _unary("cbrt", lax.cbrt)
sin = _unary("sin", lax.sin)
cos = _unary("cos", lax.cos)
tan = _unary("tan", lax.tan)
arcsin = asin = _unary("arcsin", lax.asin)
arccos = acos = _unary("arccos", lax.acos)
arctan = atan = _unary("arctan", lax.atan)
sinh = _unary("sinh", lax.sinh)
cosh = _unary("cosh", lax.cosh)
tanh = _unary("tanh", lax.tanh)
arcsinh = asinh = _unary("arcsinh", lax.asinh)
arccosh = acosh = _unary("arccosh", lax.acosh)
arctanh = atanh = _unary("arctanh", lax.atanh)
reciprocal = _unary("reciprocal", lambda x: lax.div(lax.full_like(x, 1), x))
deg2rad = radians = _unary("deg2rad", lambda x: lax.mul(x, _np.pi / 180))
rad2deg = degrees = _unary("rad2deg", lambda x: lax.mul(x, 180 / _np.pi))


def _is_float(x):
    return _dtypes.issubdtype(get_aval(x).dtype, _np.floating)


def abs(x, /):
    """Elementwise absolute value. Mirrors ``jax.numpy.abs``."""
    (x,) = _promote("abs", x)
    dt = get_aval(x).dtype
    if dt == _np.bool_ or _dtypes.issubdtype(dt, _np.unsignedinteger):
        return x
    return lax.abs(x)


absolute = abs


def square(x, /):
    """``x * x``. Mirrors ``jax.numpy.square``."""
    (x,) = _promote("square", x)
    return lax.square(x)


def round(a, decimals=0, out=None):
    """Rounds half to even at ``decimals`` decimal places. Mirrors ``jax.numpy.round``."""
    (a,) = _promote("round", a)
    if not _is_float(a):
        return a
    if decimals == 0:
        return lax.round(a, 1)
    f = 10.0 ** decimals
    return lax.div(lax.round(lax.mul(a, f), 1), f)


around = round


def isfinite(x, /):
    (x,) = _promote("isfinite", x)
    if not _is_float(x):
        return lax.full_like(x, True, _np.bool_)
    return lax.is_finite(x)


def isnan(x, /):
    (x,) = _promote("isnan", x)
    if not _is_float(x):
        return lax.full_like(x, False, _np.bool_)
    return lax.ne(x, x)


def isinf(x, /):
    (x,) = _promote("isinf", x)
    if not _is_float(x):
        return lax.full_like(x, False, _np.bool_)
    return lax.eq(lax.abs(x), _np.inf)


def isposinf(x, /):
    (x,) = _promote("isposinf", x)
    return lax.eq(x, _np.inf) if _is_float(x) else lax.full_like(x, False, _np.bool_)


def isneginf(x, /):
    (x,) = _promote("isneginf", x)
    return lax.eq(x, -_np.inf) if _is_float(x) else lax.full_like(x, False, _np.bool_)


def signbit(x, /):
    (x,) = _promote("signbit", x)
    if _is_float(x):
        it = _np.int32 if get_aval(x).dtype == _np.float32 else _np.int64
        return lax.lt(lax.bitcast_convert_type(x, it), 0)
    return lax.lt(x, 0)


def hypot(x1, x2, /):
    a, b = _promote("hypot", x1, x2, to_float=True)
    return lax.sqrt(lax.add(lax.mul(a, a), lax.mul(b, b)))


def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` without overflow; its derivative splits evenly at ties, as JAX's custom
    rule does. Mirrors ``jax.numpy.logaddexp``."""
    a, b = _promote("logaddexp", x1, x2, to_float=True)
    return _logaddexp(a, b)


def _logaddexp_impl(a, b):
    m = lax.max(a, b)
    d = lax.sub(a, b)
    return lax.select(lax.ne(d, d), lax.add(a, b), lax.add(m, lax.log1p(lax.exp(lax.neg(lax.abs(d))))))


def _replace_inf(x):
    return lax.select(lax.eq(lax.abs(x), _np.inf), lax.full_like(x, 0), x)


def _logaddexp_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    out = _logaddexp(a, b)
    t = lax.add(lax.mul(ta, lax.exp(lax.sub(_replace_inf(a), _replace_inf(out)))),
                lax.mul(tb, lax.exp(lax.sub(_replace_inf(b), _replace_inf(out)))))
    return out, t


def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)``. Mirrors ``jax.numpy.logaddexp2``."""
    a, b = _promote("logaddexp2", x1, x2, to_float=True)
    ln2 = _np.log(2)
    return lax.div(_logaddexp(lax.mul(a, ln2), lax.mul(b, ln2)), ln2)


def heaviside(x1, x2, /):
    a, b = _promote("heaviside", x1, x2)
    zero = lax.full_like(a, 0)
    return lax.select(lax.lt(a, zero), zero, lax.select(lax.eq(a, zero), b, lax.full_like(a, 1)))


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """``arr`` limited to ``[min, max]`` (either may be None). Mirrors ``jax.numpy.clip``."""
    x = arr if arr is not None else a
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    (x,) = _promote("clip", x)
    if lo is not None:
        x = maximum(lo, x)
    if hi is not None:
        x = minimum(hi, x)
    return x


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` else ``y``, elementwise with broadcasting (both sides are computed; use
    ``lax.cond`` to run only one). Mirrors ``jax.numpy.where``; the one-argument form needs the
    linalg/indexing issue's ``nonzero``."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where,"
                         " got {} and {}.".format(x, y))
    return _where_jit(condition, x, y)


def _where(condition, x, y):
    condition = _operand(condition)
    if get_aval(condition).dtype != _np.bool_:
        condition = lax.ne(condition, _convert(typed_scalar(0, get_aval(condition).dtype, False),
                                               get_aval(condition).dtype, False))
    x, y = _promote("where", x, y)
    shape = _broadcast_shapes("where", [get_aval(condition).shape, get_aval(x).shape, get_aval(y).shape])
    condition, x, y = [_broadcast_to(v, shape) if not (lax._is_literal_scalar(v) and not shape)
                       else v for v in (condition, x, y)]
    return lax.select_n(condition, y, x)


def _make_where_jit():
    from ..api import jit
    return jit(_where)


_where_jit_cached = None


def _where_jit(condition, x, y):
    global _where_jit_cached
    if _where_jit_cached is None:
        _where_jit_cached = _make_where_jit()
    return _where_jit_cached(condition, x, y)


def nonzero(a, *, size=None, fill_value=None):
    raise NotImplementedError("jnp.nonzero / one-argument jnp.where needs gather (the indexing issue)")


# ------------------------------------------------------------------------------------ reductions

def _canon_axes(axis, ndim, fn):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, _np.integer)):
        axis = (int(axis),)
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return tuple(out)


def _keep(x, axes, shape, keepdims):
    if not keepdims:
        return x
    new_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return reshape(x, new_shape)


def _promote_integer_dtype(dt):
    """The dtype sum/prod/cumsum/cumprod accumulate ``dt`` in, as in JAX: bool and integers narrower than
    the default int (int32, or int64 with x64) become the default int; unsigned ones narrower than
    uint32 become uint32 (cranax has no uint64); anything else stays."""
    dt = _np.dtype(dt)
    if dt == _np.bool_:
        return _dtypes.default_int_dtype()
    if dt.kind == "u":
        u = _dtypes.default_uint_dtype()
        return u if dt.itemsize < u.itemsize else dt
    if dt.kind == "i":
        i = _dtypes.default_int_dtype()
        return i if dt.itemsize < i.itemsize else dt
    return dt


_F16 = _np.dtype(_np.float16)
_F32 = _np.dtype(_np.float32)


def _reduction(name, prim_fn, identity=None, upcast_bool=False, to_float=False, upcast_f16=False):
    def op(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        (a,) = _promote(name, a)
        if where is not None:
            # Masked-out elements become the reduction's identity (or `initial`, which JAX requires for
            # max/min).
            fill = identity if identity is not None else initial
            if fill is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so to use a where "
                                 f"mask one has to specify 'initial'")
            a = _where(where, a, fill)
        av = get_aval(a)
        axes = _canon_axes(axis, av.ndim, name)
        result_dtype = None
        if dtype is not None:
            a = astype(a, dtype)
        elif upcast_f16 and av.dtype == _F16:
            # JAX's upcast_f16_for_computation: accumulate in float32, round once at the end
            a = astype(a, _F32)
            result_dtype = _F16
        elif upcast_bool:
            up = _promote_integer_dtype(av.dtype)
            if up != av.dtype:
                a = astype(a, up)
        if identity is None and builtins.any(av.shape[i] == 0 for i in axes) and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        r = prim_fn(a, axes)
        if initial is not None:
            r = _binary_combine(name, r, initial)
        r = _keep(r, axes, av.shape, keepdims)
        return r if result_dtype is None else astype(r, result_dtype)
    op.__name__ = name
    op.__doc__ = (f"``{name}`` over ``axis`` (None: all; int or tuple), with ``keepdims``. Mirrors "
                  f"``jax.numpy.{name}``.")
    return op


def _binary_combine(name, r, initial):
    if name in ("sum",):
        return add(r, initial)
    if name == "prod":
        return multiply(r, initial)
    if name in ("max", "amax"):
        return maximum(r, initial)
    return minimum(r, initial)


def _sum_prim(a, axes):
    if get_aval(a).dtype == _np.bool_:
        a = astype(a, _dtypes.canonicalize_dtype(int_))
    return lax.reduce_sum(a, axes)


def _prod_prim(a, axes):
    if get_aval(a).dtype == _np.bool_:
        a = astype(a, _dtypes.canonicalize_dtype(int_))
    return lax.reduce_prod(a, axes)


sum = _reduction("sum", _sum_prim, identity=0, upcast_bool=True, upcast_f16=True)
prod = _reduction("prod", _prod_prim, identity=1, upcast_bool=True, upcast_f16=True)
max = _reduction("max", lax.reduce_max)
min = _reduction("min", lax.reduce_min)
amax = max
amin = min


def _all_prim(a, axes):
    return lax.reduce_and(astype(a, bool), axes)


def _any_prim(a, axes):
    return lax.reduce_or(astype(a, bool), axes)


all = _reduction("all", _all_prim, identity=True)
any = _reduction("any", _any_prim, identity=False)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis`` (ints and bools average in float32). Mirrors ``jax.numpy.mean``."""
    if where is not None:
        (a,) = _promote("mean", a)
        if dtype is None:
            dtype = get_aval(a).dtype if _is_float(a) else _to_inexact(get_aval(a).dtype, get_aval(a).weak_type)
        w = broadcast_to(asarray(where), get_aval(a).shape)
        num = sum(astype(a, dtype), axis=axis, keepdims=keepdims, where=w)
        den = sum(astype(w, dtype), axis=axis, keepdims=keepdims)
        return true_divide(num, den)
    (a,) = _promote("mean", a)
    av = get_aval(a)
    axes = _canon_axes(axis, av.ndim, "mean")
    n = 1
    for i in axes:
        n *= av.shape[i]
    if dtype is None and av.dtype == _F16:
        # JAX computes the mean of float16 in float32 and rounds once
        return astype(mean(astype(a, _F32), axes, keepdims=keepdims), _F16)
    if dtype is None:
        dtype = av.dtype if _dtypes.issubdtype(av.dtype, _np.floating) else _to_inexact(av.dtype, av.weak_type)
    s = sum(astype(a, dtype), axis=axes, keepdims=keepdims)
    return lax.div(s, typed_scalar(n, dtype, False) if n else typed_scalar(_np.nan, dtype, False)) if n \
        else lax.mul(s, typed_scalar(_np.nan, dtype, False))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance over ``axis``. Mirrors ``jax.numpy.var``."""
    if correction is not None:
        ddof = correction
    (a,) = _promote("var", a, to_float=True)
    av = get_aval(a)
    if dtype is None and av.dtype == _F16:
        # JAX's _var_promote_types: float16 is computed in float32 and rounded once
        return astype(var(astype(a, _F32), axis, ddof=ddof, keepdims=keepdims), _F16)
    axes = _canon_axes(axis, av.ndim, "var")
    n = 1
    for i in axes:
        n *= av.shape[i]
    centered = subtract(a, mean(a, axes, keepdims=True))
    sq = lax.mul(centered, centered)
    return true_divide(sum(sq, axis=axes, keepdims=keepdims), builtins.max(n - ddof, 0))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return sqrt(var(a, axis, dtype, ddof=ddof, keepdims=keepdims, correction=correction))


def _argreduce(name, fn):
    def op(a, axis=None, out=None, keepdims=False):
        (a,) = _promote(name, a)
        av = get_aval(a)
        if axis is None:
            a = ravel(a)
            ax = 0
        else:
            ax = _canon_axes(axis, av.ndim, name)[0]
        r = fn(a, ax, _dtypes.canonicalize_dtype(int_))
        if keepdims:
            if axis is None:
                return reshape(r, (1,) * av.ndim)
            return _keep(r, (ax,), av.shape, True)
        return r
    op.__name__ = name
    op.__doc__ = f"Index of the first {name[3:]}imum along ``axis``. Mirrors ``jax.numpy.{name}``."
    return op


argmax = _argreduce("argmax", lax.argmax)
argmin = _argreduce("argmin", lax.argmin)


# ------------------------------------------------------------------------------------ shapes

def shape(a):
    return _np.shape(a) if isinstance(a, (list, tuple)) else get_aval(_operand(a)).shape


def ndim(a):
    return _np.ndim(a) if isinstance(a, (list, tuple)) else get_aval(_operand(a)).ndim


def size(a, axis=None):
    s = _np.shape(a) if isinstance(a, (list, tuple)) else get_aval(_operand(a)).shape
    return int(_np.prod(s)) if axis is None else s[axis]


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype``. Mirrors ``jax.numpy.astype`` / ``Array.astype``."""
    dt = _dtypes.canonicalize_dtype(dtype)
    x = _operand(x)
    av = get_aval(x)
    if av.dtype == dt and not av.weak_type:
        return x
    return lax._convert(x, dt, False)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """``a`` with a new shape (one dimension may be -1). Mirrors ``jax.numpy.reshape``."""
    if shape is None:
        shape = newshape
    if order != "C":
        raise NotImplementedError("jnp.reshape supports only order='C'")
    (a,) = _promote("reshape", a)
    av = get_aval(a)
    shape = _shape_tuple(shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 or av.size % known:
            raise TypeError(f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {shape}")
        shape = tuple(av.size // known if s == -1 else s for s in shape)
    if int(_np.prod(shape, dtype=_np.int64)) != av.size:
        raise TypeError(f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {shape}")
    if lax._is_literal_scalar(a):
        a = _broadcast_to(a, ())
        if shape == ():
            return lax.full((), a.val if isinstance(a, TypedScalar) else a, av.dtype)
    return lax.reshape(a, shape)


def ravel(a, order="C"):
    """``a`` flattened (row-major). Mirrors ``jax.numpy.ravel``."""
    return reshape(a, (-1,))


def transpose(a, axes=None):
    """``a`` with axes permuted (reversed by default). Mirrors ``jax.numpy.transpose``."""
    (a,) = _promote("transpose", a)
    nd = get_aval(a).ndim
    axes = tuple(range(nd))[::-1] if axes is None else tuple(int(x) % nd if nd else int(x) for x in axes)
    if sorted(axes) != list(range(nd)):
        raise ValueError(f"axes {axes} don't match array of dimension {nd}")
    return lax.transpose(a, axes)


_LAZY_T_MIN = 1 << 16


def _T(self):
    """``x.T``. Eagerly, a large 2-D ``Array``'s transpose is a lazy view (see ``array._LazyTranspose``) so that
    ``jnp.dot(x, x.T)`` and ``x @ y.T`` contract without copying; under a trace it is ``lax.transpose``."""
    from ..array import Array, _LazyTranspose
    from .. import core
    if type(self) is Array and self.ndim == 2 and self.size >= _LAZY_T_MIN and core._state.trace is None:
        return _LazyTranspose._of(self)
    return transpose(self)


def permute_dims(a, axes):
    return transpose(a, axes)


def matrix_transpose(x):
    nd = get_aval(x).ndim
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    nd = get_aval(_operand(a)).ndim
    p = list(range(nd))
    p[axis1 % nd], p[axis2 % nd] = p[axis2 % nd], p[axis1 % nd]
    return transpose(a, p)


def moveaxis(a, source, destination):
    nd = get_aval(_operand(a)).ndim
    src = [s % nd for s in ((source,) if isinstance(source, int) else source)]
    dst = [d % nd for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def broadcast_to(array, shape):
    """``array`` broadcast to ``shape`` (NumPy rules). Mirrors ``jax.numpy.broadcast_to``."""
    (a,) = _promote("broadcast_to", array)
    shape = _shape_tuple(shape)
    av = get_aval(a)
    if av.ndim > len(shape):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={av.shape} shape={shape}")
    return _broadcast_to(a, shape)


def broadcast_shapes(*shapes):
    return _broadcast_shapes("broadcast_shapes", [tuple(s) for s in shapes])


def broadcast_arrays(*args):
    args = [_operand(a) for a in args]
    shape = _broadcast_shapes("broadcast_arrays", [get_aval(a).shape for a in args])
    return [_broadcast_to(asarray(a), shape) for a in args]


def expand_dims(a, axis):
    """``a`` with size-1 axes inserted at ``axis`` (int or tuple). Mirrors ``jax.numpy.expand_dims``."""
    (a,) = _promote("expand_dims", a)
    if lax._is_literal_scalar(a):
        a = asarray(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = get_aval(a).ndim + len(axes)
    for ax in axes:
        if not -nd <= ax < nd:
            raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd}")
    return lax.expand_dims(a, axes)


def squeeze(a, axis=None):
    """``a`` without size-1 axes (all, or those in ``axis``). Mirrors ``jax.numpy.squeeze``."""
    (a,) = _promote("squeeze", a)
    av = get_aval(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(av.shape) if d == 1)
    else:
        axes = _canon_axes(axis, av.ndim, "squeeze")
        for i in axes:
            if av.shape[i] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, "
                                 f"got shape={av.shape} and dimensions={axes}")
    return lax.squeeze(a, axes)


def stack(arrays, axis=0, out=None, dtype=None):
    """Joins arrays of one shape along a new ``axis``. Mirrors ``jax.numpy.stack``."""
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    arrays = _promote("stack", *arrays)
    shapes = {get_aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError("All input arrays must have the same shape.")
    return concatenate([expand_dims(a, axis) for a in arrays], axis=axis, dtype=dtype)


# ------------------------------------------------------------------------------------ misc

def copy(a, order=None):
    return asarray(a)


def iscomplexobj(x):
    return False


def isrealobj(x):
    return True


def real(x):
    return asarray(x)


def conj(x):
    return asarray(x)


conjugate = conj


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote("isclose", a, b, to_float=True)
    out = less_equal(abs(subtract(a, b)), add(atol, multiply(rtol, abs(b))))
    out = logical_or(out, equal(a, b))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def _install_methods(cls):
    """Array/Tracer operators and methods, all routed through this module."""
    def rev(f):
        return lambda self, other: f(other, self)

    def _guard(f):
        def op(self, other):
            if isinstance(other, (list, tuple, dict, set, str)) or other is None:
                return NotImplemented
            return f(self, other)
        return op

    ops = {
        "__add__": add, "__sub__": subtract, "__mul__": multiply, "__truediv__": true_divide,
        "__floordiv__": floor_divide, "__mod__": remainder, "__pow__": power,
        "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor,
        "__lshift__": left_shift, "__rshift__": right_shift,
        "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
        "__eq__": equal, "__ne__": not_equal,
    }
    for name, f in ops.items():
        setattr(cls, name, _guard(f))
        if name not in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
            setattr(cls, "__r" + name[2:], _guard(rev(f)))
    cls.__divmod__ = lambda self, o: divmod(self, o)
    cls.__rdivmod__ = lambda self, o: divmod(o, self)
    cls.__neg__ = lambda self: negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = lambda self: invert(self)
    cls.__getitem__ = lambda self, idx: _getitem(self, idx)
    cls.__matmul__ = lambda self, o: matmul(self, o)
    cls.__rmatmul__ = lambda self, o: matmul(o, self)
    cls.__hash__ = None if cls is not Array else cls.__hash__
    cls.sum = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: sum(self, axis, dtype, out,
                                                                                      keepdims, **kw)
    cls.prod = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: prod(self, axis, dtype, out,
                                                                                        keepdims, **kw)
    cls.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False: mean(self, axis, dtype, out,
                                                                                  keepdims)
    cls.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: var(self, axis, dtype, out,
                                                                                        ddof, keepdims)
    cls.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: std(self, axis, dtype, out,
                                                                                        ddof, keepdims)
    cls.max = lambda self, axis=None, out=None, keepdims=False, **kw: max(self, axis, None, out, keepdims, **kw)
    cls.min = lambda self, axis=None, out=None, keepdims=False, **kw: min(self, axis, None, out, keepdims, **kw)
    cls.all = lambda self, axis=None, out=None, keepdims=False: all(self, axis, None, out, keepdims)
    cls.any = lambda self, axis=None, out=None, keepdims=False: any(self, axis, None, out, keepdims)
    cls.argmax = lambda self, axis=None, out=None, keepdims=False: argmax(self, axis, out, keepdims)
    cls.argmin = lambda self, axis=None, out=None, keepdims=False: argmin(self, axis, out, keepdims)
    cls.astype = lambda self, dtype, copy=False: astype(self, dtype)
    cls.reshape = lambda self, *shape, order="C": reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, order)
    cls.transpose = lambda self, *axes: transpose(
        self, None if not axes else (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes))
    cls.T = property(_T)
    cls.mT = property(lambda self: matrix_transpose(self))
    cls.squeeze = lambda self, axis=None: squeeze(self, axis)
    cls.ravel = lambda self, order="C": ravel(self)
    cls.flatten = lambda self, order="C": ravel(self)
    cls.clip = lambda self, min=None, max=None: clip(self, min, max)
    cls.round = lambda self, decimals=0: round(self, decimals)
    cls.swapaxes = lambda self, a1, a2: swapaxes(self, a1, a2)
    cls.dot = lambda self, b: dot(self, b)
    cls.conj = lambda self: self
    from ._indexing import _IndexUpdateHelper
    cls.at = property(lambda self: _IndexUpdateHelper(self))
    cls.cumsum = lambda self, axis=None, dtype=None, out=None: cumsum(self, axis, dtype, out)
    cls.cumprod = lambda self, axis=None, dtype=None, out=None: cumprod(self, axis, dtype, out)
    cls.sort = lambda self, axis=-1, **kw: sort(self, axis, **kw)
    cls.argsort = lambda self, axis=-1, **kw: argsort(self, axis, **kw)
    cls.diagonal = lambda self, offset=0, axis1=0, axis2=1: diagonal(self, offset, axis1, axis2)
    cls.trace = lambda self, offset=0, axis1=0, axis2=1, dtype=None: trace(self, offset, axis1, axis2, dtype)
    cls.take = lambda self, indices, axis=None, **kw: take(self, indices, axis, **kw)
    cls.repeat = lambda self, repeats, axis=None, **kw: repeat(self, repeats, axis, **kw)
    cls.nonzero = lambda self, *, size=None, fill_value=None: nonzero(self, size=size, fill_value=fill_value)
    cls.searchsorted = lambda self, v, side="left", sorter=None: searchsorted(self, v, side, sorter)
    cls.real = property(lambda self: self)
    cls.copy = lambda self: self


# Products (dot_general), shape ops, sorting, scans and array indexing (issue 7).
from ._linalg import *  # noqa: E402,F401,F403
from ._linalg import matmul, dot  # noqa: E402,F401
from ._shape_ops import *  # noqa: E402,F401,F403
from ._shape_ops import concatenate  # noqa: E402,F401,F811


from ..custom_derivatives import custom_jvp as _custom_jvp  # noqa: E402

_logaddexp = _custom_jvp(_logaddexp_impl)
_logaddexp.defjvp(_logaddexp_jvp)

_install_methods(Array)
_install_methods(Tracer)
