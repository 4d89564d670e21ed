"""``cranax.scipy.stats.poisson``: the Poisson distribution. Mirrors ``jax.scipy.stats.poisson``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c, promote

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = k - loc
    val = special.xlogy(x, mu) - lax.lgamma(x + 1) - mu
    return jnp.where((x < 0) | (x != jnp.round(x)), c(k, -np.inf), val)


def pmf(k, mu, loc=0):
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    x = jnp.floor(k - loc)
    return jnp.where(x < 0, c(k, 0.0), lax.igammac(jnp.maximum(x + 1, c(x, 1.0)), mu))


def entropy(mu, loc=0):
    """The entropy -sum_k p(k) log p(k), summed over k < mu + 20 sqrt(mu) + 20 (the remaining mass is
    below float64 resolution), for a concrete bound: ``mu`` must not be traced."""
    mu, loc = promote("poisson.entropy", mu, loc)
    hi = int(np.max(np.asarray(mu)) + 20 * np.sqrt(np.max(np.asarray(mu))) + 20)
    ks = jnp.arange(hi, dtype=mu.dtype).reshape((hi,) + (1,) * mu.ndim)
    lp = special.xlogy(ks, mu) - lax.lgamma(ks + 1) - mu
    return -jnp.sum(jnp.exp(lp) * lp, axis=0)
