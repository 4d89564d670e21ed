"""The two Gumbel distributions, ``gumbel_r`` and ``gumbel_l``: one implementation, the sign of the
standardized variable ``z = sign * (x - loc) / scale`` telling them apart (``gumbel_l`` is ``gumbel_r``
mirrored)."""
from ... import numpy as jnp
from ._common import log1mexp, nan_where, promote


def functions(name, sign):
    """``(logpdf, pdf, logcdf, cdf, logsf, sf, ppf)`` of the Gumbel distribution skewed right (``sign=1``) or
    left (``sign=-1``); ``name`` labels promotion errors."""

    def _z(x, loc, scale):
        return sign * (x - loc) / scale

    def _log_upper(x, loc, scale):
        # log of the right-skewed CDF at z: -exp(-z)
        return -jnp.exp(-_z(x, loc, scale))

    def _log_lower(x, loc, scale):
        # log(1 - exp(-exp(-z)))
        return log1mexp(jnp.exp(-_z(x, loc, scale)))

    def logpdf(x, loc=0, scale=1):
        x, loc, scale = promote(f"{name}.logpdf", x, loc, scale)
        z = _z(x, loc, scale)
        return -z - jnp.exp(-z) - jnp.log(scale)

    def pdf(x, loc=0, scale=1):
        return jnp.exp(logpdf(x, loc, scale))

    def logcdf(x, loc=0, scale=1):
        x, loc, scale = promote(f"{name}.logcdf", x, loc, scale)
        return _log_upper(x, loc, scale) if sign == 1 else _log_lower(x, loc, scale)

    def cdf(x, loc=0, scale=1):
        return jnp.exp(logcdf(x, loc, scale))

    def logsf(x, loc=0, scale=1):
        x, loc, scale = promote(f"{name}.logsf", x, loc, scale)
        return _log_lower(x, loc, scale) if sign == 1 else _log_upper(x, loc, scale)

    def sf(x, loc=0, scale=1):
        return jnp.exp(logsf(x, loc, scale))

    def ppf(p, loc=0, scale=1):
        p, loc, scale = promote(f"{name}.ppf", p, loc, scale)
        z = -jnp.log(-jnp.log(p)) if sign == 1 else -jnp.log(-jnp.log1p(-p))
        return nan_where((p < 0) | (p > 1), loc + sign * scale * z)

    return logpdf, pdf, logcdf, cdf, logsf, sf, ppf
