"""``cranax.scipy.spatial``: mirrors ``jax.scipy.spatial`` (empty until ``transform`` is imported by name,
as JAX's)."""
