"""``cranax.scipy.stats.multivariate_normal``: the multivariate normal distribution. ``x`` has shape
(..., d), ``mean`` (d,) (or broadcastable), ``cov`` (d, d) or a scalar / (d,) diagonal. Mirrors
``jax.scipy.stats.multivariate_normal``.

Until cranax has ``linalg.cholesky``/``solve_triangular`` (the linear-algebra issue), the Cholesky
factorization and the triangular solve are composed here, unrolled over the static dimension d (O(d^3)
traced operations: meant for the small d of probabilistic models).
"""
import math as _math

import numpy as _np

from ... import numpy as _jnp
from ._common import c as _c

__all__ = ["logpdf", "pdf"]


def _chol_solve_logdet(cov, dev):
    """(log det cov, |L^-1 dev|^2) with cov = L L^T, unrolled over d."""
    d = cov.shape[-1]
    L = [[None] * d for _ in range(d)]
    for j in range(d):
        s = cov[..., j, j]
        for k in range(j):
            s = s - L[j][k] * L[j][k]
        L[j][j] = _jnp.sqrt(s)
        for i in range(j + 1, d):
            s = cov[..., i, j]
            for k in range(j):
                s = s - L[i][k] * L[j][k]
            L[i][j] = s / L[j][j]
    logdet = 0.0
    for j in range(d):
        logdet = logdet + 2 * _jnp.log(L[j][j])
    y = []
    maha = 0.0
    for i in range(d):
        s = dev[..., i]
        for k in range(i):
            s = s - L[i][k] * y[k]
        y.append(s / L[i][i])
        maha = maha + y[i] * y[i]
    return logdet, maha


def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (_jnp.asarray(v) for v in (x, mean, cov))
    dt = _jnp.result_type(x, mean, cov, _jnp.float32)
    x, mean, cov = x.astype(dt), mean.astype(dt), cov.astype(dt)
    if not mean.shape:
        return (-0.5 * (x - mean) ** 2 / cov - 0.5 * (_jnp.log(2 * _np.pi) + _jnp.log(cov)))
    d = mean.shape[-1]
    dev = x - mean
    if cov.ndim < 2:
        var = _jnp.broadcast_to(cov, (d,))
        return (-0.5 * _jnp.sum(dev * dev / var, axis=-1) - 0.5 * _jnp.sum(_jnp.log(var))
                - _c(x, 0.5 * d * _math.log(2 * _math.pi)))
    if cov.shape[-2:] != (d, d):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    logdet, maha = _chol_solve_logdet(cov, dev)
    return -0.5 * maha - 0.5 * logdet - _c(x, 0.5 * d * _math.log(2 * _math.pi))


def pdf(x, mean, cov):
    return _jnp.exp(logpdf(x, mean, cov))
