"""``lax.Precision``: the precision a ``dot_general``/``conv`` asks of the backend. cranax's CPU and GPU
kernels compute float32 products in float32 at every setting, so all three values give the same results
(JAX's CPU backend does the same). Also the other names of the dot API: ``DotAlgorithm``,
``DotAlgorithmPreset``, ``PrecisionLike``, ``DotDimensionNumbers``, ``AccuracyMode``, ``Tolerance``."""
import enum
from typing import NamedTuple as _NamedTuple, Sequence as _Sequence, Union as _Union

from ..primitives.precision import Precision   # its home: dot_general records it

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


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (``precision=``). Mirrors ``jax.lax.DotAlgorithmPreset``."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"

    __str__ = lambda self: self.name  # noqa: E731


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
