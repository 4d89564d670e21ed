"""``jit_p``: the call of a staged function, with all of its rules.

Params: ``jaxpr`` (a ClosedJaxpr) and ``name``. The values a function closes over are leading operands (a
const-free jaxpr), except in a jaxpr staged for the user (``partial_eval.keeps_call_consts``), where
arrays stay consts of the inner jaxpr as JAX prints them; binding such a call anywhere else hoists them. Evaluating it compiles the inner jaxpr once (cached per jaxpr object); lowering inlines it; jvp,
partial evaluation and transposition make a new ``jit`` call of the derived jaxpr, so the known part of
``linearize``/``grad`` stays one call; batching batches the inner jaxpr, so ``vmap(jit(f))`` stays one call.
"""
import weakref

from .. import core
from ..array import Array, _from_host, _to_buffer, is_incompatible_devices
from ..core import Primitive, Tracer, get_aval, set_current_trace
from ..interpreters import ad, batching, dispatch, lowering
from ..interpreters import partial_eval as pe
from ..interpreters.ad import Zero, is_undefined
from ..interpreters.eval import eval_jaxpr
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from . import state as _state

__all__ = ["jit_p", "JitPrimitive", "close_over", "program_jaxpr"]


class JitPrimitive(Primitive):
    """``jit``: a call of a staged function. Params: ``jaxpr`` (a ClosedJaxpr without consts), ``name``."""

    call_names_inner = True

    def __init__(self):
        super().__init__("jit", multiple_results=True)
        self.abstract_eval = lambda *avals, jaxpr, name: list(jaxpr.out_avals)
        self.impl = self._impl
        self._exe_cache = weakref.WeakKeyDictionary()

    def bind(self, *args, jaxpr, name):
        if (not pe.keeps_call_consts() and isinstance(core._state.trace, pe.DynamicJaxprTrace)
                and _holds_consts(jaxpr)):
            # a call from a user-staged jaxpr re-staged for compiling: its consts (and its nested calls')
            # become operands, as lowering inlines const-free jaxprs only
            jaxpr, consts = _hoisted(jaxpr)
            args = (*consts, *args)
        return super().bind(*args, jaxpr=jaxpr, name=name)

    def _impl(self, *args, jaxpr, name):
        if hi_runner:   # (once ``jax.experimental.hijax`` is imported) a jaxpr with hi-typed values
            run = hi_runner[0](jaxpr)
            if run is not None:
                return run(args, name)
        if _holds_consts(jaxpr):   # (eval_jaxpr of a make_jaxpr result) the hoisted program, consts uploaded once
            jaxpr, consts = _hoisted(jaxpr)
            return self._impl(*consts, *args, jaxpr=jaxpr, name=name)
        if any(type(a) is _state.AbstractRef for a in jaxpr.in_avals):
            # a make_jaxpr-staged call on array references: evaluated, never lowered (eval_jaxpr of it)
            return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)
        exe = self._exe_cache.get(jaxpr)
        if exe is None:
            exe = lowering.executable(lowering.lower_jaxpr(jaxpr, name), jaxpr)
            self._exe_cache[jaxpr] = exe
        bufs = [a._buf if type(a) is Array else _to_buffer(a, get_aval(a)) for a in args]
        try:
            outs = exe.execute(bufs)
        except ValueError as e:
            if is_incompatible_devices(e):
                e.args = (dispatch.placement_error(name, args) or e.args[0],)
            raise
        return [Array._from_buffer(b, av) for b, av in zip(outs, jaxpr.out_avals)]

    @staticmethod
    def pp_params(eqn):
        return [("name", eqn.params["name"]), ("jaxpr", eqn.params["jaxpr"])]

    @staticmethod
    def inline_jaxpr(eqn):
        return lowering.lowered_form(eqn.params["jaxpr"], eqn.params["name"], eqn.invars), eqn.invars


jit_p = JitPrimitive()
# ``[runner(closed)]`` once ``jax.experimental.hijax`` is imported: for a jaxpr with hi-typed variables, the
# function that runs it on their lo arrays (``run(args, name)``), else None
hi_runner = []
_hoisted_cache = weakref.WeakKeyDictionary()


_holds_cache = weakref.WeakKeyDictionary()


# How a call or control-flow equation whose sub-jaxprs hold consts (user-staged: a jit inside a loop body keeps
# the arrays it closes over, as JAX prints it) takes them as operands instead: ``rule(params)`` returns
# ``(params with const-free sub-jaxprs, [(operand position, const values inserted there)])``. control_flow
# registers scan's, while's and cond's.
nested_hoist_rules = {}


def _sub_closed(params):
    for v in params.values():
        for x in (v if isinstance(v, tuple) else (v,)):
            if isinstance(x, ClosedJaxpr):
                yield x


def _holds_consts(closed):
    """Whether ``closed`` or a call or loop nested in it has consts of its own jaxpr (user-staged consts live
    in jits, and in the loop bodies holding such jits)."""
    hit = _holds_cache.get(closed)
    if hit is None:
        hit = bool(closed.consts) or any(_eqn_holds(e) for e in closed.jaxpr.eqns)
        _holds_cache[closed] = hit
    return hit


def _eqn_holds(eqn):
    return eqn.primitive in nested_hoist_rules and any(_holds_consts(c) for c in _sub_closed(eqn.params))


def hoist_nested(closed):
    """``closed`` with every const held inside its equations (a nested jit's, a loop body's jit's) moved to
    ``closed``'s own consts, those equations taking them as operands: what lowering takes (it inlines
    const-free sub-jaxprs only)."""
    j = closed.jaxpr
    if not any(_eqn_holds(e) for e in j.eqns):
        return closed
    constvars, consts, eqns = list(j.constvars), list(closed.consts), []
    for e in j.eqns:
        if not _eqn_holds(e):
            eqns.append(e)
            continue
        params, groups = nested_hoist_rules[e.primitive](e.params)
        invars = list(e.invars)
        for pos, vals in sorted(groups, key=lambda g: -g[0]):   # from the back: earlier positions stay valid
            vs = [Var(get_aval(v)) for v in vals]
            constvars += vs
            consts += list(vals)
            invars[pos:pos] = vs
        eqns.append(JaxprEqn(invars, e.outvars, e.primitive, params, e.src))
    new = Jaxpr(constvars, list(j.invars), list(j.outvars), eqns)
    new.debug_info = getattr(j, "debug_info", None)
    return ClosedJaxpr(new, consts)


def const_free(closed):
    """``(closed without consts, taking them first; the consts)``, nested ones included."""
    return hoist_nested(closed).hoist_consts()


def _jit_hoist_rule(params):
    j, consts = const_free(params["jaxpr"])
    return dict(params, jaxpr=j), [(0, consts)]


nested_hoist_rules[jit_p] = _jit_hoist_rule


def _hoisted(closed):
    """``closed`` with every nested call's consts hoisted, then its own consts made leading inputs:
    ``(const-free jaxpr, consts as device arrays)``. Once per jaxpr, so the compiled program and its const
    buffers are reused."""
    hit = _hoisted_cache.get(closed)
    if hit is None:
        j, consts = const_free(closed)
        hit = _hoisted_cache[closed] = (j, [c if isinstance(c, (Array, Tracer)) else _from_host(c) for c in consts])
    return hit


def program_jaxpr(closed):
    """``closed`` (a user-staged jaxpr: AOT ``trace``) as lowering takes it: consts nested calls hold
    hoisted into ``closed``'s own (program inputs), and scalar arrays it closes over inlined as literals
    (the user-staged jaxpr keeps them as consts, as JAX prints them; a jit compile inlines them)."""
    closed = hoist_nested(closed)
    j = closed.jaxpr
    lits = {v: Literal(c._value_scalar(), v.aval) for v, c in zip(j.constvars, closed.consts)
            if type(c) is Array and c.aval.shape == () and v not in j.outvars}
    if not lits:
        return closed
    eqns = [JaxprEqn([lits.get(a, a) if isinstance(a, Var) else a for a in e.invars], e.outvars, e.primitive,
                     e.params, e.src) for e in j.eqns]
    keep = [(v, c) for v, c in zip(j.constvars, closed.consts) if v not in lits]
    new = Jaxpr([v for v, _ in keep], list(j.invars), list(j.outvars), eqns)
    new.debug_info = getattr(j, "debug_info", None)
    return ClosedJaxpr(new, [c for _, c in keep])


def bind_hoisting(prim, bind, args, params):
    """``bind(*args, **params)`` of a control-flow primitive; outside a user-staged trace, consts its bodies'
    jits hold (a user-staged jaxpr evaluated or compiled) become leading operands first."""
    if not pe.keeps_call_consts() and any(_holds_consts(c) for c in _sub_closed(params)):
        params, groups = nested_hoist_rules[prim](params)
        args = list(args)
        for pos, vals in sorted(groups, key=lambda g: -g[0]):
            args[pos:pos] = vals
    return bind(*args, **params)


def _call(consts, args, jaxpr, name):
    """``jit_p`` of ``jaxpr`` (const-free, taking ``consts`` first): in a user-staged jaxpr, concrete consts
    become the inner jaxpr's own (JAX's text), else they are leading operands."""
    if consts and pe.keeps_call_consts() and not any(isinstance(c, Tracer) for c in consts):
        return jit_p.bind(*args, jaxpr=close_over(jaxpr, consts), name=name)
    return jit_p.bind(*consts, *args, jaxpr=jaxpr, name=name)


def close_over(jaxpr, consts):
    """``jaxpr`` (a const-free ClosedJaxpr taking ``consts`` first) with those inputs made its constvars."""
    j, n = jaxpr.jaxpr, len(consts)
    inner = Jaxpr(list(j.invars[:n]), list(j.invars[n:]), list(j.outvars), list(j.eqns))
    inner.debug_info = getattr(j, "debug_info", None)
    return ClosedJaxpr(inner, list(consts))


def _jit_jvp(primals, tangents, jaxpr, name):
    nonzeros = [type(t) is not Zero for t in tangents]
    jj, consts, out_nz = ad.jvp_jaxpr(jaxpr, nonzeros)
    outs = _call(consts, [*primals, *[t for t in tangents if type(t) is not Zero]], jj, name)
    n = len(jaxpr.out_avals)
    p_out = outs[:n]
    it = iter(outs[n:])
    t_out = [next(it) if nz else Zero(a) for nz, a in zip(out_nz, jaxpr.out_avals)]
    return p_out, t_out


def _jit_partial_eval(trace, args, params):
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = [trace.is_unknown(a) for a in args]
    res_last = ad.pe_residuals_last()
    kjaxpr, kconsts, ujaxpr, out_unknowns, num_res = ad.partial_eval_jaxpr(jaxpr, unknowns, residuals_last=res_last)
    known_args = [a for a, u in zip(args, unknowns) if not u]
    fjaxpr, src = _forwarding(kjaxpr, num_res)
    operands = [*kconsts, *known_args]
    with set_current_trace(trace.parent):
        kept = _call(kconsts, known_args, fjaxpr, name)
    kouts = [operands[i] if kind == "in" else kept[i] for kind, i in src]
    n_known = len(kouts) - num_res
    known_outs, res = kouts[:n_known], kouts[n_known:]
    unknown_args = [a for a, u in zip(args, unknowns) if u]
    if res_last:   # in a loop's partial evaluation, as JAX's jit rule there: the residuals go last
        uouts = trace.stage(jit_p, unknown_args + list(res), dict(jaxpr=_residuals_last(ujaxpr, num_res), name=name))
    else:          # linearize: residuals first, as JAX's jit linearization
        uouts = trace.stage(jit_p, list(res) + unknown_args, dict(jaxpr=ujaxpr, name=name))
    ki, ui = iter(known_outs), iter(uouts)
    return [next(ui) if u else next(ki) for u in out_unknowns]


_res_last_cache = weakref.WeakKeyDictionary()


def _residuals_last(ujaxpr, num_res):
    """``ujaxpr`` (residuals, then the unknown inputs) taking its ``num_res`` residuals last (cached)."""
    if not num_res or num_res == len(ujaxpr.jaxpr.invars):
        return ujaxpr
    hit = _res_last_cache.get(ujaxpr)
    if hit is None:
        j = ujaxpr.jaxpr
        inner = Jaxpr(list(j.constvars), j.invars[num_res:] + j.invars[:num_res], list(j.outvars), list(j.eqns),
                      getattr(j, "debug_info", None))
        hit = _res_last_cache[ujaxpr] = ClosedJaxpr(inner, list(ujaxpr.consts))
    return hit


_fwd_cache = weakref.WeakKeyDictionary()


def _forwarding(kjaxpr, num_res):
    """The known call's outputs without those it would only pass along, as JAX's jit linearization leaves
    them: an output that is an input of the call (a primal or a residual) is taken from the operand, and a
    residual that is also a primal output from that output. Returns ``(jaxpr, src)``: ``src[i]`` says
    where the call's output i comes from: ``("in", operand index)`` or ``("out", index of jaxpr's outputs)``.
    Cached per jaxpr, so the pruned jaxpr (and its executable) is built once."""
    hit = _fwd_cache.get(kjaxpr)
    if hit is None:
        j = kjaxpr.jaxpr
        pos = {v: i for i, v in enumerate(j.invars)}
        n_primal = len(j.outvars) - num_res
        kept, src, primal_at = [], [], {}
        for i, v in enumerate(j.outvars):
            if isinstance(v, Var) and v in pos:
                src.append(("in", pos[v]))
            elif i >= n_primal and isinstance(v, Var) and v in primal_at:
                src.append(("out", primal_at[v]))
            else:
                if i < n_primal and isinstance(v, Var):
                    primal_at.setdefault(v, len(kept))
                src.append(("out", len(kept)))
                kept.append(v)
        fj = kjaxpr if len(kept) == len(j.outvars) else \
            ClosedJaxpr(Jaxpr([], j.invars, kept, j.eqns, j.debug_info), [])
        hit = _fwd_cache[kjaxpr] = (fj, src)
    return hit


def _jit_transpose(cts, *args, jaxpr, name):
    linear = [is_undefined(a) for a in args]
    ct_nz = [type(c) is not Zero for c in cts]
    tj, consts = ad.transpose_jaxpr(jaxpr, linear, ct_nz)
    res = [a for a in args if not is_undefined(a)]
    outs = _call(consts, [*res, *[c for c in cts if type(c) is not Zero]], tj, name)
    it = iter(outs)
    return [next(it) if l else None for l in linear]


_ref_transposed = weakref.WeakKeyDictionary()   # jaxpr -> {(kinds, cts present): the transposed jit}


def _jit_transpose_ref(cts, *args, refs, jaxpr, name):
    """The transpose of a call some of whose linear inputs have a cotangent ``Ref`` (``VJP.with_refs``):
    as JAX's, a new ``jit`` call of the same name takes the known operands and those refs in operand order,
    then the cotangents present; its body's backward pass adds into the refs (a slice's window only) and it
    returns the other linear inputs' cotangents. A jitted function, so refs reach it as jit arguments do
    (plumbed; staged as ``Ref{...}`` inputs under make_jaxpr); cached per jaxpr and operand kinds."""
    # per operand: "k" known, "r" into a ref, "v" a cotangent value returned, "n" not wanted (dropped)
    kinds = tuple("n" if r is ad.DROP else "r" if r is not None else "v" if is_undefined(a) else "k"
                  for a, r in zip(args, refs))
    ct_nz = tuple(type(c) is not Zero for c in cts)
    per = _ref_transposed.setdefault(jaxpr, {})
    fn = per.get((kinds, ct_nz))
    if fn is None:
        avals = [a.aval if k != "k" else None for a, k in zip(args, kinds)]
        out_avals = list(jaxpr.out_avals)

        def transposed(*flat):
            ops, cs = iter(flat[:len(flat) - sum(ct_nz)]), iter(flat[len(flat) - sum(ct_nz):])
            inner, inner_refs = [], []
            for k, av in zip(kinds, avals):
                inner.append(next(ops) if k == "k" else ad.UndefinedPrimal(av))
                inner_refs.append(next(ops) if k == "r" else None)
            cts_in = [next(cs) if nz else Zero(av) for nz, av in zip(ct_nz, out_avals)]
            res = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, inner, cts_in, refs=inner_refs,
                                   wanted=[k != "n" for k in kinds] if "n" in kinds else None)
            return [ad.instantiate_zeros(r) for r, k in zip(res, kinds) if k == "v"]
        transposed.__name__ = name
        from ..api import jit as _jit   # the API module imports this one
        fn = per[(kinds, ct_nz)] = _jit(transposed)
    ops = [r if k == "r" else a for a, r, k in zip(args, refs, kinds) if k in "kr"]
    call_refs = [r for r, k in zip(refs, kinds) if k == "r"]
    outs = iter(_state.keep_weak(call_refs, lambda: fn(*ops, *[c for c in cts if type(c) is not Zero])))
    return [next(outs) if k == "v" else None for k in kinds]


def _jit_batch(vals, dims, jaxpr, name):
    """Batches the inner jaxpr into a new ``jit`` call: ``vmap(jit(f))`` stays one compiled call."""
    size = batching.axis_size_of(vals, dims)
    moved = [v if d is batching.not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [d if d is batching.not_mapped else 0 for d in dims]
    new, consts, out_dims = batching.batch_jaxpr(jaxpr, size, in_dims)
    outs = _call(consts, moved, new, name)
    return outs, out_dims


_dce_cache = weakref.WeakKeyDictionary()


def _jit_dce(used_outputs, eqn):
    """A call whose outputs are partly used keeps those outputs, the inner equations they need and the
    operands those read (JAX's rule for ``jit``); the trimmed jaxpr is cached per jaxpr and outputs."""
    if not any(used_outputs) and not pe.has_effects(eqn):
        return [False] * len(eqn.invars), None
    if all(used_outputs):
        return [True] * len(eqn.invars), eqn
    closed = eqn.params["jaxpr"]
    per = _dce_cache.setdefault(closed, {})
    key = tuple(used_outputs)
    hit = per.get(key)
    if hit is None:
        j, used_in = pe.dce_jaxpr(closed.jaxpr, used_outputs)
        hit = per[key] = (ClosedJaxpr(j, closed.consts), used_in)
    new_jaxpr, used_in = hit
    new = eqn.replace(invars=[v for v, u in zip(eqn.invars, used_in) if u],
                      outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                      params=dict(eqn.params, jaxpr=new_jaxpr))
    return used_in, new


pe.dce_rules[jit_p] = _jit_dce
ad.jvp_rules[jit_p] = _jit_jvp
ad.pe_rules[jit_p] = _jit_partial_eval
ad.transpose_rules[jit_p] = _jit_transpose
ad.ref_transpose_rules[jit_p] = _jit_transpose_ref
batching.batching_rules[jit_p] = _jit_batch
