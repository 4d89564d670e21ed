"""``cranax.scipy.spatial``: mirrors ``jax.scipy.spatial``."""
from . import transform

__all__ = ["transform"]
