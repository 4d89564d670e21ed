"""The ``jax.scipy.stats`` functions that are not distributions: ``mode``, ``rankdata``, ``sem`` and
``gaussian_kde``."""
from collections import namedtuple

import numpy as np

from ... import numpy as jnp
from .. import special
from . import multivariate_normal as _mvn

__all__ = ["gaussian_kde", "mode", "rankdata", "sem"]

ModeResult = namedtuple("ModeResult", ("mode", "count"))


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along ``axis`` (the smallest on ties) and its count. ``axis=None`` works on
    the flattened array. Only ``nan_policy='propagate'``. Mirrors ``jax.scipy.stats.mode``."""
    if nan_policy != "propagate":
        raise NotImplementedError("Only nan_policy='propagate' is supported in jax.scipy.stats.mode.")
    a = jnp.asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = int(axis) % max(a.ndim, 1)
    if a.ndim == 0:
        a = a.reshape(1)
    x = jnp.moveaxis(a, axis, -1)
    n = x.shape[-1]
    s = jnp.sort(x, axis=-1)
    # count of each sorted element's value: pairwise equality (n^2, static n)
    counts = jnp.sum(s[..., :, None] == s[..., None, :], axis=-1)
    idx = jnp.argmax(counts, axis=-1)
    m = jnp.take_along_axis(s, idx[..., None], axis=-1)[..., 0]
    cnt = jnp.take_along_axis(counts, idx[..., None], axis=-1)[..., 0].astype(jnp.int32)
    del n
    if keepdims:
        m, cnt = jnp.expand_dims(m, axis), jnp.expand_dims(cnt, axis)
    return ModeResult(m, cnt)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks (1-based) of the values along ``axis`` (flattened for None), ties by ``method``: 'average',
    'min', 'max', 'dense' or 'ordinal'. Mirrors ``jax.scipy.stats.rankdata``."""
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if nan_policy != "propagate":
        raise NotImplementedError("Only nan_policy='propagate' is supported.")
    a = jnp.asarray(a)
    if axis is None:
        a, axis = a.ravel(), -1
    x = jnp.moveaxis(a, axis, -1)
    lt = jnp.sum(x[..., None, :] < x[..., :, None], axis=-1)
    le = jnp.sum(x[..., None, :] <= x[..., :, None], axis=-1)
    if method == "min":
        r = lt + 1
    elif method == "max":
        r = le
    elif method == "average":
        r = (lt + 1 + le) / 2.0
    elif method == "dense":
        # distinct values below x, + 1
        n = x.shape[-1]
        first = jnp.sum((x[..., None, :] == x[..., :, None]) & (jnp.arange(n)[None, :] < jnp.arange(n)[:, None]),
                        axis=-1) == 0
        r = jnp.sum((x[..., None, :] < x[..., :, None]) & first[..., None, :], axis=-1) + 1
    else:
        order = jnp.argsort(x, axis=-1)
        r = jnp.argsort(order, axis=-1) + 1
    if method != "average":
        r = r.astype(jnp.int_)
    return jnp.moveaxis(r, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along ``axis``. Mirrors
    ``jax.scipy.stats.sem``."""
    if nan_policy != "propagate":
        raise NotImplementedError("Only nan_policy='propagate' is supported.")
    a = jnp.asarray(a)
    if axis is None:
        a, axis = a.ravel(), 0
    n = a.shape[axis]
    return jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(n)


class gaussian_kde:
    """A Gaussian kernel density estimate of ``dataset`` (shape (d, n) or (n,)), with Scott's or
    Silverman's rule, a scalar factor or a callable for ``bw_method``, optional ``weights``. ``evaluate``
    (or calling it) gives densities at points of shape (d, m); ``logpdf`` their logs. Mirrors
    ``jax.scipy.stats.gaussian_kde``."""

    def __init__(self, dataset, bw_method=None, weights=None):
        ds = jnp.atleast_2d(jnp.asarray(dataset))
        if ds.dtype not in (np.float32, np.float64):
            ds = ds.astype(jnp.float_)
        d, n = ds.shape
        if n <= 1:
            raise ValueError("`dataset` input should have multiple elements.")
        self.dataset, self.d, self.n = ds, d, n
        if weights is not None:
            w = jnp.asarray(weights, ds.dtype)
            w = w / jnp.sum(w)
            self.neff = 1.0 / jnp.sum(w * w)
        else:
            w = jnp.full((n,), 1.0 / n, ds.dtype)
            self.neff = n
        self.weights = w
        if bw_method is None or bw_method == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif np.isscalar(bw_method):
            factor = bw_method
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        self.factor = factor
        mean = jnp.sum(ds * w, axis=1, keepdims=True)
        dev = ds - mean
        cov = (dev * w) @ dev.T / (1 - jnp.sum(w * w))
        self.data_covariance = cov
        self.covariance = cov * factor ** 2

    def evaluate(self, points):
        return jnp.exp(self.logpdf(points))

    __call__ = evaluate

    def logpdf(self, x):
        pts = jnp.atleast_2d(jnp.asarray(x, self.dataset.dtype))
        if pts.shape[0] != self.d:
            if pts.shape == (1, self.d):
                pts = pts.T
            else:
                raise ValueError(f"points have dimension {pts.shape[0]}, dataset has dimension {self.d}")
        diff = pts.T[:, None, :] - self.dataset.T[None, :, :]          # (m, n, d)
        cov = jnp.broadcast_to(self.covariance, (1, 1, self.d, self.d))
        lk = _mvn.logpdf(diff, jnp.zeros((self.d,), pts.dtype), cov[0, 0])
        return special.logsumexp(lk, axis=1, b=self.weights[None, :])

    def pdf(self, x):
        return self.evaluate(x)

    def integrate_gaussian(self, mean, cov):
        raise NotImplementedError("gaussian_kde.integrate_gaussian")
