"""``cranax.scipy.stats.beta``: the beta distribution on [loc, loc + scale]. Mirrors
``jax.scipy.stats.beta``."""
import numpy as _np

from ... import numpy as _jnp
from .. import special as _special
from ._common import c as _c, log_of as _log_of, promote as _promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    inside = (y >= 0) & (y <= 1)
    safe = _jnp.where(inside, y, _c(y, 0.5))
    val = _special.xlogy(a - 1, safe) + _special.xlog1py(b - 1, -safe) - _special.betaln(a, b) - _jnp.log(scale)
    return _jnp.where(inside, val, _c(x, -_np.inf))


def pdf(x, a, b, loc=0, scale=1):
    return _jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("beta.cdf", x, a, b, loc, scale)
    return _special.betainc(a, b, _jnp.clip((x - loc) / scale, 0.0, 1.0))


def logcdf(x, a, b, loc=0, scale=1):
    return _log_of(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = _promote("beta.sf", x, a, b, loc, scale)
    return _special.betainc(b, a, 1 - _jnp.clip((x - loc) / scale, 0.0, 1.0))


def logsf(x, a, b, loc=0, scale=1):
    return _log_of(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
