"""``jax.ref``: mutable array references (``jax.new_ref``, ``ref[idx]`` reads and writes, ``jax.freeze``).

The box and its discharge live in ``primitives/state.py``; this module is the public face. Mirrors
``jax.ref`` of JAX 0.10.2 (``AbstractRef``, ``Ref``, ``new_ref``, ``empty_ref``, ``free_ref``, ``freeze``,
``get``, ``set``, ``swap``, ``addupdate``).
"""

from .primitives.state import AbstractRef, Ref, addupdate, freeze, get, new_ref, set, swap  # noqa: A004
from .primitives import structural as _st

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set",
           "swap"]


def empty_ref(ty, *, memory_space=None):
    """A new ``Ref`` of type ``ty`` (anything with ``shape`` and ``dtype``: a ShapeDtypeStruct, an aval),
    holding zeros (JAX leaves it uninitialised: read it only after writing it). Mirrors ``jax.empty_ref``."""
    return new_ref(_st.full(tuple(ty.shape), 0, ty.dtype), memory_space=memory_space)


def free_ref(ref):
    """Ends ``ref``'s use (JAX frees its buffer); reading its value afterwards is not meaningful. Returns None.
    Mirrors ``jax.free_ref``."""
    freeze(ref)
