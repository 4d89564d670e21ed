"""``lax`` functions that are compositions of the primitive families, not primitives of their own:
``associative_scan``, ``reduce`` with a general computation, ``reduce_xor``, ``split``, ``tile``, ``stack``,
``unstack``, ``collapse``, ``broadcast_to_rank``, ``broadcast_shapes``, ``reciprocal``,
``dynamic_update_index_in_dim``, ``index_take``, ``scatter_sub``, ``approx_max_k``/``approx_min_k``,
``reduce_precision``, ``optimization_barrier``, ``platform_dependent``, ``empty``. Mirrors ``jax.lax``."""
import numpy as np

from .. import dtypes
from ..array import default_backend
from ..core import get_aval
from ..tree_util import tree_flatten, tree_unflatten
from . import control_flow as _cf
from . import elementwise as _ew
from . import library as _lib
from . import reductions as _red
from . import structural as _st

__all__ = ["associative_scan", "reduce", "reduce_xor", "split", "tile", "stack", "unstack", "collapse",
           "broadcast_to_rank", "broadcast_shapes", "reciprocal", "dynamic_update_index_in_dim", "index_take",
           "scatter_sub", "approx_max_k", "approx_min_k", "reduce_precision", "optimization_barrier",
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
    for an associative ``fn`` of two pytrees of arrays (``reverse``: suffixes ``fn(ei, fn(ei+1, ...))``), in
    ceil(log2 n) rounds of whole-array calls (Hillis-Steele doubling). Raises ValueError for leaves of
    different lengths. Mirrors ``jax.lax.associative_scan``."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    leaves = [_ew._as_operand(x) for x in leaves]
    nd = len(_shape(leaves[0]))
    axis = axis % nd if nd else 0
    n = _shape(leaves[0])[axis]
    if any(_shape(x)[axis] != n for x in leaves):
        raise ValueError(f"Array inputs to associative_scan must have the same first dimension. (saw: "
                         f"{[_shape(x) for x in leaves]})")
    if reverse:
        leaves = [_lib.lax_rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b)) if not reverse else \
            fn(tree_unflatten(tree, b), tree_unflatten(tree, a))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems ({tree}), got {out_tree}")
        return out_leaves

    d = 1
    while d < n:
        head = [_slice_axis(x, 0, d, axis) for x in leaves]
        comb = combine([_slice_axis(x, 0, n - d, axis) for x in leaves],
                       [_slice_axis(x, d, n, axis) for x in leaves])
        leaves = [_lib.concatenate([h, c], axis) for h, c in zip(head, comb)]
        d *= 2
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
    """Pieces of ``operand`` along ``axis`` with the given ``sizes`` (which must sum to its length). Mirrors
    ``jax.lax.split``."""
    operand = _ew._as_operand(operand)
    n = _shape(operand)[axis]
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != n:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {n} of the operand shape "
                         f"{_shape(operand)}")
    out, start = [], 0
    for s in sizes:
        out.append(_slice_axis(operand, start, start + s, axis))
        start += s
    return out


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each axis. Mirrors ``jax.lax.tile``."""
    operand = _ew._as_operand(operand)
    shape = _shape(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise ValueError(f"len(reps) must equal operand.ndim, got reps={reps} for shape {shape}")
    big = tuple(d for r, s in zip(reps, shape) for d in (r, s))
    b = _st.broadcast_in_dim(operand, big, tuple(range(1, 2 * len(shape), 2)))
    return _st.reshape(b, tuple(r * s for r, s in zip(reps, shape)))


def stack(operands, axis=0):
    """The operands (one shape) stacked along a new ``axis``. Mirrors ``jax.lax.stack``."""
    ops = [_ew._as_operand(o) for o in operands]
    if not ops:
        raise ValueError("stack requires at least one operand")
    nd = len(_shape(ops[0])) + 1
    axis = axis % nd
    return _lib.concatenate([_st.expand_dims(o, (axis,)) for o in ops], axis)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``. Mirrors ``jax.lax.unstack``."""
    x = _ew._as_operand(x)
    axis = axis % len(_shape(x))
    return tuple(_lib.index_in_dim(x, i, axis, keepdims=False) for i in range(_shape(x)[axis]))


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


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """``scatter_add`` of ``-updates``. Mirrors ``jax.lax.scatter_sub``."""
    return _lib.scatter_add(operand, scatter_indices, _ew.neg(_ew._as_operand(updates)), dimension_numbers,
                            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)


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
    """``operand`` rounded (to nearest even) to a float format with ``exponent_bits`` and
    ``mantissa_bits``, overflowing to inf and flushing below its smallest normal to zero, in the same dtype.
    Mirrors ``jax.lax.reduce_precision``."""
    operand = _ew._as_operand(operand)
    dt = get_aval(operand).dtype
    if not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"reduce_precision requires a floating operand, got {dt}")
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError("reduce_precision: exponent_bits >= 1 and mantissa_bits >= 0 are required")
    if dt.itemsize == 8 or dt.name == "bfloat16":
        wide = _ew._convert(operand, np.dtype(np.float32), False) if dt.name == "bfloat16" else None
        if wide is None:
            raise NotImplementedError("reduce_precision of float64 needs uint64 bit arithmetic, which cranax lacks")
        return _ew._convert(reduce_precision(wide, exponent_bits, mantissa_bits), dt, False)
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


def optimization_barrier(operand, /):
    """Returns ``operand`` (a pytree) unchanged. JAX uses it to stop XLA from moving computations across;
    cranax's optimizer has no such motion of side-effect-free code to prevent, so the values pass through.
    Mirrors ``jax.lax.optimization_barrier``."""
    return operand


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
    """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros in cranax). Mirrors
    ``jax.lax.empty``."""
    return _st.full(tuple(shape), np.zeros((), dtype)[()], np.dtype(dtype))
