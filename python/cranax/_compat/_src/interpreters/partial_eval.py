"""``jax._src.interpreters.partial_eval`` under the alias: the module of JAX's ``DynamicJaxprTracer``, which
errors print by path (``<class 'jax._src.interpreters.partial_eval.DynamicJaxprTracer'>``); pickle finds
the class here."""
from ....interpreters.partial_eval import DynamicJaxprTracer  # noqa: F401
