"""``cranax.scipy.stats.expon``: the exponential distribution. Mirrors ``jax.scipy.stats.expon``."""
import numpy as np

from ... import numpy as jnp
from ._common import c, log1mexp, nan_where, promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, c(x, -np.inf), -z - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote("expon.logsf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, c(x, 0.0), -z)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, c(x, 0.0), -jnp.expm1(-z))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote("expon.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, c(x, -np.inf), log1mexp(jnp.maximum(z, c(z, 0.0))))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return nan_where((q < 0) | (q > 1), loc - scale * jnp.log1p(-q))
