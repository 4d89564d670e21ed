"""``cranax.scipy.stats.binom``: the binomial distribution. Mirrors ``jax.scipy.stats.binom``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = lax.lgamma(n + 1) - lax.lgamma(y + 1) - lax.lgamma(n - y + 1)
    val = comb + special.xlogy(y, p) + special.xlog1py(n - y, -p)
    return jnp.where((y < 0) | (y > n), c(k, -np.inf), val)


def pmf(k, n, p, loc=0):
    return jnp.exp(logpmf(k, n, p, loc))
