"""Statistics: the ``nan*`` reductions, ``quantile``/``percentile``/``median`` (and their nan forms),
``average``, ``cov``, ``corrcoef``, ``ptp``, ``bincount``, ``digitize``, ``histogram`` and
``histogram_bin_edges``. All compositions of ``where``, the reductions, ``sort`` and scatter-add. Mirrors
``jax.numpy``."""
import builtins

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..api import jit
from ..core import Tracer, get_aval
from ..errors import ConcretizationTypeError
from ._creation import arange, full, linspace, zeros
from ._promotion import _to_inexact, asarray, astype, float_
from ._reductions import argmax, argmin, max, mean, min, prod, sum
from ._index_tricks import ravel_multi_index
from . import _shape_ops
from ._shape_ops import cumprod, cumsum, searchsorted, sort, take_along_axis, where
from ._shapes import _canon_axes, broadcast_to, concatenate, expand_dims, moveaxis, ravel, reshape
from ._ufuncs import (abs, add, clip, conj, divide, equal, floor, isinf, isnan, logical_not, multiply, sqrt,
                      subtract, true_divide)

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin",
           "nancumsum", "nancumprod", "quantile", "percentile", "median", "nanquantile", "nanpercentile",
           "nanmedian", "average", "cov", "corrcoef", "ptp", "bincount", "digitize", "histogram_bin_edges",
           "histogram"]


def _inexact(a):
    a = asarray(a)
    if _dtypes.issubdtype(a.dtype, _np.inexact):
        return a
    return astype(a, _to_inexact(_np.dtype(a.dtype), get_aval(a).weak_type))


def _is_inexact(a):
    return _dtypes.issubdtype(asarray(a).dtype, _np.inexact)


# ---------------------------------------------------------------------------------------- nan reductions

def _nansum(a, axis=None, dtype=None, keepdims=False, initial=None, where=None):
    a = asarray(a)
    if _is_inexact(a):
        a = _where_nan(a, 0)
    return sum(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


_nansum.__name__ = "nansum"   # the jit equation's name
_nansum_jit = jit(_nansum, static_argnames=("axis", "dtype", "keepdims"))


def _static_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``sum`` with NaNs counted as zero, one jitted call (printed ``jit[name=nansum]``, as JAX's). Mirrors
    ``jax.numpy.nansum``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nansum is not supported.")
    return _nansum_jit(a, axis=_static_axis(axis), dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``prod`` with NaNs counted as one. Mirrors ``jax.numpy.nanprod``."""
    a = asarray(a)
    if _is_inexact(a):
        a = _where_nan(a, 1)
    return prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _where_nan(a, v):
    return where(isnan(a), _np.asarray(v, a.dtype), a)


def _nan_extremum(red, fill, a, axis, keepdims, initial, where_):
    a = asarray(a)
    if not _is_inexact(a):
        return red(a, axis=axis, keepdims=keepdims, initial=initial, where=where_)
    out = red(_where_nan(a, fill), axis=axis, keepdims=keepdims, initial=initial, where=where_)
    all_nan = sum(logical_not(isnan(a)) if where_ is None else logical_not(isnan(a)) & asarray(where_),
                  axis=axis, keepdims=keepdims) == 0
    return where(all_nan, _np.asarray(_np.nan, a.dtype), out)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``max`` ignoring NaNs (NaN where a slice holds only NaNs). Mirrors ``jax.numpy.nanmax``."""
    return _nan_extremum(max, -_np.inf, a, axis, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``min`` ignoring NaNs (NaN where a slice holds only NaNs). Mirrors ``jax.numpy.nanmin``."""
    return _nan_extremum(min, _np.inf, a, axis, keepdims, initial, where)


def _count(a, axis, keepdims, where_):
    ok = logical_not(isnan(a))
    if where_ is not None:
        ok = ok & asarray(where_)
    return sum(ok, axis=axis, keepdims=keepdims)


def _nanmean(a, axis=None, dtype=None, keepdims=False, where=None):
    a = asarray(a)
    if not _is_inexact(a):
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    dt = _dtypes.canonicalize_dtype(dtype) if dtype is not None else a.dtype
    # JAX's order: the count of non-NaNs in the result dtype, then nansum, then one div
    normalizer = sum(lax.bitwise_not(lax.ne(a, a)), axis=axis, dtype=dt, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis=axis, dtype=dt, keepdims=keepdims, where=where), normalizer)


_nanmean.__name__ = "nanmean"
_nanmean_jit = jit(_nanmean, static_argnames=("axis", "dtype", "keepdims"))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean of the non-NaN entries (NaN for none), one jitted call (printed ``jit[name=nanmean]``, as JAX's).
    Mirrors ``jax.numpy.nanmean``."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    return _nanmean_jit(a, axis=_static_axis(axis), dtype=dtype, keepdims=keepdims, where=where)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Variance of the non-NaN entries, ``sum((x - mean)**2) / (count - ddof)``. Mirrors
    ``jax.numpy.nanvar``."""
    a = _inexact(a)
    dt = _np.dtype(dtype) if dtype is not None else a.dtype
    a = astype(a, dt)
    m = nanmean(a, axis=axis, keepdims=True, where=where) if mean is None else asarray(mean)
    d = subtract(a, m)
    sq = multiply(d, conj(d))
    s = nansum(sq, axis=axis, keepdims=keepdims, where=where)
    n = astype(_count(a, axis, keepdims, where), s.dtype)
    return true_divide(s, subtract(n, ddof))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """``sqrt(nanvar(...))``. Mirrors ``jax.numpy.nanstd``."""
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean))


def _nanarg(red, fill, a, axis, keepdims):
    a = asarray(a)
    if not _is_inexact(a):
        return red(a, axis=axis, keepdims=keepdims)
    nan_mask = isnan(a)
    res = red(_where_nan(a, fill), axis=axis, keepdims=keepdims)
    all_nan = sum(logical_not(nan_mask), axis=axis, keepdims=keepdims) == 0
    return where(all_nan, _np.asarray(-1, res.dtype), res)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Index of the largest non-NaN entry (-1 where all are NaN). Mirrors ``jax.numpy.nanargmax``."""
    return _nanarg(argmax, -_np.inf, a, axis, bool(keepdims))


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Index of the smallest non-NaN entry (-1 where all are NaN). Mirrors ``jax.numpy.nanargmin``."""
    return _nanarg(argmin, _np.inf, a, axis, bool(keepdims))


def nancumsum(a, axis=None, dtype=None, out=None):
    """``cumsum`` with NaNs as zero. Mirrors ``jax.numpy.nancumsum``."""
    a = asarray(a)
    return cumsum(_where_nan(a, 0) if _is_inexact(a) else a, axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``cumprod`` with NaNs as one. Mirrors ``jax.numpy.nancumprod``."""
    a = asarray(a)
    return cumprod(_where_nan(a, 1) if _is_inexact(a) else a, axis=axis, dtype=dtype)


def ptp(a, axis=None, out=None, keepdims=False):
    """``max - min`` along ``axis``. Mirrors ``jax.numpy.ptp``."""
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


# ---------------------------------------------------------------------------------------------- quantiles

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(name, a, q, axis, method, keepdims, squash_nans, weights):
    if weights is not None:
        raise NotImplementedError(f"{name}: weights= is not implemented in cranax")
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {list(_METHODS)}, got {method!r}")
    a = _inexact(a)
    q = asarray(q)
    if not _dtypes.issubdtype(q.dtype, _np.inexact):
        q = astype(q, a.dtype)
    if _dtypes.issubdtype(a.dtype, _np.complexfloating):
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    q = astype(q, a.dtype)
    nd = a.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = _canon_axes(axis, nd, name)
    keep_shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
    rest = [i for i in range(nd) if i not in axes]
    # the reduced axes moved last and flattened into one
    x = a.transpose(tuple(rest) + tuple(axes)) if nd else a
    x = reshape(x, tuple(a.shape[i] for i in rest) + (-1,))
    n_total = x.shape[-1]
    x = sort(x, axis=-1)          # NaNs sort last
    if squash_nans:
        counts = sum(logical_not(isnan(x)), axis=-1, keepdims=True)
    else:
        counts = full(x.shape[:-1] + (1,), n_total, _np.int32)
    n = astype(counts, a.dtype)
    qs = q if q.ndim else reshape(q, (1,))
    qb = reshape(qs, (1,) * (x.ndim - 1) + (qs.shape[0],))
    pos = multiply(qb, subtract(n, 1))
    lo_i = clip(floor(pos), 0, subtract(n, 1))
    hi_i = clip(add(lo_i, 1), 0, subtract(n, 1))
    hi_w = subtract(pos, lo_i)
    lo_w = subtract(1, hi_w)
    def gather(i):
        return take_along_axis(x, astype(i, _np.int32), axis=-1)
    lo, hi = gather(lo_i), gather(hi_i)
    if method == "linear":
        r = add(multiply(lo, lo_w), multiply(hi, hi_w))
    elif method == "lower":
        r = lo
    elif method == "higher":
        r = gather(clip(lax.ceil(pos), 0, subtract(n, 1)))
    elif method == "midpoint":
        r = multiply(add(lo, gather(clip(lax.ceil(pos), 0, subtract(n, 1)))), _np.asarray(0.5, a.dtype))
    elif method == "nearest":
        # round half to even, as NumPy
        r = gather(clip(lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN), 0, subtract(n, 1)))
    else:  # inverted_cdf
        r = gather(clip(subtract(lax.ceil(multiply(qb, n)), 1), 0, subtract(n, 1)))
    if squash_nans:
        r = where(counts == 0, _np.asarray(_np.nan, a.dtype), r)
    else:
        r = where(sum(isnan(x), axis=-1, keepdims=True) > 0, _np.asarray(_np.nan, a.dtype), r)
    # (..., nq) -> (nq, ...) as NumPy
    r = moveaxis(r, -1, 0)
    if keepdims:
        r = reshape(r, (r.shape[0],) + keep_shape)
    if not q.ndim:
        r = r[0]
    return r


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
             weights=None):
    """The ``q``-th quantiles (``q`` in [0, 1], rank 0 or 1) along ``axis``, by NumPy's ``method``
    (``linear``, ``lower``, ``higher``, ``midpoint``, ``nearest``, ``inverted_cdf``); NaN where a slice holds
    a NaN. Result shape ``q.shape + reduced shape``. Raises ValueError for an unknown method. Mirrors
    ``jax.numpy.quantile``."""
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None):
    """``quantile`` ignoring NaNs. Mirrors ``jax.numpy.nanquantile``."""
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
               weights=None):
    """``quantile(a, q / 100, ...)``. Mirrors ``jax.numpy.percentile``."""
    q = true_divide(_inexact(q), 100)
    return _quantile("percentile", a, q, axis, method, keepdims, False, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None):
    """``nanquantile(a, q / 100, ...)``. Mirrors ``jax.numpy.nanpercentile``."""
    q = true_divide(_inexact(q), 100)
    return _quantile("nanpercentile", a, q, axis, method, keepdims, True, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``quantile(a, 0.5, method="midpoint")``. Mirrors ``jax.numpy.median``."""
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False, None)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``median`` ignoring NaNs. Mirrors ``jax.numpy.nanmedian``."""
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True, None)


# ---------------------------------------------------------------------------------------- moments, counts

def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean ``sum(a * w) / sum(w)`` along ``axis`` (``weights`` of ``a``'s shape, or 1-D along a
    single ``axis``); with ``returned`` also the sum of weights. Mirrors ``jax.numpy.average``."""
    a = _inexact(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if axis is None:
            cnt = a.size
        else:
            cnt = int(_np.prod([a.shape[i] for i in _canon_axes(axis, a.ndim, "average")]))
        wsum = full(avg.shape, cnt, avg.dtype)
    else:
        w = asarray(weights)
        dt = _dtypes.result_type(a.dtype, w.dtype)
        if not _dtypes.issubdtype(dt, _np.inexact):
            dt = a.dtype
        a, w = astype(a, dt), astype(w, dt)
        if a.shape != w.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if w.ndim != 1:
                raise ValueError("1D weights expected when shapes of a and weights differ.")
            ax = _canon_axes(axis, a.ndim, "average")
            if len(ax) != 1 or w.shape[0] != a.shape[ax[0]]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = reshape(w, tuple(w.shape[0] if i == ax[0] else 1 for i in range(a.ndim)))
            w = broadcast_to(w, a.shape)
        wsum = sum(w, axis=axis, keepdims=keepdims)
        avg = true_divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    if returned:
        if avg.shape != wsum.shape:
            wsum = broadcast_to(wsum, avg.shape)
        return avg, wsum
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """Covariance matrix of the variables in the rows (``rowvar``) or columns of ``m`` (and ``y``), with
    NumPy's ``ddof``/``bias``/``fweights``/``aweights``. Mirrors ``jax.numpy.cov``."""
    m = asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    X = reshape(_inexact(m), (1, -1)) if m.ndim < 2 else _inexact(m)
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if X.shape[0] == 0:
        return asarray([]).reshape(0, 0)
    if y is not None:
        y = asarray(y)
        Y = reshape(_inexact(y), (1, -1)) if y.ndim < 2 else _inexact(y)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = concatenate((X, astype(Y, X.dtype)), axis=0)
    if dtype is not None:
        X = astype(X, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = asarray(fweights)
    if aweights is not None:
        aw = asarray(aweights)
        w = aw if w is None else multiply(w, aw)
    if w is None:
        avg = mean(X, axis=1)
        wsum = X.shape[1]
        fact = wsum - ddof
    else:
        w = astype(w, X.dtype)
        avg, wsum = average(X, axis=1, weights=w, returned=True)
        wsum = wsum[0]
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = subtract(wsum, ddof)
        else:
            fact = subtract(wsum, true_divide(multiply(ddof, sum(multiply(w, astype(aweights, X.dtype)))),
                                              wsum))
    Xc = subtract(X, avg[:, None])
    Xw = Xc if w is None else multiply(Xc, w)
    c = true_divide(Xw @ conj(Xc).T, fact)
    return c[0, 0] if c.shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients, ``cov / sqrt(outer(diag, diag))`` clipped to [-1, 1]. Mirrors
    ``jax.numpy.corrcoef``."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return true_divide(c, c)
    d = c.diagonal()
    s = sqrt(d)
    c = true_divide(true_divide(c, s[:, None]), s[None, :])
    return clip(c, -1, 1)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed ``weights``) of each non-negative integer in the 1-D ``x``. Under ``jit`` pass a
    static ``length``; without it the length is ``max(x) + 1`` (at least ``minlength``), which needs a
    concrete ``x``. Negative values are not counted, values past ``length`` are dropped. Mirrors
    ``jax.numpy.bincount``."""
    x = asarray(x)
    if not _dtypes.issubdtype(x.dtype, _np.integer) and x.dtype != _np.bool_:
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = int(minlength)
    if minlength < 0:
        raise ValueError("minlength must not be negative")
    if length is None:
        if isinstance(x, Tracer):
            raise ConcretizationTypeError(
                x, "The error arose in jnp.bincount: the output length depends on the values of x; pass a "
                "static length= under jit")
        length = builtins.max(minlength, int(_np.asarray(x).max(initial=-1)) + 1)
    else:
        length = int(length)
    if weights is None:
        vals = full(x.shape, 1, _dtypes.default_int_dtype())
    else:
        vals = asarray(weights)
        if vals.shape != x.shape:
            vals = broadcast_to(vals, x.shape)
    xi = astype(x, _np.int32)
    # negative indices would wrap: send them past the end, where mode="drop" discards them
    xi = where(xi < 0, length, xi)
    return zeros(length, vals.dtype).at[xi].add(vals, mode="drop")


def digitize(x, bins, right=False, *, method=None):
    """Indices of the bins (monotonic, increasing or decreasing) that ``x``'s values fall in, as
    ``numpy.digitize``. Mirrors ``jax.numpy.digitize``."""
    x, bins = asarray(x), asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins.shape[0] == 0:
        return zeros(x.shape, _np.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    inc = bins[-1] >= bins[0]
    up = searchsorted(bins, x, side=side, **kw)
    down = subtract(bins.shape[0], searchsorted(bins[::-1], x, side=side, **kw))
    return astype(where(inc, up, down), _dtypes.default_int_dtype())


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The ``bins + 1`` equal-width edges over ``range`` (default the data's min and max; a zero-width range
    is widened by 0.5 each side), or ``bins`` itself when it is an array. Mirrors
    ``jax.numpy.histogram_bin_edges``."""
    if _np.ndim(bins) == 1:
        return asarray(bins)
    a = _inexact(ravel(a))
    dt = a.dtype
    if range is None:
        lo, hi = min(a), max(a)
    else:
        lo, hi = asarray(range[0], dt), asarray(range[1], dt)
    same = lo == hi
    lo = where(same, subtract(lo, 0.5), lo)
    hi = where(same, add(hi, 0.5), hi)
    return astype(linspace(lo, hi, int(bins) + 1), dt)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """``(counts, edges)`` of the values of ``a`` in ``bins`` (a count of equal-width bins, or the edges);
    the last bin includes its right edge; values outside are not counted. With ``density`` the counts are
    normalized to integrate to 1. Mirrors ``jax.numpy.histogram``."""
    edges = histogram_bin_edges(a, bins, range, weights)
    a = ravel(asarray(a))
    nb = edges.shape[0] - 1
    idx = searchsorted(edges, a, side="right")
    idx = where(a == edges[-1], nb, idx)
    w = _ones_float(a) if weights is None else ravel(asarray(weights))
    outside = (idx == 0) | (idx > nb) | isnan(astype(a, edges.dtype))
    counts = zeros(nb + 2, w.dtype).at[where(outside, 0, idx)].add(where(outside, 0, w))[1:nb + 1]
    if density:
        widths = subtract(edges[1:], edges[:-1])
        counts = true_divide(true_divide(counts, widths), sum(counts))
    return counts, edges


def _ones_float(a):
    return full(a.shape, 1, _dtypes.canonicalize_dtype(float_))



# ---- multidimensional histograms (issue 22)

def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """``(counts, edges)`` of the N points of ``sample`` (N, D) in a D-dimensional grid of bins (a count
    per dimension, one count for all, or edge arrays); the last bin of each dimension includes its right
    edge, points outside are not counted. Counts are int32 without ``weights``/``density``. Mirrors
    ``jax.numpy.histogramdd``."""
    sample = asarray(sample)
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 2-D (N, D), got shape {sample.shape}")
    n, d = sample.shape
    if range is not None and (len(range) != d or any(r is not None and _np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; got "
                         f"range={range}")
    try:
        if len(bins) != d:
            raise ValueError(f"should be a bin for each dimension.")
        per_dim = list(bins)
    except TypeError:
        per_dim = d * [bins]
    idx_by_dim, edges_by_dim = [], []
    for i in builtins.range(d):
        col = sample[:, i]
        edges = histogram_bin_edges(col, per_dim[i], None if range is None else range[i], weights)
        idx = searchsorted(edges, col, side="right")
        idx = where(col == edges[-1], idx - 1, idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(e.shape[0] + 1 for e in edges_by_dim)
    flat = ravel_multi_index(tuple(idx_by_dim), nbins, mode="clip")
    hist = bincount(flat, weights, length=int(_np.prod(nbins)))
    hist = reshape(hist, nbins)[(slice(1, -1),) * d]
    if density:
        hist = astype(hist, sample.dtype if sample.dtype.kind == "f" else _dtypes.canonicalize_dtype(float_))
        hist = hist / sum(hist)
        for k in builtins.range(d):
            shape = [1] * d
            shape[k] = nbins[k] - 2
            hist = hist / reshape(edges_by_dim[k][1:] - edges_by_dim[k][:-1], tuple(shape))
    return hist, edges_by_dim


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """``(counts, x_edges, y_edges)``: ``histogramdd`` of the points ``(x[i], y[i])``; ``bins`` is a count,
    a pair of counts or edge arrays, or one edge array for both. Mirrors ``jax.numpy.histogram2d``."""
    try:
        nb = len(bins)
    except TypeError:
        nb = 1
    if nb != 1 and nb != 2:
        edges = asarray(bins)
        bins = [edges, edges]
    x, y = asarray(x), asarray(y)
    dt = _dtypes.result_type(x, y)
    sample = concatenate([reshape(astype(x, dt), (-1, 1)), reshape(astype(y, dt), (-1, 1))], axis=1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]

__all__ += ['histogramdd', 'histogram2d']


_shape_ops._later["median"] = median   # jnp.pad's stat mode (_shape_ops cannot import this module)
