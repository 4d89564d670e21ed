"""``cranax.scipy.optimize``: mirrors ``jax.scipy.optimize``."""

__all__ = []
