"""Staging to a jaxpr: ``DynamicJaxprTrace`` records every primitive applied to its tracers.

``trace_to_jaxpr(fun, in_avals, debug)`` runs ``fun`` once on tracers and returns the ``ClosedJaxpr``.
Concrete arrays that the function closes over become constvars (their values are the jaxpr's consts);
concrete scalars become literals. Tracers of outer traces are constants too, so nested staging works.
"""
import functools
import inspect
import threading
import types

import numpy as np

from .. import core
from ..core import ShapedArray, Tracer, get_aval, user_source
from ..errors import UnexpectedTracerError
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, _subjaxprs
from .._pytree import keystr, tree_flatten_with_path, tree_unflatten


class DebugInfo:
    """Where a trace came from, for error messages: the function's name and file:line, what traced it
    (``jit``, ``make_jaxpr``...) and a name per flattened argument."""

    __slots__ = ("fun_name", "location", "traced_for", "_arg_names", "out_tree")

    def __init__(self, fun_name, location, traced_for, arg_names):
        self.fun_name = fun_name
        self.location = location
        self.traced_for = traced_for
        self._arg_names = arg_names   # or a LazyNames, computed on the first read
        self.out_tree = None   # set once the output tree is known

    @property
    def arg_names(self):
        n = self._arg_names
        if type(n) is LazyNames:
            n = self._arg_names = n.make()
        return n

    @arg_names.setter
    def arg_names(self, v):
        self._arg_names = v

    @property
    def result_paths(self):
        """``("result[0]", "result[1]['a']", ...)``: one per output leaf (None before the trace ends)."""
        t = self.out_tree
        if t is None:
            return None
        try:
            leaves = tree_flatten_with_path(tree_unflatten(t, [0] * t.num_leaves))[0]
        except Exception:  # a custom node whose unflatten rejects placeholders: flat indices
            return tuple(f"result[{i}]" for i in range(t.num_leaves))
        return tuple("result" + keystr(p) for p, _ in leaves)

    @property
    def func_name(self):
        return self.fun_name

    @property
    def func_src_info(self):
        """``"f at file.py:12"``, as JAX's ``DebugInfo.func_src_info``."""
        return self.fun_name if self.location is None else f"{self.fun_name} at {self.location}"

    def safe_arg_names(self, n):
        names = tuple(self.arg_names or ())
        return names if len(names) == n else ("",) * n

    def __repr__(self):
        # JAX 0.10.2 traces make_jaxpr through jit, so its debug info says 'jit'.
        traced_for = "jit" if self.traced_for == "make_jaxpr" else self.traced_for
        paths = None if self.result_paths is None else tuple(self.result_paths)
        return (f"DebugInfo(traced_for={traced_for!r}, func_src_info={self.func_src_info!r}, "
                f"arg_names={tuple(self.arg_names or ())!r}, result_paths={paths!r})")


class LazyNames:
    """``DebugInfo.arg_names`` not computed yet: ``make()`` gives them (only error texts read them)."""
    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def debug_info(fun, traced_for, arg_names):
    f = fun
    while isinstance(f, functools.partial):
        f = f.func
    if hasattr(f, "__wrapped__"):   # (inspect.unwrap costs µs; most traced functions wrap nothing)
        f = inspect.unwrap(f)   # every __wrapped__ level, as JAX's fun_sourceinfo
    name = getattr(f, "__name__", type(f).__name__)
    code = getattr(f, "__code__", None)
    loc = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None
    return DebugInfo(name, loc, traced_for, arg_names)


_STATIC = object()   # a static argument's place in ``arg_names`` (it names no traced input)


# Signatures of plain functions by code object (which names and kinds the parameters have) and which of them
# have defaults: loop bodies and equinox's closures are fresh functions of a few code objects, traced by the
# dozen, and ``inspect.signature`` costs tens of µs. The defaults' values are not kept (``bind`` ignores them).
_signatures = {}
_SIGNATURES_LIMIT = 1024
_NO_VALUE = object()


def _signature(fun):
    if type(fun) is not types.FunctionType or "__wrapped__" in fun.__dict__ or "__signature__" in fun.__dict__:
        return inspect.signature(fun)
    key = (fun.__code__, len(fun.__defaults__ or ()), tuple(fun.__kwdefaults__ or ()))
    sig = _signatures.get(key)
    if sig is None:
        sig = inspect.signature(fun)
        sig = sig.replace(parameters=[p.replace(annotation=p.empty,
                                                default=p.empty if p.default is p.empty else _NO_VALUE)
                                      for p in sig.parameters.values()], return_annotation=sig.empty)
        if len(_signatures) >= _SIGNATURES_LIMIT:
            _signatures.clear()
        _signatures[key] = sig
    return sig


def arg_names(fun, args, kwargs=None):
    """JAX's ``_non_static_arg_names``: one name per traced leaf of ``(args, kwargs)``, the parameter the
    leaf was bound to and its key path (``x``, ``d['a'][1]``, ``xs[0]`` for ``*xs``, ``kw['b']`` for
    ``**kw``); ``args[i]...`` when ``fun``'s signature does not take them. ``_STATIC`` entries name none."""
    kwargs = kwargs or {}
    ordered = None
    try:
        sig = _signature(fun)
        ba = sig.bind(*args, **kwargs)
    except (ValueError, TypeError):
        pass
    else:
        kw_name = next((n for n, p in sig.parameters.items() if p.kind == inspect.Parameter.VAR_KEYWORD), None)
        ordered = [(n, x) for n, x in ba.arguments.items() if n not in kwargs and n != kw_name]
        ordered += [(n if n in ba.arguments else f"{kw_name}['{n}']", x) for n, x in sorted(kwargs.items())]
    if ordered is None:
        ordered = [("args", tuple(args))] + sorted((f"kwargs['{n}']", x) for n, x in kwargs.items()
                                                   if x is not _STATIC)
    return tuple(n + keystr(path) for n, x in ordered for path, leaf in tree_flatten_with_path(x)[0]
                 if leaf is not _STATIC)


arg_wrappers = {}   # aval type -> what a traced function receives for an input of that type


class DynamicJaxprTracer(Tracer):
    __slots__ = ("_aval", "_var")  # `_var`: a slot named `var` would hide the array method `.var()`

    def __init__(self, trace, aval, var):
        self._trace = trace
        self._aval = aval
        self._var = var
        if type(aval) is not ShapedArray and core.is_hi(aval):
            self.__class__ = core.hi_tracer_class(DynamicJaxprTracer)

    @property
    def aval(self):
        return self._aval

    def __repr__(self):
        # JAX 0.10.2's form: ``JitTracer(~float32[])``, ``~`` marking a weak type.
        return f"JitTracer({core.aval_text(self._aval)})"


# While set, called with each equation a trace records (``ad_checkpoint.print_saved_residuals`` notes which
# line of user code made it; jaxprs carry no source information otherwise).
eqn_hook = None
# Set while ``jax_dump_ir_modes`` asks for ``eqn_count_pprof`` (``dump_ir``): every equation records its line.
all_sources = False


class DynamicJaxprTrace(core.Trace):
    """Builds a jaxpr from the primitives applied to its tracers."""

    @staticmethod
    def cur_qdd(x):
        """No value cranax stages carries quasi-dynamic data (``jax.experimental.cur_qdd``)."""
        return None

    def __init__(self, debug=None):
        super().__init__()
        self.debug = debug
        self.eqns = []
        self.invars = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}   # id(value) -> Var (keeps the value alive through self.consts)
        self._read_const = False   # whether the equation being staged reads a literal or a constant
        self._n_literal_eqns = 0   # equations so far reading a literal (their lines are recorded up to 5)

    def new_arg(self, aval):
        v = Var(aval)
        self.invars.append(v)
        t = DynamicJaxprTracer(self, aval, v)
        wrap = arg_wrappers.get(type(aval))
        # a ref argument of make_jaxpr reaches the function as a Ref (``primitives.state`` registers it)
        return wrap(t) if wrap is not None else t

    def to_atom(self, x):
        if isinstance(x, DynamicJaxprTracer) and x._trace is self:
            return x._var
        if isinstance(x, Tracer) and not x._trace.valid:
            raise UnexpectedTracerError(core._escaped_tracer_message(x))
        self._read_const = True
        if isinstance(x, core.TypedScalar):
            return Literal(x.val, x.aval, x.py)
        if not isinstance(x, Tracer) and core.is_constant_scalar(x):
            return Literal(x, get_aval(x))
        aval = getattr(x, "aval", None)
        if (aval is not None and not isinstance(x, Tracer) and aval.shape == () and _literalable(x)
                and not is_user_const(x)):
            return Literal(x._value_scalar(), aval)
        return self._const_var(x)

    def _const_var(self, x):
        v = self._const_ids.get(id(x))
        if v is None:
            v = Var(get_aval(x).update(weak_type=False) if isinstance(x, np.ndarray) else get_aval(x))
            self._const_ids[id(x)] = v
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def process_primitive(self, prim, args, params):
        if not self.valid:
            raise UnexpectedTracerError("A jaxpr trace was used after it finished.")
        track = self._n_literal_eqns < 5   # whether this equation's line may be shown (see below)
        if track:
            self._read_const = False
        invars = [self.to_atom(a) for a in args]
        avals = [a.aval for a in invars]
        out = prim.abstract_eval(*avals, **params)
        if core.sharded_types_seen:
            out = core.propagate_sharding(prim, avals, params, out)
        # The user's line that staged it, for JAX's "This value became a tracer due to JAX operations on these
        # lines": that paragraph shows the first 5 of the trace's equations reading a literal (any) or a
        # constant (one the value came from), so no equation after the 5th reading a literal can appear in it
        # and only the equations before pay for finding the line (walking frames is most of what it costs;
        # the walk starts past this frame and its caller, ``bind`` or another trace's rule: cranax's).
        src = None
        if track and self._read_const:
            src = user_source(3)
            if any(type(a) is Literal for a in invars):
                self._n_literal_eqns += 1
        elif all_sources:
            src = user_source(3)
        if prim.multiple_results:
            outvars = [Var(a) for a in out]
            self.eqns.append(JaxprEqn(invars, outvars, prim, params, src))
            if eqn_hook is not None:
                eqn_hook(self.eqns[-1])
            return [DynamicJaxprTracer(self, v.aval, v) for v in outvars]
        v = Var(out)
        self.eqns.append(JaxprEqn(invars, [v], prim, params, src))
        if eqn_hook is not None:
            eqn_hook(self.eqns[-1])
        return DynamicJaxprTracer(self, out, v)

    def error_context(self, tracer):
        """JAX's ``_origin_msg``: which function was traced and either the arguments the value depends on or,
        when it depends on none, the equations that made it a tracer (those reading a literal or constant)."""
        d = self.debug
        if d is None:
            return ""
        where = f"the function {d.fun_name}" + (f" at {d.location}" if d.location else "")
        traced_for = "jit" if d.traced_for == "make_jaxpr" else d.traced_for   # JAX stages make_jaxpr via jit
        msg = f"The error occurred while tracing {where} for {traced_for}. "
        deps, eqns = self._progenitors(tracer)
        if deps:
            if len(deps) == 1:
                msg += ("This concrete value was not available in Python because it depends on the value of "
                        f"the argument {deps[0]}.")
            else:
                names = (f"{deps[0]} and {deps[1]}" if len(deps) == 2
                         else ", ".join(deps[:-1]) + f", and {deps[-1]}")
                msg += ("This concrete value was not available in Python because it depends on the values "
                        f"of the arguments {names}.")
        elif eqns:
            shown = [f"  operation {eqn!r}\n    from line {core.summarize_source(eqn.src)}" for eqn in eqns[:5]]
            msg += "This value became a tracer due to JAX operations on these lines:\n\n" + "\n\n".join(shown)
            if len(eqns) > 5:
                msg += "\n\n(Additional originating lines are not shown.)"
        return msg

    def _progenitors(self, tracer):
        """``(arg names, equations)``: the arguments ``tracer``'s value was computed from (walking the
        equations backwards) and, as JAX chooses them, the trace's equations that read one of the constants
        it was computed from or any literal (JAX counts a literal operand wherever it is)."""
        if not isinstance(tracer, DynamicJaxprTracer) or tracer._trace is not self:
            return [], []
        live = {tracer._var}
        for eqn in reversed(self.eqns):
            if any(v in live for v in eqn.outvars):
                live.update(a for a in eqn.invars if isinstance(a, Var))
        names = []
        arg_names = self.debug.arg_names if self.debug else None
        for i, v in enumerate(self.invars):
            if v in live:
                name = arg_names[i] if arg_names and i < len(arg_names) else f"args[{i}]"
                if name not in names:
                    names.append(name)
        if names:
            return names, []
        consts = live.intersection(self.constvars)
        eqns = [e for e in self.eqns
                if any(isinstance(a, Literal) or (isinstance(a, Var) and a in consts) for a in e.invars)]
        return [], eqns

    def to_jaxpr(self, out_tracers):
        outvars = [self.to_atom(t) for t in out_tracers]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.consts)


def keeps_call_consts():
    """True while the current trace stages a jaxpr for the user (``make_jaxpr``, and the jits traced inside
    it): a nested ``jit`` then keeps the arrays it closes over as consts of its own jaxpr, as JAX prints them
    (``jaxpr={ lambda c:f32[3]; a:f32[3]. ...}``). Elsewhere they are hoisted to leading operands, so a
    compiled program takes them as its own inputs (uploaded once, with the program's other consts). Set by
    the innermost ``trace_to_jaxpr`` running (jvp/vmap traces above it inherit it)."""
    return _keep.on


class _Keep(threading.local):
    on = False
    since = 0   # the array serial when user staging began (see ``to_atom``)
    staging_since = None   # the array serial when the outermost trace_to_jaxpr running began


def made_while_staging(x):
    """Whether ``x`` is an array made while a jaxpr is being staged (``jnp.int32(0)`` in the traced
    function): in JAX such a value is a tracer, not concrete (``fori_loop`` bounds made so give a
    ``while``)."""
    since = _keep.staging_since
    return since is not None and getattr(x, "_serial", -1) > since


_keep = _Keep()


def is_user_const(x):
    """Whether ``x`` is an array made before the user-staged trace running now began (make_jaxpr's): JAX
    stages such a closed-over value as a const even when it is a scalar (``{ lambda a:f32[]; ...``), with
    the equations on it (a weak one's ``convert_element_type``); scalars made during the trace, and every
    scalar in a trace for compiling, are literals."""
    return _keep.on and getattr(x, "_serial", _keep.since) < _keep.since


def _array_serial():
    from ..array import _serials   # why: array imports the interpreters; read once per staging begun
    return next(_serials)


def _literalable(x):
    return hasattr(x, "_value_scalar")


def trace_to_jaxpr(fun, in_avals, debug=None, instantiate=True, keep_call_consts=False):
    """Runs ``fun(*tracers)`` (``fun`` takes and returns flat lists) and returns ``(closed_jaxpr, out)``
    where ``out`` is whatever ``fun`` returned (a flat list). ``keep_call_consts``: see
    :func:`keeps_call_consts`."""
    trace = DynamicJaxprTrace(debug)
    args = [trace.new_arg(a) for a in in_avals]
    prev, prev_since, _keep.on = _keep.on, _keep.since, keep_call_consts
    prev_staging = _keep.staging_since
    if keep_call_consts and not prev:
        _keep.since = _array_serial()
    if prev_staging is None:
        _keep.staging_since = _array_serial()
    try:
        state = core._state   # (set_current_trace's work without its context manager: one per trace)
        outer, state.trace = state.trace, trace
        try:
            outs = fun(*args)
        finally:
            state.trace = outer
        outs = [instantiate_const(trace, o) for o in outs]
        closed = trace.to_jaxpr(outs)
        closed.jaxpr.debug_info = debug
    finally:
        _keep.on, _keep.since, _keep.staging_since = prev, prev_since, prev_staging
        trace.invalidate()
    return closed


def instantiate_const(trace, x):
    """A value from the function's outputs as an atom-able object of ``trace``."""
    if isinstance(x, DynamicJaxprTracer) and x._trace is trace:
        return x
    if isinstance(x, Tracer) and not x._trace.valid:
        raise UnexpectedTracerError(core._escaped_tracer_message(x))
    return x



class PartialVal(tuple):
    """A value known (``known(x)``: ``(None, x)``) or unknown with an aval (``unknown(aval)``: ``(aval, None)``),
    as ``jax.interpreters.partial_eval.PartialVal``."""

    def __new__(cls, xs):
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const):
        return cls((None, const))

    @classmethod
    def unknown(cls, aval):
        return cls((aval, None))

    def is_known(self):
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return get_aval(self[1]) if self[0] is None else self[0]


# Primitives whose equations run for what they do, not for their outputs: host callbacks other than
# ``pure_callback``, checks, and the reference operations ``make_jaxpr`` stages. Dead-code elimination keeps them.
_EFFECTFUL = frozenset({"io_callback", "debug_callback", "debug_print", "check",
                        "new_ref", "get", "swap", "addupdate", "freeze"})


def has_effects(eqn):
    """Whether ``eqn`` (or an equation of a jaxpr in its params) has an effect, so DCE must keep it."""
    if eqn.primitive.name in _EFFECTFUL or eqn.params.get("effect") is not None:
        return True
    return any(has_effects(e) for j in _subjaxprs(eqn.params) for e in j.eqns)


# prim -> rule(used_outputs, eqn) -> (used_inputs, eqn' or None): how DCE trims an equation whose outputs are
# partly used (``jit`` trims its inner jaxpr); without a rule an equation is kept whole or dropped whole.
dce_rules = {}


def _default_dce_rule(used_outputs, eqn):
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    return [True] * len(eqn.invars), eqn


def dce_jaxpr(jaxpr, used_outputs, instantiate=False):
    """JAX's ``pe.dce_jaxpr``: ``(jaxpr', used_inputs)`` where ``jaxpr'`` keeps the outputs marked in
    ``used_outputs``, the equations they need (and every effectful one) and the invars that are read or
    marked in ``instantiate`` (a bool or one per invar); ``used_inputs`` says which invars stayed.
    Constvars are kept as they are."""
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.invars)
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live = {v for v in outvars if isinstance(v, Var)}
    eqns = []
    for e in reversed(jaxpr.eqns):
        rule = dce_rules.get(e.primitive, _default_dce_rule)
        used_ins, new = rule([v in live for v in e.outvars], e)
        if new is not None:
            eqns.append(new)
        live.update(a for a, u in zip(e.invars, used_ins) if u and isinstance(a, Var))
    eqns.reverse()
    used_inputs = [bool(i) or v in live for v, i in zip(jaxpr.invars, instantiate)]
    new = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, used_inputs) if u], outvars, eqns,
                jaxpr.debug_info)
    return new, used_inputs
