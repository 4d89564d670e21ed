"""Static indexing: ints, slices (any step), None, Ellipsis. Lowers to ``slice``, ``rev``, ``squeeze`` and
``reshape``. Array indices (gather) arrive with the indexing issue."""
import numpy as np

from ..core import Tracer, get_aval
from ..primitives import structural as _st


def _normalize(idx, shape):
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"Too many indices: {len(shape)}-dimensional array indexed with {n_real} regular "
                         f"indices.")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (len(shape) - n_real))
        else:
            out.append(i)
    if n_ell == 0:
        out.extend([slice(None)] * (len(shape) - n_real))
    return out


def getitem(x, idx):
    """``x[idx]`` for static ints, slices, None and Ellipsis. Mirrors JAX's indexing."""
    from . import asarray, reshape
    from .. import lax
    x = asarray(x)
    shape = get_aval(x).shape
    items = _normalize(idx, shape)
    start, limit, strides, rev_dims, out_shape = [], [], [], [], []
    dim = 0
    for it in items:
        if it is None:
            out_shape.append(1)
            continue
        size = shape[dim]
        if isinstance(it, (Tracer,)) or hasattr(it, "_buf") and get_aval(it).ndim > 0:
            raise NotImplementedError("indexing with arrays (gather) arrives with the indexing issue")
        if isinstance(it, slice):
            s, e, st = it.indices(size)
            if st > 0:
                n = max(0, (e - s + st - 1) // st)
                start.append(s)
                limit.append(s + (n - 1) * st + 1 if n else s)
                strides.append(st)
            else:
                n = max(0, (s - e + (-st) - 1) // (-st))
                lo = s + (n - 1) * st if n else 0
                start.append(lo)
                limit.append(s + 1 if n else 0)
                strides.append(-st)
                rev_dims.append(dim)
            out_shape.append(n)
        else:
            try:
                i = int(it.__index__())
            except (AttributeError, TypeError):
                raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                                f"{type(it).__name__}") from None
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {size}")
            i %= size
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
        dim += 1
    y = x
    if start and (tuple(start) != (0,) * len(shape) or tuple(limit) != shape or any(s != 1 for s in strides)):
        y = _st.slice_p.bind(y, start_indices=tuple(start), limit_indices=tuple(limit),
                             strides=None if all(s == 1 for s in strides) else tuple(strides))
    if rev_dims:
        y = _st.rev_p.bind(y, dimensions=tuple(rev_dims))
    if tuple(out_shape) != get_aval(y).shape:
        y = reshape(y, tuple(out_shape)) if get_aval(y).size or True else y
    return y
