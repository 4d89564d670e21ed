"""``jax._src.state.types`` — flax.nnx's ``variablelib`` tests ``isinstance(jax.typeof(x), AbstractRef)``:
``jax.typeof`` of a ``jax.Ref`` is one."""

from ....primitives.state import AbstractRef

__all__ = ["AbstractRef"]
