"""``cranax.example_libraries``: the small reference libraries JAX ships beside its examples, ``stax`` (neural
network layers as ``(init_fun, apply_fun)`` pairs) and ``optimizers`` (first-order optimizers as
``(init_fun, update_fun, get_params)`` triples). Mirrors ``jax.example_libraries``."""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
