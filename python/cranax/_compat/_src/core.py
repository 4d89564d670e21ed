"""``jax._src.core`` — flax (``flax.linen.fp8_ops``: ``core.ShapedArray``); the same names as ``jax.core``."""
from ..core import *  # noqa: F401,F403
from ..core import ShapedArray, Tracer, Trace, Primitive, get_aval, raise_to_shaped  # noqa: F401
from ...primitives.state import Ref  # noqa: F401,E402  (JAX's class lives here: ``jax._src.core.Ref``)
