"""``cranax.scipy.stats.betabinom``: the beta-binomial distribution. Mirrors
``jax.scipy.stats.betabinom``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c, promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = k - loc
    comb = lax.lgamma(n + 1) - lax.lgamma(y + 1) - lax.lgamma(n - y + 1)
    val = comb + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    val = jnp.where((y < 0) | (y > n), c(k, -np.inf), val)
    return jnp.where((a <= 0) | (b <= 0) | (n < 0), c(k, np.nan), val)


def pmf(k, n, a, b, loc=0):
    return jnp.exp(logpmf(k, n, a, b, loc))
