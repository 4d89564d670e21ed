"""``cranax.scipy.cluster``: mirrors ``jax.scipy.cluster``."""

__all__ = []
