"""``cranax.scipy.signal``: mirrors ``jax.scipy.signal``."""

__all__ = []
