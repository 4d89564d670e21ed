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
from ...interpreters.partial_eval import DebugInfo
from . import primitives  # noqa: F401  (jax.extend.core.primitives)

__all__ = ["Primitive", "ClosedJaxpr", "Jaxpr", "JaxprEqn", "Var", "Literal", "DropVar", "DebugInfo",
           "ShapedArray", "Trace", "Tracer", "eval_jaxpr", "jaxpr_as_fun", "new_jaxpr_eqn", "check_jaxpr",
           "concrete_or_error", "find_top_trace", "get_opaque_trace_state", "set_current_trace",
           "take_current_trace", "mapped_aval", "unmapped_aval", "no_effects", "Effect", "Effects",
           "JaxprTypeError", "primal_dtype_to_tangent_dtype", "valid_jaxtype", "gensym", "subjaxprs",
           "jaxprs_in_params", "array_types", "ensure_compile_time_eval"]


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
