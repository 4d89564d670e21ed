"""``cranax.scipy.ndimage``: mirrors ``jax.scipy.ndimage``."""

__all__ = []
