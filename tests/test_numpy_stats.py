"""cranax.numpy's statistics, set operations, differences/interpolation/polynomials and cranax.ops's segment
reductions against NumPy (the oracle), plus JAX 0.10.2's recorded results where JAX differs from NumPy
(``size=`` padding, dtypes) and the behaviour under ``jit``."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import ops
from cranax.errors import ConcretizationTypeError

RNG = np.random.default_rng(0)
A = RNG.standard_normal((5, 7)).astype(np.float32)
AN = A.copy()
AN[1, 2] = AN[3, 0] = AN[3, 5] = np.nan
AN[4, :] = np.nan


def close(got, want, rtol=2e-6, atol=1e-6):
    got = np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_reductions(name, axis):
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if (
            axis == 1 and name in ("nanmax", "nanmin", "nanmean", "nanvar", "nanstd")) else _nullcontext():
        want = getattr(np, name)(AN, axis=axis)
    close(getattr(jnp, name)(AN, axis=axis), want, rtol=1e-5)


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_nanarg_and_cum():
    x = np.array([[np.nan, 2., 5.], [np.nan, np.nan, np.nan], [1., np.nan, 0.]], np.float32)
    # JAX returns -1 for all-NaN slices (NumPy raises)
    assert np.asarray(jnp.nanargmax(x, axis=1)).tolist() == [2, -1, 0]
    assert np.asarray(jnp.nanargmin(x, axis=1)).tolist() == [1, -1, 2]
    close(jnp.nancumsum(x, axis=1), np.nancumsum(x, axis=1))
    close(jnp.nancumprod(x, axis=0), np.nancumprod(x, axis=0))
    close(jnp.ptp(A, axis=0), np.ptp(A, axis=0))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"])
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_quantile_methods(method, axis):
    q = [0.0, 0.1, 0.5, 0.93, 1.0]
    close(jnp.quantile(A, q, axis=axis, method=method), np.quantile(A, q, axis=axis, method=method), rtol=1e-5)
    close(jnp.percentile(A, 37.5, axis=axis, method=method), np.percentile(A, 37.5, axis=axis, method=method),
          rtol=1e-5)
    close(jnp.nanquantile(AN[:4], q, axis=axis, method=method),
          np.nanquantile(AN[:4], q, axis=axis, method=method), rtol=1e-5)


def test_median_family():
    close(jnp.median(A), np.median(A))
    close(jnp.median(A, axis=0, keepdims=True), np.median(A, axis=0, keepdims=True))
    assert np.isnan(np.asarray(jnp.median(AN)))
    close(jnp.nanmedian(AN[:4], axis=1), np.nanmedian(AN[:4], axis=1))
    close(jnp.nanpercentile(AN[:4], [10, 90], axis=0), np.nanpercentile(AN[:4], [10, 90], axis=0), rtol=1e-5)
    close(cranax.jit(jnp.median)(A), np.median(A))
    with pytest.raises(ValueError, match="method"):
        jnp.quantile(A, 0.5, method="bogus")


def test_average_cov_corrcoef():
    w = RNG.random(7).astype(np.float32)
    close(jnp.average(A, axis=1, weights=w), np.average(A, axis=1, weights=w), rtol=1e-5)
    avg, ws = jnp.average(A, weights=np.ones_like(A), returned=True)
    close(avg, np.average(A), rtol=1e-5)
    close(ws, 35.)
    close(jnp.cov(A), np.cov(A), rtol=1e-4, atol=1e-5)
    close(jnp.cov(A, rowvar=False, bias=True), np.cov(A, rowvar=False, bias=True), rtol=1e-4, atol=1e-5)
    fw = np.array([1, 2, 1, 3, 1, 1, 2])
    close(jnp.cov(A, fweights=fw, aweights=w), np.cov(A, fweights=fw, aweights=w), rtol=1e-4, atol=1e-5)
    close(jnp.cov(A[0], A[1]), np.cov(A[0], A[1]), rtol=1e-4, atol=1e-5)
    close(jnp.corrcoef(A), np.corrcoef(A), rtol=1e-4, atol=1e-5)


def test_bincount_digitize_histogram():
    x = np.array([0, 1, 1, 4, 2, 4, 4])
    assert np.asarray(jnp.bincount(x)).tolist() == np.bincount(x).tolist()
    close(jnp.bincount(x, weights=np.arange(7.), minlength=7), np.bincount(x, np.arange(7.), minlength=7))
    f = cranax.jit(lambda v: jnp.bincount(v, length=3))
    assert np.asarray(f(x)).tolist() == [1, 2, 1]  # JAX drops values past length
    with pytest.raises(ConcretizationTypeError, match="length"):
        cranax.jit(jnp.bincount)(x)
    bins = np.array([0., 1., 2.5, 4.])
    v = np.array([-1., 0., 0.5, 1., 2.5, 3., 4., 5.])
    for right in (False, True):
        assert np.asarray(jnp.digitize(v, bins, right=right)).tolist() == np.digitize(v, bins, right=right).tolist()
        assert np.asarray(jnp.digitize(v, bins[::-1], right=right)).tolist() == \
            np.digitize(v, bins[::-1], right=right).tolist()
    data = RNG.standard_normal(1000).astype(np.float32)
    for kw in ({}, {"bins": 7}, {"bins": bins}, {"bins": 5, "range": (-1, 1)}, {"density": True}):
        c, e = jnp.histogram(data, **kw)
        wc, we = np.histogram(data, **kw)
        close(e, we, rtol=1e-5)
        close(c, wc, rtol=1e-5)
    close(jnp.histogram_bin_edges(np.ones(3), 4), np.histogram_bin_edges(np.ones(3), 4))


def test_unique_and_sets():
    x = np.array([[3., 1., 2.], [3., np.nan, 1.]], np.float32)
    v, i, inv, c = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    wv, wi, winv, wc = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    close(v, wv)
    assert np.asarray(i).tolist() == wi.tolist() and np.asarray(c).tolist() == wc.tolist()
    assert np.asarray(inv).tolist() == winv.reshape(x.shape).tolist()
    # JAX 0.10.2: size= pads values with the smallest value, indices with its index, counts with 0
    y = np.array([3, 1, 1, 5])
    res = cranax.jit(lambda a: jnp.unique(a, size=6, return_index=True, return_inverse=True,
                                          return_counts=True))(y)
    assert [np.asarray(r).tolist() for r in res] == [[1, 3, 5, 1, 1, 1], [1, 0, 3, 1, 1, 1], [1, 0, 0, 2],
                                                     [2, 1, 1, 0, 0, 0]]
    assert np.asarray(jnp.unique(y, size=6, fill_value=-1)).tolist() == [1, 3, 5, -1, -1, -1]
    assert np.asarray(jnp.unique(y, size=2)).tolist() == [1, 3]
    with pytest.raises(ConcretizationTypeError, match="size="):
        cranax.jit(jnp.unique)(y)
    r = jnp.unique_all(y)
    assert np.asarray(r.counts).tolist() == [2, 1, 1] and np.asarray(r.indices).tolist() == [1, 0, 3]
    assert np.asarray(jnp.unique_counts(y).counts).tolist() == [2, 1, 1]
    assert np.asarray(jnp.unique_inverse(y.reshape(2, 2)).inverse_indices).tolist() == [[1, 0], [0, 2]]
    assert np.asarray(jnp.unique_values(y)).tolist() == [1, 3, 5]
    a1, a2 = np.array([1, 2, 3, 3, 9]), np.array([3, 2, 7, 11])
    vals, i1, i2 = jnp.intersect1d(a1, a2, return_indices=True)
    wv, w1, w2 = np.intersect1d(a1, a2, return_indices=True)
    assert [np.asarray(t).tolist() for t in (vals, i1, i2)] == [wv.tolist(), w1.tolist(), w2.tolist()]
    assert np.asarray(jnp.union1d(a1, a2)).tolist() == np.union1d(a1, a2).tolist()
    assert np.asarray(jnp.setdiff1d(a1, a2)).tolist() == np.setdiff1d(a1, a2).tolist()
    assert np.asarray(jnp.setxor1d(a1, a2)).tolist() == np.setxor1d(a1, a2).tolist()
    # JAX 0.10.2's padding: setdiff1d with 0, union1d with the smallest value
    assert np.asarray(jnp.setdiff1d(np.array([1, 2, 3, 3]), np.array([3, 7]), size=4)).tolist() == [1, 2, 0, 0]
    assert np.asarray(jnp.union1d(np.array([1, 2, 3, 3]), np.array([3, 7]), size=6)).tolist() == [1, 2, 3, 7, 1, 1]
    assert np.asarray(jnp.intersect1d(np.array([1, 2, 3, 3]), np.array([3, 2, 7]), size=4,
                                      fill_value=0)).tolist() == [2, 3, 0, 0]
    big = RNG.integers(0, 500, 300)
    test = RNG.integers(0, 500, 100)
    for method in ("auto", "compare_all", "sort"):
        assert np.asarray(jnp.isin(big, test, method=method)).tolist() == np.isin(big, test).tolist()
    assert np.asarray(jnp.isin(big, test, invert=True)).tolist() == np.isin(big, test, invert=True).tolist()


def test_diff_interp_select_and_integer_helpers():
    a = (np.arange(12.).reshape(3, 4) ** 2).astype(np.float32)
    close(jnp.diff(a, 2, axis=1), np.diff(a, 2, axis=1))
    close(jnp.diff(a, axis=0, prepend=0., append=a[-1:]), np.diff(a, axis=0, prepend=0., append=a[-1:]))
    assert np.asarray(jnp.diff(np.array([True, False, False]))).tolist() == [True, False]
    with pytest.raises(ValueError, match="order must be non-negative"):
        jnp.diff(a, -1)
    close(jnp.ediff1d(np.array([1, 3, 6]), to_begin=-1, to_end=[9, 9]), np.ediff1d([1, 3, 6], to_end=[9, 9], to_begin=-1))
    close(jnp.trapezoid(a, axis=1), np.trapezoid(a, axis=1))
    close(jnp.trapezoid(np.array([1., 2, 3]), x=np.array([0., 1, 3])), np.trapezoid([1., 2, 3], x=[0., 1, 3]))
    x = np.linspace(-1, 5, 13).astype(np.float32)
    xp, fp = np.array([0., 1, 2, 4], np.float32), np.array([1., 3, 2, 0], np.float32)
    close(jnp.interp(x, xp, fp), np.interp(x, xp, fp))
    close(jnp.interp(x, xp, fp, left=-5, right=7), np.interp(x, xp, fp, left=-5, right=7))
    close(jnp.interp(x, xp, fp, period=3.), np.interp(x, xp, fp, period=3.), atol=1e-5)
    conds = [np.array([True, False, False]), np.array([True, True, False])]
    choices = [np.array([1, 2, 3]), np.array([4, 5, 6])]
    assert np.asarray(jnp.select(conds, choices, -1)).tolist() == np.select(conds, choices, -1).tolist()
    p, q = np.array([12, -18, 0, 7, 0]), np.array([8, 12, 5, 0, 0])
    assert np.asarray(jnp.gcd(p, q)).tolist() == np.gcd(p, q).tolist()
    assert np.asarray(jnp.lcm(p, q)).tolist() == np.lcm(p, q).tolist()
    close(jnp.copysign(np.array([1., -2, 3]), np.array([-1., 1, -0.])), np.copysign([1., -2, 3], [-1., 1, -0.]))
    with np.errstate(over="ignore"):
        want = np.ldexp(np.array([1., 3, 0.5], np.float32), [3, -1, 130])
    close(jnp.ldexp(np.array([1., 3, 0.5], np.float32), np.array([3, -1, 130])), want)


def test_polynomials():
    p = np.array([1., 2, 3, 4], np.float32)
    close(jnp.vander(np.array([1., 2, 3]), 4), np.vander([1., 2, 3], 4))
    close(jnp.vander(np.array([1., 2, 3]), increasing=True), np.vander([1., 2, 3], increasing=True))
    close(jnp.polyval(p, np.array([0.5, 2.])), np.polyval(p, [0.5, 2.]))
    close(jnp.polyadd(p, np.array([1., 1])), np.polyadd(p, [1., 1]))
    close(jnp.polysub(np.array([1., 2]), p), np.polysub([1., 2], p))
    close(jnp.polymul(p, np.array([1., -1, 3])), np.polymul(p, [1., -1, 3]))
    close(jnp.polyder(p, 2), np.polyder(p, 2))
    close(jnp.polyint(p, 2, k=[1., 2.]), np.polyint(p, 2, k=[1., 2.]), rtol=1e-5)


def test_segment_reductions():
    d = np.arange(10.).reshape(5, 2)
    ids = np.array([0, 2, 0, 3, -1])
    # JAX 0.10.2's results (out-of-range ids dropped; empty segments 0 / -inf)
    close(ops.segment_sum(d, ids, 4), [[4, 6], [0, 0], [2, 3], [6, 7]])
    close(ops.segment_max(d, ids, 4), [[4, 5], [-np.inf, -np.inf], [2, 3], [6, 7]])
    assert np.asarray(ops.segment_min(np.array([3, 1, 2]), np.array([1, 1, 0]))).tolist() == [2, 1]
    close(ops.segment_prod(np.array([2., 3, 4]), np.array([0, 0, 1])), [6, 4])
    close(cranax.jit(lambda a, i: ops.segment_sum(a, i, num_segments=4))(d, ids), [[4, 6], [0, 0], [2, 3], [6, 7]])
    with pytest.raises(ConcretizationTypeError, match="num_segments"):
        cranax.jit(ops.segment_sum)(d, ids)
