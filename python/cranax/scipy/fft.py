"""``cranax.scipy.fft``: mirrors ``jax.scipy.fft``."""

__all__ = []
