"""``jax.Ref`` and ``jax.new_ref``: JAX's mutable array references, which cranax does not have.

``Ref`` exists so that ``isinstance(x, jax.Ref)`` (flax.nnx's variable checks) answers False for every
cranax value; ``new_ref`` raises ``NotImplementedError`` rather than returning something that does not
behave as a reference.
"""

__all__ = ["Ref", "new_ref"]


class Ref:
    """A mutable array reference (none can exist in cranax: building one raises NotImplementedError)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("cranax has no mutable array references (jax.Ref)")


def new_ref(init_val, *, memory_space=None, kind=None):
    """JAX's ``jax.new_ref``: raises ``NotImplementedError`` (cranax has no mutable array references)."""
    raise NotImplementedError("jax.new_ref: cranax has no mutable array references")
