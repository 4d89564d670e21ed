"""``cranax.scipy.stats.cauchy``: the Cauchy distribution. Mirrors ``jax.scipy.stats.cauchy``."""
import math as _math

import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -_jnp.log1p(z * z) - _jnp.log(scale) - _c(x, _math.log(_math.pi))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("cauchy.cdf", x, loc, scale)
    z = (x - loc) / scale
    return 0.5 + _jnp.arctan(z) / _np.pi


def logcdf(x, loc=0, scale=1):
    return _jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = _promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    return _jnp.log(sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote("cauchy.ppf", q, loc, scale)
    # tan(pi (q - 1/2)) as a cotangent of the smaller tail (exact 1 - q): no cancellation near 0 and 1
    lower = q < 0.5
    t = _jnp.tan(_np.pi * _jnp.where(lower, q, 1 - q))
    out = loc + scale * _jnp.where(lower, -1.0 / t, 1.0 / t)
    out = _jnp.where(q == 0, _c(q, -_np.inf), _jnp.where(q == 1, _c(q, _np.inf), out))
    return _jnp.where((q < 0) | (q > 1), _c(q, _np.nan), out)


def isf(q, loc=0, scale=1):
    q, loc, scale = _promote("cauchy.isf", q, loc, scale)
    return loc - scale * ppf(q)   # the standard quantile is odd about q = 1/2
