"""Batching (``vmap``): ``BatchTrace`` runs a function on ``BatchTracer``s, each a value of the enclosing
(parent) trace with one extra axis, ``batch_dim``, that holds the batch.

A primitive applied to batch tracers runs its batching rule, ``batching_rules[prim]``, on the parent trace:
``rule(batched_args, batch_dims, **params) -> (out, out_dims)`` where each batch dim is an int or
``not_mapped`` (None) and ``out``/``out_dims`` are lists for primitives with multiple results. A rule is only
called when at least one operand is batched; a primitive whose operands are all unbatched simply binds on the
parent trace, and results without a batch axis are returned as plain parent values. Mirrors
``jax.interpreters.batching``.

Helpers for rules: ``moveaxis``, ``bdim_at_front``, ``broadcast_batched`` and ``batch_elementwise`` (mixed
batched/unbatched operands of an elementwise primitive); ``batch_jaxpr`` batches a closed jaxpr (used by
call primitives such as ``jit`` so that ``vmap(jit(f))`` stays one compiled call).
"""
import functools
import weakref

import numpy as np

from .. import core
from ..core import Tracer, get_aval, set_current_trace
from ..errors import UnexpectedTracerError
from .eval import eval_jaxpr
from .partial_eval import trace_to_jaxpr

__all__ = ["not_mapped", "BatchTrace", "BatchTracer", "batching_rules", "primitive_batchers", "moveaxis",
           "bdim_at_front", "broadcast_batched", "batch_elementwise", "batch_jaxpr", "defvectorized",
           "defbroadcasting", "axis_size_of", "hooks", "axis_primitive_batchers", "fancy_primitive_batchers", "AxisData",
           "collective_rules"]

not_mapped = None

# Primitive → rule(batched_args, batch_dims, **params) -> (out, out_dim(s)).
batching_rules = {}
primitive_batchers = batching_rules   # JAX's name

# Collective primitive → (names(params) -> tuple of axis names, rule). The rule runs when a vmap whose
# ``axis_name`` is among the names meets the primitive, even with every operand unbatched (``axis_index`` has
# none): ``rule(axis_name, axis_size, vals, dims, **params) -> (out, out_dims)``. A vmap with another name
# passes the primitive through to its parent with the batch axis kept (``primitives.collectives``).
collective_rules = {}

# The mesh axes of the ``shard_map``s being traced (their blocks are vmapped): a rule that must run once per
# device, as JAX's ``pure_callback`` does in a shard_map, checks ``in_shard_map()``.
shard_map_axes = []


def in_shard_map():
    """True while the rule running batches a ``shard_map`` mesh axis (not a user's ``vmap``)."""
    t = core._state.batch_rule_trace
    return t is not None and t.axis_name is not None and t.axis_name in shard_map_axes


class BatchTracer(Tracer):
    """A value with a batch axis: ``val`` (a value of the parent trace) and ``batch_dim`` (int)."""

    __slots__ = ("val", "batch_dim", "_aval", "_src")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval = None
        self._src = core.user_source()   # the user's line that made it, for JAX's "created on line" text

    @property
    def aval(self):
        a = self._aval
        if a is None:
            a = get_aval(self.val)
            d = self.batch_dim
            if d is not not_mapped:
                a = a.update(shape=a.shape[:d] + a.shape[d + 1:])
            self._aval = a
        return a

    def __repr__(self):
        # JAX 0.10.2's form: the per-element aval, then the aval of the batched value.
        return f"VmapTracer(aval={core.aval_text(self.aval)}, batched={core.aval_text(get_aval(self.val))})"


class BatchTrace(core.Trace):
    """The trace of one ``vmap``: batch axis size ``axis_size``; rules run on ``parent_trace`` (None: eager)."""

    def __init__(self, parent_trace, axis_size, axis_name=None):
        super().__init__()
        self.parent_trace = parent_trace
        self.axis_size = axis_size
        self.axis_name = axis_name   # None: unnamed (collectives pass through to the parent)

    def to_batch_info(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not x._trace.valid:
            raise UnexpectedTracerError(core._escaped_tracer_message(x))
        return x, not_mapped

    def process_primitive(self, prim, args, params):
        if not self.valid:
            raise UnexpectedTracerError("A vmap trace was used after its function returned.")
        vals, dims = [], []
        for a in args:
            v, d = self.to_batch_info(a)
            vals.append(v)
            dims.append(d)
        coll = collective_rules.get(prim)
        if coll is not None and self.axis_name is not None and self.axis_name in coll[0](params):
            rule = functools.partial(coll[1], self.axis_name, self.axis_size)
        elif all(d is not_mapped for d in dims) and prim not in fancy_primitive_batchers:
            # (as JAX: a fancy rule runs even on unbatched operands: ``empty`` makes its value batched)
            with set_current_trace(self.parent_trace):
                return prim.bind(*vals, **params)
        else:
            rule = batching_rules.get(prim)
            if rule is None and getattr(prim, "elementwise", False):
                rule = batching_rules[prim] = _broadcasting_rule(prim)
            if rule is None:
                rule = _axis_rule(prim, self)
            if rule is None:
                raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
        # While this trace's rule runs, ``batch_jaxpr`` (called by the jit/scan/cond rules) batches over this
        # trace's named axis: ``core._state.batch_rule_trace`` says which trace that is.
        st = core._state
        prev = st.batch_rule_trace
        st.batch_rule_trace = self
        try:
            with set_current_trace(self.parent_trace):
                out, out_dims = rule(vals, dims, **params)
        finally:
            st.batch_rule_trace = prev
        return self._wrap(prim, out, out_dims)

    def _wrap(self, prim, out, out_dims):
        if prim.multiple_results:
            return [o if d is not_mapped else BatchTracer(self, o, d) for o, d in zip(out, out_dims)]
        return out if out_dims is not_mapped else BatchTracer(self, out, out_dims)

    def error_context(self, tracer):
        """JAX's ``BatchTracer._origin_msg``: where user code made the tracer."""
        if not isinstance(tracer, BatchTracer) or tracer._src is None:
            return ""
        return (f"This BatchTracer with object id {id(tracer)} was created on line:\n"
                f"  {core.summarize_source(tracer._src)}")

    def __repr__(self):
        return f"BatchTrace(axis_size={self.axis_size})"


def _current_axis_name(axis_size):
    t = core._state.batch_rule_trace
    if t is not None and t.axis_size == axis_size:
        return t.axis_name
    return None


# JAX's rules that are also told the vmapped axis (user primitives register them, e.g. equinox):
# ``axis_primitive_batchers[prim](axis_size, axis_name, trace_type, args, dims, **params)`` and
# ``fancy_primitive_batchers[prim](axis_data, args, dims, **params)``.
axis_primitive_batchers = {}
fancy_primitive_batchers = {}


class AxisData:
    """The vmapped axis as ``fancy_primitive_batchers`` rules see it: ``name``, ``size``, ``spmd_name``."""

    __slots__ = ("name", "size", "spmd_name")

    def __init__(self, name, size, spmd_name=None):
        self.name, self.size, self.spmd_name = name, size, spmd_name

    @property
    def explicit_mesh_axis(self):
        return None

    def __repr__(self):
        return (f"AxisData(name={self.name!r}, size={self.size!r}, spmd_name={self.spmd_name!r}, "
                "explicit_mesh_axis=None)")


def _axis_rule(prim, trace):
    name = getattr(trace, "axis_name", None)
    rule = axis_primitive_batchers.get(prim)
    if rule is not None:
        return lambda vals, dims, **params: rule(trace.axis_size, name, None, vals, dims, **params)
    rule = fancy_primitive_batchers.get(prim)
    if rule is not None:
        return lambda vals, dims, **params: rule(AxisData(name, trace.axis_size), vals, dims, **params)
    return None


# ----------------------------------------------------------------------------------------------- helpers
# These bind primitives on the current trace: call them from inside rules (which run on the parent trace).
# The two primitives they bind are registered here by ``primitives.structural`` at import, so this
# interpreter imports no primitives: "transpose"(x, permutation) and "broadcast_in_dim"(x, shape, dims).
hooks = {}


def axis_size_of(vals, dims):
    """The batch size, read off the first batched operand."""
    for v, d in zip(vals, dims):
        if d is not not_mapped:
            return get_aval(v).shape[d]
    raise ValueError("no batched operand")


def moveaxis(x, src, dst):
    """``x`` with axis ``src`` moved to position ``dst`` (one transpose, or nothing)."""
    nd = get_aval(x).ndim
    src = src % nd if nd else src
    dst = dst % nd if nd else dst
    if src == dst:
        return x
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return hooks["transpose"](x, tuple(perm))


def bdim_at_front(x, bdim, size):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast along a new leading axis."""
    if bdim is not_mapped:
        # JAX's ``batching.broadcast``: its dims come from np.delete(np.arange(...)), printed np.int64(...)
        nd = get_aval(x).ndim
        return hooks["broadcast_in_dim"](x, (size,) + tuple(get_aval(x).shape), tuple(np.arange(1, nd + 1)))
    return moveaxis(x, bdim, 0)


def broadcast_batched(x, size, axis, shape=None):
    """An unbatched ``x`` broadcast to batched form with the batch axis (of ``size``) at ``axis``; ``shape``
    is the per-example target shape (``x``'s own shape by default; a rank-0 ``x`` may broadcast to any)."""
    av = get_aval(x)
    shape = av.shape if shape is None else tuple(shape)
    out_shape = shape[:axis] + (size,) + shape[axis:]
    nd = len(shape)
    if av.ndim == 0:
        dims = ()
    else:
        dims = tuple(i if i < axis else i + 1 for i in range(nd - av.ndim, nd))
    return hooks["broadcast_in_dim"](x, out_shape, dims)


def _is_literal_like(x):
    """A concrete rank-0 value that may stay rank-0 next to shaped operands (jaxprs inline it as a literal;
    eager execution broadcasts it)."""
    return not isinstance(x, Tracer) and get_aval(x).ndim == 0


def batch_elementwise(vals, dims, shape, scalar_ok=(), literals=True):
    """Operands of an elementwise primitive (per-example result shape ``shape``) made consistent: every
    batched operand gets its batch axis at one common position ``bd`` and the full batched shape; unbatched
    operands are broadcast to it, except concrete scalars and those at positions in ``scalar_ok`` when they
    are rank-0 (those may stay scalars; ``literals=False`` broadcasts concrete scalars too, for primitives
    whose operands must share one shape). Returns ``(operands, bd)``."""
    size = axis_size_of(vals, dims)
    nd = len(shape)
    bd = None
    for v, d in zip(vals, dims):
        if d is not not_mapped and get_aval(v).ndim == nd + 1:
            bd = d
            break
    if bd is None:
        bd = 0
    keep = [d is not_mapped and get_aval(v).ndim == 0 and (i in scalar_ok or literals and _is_literal_like(v))
            for i, (v, d) in enumerate(zip(vals, dims))]
    shaped = [i for i in range(len(vals)) if i not in scalar_ok]
    if shaped and all(keep[i] for i in shaped):
        keep[shaped[0]] = False   # something must carry the batched shape (e.g. clamp's operand)
    out = []
    for i, (v, d) in enumerate(zip(vals, dims)):
        av = get_aval(v)
        if d is not_mapped:
            if keep[i]:
                out.append(v)
            else:
                out.append(broadcast_batched(v, size, bd, shape))
        elif av.ndim == nd + 1:
            out.append(moveaxis(v, d, bd))
        else:  # batched per-example scalar next to shaped operands
            full = shape[:bd] + (size,) + shape[bd:]
            out.append(hooks["broadcast_in_dim"](v, full, (bd,)))
    return out, bd


def _per_example_shape(vals, dims, which=None):
    shape = ()
    for i, (v, d) in enumerate(zip(vals, dims)):
        if which is not None and i not in which:
            continue
        s = get_aval(v).shape
        if d is not not_mapped:
            s = s[:d] + s[d + 1:]
        if s:
            shape = s
            break
    return shape


def _lead_1(v, a):
    """An unbatched operand with a leading 1; its dimensions print as NumPy ints, as JAX's broadcast_batcher
    leaves them (``broadcast_in_dim[broadcast_dimensions=(np.int64(1),)]``)."""
    return hooks["broadcast_in_dim"](v, (1,) + a.shape, tuple(np.int64(i + 1) for i in range(a.ndim)))


def _size1_broadcasting_rule(prim):
    """JAX's ``broadcast_batcher`` for a primitive whose equal-rank operands broadcast size-1 dimensions:
    batched operands of one shape and batch axis (and scalars) bind as they are; otherwise each batch axis
    moves to the front and an unbatched operand gets a leading 1 (``f32[2,3]`` → ``f32[1,2,3]``), a
    batched per-example scalar trailing 1s, and the primitive broadcasts the 1s."""
    def rule(vals, dims, **params):
        avals = [get_aval(v) for v in vals]
        shape, dim = next((a.shape, d) for a, d in zip(avals, dims) if d is not not_mapped)
        if all(a.shape == shape and d == dim for a, d in zip(avals, dims) if a.ndim):
            return prim.bind(*vals, **params), dim
        args = [(_lead_1(v, a) if d is not_mapped else moveaxis(v, d, 0)) if a.ndim else v
                for v, a, d in zip(vals, avals, dims)]
        nd = max(get_aval(x).ndim for x in args)
        out = []
        for x, d in zip(args, dims):
            xa = get_aval(x)
            if d is not not_mapped and xa.ndim != nd:
                x = hooks["broadcast_in_dim"](x, xa.shape + (1,) * (nd - xa.ndim), tuple(range(xa.ndim)))
            out.append(x)
        return prim.bind(*out, **params), 0
    return rule


def _broadcasting_rule(prim):
    if getattr(prim, "broadcasts_size1", False):
        return _size1_broadcasting_rule(prim)

    def rule(vals, dims, **params):
        shape = _per_example_shape(vals, dims)
        # an unbatched rank-0 operand stays rank-0, as in JAX's broadcast_batcher (the primitive takes it)
        ops, bd = batch_elementwise(vals, dims, shape, scalar_ok=range(len(vals)))
        return prim.bind(*ops, **params), bd
    return rule


def _vectorized_rule(prim):
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **params), d
    return rule


def defvectorized(prim):
    """Registers the rule of a unary elementwise primitive: the batch axis passes through."""
    batching_rules[prim] = _vectorized_rule(prim)


def defbroadcasting(prim):
    """Registers the rule of an n-ary elementwise primitive with mixed batched/unbatched operands."""
    batching_rules[prim] = _broadcasting_rule(prim)


# ----------------------------------------------------------------------------------------------- jaxprs

_jaxpr_cache = weakref.WeakKeyDictionary()   # ClosedJaxpr -> {(size, in_dims): (ClosedJaxpr, consts, out_dims)}


def batch_jaxpr(closed, axis_size, in_dims, force_out=None, keep_call_consts=False):
    """Batches ``closed`` (a ClosedJaxpr) for inputs with batch dims ``in_dims``. Batched inputs of the new
    jaxpr have their batch axis first; returns ``(new_closed, consts, out_dims)`` where the new jaxpr takes
    ``consts`` (unbatched) before the original inputs and each output's batch dim is 0 or ``not_mapped``
    (0 wherever ``force_out`` asks). Cached per (jaxpr, size, in_dims, force_out). ``keep_call_consts``: a loop
    body batched in a user-staged trace, whose jits keep their consts (``partial_eval.keeps_call_consts``)."""
    force_out = (False,) * len(closed.out_avals) if force_out is None else tuple(bool(f) for f in force_out)
    axis_name = _current_axis_name(axis_size)
    key = (axis_size, tuple(in_dims), force_out, axis_name, keep_call_consts)
    try:
        per = _jaxpr_cache.get(closed)
    except TypeError:
        per = None
    if per is not None and key in per:
        return per[key]
    in_avals = []
    for a, d in zip(closed.in_avals, in_dims):
        in_avals.append(a if d is not_mapped else a.update(shape=(axis_size,) + a.shape))
    out_dims_box = []

    def fun(*args):
        trace = BatchTrace(core.current_trace(), axis_size, axis_name)
        targs = [a if d is not_mapped else BatchTracer(trace, a, 0) for a, d in zip(args, in_dims)]
        try:
            with set_current_trace(trace):
                if axis_name is None or core._find_axis(axis_name) is not None:
                    outs = eval_jaxpr(closed.jaxpr, closed.consts, *targs)
                else:
                    with core.extend_axis_env(axis_name, axis_size):
                        outs = eval_jaxpr(closed.jaxpr, closed.consts, *targs)
            res = []
            for o, force, av in zip(outs, force_out, closed.out_avals):
                v, d = trace.to_batch_info(o)
                if d is not not_mapped:
                    v = moveaxis(v, d, 0)
                    d = 0
                elif force:
                    v = broadcast_batched(v, axis_size, 0, av.shape)
                    d = 0
                res.append(v)
                out_dims_box.append(d)
        finally:
            trace.invalidate()
        return res

    new = trace_to_jaxpr(fun, in_avals, keep_call_consts=keep_call_consts)
    new, consts = new.hoist_consts()
    hit = (new, consts, list(out_dims_box))
    if not any(isinstance(c, Tracer) for c in consts):
        try:
            _jaxpr_cache.setdefault(closed, {})[key] = hit
        except TypeError:
            pass
    return hit
