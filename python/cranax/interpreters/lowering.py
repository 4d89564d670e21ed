"""Lowering: a ``ClosedJaxpr`` → the core's JSON wire format (see ``rust/ir/parse.rs``).

The program's inputs are the jaxpr's constvars followed by its invars. Call-like equations (``jit``,
custom derivative calls) are inlined, as is any primitive whose ``inline_jaxpr(eqn)`` returns a
``(jaxpr, args)`` expansion rather than None; the core optimizes the flat program as a whole.
"""
import json
import math

import numpy as np

from .. import dtypes
from ..jaxpr import ClosedJaxpr, Literal

WIRE_VERSION = 1

# Primitive name → function(eqn) -> params dict for the wire. Primitives not listed send {}.
wire_params = {}


def _wire_value(v):
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        return dtypes.short_name(np.dtype(v))
    if isinstance(v, (tuple, list)):
        return [_wire_value(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    return v


_lit_cache = {}


def _literal_json(lit):
    dt = lit.aval.dtype
    v = lit.val
    try:
        key = (dt, type(v), v)
        if v == 0 and isinstance(v, (float, np.floating)):
            key = (dt, type(v), v, math.copysign(1.0, v))  # -0.0 == 0.0, but they are different literals
        hit = _lit_cache.get(key)
    except (TypeError, ValueError):
        key = hit = None
    if hit is not None:
        return hit
    out = _literal_json_slow(dt, v)
    if key is not None and len(_lit_cache) < 4096:
        _lit_cache[key] = out
    return out


def _literal_json_slow(dt, v):
    if isinstance(v, np.ndarray):
        v = v.item()
    elif isinstance(v, np.generic):
        v = v.item()
    if dt == np.bool_:
        v = bool(v)
    elif dtypes.issubdtype(dt, np.floating):
        v = float(np.asarray(v).astype(dt))
        if math.isnan(v):
            v = "nan"
        elif math.isinf(v):
            v = "inf" if v > 0 else "-inf"
    else:
        v = int(v)
    return {"lit": v, "dtype": dtypes.short_name(dt)}


_MAX_BYTES = 2 ** 63 - 1  # isize::MAX: no buffer can be larger


def _check_size(aval, what):
    """A MemoryError naming the bytes for an array no machine can hold (rather than the core's verifier
    error, or an allocation that aborts)."""
    n = 1
    for d in aval.shape:
        n *= int(d)
    nbytes = n * np.dtype(aval.dtype).itemsize
    if nbytes > _MAX_BYTES:
        raise MemoryError(f"{what}: an array of shape {tuple(aval.shape)} and dtype {np.dtype(aval.dtype).name} "
                          f"needs {nbytes} bytes, more than the addressable memory ({_MAX_BYTES} bytes)")


def _aval_json(vid, aval, what="program input"):
    if aval.shape:
        _check_size(aval, what)
    return [vid, dtypes.short_name(aval.dtype), list(aval.shape)]


class _Emitter:
    def __init__(self):
        self.ids = {}
        self.eqns = []
        self.next_id = 0

    def atom(self, a, env):
        if type(a) is Literal:
            return _literal_json(a)
        return env[a]

    def emit_jaxpr(self, jaxpr, env):
        """Emits ``jaxpr``'s equations; ``env`` maps its constvars/invars to wire atoms. Returns outputs."""
        for eqn in jaxpr.eqns:
            inline = getattr(eqn.primitive, "inline_jaxpr", None)
            # an inline rule returns None where the core runs the equation itself (e.g. conv on floats)
            expansion = inline(eqn) if inline is not None else None
            if expansion is not None:
                inner, inner_args = expansion
                if isinstance(inner, ClosedJaxpr):
                    inner_consts = inner.consts
                    inner = inner.jaxpr
                    if inner_consts:
                        raise NotImplementedError("closed inner jaxpr consts must be hoisted before lowering")
                sub = {}
                for v, a in zip(inner.invars, inner_args):
                    sub[v] = self.atom(a, env)
                outs = self.emit_jaxpr(inner, sub)
                for v, o in zip(eqn.outvars, outs):
                    env[v] = o
                continue
            ins = [self.atom(a, env) for a in eqn.invars]
            outs = []
            for v in eqn.outvars:
                vid = self.next_id
                self.next_id += 1
                env[v] = vid
                outs.append(_aval_json(vid, v.aval, eqn.primitive.name))
            rule = wire_params.get(eqn.primitive.name)
            params = rule(eqn) if rule is not None else {}
            self.eqns.append({"prim": eqn.primitive.name, "params": params, "in": ins, "out": outs})
        return [self.atom(a, env) for a in jaxpr.outvars]


def lower_program(jaxpr):
    """The wire form of ``jaxpr`` (a Jaxpr) as a dict of its inputs (constvars then invars), equations and
    outputs: the body of a program, and of each sub-jaxpr a control-flow equation nests in its params."""
    em = _Emitter()
    env = {}
    invars = []
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        vid = em.next_id
        em.next_id += 1
        env[v] = vid
        invars.append(_aval_json(vid, v.aval))
    outs = em.emit_jaxpr(jaxpr, env)
    return {"invars": invars, "eqns": em.eqns, "outvars": outs}


def lower_jaxpr(closed, name="main"):
    """The wire JSON (a str) for ``closed``; inputs are its constvars then invars."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    prog = {"version": WIRE_VERSION, "name": name, **lower_program(jaxpr)}
    return json.dumps(prog, separators=(",", ":"))
