"""``cranax.scipy.stats.bernoulli``: the Bernoulli distribution. Mirrors ``jax.scipy.stats.bernoulli``."""
import numpy as np

from ... import numpy as jnp
from ._common import c, promote

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = k - loc
    val = jnp.where(x == 1, jnp.log(p), jnp.log1p(-p))
    return jnp.where((x == 0) | (x == 1), val, c(k, -np.inf))


def pmf(k, p, loc=0):
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = promote("bernoulli.cdf", k, p)
    out = jnp.where(k < 0, c(k, 0.0), jnp.where(k < 1, 1 - p, c(k, 1.0)))
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(k), c(k, np.nan), out)


def ppf(q, p):
    q, p = promote("bernoulli.ppf", q, p)
    out = jnp.where(q <= 1 - p, c(q, 0.0), c(q, 1.0))
    return jnp.where((q < 0) | (q > 1) | (p < 0) | (p > 1), c(q, np.nan), out)
