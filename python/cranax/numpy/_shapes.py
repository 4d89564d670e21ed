"""Shapes: ``reshape``, ``transpose``, broadcasting, ``expand_dims``/``squeeze`` and the joins
``concatenate``/``stack`` that the rest of ``cranax.numpy`` is built on. Mirrors ``jax.numpy``."""
import builtins

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..array import Array
from ..core import Tracer, TypedScalar, get_aval
from ._promotion import (_broadcast_shapes, _broadcast_to, _operand, _promote, _shape_tuple, asarray,
                         astype)


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


def shape(a):
    return _np.shape(a) if isinstance(a, (list, tuple)) else get_aval(_operand(a)).shape


def ndim(a):
    return _np.ndim(a) if isinstance(a, (list, tuple)) else get_aval(_operand(a)).ndim


def size(a, axis=None):
    s = _np.shape(a) if isinstance(a, (list, tuple)) else get_aval(_operand(a)).shape
    return int(_np.prod(s)) if axis is None else s[axis]


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """``a`` with a new shape (one dimension may be -1); ``order="F"`` reads and writes the elements in
    column-major order. Mirrors ``jax.numpy.reshape`` (``order="A"``: NotImplementedError, another order:
    ValueError, as JAX)."""
    if shape is None:
        shape = newshape
    if order == "F":
        # column-major: the reversed-axes view reshaped to the reversed shape, reversed back (as JAX does)
        (a,) = _promote("reshape", a)
        shape = _shape_tuple(shape)
        return transpose(reshape(transpose(a), shape[::-1]))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    if order != "C":
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")
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
    """``a`` flattened, row-major (``order="C"``) or column-major (``"F"``). Mirrors ``jax.numpy.ravel``
    (``order="K"``: NotImplementedError, as JAX)."""
    _operand(a, "ravel", jitted=True)   # JAX's check names ravel
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """``a`` with axes permuted (reversed by default). Mirrors ``jax.numpy.transpose``."""
    (a,) = _promote("transpose", a)
    nd = get_aval(a).ndim
    axes = tuple(range(nd))[::-1] if axes is None else tuple(int(x) % nd if nd else int(x) for x in axes)
    if sorted(axes) != list(range(nd)):
        raise ValueError(f"axes {axes} don't match array of dimension {nd}")
    return lax.transpose(a, axes)


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


# ------------------------------------------------------------------------------------------------ joining

def _axis(axis, nd, name="axis"):
    a = int(axis)
    if not -nd <= a < nd:
        raise ValueError(f"{name} {a} is out of bounds for array of dimension {nd}")
    return a % nd


def _seq(tup):
    if isinstance(tup, (Tracer,)) or hasattr(tup, "_buf"):
        return [tup[i] for i in range(get_aval(tup).shape[0])]
    return list(tup)


def _keys_joined(arrays, axis, join):
    """``join`` of typed key arrays, done on their uint32 data (``(*shape, 2)``) and wrapped again; None
    when no element is a key array. JAX joins key arrays alone: mixing raises its promotion error."""
    is_key = [_dtypes.issubdtype(getattr(a, "dtype", None), _dtypes.prng_key) for a in arrays]
    if not builtins.any(is_key):
        return None
    if not builtins.all(is_key):
        raise ValueError("dtype=key<fry> is not a valid dtype for JAX type promotion.")
    wrap = type(arrays[0])
    if axis is None:   # flattened first
        return wrap(join([a._base.reshape(-1, 2) for a in arrays], axis=0))
    # the axis counts in the keys' shape; the data's trailing axis of 2 stays last
    return wrap(join([a._base for a in arrays], axis=_axis(axis, len(arrays[0].shape) + (join is stack))))


def concatenate(arrays, axis=0, dtype=None):
    """Joins arrays along ``axis`` (``None``: flattened first). Typed key arrays join with key arrays only.
    Mirrors ``jax.numpy.concatenate``."""
    if _is_plain_array(arrays):
        return _concatenate_array(arrays, axis, dtype)
    if isinstance(arrays, (Tracer,)) or hasattr(arrays, "_buf"):
        arrays = [arrays[i] for i in range(get_aval(arrays).shape[0])]
    arrays = list(arrays)
    keys = _keys_joined(arrays, axis, concatenate) if arrays else None
    if keys is not None:
        return keys
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = _promote_dtypes(arrays)
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    avals = [get_aval(a) for a in arrays]
    nd = avals[0].ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _axis(axis, nd)
    for av in avals[1:]:
        if av.ndim != nd:
            raise ValueError(f"All the input arrays must have same number of dimensions, got shapes "
                             f"{[a.shape for a in avals]}.")
        if builtins.any(av.shape[i] != avals[0].shape[i] for i in range(nd) if i != axis):
            # JAX raises this one from lax.concatenate's shape rule, as a TypeError.
            raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                            f"being concatenated: concatenating along dimension {axis} for shapes "
                            f"{', '.join(str(a.shape) for a in avals)}.")
    return lax.concatenate(arrays, axis)


def _is_plain_array(x):
    """An array (not a list) of numbers: JAX's joins take its leading axis as the sequence, without
    unstacking it (typed key arrays join element-wise through ``_keys_joined``)."""
    return (isinstance(x, (_np.ndarray, Array, Tracer)) and type(x) is not TypedScalar
            and not _dtypes.issubdtype(getattr(x, "dtype", None), _dtypes.prng_key))


def _concatenate_array(arr, axis, dtype):
    """``concatenate`` of an array's rows: one reshape moving the leading axis next to ``axis``, as JAX's."""
    arr = asarray(arr, dtype=dtype)
    shape = get_aval(arr).shape
    if len(shape) == 0 or shape[0] == 0:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return lax.reshape(arr, (get_aval(arr).size,))
    if len(shape) == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _axis(axis, len(shape) - 1)
    new = shape[1:axis + 1] + (shape[0] * shape[axis + 1],) + shape[axis + 2:]
    return lax.reshape(arr, new, (*range(1, axis + 1), 0, *range(axis + 1, len(shape))))


def _promote_dtypes(arrays):
    """Arrays converted to their common dtype (JAX's lattice); shapes untouched."""
    if len(arrays) < 2:
        return arrays
    dt, weak = _dtypes.result_type(*arrays, return_weak_type_flag=True)
    out = []
    for a in arrays:
        av = get_aval(a)
        out.append(a if (av.dtype == dt and av.weak_type == weak) else lax._convert(a, dt, weak))
    return out


def stack(arrays, axis=0, out=None, dtype=None):
    """Joins arrays of one shape along a new ``axis`` (one ``stack`` equation after the dtype promotion, as
    JAX's). Typed key arrays stack with key arrays only. Mirrors ``jax.numpy.stack``."""
    if not len(arrays):   # (as JAX's first check: a rank-0 array has no len, an empty one no rows)
        raise ValueError("Need at least one array to stack.")
    if isinstance(arrays, (Tracer, _np.ndarray)) or hasattr(arrays, "_buf"):
        # an array: its rows, as JAX joins them (a concatenate of the array with a unit axis after ``axis``)
        a = asarray(arrays)
        axis = _axis(axis, a.ndim)
        return concatenate(expand_dims(a, axis + 1), axis=axis, dtype=dtype)
    arrays = list(arrays)
    keys = _keys_joined(arrays, axis, stack) if arrays else None
    if keys is not None:
        return keys
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shapes = [get_aval(a).shape for a in arrays]
    if len(set(shapes)) != 1:
        raise ValueError(f"All input arrays must have the same shape. Got {', '.join(str(s) for s in shapes)}.")
    arrays = _promote_dtypes(arrays) if dtype is None else [asarray(a, dtype) for a in arrays]
    return lax.stack(arrays, axis=axis)


def _stack_concat(arrays):
    """``jnp.array`` of a list holding tracers: JAX joins the elements with unit-axis broadcasts and one
    concatenate (not a ``stack``)."""
    arrays = list(arrays)
    keys = _keys_joined(arrays, 0, stack) if arrays else None
    if keys is not None:
        return keys
    arrays = [asarray(a) for a in arrays]
    shapes = {get_aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {[get_aval(a).shape for a in arrays]}.")
    return concatenate([expand_dims(a, 0) for a in arrays], axis=0)
