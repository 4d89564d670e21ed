"""``cranax.scipy.spatial``: mirrors ``jax.scipy.spatial``."""

__all__ = []
