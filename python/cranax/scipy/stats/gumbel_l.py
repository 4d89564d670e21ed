"""``cranax.scipy.stats.gumbel_l``: the Gumbel distribution (``left``-skewed). Mirrors
``jax.scipy.stats.gumbel_l``."""
from ._gumbel import functions as _functions

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

logpdf, pdf, logcdf, cdf, logsf, sf, ppf = _functions("gumbel_l", -1)
