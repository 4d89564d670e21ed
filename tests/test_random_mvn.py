"""random.multivariate_normal and random.orthogonal (issue 19: flax.nnx's Rngs names them). Values recorded
from real JAX 0.10.2 (CPU) for the same keys and arguments."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp

MEAN = [1.0, 2.0]
COV = [[2.0, 0.5], [0.5, 1.0]]
JAX_MVN_CHOLESKY = [[3.29476261138916, 4.468152046203613], [0.38680487871170044, 1.7731614112854004],
                    [1.2490301132202148, 1.1529512405395508]]
JAX_MVN_BATCH = [[1.622642159461975, 2.0252647399902344, -0.4335944354534149],
                 [-0.07861734926700592, 0.17609089612960815, -0.9720892310142517]]
JAX_ORTHO_3 = [[0.9554101228713989, 0.2941357493400574, 0.02599557861685753],
               [-0.04628981649875641, 0.2361408770084381, -0.9706156253814697],
               [-0.2916313707828522, 0.9261326193809509, 0.23922686278820038]]
JAX_ORTHO_3x2 = [[0.96083664894104, 0.18604838848114014], [-0.2567500174045563, 0.31881120800971985],
                 [0.1042710393667221, -0.9293790459632874]]


def test_multivariate_normal_cholesky_matches_jax():
    x = jax.random.multivariate_normal(jax.random.key(0), jnp.array(MEAN), jnp.array(COV), (3,))
    assert x.shape == (3, 2) and x.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(x), JAX_MVN_CHOLESKY, rtol=2e-6, atol=1e-6)


def test_multivariate_normal_batch_shape_from_mean():
    x = jax.random.multivariate_normal(jax.random.key(0), jnp.zeros((2, 3)), jnp.eye(3))
    assert x.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(x), JAX_MVN_BATCH, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_moments(method):
    # eigh/svd factors may differ from JAX's by column signs (LAPACK's convention), so these methods are
    # checked by their distribution: the sample mean and covariance of 20000 draws.
    x = np.asarray(jax.random.multivariate_normal(jax.random.key(1), jnp.array(MEAN), jnp.array(COV), (20000,),
                                                  method=method), np.float64)
    np.testing.assert_allclose(x.mean(0), MEAN, atol=0.04)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.06)


def test_multivariate_normal_under_jit():
    f = jax.jit(lambda k, m, c: jax.random.multivariate_normal(k, m, c, (3,)))
    np.testing.assert_allclose(np.asarray(f(jax.random.key(0), jnp.array(MEAN), jnp.array(COV))),
                               JAX_MVN_CHOLESKY, rtol=2e-6, atol=1e-6)


def test_multivariate_normal_errors():
    k = jax.random.key(0)
    with pytest.raises(ValueError, match="method must be one of"):
        jax.random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2), method="qr")
    with pytest.raises(ValueError, match="cov.shape"):
        jax.random.multivariate_normal(k, jnp.zeros(2), jnp.eye(3))
    with pytest.raises(ValueError, match="mean.ndim"):
        jax.random.multivariate_normal(k, jnp.zeros(()), jnp.eye(3))


def test_orthogonal_matches_jax():
    q = jax.random.orthogonal(jax.random.key(0), 3)
    np.testing.assert_allclose(np.asarray(q), JAX_ORTHO_3, rtol=2e-6, atol=1e-6)
    q2 = jax.random.orthogonal(jax.random.key(0), 3, m=2)
    assert q2.shape == (3, 2)
    np.testing.assert_allclose(np.asarray(q2), JAX_ORTHO_3x2, rtol=2e-6, atol=1e-6)


def test_orthogonal_batched_is_orthonormal():
    q = np.asarray(jax.random.orthogonal(jax.random.key(3), 4, shape=(5,)), np.float64)
    assert q.shape == (5, 4, 4)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (5, 4, 4)), atol=1e-5)
