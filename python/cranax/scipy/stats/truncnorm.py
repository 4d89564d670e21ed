"""``cranax.scipy.stats.truncnorm``: the normal distribution truncated to [a, b] (in standard units).
Mirrors ``jax.scipy.stats.truncnorm``; tail masses are computed in log space (``log_ndtr``)."""
import math as _math

import numpy as _np

from ... import numpy as _jnp
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(hi, lo):
    # log(exp(hi) - exp(lo)) for hi >= lo
    return hi + _jnp.log1p(-_jnp.exp(lo - hi))


def _log_mass(a, b):
    # log(Phi(b) - Phi(a)), using the upper tails where both bounds are positive
    upper = a > 0
    return _jnp.where(upper, _log_diff(_special.log_ndtr(-a), _special.log_ndtr(-b)),
                     _log_diff(_special.log_ndtr(b), _special.log_ndtr(a)))


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("truncnorm.logpdf", x, a, b, loc, scale)
    z = (x - loc) / scale
    val = -0.5 * z * z - _c(x, 0.5 * _math.log(2 * _math.pi)) - _jnp.log(scale) - _log_mass(a, b)
    return _jnp.where((z < a) | (z > b), _c(x, -_np.inf), val)


def pdf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("truncnorm.logcdf", x, a, b, loc, scale)
    z = _jnp.clip((x - loc) / scale, a, b)
    val = _log_mass(a, z) - _log_mass(a, b)
    return _jnp.where(z <= a, _c(x, -_np.inf), _jnp.where(z >= b, _c(x, 0.0), val))


def cdf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("truncnorm.logsf", x, a, b, loc, scale)
    z = _jnp.clip((x - loc) / scale, a, b)
    val = _log_mass(z, b) - _log_mass(a, b)
    return _jnp.where(z <= a, _c(x, 0.0), _jnp.where(z >= b, _c(x, -_np.inf), val))


def sf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logsf(x, a, b, loc, scale))
