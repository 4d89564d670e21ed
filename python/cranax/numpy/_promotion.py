"""Promotion and ``asarray``: JAX's dtype lattice and NumPy's broadcasting for ``cranax.numpy``'s operands,
and ``array``/``asarray``/``astype``, which every other part of the package is built on."""
import builtins
import warnings

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..array import Array, _from_host
from ..config import config
from ..core import Tracer, TypedScalar, get_aval, typed_scalar
from ..interpreters import partial_eval as _pe
from ..primitives import state as _state

float_ = _np.float64  # canonicalizes to float32 unless x64 is on
int_ = _np.int64


def _is_array(x):
    return isinstance(x, (Array, Tracer))


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
    if isinstance(x, Array) and not isinstance(x, Tracer):
        return x._value()
    return x


def array(object, dtype=None, copy=True, order="K", ndmin=0):
    """A new array from ``object`` (array, NumPy array, scalar or nested lists of these). ``dtype`` defaults
    to the promoted type (float32/int32 by default). Unsupported dtypes raise ``TypeError``. Mirrors
    ``jax.numpy.array``."""
    if object is None or isinstance(object, (list, tuple)) and any(v is None for v in _flat(object)):
        raise ValueError("None is not a valid value for jnp.array")   # JAX's text
    if dtype is not None:
        dtype = _dtypes.canonicalize_dtype(dtype)
    if _is_array(object):
        out = object if dtype is None else astype(object, dtype)
    elif isinstance(object, TypedScalar):
        out = _from_host(object) if dtype is None else astype(_from_host(object), dtype)
    elif isinstance(object, (list, tuple)) and _contains_tracer(object):
        from . import _shapes  # why: _shapes is built on asarray; only a list holding tracers needs stack back
        out = _shapes._stack_concat([array(v) for v in object])
        if dtype is not None:
            out = astype(out, dtype)
    else:
        if isinstance(object, (bool, int, float, complex)):
            dt = dtype if dtype is not None else _dtypes.dtype(object, canonicalize=True)
            if type(object) is int and dtype is None:
                info = _np.iinfo(dt)
                if not info.min <= object <= info.max:
                    raise OverflowError(f"Python int {object} too large to convert to {dt.name}")   # JAX's words
            return _from_host(_np.asarray(object, dt), dt, weak_type=dtype is None and not isinstance(object, bool))  # JAX: jnp.array(3.0) is weak
        if isinstance(object, (list, tuple)) and object and dtype is None:
            # Python scalars in a list give the default (not NumPy's 64-bit) dtypes.
            arrays_in = _contains_traced(object)
            host = _np.asarray(_host_value(object))
            if arrays_in:
                vals = [v for v in _flat(object) if isinstance(v, Array) and not isinstance(v, Tracer)]
                return _from_host(host.astype(_dtypes.result_type(*vals, *[v for v in _flat(object) if not (isinstance(v, Array) and not isinstance(v, Tracer))])))
            if host.dtype == _np.float64:
                host = host.astype(_dtypes.canonicalize_dtype(_np.float64))
            elif host.dtype == _np.int64:
                dt = _dtypes.canonicalize_dtype(_np.int64)
                if dt != host.dtype and host.size:
                    info = _np.iinfo(dt)
                    bad = host[(host < info.min) | (host > info.max)]
                    if bad.size:   # NumPy's error, as JAX converts the list with NumPy
                        raise OverflowError(f"Python integer {int(bad.flat[0])} out of bounds for {dt.name}")
                host = host.astype(dt)
            return _from_host(host)
        return _from_host(object, dtype)
    if ndmin and out.ndim < ndmin:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
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
    if isinstance(shape, Tracer) and get_aval(shape).ndim == 0:
        shape = (shape,)   # as JAX's jnp: a scalar shape is a 1-tuple (so the error names the tuple)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape!r}."
        traced = [d for d in (shape if isinstance(shape, (tuple, list)) else ()) if isinstance(d, Tracer)]
        if traced:   # JAX's hint, and where each traced dimension came from
            msg += "\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions."
            for d in traced:
                ctx = d._context()
                msg += f"\n{ctx}" if ctx else ""
        raise TypeError(msg) from None


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


def _check_rank_promotion(name, shapes):
    """``jax_numpy_rank_promotion``: operands of different non-zero ranks warn ("warn") or raise ("raise")."""
    mode = config.jax_numpy_rank_promotion
    if mode == "allow":
        return
    where = ' '.join(map(str, shapes))
    if mode == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes {where}. Set the "
                      "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
                      "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.", stacklevel=4)
    else:
        raise ValueError(f"Operands could not be broadcast together for {name} on shapes {where} and with the config "
                         "option jax_numpy_rank_promotion='raise'. For more information, see "
                         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


# One-operand jnp functions that JAX does not wrap in ``jit`` (their argument check sees a ref itself).
_UNJITTED = frozenset({"reshape", "transpose", "expand_dims", "squeeze", "var", "std", "broadcast_to", "argmax",
                       "argmin", "isposinf", "isneginf", "negative"})


def _operand(x, name="jnp function", pos=0, jitted=False):
    """``x`` checked (and a NumPy value canonicalized) as a jnp function's argument. ``jitted``: the function
    is a ``jit`` in JAX (unary ufuncs, reductions), so JAX's check sees a ref argument as the tracer jit made
    of it and names that class."""
    if isinstance(x, (Array, Tracer, TypedScalar, bool, int, float, complex)):
        return x
    if isinstance(x, (_np.ndarray, _np.generic)):
        dt = _dtypes.canonicalize_dtype(x.dtype)
        return x.astype(dt) if x.dtype != dt else x
    if isinstance(x, (list, tuple, _state.Ref)):
        # JAX's check_arraylike: jnp functions take arrays and scalars, not lists (nor refs: read ref[...])
        cls = _pe.DynamicJaxprTracer if jitted and isinstance(x, _state.Ref) else type(x)
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {cls} at position {pos}.")
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


# JAX's jitted jnp functions parse a Python int argument as the default int type (int32, int64 with x64):
# one out of its range raises there, naming the parameter. Per function: its parameters' names.
_XY = ("x", "y")
_X12 = ("x1", "x2")
_PARSED_ARGS = {
    **dict.fromkeys(("add", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_xor", "equal",
                     "float_power", "greater", "greater_equal", "left_shift", "less", "less_equal",
                     "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
                     "nextafter", "not_equal", "subtract", "where"), _XY),
    **dict.fromkeys(("arctan2", "bitwise_right_shift", "copysign", "divide", "floor_divide", "fmax", "fmin",
                     "fmod", "gcd", "heaviside", "hypot", "lcm", "ldexp", "logaddexp", "logaddexp2",
                     "remainder", "right_shift", "true_divide"), _X12),
    "power": _X12, "isclose": ("a", "b"),
}


def check_int_arg(x, path):
    """JAX's jit argument parsing of a Python int ``x`` (the argument at ``path``): OverflowError when it
    does not fit the default int type."""
    if type(x) is int:
        bound = 2**63 if config.jax_enable_x64 else 2**31
        if not -bound <= x < bound:
            raise OverflowError(f"An overflow was encountered while parsing an argument to a jitted computation, "
                                f"whose argument path is {path}. Got <class 'int'> with value {x}")


def _wrap_int(x, dtype):
    """A parsed Python int converted to the integer ``dtype`` of the operation: it wraps, as JAX's
    ``convert_element_type`` of the weak int32 argument does (``uint8 array + (2**31 - 1)``)."""
    info = _np.iinfo(dtype)
    if info.min <= x <= info.max:
        return x
    bits = info.bits
    x %= 2**bits
    return x - 2**bits if dtype.kind == "i" and x > info.max else x


def _check_parsed(name, args):
    names = _PARSED_ARGS.get(name)
    if names is not None:
        for a, n in zip(args, names):
            if type(a) is int:
                check_int_arg(a, n)


def _promote(name, *args, to_float=False, numeric=False, rank_only=False):
    """JAX's ``promote_args``: a common dtype (weak types give way) and a common shape. Rank-0 operands of a
    binary function stay rank-0 (as JAX's jaxprs show them); other operands broadcast explicitly.
    ``rank_only`` (two operands going straight to a lax binary primitive, which broadcasts size-1
    dimensions): as JAX's ``promote_shapes``, only the rank is promoted, by leading 1s (``f32[3]`` next to
    ``f32[2,3]`` becomes ``f32[1,3]``); equal ranks are left to the primitive."""
    if type(args[-1]) is int or type(args[0]) is int:
        _check_parsed(name, args)
    if len(args) == 2 and not to_float and not numeric:
        fast = _promote2_fast(args[0], args[1])
        if fast is not None:
            return fast
    elif len(args) == 1:
        av = getattr(args[0], "aval", None)
        if av is not None and type(args[0]) is not TypedScalar and (not to_float or av.dtype.kind in "fc"):
            return [args[0]]
    args = [_operand(a, name, i, jitted=len(args) == 1 and name not in _UNJITTED) for i, a in enumerate(args)]
    dt, weak = _dtypes.result_type(*args, return_weak_type_flag=True)
    if to_float and not _dtypes.issubdtype(dt, _np.inexact):
        dt = _to_inexact(dt, weak)
        weak = weak and False
    if dt.kind in "iu" and name in _PARSED_ARGS:
        args = [_wrap_int(a, dt) if type(a) is int else a for a in args]
    if numeric and dt == _np.bool_:
        raise TypeError(f"{name} does not accept dtype bool.")
    avals = [get_aval(a) for a in args]
    if len({a.ndim for a in avals if a.ndim}) > 1:
        _check_rank_promotion(name, [a.shape for a in avals])
    if rank_only and len(args) == 2:
        ranks = {a.ndim for a in avals if a.ndim}
        if len(ranks) > 1:
            try:   # as JAX's lax.broadcast_shapes (equal ranks are checked by the lax primitive)
                _broadcast_shapes(name, [a.shape for a in avals])
            except TypeError:
                raise ValueError(f"Incompatible shapes for broadcasting: shapes={[a.shape for a in avals]}") from None
        shape = (1,) * builtins.max(ranks, default=0)
    else:
        shape = _broadcast_shapes(name, [a.shape for a in avals])
    keep_rank0 = len(args) == 2 and len({a.ndim for a in avals if a.ndim}) < 2
    conv = []
    for a, av in zip(args, avals):
        # JAX: every operand takes the result's dtype and weak flag; a traced weak operand meeting a strong
        # one gets a convert_element_type[weak_type=False] equation (a literal just changes its flag).
        if (type(a) is Array and av.shape == () and av.weak_type and not weak and av.dtype == dt
                and not _pe.is_user_const(a) and not a.committed):
            # a concrete weak scalar: JAX converts it in place (not one placed on a device: the result goes there)
            a = typed_scalar(a._value_scalar(), dt, False)
        elif av.dtype != dt or (av.weak_type and not weak and not lax._is_literal_scalar(a)
                                and type(a) is not TypedScalar):
            a = _convert(a, dt, weak)
        elif av.weak_type and not weak and type(a) in (int, float, complex):
            a = typed_scalar(a, dt, False)   # strong now: it prints its value in ``dt``, as JAX's
        conv.append(a)
    out = []   # then the shapes, as JAX's promote_shapes(*promote_dtypes(*args)) orders the equations
    for a, av in zip(conv, avals):
        # JAX's promote_shapes: a rank-0 operand stays rank-0 (lax's binary primitives take it with an
        # array; the lowering broadcasts it for the core), unless operands of several non-zero ranks meet.
        if rank_only and len(args) == 2 and av.ndim:
            if av.ndim < len(shape):
                a = lax.broadcast_in_dim(a, (1,) * (len(shape) - av.ndim) + av.shape,
                                         tuple(range(len(shape) - av.ndim, len(shape))))
        elif av.shape != shape and not (av.ndim == 0 and (keep_rank0 or lax._is_literal_scalar(a))):
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
                and ax.weak_type == ay.weak_type and (ax.shape == ay.shape)
                and not (ax.weak_type and ax.dtype.kind == "b")):   # weak bools meet as strong ones (JAX)
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
        if ts is int and k in "iu":
            s = _wrap_int(s, av.dtype)
        # the scalar takes the array's weak flag (JAX's promote_dtypes): a strong literal prints its value in
        # the array's dtype (``0.10000000149011612:f32[]``), a weak one its Python value
        c = typed_scalar(s, av.dtype, av.weak_type)
        return [arr, c] if first else [c, arr]
    return None


def _is_float(x):
    return _dtypes.issubdtype(get_aval(x).dtype, _np.floating)


def astype(x, dtype, /, *, copy=False, device=None):
    """``x`` converted to ``dtype``. Mirrors ``jax.numpy.astype`` / ``Array.astype``."""
    dt = _dtypes.canonicalize_dtype(dtype)
    x = _operand(x)
    av = get_aval(x)
    if av.dtype == dt and not av.weak_type:
        return x
    if av.dtype.kind == "c" and dt == _np.bool_:  # nonzero, no warning (as JAX)
        return lax.ne(x, typed_scalar(0j, av.dtype, False))
    if av.dtype.kind == "c" and dt.kind != "c":
        warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. Please first use "
                      "jnp.real or jnp.imag to take the real/imaginary component of your input.",
                      DeprecationWarning, stacklevel=2)
        return lax._convert(lax.real(x), dt, False)
    return lax._convert(x, dt, False)
