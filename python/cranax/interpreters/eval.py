"""``eval_jaxpr``: the one loop every interpreter reuses — binds each equation's primitive on the current
trace, so evaluating a jaxpr under a transformation transforms it."""
from ..core import TypedScalar
from ..jaxpr import Literal


def eval_jaxpr(jaxpr, consts, *args):
    """Evaluates ``jaxpr`` (a Jaxpr) with ``consts`` for its constvars and ``args`` for its invars."""
    env = {}

    def read(a):
        return a.val if isinstance(a, Literal) else env[a]

    def read_in(a, prim):
        # a weakly typed literal stays weak as an operand (as JAX's literals do), so re-tracing a jaxpr
        # (vmap of a loop body) keeps weak results weak; user code (custom rules, callbacks) gets the value
        if isinstance(a, Literal):
            weak = a.aval.weak_type and not prim.operands_reach_user_code
            return TypedScalar(a.val, a.aval, a.py) if weak else a.val
        return env[a]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read_in(a, eqn.primitive) for a in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        else:
            env[eqn.outvars[0]] = outs
    return [read(a) for a in jaxpr.outvars]
