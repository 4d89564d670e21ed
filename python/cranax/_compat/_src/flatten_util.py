"""``jax._src.flatten_util`` — blackjax (``from jax._src.flatten_util import ravel_pytree``)."""
from ...flatten_util import ravel_pytree  # noqa: F401
