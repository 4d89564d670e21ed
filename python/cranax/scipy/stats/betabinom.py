"""``cranax.scipy.stats.betabinom``: the beta-binomial distribution. Mirrors
``jax.scipy.stats.betabinom``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = _promote("betabinom.logpmf", k, n, a, b, loc)
    y = k - loc
    comb = _lax.lgamma(n + 1) - _lax.lgamma(y + 1) - _lax.lgamma(n - y + 1)
    val = comb + _special.betaln(y + a, n - y + b) - _special.betaln(a, b)
    val = _jnp.where((y < 0) | (y > n), _c(k, -_np.inf), val)
    return _jnp.where((a <= 0) | (b <= 0) | (n < 0), _c(k, _np.nan), val)


def pmf(k, n, a, b, loc=0):
    return _jnp.exp(logpmf(k, n, a, b, loc))
