"""``cranax.scipy.stats``: mirrors ``jax.scipy.stats`` (one submodule per distribution)."""

__all__ = []
