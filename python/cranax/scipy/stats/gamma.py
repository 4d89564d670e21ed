"""``cranax.scipy.stats.gamma``: the gamma distribution with shape ``a``. Mirrors ``jax.scipy.stats.gamma``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c, log_of, promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    y = (x - loc) / scale
    safe = jnp.where(y > 0, y, c(y, 1.0))
    val = special.xlogy(a - 1, safe) - safe - lax.lgamma(a) - jnp.log(scale)
    at0 = jnp.where(a == 1, -jnp.log(scale), jnp.where(a < 1, c(x, np.inf), c(x, -np.inf)))
    return jnp.where(y < 0, c(x, -np.inf), jnp.where(y == 0, at0, val))


def pdf(x, a, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = (x - loc) / scale
    return lax.igamma(a, jnp.maximum(y, c(y, 0.0)))


def logcdf(x, a, loc=0, scale=1):
    return log_of(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return lax.igammac(a, jnp.maximum(y, c(y, 0.0)))


def logsf(x, a, loc=0, scale=1):
    return log_of(sf(x, a, loc, scale), cdf(x, a, loc, scale))
