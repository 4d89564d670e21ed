"""``cranax.scipy.stats.nbinom``: the negative binomial distribution (failures before the n-th success).
Mirrors ``jax.scipy.stats.nbinom``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = _promote("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb = _lax.lgamma(n + y) - _lax.lgamma(y + 1) - _lax.lgamma(n)
    val = comb + _special.xlogy(n, p) + _special.xlog1py(y, -p)
    return _jnp.where(y < 0, _c(k, -_np.inf), val)


def pmf(k, n, p, loc=0):
    return _jnp.exp(logpmf(k, n, p, loc))
