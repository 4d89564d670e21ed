"""``cranax.scipy.stats.pareto``: the Pareto distribution with shape ``b``. Mirrors
``jax.scipy.stats.pareto``."""
import numpy as np

from ... import numpy as jnp
from ._common import c, nan_where, promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    safe = jnp.where(y >= 1, y, c(y, 1.0))
    return jnp.where(y >= 1, jnp.log(b) - jnp.log(scale) - (b + 1) * jnp.log(safe), c(x, -np.inf))


def pdf(x, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    safe = jnp.where(y >= 1, y, c(y, 1.0))
    return jnp.where(y >= 1, -b * jnp.log(safe), c(x, 0.0))


def sf(x, b, loc=0, scale=1):
    return jnp.exp(logsf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    return -jnp.expm1(logsf(x, b, loc, scale))


def logcdf(x, b, loc=0, scale=1):
    return jnp.log1p(-sf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    return nan_where((q < 0) | (q > 1), loc + scale * jnp.exp(-jnp.log1p(-q) / b))
