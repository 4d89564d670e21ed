"""jnp.linalg.cholesky / lax.linalg.cholesky of order 1..32 carry JAX's bits: JAX's CPU lowering calls LAPACK's
potrf from SciPy's OpenBLAS, whose unblocked potf2 (n <= 32) cranax's small path (rust
backend/cpu/library/small_chol.rs) follows step by step. Digests recorded from JAX 0.10.2 (x64 on, this host's
OpenBLAS Haswell kernels, OPENBLAS_CORETYPE=Haswell) by the same matrices below; JAX is not needed here."""
import hashlib

import numpy as np
import pytest

import cranax
from exact_dots import gram
import cranax.numpy as jnp
from cranax import lax


def mats(n, dt):
    """Six n x n matrices from an integer hash (no RNG, so any NumPy makes the same): SPD with a large and a
    small diagonal shift, an exactly symmetric one, a nonsymmetric one (symmetrized), one not positive
    definite (a factor of NaNs), and a scaled SPD one."""
    out = []
    for t in range(6):
        i = np.arange(n * n, dtype=np.uint64) + np.uint64(1000 * n + 7 * t)
        h = (i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(2 ** 32)
        b = (h.astype(np.float64) / 2 ** 32 - 0.5).reshape(n, n).astype(dt)
        if t == 0:
            a = gram(b) + n * np.eye(n, dtype=dt)
        elif t == 1:
            a = gram(b) + dt(0.25) * np.eye(n, dtype=dt)
        elif t == 2:
            a = b + b.T + n * np.eye(n, dtype=dt)
        elif t == 3:
            a = b + n * np.eye(n, dtype=dt)
        elif t == 4:
            a = gram(b) - dt(0.5) * np.eye(n, dtype=dt)
        else:
            a = (gram(b) + np.eye(n, dtype=dt)) * dt(1e3)
        out.append(a.astype(dt))
    return np.stack(out)


def _digest(v):
    return hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]


# (dtype, n): (digest of jnp.linalg.cholesky, of lax.linalg.cholesky(symmetrize_input=False)) of mats(n, dtype)
EXPECTED = {
    ('float32', 1): ('3b48f7673fd8ae12', '3b48f7673fd8ae12'),
    ('float32', 2): ('bddedea1c581d536', '45121f63ce35f76d'),
    ('float32', 3): ('ddb4e555b91f1dea', '413ab030635978f0'),
    ('float32', 4): ('39a2b1cda3a47838', '8b226686e82bb1c3'),
    ('float32', 5): ('9644551d1c8f4f7e', '217ed0f8ff1edccb'),
    ('float32', 6): ('b52ce74093154fe4', '1cde629eece8a6d3'),
    ('float32', 7): ('b5165fc4d0610bc3', '96514325175ff28a'),
    ('float32', 8): ('c0ffa162ec56df37', 'f57f8468582042b3'),
    ('float32', 9): ('e21fa2e539957a25', '35d2f7c92eef312c'),
    ('float32', 10): ('d84fc56a6afe1dc5', '07334136b30d7d35'),
    ('float32', 11): ('46d6c4dd3cf3c0e2', '756ed43323f33cc5'),
    ('float32', 12): ('0a803532ec466d4d', 'd908ec409e3756d2'),
    ('float32', 13): ('c262289f2a43f276', '00e5305ea6f5a88b'),
    ('float32', 14): ('45df71dc0997f5f2', '1ddab4e657d32db6'),
    ('float32', 15): ('c67fbfcdf1aa538f', '43c6d3597ae4fbad'),
    ('float32', 16): ('b27b571e7315842d', 'fb645f592990a13d'),
    ('float32', 17): ('28286c7a28d3f298', '3dd623a4f90742a0'),
    ('float32', 18): ('c0ca46483439c644', '8855a1e71188197e'),
    ('float32', 19): ('c6c0210306e3e0ac', '1de49dec33f8dd1b'),
    ('float32', 20): ('273b05ba281f2de5', '8674751eaea1cc55'),
    ('float32', 21): ('827c25c128c30e7a', '6430135ee4541356'),
    ('float32', 22): ('666cda202c460004', 'eb3c33ad9a64ef23'),
    ('float32', 23): ('d1046d33e72035ce', 'a601b6835edd8a37'),
    ('float32', 24): ('276ec04ff4135c13', '5e797263173b02c9'),
    ('float32', 25): ('0123371cb92a249e', '7c8b5c27bed6adc1'),
    ('float32', 26): ('909e9cc9549f4610', 'efa2c3c594ba80d8'),
    ('float32', 27): ('51fc15e9afceb4a6', '65f9dadeff17d362'),
    ('float32', 28): ('193b2e04a6eea46f', '748aa72d367bb81b'),
    ('float32', 29): ('4a97a8451ea155fb', 'dcf6bdc5a26f89ba'),
    ('float32', 30): ('19f52638506a832d', 'fd7570da03f66aa9'),
    ('float32', 31): ('5664088faeb9741f', 'd1180b4c136ff9ef'),
    ('float32', 32): ('6daa1d94fee3db41', '8c6c2c3f042941e8'),
    ('float64', 1): ('c8a54f3744628cc0', 'c8a54f3744628cc0'),
    ('float64', 2): ('013a9f98aa4753b6', '83462cd42df0ea59'),
    ('float64', 3): ('25e00eed6a24b008', 'f1887a1f949f976b'),
    ('float64', 4): ('784f863072b2e315', '7b68253c08e0cf74'),
    ('float64', 5): ('c5c8879a34fe5b1b', '92e262aa530194d8'),
    ('float64', 6): ('10d1b3b575a49cc6', '44ace196fa1dc9fa'),
    ('float64', 7): ('14821b68872eb5de', '1b7f6c19f374e140'),
    ('float64', 8): ('fe89feccdb77f56f', '7849477b7262240c'),
    ('float64', 9): ('d90462625f70ccfa', '14263ffc5920d1c7'),
    ('float64', 10): ('9c1218dd419ca976', '0bfeaf6376cf4808'),
    ('float64', 11): ('b6ff17e809ba49a8', '1307924485ecdf68'),
    ('float64', 12): ('8e889bc7aa7d4e6c', '9f7b1f592335d3a9'),
    ('float64', 13): ('e58dce46a44d534d', '21408a1d5ca9b1b5'),
    ('float64', 14): ('39a199984752cd27', '9e3cffed866d11f3'),
    ('float64', 15): ('0a7b2cd2f3483488', 'd51161570d77c170'),
    ('float64', 16): ('01fd7afb28aa3bd4', 'bde935513f64cce5'),
    ('float64', 17): ('001e05e56dc056d8', '85a330d56bf5359b'),
    ('float64', 18): ('a1c959ab7d260cfb', '48eee10f56c2e96d'),
    ('float64', 19): ('8f629387f4f46b83', '873f834f7a55c38e'),
    ('float64', 20): ('25c5f8fba85bcb31', 'efff2d81c2c1f860'),
    ('float64', 21): ('aa5238d95cb677a9', '9192e4d241955ac4'),
    ('float64', 22): ('a352f8da543b7c50', 'f4812fbc715cff08'),
    ('float64', 23): ('f7aabaecae173c66', '67bc0ef09e851703'),
    ('float64', 24): ('55abcc1075cdec2b', 'c6ca079809239bf3'),
    ('float64', 25): ('6d60801530004e82', 'eb19abfc4b2386e5'),
    ('float64', 26): ('be61c5bf1f1f638b', '08d4d3e181e10b30'),
    ('float64', 27): ('df394537511115c1', '58def22f13671bc7'),
    ('float64', 28): ('dcb9f02877436961', '858e616e8b980b83'),
    ('float64', 29): ('757399a28b870d2e', 'e5ebd89daae0f823'),
    ('float64', 30): ('781ef93b5dc1267f', 'c30eeb077ce5a7c4'),
    ('float64', 31): ('b26497030885c8d3', 'c4edfbfab6b282a4'),
    ('float64', 32): ('a7d4fde70f487bf9', '04d7d029fd65b299'),
}


@pytest.fixture(autouse=True)
def _x64():
    with cranax.enable_x64(True):
        yield


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("n", range(1, 33))
def test_cholesky_bits_as_jax(dt, n):
    a = mats(n, np.dtype(dt).type)
    v = np.asarray(cranax.jit(jnp.linalg.cholesky)(a))
    w = np.asarray(cranax.jit(lambda x: lax.linalg.cholesky(x, symmetrize_input=False))(a))
    assert v.dtype == np.dtype(dt) and v.shape == (6, n, n)
    assert (_digest(v), _digest(w)) == EXPECTED[(dt, n)]


def test_small_cholesky_values():
    # independent of the recorded digests: the factor reproduces the matrix, the failed one is NaN below the
    # diagonal and 0 above (JAX's tril of its NaN factor), eager and vmapped calls agree with the jitted one
    for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-13)):
        for n in (1, 2, 3, 5, 8, 13, 32):
            a = mats(n, dt)
            v = np.asarray(cranax.jit(jnp.linalg.cholesky)(a))
            for t in (0, 1, 2, 5):
                sym = (a[t].astype(np.float64) + a[t].T) / 2
                np.testing.assert_allclose(v[t] @ v[t].T, sym, rtol=tol, atol=tol * np.abs(sym).max())
                np.testing.assert_array_equal(np.triu(v[t], 1), 0)
            assert np.isnan(v[4][np.tril_indices(n)]).all() and (np.triu(v[4], 1) == 0).all()
            np.testing.assert_array_equal(np.asarray(jnp.linalg.cholesky(a)), v)
            np.testing.assert_array_equal(np.asarray(cranax.vmap(jnp.linalg.cholesky)(a)), v)


def test_faer_beyond_32_still_factors():
    # order 33 leaves the small path (OpenBLAS blocks there too): still a factor, to rounding
    a = mats(33, np.float64)[0]
    with cranax.enable_x64(True):
        v = np.asarray(jnp.linalg.cholesky(a))
    np.testing.assert_allclose(v @ v.T, a, rtol=1e-13, atol=1e-13 * np.abs(a).max())
