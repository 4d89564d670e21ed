"""random.multivariate_normal bit for bit as JAX 0.10.2 where XLA's order is known (h-bits18): the Cholesky
factor in OpenBLAS potf2's order (tests/test_linalg_cholesky_bits.py) and mean + L z in XLA:CPU's order
(cranax._random._mvn_xla_order: the n == 1 multiply merged with sqrt(2) and contracted, YNNPACK's dot from 8
rows or columns, XLA's own small dots). Digests recorded from JAX (x64 on, OPENBLAS_CORETYPE=Haswell) with the
inputs below; JAX is not needed here."""
import hashlib

import numpy as np
import pytest

import cranax
from exact_dots import gram
from cranax import random
from test_random import FMA


def inputs(n, dt, seed):
    """mean (n,) and an SPD cov (n, n) from an integer hash (no RNG, so any NumPy makes the same)."""
    i = np.arange(n * n + n, dtype=np.uint64) + np.uint64(977 * seed + 31 * n)
    h = (i * np.uint64(2654435761) + np.uint64(40503)) % np.uint64(2 ** 32)
    v = h.astype(np.float64) / 2 ** 32 - 0.5
    b = v[:n * n].reshape(n, n).astype(dt)
    return (4 * v[n * n:]).astype(dt), (gram(b) + dt(0.3) * np.eye(n, dtype=dt)).astype(dt)


# (dtype, n, shape): digest of jax.random.multivariate_normal(key(k), *inputs(n, dtype, k), shape, dtype),
# k the case's index
EXPECTED = {
    ('float32', 1, ()): 'abe29020c9a48fb9',
    ('float32', 1, (2,)): 'f4d4ddc082fa60dd',
    ('float32', 1, (7,)): 'cc0cbef4e1d3639e',
    ('float32', 1, (16,)): '3a122f0eeffae95d',
    ('float32', 1, (300,)): '4bc2e1bc1ac10360',
    ('float32', 1, (3, 40)): '25ab471167f82d3f',
    ('float32', 2, ()): '24563f4d229a9480',
    ('float32', 2, (2,)): 'af05141f4c5296a8',
    ('float32', 2, (7,)): 'b6f72add301940a1',
    ('float32', 2, (16,)): '8bb78d66f92bc56a',
    ('float32', 2, (300,)): '8746431c8dd22e0f',
    ('float32', 2, (3, 40)): 'bb5626d2099e3474',
    ('float32', 3, ()): '43c96c17fa2bd3c2',
    ('float32', 3, (2,)): '50faebf8720fd8a3',
    ('float32', 3, (7,)): '693af62b6f5c5f3b',
    ('float32', 3, (16,)): 'e809911122be3631',
    ('float32', 3, (300,)): '3dbb5586c3ab8ca4',
    ('float32', 3, (3, 40)): '5056c6d8776396ad',
    ('float32', 4, ()): '55a8b1be92957c54',
    ('float32', 4, (2,)): '136d50ed0c2d3972',
    ('float32', 4, (7,)): '4d3b8074f420eec4',
    ('float32', 4, (16,)): 'a434b7050c2e35db',
    ('float32', 4, (300,)): '0e5e182a925581ac',
    ('float32', 4, (3, 40)): 'a56733f3fb75d2e2',
    ('float32', 5, ()): '774c5db1a639c580',
    ('float32', 5, (2,)): '1bc0afdfbf670bc8',
    ('float32', 5, (7,)): '577bfe984127aa56',
    ('float32', 5, (16,)): '7a2da3ae13a78737',
    ('float32', 5, (300,)): 'ad9f2c31aa2a3d21',
    ('float32', 5, (3, 40)): '049937dbf013d016',
    ('float32', 6, ()): '6a6598b8be116dd6',
    ('float32', 6, (2,)): '55273547d96e2c64',
    ('float32', 6, (7,)): 'd1513c2d630175db',
    ('float32', 6, (16,)): '17cbebd8ec93c200',
    ('float32', 6, (300,)): 'e134b8d315c0bebb',
    ('float32', 6, (3, 40)): 'dc51c431942d30aa',
    ('float32', 7, ()): '73ca8594eacfb9e5',
    ('float32', 7, (2,)): '3697ff8d12e6bc3d',
    ('float32', 7, (7,)): 'ead648f3ac5a2807',
    ('float32', 7, (16,)): '18ea68a54f22a0e8',
    ('float32', 7, (300,)): 'e952441c7651f664',
    ('float32', 7, (3, 40)): 'f99d8d8cd03d6d1c',
    ('float64', 1, ()): '6776350d740e3565',
    ('float64', 1, (5,)): '203a7507906c93d6',
    ('float64', 1, (300,)): '376ce727d3f07a09',
    ('float64', 2, ()): '114096b329da12c9',
    ('float64', 2, (5,)): '4f0e5fdcad5ca9af',
    ('float64', 2, (300,)): '63ee840e10b628e8',
    ('float64', 3, ()): '12d1e31caaa1c024',
    ('float64', 3, (5,)): '179729451bc28fb4',
    ('float64', 3, (300,)): '3456215c2194cf0c',
    ('float64', 4, (9,)): 'f17794bd31ee98af',
    ('float64', 4, (300,)): '8fd1fd37309f34cf',
    ('float64', 4, (3, 40)): '8bc1ecdc65293f7d',
    ('float64', 6, (9,)): 'e847b092076a07f2',
    ('float64', 6, (300,)): 'eeee72313f288d4d',
    ('float64', 6, (3, 40)): '55cbb354b883bef2',
    ('float64', 8, (9,)): 'dbaaff195cf3f991',
    ('float64', 8, (300,)): '0583c63148b8af74',
    ('float64', 8, (3, 40)): 'b0f17f872f90852e',
    ('float64', 12, (9,)): '7f1b8f4a8806abf1',
    ('float64', 12, (300,)): '9acd44af0559fbf7',
    ('float64', 12, (3, 40)): '81aab10043808498',
    ('float64', 16, (9,)): '25f51ab9aae3bc44',
    ('float64', 16, (300,)): '1d2affe2df7ed97a',
    ('float64', 16, (3, 40)): 'ee97d15584a0e3a1',
    ('float64', 8, (2,)): '75fa013099dd22ea',
    ('float64', 16, (2,)): 'e6c0fa07edc54fed',
}
CASES = list(EXPECTED)


@pytest.mark.parametrize("k", range(len(CASES)), ids=[f"{d}-{n}-{s}" for d, n, s in CASES])
def test_multivariate_normal_bits_as_jax(k):
    dt, n, shape = CASES[k]
    with cranax.enable_x64(True):
        m, c = inputs(n, np.dtype(dt).type, k)
        v = np.asarray(random.multivariate_normal(random.key(k), m, c, shape, dtype=dt))
        assert v.dtype == np.dtype(dt) and v.shape == tuple(shape) + (n,)
        if FMA:
            assert hashlib.sha256(v.tobytes()).hexdigest()[:16] == EXPECTED[CASES[k]]
        # (and, on any host, the draws' own product in float64, to rounding)
        z = np.asarray(random.normal(random.key(k), tuple(shape) + (n,), dtype=dt)).astype(np.float64)
        ref = m.astype(np.float64) + z @ np.linalg.cholesky(c.astype(np.float64)).T
        tol = 1e-5 if dt == "float32" else 1e-12
        np.testing.assert_allclose(v, ref, rtol=tol, atol=tol * max(1.0, np.abs(ref).max()))
        # jit, and a vmap over keys, give the same draws
        f = cranax.jit(lambda key: random.multivariate_normal(key, m, c, shape, dtype=dt))
        np.testing.assert_array_equal(np.asarray(f(random.key(k))), v)
        keys = random.split(random.key(k), 2)
        vm = np.asarray(cranax.vmap(f)(keys))
        np.testing.assert_array_equal(vm[1], np.asarray(f(keys[1])))


def test_multivariate_normal_other_orders_still_distributed():
    # where XLA's order is not known (float32 n >= 8, cranax's own product): same distribution, to rounding
    # of the same draws against NumPy's product
    m, c = inputs(9, np.float32, 0)
    v = np.asarray(random.multivariate_normal(random.key(0), m, c, (20000,)))
    z = np.asarray(random.normal(random.key(0), (20000, 9)))
    ref = m.astype(np.float64) + z.astype(np.float64) @ np.linalg.cholesky(c.astype(np.float64)).T
    np.testing.assert_allclose(v, ref, rtol=1e-4, atol=1e-4)
