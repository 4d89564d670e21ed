"""``cranax.scipy.stats.norm``: the normal distribution. Mirrors ``jax.scipy.stats.norm``; every function
takes array-likes broadcast together and returns their promoted float dtype."""
import math

from ... import numpy as jnp
from .. import special
from ._common import c, promote

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """log N(x; loc, scale^2)."""
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - jnp.log(scale) - c(x, 0.5 * math.log(2 * math.pi))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = promote("norm.isf", q, loc, scale)
    return -special.ndtri(q) * scale + loc
