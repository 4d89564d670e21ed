"""``cranax.scipy.stats.vonmises``: the von Mises distribution on [-pi, pi] with concentration ``kappa``.
Mirrors ``jax.scipy.stats.vonmises``."""
import math as _math

import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from ._common import c as _c, promote as _promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    x, kappa = _promote("vonmises.logpdf", x, kappa)
    # log I0(kappa) = log i0e(kappa) + |kappa|
    val = kappa * (_jnp.cos(x) - 1) - _c(x, _math.log(2 * _math.pi)) - _jnp.log(_lax.bessel_i0e(kappa))
    return _jnp.where(kappa > 0, val, _c(x, _np.nan))


def pdf(x, kappa):
    return _jnp.exp(logpdf(x, kappa))
