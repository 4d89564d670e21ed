"""``jax.extend.core``: the tracing core as JAX exposes it to extension writers — primitives, jaxprs and their
evaluation. A ``Primitive`` defined here works under ``jit``, ``grad`` and ``vmap`` once its rules are
registered JAX's way (``def_impl``/``def_abstract_eval``, ``ad.primitive_jvps``, ``ad.primitive_transposes``,
``batching.primitive_batchers``, ``mlir.register_lowering(p, mlir.lower_fun(f))``).
"""
import contextlib

from ... import core as _core
from ...core import ShapedArray, Trace, Tracer, concrete_or_error, set_current_trace, current_trace, get_aval
from ...interpreters import dispatch as _dispatch
from ...interpreters.eval import eval_jaxpr as _eval_jaxpr
from ...jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, check_jaxpr
from ...interpreters.partial_eval import DebugInfo, DynamicJaxprTrace as _DynamicJaxprTrace
from ...interpreters.batching import BatchTrace as _BatchTrace
from ...errors import InconclusiveDimensionOperation
from ...primitives.lax_composites import Token
from . import primitives  # noqa: F401  (jax.extend.core.primitives)

__all__ = ["Primitive", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Var", "Literal", "DropVar", "DebugInfo",
           "ShapedArray", "Trace", "Tracer", "eval_jaxpr", "jaxpr_as_fun", "new_jaxpr_eqn", "check_jaxpr",
           "concrete_or_error", "find_top_trace", "get_opaque_trace_state", "set_current_trace",
           "take_current_trace", "mapped_aval", "unmapped_aval", "no_effects", "Effect", "Effects",
           "JaxprTypeError", "primal_dtype_to_tangent_dtype", "valid_jaxtype", "gensym", "subjaxprs",
           "jaxprs_in_params", "array_types", "ensure_compile_time_eval", "AbstractToken", "Token",
           "CallPrimitive", "call_impl", "TraceTag", "InconclusiveDimensionOperation",
           "nonempty_axis_env_DO_NOT_USE", "unsafe_am_i_under_a_jit_DO_NOT_USE",
           "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE"]


class Effect:
    """Base class of side effects a primitive declares (cranax tracks none)."""


Effects = frozenset
no_effects = frozenset()


class JaxprTypeError(TypeError):
    """A jaxpr failed its type check."""


class Primitive(_core.Primitive):
    """A user-defined primitive, as ``jax.extend.core.Primitive(name)``. ``def_impl(f)`` gives its eager
    evaluation (default: compile the one-equation program through its registered lowering, as JAX does);
    ``def_abstract_eval(f)`` its output avals (``ShapedArray``s; a list when ``multiple_results``);
    ``def_effectful_abstract_eval(f)`` the same returning ``(avals, effects)``. ``bind(*args, **params)``
    applies it on the current trace."""

    def __init__(self, name):
        super().__init__(name)
        self.impl = _dispatch._default_impl(self)

    def def_effectful_abstract_eval(self, fn):
        def abstract_eval(*avals, **params):
            out, _effects = fn(*avals, **params)
            return out
        self.abstract_eval = abstract_eval
        return fn

    def def_abstract_eval(self, fn):
        def abstract_eval(*avals, **params):
            out = fn(*avals, **params)
            return list(out) if self.multiple_results else out
        self.abstract_eval = abstract_eval
        return fn

    def inline_jaxpr(self, eqn):
        raise NotImplementedError(f"MLIR translation rule for primitive '{self.name}' not found for platform cpu")

    def bind_with_trace(self, trace, args, params):
        with set_current_trace(trace):
            return self.bind(*args, **params)


def eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True):
    """Evaluates ``jaxpr`` (a ``Jaxpr``) on the current trace with ``consts`` for its constvars; returns the
    list of outputs. Mirrors ``jax.extend.core.eval_jaxpr``."""
    return _eval_jaxpr(jaxpr, consts, *args)


def jaxpr_as_fun(closed_jaxpr, *args):
    """``closed_jaxpr`` as a function of its invars returning the list of outputs; with ``args``, its value at
    them. Mirrors ``jax.core.jaxpr_as_fun``."""
    def fun(*a):
        return _eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *a)
    return fun(*args) if args else fun


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None, ctx=None):
    """A ``JaxprEqn``. Mirrors ``jax.extend.core.new_jaxpr_eqn``."""
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params))


def gensym(suffix=""):
    """A function making fresh ``Var``s from avals."""
    return lambda aval: Var(aval)


def find_top_trace(xs):
    """The trace of the innermost transformation among ``xs``'s tracers (the current trace when one of them
    belongs to it, else the eval trace)."""
    cur = current_trace()
    traces = [x._trace for x in xs if isinstance(x, Tracer)]
    if not traces or any(t is cur for t in traces):
        return cur
    return traces[-1]


class _OpaqueTraceState:
    __slots__ = ("_trace",)

    def __init__(self, trace):
        self._trace = trace

    def __eq__(self, other):
        return isinstance(other, _OpaqueTraceState) and other._trace is self._trace

    def __hash__(self):
        return id(self._trace)


def get_opaque_trace_state(convention=None):
    """An opaque value equal to another one only when taken under the same trace."""
    return _OpaqueTraceState(current_trace())


class take_current_trace:
    """Context manager: yields the current trace and runs the block under the eval trace."""

    def __enter__(self):
        self._trace = current_trace()
        self._cm = set_current_trace(None)
        self._cm.__enter__()
        return self._trace

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def mapped_aval(size, axis, aval):
    """``aval`` with dimension ``axis`` (of length ``size``) removed; ``axis=None`` leaves it."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    if shape[axis] != size:
        raise ValueError(f"mapped axis {axis} of {aval} has size {shape[axis]}, not {size}")
    del shape[axis]
    return aval.update(shape=tuple(shape))


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """``aval`` with a dimension of length ``size`` inserted at ``axis``; ``axis=None`` leaves it."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return aval.update(shape=tuple(shape))


def primal_dtype_to_tangent_dtype(dtype):
    """The tangent dtype of a primal dtype (cranax gives integer and bool values integer-typed zero
    tangents rather than float0)."""
    return dtype


def valid_jaxtype(x):
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


def subjaxprs(jaxpr):
    """The jaxprs nested in ``jaxpr``'s equations' params (one level)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def jaxprs_in_params(params):
    out = []
    for v in params.values():
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(x, ClosedJaxpr):
                out.append(x.jaxpr)
            elif isinstance(x, Jaxpr):
                out.append(x)
    return out


array_types = set()


class _CompileTimeEvalTrace(Trace):
    """The trace of an ``ensure_compile_time_eval`` block: a primitive on concrete values runs at once; one
    with a tracer operand goes to that tracer's trace (so traced values stay traced, as in JAX)."""

    def __init__(self, outer):
        super().__init__()
        self.outer = outer

    def process_primitive(self, prim, args, params):
        traces = [a._trace for a in args if isinstance(a, Tracer)]
        if not traces:
            return _core.EVAL.process_primitive(prim, args, params)
        trace = self.outer if any(t is self.outer for t in traces) else traces[-1]
        with set_current_trace(trace):
            return trace.process_primitive(prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Within the block, operations on concrete values compute at once, even inside ``jit`` (their results
    are concrete, so Python control flow can use them); operations on traced values are traced as usual.
    Mirrors ``jax.ensure_compile_time_eval``."""
    outer = _core._state.trace
    with set_current_trace(_CompileTimeEvalTrace(outer) if outer is not None else None):
        yield


class AbstractToken:
    """The abstract value of a ``Token`` (``lax.create_token``); prints as ``Tok`` in jaxprs. Mirrors
    ``jax.extend.core.AbstractToken``."""

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return "Tok"

    def to_tangent_aval(self):
        return self

    def to_ct_aval(self):
        return self

    def __eq__(self, other):
        return isinstance(other, AbstractToken)

    def __hash__(self):
        return hash(AbstractToken)

    def __repr__(self):
        return "AbstractToken()"


class TraceTag:
    """A tag identifying a set of traces for a transformation; every tag equals every other one (as in JAX,
    where the tag only matters for caching). Mirrors ``jax.extend.core.TraceTag``."""

    def __hash__(self):
        return hash(TraceTag)

    def __eq__(self, other):
        return isinstance(other, TraceTag)


def call_impl(f, *args, **params):
    """Calls the wrapped function ``f`` (a ``linear_util.WrappedFun``) on ``args``; ``params`` parameterize the
    call primitive, not the function. Mirrors ``jax.extend.core.call_impl``."""
    del params
    return f.call_wrapped(*args)


class CallPrimitive(Primitive):
    """A primitive that calls a function: ``p.bind(*args, subfuns=(fun,), **params)`` with ``fun`` a
    ``linear_util.WrappedFun`` returns the list of ``fun``'s results. Eagerly it runs the rule given with
    ``def_impl`` (usually ``call_impl``; without one, ``NotImplementedError`` as in JAX); under a transformation
    cranax inlines the call on the current trace, so every transformation sees the function's own equations
    (JAX stages a call equation and needs a lowering rule for it under ``jit``). Mirrors
    ``jax.extend.core.CallPrimitive``."""
    call_primitive = True

    def __init__(self, name):
        super().__init__(name)
        self.multiple_results = True
        self.impl = None

    def bind(self, *args, subfuns=(), **params):
        if len(subfuns) != 1:
            raise TypeError(f"{self.name}.bind takes the called function as subfuns=(fun,), got {subfuns!r}")
        fun, = subfuns
        if _core._state.trace is None:
            if self.impl is None:
                raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")
            return self.impl(fun, *args, **params)
        return list(fun.call_wrapped(*args))


def _trace_stack():
    """The current trace and the traces it runs on, innermost first."""
    t = _core._state.trace
    while t is not None:
        yield t
        t = getattr(t, "parent_trace", None) or getattr(t, "parent", None) or getattr(t, "outer", None)


def unsafe_am_i_under_a_jit_DO_NOT_USE():
    """True while tracing into a jaxpr (``jit``, ``make_jaxpr``): a staging trace is on the trace stack (not the
    partial evaluation of ``grad``). Mirrors ``jax.extend.core.unsafe_am_i_under_a_jit_DO_NOT_USE``."""
    return any(type(t) is _DynamicJaxprTrace for t in _trace_stack())


def unsafe_am_i_under_a_vmap_DO_NOT_USE():
    """True while a ``vmap``'s trace is on the trace stack. Mirrors
    ``jax.extend.core.unsafe_am_i_under_a_vmap_DO_NOT_USE``."""
    return any(isinstance(t, _BatchTrace) for t in _trace_stack())


def unsafe_get_axis_names_DO_NOT_USE():
    """The names of the enclosing named axes (``vmap``/``pmap`` ``axis_name``), outermost first. Mirrors
    ``jax.extend.core.unsafe_get_axis_names_DO_NOT_USE``."""
    return [entry[0] for entry in _core._state.axis_env]


def nonempty_axis_env_DO_NOT_USE():
    """True when some enclosing map names an axis. Mirrors ``jax.extend.core.nonempty_axis_env_DO_NOT_USE``."""
    return bool(_core._state.axis_env)
