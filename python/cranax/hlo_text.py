"""HLO-form text of a traced program: what ``Lowered.compiler_ir(dialect="hlo")`` returns.

JAX lowers a jaxpr to StableHLO and converts it to XLA HLO; cranax compiles the jaxpr itself and has no HLO.
This module writes the jaxpr cranax compiles in XLA's HLO text syntax (``HloModule``, one ``ENTRY``
computation, one instruction per line, ``ROOT`` last) with each primitive spelled as the HLO instruction(s)
JAX lowers it to: ``mul`` is ``multiply``, ``square`` is ``multiply(x, x)``, ``integer_pow`` is the chain of
multiplies of JAX's exponentiation by squaring, a scalar literal used at a larger shape is a ``constant``
then a ``broadcast``, nested ``jit``s are inlined. Programs that compute the same thing the same way thus
print the same text, as they do under JAX (optax's ``numerics_test`` relies on that), and different ones
differ. A primitive without an HLO spelling here is written under its own name with its params as
attributes, and its sub-jaxprs as separate computations (``to_apply=``). Instruction names are the
primitive's name and a counter, as JAX's; this is a debugging view, not a program XLA could parse.
"""
import re

import numpy as np

from .jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = ["HloComputation", "hlo_text"]

_DT = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64", "uint8": "u8",
       "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "bfloat16": "bf16",
       "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128"}

# Elementwise primitives whose HLO instruction has the operands of the equation.
_ELEMENTWISE = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder", "max": "maximum",
    "min": "minimum", "pow": "power", "atan2": "atan2", "and": "and", "or": "or", "xor": "xor", "not": "not",
    "neg": "negate", "abs": "abs", "sign": "sign", "floor": "floor", "ceil": "ceil", "exp": "exponential",
    "log": "log", "log1p": "log-plus-one", "expm1": "exponential-minus-one", "sin": "sine", "cos": "cosine",
    "tan": "tan", "tanh": "tanh", "sqrt": "sqrt", "rsqrt": "rsqrt", "cbrt": "cbrt", "logistic": "logistic",
    "is_finite": "is-finite", "real": "real", "imag": "imag", "complex": "complex",
    "convert_element_type": "convert", "bitcast_convert_type": "bitcast-convert", "shift_left": "shift-left",
    "shift_right_logical": "shift-right-logical", "shift_right_arithmetic": "shift-right-arithmetic",
    "population_count": "popcnt", "clz": "count-leading-zeros", "erf": "erf", "reshape": "reshape",
    "copy": "copy", "copy_p": "copy",
}
_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_REDUCE = {"reduce_sum": ("add", 0), "reduce_max": ("maximum", -np.inf), "reduce_min": ("minimum", np.inf),
           "reduce_prod": ("multiply", 1), "reduce_and": ("and", True), "reduce_or": ("or", False)}
# Call-like primitives whose body is inlined (JAX's HLO inlines them too, or calls them unchanged).
_INLINE = {"pjit", "jit", "closed_call", "core_call", "remat", "checkpoint", "custom_jvp_call", "custom_vjp_call",
           "custom_vjp_call_jaxpr"}


def _shape(aval, layout=True):
    dt = _DT.get(np.dtype(aval.dtype).name, np.dtype(aval.dtype).name)
    dims = ",".join(str(d) for d in aval.shape)
    lay = ("{" + ",".join(str(d) for d in reversed(range(len(aval.shape)))) + "}") if layout and aval.shape else ""
    return f"{dt}[{dims}]{lay}"


def _const_text(val, dtype):
    a = np.asarray(val)
    if np.dtype(dtype) == np.bool_:
        fmt = lambda v: "true" if v else "false"
    elif np.issubdtype(np.dtype(dtype), np.complexfloating):
        real = lambda v: np.format_float_positional(v, trim="-") if np.isfinite(v) else str(v)
        fmt = lambda v: f"({real(v.real)}, {real(v.imag)})"
    elif np.issubdtype(np.dtype(dtype), np.inexact):
        fmt = lambda v: np.format_float_positional(v, trim="-") if np.isfinite(v) else str(v)
    else:
        fmt = lambda v: str(int(v))
    if a.ndim == 0:
        return fmt(a.item())
    if a.size > 16:
        return "{...}"
    return "{" + ", ".join(fmt(v) for v in a.reshape(-1).tolist()) + "}"


class _Printer:
    def __init__(self):
        self.computations = []   # finished (name, lines) of the non-entry computations, in order
        self.counts = {}
        self.arg_names = []      # the entry computation's parameter names (None: Arg_<i>)
        self.made = {}           # instruction name -> (its computation's lines, its index there)

    def name(self, base):
        n = self.counts.get(base, 0) + 1
        self.counts[base] = n
        return f"{base}.{n}"

    def computation(self, jaxpr, consts, label, entry=False):
        """Prints ``jaxpr`` as one computation; returns its name."""
        lines = []
        env = {}

        def emit(base, aval, op, operands, attrs=""):
            nm = self.name(base)
            lines.append(f"{nm} = {_shape(aval)} {op}({', '.join(operands)}){attrs}")
            self.made[nm] = (lines, len(lines) - 1)
            return nm

        def read(a, at=None):
            """The instruction holding atom ``a``; a literal becomes a constant, broadcast to ``at`` (an aval)
            when that is larger."""
            if not isinstance(a, Literal):
                return env[a]
            c = emit("constant", a.aval, "constant", [])
            lines[-1] = lines[-1][:-2] + f"({_const_text(a.val, a.aval.dtype)})"
            if at is not None and tuple(at.shape) != tuple(a.aval.shape):
                c = emit("broadcast", _Aval(at.shape, a.aval.dtype), "broadcast", [c], ", dimensions={}")
            return c

        names = self.arg_names if entry and len(self.arg_names) == len(jaxpr.invars) else ()
        for i, v in enumerate(jaxpr.invars):
            env[v] = emit((names[i] if names and names[i] else None) or "Arg_" + str(i), v.aval, "parameter", [])
            lines[-1] = lines[-1][:-2] + f"({i})"
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = emit("constant", v.aval, "constant", [])
            lines[-1] = lines[-1][:-2] + f"({_const_text(c, v.aval.dtype)})"
        for eqn in jaxpr.eqns:
            outs = self.equation(eqn, read, emit)
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        outs = [read(v) for v in jaxpr.outvars]
        if len(outs) == 1:
            # The root is the last instruction; an output computed earlier (or a parameter) is copied.
            if not lines[-1].startswith(outs[0] + " "):
                emit("copy", jaxpr.outvars[0].aval, "copy", [outs[0]])
            lines[-1] = "ROOT " + lines[-1]
        else:
            shapes = ", ".join(_shape(v.aval) for v in jaxpr.outvars)
            lines.append(f"ROOT {self.name('tuple')} = ({shapes}) tuple({', '.join(outs)})")
        name = "main." + str(len(self.computations) + 1) if entry else self.name(label)
        self.computations.append((name, lines, entry))
        return name

    def equation(self, eqn, read, emit):
        p = eqn.primitive.name
        params = eqn.params
        out = eqn.outvars[0].aval if eqn.outvars else None
        if p == "xla_metadata_value":
            # set_xla_metadata: attributes on the instruction that made the value (none on a parameter or
            # constant, as JAX attaches them to operations only)
            x = read(eqn.invars[0])
            lines, i = self.made[x]
            if " parameter(" not in lines[i] and " constant(" not in lines[i]:
                kvs = ",".join(f'{k}="{str(v).lower() if isinstance(v, bool) else v}"'
                               for k, v in params["xla_metadata_kvs"])
                lines[i] += f", frontend_attributes={{{kvs}}}"
            return [x]
        if p in _INLINE:
            sub = next((v for v in params.values() if isinstance(v, (ClosedJaxpr, Jaxpr))), None)
            if sub is not None:
                return self.inline(sub, [read(a) for a in eqn.invars], read, emit)
        if p == "reshape" and params.get("dimensions") is not None:
            # JAX lowers reshape[dimensions=perm] as a transpose, then the reshape
            x, perm = eqn.invars[0], tuple(params["dimensions"])
            t_aval = _Aval(tuple(x.aval.shape[d] for d in perm), x.aval.dtype)
            t = emit("transpose", t_aval, "transpose", [read(x)], f", dimensions={{{','.join(map(str, perm))}}}")
            return [emit(p, out, "reshape", [t])]
        if p in _ELEMENTWISE:
            return [emit(p, out, _ELEMENTWISE[p], [read(a, out) for a in eqn.invars])]
        if p in _COMPARE:
            ops = [read(a, _Aval(out.shape, eqn.invars[0].aval.dtype)) for a in eqn.invars]
            return [emit(p, out, "compare", ops, f", direction={_COMPARE[p]}")]
        if p == "square":
            x = read(eqn.invars[0])
            return [emit(p, out, "multiply", [x, x])]
        if p == "integer_pow":
            one = lambda: read(Literal(np.ones((), out.dtype), _Aval((), out.dtype)), out)
            return [self.integer_pow(read(eqn.invars[0]), int(params["y"]), out, emit, one)]
        if p == "select_n" and len(eqn.invars) == 3:
            pred, f, t = (read(a, out if i else None) for i, a in enumerate(eqn.invars))
            return [emit(p, out, "select", [pred, t, f])]
        if p == "broadcast_in_dim":
            dims = ",".join(str(d) for d in params["broadcast_dimensions"])
            return [emit(p, out, "broadcast", [read(eqn.invars[0])], f", dimensions={{{dims}}}")]
        if p == "transpose":
            dims = ",".join(str(d) for d in params["permutation"])
            return [emit(p, out, "transpose", [read(eqn.invars[0])], f", dimensions={{{dims}}}")]
        if p in _REDUCE:
            op, init = _REDUCE[p]
            x = eqn.invars[0]
            region = self.region(op, _Aval((), x.aval.dtype))
            c = read(Literal(np.asarray(init).astype(x.aval.dtype), _Aval((), x.aval.dtype)))
            dims = ",".join(str(d) for d in params["axes"])
            return [emit(p, out, "reduce", [read(x), c], f", dimensions={{{dims}}}, to_apply={region}")]
        if p == "dot_general":
            (lc, rc), (lb, rb) = params["dimension_numbers"]
            f = lambda ds: "{" + ",".join(str(d) for d in ds) + "}"
            attrs = (f", lhs_batch_dims={f(lb)}, rhs_batch_dims={f(rb)}" if lb else "") + \
                    f", lhs_contracting_dims={f(lc)}, rhs_contracting_dims={f(rc)}"
            return [emit(p, out, "dot", [read(a) for a in eqn.invars], attrs)]
        # Any other primitive: its own name, its params as attributes, its sub-jaxprs as computations.
        attrs = []
        for k, v in params.items():
            if isinstance(v, (ClosedJaxpr, Jaxpr)):
                attrs.append(f"{k}={self.sub(v, p)}")
            elif isinstance(v, tuple) and v and all(isinstance(x, (ClosedJaxpr, Jaxpr)) for x in v):
                attrs.append(f"{k}={{{', '.join(self.sub(x, p) for x in v)}}}")
            else:
                attrs.append(f"{k}={v}")
        ops = [read(a) for a in eqn.invars]
        attrs = "".join(", " + a for a in attrs)
        if len(eqn.outvars) == 1:
            return [emit(p, out, p, ops, attrs)]
        # Several results: one tuple-typed instruction, read by get-tuple-element (as HLO does).
        t = emit(p, _Tuple(", ".join(_shape(v.aval) for v in eqn.outvars)), p, ops, attrs)
        return [emit("get-tuple-element", v.aval, "get-tuple-element", [t], f", index={i}")
                for i, v in enumerate(eqn.outvars)]

    def integer_pow(self, x, y, out, emit, one):
        """JAX's lowering of ``integer_pow``: exponentiation by squaring, then 1/acc for a negative power
        (``one()`` emits the constant 1 at the output's shape)."""
        if y == 0:
            return one()
        recip, y = y < 0, abs(y)
        acc = None
        while y > 0:
            if y & 1:
                acc = x if acc is None else emit("mul", out, "multiply", [acc, x])
            y >>= 1
            if y > 0:
                x = emit("mul", out, "multiply", [x, x])
        if recip:
            return emit("div", out, "divide", [one(), acc])
        return acc

    def inline(self, sub, args, read, emit):
        closed = sub if isinstance(sub, ClosedJaxpr) else ClosedJaxpr(sub, [])
        j = closed.jaxpr
        env = dict(zip(j.invars, args))
        for v, c in zip(j.constvars, closed.consts):
            env[v] = read(Literal(c, v.aval))

        def inner(a, at=None):
            return read(a, at) if isinstance(a, Literal) else env[a]
        for eqn in j.eqns:
            for v, o in zip(eqn.outvars, self.equation(eqn, inner, emit)):
                env[v] = o
        return [inner(v) for v in j.outvars]

    def region(self, op, aval):
        nm = self.name("region")
        a, b = self.name("Arg_0"), self.name("Arg_1")
        r = self.name(op)
        s = _shape(aval)
        self.computations.append((nm, [f"{a} = {s} parameter(0)", f"{b} = {s} parameter(1)",
                                       f"ROOT {r} = {s} {op}({a}, {b})"], False))
        return nm

    def sub(self, j, label):
        closed = j if isinstance(j, ClosedJaxpr) else ClosedJaxpr(j, [])
        return self.computation(closed.jaxpr, closed.consts, label)


class _Aval:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


class _Tuple:
    """The result type of a multi-output instruction, printed as HLO's ``(t0, t1, ...)``."""

    def __init__(self, text):
        self.text = text


_plain_shape = _shape


def _shape(aval, layout=True):   # noqa: F811 (extends the above with tuple types)
    return f"({aval.text})" if isinstance(aval, _Tuple) else _plain_shape(aval, layout)


def _module_name(fun_name):
    """JAX's module name for a jitted function: ``jit_`` and the name with characters other than word ones,
    ``.`` and ``-`` as ``_``, trailing ``_`` dropped, as XLA prints it (``<lambda>`` gives ``jit__lambda``)."""
    return ("jit_" + re.sub(r"[^\w.-]", "_", fun_name)).rstrip("_")


def hlo_text(closed, name, arg_names=()):
    """HLO-form text (see the module docs) of ClosedJaxpr ``closed`` for the jitted function ``name``;
    ``arg_names``: the path of each argument leaf (``x``, ``p[1]['b']``), which names its parameter as in JAX
    (non-identifier characters as ``_``; ``Arg_<i>`` where unknown)."""
    pr = _Printer()
    pr.arg_names = [re.sub(r"[^0-9A-Za-z_]", "_", n) if n else None for n in arg_names]
    pr.computation(closed.jaxpr, closed.consts, "main", entry=True)
    ins = ", ".join(_shape(v.aval) for v in closed.jaxpr.invars)
    outs = [_shape(v.aval) for v in closed.jaxpr.outvars]
    out = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    text = [f"HloModule {_module_name(name)}, entry_computation_layout={{({ins})->{out}}}", ""]
    for nm, lines, entry in pr.computations:
        text.append(("ENTRY " if entry else "") + nm + " {")
        text += ["  " + l for l in lines]
        text += ["}", ""]
    return "\n".join(text) + "\n"


class HloComputation:
    """What ``Lowered.compiler_ir(dialect="hlo")`` returns (JAX's is an ``XlaComputation``): ``as_hlo_text()``
    is the program in HLO-form text (see ``cranax.hlo_text``), ``name()`` the module's name."""

    def __init__(self, closed, fun_name, arg_names=()):
        self._closed = closed
        self._name = fun_name
        self._arg_names = tuple(arg_names)

    def name(self):
        return _module_name(self._name)

    def as_hlo_text(self, print_large_constants=False):
        return hlo_text(self._closed, self._name, self._arg_names)

    def __repr__(self):
        return f"<cranax HloComputation {self.name()}>"
