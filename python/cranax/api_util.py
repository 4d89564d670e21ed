"""``cranax.api_util``: helpers for code that builds on transformations, as ``jax.api_util`` (``safe_map``,
``shaped_abstractify``)."""
from .core import get_aval

__all__ = ["safe_map", "shaped_abstractify"]


def safe_map(f, *args):
    """``list(map(f, *args))`` after checking the sequences have equal lengths (``ValueError`` naming the
    first that differs; ``TypeError`` with no sequence). Mirrors ``jax.api_util.safe_map``, which is
    ``jax._src.util.safe_map``: ``cranax._compat._src.util`` re-exports this one."""
    if not args:
        raise TypeError("safe_map requires at least 2 arguments")
    args = [list(a) for a in args]
    n = len(args[0])
    for i, a in enumerate(args[1:], 2):
        if len(a) != n:
            raise ValueError(f"safe_map() argument {i} is {'shorter' if len(a) < n else 'longer'} than argument 1")
    return list(map(f, *args))


def shaped_abstractify(x):
    """The ``ShapedArray`` of an array, tracer, NumPy value or Python scalar."""
    return get_aval(x)
