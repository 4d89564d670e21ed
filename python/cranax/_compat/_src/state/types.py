"""``jax._src.state.types`` — flax.nnx's ``variablelib`` tests ``isinstance(jax.typeof(x), AbstractRef)``.

cranax has no mutable array references, so no abstract value is ever an ``AbstractRef``: the class exists for
that ``isinstance`` test (always False) and cannot be built.
"""


class AbstractRef:
    """The abstract value of a mutable array reference (none exist in cranax)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("cranax has no mutable array references (jax.new_ref)")
