"""Control-flow primitives: ``cond``, ``while`` and ``scan``, with all their rules, and the lax functions that
bind them (``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``).

Each carries closed sub-jaxprs (``ClosedJaxpr`` without consts: values the functions close over are passed
as leading operands, as JAX does):

* ``cond index *operands [branches]`` runs ``branches[index]`` (index int32; the API clamps it).
* ``while *cond_consts *body_consts *init [cond_jaxpr body_jaxpr cond_nconsts body_nconsts]``.
* ``scan *consts *init *xs [jaxpr length reverse num_consts num_carry linear unroll _split_transpose]``:
  outputs are the final carry and the stacked per-iteration outputs.

They are compiled by the core as real control flow (``rust/opt/control_flow.rs``): only the taken branch
runs, loops run their body's kernels per iteration. Rules registered here: abstract eval, printing params,
wire params, eager impl (one-equation program through the compiler), jvp, partial eval (for linearize /
reverse mode), transpose (cond, scan; while raises JAX's error) and batching; the sub-jaxprs are transformed
with ``ad.jvp_jaxpr`` / ``ad.partial_eval_jaxpr`` / ``batching.batch_jaxpr``, as ``jit``'s are.
"""
import collections
import inspect
import threading

import functools

import numpy as np

from .. import _core, dtypes
from ..config import config
from ..errors import ConcretizationTypeError
from ..array import Array, _from_host, _to_buffer, is_incompatible_devices
from ..core import Primitive, Tracer, TypedScalar, get_aval, set_current_trace, typed_scalar
from ..core import hi_avals as _hi_avals, is_hi as _is_hi
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters import dispatch as _dispatch
from ..interpreters import lowering
from ..interpreters.eval import eval_jaxpr
from ..interpreters.partial_eval import arg_names, debug_info, trace_to_jaxpr
from ..interpreters import partial_eval as _pe
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from .._pytree import (equality_errors, keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten,
                       treedef_is_leaf)
from . import ad_util as _ad_util
from . import jit as _jit
from . import elementwise as _ew
from . import library as _lib
from . import reductions as _red
from . import structural as _st
from . import state as _state

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "cond_p", "while_p", "scan_p", "typematch",
           "aval_text", "trace_closed", "join_consts"]


# ----------------------------------------------------------------------------------------------- helpers

def typematch(a, b):
    """Same shape and dtype (weak types ignored), as ``jax.core.typematch``."""
    return a.shape == b.shape and a.dtype == b.dtype


def aval_text(a):
    """``ShapedArray(float32[3])`` as JAX prints avals in error messages."""
    w = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({a.str_short(short_dtypes=False)}{w})"


def trace_closed(fun, in_avals, debug=None):
    """Traces ``fun`` (flat lists in and out) to ``(ClosedJaxpr without consts, consts)``; ``debug`` (a
    ``DebugInfo``) is what a tracer error names. In a user-staged trace a jit in the body keeps the arrays
    it closes over as its own consts, as JAX prints it (``bind`` hoists them where the body is run)."""
    return trace_to_jaxpr(fun, list(in_avals), debug, keep_call_consts=_pe.keeps_call_consts()).hoist_consts()


def body_debug(fun, traced_for, args):
    """The ``DebugInfo`` of a loop or branch body ``fun`` traced for ``traced_for`` on the positional
    ``args`` (pytrees of its flat inputs' positions): JAX's origin text in tracer errors ("while tracing the
    function f at file:line for scan ... the argument x['b'][1]")."""
    return debug_info(fun, traced_for, list(arg_names(fun, args)))


def _positions(tree):
    return tree_unflatten(tree, list(range(tree.num_leaves)))


def join_consts(pairs):
    """``pairs``: ``(closed, consts)`` per sub-jaxpr, each ``closed`` taking its consts first. Returns
    ``(closeds, consts)`` where every jaxpr takes the same ``consts`` (the union, deduplicated by identity)
    as leading inputs, ignoring the others'."""
    all_consts, index = [], {}
    for _, cs in pairs:
        for c in cs:
            if id(c) not in index:
                index[id(c)] = len(all_consts)
                all_consts.append(c)
    if not all_consts:
        return [c for c, _ in pairs], []
    out = []
    for closed, cs in pairs:
        j = closed.jaxpr
        own = {index[id(c)]: v for c, v in zip(cs, j.invars[:len(cs)])}
        lead = [own.get(k) or Var(get_aval(c)) for k, c in enumerate(all_consts)]
        out.append(ClosedJaxpr(Jaxpr([], lead + list(j.invars[len(cs):]), j.outvars, j.eqns), []))
    return out, all_consts


def _permute(closed, in_order=None, out_order=None):
    """``closed`` with its invars/outvars reordered (``order[k]`` = old position of new position k)."""
    j = closed.jaxpr
    ins = j.invars if in_order is None else [j.invars[k] for k in in_order]
    outs = j.outvars if out_order is None else [j.outvars[k] for k in out_order]
    return ClosedJaxpr(Jaxpr([], ins, outs, j.eqns), [])


def _consts_by_first_use(closed, consts):
    """``(closed, consts)`` with the leading ``len(consts)`` inputs (hoisted consts, then staged refs) in the
    order the body first uses them: JAX lifts a closed-over value, ref or not, when an equation first reads
    it, so its constvars come in that order (``body_jaxpr={ lambda ; e:Ref{f32[]} f:f32[] ...``)."""
    n = len(consts)
    j = closed.jaxpr
    lead = j.invars[:n]
    first = {}
    for k, e in enumerate(j.eqns):
        for pos, v in enumerate(e.invars):
            if isinstance(v, Var) and id(v) not in first:
                first[id(v)] = (k, pos)
    for pos, v in enumerate(j.outvars):
        first.setdefault(id(v), (len(j.eqns), pos))
    order = sorted(range(n), key=lambda i: first.get(id(lead[i]), (len(j.eqns) + 1, i)))
    if order == list(range(n)):
        return closed, consts
    return _permute(closed, order + list(range(n, len(j.invars)))), [consts[i] for i in order]


def _with_extra_invars(closed, avals, at_end=True):
    """``closed`` taking extra, unused inputs of ``avals`` (after or before its own)."""
    j = closed.jaxpr
    extra = [Var(a) for a in avals]
    ins = list(j.invars) + extra if at_end else extra + list(j.invars)
    return ClosedJaxpr(Jaxpr([], ins, j.outvars, j.eqns), [])


def _eval(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _zeros(aval):
    return _st.full(aval.shape, 0, aval.dtype)


def _is_float(aval):
    return _ad.is_float(aval.dtype)


# ----------------------------------------------------------------------------------------------- lowering / impl

def sub_program(closed, kind="entry", carried=None, index_init=None):
    """The wire form of a sub-jaxpr (a dict, nested inside its equation's params); ``kind``, ``carried`` and
    ``index_init`` as ``lowering.lower_program`` takes them (where its unordered prints run)."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    if isinstance(closed, ClosedJaxpr) and closed.consts:
        raise ValueError("control-flow sub-jaxprs must not have consts (pass them as operands)")
    return lowering.lower_program(jaxpr, kind, carried, index_init)


class _ExeCache:
    """Eager executables keyed by the lowered program text (so re-traced but equal sub-jaxprs share one)."""

    def __init__(self, size=256):
        self.d = collections.OrderedDict()
        self.size = size
        self.lock = threading.Lock()

    def get(self, text):
        with self.lock:
            exe = self.d.get(text)
            if exe is not None:
                self.d.move_to_end(text)
            return exe

    def put(self, text, exe):
        with self.lock:
            self.d[text] = exe
            while len(self.d) > self.size:
                self.d.popitem(last=False)

    def clear(self):
        with self.lock:
            self.d.clear()


_exe_cache = _ExeCache()


def _compiled_impl(prim):
    def impl(*args, **params):
        if prim.name == "scan" and any(isinstance(a, _state.Ref) for a in args):
            return _scan_eval_refs(*args, **params)
        if prim.name == "while" and any(isinstance(a, _state.Ref) for a in args):
            return _while_eval_refs(*args, **params)
        if prim.name == "cond" and any(isinstance(a, _state.Ref) for a in args):
            # a make_jaxpr-staged cond on array references: the taken branch evaluated on the eager refs
            b = params["branches"][int(np.clip(int(args[0]), 0, len(params["branches"]) - 1))]
            return eval_jaxpr(b.jaxpr, b.consts, *args[1:])
        avals = [get_aval(a) for a in args]
        invars = [Var(a) for a in avals]
        outs = prim.abstract_eval(*avals, **params)
        outvars = [Var(a) for a in outs]
        closed = ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(invars, outvars, prim, params)]), [])
        run = _jit.hi_runner[0](closed) if _jit.hi_runner else None
        if run is not None:   # hi-typed values inside a body (``jax.experimental.hijax``): lowered first
            return run(list(args), prim.name)
        text = lowering.lower_jaxpr(closed, prim.name)
        exe = _exe_cache.get(text)
        if exe is None:
            exe = lowering.executable(text, closed)
            _exe_cache.put(text, exe)
        bufs = [a._buf if type(a) is Array else _to_buffer(a, av) for a, av in zip(args, avals)]
        try:
            res = exe.execute(bufs)
        except ValueError as e:
            if is_incompatible_devices(e):
                e.args = (_dispatch.placement_error(prim.name, args) or e.args[0],)
            raise
        return [Array._from_buffer(b, av) for b, av in zip(res, outs)]
    return impl


def _scan_eval_refs(*args, jaxpr, length, reverse, num_consts, num_carry, **_):
    """A make_jaxpr-staged scan whose body reads and writes array references (eval_jaxpr of it): the body
    evaluated step by step on the eager refs, never lowered."""
    consts, carry, xs = args[:num_consts], list(args[num_consts:num_consts + num_carry]), args[num_consts + num_carry:]
    ys = []
    for i in (reversed(range(length)) if reverse else range(length)):
        out = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry, *[x[i] for x in xs])
        carry, y = list(out[:num_carry]), out[num_carry:]
        ys.append(y)
    if reverse:
        ys.reverse()
    avals = jaxpr.out_avals[num_carry:]
    stacked = [_from_host(np.stack([np.asarray(y[k]) for y in ys]) if ys else np.zeros((0,) + a.shape, a.dtype))
               for k, a in enumerate(avals)]
    return carry + stacked


def _while_eval_refs(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """A make_jaxpr-staged while_loop whose functions read and write array references (eval_jaxpr of it):
    evaluated iteration by iteration on the eager refs, never lowered."""
    cc, bc = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)[0]):
        carry = list(eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry))
    return carry


def _control_primitive(name, abstract_eval, wire, pp_params=None):
    p = Primitive(name, multiple_results=True)
    plain_bind = p.bind
    p.bind = lambda *args, **params: _jit.bind_hoisting(p, plain_bind, args, params)
    p.abstract_eval = abstract_eval
    p.impl = _compiled_impl(p)
    if pp_params is not None:
        p.pp_params = pp_params
    lowering.wire_params[name] = wire
    return p


# ----------------------------------------------------------------------------------------------- cond

def _cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    for i, b in enumerate(branches):
        ins = b.in_avals
        if len(ins) != len(ops) or not all(typematch(a, o) for a, o in zip(ins, ops)):
            raise TypeError(f"cond branch {i} takes {[a.str_short() for a in ins]} but is given "
                            f"{[o.str_short() for o in ops]}")
        outs = b.out_avals
        ref = branches[0].out_avals
        if len(outs) != len(ref) or not all(typematch(a, r) for a, r in zip(outs, ref)):
            raise TypeError("cond branches must have identical output types, got "
                            f"{[a.str_short() for a in ref]} and {[a.str_short() for a in outs]}")
    return list(branches[0].out_avals)


cond_p = _control_primitive(
    "cond", _cond_abstract_eval,
    lambda eqn: {"branches": [sub_program(b, "branch") for b in eqn.params["branches"]]},
    staticmethod(lambda eqn: [("branches", eqn.params["branches"])]))


def _cond_jvp(primals, tangents, branches):
    index, *ops = primals
    ops_dot = tangents[1:]
    nz = [not _ad.is_zero(t) for t in ops_dot]
    nout = len(branches[0].out_avals)
    out_nz = [False] * nout
    for b in branches:
        _, _, onz = _ad.jvp_jaxpr(b, nz, [False] * nout)
        out_nz = [a or c for a, c in zip(out_nz, onz)]
    pairs = []
    for b in branches:
        j, cs, _ = _ad.jvp_jaxpr(b, nz, out_nz)
        pairs.append((j, cs))
    new, consts = join_consts(pairs)
    outs = cond_p.bind(index, *consts, *ops, *[t for t, z in zip(ops_dot, nz) if z], branches=tuple(new))
    p_out, it = outs[:nout], iter(outs[nout:])
    t_out = [next(it) if z else _ad.Zero(a) for z, a in zip(out_nz, branches[0].out_avals)]
    return p_out, t_out


def _cond_partial_eval(trace, args, params):
    branches = params["branches"]
    index, ops = args[0], list(args[1:])
    if trace.is_unknown(index):
        return trace.stage(cond_p, args, params)
    unknowns = [trace.is_unknown(a) for a in ops]
    nout = len(branches[0].out_avals)
    out_uk = [False] * nout
    for b in branches:
        split = _ad.partial_eval_jaxpr(b, unknowns, [False] * nout, residuals_last=True)
        out_uk = [a or c for a, c in zip(out_uk, split[3])]
    splits = [_ad.partial_eval_jaxpr(b, unknowns, out_uk, residuals_last=True) for b in branches]
    res_avals = [s[0].out_avals[len(s[0].out_avals) - s[4]:] for s in splits]
    all_res, res_slots = _merge_branch_residuals(res_avals)
    n_known_out = sum(1 for u in out_uk if not u)

    def known_branch(i):
        known, kconsts = splits[i][0], splits[i][1]

        def f(*kargs):
            outs = _eval(known, *kconsts, *kargs)
            # every slot starts as an empty placeholder; this branch's residuals then take theirs (JAX's
            # _join_cond_outputs: the unused placeholders stay in the jaxpr)
            res = [_ad_util.empty_like(a) for a in all_res]
            for k, r in zip(res_slots[i], outs[n_known_out:]):
                res[k] = r
            return list(outs[:n_known_out]) + res
        return trace_closed(f, [a for a, u in zip(branches[i].in_avals, unknowns) if not u])

    def unknown_branch(i):
        unknown = splits[i][2]
        nres = len(all_res)

        def f(*uargs):
            res, rest = uargs[:nres], uargs[nres:]
            return _eval(unknown, *[res[k] for k in res_slots[i]], *rest)
        return trace_closed(f, list(all_res) + [a for a, u in zip(branches[i].in_avals, unknowns) if u])

    kbranches, kconsts = join_consts([known_branch(i) for i in range(len(branches))])
    with set_current_trace(trace.parent):
        kouts = cond_p.bind(index, *kconsts, *[a for a, u in zip(ops, unknowns) if not u],
                            branches=tuple(kbranches))
    known_outs, res = kouts[:n_known_out], kouts[n_known_out:]
    ubranches, uconsts = join_consts([unknown_branch(i) for i in range(len(branches))])
    uouts = trace.stage(cond_p, [index, *uconsts, *res, *[a for a, u in zip(ops, unknowns) if u]],
                        dict(branches=tuple(ubranches)))
    ki, ui = iter(known_outs), iter(uouts)
    return [next(ui) if u else next(ki) for u in out_uk]


def _merge_branch_residuals(res_avals):
    """The residual slots shared by all branches, as JAX merges them: the k-th residual of a given type in
    any branch takes the same slot, so branches share slots by type instead of each getting its own.
    Returns ``(slot avals, per branch: the slot of each of its residuals)``."""
    slots, where, per_branch = [], {}, []
    for avs in res_avals:
        seen, mine = {}, []
        for a in avs:
            n = seen[a] = seen.get(a, -1) + 1
            if (a, n) not in where:
                where[(a, n)] = len(slots)
                slots.append(a)
            mine.append(where[(a, n)])
        per_branch.append(mine)
    return slots, per_branch


def _cond_transpose(cts, index, *ops, branches):
    if _ad.is_undefined(index):
        raise ValueError("cond: cannot transpose with respect to the branch index")
    linear = [_ad.is_undefined(o) for o in ops]
    ct_nz = [not _ad.is_zero(c) for c in cts]
    pairs = [_ad.transpose_jaxpr(b, linear, ct_nz) for b in branches]
    new, consts = join_consts(pairs)
    res = [o for o, l in zip(ops, linear) if not l]
    outs = cond_p.bind(index, *consts, *res, *[c for c, z in zip(cts, ct_nz) if z], branches=tuple(new))
    it = iter(outs)
    return [None] + [next(it) if l else None for l in linear]


def _cond_batch(vals, dims, branches):
    index, ops = vals[0], list(vals[1:])
    idim, odims = dims[0], list(dims[1:])
    size = _batching.axis_size_of(vals, dims)
    nout = len(branches[0].out_avals)
    if idim is not None:
        # A batched predicate: every branch runs on the whole batch and the results are selected.
        index = _batching.moveaxis(index, idim, 0)
        ops = [_batching.bdim_at_front(o, d, size) for o, d in zip(ops, odims)]
        branch_outs = []
        for b in branches:
            bj, bconsts, _ = batch_closed(b, size, [True] * len(ops), [True] * nout)
            branch_outs.append(_eval(bj, *bconsts, *ops))
        index = _ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
        outs = []
        for k in range(nout):
            cases = [bo[k] for bo in branch_outs]
            shape = get_aval(cases[0]).shape
            which = _st.broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
            outs.append(_ew.select_n(which, *cases))
        return outs, [0] * nout
    ops = [o if d is None else _batching.moveaxis(o, d, 0) for o, d in zip(ops, odims)]
    in_b = [d is not None for d in odims]
    out_b = [False] * nout
    for b in branches:
        out_b = [a or c for a, c in zip(out_b, batch_closed(b, size, in_b, [False] * nout)[2])]
    pairs = []
    for b in branches:
        bj, cs, _ = batch_closed(b, size, in_b, out_b)
        pairs.append((bj, cs))
    new, consts = join_consts(pairs)
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(new))
    return outs, [0 if b else None for b in out_b]


_ad.jvp_rules[cond_p] = _cond_jvp
_ad.pe_rules[cond_p] = _cond_partial_eval
_ad.transpose_rules[cond_p] = _cond_transpose
_batching.batching_rules[cond_p] = _cond_batch


# ----------------------------------------------------------------------------------------------- while

def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    carry = avals[cond_nconsts + body_nconsts:]
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{', '.join(aval_text(a) for a in pred)}].")
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(typematch(a, c) for a, c in zip(outs, carry)):
        raise TypeError("body_fun output and input must have identical types, got "
                        f"{[a.str_short() for a in outs]} and {[c.str_short() for c in carry]}")
    return list(outs)


def _while_wire(eqn):
    p = eqn.params
    return {"cond_jaxpr": sub_program(p["cond_jaxpr"]), "body_jaxpr": sub_program(p["body_jaxpr"], "while"),
            "cond_nconsts": p["cond_nconsts"], "body_nconsts": p["body_nconsts"]}


while_p = _control_primitive("while", _while_abstract_eval, _while_wire)


def _while_jvp(primals, tangents, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts, init = primals[:nc], primals[nc:nc + nb], primals[nc + nb:]
    bdot, idot = tangents[nc:nc + nb], tangents[nc + nb:]
    b_nz = [not _ad.is_zero(t) for t in bdot]
    c_nz = [not _ad.is_zero(t) for t in idot]
    nk = len(init)
    while True:
        _, _, onz = _ad.jvp_jaxpr(body_jaxpr, b_nz + c_nz, c_nz)
        new = [a or (c and _is_float(av)) for a, c, av in zip(c_nz, onz, body_jaxpr.out_avals)]
        if new == c_nz:
            break
        c_nz = new
    bj, bjconsts, _ = _ad.jvp_jaxpr(body_jaxpr, b_nz + c_nz, c_nz)
    # jvp order: hoisted, bconsts, carry, bconst tangents, carry tangents; while wants carry last.
    nh, nbt, nkt = len(bjconsts), sum(b_nz), sum(c_nz)
    order = (list(range(nh + nb)) + list(range(nh + nb + nk, nh + nb + nk + nbt))
             + list(range(nh + nb, nh + nb + nk)) + list(range(nh + nb + nk + nbt, nh + nb + nk + nbt + nkt)))
    bj = _permute(bj, order)
    tan_avals = [a for a, z in zip(body_jaxpr.out_avals, c_nz) if z]
    cj = _with_extra_invars(cond_jaxpr, tan_avals)
    init_t = [_ad.instantiate_zeros(t) if z else None for t, z in zip(idot, c_nz)]
    outs = while_p.bind(*cconsts, *bjconsts, *bconsts, *[t for t, z in zip(bdot, b_nz) if z], *init,
                        *[t for t in init_t if t is not None],
                        cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=nc, body_nconsts=nh + nb + nbt)
    p_out, it = outs[:nk], iter(outs[nk:])
    return p_out, [next(it) if z else _ad.Zero(a) for z, a in zip(c_nz, body_jaxpr.out_avals)]


def _while_partial_eval(trace, args, params):
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    uk = [trace.is_unknown(a) for a in args]
    c_uk, b_uk, k_uk = uk[:nc], uk[nc:nc + nb], uk[nc + nb:]
    nk = len(k_uk)
    while True:
        out_uk = _ad.partial_eval_jaxpr(body_jaxpr, b_uk + k_uk, [False] * nk, residuals_last=True)[3]
        new = [a or c for a, c in zip(k_uk, out_uk)]
        if new == k_uk:
            break
        k_uk = new
    cond_split = _ad.partial_eval_jaxpr(cond_jaxpr, c_uk + k_uk, [False], residuals_last=True)
    if cond_split[3][0] or all(k_uk):
        return trace.stage(while_p, args, params)
    body_split = _ad.partial_eval_jaxpr(body_jaxpr, b_uk + k_uk, k_uk, residuals_last=True)
    n_known = sum(1 for u in k_uk if not u)
    kb = body_split[0].jaxpr
    kbody = ClosedJaxpr(Jaxpr([], kb.invars, kb.outvars[:n_known], kb.eqns), [])
    kc = cond_split[0].jaxpr
    kcond = ClosedJaxpr(Jaxpr([], kc.invars, kc.outvars[:1], kc.eqns), [])
    known = lambda xs, flags: [x for x, u in zip(xs, flags) if not u]  # noqa: E731
    with set_current_trace(trace.parent):
        kouts = while_p.bind(*cond_split[1], *known(args[:nc], c_uk), *body_split[1],
                             *known(args[nc:nc + nb], b_uk), *known(args[nc + nb:], k_uk),
                             cond_jaxpr=kcond, body_jaxpr=kbody,
                             cond_nconsts=len(cond_split[1]) + sum(1 for u in c_uk if not u),
                             body_nconsts=len(body_split[1]) + sum(1 for u in b_uk if not u))
    # The unknown outputs come from the whole loop, staged (it recomputes the known part).
    staged = trace.stage(while_p, args, params)
    ki = iter(kouts)
    return [s if u else next(ki) for s, u in zip(staged, k_uk)]


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
                     "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
                     "start/stop.")


def _while_batch(vals, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    size = _batching.axis_size_of(vals, dims)
    vals = [v if d is None else _batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    isb = [d is not None for d in dims]
    c_b, b_b, k_b = isb[:nc], isb[nc:nc + nb], isb[nc + nb:]
    nk = len(k_b)
    while True:
        ob = batch_closed(body_jaxpr, size, b_b + k_b, k_b)[2]
        new = [a or c for a, c in zip(k_b, ob)]
        if new == k_b:
            break
        k_b = new
    pred_b = batch_closed(cond_jaxpr, size, c_b + k_b, [False])[2][0]
    cconsts, bconsts, init = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
    if pred_b:
        k_b = [True] * nk
    init = [v if (b or not f) else _batching.broadcast_batched(v, size, 0)
            for v, b, f in zip(init, isb[nc + nb:], k_b)]
    carry_avals = [get_aval(v) for v in init]
    bj, bjc, _ = batch_closed(body_jaxpr, size, b_b + k_b, k_b)
    cj, cjc, _ = batch_closed(cond_jaxpr, size, c_b + k_b, [pred_b])
    if not pred_b:
        outs = while_p.bind(*cjc, *cconsts, *bjc, *bconsts, *init, cond_jaxpr=cj, body_jaxpr=bj,
                            cond_nconsts=len(cjc) + nc, body_nconsts=len(bjc) + nb)
        return outs, [0 if b else None for b in k_b]
    # A batched predicate: loop while any element is still running; finished elements keep their carry.
    ncc, nbc = len(cjc) + nc, len(bjc) + nb
    cc_avals = [get_aval(v) for v in (*cjc, *cconsts)]
    bc_avals = [get_aval(v) for v in (*bjc, *bconsts)]

    def new_cond(*a):
        p = _eval(cj, *a)[0]
        return [_red.reduce_or(p, (0,))]

    def new_body(*a):
        ccs, bcs, carry = a[:ncc], a[ncc:ncc + nbc], a[ncc + nbc:]
        p = _eval(cj, *ccs, *carry)[0]
        new = _eval(bj, *bcs, *carry)
        out = []
        for n, o in zip(new, carry):
            shape = get_aval(n).shape
            which = _st.broadcast_in_dim(p, shape, (0,)) if len(shape) > 1 else p
            out.append(_ew.select(which, n, o))
        return out
    ncj, ncjc = trace_closed(new_cond, cc_avals + carry_avals)
    nbj, nbjc = trace_closed(new_body, cc_avals + bc_avals + carry_avals)
    outs = while_p.bind(*ncjc, *cjc, *cconsts, *nbjc, *cjc, *cconsts, *bjc, *bconsts, *init,
                        cond_jaxpr=ncj, body_jaxpr=nbj, cond_nconsts=len(ncjc) + ncc,
                        body_nconsts=len(nbjc) + ncc + nbc)
    return outs, [0] * nk


_ad.jvp_rules[while_p] = _while_jvp
_ad.pe_rules[while_p] = _while_partial_eval
_ad.transpose_rules[while_p] = _while_transpose
_batching.batching_rules[while_p] = _while_batch


# ----------------------------------------------------------------------------------------------- scan

def _scan_abstract_eval(*avals, jaxpr, length, reverse, num_consts, num_carry, linear=None, unroll=1,
                        _split_transpose=False):
    carry = avals[num_consts:num_consts + num_carry]
    xs = avals[num_consts + num_carry:]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan xs must have leading axis of length {length}, got {x.str_short()}")
    outs = jaxpr.out_avals
    if len(outs) < num_carry or not all(typematch(a, c) for a, c in zip(outs[:num_carry], carry)):
        raise TypeError("scan body function carry input and carry output must have equal types, got "
                        f"{[c.str_short() for c in carry]} and {[a.str_short() for a in outs[:num_carry]]}")
    ys = [a.update(shape=(length,) + a.shape) for a in outs[num_carry:]]
    return list(outs[:num_carry]) + ys


def _scan_wire(eqn):
    p = eqn.params
    carried = range(p["num_consts"] + p["num_carry"])   # (the xs XLA slices: not inputs of the body)
    # a fori_loop's index (the first carry): XLA keeps it as its own loop counter when it starts at a
    # literal, else computes it from the counter and the start (``print_order``)
    init = None
    if p["num_carry"] and len(eqn.invars) == p["num_consts"] + p["num_carry"]:
        init = (p["num_consts"], "literal" if type(eqn.invars[p["num_consts"]]) is Literal else "param")
    return {"jaxpr": sub_program(p["jaxpr"], "scan", carried, init), "num_consts": p["num_consts"],
            "num_carry": p["num_carry"],
            "length": p["length"], "reverse": bool(p["reverse"])}


# JAX 0.10.2's scan equation has no ``linear`` or ``_split_transpose`` params: cranax keeps them for its
# rules, and prints the others, sorted, as JAX does.
scan_p = _control_primitive("scan", _scan_abstract_eval, _scan_wire, pp_params=lambda eqn: sorted(
    (k, v) for k, v in eqn.params.items() if k not in ("linear", "_split_transpose")))


def scan_bind(consts, init, xs, jaxpr, length, reverse, unroll=1):
    n = len(consts) + len(init) + len(xs)
    return scan_p.bind(*consts, *init, *xs, _split_transpose=False, jaxpr=jaxpr, length=length,
                       linear=(False,) * n, num_carry=len(init), num_consts=len(consts), reverse=reverse,
                       unroll=unroll)


def _scan_jvp(primals, tangents, jaxpr, length, reverse, num_consts, num_carry, linear=None, unroll=1,
              _split_transpose=False):
    nc, nk = num_consts, num_carry
    consts, init, xs = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    cdot, idot, xdot = tangents[:nc], tangents[nc:nc + nk], tangents[nc + nk:]
    c_nz = [not _ad.is_zero(t) for t in cdot]
    k_nz = [not _ad.is_zero(t) for t in idot]
    x_nz = [not _ad.is_zero(t) for t in xdot]
    nx, ny = len(xs), len(jaxpr.out_avals) - nk
    while True:
        onz = _ad.jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + [False] * ny)[2]
        new = [a or c for a, c in zip(k_nz, onz[:nk])]
        if new == k_nz:
            break
        k_nz = new
    j, jc, onz = _ad.jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + [False] * ny)
    nh, nct, nkt, nxt = len(jc), sum(c_nz), sum(k_nz), sum(x_nz)
    y_nz = onz[nk:]
    nyt = sum(y_nz)
    # jvp order: hoisted, consts, carry, xs, const tangents, carry tangents, xs tangents.
    P = nh + nc + nk + nx
    order = (list(range(nh + nc)) + list(range(P, P + nct)) + list(range(nh + nc, nh + nc + nk))
             + list(range(P + nct, P + nct + nkt)) + list(range(nh + nc + nk, P))
             + list(range(P + nct + nkt, P + nct + nkt + nxt)))
    # outputs: carry, ys, carry tangents, ys tangents -> carry, carry tangents, ys, ys tangents
    Q = nk + ny
    out_order = (list(range(nk)) + list(range(Q, Q + nkt)) + list(range(nk, Q)) + list(range(Q + nkt, Q + nkt + nyt)))
    j = _permute(j, order, out_order)
    init_t = [_ad.instantiate_zeros(t) for t, z in zip(idot, k_nz) if z]
    outs = scan_bind([*jc, *consts, *[t for t, z in zip(cdot, c_nz) if z]], [*init, *init_t],
                     [*xs, *[t for t, z in zip(xdot, x_nz) if z]], j, length, reverse, unroll)
    carry_p, carry_t = outs[:nk], iter(outs[nk:nk + nkt])
    ys_p, ys_t = outs[nk + nkt:nk + nkt + ny], iter(outs[nk + nkt + ny:])
    out_avals = _scan_abstract_eval(*[get_aval(p) for p in primals], jaxpr=jaxpr, length=length,
                                    reverse=reverse, num_consts=nc, num_carry=nk)
    t_out = [next(carry_t) if z else _ad.Zero(a) for z, a in zip(k_nz, out_avals[:nk])]
    t_out += [next(ys_t) if z else _ad.Zero(a) for z, a in zip(y_nz, out_avals[nk:])]
    return list(carry_p) + list(ys_p), t_out


def _scan_partial_eval(trace, args, params):
    jaxpr, length, reverse = params["jaxpr"], params["length"], params["reverse"]
    nc, nk = params["num_consts"], params["num_carry"]
    unroll = params.get("unroll", 1)
    uk = [trace.is_unknown(a) for a in args]
    c_uk, k_uk, x_uk = uk[:nc], uk[nc:nc + nk], uk[nc + nk:]
    ny = len(jaxpr.out_avals) - nk
    while True:
        out_uk = _ad.partial_eval_jaxpr(jaxpr, c_uk + k_uk + x_uk, k_uk + [False] * ny, residuals_last=True)[3]
        new = [a or c for a, c in zip(k_uk, out_uk[:nk])]
        if new == k_uk:
            break
        k_uk = new
    known, kconsts, unknown, out_uk, nres = _ad.partial_eval_jaxpr(jaxpr, c_uk + k_uk + x_uk, k_uk + [False] * ny,
                                                                    residuals_last=True)
    y_uk = out_uk[nk:]
    kn = lambda xs, flags: [x for x, u in zip(xs, flags) if not u]  # noqa: E731
    un = lambda xs, flags: [x for x, u in zip(xs, flags) if u]  # noqa: E731
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    # Known scan: consts = hoisted + known consts, carry = known carry, xs = known xs; outputs known carry,
    # known ys, then the residuals (stacked as ys).
    n_kc = sum(1 for u in k_uk if not u)
    n_ky = sum(1 for u in y_uk if not u)
    known_consts = [*kconsts, *kn(consts, c_uk)]
    known, fwd = _forward_xs_residuals(known, n_kc + n_ky, len(kn(xs, x_uk)))
    known, cfwd = _forward_const_residuals(known, n_kc + n_ky, len(known_consts), fwd)
    # residuals computed from the consts alone are computed once, before the loop (JAX's hoisting)
    known, loop_consts, hoisted = _hoist_invariant_residuals(trace, known, known_consts, n_kc + n_ky)
    with set_current_trace(trace.parent):
        kouts = scan_bind(loop_consts, kn(init, k_uk), kn(xs, x_uk), known, length, reverse, unroll)
    k_carry, k_ys, stacked = kouts[:n_kc], kouts[n_kc:n_kc + n_ky], iter(kouts[n_kc + n_ky:])
    hoisted_at = iter(hoisted)
    hoisted = [next(hoisted_at) if f is None and c is None else None for f, c in zip(fwd, cfwd)]
    res = [known_consts[c] if c is not None else kn(xs, x_uk)[f] if f is not None
           else h if h is not None else next(stacked) for f, c, h in zip(fwd, cfwd, hoisted)]
    # Unknown scan: residuals arrive first in the unknown jaxpr; scan wants consts, carry, xs. A residual that
    # is a known const or computed from them (loop-invariant) is a const of the unknown scan, before its own
    # consts (as JAX's scan partial evaluation passes intensive residuals); the others are stacked xs, last.
    n_uc, n_uk_, n_ux = sum(c_uk), sum(k_uk), sum(x_uk)
    r_const = [r for r in range(nres) if cfwd[r] is not None or hoisted[r] is not None]
    r_xs = [r for r in range(nres) if cfwd[r] is None and hoisted[r] is None]
    order = (r_const + list(range(nres, nres + n_uc)) + list(range(nres + n_uc, nres + n_uc + n_uk_))
             + list(range(nres + n_uc + n_uk_, nres + n_uc + n_uk_ + n_ux)) + r_xs)
    uj = _permute(unknown, order)
    uouts = trace.stage(scan_p, [*(res[r] for r in r_const), *un(consts, c_uk), *un(init, k_uk), *un(xs, x_uk),
                                 *(res[r] for r in r_xs)],
                        dict(_split_transpose=False, jaxpr=uj, length=length,
                             linear=(False,) * (n_uc + n_uk_ + n_ux + nres), num_carry=n_uk_,
                             num_consts=n_uc + len(r_const), reverse=reverse, unroll=unroll))
    kc, ky, uc, uy = iter(k_carry), iter(k_ys), iter(uouts[:n_uk_]), iter(uouts[n_uk_:])
    return [next(uc) if u else next(kc) for u in k_uk] + [next(uy) if u else next(ky) for u in y_uk]


def _hoist_invariant_residuals(trace, known, consts, n_outs):
    """``known`` (the known scan body: ``consts``, carry, xs to ``n_outs`` carry/ys outputs, then stacked
    residuals) split as JAX's scan partial evaluation splits it, with the consts known and the rest unknown:
    what depends on the consts alone (residuals, and values the loop reads) is evaluated once, outside the
    loop, in ``trace``'s parent. Returns ``(body, loop_consts, hoisted)``: the new body (taking
    ``loop_consts``, carry, xs to the outputs and the residuals still stacked) and per residual its hoisted
    value or None."""
    n_res = len(known.out_avals) - n_outs
    n_c = len(consts)
    nothing = (known, consts, [None] * n_res)
    if known.consts or any(isinstance(a, _state.AbstractRef) for a in known.in_avals[:n_c]):
        return nothing
    body_uk = [False] * n_c + [True] * (len(known.in_avals) - n_c)
    pre, pre_consts, body, out_uk, _ = _ad.partial_eval_jaxpr(known, body_uk, [True] * n_outs + [False] * n_res,
                                                              dce_known=False, residuals_last=True)
    if not pre.jaxpr.eqns:   # the consts pass through as they are: the body stays as it was
        return nothing
    with set_current_trace(trace.parent):
        outs = eval_jaxpr(pre.jaxpr, pre.consts, *pre_consts, *consts)
    is_hoisted = [not u for u in out_uk[n_outs:]]
    n_h = sum(is_hoisted)
    vals = iter(outs[:n_h])
    return body, list(outs[n_h:]), [next(vals) if h else None for h in is_hoisted]


def _forward_xs_residuals(known, n_outs, n_xs):
    """``known`` (the known scan body: outputs ``n_outs`` carry/ys, then residuals) without the residuals that
    are its own xs slices: stacking them would only copy ``xs``, so the unknown scan takes ``xs`` itself (JAX's
    scan partial evaluation forwards them too). Returns ``(known, fwd)``, ``fwd[r]`` the known-xs index that
    residual ``r`` is, or None for a residual the known scan still stacks."""
    j = known.jaxpr
    xs_in = {v: i for i, v in enumerate(j.invars[len(j.invars) - n_xs:])} if n_xs else {}
    fwd = [xs_in.get(v) if isinstance(v, Var) else None for v in j.outvars[n_outs:]]
    if known.consts or all(f is None for f in fwd):
        return known, [None] * len(fwd)
    keep = list(range(n_outs)) + [n_outs + r for r, f in enumerate(fwd) if f is None]
    return _permute(known, None, keep), fwd


def _forward_const_residuals(known, n_outs, n_consts, fwd):
    """``known`` without the residuals (those ``fwd`` leaves stacked) that are its own consts: loop-invariant,
    the unknown scan takes them as consts instead of stacking copies. Returns ``(known, cfwd)``, ``cfwd[r]``
    the known-const index that residual ``r`` is, or None."""
    j = known.jaxpr
    c_in = {v: i for i, v in enumerate(j.invars[:n_consts])}
    stacked = [r for r, f in enumerate(fwd) if f is None]   # residual r is output n_outs + its rank here
    cfwd = [None] * len(fwd)
    for k, r in enumerate(stacked):
        v = j.outvars[n_outs + k]
        if isinstance(v, Var):
            cfwd[r] = c_in.get(v)
    if known.consts or all(c is None for c in cfwd):
        return known, [None] * len(fwd)
    keep = list(range(n_outs)) + [n_outs + k for k, r in enumerate(stacked) if cfwd[r] is None]
    return _permute(known, None, keep), cfwd


def _instantiate_unknown(trace, x):
    """A known value made an unknown of ``trace`` (a carry forced unknown by the fixpoint)."""
    return trace.stage(_identity_p, [x], {})[0]


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, linear=None, unroll=1,
                    _split_transpose=False):
    nc, nk = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    c_lin = [_ad.is_undefined(c) for c in consts]
    # A carry that is known here (a zero tangent the loop made non-zero) is still transposed as linear;
    # its cotangent is dropped.
    k_known = [not _ad.is_undefined(c) for c in init]
    init = [_ad.UndefinedPrimal(get_aval(c)) if k else c for c, k in zip(init, k_known)]
    x_lin = [_ad.is_undefined(x) for x in xs]
    ct_carry, ct_ys = list(cts[:nk]), list(cts[nk:])
    y_nz = [not _ad.is_zero(c) for c in ct_ys]
    res_c = [c for c, l in zip(consts, c_lin) if not l]
    res_x = [x for x, l in zip(xs, x_lin) if not l]
    lin_c_avals = [c.aval for c, l in zip(consts, c_lin) if l]
    # the carry is typed by its cotangent (the body's carry output), as JAX's transpose types it: a weak init
    # (grad of a Python float) meeting a strong body result
    carry_avals = [a.update(weak_type=o.weak_type) if a.dtype == o.dtype and a.weak_type != o.weak_type else a
                   for a, o in zip((c.aval for c in init), jaxpr.out_avals[:nk])]
    x_avals = [get_aval(x) if not l else x.aval for x, l in zip(xs, x_lin)]
    x_slice = [a.update(shape=a.shape[1:]) for a in x_avals]
    y_avals = jaxpr.out_avals[nk:]
    n_rc, n_lc, n_yz = len(res_c), len(lin_c_avals), sum(y_nz)

    def body(*a):
        rc = list(a[:n_rc])
        acc = list(a[n_rc:n_rc + n_lc])
        ctk = list(a[n_rc + n_lc:n_rc + n_lc + nk])
        rest = list(a[n_rc + n_lc + nk:])
        cty_it = iter(rest[:n_yz])
        rx = iter(rest[n_yz:])
        rci = iter(rc)
        pargs = [_ad.UndefinedPrimal(av) if l else next(rci) for l, av in
                 zip(c_lin, [c.aval if _ad.is_undefined(c) else get_aval(c) for c in consts])]
        pargs += [_ad.UndefinedPrimal(av) for av in carry_avals]
        pargs += [_ad.UndefinedPrimal(av) if l else next(rx) for l, av in zip(x_lin, x_slice)]
        cty = [next(cty_it) if z else _ad.Zero(av) for z, av in zip(y_nz, y_avals)]
        # a linear const's cotangent starts from its accumulator (JAX adds each contribution where it arises)
        seeds = dict(zip([i for i, l in enumerate(c_lin) if l], acc))
        cts_in = _ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, pargs, ctk + cty, ct_init=seeds)
        ct_c = [c for c, l in zip(cts_in[:nc], c_lin) if l]
        ct_k = cts_in[nc:nc + nk]
        ct_x = [c for c, l in zip(cts_in[nc + nk:], x_lin) if l]
        new_acc = [_ad.instantiate_zeros(c) for c in ct_c]
        return (new_acc + [_ad.instantiate_zeros(c) for c in ct_k] + [_ad.instantiate_zeros(c) for c in ct_x])

    in_avals = ([get_aval(c) for c in res_c] + lin_c_avals + carry_avals
                + [a.update(shape=a.shape[1:]) for a, z in zip([get_aval(c) for c in ct_ys], y_nz) if z]
                + [a for a, l in zip(x_slice, x_lin) if not l])
    bj, bjc = trace_closed(body, in_avals)
    acc0 = [_zeros(a) for a in lin_c_avals]
    ct0 = [_ad.instantiate_zeros(c) for c in ct_carry]
    outs = scan_bind([*bjc, *res_c], [*acc0, *ct0], [*[c for c, z in zip(ct_ys, y_nz) if z], *res_x], bj, length,
                     not reverse, unroll)
    acc, ct_init, ct_xs = outs[:n_lc], outs[n_lc:n_lc + nk], outs[n_lc + nk:]
    ai, xi = iter(acc), iter(ct_xs)
    return ([next(ai) if l else None for l in c_lin] + [None if k else c for c, k in zip(ct_init, k_known)]
            + [next(xi) if l else None for l in x_lin])


def _scan_batch(vals, dims, jaxpr, length, reverse, num_consts, num_carry, linear=None, unroll=1,
                _split_transpose=False):
    nc, nk = num_consts, num_carry
    size = _batching.axis_size_of(vals, dims)
    consts = [v if d is None else _batching.moveaxis(v, d, 0) for v, d in zip(vals[:nc], dims[:nc])]
    init = [v if d is None else _batching.moveaxis(v, d, 0) for v, d in zip(vals[nc:nc + nk], dims[nc:nc + nk])]
    xs = [v if d is None else _batching.moveaxis(v, d, 1) for v, d in zip(vals[nc + nk:], dims[nc + nk:])]
    c_b = [d is not None for d in dims[:nc]]
    k_b = [d is not None for d in dims[nc:nc + nk]]
    x_b = [d is not None for d in dims[nc + nk:]]
    ny = len(jaxpr.out_avals) - nk
    while True:
        ob = batch_closed(jaxpr, size, c_b + k_b + x_b, k_b + [False] * ny)[2]
        new = [a or c for a, c in zip(k_b, ob[:nk])]
        if new == k_b:
            break
        k_b = new
    bj, bjc, ob = batch_closed(jaxpr, size, c_b + k_b + x_b, k_b + [False] * ny)
    init = [v if (d is not None or not b) else _batching.broadcast_batched(v, size, 0)
            for v, d, b in zip(init, dims[nc:nc + nk], k_b)]
    outs = scan_bind([*bjc, *consts], init, xs, bj, length, reverse, unroll)
    return outs, [0 if b else None for b in k_b] + [1 if b else None for b in ob[nk:]]


_ad.jvp_rules[scan_p] = _scan_jvp
_ad.pe_rules[scan_p] = _scan_partial_eval
_ad.transpose_rules[scan_p] = _scan_transpose
_batching.batching_rules[scan_p] = _scan_batch


# ----------------------------------------------------------------------------------------------- identity
# A staged copy: makes a known value an unknown of a partial-eval trace (linear: its transpose is the
# identity). Lowered inline (no core primitive).

def _identity_inline(eqn):
    v = Var(eqn.invars[0].aval)
    return Jaxpr([], [v], [v], []), eqn.invars


_identity_p = Primitive("pe_identity", multiple_results=True)
_identity_p.abstract_eval = lambda x: [x]
_identity_p.impl = lambda x: [x]
_identity_p.inline_jaxpr = staticmethod(_identity_inline)
_ad.jvp_rules[_identity_p] = lambda primals, tangents: (list(primals), list(tangents))
_ad.transpose_rules[_identity_p] = lambda cts, x: [cts[0]]
_batching.batching_rules[_identity_p] = lambda vals, dims: (list(vals), list(dims))


# ----------------------------------------------------------------------------------------------- jaxpr transforms

def batch_closed(closed, size, in_batched, force_out):
    """``batching.batch_jaxpr`` with flags: inputs where ``in_batched`` have a leading batch axis; returns
    ``(jaxpr, consts, out_batched)``."""
    j, consts, dims = _batching.batch_jaxpr(closed, size, [0 if b else None for b in in_batched], force_out,
                                            keep_call_consts=_pe.keeps_call_consts())
    return j, consts, [d is not None for d in dims]


# ----------------------------------------------------------------------------------------------- the lax API
# ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``: the functions are traced once to
# jaxprs (values they close over become leading operands); the core compiles them as real branches and loops.

_PY = (bool, int, float, complex)


def _trace_fun(fun, in_tree, in_avals, what, traced_for=None, dbg=None, refs=()):
    """Traces ``fun(*unflatten(in_tree, args))``. Returns ``(closed, consts, out_tree)``. ``traced_for``
    (``cond``, ``while_body``...) or a ready ``dbg``: what tracer errors say was traced. ``refs``: staged refs
    (make_jaxpr) the function closes over, taken as leading ``Ref{...}`` inputs, their tracers appended to
    the consts."""
    if dbg is not None and len(dbg.arg_names or ()) != len(in_avals) + len(refs):
        dbg = None   # given for the user's function, but a plumbing wrapper takes other inputs
    if dbg is None and traced_for is not None:
        dbg = body_debug(fun, traced_for, _positions(in_tree))
        if refs:
            dbg.arg_names = [""] * len(refs) + list(dbg.arg_names)
    store = {}

    def flat(*args):
        saved = [_state.bind_staged(r, w) for r, w in zip(refs, args)]
        try:
            out = fun(*tree_unflatten(in_tree, list(args[len(refs):])))
        finally:
            for r, sv in zip(refs, saved):
                _state.restore(r, sv)
        leaves, tree = tree_flatten(out)
        for v in leaves:
            _check_leaf(v, what)
        store["tree"] = tree
        return leaves
    closed, consts = trace_closed(flat, [r._ref_aval() for r in refs] + list(in_avals), dbg)
    consts = list(consts) + [r._val.tracer for r in refs]
    if refs:
        closed, consts = _consts_by_first_use(closed, consts)
    return closed, consts, store["tree"]


def _check_scan_out(out, leaves, dbg):
    """JAX's error for a scan body returning a non-array leaf: the function (``dbg``: the user's, for
    ``lax.map`` too), and the leaf's path in the ``(carry, y)`` output."""
    for v in leaves:
        try:
            get_aval(v)
        except TypeError:
            bad = next(p for p, leaf in tree_flatten_with_path(out)[0] if leaf is v)
            raise TypeError(f"function {dbg.func_src_info} traced for scan returned a value of type {type(v)} at "
                            f"output component {keystr(bad)}, which is not a valid JAX type") from None


def _check_leaf(v, what):
    try:
        get_aval(v)
    except TypeError:
        raise TypeError(f"{what} output must be a pytree of arrays, got a value of type {type(v).__name__}") \
            from None


def _tree_avals_text(tree, avals, other=None):
    """``(ShapedArray(float32[]), 'DIFFERENT ShapedArray(int32[]) vs. ShapedArray(float32[])')`` as JAX's
    ``_check_tree_and_avals`` prints a difference."""
    if other is None:
        items = [aval_text(a) for a in avals]
    else:
        items = [aval_text(a) if typematch(a, b) else f"DIFFERENT {aval_text(a)} vs. {aval_text(b)}"
                 for a, b in zip(avals, other)]
    t = tree_unflatten(tree, items)
    return str(t)


def _check_tree_and_avals(what, tree1, avals1, tree2, avals2):
    if tree1 != tree2:
        raise TypeError(f"{what} must have same type structure, got {tree1} and {tree2}.")
    if len(avals1) != len(avals2) or not all(typematch(a, b) for a, b in zip(avals1, avals2)):
        raise TypeError(f"{what} must have identical types, got\n{_tree_avals_text(tree1, avals1, avals2)}.")


def _as_value(x):
    """A leaf operand as something with an aval (Python scalars become weakly typed scalars)."""
    if isinstance(x, _PY):
        return typed_scalar(x, dtypes.dtype(x, canonicalize=True), True)
    if isinstance(x, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize_dtype(x.dtype)
        return np.asarray(x, dt)
    return x


# ----------------------------------------------------------------------------------------------- cond / switch

def _prune_forwarded(jaxprs, ops):
    """Outputs every branch forwards unchanged from the same operand are taken from the operand (JAX prunes
    them from the cond). Returns ``(jaxprs, forwards)`` with ``forwards[k]`` the operand index or None."""
    nout = len(jaxprs[0].out_avals)
    fwd = []
    for k in range(nout):
        src = None
        for j in jaxprs:
            v = j.jaxpr.outvars[k]
            idx = next((i for i, iv in enumerate(j.jaxpr.invars) if iv is v), None)
            if idx is None or (src is not None and idx != src):
                src = None
                break
            src = idx
        fwd.append(src)
    if all(f is None for f in fwd):
        return jaxprs, fwd
    keep = [k for k in range(nout) if fwd[k] is None]
    new = [ClosedJaxpr(Jaxpr([], j.jaxpr.invars, [j.jaxpr.outvars[k] for k in keep], j.jaxpr.eqns), [])
           for j in jaxprs]
    return new, fwd


def _bind_cond(index, branches, ops, ops_tree, what_outputs, out_names, traced_for="cond"):
    if _state.any_refs():
        # make_jaxpr staging refs: staged refs the branches close over are Ref{...} operands, as JAX prints them
        crefs = []
        for b in branches:
            for r in _state.staged_closure_refs(b):
                if not any(r is c for c in crefs):
                    crefs.append(r)
        if crefs:
            return _state.stage_nested(lambda: _bind_cond_flat(index, branches, ops, ops_tree, what_outputs,
                                                               out_names, traced_for, crefs))
    if _state.any_refs():   # array references the branches reach become extra operands and outputs
        return _state.plumb_cond(lambda bs, ops2, tree2: _bind_cond_flat(index, bs, ops2, tree2, what_outputs,
                                                                          out_names, traced_for),
                                 branches, ops, ops_tree)
    return _bind_cond_flat(index, branches, ops, ops_tree, what_outputs, out_names, traced_for)


def _bind_cond_flat(index, branches, ops, ops_tree, what_outputs, out_names, traced_for="cond", refs=()):
    ops_avals = [get_aval(o) for o in ops]
    traced = [_trace_fun(b, ops_tree, ops_avals, n, traced_for, refs=refs) for b, n in zip(branches, out_names)]
    out_tree0, avals0 = traced[0][2], traced[0][0].out_avals
    for k, (closed, _, tree) in enumerate(traced[1:], 1):
        _check_tree_and_avals(what_outputs(k), out_tree0, avals0, tree, closed.out_avals)
    jaxprs, consts = join_consts([(c, cs) for c, cs, _ in traced])
    jaxprs, fwd = _prune_forwarded(jaxprs, consts + list(ops))
    allops = consts + list(ops)
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    it = iter(outs)
    res = [_as_array(allops[f]) if f is not None else next(it) for f in fwd]
    return tree_unflatten(out_tree0, res)


def _as_array(x):
    """A forwarded operand as the API returns values: tracers and Arrays as they are, host values as Arrays."""
    if isinstance(x, Tracer) or hasattr(x, "_buf"):
        return x
    return _from_host(x)


_NO_OPERAND = object()   # ``operand=None`` passes None (optax does), so absence needs its own sentinel


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND, linear=None):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; only the taken branch runs.
    ``pred`` is a boolean (or integer) scalar. The legacy five-argument form ``cond(pred, true_operand,
    true_fun, false_operand, false_fun)`` is accepted too. Mirrors ``jax.lax.cond``."""
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError(f"if 'operand' keyword is passed then no positional operands can be passed, got "
                            f"operand={operand!r} and positional operands {operands!r}")
        operands = (operand,)
    if not (callable(true_fun) and callable(false_fun)):
        # JAX's legacy form cond(pred, true_operand, true_fun, false_operand, false_fun), still accepted.
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, operands[0], operands[1]
            return cond(pred, lambda x: f_true(x[0]), lambda x: f_false(x[1]), (x_true, x_false))
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if isinstance(pred, (list, tuple, dict)):
        raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
    if config.jax_disable_jit and _is_concrete(pred):
        return true_fun(*operands) if pred else false_fun(*operands)
    pred = _as_value(pred)
    pav = get_aval(pred)
    if pav.shape != ():
        raise TypeError(f"Pred must be a scalar, got {_short(pred)} of shape {pav.shape}.")
    if pav.dtype != np.bool_:
        if pav.dtype.kind in "iu":
            pred = _ew.ne(pred, _ew._coerce(0, pav.dtype))
        else:
            raise TypeError(f"Pred type must be either boolean or number, got {pav.dtype.name}.")
    index = _ew.convert_element_type(pred, np.int32)
    ops, ops_tree = tree_flatten(operands)
    ops = [_as_value(o) for o in ops]
    return _bind_cond(index, (false_fun, true_fun), ops, ops_tree,
                      lambda k: "true_fun and false_fun output", ("false_fun", "true_fun"))


def _is_concrete(x):
    """True for a value that is not traced (or a tracer holding a concrete value: jvp/vmap of one)."""
    return not isinstance(x, Tracer) or x._concrete() is not None


def _short(x):
    try:
        return repr(x)
    except Exception:
        return type(x).__name__


def switch(index, branches, *operands, operand=None):
    """``branches[index](*operands)`` with ``index`` clamped into range; only that branch runs. Mirrors
    ``jax.lax.switch``."""
    if operand is not None:
        operands = operands + (operand,)
    branches = tuple(branches)
    if len(branches) == 0:
        raise ValueError("Empty branch sequence")
    for b in branches:
        if not callable(b):
            raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    index = _as_value(index)
    iav = get_aval(index)
    if iav.shape != ():
        raise TypeError(f"Branch index must be scalar, got {_short(index)} of shape {iav.shape}.")
    if iav.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {_short(index)}.")
    if len(branches) == 1:
        return branches[0](*operands)
    index = _ew.convert_element_type(index, np.int32)
    index = _ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.jax_disable_jit and _is_concrete(index):
        return branches[int(index)](*operands)
    ops, ops_tree = tree_flatten(operands)
    ops = [_as_value(o) for o in ops]
    return _bind_cond(index, branches, ops, ops_tree, lambda k: f"branch 0 and {k} outputs",
                      [f"branch {i}" for i in range(len(branches))], "switch")


# ----------------------------------------------------------------------------------------------- loops

def _carry_diff_text(name, in_tree, in_avals, out_tree, out_avals, fun=None, init=None):
    """JAX's ``_check_carry_type`` message for a loop body whose carry output differs from its input in
    pytree structure or in a leaf's type, or None when they agree."""
    if in_tree != out_tree:
        try:
            diffs = [f"{_carry_component(fun, p)} is a {a} but the corresponding component of the carry output "
                     f"is a {b}, so {why}" for p, a, b, why in
                     equality_errors((), tree_unflatten(in_tree, list(in_avals)),
                                     tree_unflatten(out_tree, list(out_avals)))]
        except Exception:   # a tree that will not unflatten: print both structures, as JAX
            diffs = []
        if not diffs:
            differences = (f"the input tree structure is:\n{in_tree}\nthe output tree structure is:\n{out_tree}\n")
        else:
            differences = _listed(diffs)
        return (f"{name} function carry input and carry output must have the same pytree structure, but they "
                f"differ:\n\n{differences}\nRevise the function so that the carry output has the same pytree "
                "structure as the carry input.")
    diffs = []
    paths = _carry_paths(init, len(in_avals))
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if typematch(a, b):
            continue
        why = [w for w, bad in (("the dtypes do not match", a.dtype != b.dtype),
                                ("the shapes do not match", a.shape != b.shape)) if bad]
        extra = ", so " + (why[0] if len(why) == 1 else ", ".join(why[:-1]) + ", and " + why[-1]) if why else ""
        diffs.append(f"{_carry_component(fun, paths[k])} has type {a.str_short(short_dtypes=False)} but the "
                     f"corresponding output carry component has type {b.str_short(short_dtypes=False)}{extra}")
    if not diffs:
        return None
    return (f"{name} function carry input and carry output must have equal types, but they differ:\n\n"
            f"{_listed(diffs)}\nRevise the function so that all output types match the corresponding input types.")


def _listed(diffs):
    """JAX's layout of differences: one as a sentence, several as a list."""
    if len(diffs) == 1:
        return diffs[0][0].upper() + diffs[0][1:] + ".\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _carry_paths(init, n):
    """The key path of each of the ``n`` carry leaves of ``init`` (``()`` each when unknown)."""
    if init is None:
        return [()] * n
    leaves = tree_flatten_with_path(init)[0]
    return [p for p, _ in leaves] if len(leaves) == n else [()] * n


def _carry_component(fun, path):
    """``the input carry component c[0]``: the body's first parameter name and the leaf's key path, as JAX."""
    try:
        carry_name = next(iter(inspect.signature(fun).parameters)) if fun is not None else None
    except (ValueError, TypeError, StopIteration):
        carry_name = None
    if carry_name:
        return f"the input carry component {carry_name}{keystr(path)}" if path else f"the input carry {carry_name}"
    return f"the input carry at path {keystr(path)}" if path else "the input carry"


def _promote_weak(vals, in_avals, out_avals):
    """Weakly typed initial values whose type the body changes are converted to the body's output type
    (JAX's ``_promote_weak_typed_inputs``). Returns ``(vals, changed)``."""
    if len(vals) != len(in_avals) or len(in_avals) != len(out_avals):
        return vals, False
    changed = False
    out = list(vals)
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and not typematch(a, b):
            out[i] = _ew.convert_element_type(vals[i], dtypes.result_type(a, b))
            changed = True
    return out, changed


def while_loop(cond_fun, body_fun, init_val):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``, compiled as a real loop. Mirrors
    ``jax.lax.while_loop`` (not reverse-differentiable)."""
    if _state.any_refs():   # array references the functions reach become extra carries
        # (make_jaxpr staging refs: functions closing over a staged ref take it as a Ref{...} const, as JAX)
        crefs = [_state.staged_closure_refs(f) for f in (cond_fun, body_fun)]
        if crefs[0] or crefs[1]:
            return _state.stage_nested(lambda: _while_loop(cond_fun, body_fun, init_val, refs=crefs))
        return _state.plumb_while(_while_loop, cond_fun, body_fun, init_val)
    return _while_loop(cond_fun, body_fun, init_val)


def _while_loop(cond_fun, body_fun, init_val, body_dbg=None, refs=((), ())):
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    if config.jax_disable_jit:
        # As JAX: a Python loop; when the predicate is traced (e.g. under vmap) the primitive runs instead.
        try:
            val = tree_map(_as_array_value, init_val)
            while cond_fun(val):
                val = tree_map(_as_array_value, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass
    init_vals, in_tree = tree_flatten((init_val,))
    init_vals = [_as_value(v) for v in init_vals]
    for _ in range(3):
        init_avals = [get_aval(v) for v in init_vals]
        cond_j, cond_consts, cond_tree = _trace_fun(cond_fun, in_tree, init_avals, "cond_fun", "while_cond",
                                                    refs=refs[0])
        body_j, body_consts, body_tree = _trace_fun(body_fun, in_tree, init_avals, "body_fun", "while_body",
                                                    body_dbg, refs=refs[1])
        if not treedef_is_leaf(cond_tree) or len(cond_j.out_avals) != 1:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
        pa = cond_j.out_avals[0]
        if pa.shape != () or pa.dtype != np.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) [{aval_text(pa)}].")
        init_vals, changed = _promote_weak(init_vals, init_avals, body_j.out_avals)
        if not changed:
            break
    body_out_tree = body_tree
    in_carry_tree = tree_flatten(init_val)[1]
    msg = _carry_diff_text("while_loop body", in_carry_tree, init_avals, body_out_tree, body_j.out_avals,
                           body_fun, init_val)
    if msg is not None:
        raise TypeError(msg)
    outs = while_p.bind(*cond_consts, *body_consts, *init_vals, cond_jaxpr=cond_j, body_jaxpr=body_j,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_unflatten(in_carry_tree, outs)


def _as_array_value(x):
    return _as_array(_as_value(x))


def _fori_while_cond(carry):
    i, upper, _ = carry
    return _ew.lt(i, upper)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``. With concrete bounds it is a
    ``scan`` (reverse-differentiable), otherwise a ``while_loop``. Mirrors ``jax.lax.fori_loop``."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    given_lower = lower
    lower, upper = _as_value(lower), _as_value(upper)
    ld, ud = get_aval(lower).dtype, get_aval(upper).dtype
    if ld != ud:
        dt = dtypes.promote_types(ld, ud)
        lower = _ew.convert_element_type(lower, dt)
        upper = _ew.convert_element_type(upper, dt)
    lo_c, up_c = _concrete_int(lower), _concrete_int(upper)
    if lo_c is not None and up_c is not None:
        length = max(up_c - lo_c, 0)
        if config.jax_disable_jit:
            # As JAX's Python-loop scan: ``i`` starts as the given ``lower`` (a Python int stays one).
            i, val = given_lower if ld == ud else lower, init_val
            for _ in range(length):
                val = body_fun(i, val)
                i = i + 1
            return val

        def scanned(loop_carry, _):   # the parameter names JAX's carry-type errors print
            i, x = loop_carry
            return (_ew.add(i, _ew._coerce(1, get_aval(i).dtype)), body_fun(i, x)), None
        unroll_n = 1 if unroll is None else unroll
        crefs = _state.staged_closure_refs(body_fun) if _state.any_refs() else []
        if crefs:   # make_jaxpr staging refs: the staged refs body_fun closes over are Ref{...} consts (as JAX)
            dbg = body_debug(body_fun, "fori_loop", (0, _positions(tree_flatten(init_val)[1])))
            dbg.arg_names = [""] * len(crefs) + list(dbg.arg_names)
            (_, result), _ = _state.stage_nested(lambda: _scan(scanned, (lower, init_val), None, length, False,
                                                               unroll_n, "scan body", dbg, refs=crefs))
            return result
        if _state.any_refs():   # array references the body reaches become extra carries
            dbg = body_debug(body_fun, "fori_loop", (0, _positions(tree_flatten(init_val)[1])))
            (_, result), _ = _state.plumb_scan(
                lambda body, init2: _scan(body, init2, None, length, False, unroll_n, "scan body", dbg),
                scanned, (lower, init_val),
                _state.LoopNames(body_fun, "fori_loop", "scan", lambda out: out[0], "result[0]", argpos=1, skip=1,
                                 carry_base="loop_carry"))
            return result
        # tracer errors name the user's body_fun, traced for fori_loop, and its arguments (i, then the carry)
        dbg = body_debug(body_fun, "fori_loop", (0, _positions(tree_flatten(init_val)[1])))
        (_, result), _ = _scan(scanned, (lower, init_val), None, length, False, unroll_n, "scan body", dbg)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")

    def body(loop_carry):
        i, up, x = loop_carry
        return _ew.add(i, _ew._coerce(1, get_aval(i).dtype)), up, body_fun(i, x)
    dbg = body_debug(body_fun, "fori_loop", (0, _positions(tree_flatten(init_val)[1])))
    dbg.arg_names = dbg.arg_names[:1] + ["upper"] + dbg.arg_names[1:]   # the carried bound body_fun never sees
    crefs = _state.staged_closure_refs(body_fun) if _state.any_refs() else []
    if crefs:   # make_jaxpr staging refs: as while_loop, the staged refs body_fun closes over are Ref{...} consts
        _, _, result = _state.stage_nested(lambda: _while_loop(_fori_while_cond, body, (lower, upper, init_val),
                                                               dbg, refs=((), crefs)))
        return result
    if _state.any_refs():   # as while_loop, with a ref carried in init_val named as JAX's fori_loop names it
        _, _, result = _state.plumb_while(
            lambda c, b, i: _while_loop(c, b, i, dbg), _fori_while_cond, body, (lower, upper, init_val),
            _state.LoopNames(body_fun, "fori_loop", "while_loop", lambda out: out, "result", argpos=1, skip=2,
                             carry_base="loop_carry"))
        return result
    _, _, result = _while_loop(_fori_while_cond, body, (lower, upper, init_val), dbg)
    return result


def _concrete_int(x):
    if _pe.made_while_staging(x):
        return None   # a tracer in JAX
    if isinstance(x, Tracer):
        c = x._concrete()
        if c is None:
            return None
        x = c
    if isinstance(x, TypedScalar):
        x = x.val
    try:
        return int(np.asarray(x))
    except (TypeError, ValueError):
        return None


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """``carry, ys = scan(f, init, xs)``: ``carry, y = f(carry, x)`` over the leading axis of ``xs``, with
    the ys stacked. Compiled as one loop (``unroll`` is accepted and ignored). Mirrors ``jax.lax.scan``."""
    if _state.any_refs():   # array references the body reaches become extra carries
        # (make_jaxpr staging refs: a body closing over a staged ref takes it as a Ref{...} const, as JAX)
        crefs = _state.staged_closure_refs(f)
        if crefs:
            return _state.stage_nested(lambda: _scan(f, init, xs, length, reverse, unroll, "scan body",
                                                     refs=crefs))
        return _state.plumb_scan(lambda body, init2: _scan(body, init2, xs, length, reverse, unroll, "scan body"),
                                 f, init)
    return _scan(f, init, xs, length, reverse, unroll, "scan body")


# ``[scan(f, init, xs, length, reverse, unroll)]`` once ``jax.experimental.hijax`` is imported: a scan whose
# carries hold hi-typed values (a user's hi-type: ``core.hi_avals``), run on their lo arrays
hi_scan = []


def _scan(f, init, xs, length, reverse, unroll, what, dbg=None, refs=()):
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    if _hi_avals and hi_scan and not refs and any(
            _is_hi(getattr(v, "aval", None)) or type(v) in _hi_avals for v in tree_flatten(init)[0]):
        return hi_scan[0](f, init, xs, length, reverse, unroll)
    xs_flat, xs_tree = tree_flatten(xs)
    xs_flat = [_as_value(x) for x in xs_flat]
    lengths = []
    for x in xs_flat:
        av = get_aval(x)
        if av.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {aval_text(av)}.")
        lengths.append(av.shape[0])
    if length is not None:
        try:
            length = int(length)
        except (TypeError, ValueError):
            raise TypeError(f"scan got `length` argument of {length!r} which is not a concrete integer") \
                from None
        if any(n != length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{lengths}.")
    else:
        if not lengths:
            raise ValueError("scan got no values to scan over and `length` not provided.")
        if len(set(lengths)) != 1:
            raise ValueError(f"scan got values with different leading axis sizes: "
                             f"{', '.join(str(n) for n in lengths)}.")
        length = lengths[0]
    if config.jax_disable_jit:
        return _scan_python(f, init, xs_flat, xs_tree, length, reverse)
    x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs_flat]
    init_flat, init_tree = tree_flatten(init)
    given_init = list(init_flat)   # a carry the body forwards comes back as given (a Python float stays one)
    init_flat = [_as_value(v) for v in init_flat]
    nk = len(init_flat)
    for _ in range(3):
        carry_avals = [get_aval(v) for v in init_flat]
        store = {}

        def flat(*args):
            # staged refs the body closes over come first: bound to the body's Ref{...} inputs while it runs
            saved = [_state.bind_staged(r, w) for r, w in zip(refs, args)]
            args = args[len(refs):]
            carry = tree_unflatten(init_tree, list(args[:nk]))
            x = tree_unflatten(xs_tree, list(args[nk:]))
            try:
                out = f(carry, x)
            finally:
                for r, sv in zip(refs, saved):
                    _state.restore(r, sv)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"scan body output must be a pair, got {type(out).__name__}.")
            c, y = out
            c_leaves, c_tree = tree_flatten(c)
            y_leaves, y_tree = tree_flatten(y)
            _check_scan_out(out, c_leaves + y_leaves, dbg)
            store.update(c_tree=c_tree, y_tree=y_tree, nc=len(c_leaves))
            return c_leaves + y_leaves
        if dbg is not None and len(dbg.arg_names or ()) != len(refs) + nk + len(x_avals):
            dbg = None   # given for the user's function, but a plumbing wrapper takes other inputs
        if dbg is None:
            dbg = body_debug(f, "scan", (_positions(init_tree), _positions(xs_tree)))
            if refs:
                dbg.arg_names = [""] * len(refs) + list(dbg.arg_names)
        closed, consts = trace_closed(flat, [r._ref_aval() for r in refs] + carry_avals + x_avals, dbg)
        consts = list(consts) + [r._val.tracer for r in refs]   # the jaxpr's invars: hoisted consts, refs, ...
        if refs:
            closed, consts = _consts_by_first_use(closed, consts)
        c_out = closed.out_avals[:store["nc"]]
        init_flat, changed = _promote_weak(init_flat, carry_avals, c_out)
        if not changed:
            break
    if _hi_avals and hi_scan and not refs and any(_is_hi(a) for a in closed.out_avals):
        return hi_scan[0](f, init, xs, length, reverse, unroll)   # hi-typed ys (or carries)
    msg = _carry_diff_text(what, init_tree, carry_avals, store["c_tree"], c_out, f, init)
    if msg is not None:
        raise TypeError(msg)
    outs = _scan_forwarding(consts, init_flat, xs_flat, closed, length, bool(reverse), unroll, given_init)
    carry = tree_unflatten(init_tree, outs[:nk])
    ys = tree_unflatten(store["y_tree"], outs[nk:])
    return carry, ys


def _forwarded(x):
    """A forwarded ``xs`` as scan's output: host arrays become cranax arrays (JAX's ``_maybe_put``)."""
    return _from_host(x) if isinstance(x, np.ndarray) else x


def _scan_forwarding(consts, init, xs, closed, length, reverse, unroll, given_init=None):
    """``scan_bind`` with JAX's two forwardings (``jax.lax.scan`` does them before binding): a carry the body
    returns unchanged becomes a const (its output is the initial value), and a ``ys`` output that is an
    ``xs`` input unchanged is pruned and taken from ``xs``. Returns all carries then all ys, as unpruned."""
    j = closed.jaxpr
    nc, nk = len(consts), len(init)
    pos = {id(v): i for i, v in enumerate(j.invars)}
    fwd = [pos.get(id(v)) if isinstance(v, Var) else None for v in j.outvars]
    move = [fwd[i] == nc + i for i in range(nk)]
    ext = [f - nc - nk if f is not None and f >= nc + nk else None for f in fwd[nk:]]
    if not any(move) and all(e is None for e in ext):
        return scan_bind(consts, init, xs, closed, length, reverse, unroll)
    moved = [k for k in range(nk) if move[k]]
    kept = [k for k in range(nk) if not move[k]]
    ins = ([j.invars[nc + k] for k in moved] + list(j.invars[:nc]) + [j.invars[nc + k] for k in kept]
           + list(j.invars[nc + nk:]))
    outs = [j.outvars[k] for k in kept] + [v for v, e in zip(j.outvars[nk:], ext) if e is None]
    pruned = ClosedJaxpr(Jaxpr([], ins, outs, j.eqns), [])
    res = scan_bind([init[k] for k in moved] + list(consts), [init[k] for k in kept], xs, pruned, length,
                    reverse, unroll)
    it = iter(res)
    carry = {k: next(it) for k in kept}
    ys = [next(it) if e is None else _forwarded(xs[e]) for e in ext]
    given = given_init if given_init is not None and len(given_init) == nk else init
    return [given[k] if move[k] else carry[k] for k in range(nk)] + ys


def _scan_python(f, init, xs_flat, xs_tree, length, reverse):
    """``scan`` under ``disable_jit``: a Python loop over the slices, the ys stacked at the end (as JAX)."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because the output type is "
                         "unknown.")
    carry, ys = init, []
    steps = reversed(range(length)) if reverse else range(length)
    for i in steps:
        x = tree_unflatten(xs_tree, [_st.squeeze(_st._slice_axis(v, 0, i, i + 1), (0,)) for v in xs_flat])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_map(lambda *vs: _lib.concatenate([_st.expand_dims(_as_value(v), (0,)) for v in vs], 0), *ys)
    return carry, stacked


def _map_body(f):
    """``lax.map``'s scan body for the plumbing path: errors name ``f`` (its name, file and line) and its
    parameter for the mapped slice."""
    body = functools.wraps(f)(lambda c, x: (c, f(x)))
    try:
        pname = next(iter(inspect.signature(f).parameters))
    except (StopIteration, TypeError, ValueError):
        pname = "x"
    P = inspect.Parameter
    body.__signature__ = inspect.Signature([P("carry", P.POSITIONAL_OR_KEYWORD), P(pname, P.POSITIONAL_OR_KEYWORD)])
    return body


def map(f, xs, *, batch_size=None):
    """``f`` applied to each slice of ``xs`` along its leading axis, results stacked (a ``scan``). Mirrors
    ``jax.lax.map``."""
    if batch_size is not None:
        from .. import api_vmap  # why: vmap is the API above the primitives; only batch_size= needs it
        leaves, tree = tree_flatten(xs)
        n = get_aval(leaves[0]).shape[0]
        if n % batch_size == 0:
            resh = [x.reshape((n // batch_size, batch_size) + tuple(get_aval(x).shape[1:])) for x in leaves]
            _, ys = scan(lambda c, x: (c, api_vmap.vmap(f)(x)), (), tree_unflatten(tree, resh))
            return tree_map(lambda y: y.reshape((n,) + tuple(get_aval(y).shape[2:])), ys)
    if _state.any_refs():   # (refs plumbed as scan does; the wrapper still reports the user's f)
        _, ys = scan(_map_body(f) if callable(f) else f, (), xs)
        return ys
    # tracer and output errors name the user's f (its file and line, its argument), not this wrapper
    dbg = body_debug(f, "scan", (_positions(tree_flatten(xs)[1]),)) if callable(f) else None
    _, ys = _scan(lambda c, x: (c, f(x)), (), xs, None, False, 1, "scan body", dbg)
    return ys




# ----------------------------------------------------------------------------------------------- nested consts

def _scan_hoist_rule(params):
    j, consts = _jit.const_free(params["jaxpr"])
    k = len(consts)
    new = dict(params, jaxpr=j, num_consts=params["num_consts"] + k)
    if params.get("linear") is not None:
        new["linear"] = (False,) * k + tuple(params["linear"])
    return new, [(0, consts)]


def _while_hoist_rule(params):
    cj, cc = _jit.const_free(params["cond_jaxpr"])
    bj, bc = _jit.const_free(params["body_jaxpr"])
    new = dict(params, cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=params["cond_nconsts"] + len(cc),
               body_nconsts=params["body_nconsts"] + len(bc))
    return new, [(0, cc), (params["cond_nconsts"], bc)]


def _cond_hoist_rule(params):
    pairs = [_jit.const_free(b) for b in params["branches"]]
    everything = [c for _, cs in pairs for c in cs]
    branches, lo = [], 0
    for j, cs in pairs:
        # every branch takes all branches' consts; its own are its leading inputs, the others' unused
        inner = j.jaxpr
        own, rest = inner.invars[:len(cs)], inner.invars[len(cs):]
        before = [Var(get_aval(c)) for c in everything[:lo]]
        after = [Var(get_aval(c)) for c in everything[lo + len(cs):]]
        new = Jaxpr([], before + list(own) + after + list(rest), list(inner.outvars), list(inner.eqns))
        new.debug_info = getattr(inner, "debug_info", None)
        branches.append(ClosedJaxpr(new, []))
        lo += len(cs)
    return dict(params, branches=tuple(branches)), [(1, everything)]


_jit.nested_hoist_rules[scan_p] = _scan_hoist_rule
_jit.nested_hoist_rules[while_p] = _while_hoist_rule
_jit.nested_hoist_rules[cond_p] = _cond_hoist_rule
