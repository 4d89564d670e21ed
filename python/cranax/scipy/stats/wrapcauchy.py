"""``cranax.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on [0, 2 pi] with shape ``c``.
Mirrors ``jax.scipy.stats.wrapcauchy``."""
import math

import numpy as np

from ... import numpy as jnp
from ._common import c as _c, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    x, c = promote("wrapcauchy.logpdf", x, c)
    val = jnp.log1p(-c * c) - jnp.log(1 + c * c - 2 * c * jnp.cos(x)) - _c(x, math.log(2 * math.pi))
    ok = (c > 0) & (c < 1)
    inside = (x >= 0) & (x <= 2 * np.pi)
    return jnp.where(ok, jnp.where(inside, val, _c(x, -np.inf)), _c(x, np.nan))


def pdf(x, c):
    return jnp.exp(logpdf(x, c))
