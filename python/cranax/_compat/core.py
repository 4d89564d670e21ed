"""``jax.core`` under the alias. JAX 0.10.2 keeps ``ShapedArray``, ``Tracer``, ``Trace``, ``eval_jaxpr`` and a
few more here; libraries still reach older names (equinox: ``jax.core.get_aval``, ``jax.core.mapped_aval``;
chex/equinox: ``jax.core.Tracer``; flax: ``jax.core.Primitive``...), which come from ``cranax.extend.core``.
"""
from contextlib import contextmanager

from ..core import ShapedArray, Trace, Tracer, get_aval, concrete_or_error, typeof, set_current_trace
from ..extend.core import *  # noqa: F401,F403  (the extension API: Primitive, Jaxpr, eval_jaxpr...)
from ..extend.core import eval_jaxpr, jaxpr_as_fun, Primitive, mapped_aval, unmapped_aval  # noqa: F401

AbstractValue = ShapedArray
Value = object
Atom = object
ParamDict = dict
ConcreteArray = ShapedArray


def raise_to_shaped(aval, weak_type=None):
    """``aval`` itself (every cranax aval is shaped); old JAX code calls it (equinox's fallback path)."""
    return aval if weak_type is None else aval.update(weak_type=weak_type)


@contextmanager
def ensure_compile_time_eval():
    """Runs the block eagerly: cranax's eval trace (``with jax.ensure_compile_time_eval():``)."""
    with set_current_trace(None):
        yield


eval_context = ensure_compile_time_eval
