"""``cranax.scipy.special``: mirrors ``jax.scipy.special``."""

__all__ = []
