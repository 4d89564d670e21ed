"""``cranax.scipy.stats.gumbel_r``: the Gumbel distribution (``right``-skewed). Mirrors
``jax.scipy.stats.gumbel_r``."""
from ._gumbel import functions as _functions

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

logpdf, pdf, logcdf, cdf, logsf, sf, ppf = _functions("gumbel_r", 1)
