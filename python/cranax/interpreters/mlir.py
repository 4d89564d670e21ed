"""``jax.interpreters.mlir`` as far as user primitives need it: ``register_lowering(prim, lower_fun(f))``.

cranax has no MLIR: a primitive's lowering is a function written with cranax operations, whose jaxpr the
lowering (``interpreters/lowering.py``) inlines in place of the primitive's equation (``Primitive.inline_jaxpr``,
the hook call-like primitives use). A rule that is not a ``lower_fun`` result (hand-written MLIR) is recorded
and raises ``NotImplementedError`` when a program holding the primitive is compiled.
"""
from ..jaxpr import ClosedJaxpr, Jaxpr, Literal
from .partial_eval import trace_to_jaxpr

__all__ = ["lower_fun", "register_lowering", "LoweredFun"]


class LoweredFun:
    """What ``lower_fun(fun, multiple_results)`` returns: ``fun`` (cranax operations on the primitive's operands
    and params) to be inlined in place of the primitive's equations."""

    __slots__ = ("fun", "multiple_results")

    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = multiple_results

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError("cranax lowers lower_fun(...) rules by inlining their jaxpr; they are not "
                                  "called with an MLIR lowering context")


def lower_fun(fun, multiple_results=True):
    """A lowering rule that computes the primitive as ``fun(*operands, **params)`` (``fun`` returns a list when
    ``multiple_results``). Mirrors ``jax.interpreters.mlir.lower_fun``."""
    return LoweredFun(fun, multiple_results)


def _inliner(prim, rule):
    def inline_jaxpr(eqn):
        if not isinstance(rule, LoweredFun):
            raise NotImplementedError(f"MLIR translation rule for primitive '{prim.name}' is an MLIR rule, "
                                      f"which cranax cannot lower; register mlir.lower_fun(f) instead")
        params = eqn.params

        def flat(*args):
            out = rule.fun(*args, **params)
            return list(out) if rule.multiple_results else [out]

        closed = trace_to_jaxpr(flat, [a.aval for a in eqn.invars])
        j = closed.jaxpr
        consts = []
        for v, c in zip(j.constvars, closed.consts):
            if getattr(c, "shape", ()) != ():
                raise NotImplementedError(f"the lowering of primitive '{prim.name}' closes over an array "
                                          f"constant of shape {c.shape}; pass it as an operand")
            consts.append(Literal(c._value_scalar() if hasattr(c, "_value_scalar") else c, v.aval))
        inner = ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns), [])
        return inner, consts + list(eqn.invars)
    return inline_jaxpr


def register_lowering(prim, rule, platform=None):
    """Registers ``rule`` (from ``lower_fun``) as ``prim``'s lowering on every platform (cranax's CPU and GPU
    backends share one). Returns ``rule``. Mirrors ``jax.interpreters.mlir.register_lowering``."""
    prim.inline_jaxpr = _inliner(prim, rule)
    return rule
