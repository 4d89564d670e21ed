"""``cranax.scipy.stats.wrapcauchy``: the wrapped Cauchy distribution on [0, 2 pi] with shape ``c``.
Mirrors ``jax.scipy.stats.wrapcauchy``."""
import math as _math

import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c, promote as _promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    x, c = _promote("wrapcauchy.logpdf", x, c)
    val = _jnp.log1p(-c * c) - _jnp.log(1 + c * c - 2 * c * _jnp.cos(x)) - _c(x, _math.log(2 * _math.pi))
    ok = (c > 0) & (c < 1)
    inside = (x >= 0) & (x <= 2 * _np.pi)
    return _jnp.where(ok, _jnp.where(inside, val, _c(x, -_np.inf)), _c(x, _np.nan))


def pdf(x, c):
    return _jnp.exp(logpdf(x, c))
