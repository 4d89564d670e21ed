"""``cranax.scipy.stats.gennorm``: the generalized normal distribution with shape ``beta``. Mirrors
``jax.scipy.stats.gennorm``."""
import math as _math

from ... import numpy as _jnp
from ... import lax as _lax
from ._common import c as _c, promote as _promote

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    x, beta = _promote("gennorm.logpdf", x, beta)
    return _jnp.log(0.5 * beta) - _lax.lgamma(1 / beta) - _jnp.abs(x) ** beta


def pdf(x, beta):
    return _jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = _promote("gennorm.cdf", x, beta)
    half_q = 0.5 * _lax.igammac(1 / beta, _jnp.abs(x) ** beta)   # the tail beyond |x|, without cancellation
    return _jnp.where(x < 0, half_q, 1 - half_q)
