"""``jax.experimental``: the names cranax has of it."""
from ..api_callback import io_callback
from . import checkify

__all__ = ["io_callback", "checkify"]
