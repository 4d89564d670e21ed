"""``jax.core`` under the alias. JAX 0.10.2 keeps ``ShapedArray``, ``Tracer``, ``Trace``, ``eval_jaxpr`` and a
few more here; libraries still reach older names (equinox: ``jax.core.get_aval``, ``jax.core.mapped_aval``;
chex/equinox: ``jax.core.Tracer``; flax: ``jax.core.Primitive``...), which come from ``cranax.extend.core``.
"""
import numpy as _np

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


from ..extend.core import ensure_compile_time_eval  # noqa: F401,E402

eval_context = ensure_compile_time_eval


# tensorflow-probability's JAX substrate (distrax) copies the ``np.ndarray`` entry for its ndarray subclass;
# cranax's get_aval accepts every ndarray subclass, so the table is only read, never consulted.
pytype_aval_mappings = {_np.ndarray: get_aval}
