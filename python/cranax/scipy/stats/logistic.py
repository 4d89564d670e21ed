"""``cranax.scipy.stats.logistic``: the logistic distribution. Mirrors ``jax.scipy.stats.logistic``."""
from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import promote as _promote

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.logpdf", x, loc, scale)
    z = (x - loc) / scale
    a = _jnp.abs(z)
    return -a - 2 * _jnp.log1p(_jnp.exp(-a)) - _jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.cdf", x, loc, scale)
    return _lax.logistic((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.sf", x, loc, scale)
    return _lax.logistic((loc - x) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.ppf", x, loc, scale)
    return _special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = _promote("logistic.isf", x, loc, scale)
    return -_special.logit(x) * scale + loc
