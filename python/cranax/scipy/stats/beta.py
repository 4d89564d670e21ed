"""``cranax.scipy.stats.beta``: the beta distribution on [loc, loc + scale]. Mirrors
``jax.scipy.stats.beta``."""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import c, log_of, promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    inside = (y >= 0) & (y <= 1)
    safe = jnp.where(inside, y, c(y, 0.5))
    val = special.xlogy(a - 1, safe) + special.xlog1py(b - 1, -safe) - special.betaln(a, b) - jnp.log(scale)
    return jnp.where(inside, val, c(x, -np.inf))


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, jnp.clip((x - loc) / scale, 0.0, 1.0))


def logcdf(x, a, b, loc=0, scale=1):
    return log_of(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - jnp.clip((x - loc) / scale, 0.0, 1.0))


def logsf(x, a, b, loc=0, scale=1):
    return log_of(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
