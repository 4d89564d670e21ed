"""``jax.experimental.layout``: array layouts. cranax arrays are always row-major and dense: ``Layout`` and
``Format`` are recorded, never applied (flax imports ``Format``)."""
__all__ = ["Layout", "Format", "with_layout_constraint"]


from .._layout import Format, Layout  # noqa: F401  (their home: a leaf module the stages import)


def with_layout_constraint(x, layout):
    return x
