"""Collectives over named axes: ``psum``, ``pmax``, ``pmin``, ``pmean``, ``all_gather``, ``psum_scatter``,
``all_to_all``, ``ppermute``, ``pshuffle``, ``pswapaxes``, ``pbroadcast``, ``axis_index``, ``axis_size``, with
their primitives and rules. Mirrors ``jax.lax``'s parallel operators.

A named axis is bound by ``vmap(..., axis_name=)`` (and ``pmap``, which is ``vmap`` on cranax's one device):
``core.extend_axis_env`` records its size while the mapped function is traced, so abstract evaluation knows
e.g. ``all_gather``'s output shape. The collective itself never reaches a backend: the vmap that owns the
name rewrites it, through ``batching.collective_rules``, into ordinary array operations over the batch axis
(``psum`` → ``reduce_sum``, ``all_gather`` → the batch axis moved into place, ``ppermute`` → slices and a
concatenate...). A vmap with another name passes the collective to its parent with the batch axis kept, so
nested named axes work in any order. Bound with no enclosing map naming the axis, a collective raises JAX's
``NameError``.
"""
import numpy as np

from .. import _core, _transport, core, dtypes
from ..array import _from_host
from ..core import ShapedArray, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.batching import not_mapped
from .._pytree import tree_flatten, tree_unflatten
from ..interpreters.partial_eval import trace_to_jaxpr
from . import callback as _cb
from . import elementwise as _ew
from . import lax_composites as _lc
from . import library as _lib
from . import reductions as _red
from . import structural as _st
from .standard import standard_primitive

__all__ = ["pcast", "psum", "pmax", "pmin", "pmean", "all_gather", "psum_scatter", "all_to_all", "ppermute", "pshuffle",
           "pswapaxes", "pbroadcast", "axis_index", "axis_size", "psum_p", "pmax_p", "pmin_p", "all_gather_p",
           "reduce_scatter_p", "all_to_all_p", "ppermute_p", "axis_index_p", "pbroadcast_p", "process_allreduce_p",
           "process_allgather_p", "ragged_all_to_all", "ragged_all_to_all_p", "psend", "precv"]


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _check_bound(names, prim_name):
    """Each name must be bound by an enclosing map (integer names are positional axes of a pmap jaxpr)."""
    size = 1
    for n in names:
        if not isinstance(n, int):
            size *= core.axis_frame(n, prim_name)
    return size


def _unbound_impl(prim, key):
    def impl(*args, **params):
        names = _names(params[key])
        raise NameError(f"unbound axis name: {names[0]}")
    prim.def_impl(impl)


def _no_groups(axis_index_groups, what):
    if axis_index_groups is not None:   # JAX's two texts
        if what in ("psum", "pmax", "pmin"):
            raise NotImplementedError("axis_index_groups not supported in vmap collectives. Please open a "
                                      "feature request!")
        raise NotImplementedError("axis_index_groups not supported in vmap")


# ----------------------------------------------------------------------------------------------- primitives

def _same_aval(prim_name):
    def abstract_eval(x, axes, axis_index_groups=None):
        _check_bound(axes, prim_name)
        dt = np.dtype(np.int32) if x.dtype == np.bool_ and prim_name == "psum" else x.dtype
        return ShapedArray(x.shape, dt, x.weak_type)
    return abstract_eval


psum_p = standard_primitive("psum", _same_aval("psum"))
pmax_p = standard_primitive("pmax", _same_aval("pmax"))
pmin_p = standard_primitive("pmin", _same_aval("pmin"))
for _p in (psum_p, pmax_p, pmin_p):
    _p.pp_params = lambda eqn: [("axes", tuple(eqn.params["axes"])),
                                ("axis_index_groups", eqn.params.get("axis_index_groups"))]
    _unbound_impl(_p, "axes")


def _all_gather_abstract(x, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled):
    _check_bound(axis_name, "all_gather")
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


all_gather_p = standard_primitive("all_gather", _all_gather_abstract)
_unbound_impl(all_gather_p, "axis_name")


def _reduce_scatter_abstract(x, scatter_dimension, axis_name, axis_index_groups, axis_size, tiled):
    _check_bound(axis_name, "psum_scatter")
    shape = list(x.shape)
    n = shape[scatter_dimension]
    if tiled:
        if n % axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} of the operand (size {n}) must be "
                             f"divisible by the axis size {axis_size}")
        shape[scatter_dimension] = n // axis_size
    else:
        if n != axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} of the operand (size {n}) must equal "
                             f"the axis size {axis_size} when tiled=False")
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


reduce_scatter_p = standard_primitive("reduce_scatter", _reduce_scatter_abstract)
_unbound_impl(reduce_scatter_p, "axis_name")


def _all_to_all_shape(shape, split_axis, concat_axis, n, tiled):
    shape = list(shape)
    if tiled:
        if shape[split_axis] % n:
            raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to divide "
                             f"x.shape[split_axis], but they are {n} and {shape[split_axis]} respectively.")
        shape[split_axis] //= n
        shape[concat_axis] *= n
    else:
        if shape[split_axis] != n:
            raise ValueError(f"all_to_all requires the size of the mapped axis axis_name to equal "
                             f"x.shape[split_axis], but they are {n} and {shape[split_axis]} respectively.")
        del shape[split_axis]
        shape.insert(concat_axis, n)
    return tuple(shape)


def _all_to_all_abstract(x, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    n = _check_bound(_names(axis_name), "all_to_all")
    return ShapedArray(_all_to_all_shape(x.shape, split_axis, concat_axis, n, tiled), x.dtype, x.weak_type)


all_to_all_p = standard_primitive("all_to_all", _all_to_all_abstract)
_unbound_impl(all_to_all_p, "axis_name")


def _ppermute_abstract(x, axis_name, perm):
    _check_bound(axis_name, "ppermute")
    return x


ppermute_p = standard_primitive("ppermute", _ppermute_abstract)
_unbound_impl(ppermute_p, "axis_name")


def _pbroadcast_abstract(x, axis_name, source):
    _check_bound(axis_name, "pbroadcast")
    return x


pbroadcast_p = standard_primitive("pbroadcast", _pbroadcast_abstract)
_unbound_impl(pbroadcast_p, "axis_name")


def _axis_index_abstract(axis_name):
    _check_bound(_names(axis_name), "axis_index")
    return ShapedArray((), np.dtype(np.int32), False)


axis_index_p = standard_primitive("axis_index", _axis_index_abstract)
_unbound_impl(axis_index_p, "axis_name")


# ----------------------------------------------------------------------------------------------- wrappers

def _map_leaves(fn, x):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [fn(_ew._as_operand(leaf)) for leaf in leaves])


def psum(x, axis_name, *, axis_index_groups=None):
    """Sums ``x`` (a pytree of arrays) over the named axis ``axis_name`` (a name or a tuple of names): every
    member gets the total; a bool operand sums as int32; a value not mapped over the axis is multiplied by its
    size. ``NameError`` when no enclosing ``vmap``/``pmap`` binds the name. Mirrors ``jax.lax.psum``."""
    names = _names(axis_name)
    return _map_leaves(lambda v: psum_p.bind(v, axes=names, axis_index_groups=axis_index_groups), x)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` over the named axis; same shape and dtype. Mirrors ``jax.lax.pmax``."""
    names = _names(axis_name)
    return _map_leaves(lambda v: pmax_p.bind(v, axes=names, axis_index_groups=axis_index_groups), x)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` over the named axis; same shape and dtype. Mirrors ``jax.lax.pmin``."""
    names = _names(axis_name)
    return _map_leaves(lambda v: pmin_p.bind(v, axes=names, axis_index_groups=axis_index_groups), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the named axis (``psum`` divided by the axis size). Mirrors ``jax.lax.pmean``."""
    n = float(axis_size(axis_name))
    names = _names(axis_name)

    def one(v):
        total = psum_p.bind(v, axes=names, axis_index_groups=axis_index_groups)
        if not dtypes.issubdtype(get_aval(total).dtype, np.inexact):   # true division, as jnp's ``/``
            total = _ew.convert_element_type(total, dtypes.default_float_dtype())
        return _ew.div(total, n)
    return _map_leaves(one, x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Gathers ``x`` from every member of the named axis: ``f32[*s]`` → ``f32[n, *s]`` with the new axis at
    ``axis`` (``tiled=True``: concatenated along ``axis`` instead). Mirrors ``jax.lax.all_gather``."""
    names = _names(axis_name)
    n = axis_size(names)

    def one(v):
        nd = get_aval(v).ndim
        ax = axis if axis >= 0 else axis + nd + (0 if tiled else 1)
        return all_gather_p.bind(v, all_gather_dimension=ax, axis_name=names, axis_index_groups=axis_index_groups,
                                 axis_size=n, tiled=bool(tiled))
    return _map_leaves(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """Sums ``x`` over the named axis and gives member ``i`` the ``i``-th slice of the total along
    ``scatter_dimension`` (``tiled=False``: that dimension must equal the axis size and is removed; ``tiled``:
    it is divided by the axis size). ``ValueError`` on a size mismatch. Mirrors ``jax.lax.psum_scatter``."""
    names = _names(axis_name)
    n = axis_size(names)
    return _map_leaves(lambda v: reduce_scatter_p.bind(v, scatter_dimension=scatter_dimension, axis_name=names,
                                                       axis_index_groups=axis_index_groups, axis_size=n,
                                                       tiled=bool(tiled)), x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Member ``i`` splits ``x`` along ``split_axis`` into ``n`` chunks and sends chunk ``j`` to member ``j``,
    which stacks what it receives along ``concat_axis`` (``tiled``: concatenates). Mirrors
    ``jax.lax.all_to_all``."""
    name = axis_name[0] if isinstance(axis_name, (tuple, list)) and len(axis_name) == 1 else axis_name
    return _map_leaves(lambda v: all_to_all_p.bind(v, split_axis=split_axis, concat_axis=concat_axis,
                                                   axis_name=name, axis_index_groups=axis_index_groups,
                                                   tiled=bool(tiled)), x)


def ppermute(x, axis_name, perm):
    """Sends member ``src``'s ``x`` to member ``dst`` for each ``(src, dst)`` in ``perm``; a member no pair
    sends to gets zeros. Mirrors ``jax.lax.ppermute``."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    names = _names(axis_name)
    return _map_leaves(lambda v: ppermute_p.bind(v, axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Member ``i`` gets member ``perm[i]``'s ``x`` (``perm`` a permutation of ``range(n)``). Mirrors
    ``jax.lax.pshuffle``."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named axis with positional axis ``axis`` (size must equal the axis size): ``all_to_all``
    with ``split_axis = concat_axis = axis``. Mirrors ``jax.lax.pswapaxes``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x, axis_name, source):
    """Every member of the named axis gets member ``source``'s ``x``. Mirrors ``jax.lax.pbroadcast``."""
    names = _names(axis_name)
    return _map_leaves(lambda v: pbroadcast_p.bind(v, axis_name=names, source=int(source)), x)


def pcast(x, axis_name, *, to):
    """Casts ``x`` between varying and invariant over the named axis (``to``: ``'varying'``,
    ``'invariant'``...): a type-level change in JAX's shard_map; values are unchanged. ``NameError`` when the
    axis is unbound. Mirrors ``jax.lax.pcast``."""
    for n in _names(axis_name):
        core.axis_frame(n, "pcast")
    return x


def axis_index(axis_name):
    """This member's int32 index along the named axis (a tuple of names: the row-major index over them).
    Mirrors ``jax.lax.axis_index``."""
    if isinstance(axis_name, (tuple, list)):
        names = tuple(axis_name)
        if len(names) == 1:
            return axis_index_p.bind(axis_name=names[0])
        idx = None
        for n in names:
            i = axis_index_p.bind(axis_name=n)
            idx = i if idx is None else _ew.add(_ew.mul(idx, np.int32(core.axis_frame(n, "axis_index"))), i)
        return idx
    return axis_index_p.bind(axis_name=axis_name)


def axis_size(axis_name):
    """The size of the named axis (the product over a tuple of names), a Python int. ``NameError`` when it is
    unbound. Mirrors ``jax.lax.axis_size``."""
    size = 1
    for n in _names(axis_name):
        size *= core.axis_frame(n)
    return size


# ----------------------------------------------------------------------------------------------- ragged, p2p

def _ragged_abstract(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, axis_name,
                     axis_index_groups=None):
    n = _check_bound(_names(axis_name), "ragged_all_to_all")
    if operand.dtype != output.dtype:
        raise ValueError(f"ragged_all_to_all input and output dtypes must be equal, got {operand.dtype} and "
                         f"{output.dtype}.")
    if operand.ndim == 0 or operand.ndim != output.ndim or operand.shape[1:] != output.shape[1:]:
        raise ValueError("ragged_all_to_all input and output shapes must be equal, except for the outermost "
                         f"dimension, got {operand.shape} and {output.shape}.")
    meta = (input_offsets, send_sizes, output_offsets, recv_sizes)
    names = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")
    for a, nm in zip(meta, names):
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {nm} must be integer type, got {a.dtype}.")
        if a.ndim != 1:
            raise ValueError(f"ragged_all_to_all {nm} must be rank 1 with positive dimension size, but got shape "
                             f"{a.shape}")
        if a.shape != input_offsets.shape:
            raise ValueError("ragged_all_to_all offsets and sizes must have the same shape, got "
                             f"{[x.shape for x in meta]}.")
    if input_offsets.shape[0] % n:
        raise ValueError(f"ragged_all_to_all: the {input_offsets.shape[0]} offsets are not divisible by the size "
                         f"{n} of axis {axis_name}.")
    return ShapedArray(output.shape, output.dtype, output.weak_type)


ragged_all_to_all_p = standard_primitive("ragged_all_to_all", _ragged_abstract)
_unbound_impl(ragged_all_to_all_p, "axis_name")


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, *, axis_name,
                      axis_index_groups=None):
    """The ragged all-to-all over the named axis: slice ``i`` of this member's ``operand`` (rows
    ``input_offsets[i] : input_offsets[i] + send_sizes[i]``) goes to member ``i // (K / n)`` (``K`` the offsets'
    length, ``n`` the axis size), written there at row ``output_offsets[i]`` of its copy of ``output``; rows
    nobody writes keep ``output``'s values. ``operand`` is (R, ...) and ``output`` (M, ...) with equal trailing
    shapes and dtypes; the four offset/size arrays are 1-D integer arrays of length ``K``. Returns an array like
    ``output``. Rows that fall outside ``output`` are dropped. ``ValueError`` for mismatched shapes or dtypes,
    ``NameError`` for an unbound axis. Mirrors ``jax.lax.ragged_all_to_all`` (XLA:CPU does not implement it;
    cranax computes it wherever the named axis is a ``vmap``/``shard_map`` axis)."""
    args = [_ew._as_operand(a) for a in (operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)]
    return ragged_all_to_all_p.bind(*args, axis_name=_names(axis_name), axis_index_groups=axis_index_groups)


def _ragged_rule(name, n, vals, dims, axis_name, axis_index_groups=None):
    _no_groups(axis_index_groups, "ragged_all_to_all")
    if len(axis_name) != 1 or _spans(name) > 1:
        raise NotImplementedError("ragged_all_to_all over one named axis of one process only")
    op, out, io, ss, oo, _rs = (_front(v, d, n) for v, d in zip(vals, dims))
    rows, m = get_aval(op).shape[1], get_aval(out).shape[1]
    per = get_aval(io).shape[1] // n          # slices each member sends to each receiver
    trailing = get_aval(out).shape[2:]
    s = _st.broadcast_in_dim(_st.iota(np.int32, m), (n, m), (1,))          # output row, per receiver
    res = out
    for p in range(n):                        # sender
        src = _lib.index_in_dim(op, p, 0, keepdims=False)
        for t in range(per):
            # the slice sender p sends receiver j is slice j * per + t: one column per receiver
            def col(a):
                a = _ew.convert_element_type(_lib.index_in_dim(a, p, 0, keepdims=False), np.int32)
                a = _lib.lax_slice(a, (t,), (n * per,), (per,))
                return _st.broadcast_in_dim(a, (n, m), (0,))
            start, size, dst = col(io), col(ss), col(oo)
            k = _ew.sub(s, dst)
            inside = _ew.bitwise_and(_ew.ge(k, np.int32(0)), _ew.lt(k, size))
            row = _ew.clamp(np.int32(0), _ew.add(start, k), np.int32(max(rows - 1, 0)))
            got = _lc.index_take(src, [row], (0,))                               # (n, m, *trailing)
            mask = _st.broadcast_in_dim(inside, (n, m) + trailing, (0, 1))
            res = _ew.select(mask, got, res)
    return res, 0


def _ragged_pass(vals, dims, **params):
    if all(d is not_mapped for d in dims):
        return ragged_all_to_all_p.bind(*vals, **params), not_mapped
    raise NotImplementedError("ragged_all_to_all with operands batched by a vmap that does not name its axis")


def _ragged_jvp(primals, tangents, axis_name, axis_index_groups=None):
    # linear in (operand, output) for fixed offsets: the tangent moves the same rows
    out = ragged_all_to_all_p.bind(*primals, axis_name=axis_name, axis_index_groups=axis_index_groups)
    t_op, t_out = (_ad.instantiate_zeros(t) for t in tangents[:2])
    t = ragged_all_to_all_p.bind(t_op, t_out, *primals[2:], axis_name=axis_name,
                                 axis_index_groups=axis_index_groups)
    return out, t


def psend(x, axis_name, perm):
    """Sends ``x`` to the members ``perm`` names (``(source, destination)`` pairs), returning a token for
    ``precv``. JAX implements it on GPU only (NCCL send; its CPU backend raises at compile time); cranax has no
    device-to-device send on any backend and raises ``NotImplementedError`` at once: use ``lax.ppermute``,
    which moves the same data. Mirrors ``jax.lax.psend``."""
    raise NotImplementedError("psend is currently only implemented on GPU (in JAX, through NCCL); cranax has "
                              "no device-to-device send: use lax.ppermute(x, axis_name, perm)")


def precv(token, out_shape, axis_name, perm):
    """Receives what the matching ``psend`` sent. As ``psend``: ``NotImplementedError`` (use
    ``lax.ppermute``). Mirrors ``jax.lax.precv``."""
    raise NotImplementedError("precv is currently only implemented on GPU (in JAX, through NCCL); cranax has "
                              "no device-to-device receive: use lax.ppermute(x, axis_name, perm)")


# ----------------------------------------------------------------------------------------------- batching
# Rules of the vmap that owns a name: ``rule(name, n, vals, dims, **params) -> (out, out_dim)``. Names left
# after this axis's are re-bound on the parent, where the next enclosing map takes them.

def _rest(names, name):
    return tuple(a for a in names if a != name)


def _front(v, d, n):
    return _batching.bdim_at_front(v, d, n)


def _psum_rule(name, n, vals, dims, axes, axis_index_groups=None):
    _no_groups(axis_index_groups, "psum")
    (x,), (d,) = vals, dims
    if get_aval(x).dtype == np.bool_:
        x = _ew.convert_element_type(x, np.int32)
    if d is not_mapped:
        out = _ew.mul(x, n)   # a weak scalar: x keeps its dtype and weak type
    else:
        out = _red.reduce_sum(x, (d,))
    if _spans(name) > 1:
        out = process_allreduce_p.bind(out, op="sum")
    rest = _rest(axes, name)
    if rest:
        out = psum_p.bind(out, axes=rest, axis_index_groups=None)
    return out, not_mapped


def _chooser_rule(prim, reducer):
    def rule(name, n, vals, dims, axes, axis_index_groups=None):
        _no_groups(axis_index_groups, prim.name)
        (x,), (d,) = vals, dims
        out = x if d is not_mapped else reducer(x, (d,))
        if _spans(name) > 1:
            out = process_allreduce_p.bind(out, op=prim.name[1:])
        rest = _rest(axes, name)
        if rest:
            out = prim.bind(out, axes=rest, axis_index_groups=None)
        return out, not_mapped
    return rule


def _all_gather_rule(name, n, vals, dims, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled):
    _no_groups(axis_index_groups, "all_gather")
    if len(axis_name) != 1:
        raise NotImplementedError("all_gather over several named axes at once")
    (x,), (d,) = vals, dims
    x = _local_to_global_stack(_front(x, d, n), name)
    shape = get_aval(x).shape
    out = _batching.moveaxis(x, 0, all_gather_dimension)
    if tiled:
        s = list(shape[1:])
        s[all_gather_dimension] *= shape[0]
        out = _st.reshape(out, tuple(s))
    return out, not_mapped


def _reduce_scatter_rule(name, n, vals, dims, scatter_dimension, axis_name, axis_index_groups, axis_size, tiled):
    _no_groups(axis_index_groups, "psum_scatter")
    (x,), (d,) = vals, dims
    member = get_aval(x).shape if d is not_mapped else get_aval(x).shape[:d] + get_aval(x).shape[d + 1:]
    _reduce_scatter_abstract(ShapedArray(member, get_aval(x).dtype), scatter_dimension, axis_name,
                             axis_index_groups, n, tiled)   # JAX's errors
    total, _ = _psum_rule(name, n, [x], [d], tuple(axis_name))
    shape = get_aval(total).shape
    n_all = n * _spans(name)
    if tiled:
        k = shape[scatter_dimension] // n_all
        split = shape[:scatter_dimension] + (n_all, k) + shape[scatter_dimension + 1:]
        total = _st.reshape(total, split)
    out = _batching.moveaxis(total, scatter_dimension, 0)
    if n_all != n:   # this process's members only
        out = _lib.slice_in_dim(out, _member_offset(name, n), _member_offset(name, n) + n, axis=0)
    return out, 0


def _all_to_all_rule(name, n, vals, dims, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    _no_groups(axis_index_groups, "all_to_all")
    (x,), (d,) = vals, dims
    x = _front(x, d, n)          # X[j, *per-member]: j the sender
    shape = get_aval(x).shape[1:]
    n_all = n * _spans(name)
    _all_to_all_shape(shape, split_axis, concat_axis, n_all, tiled)   # JAX's errors
    x = _local_to_global_stack(x, name)   # every sender (several processes: gathered, then sliced below)
    s, c = split_axis, concat_axis
    if n_all != n:
        out, _ = _all_to_all_local(x, n_all, s, c, tiled, shape)
        off = _member_offset(name, n)
        return _lib.slice_in_dim(out, off, off + n, axis=0), 0
    return _all_to_all_local(x, n, s, c, tiled, shape)


def _all_to_all_local(x, n, s, c, tiled, shape):
    if tiled:
        k = shape[s] // n
        x = _st.reshape(x, (n,) + shape[:s] + (n, k) + shape[s + 1:])
    # the receiver i is the chunk index along the split axis: bring it to the front, the sender j next
    y = _batching.moveaxis(x, 1 + s, 0)          # Y[i, j, *rest]
    if tiled:
        rest = get_aval(y).shape[2:]             # the split axis now holds the chunk (size k)
        y = _batching.moveaxis(y, 1, 1 + c)      # j just before the concat axis
        full = list(rest)
        full[c] *= n
        return _st.reshape(y, (n,) + tuple(full)), 0
    return _batching.moveaxis(y, 1, 1 + c), 0


def _ppermute_rule(name, n, vals, dims, axis_name, perm):
    if len(axis_name) != 1:
        raise NotImplementedError("ppermute over several named axes at once")
    (x,), (d,) = vals, dims
    x = _local_to_global_stack(_front(x, d, n), name)
    n_all = n * _spans(name)
    src_of = {dst: src for src, dst in perm}
    if any(not 0 <= i < n_all for pair in perm for i in pair):
        raise ValueError(f"ppermute: permutation {perm} has an index outside the axis of size {n_all}")
    shape = get_aval(x).shape
    zero = None
    pieces = []
    off = _member_offset(name, n)
    for i in range(off, off + n):
        if i in src_of:
            j = src_of[i]
            pieces.append(_lib.lax_slice(x, (j,) + (0,) * (len(shape) - 1), (j + 1,) + shape[1:]))
        else:
            if zero is None:
                zero = _st.full((1,) + shape[1:], 0, get_aval(x).dtype)
            pieces.append(zero)
    return _lib.concatenate(pieces, 0), 0


def _pbroadcast_rule(name, n, vals, dims, axis_name, source):
    (x,), (d,) = vals, dims
    if d is not_mapped:
        return x, not_mapped
    x = _local_to_global_stack(_front(x, d, n), name)
    n_all = n * _spans(name)
    if not 0 <= source < n_all:
        raise ValueError(f"pbroadcast: source {source} outside the axis of size {n_all}")
    return _lib.index_in_dim(x, source, 0, keepdims=False), not_mapped


def _axis_index_rule(name, n, vals, dims, axis_name):
    idx = _st.iota(np.int32, n)
    off = _member_offset(name, n)
    return (_ew.add(idx, np.int32(off)) if off else idx), 0


_batching.collective_rules[psum_p] = (lambda p: p["axes"], _psum_rule)
_batching.collective_rules[pmax_p] = (lambda p: p["axes"], _chooser_rule(pmax_p, _red.reduce_max))
_batching.collective_rules[pmin_p] = (lambda p: p["axes"], _chooser_rule(pmin_p, _red.reduce_min))
_batching.collective_rules[all_gather_p] = (lambda p: p["axis_name"], _all_gather_rule)
_batching.collective_rules[reduce_scatter_p] = (lambda p: p["axis_name"], _reduce_scatter_rule)
_batching.collective_rules[all_to_all_p] = (lambda p: _names(p["axis_name"]), _all_to_all_rule)
_batching.collective_rules[ppermute_p] = (lambda p: p["axis_name"], _ppermute_rule)
_batching.collective_rules[pbroadcast_p] = (lambda p: p["axis_name"], _pbroadcast_rule)
_batching.collective_rules[axis_index_p] = (lambda p: (p["axis_name"],), _axis_index_rule)
_batching.collective_rules[ragged_all_to_all_p] = (lambda p: p["axis_name"], _ragged_rule)
_batching.batching_rules[ragged_all_to_all_p] = _ragged_pass


# A vmap with another name: the collective acts per batch element, so the batch axis goes first and every
# positional parameter shifts by one.

def _pass_same(prim, key):
    def rule(vals, dims, **params):
        _check_bound(_names(params[key]), prim.name)
        (x,), (d,) = vals, dims
        return prim.bind(x, **params), d
    return rule


def _pass_shifted(prim, key, *positional):
    def rule(vals, dims, **params):
        _check_bound(_names(params[key]), prim.name)
        (x,), (d,) = vals, dims
        x = _batching.moveaxis(x, d, 0)
        params = dict(params)
        for p in positional:
            params[p] += 1
        return prim.bind(x, **params), 0
    return rule


for _p in (psum_p, pmax_p, pmin_p):
    _batching.batching_rules[_p] = _pass_same(_p, "axes")
_batching.batching_rules[ppermute_p] = _pass_same(ppermute_p, "axis_name")
_batching.batching_rules[pbroadcast_p] = _pass_same(pbroadcast_p, "axis_name")
_batching.batching_rules[all_gather_p] = _pass_shifted(all_gather_p, "axis_name", "all_gather_dimension")
_batching.batching_rules[reduce_scatter_p] = _pass_shifted(reduce_scatter_p, "axis_name", "scatter_dimension")
_batching.batching_rules[all_to_all_p] = _pass_shifted(all_to_all_p, "axis_name", "split_axis", "concat_axis")


# ----------------------------------------------------------------------------------------------- autodiff
# All but pmax/pmin/axis_index are linear. Transposes, as JAX defines them for SPMD programs: psum's is psum
# (every member's cotangent flows to every member), all_gather's is psum_scatter and back, ppermute's is the
# inverse permutation, all_to_all's swaps the split and concat axes.

def _psum_transpose(ct, x, axes, axis_index_groups=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [psum_p.bind(ct, axes=axes, axis_index_groups=axis_index_groups)]


def _all_gather_transpose(ct, x, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [reduce_scatter_p.bind(ct, scatter_dimension=all_gather_dimension, axis_name=axis_name,
                                  axis_index_groups=axis_index_groups, axis_size=axis_size, tiled=tiled)]


def _reduce_scatter_transpose(ct, x, scatter_dimension, axis_name, axis_index_groups, axis_size, tiled):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                              axis_index_groups=axis_index_groups, axis_size=axis_size, tiled=tiled)]


def _all_to_all_transpose(ct, x, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [all_to_all_p.bind(ct, split_axis=concat_axis, concat_axis=split_axis, axis_name=axis_name,
                              axis_index_groups=axis_index_groups, tiled=tiled)]


def _ppermute_transpose(ct, x, axis_name, perm):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))]


def _pbroadcast_transpose(ct, x, axis_name, source):
    # every member's output came from ``source``: its cotangent is the sum, and the others get zeros
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    total = psum_p.bind(ct, axes=axis_name, axis_index_groups=None)
    me = axis_index(axis_name[0] if len(axis_name) == 1 else axis_name)
    return [_ew.select(_ew.eq(me, np.int32(source)), total, _st.full_like(total, 0))]


_ad.deflinear(psum_p, _psum_transpose)
_ad.deflinear(all_gather_p, _all_gather_transpose)
_ad.deflinear(reduce_scatter_p, _reduce_scatter_transpose)
_ad.deflinear(all_to_all_p, _all_to_all_transpose)
_ad.deflinear(ppermute_p, _ppermute_transpose)
_ad.deflinear(pbroadcast_p, _pbroadcast_transpose)
_ad.defjvp_zero(axis_index_p)
_ad.primitive_jvps[ragged_all_to_all_p] = _ragged_jvp


# ----------------------------------------------------------------------------------------------- processes
# A named axis that spans processes (a ``pmap`` after ``cranax.distributed.initialize``): each process holds
# ``n_local`` members; the rules above first combine the local members, then these two primitives combine the
# processes through the MPI transport. They run eagerly as NumPy calls, and inside compiled programs as an
# ordered host callback (``io_callback_p``; inlined at lowering), so every process issues its collectives in
# program order, as MPI requires. In a program the callback copies nothing: MPI sends from a read-only view
# of the operand's buffer and receives into a writable view of a fresh core buffer, which becomes the
# step's result as it is (``callback.BufferCallback``).

def _process_allreduce_abstract(x, op):
    dt = np.dtype(np.int32) if x.dtype == np.bool_ else x.dtype
    return ShapedArray(x.shape, dt, x.weak_type)


def _process_allgather_abstract(x):
    return ShapedArray((_transport.state.process_count,) + x.shape, x.dtype, x.weak_type)


process_allreduce_p = standard_primitive("process_allreduce", _process_allreduce_abstract)
process_allgather_p = standard_primitive("process_allgather", _process_allgather_abstract)


def _host_allreduce(op):
    return lambda a: _transport.allreduce(np.asarray(a), op)


def _host_allgather(a):
    return _transport.allgather(np.asarray(a))


def _send_view(b):
    """The operand (the core buffer the callback step hands over) as a read-only NumPy view, no copy."""
    return b._host_view().view(dtypes.from_short_name(b.dtype)).reshape(b.shape)


def _result(short, shape):
    """A fresh core array of dtype ``short`` (a short name) and a writable NumPy view of it, for MPI to
    receive into."""
    arr, view = _core.DeviceArray._empty_host(short, shape)
    return arr, view.view(dtypes.from_short_name(short)).reshape(shape)


def _buffers_allreduce(op):
    def run(bufs):
        (b,) = bufs
        x = _send_view(b)
        short = b.dtype
        if short == "bool":   # summed as int32 (the abstract rule's dtype)
            x, short = x.astype(np.int32), "i32"
        arr, view = _result(short, b.shape)
        _transport.allreduce(x, op, out=view)
        return [arr]
    return run


def _buffers_allgather(bufs):
    (b,) = bufs
    x = _send_view(b)
    arr, view = _result(b.dtype, (_transport.state.process_count,) + tuple(b.shape))
    _transport.allgather(x, out=view)
    return [arr]


_HOST = {}   # one callback object per (primitive, op): retracing gives equal params, one registered id


def _host_callback(prim, params):
    key = (prim, tuple(sorted(params.items())))
    cb = _HOST.get(key)
    if cb is None:
        if prim is process_allreduce_p:
            fn, buffers = _host_allreduce(params["op"]), _buffers_allreduce(params["op"])
        else:
            fn, buffers = _host_allgather, _buffers_allgather
        cb = _HOST[key] = _cb.BufferCallback(fn, tree_flatten(((0,), {}))[1], buffers)
    return cb


def _process_impl(prim):
    def impl(x, **params):
        out = _host_callback(prim, params)(x)[0]
        return _from_host(np.asarray(out))
    return impl


def _process_inline(prim):
    def inline(eqn):
        (x,) = eqn.invars
        (out,) = eqn.outvars
        cb = _host_callback(prim, eqn.params)
        closed = trace_to_jaxpr(lambda a: _cb.io_callback_p.bind(a, callback=cb, result_avals=(out.aval,),
                                                                 sharding=None, ordered=True), [x.aval])
        return closed.jaxpr, eqn.invars
    return inline


for _p in (process_allreduce_p, process_allgather_p):
    _p.def_impl(_process_impl(_p))
    _p.inline_jaxpr = staticmethod(_process_inline(_p))


def _allreduce_transpose(ct, x, op):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [process_allreduce_p.bind(ct, op="sum")]


def _allgather_transpose(ct, x):
    # every process's cotangent of the gathered stack, summed, at this process's row
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    total = process_allreduce_p.bind(ct, op="sum")
    return [_lib.index_in_dim(total, _transport.state.process_index, 0, keepdims=False)]


_ad.deflinear(process_allgather_p, _allgather_transpose)
def _allreduce_jvp(primals, tangents, op):
    (x,), (t,) = primals, tangents
    if op != "sum":   # as pmax/pmin
        raise NotImplementedError(f"Differentiation rule for 'p{op}' not implemented")
    out = process_allreduce_p.bind(x, op=op)
    if type(t) is _ad.Zero:
        return out, _ad.Zero(get_aval(out))
    return out, process_allreduce_p.bind(t, op=op)


_ad.jvp_rules[process_allreduce_p] = _allreduce_jvp
_ad.transpose_rules[process_allreduce_p] = _allreduce_transpose


_batching.batching_rules[process_allreduce_p] = lambda vals, dims, op: (
    process_allreduce_p.bind(vals[0], op=op), dims[0])


def _allgather_batch(vals, dims):
    x = _batching.moveaxis(vals[0], dims[0], 0)
    return process_allgather_p.bind(x), 1


_batching.batching_rules[process_allgather_p] = _allgather_batch


def _spans(name):
    return core.axis_processes(name)


def _local_to_global_stack(x, name):
    """``x`` with this process's members along axis 0 → every process's, in global member order."""
    if _spans(name) == 1:
        return x
    g = process_allgather_p.bind(x)                     # [procs, n_local, ...]
    shape = get_aval(g).shape
    return _st.reshape(g, (shape[0] * shape[1],) + shape[2:])


def _member_offset(name, n_local):
    return _transport.state.process_index * n_local if _spans(name) > 1 else 0
