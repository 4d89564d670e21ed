"""Shape primitives: broadcast_in_dim, reshape, squeeze, transpose, iota, copy, slice, rev, pad — with their
``lax`` wrappers (``broadcast``, ``expand_dims``, ``full``... too) and their rules."""
import numpy as np

from .. import dtypes
from ..array import _from_host
from ..core import ShapedArray, Tracer, TypedScalar, get_aval, typed_scalar
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters import dispatch, lowering
from ..interpreters.partial_eval import trace_to_jaxpr
from ..jaxpr import Jaxpr, JaxprEqn, Var
from . import elementwise as _ew
from . import reductions as _red
from .standard import standard_primitive


def _ints(name, xs, what):
    try:
        return tuple(int(x) for x in xs)
    except TypeError:
        raise TypeError(f"{name}: {what} must be a sequence of integers, got {xs!r}") from None


def _broadcast_in_dim_abstract(x, shape, broadcast_dimensions, sharding=None):
    shape = _ints("broadcast_in_dim", shape, "shape")
    dims = _ints("broadcast_in_dim", broadcast_dimensions, "broadcast_dimensions")
    if len(dims) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
                        f"broadcast_dimensions {dims} for operand ndim {x.ndim}.")
    if any(d < 0 for d in shape):
        raise TypeError(f"broadcast_in_dim shape must have every element be nonnegative, got {shape}.")
    for i, d in enumerate(dims):
        if not 0 <= d < len(shape):
            raise TypeError(f"broadcast_in_dim broadcast_dimensions must be in range for the target shape, "
                            f"got {dims} for shape {shape}.")
        if x.shape[i] != 1 and x.shape[i] != shape[d]:
            raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                            f"corresponding dimensions in the target broadcast shape; got operand of shape "
                            f"{x.shape}, target broadcast shape {shape}, broadcast_dimensions {dims} ")
    if any(b <= a for a, b in zip(dims, dims[1:])):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be strictly increasing; got {dims}")
    return ShapedArray(shape, x.dtype, x.weak_type)


broadcast_in_dim_p = standard_primitive(
    "broadcast_in_dim", _broadcast_in_dim_abstract,
    wire=lambda eqn: {"shape": list(eqn.params["shape"]),
                      "broadcast_dimensions": list(eqn.params["broadcast_dimensions"])})


def _bid_pp(eqn):
    # As JAX's pp rule: ``shape`` and ``sharding`` follow from the output type, and empty
    # ``broadcast_dimensions`` (a scalar broadcast) are not shown.
    dims = eqn.params["broadcast_dimensions"]
    return [("broadcast_dimensions", tuple(dims))] if len(dims) else []


broadcast_in_dim_p.pp_params = _bid_pp


def _reshape_abstract(x, new_sizes, dimensions=None, sharding=None):
    new_sizes = _ints("reshape", new_sizes, "new_sizes")
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be nonnegative, got {new_sizes}")
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for shape {x.shape}.")
    if dimensions is not None and sorted(_ints("reshape", dimensions, "dimensions")) != list(range(x.ndim)):
        raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, got dimensions "
                        f"{tuple(dimensions)} for shape {x.shape}.")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = standard_primitive("reshape", _reshape_abstract,
                               wire=lambda eqn: {"new_sizes": list(eqn.params["new_sizes"])})


def _reshape_inline(eqn):
    """``reshape[dimensions=perm]`` (JAX's transpose-then-reshape in one equation, as its reduce_prod jvp
    stages it) is lowered as the ``transpose`` and plain ``reshape`` the core knows."""
    perm = eqn.params.get("dimensions")
    if perm is None:
        return None
    (x,), (out,) = eqn.invars, eqn.outvars
    a = Var(x.aval)
    t = Var(ShapedArray(tuple(x.aval.shape[d] for d in perm), x.aval.dtype, x.aval.weak_type))
    eqns = [JaxprEqn([a], [t], transpose_p, {"permutation": tuple(int(d) for d in perm)})]
    if t.aval.shape == out.aval.shape:
        return Jaxpr([], [a], [t], eqns), eqn.invars
    o = Var(out.aval)
    eqns.append(JaxprEqn([t], [o], reshape_p, {**eqn.params, "dimensions": None}))
    return Jaxpr([], [a], [o], eqns), eqn.invars


reshape_p.inline_jaxpr = staticmethod(_reshape_inline)


def _squeeze_abstract(x, dimensions):
    dims = _ints("squeeze", dimensions, "dimensions")
    for d in dims:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, got "
                             f"shape={x.shape} and dimensions={dims}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dims), x.dtype, x.weak_type)


squeeze_p = standard_primitive("squeeze", _squeeze_abstract,
                               wire=lambda eqn: {"dimensions": list(eqn.params["dimensions"])})


def _transpose_abstract(x, permutation):
    perm = _ints("transpose", permutation, "permutation")
    if sorted(perm) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got permutation "
                        f"{perm} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)


transpose_p = standard_primitive("transpose", _transpose_abstract,
                                 wire=lambda eqn: {"permutation": list(eqn.params["permutation"])})


def _iota_abstract(dtype, shape, dimension, sharding=None):
    if np.dtype(dtype).kind not in "iufc":
        raise TypeError(f"iota does not accept dtype {np.dtype(dtype).name}. "
                        "Accepted dtypes are subtypes of integer, floating, complexfloating.")
    shape = _ints("iota", shape, "shape")
    if any(d < 0 for d in shape):
        raise ValueError(f"iota shape must have every element be nonnegative, got {shape}")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dimension} for "
                         f"shape {shape}")
    return ShapedArray(shape, dtype, False)


iota_p = standard_primitive(
    "iota", _iota_abstract,
    wire=lambda eqn: {"dtype": dtypes.short_name(eqn.params["dtype"]), "shape": list(eqn.params["shape"]),
                      "dimension": int(eqn.params["dimension"])})

copy_p = standard_primitive("copy", lambda x: x)

del lowering


def _slice_abstract(x, start_indices, limit_indices, strides=None):
    start = _ints("slice", start_indices, "start_indices")
    limit = _ints("slice", limit_indices, "limit_indices")
    strides = (1,) * x.ndim if strides is None else _ints("slice", strides, "strides")
    if not (len(start) == len(limit) == len(strides) == x.ndim):
        raise TypeError(f"slice start_indices, limit_indices and strides must have length {x.ndim}, got "
                        f"{start}, {limit}, {strides}")
    shape = []
    for d, (s, l, st) in enumerate(zip(start, limit, strides)):
        if not (0 <= s <= l <= x.shape[d]) or st < 1:
            raise TypeError(f"slice indices out of range: start {start}, limit {limit}, strides {strides} for "
                            f"operand shape {x.shape}")
        shape.append((l - s + st - 1) // st)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


slice_p = standard_primitive(
    "slice", _slice_abstract,
    wire=lambda eqn: {"start_indices": list(eqn.params["start_indices"]),
                      "limit_indices": list(eqn.params["limit_indices"]),
                      "strides": list(eqn.params["strides"] or (1,) * len(eqn.params["start_indices"]))})


def _rev_abstract(x, dimensions):
    dims = _ints("rev", dimensions, "dimensions")
    if any(not 0 <= d < x.ndim for d in dims) or len(set(dims)) != len(dims):
        raise TypeError(f"rev dimensions {dims} out of range for operand shape {x.shape}")
    return x


rev_p = standard_primitive("rev", _rev_abstract,
                           wire=lambda eqn: {"dimensions": list(eqn.params["dimensions"])})


# ---- the lax wrappers ----

def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    """``operand`` broadcast to ``shape``; operand dim ``i`` maps to ``broadcast_dimensions[i]``. Mirrors
    ``jax.lax.broadcast_in_dim``."""
    operand = _ew._as_operand(operand)
    shape = tuple(int(d) for d in shape)
    # NumPy ints are kept, as JAX keeps them (a transpose rule's np.delete dims print as np.int64(...))
    dims = tuple(d if isinstance(d, np.integer) else int(d) for d in broadcast_dimensions)
    if get_aval(operand).shape == shape and dims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims, sharding=None)


def broadcast(operand, sizes):
    """``operand`` with leading dimensions ``sizes`` added. Mirrors ``jax.lax.broadcast``."""
    av = get_aval(_ew._as_operand(operand))
    sizes = tuple(sizes)
    return broadcast_in_dim(operand, sizes + av.shape, tuple(range(len(sizes), len(sizes) + av.ndim)))


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    """``operand`` reshaped (row-major) to ``new_sizes``; ``dimensions`` transposes first, in the same
    equation (as JAX stages it). Mirrors ``jax.lax.reshape``."""
    operand = _ew._as_operand(operand)
    shape = get_aval(operand).shape
    new_sizes = tuple(int(d) for d in new_sizes)
    dims = None if dimensions is None else _ints("reshape", dimensions, "dimensions")
    if dims == tuple(range(len(shape))):
        dims = None
    # as JAX: a no-op returns the operand, except a rank-0 one (JAX binds it)
    if shape and shape == new_sizes and dims is None:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=None)


def squeeze(array, dimensions):
    """``array`` without the size-1 ``dimensions``. Mirrors ``jax.lax.squeeze``."""
    array = _ew._as_operand(array)
    nd = get_aval(array).ndim
    dims = tuple(sorted(int(d) % nd if nd else int(d) for d in dimensions))
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    """``array`` with size-1 axes inserted at ``dimensions``. Mirrors ``jax.lax.expand_dims``."""
    array = _ew._as_operand(array)
    av = get_aval(array)
    nd = av.ndim + len(dimensions)
    dims = sorted(int(d) % nd for d in dimensions)
    shape = list(av.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(nd) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


def transpose(operand, permutation):
    """``operand`` with axes permuted. Mirrors ``jax.lax.transpose``."""
    operand = _ew._as_operand(operand)
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))):
        return operand
    return transpose_p.bind(operand, permutation=perm)


def iota(dtype, size):
    """``[0, 1, ..., size-1]`` of ``dtype``. Mirrors ``jax.lax.iota``."""
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension, out_sharding=None):
    """An array of ``shape`` whose value is the index along ``dimension``. Mirrors
    ``jax.lax.broadcasted_iota``."""
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=tuple(int(s) for s in shape),
                       dimension=int(dimension), sharding=None)


def _wrapped_fill(v, dt):
    """A Python int fill value in the integer ``dt``: JAX converts it with NumPy (via int64, or uint64 above
    it), so it wraps; one beyond 64 bits is NumPy's OverflowError."""
    if not -2**63 <= v < 2**64:
        raise OverflowError("Python int too large to convert to C long")
    with np.errstate(over="ignore"):
        return int(np.asarray(v).astype(dt))


def full(shape, fill_value, dtype=None, *, _weak=False):
    """An array of ``shape`` filled with ``fill_value``. Mirrors ``jax.lax.full``."""
    shape = tuple(int(s) for s in shape) if not isinstance(shape, int) else (shape,)
    if dtype is None and type(fill_value) is int:   # (its aval would reject a value out of the int range)
        weak, dt = True, dtypes.canonicalize_dtype(np.int64)
    elif dtype is None:
        weak = dtypes.is_weakly_typed(fill_value)
        dt = get_aval(_ew._as_operand(fill_value)).dtype
    else:
        weak = _weak
        dt = dtypes.canonicalize_dtype(dtype)
    if isinstance(fill_value, Tracer) or hasattr(fill_value, "_buf"):
        v = _ew._convert(fill_value, dt, weak)
    else:
        if type(fill_value) is int and dt.kind in "iu":
            fill_value = _wrapped_fill(fill_value, dt)
        # a Python scalar goes as it is: a weak literal prints its Python value (``broadcast_in_dim 0.1:f32[]``)
        v = typed_scalar(fill_value if type(fill_value) in (int, float) else np.asarray(fill_value), dt, weak)
    out = broadcast_in_dim(v, shape, ())
    if isinstance(out, TypedScalar):  # shape (): still an Array, as in JAX
        out = _from_host(out)
    return out


def full_like(x, fill_value, dtype=None, shape=None):
    """Like ``full`` with ``x``'s shape and dtype by default. Mirrors ``jax.lax.full_like``."""
    av = get_aval(_ew._as_operand(x))
    # weakly typed like ``x`` when no dtype is given (JAX's full_like)
    return full(av.shape if shape is None else shape, fill_value, av.dtype if dtype is None else dtype,
                _weak=dtype is None and av.weak_type)


def zeros_like_array(x):
    return full_like(x, 0)


# ---- batching rules ----
# (vmap; see cranax.interpreters.batching). ``bd`` is the operand's batch axis; per-example axis ``a`` is
# axis ``a + (a >= bd)`` of the batched operand.


def _bid_batch(vals, dims, shape, broadcast_dimensions, sharding=None):
    (x,), (bd,) = vals, dims
    size = _batching.axis_size_of(vals, dims)
    x = _batching.moveaxis(x, bd, 0)
    # NumPy's sum, as JAX's rule: the shifted dimensions are np.int64 and print so (``(0, np.int64(2))``)
    return broadcast_in_dim_p.bind(x, shape=(size,) + tuple(shape),
                                   broadcast_dimensions=(0,) + tuple(np.add(1, broadcast_dimensions)),
                                   sharding=sharding), 0


def _reshape_batch(vals, dims, new_sizes, dimensions=None, sharding=None):
    (x,), (bd,) = vals, dims
    size = _batching.axis_size_of(vals, dims)
    x = _batching.moveaxis(x, bd, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(int(d) + 1 for d in dimensions)
    return reshape_p.bind(x, new_sizes=(size,) + tuple(new_sizes), dimensions=dimensions, sharding=sharding), 0


def _squeeze_batch(vals, dims, dimensions):
    (x,), (bd,) = vals, dims
    new = tuple(sorted(int(d) + (int(d) >= bd) for d in dimensions))
    return squeeze_p.bind(x, dimensions=new), bd - sum(d < bd for d in new)


def _transpose_batch(vals, dims, permutation):
    (x,), (bd,) = vals, dims
    perm = (bd,) + tuple(int(p) + (int(p) >= bd) for p in permutation)
    return transpose_p.bind(x, permutation=perm), 0


def _slice_batch(vals, dims, start_indices, limit_indices, strides=None):
    (x,), (bd,) = vals, dims
    size = _batching.axis_size_of(vals, dims)
    start = list(start_indices)
    limit = list(limit_indices)
    start.insert(bd, 0)
    limit.insert(bd, size)
    if strides is not None:
        strides = list(strides)
        strides.insert(bd, 1)
        strides = tuple(strides)
    return slice_p.bind(x, start_indices=tuple(start), limit_indices=tuple(limit), strides=strides), bd


def _rev_batch(vals, dims, dimensions):
    (x,), (bd,) = vals, dims
    return rev_p.bind(x, dimensions=tuple(int(d) + (int(d) >= bd) for d in dimensions)), bd


_batching.batching_rules[broadcast_in_dim_p] = _bid_batch

# The interpreters' hooks (they import no primitives).
_batching.hooks["transpose"] = lambda x, perm: transpose_p.bind(x, permutation=perm)
_batching.hooks["broadcast_in_dim"] = lambda x, shape, dims: broadcast_in_dim_p.bind(
    x, shape=shape, broadcast_dimensions=dims, sharding=None)
dispatch.hooks["broadcast_in_dim_p"] = broadcast_in_dim_p
_ad.hooks["zeros"] = lambda aval: full(aval.shape, 0, aval.dtype)
_ad.hooks["broadcast"] = lambda x, shape: broadcast_in_dim(x, shape, ())
_ad.hooks["broadcast_in_dim"] = lambda x, shape, dims: broadcast_in_dim(x, shape, dims)
_ad.hooks["reshape"] = lambda x, shape: reshape(x, shape)
_batching.batching_rules[reshape_p] = _reshape_batch
_batching.batching_rules[squeeze_p] = _squeeze_batch
_batching.batching_rules[transpose_p] = _transpose_batch
_batching.batching_rules[slice_p] = _slice_batch
_batching.batching_rules[rev_p] = _rev_batch
_batching.defvectorized(copy_p)
# iota has no operands, so it never sees a batched value (it binds on the parent trace unchanged).


# ---- autodiff rules (jvp, transpose) ----
# Shape primitives are linear: the tangent is the primitive applied to the tangent, the cotangent is the
# inverse reshuffle (broadcast → reduce_sum, slice → pad, ...).



def _bid_transpose(ct, x, shape, broadcast_dimensions, sharding=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    unit_dims = [i for i, s in enumerate(x.aval.shape) if s == 1 and shape[broadcast_dimensions[i]] != 1]
    bdims = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
    axes = tuple(i for i in range(len(shape)) if i not in bdims)
    out = _red.reduce_sum(ct, axes) if axes else ct
    if unit_dims:
        out = reshape(out, x.aval.shape)
    return [out]


def _reshape_transpose(ct, x, new_sizes, dimensions=None, sharding=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    if dimensions is None:
        return [reshape(ct, x.aval.shape)]
    # as JAX: back to the transposed operand's shape, then the inverse permutation
    return [transpose(reshape(ct, tuple(np.take(x.aval.shape, dimensions))), tuple(np.argsort(dimensions)))]


def _squeeze_transpose(ct, x, dimensions):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    # JAX's expand_dims: a broadcast_in_dim onto the kept dimensions
    kept = tuple(d for d in range(x.aval.ndim) if d not in dimensions)
    return [broadcast_in_dim(ct, x.aval.shape, kept)]


def _transpose_transpose(ct, x, permutation):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    inv = tuple(int(i) for i in np.argsort(permutation))
    return [transpose(ct, inv)]


def _copy_transpose(ct, x):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [copy_p.bind(ct)]


def _rev_transpose(ct, x, dimensions):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [rev_p.bind(ct, dimensions=dimensions)]


# pad: JAX's ``pad`` (operand, padding_value; padding_config = ((lo, hi, interior), ...)), needed as the
# transpose of ``slice``. Abstract eval and printing here; the core's lowering comes with the shape-ops work.
def _pad_abstract(x, padding_value, padding_config):
    if padding_value.shape != ():
        raise TypeError(f"pad padding_value must be a scalar, got shape {padding_value.shape}")
    if padding_value.dtype != x.dtype:
        raise TypeError(f"pad operand and padding_value must have the same dtype, got {x.dtype.name} and "
                        f"{padding_value.dtype.name}")
    if len(padding_config) != x.ndim:
        raise ValueError(f"pad padding_config must have length {x.ndim}, got {padding_config}")
    shape = []
    for d, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ValueError(f"pad interior padding must be nonnegative, got {padding_config}")
        n = lo + hi + d + max(d - 1, 0) * interior
        if n < 0:
            raise ValueError(f"pad: negative output dimension for padding_config {padding_config}")
        shape.append(n)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


pad_p = standard_primitive(
    "pad", _pad_abstract,
    wire=lambda eqn: {"padding_config": [[int(a) for a in c] for c in eqn.params["padding_config"]]})


def _pad_by_blocks(x, pv, padding_config):
    """``pad`` from primitives the core lowers (broadcast_in_dim, iota, eq, select_n, reshape, slice), in
    time linear in the output size: per axis, interior padding interleaves a block of padding values after
    each element (broadcast to (m, s) + reshape), then edge padding stacks padding blocks before and after
    (broadcast to (k, m) + reshape) and slices the wanted window; negative edges are slices."""
    dt = get_aval(x).dtype
    for d, (lo, hi, interior) in enumerate(padding_config):
        shape = get_aval(x).shape
        m = shape[d]
        if interior > 0 and m > 1:
            s = interior + 1
            bshape = shape[:d + 1] + (s,) + shape[d + 1:]
            xb = broadcast_in_dim(x, bshape, tuple(range(d + 1)) + tuple(range(d + 2, len(bshape))))
            sel = _ew.eq(broadcasted_iota(np.int32, bshape, d + 1), full(bshape, 0, np.int32))
            y = _ew.select(sel, xb, broadcast_in_dim(pv, bshape, ()))
            y = reshape(y, shape[:d] + (m * s,) + shape[d + 1:])
            x = _slice_axis(y, d, 0, m * s - interior)
            shape = get_aval(x).shape
            m = shape[d]
        if lo < 0:
            x = _slice_axis(x, d, -lo, m)
            m += lo
            lo = 0
        if hi < 0:
            x = _slice_axis(x, d, 0, m + hi)
            m += hi
            hi = 0
        shape = get_aval(x).shape
        if (lo or hi) and m == 0:
            x = broadcast_in_dim(pv, shape[:d] + (lo + hi,) + shape[d + 1:], ())
            continue
        if lo or hi:
            r_lo, r_hi = -(-lo // m), -(-hi // m)
            k = r_lo + 1 + r_hi
            bshape = shape[:d] + (k,) + shape[d:]
            xb = broadcast_in_dim(x, bshape, tuple(range(d)) + tuple(range(d + 1, len(bshape))))
            sel = _ew.eq(broadcasted_iota(np.int32, bshape, d), full(bshape, r_lo, np.int32))
            y = _ew.select(sel, xb, broadcast_in_dim(pv, bshape, ()))
            y = reshape(y, shape[:d] + (k * m,) + shape[d + 1:])
            x = _slice_axis(y, d, r_lo * m - lo, r_lo * m + m + hi)
    del dt
    return x


def _slice_axis(x, d, start, limit):
    shape = get_aval(x).shape
    if start == 0 and limit == shape[d]:
        return x
    st = [0] * len(shape)
    li = list(shape)
    st[d], li[d] = start, limit
    return slice_p.bind(x, start_indices=tuple(st), limit_indices=tuple(li), strides=None)


_pad_inline_cache = {}


def _pad_inline(eqn):
    """Lowers ``pad`` by inlining ``_pad_by_blocks`` (until the core has its own pad)."""
    x, pv = eqn.invars
    cfg = tuple(tuple(c) for c in eqn.params["padding_config"])
    key = (x.aval, pv.aval, cfg)
    jaxpr = _pad_inline_cache.get(key)
    if jaxpr is None:
        closed = trace_to_jaxpr(lambda a, b: [_pad_by_blocks(a, b, cfg)], [x.aval, pv.aval])
        assert not closed.consts
        jaxpr = _pad_inline_cache[key] = closed.jaxpr
    return jaxpr, eqn.invars


pad_p.inline_jaxpr = staticmethod(_pad_inline)


def pad(x, padding_value, padding_config):
    """``x`` padded with ``padding_value``: ``padding_config[i] = (lo, hi, interior)``. Mirrors
    ``jax.lax.pad``."""
    # NumPy ints are kept, as JAX keeps them (jnp.pad's widths print as np.int64(...))
    cfg = tuple(tuple(a if isinstance(a, np.integer) else int(a) for a in c) for c in padding_config)
    return pad_p.bind(x, padding_value, padding_config=cfg)


def _pad_jvp(primals, tangents, padding_config):
    x, pv = primals
    tx, tpv = tangents
    ans = pad_p.bind(x, pv, padding_config=padding_config)
    if _ad.is_zero(tx) and _ad.is_zero(tpv):
        return ans, _ad.Zero(ans.aval if hasattr(ans, "aval") else _ad.get_aval(ans))
    return ans, pad_p.bind(_ad.instantiate_zeros(tx), _ad.instantiate_zeros(tpv), padding_config=padding_config)


def _pad_transpose(ct, x, pv, padding_config):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval) if _ad.is_undefined(x) else None,
                _ad.Zero(pv.aval) if _ad.is_undefined(pv) else None]
    out_x = out_pv = None
    if _ad.is_undefined(x):
        # As JAX's rule (and its NumPy-int params, printed np.int64(...)): pad the cotangent by the negated
        # lo/hi, then the strided slice that drops the interior padding.
        lo, hi, interior = (np.array([c[k] for c in padding_config], dtype=np.int64) for k in range(3))
        unpad = tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior)))
        t = pad(ct, full((), 0, _ad.get_aval(ct).dtype), unpad)
        shape = _ad.get_aval(t).shape
        out_x = slice_p.bind(t, start_indices=tuple(np.zeros_like(lo)), limit_indices=tuple(int(d) for d in shape),
                             strides=tuple(np.add(interior, 1)))
    if _ad.is_undefined(pv):
        total = _red.reduce_sum(ct, tuple(range(_ad.get_aval(ct).ndim)))
        inner = _red.reduce_sum(out_x, tuple(range(x.aval.ndim))) if out_x is not None else None
        out_pv = total if inner is None else _ew.sub(total, inner)
    return [out_x, out_pv]


_ad.jvp_rules[pad_p] = _pad_jvp
_ad.transpose_rules[pad_p] = _pad_transpose


def _slice_transpose(ct, x, start_indices, limit_indices, strides=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    shape = x.aval.shape
    # as JAX's rule, with its NumPy-int padding (printed np.int64(...)): unit strides pad (lo, hi, 0); else
    # hi runs from the last element taken, so it is exact for strided slices
    if strides is None or all(st == 1 for st in strides):
        cfg = tuple(zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(shape)))
    else:
        out_shape = _ad.get_aval(ct).shape
        real_limits = np.add(start_indices, np.where(np.array(out_shape) == 0, 0,
                                                     np.add(1, np.multiply(np.subtract(out_shape, 1), strides))))
        cfg = tuple(zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1)))
    zero = full((), 0, x.aval.dtype)
    return [pad(ct, zero, cfg)]


def _slice_transpose_ref(ct, x, start_indices, limit_indices, strides=None, *, refs):
    # into a cotangent ref: a unit-stride slice adds only its window (JAX's RefAccum rule); a strided one
    # adds its padded cotangent whole
    if _ad.is_zero(ct) or refs[0] is _ad.DROP:
        return [None]
    if strides is None or all(st == 1 for st in strides):
        refs[0].addupdate(ct, tuple(slice(int(a), int(b)) for a, b in zip(start_indices, limit_indices)))
    else:
        refs[0].addupdate(_slice_transpose(ct, x, start_indices, limit_indices, strides)[0])
    return [None]


_ad.ref_transpose_rules[slice_p] = _slice_transpose_ref

for _p, _t in ((broadcast_in_dim_p, _bid_transpose), (reshape_p, _reshape_transpose),
               (squeeze_p, _squeeze_transpose), (transpose_p, _transpose_transpose), (copy_p, _copy_transpose),
               (rev_p, _rev_transpose), (slice_p, _slice_transpose)):
    _ad.deflinear(_p, _t)
del _p, _t
_ad.defjvp_zero(iota_p)


# ---- batching rules ----
# (vmap) for primitives defined by the blocks above.

def _pad_batch(vals, dims, padding_config):
    (x, pv), (bd, pbd) = vals, dims
    size = _batching.axis_size_of(vals, dims)
    cfg = tuple(tuple(c) for c in padding_config)
    if pbd is _batching.not_mapped:
        cfg = cfg[:bd] + ((0, 0, 0),) + cfg[bd:]
        return pad_p.bind(x, pv, padding_config=cfg), bd
    # A batched padding value: pad with zeros, then select the padding positions from a per-example mask.
    x = _batching.bdim_at_front(x, bd, size)
    pv = _batching.moveaxis(pv, pbd, 0)
    dt = x.dtype if hasattr(x, "dtype") else get_aval(x).dtype
    padded = pad_p.bind(x, full((), 0, dt), padding_config=((0, 0, 0),) + cfg)
    ex_shape = get_aval(x).shape[1:]
    mask = pad_p.bind(full(ex_shape, 1, dt), full((), 0, dt), padding_config=cfg)
    out_shape = get_aval(padded).shape
    mask = broadcast_in_dim(_ew.ne(mask, full(mask.shape, 0, dt)), out_shape,
                            tuple(range(1, len(out_shape))))
    pv = broadcast_in_dim(pv, out_shape, (0,))
    return _ew.select(mask, padded, pv), 0


_batching.batching_rules[pad_p] = _pad_batch

