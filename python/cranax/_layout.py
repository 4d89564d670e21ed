"""``Layout`` and ``Format`` (re-exported by ``jax.experimental.layout``): a leaf module, so the AOT stages and
``ShapeDtypeStruct`` can report formats without importing the experimental package."""


class Layout:
    """An array's memory layout (``major_to_minor`` dimension order). Mirrors ``jax.experimental.layout.Layout``
    (its repr, equality and hash)."""

    def __init__(self, major_to_minor, tiling=None, *, sub_byte_element_size_in_bits=0):
        self.major_to_minor = None if major_to_minor is None else tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")


class Format:
    """A layout with a sharding. Mirrors ``jax.experimental.layout.Format``: a concrete ``Layout`` needs a
    concrete sharding."""

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError("Sharding has to be concrete when layout is of type "
                             f"{Layout!r}. Please pass a `jax.sharding.NamedSharding` or "
                             "`jax.sharding.SingleDeviceSharding` to the sharding argument. Got sharding None")
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"


def row_major(shape_or_ndim, sharding):
    """Internal: the ``Format`` of a dense row-major cranax buffer (``major_to_minor`` = (0, 1, ...)), as
    JAX reports a compiled executable's inputs/outputs."""
    nd = shape_or_ndim if isinstance(shape_or_ndim, int) else len(shape_or_ndim)
    return Format(Layout(tuple(range(nd)), ()), sharding)
