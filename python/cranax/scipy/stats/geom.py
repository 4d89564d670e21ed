"""``cranax.scipy.stats.geom``: the geometric distribution on k = 1, 2, ... Mirrors
``jax.scipy.stats.geom``."""
import numpy as _np

from ... import numpy as _jnp
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    k, p, loc = _promote("geom.logpmf", k, p, loc)
    x = k - loc
    return _jnp.where(x <= 0, _c(k, -_np.inf), _special.xlog1py(x - 1, -p) + _jnp.log(p))


def pmf(k, p, loc=0):
    return _jnp.exp(logpmf(k, p, loc))
