"""Rematerialization: ``checkpoint`` (``remat``), ``remat_p`` with all of its rules, ``checkpoint_name``
(``name_p``) and the ``checkpoint_policies``. Mirrors ``jax.checkpoint`` / ``jax.ad_checkpoint``.

``remat2 *args [jaxpr differentiated policy prevent_cse]`` (JAX's name and params): ``jaxpr`` a ClosedJaxpr
without consts (closed-over values are leading operands), ``policy`` None or a function
``policy(prim, *in_avals, **params) -> bool | Saveable | Recompute | Offloadable`` saying whether an
equation's outputs may be kept as residuals for the backward pass, ``prevent_cse`` a bool or one bool per
operand, ``differentiated`` True once partial evaluation has split it.

* eval runs the body op by op (as JAX's ``remat_impl``); lowering inlines the body;
* jvp is a ``remat2`` of the body's jvp; batching a ``remat2`` of the batched body;
* partial evaluation (linearize, grad) is policy-driven: the known equations run outside, the residuals
  kept are the known inputs plus the outputs of the equations the policy calls saveable, and every other
  known value the tangent part needs is recomputed inside a ``differentiated=True`` ``remat2``;
* transposition is a ``remat2`` of the transposed body, so the recomputation happens in the backward pass.

``prevent_cse`` is printed as JAX prints it and enforced as JAX's lowering does: a differentiated ``remat2``
(the recomputation in the backward pass) is inlined behind an ``optimization_barrier`` on its inputs, so the
core's CSE does not merge the recomputed values with the forward pass's and the saved residuals (hence the
peak memory) under ``jit`` follow the policy as they do eagerly.
"""
import collections
import dataclasses
import functools
import inspect
import os
import sys
import threading
import types
import weakref

import numpy as np

from ..core import Primitive, Tracer, get_aval, set_current_trace
from ..interpreters import ad, batching, partial_eval
from ..interpreters.eval import eval_jaxpr
from ..interpreters.partial_eval import debug_info, trace_to_jaxpr
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from .._pytree import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_structure, tree_unflatten
from .. import dtypes
from ..config import config
from . import lax_composites as _lc
from .library import dot_general_p

__all__ = ["checkpoint", "remat", "remat_p", "name_p", "checkpoint_name", "checkpoint_policies",
           "Saveable", "Recompute", "Offloadable", "everything_saveable", "nothing_saveable", "saved_residuals",
           "print_saved_residuals"]


# ----------------------------------------------------------------------------------------------- policies

class SaveableType:
    """A policy's answer: keep this value as a residual."""


class RecomputeType:
    """A policy's answer: recompute this value in the backward pass."""


Saveable = SaveableType()
Recompute = RecomputeType()


@dataclasses.dataclass(frozen=True)
class Offloadable:
    """A policy's answer: keep this value, in memory space ``dst`` (cranax keeps it where it is)."""

    src: str
    dst: str


def everything_saveable(*_, **__) -> bool:
    """Keep every residual, as if ``checkpoint`` were not used."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Keep only the checkpointed function's inputs; recompute everything else (``checkpoint``'s default)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Keep the outputs of matrix products (only those without batch dimensions if
    ``only_if_no_batch_dims``)."""

    only_if_no_batch_dims: bool

    def __call__(self, prim, *args, **params):
        if self.only_if_no_batch_dims:
            if prim is dot_general_p:
                (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
                return not lhs_b and not rhs_b
            return False
        return prim is dot_general_p or prim.name in ("conv_general_dilated", "scaled_matmul_wrapper")


dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    saveable_names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names_which_can_be_saved):
    """Keep only the values named (``checkpoint_name``) with one of these names."""
    return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save):
    """Keep only named values, except those with these names."""
    return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_anything_except_these_names(*names_not_to_save):
    """JAX 0.10.2's policy of this name keeps every value (it ignores the names); cranax does the same."""
    return lambda *_, **__: True


def save_from_both_policies(policy_1, policy_2):
    """A value is kept if either policy keeps it (both must answer with a bool)."""
    def policy(prim, *args, **params):
        out1 = policy_1(prim, *args, **params)
        out2 = policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                "The return value of the policies should be a boolean. Got:"
                f" {out1} and {out2}. Please write a custom policy function directly,"
                " rather than using this helper function.")
        return out1 or out2
    return policy


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Keep products without batch dimensions (JAX offloads them to ``offload_dst``; cranax keeps them)."""
    def policy(prim, *_, **params):
        if prim is dot_general_p:
            (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
            if not lhs_b and not rhs_b:
                return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    """Keep values with the first names; "offload" (cranax: keep) those with the second."""
    names_which_can_be_saved = set(names_which_can_be_saved)
    names_which_can_be_offloaded = set(names_which_can_be_offloaded)
    both = names_which_can_be_saved & names_which_can_be_offloaded
    if both:
        raise ValueError(
            "The names should be exclusive and should not intersect in"
            " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
            f" names_which_can_be_saved={names_which_can_be_saved},"
            f" names_which_can_be_offloaded={names_which_can_be_offloaded} and the"
            f" intersection={both}")

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in names_which_can_be_saved:
            return Saveable
        if prim is name_p and params["name"] in names_which_can_be_offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


def _saveable(policy, eqn):
    if policy is None:
        return False
    out = policy(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params)
    if out is Recompute:
        return False
    return out is Saveable or isinstance(out, Offloadable) or bool(out)


# ----------------------------------------------------------------------------------------------- name_p

name_p = Primitive("name")
name_p.impl = lambda x, *, name: x
name_p.abstract_eval = lambda x, *, name: x


def _name_inline(eqn):
    v = Var(eqn.invars[0].aval)
    return Jaxpr([], [v], [v], []), eqn.invars


name_p.inline_jaxpr = staticmethod(_name_inline)
# The tangent passes through unnamed, as in JAX: only primal values carry names for the policies.
ad.jvp_rules[name_p] = lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name), tangents[0])
batching.batching_rules[name_p] = lambda vals, dims, *, name: (name_p.bind(vals[0], name=name), dims[0])


def checkpoint_name(x, name):
    """Names every leaf of ``x`` (identity on values) so that a ``checkpoint`` policy can refer to it
    (``save_only_these_names(name)``...). Mirrors ``jax.ad_checkpoint.checkpoint_name``."""
    return tree_map(lambda v: name_p.bind(v, name=name), x)


# ----------------------------------------------------------------------------------------------- remat_p

class _PolicyText:
    """Prints a policy as JAX does: its repr (``None``, ``<function nothing_saveable at 0x...>``)."""

    __slots__ = ("policy",)

    def __init__(self, policy):
        self.policy = policy

    def __str__(self):
        return repr(self.policy)   # the printer masks the address, as JAX's does


class RematPrimitive(Primitive):
    def __init__(self):
        super().__init__("remat2", multiple_results=True)
        self.abstract_eval = lambda *avals, jaxpr, prevent_cse, differentiated, policy: list(jaxpr.out_avals)
        self.impl = self._impl

    @staticmethod
    def _impl(*args, jaxpr, prevent_cse, differentiated, policy):
        return [ad.instantiate_array(o) for o in eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)]

    @staticmethod
    def pp_params(eqn):
        p = eqn.params
        return [("differentiated", p["differentiated"]), ("jaxpr", p["jaxpr"]), ("policy", _PolicyText(p["policy"])),
                ("prevent_cse", p["prevent_cse"])]

    @staticmethod
    def inline_jaxpr(eqn):
        p = eqn.params
        if not p["differentiated"] or not p["prevent_cse"]:
            return p["jaxpr"], eqn.invars
        return _barriered(p["jaxpr"], p["prevent_cse"]), eqn.invars


remat_p = RematPrimitive()

# The core's ``optimization_barrier`` (``lax_composites``): in the lowered form of a differentiated ``remat2``
# it keeps the recomputation from being merged with the forward pass's values.
_barrier_p = _lc.optimization_barrier_p
_barriered_cache = weakref.WeakKeyDictionary()


def _barriered(closed, prevent_cse):
    """``closed``'s body with an ``optimization_barrier`` over its inputs (those whose ``prevent_cse`` flag is
    set; complex ones, which the core holds as pairs of reals, pass beside it), as JAX lowers a
    differentiated ``remat2``: the recomputed forward values are not CSE'd with the forward pass's own, and
    the recomputation runs where the equation stands, in the backward pass."""
    key = prevent_cse
    per = _barriered_cache.setdefault(closed, {})
    hit = per.get(key)
    if hit is not None:
        return hit
    body = closed.jaxpr
    n = len(body.invars)
    flags = tuple(prevent_cse[:n]) + (True,) * (n - len(prevent_cse)) if isinstance(prevent_cse, tuple) else (True,) * n
    through = [f and v.aval.dtype.kind != "c" for v, f in zip(body.invars, flags)]
    if not any(through):
        per[key] = closed
        return closed
    # The barrier's outputs are the body's own input variables: the body's equations are reused unchanged.
    new = [Var(v.aval) if t else v for v, t in zip(body.invars, through)]
    barrier = JaxprEqn([n for n, t in zip(new, through) if t], [v for v, t in zip(body.invars, through) if t],
                       _barrier_p, {})
    out = Jaxpr([], new, list(body.outvars), [barrier] + list(body.eqns))
    per[key] = out
    return out


def _cse(prevent_cse, lead=0, keep=None, tail=0):
    """``prevent_cse`` for a derived call: per-operand flags (when a tuple) with ``lead`` new leading operands
    (closed-over values: False), the operands where ``keep`` is true, and ``tail`` new trailing operands
    (tangents/cotangents: True)."""
    if not isinstance(prevent_cse, tuple):
        return prevent_cse
    kept = prevent_cse if keep is None else tuple(p for p, k in zip(prevent_cse, keep) if k)
    return (False,) * lead + kept + (True,) * tail


def _remat_jvp(primals, tangents, jaxpr, prevent_cse, differentiated, policy):
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jj, consts, out_nz = ad.jvp_jaxpr(jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    outs = remat_p.bind(*consts, *primals, *nz_tangents, jaxpr=jj,
                        prevent_cse=_cse(prevent_cse, len(consts), None, len(nz_tangents)),
                        differentiated=differentiated, policy=policy)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else ad.Zero(a) for nz, a in zip(out_nz, jaxpr.out_avals)]


_split_cache = weakref.WeakKeyDictionary()


def _split(closed, unknowns, policy):
    """Splits ``closed``'s body for partial evaluation under ``policy``. Returns ``(known, staged,
    out_unknowns, num_res, in_used)``: ``known`` (a Jaxpr) maps the known inputs to the known outputs followed
    by ``num_res`` residuals, the outputs of the equations the policy calls saveable that the tangent part
    reads; ``staged`` maps those residuals then the inputs where ``in_used`` (the unknown inputs it reads and
    the known inputs its recomputation needs, in input order) to the unknown outputs, recomputing every
    other known value it needs. JAX orders the operands the same way."""
    try:
        per = _split_cache.setdefault(closed, {})
        key = (unknowns, policy)
        hit = per.get(key)
    except TypeError:  # an unhashable policy: split every time
        per = key = hit = None
    if hit is not None:
        return hit
    jaxpr = _split_nested(closed.jaxpr, unknowns, policy)
    unknown = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    eqn_unknown = []
    for e in jaxpr.eqns:
        u = any(isinstance(a, Var) and a in unknown for a in e.invars)
        eqn_unknown.append(u)
        if u:
            unknown.update(e.outvars)
    out_unknowns = [isinstance(v, Var) and v in unknown for v in jaxpr.outvars]
    saveable = [not u and (type(e) is _KnownPart or _saveable(policy, e)) for e, u in zip(jaxpr.eqns, eqn_unknown)]
    # What the staged part reads, and which known equations it must recompute (found backwards).
    needed = {a for e, u in zip(jaxpr.eqns, eqn_unknown) if u for a in e.invars if isinstance(a, Var)}
    needed.update(v for v, u in zip(jaxpr.outvars, out_unknowns) if u)
    recompute, saved = set(), set()
    for i in reversed(range(len(jaxpr.eqns))):
        e = jaxpr.eqns[i]
        if eqn_unknown[i] or not any(v in needed for v in e.outvars):
            continue
        if saveable[i] and (type(e) is not _KnownPart
                            or all(s for v, s in zip(e.outvars, e.saved_outs) if v in needed)):
            saved.add(i)
        else:
            recompute.add(i)
            needed.update(a for a in e.invars if isinstance(a, Var))
    # JAX orders the residuals by their first read in the staged part before its dead code is removed
    # (every unknown equation and every known one the policy does not save, in program order).
    saved_vars = {v for i in saved for v in jaxpr.eqns[i].outvars if v in needed}
    res = []
    for i, (e, u) in enumerate(zip(jaxpr.eqns, eqn_unknown)):
        if u or i not in saved and not (saveable[i] and type(e) is not _KnownPart):
            for a in e.invars:
                if isinstance(a, Var) and a in saved_vars and a not in res:
                    res.append(a)
    in_used = tuple(v in needed for v in jaxpr.invars)
    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    # The known part keeps only what its outputs and the residuals need (JAX's DCE of the known jaxpr).
    live = {v for v in known_outs + res if isinstance(v, Var)}
    known_eqns = []
    for e, u in zip(reversed(jaxpr.eqns), reversed(eqn_unknown)):
        if not u and any(v in live for v in e.outvars):
            known_eqns.append(e)
            live.update(a for a in e.invars if isinstance(a, Var))
    known_eqns.reverse()
    known = Jaxpr([], [v for v, u in zip(jaxpr.invars, unknowns) if not u], known_outs + res,
                  _round_residuals(known_eqns, res))
    staged_eqns = []
    for i, (e, u) in enumerate(zip(jaxpr.eqns, eqn_unknown)):
        if u or i in recompute:
            staged_eqns.extend(_inlined(e) if i in recompute and type(e) is _KnownPart else [e])
    staged = Jaxpr([], res + [v for v, used in zip(jaxpr.invars, in_used) if used],
                   [v for v, u in zip(jaxpr.outvars, out_unknowns) if u], staged_eqns)
    out = (known, ClosedJaxpr(staged, []), out_unknowns, len(res), in_used)
    if per is not None:
        per[key] = out
    return out


def _split_nested(jaxpr, unknowns, policy):
    """``jaxpr`` with each nested ``remat2`` that reads both known and unknown values split in two, as JAX's
    partial evaluation splits it: a known ``remat2`` (``differentiated=False``) giving the known outputs and
    the residuals, and a staged one (``differentiated=True``) reading them. Left whole, a checkpoint inside a
    checkpoint would make its primal outputs unknown and linearization fail."""
    if not any(e.primitive is remat_p for e in jaxpr.eqns):
        return jaxpr
    unknown = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    eqns, changed = [], False
    for e in jaxpr.eqns:
        ins_u = tuple(isinstance(a, Var) and a in unknown for a in e.invars)
        if e.primitive is remat_p and any(ins_u) and not all(ins_u):
            p = e.params
            known, staged, out_u, num_res, in_used = _split(p["jaxpr"], ins_u, policy)
            made = {o: k for k in known.eqns for o in k.outvars}
            n_out = len(known.outvars) - num_res
            saved_outs = tuple(i >= n_out or (v in made and _saveable(policy, made[v]))
                               for i, v in enumerate(known.outvars))
            res = [Var(v.aval) for v in known.outvars[len(known.outvars) - num_res:]]
            cse = p["prevent_cse"]
            k_cse = tuple(c for c, u in zip(cse, ins_u) if not u) if isinstance(cse, tuple) else cse
            s_cse = ((True,) * num_res + tuple(c for c, used in zip(cse, in_used) if used)
                     if isinstance(cse, tuple) else cse)
            eqns.append(_KnownPart([a for a, u in zip(e.invars, ins_u) if not u],
                                   [o for o, u in zip(e.outvars, out_u) if not u] + res, remat_p,
                                   dict(p, jaxpr=ClosedJaxpr(known, []), differentiated=False, prevent_cse=k_cse), e,
                                   saved_outs))
            eqns.append(_DerivedEqn(res + [a for a, used in zip(e.invars, in_used) if used],
                                    [o for o, u in zip(e.outvars, out_u) if u], remat_p,
                                    dict(p, jaxpr=staged, differentiated=True, prevent_cse=s_cse), e))
            unknown.update(o for o, u in zip(e.outvars, out_u) if u)
            changed = True
            continue
        eqns.append(e)
        if any(ins_u):
            unknown.update(e.outvars)
    return Jaxpr(list(jaxpr.constvars), list(jaxpr.invars), list(jaxpr.outvars), eqns) if changed else jaxpr


class _DerivedEqn(JaxprEqn):
    """An equation rewritten from ``origin`` (its outputs renamed): print_saved_residuals reads the source of
    the equation it came from."""
    __slots__ = ("origin",)

    def __init__(self, invars, outvars, primitive, params, origin):
        super().__init__(invars, outvars, primitive, params, origin.src)
        self.origin = origin


class _KnownPart(_DerivedEqn):
    """The known half of a nested ``remat2`` split by ``_split_nested``; ``saved_outs``: which outputs the
    enclosing checkpoint may save. Where the enclosing staged part recomputes it, its body is inlined
    (``_inlined``), as JAX prints it."""
    __slots__ = ("saved_outs",)

    def __init__(self, invars, outvars, primitive, params, origin, saved_outs):
        super().__init__(invars, outvars, primitive, params, origin)
        self.saved_outs = saved_outs


def _inlined(eqn):
    """The equations of ``eqn``'s body (a ``remat2`` without consts) over its operands and results; the
    body's inner variables are fresh, so the same body may be inlined twice in one jaxpr."""
    body = eqn.params["jaxpr"].jaxpr
    env = dict(zip(body.invars, eqn.invars))
    env.update((o, r) for o, r in zip(body.outvars, eqn.outvars) if isinstance(o, Var) and o not in env)
    sub = lambda a: env.get(a, a) if isinstance(a, Var) else a
    out = []
    for e in body.eqns:
        outs = []
        for o in e.outvars:
            if o not in env:
                env[o] = Var(o.aval)
            outs.append(env[o])
        out.append(_DerivedEqn([sub(a) for a in e.invars], outs, e.primitive, e.params, e))
    # an output that is an input (or a literal) of the body: no equation makes it, so keep the call whole
    for o, r in zip(body.outvars, eqn.outvars):
        if sub(o) is not r:
            return [eqn]
    return out


def _round_residuals(eqns, res):
    """``eqns`` with a ``reduce_precision`` (to the dtype's own format) after the producer of every float
    residual that other known equations also read, as JAX 0.10.2 does: the forward pass and the residual the
    backward pass reads are then the same rounded value even where a backend computes in excess precision.
    The rounded value keeps the residual's variable; the producer writes a fresh one."""
    used = {a for e in eqns for a in e.invars if isinstance(a, Var)}
    eqns = list(eqns)
    for v in res:
        dt = np.dtype(v.aval.dtype)
        if not dtypes.issubdtype(dt, np.floating) or v not in used:
            continue
        k = next(k for k, e in enumerate(eqns) if v in e.outvars)
        fi = dtypes.finfo(dt)
        params = dict(exponent_bits=int(fi.nexp), mantissa_bits=int(fi.nmant))
        if eqns[k].primitive is _lc.reduce_precision_p and eqns[k].params == params:
            continue
        fresh = Var(v.aval)
        e = eqns[k]
        eqns[k] = _DerivedEqn(e.invars, [fresh if o is v else o for o in e.outvars], e.primitive, e.params, e)
        eqns.insert(k + 1, JaxprEqn([fresh], [v], _lc.reduce_precision_p, params))
    return eqns


def _remat_partial_eval(trace, args, params):
    jaxpr, policy, prevent_cse = params["jaxpr"], params["policy"], params["prevent_cse"]
    unknowns = tuple(trace.is_unknown(a) for a in args)
    known, staged, out_unknowns, num_res, in_used = _split(jaxpr, unknowns, policy)
    with set_current_trace(trace.parent):
        kouts = eval_jaxpr(known, [], *[a for a, u in zip(args, unknowns) if not u])
    n_known = len(kouts) - num_res
    known_outs, res = kouts[:n_known], kouts[n_known:]
    if isinstance(prevent_cse, tuple):   # the residuals' flags are True, the inputs keep theirs (as JAX)
        prevent_cse = (True,) * num_res + tuple(p for p, used in zip(prevent_cse, in_used) if used)
    uouts = trace.stage(remat_p, list(res) + [a for a, used in zip(args, in_used) if used],
                        dict(params, jaxpr=staged, differentiated=True, prevent_cse=prevent_cse))
    ki, ui = iter(known_outs), iter(uouts)
    return [next(ui) if u else next(ki) for u in out_unknowns]


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    linear = [ad.is_undefined(a) for a in args]
    ct_nz = [type(c) is not ad.Zero for c in cts]
    tj, consts = ad.transpose_jaxpr(jaxpr, linear, ct_nz)
    res = [a for a in args if not ad.is_undefined(a)]
    nz_cts = [c for c in cts if type(c) is not ad.Zero]
    outs = remat_p.bind(*consts, *res, *nz_cts, jaxpr=tj, differentiated=differentiated, policy=policy,
                        prevent_cse=_cse(prevent_cse, len(consts), [not l for l in linear], len(nz_cts)))
    it = iter(outs)
    return [next(it) if l else None for l in linear]


def _remat_batch(vals, dims, jaxpr, prevent_cse, differentiated, policy):
    size = batching.axis_size_of(vals, dims)
    moved = [v if d is batching.not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [d if d is batching.not_mapped else 0 for d in dims]
    new, consts, out_dims = batching.batch_jaxpr(jaxpr, size, in_dims)
    outs = remat_p.bind(*consts, *moved, jaxpr=new, prevent_cse=_cse(prevent_cse, len(consts)),
                        differentiated=differentiated, policy=policy)
    return outs, out_dims


ad.jvp_rules[remat_p] = _remat_jvp
ad.pe_rules[remat_p] = _remat_partial_eval
ad.transpose_rules[remat_p] = _remat_transpose
batching.batching_rules[remat_p] = _remat_batch


# ----------------------------------------------------------------------------------------------- checkpoint

_CONCRETE_REMOVED = (
    "The `concrete` option to `jax.checkpoint` was deprecated in JAX"
    " v0.8.2, and removed in JAX v0.10.0."
    " In its place please use `static_argnums`; for details refer to"
    " https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")

_NO_CONCRETE = object()


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=(),
               concrete=_NO_CONCRETE):
    """``fun`` with its intermediate values recomputed in the backward pass instead of kept: under
    ``grad``/``vjp``/``linearize`` only the inputs (and the values ``policy`` calls saveable, see
    ``checkpoint_policies``) are residuals. Values and derivatives are ``fun``'s. ``static_argnums`` /
    ``static_argnames`` are passed as Python values (not traced). Mirrors ``jax.checkpoint``."""
    if concrete is not _NO_CONCRETE:
        raise NotImplementedError(_CONCRETE_REMOVED)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    static_argnames = tuple(static_argnames)
    if isinstance(prevent_cse, (list, tuple)):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError(f"prevent_cse must be a bool or tuple of bools, got {type(prevent_cse)=}")
    if config.jax_remat3:
        policy = _remat3_policy(policy)

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        dyn_args, static = _split_static(static_argnums, args)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
        static_kw = {k: v for k, v in kwargs.items() if k in static_argnames}
        leaves, in_tree = tree_flatten((tuple(dyn_args), dyn_kwargs))
        in_avals = tuple(get_aval(x) for x in leaves)
        key = _trace_key(in_tree, in_avals, len(args), static, static_kw)
        traces = _traces_of(fun, own_traces)
        hit = traces.get(key) if key is not None else None
        rec = partial_eval.eqn_hook if isinstance(partial_eval.eqn_hook, _SourceRecorder) else None
        if hit is not None and rec is not None:
            # print_saved_residuals records where equations come from: a trace made without its hook has no
            # sources and is made afresh; one made under an earlier hook lends the current one that hook's
            # sources (also those of the jaxprs derived from the trace, cached on it, made after it).
            if hit[3] is None:
                hit = None
            elif hit[3] is not rec:
                rec.sources.update(hit[3].sources)
        if hit is None:
            store = {}

            def flat(*xs):
                a, kw = tree_unflatten(in_tree, list(xs))
                it = iter(a)
                full = [static[i] if i in static else next(it) for i in range(len(args))]
                out, store["tree"] = tree_flatten(fun(*full, **kw, **static_kw))
                return out
            closed = trace_to_jaxpr(flat, list(in_avals), debug_info(fun, "checkpoint / remat", None))
            jaxpr, consts = closed.hoist_consts()
            hit = (jaxpr, consts, store["tree"], rec)
            # Closed-over tracers belong to the transformation of this call: such traces are not reused.
            if key is not None and not any(isinstance(c, Tracer) for c in consts):
                traces[key] = hit
        jaxpr, consts, out_tree, _ = hit
        if isinstance(prevent_cse, tuple):
            cse_args = (tuple(dyn_args), dyn_kwargs) if dyn_kwargs else tuple(dyn_args)
            subtrees = tree_structure(prevent_cse).flatten_up_to(cse_args)
            flags = [f for f, sub in zip(tree_flatten(prevent_cse)[0], subtrees)
                     for _ in range(len(tree_flatten(sub)[0]))]
            cse = (False,) * len(consts) + tuple(flags)
        else:
            cse = prevent_cse
        outs = remat_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=cse, differentiated=False, policy=policy)
        return tree_unflatten(out_tree, outs)

    own_traces = _LRU(_TRACE_CACHE_SIZE)   # for a ``fun`` that takes no weak reference
    if config.jax_remat3:   # JAX's remat3 is a partial over (*args, **kwargs): see config's jax_remat3
        return functools.partial(_call, fun_remat)
    return fun_remat


def _call(f, *args, **kwargs):
    return f(*args, **kwargs)


def _remat3_policy(policy):
    """The policy JAX's remat3 really applies (its remat rules): a ``checkpoint_name`` value is kept only
    under the name policies and ``everything_saveable``, a ``dot_general`` output only under the
    ``dots_saveable`` family, and every other value is recomputed (the offloading policies keep nothing).
    None when nothing can be kept."""
    if policy is None or not (isinstance(policy, (SaveOnlyTheseNames, SaveAnyNamesButThese, DotsSaveable))
                              or policy is everything_saveable):
        return None
    return _Remat3Policy(policy)


@dataclasses.dataclass(frozen=True)
class _Remat3Policy:
    policy: object

    def __call__(self, prim, *avals, **params):
        p = self.policy
        if prim is name_p:
            return p is everything_saveable or (not isinstance(p, DotsSaveable) and p(prim, *avals, **params))
        return prim is dot_general_p and isinstance(p, DotsSaveable) and p(prim, *avals, **params)


def remat(fun, *, prevent_cse=True, policy=None, static_argnums=(), concrete=_NO_CONCRETE):
    """Alias of :func:`checkpoint` (without ``static_argnames``), as ``jax.remat``."""
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                      concrete=concrete)


_TRACE_CACHE_SIZE = 64


class _LRU(collections.OrderedDict):
    def __init__(self, size):
        super().__init__()
        self.size = size

    def get(self, key):
        hit = super().get(key)
        if hit is not None:
            self.move_to_end(key)
        return hit

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        if len(self) > self.size:
            self.popitem(last=False)


# Traces by function and signature, as JAX's ``_trace_to_jaxpr`` cache holds them: calling a checkpointed
# function again (eagerly, or under grad in a training loop) reuses its jaxpr and the jaxprs derived from it,
# also through another ``checkpoint`` of the same function (another policy): like JAX's, a trace is not redone
# when a global the function reads is rebound (JAX's gradient-checkpointing guide prints that).
_fun_traces = weakref.WeakKeyDictionary()


def _traces_of(fun, own):
    try:
        traces = _fun_traces.get(fun)
        if traces is None:
            traces = _fun_traces[fun] = _LRU(_TRACE_CACHE_SIZE)
        return traces
    except TypeError:   # not weakly referenceable, or unhashable
        return own


def _trace_key(in_tree, in_avals, nargs, static, static_kw):
    """The cache key of a trace, or None when a static argument is unhashable (then it is traced anew)."""
    key = (in_tree, in_avals, nargs, dtypes._x64_enabled(), tuple((i, type(v), v) for i, v in sorted(static.items())),
           tuple((k, type(v), v) for k, v in sorted(static_kw.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _split_static(static_argnums, args):
    """(dynamic args, {position: static value}), with JAX's checks on ``static_argnums``."""
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must be an int, tuple "
                        f"of ints or, bool, but got value {static_argnums}")
    if not all(-len(args) <= d < len(args) for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer "
                         "values greater than or equal to `-len(args)` and less than `len(args)`, but got "
                         f"{static_argnums}, while `len(args)` = {len(args)}")
    positions = {d % len(args) for d in static_argnums} if args else set()
    static = {i: a for i, a in enumerate(args) if i in positions}
    return [a for i, a in enumerate(args) if i not in positions], static


# ----------------------------------------------------------------------------------------------- saved residuals

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep   # the cranax package
_lock = threading.Lock()


def _summarize(frame):
    """``file:line:col (function)`` of the call ``frame`` is making, as JAX summarizes source information."""
    line, col = frame.f_lineno, 0
    try:
        pos = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        if pos[0] is not None:
            line, col = pos[0], pos[2] or 0
    except (AttributeError, IndexError):
        pass
    code = frame.f_code
    return f"{code.co_filename}:{line}:{col} ({getattr(code, 'co_qualname', code.co_name)})"


class _SourceRecorder:
    """Notes, for each equation traced while active, where user code made it: the innermost frame outside
    cranax, or — for an equation made while a jaxpr is evaluated (a checkpointed body, a jit's inner jaxpr
    being differentiated) — the source of the equation being evaluated."""

    def __init__(self):
        self.sources = {}   # id(eqn) -> (eqn, text); the eqn is kept so that its id stays unique

    def __call__(self, eqn):
        text = ""
        f = sys._getframe(1)
        while f is not None:
            code = f.f_code
            if code is eval_jaxpr.__code__:
                e = f.f_locals.get("eqn")
                e = getattr(e, "origin", e)
                hit = self.sources.get(id(e))
                text = hit[1] if hit is not None and hit[0] is e else ""
                break
            if not code.co_filename.startswith(_PKG):
                text = _summarize(f)
                break
            f = f.f_back
        self.sources[id(eqn)] = (eqn, text)

    def source(self, eqn):
        hit = self.sources.get(id(eqn))
        return hit[1] if hit is not None and hit[0] is eqn else ""


def _arg_names(f, args, kwargs):
    """JAX's names of the flattened arguments: the parameter name plus the key path inside it."""
    try:
        ba = inspect.signature(f).bind(*args, **kwargs)
        named = []
        for name, val in ba.arguments.items():
            kind = inspect.signature(f).parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                named.extend((f"{name}[{i}]", v) for i, v in enumerate(val))
            elif kind is inspect.Parameter.VAR_KEYWORD:
                named.extend((f"{name}['{k}']", v) for k, v in val.items())
            else:
                named.append((name, val))
    except (TypeError, ValueError):
        named = [(f"args[{i}]", a) for i, a in enumerate(args)] + [(k, v) for k, v in kwargs.items()]
    names = []
    for base, val in named:
        names.extend(base + keystr(p) for p, _ in tree_flatten_with_path(val)[0])
    return names


def saved_residuals(f, *args, **kwargs):
    """The residuals reverse-mode differentiation of ``f`` at ``args`` keeps: a list of ``(aval, description)``
    (from an argument, a literal, a constant, or the output of which primitive at which line). Mirrors
    ``jax._src.ad_checkpoint.saved_residuals`` (not a public name in JAX; kept out of ``__all__``)."""
    leaves_paths, in_tree = tree_flatten_with_path((args, kwargs))
    leaves = [x for _, x in leaves_paths]
    names = _arg_names(f, args, kwargs)
    if len(names) != len(leaves):
        names = [f"flattened index {i}" for i in range(len(leaves))]

    def run(*xs):
        a, kw = tree_unflatten(in_tree, list(xs))

        def flat(*ys):
            a2, kw2 = tree_unflatten(in_tree, list(ys))
            out = f(*a2, **kw2)
            return [o for _, o in tree_flatten_with_path(out)[0]]
        _, linear, _ = ad.linearize_flat(flat, list(xs))
        return list(linear.consts)
    rec = _SourceRecorder()
    with _lock:   # one recorder at a time (the hook is global)
        prev = partial_eval.eqn_hook
        partial_eval.eqn_hook = rec
        try:
            closed = trace_to_jaxpr(run, [get_aval(x) for x in leaves])
        finally:
            partial_eval.eqn_hook = prev
    jaxpr = closed.jaxpr
    outs = list(jaxpr.outvars)
    res_vars = {v for v in outs if not isinstance(v, Literal)}
    # The reduce_precision partial eval puts on a residual is not its producer: look through it (as JAX).
    subst = {e.outvars[0]: e.invars[0] for e in jaxpr.eqns if e.primitive is _lc.reduce_precision_p}
    res_vars = {subst.get(v, v) for v in res_vars}
    results = [(v.aval, "from a literal") for v in outs if isinstance(v, Literal)]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    results += [(v.aval, f"from the argument {n}") for v, n in zip(jaxpr.invars, names) if v in res_vars]
    for eqn in jaxpr.eqns:
        for v in eqn.outvars:
            if v in res_vars:
                src = rec.source(eqn)
                if eqn.primitive is name_p:
                    results.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
                elif eqn.primitive.name == "jit":   # JAX keeps no source for a jit call in a vjp
                    results.append((v.aval, f"output of jitted function '{eqn.params['name']}' from "))
                elif eqn.primitive.name == "remat_opt":   # nor for a custom_vjp fwd staged with optimize_remat
                    results.append((v.aval, "output of remat_opt from "))
                else:
                    results.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return results


def print_saved_residuals(f, *args, **kwargs):
    """Prints, one line each, the residuals ``grad``/``vjp`` of ``f`` at ``args`` keeps (``f32[5] output of cos
    from file.py:11:9 (g)``), to see what a ``checkpoint`` policy saves. Mirrors
    ``jax.ad_checkpoint.print_saved_residuals``."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {src}")
