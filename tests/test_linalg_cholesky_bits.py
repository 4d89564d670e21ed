"""jnp.linalg.cholesky / lax.linalg.cholesky of order 1..32 carry JAX's bits: JAX's CPU lowering calls LAPACK's
potrf from SciPy's OpenBLAS, whose unblocked potf2 (n <= 32) cranax's small path (rust
backend/cpu/library/small_chol.rs) follows step by step. Digests recorded from JAX 0.10.2 (x64 on, this host's
OpenBLAS Haswell kernels) by the same matrices below; JAX is not needed here."""
import hashlib

import numpy as np
import pytest

import cranax
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
            a = b @ b.T + n * np.eye(n, dtype=dt)
        elif t == 1:
            a = b @ b.T + dt(0.25) * np.eye(n, dtype=dt)
        elif t == 2:
            a = b + b.T + n * np.eye(n, dtype=dt)
        elif t == 3:
            a = b + n * np.eye(n, dtype=dt)
        elif t == 4:
            a = b @ b.T - dt(0.5) * np.eye(n, dtype=dt)
        else:
            a = (b @ b.T + np.eye(n, dtype=dt)) * dt(1e3)
        out.append(a.astype(dt))
    return np.stack(out)


def _digest(v):
    return hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]


# (dtype, n): (digest of jnp.linalg.cholesky, of lax.linalg.cholesky(symmetrize_input=False)) of mats(n, dtype)
EXPECTED = {
    ('float32', 1): ('3b48f7673fd8ae12', '3b48f7673fd8ae12'),
    ('float32', 2): ('bddedea1c581d536', '45121f63ce35f76d'),
    ('float32', 3): ('c8649b5a1a3423ed', 'f22678c84cfbda38'),
    ('float32', 4): ('3888698ae8b393e8', 'f8fff531c224c74b'),
    ('float32', 5): ('8bcbd99b1cd06d2a', '91181da5ee52955b'),
    ('float32', 6): ('66df40fbd919cad1', 'aad6130f55b73d1a'),
    ('float32', 7): ('4df233745407ff12', 'deafbb9c8837c780'),
    ('float32', 8): ('e7ca97fc287cc811', '27ee141c5e6abc60'),
    ('float32', 9): ('b861191ab483f13b', 'b43cb9b865faa0c5'),
    ('float32', 10): ('738740c7560b142a', 'da2e44441ddc1502'),
    ('float32', 11): ('24f01c6000fb8ba5', '359eb4cb5b9c78ca'),
    ('float32', 12): ('74fdfd75e46a2eaa', 'd395eabf0c392e95'),
    ('float32', 13): ('6c3cab48cb4ec89b', '1a1c38bd79d214c0'),
    ('float32', 14): ('0e9517c09234cbd4', '687bdc9c5cad7179'),
    ('float32', 15): ('155a09f8b041c733', '18d9ba57855d9ed7'),
    ('float32', 16): ('f54f0caa14712713', '07334bbc2443368e'),
    ('float32', 17): ('b00d169eeb0f0152', '37df19e1da5d26c3'),
    ('float32', 18): ('23fc75d432bcf7bb', 'f3a06563c5a81e19'),
    ('float32', 19): ('76f7a7576232551f', '04fab7a88d0f3fcf'),
    ('float32', 20): ('6a48f0bb0f9dd471', '2ee45ff65942934b'),
    ('float32', 21): ('32eb1f56c9600eb7', '6416137919173310'),
    ('float32', 22): ('90ee96dcb42c6a61', 'e857a1d753166ea0'),
    ('float32', 23): ('7055896ca697e88f', 'e024530c3374e833'),
    ('float32', 24): ('8313aa281d98a1ba', 'd74ac98d09d5a7f5'),
    ('float32', 25): ('020359a9b9d7007b', '593a662d509e66f1'),
    ('float32', 26): ('f8a0bf62ec11836b', '2ba6fb0980f354a6'),
    ('float32', 27): ('5b35873efe6de132', '6ab619e9dacadd81'),
    ('float32', 28): ('8c838628e9cd11bc', '2e1984ba9e0a9e03'),
    ('float32', 29): ('509e5421379e8b7c', 'f591001d8c819beb'),
    ('float32', 30): ('ecfcdf8a6d5a5a34', 'b9ef0be31ef7f3d2'),
    ('float32', 31): ('4bfe65234c78148d', '7f8b86fa78cf9f4f'),
    ('float32', 32): ('ec2720fdffbb9c54', 'a9e7c80ab19c8ca6'),
    ('float64', 1): ('c8a54f3744628cc0', 'c8a54f3744628cc0'),
    ('float64', 2): ('013a9f98aa4753b6', '83462cd42df0ea59'),
    ('float64', 3): ('e836b0bff2869ace', '571a7203d8ca32d3'),
    ('float64', 4): ('2867903684a7f1dd', '9db060a53d16be48'),
    ('float64', 5): ('7f2062fd9282711c', 'c56162128f502e2a'),
    ('float64', 6): ('9b9a71e62c729df9', 'c7776eada58db56e'),
    ('float64', 7): ('a34f839c1b792a79', '615458eb8fc23bdf'),
    ('float64', 8): ('3e19c7dfd09ab150', '7d235ace069be547'),
    ('float64', 9): ('0a8031bf474e4a56', '69f89703d30703f7'),
    ('float64', 10): ('e07baa2f285552f2', '0f01bdc2ea564538'),
    ('float64', 11): ('4b74ad6cc24158b0', '40421f837f956fd4'),
    ('float64', 12): ('2e22b10a271702a8', 'c1b873a7aeb9c6ea'),
    ('float64', 13): ('da648befd9461326', '59c70c03a53b61cd'),
    ('float64', 14): ('820a5a20b711abb5', '48bdc1ec83f0d1bc'),
    ('float64', 15): ('76b0d0acda7e5841', '3cd60ba8e529b516'),
    ('float64', 16): ('9dcfb4fc4b04f1aa', '1f91b0d286f3aecc'),
    ('float64', 17): ('0462c67e80ebe8d8', '9d3e40d1fef17327'),
    ('float64', 18): ('d58125e642ea9861', '5f26d1d23ce6d453'),
    ('float64', 19): ('ffca07c3bbbeaab7', 'd38e0a200b73c5b5'),
    ('float64', 20): ('ee7561a2759b52d3', '925d2baf6594eee6'),
    ('float64', 21): ('6b60609250f21689', '2892894113e5364f'),
    ('float64', 22): ('98a8eb91426e7bf7', '2f6c8fc5b788ada7'),
    ('float64', 23): ('aac1c3d890e3687c', 'b2941804eb33d7c2'),
    ('float64', 24): ('7ed63692578c206c', '11136b56420805aa'),
    ('float64', 25): ('20efbd634da22420', '7f5d27cf84890ece'),
    ('float64', 26): ('3e09dff7d86e6746', '1fbd9c77dab7f0ef'),
    ('float64', 27): ('54e22273d380d503', 'bb7f3c7b357eecf8'),
    ('float64', 28): ('36a765f34a88c367', '37e31f5d61b9b69d'),
    ('float64', 29): ('976d789551158683', '0f5fbb82dff09daa'),
    ('float64', 30): ('644052f21c0b06fa', '1ebb43c48d02218c'),
    ('float64', 31): ('726236eddbb411ad', 'a82481ee856c7586'),
    ('float64', 32): ('f56698a0b2460441', '43ddece1211f0c63'),
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
