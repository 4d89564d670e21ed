"""``cranax.typing``: annotations for functions that take arrays, as ``jax.typing``.

``ArrayLike``: what a cranax function accepts as an array (a cranax ``Array``, a NumPy array or scalar, a
Python scalar). ``DTypeLike``: what it accepts as a dtype (a name, a type, a ``numpy.dtype``, or anything
with a ``dtype`` attribute). Both are for static checkers (``typing.Union``s, not runtime classes).
"""
import typing as _typing

import numpy as _np

from .array import Array as _Array

__all__ = ["ArrayLike", "DTypeLike"]


@_typing.runtime_checkable
class SupportsDType(_typing.Protocol):
    """Anything with a ``dtype`` attribute."""

    @property
    def dtype(self) -> _np.dtype: ...


ArrayLike = _typing.Union[_Array, _np.ndarray, _np.bool_, _np.number, bool, int, float, complex]
DTypeLike = _typing.Union[str, type[_typing.Any], _np.dtype, SupportsDType]

del SupportsDType  # reachable through DTypeLike; jax.typing's namespace holds only the two aliases
