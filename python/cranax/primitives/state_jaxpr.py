"""Array references as ``make_jaxpr`` prints them: ``Ref{f32[3]}`` binders and the ``new_ref`` / ``get``
(``c:f32[3] <- a[...]``) / ``swap`` (``a[0] <- c``) / ``addupdate`` (``a[...] += c``) / ``freeze`` equations
of JAX 0.10.2's stateful jaxprs.

cranax discharges refs while tracing (``primitives.state``): ``jit`` and the loops see pure code. Only
``make_jaxpr`` *stages* them: while it traces, a ref passed in, made at its top level or closed over
(an eager ref: a ``Ref{...}`` constvar) is a ref variable of the jaxpr, and its reads and writes are
equations; a nested ``jit``/``scan``/``cond``/``while`` body closing over a staged ref takes it as a
``Ref{...}`` input and stages in turn (``state.staged_closure_refs``). The
jaxpr is for printing and for ``eval_jaxpr`` (the primitives' impls act on eager ``Ref`` boxes); it is never
lowered. What staging does not cover (a staged ref reached inside a nested plumbing call, an index that is
not static ints, static slices of stride 1 or traced scalars of this trace) raises ``Unsupported``, and
``make_jaxpr`` traces again with refs discharged, as before.
"""
import numpy as np

from .. import core
from ..core import Primitive, ShapedArray, Tracer, get_aval
from ..interpreters.partial_eval import DynamicJaxprTracer
from ..dslice import Slice
from ..jaxpr import Var
# state imports this module at its top; its names are read at call time (state.X), so the circle is harmless.
from . import state

__all__ = ["Unsupported", "Staged", "new_ref_p", "get_p", "swap_p", "addupdate_p", "freeze_p"]


class Unsupported(Exception):
    """Internal: this use of a staged ref is not staged (make_jaxpr retraces with refs discharged)."""


class Staged:
    """A staged ref's value slot: the jaxpr tracer of the ref variable; ``aval`` is the value's (the
    ``Ref``'s shape/dtype properties read it)."""

    __slots__ = ("tracer", "aval", "const")

    def __init__(self, tracer, aval, const=False):
        self.tracer = tracer
        self.aval = aval
        self.const = const   # an eager ref make_jaxpr closed over (a nested jit takes it last, as JAX's)

    def __repr__(self):
        return f"Ref{{{self.aval.str_short()}}}"


def staging_trace():
    """The ``make_jaxpr`` trace a new ref made now is staged into, or None (refs are discharged)."""
    if not state._local.__dict__.get("staging") or state._top() is not None:
        return None
    t = core._state.trace
    d = getattr(t, "debug", None)
    if d is not None and getattr(d, "traced_for", None) == "make_jaxpr" and hasattr(t, "new_arg"):
        return t
    if id(t) in (state._local.__dict__.get("staging_traces") or ()):
        return t   # a nested body taking staged refs (state._staged_arg)
    return None


# ----------------------------------------------------------------------------------------------- indexers
# An indexer covers every dimension, as JAX's NDIndexer: ("i", k) a static int, ("s", start, size) a static
# stride-1 slice, ("d", j) the j-th dynamic index operand (a traced scalar), ("ds", j, size) a stride-1
# ``jax.ds`` window of static size starting at the j-th dynamic operand (printed ``c:c+size``, as JAX's; a
# ref transpose's ``ref[c:c+1] += ct``). ``None``: the whole ref (``ref[...]``, printed ``[...]``).

def indexer_of(idx, shape, trace):
    """``(indexer, dynamic operands)`` of a NumPy-style ``idx`` into a ref of ``shape``."""
    if idx is None or idx is Ellipsis or idx == ():
        return None, []
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    n_real = len(idx) - n_ell
    if n_ell > 1 or n_real > len(shape):
        raise Unsupported
    items = []
    for i in idx:
        if i is Ellipsis:
            items.extend([slice(None)] * (len(shape) - n_real))
        else:
            items.append(i)
    items.extend([slice(None)] * (len(shape) - len(items)))
    out, dyn = [], []
    for d, it in zip(shape, items):
        if isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            k = int(it)
            if not -d <= k < d:
                raise Unsupported
            out.append(("i", k % d))
        elif isinstance(it, slice):
            if it.step not in (None, 1) or any(isinstance(e, Tracer) for e in (it.start, it.stop)):
                raise Unsupported
            start, stop, _ = it.indices(d)
            if stop <= start:
                raise Unsupported
            out.append(("s", start, stop - start))
        elif (isinstance(it, Tracer) and it._trace is trace and it.aval.ndim == 0
              and np.issubdtype(it.aval.dtype, np.integer)):
            out.append(("d", len(dyn)))
            dyn.append(it)
        elif (isinstance(it, Slice) and it.stride == 1 and not it.is_dynamic_size and 0 < int(it.size) <= d
              and isinstance(it.start, Tracer) and it.start._trace is trace and it.start.aval.ndim == 0
              and np.issubdtype(it.start.aval.dtype, np.integer)):
            out.append(("ds", len(dyn), int(it.size)))
            dyn.append(it.start)
        else:
            raise Unsupported
    return tuple(out), dyn


def _result_shape(indexer, shape):
    if indexer is None:
        return tuple(shape)
    return tuple(e[2] for e in indexer if e[0] in ("s", "ds"))


def python_index(indexer, dyn):
    """The NumPy-style index an indexer stands for (``eval_jaxpr`` runs the ops on eager refs with it)."""
    if indexer is None:
        return ...
    out = []
    for e in indexer:
        if e[0] == "i":
            out.append(e[1])
        elif e[0] == "s":
            out.append(slice(e[1], e[1] + e[2]))
        else:
            d = dyn[e[1]]   # a literal loop carry (eval_jaxpr of a staged while) arrives as a TypedScalar
            d = np.asarray(d.val, d.aval.dtype) if isinstance(d, core.TypedScalar) else d
            out.append(Slice(d, e[2]) if e[0] == "ds" else d)
    return tuple(out)


def _pp_indexer(indexer, shape, dyn_atoms):
    if indexer is None:
        return "[...]"
    parts = []
    for d, e in zip(shape, indexer):
        if e[0] == "i":
            parts.append(str(e[1]))
        elif e[0] == "s":
            start, end = e[1], e[1] + e[2]
            parts.append(f"{'' if start == 0 else start}:{'' if end == d else end}")
        elif e[0] == "ds":
            parts.append(f"{dyn_atoms[e[1]]}:{dyn_atoms[e[1]]}+{e[2]}")
        else:
            parts.append(dyn_atoms[e[1]])
    return "[" + ",".join(parts) + "]"


# ----------------------------------------------------------------------------------------------- primitives

def _ref_aval(x):
    return state.AbstractRef(x)


new_ref_p = Primitive("new_ref")
new_ref_p.abstract_eval = lambda x, kind=None, memory_space=None: _ref_aval(x)


def _new_ref_impl(x, kind=None, memory_space=None):
    return state.new_ref(x, kind=kind)


new_ref_p.impl = _new_ref_impl

get_p = Primitive("get")
get_p.abstract_eval = lambda ref, *dyn, indexer: ref.inner_aval.update(
    shape=_result_shape(indexer, ref.shape))


def _get_impl(ref, *dyn, indexer):
    return state.get(ref, python_index(indexer, dyn))


get_p.impl = _get_impl

swap_p = Primitive("swap")
swap_p.abstract_eval = lambda ref, val, *dyn, indexer: ShapedArray(
    _result_shape(indexer, ref.shape), ref.dtype, False)


def _swap_impl(ref, val, *dyn, indexer):
    return state.swap(ref, python_index(indexer, dyn), val)


swap_p.impl = _swap_impl

addupdate_p = Primitive("addupdate", multiple_results=True)
addupdate_p.abstract_eval = lambda ref, val, *dyn, indexer: []


def _addupdate_impl(ref, val, *dyn, indexer):
    state.addupdate(ref, python_index(indexer, dyn), val)
    return []


addupdate_p.impl = _addupdate_impl

freeze_p = Primitive("freeze")
freeze_p.abstract_eval = lambda ref: ref.inner_aval


def _freeze_impl(ref):
    return state.freeze(ref)


freeze_p.impl = _freeze_impl


# ----------------------------------------------------------------------------------------------- printing
# JAX's pp rules: ``c:f32[3] <- a[1:,:]``; ``a[0] <- c`` (a swap whose old value is unused), else
# ``d:f32[], a[0] <- a[0], c``; ``a[...] += c``.

def _pp_get(eqn, atom, outbinder):
    ref = eqn.invars[0]
    idx = _pp_indexer(eqn.params["indexer"], ref.aval.shape, [atom(a) for a in eqn.invars[1:]])
    return f"{outbinder(eqn.outvars[0])} <- {atom(ref)}{idx}"


def _pp_swap(eqn, atom, outbinder, unused):
    ref, val = eqn.invars[:2]
    idx = _pp_indexer(eqn.params["indexer"], ref.aval.shape, [atom(a) for a in eqn.invars[2:]])
    r = atom(ref)
    if eqn.outvars[0] in unused or type(eqn.outvars[0]).__name__ == "DropVar":
        return f"{r}{idx} <- {atom(val)}"
    return f"{outbinder(eqn.outvars[0])}, {r}{idx} <- {r}{idx}, {atom(val)}"


def _pp_addupdate(eqn, atom, outbinder):
    ref, val = eqn.invars[:2]
    idx = _pp_indexer(eqn.params["indexer"], ref.aval.shape, [atom(a) for a in eqn.invars[2:]])
    return f"{atom(ref)}{idx} += {atom(val)}"


get_p.pp_eqn = lambda eqn, atom, outbinder, unused: _pp_get(eqn, atom, outbinder)
swap_p.pp_eqn = _pp_swap
addupdate_p.pp_eqn = lambda eqn, atom, outbinder, unused: _pp_addupdate(eqn, atom, outbinder)
new_ref_p.pp_params = lambda eqn: [("kind", eqn.params.get("kind")), ("memory_space", eqn.params.get("memory_space"))]


def _no_lowering(eqn):
    raise NotImplementedError(f"{eqn.primitive.name}: a jaxpr with array-reference equations (from "
                              "make_jaxpr) is for printing and eval_jaxpr; jit the function itself to run it")


for _p in (new_ref_p, get_p, swap_p, addupdate_p, freeze_p):
    _p.inline_jaxpr = staticmethod(_no_lowering)
del _p


# ----------------------------------------------------------------------------------------------- staging

def _emit(trace, prim, args, **params):
    for a in args:
        if isinstance(a, Tracer) and a._trace is not trace:
            raise Unsupported   # a value of an inner transformation (grad/vmap inside make_jaxpr)
    return trace.process_primitive(prim, list(args), params)


def stage_new_ref(trace, value, kind):
    tracer = _emit(trace, new_ref_p, [value], kind=kind, memory_space=None)
    return Staged(tracer, get_aval(value))


def stage_const(trace, ref, value):
    """An eager ref the traced function closes over, staged as a ``Ref{...}`` constvar of ``trace`` (the
    jaxpr's consts hold the ``Ref`` itself, as JAX's: ``eval_jaxpr`` then reads and writes it)."""
    aval = get_aval(value)
    var = Var(_ref_aval(aval))
    trace.constvars.append(var)
    trace.consts.append(ref)
    return Staged(DynamicJaxprTracer(trace, var.aval, var), aval, const=True)


def stage_arg(tracer):
    return Staged(tracer, tracer.aval.inner_aval)


def stage_get(st, idx):
    trace = st.tracer._trace
    indexer, dyn = indexer_of(idx, st.aval.shape, trace)
    return _emit(trace, get_p, [st.tracer, *dyn], indexer=indexer)


def _checked(st, idx, value, fname):
    trace = st.tracer._trace
    indexer, dyn = indexer_of(idx, st.aval.shape, trace)
    old = st.aval.update(shape=_result_shape(indexer, st.aval.shape))
    state.check_update_avals(st.aval, old, get_aval(value), indexer is None, fname)   # JAX's ValueErrors
    return trace, indexer, dyn


def _implicit_cast(dtype, value):
    """JAX's ``_maybe_implicit_cast``: a weakly typed value written into a ref of its kind becomes strong
    (a ``convert_element_type`` equation)."""
    if not isinstance(value, Tracer):
        return value
    a = value.aval
    if a.weak_type and a.dtype == dtype and a.dtype.kind in "fiu":
        return state._ew.convert_element_type_p.bind(value, new_dtype=dtype, weak_type=False, sharding=None)
    return value


def stage_swap(st, idx, value, fname="ref_swap"):
    value = _implicit_cast(st.aval.dtype, value)
    trace, indexer, dyn = _checked(st, idx, value, fname)
    return _emit(trace, swap_p, [st.tracer, value, *dyn], indexer=indexer)


def stage_addupdate(st, idx, value, fname="ref_addupdate"):
    trace, indexer, dyn = _checked(st, idx, value, fname)
    _emit(trace, addupdate_p, [st.tracer, value, *dyn], indexer=indexer)


def stage_freeze(st):
    return _emit(st.tracer._trace, freeze_p, [st.tracer])
