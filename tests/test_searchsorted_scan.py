"""jnp.searchsorted's methods (a binary search by default, as JAX's 'scan') and the total-order comparisons
(lax.eq_to_p/le_to_p/lt_to_p) it uses; oracles: NumPy and values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("side", ("left", "right"))
def test_methods_agree_with_numpy_on_ties_nans_and_signed_zeros(method, side):
    a = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 2.0, 2.0, np.inf, np.nan, np.nan], np.float32)
    v = np.array([[np.nan, 0.0, -0.0, 2.0], [-np.inf, np.inf, 3.0, -5.0]], np.float32)
    out = jnp.searchsorted(a, v, side=side, method=method)
    assert out.dtype == np.int32 and out.shape == v.shape
    np.testing.assert_array_equal(np.asarray(out), np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("method", METHODS)
def test_integer_and_scalar_queries(method):
    a = np.array([1, 2, 2, 3, 4, 5, 5], np.int32)
    assert int(jnp.searchsorted(a, 2, method=method)) == 1
    assert int(jnp.searchsorted(a, 2, side="right", method=method)) == 3
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a[:0], np.arange(3), method=method)), [0, 0, 0])


def test_large_a_uses_o_queries_memory():
    # compare_all would need len(a) * len(v) = 1e11 booleans here; the default binary search needs O(len(v))
    rng = np.random.default_rng(0)
    a = np.sort(rng.random(1_000_000).astype(np.float32))
    v = rng.random(100_000).astype(np.float32)
    out = jax.jit(jnp.searchsorted)(a, v)
    np.testing.assert_array_equal(np.asarray(out), np.searchsorted(a, v))


def test_sorter_and_errors():
    a = np.array([4, 3, 5, 1, 2])
    vals = np.array([0, 3, 8, 1.5, 2])
    # recorded from JAX 0.10.2: jnp.searchsorted(a, vals, sorter=jnp.argsort(a))
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, vals, sorter=jnp.argsort(a))), [0, 2, 5, 1, 1])
    with pytest.raises(ValueError, match="invalid argument method='bogus'"):
        jnp.searchsorted(a, vals, method="bogus")
    with pytest.raises(ValueError, match="invalid argument side='x', expected 'left' or 'right'"):
        jnp.searchsorted(np.sort(a), vals, side="x")
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(np.zeros((2, 2)), vals)


def test_total_order_comparisons_match_jax():
    x = np.array([np.nan, -np.nan, -0.0, 0.0, -np.inf, 1.0], np.float32)
    y = np.array([np.nan, np.nan, 0.0, -0.0, -np.inf, np.nan], np.float32)
    # recorded from JAX 0.10.2 (lax.le_to_p.bind(x, y), lt_to_p, eq_to_p, lt_to_p.bind(y, x))
    np.testing.assert_array_equal(np.asarray(lax.le_to_p.bind(x, y)), [True, True, True, False, True, True])
    np.testing.assert_array_equal(np.asarray(lax.lt_to_p.bind(x, y)), [False, True, True, False, False, True])
    np.testing.assert_array_equal(np.asarray(lax.eq_to_p.bind(x, y)), [True, False, False, False, True, False])
    np.testing.assert_array_equal(np.asarray(lax.lt_to_p.bind(y, x)), [False, False, False, True, False, False])
    assert bool(lax.lt_to_p.bind(np.float64(-0.0), np.float64(0.0)))
    assert bool(lax.le_to_p.bind(np.int32(3), np.int32(3)))


def test_isin_by_binary_search_and_its_error_text():
    rng = np.random.default_rng(1)
    elem = rng.integers(0, 5000, 20_000).astype(np.int32)
    test = rng.integers(0, 5000, 3_000).astype(np.int32)
    for method in ("auto", "binary_search", "compare_all"):
        np.testing.assert_array_equal(np.asarray(jnp.isin(elem, test, method=method)), np.isin(elem, test))
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError, match="^method='x' is not implemented; options are 'compare_all', "
                                         "'binary_search', 'sort', and 'auto'$"):
        jnp.isin(np.arange(3), np.arange(2), method="x")
