"""``cranax.scipy.cluster``: mirrors ``jax.scipy.cluster``."""
from . import vq

__all__ = ["vq"]
