"""``jax.experimental``: the names cranax has of it."""
from ..api_callback import io_callback

__all__ = ["io_callback"]
