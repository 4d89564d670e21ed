"""``cranax.scipy.stats.pareto``: the Pareto distribution with shape ``b``. Mirrors
``jax.scipy.stats.pareto``."""
import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c, nan_where as _nan_where, promote as _promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    safe = _jnp.where(y >= 1, y, _c(y, 1.0))
    return _jnp.where(y >= 1, _jnp.log(b) - _jnp.log(scale) - (b + 1) * _jnp.log(safe), _c(x, -_np.inf))


def pdf(x, b, loc=0, scale=1):
    return _jnp.exp(logpdf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = _promote("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    safe = _jnp.where(y >= 1, y, _c(y, 1.0))
    return _jnp.where(y >= 1, -b * _jnp.log(safe), _c(x, 0.0))


def sf(x, b, loc=0, scale=1):
    return _jnp.exp(logsf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    return -_jnp.expm1(logsf(x, b, loc, scale))


def logcdf(x, b, loc=0, scale=1):
    return _jnp.log1p(-sf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = _promote("pareto.ppf", q, b, loc, scale)
    return _nan_where((q < 0) | (q > 1), loc + scale * _jnp.exp(-_jnp.log1p(-q) / b))
