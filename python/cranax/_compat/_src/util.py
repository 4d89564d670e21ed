"""``jax._src.util`` — the list helpers JAX's guides and libraries import (``safe_map`` in "Writing custom
Jaxpr interpreters"): cranax's ``_util``, one function each, as ``jax.api_util.safe_map is jax._src.util.safe_map``."""
from ..._util import *  # noqa: F401,F403
from ..._util import __all__  # noqa: F401
