"""``cranax.scipy.stats.chi2``: the chi-squared distribution, Gamma(df/2, scale 2). Mirrors
``jax.scipy.stats.chi2``."""
from ... import numpy as _jnp
from . import gamma as _gamma
from ._common import promote as _promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _args(name, x, df, loc, scale):
    x, df, loc, scale = _promote(name, x, df, loc, scale)
    return x, df / 2, loc, 2 * scale


def logpdf(x, df, loc=0, scale=1):
    return _gamma.logpdf(*_args("chi2.logpdf", x, df, loc, scale))


def pdf(x, df, loc=0, scale=1):
    return _jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    return _gamma.cdf(*_args("chi2.cdf", x, df, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return _gamma.logcdf(*_args("chi2.logcdf", x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    return _gamma.sf(*_args("chi2.sf", x, df, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return _gamma.logsf(*_args("chi2.logsf", x, df, loc, scale))
