"""``cranax.scipy.stats.laplace``: the Laplace distribution. Mirrors ``jax.scipy.stats.laplace``."""
import math as _math

from ... import numpy as _jnp
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("laplace.logpdf", x, loc, scale)
    return -_jnp.abs(x - loc) / scale - _jnp.log(scale) - _c(x, _math.log(2.0))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    return _jnp.where(z <= 0, 0.5 * _jnp.exp(z), 1 - 0.5 * _jnp.exp(-z))
