"""``cranax.scipy.stats.t``: Student's t distribution. Mirrors ``jax.scipy.stats.t``."""
import math

from ... import numpy as jnp
from ... import lax
from ._common import c, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = 0.5 * (df + 1)
    norm = lax.lgamma(half) - lax.lgamma(0.5 * df) - 0.5 * jnp.log(df) - c(x, 0.5 * math.log(math.pi))
    return norm - jnp.log(scale) - half * jnp.log1p(z * z / df)


def pdf(x, df, loc=0, scale=1):
    return jnp.exp(logpdf(x, df, loc, scale))
