"""``jax._src.state`` — flax.nnx (``variablelib`` imports ``state.types.AbstractRef``)."""
