"""``jax.stages``: the ahead-of-time path ``jit(f).trace(*args)`` → ``Traced`` → ``.lower()`` → ``Lowered``
→ ``.compile()`` → ``Compiled``. Arguments may be arrays or ``ShapeDtypeStruct``s; static arguments are
given at ``trace``/``lower`` and left out when the ``Compiled`` is called, as JAX does.

``Lowered.as_text()`` is the jaxpr cranax's core receives (its input IR; JAX's is StableHLO);
``Compiled.as_text()`` the optimized program and its fused kernels. ``cost_analysis()`` counts what the
program does (``flops``: one per element of each arithmetic equation and ``2*m*n*k`` per product;
``transcendentals``: one per element of exp/log/trig/... equations; ``bytes accessed``: bytes of the
program's inputs and outputs); ``memory_analysis()`` reports the argument, output and temporary buffer sizes
of the compiled plan.
"""
import dataclasses
import typing

import numpy as np

from . import _core, _monitoring
from .array import Array, _arg_buffer, _default_device, _to_buffer, incompatible_devices, is_incompatible_devices
from .core import ShapedArray, get_aval
from .hlo_text import HloComputation
from .interpreters import lowering
from .jaxpr import ClosedJaxpr
from .primitives import jit as _jit
from ._pytree import tree_flatten, tree_unflatten
from ._layout import row_major
from .sharding import SingleDeviceSharding

__all__ = ["Wrapped", "Traced", "Lowered", "Compiled", "ArgInfo", "CompiledMemoryStats", "CompilerOptions"]

# ``Lowered.compile(compiler_options=...)``: option name -> value, as JAX's type alias.
CompilerOptions = dict[str, typing.Union[str, bool]]


class Wrapped:
    """A function transformed by ``jit`` (``jax.stages.Wrapped``): callable, with ``trace`` and ``lower``."""


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """The abstract value of one argument of a lowered function and whether it is donated."""
    _aval: ShapedArray
    donated: bool

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype


@dataclasses.dataclass(frozen=True)
class CompiledMemoryStats:
    """Buffer sizes of a compiled program (``Compiled.memory_analysis()``); the host_* fields are 0 (one
    memory space) and ``generated_code_size_in_bytes`` is 0 (as JAX reports on CPU)."""
    generated_code_size_in_bytes: int
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


def _nbytes(a):
    return int(np.prod(a.shape, dtype=np.int64)) * np.dtype(a.dtype).itemsize


_TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
                   "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "logistic", "erf", "erfc", "erf_inv", "pow",
                   "sqrt", "rsqrt", "cbrt", "lgamma", "digamma"}
_NO_FLOPS = {"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "slice", "rev", "copy",
             "convert_element_type", "concatenate", "pad", "dynamic_slice", "dynamic_update_slice", "gather",
             "iota", "select_n", "bitcast_convert_type", "pjit", "jit"}


def _cost(jaxpr):
    flops = trans = 0.0
    for e in jaxpr.eqns:
        name = e.primitive.name
        subs = [v for v in e.params.values() if isinstance(v, (ClosedJaxpr,))]
        for s in subs:
            f, t = _cost(s.jaxpr)
            flops, trans = flops + f, trans + t
        if name == "dot_general":
            (lc, _), _ = e.params["dimension_numbers"]
            k = int(np.prod([e.invars[0].aval.shape[d] for d in lc], dtype=np.int64))
            flops += 2.0 * sum(int(np.prod(v.aval.shape, dtype=np.int64)) for v in e.outvars) * k
            continue
        n = sum(int(np.prod(v.aval.shape, dtype=np.int64)) for v in e.outvars)
        if name in _TRANSCENDENTAL:
            trans += n
        elif name not in _NO_FLOPS and not subs:
            flops += n
    return flops, trans


class Traced:
    """A traced function (``jax.stages.Traced``): ``jaxpr`` (the ClosedJaxpr), ``out_info`` (a pytree of
    ``ShapeDtypeStruct``), ``args_info``, ``fun_name``, and ``lower()``."""

    def __init__(self, wrapped, closed, out_tree, in_tree, statics, arg_names, shape_dtype_struct):
        self._wrapped = wrapped
        self.jaxpr = closed
        self._prog = None
        self.out_tree = out_tree
        self.in_tree = in_tree
        self._statics = statics
        self._arg_names = arg_names
        self._sds = shape_dtype_struct

    @property
    def _program(self):
        """``jaxpr`` as lowering takes it (nested jits' consts hoisted to program inputs)."""
        if self._prog is None:
            self._prog = _jit.program_jaxpr(self.jaxpr)
        return self._prog

    @property
    def fun_name(self):
        return self._wrapped._name

    @property
    def args_info(self):
        return tree_unflatten(self.in_tree, [ArgInfo(a, False) for a in self.jaxpr.in_avals])

    @property
    def out_info(self):
        return tree_unflatten(self.out_tree, [self._sds(a.shape, a.dtype, a.weak_type) for a in self.jaxpr.out_avals])

    @property
    def in_avals(self):
        """``((avals of the positional arguments), {keyword: aval})`` (``jax.stages.Traced.in_avals``)."""
        return tree_unflatten(self.in_tree, list(self.jaxpr.in_avals))

    @property
    def out_avals(self):
        return tree_unflatten(self.out_tree, list(self.jaxpr.out_avals))

    @property
    def donate_argnums(self):
        return self._wrapped._donate_argnums

    def lower(self, *, lowering_platforms=None):
        return Lowered(self)


class Lowered:
    """A function lowered for one signature (``jax.stages.Lowered``): ``as_text()`` is its jaxpr (cranax's
    input IR), ``compiler_ir("hlo")`` its HLO-form text, ``compile()`` the executable; ``in_tree``,
    ``out_tree``, ``args_info``, ``cost_analysis()``."""

    def __init__(self, traced):
        self._traced = traced

    in_tree = property(lambda self: self._traced.in_tree)
    out_tree = property(lambda self: self._traced.out_tree)
    args_info = property(lambda self: self._traced.args_info)
    in_avals = property(lambda self: self._traced.in_avals)
    donate_argnums = property(lambda self: self._traced.donate_argnums)

    @property
    def out_info(self):
        # JAX's lowered out_info drops the weak type (the traced one keeps it)
        t = self._traced
        return tree_unflatten(t.out_tree, [t._sds(a.shape, a.dtype) for a in t.jaxpr.out_avals])

    def as_text(self, dialect=None, **_):
        """``"hlo"``: the HLO-form text (``compiler_ir("hlo").as_hlo_text()``); otherwise the jaxpr (cranax has
        no StableHLO, JAX's default)."""
        if dialect == "hlo":
            return self.compiler_ir("hlo").as_hlo_text()
        return str(self._traced.jaxpr)

    def compiler_ir(self, dialect=None):
        """The program in a compiler's representation (``jax.stages.Lowered.compiler_ir``). ``"hlo"``: an
        object whose ``as_hlo_text()`` is the program in HLO form (see ``cranax.hlo_text``); ``"stablehlo"``
        (the default): None, which JAX returns when a backend has no such representation (cranax has no
        MLIR); another name: ValueError ``unknown dialect: NAME``, as JAX."""
        if dialect is None:
            dialect = "stablehlo"
        if dialect == "hlo":
            return HloComputation(self._traced._program, self._traced._wrapped._name, self._traced._arg_names)
        if dialect == "stablehlo":
            return None
        raise ValueError(f"unknown dialect: {dialect}")

    def cost_analysis(self):
        """``{'flops', 'transcendentals', 'bytes accessed'}`` of the program (see the module docs)."""
        j = self._traced.jaxpr
        flops, trans = _cost(j.jaxpr)
        moved = sum(_nbytes(a) for a in j.in_avals) + sum(_nbytes(a) for a in j.out_avals)
        return {"flops": flops, "transcendentals": trans, "bytes accessed": float(moved)}

    def compile(self, compiler_options=None):
        t = self._traced
        name = t._wrapped._name
        with _monitoring.timed(_monitoring.LOWERING_EVENT, f"jit({name})"):
            wire = lowering.lower_jaxpr(t._program, name)
        with _monitoring.timed(_monitoring.BACKEND_COMPILE_EVENT, f"jit({name})"):
            exe = lowering.executable(wire, t._program)
        return Compiled(t, exe, self)


def _tree_mismatch(old, new):
    """JAX's text for a call whose argument structure differs from the compiled one."""
    old_args, old_kw = tree_unflatten(old, list(range(old.num_leaves)))
    new_args, new_kw = tree_unflatten(new, list(range(new.num_leaves)))
    if len(old_args) != len(new_args):
        detail = (f"at args, seen tuple of length {len(old_args)} but now given tuple of length {len(new_args)}, "
                  "so the lengths do not match")
    elif set(old_kw) != set(new_kw):
        word = lambda n: "child" if n <= 1 else "children"
        diff = set(old_kw) ^ set(new_kw)
        detail = (f"at kwargs, seen <class 'dict'> with {len(old_kw)} {word(len(old_kw))} but now given <class "
                  f"'dict'> with {len(new_kw)} {word(len(new_kw))}, so the numbers of children do not match, with "
                  f"the symmetric difference of key sets: {diff}")
    else:
        detail = f"the structure {old} was compiled, {new} given"
    return ("Function compiled with input pytree does not match the input pytree it was called with. There are 1 "
            f"mismatches, including:\n    * {detail}")


class Compiled:
    """A compiled executable (``jax.stages.Compiled``). Called with the dynamic arguments only (static ones
    were fixed at ``trace``/``lower``); raises TypeError, with JAX's texts, for another argument structure
    or other shapes/dtypes. ``as_text()`` shows the optimized program and its fused kernels."""

    def __init__(self, traced, exe, lowered):
        self._traced = traced
        self._exe = exe
        self._lowered = lowered
        self._const_bufs = [c._buf if type(c) is Array else _to_buffer(c, get_aval(c)) for c in traced._program.consts]

    in_tree = property(lambda self: self._traced.in_tree)
    out_tree = property(lambda self: self._traced.out_tree)
    args_info = property(lambda self: self._traced.args_info)
    in_avals = property(lambda self: self._traced.in_avals)
    donate_argnums = property(lambda self: self._traced.donate_argnums)

    @property
    def out_info(self):
        """The outputs as JAX's compiled ``out_info``: shape, dtype, the device's sharding and the row-major
        layout (``format=Layout(major_to_minor=(0, 1), tiling=(), ...)``), no weak type."""
        s = SingleDeviceSharding(_default_device())
        return tree_unflatten(self.out_tree, [self._traced._sds(a.shape, a.dtype, sharding=row_major(a.shape, s))
                                              for a in self._traced.jaxpr.out_avals])

    @property
    def input_formats(self):
        """Every input's ``Format`` (row-major, on the default device), an ``(args, kwargs)`` tree."""
        s = SingleDeviceSharding(_default_device())
        return tree_unflatten(self.in_tree, [row_major(len(a.shape), s) for a in tree_flatten(self.args_info)[0]])

    @property
    def output_formats(self):
        s = SingleDeviceSharding(_default_device())
        return tree_unflatten(self.out_tree, [row_major(a.shape, s) for a in self._traced.jaxpr.out_avals])

    @property
    def input_shardings(self):
        """Every input on the default device, as JAX's ``SingleDeviceSharding`` (``(args, kwargs)`` tree)."""
        s = SingleDeviceSharding(_default_device())
        return tree_unflatten(self.in_tree, [s] * self.in_tree.num_leaves)

    @property
    def output_shardings(self):
        s = SingleDeviceSharding(_default_device())
        return tree_unflatten(self.out_tree, [s] * self.out_tree.num_leaves)

    def as_text(self):
        return self._exe.as_text()

    def cost_analysis(self):
        return self._lowered.cost_analysis()

    def memory_analysis(self):
        j = self._traced.jaxpr
        return CompiledMemoryStats(
            generated_code_size_in_bytes=0,
            argument_size_in_bytes=sum(_nbytes(a) for a in j.in_avals),
            output_size_in_bytes=sum(_nbytes(a) for a in j.out_avals),
            alias_size_in_bytes=0,
            temp_size_in_bytes=int(self._exe.temp_bytes))

    def __call__(self, *args, **kwargs):
        t = self._traced
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != t.in_tree:
            raise TypeError(_tree_mismatch(t.in_tree, in_tree))
        avals = t.jaxpr.in_avals
        bad = []
        for i, (x, av) in enumerate(zip(leaves, avals)):
            got = get_aval(x)
            if got.shape != av.shape or got.dtype != av.dtype:
                name = t._arg_names[i] if i < len(t._arg_names) else f"args[{i}]"
                bad.append(f"Argument '{name}' compiled with {av.str_short(short_dtypes=False)} and called with "
                           f"{got.str_short(short_dtypes=False)}")
        if bad:
            raise TypeError("Argument types differ from the types for which this computation was compiled. Perhaps "
                            "you are calling the compiled executable with a different enable_x64 mode than when it "
                            "was AOT compiled? The mismatches are:\n" + "\n".join(bad))
        bufs = self._const_bufs + [x._buf if type(x) is Array else _arg_buffer(x, av) for x, av in zip(leaves, avals)]
        try:
            outs = self._exe.execute(bufs)
        except ValueError as e:
            if is_incompatible_devices(e):
                name = getattr(t._wrapped._fun, "__qualname__", t.fun_name)
                e.args = (incompatible_devices(name, t._arg_names, leaves) or e.args[0],)
            raise
        res = [Array._from_buffer(b, av) for b, av in zip(outs, t.jaxpr.out_avals)]
        return tree_unflatten(t.out_tree, res)
