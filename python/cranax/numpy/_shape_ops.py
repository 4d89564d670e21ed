"""Shape manipulation, sorting, scans and index-producing functions of ``cranax.numpy`` (built on the
basic shapes of ``_shapes``): hstack/vstack/dstack/column_stack, split/array_split, tile, repeat, pad, flip, roll, rot90, meshgrid,
tril/triu, diag/diagonal, cumsum/cumprod, sort/argsort, take/take_along_axis, where/nonzero/argwhere,
searchsorted, atleast_*d. Mirrors ``jax.numpy``."""
import builtins
import operator as _operator

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..api import jit
from ..api_vmap import vmap
from ..core import Tracer, get_aval, typed_scalar
from ..errors import ConcretizationTypeError
from ..primitives import library as _la
from ..primitives import elementwise as _ew
from ..primitives import structural as _st
from ._creation import arange, full, full_like, linspace, ones, zeros, zeros_like
from ._promotion import _promote, asarray, astype, int_
from ._reductions import _promote_integer_dtype, amax, amin, mean, sum
from ._shapes import (_axis, _is_plain_array, _promote_dtypes, _seq, broadcast_shapes, broadcast_to, concatenate, expand_dims,
                      moveaxis, ndim, ravel, reshape, stack, transpose)
from ._ufuncs import (_where_jit, add, floor_divide, greater_equal, isnan, less, less_equal, logical_and,
                      logical_not, logical_or, maximum, minimum, not_equal, remainder, subtract)
from ._ufuncs import round as _round

__all__ = ["hstack", "vstack", "dstack", "column_stack", "atleast_1d", "atleast_2d",
           "atleast_3d", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat", "pad", "flip",
           "fliplr", "flipud", "roll", "rot90", "meshgrid", "tril", "triu", "diag", "diagonal", "diagflat",
           "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "sort", "argsort", "take",
           "take_along_axis", "where", "nonzero", "flatnonzero", "argwhere", "searchsorted", "append", "tril_indices",
           "triu_indices", "diag_indices", "put_along_axis", "count_nonzero", "indices", "ix_"]


# ------------------------------------------------------------------------------------------------ joining

# JAX's atleast_*d are jitted (jaxprs show ``jit[name=atleast_2d ...]``, one call for all the arrays):
# missing dimensions are added by expand_dims (a broadcast_in_dim), never by a reshape.
def _atleast_body(n, where):
    def body(*arys):
        out = []
        for a in arys:
            a = asarray(a)
            if a.ndim < n:
                a = expand_dims(a, where[a.ndim])
            out.append(a)
        return out[0] if len(out) == 1 else out
    body.__name__ = f"atleast_{n}d"
    return jit(body)


# per rank below n, the axes expand_dims adds (numpy's placement: a vector is a row, then a (1, n, 1) slab)
_atleast_jits = {1: _atleast_body(1, {0: (0,)}),
                 2: _atleast_body(2, {0: (0, 1), 1: (0,)}),
                 3: _atleast_body(3, {0: (0, 1, 2), 1: (0, 2), 2: (2,)})}


def _atleast(n, arys):
    # lists and tuples become arrays here (the jit takes arrays and scalars)
    return _atleast_jits[n](*[asarray(a) if isinstance(a, (list, tuple)) else a for a in arys])


def atleast_1d(*arys):
    """Each input with at least one dimension (a list when several). Mirrors ``jax.numpy.atleast_1d``."""
    return _atleast(1, arys)


def atleast_2d(*arys):
    """Each input with at least two dimensions (a list when several). Mirrors ``jax.numpy.atleast_2d``."""
    return _atleast(2, arys)


def atleast_3d(*arys):
    """Each input with at least three dimensions (a list when several). Mirrors ``jax.numpy.atleast_3d``."""
    return _atleast(3, arys)


def _rows_mapped(fun, tup):
    """``vmap(fun)(tup)``: JAX's stacking functions map over an array's rows rather than unstack it."""
    return vmap(fun)(tup)


def hstack(tup, dtype=None):
    if _is_plain_array(tup):
        arrs = _rows_mapped(atleast_1d, tup)
        nd = arrs.ndim - 1
    else:
        arrs = [atleast_1d(a) for a in _seq(tup)]
        nd = arrs[0].ndim
    return concatenate(arrs, 0 if nd == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    arrs = _rows_mapped(atleast_2d, tup) if _is_plain_array(tup) else [atleast_2d(a) for a in _seq(tup)]
    return concatenate(arrs, 0, dtype=dtype)


def dstack(tup, dtype=None):
    arrs = _rows_mapped(atleast_3d, tup) if _is_plain_array(tup) else [atleast_3d(a) for a in _seq(tup)]
    return concatenate(arrs, 2, dtype=dtype)


def column_stack(tup):
    # as JAX's: a vector becomes a column by atleast_2d and a transpose
    if _is_plain_array(tup):
        arrs = _rows_mapped(lambda x: transpose(atleast_2d(x)), tup) if tup.ndim < 3 else tup
        return concatenate(arrs, 1)
    arrs = []
    for a in _seq(tup):
        a = asarray(a)
        arrs.append(transpose(atleast_2d(a)) if a.ndim < 2 else a)
    return concatenate(arrs, 1)


def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# ------------------------------------------------------------------------------------------------ splitting

def _split(name, ary, indices_or_sections, axis, equal):
    # one ``split`` equation with NumPy int64 sizes, as JAX's (``sizes=(np.int64(2), ...)``); indices that
    # go backwards or past the end give negative sizes, which lax.split refuses (as JAX's)
    ary = asarray(ary)
    axis = _operator.index(axis)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (list, tuple)) or (
            getattr(indices_or_sections, "ndim", 0) > 0 and hasattr(indices_or_sections, "shape")):
        bounds = [0] + [_operator.index(i) for i in indices_or_sections] + [n]
        sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:])]
    else:
        k = _operator.index(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        q, r = divmod(n, k)
        if r and equal:
            raise ValueError(f"array split does not result in an equal division: rest is {r}")
        sizes = [q + 1] * r + [q] * (k - r)
    return list(lax.split(ary, [_np.int64(s) for s in sizes], axis=axis))


def split(ary, indices_or_sections, axis=0):
    """Splits into equal sections (an int) or at indices. Mirrors ``jax.numpy.split``."""
    return _split("split", ary, indices_or_sections, axis, True)


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis, False)


def hsplit(ary, indices_or_sections):
    a = asarray(ary)
    return split(a, indices_or_sections, axis=0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=2)


# ------------------------------------------------------------------------------------------------ tile / repeat

def tile(A, reps):
    """``A`` repeated ``reps`` times per axis: one ``lax.tile`` after leading 1s (as JAX). Mirrors
    ``jax.numpy.tile``."""
    A = asarray(A)
    try:
        reps = tuple(iter(reps))
    except TypeError:
        reps = (reps,)
    reps = tuple(_operator.index(r) for r in reps)
    reps = (1,) * (A.ndim - len(reps)) + reps
    if len(reps) > A.ndim:
        A = lax.expand_dims(A, tuple(range(len(reps) - A.ndim)))
    return lax.tile(A, reps)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element repeated ``repeats`` times along ``axis`` (flattened when None). Array ``repeats``
    must be concrete unless ``total_repeat_length`` is given. Mirrors ``jax.numpy.repeat``."""
    a = asarray(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(repeats, (int, _np.integer)) or (isinstance(repeats, _np.ndarray) and repeats.ndim == 0):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"repeats may not contain negative values, got {r}")
        shape = a.shape
        b = lax.broadcast_in_dim(a, shape[:axis + 1] + (r,) + shape[axis + 1:],
                                 tuple(range(axis + 1)) + tuple(range(axis + 2, a.ndim + 1)))
        out = reshape(b, shape[:axis] + (n * r,) + shape[axis + 1:])
        if total_repeat_length is not None:
            out = _fit_length(out, axis, total_repeat_length)
        return out
    if isinstance(repeats, Tracer) and total_repeat_length is None:
        raise ConcretizationTypeError(
            repeats, "jnp.repeat with traced array repeats needs a static total_repeat_length (the output shape "
            "must be known at trace time).")
    if total_repeat_length is None:
        reps = _np.asarray(repeats if not hasattr(repeats, "_buf") else _np.asarray(repeats)).astype(_np.int64)
        reps = _np.broadcast_to(reps, (n,))
        idx = _np.repeat(_np.arange(n, dtype=_np.int32), reps)
        return take(a, idx, axis=axis, mode="clip")
    # traced repeats: output position j reads element searchsorted(cumsum(repeats), j, 'right')
    reps = broadcast_to(asarray(repeats).astype(_np.int32), (n,))
    ends = cumsum(reps)
    j = arange(total_repeat_length, dtype=_np.int32)
    src = sum(less_equal(ends[None, :], j[:, None]).astype(_np.int32), axis=1)
    return take(a, src, axis=axis, mode="clip")


def _fit_length(x, axis, length):
    n = x.shape[axis]
    if length <= n:
        return _la.slice_in_dim(x, 0, length, 1, axis)
    pads = [(0, 0)] * x.ndim
    pads[axis] = (0, length - n)
    return pad(x, pads, mode="edge") if n else zeros(x.shape[:axis] + (length,) + x.shape[axis + 1:], x.dtype)


# ------------------------------------------------------------------------------------------------ pad

def _broadcast_to_pairs(nvals, nd, name):
    """JAX's ``_broadcast_to_pairs``: ``(before, after)`` per dimension, as NumPy ints (JAX's jaxprs print
    the padding config they make as ``np.int64(...)``)."""
    try:
        nvals = _np.asarray(nvals)
    except ValueError as e:
        if "inhomogeneous shape" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
        raise
    if nvals.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {nvals}")
    if nvals.shape == (nd, 2):
        return tuple((v[0], v[1]) for v in nvals)
    if nvals.shape == (1, 2):
        return tuple((nvals[0, 0], nvals[0, 1]) for _ in range(nd))
    if nvals.shape == (2,):
        return tuple((nvals[0], nvals[1]) for _ in range(nd))
    if nvals.shape == (1,):
        return tuple((nvals[0], nvals[0]) for _ in range(nd))
    if nvals.shape == ():
        v = nvals.flat[0]
        return tuple((v, v) for _ in range(nd))
    raise ValueError(f"jnp.pad: {name} with {nd=} has unsupported shape {nvals.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


_PAD_KWARGS = {"empty": [], "edge": [], "wrap": [], "constant": ["constant_values"], "linear_ramp": ["end_values"],
               "maximum": ["stat_length"], "mean": ["stat_length"], "median": ["stat_length"],
               "minimum": ["stat_length"], "reflect": ["reflect_type"], "symmetric": ["reflect_type"]}


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads ``array``: ``mode`` is ``constant`` (``constant_values``), ``empty``, ``edge``, ``wrap``,
    ``reflect`` or ``symmetric`` (``reflect_type`` even or odd), ``linear_ramp`` (``end_values``),
    ``maximum``/``minimum``/``mean``/``median`` (``stat_length``), as one jitted call (printed
    ``jit[name=_pad]``), or a callable ``mode(row, pad_width, iaxis, kwargs)`` that returns the row (zero
    padded) filled in, vmapped along each axis. Mirrors ``jax.numpy.pad``."""
    array = asarray(array)
    pad_width = _broadcast_to_pairs(pad_width, array.ndim, "pad_width")
    if pad_width and not all(_np.issubdtype(_np.asarray(p).dtype, _np.integer) for p in pad_width):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_func(array, pad_width, mode, **kwargs)
    try:
        unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    except (KeyError, TypeError):
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    return _pad_jit(array, pad_width, mode, kwargs.get("constant_values", 0), kwargs.get("stat_length"),
                    kwargs.get("end_values", 0), kwargs.get("reflect_type", "even"))


def _pad(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
    nd = array.ndim
    if nd == 0:
        return array
    if any(lo < 0 or hi < 0 for lo, hi in pad_width):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(array, pad_width, asarray(constant_values))
    if mode == "empty":
        return _pad_constant(array, pad_width, asarray(0))
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, pad_width, _broadcast_to_pairs(end_values, nd, "end_values"))
    if mode in ("maximum", "minimum", "mean", "median"):
        if stat_length is not None:
            stat_length = _broadcast_to_pairs(stat_length, nd, "stat_length")
        return _pad_stats(array, pad_width, stat_length, mode)
    for i in range(nd):
        if array.shape[i] == 0:
            if pad_width[i][0] > 0 or pad_width[i][1] > 0:
                raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
            continue
        if mode == "edge":
            array = _pad_edge_axis(array, pad_width[i], i)
        elif mode == "wrap":
            array = _pad_wrap_axis(array, pad_width[i], i)
        elif pad_width[i][0] != 0 or pad_width[i][1] != 0:
            n = array.shape[i]   # both sides reflect the original axis (the before side grows the array)
            array = _pad_reflect_side(array, n, pad_width[i][0], i, mode, reflect_type, True)
            array = _pad_reflect_side(array, n, pad_width[i][1], i, mode, reflect_type, False)
    return array


# JAX's jnp.pad is this jitted _pad, the pad widths and mode static (printed ``jit[name=_pad]``)
_pad_jit = jit(_pad, static_argnums=(1, 2, 4, 5, 6))


# Functions of modules that import this one (``_statistics``: median; ``_functional``: apply_along_axis),
# registered there when they load: jnp.pad's stat and callable modes use them without an import circle.
_later = {}


def _pad_linear_ramp(array, pad_width, end_values):
    """JAX's: per axis, ``linspace(end_value, edge, n, endpoint=False)`` before and (flipped) after."""
    weak = get_aval(array).weak_type
    for axis in range(array.ndim):
        edge_before = _la.slice_in_dim(array, 0, 1, axis=axis)
        edge_after = _la.slice_in_dim(array, -1, None, axis=axis)
        ramps = []
        for k, edge in ((0, edge_before), (1, edge_after)):
            r = linspace(end_values[axis][k], lax.squeeze(edge, (axis,)), num=pad_width[axis][k], endpoint=False,
                         dtype=array.dtype, axis=axis)
            ramps.append(lax._convert(r, array.dtype, weak))
        array = lax.concatenate([ramps[0], array, flip(ramps[1], axis)], dimension=axis)
    return array


def _pad_stats(array, pad_width, stat_length, mode):
    """JAX's: per axis, the statistic of the whole axis (or of its first/last ``stat_length`` elements,
    limited to the axis length) repeated on each side; integer arrays take the rounded statistic."""
    stat_func = {"maximum": amax, "minimum": amin, "mean": mean, "median": _later["median"]}[mode]
    weak = get_aval(array).weak_type
    for i in range(array.ndim):
        if stat_length is None:
            before = stat_func(array, axis=i, keepdims=True)
            after = before
        else:
            n = array.shape[i]
            lb, la = stat_length[i]
            if lb == 0 or la == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            lb, la = builtins.min(lb, n), builtins.min(la, n)
            before = stat_func(_la.slice_in_dim(array, 0, lb, axis=i), axis=i, keepdims=True)
            after = stat_func(_la.slice_in_dim(array, -la, None, axis=i), axis=i, keepdims=True)
        if _np.issubdtype(array.dtype, _np.integer):
            before, after = _round(before), _round(after)
        before = lax._convert(before, array.dtype, weak)
        after = lax._convert(after, array.dtype, weak)
        array = lax.concatenate([repeat(before, pad_width[i][0], axis=i), array,
                                 repeat(after, pad_width[i][1], axis=i)], dimension=i)
    return array


def _pad_func(array, pad_width, func, **kwargs):
    """A callable mode, as JAX's: the zero-padded array, then ``func(row, pad_width[axis], axis, kwargs)``
    mapped (``apply_along_axis``, i.e. vmap) over the rows along each axis."""
    padded = _pad_constant(array, pad_width, asarray(0))
    for axis in range(padded.ndim):
        padded = _later["apply_along_axis"](func, axis, padded, pad_width[axis], axis, kwargs)
    return padded


def _pad_constant(array, pad_width, constant_values):
    nd = array.ndim
    constant_values = lax._convert(constant_values, array.dtype, get_aval(array).weak_type)
    cv_nd = constant_values.ndim
    if cv_nd == 0:
        return lax.pad(array, constant_values, [(lo, hi, 0) for lo, hi in pad_width])
    if cv_nd == 1:
        if constant_values.shape[-1] == 1:
            return lax.pad(array, squeeze(constant_values), [(lo, hi, 0) for lo, hi in pad_width])
        if constant_values.shape[-1] != 2:
            raise ValueError(f"jnp.pad: constant_values has unsupported shape {constant_values.shape}. If the "
                             "shape is 1D or 2D, the last dimension must be of size 1 or 2.")
    constant_values = broadcast_to(constant_values, (nd, 2))
    for i in range(nd):
        widths = [(0, 0, 0)] * nd
        if pad_width[i][0] != 0:
            widths[i] = (pad_width[i][0], 0, 0)
            array = lax.pad(array, constant_values[i, 0], widths)
        if pad_width[i][1] != 0:
            widths[i] = (0, pad_width[i][1], 0)
            array = lax.pad(array, constant_values[i, 1], widths)
    return array


def _pad_edge_axis(array, widths, i):
    n = array.shape[i]
    before = repeat(_la.slice_in_dim(array, 0, 1, axis=i), widths[0], axis=i)
    after = repeat(_la.slice_in_dim(array, n - 1, n, axis=i), widths[1], axis=i)
    return lax.concatenate([before, array, after], dimension=i)


def _pad_wrap_axis(array, widths, i):
    size = array.shape[i]
    left_repeats, left_rem = builtins.divmod(widths[0], size)
    right_repeats, right_rem = builtins.divmod(widths[1], size)
    parts = []
    if left_rem > 0:
        parts.append(_la.slice_in_dim(array, size - left_rem, size, axis=i))
    parts += (left_repeats + right_repeats + 1) * [array]
    if right_rem > 0:
        parts.append(_la.slice_in_dim(array, 0, right_rem, axis=i))
    return lax.concatenate(parts, dimension=i)


def _pad_reflect_side(array, axis_size, padding, i, mode, reflect_type, before):
    """JAX's ``build_padding``: reflected (flipped) slices of at most the axis size, concatenated on."""
    edge = _la.slice_in_dim(array, 0, 1, axis=i) if before else _la.slice_in_dim(array, -1, None, axis=i)
    offset = 1 if (mode == "reflect" and axis_size > 1) else 0
    while padding > 0:
        curr = builtins.min(padding, axis_size - offset)
        padding -= curr
        if before:
            start, stop = offset, offset + curr
        else:
            start, stop = -(curr + offset), (None if (mode == "symmetric" or axis_size == 1) else -1)
        x = flip(_la.slice_in_dim(array, start, stop, axis=i), axis=i)
        if reflect_type == "odd":
            x = 2 * edge - x
            if axis_size > 1:
                edge = _la.slice_in_dim(x, 0, 1, axis=i) if before else _la.slice_in_dim(x, -1, None, axis=i)
        array = lax.concatenate([x, array] if before else [array, x], dimension=i)
    return array


# ------------------------------------------------------------------------------------------------ flips / rolls

def _flip(m, axes):
    return _st.rev_p.bind(m, dimensions=axes)


# JAX's flip is one jitted call (printed ``jit[name=_flip ...]``), its axes static
_flip_jit = jit(_flip, static_argnames=("axes",))


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (all axes by default), as one jitted call. Mirrors ``jax.numpy.flip``."""
    m = asarray(m)
    if axis is None:
        axes = tuple(range(m.ndim))
    else:
        axes = tuple(_axis(a, m.ndim) for a in ((axis,) if isinstance(axis, (int, _np.integer)) else axis))
    if not axes:
        return m
    return _flip_jit(m, axes=axes)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Elements shifted by ``shift`` along ``axis`` (flattened when None), wrapping around. Traced shifts
    are allowed. Mirrors ``jax.numpy.roll``."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, (int, _np.integer)) or ndim(shift) == 0 else tuple(shift)
    if len(shifts) != len(axes):
        shifts = tuple(shifts) * len(axes) if len(shifts) == 1 else shifts
    if all(isinstance(s, (int, _np.integer)) or isinstance(s, _np.ndarray) for s in shifts):
        # static shifts: one jitted call, as JAX's _roll_static
        return _roll_static(a, tuple(int(s) for s in shifts), tuple(_axis(ax, a.ndim) for ax in axes))
    for s, ax in zip(shifts, axes):
        ax = _axis(ax, a.ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        if isinstance(s, (int, _np.integer)) or (isinstance(s, _np.ndarray)):
            s = int(s) % n
            if s:
                a = concatenate([_la.slice_in_dim(a, n - s, n, 1, ax), _la.slice_in_dim(a, 0, n - s, 1, ax)], ax)
        else:
            s = asarray(s).astype(_np.int32)
            start = remainder(subtract(n, remainder(s, n)), n)
            a2 = concatenate([a, a], ax)
            a = _la.dynamic_slice_in_dim(a2, start, n, ax)
    return a


def _roll_static_body(a, shifts, axes):
    for s, ax in zip(shifts, axes):
        n = a.shape[ax]
        if n == 0:
            continue
        i = (-s) % n   # a zero shift still concatenates the whole and an empty slice (as JAX's)
        a = concatenate([_la.slice_in_dim(a, i, n, 1, ax), _la.slice_in_dim(a, 0, i, 1, ax)], ax)
    return a


_roll_static_body.__name__ = "_roll_static"
_roll_static = jit(_roll_static_body, static_argnums=(1, 2))


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    a0, a1 = _axis(axes[0], m.ndim), _axis(axes[1], m.ndim)
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors. Mirrors ``jax.numpy.meshgrid``."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    xs = [ravel(x) for x in xi]
    n = len(xs)
    if n == 0:
        return []
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        d = i
        if indexing == "xy" and n >= 2 and i < 2:
            d = 1 - i
        if sparse:
            s = [1] * n
            s[d] = x.shape[0]
            out.append(reshape(x, tuple(s)))
        else:
            out.append(lax.broadcast_in_dim(x, tuple(shape), (d,)))
    return out


def indices(dimensions, dtype=None, sparse=False):
    dt = _dtypes.canonicalize_dtype(dtype or int_)
    dims = tuple(int(d) for d in dimensions)
    out = []
    for i, n in enumerate(dims):
        if sparse:
            s = [1] * len(dims)
            s[i] = n
            out.append(reshape(arange(n, dtype=dt), tuple(s)))
        else:
            out.append(lax.broadcasted_iota(dt, dims, i))
    return tuple(out) if sparse else stack(out) if out else zeros((0,) + dims, dt)


def ix_(*args):
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        s = [1] * n
        s[i] = a.shape[0]
        out.append(reshape(a, tuple(s)))
    return tuple(out)


# ------------------------------------------------------------------------------------------------ triangles / diagonals

def _tri_mask(shape, k, upper):
    rows = lax.broadcasted_iota(_np.int32, shape, len(shape) - 2)
    cols = lax.broadcasted_iota(_np.int32, shape, len(shape) - 1)
    d = lax.sub(cols, rows)
    return lax.ge(d, _np.int32(k)) if upper else lax.le(d, _np.int32(k))


def _tri_bool(shape, k):
    """JAX's ``tri`` mask of the last two axes of ``shape``: ``iota0 + k >= iota1`` (broadcast over the
    leading axes)."""
    n, m = shape[-2:]
    rows = lax.broadcasted_iota(_np.int32, (n, m), 0)
    mask = lax.ge(lax.add(rows, typed_scalar(k, _np.dtype(_np.int32), True)),
                  lax.broadcasted_iota(_np.int32, (n, m), 1))
    if len(shape) > 2:
        mask = lax.broadcast(mask, tuple(shape[:-2]))
    return mask


def _tril(m, k):
    return _ew.select(_tri_bool(m.shape, k), m, zeros_like(m))


def _triu(m, k):
    return _ew.select(_tri_bool(m.shape, k - 1), zeros_like(m), m)


_tril.__name__, _triu.__name__ = "tril", "triu"   # the jit equations' names, as JAX's
_tril_jit = jit(_tril, static_argnames=("k",))
_triu_jit = jit(_triu, static_argnames=("k",))


def tril(m, k=0):
    """Lower triangle of the last two axes (elements above diagonal ``k`` zeroed), one jitted call (printed
    ``jit[name=tril]``, JAX's ``iota + k >= iota`` mask). Mirrors ``jax.numpy.tril``."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Argument to jax.numpy.tril must be at least 2D")
    return _tril_jit(m, k=int(k))


def triu(m, k=0):
    """Upper triangle of the last two axes (elements below diagonal ``k`` zeroed), one jitted call (printed
    ``jit[name=triu]``). Mirrors ``jax.numpy.triu``."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Argument to jax.numpy.triu must be at least 2D")
    return _triu_jit(m, k=int(k))


def tril_indices(n, k=0, m=None):
    r, c = _np.tril_indices(n, k, m)
    return asarray(r.astype(_np.int32)), asarray(c.astype(_np.int32))


def triu_indices(n, k=0, m=None):
    r, c = _np.triu_indices(n, k, m)
    return asarray(r.astype(_np.int32)), asarray(c.astype(_np.int32))


def diag_indices(n, ndim=2):
    i = arange(n, dtype=_np.int32)
    return (i,) * ndim


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the planes (``axis1``, ``axis2``), as a last axis. Mirrors
    ``jax.numpy.diagonal``."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    a1, a2 = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 must not be equal")
    a = moveaxis(a, (a1, a2), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    k = int(offset)
    L = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    lead = a.shape[:-2]
    if L == 0:
        return zeros(lead + (0,), a.dtype)
    flat = reshape(a, lead + (n * m,))
    start = k if k >= 0 else -k * m
    nd = len(lead) + 1
    return _st.slice_p.bind(flat, start_indices=(0,) * len(lead) + (start,),
                            limit_indices=lead + (start + (L - 1) * (m + 1) + 1,),
                            strides=None if m + 1 == 1 else (1,) * len(lead) + (m + 1,)) if nd else flat


def diag(v, k=0):
    """The diagonal of a 2-D array, or a 2-D array with ``v`` on diagonal ``k``. Mirrors
    ``jax.numpy.diag``."""
    v = asarray(v)
    k = int(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = v.shape[0] + builtins.abs(k)
    shape = (n, n)
    rows = lax.broadcasted_iota(_np.int32, shape, 0)
    cols = lax.broadcasted_iota(_np.int32, shape, 1)
    on = lax.eq(lax.sub(cols, rows), _np.int32(k))
    # value at (i, j) on the diagonal is v[min(i, j)]
    src = minimum(rows, cols)
    vals = take(v, ravel(src), mode="clip").reshape(shape)
    return where(on, vals, zeros((), v.dtype))


def diagflat(v, k=0):
    return diag(ravel(v), k)


# ------------------------------------------------------------------------------------------------ scans

def _cum(name, prim, bool_to_int=True):
    def body(a, axis, dtype):
        if axis is None:
            a = ravel(a)
            axis = 0
        axis = _axis(axis, builtins.max(a.ndim, 1)) if a.ndim else 0
        if a.ndim == 0:
            a = reshape(a, (1,))
        if dtype is not None:
            a = astype(a, dtype)
        elif bool_to_int and _promote_integer_dtype(a.dtype) != a.dtype:
            a = astype(a, _promote_integer_dtype(a.dtype))
        a = _ew.strip_weak(a)   # JAX converts to the dtype, strong
        return prim.bind(a, axis=axis, reverse=False)

    body.__name__ = name
    # JAX's cumulative reductions are jitted (printed ``jit[name=cumsum ...]``), axis and dtype static
    body_jit = jit(body, static_argnames=("axis", "dtype"))

    def op(a, axis=None, dtype=None, out=None):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        (a,) = _promote(name, a)
        return body_jit(asarray(a), axis=None if axis is None else int(axis),
                        dtype=None if dtype is None else _np.dtype(dtype))
    op.__name__ = name
    op.__doc__ = (f"Cumulative {name[3:]} along ``axis`` (flattened when None), as one jitted call. "
                  f"Mirrors ``jax.numpy.{name}``.")
    return op


cumsum = _cum("cumsum", _la.cumsum_p)
cumprod = _cum("cumprod", _la.cumprod_p)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be specified for arrays of more than one dimension")
        axis = 0
    out = cumsum(x, axis, dtype)
    if include_initial:
        ax = _axis(axis, x.ndim)
        z = zeros(out.shape[:ax] + (1,) + out.shape[ax + 1:], out.dtype)
        out = concatenate([z, out], ax)
    return out


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("axis must be specified for arrays of more than one dimension")
        axis = 0
    out = cumprod(x, axis, dtype)
    if include_initial:
        ax = _axis(axis, x.ndim)
        o = ones(out.shape[:ax] + (1,) + out.shape[ax + 1:], out.dtype)
        out = concatenate([o, out], ax)
    return out


# ------------------------------------------------------------------------------------------------ sorting

def _sort(a, axis, descending):
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = _axis(axis, a.ndim)
    out = _la.sort_p.bind(a, dimension=axis, is_stable=True, num_keys=1)[0]
    return _st.rev_p.bind(out, dimensions=(axis,)) if descending else out


def _argsort(a, axis, descending):
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = _axis(axis, a.ndim)
    iota = lax.broadcasted_iota(_dtypes.canonicalize_dtype(int_), a.shape, axis)
    if descending:
        # as JAX: sort the reversed operand with reversed indices (stable among equal keys), then reverse
        a, iota = _st.rev_p.bind(a, dimensions=(axis,)), _st.rev_p.bind(iota, dimensions=(axis,))
        _, idx = _la.sort_p.bind(a, iota, dimension=axis, is_stable=True, num_keys=1)
        return _st.rev_p.bind(idx, dimensions=(axis,))
    _, idx = _la.sort_p.bind(a, iota, dimension=axis, is_stable=True, num_keys=1)
    return idx


_sort.__name__, _argsort.__name__ = "sort", "argsort"
# JAX's sort and argsort are jitted (printed ``jit[name=sort ...]``), axis and order static
_sort_jit = jit(_sort, static_argnames=("axis", "descending"))
_argsort_jit = jit(_argsort, static_argnames=("axis", "descending"))


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy along ``axis`` (flattened when None); NaNs last; one jitted call. Mirrors ``jax.numpy.sort``."""
    (a,) = _promote("sort", a)
    return _sort_jit(asarray(a), axis=None if axis is None else int(axis), descending=bool(descending))


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Indices that sort ``a`` along ``axis`` (stable); one jitted call. Mirrors ``jax.numpy.argsort``."""
    (a,) = _promote("argsort", a)
    return _argsort_jit(asarray(a), axis=None if axis is None else int(axis), descending=bool(descending))


_SEARCHSORTED_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")


def _canonicalize_float_for_sort(x):
    # -0 as +0 and every NaN as +NaN, so the total-order comparisons below order them as jnp.sort does
    if not _dtypes.issubdtype(x.dtype, _np.floating):
        return x
    x = lax.select(lax.eq(x, _np.zeros((), x.dtype)), lax.full_like(x, 0), x)
    return lax.select(lax.ne(x, x), lax.full_like(x, _np.nan), x)


def _sort_before(op, x, y):
    """``x`` before ``y`` (``op``: ``lt_to_p`` or ``le_to_p``) in ``jnp.sort``'s order. A complex value is the
    key pair (real, imag), compared lexicographically as JAX's sort comparators do."""
    if not _dtypes.issubdtype(x.dtype, _np.complexfloating):
        return op.bind(_canonicalize_float_for_sort(x), _canonicalize_float_for_sort(y))
    xr, xi, yr, yi = (_canonicalize_float_for_sort(f(v)) for v in (x, y) for f in (lax.real, lax.imag))
    return lax.bitwise_or(lax.lt_to_p.bind(xr, yr), lax.bitwise_and(lax.eq_to_p.bind(xr, yr), op.bind(xi, yi)))


def _searchsorted_scan(sorted_arr, query, side, dtype, unrolled):
    # a binary search for every query at once: ceil(log2(n + 1)) halvings of [low, high), so memory stays
    # O(queries) where compare_all needs n x queries
    (n,) = sorted_arr.shape
    if n == 0:
        return lax.full(query.shape, 0, dtype)
    go_left_p = lax.le_to_p if side == "left" else lax.lt_to_p
    udt = _np.uint64 if _np.dtype(dtype).itemsize == 8 else _np.uint32

    def body(state, _):
        low, high = state
        mid = low + (high - low) // 2
        go_left = _sort_before(go_left_p, query, sorted_arr[mid])
        return (lax.select(go_left, low, mid), lax.select(go_left, mid, high)), ()

    levels = int(_np.ceil(_np.log2(n + 1)))
    init = (lax.full(query.shape, 0, udt), lax.full(query.shape, n, udt))
    (_, high), _ = lax.scan(body, init, (), length=levels, unroll=levels if unrolled else 1)
    return high.astype(dtype)


_searchsorted_scan.__name__ = "_searchsorted_scan_impl"
_searchsorted_scan_jit = jit(_searchsorted_scan, static_argnames=("side", "dtype", "unrolled"))


def _searchsorted_compare_all(sorted_arr, query, side, dtype):
    # every query against every element: n x queries booleans, the fastest for a short ``a``
    shape = query.shape + sorted_arr.shape
    a = broadcast_to(sorted_arr, shape)
    vb = broadcast_to(expand_dims(query, -1), shape)
    before = _sort_before(lax.lt_to_p if side == "left" else lax.le_to_p, a, vb)
    return sum(before.astype(dtype), axis=-1, dtype=dtype)


def _searchsorted(a, v, side, method, dtype):
    if method == "compare_all":
        return _searchsorted_compare_all(a, v, side, dtype)
    # 'sort' (a cosort, for accelerators) gives the same indices as the binary search, which cranax runs
    return _searchsorted_scan_jit(a, v, side=side, dtype=dtype, unrolled=method == "scan_unrolled")


_searchsorted.__name__ = "searchsorted"
_searchsorted_jit = jit(_searchsorted, static_argnames=("side", "method", "dtype"))


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of ``v`` (any shape) in the 1-D ``a``, sorted ascending (NaNs last, as ``jnp.sort``
    puts them): int32 indices of ``v``'s shape (int64 when ``a`` is longer than int32 can count). ``side``
    'left' gives the first suitable place, 'right' the last; ``sorter`` indexes ``a`` into sorted order.
    ``method``: 'scan' (default; a binary search, O(len(v)) memory), 'scan_unrolled', 'sort' (both the same
    search here) or 'compare_all' (every pair; fastest for a short ``a``). Raises ValueError for an ``a``
    that is not 1-D, an unknown ``side`` or ``method``. Mirrors ``jax.numpy.searchsorted``."""
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = _promote_dtypes((a, v))
    if sorter is not None:
        a = take(a, sorter)
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _SEARCHSORTED_METHODS:
        raise ValueError(f"invalid argument method={method!r}, expected one of {list(_SEARCHSORTED_METHODS)}")
    n = a.shape[0]
    dtype = _np.dtype(_np.int32 if n <= _np.iinfo(_np.int32).max else _dtypes.canonicalize_dtype(_np.int64))
    return _searchsorted_jit(a, v, side=side, method=method, dtype=dtype)


# ------------------------------------------------------------------------------------------------ take

def _normalize_idx(idx, n, mode):
    idx = asarray(idx)
    if not _dtypes.issubdtype(idx.dtype, _np.integer):
        raise TypeError(f"indices must be integers, got {idx.dtype.name}")
    if idx.dtype != _np.int32:
        idx = idx.astype(_np.int32)
    if mode == "wrap":
        return remainder(idx, _np.int32(builtins.max(n, 1)))
    return where(less(idx, 0), add(idx, _np.int32(n)), idx)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None). ``mode``: ``fill`` (default;
    negative indices count from the end, out-of-range reads give NaN / the dtype's minimum / ``fill_value``),
    ``clip`` (clamps the index as given: -1 reads element 0, as JAX) or ``wrap`` (modulo the length);
    ``raise`` raises NotImplementedError and other modes ValueError. Staged as JAX stages it: one jitted
    ``_take`` call (``make_jaxpr`` prints ``jit[name=_take ...]``). Mirrors ``jax.numpy.take``."""
    return _take_jit(a, indices, None if axis is None else _operator.index(axis), out, mode,
                     unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, fill_value=fill_value)


def _take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
          fill_value=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a, indices = asarray(a), asarray(indices)
    if axis is None:
        a = ravel(a)
        axis = 0
    else:
        axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    if mode is None or mode == "fill":
        gm = "fill"
        indices = _where_jit(less(indices, 0), add(indices, n), indices)   # gather takes no negative index
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = remainder(indices, typed_scalar(n, indices.dtype, False))
        gm = "promise_in_bounds"
    elif mode == "clip":
        gm = "clip"
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    if not _dtypes.issubdtype(indices.dtype, _np.integer):
        raise ValueError("indices must have an integer type")
    ishape = indices.shape
    if n == 0:
        if indices.size:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if indices.size == 0:
        return full_like(a, 0, shape=a.shape[:axis] + ishape + a.shape[axis + 1:])
    offset = tuple(range(axis)) + tuple(range(axis + len(ishape), a.ndim - 1 + len(ishape)))
    dn = _la.GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=(axis,), start_index_map=(axis,))
    sizes = a.shape[:axis] + (1,) + a.shape[axis + 1:]
    return _la.gather(a, indices[..., None], dn, sizes, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=gm, fill_value=fill_value)


_take_jit = jit(_take, static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted", "fill_value"))


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """``arr`` indexed along ``axis`` by ``indices`` (which broadcasts against ``arr`` elsewhere).
    Out-of-range indices fill (NaN / the dtype's minimum) unless ``mode='clip'``. Staged as JAX stages it: one
    jitted ``take_along_axis`` call holding a single gather whose non-``axis`` dims are batching dims (or whole
    windows where ``indices`` has size 1). Mirrors ``jax.numpy.take_along_axis``."""
    if not isinstance(arr, Tracer):
        arr = asarray(arr)
    if not isinstance(indices, Tracer):
        indices = asarray(indices)
    return _take_along_axis_jit(arr, indices, axis=None if axis is None else _operator.index(axis), mode=mode,
                                fill_value=fill_value)


def _take_along_axis(a, indices, axis, mode, fill_value):
    idx_shape = tuple(indices.shape)
    if not _dtypes.issubdtype(indices.dtype, _np.integer):
        raise TypeError(f"take_along_axis indices must be of integer type, got {indices.dtype}")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}")
        a = ravel(a)
        axis = 0
    rank = a.ndim
    if rank != indices.ndim:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{indices.ndim} vs. {rank}")
    axis = _axis(axis, rank)
    n = a.shape[axis]
    arr_shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    out_shape = broadcast_shapes(idx_shape, arr_shape)
    if n == 0:
        return full(out_shape, 0, a.dtype)
    wrap = mode != "promise_in_bounds"
    if wrap:
        # JAX widens the index to the axis size's int type, then counts negative indices from the end
        indices = _ew.convert_element_type(indices, _np.int64 if n > _np.iinfo(_np.int32).max else _np.int32)
        indices = lax.select(indices < 0, lax.add(indices, _np.asarray(n, indices.dtype)[()]), indices)
    index_dims = [d for d, s in enumerate(idx_shape) if d == axis or s != 1]
    gidx = lax.reshape(indices, tuple(out_shape[d] for d in index_dims) + (1,))
    slice_sizes, offset_dims, start_index_map, collapsed, obatch, ibatch, squeeze_dims = [], [], [], [], [], [], []
    new_d = j = 0
    for d in range(rank):
        if d == axis:
            slice_sizes.append(1)
            start_index_map.append(new_d)
            collapsed.append(new_d)
            new_d += 1
            j += 1
        elif idx_shape[d] == 1:
            # the whole of arr's axis is one window: no iota index needed
            offset_dims.append(d)
            slice_sizes.append(arr_shape[d])
            new_d += 1
        elif arr_shape[d] == 1:
            squeeze_dims.append(d)
            j += 1
        else:
            # equal sizes: matching elements pair up as batching dims
            slice_sizes.append(0 if arr_shape[d] == 0 else 1)
            obatch.append(new_d)
            ibatch.append(j)
            new_d += 1
            j += 1
    if squeeze_dims:
        a = lax.squeeze(a, squeeze_dims)
    dn = _la.GatherDimensionNumbers(offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
                                    start_index_map=tuple(start_index_map), operand_batching_dims=tuple(obatch),
                                    start_indices_batching_dims=tuple(ibatch))
    return _la.gather(a, gidx, dn, tuple(slice_sizes), mode="fill" if mode is None else mode,
                      fill_value=fill_value)


_take_along_axis.__name__ = _take_along_axis.__qualname__ = "take_along_axis"
_take_along_axis_jit = jit(_take_along_axis, static_argnames=("axis", "mode", "fill_value"))


def put_along_axis(arr, indices, values, axis, inplace=False, *, mode=None):
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in place (inplace=False only)")
    arr = asarray(arr)
    nd = arr.ndim
    axis = _axis(axis, nd)
    idx = asarray(indices)
    shape = broadcast_shapes(idx.shape, tuple(1 if d == axis else arr.shape[d] for d in range(nd)))
    idx = broadcast_to(idx, shape)
    full = tuple(idx if d == axis else lax.broadcasted_iota(_np.int32, shape, d) for d in range(nd))
    return arr.at[full].set(values, mode=mode)


# ------------------------------------------------------------------------------------------------ nonzero

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` else ``y``, elementwise with broadcasting (both sides are computed; use
    ``lax.cond`` to run only one). One argument: ``nonzero(condition, size=, fill_value=)``. Mirrors
    ``jax.numpy.where``."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to jax.numpy.where,"
                         " got {} and {}.".format(x, y))
    return _where_jit(condition, x, y)


def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(asarray(a), 0), axis=axis, keepdims=keepdims)


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per axis. Under ``jit`` a static ``size`` is needed:
    the first ``size`` indices are returned, padded with ``fill_value`` (0). Mirrors
    ``jax.numpy.nonzero``."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
                         "instead.")
    if size is None:
        if isinstance(a, Tracer):
            # JAX's text: it fails concretizing the count of nonzeros (an int32[])
            raise ConcretizationTypeError(
                a, "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero within "
                "JAX transformations.", what="traced array with shape int32[]")
        size = int(_np.count_nonzero(_np.asarray(a)))
    size = int(size)
    dt = _dtypes.canonicalize_dtype(int_)
    flat = ravel(not_equal(a, zeros((), a.dtype)))
    n = flat.shape[0]
    mask = flat.astype(_np.int32)
    pos = lax.sub(cumsum(mask, dtype=_np.int32), _np.int32(1))   # int32 under x64 too
    # each nonzero element writes its flat index at its rank; others (and ranks >= size) are dropped
    target = where(flat, pos, _np.int32(size))
    ids = lax.iota(_np.int32, n)
    if fill_value is None:
        fills = [0] * a.ndim
    elif isinstance(fill_value, (tuple, list)):
        fills = list(fill_value)
        if len(fills) != a.ndim:
            raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; got {fill_value}")
    else:
        fills = [fill_value] * a.ndim
    base = full((size,), -1, _np.int32)
    dn = _la.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    flat_idx = _la.scatter_p.bind(base, reshape(target, (n, 1)), ids, dimension_numbers=dn,
                                  indices_are_sorted=True, unique_indices=False, mode="fill")
    valid = greater_equal(flat_idx, 0)
    out = []
    rem = maximum(flat_idx, 0)
    strides = _np.cumprod((1,) + a.shape[::-1])[:-1][::-1]
    for d in range(a.ndim):
        coord = floor_divide(rem, _np.int32(strides[d])) if strides[d] != 1 else rem
        if d > 0:
            coord = remainder(coord, _np.int32(a.shape[d])) if a.shape[d] else coord
        elif a.shape[0]:
            coord = remainder(coord, _np.int32(a.shape[0]))
        out.append(where(valid, coord, asarray(fills[d]).astype(_np.int32)).astype(dt))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = asarray(a)
    if a.ndim == 0:
        a = reshape(a, (1,))
        r = nonzero(a, size=size, fill_value=fill_value)
        return reshape(r[0], (-1, 0)) if False else zeros((r[0].shape[0], 0), r[0].dtype)
    r = nonzero(a, size=size, fill_value=fill_value)
    return stack(r, axis=1) if r else r



# ---- partitions, complex sorting and nested blocks (issue 22)

def _no_complex_partition(a, name):
    # as JAX 0.10.2 (its partitions go through top_k, which takes no complex operand)
    if _dtypes.issubdtype(_dtypes.dtype(a), _np.complexfloating):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")


def _partition_prep(a, kth, axis):
    a = asarray(a)
    if a.ndim == 0:
        raise TypeError("partition requires an array with at least one dimension")
    if isinstance(kth, (Tracer,)) or not _np.ndim(kth) == 0:
        raise TypeError("kth must be a static integer")
    axis = int(axis) % a.ndim
    n = a.shape[axis]
    kth = int(kth)
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds {n}")
    return moveaxis(a, axis, -1), kth % n, axis


def partition(a, kth, axis=-1):
    """``a`` along ``axis`` with the ``kth + 1`` smallest values first (in ascending order, the kth in
    place) and the rest after (in descending order), as JAX lays them out (NumPy leaves both sides
    unordered). Mirrors ``jax.numpy.partition``."""
    _no_complex_partition(a, "partition")
    arr, kth, axis = _partition_prep(a, kth, axis)
    n = arr.shape[-1]
    bottom = lax.neg(lax.top_k(lax.neg(arr), kth + 1)[0])
    top = lax.top_k(arr, n - kth - 1)[0]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """The indices that ``partition`` would place: those of the ``kth + 1`` smallest (ascending by value)
    then the others in index order, as JAX returns them. Mirrors ``jax.numpy.argpartition``."""
    _no_complex_partition(a, "argpartition")
    arr, kth, axis = _partition_prep(a, kth, axis)
    n = arr.shape[-1]
    bottom = lax.top_k(lax.neg(arr), kth + 1)[1]
    # the rest by a proxy (ones where not chosen) whose stable top_k keeps index order
    chosen = sum(expand_dims(bottom, -1) == arange(n, dtype=_np.int32), axis=-2) > 0
    proxy = where(chosen, 0, 1).astype(_np.int32)
    top = lax.top_k(proxy, n - kth - 1)[1]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, axis)


def sort_complex(a):
    """``a`` sorted along its last axis by real part, then imaginary part, as a complex array (complex64,
    or complex128 from 64-bit input). Mirrors ``jax.numpy.sort_complex``."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("sort_complex requires an array with at least one dimension")
    dt = a.dtype
    cdt = _np.dtype(_np.complex128) if dt.itemsize == 8 and dt.kind != "c" or dt == _np.complex128 \
        else _np.dtype(_np.complex64)
    cdt = _dtypes.canonicalize_dtype(cdt)
    if dt.kind == "c":
        re_, im_ = lax.real(a), lax.imag(a)
        iota = lax.broadcasted_iota(_np.int32, a.shape, a.ndim - 1)
        _, _, idx = lax.sort((re_, im_, iota), dimension=a.ndim - 1, num_keys=2)
        return take_along_axis(a, idx, axis=-1).astype(cdt)
    return sort(a, axis=-1).astype(cdt)


def _block(xs):
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts = [_block(x) for x in xs]
        depths = [d for _, d in parts]
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = builtins.max(depths[0], builtins.max(p.ndim for p, _ in parts))
        arrs = [reshape(p, (1,) * (rank - p.ndim) + p.shape) for p, _ in parts]
        return concatenate(arrs, axis=-depths[0]), depths[0] + 1
    return asarray(xs), 1


def block(arrays):
    """The array assembled from nested lists of blocks: the innermost lists join along the last axis, the
    next along the one before, ... (blocks gain leading unit axes up to the depth). ValueError for tuples,
    empty lists and mismatched depths. Mirrors ``jax.numpy.block``."""
    out, _ = _block(arrays)
    return out

__all__ += ['partition', 'argpartition', 'sort_complex', 'block']
