"""``cranax.scipy.stats.nbinom``: the negative binomial distribution (failures before the n-th success).
Mirrors ``jax.scipy.stats.nbinom``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb = lax.lgamma(n + y) - lax.lgamma(y + 1) - lax.lgamma(n)
    val = comb + special.xlogy(n, p) + special.xlog1py(y, -p)
    return jnp.where(y < 0, c(k, -np.inf), val)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
