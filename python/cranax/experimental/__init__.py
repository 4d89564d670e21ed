"""``jax.experimental``: the names cranax has of it (``io_callback``, ``checkify``, ``layout``)."""
from ..api_callback import io_callback
from . import checkify
from . import layout

__all__ = ["io_callback", "checkify", "layout"]
