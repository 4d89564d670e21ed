"""``cranax.scipy.linalg``: mirrors ``jax.scipy.linalg``."""

__all__ = []
