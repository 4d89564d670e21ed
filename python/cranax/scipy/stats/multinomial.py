"""``cranax.scipy.stats.multinomial``: the multinomial distribution; ``x`` and ``p`` have the categories
on their last axis, which the result drops. Mirrors ``jax.scipy.stats.multinomial``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    x, n, p = (_jnp.asarray(v) for v in (x, n, p))
    dt = _jnp.result_type(x, n, p, _jnp.float32)
    x, n, p = x.astype(dt), n.astype(dt), p.astype(dt)
    val = _lax.lgamma(n + 1) + _jnp.sum(_special.xlogy(x, p) - _lax.lgamma(x + 1), axis=-1)
    return _jnp.where(_jnp.sum(x, axis=-1) == n, val, _c(val, -_np.inf))


def pmf(x, n, p):
    return _jnp.exp(logpmf(x, n, p))
