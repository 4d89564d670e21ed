"""``jax.experimental.compilation_cache``: the persistent compilation cache (its ``compilation_cache``
submodule has ``set_cache_dir`` and ``reset_cache``)."""
from . import compilation_cache

__all__ = ["compilation_cache"]
