"""``cranax.scipy.stats.uniform``: the uniform distribution on [loc, loc + scale]. Mirrors
``jax.scipy.stats.uniform``."""
import numpy as np

from ... import numpy as jnp
from ._common import c, nan_where, promote

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), c(x, -np.inf))


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    return jnp.clip((x - loc) / scale, 0.0, 1.0)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return nan_where((q < 0) | (q > 1), loc + q * scale)
