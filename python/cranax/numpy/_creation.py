"""Array creation: ``full``, ``zeros``, ``ones``, the ``*_like`` forms, ``arange``, ``linspace``, ``eye``,
``identity``, ``tri``. Mirrors ``jax.numpy``. (``array``/``asarray`` live with promotion.)"""
import builtins
import operator as _operator

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..array import Array, _from_host
from ..core import Tracer, concrete_or_error, get_aval
from ..primitives import elementwise as _ew
from ._promotion import _to_inexact, _is_array, _shape_tuple, asarray, astype, float_, int_
from ._shapes import broadcast_to
from ._ufuncs import _where_jit


def _check_shape(shape, fn):
    shape = _shape_tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"{fn}: negative dimensions are not allowed, got shape {shape}")
    return shape


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``. Mirrors ``jax.numpy.full``."""
    shape = _check_shape(shape, "full")
    if dtype is None and not _is_array(fill_value):
        # lax.full without a dtype: a Python scalar gives a weakly typed array, as JAX's
        return lax.full(shape, fill_value)
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
    if not _is_array(a) and hasattr(a, "shape") and hasattr(a, "dtype"):
        # a ShapeDtypeStruct (or anything with both): JAX's *_like take its shape and dtype (optax does)
        av = get_aval(a) if hasattr(a, "aval") else None
        a_shape, a_dtype = (av.shape, av.dtype) if av is not None else (tuple(a.shape), a.dtype)
        return (a_shape if shape is None else _shape_tuple(shape)), (a_dtype if dtype is None else dtype)
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


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``, 1-D, of ``dtype`` (default: the promoted type of the bounds,
    int32 or float32). Bounds must be concrete scalars (ValueError for arrays and complex values). Computed as
    JAX computes it: ``start + step * iota`` in float32 (or the dtype if wider), so float values can differ from
    NumPy's float64 ``arange`` in the last bit. Mirrors ``jax.numpy.arange``."""
    # JAX's texts; a lone bound is the stop
    start = concrete_or_error(start, f"It arose in the jnp.arange argument '{'stop' if stop is None else 'start'}'")
    stop = concrete_or_error(stop, "It arose in the jnp.arange argument 'stop'")
    step = concrete_or_error(step, "It arose in the jnp.arange argument 'step'")
    for name, v in (("stop" if stop is None and step is None else "start", start), ("stop", stop), ("step", step)):
        if v is not None and _np.ndim(v) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
        if v is not None and _np.iscomplexobj(v):
            raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported starting in "
                             "JAX v0.10.0.")
    if dtype is None:
        vals = [v for v in (start, stop, step) if v is not None]
        dtype = _dtypes.result_type(*[_np.asarray(v).item() if isinstance(v, Array) and not isinstance(v, Tracer) else v for v in vals])
        if builtins.all(isinstance(v, (bool, int, _np.integer)) for v in vals):
            dtype = _dtypes.canonicalize_dtype(int_)
    dtype = _dtypes.canonicalize_dtype(dtype)
    # As JAX 0.10.2: an iota, shifted and scaled by scalar literals (so a traced arange is ``iota`` equations,
    # and float steps are computed in float32 or wider, not in NumPy's float64).
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = _np.dtype(_np.float32) if (_dtypes.issubdtype(dtype, _np.floating)
                                             and _dtypes.finfo(dtype).bits < 32) else _np.dtype(dtype)
        size = builtins.max(0, int(_np.ceil((stop - start) / step)))
        out = _ew.add(working.type(start), _ew.mul(working.type(step), lax.iota(working, size)))
        return out if working == dtype else lax.convert_element_type(out, dtype)
    if start == 0:
        return lax.iota(dtype, builtins.max(0, int(_np.ceil(stop))))
    size = builtins.max(0, int(_np.ceil(stop - start)))
    return _ew.add(_np.dtype(dtype).type(start), lax.iota(dtype, size))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced samples over ``[start, stop]`` (arrays broadcast, the samples along ``axis``),
    computed as JAX's: ``start * (1 - step) + stop * step`` with ``step = iota / div`` in the computation
    dtype, as one jitted ``_linspace`` call. Mirrors ``jax.numpy.linspace``."""
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return _linspace_jit(start, stop, num, bool(endpoint), bool(retstep),
                         None if dtype is None else _np.dtype(dtype), _operator.index(axis))


def _inexact(dt):
    return dt if _dtypes.issubdtype(dt, _np.inexact) else _to_inexact(dt, False)


def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = _inexact(_np.dtype(_dtypes.result_type(start, stop)))
    dtype = _np.dtype(_dtypes.canonicalize_dtype(dtype))
    cdt = _inexact(dtype)
    start, stop = astype(start, cdt), astype(stop, cdt)
    bounds = list(_np.broadcast_shapes(start.shape, stop.shape))
    bstart, bstop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    bounds.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = _ew.div(lax.convert_element_type(_ew.sub(stop, start), cdt), asarray(div, dtype=cdt))
        iota_shape = [1] * len(bounds)
        iota_shape[axis] = div
        real = _np.dtype(_dtypes.finfo(cdt).dtype)
        step = _ew.div(lax.reshape(lax.iota(real, div), tuple(iota_shape)), asarray(div, real))
        step = astype(step, cdt)
        out = _ew.add(_ew.mul(lax.reshape(bstart, tuple(bounds)), _ew.sub(1, step)),
                      _ew.mul(lax.reshape(bstop, tuple(bounds)), step))
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(bstop, (axis,))], axis)
    elif num == 1:
        delta = asarray(_np.nan if endpoint else _ew.sub(stop, start), dtype=cdt)
        out = lax.reshape(bstart, tuple(bounds))
    else:   # num == 0: NumPy's empty result
        empty_shape = list(_np.broadcast_shapes(start.shape, stop.shape))
        empty_shape.insert(axis, 0)
        delta = full((), _np.nan, cdt)
        out = empty(tuple(empty_shape), dtype)
    if _dtypes.issubdtype(dtype, _np.integer) and not _dtypes.issubdtype(out.dtype, _np.integer):
        out = lax.floor(out)
    result = lax.convert_element_type(out, dtype)
    return (result, delta) if retstep else result


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


# JAX's linspace is this jitted _linspace, num/endpoint/retstep/dtype/axis static (printed ``jit[name=_linspace]``)
from ..api import jit as _jit   # noqa: E402  (the API layer imports numpy lazily; bound last to avoid the cycle)
_linspace_jit = _jit(_linspace, static_argnums=(2, 3, 4, 5, 6))
