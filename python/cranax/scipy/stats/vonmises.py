"""``cranax.scipy.stats.vonmises``: the von Mises distribution on [-pi, pi] with concentration ``kappa``.
Mirrors ``jax.scipy.stats.vonmises``."""
import math

import numpy as np

from ... import numpy as jnp
from ... import lax
from ._common import c, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    x, kappa = promote("vonmises.logpdf", x, kappa)
    # log I0(kappa) = log i0e(kappa) + |kappa|
    val = kappa * (jnp.cos(x) - 1) - c(x, math.log(2 * math.pi)) - jnp.log(lax.bessel_i0e(kappa))
    return jnp.where(kappa > 0, val, c(x, np.nan))


def pdf(x, kappa):
    return jnp.exp(logpdf(x, kappa))
