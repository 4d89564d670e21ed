"""``cranax.scipy.stats.gennorm``: the generalized normal distribution with shape ``beta``. Mirrors
``jax.scipy.stats.gennorm``."""
import math

from ... import numpy as jnp
from ... import lax
from ._common import c, promote

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    x, beta = promote("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x, beta):
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = promote("gennorm.cdf", x, beta)
    half_q = 0.5 * lax.igammac(1 / beta, jnp.abs(x) ** beta)   # the tail beyond |x|, without cancellation
    return jnp.where(x < 0, half_q, 1 - half_q)
