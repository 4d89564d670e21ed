"""Index helpers: ``r_``, ``c_``, ``s_``, ``index_exp``, ``mgrid``, ``ogrid``, ``ravel_multi_index``,
``unravel_index``, ``diag_indices_from``, ``tril_indices_from``, ``triu_indices_from``, ``fill_diagonal``.
Mirrors ``jax.numpy``."""
import numpy as _np

from .. import dtypes as _dtypes
from ._creation import arange, linspace, ones
from ._promotion import asarray, astype
from ._shape_ops import nonzero
from ._shape_ops import diag_indices, tril_indices, triu_indices, where, meshgrid
from ._shapes import concatenate, expand_dims, stack, reshape
from ._ufuncs import divmod, floor_divide, logical_or, remainder

__all__ = ["r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ravel_multi_index", "unravel_index",
           "diag_indices_from", "tril_indices_from", "triu_indices_from", "fill_diagonal"]


def _range_from_slice(s):
    """A slice's values: ``start:stop:step``, or ``num`` points with a complex step (``5j``)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


class _AxisConcatenator:
    """``r_[...]``/``c_[...]``: slices become ranges, scalars 1-D arrays, joined along ``axis``; a leading
    string ``"axis,ndmin,trans1d"`` or ``"r"``/``"c"`` sets them, as NumPy's."""

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        items = list(key)
        matrix = None
        if items and isinstance(items[0], str):
            d = items.pop(0)
            if d in ("r", "c"):
                matrix = d
            else:
                vals = [int(v) for v in d.split(",")]
                axis = vals[0]
                if len(vals) > 1:
                    ndmin = vals[1]
                if len(vals) > 2:
                    trans1d = vals[2]
        arrs = []
        for it in items:
            if isinstance(it, slice):
                a = _range_from_slice(it)
            elif isinstance(it, str):
                raise ValueError(f"string directive must be placed at the beginning, got {it!r}")
            else:
                a = asarray(it)
                if a.ndim == 0:
                    a = reshape(a, (1,))
            if ndmin > a.ndim:
                k = ndmin - a.ndim
                shape = a.shape
                if trans1d < 0:
                    trans1d_ = trans1d + ndmin
                else:
                    trans1d_ = trans1d
                new = [1] * ndmin
                # the original axes go where trans1d says (NumPy's rule: -1 puts them last)
                start = trans1d_ - (a.ndim - 1) if trans1d_ >= a.ndim - 1 else 0
                start = max(0, min(start, k))
                for i, dsz in enumerate(shape):
                    new[start + i] = dsz
                a = reshape(a, tuple(new))
            arrs.append(a)
        if not arrs:
            return asarray([])
        dt = _dtypes.result_type(*arrs)
        out = concatenate([astype(a, dt) for a in arrs], axis=axis)
        if matrix == "c" and out.ndim == 1:
            out = reshape(out, (-1, 1))
        elif matrix == "r" and out.ndim == 1:
            out = reshape(out, (1, -1))
        return out

    def __len__(self):
        return 0


r_ = _AxisConcatenator(0, 1, -1, "r_")
c_ = _AxisConcatenator(-1, 2, 0, "c_")


class _IndexExpression:
    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


class _Grid:
    """``mgrid[...]`` (dense) / ``ogrid[...]`` (open, broadcastable) over slices, ``ij`` indexing."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _range_from_slice(key)
        ranges = [_range_from_slice(k) for k in key]
        dt = _dtypes.result_type(*ranges)
        ranges = [astype(r, dt) for r in ranges]
        grids = meshgrid(*ranges, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else stack(grids, 0)


mgrid = _Grid(False)
ogrid = _Grid(True)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of the index tuple ``multi_index`` into an array of shape ``dims``; ``mode`` is
    ``"wrap"``, ``"clip"`` or ``"raise"`` (checked only for concrete indices). Mirrors
    ``jax.numpy.ravel_multi_index``."""
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    dims = tuple(int(d) for d in dims)
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    idx = [asarray(i) for i in multi_index]
    for i in idx:
        if not _dtypes.issubdtype(i.dtype, _np.integer):
            raise TypeError(f"only int indices permitted, got {i.dtype}")
    if mode == "raise":
        for i, d in zip(idx, dims):
            try:
                v = _np.asarray(i)
            except Exception:  # a tracer: its values are unknown
                raise ValueError("mode='raise' requires concrete indices; use mode='wrap' or 'clip' under jit")
            if v.size and (v.min() < 0 or v.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [remainder(i, d) for i, d in zip(idx, dims)]
    elif mode == "clip":
        idx = [where(i < 0, 0, where(i >= d, d - 1, i)) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    strides = _np.cumprod((1,) + (dims[::-1][:-1] if order == "C" else dims[:-1]))
    strides = strides[::-1] if order == "C" else strides
    out = 0
    for i, s in zip(idx, strides):
        out = out + i * int(s)
    return asarray(out)


def unravel_index(indices, shape):
    """The index tuple of flat ``indices`` into an array of ``shape``: negative indices count from the end,
    out-of-range ones clip to the nearest valid index. Staged as JAX's: a jitted ``divmod`` per dimension
    (last first), then the clipping by the final quotient. Mirrors ``jax.numpy.unravel_index``."""
    indices = asarray(indices)
    if not _dtypes.issubdtype(indices.dtype, _np.integer):
        raise TypeError(f"unravel_index: indices must be integers, got {indices.dtype}")
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(_np.ndim(d) != 0 for d in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [0] * len(shape)
    for i, d in reversed(list(enumerate(shape))):
        indices, out[i] = divmod(indices, d)
    # the quotient left after the first dimension: > 0 past the end, < -1 before the start
    past = indices > 0
    before = asarray(False) if _dtypes.issubdtype(indices.dtype, _np.unsignedinteger) else indices < -1
    return tuple(where(past, d - 1, where(before, 0, o)) for d, o in zip(shape, out))


def diag_indices_from(arr):
    """``diag_indices(n, arr.ndim)`` for a square ``arr``. Mirrors ``jax.numpy.diag_indices_from``."""
    arr = asarray(arr)
    if arr.ndim < 2 or len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], arr.ndim)


def tril_indices_from(arr, k=0):
    """``tril_indices`` of a 2-D ``arr``'s shape. Mirrors ``jax.numpy.tril_indices_from``."""
    arr = asarray(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(arr.shape[0], k, arr.shape[1])


def triu_indices_from(arr, k=0):
    """``triu_indices`` of a 2-D ``arr``'s shape. Mirrors ``jax.numpy.triu_indices_from``."""
    arr = asarray(arr)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(arr.shape[0], k, arr.shape[1])


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of ``a`` with its main diagonal set to ``val`` (cycled). JAX arrays are immutable, so
    ``inplace=False`` is required, as in JAX. Mirrors ``jax.numpy.fill_diagonal``."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, so fill_diagonal cannot be performed in-place. "
                                  "use inplace=False")
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    if a.ndim == 2 and wrap and a.shape[0] > a.shape[1]:
        step = a.shape[1] + 1
        flat_n = a.shape[0] * a.shape[1]
        pos = _np.arange(0, flat_n, step)
    else:
        pos = _np.ravel_multi_index(tuple(_np.arange(n) for _ in range(a.ndim)), a.shape)
    v = reshape(asarray(val, a.dtype), (-1,))
    reps = -(-len(pos) // max(1, v.shape[0]))
    v = concatenate([v] * reps)[:len(pos)] if v.shape[0] else v
    flat = reshape(a, (-1,)).at[asarray(pos)].set(v)
    return reshape(flat, a.shape)



def mask_indices(n, mask_func, k=0, *, size=None):
    """``(rows, cols)`` of the nonzero entries of ``mask_func(ones((n, n)), k)`` (e.g. ``triu``), in row
    order; pass ``size`` under ``jit``. Mirrors ``jax.numpy.mask_indices``."""
    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j

__all__ += ['mask_indices']
