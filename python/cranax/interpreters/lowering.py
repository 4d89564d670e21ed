"""Lowering: a ``ClosedJaxpr`` → the core's JSON wire format (see ``rust/ir/parse.rs``).

The program's inputs are the jaxpr's constvars followed by its invars. Call-like equations (``jit``,
custom derivative calls) are inlined, as is any primitive whose ``inline_jaxpr(eqn)`` returns a
``(jaxpr, args)`` expansion rather than None; the core optimizes the flat program as a whole.

Complex values are lowered as pairs of real values: the core has no complex dtype. A complex variable maps
to a ``(real, imag)`` pair of wire atoms (float32 for complex64, float64 for complex128); an equation that
touches one is expanded by its rule in ``complex_rules`` (filled by ``primitives.complex``) into real
equations, and a complex program input/output is two real ones, which :func:`executable` pairs up again
(``array.ComplexBuffer``). Fusion, codegen and the GPU backend thus run complex programs unchanged.
"""
import json
import math

import numpy as np

from .. import _core, dtypes
from ..array import ComplexBuffer
from ..jaxpr import ClosedJaxpr, Literal
from . import print_order

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


# Primitive name → rule(emitter, eqn, ins) -> outs for equations with complex operands or results: ``ins`` are
# wire atoms, a ``(re, im)`` pair for each complex operand; the rule emits real equations (``_Emitter.op``)
# and returns the results the same way.
complex_rules = {}

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def is_complex(aval):
    return aval.dtype.kind == "c"


def real_dtype(dt):
    """float32 for complex64, float64 for complex128; real dtypes unchanged."""
    return _REAL_OF.get(np.dtype(dt), np.dtype(dt))


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
    if dt.kind == "c":
        rd = real_dtype(dt)
        c = complex(v)
        return (_literal_json_slow(rd, c.real), _literal_json_slow(rd, c.imag))
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


def _flat_atoms(atoms):
    """Wire atoms with each complex ``(re, im)`` pair spread into its two parts."""
    out = []
    for a in atoms:
        if type(a) is tuple:
            out.extend(a)
        else:
            out.append(a)
    return out


class _Emitter:
    def __init__(self, defer=None):
        self.ids = {}
        self.eqns = []
        self.next_id = 0
        self.defer = defer or {}   # id of a print equation -> its rank (``print_order.order``)
        self.stash = []

    def atom(self, a, env):
        if type(a) is Literal:
            return _literal_json(a)
        return env[a]

    def new_var(self, dtype, shape, what="program input"):
        """A fresh wire variable: ``(id, its [id, dtype, shape] declaration)``."""
        vid = self.next_id
        self.next_id += 1
        return vid, _aval_json(vid, _Aval(np.dtype(dtype), tuple(shape)), what)

    def op(self, prim, ins, dtype, shape, params=None):
        """Emits a one-result real equation ``prim`` (a wire name) on atoms ``ins``; returns its result's id."""
        vid, decl = self.new_var(dtype, shape, prim)
        self.eqns.append({"prim": prim, "params": params or {}, "in": list(ins), "out": [decl]})
        return vid

    def _complex_eqn(self, eqn, ins):
        rule = complex_rules.get(eqn.primitive.name)
        if rule is None:
            raise NotImplementedError(f"{eqn.primitive.name} on complex operands is not lowered (cranax lowers "
                                      f"complex values as pairs of reals; this primitive has no such rule)")
        return rule(self, eqn, ins)

    def _broadcast_operands(self, eqn, ins):
        """The wire operands of an elementwise equation with each variable broadcast to the result's shape.
        Jaxprs let a binary primitive take a rank-0 operand with an array (JAX's ``x * y`` with ``y: f32[]``
        is one ``mul``) and operands of equal rank whose size-1 dimensions broadcast (``f32[2,3]`` with
        ``f32[1,3]``, which jnp's rank promotion makes of ``f32[3]``); the core requires equal shapes except
        for literals, so the broadcast is added here, once, for every backend (fusion folds it into the
        consumer's loop)."""
        shape = eqn.outvars[0].aval.shape
        if not shape:
            return ins
        out = ins
        for i, a in enumerate(eqn.invars):
            if type(a) is Literal or a.aval.shape == shape:
                continue
            if out is ins:
                out = list(ins)
            # a rank-0 operand maps to no dimension; an equal-rank one to each (its 1s stretch)
            params = {"shape": list(shape), "broadcast_dimensions": list(range(a.aval.ndim))}
            out[i] = self.op("broadcast_in_dim", [ins[i]], a.aval.dtype, shape, params)
        return out

    def emit_jaxpr(self, jaxpr, env):
        """Emits ``jaxpr``'s equations; ``env`` maps its constvars/invars to wire atoms. Returns outputs.
        The prints ``self.defer`` ranks (``print_order``) wait until the last of them is reached, and all
        go there in their rank's order."""
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
            rank = self.defer.get(id(eqn))
            if rank is None:
                self._emit(eqn, ins, env)
                continue
            self.stash.append((rank, eqn, ins))
            if len(self.stash) == len(self.defer):
                self.flush(env)
        return [self.atom(a, env) for a in jaxpr.outvars]

    def flush(self, env):
        """Emits the waiting prints in their rank's order (at the end of the program, should an inlined
        call have given other equation objects than ``print_order`` saw)."""
        for _, e, i in sorted(self.stash, key=lambda t: t[0]):
            self._emit(e, i, env)
        self.stash = []

    def _emit(self, eqn, ins, env):
        """Emits one equation (not inlined) on its operands' wire atoms ``ins``."""
        if any(v.aval.dtype.kind == "c" for v in eqn.outvars) or any(type(a) is tuple for a in ins):
            for v, o in zip(eqn.outvars, self._complex_eqn(eqn, ins)):
                env[v] = o
            return
        if getattr(eqn.primitive, "elementwise", False):   # (complex rules broadcast for themselves)
            ins = self._broadcast_operands(eqn, ins)
        outs = []
        for v in eqn.outvars:
            vid = self.next_id
            self.next_id += 1
            env[v] = vid
            outs.append(_aval_json(vid, v.aval, eqn.primitive.name))
        rule = wire_params.get(eqn.primitive.name)
        params = rule(eqn) if rule is not None else {}
        # (a primitive's ``wire_name``, where it has one, names the core op: ``elementwise._libm_twin``)
        prim = getattr(eqn.primitive, "wire_name", eqn.primitive.name)
        self.eqns.append({"prim": prim, "params": params, "in": ins, "out": outs})


def lower_program(jaxpr, kind="entry", carried=None, index_init=None):
    """The wire form of ``jaxpr`` (a Jaxpr) as a dict of its inputs (constvars then invars), equations and
    outputs: the body of a program, and of each sub-jaxpr a control-flow equation nests in its params.
    Its unordered debug prints run in XLA:CPU's order (``print_order.order``, which ``kind``, ``carried``
    and ``index_init`` are for)."""
    em = _Emitter(print_order.order(jaxpr, kind, carried, index_init))
    env = {}
    invars = []
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        if is_complex(v.aval):
            _check_size(v.aval, "program input")
            parts = [em.new_var(real_dtype(v.aval.dtype), v.aval.shape) for _ in range(2)]
            env[v] = (parts[0][0], parts[1][0])
            invars.extend(d for _, d in parts)
            continue
        vid = em.next_id
        em.next_id += 1
        env[v] = vid
        invars.append(_aval_json(vid, v.aval))
    outs = em.emit_jaxpr(jaxpr, env)
    em.flush(env)
    return {"invars": invars, "eqns": em.eqns, "outvars": _flat_atoms(outs)}


class _Aval:
    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = shape


# name -> rule(closed, invars) -> ClosedJaxpr | None: the form a library function's jitted jaxpr is compiled in
# where XLA's rewrites of it change its bits in a way the printed jaxpr (JAX's) cannot show (``jnp.linspace``'s
# multiply-add contraction: ``numpy._creation``). The rule checks that ``closed`` is the library's own trace
# (a user function may share the name) and returns an equivalent jaxpr of the same signature, or None. Applied
# to a jitted program (``lower_jaxpr``, invars None) and to a ``jit`` call inlined into one
# (``jit_p.inline_jaxpr``: its operands, some of them literals that XLA would fold).
lowering_forms = {}


def lowered_form(closed, name, invars=None):
    rule = lowering_forms.get(name)
    alt = None if rule is None else rule(closed, invars)
    return closed if alt is None else alt


def lower_jaxpr(closed, name="main"):
    """The wire JSON (a str) for ``closed``; inputs are its constvars then invars."""
    closed = lowered_form(closed, name)
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    with print_order.memo():
        prog = {"version": WIRE_VERSION, "name": name, **lower_program(jaxpr)}
    return json.dumps(prog, separators=(",", ":"), default=_wire_default)


def _wire_default(o):
    # params keep NumPy ints where JAX does (vmap/transpose rules' axes, printed np.int64(...)); the wire
    # takes them as plain ints
    if isinstance(o, np.integer):
        return int(o)
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


class SplitExecutable:
    """An executable whose program has complex inputs or outputs: each travels as its two real parts
    (``array.ComplexBuffer``); ``execute`` spreads and pairs them around the core's executable."""

    def __init__(self, exe, complex_in, complex_out):
        self._exe = exe
        self._cin = complex_in
        self._cout = complex_out

    def execute(self, bufs):
        flat = []
        for b, c in zip(bufs, self._cin):
            if c:
                if type(b) is not ComplexBuffer:
                    raise TypeError("a complex program input needs a complex buffer")
                flat.append(b.re)
                flat.append(b.im)
            else:
                flat.append(b)
        res = self._exe.execute(flat)
        out, i = [], 0
        for c in self._cout:
            if c:
                out.append(ComplexBuffer(res[i], res[i + 1]))
                i += 2
            else:
                out.append(res[i])
                i += 1
        return out

    def __getattr__(self, name):  # as_text, jaxpr_text, name: the core executable's
        return getattr(self._exe, name)


def executable(text, closed):
    """The core's executable for the wire ``text`` of ``closed``, pairing complex inputs/outputs when it has
    any (real programs get the core's executable itself)."""
    exe = _core.compile(text)
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    cin = [is_complex(v.aval) for v in list(jaxpr.constvars) + list(jaxpr.invars)]
    cout = [is_complex(a.aval) for a in jaxpr.outvars]
    if any(cin) or any(cout):
        return SplitExecutable(exe, cin, cout)
    return exe
