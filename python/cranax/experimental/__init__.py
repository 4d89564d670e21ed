"""``jax.experimental``: the names cranax has of it (``io_callback``, ``checkify``, ``layout``,
``multihost_utils``, ``compilation_cache``, ``ode``, ``EArray``, ``cur_qdd``,
``primal_tangent_dtype``)."""
from ..api_callback import io_callback
from . import checkify
from . import layout
from . import multihost_utils
from . import compilation_cache
from . import ode
from . import hijax
from .earray import EArray
from ..core import cur_qdd
from ..dtypes import primal_tangent_dtype

__all__ = ["io_callback", "checkify", "layout", "multihost_utils", "compilation_cache", "ode", "hijax", "EArray", "cur_qdd",
           "primal_tangent_dtype"]
