"""Library primitives (run by the core as calls into Rust routines, not fused loops; ``rust/ir/library.rs``):
``dot_general``, ``concatenate``, ``dynamic_slice``, ``dynamic_update_slice``, ``gather``, ``scatter``
(set/add/mul/min/max), ``sort`` and the cumulative reductions ``cumsum``/``cumprod``/``cummax``/``cummin``;
``pad`` (defined in ``structural``) is lowered to the core's pad here. Each primitive has its lax wrapper,
abstract eval, wire params, jvp/transpose rules and batching rule in this file. Mirrors ``jax.lax``'s
primitives of the same names.
"""
from collections import namedtuple

import numpy as np

from .. import _core, core, dtypes
from ..core import ShapedArray, get_aval, typed_scalar
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.partial_eval import trace_to_jaxpr
from ..jaxpr import ShownParam
from . import elementwise as _ew
from . import state as _state
from . import structural as _st
from .precision import canonicalize_precision, check_cpu_algorithm
from ..sharding import NamedSharding, PartitionSpec, get_abstract_mesh
from .standard import standard_primitive

# ----------------------------------------------------------------------------------------------- helpers



def _ints(xs):
    return tuple(int(x) for x in xs)


def _dt_name(dt):
    return None if dt is None else dtypes.short_name(np.dtype(dt))


def _weak(*avals):
    return all(a.weak_type for a in avals)


# ----------------------------------------------------------------------------------------------- dot_general

_DNUMS = {}   # dimension_numbers as given (when hashable) -> canonical form: eager products skip re-parsing


def _canon_dnums(dimension_numbers):
    try:
        return _DNUMS[dimension_numbers]
    except (KeyError, TypeError):
        pass
    out = _parse_dnums(dimension_numbers)
    try:
        if len(_DNUMS) < 256:
            _DNUMS[dimension_numbers] = out
    except TypeError:   # lists: not cached
        pass
    return out


def _parse_dnums(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(f"dot_general dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                        f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None
    return (_ints(lc), _ints(rc)), (_ints(lb), _ints(rb))


def _dot_general_abstract(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                          out_sharding=None):
    (lc, rc), (lb, rb) = _canon_dnums(dimension_numbers)
    # JAX 0.10.2's checks, in its order and with its messages.
    for side, av, c, bt in (("lhs", lhs, lc, lb), ("rhs", rhs, rc, rb)):
        if any(not 0 <= d < av.ndim for d in c + bt):
            raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative and less than the "
                            f"number of axes of the {side} value, got {side}_batch of {bt} and {side}_contracting "
                            f"of {c} for {side} of rank {av.ndim}")
    if len(lb) != len(rb):
        raise TypeError(f"dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
                        f"lhs_batch {lb} and rhs_batch {rb}.")
    for side, c, bt in (("lhs", lc, lb), ("rhs", rc, rb)):
        if len(set(bt)) != len(bt):
            raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got {side}_batch {bt}.")
    for side, c, bt in (("lhs", lc, lb), ("rhs", rc, rb)):
        if len(set(c)) != len(c):
            raise TypeError(f"dot_general requires {side} contracting dimensions to be distinct, got "
                            f"{side}_contracting {c}.")
    for side, c, bt in (("lhs", lc, lb), ("rhs", rc, rb)):
        if set(c) & set(bt):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from contracting "
                            f"dimensions, got {side}_batch {bt} and {side}_contracting {c}.")
    lbs, rbs = tuple(lhs.shape[d] for d in lb), tuple(rhs.shape[d] for d in rb)
    if lbs != rbs:
        raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
                        f"shape, got {lbs} and {rbs}.")
    lcs, rcs = tuple(lhs.shape[d] for d in lc), tuple(rhs.shape[d] for d in rc)
    if lcs != rcs:
        raise TypeError(f"dot_general requires contracting dimensions to have the same shape, got {lcs} and "
                        f"{rcs}.")
    if preferred_element_type is None:
        if lhs.dtype != rhs.dtype:
            raise TypeError(f"dot_general requires operands of the same dtype, got {lhs.dtype.name} and "
                            f"{rhs.dtype.name}; promote them first or pass preferred_element_type.")
        out_dt = lhs.dtype
    else:
        out_dt = np.dtype(preferred_element_type)
    lfree = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    shape = lbs + tuple(lhs.shape[d] for d in lfree) + tuple(rhs.shape[d] for d in rfree)
    return ShapedArray(shape, out_dt, _weak(lhs, rhs))


def _dot_general_wire(eqn):
    if _core.get_default_device().platform == "cpu":   # (JAX checks when it lowers for the CPU)
        check_cpu_algorithm(eqn.params.get("precision"))
    (lc, rc), (lb, rb) = _canon_dnums(eqn.params["dimension_numbers"])
    return {"lhs_contracting": list(lc), "rhs_contracting": list(rc), "lhs_batch": list(lb),
            "rhs_batch": list(rb), "preferred_element_type": _dt_name(eqn.params.get("preferred_element_type"))}


dot_general_p = standard_primitive("dot_general", _dot_general_abstract, wire=_dot_general_wire)


def _dot_general_pp(eqn):
    (lc, rc), (lb, rb) = _canon_dnums(eqn.params["dimension_numbers"])
    dn = f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"
    pet = eqn.params.get("preferred_element_type")

    class _Raw:
        def __init__(self, s):
            self.s = s

        def __repr__(self):
            return self.s
    # As JAX 0.10.2: None-valued params and out_sharding are not printed.
    out = [("dimension_numbers", _Raw(dn))]
    if eqn.params.get("precision") is not None:
        prec = eqn.params["precision"]
        out.append(("precision", _Raw(str(prec) if not isinstance(prec, tuple) else
                                      "(" + ", ".join(map(repr, prec)) + ")")))
    if pet is not None:
        out.append(("preferred_element_type", _Raw(np.dtype(pet).name)))
    return out


dot_general_p.pp_params = _dot_general_pp


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    """General contraction: ``dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``; the output has the batch dims, then lhs's free dims, then rhs's free dims. Mirrors
    ``jax.lax.dot_general``."""
    lhs, rhs = _ew._as_operand(lhs), _ew._as_operand(rhs)
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    # (out_sharding: the result's sharding in types, JAX's explicit sharding; values do not depend on it)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=_canon_dnums(dimension_numbers),
                              precision=canonicalize_precision(precision), preferred_element_type=pet,
                              out_sharding=_out_sharding(out_sharding))


def _out_sharding(s):
    """A NamedSharding for ``out_sharding`` (a spec means one over ``set_mesh``'s mesh), None for none."""
    if s is None:
        return s
    core.sharded_types_seen = True   # (primitives' avals now go through the sharding rules)
    if hasattr(s, "mesh"):
        return s
    if isinstance(s, PartitionSpec):
        return NamedSharding(get_abstract_mesh(), s)
    raise TypeError(f"dot_general out_sharding must be a NamedSharding or a PartitionSpec, got {s!r}")


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products of rank ≤ 2 operands. Mirrors ``jax.lax.dot``."""
    la, ra = get_aval(lhs), get_aval(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(f"dot only supports rank 1 or 2 operands, got shapes {la.shape} and {ra.shape}")
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _remaining(n, *removed):
    rm = set(d for r in removed for d in r)
    return tuple(d for d in range(n) if d not in rm)


def _dot_transpose_lhs(ct, x_aval, y, dimension_numbers, precision, preferred_element_type, swap_ans=False):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    y_aval = get_aval(y)
    x_kept = _remaining(x_aval.ndim, x_contract, x_batch)
    y_kept = _remaining(y_aval.ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    x_contract_sorted_by_y = tuple(np.take(np.asarray(x_contract, int), np.argsort(np.asarray(y_contract, int)))) \
        if x_contract else ()
    out_axes = tuple(int(i) for i in np.argsort(list(x_batch) + list(x_kept) + list(x_contract_sorted_by_y)))
    ct_dt = get_aval(ct).dtype
    if get_aval(y).dtype != ct_dt:
        y = _ew.convert_element_type(y, ct_dt)
    # The forward equation's precision and preferred_element_type carry over, as in JAX's rule.
    r = dot_general(ct, y, dims, precision, preferred_element_type)
    if out_axes != tuple(range(len(out_axes))):
        r = _st.transpose(r, out_axes)
    if get_aval(r).dtype != x_aval.dtype:
        r = _ew.convert_element_type(r, x_aval.dtype)
    return r


def _dot_general_transpose(ct, x, y, dimension_numbers, precision=None, preferred_element_type=None,
                           out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out = [None, None]
    if _ad.is_undefined(x):
        out[0] = _ad.Zero(x.aval) if _ad.is_zero(ct) else _dot_transpose_lhs(
            ct, x.aval, y, dimension_numbers, precision, preferred_element_type)
    if _ad.is_undefined(y):
        swapped = ((rc, lc), (rb, lb))
        out[1] = _ad.Zero(y.aval) if _ad.is_zero(ct) else _dot_transpose_lhs(
            ct, y.aval, x, swapped, precision, preferred_element_type, swap_ans=True)
    return out


def _dot_general_jvp(primals, tangents, **params):
    x, y = primals
    tx, ty = tangents
    ans = dot_general_p.bind(x, y, **params)
    out = None
    if not _ad.is_zero(tx):
        out = dot_general_p.bind(tx, y, **params)
    if not _ad.is_zero(ty):
        t = dot_general_p.bind(x, ty, **params)
        out = t if out is None else _ad.add_tangents(out, t)
    if out is None:
        return ans, _ad.Zero(get_aval(ans))
    return ans, out


def _dot_general_batch(vals, dims, dimension_numbers, **params):
    (x, y), (bx, by) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    sh = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    if bx is not None and by is not None:
        x, y = _batching.moveaxis(x, bx, 0), _batching.moveaxis(y, by, 0)
        dn = ((sh(lc), sh(rc)), ((0,) + sh(lb), (0,) + sh(rb)))
        return dot_general_p.bind(x, y, dimension_numbers=dn, **params), 0
    if bx is not None:
        x = _batching.moveaxis(x, bx, 0)
        dn = ((sh(lc), rc), (sh(lb), rb))
        return dot_general_p.bind(x, y, dimension_numbers=dn, **params), len(lb)
    y = _batching.moveaxis(y, by, 0)
    dn = ((lc, sh(rc)), (lb, sh(rb)))
    n_lfree = get_aval(x).ndim - len(lc) - len(lb)
    return dot_general_p.bind(x, y, dimension_numbers=dn, **params), len(lb) + n_lfree


# ----------------------------------------------------------------------------------------------- concatenate

def _concatenate_abstract(*operands, dimension):
    if not operands:
        raise TypeError("concatenate requires a non-empty sequence of operands")
    a0 = operands[0]
    if a0.ndim == 0:
        raise TypeError("Cannot concatenate scalars (zero-dimensional arrays)")
    if not 0 <= dimension < a0.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(o.shape) for o in operands)}")
    for o in operands[1:]:
        if o.dtype != a0.dtype:
            raise TypeError(f"concatenate requires arguments of the same dtype, got "
                            f"{', '.join(o.dtype.name for o in operands)}")
        if o.ndim != a0.ndim or any(o.shape[i] != a0.shape[i] for i in range(a0.ndim) if i != dimension):
            raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                            f"being concatenated: concatenating along dimension {dimension} for shapes "
                            f"{', '.join(str(o.shape) for o in operands)}.")
    shape = list(a0.shape)
    shape[dimension] = sum(o.shape[dimension] for o in operands)
    return ShapedArray(tuple(shape), a0.dtype, _weak(*operands))


concatenate_p = standard_primitive("concatenate", _concatenate_abstract,
                                   wire=lambda eqn: {"dimension": int(eqn.params["dimension"])})


def concatenate(operands, dimension):
    """Joins arrays of one dtype along ``dimension``. Mirrors ``jax.lax.concatenate``."""
    operands = [_ew._as_operand(o) for o in operands]
    if not operands:
        raise ValueError("concatenate requires a non-empty sequences of arrays")   # JAX's words
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concatenate_transpose(ct, *operands, dimension):
    out = []
    start = 0
    for o in operands:
        av = o.aval if _ad.is_undefined(o) else get_aval(o)
        n = av.shape[dimension]
        if _ad.is_undefined(o):
            if _ad.is_zero(ct):
                out.append(_ad.Zero(av))
            else:
                lo = [0] * av.ndim
                hi = list(av.shape)
                lo[dimension], hi[dimension] = start, start + n
                out.append(lax_slice(ct, lo, hi))
        else:
            out.append(None)
        start += n
    return out


def _concatenate_batch(vals, dims, dimension):
    size = _batching.axis_size_of(vals, dims)
    # as JAX's rule: an unbatched operand through ``lax.broadcast`` (Python-int dims, unlike bdim_at_front's)
    ops = [_batching.broadcast_batched(v, size, 0) if d is None else _batching.moveaxis(v, d, 0)
           for v, d in zip(vals, dims)]
    return concatenate_p.bind(*ops, dimension=dimension + 1), 0


# ----------------------------------------------------------------------------------------------- pad (core lowering)

# ``pad`` is defined in ``structural`` (with its rules); the core runs it natively, so drop the inlined
# expansion into broadcasts and slices.
_st.pad_p.inline_jaxpr = None


# ----------------------------------------------------------------------------------------------- dynamic slices

def _dynamic_slice_abstract(operand, *start_indices, slice_sizes):
    if len(start_indices) != operand.ndim:
        raise TypeError(f"dynamic_slice: len(start_indices) must equal the operand's rank, got "
                        f"{len(start_indices)} indices for shape {operand.shape}")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"dynamic_slice: slice_sizes must have one entry per dimension, got {slice_sizes} for "
                        f"shape {operand.shape}")
    for i in start_indices:
        if i.ndim != 0 or not dtypes.issubdtype(i.dtype, np.integer):
            raise TypeError(f"dynamic_slice start indices must be integer scalars, got {i.str_short()}")
    for s, d in zip(slice_sizes, operand.shape):
        if not 0 <= s <= d:
            raise TypeError(f"dynamic_slice: slice_sizes must be between 0 and the operand's shape, got "
                            f"slice_sizes {slice_sizes} for shape {operand.shape}")
    return ShapedArray(tuple(slice_sizes), operand.dtype, operand.weak_type)


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_abstract,
                                     wire=lambda eqn: {"slice_sizes": list(eqn.params["slice_sizes"])})


def _dus_abstract(operand, update, *start_indices):
    if len(start_indices) != operand.ndim:
        raise TypeError(f"dynamic_update_slice: len(start_indices) must equal the operand's rank, got "
                        f"{len(start_indices)} indices for shape {operand.shape}")
    if update.dtype != operand.dtype:
        raise TypeError(f"dynamic_update_slice update and operand dtypes must match, got {update.dtype.name} "
                        f"and {operand.dtype.name}")
    if update.ndim != operand.ndim or any(u > o for u, o in zip(update.shape, operand.shape)):
        raise TypeError(f"dynamic_update_slice update shape {update.shape} must have the operand's rank and fit "
                        f"in its shape {operand.shape}")
    for i in start_indices:
        if i.ndim != 0 or not dtypes.issubdtype(i.dtype, np.integer):
            raise TypeError(f"dynamic_update_slice start indices must be integer scalars, got {i.str_short()}")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


dynamic_update_slice_p = standard_primitive("dynamic_update_slice", _dus_abstract)


def _index_scalars(start_indices, n):
    if isinstance(start_indices, (list, tuple)):
        idx = list(start_indices)
    else:
        av = get_aval(start_indices)
        idx = [_st.reshape(_st.slice_p.bind(start_indices, start_indices=(i,), limit_indices=(i + 1,),
                                            strides=None), ()) for i in range(av.shape[0])]
    if len(idx) != n:
        raise TypeError(f"expected {n} start indices, got {len(idx)}")
    out = []
    for i in idx:
        i = _ew._as_operand(i)
        av = get_aval(i)
        if not dtypes.issubdtype(av.dtype, np.integer):
            raise TypeError(f"index arguments must be integers, got {av.dtype.name}")
        if av.ndim != 0:
            i = _st.reshape(i, ())
        out.append(i)
    # JAX converts the indices to a common type; mixed weak ints stay i32.
    return out


def _wrap_negative(idx, shape):
    """JAX's rule for the public dynamic slicing functions: a negative start counts from the end (a Python int
    at once; a traced signed index through ``select(i < 0, i + d, i)``), before XLA's clamp."""
    out = []
    for i, d in zip(idx, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            out.append(i + d if i < 0 else i)
            continue
        i = _ew._as_operand(i)
        dt = get_aval(i).dtype
        if dtypes.issubdtype(dt, np.signedinteger):
            zero = np.zeros((), dt)
            # JAX adds with ``i + d`` (d of i's dtype, not weak): a weakly typed i is made strong first
            neg = _ew.lt(i, zero)
            j = _ew._convert(i, dt, False) if get_aval(i).weak_type else i
            i = _ew.select(neg, _ew.add(j, np.asarray(d, dt)), i)
        out.append(i)
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    """The window of ``slice_sizes`` starting at ``start_indices`` (traced ints allowed); a negative start
    counts from the end, then starts are clamped so the window fits, as in JAX. Mirrors
    ``jax.lax.dynamic_slice``."""
    operand = _ew._as_operand(operand)
    av = get_aval(operand)
    if isinstance(start_indices, (list, tuple)) and len(start_indices) == av.ndim:
        start_indices = _wrap_negative(start_indices, av.shape)
    idx = _index_scalars(start_indices, av.ndim)
    return dynamic_slice_p.bind(operand, *idx, slice_sizes=_ints(slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    """``operand`` with ``update`` written at ``start_indices`` (a negative start counts from the end; then
    clamped to fit). Mirrors ``jax.lax.dynamic_update_slice``."""
    operand, update = _ew._as_operand(operand), _ew._as_operand(update)
    av = get_aval(operand)
    if isinstance(start_indices, (list, tuple)) and len(start_indices) == av.ndim:
        start_indices = _wrap_negative(start_indices, av.shape)
    idx = _index_scalars(start_indices, av.ndim)
    return dynamic_update_slice_p.bind(operand, update, *idx)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    av = get_aval(operand)
    starts = [0] * av.ndim
    sizes = list(av.shape)
    starts[axis] = start_index
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    av = get_aval(operand)
    starts = [0] * av.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    r = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return r
    return _st.squeeze(r, (axis,))


# ----------------------------------------------------------------------------------------------- gather / scatter

GatherDimensionNumbers = namedtuple(
    "GatherDimensionNumbers",
    ["offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
     "start_indices_batching_dims"], defaults=((), ()))
ScatterDimensionNumbers = namedtuple(
    "ScatterDimensionNumbers",
    ["update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "operand_batching_dims",
     "scatter_indices_batching_dims"], defaults=((), ()))


class GatherScatterMode:
    """JAX's out-of-bounds modes, as strings: ``clip``, ``fill`` (gather; scatter drops) and
    ``promise_in_bounds`` (treated as ``clip``)."""
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(s):
        if s is None or s in ("fill", "drop", "fill_or_drop"):
            return "fill"
        if s in ("clip", "promise_in_bounds"):
            return s
        name = getattr(s, "name", None)
        if name in ("CLIP", "FILL_OR_DROP", "PROMISE_IN_BOUNDS"):
            return {"CLIP": "clip", "FILL_OR_DROP": "fill", "PROMISE_IN_BOUNDS": "promise_in_bounds"}[name]
        raise ValueError(f'Unknown gather mode "{s}"')


def _wire_mode(mode, scatter=False):
    m = GatherScatterMode.from_any(mode)
    if m == "fill":
        return "drop" if scatter else "fill"
    return "clip"


def _dims(xs):
    # NumPy ints are kept, as JAX's batching rule makes them (printed np.int64(...))
    return tuple(x if isinstance(x, np.integer) else int(x) for x in xs)


def _gdn(dn):
    if isinstance(dn, dict):
        dn = GatherDimensionNumbers(**dn)
    return GatherDimensionNumbers(*[_dims(x) for x in dn])


def _unbatched_gather(idx, dn):
    """A gather with batching dims as one without (the form the core runs, transposes and re-batches):
    each operand batching dim becomes a collapsed dim indexed by an iota over the matching indices dim,
    prepended to the index vectors. Returns ``(indices, dimension_numbers)``."""
    if not dn.operand_batching_dims:
        return idx, dn
    iav = get_aval(idx)
    cols = [_st.iota_p.bind(dtype=iav.dtype, shape=iav.shape[:-1] + (1,), dimension=int(d), sharding=None)
            for d in dn.start_indices_batching_dims]
    idx = concatenate_p.bind(*cols, idx, dimension=iav.ndim - 1)
    ndn = GatherDimensionNumbers(
        offset_dims=tuple(int(d) for d in dn.offset_dims),
        collapsed_slice_dims=tuple(sorted(int(d) for d in dn.collapsed_slice_dims + dn.operand_batching_dims)),
        start_index_map=tuple(int(d) for d in dn.operand_batching_dims + dn.start_index_map))
    return idx, ndn


def _sdn(dn):
    if isinstance(dn, dict):
        dn = ScatterDimensionNumbers(**dn)
    dn = ScatterDimensionNumbers(*[_dims(x) for x in dn])
    if len(dn.operand_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise TypeError(f"scatter operand_batching_dims {dn.operand_batching_dims} and "
                        f"scatter_indices_batching_dims {dn.scatter_indices_batching_dims} must have the same length")
    return dn


def _unbatched_scatter(idx, dn):
    """A scatter with batching dims as one without (the form the core runs), as ``_unbatched_gather``: each
    operand batching dim becomes an inserted window dim indexed by an iota over the matching indices dim."""
    if not dn.operand_batching_dims:
        return idx, dn
    iav = get_aval(idx)
    cols = [_st.iota_p.bind(dtype=iav.dtype, shape=iav.shape[:-1] + (1,), dimension=int(d), sharding=None)
            for d in dn.scatter_indices_batching_dims]
    idx = concatenate_p.bind(*cols, idx, dimension=iav.ndim - 1)
    ndn = ScatterDimensionNumbers(
        update_window_dims=tuple(int(d) for d in dn.update_window_dims),
        inserted_window_dims=tuple(sorted(int(d) for d in dn.inserted_window_dims + dn.operand_batching_dims)),
        scatter_dims_to_operand_dims=tuple(int(d) for d in dn.operand_batching_dims + dn.scatter_dims_to_operand_dims))
    return idx, ndn


def _gather_shape(operand, indices, dn, slice_sizes):
    nb = indices.ndim - 1
    window = [slice_sizes[d] for d in range(operand.ndim)
              if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_rank = nb + len(window)
    if len(dn.offset_dims) != len(window):
        raise TypeError(f"gather offset_dims {dn.offset_dims} must have one entry per non-collapsed operand "
                        f"dimension ({len(window)})")
    shape, wi, bi = [], 0, 0
    for d in range(out_rank):
        if d in dn.offset_dims:
            shape.append(window[wi])
            wi += 1
        else:
            shape.append(indices.shape[bi])
            bi += 1
    return tuple(shape)


def _gather_abstract(operand, indices, dimension_numbers, slice_sizes, indices_are_sorted=False,
                     unique_indices=False, mode=None, fill_value=None):
    dn = dimension_numbers
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"gather indices must be of integer type, got {indices.dtype.name}")
    if indices.ndim < 1 or indices.shape[-1] != len(dn.start_index_map):
        raise TypeError(f"gather index vectors (last axis of indices, shape {indices.shape}) must have length "
                        f"len(start_index_map) = {len(dn.start_index_map)}")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather slice_sizes must have one entry per operand dimension, got {slice_sizes} for "
                        f"shape {operand.shape}")
    # As JAX's _gather_shape_rule: the window bound is not checked when there are no index vectors (an empty
    # ``indices``: nothing is read), e.g. a gather vmapped over an empty batch.
    if 0 not in indices.shape:
        for i, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
            if not 0 <= s <= d:
                raise TypeError(f"Slice size at index {i} in gather op is out of range, must be within [0, {d} + 1), "
                                f"got {s}.")
    return ShapedArray(_gather_shape(operand, indices, dn, slice_sizes), operand.dtype, operand.weak_type)


def _gather_wire(eqn):
    p = eqn.params
    dn = p["dimension_numbers"]
    fv = p.get("fill_value")
    if fv is not None:
        fv = float(fv)
        fv = "nan" if np.isnan(fv) else ("inf" if fv == np.inf else ("-inf" if fv == -np.inf else fv))
    return {"offset_dims": list(dn.offset_dims), "collapsed_slice_dims": list(dn.collapsed_slice_dims),
            "start_index_map": list(dn.start_index_map), "slice_sizes": list(p["slice_sizes"]),
            "mode": _wire_mode(p.get("mode")), "fill_value": fv}


gather_p = standard_primitive("gather", _gather_abstract, wire=_gather_wire)

_MODE_NAMES = {"clip": "GatherScatterMode.CLIP", "fill": "GatherScatterMode.FILL_OR_DROP",
               "promise_in_bounds": "GatherScatterMode.PROMISE_IN_BOUNDS"}



def _dn_text(dn):
    fields = ", ".join(f"{k}={tuple(v)!r}" for k, v in zip(dn._fields, dn))
    return ShownParam(f"{type(dn).__name__}({fields})")


def _gather_pp(eqn):
    # as JAX prints them: GatherDimensionNumbers(offset_dims=..., ...) and GatherScatterMode.CLIP
    p = dict(eqn.params)
    p["dimension_numbers"] = _dn_text(p["dimension_numbers"])
    p["mode"] = ShownParam(_MODE_NAMES.get(p.get("mode"), str(p.get("mode"))))
    return sorted(p.items())


gather_p.pp_params = _gather_pp


def _gather_inline(eqn):
    """A gather with batching dims runs as its unbatched form (None: the core runs it as it is)."""
    dn = eqn.params["dimension_numbers"]
    if not dn.operand_batching_dims:
        return None
    x, idx = eqn.invars
    params = dict(eqn.params)

    def expanded(a, i):
        i2, dn2 = _unbatched_gather(i, dn)
        return [gather_p.bind(a, i2, **dict(params, dimension_numbers=dn2))]
    return trace_to_jaxpr(expanded, [x.aval, idx.aval]).jaxpr, eqn.invars


gather_p.inline_jaxpr = staticmethod(_gather_inline)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, indices_are_sorted=False,
           unique_indices=False, mode=None, fill_value=None):
    """XLA's gather (index vectors along the last axis of ``start_indices``). ``mode``: ``"clip"`` and
    ``promise_in_bounds`` (the default, as in JAX 0.10.2; cranax clamps) clamp windows into range; ``"fill"``
    returns ``fill_value`` (NaN / the dtype's minimum / True) for windows out of range. Mirrors
    ``jax.lax.gather``."""
    operand, start_indices = _ew._as_operand(operand), _ew._as_operand(start_indices)
    mode = GatherScatterMode.from_any("promise_in_bounds" if mode is None else mode)
    if mode == GatherScatterMode.FILL_OR_DROP:
        # as JAX's: the default fill is resolved here, so the equation prints it (``fill_value=nan``)
        if fill_value is None:
            dt = get_aval(operand).dtype
            if dtypes.issubdtype(dt, np.inexact):
                fill_value = np.nan
            elif dtypes.issubdtype(dt, np.signedinteger):
                fill_value = int(np.iinfo(dt).min)
            elif dtypes.issubdtype(dt, np.unsignedinteger):
                fill_value = int(np.iinfo(dt).max)
            elif dt == np.bool_:
                fill_value = True
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=_gdn(dimension_numbers),
                         slice_sizes=_ints(slice_sizes), indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=mode, fill_value=fill_value)


def _scatter_abstract(operand, indices, updates, dimension_numbers, indices_are_sorted=False,
                      unique_indices=False, mode=None, update_jaxpr=None, update_consts=()):
    dn = dimension_numbers
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"scatter indices must be of integer type, got {indices.dtype.name}")
    if updates.dtype != operand.dtype:
        raise TypeError(f"scatter updates dtype {updates.dtype.name} must match the operand's "
                        f"{operand.dtype.name}")
    if indices.ndim < 1 or indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
        raise TypeError(f"scatter index vectors (last axis of indices, shape {indices.shape}) must have length "
                        f"{len(dn.scatter_dims_to_operand_dims)}")
    win = [d for d in range(operand.ndim) if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    if len(dn.update_window_dims) != len(win) or updates.ndim != indices.ndim - 1 + len(win):
        raise TypeError(f"scatter updates shape {updates.shape} does not match the dimension numbers {dn} for "
                        f"operand shape {operand.shape} and indices shape {indices.shape}")
    bshape = tuple(updates.shape[d] for d in range(updates.ndim) if d not in dn.update_window_dims)
    if bshape != indices.shape[:-1]:
        raise TypeError(f"scatter updates shape {updates.shape} does not match indices shape {indices.shape}")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_wire(eqn):
    dn = eqn.params["dimension_numbers"]
    return {"update_window_dims": list(dn.update_window_dims), "inserted_window_dims": list(dn.inserted_window_dims),
            "scatter_dims_to_operand_dims": list(dn.scatter_dims_to_operand_dims),
            "mode": _wire_mode(eqn.params.get("mode"), scatter=True)}


scatter_p = standard_primitive("scatter", _scatter_abstract, wire=_scatter_wire)
scatter_add_p = standard_primitive("scatter-add", _scatter_abstract, wire=_scatter_wire)
scatter_mul_p = standard_primitive("scatter-mul", _scatter_abstract, wire=_scatter_wire)
scatter_min_p = standard_primitive("scatter-min", _scatter_abstract, wire=_scatter_wire)
scatter_max_p = standard_primitive("scatter-max", _scatter_abstract, wire=_scatter_wire)
# JAX's scatter-sub: the core runs it as a scatter-add of the negated updates (its inline rule below)
scatter_sub_p = standard_primitive("scatter-sub", _scatter_abstract, wire=_scatter_wire)
_SCATTERS = (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p, scatter_sub_p)


_COMBINERS = {"scatter-add": "add", "scatter-mul": "mul", "scatter-min": "min", "scatter-max": "max",
              "scatter-sub": "sub"}


def _update_jaxpr(name, dt):
    """The scalar combiner JAX's scatter equations carry and print (``{ lambda ; e:f32[] f:f32[]. let g:f32[]
    = add e f in (g,) }``; None for a plain scatter); cranax's scatters do not need it, so it is made to print."""
    op = _COMBINERS.get(name)
    if op is None:
        return None
    # a new jaxpr each time (as each JAX equation holds its own): the printer names its variables afresh
    # in each equation instead of reusing the names of the first one it printed
    fn = getattr(_ew, op)
    av = ShapedArray((), dt)
    return trace_to_jaxpr(lambda a, b: [fn(a, b)], [av, av]).jaxpr


def _scatter_pp(eqn):
    p = {k: v for k, v in eqn.params.items() if k not in ("update_jaxpr", "update_consts")}
    p["dimension_numbers"] = _dn_text(p["dimension_numbers"])
    p["mode"] = ShownParam(_MODE_NAMES.get(p.get("mode"), str(p.get("mode"))))
    own = eqn.params.get("update_jaxpr")   # scatter_apply's function
    p["update_consts"] = tuple(eqn.params.get("update_consts", ())) if own is not None else ()
    p["update_jaxpr"] = own if own is not None else _update_jaxpr(eqn.primitive.name, eqn.invars[0].aval.dtype)
    return sorted(p.items())


# ``scatter_apply``'s lowering (a scatter whose ``update_jaxpr`` is a function to apply, which the core does
# not run): set by ``lax_composites``, which composes it from a count scatter and a loop
apply_lowering = {}


def _scatter_inline(eqn):
    """A scatter with batching dims runs as its unbatched form; ``scatter_apply``'s through its lowering
    (None: the core runs it as it is)."""
    if eqn.params.get("update_jaxpr") is not None:
        return apply_lowering["scatter"](eqn)
    dn = eqn.params["dimension_numbers"]
    if not dn.operand_batching_dims:
        return None
    prim, params = eqn.primitive, dict(eqn.params)

    def expanded(a, i, u):
        i2, dn2 = _unbatched_scatter(i, dn)
        return [prim.bind(a, i2, u, **dict(params, dimension_numbers=dn2))]
    return trace_to_jaxpr(expanded, [v.aval for v in eqn.invars]).jaxpr, eqn.invars


def _scatter_sub_inline(eqn):
    """scatter-sub as the scatter-add of the negated updates (which lowers its batching dims in turn)."""
    params = dict(eqn.params)

    def expanded(a, i, u):
        return [scatter_add_p.bind(a, i, _ew.neg(u), **params)]
    return trace_to_jaxpr(expanded, [v.aval for v in eqn.invars]).jaxpr, eqn.invars


for _p in _SCATTERS:
    _p.pp_params = _scatter_pp
    _p.inline_jaxpr = staticmethod(_scatter_inline)
del _p
scatter_sub_p.inline_jaxpr = staticmethod(_scatter_sub_inline)


def _make_scatter(prim):
    def op(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        operand, scatter_indices, updates = (_ew._as_operand(operand), _ew._as_operand(scatter_indices),
                                             _ew._as_operand(updates))
        return prim.bind(operand, scatter_indices, updates, dimension_numbers=_sdn(dimension_numbers),
                         indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                         mode=GatherScatterMode.from_any(mode))
    op.__name__ = prim.name.replace("-", "_")
    op.__doc__ = (f"XLA's ``{prim.name}``: combines ``updates`` into ``operand`` at the windows the index "
                  f"vectors (last axis of ``scatter_indices``) select; out-of-range windows are dropped "
                  f"(``mode='clip'`` clamps them). Mirrors ``jax.lax.{op.__name__}``.")
    return op


scatter = _make_scatter(scatter_p)
scatter_add = _make_scatter(scatter_add_p)
scatter_mul = _make_scatter(scatter_mul_p)
scatter_min = _make_scatter(scatter_min_p)
scatter_max = _make_scatter(scatter_max_p)
scatter_sub = _make_scatter(scatter_sub_p)


def _gather_dn_for_scatter(dn):
    return GatherDimensionNumbers(offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
                                  start_index_map=dn.scatter_dims_to_operand_dims,
                                  operand_batching_dims=dn.operand_batching_dims,
                                  start_indices_batching_dims=dn.scatter_indices_batching_dims)


def _scatter_dn_for_gather(dn):
    return ScatterDimensionNumbers(update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
                                   scatter_dims_to_operand_dims=dn.start_index_map,
                                   operand_batching_dims=dn.operand_batching_dims,
                                   scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _scatter_slice_sizes(operand_aval, updates_aval, dn):
    sizes, pos = [], 0
    for d in range(operand_aval.ndim):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(min(1, operand_aval.shape[d]))
        else:
            sizes.append(updates_aval.shape[dn.update_window_dims[pos]])
            pos += 1
    return tuple(sizes)


def _gather_updates(x, indices, updates_aval, dn, mode, fill_value=0):
    """The elements of ``x`` that a scatter with ``dn`` would combine each update with."""
    sizes = _scatter_slice_sizes(get_aval(x), updates_aval, dn)
    return gather_p.bind(x, indices, dimension_numbers=_gather_dn_for_scatter(dn), slice_sizes=sizes,
                         indices_are_sorted=False, unique_indices=False,
                         mode="fill" if GatherScatterMode.from_any(mode) == "fill" else "clip",
                         fill_value=fill_value)


# ----------------------------------------------------------------------------------------------- sort / cumulative

def _sort_abstract(*operands, dimension, is_stable=True, num_keys=1):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort dimension {dimension} out of range for shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(operands)}")
    for o in operands:
        if o.shape != shape:
            raise TypeError(f"sort operands must all have the same shape, got "
                            f"{', '.join(str(o.shape) for o in operands)}")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


sort_p = standard_primitive(
    "sort", _sort_abstract, multiple_results=True,
    wire=lambda eqn: {"dimension": int(eqn.params["dimension"]), "is_stable": bool(eqn.params["is_stable"]),
                      "num_keys": int(eqn.params["num_keys"])})


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts along ``dimension``; a sequence of operands is sorted together by the first ``num_keys``
    (lexicographically). NaNs sort last, -0.0 equals 0.0. Mirrors ``jax.lax.sort``."""
    single = not isinstance(operand, (list, tuple))
    ops = [_ew._as_operand(o) for o in ([operand] if single else operand)]
    nd = get_aval(ops[0]).ndim
    if nd == 0:
        raise ValueError("sort requires an operand of rank >= 1")
    dimension = int(dimension) % nd
    outs = sort_p.bind(*ops, dimension=dimension, is_stable=bool(is_stable), num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    k, v = sort([keys, values], dimension, is_stable, 1)
    return k, v


def _cumulative_abstract(x, axis, reverse=False):
    if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
        raise ValueError(f"cumulative axis {axis} out of range for shape {x.shape}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _cum_prim(name):
    def abstract(x, axis, reverse=False):
        if name in ("cumsum", "cumprod") and x.dtype == np.bool_:
            raise TypeError(f"{name} does not accept dtype bool")
        return _cumulative_abstract(x, axis, reverse)
    return standard_primitive(name, abstract, wire=lambda eqn: {"axis": int(eqn.params["axis"]),
                                                                "reverse": bool(eqn.params["reverse"])})


cumsum_p = _cum_prim("cumsum")
cumprod_p = _cum_prim("cumprod")
cummax_p = _cum_prim("cummax")
cummin_p = _cum_prim("cummin")


def _make_cum(prim):
    def op(operand, axis=0, reverse=False):
        operand = _ew._as_operand(operand)
        nd = get_aval(operand).ndim
        return prim.bind(operand, axis=int(axis) % max(nd, 1), reverse=bool(reverse))
    op.__name__ = prim.name
    op.__doc__ = f"Inclusive ``{prim.name}`` along ``axis`` (from the end when ``reverse``). Mirrors " \
                 f"``jax.lax.{prim.name}``."
    return op


cumsum = _make_cum(cumsum_p)
cumprod = _make_cum(cumprod_p)
cummax = _make_cum(cummax_p)
cummin = _make_cum(cummin_p)


# ---- batching rules ----

_batching.batching_rules[dot_general_p] = _dot_general_batch
_batching.batching_rules[concatenate_p] = _concatenate_batch


def _dynamic_slice_batch(vals, dims, slice_sizes):
    """JAX's ``_dynamic_slice_batching_rule``: the slice as a gather whose index vector is the stacked start
    indices, batched by the gather rule (clip mode, sorted and unique indices)."""
    x, idx = vals[0], list(vals[1:])
    bx, bidx = dims[0], list(dims[1:])
    nd = len(slice_sizes)
    d = tuple(range(nd))
    dn = GatherDimensionNumbers(offset_dims=d, collapsed_slice_dims=(), start_index_map=d)
    index, ib = _batch_ds_indices(idx, bidx)
    return _gather_batch([x, index], [bx, ib], dimension_numbers=dn, slice_sizes=tuple(slice_sizes),
                         indices_are_sorted=True, unique_indices=True, mode="clip", fill_value=None)


def _batch_ds_indices(idx, bidx):
    """JAX's ``_batch_dynamic_slice_indices``: the start indices stacked into one index vector (batched ones
    with their batch axis first). Returns ``(index, its batch dim or None)``."""
    size = next((get_aval(i).shape[b] for i, b in zip(idx, bidx) if b is not None), None)
    if not idx:
        return np.zeros((0,), np.int32), None
    if size is None:
        return _concat1([_st.broadcast_in_dim(i, (1,), ()) for i in idx], 0), None
    index = _concat1([_st.broadcast_in_dim(_batching.moveaxis(i, b, 0) if b is not None else i, (size, 1),
                                           (0,) if b is not None else ())
                      for i, b in zip(idx, bidx)], 1)
    return index, 0


def _concat1(xs, dim):
    # as JAX's lax.concatenate: one operand is returned as it is
    return xs[0] if len(xs) == 1 else concatenate_p.bind(*xs, dimension=dim)


def _dus_batch(vals, dims):
    """JAX's ``_dynamic_update_slice_batching_rule``: the update as a window scatter (clip mode, sorted and
    unique indices) whose index vector is the stacked start indices, batched by the scatter rule."""
    x, u, idx = vals[0], vals[1], list(vals[2:])
    bx, bu, bidx = dims[0], dims[1], list(dims[2:])
    nd = len(idx)
    d = tuple(range(nd))
    dn = ScatterDimensionNumbers(update_window_dims=d, inserted_window_dims=(), scatter_dims_to_operand_dims=d)
    index, ib = _batch_ds_indices(idx, bidx)
    return _scatter_batch_rule(scatter_p)([x, index, u], [bx, ib, bu], dimension_numbers=dn,
                                          indices_are_sorted=True, unique_indices=True, mode="clip")


def _gather_batch(vals, dims, dimension_numbers, slice_sizes, **params):
    """JAX's ``_gather_batching_rule``: a batched operand adds a leading window dim, batched indices a leading
    batch dim, both a pair of batching dims (np.add makes the shifted dims NumPy ints, as JAX prints them)."""
    (x, idx), (bx, bi) = vals, dims
    dn = dimension_numbers
    slice_sizes = tuple(slice_sizes)
    add1 = lambda ds: tuple(np.add(1, ds))  # noqa: E731
    if bi is None:
        x = _batching.moveaxis(x, bx, 0)
        ndn = GatherDimensionNumbers(offset_dims=(0,) + add1(dn.offset_dims),
                                     collapsed_slice_dims=add1(dn.collapsed_slice_dims),
                                     start_index_map=add1(dn.start_index_map),
                                     operand_batching_dims=add1(dn.operand_batching_dims),
                                     start_indices_batching_dims=dn.start_indices_batching_dims)
        return gather_p.bind(x, idx, dimension_numbers=ndn, slice_sizes=(get_aval(x).shape[0],) + slice_sizes,
                             **params), 0
    if bx is None:
        idx = _batching.moveaxis(idx, bi, 0)
        ndn = GatherDimensionNumbers(offset_dims=tuple(1 + d for d in dn.offset_dims),
                                     collapsed_slice_dims=dn.collapsed_slice_dims, start_index_map=dn.start_index_map,
                                     operand_batching_dims=dn.operand_batching_dims,
                                     start_indices_batching_dims=add1(dn.start_indices_batching_dims))
        # batched accesses into one array may no longer be sorted or unique
        p = dict(params, indices_are_sorted=False, unique_indices=False)
        return gather_p.bind(x, idx, dimension_numbers=ndn, slice_sizes=slice_sizes, **p), 0
    x, idx = _batching.moveaxis(x, bx, 0), _batching.moveaxis(idx, bi, 0)
    lead = 0 if get_aval(x).shape[0] == 0 else 1
    ndn = GatherDimensionNumbers(offset_dims=add1(dn.offset_dims), collapsed_slice_dims=add1(dn.collapsed_slice_dims),
                                 start_index_map=add1(dn.start_index_map),
                                 operand_batching_dims=(0,) + add1(dn.operand_batching_dims),
                                 start_indices_batching_dims=(0,) + add1(dn.start_indices_batching_dims))
    return gather_p.bind(x, idx, dimension_numbers=ndn, slice_sizes=(lead,) + slice_sizes, **params), 0


def _scatter_batch_rule(prim):
    """JAX's ``_scatter_batching_rule``: the operand (broadcast when unbatched) and updates get the batch axis
    first; unbatched indices make it a leading window dim, batched ones a pair of batching dims (np.add makes
    the shifted dims NumPy ints, as JAX prints them)."""
    def rule(vals, dims, dimension_numbers, **params):
        (x, idx, u), (bx, bi, bu) = vals, dims
        dn = dimension_numbers
        size = _batching.axis_size_of(vals, dims)
        add1 = lambda ds: tuple(np.add(1, ds))  # noqa: E731
        x = _batching.bdim_at_front(x, bx, size)
        u = _batching.bdim_at_front(u, bu, size)
        if bi is None:
            ndn = ScatterDimensionNumbers(update_window_dims=(0,) + add1(dn.update_window_dims),
                                          inserted_window_dims=add1(dn.inserted_window_dims),
                                          scatter_dims_to_operand_dims=add1(dn.scatter_dims_to_operand_dims),
                                          operand_batching_dims=add1(dn.operand_batching_dims),
                                          scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
            return prim.bind(x, idx, u, dimension_numbers=ndn, **params), 0
        idx = _batching.bdim_at_front(idx, bi, size)
        ndn = ScatterDimensionNumbers(update_window_dims=add1(dn.update_window_dims),
                                      inserted_window_dims=add1(dn.inserted_window_dims),
                                      scatter_dims_to_operand_dims=add1(dn.scatter_dims_to_operand_dims),
                                      operand_batching_dims=(0,) + add1(dn.operand_batching_dims),
                                      scatter_indices_batching_dims=(0,) + add1(dn.scatter_indices_batching_dims))
        return prim.bind(x, idx, u, dimension_numbers=ndn, **params), 0
    return rule


def _sort_batch(vals, dims, dimension, **params):
    size = _batching.axis_size_of(vals, dims)
    ops = [_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    return sort_p.bind(*ops, dimension=dimension + 1, **params), [0] * len(ops)


def _cum_batch_rule(prim):
    def rule(vals, dims, axis, reverse=False):
        (x,), (bd,) = vals, dims
        return prim.bind(x, axis=axis + (axis >= bd), reverse=reverse), bd
    return rule


_batching.batching_rules[dynamic_slice_p] = _dynamic_slice_batch
_batching.batching_rules[dynamic_update_slice_p] = _dus_batch
_batching.batching_rules[gather_p] = _gather_batch
for _p in _SCATTERS:
    _batching.batching_rules[_p] = _scatter_batch_rule(_p)
_batching.batching_rules[sort_p] = _sort_batch
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    _batching.batching_rules[_p] = _cum_batch_rule(_p)
del _p


# ---- autodiff rules (jvp, transpose) ----

_ad.jvp_rules[dot_general_p] = _dot_general_jvp
_ad.transpose_rules[dot_general_p] = _dot_general_transpose
_ad.deflinear(concatenate_p, _concatenate_transpose)


def _zeros(aval):
    return _ad.zeros_like_aval(aval)


def _dynamic_slice_jvp(primals, tangents, slice_sizes):
    x, idx = primals[0], primals[1:]
    ans = dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    if _ad.is_zero(tangents[0]):
        return ans, _ad.Zero(get_aval(ans))
    return ans, dynamic_slice_p.bind(tangents[0], *idx, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    av = x.aval
    if _ad.is_zero(ct):
        return [_ad.Zero(av)] + [None] * len(idx)
    return [dynamic_update_slice_p.bind(_zeros(av), ct, *idx)] + [None] * len(idx)


def _dynamic_slice_transpose_ref(ct, x, *idx, refs, slice_sizes):
    # into a cotangent ref: only the window is added (JAX's RefAccum rule, ``ref[c:c+n] += ct``)
    if not _ad.is_zero(ct) and refs[0] is not _ad.DROP:
        _state.add_window(refs[0], idx, slice_sizes, ct, dynamic_slice_p, dynamic_update_slice_p)
    return [None] * (1 + len(idx))


def _dus_jvp(primals, tangents):
    x, u, idx = primals[0], primals[1], primals[2:]
    tx, tu = tangents[0], tangents[1]
    ans = dynamic_update_slice_p.bind(x, u, *idx)
    if _ad.is_zero(tx) and _ad.is_zero(tu):
        return ans, _ad.Zero(get_aval(ans))
    return ans, dynamic_update_slice_p.bind(_ad.instantiate_zeros(tx), _ad.instantiate_zeros(tu), *idx)


def _dus_transpose(ct, x, u, *idx):
    uav = u.aval if _ad.is_undefined(u) else get_aval(u)
    xav = x.aval if _ad.is_undefined(x) else get_aval(x)
    if _ad.is_zero(ct):
        return [_ad.Zero(xav) if _ad.is_undefined(x) else None,
                _ad.Zero(uav) if _ad.is_undefined(u) else None] + [None] * len(idx)
    out = [None, None]
    if _ad.is_undefined(x):
        out[0] = dynamic_update_slice_p.bind(ct, _zeros(uav), *idx)
    if _ad.is_undefined(u):
        out[1] = dynamic_slice_p.bind(ct, *idx, slice_sizes=uav.shape)
    return out + [None] * len(idx)


_ad.jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
_ad.transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
_ad.ref_transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose_ref
_ad.jvp_rules[dynamic_update_slice_p] = _dus_jvp
_ad.transpose_rules[dynamic_update_slice_p] = _dus_transpose


def _gather_jvp(primals, tangents, **params):
    x, idx = primals
    ans = gather_p.bind(x, idx, **params)
    if _ad.is_zero(tangents[0]):
        return ans, _ad.Zero(get_aval(ans))
    p = dict(params)
    if GatherScatterMode.from_any(p.get("mode")) == "fill":
        p["fill_value"] = 0
    return ans, gather_p.bind(tangents[0], idx, **p)


def _gather_transpose(ct, x, idx, dimension_numbers, slice_sizes, indices_are_sorted=False,
                      unique_indices=False, mode=None, fill_value=None):
    av = x.aval
    if _ad.is_zero(ct):
        return [_ad.Zero(av), None]
    m = GatherScatterMode.from_any(mode)
    return [scatter_add_p.bind(_zeros(av), idx, ct, dimension_numbers=_scatter_dn_for_gather(dimension_numbers),
                               indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                               mode="fill" if m == "fill" else "clip"), None]


_ad.jvp_rules[gather_p] = _gather_jvp
_ad.transpose_rules[gather_p] = _gather_transpose


def _linear_scatter_jvp(prim, zeros_first=False):
    """The jvp of a scatter that is linear in (operand, updates): the same scatter of the tangents. That holds
    for scatter-add, and for scatter too, since ours is deterministic (the last update to a position wins).
    ``zeros_first``: the tangents are instantiated before the primal scatter (JAX's scatter jvp does)."""
    def jvp(primals, tangents, **params):
        x, idx, u = primals
        tx, _, tu = tangents
        if zeros_first and not (_ad.is_zero(tx) and _ad.is_zero(tu)):
            tx, tu = _ad.instantiate_zeros(tx), _ad.instantiate_zeros(tu)
        ans = prim.bind(x, idx, u, **params)
        if _ad.is_zero(tx) and _ad.is_zero(tu):
            return ans, _ad.Zero(get_aval(ans))
        return ans, prim.bind(_ad.instantiate_zeros(tx), idx, _ad.instantiate_zeros(tu), **params)
    return jvp


def _scatter_add_transpose(ct, x, idx, u, dimension_numbers, indices_are_sorted=False, unique_indices=False,
                           mode=None, **_):
    out = [None, None, None]
    uav = u.aval if _ad.is_undefined(u) else get_aval(u)
    if _ad.is_undefined(x):
        out[0] = _ad.Zero(x.aval) if _ad.is_zero(ct) else ct
    if _ad.is_undefined(u):
        out[2] = _ad.Zero(uav) if _ad.is_zero(ct) else _gather_updates(ct, idx, uav, dimension_numbers, mode)
    return out


_ad.jvp_rules[scatter_add_p] = _linear_scatter_jvp(scatter_add_p)
_ad.transpose_rules[scatter_add_p] = _scatter_add_transpose


def _scatter_sub_transpose(ct, x, idx, u, **params):
    # as scatter-add's, the updates' cotangent negated (JAX's rule)
    out = _scatter_add_transpose(ct, x, idx, u, **params)
    if out[2] is not None and not _ad.is_zero(out[2]):
        out[2] = _ew.neg(out[2])
    return out


_ad.jvp_rules[scatter_sub_p] = _linear_scatter_jvp(scatter_sub_p)
_ad.transpose_rules[scatter_sub_p] = _scatter_sub_transpose


def _scatter_transpose(ct, x, idx, u, dimension_numbers, indices_are_sorted=False, unique_indices=False,
                       mode=None, **_):
    out = [None, None, None]
    uav = u.aval if _ad.is_undefined(u) else get_aval(u)
    xav = x.aval if _ad.is_undefined(x) else get_aval(x)
    p = dict(dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
             unique_indices=unique_indices, mode=mode)
    if _ad.is_zero(ct):
        if _ad.is_undefined(x):
            out[0] = _ad.Zero(xav)
        if _ad.is_undefined(u):
            out[2] = _ad.Zero(uav)
        return out
    if _ad.is_undefined(x):
        out[0] = scatter_p.bind(ct, idx, _zeros(uav), **p)
    if _ad.is_undefined(u) and unique_indices:
        # as JAX's rule (which requires unique indices): each update's cotangent is the one at its position
        out[2] = _gather_updates(ct, idx, uav, dimension_numbers, mode)
    elif _ad.is_undefined(u):
        # Only the update that wins a position receives its cotangent: scatter unique ids, read them back.
        n = int(np.prod(uav.shape)) if uav.shape else 1
        ids = _st.reshape(_st.iota_p.bind(dtype=np.dtype(np.int32), shape=(n,), dimension=0, sharding=None),
                          uav.shape)
        owner = scatter_p.bind(_st.full(xav.shape, -1, np.int32), idx, ids, **p)
        won = _ew.eq(_gather_updates(owner, idx, uav, dimension_numbers, mode, fill_value=-2), ids)
        g = _gather_updates(ct, idx, uav, dimension_numbers, mode)
        out[2] = _ew.select(won, g, _st.full(uav.shape, 0, uav.dtype))
    return out


def _scatter_jvp(primals, tangents, **params):
    if params.get("update_jaxpr") is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")   # JAX 0.10.2's error
    return _plain_scatter_jvp(primals, tangents, **params)


_plain_scatter_jvp = _linear_scatter_jvp(scatter_p, zeros_first=True)
_ad.jvp_rules[scatter_p] = _scatter_jvp
_ad.transpose_rules[scatter_p] = _scatter_transpose


def _scatter_mul_jvp(primals, tangents, **params):
    # out = x * P with P = scatter_mul(1, idx, u); dP = P * scatter_add(0, idx, du / u) (u without zeros,
    # exact for unique indices as JAX requires for this gradient).
    x, idx, u = primals
    tx, _, tu = tangents
    ans = scatter_mul_p.bind(x, idx, u, **params)
    if _ad.is_zero(tx) and _ad.is_zero(tu):
        return ans, _ad.Zero(get_aval(ans))
    xav = get_aval(x)
    out = None
    if not _ad.is_zero(tx):
        out = scatter_mul_p.bind(tx, idx, u, **params)
    if not _ad.is_zero(tu) and params.get("unique_indices"):
        # JAX's rule (which requires unique indices): x * scatter_add(0, idx, du)
        t = _ew.mul(x, scatter_add_p.bind(_st.full(xav.shape, 0, xav.dtype), idx, tu, **params))
        out = t if out is None else _ad.add_tangents(out, t)
    elif not _ad.is_zero(tu):
        P = scatter_mul_p.bind(_st.full(xav.shape, 1, xav.dtype), idx, u, **params)
        dP = _ew.mul(P, scatter_add_p.bind(_st.full(xav.shape, 0, xav.dtype), idx, _ew.div(tu, u), **params))
        t = _ew.mul(x, dP)
        out = t if out is None else _ad.add_tangents(out, t)
    return ans, out


def _scatter_extremum_jvp(prim):
    def rule(primals, tangents, **params):
        # Tangent of the chosen element, averaged over ties (as JAX's reduce_max/min).
        x, idx, u = primals
        tx, _, tu = tangents
        ans = prim.bind(x, idx, u, **params)
        if _ad.is_zero(tx) and _ad.is_zero(tu):
            return ans, _ad.Zero(get_aval(ans))
        xav, uav = get_aval(x), get_aval(u)
        tx, tu = _ad.instantiate_zeros(tx), _ad.instantiate_zeros(tu)
        dt = xav.dtype
        zx, zu = _st.full(xav.shape, 0, dt), _st.full(uav.shape, 0, dt)
        mode = params.get("mode")
        dn = params["dimension_numbers"]
        mx = _ew.eq(x, ans)
        mu = _ew.eq(u, _gather_updates(ans, idx, uav, dn, mode, fill_value=np.nan))
        pa = dict(params)
        num = _ew.add(_ew.select(mx, tx, zx), scatter_add_p.bind(zx, idx, _ew.select(mu, tu, zu), **pa))
        cnt = _ew.add(_ew.convert_element_type(mx, dt),
                      scatter_add_p.bind(zx, idx, _ew.convert_element_type(mu, dt), **pa))
        return ans, _ew.div(num, _ew.max(cnt, _st.full(xav.shape, 1, dt)))
    return rule


def _scatter_mul_transpose(ct, x, idx, u, **params):
    # Linear in the operand only (out = x * scatter_mul(1, idx, u)).
    if _ad.is_undefined(u):
        raise NotImplementedError("scatter-mul is not linear in its updates")
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval), None, None]
    return [scatter_mul_p.bind(ct, idx, u, **params), None, None]


_ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
_ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose
_ad.jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
_ad.jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)


def _take_along(t, perm, dimension):
    """``t`` permuted along ``dimension`` by the integer array ``perm`` of the same shape."""
    av = get_aval(t)
    nd = av.ndim
    idx = []
    for d in range(nd):
        if d == dimension:
            idx.append(_st.reshape(perm, av.shape + (1,)))
        else:
            idx.append(_st.iota_p.bind(dtype=get_aval(perm).dtype, shape=av.shape + (1,), dimension=d,
                                       sharding=None))
    ind = concatenate_p.bind(*idx, dimension=nd) if nd > 1 else idx[0]
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(nd)),
                                start_index_map=tuple(range(nd)))
    return gather_p.bind(t, ind, dimension_numbers=dn, slice_sizes=(1,) * nd, indices_are_sorted=False,
                         unique_indices=False, mode="clip", fill_value=None)


def _sort_jvp(primals, tangents, dimension, is_stable=True, num_keys=1):
    shape = get_aval(primals[0]).shape
    iota = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=dimension, sharding=None)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    perm = outs[-1]
    outs = outs[:-1]
    touts = [(_ad.Zero(get_aval(o)) if _ad.is_zero(t) else _take_along(t, perm, dimension))
             for o, t in zip(outs, tangents)]
    return list(outs), touts


_ad.jvp_rules[sort_p] = _sort_jvp


def _cumsum_transpose(ct, x, axis, reverse=False):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


_ad.deflinear(cumsum_p, _cumsum_transpose)


def _cumprod_jvp(g, ans, x, axis, reverse=False):
    # d cumprod = cumprod * cumsum(g / x) (x without zeros).
    return _ew.mul(ans, cumsum_p.bind(_ew.div(g, x), axis=axis, reverse=reverse))


def _cumext_jvp(g, ans, x, axis, reverse=False):
    # The tangent at the position that set the running extremum: the latest j <= i with x[j] == ans[j].
    av = get_aval(x)
    pos = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=av.shape, dimension=axis, sharding=None)
    if reverse:
        n = av.shape[axis]
        cand = _ew.select(_ew.eq(x, ans), _ew.sub(_st.full(av.shape, n - 1, np.int32), pos),
                          _st.full(av.shape, -1, np.int32))
        src = _ew.sub(_st.full(av.shape, n - 1, np.int32), cummax_p.bind(cand, axis=axis, reverse=True))
    else:
        cand = _ew.select(_ew.eq(x, ans), pos, _st.full(av.shape, -1, np.int32))
        src = cummax_p.bind(cand, axis=axis, reverse=False)
    return _take_along(g, src, axis)


_ad.defjvp2(cumprod_p, _cumprod_jvp)
_ad.defjvp2(cummax_p, _cumext_jvp)
_ad.defjvp2(cummin_p, _cumext_jvp)


# ----------------------------------------------------------------------------------------------- lax wrappers
# (of structural primitives that lax did not export yet)

def lax_slice(operand, start_indices, limit_indices, strides=None):
    """``operand[start:limit:stride]`` per axis (static). Mirrors ``jax.lax.slice``."""
    operand = _ew._as_operand(operand)
    return _st.slice_p.bind(operand, start_indices=_ints(start_indices), limit_indices=_ints(limit_indices),
                            strides=None if strides is None else _ints(strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    av = get_aval(operand)
    start = [0] * av.ndim
    limit = list(av.shape)
    strides = [1] * av.ndim
    n = av.shape[axis]
    s, e, st = slice(start_index, limit_index, stride).indices(n)
    start[axis], limit[axis], strides[axis] = s, max(e, s), st
    return lax_slice(operand, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    av = get_aval(operand)
    index = int(index) % av.shape[axis]
    r = slice_in_dim(operand, index, index + 1, 1, axis)
    return r if keepdims else _st.squeeze(r, (axis,))


def lax_rev(operand, dimensions):
    """``operand`` reversed along ``dimensions``. Mirrors ``jax.lax.rev``."""
    return _st.rev_p.bind(_ew._as_operand(operand), dimensions=_ints(dimensions))


def lax_pad(operand, padding_value, padding_config):
    """``operand`` padded with ``padding_value``; ``padding_config[i] = (lo, hi, interior)``, negative lo/hi
    crop. Mirrors ``jax.lax.pad``."""
    operand = _ew._as_operand(operand)
    padding_value = _ew._coerce(padding_value, get_aval(operand).dtype)
    return _st.pad(operand, padding_value, padding_config)


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` (default the last) and their int32 indices, largest first
    (ties: lower index first). Mirrors ``jax.lax.top_k``."""
    operand = _ew._as_operand(operand)
    av = get_aval(operand)
    nd = av.ndim
    if nd == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got ()")
    if np.dtype(av.dtype).kind == "c":
        raise ValueError("top_k is not compatible with complex inputs.")
    ax = int(axis)
    if not -nd <= ax < nd:
        raise ValueError(f"top_k axis {axis} out of bounds for operand of rank {nd}")
    ax %= nd
    if ax != nd - 1:
        perm = tuple(i for i in range(nd) if i != ax) + (ax,)
        back = tuple(range(ax)) + (nd - 1,) + tuple(range(ax, nd - 1))
        vals, idx = top_k(_st.transpose(operand, perm), k)
        return _st.transpose(vals, back), _st.transpose(idx, back)
    k = int(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > av.shape[-1]:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; got k={k} with "
                         f"shape={list(av.shape)} and axis={av.ndim - 1}")
    iota = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=av.shape, dimension=av.ndim - 1, sharding=None)
    if dtypes.issubdtype(av.dtype, np.floating):
        # NaN counts as the largest value (as XLA's TopK): a first key puts NaNs ahead
        notnan = _ew._convert(_ew.eq(operand, operand), np.dtype(np.int32), False)
        outs = sort_p.bind(notnan, _ew.neg(operand), operand, iota, dimension=av.ndim - 1, is_stable=True,
                           num_keys=2)
        _, _, vals, idx = outs
        n = av.ndim
        return (lax_slice(vals, (0,) * n, av.shape[:-1] + (k,)), lax_slice(idx, (0,) * n, av.shape[:-1] + (k,)))
    if dtypes.issubdtype(av.dtype, np.unsignedinteger) or av.dtype == np.bool_:
        key = _ew.bitwise_not(operand)
    else:
        key = _ew.sub(_st.full(av.shape, -1, av.dtype), operand)  # ~x: order-reversing without overflow
    outs = sort_p.bind(key, operand, iota, dimension=av.ndim - 1, is_stable=True, num_keys=1)
    _, vals, idx = outs
    n = av.ndim
    return (lax_slice(vals, (0,) * n, av.shape[:-1] + (k,)), lax_slice(idx, (0,) * n, av.shape[:-1] + (k,)))
