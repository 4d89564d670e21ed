"""``lax.Precision``: the precision a ``dot_general``/``conv`` asks of the backend. cranax's CPU and GPU
kernels compute float32 products in float32 at every setting, so all three values give the same results
(JAX's CPU backend does the same); the setting is recorded in the jaxpr as JAX records it."""
import enum

from ..config import config

__all__ = ["Precision", "canonicalize_precision"]


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
    takes ``jax_default_matmul_precision`` (when set). Raises ValueError for anything else, and
    NotImplementedError for the dot-algorithm presets (``'BF16_BF16_F32'``...), which cranax does not have."""
    if precision is None:
        precision = config.jax_default_matmul_precision
        if precision is None:
            return None
        if Precision._missing_(precision) is None:
            raise NotImplementedError(f"jax_default_matmul_precision={precision!r}: cranax has no dot algorithm "
                                      "presets; use 'default', 'high' or 'highest'")
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and \
            all(isinstance(p, Precision) for p in precision):
        return tuple(precision)
    p = _one(precision, precision)
    return (p, p)
