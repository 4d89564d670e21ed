"""``lax.Precision``: the precision a ``dot_general``/``conv`` asks of the backend. cranax's CPU and GPU
kernels compute float32 products in float32 at every setting, so all three values give the same results
(JAX's CPU backend does the same)."""
import enum

__all__ = ["Precision"]


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
