"""``cranax.scipy.integrate``: mirrors ``jax.scipy.integrate``."""

__all__ = []
