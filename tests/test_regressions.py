"""Regressions found by trying cranax as a JAX user from a fresh clone (expected values from NumPy/JAX)."""
import numpy as np
import pytest

import cranax
import cranax as jax
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
    assert float(jnp.trunc(2.5)) == 2.0 and float(jnp.trunc(-2.5)) == -2.0   # (JAX 0.10.2 has no jnp.fix)
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


# --- found by a user-style QA pass over this session's features ---------------------------------------

@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "uint16", "int32", "float32", "float64", "bool"])
def test_large_transposes_of_every_element_size(dt):
    # the blocked transpose copy (arrays of 16384+ elements) had no 2-byte case and copied bytes
    x = (np.arange(3 * 128 * 130) % 30000).reshape(3, 128, 130).astype(dt)
    for perm in [(0, 2, 1), (2, 1, 0), (1, 2, 0)]:
        np.testing.assert_array_equal(np.asarray(jax.lax.transpose(jnp.asarray(x), perm)), x.transpose(perm))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x[0]).T), x[0].T)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a.T)(jnp.asarray(x[0]))), x[0].T)


def test_lazy_transpose_shared_by_threads():
    import threading
    x_np = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    x = jnp.asarray(x_np)
    errors = []
    for _ in range(20):
        t = x.T

        def use(k):
            try:
                r = (t + 1) if k % 2 else jnp.dot(t, x)
                r.block_until_ready()
            except Exception as e:  # pragma: no cover - the failure being tested
                errors.append(e)
        ths = [threading.Thread(target=use, args=(k,)) for k in range(6)]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
    assert not errors, errors[:3]
    np.testing.assert_allclose(np.asarray(jnp.dot(x.T, x)), x_np.T.astype(np.float64) @ x_np, rtol=1e-4, atol=1e-3)


def test_randint_clips_array_and_traced_bounds_to_the_dtype():
    # JAX clips (not wraps) bounds into the dtype's range; values recorded from JAX 0.10.2
    k = jax.random.PRNGKey(7)
    r = jax.random.randint(k, (6,), np.array([0, 10, -5, 200, 1, 2]), np.array([5, 300, 5, 100, 1000, 3]), dtype="uint32")
    np.testing.assert_array_equal(np.asarray(r), [4, 152, 0, 200, 253, 2])
    r = jax.jit(lambda kk, lo, hi: jax.random.randint(kk, (8,), lo, hi, dtype="uint32"))(k, -3, 200)
    np.testing.assert_array_equal(np.asarray(r), [199, 22, 100, 37, 22, 86, 84, 154])


def test_float64_samplers_broadcast_array_bounds():
    jax.config.update("jax_enable_x64", True)  # restored by conftest
    lo, hi = jnp.array([-1.0, 0.0, -3.0]), jnp.array([1.0, 2.0, 0.5])
    r = np.asarray(jax.random.truncated_normal(jax.random.PRNGKey(11), lo, hi, (4, 3)))
    assert r.shape == (4, 3) and r.dtype == np.float64
    assert np.all(r > np.asarray(lo)) and np.all(r < np.asarray(hi))
    u = np.asarray(jax.random.uniform(jax.random.PRNGKey(2), (4, 3), minval=lo, maxval=hi))
    assert u.dtype == np.float64 and np.all(u >= np.asarray(lo)) and np.all(u < np.asarray(hi))


def test_lazy_transpose_errors_are_jax_text():
    x = jnp.ones((300, 256))
    # JAX 0.10.2's text for both
    msg = "dot_general requires contracting dimensions to have the same shape, got (300,) and (256,)."
    with pytest.raises(TypeError) as e:
        x.T @ x.T
    assert str(e.value) == msg
    with pytest.raises(TypeError) as e:
        jnp.dot(x.T, x.T)
    assert str(e.value) == msg
