"""``cranax.scipy.stats.t``: Student's t distribution. Mirrors ``jax.scipy.stats.t``."""
import math as _math

from ... import numpy as _jnp
from ... import lax as _lax
from ._common import c as _c, promote as _promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = _promote("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = 0.5 * (df + 1)
    norm = _lax.lgamma(half) - _lax.lgamma(0.5 * df) - 0.5 * _jnp.log(df) - _c(x, 0.5 * _math.log(_math.pi))
    return norm - _jnp.log(scale) - half * _jnp.log1p(z * z / df)


def pdf(x, df, loc=0, scale=1):
    return _jnp.exp(logpdf(x, df, loc, scale))
