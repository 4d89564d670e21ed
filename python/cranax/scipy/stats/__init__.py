"""``cranax.scipy.stats``: mirrors ``jax.scipy.stats`` (one submodule per distribution, each a file here;
``mode``, ``rankdata``, ``sem`` and ``gaussian_kde`` in ``_functions``)."""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom, gumbel_l,
               gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto, poisson, t,
               truncnorm, uniform, vonmises, wrapcauchy)
from ._functions import gaussian_kde, mode, rankdata, sem

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "mode", "multinomial",
           "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "rankdata", "sem", "t", "truncnorm",
           "uniform", "vonmises", "wrapcauchy"]
