"""``lax.Precision``: its home is :mod:`cranax.primitives.precision` (``dot_general`` records it)."""
from ..primitives.precision import Precision

__all__ = ["Precision"]
