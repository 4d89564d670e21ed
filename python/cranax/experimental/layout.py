"""``jax.experimental.layout``: array layouts. cranax arrays are always row-major and dense: ``Layout`` and
``Format`` are recorded, never applied (flax imports ``Format``)."""
__all__ = ["Layout", "Format", "with_layout_constraint"]


class Layout:
    """An array's memory layout (``major_to_minor`` dimension order)."""

    def __init__(self, major_to_minor=None, tiling=(), *, sub_byte_element_size_in_bits=0):
        self.major_to_minor = None if major_to_minor is None else tuple(major_to_minor)
        self.tiling = tuple(tiling)

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor})"


class Format:
    """A layout with a sharding."""

    def __init__(self, layout=None, sharding=None):
        self.layout = layout
        self.sharding = sharding

    def __repr__(self):
        return f"Format({self.layout}, {self.sharding})"


def with_layout_constraint(x, layout):
    return x
