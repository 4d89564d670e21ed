"""Automatic differentiation: forward mode (``JVPTrace``), linearization (jvp + partial evaluation into a
known primal part and a linear tangent jaxpr) and transposition (the backward pass). Mirrors
``jax.interpreters.ad`` / ``partial_eval`` in the stackless "current trace" model.

* ``jvp_rules[prim](primals, tangents, **params) -> (primal_out, tangent_out)`` runs on the parent trace.
  Tangents may be symbolic ``Zero``s (integer/bool values always have a ``Zero`` tangent: no float0).
* ``transpose_rules[prim](ct, *invals, **params) -> [ct_in or None per input]``; an input that the linear
  program computes is an ``UndefinedPrimal`` (the rule must give its cotangent), the others are values.
* ``pe_rules[prim](trace, args, params)``: partial evaluation of call-like primitives (``jit``) so that the
  known part stays one call and the unknown (linear) part becomes another.

Reverse mode is ``linearize`` then ``backward_pass`` on the linear jaxpr, as JAX does.
"""
import threading
import weakref

import numpy as np

from .. import core, dtypes
from ..array import _from_host
from ..core import Tracer, TypedScalar, get_aval, set_current_trace
from ..jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from .._pytree import tree_map
from .eval import eval_jaxpr
from .partial_eval import DynamicJaxprTrace, DynamicJaxprTracer, dce_jaxpr, trace_to_jaxpr

__all__ = ["Zero", "UndefinedPrimal", "JVPTrace", "JVPTracer", "PartialEvalTrace", "jvp_rules",
           "transpose_rules", "pe_rules", "jvp_flat", "linearize_flat", "backward_pass", "defjvp", "defjvp2",
           "deflinear", "defjvp_zero", "add_tangents", "instantiate_zeros", "is_zero", "hooks", "is_undefined_primal",
           "primitive_jvps", "primitive_transposes", "zeros_like_aval", "ref_transpose_rules"]

jvp_rules = {}
primitive_jvps = jvp_rules
transpose_rules = {}
primitive_transposes = transpose_rules
pe_rules = {}

# The few arrays the rules here build come from the primitive families that own those operations, which
# register them at import (as JAX's ``ad_util``), so this interpreter imports no primitives:
# "zeros"(aval), "add"(x, y) (``add_any``), "broadcast"(x, shape) (a rank-0 value to ``shape``) and
# "reduce_sum"(x, axes).
hooks = {}


# ----------------------------------------------------------------------------------------------- zeros

class _AvalOnly:
    """A placeholder that carries only an abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"{type(self).__name__}({self.aval.str_short()})"


class Zero(_AvalOnly):
    """A symbolic zero tangent/cotangent of abstract value ``aval``."""

    __slots__ = ()

    @staticmethod
    def from_primal_value(x):
        """The zero tangent of primal ``x`` (JAX's constructor, used by user jvp rules)."""
        return Zero(_tangent_aval(get_aval(x)))


def is_zero(x):
    return type(x) is Zero


def is_float(dt):
    return dtypes.issubdtype(dt, np.inexact)


def zeros_like_aval(aval):
    return hooks["zeros"](aval)


def instantiate_zeros(t):
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def instantiate_array(t):
    """``t`` with a Zero or host scalar made into an Array (API boundaries: users get arrays, never
    TypedScalars); weak types are kept."""
    if type(t) is Zero:
        a = t.aval
        if a.ndim == 0:
            return _from_host(core.typed_scalar(0, a.dtype, a.weak_type))
        return zeros_like_aval(a)
    if isinstance(t, TypedScalar):
        return _from_host(t)
    if isinstance(t, (bool, int, float, np.generic, np.ndarray)):
        return _from_host(core.typed_scalar(t, get_aval(t).dtype, get_aval(t).weak_type)) \
            if np.ndim(t) == 0 else _from_host(np.asarray(t))
    return t


class UndefinedPrimal(_AvalOnly):
    """A linear input of an equation being transposed: only its abstract value is known."""

    __slots__ = ()


def is_undefined(x):
    return type(x) is UndefinedPrimal


is_undefined_primal = is_undefined   # JAX's name (user transpose rules call it)


# ----------------------------------------------------------------------------------------------- add_any

def add_tangents(x, y):
    """Sum of two tangents/cotangents (``add_any``), Zero-aware."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    ax, ay = get_aval(x), get_aval(y)
    if ax.shape != ay.shape:
        if ax.ndim == 0:
            x = hooks["broadcast"](x, ay.shape)
        elif ay.ndim == 0:
            y = hooks["broadcast"](y, ax.shape)
    return hooks["add"](x, y)


# ----------------------------------------------------------------------------------------------- JVP

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def _concrete(self):
        p = self.primal
        if isinstance(p, Tracer):
            return p._concrete()
        if isinstance(p, TypedScalar):
            return p.val
        if hasattr(p, "_value"):
            return p._value()
        return np.asarray(p)

    def __repr__(self):
        # JAX 0.10.2's forms: under grad/linearize/vjp the tangent is staged (GradTracer, shown by its type).
        t = self.tangent
        if isinstance(getattr(t, "_trace", None), PartialEvalTrace):
            return f"GradTracer(primal={self.primal}, typeof(tangent)={get_aval(t).str_short()})"
        return f"JVPTracer(primal={self.primal}, tangent={t})"


class JVPTrace(core.Trace):
    """Forward mode: each value carries a tangent; rules run on ``parent`` (a trace or None for eval).

    ``mode`` says what the tangents are for, as JAX's rule tables do (``primitive_jvps`` for ``jax.jvp``,
    ``primitive_linearizations`` with ``is_vjp`` for ``grad``/``vjp`` and ``linearize``): None (forward mode),
    "vjp" or "lin". Only rules with a rule per mode (hijax primitives) read it, from ``core._state.jvp_mode``
    while a rule runs; ``jvp_jaxpr`` (a jit's or a loop's jvp) passes it on to its inner trace."""

    def __init__(self, parent, mode=None):
        super().__init__()
        self.parent = parent
        self.mode = mode

    def unpack(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not x._trace.valid:
            raise core.UnexpectedTracerError(core._escaped_tracer_message(x))
        return x, Zero(_tangent_aval(get_aval(x)))

    def wrap(self, p, t):
        if type(t) is Zero:
            return p
        return JVPTracer(self, p, t)

    def process_primitive(self, prim, args, params):
        if not self.valid:
            raise core.UnexpectedTracerError("A jvp trace was used after it finished.")
        primals, tangents = [], []
        for a in args:
            p, t = self.unpack(a)
            primals.append(p)
            tangents.append(t)
        with set_current_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                return prim.bind(*primals, **params)
            rule = jvp_rules.get(prim)
            if rule is None:
                raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")
            prev = _st.jvp_mode
            if prev is self.mode:   # (the common case: the function this trace runs set it)
                p_out, t_out = rule(primals, tangents, **params)
            else:
                _st.jvp_mode = self.mode
                try:
                    p_out, t_out = rule(primals, tangents, **params)
                finally:
                    _st.jvp_mode = prev
        if prim.multiple_results:
            return [self.wrap(p, t) for p, t in zip(p_out, t_out)]
        return self.wrap(p_out, t_out)

    def __repr__(self):
        return "JVPTrace"


def _tangent_aval(aval):
    # a hi-type (``jax.experimental.hijax``) names its tangent type, e.g. a quantized array's is a float array
    return aval.to_tangent_aval() if core.is_hi(aval) else aval


def has_tangent(aval):
    """Whether values of ``aval`` are differentiated (float tangents; integers and bools get ``Zero``)."""
    return is_float(_tangent_aval(aval).dtype)


def _lower_aux(trace, store):
    """The auxiliary output (``has_aux``) without this trace's tangents: JAX returns its primal value."""
    if store is not None and "aux" in store:
        store["aux"] = tree_map(lambda v: trace.unpack(v)[0] if isinstance(v, Tracer) else v, store["aux"])


_INHERIT = object()


def current_mode():
    """The ``mode`` of the JVPTrace whose rule is running (None outside any)."""
    return _st.jvp_mode


_st = core._state   # (one thread-local object; its attributes are per thread)


def _run_in_mode(mode, fun, ins):
    """``fun(*ins)`` with ``mode`` recorded, so the rules of the trace running it find it set already."""
    prev = _st.jvp_mode
    _st.jvp_mode = mode
    try:
        return fun(*ins)
    finally:
        _st.jvp_mode = prev


def jvp_flat(fun, primals, tangents, aux_store=None, mode=_INHERIT):
    """Runs ``fun`` (flat lists in and out) in forward mode on the current trace. Tangents may be Zero;
    returns (primals_out, tangents_out) with Zero for outputs that do not depend on the inputs. An
    ``aux_store`` dict's "aux" entry (set by ``fun``) is replaced by its primal value. ``mode``: the
    trace's (``JVPTrace``); by default that of the rule running, so a rule's inner jvp keeps its purpose."""
    parent = core._state.trace
    trace = JVPTrace(parent, current_mode() if mode is _INHERIT else mode)
    ins = [trace.wrap(p, t) for p, t in zip(primals, tangents)]
    try:
        with set_current_trace(trace):
            outs = _run_in_mode(trace.mode, fun, ins)
        p_out, t_out = [], []
        for o in outs:
            p, t = trace.unpack(o)
            p_out.append(p)
            t_out.append(t)
        _lower_aux(trace, aux_store)
    finally:
        trace.invalidate()
    return p_out, t_out


# ----------------------------------------------------------------------------------------------- partial eval

class PartialEvalTrace(DynamicJaxprTrace):
    """Partial evaluation: values that are not this trace's tracers are *known* and primitives on known values
    run on ``parent``; a primitive with an unknown input is staged into this trace's (linear) jaxpr, with
    the known inputs it reads becoming the jaxpr's constvars (the residuals)."""

    def __init__(self, parent):
        super().__init__(None)
        self.parent = parent

    def is_unknown(self, x):
        return isinstance(x, DynamicJaxprTracer) and x._trace is self

    def process_primitive(self, prim, args, params):
        if not any(self.is_unknown(a) for a in args):
            with set_current_trace(self.parent):
                return prim.bind(*args, **params)
        rule = pe_rules.get(prim)
        if rule is not None:
            return rule(self, args, params)
        return self.stage(prim, args, params)

    def stage(self, prim, args, params):
        return DynamicJaxprTrace.process_primitive(self, prim, args, params)

    def error_context(self, tracer):
        return ""

    def __repr__(self):
        return "PartialEvalTrace"


def linearize_flat(fun, primals, aux_store=None, mode="vjp"):
    """Linearizes ``fun`` (flat lists) at ``primals`` on the current trace. Returns
    ``(primals_out, linear, out_nonzero)``: ``linear`` is a ClosedJaxpr from the tangents of the float
    inputs (in order) to the non-zero output tangents, with the residuals as its consts. ``mode``: "vjp"
    (to be transposed: ``grad``/``vjp``) or "lin" (``jax.linearize``), for rules that differ (hijax)."""
    parent = core._state.trace
    pe = PartialEvalTrace(parent)
    tangents = []
    for p in primals:
        aval = get_aval(p)
        tangents.append(pe.new_arg(_tangent_aval(aval)) if has_tangent(aval) else Zero(aval))
    try:
        jt = JVPTrace(pe, mode)
        ins = [jt.wrap(p, t) for p, t in zip(primals, tangents)]
        try:
            with set_current_trace(jt):
                outs = _run_in_mode(mode, fun, ins)
            p_out, t_out = [], []
            for o in outs:
                p, t = jt.unpack(o)
                p_out.append(p)
                t_out.append(t)
            _lower_aux(jt, aux_store)
        finally:
            jt.invalidate()
        for p in p_out:
            if pe.is_unknown(p):
                # JAX 0.10.2's error (e.g. grad of grad through a custom_vjp with optimize_remat=True)
                raise ValueError("Linearization failed to produce known values for all output primals. This is "
                                 "typically caused by attempting to differentiate a function uses an operation "
                                 "that does not support reverse-mode autodiff.")
        nz = [type(t) is not Zero for t in t_out]
        # Tangent equations whose values never reach an output (e.g. a max's under stop_gradient) go, and
        # with them the residuals only they read (JAX's DCE of the linearized jaxpr).
        linear = dce_closed(pe.to_jaxpr([t for t in t_out if type(t) is not Zero]))
    finally:
        pe.invalidate()
    return p_out, linear, nz


def dce_closed(closed):
    """``closed`` without the equations its outputs do not need and the constvars (consts) no equation or
    output then reads; its invars stay."""
    j, _ = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars), True)
    read = {a for e in j.eqns for a in e.invars if isinstance(a, Var)} | {v for v in j.outvars if isinstance(v, Var)}
    keep = [v in read for v in j.constvars]
    if len(j.eqns) == len(closed.jaxpr.eqns) and all(keep):
        return closed
    j = Jaxpr([v for v, k in zip(j.constvars, keep) if k], j.invars, j.outvars, j.eqns, j.debug_info)
    return ClosedJaxpr(j, [c for c, k in zip(closed.consts, keep) if k])


# ----------------------------------------------------------------------------------------------- transpose

# ``ref_transpose_rules[prim](ct, *invals, refs, **params)``: the transpose of ``prim`` when some of its
# undefined inputs are array references to add the cotangent into (``refs``: per input, the ``Ref``, DROP or
# None):
# it writes those refs itself (JAX's "fancy" transposes of ``jit``, ``slice``, ``dynamic_slice`` with a
# ``RefAccum``: ``ref[c:c+1] += ct`` rather than a dense cotangent added whole) and returns the cotangents
# of the other inputs, None for the refs'.
ref_transpose_rules = {}
DROP = "drop"   # in a ref rule's ``refs``: an undefined input whose cotangent is not wanted


def backward_pass(jaxpr, consts, args, cts_out, ct_init=None, wanted=None, refs=None):
    """Transposes ``jaxpr`` (a Jaxpr, linear in the invars given as ``UndefinedPrimal`` in ``args``).
    ``cts_out``: one cotangent (or Zero/None) per outvar. Returns a cotangent (possibly Zero) per invar that
    is undefined and None for the others. Non-linear equations (all inputs known) run forward first.
    ``ct_init``: {invar index: cotangent} the invar's cotangent starts from (a loop's accumulator: each
    contribution is added to it where it arises, as JAX's accumulators do). ``wanted``: per invar, whether
    its cotangent is wanted (default all): equations that only lead to unwanted ones are not transposed
    (``VJP.with_refs``'s ``DontWant``). ``refs``: per invar, a ``Ref`` its cotangent is added into (or None):
    each contribution is added as it arises, as JAX's ``RefAccum``, and equations with a
    ``ref_transpose_rules`` entry write the ref themselves; such an invar's result is Zero."""
    primal_env = {}

    def known(a):
        return isinstance(a, Literal) or a in primal_env

    def read(a):
        # Literals keep their aval (a weakly typed 2.0 stays weak, as the cotangents then do).
        return TypedScalar(a.val, a.aval, a.py) if isinstance(a, Literal) else primal_env[a]

    for v, c in zip(jaxpr.constvars, consts):
        primal_env[v] = c
    undefined = {}   # linear invars: their UndefinedPrimal as given (its aval may differ in weak type)
    for v, a in zip(jaxpr.invars, args):
        if not is_undefined(a):
            primal_env[v] = a
        else:
            undefined[v] = a
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if all(known(a) for a in eqn.invars):
            outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            for v, o in zip(eqn.outvars, outs):
                primal_env[v] = o
        else:
            linear_eqns.append(eqn)

    ct_env = {}
    ref_of = {}   # invar -> the Ref its cotangent goes into
    for v, a, r in zip(jaxpr.invars, args, refs or ()):
        if r is not None and is_undefined(a):
            ref_of[v] = r

    def accum(v, ct):
        if ct is None or type(ct) is Zero:
            return
        if v in ref_of:
            ref_of[v].addupdate(ct)   # a ref of another shape or dtype: addupdate's error, as in JAX
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for i, ct in (ct_init or {}).items():
        accum(jaxpr.invars[i], ct)

    relevant = None
    if wanted is not None and not all(wanted):
        # the variables a wanted input's tangent flows into: only their equations need transposing
        relevant = {v for v, a, w in zip(jaxpr.invars, args, wanted) if w and is_undefined(a)}
        for eqn in linear_eqns:
            if any(isinstance(a, Var) and a in relevant for a in eqn.invars):
                relevant.update(eqn.outvars)

    for v, ct in zip(jaxpr.outvars, cts_out):
        if isinstance(v, Var) and not known(v):
            accum(v, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in cts):
            continue
        if relevant is not None and not any(v in relevant for v in eqn.outvars):
            continue
        cts = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
        # a transpose rule sees an input's type as the caller gave it (JAX: scan's transpose types the carry
        # by its cotangent, so a convert of a weak carry transposes to the identity)
        invals = [read(a) if known(a) else undefined.get(a) or UndefinedPrimal(a.aval) for a in eqn.invars]
        rule = transpose_rules.get(eqn.primitive)
        ref_rule = ref_transpose_rules.get(eqn.primitive) if ref_of else None
        eqn_refs = [ref_of.get(a) if isinstance(a, Var) else None for a in eqn.invars] if ref_rule else ()
        if any(r is not None for r in eqn_refs):
            if relevant is not None:   # inputs whose cotangent nobody wants (DontWant): the rule drops them
                eqn_refs = [DROP if r is None and isinstance(a, Var) and not known(a) and a not in relevant
                            else r for a, r in zip(eqn.invars, eqn_refs)]
            cts_in = ref_rule(cts if eqn.primitive.multiple_results else cts[0], *invals, refs=eqn_refs,
                              **eqn.params)
        elif rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented")
        else:
            cts_in = rule(cts if eqn.primitive.multiple_results else cts[0], *invals, **eqn.params)
        for a, c in zip(eqn.invars, cts_in):
            if not known(a):
                accum(a, c)
    res = []
    for v, a in zip(jaxpr.invars, args):
        if is_undefined(a):
            c = ct_env.get(v) if (relevant is None or v in relevant) and v not in ref_of else None
            res.append(Zero(a.aval) if c is None else c)
        else:
            res.append(None)
    return res


# ----------------------------------------------------------------------------------------------- rule helpers

def defjvp(prim, *jvp_fns):
    """``jvp_fns[i](g_i, *primals, **params)`` is input i's (linear) contribution; None: not differentiable.
    The primal output is ``prim.bind(*primals)``."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out = None
        for fn, t in zip(jvp_fns, tangents):
            if fn is None or type(t) is Zero:
                continue
            out = _acc(out, fn(t, *primals, **params))
        return ans, (Zero(_tangent_aval(get_aval(ans))) if out is None else _fit(out, ans))
    jvp_rules[prim] = rule
    return rule


def defjvp2(prim, *jvp_fns):
    """Like ``defjvp`` with the primal output: ``jvp_fns[i](g_i, ans, *primals, **params)``."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out = None
        for fn, t in zip(jvp_fns, tangents):
            if fn is None or type(t) is Zero:
                continue
            out = _acc(out, fn(t, ans, *primals, **params))
        return ans, (Zero(_tangent_aval(get_aval(ans))) if out is None else _fit(out, ans))
    jvp_rules[prim] = rule
    return rule


def _acc(a, b):
    if a is None:
        return b
    return add_tangents(a, b)


def _fit(t, ans):
    """Broadcasts a tangent to the output's shape: a rank-0 one (a literal operand's), or one of equal rank
    with size-1 dimensions the primitive broadcast (JAX's ``_maybe_broadcast``: the 1s reshaped away, then
    ``broadcast_in_dim`` onto the dimensions that match)."""
    at, aa = get_aval(t), get_aval(ans)
    if at.shape != aa.shape:
        if at.ndim == 0:
            return hooks["broadcast"](t, aa.shape)
        if at.ndim == aa.ndim:
            dims = tuple(i for i, (a, b) in enumerate(zip(at.shape, aa.shape)) if a == b)
            return hooks["broadcast_in_dim"](hooks["reshape"](t, tuple(at.shape[i] for i in dims)), aa.shape, dims)
    return t


def defjvp_zero(prim):
    """The output does not depend differentiably on the inputs (integer/bool results, rounding...)."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero(get_aval(a)) for a in ans]
        return ans, Zero(get_aval(ans))
    jvp_rules[prim] = rule
    return rule


def deflinear(prim, transpose_rule):
    """A primitive linear in all its inputs: the tangent is the primitive applied to the tangents (Zeros
    instantiated unless every tangent is Zero). ``transpose_rule(ct, *invals, **params)``."""
    def rule(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return ans, Zero(get_aval(ans))
        return ans, prim.bind(*[instantiate_zeros(t) for t in tangents], **params)
    jvp_rules[prim] = rule
    transpose_rules[prim] = transpose_rule
    return rule


def unbroadcast(aval, x):
    """``x`` summed down to ``aval``'s shape where the primitive broadcast an operand: a rank-0 one (summed
    whole), or size-1 dimensions of an equal-rank one (summed, then reshaped back to the 1s, as JAX's
    ``_unbroadcast``)."""
    ax = get_aval(x)
    if aval.shape == ax.shape or type(x) is Zero:
        return x
    if aval.ndim == 0:
        return hooks["reduce_sum"](x, tuple(range(ax.ndim)))
    if aval.ndim == ax.ndim:
        dims = tuple(i for i, (a, b) in enumerate(zip(ax.shape, aval.shape)) if a != b)
        return hooks["reshape"](hooks["reduce_sum"](x, dims), tuple(aval.shape))
    return x


# ----------------------------------------------------------------------------------------------- call primitives
# jvp / partial eval / transpose of a closed jaxpr, cached per jaxpr object so repeated calls of a jitted
# function reuse the same derived jaxprs (and so the same compiled executables).

_jvp_cache = weakref.WeakKeyDictionary()
_pe_cache = weakref.WeakKeyDictionary()
_transpose_cache = weakref.WeakKeyDictionary()


def _cached(cache, closed, key, make):
    per = cache.get(closed)
    if per is None:
        per = cache[closed] = {}
    hit = per.get(key)
    if hit is None:
        hit = per[key] = make()
    return hit


def jvp_jaxpr(closed, nonzeros, instantiate=None):
    """The jvp of ``closed`` (no consts) as a jaxpr from primals + the non-zero tangents to primals_out +
    the non-zero tangents out. ``instantiate[i]`` forces output i's tangent (zeros) when it is a float.
    Returns ``(jaxpr, consts, out_nonzeros)``; the jaxpr takes ``consts`` first."""
    nonzeros = tuple(bool(z) for z in nonzeros)
    instantiate = (False,) * len(closed.out_avals) if instantiate is None else tuple(bool(i) for i in instantiate)
    mode = current_mode()

    def make():
        n = len(closed.in_avals)
        in_avals = closed.in_avals
        nz = [z and has_tangent(a) for z, a in zip(nonzeros, in_avals)]
        inst = [i and has_tangent(a) for i, a in zip(instantiate, closed.out_avals)]
        store = {}

        def f(*args):
            primals = list(args[:n])
            it = iter(args[n:])
            tangents = [next(it) if z else Zero(_tangent_aval(a)) for z, a in zip(nz, in_avals)]
            p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents,
                                    mode=mode)
            out_nz = [type(t) is not Zero or i for t, i in zip(t_out, inst)]
            store["nz"] = out_nz
            return list(p_out) + [instantiate_zeros(t) for t, z in zip(t_out, out_nz) if z]
        avals = list(in_avals) + [_tangent_aval(a) for z, a in zip(nz, in_avals) if z]
        jaxpr, consts = trace_to_jaxpr(f, avals).hoist_consts()
        return jaxpr, consts, store["nz"]
    return _cached(_jvp_cache, closed, (nonzeros, instantiate, mode), make)


# True while a control-flow primitive's partial evaluation runs (JAX's ``JaxprTrace``, whose jit rule takes the
# residuals last); False under linearize (JAX's jit linearization, residuals first). Per thread.
_pe_mode = threading.local()


def pe_residuals_last():
    return getattr(_pe_mode, "res_last", False)


def partial_eval_jaxpr(closed, unknowns, instantiate=None, dce_known=True, residuals_last=False):
    """Splits ``closed`` (no consts) given which inputs are unknown. Returns ``(known, known_consts, unknown,
    out_unknowns, num_res)``: ``known`` takes ``known_consts`` then the known inputs and returns the known
    outputs followed by ``num_res`` residuals; ``unknown`` maps residuals + unknown inputs to the unknown
    outputs. ``instantiate[i]`` makes output i unknown even when it is computable. ``dce_known=False`` keeps
    the known equations no output reads (JAX's known calls with no outputs, which it stages where the known
    values live). ``residuals_last``: the mode nested jit calls are split in (``pe_residuals_last``)."""
    unknowns = tuple(bool(u) for u in unknowns)
    instantiate = (False,) * len(closed.out_avals) if instantiate is None else tuple(bool(i) for i in instantiate)

    def make():
        store = {}

        def known_fun(*known_args):
            pe = PartialEvalTrace(core._state.trace)
            it = iter(known_args)
            args = [pe.new_arg(a) if u else next(it) for u, a in zip(unknowns, closed.in_avals)]
            try:
                with set_current_trace(pe):
                    outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
                out_unknowns = [pe.is_unknown(o) or i for o, i in zip(outs, instantiate)]
                unknown = pe.to_jaxpr([o for o, u in zip(outs, out_unknowns) if u])
            finally:
                pe.invalidate()
            # The unknown jaxpr's consts are the residuals: values of the known computation. Those only dead
            # equations read are not kept (JAX's DCE of both parts after partial evaluation).
            ujaxpr, res = dce_closed(unknown).hoist_consts()
            store["unknown"] = ujaxpr
            store["out_unknowns"] = out_unknowns
            store["num_res"] = len(res)
            return [o for o, u in zip(outs, out_unknowns) if not u] + list(res)
        known_avals = [a for u, a in zip(unknowns, closed.in_avals) if not u]
        saved = pe_residuals_last()
        _pe_mode.res_last = residuals_last
        try:
            known = trace_to_jaxpr(known_fun, known_avals)
        finally:
            _pe_mode.res_last = saved
        if dce_known:
            known = dce_closed(known)
        kjaxpr, kconsts = known.hoist_consts()
        return kjaxpr, kconsts, store["unknown"], store["out_unknowns"], store["num_res"]
    return _cached(_pe_cache, closed, (unknowns, instantiate, dce_known, residuals_last), make)


def transpose_jaxpr(closed, linear, ct_nonzeros):
    """The transpose of ``closed`` (no consts) in its ``linear`` inputs: a jaxpr from the non-linear inputs
    + the non-zero output cotangents to the cotangents of the linear inputs."""
    def make():
        in_avals = closed.in_avals
        n_res = sum(1 for l in linear if not l)

        def f(*args):
            res = iter(args[:n_res])
            cts = iter(args[n_res:])
            pargs = [UndefinedPrimal(a) if l else next(res) for l, a in zip(linear, in_avals)]
            cts_out = [next(cts) if nz else Zero(a) for nz, a in zip(ct_nonzeros, closed.out_avals)]
            cts_in = backward_pass(closed.jaxpr, closed.consts, pargs, cts_out)
            return [instantiate_zeros(c) for c, l in zip(cts_in, linear) if l]
        avals = [a for l, a in zip(linear, in_avals) if not l] + \
                [a for nz, a in zip(ct_nonzeros, closed.out_avals) if nz]
        out = trace_to_jaxpr(f, avals)
        return out.hoist_consts()
    return _cached(_transpose_cache, closed, (tuple(linear), tuple(ct_nonzeros)), make)
