"""``cranax.scipy``: SciPy-style functions built on cranax's primitives. Mirrors ``jax.scipy``; each
submodule mirrors the ``jax.scipy`` submodule of the same name."""
from . import cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, spatial, special, stats

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "spatial",
           "special", "stats"]
