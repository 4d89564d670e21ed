"""``jax.experimental``: the names cranax has of it (``io_callback``, ``checkify``, ``layout``,
``multihost_utils``, ``compilation_cache``, ``ode``)."""
from ..api_callback import io_callback
from . import checkify
from . import layout
from . import multihost_utils
from . import compilation_cache
from . import ode
from . import hijax

__all__ = ["io_callback", "checkify", "layout", "multihost_utils", "compilation_cache", "ode", "hijax"]
