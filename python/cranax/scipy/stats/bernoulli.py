"""``cranax.scipy.stats.bernoulli``: the Bernoulli distribution. Mirrors ``jax.scipy.stats.bernoulli``."""
import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    k, p, loc = _promote("bernoulli.logpmf", k, p, loc)
    x = k - loc
    val = _jnp.where(x == 1, _jnp.log(p), _jnp.log1p(-p))
    return _jnp.where((x == 0) | (x == 1), val, _c(k, -_np.inf))


def pmf(k, p, loc=0):
    return _jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    k, p = _promote("bernoulli.cdf", k, p)
    out = _jnp.where(k < 0, _c(k, 0.0), _jnp.where(k < 1, 1 - p, _c(k, 1.0)))
    return _jnp.where((p < 0) | (p > 1) | _jnp.isnan(k), _c(k, _np.nan), out)


def ppf(q, p):
    q, p = _promote("bernoulli.ppf", q, p)
    out = _jnp.where(q <= 1 - p, _c(q, 0.0), _c(q, 1.0))
    return _jnp.where((q < 0) | (q > 1) | (p < 0) | (p > 1), _c(q, _np.nan), out)
