"""``cranax.scipy.stats.expon``: the exponential distribution. Mirrors ``jax.scipy.stats.expon``."""
import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c, log1mexp as _log1mexp, nan_where as _nan_where, promote as _promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return _jnp.where(z < 0, _c(x, -_np.inf), -z - _jnp.log(scale))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.logsf", x, loc, scale)
    z = (x - loc) / scale
    return _jnp.where(z < 0, _c(x, 0.0), -z)


def sf(x, loc=0, scale=1):
    return _jnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.cdf", x, loc, scale)
    z = (x - loc) / scale
    return _jnp.where(z < 0, _c(x, 0.0), -_jnp.expm1(-z))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = _promote("expon.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return _jnp.where(z < 0, _c(x, -_np.inf), _log1mexp(_jnp.maximum(z, _c(z, 0.0))))


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote("expon.ppf", q, loc, scale)
    return _nan_where((q < 0) | (q > 1), loc - scale * _jnp.log1p(-q))
