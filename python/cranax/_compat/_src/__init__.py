"""``jax._src`` under the alias: only the private modules a supported library imports (each names it)."""
