"""The ``cranax`` package's module ``__getattr__``: ``cranax.scipy`` is imported on first use, as JAX loads
``jax.scipy`` lazily (``import jax`` makes it reachable without loading it); any other missing name is the
usual AttributeError."""
import importlib


def __getattr__(name):
    if name == "scipy":
        return importlib.import_module("cranax.scipy")
    raise AttributeError(f"module 'cranax' has no attribute {name!r}")
