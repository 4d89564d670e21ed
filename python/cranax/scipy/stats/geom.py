"""``cranax.scipy.stats.geom``: the geometric distribution on k = 1, 2, ... Mirrors
``jax.scipy.stats.geom``."""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import c, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = k - loc
    return jnp.where(x <= 0, c(k, -np.inf), special.xlog1py(x - 1, -p) + jnp.log(p))


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))
