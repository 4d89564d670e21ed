"""``cranax.scipy.stats.multinomial``: the multinomial distribution; ``x`` and ``p`` have the categories
on their last axis, which the result drops. Mirrors ``jax.scipy.stats.multinomial``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    x, n, p = (jnp.asarray(v) for v in (x, n, p))
    dt = jnp.result_type(x, n, p, jnp.float32)
    x, n, p = x.astype(dt), n.astype(dt), p.astype(dt)
    val = lax.lgamma(n + 1) + jnp.sum(special.xlogy(x, p) - lax.lgamma(x + 1), axis=-1)
    return jnp.where(jnp.sum(x, axis=-1) == n, val, c(val, -np.inf))


def pmf(x, n, p):
    return jnp.exp(logpmf(x, n, p))
