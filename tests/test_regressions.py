"""Regressions found by trying cranax as a JAX user from a fresh clone (expected values from NumPy/JAX)."""
import numpy as np

import cranax
import cranax.numpy as jnp


def test_searchsorted_does_not_broadcast_a_against_v():
    a = jnp.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, jnp.array([2.5]))), [2])
    np.testing.assert_array_equal(np.asarray(jnp.searchsorted(a, jnp.array([0.0, 2.0, 5.0]), side="right")),
                                  np.searchsorted(np.asarray(a), [0.0, 2.0, 5.0], side="right"))
    got = cranax.jit(lambda x, v: jnp.searchsorted(x, v))(a, jnp.array([[1.5, 3.5], [9.0, -1.0]]))
    np.testing.assert_array_equal(np.asarray(got), [[1, 3], [4, 0]])


def test_python_float_operands_only():
    # Every operand a Python scalar: they meet at the weakly typed float32, as in JAX.
    assert float(jnp.remainder(-3.0, 2.0)) == 1.0
    assert float(jnp.trunc(2.5)) == 2.0 and float(jnp.fix(-2.5)) == -2.0
    q, r = jnp.divmod(-3.0, 2.0)
    assert (float(q), float(r)) == (-2.0, 1.0)
    assert jnp.remainder(-3.0, 2.0).dtype == np.float32 and jnp.remainder(-3.0, 2.0).weak_type


def test_host_view_cannot_be_made_writable():
    x = jnp.ones(3)
    v = np.asarray(x)
    try:
        v.setflags(write=True)
    except ValueError:
        pass
    else:
        raise AssertionError("np.asarray of an Array must stay read-only")
    assert float(jnp.sum(x)) == 3.0 and np.asarray(x).tolist() == [1.0, 1.0, 1.0]


def test_identity_unary_returns_arrays_and_unsigned_wraps_small_negatives():
    f = jnp.floor(3)
    assert isinstance(f, cranax.Array) and int(f) == 3 and f.dtype == np.int32
    assert int(jnp.uint32(1) + (-1)) == 0
    np.testing.assert_array_equal(np.asarray(jnp.ones(2, jnp.uint32) - 1), [0, 0])


def test_softmax_and_logsumexp_of_empty():
    assert cranax.nn.softmax(jnp.zeros(0)).shape == (0,)
    assert float(cranax.nn.logsumexp(jnp.zeros(0))) == -np.inf


def test_static_index_clamps():
    assert int(jnp.arange(10)[11]) == 9 and int(jnp.arange(3)[-9]) == 0


def test_int32_to_float_stays_float32_under_x64():
    # JAX's to_inexact_dtype: int32 -> float32 even with 64-bit mode on; int64 -> float64.
    cranax.config.update("jax_enable_x64", True)
    try:
        assert jnp.sqrt(jnp.array([4], jnp.int32)).dtype == np.float32
        assert jnp.mean(jnp.array([1, 2], jnp.int32)).dtype == np.float32
        assert jnp.sqrt(jnp.array([4], jnp.int64)).dtype == np.float64
    finally:
        cranax.config.update("jax_enable_x64", False)
