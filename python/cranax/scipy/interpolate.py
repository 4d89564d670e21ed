"""``cranax.scipy.interpolate``: mirrors ``jax.scipy.interpolate``."""

__all__ = []
