"""``cranax.scipy.stats.truncnorm``: the normal distribution truncated to [a, b] (in standard units).
Mirrors ``jax.scipy.stats.truncnorm``; tail masses are computed in log space (``log_ndtr``)."""
import math

import numpy as np

from ... import numpy as jnp
from .. import special
from ._common import c, promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(hi, lo):
    # log(exp(hi) - exp(lo)) for hi >= lo
    return hi + jnp.log1p(-jnp.exp(lo - hi))


def _log_mass(a, b):
    # log(Phi(b) - Phi(a)), using the upper tails where both bounds are positive
    upper = a > 0
    return jnp.where(upper, _log_diff(special.log_ndtr(-a), special.log_ndtr(-b)),
                     _log_diff(special.log_ndtr(b), special.log_ndtr(a)))


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    val = -0.5 * z * z - c(x, 0.5 * math.log(2 * math.pi)) - jnp.log(scale) - _log_mass(a, b)
    return jnp.where((z < a) | (z > b), c(x, -np.inf), val)


def pdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    z = jnp.clip((x - loc) / scale, a, b)
    val = _log_mass(a, z) - _log_mass(a, b)
    return jnp.where(z <= a, c(x, -np.inf), jnp.where(z >= b, c(x, 0.0), val))


def cdf(x, a, b, loc=0, scale=1):
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    z = jnp.clip((x - loc) / scale, a, b)
    val = _log_mass(z, b) - _log_mass(a, b)
    return jnp.where(z <= a, c(x, 0.0), jnp.where(z >= b, c(x, -np.inf), val))


def sf(x, a, b, loc=0, scale=1):
    return jnp.exp(logsf(x, a, b, loc, scale))
