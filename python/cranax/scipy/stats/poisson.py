"""``cranax.scipy.stats.poisson``: the Poisson distribution. Mirrors ``jax.scipy.stats.poisson``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    k, mu, loc = _promote("poisson.logpmf", k, mu, loc)
    x = k - loc
    val = _special.xlogy(x, mu) - _lax.lgamma(x + 1) - mu
    return _jnp.where((x < 0) | (x != _jnp.round(x)), _c(k, -_np.inf), val)


def pmf(k, mu, loc=0):
    return _jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = _promote("poisson.cdf", k, mu, loc)
    x = _jnp.floor(k - loc)
    return _jnp.where(x < 0, _c(k, 0.0), _lax.igammac(_jnp.maximum(x + 1, _c(x, 1.0)), mu))


def entropy(mu, loc=0):
    """The entropy -sum_k p(k) log p(k), summed over k < mu + 20 sqrt(mu) + 20 (the remaining mass is
    below float64 resolution), for a concrete bound: ``mu`` must not be traced."""
    mu, loc = _promote("poisson.entropy", mu, loc)
    hi = int(_np.max(_np.asarray(mu)) + 20 * _np.sqrt(_np.max(_np.asarray(mu))) + 20)
    ks = _jnp.arange(hi, dtype=mu.dtype).reshape((hi,) + (1,) * mu.ndim)
    lp = _special.xlogy(ks, mu) - _lax.lgamma(ks + 1) - mu
    return -_jnp.sum(_jnp.exp(lp) * lp, axis=0)
