"""``lax.Precision``: the precision a ``dot_general``/``conv`` asks of the backend. cranax's CPU and GPU
kernels compute float32 products in float32 at every setting, so all three values give the same results
(JAX's CPU backend does the same). Also the other names of the dot API: ``DotAlgorithm``,
``DotAlgorithmPreset``, ``PrecisionLike``, ``DotDimensionNumbers``, ``AccuracyMode``, ``Tolerance``."""
import enum
from typing import NamedTuple as _NamedTuple, Sequence as _Sequence, Union as _Union

from ..primitives.precision import DotAlgorithmPreset, Precision   # their home: dot_general records them

__all__ = ["Precision", "AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers",
           "PrecisionLike", "Tolerance"]


class AccuracyMode(enum.Enum):
    """How accurately a transcendental must be computed (``Tolerance`` or the fastest). Mirrors
    ``jax.lax.AccuracyMode``."""
    HIGHEST = 1
    DEFAULT = 2


class DotAlgorithm(_NamedTuple):
    """The storage and accumulation types of a dot (``precision=``). cranax accumulates float32 dots in
    float32 and float64 in float64 whatever is asked. Mirrors ``jax.lax.DotAlgorithm``."""
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


DotDimensionNumbers = tuple[tuple[_Sequence[int], _Sequence[int]], tuple[_Sequence[int], _Sequence[int]]]
PrecisionLike = _Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm,
                       DotAlgorithmPreset]


class Tolerance:
    """The accuracy asked of a transcendental (at least one of ``atol``, ``rtol``, ``ulps``; ValueError
    otherwise). Mirrors ``jax.lax.Tolerance``."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps
