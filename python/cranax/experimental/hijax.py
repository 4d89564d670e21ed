"""``jax.experimental.hijax``: the names of JAX's "high-level types" extension, for libraries that define
their hi-types at import time (flax.nnx's ``variablelib`` subclasses ``HiPrimitive``/``MutableHiType`` and
registers a hi-type, used only when its ``flax_hijax_variable`` / ref mode is on).

cranax's tracers carry no hi-types: every class and decorator here can be defined and instantiated, but
binding a ``HiPrimitive`` or tracing a registered hi-type raises ``NotImplementedError`` naming it, so a
program that needs them fails loudly instead of running differently.
"""
from ..core import ShapedArray as _ShapedArray

__all__ = ["AbstractValue", "HiPrimitive", "HiType", "MutableHiType", "AvalQDD", "AvalMutableQDD", "Zero",
           "aval_method", "aval_property", "control_flow_allowed_effects", "instantiate_zeros",
           "is_undefined_primal", "register_hitype"]

# The base of the abstract values a hi-type's leaves have (cranax's arrays all have ShapedArray ones).
AbstractValue = _ShapedArray


def _unsupported(what):
    raise NotImplementedError(f"jax.experimental.hijax: {what} is not supported by cranax (no hi-types)")


class HiType:
    """Base of an abstract hi-type (JAX's ``HiType``)."""
    __slots__ = ()


class MutableHiType(HiType):
    """Base of a mutable abstract hi-type (JAX's ``MutableHiType``)."""
    __slots__ = ()


class HiPrimitive:
    """A primitive over hi-types: ``HiPrimitive(name)`` builds; ``bind`` raises NotImplementedError."""

    multiple_results = False

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        _unsupported(f"binding the hi-primitive {self.name!r}")


class AvalQDD:
    """An abstract value with its quasi-dynamic data (JAX's ``AvalQDD``)."""

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD(AvalQDD):
    """An abstract value with mutable quasi-dynamic data."""


class Zero:
    """A symbolic zero tangent of abstract value ``aval`` (JAX's ``ad.Zero``)."""

    def __init__(self, aval):
        self.aval = aval


class aval_method:   # noqa: N801 — JAX's name
    """Marks a method of a hi-type's value class as also defined on its abstract type."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, obj, objtype=None):
        return self.fun if obj is None else self.fun.__get__(obj, objtype)


class aval_property(property):   # noqa: N801 — JAX's name
    """A property of a hi-type's value class also defined on its abstract type."""


class _EffectTypeSet:
    """The set of effect types allowed in control flow (JAX's ``control_flow_allowed_effects``)."""

    def __init__(self):
        self._types = set()

    def add_type(self, t):
        self._types.add(t)

    def contains(self, eff):
        return any(isinstance(eff, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()


def instantiate_zeros(x):
    """A symbolic ``Zero`` becomes an array of zeros; anything else is returned as it is."""
    if isinstance(x, Zero):
        from .. import numpy as jnp  # (at call time: the module imports below it)
        return jnp.zeros(x.aval.shape, x.aval.dtype)
    return x


def is_undefined_primal(x):
    """True for a transpose rule's undefined (linear) input; cranax passes no hi-type ones, so False."""
    return False


_hitypes = {}


def register_hitype(cls, to_aval):
    """Records ``to_aval`` as the abstraction of values of ``cls`` (cranax's tracers never call it)."""
    _hitypes[cls] = to_aval
