"""``lax`` functions that are compositions of the primitive families: ``associative_scan``, ``reduce`` with a
general computation, ``reduce_xor``, ``collapse``, ``broadcast_to_rank``, ``broadcast_shapes``, ``reciprocal``,
``dynamic_update_index_in_dim``, ``index_take``, ``approx_max_k``/``approx_min_k``,
``reduce_precision``, ``optimization_barrier``, ``platform_dependent``, ``empty``; and the primitives that
JAX's jaxprs show but the core runs as other ops (``tile``, ``stack``, ``unstack``, ``split``: each lowers by
inlining their expansion). Mirrors ``jax.lax``."""
import numpy as np

from .. import dtypes
from ..array import Array, _from_host, default_backend
from ..core import ShapedArray, Tracer, TypedScalar, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.eval import eval_jaxpr
from ..interpreters.partial_eval import trace_to_jaxpr
from ..jaxpr import ClosedJaxpr, Jaxpr
from .._pytree import tree_flatten, tree_unflatten
from . import ad_util as _adu
from . import control_flow as _cf
from . import elementwise as _ew
from . import library as _lib
from . import reductions as _red
from . import structural as _st
from . import windowed as _win
from .standard import standard_primitive

__all__ = ["associative_scan", "reduce", "reduce_xor", "split", "tile", "stack", "unstack", "collapse",
           "broadcast_to_rank", "broadcast_shapes", "reciprocal", "dynamic_update_index_in_dim", "index_take",
           "approx_max_k", "approx_min_k", "reduce_precision", "optimization_barrier",
           "platform_dependent", "empty"]


def _shape(x):
    return tuple(get_aval(x).shape)


def _slice_axis(x, start, stop, axis):
    n = _shape(x)[axis]
    start, stop = max(0, start if start >= 0 else n + start), min(n, stop if stop >= 0 else n + stop)
    lo = [0] * len(_shape(x))
    hi = list(_shape(x))
    lo[axis], hi[axis] = start, stop
    return _lib.lax_slice(x, lo, hi)


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations ``fn(...fn(fn(e0, e1), e2)..., ei)`` along ``axis`` of the pytree ``elems``
    for an associative ``fn`` of two pytrees of arrays (``reverse``: the same scan of the reversed
    elements, reversed back). As JAX's: pairs are combined (strided slices), the half-length result is
    scanned recursively, the even positions are filled in from it and the two halves interleaved by two
    interior pads, so the jaxpr is JAX's and the work O(n). Raises ValueError for leaves of different
    lengths. Mirrors ``jax.lax.associative_scan``."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    leaves = [_ew._as_operand(x) for x in leaves]
    if reverse:
        leaves = [_lib.lax_rev(x, (axis % max(1, len(_shape(x))),)) for x in leaves]
    nd = len(_shape(leaves[0]))
    axis = axis % nd if nd else 0
    n = _shape(leaves[0])[axis]
    if any(_shape(x)[axis] != n for x in leaves):
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: "
                         f"{[_shape(x) for x in leaves]})")

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems ({tree}), got {out_tree}")
        return out_leaves

    def part(x, start, stop, stride=1):
        return _lib.slice_in_dim(x, start, stop, stride, axis)

    def interleave(even, odd):
        # even positions from ``even``, odd ones from ``odd``: each padded with zeros between its elements
        # (and at the end where it is shorter), then summed (or'ed for bools)
        same = _shape(even)[axis] == _shape(odd)[axis]
        cfg_e = [(0, 0, 0)] * nd
        cfg_o = [(0, 0, 0)] * nd
        cfg_e[axis] = (0, 1 if same else 0, 1)
        cfg_o[axis] = (1, 0 if same else 1, 1)
        dt = get_aval(even).dtype
        zero = TypedScalar(np.zeros((), dt)[()], ShapedArray((), dt, False), None)
        join = _ew.bitwise_or if dt == np.bool_ else _ew.add
        return join(_st.pad(even, zero, cfg_e), _st.pad(odd, zero, cfg_o))

    def scan_level(xs):
        m = _shape(xs[0])[axis]
        if m < 2:
            return xs
        odd = scan_level(combine([part(x, 0, -1, 2) for x in xs], [part(x, 1, None, 2) for x in xs]))
        head = [part(o, 0, -1) for o in odd] if m % 2 == 0 else odd
        even = combine(head, [part(x, 2, None, 2) for x in xs])
        even = [_lib.concatenate([part(x, 0, 1), e], axis) for x, e in zip(xs, even)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    leaves = scan_level(leaves)
    if reverse:
        leaves = [_lib.lax_rev(x, (axis,)) for x in leaves]
    return tree_unflatten(tree, leaves)


_MONOIDS = {}


def _monoid(computation, init, dt):
    """The reduce primitive for a known (computation, identity) pair, else None."""
    if not _MONOIDS:
        _MONOIDS.update({_ew.add: ("sum", 0), _ew.mul: ("prod", 1), _ew.max: ("max", None),
                         _ew.min: ("min", None), _ew.bitwise_and: ("and", None), _ew.bitwise_or: ("or", None)})
    kind = _MONOIDS.get(computation)
    if kind is None:
        return None
    name, ident = kind
    try:
        v = np.asarray(init)
    except Exception:  # a traced init value: not known to be the identity
        return None
    if v.ndim:
        return None
    if name == "max":
        ident = -np.inf if dtypes.issubdtype(dt, np.floating) else (False if dt == np.bool_ else np.iinfo(dt).min)
    elif name == "min":
        ident = np.inf if dtypes.issubdtype(dt, np.floating) else (True if dt == np.bool_ else np.iinfo(dt).max)
    elif name == "and":
        ident = True if dt == np.bool_ else -1
    elif name == "or":
        ident = False if dt == np.bool_ else 0
    if v.astype(dt) != np.asarray(ident).astype(dt):
        return None
    return {"sum": _red.reduce_sum, "prod": _red.reduce_prod, "max": _red.reduce_max, "min": _red.reduce_min,
            "and": _red.reduce_and, "or": _red.reduce_or}[name]


def reduce(operands, init_values, computation, dimensions):
    """Reduces the pytree ``operands`` over ``dimensions`` with ``computation`` (a function of two pytrees
    like ``operands``) starting from ``init_values``. The lax monoids (add, mul, max, min, and, or with their
    identities) become the reduce primitives; any other computation is folded in order by a ``scan`` over the
    reduced elements. Mirrors ``jax.lax.reduce``."""
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"reduce: operands {tree} and init_values {init_tree} must have the same structure")
    flat_ops = [_ew._as_operand(x) for x in flat_ops]
    dims = tuple(int(d) % max(1, len(_shape(flat_ops[0]))) for d in dimensions)
    if len(flat_ops) == 1:
        red = _monoid(computation, flat_init[0], get_aval(flat_ops[0]).dtype)
        if red is not None:
            return tree_unflatten(tree, [red(flat_ops[0], dims)])
    shape = _shape(flat_ops[0])
    keep = [i for i in range(len(shape)) if i not in dims]
    out_shape = tuple(shape[i] for i in keep)
    m = int(np.prod([shape[i] for i in dims], dtype=np.int64))
    xs = [_st.reshape(_st.transpose(x, tuple(dims) + tuple(keep)), (m,) + out_shape) for x in flat_ops]
    init = [_st.broadcast_in_dim(_ew._convert(_ew._as_operand(v), get_aval(x).dtype, False), out_shape, ())
            for v, x in zip(flat_init, flat_ops)]

    def step(carry, x):
        out = computation(tree_unflatten(tree, carry), tree_unflatten(tree, x))
        return tree_flatten(out)[0], None
    res, _ = _cf.scan(step, init, xs)
    return tree_unflatten(tree, list(res))


def reduce_xor(operand, axes):
    """Bitwise xor over ``axes`` (integers or booleans). Mirrors ``jax.lax.reduce_xor``."""
    operand = _ew._as_operand(operand)
    dt = get_aval(operand).dtype
    if dt != np.bool_ and not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"reduce_xor does not accept dtype {dt.name}.")
    return reduce(operand, np.zeros((), dt)[()], _ew.bitwise_xor, axes)


def split(operand, sizes, axis=0):
    """Pieces of ``operand`` along ``axis`` with the given ``sizes`` (which must sum to its length): one
    ``split`` equation. Mirrors ``jax.lax.split``."""
    operand = _ew._as_operand(operand)
    return split_p.bind(operand, sizes=tuple(sizes), axis=_axis(axis, len(_shape(operand))))


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each axis (one ``tile`` equation, as JAX prints it).
    Mirrors ``jax.lax.tile``."""
    return tile_p.bind(_ew._as_operand(operand), reps=tuple(reps))


# tile is a primitive of its own because JAX's jaxprs show it (``tile[reps=(2, 1)]``); it lowers as a
# broadcast_in_dim to (r0, s0, r1, s1, ...) and a reshape.
def _tile_abstract_eval(x, *, reps):
    if x.ndim != len(reps):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and "
                        f"x.ndim={x.ndim}.")
    return x.update(shape=tuple(int(r) * d for r, d in zip(reps, x.shape)))


tile_p = standard_primitive("tile", _tile_abstract_eval)


def _tile_expanded(x, reps):
    shape = _shape(x)
    big = tuple(d for r, sz in zip(reps, shape) for d in (int(r), sz))
    b = _st.broadcast_in_dim(x, big, tuple(range(1, 2 * len(shape), 2)))
    return _st.reshape(b, tuple(int(r) * sz for r, sz in zip(reps, shape)))


_tile_inline_cache = {}


def _tile_inline(eqn):
    x, = eqn.invars
    reps = eqn.params["reps"]
    key = (x.aval, tuple(int(r) for r in reps))
    jaxpr = _tile_inline_cache.get(key)
    if jaxpr is None:
        jaxpr = _tile_inline_cache[key] = trace_to_jaxpr(lambda a: [_tile_expanded(a, reps)], [x.aval]).jaxpr
    return jaxpr, eqn.invars


def _tile_transpose(ct, x, *, reps):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    shape = x.aval.shape
    ct = _st.reshape(ct, tuple(k for pair in zip(reps, shape) for k in pair))
    return [_red.reduce_sum(ct, tuple(2 * i for i in range(len(shape))))]


def _tile_batch(vals, dims, *, reps):
    new = list(reps)
    new.insert(dims[0], 1)
    return tile_p.bind(vals[0], reps=tuple(new)), dims[0]


tile_p.inline_jaxpr = staticmethod(_tile_inline)
_ad.deflinear(tile_p, _tile_transpose)
_batching.batching_rules[tile_p] = _tile_batch


def _axis(axis, nd):
    a = int(axis)
    if not -nd <= a < nd:
        raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
    return a % nd


def stack(operands, axis=0):
    """The operands (one shape and dtype) stacked along a new ``axis``: one ``stack`` equation. Mirrors
    ``jax.lax.stack``."""
    ops = [_ew._as_operand(o) for o in operands]
    if not ops:
        raise IndexError("list index out of range")   # JAX's (it reads the first operand's rank)
    return stack_p.bind(*ops, axis=_axis(axis, len(_shape(ops[0])) + 1))


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``: one ``unstack`` equation. Mirrors ``jax.lax.unstack``."""
    x = _ew._as_operand(x)
    return tuple(unstack_p.bind(x, axis=_axis(axis, len(_shape(x)))))


# stack, unstack and split are primitives of their own because JAX 0.10.2's jaxprs show them
# (``stack[axis=0] a b``, ``unstack[axis=1] a``, ``split[axis=0 sizes=(...)] a``); each lowers by inlining
# what the core runs: unit-axis broadcasts and a concatenate, slices and reshapes, slices.
def _stack_abstract(*xs, axis):
    a0 = xs[0]
    for x in xs[1:]:
        if x.shape != a0.shape:
            raise ValueError(f"All input arrays must have the same shape. Got "
                             f"{', '.join(str(o.shape) for o in xs)}.")
        if x.dtype != a0.dtype:
            raise TypeError(f"lax.stack requires arguments to have the same dtypes, got "
                            f"{', '.join(o.dtype.name for o in xs)}.")
    if not 0 <= axis <= a0.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {a0.ndim + 1}")
    shape = list(a0.shape)
    shape.insert(axis, len(xs))
    return ShapedArray(tuple(shape), a0.dtype, _lib._weak(*xs))


def _unstack_abstract(x, *, axis):
    if x.ndim == 0:
        raise ValueError(f"unstack requires arrays with rank > 0, however a scalar array of shape {x.shape} "
                         f"was passed.")
    out = ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype, x.weak_type)
    return [out] * x.shape[axis]


def _split_abstract(x, *, sizes, axis):
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(int(s) for s in sizes):
        raise ValueError(f"Sum of sizes {sum(int(s) for s in sizes)} must be equal to dimension {axis} of the "
                         f"operand shape {list(x.shape)}")
    return [ShapedArray(x.shape[:axis] + (int(s),) + x.shape[axis + 1:], x.dtype, x.weak_type) for s in sizes]


stack_p = standard_primitive("stack", _stack_abstract)
unstack_p = standard_primitive("unstack", _unstack_abstract, multiple_results=True)
split_p = standard_primitive("split", _split_abstract, multiple_results=True)


def _stack_expanded(xs, axis):
    shape = list(_shape(xs[0]))
    dims = tuple(i for i in range(len(shape) + 1) if i != axis)
    shape.insert(axis, 1)
    return _lib.concatenate([_st.broadcast_in_dim(x, tuple(shape), dims) for x in xs], axis)


def _unstack_expanded(x, axis):
    shape = _shape(x)
    return [_st.reshape(_slice_axis(x, i, i + 1, axis), shape[:axis] + shape[axis + 1:])
            for i in range(shape[axis])]


def _split_expanded(x, sizes, axis):
    out, start = [], 0
    for n in sizes:
        out.append(_slice_axis(x, start, start + int(n), axis))
        start += int(n)
    return out


_inline_cache = {}


def _inliner(expand):
    """``inline_jaxpr`` of one of the three: the expansion traced once per operand types and params."""
    def inline(eqn):
        params = tuple(sorted((k, tuple(int(s) for s in v) if isinstance(v, tuple) else v)
                              for k, v in eqn.params.items()))
        key = (expand, tuple(v.aval for v in eqn.invars), params)
        jaxpr = _inline_cache.get(key)
        if jaxpr is None:
            jaxpr = _inline_cache[key] = trace_to_jaxpr(lambda *a: list(expand(a, **dict(params))),
                                                        [v.aval for v in eqn.invars]).jaxpr
        return jaxpr, eqn.invars
    return staticmethod(inline)


stack_p.inline_jaxpr = _inliner(lambda xs, axis: [_stack_expanded(xs, axis)])
unstack_p.inline_jaxpr = _inliner(lambda xs, axis: _unstack_expanded(xs[0], axis))
split_p.inline_jaxpr = _inliner(lambda xs, sizes, axis: _split_expanded(xs[0], sizes, axis))


def _stack_transpose(ct, *xs, axis):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval) if _ad.is_undefined(x) else None for x in xs]
    cts = unstack_p.bind(ct, axis=axis)
    return [c if _ad.is_undefined(x) else None for c, x in zip(cts, xs)]


def _multi_linear_jvp(prim):
    """The jvp of a linear primitive with several results (unstack, split): the primitive of the tangent."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if _ad.is_zero(tangents[0]):
            return ans, [_ad.Zero(get_aval(a)) for a in ans]
        return ans, prim.bind(tangents[0], **params)
    return rule


def _unstack_transpose(cts, x, *, axis):
    if all(_ad.is_zero(c) for c in cts):
        return [_ad.Zero(x.aval)]
    return [stack_p.bind(*[_ad.instantiate_zeros(c) for c in cts], axis=axis)]


def _split_transpose(cts, x, *, sizes, axis):
    if all(_ad.is_zero(c) for c in cts):
        return [_ad.Zero(x.aval)]
    return [_lib.concatenate([_ad.instantiate_zeros(c) for c in cts], axis)]


def _stack_batch(vals, dims, *, axis):
    d0 = dims[0]
    if d0 is not _batching.not_mapped and all(d == d0 for d in dims):
        # the new axis goes before or after the batch axis, which stays where it is (JAX's rule)
        return stack_p.bind(*vals, axis=axis if axis <= d0 else axis + 1), d0 + 1 if axis <= d0 else d0
    size = _batching.axis_size_of(vals, dims)
    # an unbatched operand broadcasts with Python-int dimensions here (JAX's stack rule prints `(1,)`, not
    # the `np.int64` of `batching.broadcast`)
    return stack_p.bind(*[_batching.broadcast_batched(v, size, 0) if d is _batching.not_mapped
                          else _batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)], axis=axis + 1), 0


def _unstack_batch(vals, dims, *, axis):
    (x,), (d,) = vals, dims
    out = unstack_p.bind(x, axis=axis if axis < d else axis + 1)
    return out, [d - 1 if axis < d else d] * len(out)


def _split_batch(vals, dims, *, sizes, axis):
    (x,), (d,) = vals, dims
    return split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= d else axis), [d] * len(sizes)


_ad.deflinear(stack_p, _stack_transpose)
for _p, _t in ((unstack_p, _unstack_transpose), (split_p, _split_transpose)):
    _ad.jvp_rules[_p] = _multi_linear_jvp(_p)
    _ad.transpose_rules[_p] = _t
_batching.batching_rules[stack_p] = _stack_batch
_batching.batching_rules[unstack_p] = _unstack_batch
_batching.batching_rules[split_p] = _split_batch


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with dimensions ``[start, stop)`` merged into one. Mirrors ``jax.lax.collapse``."""
    operand = _ew._as_operand(operand)
    shape = _shape(operand)
    nd = len(shape)
    lo = start_dimension % nd if nd else 0
    hi = nd if stop_dimension is None else (stop_dimension % (nd + 1) if stop_dimension < 0 else stop_dimension)
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return _st.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def broadcast_to_rank(x, rank):
    """``x`` with leading unit dimensions up to ``rank``. Mirrors ``jax.lax.broadcast_to_rank``."""
    x = _ew._as_operand(x)
    nd = len(_shape(x))
    if nd >= rank:
        return x
    return _st.broadcast_in_dim(x, (1,) * (rank - nd) + _shape(x), tuple(range(rank - nd, rank)))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes (ValueError when they do not broadcast). Mirrors
    ``jax.lax.broadcast_shapes``."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}") from None


def reciprocal(x):
    """``1 / x``. Mirrors ``jax.lax.reciprocal``."""
    x = _ew._as_operand(x)
    return _ew.div(_ew._convert(_ew._as_operand(1), get_aval(x).dtype, False), x)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``operand`` with the slice at ``index`` along ``axis`` replaced by ``update`` (of rank one less, or
    with a unit ``axis``). Mirrors ``jax.lax.dynamic_update_index_in_dim``."""
    operand, update = _ew._as_operand(operand), _ew._as_operand(update)
    axis = axis % len(_shape(operand))
    if len(_shape(update)) == len(_shape(operand)) - 1:
        update = _st.expand_dims(update, (axis,))
    return _lib.dynamic_update_slice_in_dim(operand, update, index, axis)


def index_take(src, idxs, axes):
    """``src[idxs[0], idxs[1], ...]`` on the listed ``axes`` (each index array of one shape, which leads
    the result). Mirrors ``jax.lax.index_take``."""
    src = _ew._as_operand(src)
    idxs = [_ew._as_operand(i) for i in idxs]
    axes = tuple(int(a) for a in axes)
    if len(idxs) != len(axes):
        raise ValueError("index_take: one index array per axis is needed")
    ishape = _shape(idxs[0])
    cols = [_st.expand_dims(_ew._convert(i, np.dtype(np.int32), False), (len(ishape),)) for i in idxs]
    indices = _lib.concatenate(cols, len(ishape)) if len(cols) > 1 else cols[0]
    shape = _shape(src)
    offset = tuple(i for i in range(len(shape)) if i not in axes)
    dn = _lib.GatherDimensionNumbers(offset_dims=tuple(range(len(ishape), len(ishape) + len(offset))),
                                     collapsed_slice_dims=axes, start_index_map=axes)
    slice_sizes = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return _lib.gather(src, indices, dn, slice_sizes, mode="clip")


def _approx_k(operand, k, reduction_dimension, largest):
    operand = _ew._as_operand(operand)
    nd = len(_shape(operand))
    dim = reduction_dimension % nd
    x = operand if dim == nd - 1 else _st.transpose(operand, tuple(i for i in range(nd) if i != dim) + (dim,))
    if not largest:
        x = _ew.neg(x)
    vals, idx = _lib.top_k(x, k)
    if not largest:
        vals = _ew.neg(vals)
    if dim != nd - 1:
        back = tuple(range(dim)) + (nd - 1,) + tuple(range(dim, nd - 1))
        vals, idx = _st.transpose(vals, back), _st.transpose(idx, back)
    return vals, idx


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The ``k`` largest values along ``reduction_dimension`` and their indices. cranax computes them
    exactly (recall 1, which meets every ``recall_target``). Mirrors ``jax.lax.approx_max_k``."""
    return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The ``k`` smallest values and their indices, exactly. Mirrors ``jax.lax.approx_min_k``."""
    return _approx_k(operand, k, reduction_dimension, False)


_FLOAT_BITS = {2: (np.uint16, 5, 10), 4: (np.uint32, 8, 23), 8: (None, 11, 52)}


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` (a float array, any shape) rounded (to nearest even) to a float format with
    ``exponent_bits`` and ``mantissa_bits``, overflowing to inf and flushing below its smallest normal to zero,
    in the same dtype and shape. One ``reduce_precision`` equation (its derivative rounds the tangent the same
    way, as JAX's); a non-float operand is a ``TypeError``. Mirrors ``jax.lax.reduce_precision``."""
    operand = _ew._as_operand(operand)
    dt = get_aval(operand).dtype
    if not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"reduce_precision requires a floating operand, got {dt}")
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError("reduce_precision: exponent_bits >= 1 and mantissa_bits >= 0 are required")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)


def _reduce_precision_bits(operand, exponent_bits, mantissa_bits):
    """What ``reduce_precision`` computes, in the core's bit operations (the lowering of its equation)."""
    dt = get_aval(operand).dtype
    fi = dtypes.finfo(dt)
    if exponent_bits >= int(fi.nexp) and mantissa_bits >= int(fi.nmant):
        return operand   # the dtype's own format or wider (checkpoint's residual rounding): nothing to do
    if dt in dtypes._CUSTOM_FLOATS:   # bfloat16, float8: through float32 (exact)
        wide = _ew._convert(operand, np.dtype(np.float32), False)
        return _ew._convert(_reduce_precision_bits(wide, exponent_bits, mantissa_bits), dt, False)
    if dt.itemsize == 8:
        return _reduce_precision_f64(operand, exponent_bits, mantissa_bits)
    udt, ebits, mbits = _FLOAT_BITS[dt.itemsize]
    udt = np.dtype(udt)
    u = lambda v: _ew._convert(_ew._as_operand(np.asarray(v, udt)[()]), udt, False)  # noqa: E731
    shape = _shape(operand)
    full = lambda v: _st.broadcast_in_dim(u(v), shape, ())  # noqa: E731
    x = _ew.bitcast_convert_type(operand, udt)
    if mantissa_bits < mbits:
        drop = mbits - mantissa_bits
        last = _ew.bitwise_and(_ew.shift_right_logical(x, full(drop)), full(1))
        bias = _ew.add(full((1 << (drop - 1)) - 1), last)
        x = _ew.add(x, bias)
        x = _ew.bitwise_and(x, full(((1 << (8 * dt.itemsize)) - 1) ^ ((1 << drop) - 1)))
    if exponent_bits < ebits:
        sign = full(1 << (8 * dt.itemsize - 1))
        emask = full(((1 << ebits) - 1) << mbits)
        exp = _ew.bitwise_and(x, emask)
        bias_old = (1 << (ebits - 1)) - 1
        bias_new = (1 << (exponent_bits - 1)) - 1
        max_e = (bias_old + bias_new) << mbits
        min_e = (bias_old - bias_new) << mbits
        sgn = _ew.bitwise_and(x, sign)
        over = _ew.gt(exp, full(max_e))
        under = _ew.le(exp, full(min_e))
        inf = _ew.bitwise_or(sgn, emask)
        x = _ew.select(over, inf, _ew.select(under, sgn, x))
    out = _ew.bitcast_convert_type(x, dt)
    # NaNs stay NaN
    return _ew.select(_ew.ne(operand, operand), operand, out)


def _reduce_precision_f64(x, exponent_bits, mantissa_bits):
    """float64 ``reduce_precision`` by arithmetic (cranax has no 64-bit bit operations everywhere):
    Veltkamp's split rounds to ``mantissa_bits + 1`` significant bits (to nearest), then the new format's
    range overflows to inf and flushes below its smallest normal to a signed zero."""
    dt = np.dtype(np.float64)
    shape = _shape(x)
    c = lambda v: _st.full(shape, v, dt)  # noqa: E731
    out = x
    if mantissa_bits < 52:
        # scale huge values down first so that x * (2**s + 1) cannot overflow
        big = _ew.gt(_ew.abs(x), c(2.0 ** 960))
        scale = _ew.select(big, c(2.0 ** -100), c(1.0))
        xs = _ew.mul(x, scale)
        split = c(2.0 ** (52 - mantissa_bits) + 1.0)
        t = _ew.mul(xs, split)
        hi = _ew.sub(t, _ew.sub(t, xs))
        out = _ew.div(hi, scale)
    if exponent_bits < 11:
        bias = (1 << (exponent_bits - 1)) - 1
        over = _ew.ge(_ew.abs(out), c(2.0 ** (bias + 1)))
        under = _ew.lt(_ew.abs(out), c(2.0 ** (1 - bias)))
        out = _ew.select(over, _ew.mul(_ew.sign(x), c(np.inf)), _ew.select(under, _ew.mul(x, c(0.0)), out))
    # infinities and NaNs pass through (the split turns them into NaN)
    return _ew.select(_ew.is_finite(x), out, x)



# reduce_precision is a primitive of its own (not a composite) because JAX's jaxprs show it — checkpoint's
# partial eval puts one on every saved residual — and because its derivative is not its parts': the bit
# operations have zero derivative, reduce_precision passes the tangent through rounded the same way.
def _reduce_precision_abstract(x, *, exponent_bits, mantissa_bits):
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise TypeError(f"reduce_precision requires a floating operand, got {x.dtype}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


reduce_precision_p = standard_primitive("reduce_precision", _reduce_precision_abstract)
_rp_inline_cache = {}


def _reduce_precision_inline(eqn):
    x, = eqn.invars
    e, m = eqn.params["exponent_bits"], eqn.params["mantissa_bits"]
    key = (x.aval, e, m)
    jaxpr = _rp_inline_cache.get(key)
    if jaxpr is None:
        jaxpr = _rp_inline_cache[key] = trace_to_jaxpr(lambda a: [_reduce_precision_bits(a, e, m)], [x.aval]).jaxpr
    return jaxpr, eqn.invars


def _reduce_precision_transpose(ct, x, *, exponent_bits, mantissa_bits):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [reduce_precision_p.bind(ct, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)]


reduce_precision_p.inline_jaxpr = staticmethod(_reduce_precision_inline)
_ad.deflinear(reduce_precision_p, _reduce_precision_transpose)
_batching.batching_rules[reduce_precision_p] = lambda vals, dims, **p: (reduce_precision_p.bind(vals[0], **p), dims[0])


def optimization_barrier(operand, /):
    """Returns ``operand`` (a pytree of arrays) unchanged, through one ``optimization_barrier`` equation that
    jaxprs show: the optimizer does not merge values computed from its outputs with values computed from
    its inputs (CSE). As in JAX 0.10.2 on the CPU, it changes no bits: XLA's LLVM still contracts
    ``barrier(a * b) + c`` into one multiply-add, and so does cranax. Leaves become arrays (Python scalars
    weakly typed); a leaf that is no array raises TypeError. Mirrors ``jax.lax.optimization_barrier``."""
    flat, tree = tree_flatten(operand)
    for i, x in enumerate(flat):
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(f"Error interpreting argument to optimization_barrier as a JAX value. The problematic "
                            f"value is of type {type(x)} and was passed to optimization_barrier at position {i}."
                            ) from None
    if not flat:
        return operand
    return tree_unflatten(tree, optimization_barrier_p.bind(*(_ew._as_operand(x) for x in flat)))


def platform_dependent(*args, default=None, **per_platform):
    """Calls the branch for the platform running the computation (``cpu``; a GPU backend's calls are
    traced for the CPU too, as cranax runs one program for both), else ``default``. Mirrors
    ``jax.lax.platform_dependent``."""
    plat = default_backend()
    for name in (plat, "cpu" if plat != "cpu" else None):
        if name is not None and per_platform.get(name) is not None:
            return per_platform[name](*args)
    if default is None:
        raise NotImplementedError(f"platform_dependent: no branch for platform {plat!r} and no default")
    return default(*args)


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros in cranax): the ``empty``
    primitive. Mirrors ``jax.lax.empty``."""
    # an int shape stays an int in the params (JAX prints ``shape=3``)
    shape = int(shape) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    return _adu.empty_p.bind(shape=shape, dtype=dtype, out_sharding=out_sharding)


# ----------------------------------------------------------------------------------------------- the rest of jax.lax
# (issue 22 item 5): enums and records of the dot API, tokens, mulhi, ragged/scaled dots, scatter_apply, the
# stateless bit generator, and the primitive objects JAX exports for operations cranax composes.

import enum as _enum
import functools as _functools

from ..core import Primitive as _Primitive


class RandomAlgorithm(_enum.IntEnum):
    """The algorithms ``rng_bit_generator`` names. Mirrors ``jax.lax.RandomAlgorithm``."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


class RaggedDotDimensionNumbers:
    """The dot, ragged and group dimensions of ``ragged_dot_general``. Mirrors
    ``jax.lax.RaggedDotDimensionNumbers``."""

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        self.dot_dimension_numbers = dot_dimension_numbers
        self.lhs_ragged_dimensions = tuple(lhs_ragged_dimensions)
        self.rhs_group_dimensions = tuple(rhs_group_dimensions)

    def __eq__(self, other):
        return isinstance(other, RaggedDotDimensionNumbers) and (
            _norm_dn(self.dot_dimension_numbers), self.lhs_ragged_dimensions, self.rhs_group_dimensions) == (
            _norm_dn(other.dot_dimension_numbers), other.lhs_ragged_dimensions, other.rhs_group_dimensions)

    def __hash__(self):
        return hash((_norm_dn(self.dot_dimension_numbers), self.lhs_ragged_dimensions, self.rhs_group_dimensions))


def _norm_dn(dn):
    (lc, rc), (lb, rb) = dn
    return (tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))


class CompositePrimitive(_Primitive):
    """A primitive object JAX exports for an operation cranax computes as a composition of its primitives:
    ``bind(*args, **params)`` (JAX's params) runs the composition, so it traces, differentiates and batches
    as its parts do, and jaxprs show the parts."""

    def __init__(self, name, fn, multiple_results=False):
        super().__init__(name, multiple_results)
        self._fn = fn
        self.impl = fn

    def bind(self, *args, **params):
        out = self._fn(*args, **params)
        return list(out) if self.multiple_results else out


def dtype(x):
    """The canonical dtype of ``x`` (an array, a scalar, a dtype-like). Mirrors ``jax.lax.dtype``."""
    return dtypes.dtype(x, canonicalize=True)


def broadcast_like(arr, like_arr):
    """``arr`` broadcast (NumPy's rules) to the shape of ``like_arr``. Mirrors ``jax.lax.broadcast_like``."""
    arr = _ew._as_operand(arr)
    shape = _shape(like_arr)
    ashape = _shape(arr)
    nd = len(shape)
    if len(ashape) > nd or any(a not in (1, s) for a, s in zip(ashape[::-1], shape[::-1])):
        raise ValueError(f"broadcast_like: shape {ashape} does not broadcast to {shape}")
    keep = [i for i, (a, s) in enumerate(zip(ashape, shape[nd - len(ashape):])) if a == s]
    squeezed = _st.reshape(arr, tuple(ashape[i] for i in keep))
    return _st.broadcast_in_dim(squeezed, shape, tuple(nd - len(ashape) + i for i in keep))


def stage(x, /):
    """``x`` as an array of the running trace (a Python or NumPy value becomes a cranax array). Mirrors
    ``jax.lax.stage``."""
    x = _ew._as_operand(x)
    if isinstance(x, (np.ndarray, np.generic, TypedScalar)):
        return _st.copy_p.bind(x)
    return x


def dce_sink(val, *, prevent_mlir_dce=False):
    """Marks ``val`` (a pytree) used, so dead-code elimination keeps what computes it; returns None. cranax
    keeps a computation only for its outputs, so this changes nothing. Mirrors ``jax.lax.dce_sink``."""
    return None


def shape_as_value(shape):
    """``shape`` (a tuple of ints) as an int32 array (int64 under x64). Mirrors ``jax.lax.shape_as_value``."""
    dt = dtypes.canonicalize_dtype(np.int64)
    return _st.full((len(shape),), 0, dt) if not shape else _lib.concatenate(
        [_st.full((1,), int(d), dt) for d in shape], 0)


class Token:
    """A sequencing token (``create_token``/``after_all``). cranax runs effects in program order, so a token
    carries nothing; it is a pytree leaf-free value."""

    def __repr__(self):
        return "Token()"


def create_token(_=None):
    """A new token. Mirrors ``jax.lax.create_token``."""
    return Token()


def after_all(*operands):
    """A token that follows all ``operands`` (tokens). Mirrors ``jax.lax.after_all``."""
    for o in operands:
        if not isinstance(o, Token):
            raise TypeError(f"after_all operands must be tokens, got {type(o).__name__}")
    return Token()


def _int_dtype_check(name, *xs):
    dts = [get_aval(x).dtype for x in xs]
    for i, d in enumerate(dts):
        if not dtypes.issubdtype(d, np.integer):
            raise TypeError(f"{name} does not accept dtype {d.name} at position {i}. Accepted dtypes at "
                            f"position {i} are subtypes of integer.")
    return dts[0]


def mulhi(x, y, /):
    """The upper N bits of the 2N-bit product of N-bit integers ``x`` and ``y`` (one dtype; signed as
    two's complement). Computed in N-bit arithmetic on half-width limbs. Mirrors ``jax.lax.mulhi``."""
    # a Python scalar takes the other operand's dtype (weakly typed), as in every lax binary op
    if isinstance(x, (int, bool)) and not isinstance(y, (int, bool)):
        x = _ew._coerce(x, get_aval(_ew._as_operand(y)).dtype)
    if isinstance(y, (int, bool)) and not isinstance(x, (int, bool)):
        y = _ew._coerce(y, get_aval(_ew._as_operand(x)).dtype)
    x, y = _ew._as_operand(x), _ew._as_operand(y)
    dt = _int_dtype_check("mulhi", x, y)
    if get_aval(y).dtype != dt:
        raise TypeError(f"lax.mulhi requires arguments to have the same dtypes, got {dt.name}, "
                        f"{get_aval(y).dtype.name}.")
    shape = np.broadcast_shapes(_shape(x), _shape(y))
    x = _st.broadcast_in_dim(x, shape, tuple(range(len(shape) - len(_shape(x)), len(shape)))) \
        if _shape(x) != shape else x
    y = _st.broadcast_in_dim(y, shape, tuple(range(len(shape) - len(_shape(y)), len(shape)))) \
        if _shape(y) != shape else y
    bits = 8 * dt.itemsize
    udt = np.dtype(f"uint{bits}")
    signed = dtypes.issubdtype(dt, np.signedinteger)
    ux = _ew.bitcast_convert_type(x, udt) if signed else x
    uy = _ew.bitcast_convert_type(y, udt) if signed else y
    c = lambda v: _st.full(shape, v, udt)  # noqa: E731
    h = bits // 2
    mask = c((1 << h) - 1)
    x0, x1 = _ew.bitwise_and(ux, mask), _ew.shift_right_logical(ux, c(h))
    y0, y1 = _ew.bitwise_and(uy, mask), _ew.shift_right_logical(uy, c(h))
    p00, p01, p10, p11 = _ew.mul(x0, y0), _ew.mul(x0, y1), _ew.mul(x1, y0), _ew.mul(x1, y1)
    mid = _ew.add(_ew.add(_ew.shift_right_logical(p00, c(h)), _ew.bitwise_and(p01, mask)),
                  _ew.bitwise_and(p10, mask))
    hi = _ew.add(_ew.add(_ew.add(p11, _ew.shift_right_logical(p01, c(h))), _ew.shift_right_logical(p10, c(h))),
                 _ew.shift_right_logical(mid, c(h)))
    if not signed:
        return hi
    # signed high half = unsigned high half - (x < 0 ? y : 0) - (y < 0 ? x : 0), modulo 2**N
    zero = c(0)
    hi = _ew.sub(hi, _ew.select(_ew.lt(x, _st.full(shape, 0, dt)), uy, zero))
    hi = _ew.sub(hi, _ew.select(_ew.lt(y, _st.full(shape, 0, dt)), ux, zero))
    return _ew.bitcast_convert_type(hi, dt)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product of rank ≥ 2 operands with equal leading (batch) dimensions. Mirrors
    ``jax.lax.batch_matmul``."""
    lhs, rhs = _ew._as_operand(lhs), _ew._as_operand(rhs)
    ls, rs = _shape(lhs), _shape(rhs)
    if len(ls) < 2 or len(ls) != len(rs):
        raise ValueError(f"Arguments to batch_matmul must be at least 2D and agree on their rank, got {len(ls)} "
                         f"and {len(rs)}.")
    if ls[:-2] != rs[:-2]:
        raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions to have the same "
                        f"shape, got {ls[:-2]} and {rs[:-2]}.")
    b = tuple(range(len(ls) - 2))
    return _lib.dot_general(lhs, rhs, (((len(ls) - 1,), (len(rs) - 2,)), (b, b)), precision=precision)


_RAGGED_DEFAULT = ((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None,
               out_sharding=None):
    """Row groups of ``lhs`` (m, k) times their matrices of ``rhs`` (g, k, n): rows ``[sum(group_sizes[:i]),
    sum(group_sizes[:i+1]))`` use ``rhs[i]``; rows past ``sum(group_sizes)`` are zero. Returns (m, n).
    Mirrors ``jax.lax.ragged_dot``."""
    dn = RaggedDotDimensionNumbers(((((1,), (1,)), ((), ()))), (0,), (0,))
    return ragged_dot_general(lhs, rhs, group_sizes, dn, precision=precision,
                              preferred_element_type=preferred_element_type, group_offset=group_offset)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """``ragged_dot`` with dimension numbers. cranax supports the ``ragged_dot`` layout (lhs (m, k) ragged on
    dim 0, rhs (g, k, n) grouped on dim 0, contracting k); others raise NotImplementedError. Mirrors
    ``jax.lax.ragged_dot_general``."""
    lhs, rhs, group_sizes = (_ew._as_operand(v) for v in (lhs, rhs, group_sizes))
    dn = ragged_dot_dimension_numbers
    if (_norm_dn(dn.dot_dimension_numbers), dn.lhs_ragged_dimensions, dn.rhs_group_dimensions) != \
            _RAGGED_DEFAULT:
        raise NotImplementedError("ragged_dot_general: cranax supports only ragged_dot's dimension numbers "
                                  "(((1,), (1,)), ((), ())) with lhs_ragged_dimensions=(0,), "
                                  "rhs_group_dimensions=(0,)")
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported (as on JAX's CPU backend)")
    ls, rs, gs = _shape(lhs), _shape(rhs), _shape(group_sizes)
    if len(ls) != 2 or len(rs) != 3 or len(gs) != 1 or ls[1] != rs[1] or gs[0] != rs[0]:
        raise TypeError(f"ragged_dot requires lhs (m, k), rhs (g, k, n) and group_sizes (g,), got {ls}, {rs}, "
                        f"{gs}")
    if not dtypes.issubdtype(get_aval(group_sizes).dtype, np.integer):
        raise TypeError("ragged_dot: group_sizes must be integers")
    m, g = ls[0], rs[0]
    # each row's group: the number of group ends at or before it
    ends = _lib.cumsum(_ew._convert(group_sizes, np.dtype(np.int32), False), 0)
    rows = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=(m, g), dimension=0, sharding=None)
    gid = _red.reduce_sum(_ew._convert(_ew.ge(rows, _st.broadcast_in_dim(ends, (m, g), (1,))),
                                       np.dtype(np.int32), False), (1,))
    full = _lib.dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision=precision,
                            preferred_element_type=preferred_element_type)   # (m, g, n)
    out_dt = get_aval(full).dtype
    onehot = _ew.eq(_st.broadcast_in_dim(gid, (m, g), (0,)),
                    _st.iota_p.bind(dtype=np.dtype(np.int32), shape=(m, g), dimension=1, sharding=None))
    w = _st.broadcast_in_dim(_ew._convert(onehot, out_dt, False), get_aval(full).shape, (0, 1))
    return _red.reduce_sum(_ew.mul(full, w), (1,))


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None, preferred_element_type=None):
    """``dot_general(lhs * lhs_scale, rhs * rhs_scale)``, each scale repeated along the contracting
    dimension to the operand's size (its subchannel blocks), computed in ``preferred_element_type`` (default
    float32: JAX's default is bfloat16, which cranax computes in float32 until it has that dtype). Mirrors
    ``jax.lax.scaled_dot``."""
    lhs, rhs = _ew._as_operand(lhs), _ew._as_operand(rhs)
    nd = len(_shape(lhs))
    if dimension_numbers is None:
        dimension_numbers = (((1,), (0,)), ((), ())) if nd == 2 else (((2,), (1,)), ((0,), (0,)))
    (lc, rc), _ = dimension_numbers
    out_dt = np.dtype(preferred_element_type) if preferred_element_type is not None else np.dtype(np.float32)

    def scaled(x, s, cdims):
        x = _ew._convert(x, out_dt, False)
        if s is None:
            return x
        s = _ew._convert(_ew._as_operand(s), out_dt, False)
        for d in cdims:
            n, k = _shape(x)[d], _shape(s)[d]
            if k == 0 or n % k:
                raise ValueError(f"scaled_dot: contracting size {n} is not a multiple of the scale's {k}")
            sh = _shape(s)
            s = _st.broadcast_in_dim(s, sh[:d + 1] + (n // k,) + sh[d + 1:],
                                     tuple(range(d + 1)) + tuple(range(d + 2, len(sh) + 1)))
            s = _st.reshape(s, sh[:d] + (n,) + sh[d + 1:])
        if _shape(s) != _shape(x):
            raise ValueError(f"scaled_dot: scale shape {_shape(s)} does not match operand shape {_shape(x)}")
        return _ew.mul(x, s)
    return _lib.dot_general(scaled(lhs, lhs_scale, lc), scaled(rhs, rhs_scale, rc), dimension_numbers)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """``operand`` with ``func`` applied at the windows the scatter indices select, once per time an index
    selects it (duplicates apply it again). As JAX, a ``scatter`` whose ``update_jaxpr`` is ``func`` (its
    updates unused zeros of ``update_shape``). Mirrors ``jax.lax.scatter_apply``."""
    operand = _ew._as_operand(operand)
    dt = get_aval(operand).dtype
    av = ShapedArray((), dt)
    jaxpr, consts = trace_to_jaxpr(lambda x, _: [func(x)], [av, av]).hoist_consts()
    if any(isinstance(c, Tracer) for c in consts):   # JAX 0.10.2's error (its params hold no traced values)
        raise NotImplementedError("Reduction computations can't close over Tracers. Please open an issue at "
                                  "https://github.com/jax-ml/jax.")
    if consts:   # the function's closed-over values: constvars of the update jaxpr, as JAX keeps them
        jaxpr = ClosedJaxpr(Jaxpr(jaxpr.jaxpr.invars[:len(consts)], jaxpr.jaxpr.invars[len(consts):],
                                  jaxpr.jaxpr.outvars, jaxpr.jaxpr.eqns), [])
    unused = _st.full(tuple(update_shape), 0, dt)
    return _lib.scatter_p.bind(operand, _ew._as_operand(scatter_indices), unused,
                               dimension_numbers=_lib._sdn(dimension_numbers),
                               indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                               mode=_lib.GatherScatterMode.from_any(mode), update_jaxpr=jaxpr.jaxpr,
                               update_consts=tuple(consts))


def _apply_inline(eqn):
    """A scatter applying ``update_jaxpr`` lowered for the core: how many times each element is selected (a
    scatter-add of ones), then the function applied elementwise that many times (once for unique indices)."""
    p = dict(eqn.params)
    fj, fc = p.pop("update_jaxpr"), tuple(p.pop("update_consts", ()))
    fn = ClosedJaxpr(fj, list(fc))

    def expanded(x, idx, upd):
        shape = _shape(x)
        count = _lib.scatter_add_p.bind(_st.full(shape, 0, np.dtype(np.int32)), idx,
                                        _st.full(_shape(upd), 1, np.dtype(np.int32)), **p)
        n = int(np.prod(shape)) if shape else 1

        def f(v):   # the scalar function over every element
            flat = _st.reshape(v, (n,))
            bj, bconsts, out_dims = _batching.batch_jaxpr(fn, n, [0, None])
            out = eval_jaxpr(bj.jaxpr, bj.consts, *bconsts, flat, _ew._as_operand(np.zeros((), flat.dtype)))[0]
            if out_dims[0] is None:
                out = _st.broadcast_in_dim(out, (n,), ())
            return _st.reshape(out, shape)

        def body(i, v):
            return _ew.select(_ew.gt(count, _st.full(shape, i, np.dtype(np.int32))), f(v), v)
        if p.get("unique_indices"):
            return [body(0, x)]
        most = _red.reduce_max(count, tuple(range(len(shape)))) if shape else count
        return [_cf.fori_loop(0, most, body, x)]
    return trace_to_jaxpr(expanded, [v.aval for v in eqn.invars]).jaxpr, eqn.invars


_lib.apply_lowering["scatter"] = _apply_inline


# ---- rng_bit_generator: Philox4x32-10 on 32-bit limbs. Its bits are cranax's own (not XLA's); the state
# update (the counter, key words 2 and 3, advancing by the number of 128-bit blocks drawn) is XLA's.
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _philox(c, k):
    u32 = np.dtype(np.uint32)
    shape = _shape(c[0])
    cst = lambda v: _st.full(shape, v, u32)  # noqa: E731
    for _ in range(10):
        hi0, lo0 = mulhi(cst(_PHILOX_M[0]), c[0]), _ew.mul(cst(_PHILOX_M[0]), c[0])
        hi1, lo1 = mulhi(cst(_PHILOX_M[1]), c[2]), _ew.mul(cst(_PHILOX_M[1]), c[2])
        c = [_ew.bitwise_xor(_ew.bitwise_xor(hi1, c[1]), k[0]), lo1,
             _ew.bitwise_xor(_ew.bitwise_xor(hi0, c[3]), k[1]), lo0]
        k = [_ew.add(k[0], cst(_PHILOX_W[0])), _ew.add(k[1], cst(_PHILOX_W[1]))]
    return c


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None):
    """``(new_key, bits)``: random bits of ``shape`` and unsigned ``dtype`` (uint8/16/32/64) from a uint32[4]
    ``key`` (Philox4x32-10 whatever ``algorithm``; the bits differ from XLA's, the state update matches).
    Mirrors ``jax.lax.rng_bit_generator``."""
    key = _ew._as_operand(key)
    dt = np.dtype(dtype)
    if dt.kind != "u":
        raise TypeError(f"rng_bit_generator: dtype must be unsigned, got {dt}")
    if _shape(key) != (4,) or get_aval(key).dtype != np.uint32:
        raise TypeError(f"rng_bit_generator: key must be uint32[4], got {get_aval(key).dtype}{list(_shape(key))}")
    shape = tuple(int(s) for s in shape)
    n = int(np.prod(shape, dtype=np.int64)) * (2 if dt.itemsize == 8 else 1)
    blocks = max(1, -(-n // 4))
    u32 = np.dtype(np.uint32)
    kw = [_lib.index_in_dim(key, i, 0, keepdims=False) for i in range(4)]
    ctr_lo = _ew.add(_st.broadcast_in_dim(kw[2], (blocks,), ()),
                     _st.iota_p.bind(dtype=u32, shape=(blocks,), dimension=0, sharding=None))
    carry = _ew._convert(_ew.lt(ctr_lo, _st.broadcast_in_dim(kw[2], (blocks,), ())), u32, False)
    ctr_hi = _ew.add(_st.broadcast_in_dim(kw[3], (blocks,), ()), carry)
    zero = _st.full((blocks,), 0, u32)
    kk = [_st.broadcast_in_dim(kw[0], (blocks,), ()), _st.broadcast_in_dim(kw[1], (blocks,), ())]
    out = _philox([ctr_lo, ctr_hi, zero, zero], kk)
    words = _st.reshape(_st.transpose(stack(out, 0), (1, 0)), (4 * blocks,))
    words = _slice_axis(words, 0, n, 0) if n else _slice_axis(words, 0, 0, 0)
    if dt.itemsize == 8:
        w = _st.reshape(words, (n // 2, 2))
        lo = _ew._convert(_lib.index_in_dim(w, 0, 1, keepdims=False), dt, False)
        hi = _ew._convert(_lib.index_in_dim(w, 1, 1, keepdims=False), dt, False)
        bits = _ew.bitwise_or(lo, _ew.shift_left(hi, _st.full(_shape(hi), 32, dt)))
    else:
        bits = _ew._convert(words, dt, False) if dt != u32 else words
    bits = _st.reshape(bits, shape)
    adv = np.uint32(blocks)
    new2 = _ew.add(kw[2], _ew._convert(_ew._as_operand(adv), u32, False))
    wrap = _ew._convert(_ew.lt(new2, kw[2]), u32, False)
    new3 = _ew.add(kw[3], wrap)
    new_key = stack([kw[0], kw[1], new2, new3], 0)
    return new_key, bits


_rng_uniform_counter = [0]


def rng_uniform(a, b, shape):
    """Uniform values in ``[a, b)`` of ``shape`` (float ``a``, ``b`` of one dtype), from a generator that
    advances with each call (stateful; the values are not JAX's). Mirrors ``jax.lax.rng_uniform``."""
    a, b = _ew._as_operand(a), _ew._as_operand(b)
    dt = get_aval(a).dtype
    if not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"rng_uniform requires float operands, got {dt}")
    _rng_uniform_counter[0] += 1
    key = np.array([0x5EED, 0, _rng_uniform_counter[0] & 0xFFFFFFFF, 0], np.uint32)
    _, bits = rng_bit_generator(key, shape, np.uint32)
    # 23 (or 52 from two words is not needed for [0, 1) spacing) mantissa bits: x in [1, 2) then minus 1
    f = _ew.bitcast_convert_type(_ew.bitwise_or(_ew.shift_right_logical(bits, _st.full(_shape(bits), 9,
                                 np.dtype(np.uint32))), _st.full(_shape(bits), 0x3F800000, np.dtype(np.uint32))),
                                 np.dtype(np.float32))
    u = _ew._convert(_ew.sub(f, _st.full(_shape(f), 1.0, np.dtype(np.float32))), dt, False)
    shape = _shape(u)
    a_, b_ = _st.broadcast_in_dim(a, shape, ()), _st.broadcast_in_dim(b, shape, ())
    return _ew.add(a_, _ew.mul(u, _ew.sub(b_, a_)))


def composite(decomposition, name, version=0):
    """``decomposition`` marked as a composite op named ``name``; cranax compiles the decomposition (the
    fallback every compiler has). Keyword arguments of the returned function are static attributes. Mirrors
    ``jax.lax.composite``."""
    @_functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)
    call.composite_name, call.composite_version = name, version
    return call


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) elementwise, for float ``a``, ``b``, ``x`` of one
    dtype (TypeError otherwise; Python floats take the others' dtype); NaN outside a, b > 0, 0 <= x <= 1.
    A continued fraction (modified Lentz, 300 terms in float64, 100 in float32) on the side of
    (a + 1) / (a + b + 2) where it converges, mirrored by I_x(a, b) = 1 - I_{1-x}(b, a) on the other.
    Differentiable in ``x`` through the loop. Mirrors ``jax.lax.betainc``."""
    for i, v in enumerate((a, b, x)):
        if isinstance(v, (bool, int)):   # a weakly typed int32: not a float, as JAX says
            raise TypeError(f"regularized_incomplete_beta does not accept dtype int32 at position {i}. Accepted "
                            f"dtypes at position {i} are subtypes of floating.")
    ops = [_ew._as_operand(v) for v in (a, b, x) if not isinstance(v, float)]
    dts = sorted({get_aval(v).dtype.name for v in ops})
    if len(dts) > 1:
        raise TypeError(f"regularized_incomplete_beta requires arguments to have the same dtypes, got "
                        f"{', '.join(dts)}.")
    dt = np.dtype(dts[0]) if dts else dtypes.canonicalize_dtype(np.float64)
    if dt.kind != "f":
        raise TypeError(f"regularized_incomplete_beta does not accept dtype {dt.name} at position 0. Accepted "
                        f"dtypes at position 0 are subtypes of floating.")
    vals = [_ew._convert(_ew._as_operand(v), dt, False) if isinstance(v, float) else _ew._as_operand(v)
            for v in (a, b, x)]
    shape = tuple(np.broadcast_shapes(*[_shape(v) for v in vals]))
    a, b, x = [v if _shape(v) == shape else _st.broadcast_in_dim(
        v, shape, tuple(range(len(shape) - len(_shape(v)), len(shape)))) for v in vals]
    c = lambda v: _st.full(shape, v, dt)  # noqa: E731
    add, sub, mul, div = _ew.add, _ew.sub, _ew.mul, _ew.div
    swap = _ew.gt(x, div(add(a, c(1.)), add(add(a, b), c(2.))))
    aa, bb = _ew.select(swap, b, a), _ew.select(swap, a, b)
    # keep the loop's x strictly inside (0, 1) so the unused side of a select stays finite
    xx = _ew.select(swap, sub(c(1.), x), x)
    xs = _ew.clamp(c(0.), xx, c(1.))
    tiny = c(np.finfo(dt).tiny * 1e3 if dt.itemsize >= 4 else 1e-30)
    steps = 300 if dt.itemsize == 8 else 100

    def floor_tiny(v):
        return _ew.select(_ew.lt(_ew.abs(v), tiny), tiny, v)

    def body(i, state):
        f, cc, d = state
        i = _ew._convert(_ew._as_operand(i), np.dtype(np.int32), False)
        i32 = lambda v: _ew._convert(_ew._as_operand(v), np.dtype(np.int32), False)  # noqa: E731
        m = _st.broadcast_in_dim(_ew._convert(_ew.div(i, i32(2)), dt, False), shape, ())
        odd = _st.broadcast_in_dim(_ew.eq(_ew.rem(i, i32(2)), i32(1)), shape, ())
        first = _st.broadcast_in_dim(_ew.eq(i, i32(0)), shape, ())
        two_m = add(m, m)
        even_num = div(mul(mul(m, sub(bb, m)), xs), mul(add(aa, sub(two_m, c(1.))), add(aa, two_m)))
        odd_num = _ew.neg(div(mul(mul(add(aa, m), add(add(aa, bb), m)), xs),
                              mul(add(aa, two_m), add(add(aa, two_m), c(1.)))))
        num = _ew.select(odd, odd_num, even_num)
        num = _ew.select(first, c(1.), num)
        d = div(c(1.), floor_tiny(add(c(1.), mul(num, d))))
        cc = floor_tiny(add(c(1.), div(num, cc)))
        return mul(f, mul(cc, d)), cc, d

    f, _, _ = _cf.fori_loop(0, steps, body, (tiny, tiny, c(0.)))
    inner = _ew.select(_ew.gt(xs, c(0.)), xs, c(0.5))
    inner = _ew.select(_ew.lt(inner, c(1.)), inner, c(0.5))
    lbeta = sub(add(_ew.lgamma(aa), _ew.lgamma(bb)), _ew.lgamma(add(aa, bb)))
    front = div(_ew.exp(sub(add(mul(aa, _ew.log(inner)), mul(bb, _ew.log1p(_ew.neg(inner)))), lbeta)), aa)
    val = mul(front, f)
    val = _ew.select(_ew.le(xs, c(0.)), c(0.), _ew.select(_ew.ge(xs, c(1.)), c(1.), val))
    out = _ew.select(swap, sub(c(1.), val), val)
    bad = _ew.bitwise_or(_ew.bitwise_or(_ew.le(a, c(0.)), _ew.le(b, c(0.))),
                         _ew.bitwise_or(_ew.lt(x, c(0.)), _ew.gt(x, c(1.))))
    bad = _ew.bitwise_or(bad, _ew.ne(x, x))
    return _ew.select(bad, c(np.nan), out)


# ---- the primitive objects JAX exports for operations cranax composes (bind takes JAX's params)

def _reduce_bind(*args, computation, dimensions, jaxpr=None, **_):
    n = len(args) // 2
    comp = lambda a, b: tuple(computation(*a, *b))  # noqa: E731  (JAX's computation takes the flat values)
    return reduce(tuple(args[:n]), tuple(args[n:]), comp, dimensions)


def _select_and_scatter_bind(operand, source, init_value, *, window_dimensions, window_strides, padding,
                             select_prim=None, select_jaxpr=None, scatter_jaxpr=None, **_):
    if select_prim is None and select_jaxpr is not None:
        jx = getattr(select_jaxpr, "jaxpr", select_jaxpr)
        select_prim = jx.eqns[-1].primitive.name if jx.eqns else None
    select_prim = getattr(select_prim, "name", select_prim)
    if select_prim not in ("ge", "le"):
        raise NotImplementedError("select_and_scatter: cranax supports the ge/le selections with an add scatter")
    if scatter_jaxpr is not None:
        jx = getattr(scatter_jaxpr, "jaxpr", scatter_jaxpr)
        if [e.primitive.name for e in jx.eqns] != ["add"]:
            raise NotImplementedError("select_and_scatter: cranax supports only an add scatter computation")
    out = _win.select_and_scatter_add_p.bind(source, operand, select_prim=select_prim,
                                             window_dimensions=tuple(window_dimensions),
                                             window_strides=tuple(window_strides),
                                             padding=tuple(tuple(p) for p in padding))
    return _ew.add(out, _st.broadcast_in_dim(_ew._as_operand(init_value), _shape(out), ()))


def _identity_many(*args, **_):
    return list(args)


def _approx_top_k_bind(operand, *, k, reduction_dimension=-1, is_max_k=True, **_):
    return _approx_k(operand, k, reduction_dimension, is_max_k)


def _rng_bits_bind(key, *, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, **_):
    return rng_bit_generator(key, shape, dtype, algorithm)


def _dce_bind(*args, **_):
    return []


def _sharding_bind(x, **_):
    return x


top_k_p = CompositePrimitive("top_k", lambda x, *, k, axis=-1: _lib.top_k(x, k, axis=axis), True)
approx_top_k_p = CompositePrimitive("approx_top_k", _approx_top_k_bind, True)
reduce_p = CompositePrimitive("reduce", _reduce_bind, True)
reduce_xor_p = CompositePrimitive("reduce_xor", lambda x, *, axes: reduce_xor(x, axes))
select_and_scatter_p = CompositePrimitive("select_and_scatter", _select_and_scatter_bind)
mulhi_p = CompositePrimitive("mulhi", mulhi)
rng_bit_generator_p = CompositePrimitive("rng_bit_generator", _rng_bits_bind, True)
rng_uniform_p = CompositePrimitive("rng_uniform", lambda a, b, *, shape: rng_uniform(a, b, shape))
create_token_p = CompositePrimitive("create_token", lambda *a: create_token())
after_all_p = CompositePrimitive("after_all", after_all)
dce_sink_p = CompositePrimitive("dce_sink", _dce_bind, True)
stage_p = CompositePrimitive("stage", stage)
device_put_p = CompositePrimitive("device_put", _identity_many, True)
sharding_constraint_p = CompositePrimitive("sharding_constraint", _sharding_bind)
regularized_incomplete_beta_p = CompositePrimitive("regularized_incomplete_beta", betainc)


# The core's ``optimization_barrier`` (``rust/opt/barrier.rs``): outputs = operands, and no CSE across it
# until the optimizer removes it (before ``contract``). ``remat`` lowers a differentiated ``remat2`` with it.
optimization_barrier_p = _Primitive("optimization_barrier", multiple_results=True)
optimization_barrier_p.impl = lambda *xs: [x if isinstance(x, Array) else _from_host(x) for x in xs]
optimization_barrier_p.abstract_eval = lambda *avals: list(avals)


def _barrier_jvp(primals, tangents):   # JAX's: the tangents pass a barrier of their own
    tangents = [_ad.instantiate_zeros(t) for t in tangents]
    return optimization_barrier_p.bind(*primals), optimization_barrier_p.bind(*tangents)


def _barrier_transpose(cts, *primals):
    return optimization_barrier_p.bind(*(_ad.instantiate_zeros(ct) for ct in cts))


_ad.jvp_rules[optimization_barrier_p] = _barrier_jvp
_ad.transpose_rules[optimization_barrier_p] = _barrier_transpose
_batching.batching_rules[optimization_barrier_p] = lambda vals, dims: (optimization_barrier_p.bind(*vals), list(dims))


def _total_order_key(x):
    """``x`` as a signed integer whose order is IEEE's total order for floats (-NaN < -inf < ... < -0 < +0 <
    ... < +inf < +NaN), as XLA's ``total_order`` comparisons use; other dtypes as they are."""
    x = _ew._as_operand(x)
    dt = np.dtype(get_aval(x).dtype)
    if not np.issubdtype(dt, np.floating):
        return x
    it = np.dtype(f"int{dt.itemsize * 8}")
    bits = _ew.bitcast_convert_type(x, it)
    # a negative float's bits order backwards: flip all but the sign bit so larger magnitudes sort lower
    mag = np.array(np.iinfo(it).max, it)
    flip = _ew.bitwise_and(_ew.shift_right_arithmetic(bits, np.array(dt.itemsize * 8 - 1, it)), mag)
    return _ew.bitwise_xor(bits, flip)


def _total_order(cmp):
    return lambda x, y: cmp(_total_order_key(x), _total_order_key(y))


# JAX's comparisons in IEEE total order (its sort comparators and searchsorted use them)
eq_to_p = CompositePrimitive("eq_to", _total_order(_ew.eq))
le_to_p = CompositePrimitive("le_to", _total_order(_ew.le))
lt_to_p = CompositePrimitive("lt_to", _total_order(_ew.lt))
