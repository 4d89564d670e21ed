"""``cranax.image``: image resampling, ``resize`` and ``scale_and_translate``. Mirrors ``jax.image``.

A face: the functions live in ``_scale``."""
from ._scale import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
