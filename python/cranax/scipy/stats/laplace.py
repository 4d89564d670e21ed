"""``cranax.scipy.stats.laplace``: the Laplace distribution. Mirrors ``jax.scipy.stats.laplace``."""
import math

from ... import numpy as jnp
from ._common import c, promote

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return -jnp.abs(x - loc) / scale - jnp.log(scale) - c(x, math.log(2.0))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z <= 0, 0.5 * jnp.exp(z), 1 - 0.5 * jnp.exp(-z))
