"""``cranax.scipy.stats.gumbel_l``: the Gumbel distribution (``left``-skewed). Mirrors
``jax.scipy.stats.gumbel_l``."""
import numpy as np

from ... import numpy as jnp
from ._common import log1mexp, nan_where, promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
_S = -1  # z = _S * (x - loc) / scale is the standardized right-skewed variable


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote("gumbel_l.logpdf", x, loc, scale)
    z = _S * (x - loc) / scale
    return -z - jnp.exp(-z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    return jnp.exp(logpdf(x, loc, scale))


def _log_upper(x, loc, scale):
    # log of the right-skewed CDF at z: -exp(-z)
    z = _S * (x - loc) / scale
    return -jnp.exp(-z)


def _log_lower(x, loc, scale):
    # log(1 - exp(-exp(-z)))
    z = _S * (x - loc) / scale
    return log1mexp(jnp.exp(-z))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote("gumbel_l.logcdf", x, loc, scale)
    return _log_upper(x, loc, scale) if _S == 1 else _log_lower(x, loc, scale)


def cdf(x, loc=0, scale=1):
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote("gumbel_l.logsf", x, loc, scale)
    return _log_lower(x, loc, scale) if _S == 1 else _log_upper(x, loc, scale)


def sf(x, loc=0, scale=1):
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    z = -jnp.log(-jnp.log(p)) if _S == 1 else -jnp.log(-jnp.log1p(-p))
    return nan_where((p < 0) | (p > 1), loc + _S * scale * z)
