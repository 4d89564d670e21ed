"""``lax.Precision``: the precision a ``dot_general``/``conv`` asks of the backend. cranax's CPU and GPU
kernels compute float32 products in float32 at every setting, so all three values give the same results
(JAX's CPU backend does the same); the setting is recorded in the jaxpr as JAX records it."""
import enum

from ..config import config

__all__ = ["Precision", "DotAlgorithmPreset", "canonicalize_precision", "check_cpu_algorithm"]


class Precision(enum.Enum):
    """``DEFAULT`` (0), ``HIGH`` (1), ``HIGHEST`` (2); also built from JAX's names ``'default'``/``'bfloat16'``,
    ``'high'``/``'tensorfloat32'``, ``'highest'``/``'float32'``. ``str`` gives the member name. Mirrors
    ``jax.lax.Precision``."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "bfloat16": cls.DEFAULT, "fastest": cls.DEFAULT,
                 "high": cls.HIGH, "tensorfloat32": cls.HIGH, "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"Precision.{self.name}"


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (``precision=``); a jaxpr records the preset (printed by name). On the CPU JAX
    0.10.2 runs DEFAULT, F16_F16_F16, F32_F32_F32, F64_F64_F64 and BF16_BF16_F32(_X3/_X6) as the plain
    product (so does cranax) and refuses the others when compiling (``check_cpu_algorithm``). Mirrors
    ``jax.lax.DotAlgorithmPreset``."""
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


_CPU_PRESETS = frozenset(DotAlgorithmPreset[n] for n in (
    "DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"))


def check_cpu_algorithm(precision):
    """JAX's refusal, when compiling for the CPU, of a preset its CPU backend does not run."""
    if isinstance(precision, DotAlgorithmPreset) and precision not in _CPU_PRESETS:
        raise ValueError(f"The precision '{precision}' is not supported by dot_general on CPU")


def _one(p, given):
    if isinstance(p, Precision):
        return p
    if isinstance(p, str):
        out = Precision._missing_(p)
        if out is not None:
            return out
    raise ValueError("Precision argument must be one of:\n- None,\n- a string in ['highest', 'float32', 'high', "
                     "'bfloat16_3x', 'tensorfloat32', 'default', 'bfloat16', 'fastest', None],\n- a lax.Precision "
                     "value,\n- a tuple of two lax.Precision values or strings,\n- a lax.DotAlgorithmPreset or the "
                     f"name of one of these presets, or\n- a lax.DotAlgorithm value;\nbut got {given}.")


def canonicalize_precision(precision):
    """``precision`` of a ``dot_general`` as its jaxpr records it: None, or a pair of ``Precision``s. None
    takes ``jax_default_matmul_precision`` (when set). A dot-algorithm preset (``'BF16_BF16_F32'``, or a
    ``DotAlgorithmPreset``) is kept as the preset. Raises ValueError for anything else."""
    if precision is None:
        precision = config.jax_default_matmul_precision
        if precision is None:
            return None
    if isinstance(precision, DotAlgorithmPreset):
        return precision
    if isinstance(precision, str) and Precision._missing_(precision) is None and \
            precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and \
            all(isinstance(p, Precision) for p in precision):
        return tuple(precision)
    p = _one(precision, precision)
    return (p, p)
