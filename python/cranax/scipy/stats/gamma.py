"""``cranax.scipy.stats.gamma``: the gamma distribution with shape ``a``. Mirrors ``jax.scipy.stats.gamma``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c, log_of as _log_of, promote as _promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote("gamma.logpdf", x, a, loc, scale)
    y = (x - loc) / scale
    safe = _jnp.where(y > 0, y, _c(y, 1.0))
    val = _special.xlogy(a - 1, safe) - safe - _lax.lgamma(a) - _jnp.log(scale)
    at0 = _jnp.where(a == 1, -_jnp.log(scale), _jnp.where(a < 1, _c(x, _np.inf), _c(x, -_np.inf)))
    return _jnp.where(y < 0, _c(x, -_np.inf), _jnp.where(y == 0, at0, val))


def pdf(x, a, loc=0, scale=1):
    return _jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote("gamma.cdf", x, a, loc, scale)
    y = (x - loc) / scale
    return _lax.igamma(a, _jnp.maximum(y, _c(y, 0.0)))


def logcdf(x, a, loc=0, scale=1):
    return _log_of(cdf(x, a, loc, scale), sf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = _promote("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return _lax.igammac(a, _jnp.maximum(y, _c(y, 0.0)))


def logsf(x, a, loc=0, scale=1):
    return _log_of(sf(x, a, loc, scale), cdf(x, a, loc, scale))
