"""``jax._src.interpreters`` under the alias: only ``partial_eval``, the home JAX's tracer class prints."""
