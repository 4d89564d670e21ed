"""``jax.interpreters`` under the alias: cranax's ``ad``, ``batching``, ``mlir``, ``partial_eval`` (public
JAX names, resolved to ``cranax.interpreters``) plus ``xla`` (tensorflow-probability's JAX substrate, used
by distrax, registers its array type there)."""
from ...interpreters import ad, batching, mlir, partial_eval  # noqa: F401
from . import xla  # noqa: F401
