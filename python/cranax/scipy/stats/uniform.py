"""``cranax.scipy.stats.uniform``: the uniform distribution on [loc, loc + scale]. Mirrors
``jax.scipy.stats.uniform``."""
import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c, nan_where as _nan_where, promote as _promote

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = _promote("uniform.logpdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return _jnp.where(inside, -_jnp.log(scale), _c(x, -_np.inf))


def pdf(x, loc=0, scale=1):
    return _jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = _promote("uniform.cdf", x, loc, scale)
    return _jnp.clip((x - loc) / scale, 0.0, 1.0)


def ppf(q, loc=0, scale=1):
    q, loc, scale = _promote("uniform.ppf", q, loc, scale)
    return _nan_where((q < 0) | (q > 1), loc + q * scale)
