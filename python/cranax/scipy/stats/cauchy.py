"""``cranax.scipy.stats.cauchy``: the Cauchy distribution. Mirrors ``jax.scipy.stats.cauchy``."""
import math

import numpy as np

from ... import numpy as jnp
from ._common import c, promote

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -jnp.log1p(z * z) - jnp.log(scale) - c(x, math.log(math.pi))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    z = (x - loc) / scale
    return 0.5 + jnp.arctan(z) / np.pi


def logcdf(x, loc=0, scale=1):
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    return jnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    # tan(pi (q - 1/2)) as a cotangent of the smaller tail (exact 1 - q): no cancellation near 0 and 1
    lower = q < 0.5
    t = jnp.tan(np.pi * jnp.where(lower, q, 1 - q))
    out = loc + scale * jnp.where(lower, -1.0 / t, 1.0 / t)
    out = jnp.where(q == 0, c(q, -np.inf), jnp.where(q == 1, c(q, np.inf), out))
    return jnp.where((q < 0) | (q > 1), c(q, np.nan), out)


def isf(q, loc=0, scale=1):
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return loc - scale * ppf(q)   # the standard quantile is odd about q = 1/2
