"""``cranax.scipy``: SciPy-style functions built on cranax's primitives. Mirrors ``jax.scipy``; each
submodule mirrors the ``jax.scipy`` submodule of the same name. As JAX's, ``optimize`` and ``spatial`` are
imported by name (``import cranax.scipy.optimize``), not with the package."""
from . import cluster, fft, integrate, interpolate, linalg, ndimage, signal, sparse, special, stats

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal", "sparse", "special", "stats"]
