"""Indexing: ``x[idx]`` and ``x.at[idx].set/add/mul/min/max/get``, as JAX does them.

Static ints, slices (any step), None and Ellipsis lower to ``slice``, ``rev`` and ``reshape``; a rank-0
integer array among static ints and unit-step slices to ``dynamic_slice`` (JAX's ``rewriting_take``). Integer
arrays are *advanced* indices: they broadcast together and lower to ``gather``, with
NumPy's placement of the broadcast dims (where the advanced indices stand when they are adjacent, in front
otherwise); negative indices count from the end and out-of-range reads clamp, as JAX documents. Boolean
masks must be concrete (their ``nonzero`` gives the index arrays); under ``jit`` use ``jnp.where(mask,
size=...)``. ``.at[idx]`` updates of static ints, traced integer scalars and full slices are one window
scatter with the ints as its index vector (JAX's ``_index_to_gather``: sorted, unique); other indices
scatter every indexed element. Out-of-range updates are dropped.
"""
import numpy as np

from .. import dtypes
from ..dslice import Slice
from .. import lax
from ..core import Tracer, get_aval, typed_scalar
from ..errors import NonConcreteBooleanIndexError
from ..primitives import library as _la
from ..primitives import structural as _st
from ._creation import ones_like
from ._promotion import asarray
from ._shapes import broadcast_shapes, broadcast_to, reshape
from ._ufuncs import _where_jit, add, less, power, true_divide


def _is_array_index(i):
    if isinstance(i, (Tracer,)) or hasattr(i, "_buf"):
        return True
    if isinstance(i, np.ndarray):
        return True
    if isinstance(i, (list,)):
        return True
    return False


def _expand_bool(idx):
    """Replaces concrete boolean masks by their nonzero index arrays."""
    out = []
    for i in idx:
        if _is_array_index(i):
            if isinstance(i, list):
                i = np.asarray(i)
            av = get_aval(i) if not isinstance(i, np.ndarray) else None
            dt = i.dtype if isinstance(i, np.ndarray) else av.dtype
            if dt == np.bool_:
                if isinstance(i, Tracer):
                    raise NonConcreteBooleanIndexError(i)
                nz = np.nonzero(np.asarray(i))
                out.extend(np.asarray(z, np.int32) for z in nz)
                continue
            if not (dtypes.issubdtype(dt, np.integer)):
                raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt.name}")
        elif isinstance(i, (bool, np.bool_)):
            raise NotImplementedError("indexing with a Python bool scalar is not supported")
        out.append(i)
    return tuple(out)


def _normalize(idx, shape, update=False):
    if not isinstance(idx, tuple):
        idx = (idx,)
    for pos, i in enumerate(idx):
        if isinstance(i, slice) and any(isinstance(e, Tracer) and e._concrete() is None
                                        for e in (i.start, i.stop, i.step)):
            raise IndexError(f"Slice entries must be static integers. Got {i} at position {pos}")
    idx = _expand_bool(idx)
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
    if any(isinstance(i, Slice) for i in out):
        out = _lower_slices(out, shape, update)
    return out


def _lower_slices(items, shape, update):
    """``jax.ds`` slices, as JAX 0.10.2 indexes with them. Stride 1: a read counts a negative start from the
    end and clamps it so the window fits (``lax.dynamic_slice``); an update whose window does not fit (a
    negative start included) is dropped whole. A static start becomes a Python slice, a traced one an index array. Other strides are
    supported for static in-range starts (``NotImplementedError`` otherwise: JAX's out-of-range rule for
    them is not the clamp above)."""
    out, axis = [], 0
    for it in items:
        if not isinstance(it, Slice):
            out.append(it)
            axis += it is not None
            continue
        n = shape[axis]
        axis += 1
        if it.is_dynamic_size:
            raise TypeError("jax.ds with a traced size cannot index an array: the result's shape must be static")
        size, stride = int(it.size), it.stride
        if size > n:
            raise TypeError(f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
                            f"({size},) for operand shape ({n},).")
        if stride != 1 and size > 1:
            if it.is_dynamic_start or not (0 <= int(it.start) and int(it.start) + (size - 1) * stride < n):
                raise NotImplementedError("jax.ds with a stride other than 1 needs a static start whose elements "
                                          "lie inside the axis")
            start = int(it.start)
            out.append(slice(start, start + (size - 1) * stride + 1, stride) if stride else
                       np.full(size, start, np.int32))
            continue
        if not it.is_dynamic_start:
            start = int(it.start)
            if not update:   # a read counts a negative start from the end; an update does not (it drops)
                start = start + n if start < 0 else start
                start = min(max(start, 0), n - size)
            elif not (0 <= start <= n - size):
                out.append(np.full(size, n, np.int32))   # out of range: the scatter drops every element
                continue
            out.append(slice(start, start + size))
            continue
        start = lax.convert_element_type(asarray(it.start), np.int32)
        steps = np.arange(size, dtype=np.int32)
        if not update:
            start = _where_jit(less(start, np.int32(0)), add(start, np.int32(n)), start)
            out.append(add(lax.clamp(np.int32(0), start, np.int32(n - size)), steps))
        else:
            fits = lax.bitwise_and(lax.ge(start, np.int32(0)), lax.le(start, np.int32(n - size)))
            out.append(_where_jit(fits, add(start, steps), np.int32(n)))
    return out


def _static(x, items):
    """``x`` indexed by static ints, slices and None (one item per axis plus the Nones), as JAX's
    ``_static_slice``: one ``slice``, ``rev`` for negative strides, ``squeeze`` of the int axes,
    ``expand_dims`` (a ``broadcast_in_dim``) for the Nones. An out-of-range int makes it JAX's
    ``_dynamic_slice`` instead (its indices normalized, then clamped by ``dynamic_slice``)."""
    shape = get_aval(x).shape
    dims = iter(shape)
    sized = [(it, None if it is None else next(dims)) for it in items]
    if any(it is not None and not isinstance(it, slice) and not -size <= _static_int(it) < size
           for it, size in sized) and all(not isinstance(it, slice) or it.indices(size)[2] == 1
                                          for it, size in sized):
        return _dynamic(x, sized)
    start, limit, strides, rev_dims, squeeze, newaxis = [], [], [], [], [], []
    dim = 0
    for it, size in sized:
        if it is None:
            newaxis.append(dim - len(squeeze) + len(newaxis))
            continue
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
        else:
            i = _static_int(it)
            if size == 0:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size 0")
            if i < 0:
                i += size
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
            squeeze.append(dim)
        dim += 1
    y = x
    if start and (tuple(start) != (0,) * len(shape) or tuple(limit) != shape or any(s != 1 for s in strides)):
        y = _st.slice_p.bind(y, start_indices=tuple(start), limit_indices=tuple(limit),
                             strides=None if all(s == 1 for s in strides) else tuple(strides))
    if rev_dims:
        y = _st.rev_p.bind(y, dimensions=tuple(rev_dims))
    if squeeze:
        y = _st.squeeze(y, squeeze)
    if newaxis:
        y = _st.expand_dims(y, newaxis)
    return y


def _static_int(it):
    try:
        return int(it.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{type(it).__name__}") from None


def _dynamic(x, sized):
    """JAX's ``_dynamic_slice`` for static items with an out-of-range int (``jnp.arange(3)[5]`` is 2, as a
    gather clamps): each start an int32 normalized by ``select(i < 0, i + d, i)``, one ``dynamic_slice``,
    then ``squeeze`` and ``expand_dims``."""
    starts, sizes, squeeze, newaxis = [], [], [], []
    for it, size in sized:
        if it is None:
            newaxis.append(len(starts) - len(squeeze) + len(newaxis))
            continue
        if size == 0:
            raise IndexError(f"index is out of bounds for axis {len(starts)} with size 0")
        if isinstance(it, slice):
            s, e, _ = it.indices(size)
            n = max(0, e - s)
        else:
            s, n = _static_int(it), 1
            squeeze.append(len(starts))
        i = typed_scalar(s, np.int32, False)
        starts.append(lax.select(lax.lt(i, typed_scalar(0, np.int32, False)),
                                 lax.add(i, typed_scalar(size, np.int32, False)), i))
        sizes.append(n)
    y = _la.dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(sizes))
    if squeeze:
        y = _st.squeeze(y, squeeze)
    if newaxis:
        y = _st.expand_dims(y, newaxis)
    return y


class _Plan:
    """How ``x[idx]`` splits into a static part and advanced (array) indices.

    ``static_items``: the items applied statically (advanced axes kept whole). In the static result ``y``,
    ``adv_axes`` are the axes the advanced ``arrays`` (int32, broadcast to ``bshape``, negatives wrapped,
    not clamped) index; ``orig_axes`` are those axes in ``x``. The result has ``bshape`` at ``pos``."""

    def __init__(self, shape, idx, strict=True):
        items = _normalize(idx, shape, update=not strict)
        # For updates (strict=False) static ints are advanced indices too, so out-of-range ones are
        # dropped by the scatter instead of raising.
        has_array = not strict or any(_is_array_index(i) for i in items)
        static_items, adv = [], []   # adv: (position in y, original axis, index value)
        ydim, xdim = 0, 0
        for it in items:
            if it is None:
                static_items.append(None)
                ydim += 1
                continue
            is_int = not isinstance(it, slice) and not _is_array_index(it)
            if _is_array_index(it) or (has_array and is_int):
                static_items.append(slice(None))
                adv.append((ydim, xdim, it))
                ydim += 1
            else:
                static_items.append(it)
                if isinstance(it, slice):
                    ydim += 1
            xdim += 1
        self.static_items = static_items
        self.adv_axes = [a for a, _, _ in adv]
        self.orig_axes = [d for _, d, _ in adv]
        arrays = []
        for _, d, v in adv:
            v = asarray(v) if not isinstance(v, (int, np.integer)) else v
            if isinstance(v, (int, np.integer)):
                n = shape[d]
                if not -n <= int(v) < n:
                    if strict:
                        raise IndexError(f"index {int(v)} is out of bounds for axis {d} with size {n}")
                    v = int(np.clip(int(v), -2**31, 2**31 - 1))
                    arrays.append(np.int32(v if v >= 0 else v))
                    continue
                arrays.append(np.int32(int(v) % n))
                continue
            arrays.append(v)
        self.bshape = broadcast_shapes(*[np.shape(a) if not hasattr(a, "aval") else get_aval(a).shape
                                         for a in arrays]) if arrays else ()
        self.raw = arrays
        adj = all(b == a + 1 for a, b in zip(self.adv_axes, self.adv_axes[1:]))
        self.pos = self.adv_axes[0] if (adj and self.adv_axes) else 0

    def arrays(self, shape):
        """The advanced indices as int32 arrays of ``bshape``, negatives wrapped (not clamped)."""
        out = []
        for a, d in zip(self.raw, self.orig_axes):
            a = asarray(a)
            if get_aval(a).dtype != np.int32:
                a = a.astype(np.int32)
            n = shape[d]
            # JAX's _normalize_index: select(i < 0, i + n, i), staged inline
            av = get_aval(a)
            a = lax.select(lax.lt(a, typed_scalar(0, av.dtype, av.weak_type)),
                           lax.add(a, typed_scalar(n, av.dtype, av.weak_type)), a)
            out.append(broadcast_to(a, self.bshape))
        return out


def _stack_last(arrs):
    # as JAX's _index_to_gather: each index array broadcast to a trailing index-vector axis, concatenated
    shp = get_aval(arrs[0]).shape
    cols = [lax.broadcast_in_dim(a, shp + (1,), tuple(range(len(shp)))) for a in arrs]
    return cols[0] if len(cols) == 1 else lax.concatenate(cols, len(shp))


def _gather_plan(y, plan, xshape, mode="clip", fill_value=None):
    ys = get_aval(y).shape
    adv = plan.adv_axes
    idx = _stack_last(plan.arrays(xshape))
    nb = len(plan.bshape)
    rest = [d for d in range(len(ys)) if d not in adv]
    p = plan.pos
    offset_dims = tuple(list(range(p)) + list(range(p + nb, p + nb + len(rest) - p))) if p else \
        tuple(range(nb, nb + len(rest)))
    order = sorted(range(len(adv)), key=lambda j: adv[j])
    # start_index_map follows the index vector's components; collapsed dims must be sorted
    dn = _la.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(sorted(adv)),
                                    start_index_map=tuple(adv))
    del order
    sizes = tuple(min(1, ys[d]) if d in adv else ys[d] for d in range(len(ys)))
    return _la.gather_p.bind(y, idx, dimension_numbers=dn, slice_sizes=sizes, indices_are_sorted=False,
                             unique_indices=False, mode=mode, fill_value=fill_value)


def _scalar_int_array(it):
    """A rank-0 integer array index (traced or concrete): JAX indexes with it through ``dynamic_slice``."""
    if not (isinstance(it, Tracer) or hasattr(it, "_buf") or isinstance(it, np.ndarray)):
        return False
    av = get_aval(it)
    return av.ndim == 0 and av.dtype != np.bool_ and dtypes.issubdtype(av.dtype, np.integer)


def _dynamic_take(x, items, shape):
    """JAX's ``rewriting_take`` through ``_dynamic_slice``, for items that are static ints, unit-step
    slices, None and at least one rank-0 integer array: one ``dynamic_slice`` (each start counted from the
    end when negative, then clamped, as a clip-mode gather), ``squeeze`` of the int axes and ``expand_dims``
    for the Nones. With several starts each is first made int32, as JAX does. None when it does not apply."""
    if not any(_scalar_int_array(it) for it in items):
        return None
    starts, sizes, squeeze, newaxis = [], [], [], []
    dims = iter(shape)
    for it in items:
        if it is None:
            newaxis.append(len(starts) - len(squeeze) + len(newaxis))
            continue
        n = next(dims)
        if isinstance(it, slice):
            b, e, st = it.indices(n)
            if st != 1:
                return None
            starts.append(b)
            sizes.append(max(0, e - b))
        elif _scalar_int_array(it) or (isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_))):
            if n == 0:
                return None   # the gather path raises JAX's IndexError
            squeeze.append(len(starts))
            starts.append(it)
            sizes.append(1)
        else:
            return None
    if len(starts) > 1:
        starts = [typed_scalar(int(i), np.dtype(np.int32), False) if isinstance(i, (int, np.integer))
                  else lax._convert(i, np.dtype(np.int32), False) for i in starts]
    y = _la.dynamic_slice(x, starts, sizes)
    if squeeze:
        y = _st.squeeze(y, squeeze)
    if newaxis:
        y = _st.expand_dims(y, newaxis)
    return y


def _normalize_array(a, n):
    """JAX's ``_normalize_index`` of an index array on an axis of size ``n``: ``select(a < 0, a + n, a)`` in
    the index's own dtype (unsigned indices are left as they are)."""
    av = get_aval(a)
    if dtypes.issubdtype(av.dtype, np.unsignedinteger):
        return a
    return lax.select(lax.lt(a, typed_scalar(0, av.dtype, av.weak_type)),
                      lax.add(a, typed_scalar(n, av.dtype, av.weak_type)), a)


def _gather_read(x, items, shape, mode, fill_value):
    """``x[items]`` with advanced (array) indices as JAX's ``_index_to_gather`` stages it: one ``gather``
    whose index vector holds, in axis order, the broadcast advanced indices (ints among them), the starts of
    unit-step partial slices (their sizes the slice sizes) and iota index arrays of other-step slices
    (reversed for negative steps, the result ``rev``'ed back); Nones are ``expand_dims`` of the result."""
    adv_pos = [k for k, it in enumerate(items) if it is not None and not isinstance(it, slice)]
    contiguous = all(b - a == 1 for a, b in zip(adv_pos, adv_pos[1:]))
    # the advanced indices normalized in index order (ints statically), x axes they index
    adv, adv_x = [], []
    xd = 0
    for it in items:
        if it is None:
            continue
        if not isinstance(it, slice):
            n = shape[xd]
            if _is_array_index(it):
                adv.append(_normalize_array(asarray(it), n))
            else:
                i = _static_int(it)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {xd} with size {n}")
                adv.append(asarray(i + n if i < 0 else i))
            adv_x.append(xd)
        xd += 1
    offset_dims, collapsed, start_map, gathered, gshape = [], [], [], [], []
    slice_sizes, newaxis, reversed_dims = [], [], []
    result_shape = []
    xd = yd = cy = 0
    for k, it in enumerate(items):
        if adv and k == (adv_pos[0] if contiguous else 0):
            bshape = broadcast_shapes(*[get_aval(a).shape for a in adv])
            arrs = [broadcast_to(a, bshape) for a in adv]
            start = len(gshape)
            gathered.extend((lax._convert(a, np.dtype(np.int32), False), start) for a in arrs)
            gshape += list(bshape)
            start_map.extend(adv_x)
            collapsed.extend(adv_x)
            result_shape += list(bshape)
            yd += len(bshape)
            cy += len(bshape)
        if k in adv_pos:
            xd += 1
            slice_sizes.append(1)
            continue
        if it is None:
            result_shape.append(1)
            newaxis.append(yd)
            yd += 1
            continue
        n = shape[xd]
        b, e, st = it.indices(n)
        size = max(0, (e - b + st - 1) // st) if st > 0 else max(0, (b - e + (-st) - 1) // (-st))
        result_shape.append(size)
        if st == 1:
            if size != n:
                gathered.append((typed_scalar(b, np.int32, False), len(gshape)))
                start_map.append(xd)
            slice_sizes.append(size)
            offset_dims.append(cy)
        else:
            ind = add(asarray(np.int32(b)), lax.mul(asarray(np.int32(st)), _st.iota(np.int32, size)))
            if st < 0:
                reversed_dims.append(cy)
                ind = _la.lax_rev(ind, (0,))
            slice_sizes.append(1)
            gathered.append((ind, len(gshape)))
            start_map.append(xd)
            gshape.append(size)
            collapsed.append(xd)
        cy += 1
        yd += 1
        xd += 1
    if any(d == 0 for d in result_shape):
        return lax.full(tuple(result_shape), 0, get_aval(x).dtype)
    if len(gathered) == 1:
        g = gathered[0][0]
        index = _st.expand_dims(g, (len(get_aval(g).shape),))
    else:
        last = len(gshape)
        gshape.append(1)
        index = lax.concatenate([lax.broadcast_in_dim(g, tuple(gshape), tuple(range(i, i + len(get_aval(g).shape))))
                                 for g, i in gathered], last)
    dn = _la.GatherDimensionNumbers(offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(sorted(collapsed)),
                                    start_index_map=tuple(start_map))
    y = _la.gather_p.bind(x, index, dimension_numbers=dn, slice_sizes=tuple(slice_sizes), indices_are_sorted=False,
                          unique_indices=False, mode=mode, fill_value=fill_value)
    if reversed_dims:
        y = _la.lax_rev(y, tuple(reversed_dims))
    if newaxis:
        y = _st.expand_dims(y, tuple(newaxis))
    return y


def getitem(x, idx, mode=None, fill_value=None):
    """``x[idx]``. Mirrors JAX's indexing (out-of-range array indices clamp)."""
    x = asarray(x)
    shape = get_aval(x).shape
    if mode is None or _la.GatherScatterMode.from_any(mode) in ("clip", "promise_in_bounds"):
        y = _dynamic_take(x, _normalize(idx, shape), shape)
        if y is not None:
            return y
    items = _normalize(idx, shape)
    if any(it is not None and not isinstance(it, slice) and _is_array_index(it) for it in items):
        m = _la.GatherScatterMode.from_any("promise_in_bounds" if mode is None else mode)
        return _gather_read(x, items, shape, m, fill_value)
    plan = _Plan(shape, idx)
    y = _static(x, plan.static_items)
    if not plan.adv_axes:
        return y
    # no mode: lax.gather's default, promise_in_bounds (cranax clamps, as XLA's CPU gather does), as JAX
    m = _la.GatherScatterMode.from_any("promise_in_bounds" if mode is None else mode)
    return _gather_plan(y, plan, shape, mode=m, fill_value=fill_value)


def _index_arrays(shape, idx):
    """For ``x[idx]`` with ``x`` of ``shape``: one int32 array per axis of ``x``, of the result's shape,
    giving the element of ``x`` each result element reads (advanced indices unclamped), and the result
    shape."""
    plan = _Plan(shape, idx, strict=False)
    nd = len(shape)
    outs = []
    if not plan.adv_axes:
        for d in range(nd):
            io = lax.broadcasted_iota(np.int32, shape, d)
            outs.append(_static(io, plan.static_items))
        return outs, get_aval(outs[0]).shape if outs else ()
    advs = plan.arrays(shape)
    nb = len(plan.bshape)
    p = plan.pos
    # result shape
    y_shape = _static_shape(shape, plan.static_items)
    rest = [d for d in range(len(y_shape)) if d not in plan.adv_axes]
    rest_shape = tuple(y_shape[d] for d in rest)
    res_shape = rest_shape[:p] + plan.bshape + rest_shape[p:] if p else plan.bshape + rest_shape
    rest_pos = list(range(p)) + list(range(p + nb, len(res_shape))) if p else list(range(nb, len(res_shape)))
    b_pos = list(range(p, p + nb)) if p else list(range(nb))
    for d in range(nd):
        if d in plan.orig_axes:
            a = advs[plan.orig_axes.index(d)]
            outs.append(lax.broadcast_in_dim(a, res_shape, tuple(b_pos)))
        else:
            io = lax.broadcasted_iota(np.int32, shape, d)
            yd = _static(io, plan.static_items)
            # independent of the advanced axes: take index 0 there
            items = tuple(0 if k in plan.adv_axes else slice(None) for k in range(len(y_shape)))
            if any(s == 0 for s in y_shape):
                outs.append(broadcast_to(np.int32(0), res_shape))
                continue
            yr = _static(yd, list(items))
            outs.append(lax.broadcast_in_dim(yr, res_shape, tuple(rest_pos)))
    return outs, res_shape


def _static_shape(shape, items):
    out, dim = [], 0
    for it in items:
        if it is None:
            out.append(1)
            continue
        if isinstance(it, slice):
            out.append(len(range(*it.indices(shape[dim]))))
        dim += 1
    return tuple(out)


_SCATTER = {"set": _la.scatter_p, "add": _la.scatter_add_p, "subtract": _la.scatter_sub_p,
            "multiply": _la.scatter_mul_p,
            "min": _la.scatter_min_p, "max": _la.scatter_max_p}


def _static_int_dims(idx, shape):
    """``(dims, ints)`` when ``idx`` is static ints (negatives from the end), traced integer scalars and full slices (``:``, one
    ``...``) with at least one int; else None."""
    items = idx if isinstance(idx, tuple) else (idx,)
    n_ell = sum(1 for it in items if it is Ellipsis)
    n_real = len(items) - n_ell
    if n_ell > 1 or n_real > len(shape):
        return None
    full = []
    for it in items:
        full.extend([slice(None)] * (len(shape) - n_real) if it is Ellipsis else [it])
    full.extend([slice(None)] * (len(shape) - len(full)))
    dims, ints = [], []
    for d, (n, it) in enumerate(zip(shape, full)):
        if isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            k = int(it)
            dims.append(d)
            ints.append(k + n if k < 0 else k)   # out of range stays so (the scatter drops it, as JAX's)
        elif (isinstance(it, Tracer) and it.aval.ndim == 0 and np.issubdtype(it.aval.dtype, np.integer)
              and it.aval.dtype != np.bool_):
            dims.append(d)   # a traced scalar: normalized in the scatter (as JAX's _normalize_index)
            ints.append(it)
        elif not (isinstance(it, slice) and it.start is None and it.stop is None and it.step is None):
            return None
    return (dims, ints) if dims else None


def _bind_scatter(kind, x, ind, values, dn, sorted_, unique, mode, func):
    if kind == "apply":   # JAX's lax.scatter_apply (its updates only give the shape)
        return lax.scatter_apply(x, ind, func, dn, update_shape=get_aval(values).shape, indices_are_sorted=sorted_,
                                 unique_indices=unique, mode=mode)
    return _SCATTER[kind].bind(x, ind, values, dimension_numbers=dn, indices_are_sorted=sorted_,
                               unique_indices=unique, mode=_la.GatherScatterMode.from_any(mode))


def _scatter_static(x, av, dims, ints, values, kind, mode, func=None):
    """JAX's ``_index_to_gather`` for static ints and full slices: one window scatter whose index vector
    holds the ints (``broadcast_in_dim 3:i32[]``), sorted and unique."""
    # every traced index normalized first, then the index vector built (JAX's order of equations)
    norm = []
    for d, k in zip(dims, ints):
        if isinstance(k, Tracer):   # negative counts from the end: select_n(k < 0, k, k + n)
            a = k.aval
            k = lax.select_n(lax.lt(k, typed_scalar(0, a.dtype, a.weak_type)), k,
                             lax.add(k, typed_scalar(av.shape[d], a.dtype, a.weak_type)))
            k = lax._convert(k, np.dtype(np.int32), False)
        else:
            k = typed_scalar(k, np.dtype(np.int32), False)
        norm.append(k)
    cols = [lax.broadcast_in_dim(k, (1,), ()) for k in norm]
    ind = cols[0] if len(cols) == 1 else lax.concatenate(cols, 0)
    upd_shape = tuple(n for d, n in enumerate(av.shape) if d not in dims)
    values = _update_values(values, av, upd_shape)
    dn = _la.ScatterDimensionNumbers(update_window_dims=tuple(range(len(upd_shape))),
                                     inserted_window_dims=tuple(dims), scatter_dims_to_operand_dims=tuple(dims))
    return _bind_scatter(kind, x, ind, values, dn, True, True, mode, func)


def _update_values(values, av, shape):
    """An update's values in the operand's dtype, broadcast to the indexed ``shape`` (JAX's error otherwise)."""
    values = asarray(values)
    vav = get_aval(values)
    if vav.dtype != av.dtype:
        values = lax._convert(values, av.dtype, av.weak_type)
    try:
        return broadcast_to(values, shape)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shape {vav.shape} of the update values "
                         f"and the indexed shape {shape}") from None


def scatter_update(x, idx, values, kind, mode=None, func=None):
    """``x.at[idx].<kind>(values)``: every indexed element combined with the broadcast ``values`` (``apply``:
    ``func`` applied to it)."""
    x = asarray(x)
    av = get_aval(x)
    if av.ndim:
        st = _static_int_dims(idx, av.shape)
        if st is not None:
            return _scatter_static(x, av, st[0], st[1], values, kind, mode, func)
    arrs, res_shape = _index_arrays(av.shape, idx)
    nd = av.ndim
    ind = _stack_last(arrs) if nd else None   # the index vectors first, then the values (JAX's order)
    values = _update_values(values, av, res_shape)
    if nd == 0:
        # x.at[()] of a 0-d array names its one element: the update is the elementwise combination.
        return {"set": lambda: values, "add": lambda: lax.add(x, values), "subtract": lambda: lax.sub(x, values),
                "multiply": lambda: lax.mul(x, values),
                "min": lambda: lax.min(x, values), "max": lambda: lax.max(x, values),
                "apply": lambda: func(x)}[kind]()
    dn = _la.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=tuple(range(nd)),
                                     scatter_dims_to_operand_dims=tuple(range(nd)))
    return _bind_scatter(kind, x, ind, values, dn, False, False, mode, func)


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """``x[idx]``; ``mode='fill'`` returns ``fill_value`` for out-of-range indices."""
        return getitem(self.array, self.index, mode=mode, fill_value=fill_value)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, values, "add", mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, values, "subtract", mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, values, "multiply", mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, true_divide(ones_like(values), values), "multiply", mode)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self.set(power(self.get(), values), mode=mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return scatter_update(self.array, self.index, values, "max", mode)

    def apply(self, ufunc, *, indices_are_sorted=False, unique_indices=False, mode=None):
        # JAX's: a scatter applying ``ufunc`` (lax.scatter_apply), once per time an index selects an element
        x = asarray(self.array)
        return scatter_update(x, self.index, typed_scalar(0, get_aval(x).dtype, False), "apply", mode, func=ufunc)


class _IndexUpdateHelper:
    """``x.at``: ``x.at[idx].set(v)`` and friends return updated copies. Mirrors JAX's ``.at``."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"
