"""``cranax.scipy.stats.norm``: the normal distribution. Mirrors ``jax.scipy.stats.norm``; every function
takes array-likes broadcast together and returns their promoted float dtype."""
import math as _math

from ... import numpy as _jnp
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """log N(x; loc, scale^2)."""
    x, loc, scale = _promote("norm.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - _jnp.log(scale) - _c(x, 0.5 * _math.log(2 * _math.pi))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.cdf", x, loc, scale)
    return _special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.logcdf", x, loc, scale)
    return _special.log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.sf", x, loc, scale)
    return _special.ndtr((loc - x) / scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote("norm.logsf", x, loc, scale)
    return _special.log_ndtr((loc - x) / scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote("norm.ppf", q, loc, scale)
    return _special.ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    q, loc, scale = _promote("norm.isf", q, loc, scale)
    return -_special.ndtri(q) * scale + loc
