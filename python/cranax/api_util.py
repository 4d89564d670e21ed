"""``cranax.api_util``: helpers for code that builds on transformations, as ``jax.api_util`` (``safe_map``,
``shaped_abstractify``)."""
from ._util import safe_map
from .core import get_aval

__all__ = ["safe_map", "shaped_abstractify"]




def shaped_abstractify(x):
    """The ``ShapedArray`` of an array, tracer, NumPy value or Python scalar."""
    return get_aval(x)
