"""Shared helpers of the distribution modules: JAX's argument promotion and the location-scale change."""
import numpy as np

from ... import numpy as jnp
from ..special import _flt


def promote(name, *args):
    """The arguments at one float dtype and shape (JAX's ``promote_args_inexact``)."""
    return _flt(name, *args)


def c(x, v):
    return jnp.asarray(v, dtype=x.dtype)


def nan_where(cond, x):
    return jnp.where(cond, c(x, np.nan), x)


def log1mexp(u):
    """log(1 - exp(-u)) for u >= 0, accurate at both ends (expm1 below log 2, log1p above)."""
    small = u < c(u, 0.6931471805599453)
    return jnp.where(small, jnp.log(-jnp.expm1(-jnp.where(small, u, c(u, 1.0)))),
                     jnp.log1p(-jnp.exp(-jnp.where(small, c(u, 1.0), u))))


def log_of(p, q):
    """log p for a probability p whose complement q = 1 - p is known accurately: log1p(-q) when p > 1/2."""
    big = p > c(p, 0.5)
    return jnp.where(big, jnp.log1p(-jnp.where(big, q, c(q, 0.0))), jnp.log(p))
