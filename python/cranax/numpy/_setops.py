"""Set operations on flattened arrays: ``unique`` (and ``unique_all``/``_counts``/``_inverse``/``_values``),
``isin``, ``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``, from a stable sort and a mask of run
starts. Their result sizes depend on the values, so under ``jit`` pass a static ``size=`` (short results are
padded with ``fill_value``: by default the smallest value; longer ones truncated). Mirrors ``jax.numpy``."""
from collections import namedtuple

import numpy as _np

from .. import dtypes as _dtypes
from ..core import Tracer
from ..errors import ConcretizationTypeError
from ._creation import arange, full, zeros
from ._promotion import asarray, astype
from ._reductions import any, sum
from ._shape_ops import argsort, cumsum, nonzero, searchsorted, sort, take, where
from ._shapes import concatenate, ravel, reshape
from ._ufuncs import equal, isnan, logical_and, logical_not, logical_or, not_equal

__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin", "intersect1d",
           "union1d", "setdiff1d", "setxor1d"]

_UniqueAllResult = namedtuple("_UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
_UniqueCountsResult = namedtuple("_UniqueCountsResult", ["values", "counts"])
_UniqueInverseResult = namedtuple("_UniqueInverseResult", ["values", "inverse_indices"])


def _concrete_size(mask, size, name):
    if size is not None:
        return int(size)
    if isinstance(mask, Tracer):
        raise ConcretizationTypeError(
            mask, f"The error arose in jnp.{name}: the size of the result depends on the values of the input; pass "
            f"a static size= (and optionally fill_value=) under jit")
    return int(_np.asarray(mask).sum())


def _run_starts(s, equal_nan):
    """True where a sorted 1-D ``s`` starts a run of equal values."""
    if s.shape[0] == 0:
        return zeros((0,), bool)
    diff = not_equal(s[1:], s[:-1])
    if equal_nan and _dtypes.issubdtype(s.dtype, _np.inexact):
        diff = logical_and(diff, logical_not(logical_and(isnan(s[1:]), isnan(s[:-1]))))
    return concatenate([full((1,), True, bool), diff])


def _unique(ar, return_index, return_inverse, return_counts, axis, equal_nan, size, fill_value, name):
    ar = asarray(ar)
    if axis is not None:
        raise NotImplementedError(f"jnp.{name} with axis= is not implemented in cranax (flattens only)")
    shape = ar.shape
    a = ravel(ar)
    if _dtypes.issubdtype(a.dtype, _np.complexfloating):
        # as JAX: a complex value with a NaN part becomes nan+0j (the NaNs then sort together, last)
        a = where(isnan(a), asarray(complex(_np.nan, 0), a.dtype), a)
    n = a.shape[0]
    perm = argsort(a, stable=True)
    s = take(a, perm)
    mask = _run_starts(s, equal_nan)
    k = _concrete_size(mask, size, name)
    # positions (in sorted order) of the run starts, padded with n past the real ones
    starts = nonzero(mask, size=k, fill_value=n)[0] if n else zeros((k,), _np.int32)
    valid = starts < n
    safe = where(valid, starts, 0)
    vals = take(s, safe) if n else full((k,), 0, a.dtype)
    if size is not None and n:
        fill = s[0] if fill_value is None else asarray(fill_value, a.dtype)
        vals = where(valid, vals, fill)
    out = [vals]
    if return_index:
        idx = take(perm, safe) if n else zeros((k,), _np.int32)
        out.append(astype(idx, _dtypes.default_int_dtype()))
    if return_inverse:
        run = cumsum(mask) - 1 if n else zeros((0,), _np.int32)
        inv = zeros((n,), _dtypes.default_int_dtype()).at[perm].set(astype(run, _dtypes.default_int_dtype()))
        out.append(reshape(inv, shape))
    if return_counts:
        ends = concatenate([starts[1:], full((1,), n, starts.dtype)]) if k else starts
        ends = where(valid, where(ends > n, n, ends), 0)
        cnt = where(valid, ends - starts, 0)
        out.append(astype(cnt, _dtypes.default_int_dtype()))
    return out[0] if len(out) == 1 else tuple(out)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):
    """The sorted unique values of the flattened ``ar`` and, on request, the index of each one's first
    occurrence, the inverse (``ar``'s shape, indices into the values) and the counts. ``size`` fixes the
    length (needed under ``jit``); missing entries are ``fill_value`` (default: the smallest value, index of
    it, count 0). NaNs count as one value when ``equal_nan``. Raises ``ConcretizationTypeError`` for a traced
    ``ar`` without ``size``. Mirrors ``jax.numpy.unique``."""
    return _unique(ar, return_index, return_inverse, return_counts, axis, equal_nan, size, fill_value, "unique")


# The array-API forms: each NaN is its own value (JAX 0.10.2 passes equal_nan=False, whatever its docstrings say)

def unique_values(x, *, size=None, fill_value=None):
    """``unique(x, equal_nan=False)``. Mirrors ``jax.numpy.unique_values``."""
    return _unique(x, False, False, False, None, False, size, fill_value, "unique_values")


def unique_counts(x, *, size=None, fill_value=None):
    """``(values, counts)``. Mirrors ``jax.numpy.unique_counts``."""
    return _UniqueCountsResult(*_unique(x, False, False, True, None, False, size, fill_value, "unique_counts"))


def unique_inverse(x, *, size=None, fill_value=None):
    """``(values, inverse_indices)``. Mirrors ``jax.numpy.unique_inverse``."""
    return _UniqueInverseResult(*_unique(x, False, True, False, None, False, size, fill_value, "unique_inverse"))


def unique_all(x, *, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)``. Mirrors ``jax.numpy.unique_all``."""
    return _UniqueAllResult(*_unique(x, True, True, True, None, False, size, fill_value, "unique_all"))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each entry of ``element`` occurs in ``test_elements`` (``element``'s shape). Mirrors
    ``jax.numpy.isin``."""
    element, test = asarray(element), ravel(asarray(test_elements))
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"method={method!r} is not implemented; options are "
                         "'compare_all', 'binary_search', 'sort', and 'auto'")
    if test.shape[0] == 0:
        out = zeros(element.shape, bool)
    elif method == "compare_all" or (method == "auto" and test.shape[0] <= 64):
        out = any(equal(element[..., None], test), axis=-1)
    else:
        st = sort(test)
        i = searchsorted(st, element)
        out = equal(take(st, where(i < st.shape[0], i, st.shape[0] - 1)), element)
    return logical_not(out) if invert else out


def _fill(vals, valid, fill_value, default):
    fill = default if fill_value is None else asarray(fill_value, vals.dtype)
    return where(valid, vals, fill)


def _select_sorted(s, keep, size, fill_value, name, default_fill=None):
    """The entries of a sorted 1-D ``s`` where ``keep``, in order, ``size`` of them."""
    n = s.shape[0]
    k = _concrete_size(keep, size, name)
    pos = nonzero(keep, size=k, fill_value=n)[0] if n else zeros((k,), _np.int32)
    valid = pos < n
    vals = take(s, where(valid, pos, 0)) if n else full((k,), 0, s.dtype)
    if size is not None and n:
        vals = _fill(vals, valid, fill_value, s[0] if default_fill is None else asarray(default_fill, s.dtype))
    return vals, pos, valid


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values of both arrays. Mirrors ``jax.numpy.union1d``."""
    a = concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))])
    return _unique(a, False, False, False, None, True, size, fill_value, "union1d")


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ``ar1`` not in ``ar2`` (padding default 0). Mirrors ``jax.numpy.setdiff1d``."""
    a = ravel(asarray(ar1))
    s = sort(a)
    keep = logical_and(_run_starts(s, True), logical_not(isin(s, ar2)))
    return _select_sorted(s, keep, size, fill_value, "setdiff1d", default_fill=0)[0]


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays. Mirrors ``jax.numpy.setxor1d``."""
    u1 = unique(ar1) if size is None else unique(ar1, size=ravel(asarray(ar1)).shape[0])
    u2 = unique(ar2) if size is None else unique(ar2, size=ravel(asarray(ar2)).shape[0])
    s = sort(concatenate([u1, u2]))
    n = s.shape[0]
    if n == 0:
        return s
    neq_prev = concatenate([full((1,), True, bool), not_equal(s[1:], s[:-1])])
    neq_next = concatenate([not_equal(s[1:], s[:-1]), full((1,), True, bool)])
    keep = logical_and(neq_prev, neq_next)
    return _select_sorted(s, keep, size, fill_value, "setxor1d")[0]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """Sorted unique values in both arrays; with ``return_indices`` also the index of each one's first
    occurrence in ``ar1`` and ``ar2``. Mirrors ``jax.numpy.intersect1d``."""
    a1, a2 = ravel(asarray(ar1)), ravel(asarray(ar2))
    p1 = argsort(a1, stable=True)
    s1 = take(a1, p1)
    first = _run_starts(s1, True)
    keep = logical_and(first, isin(s1, a2))
    vals, pos, valid = _select_sorted(s1, keep, size, fill_value, "intersect1d")
    if not return_indices:
        return vals
    i1 = take(p1, where(valid, pos, 0))
    p2 = argsort(a2, stable=True)
    s2 = take(a2, p2)
    j = searchsorted(s2, vals)
    i2 = take(p2, where(j < s2.shape[0], j, 0))
    it = _dtypes.default_int_dtype()
    return vals, astype(i1, it), astype(i2, it)
