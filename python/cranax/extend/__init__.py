"""``cranax.extend``: the API for extending cranax, as ``jax.extend`` (``core``: primitives and jaxprs,
``linear_util``: wrapped functions)."""
from . import core
from . import linear_util

__all__ = ["core", "linear_util"]
