"""``cranax.scipy.stats.binom``: the binomial distribution. Mirrors ``jax.scipy.stats.binom``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = _promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = _lax.lgamma(n + 1) - _lax.lgamma(y + 1) - _lax.lgamma(n - y + 1)
    val = comb + _special.xlogy(y, p) + _special.xlog1py(n - y, -p)
    return _jnp.where((y < 0) | (y > n), _c(k, -_np.inf), val)


def pmf(k, n, p, loc=0):
    return _jnp.exp(logpmf(k, n, p, loc))
