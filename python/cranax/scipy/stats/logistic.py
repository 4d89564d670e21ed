"""``cranax.scipy.stats.logistic``: the logistic distribution. Mirrors ``jax.scipy.stats.logistic``."""
from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import promote

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    z = (x - loc) / scale
    a = jnp.abs(z)
    return -a - 2 * jnp.log1p(jnp.exp(-a)) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return lax.logistic((x - loc) / scale)


def sf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return lax.logistic((loc - x) / scale)


def ppf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return -special.logit(x) * scale + loc
