"""random.multivariate_normal bit for bit as JAX 0.10.2 where XLA's order is known (h-bits18): the Cholesky
factor in OpenBLAS potf2's order (tests/test_linalg_cholesky_bits.py) and mean + L z in XLA:CPU's order
(cranax._random._mvn_xla_order: the n == 1 multiply merged with sqrt(2) and contracted, YNNPACK's dot from 8
rows or columns, XLA's own small dots). Digests recorded from JAX (x64 on) with the inputs below; JAX is not
needed here."""
import hashlib

import numpy as np
import pytest

import cranax
from cranax import random
from test_random import FMA


def inputs(n, dt, seed):
    """mean (n,) and an SPD cov (n, n) from an integer hash (no RNG, so any NumPy makes the same)."""
    i = np.arange(n * n + n, dtype=np.uint64) + np.uint64(977 * seed + 31 * n)
    h = (i * np.uint64(2654435761) + np.uint64(40503)) % np.uint64(2 ** 32)
    v = h.astype(np.float64) / 2 ** 32 - 0.5
    b = v[:n * n].reshape(n, n).astype(dt)
    return (4 * v[n * n:]).astype(dt), (b @ b.T + dt(0.3) * np.eye(n, dtype=dt)).astype(dt)


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
    ('float32', 2, (16,)): '9fcb39c8926ebe38',
    ('float32', 2, (300,)): '8746431c8dd22e0f',
    ('float32', 2, (3, 40)): 'bb5626d2099e3474',
    ('float32', 3, ()): '43c96c17fa2bd3c2',
    ('float32', 3, (2,)): '50faebf8720fd8a3',
    ('float32', 3, (7,)): '7e81100a21b26cee',
    ('float32', 3, (16,)): 'e809911122be3631',
    ('float32', 3, (300,)): '31472df457aabc3f',
    ('float32', 3, (3, 40)): '6bc060fccbd2e77b',
    ('float32', 4, ()): '55a8b1be92957c54',
    ('float32', 4, (2,)): '136d50ed0c2d3972',
    ('float32', 4, (7,)): '11475869b6b27502',
    ('float32', 4, (16,)): '3fd70070adbfa615',
    ('float32', 4, (300,)): '2e7f1b64490abae1',
    ('float32', 4, (3, 40)): '128e446975194178',
    ('float32', 5, ()): '774c5db1a639c580',
    ('float32', 5, (2,)): '5ae5c35de8962dd6',
    ('float32', 5, (7,)): '6b141f484fd268db',
    ('float32', 5, (16,)): 'e5b12ee3e58dfc7e',
    ('float32', 5, (300,)): '95fd55c7c4fa0971',
    ('float32', 5, (3, 40)): '79760b72cf026fdc',
    ('float32', 6, ()): 'f0fc9134b2596c9d',
    ('float32', 6, (2,)): 'b7262f75f253f0dc',
    ('float32', 6, (7,)): 'e5a6ed0fdcd3b276',
    ('float32', 6, (16,)): '0cb35d4902a45b18',
    ('float32', 6, (300,)): '65b83170ce69ca64',
    ('float32', 6, (3, 40)): '0b0623980aa76dd8',
    ('float32', 7, ()): '55435d46a58e5160',
    ('float32', 7, (2,)): '6b02126a5ba9fa7a',
    ('float32', 7, (7,)): 'b718e344ae59069e',
    ('float32', 7, (16,)): 'e7a123a4c0432adb',
    ('float32', 7, (300,)): '43e723873a236f4a',
    ('float32', 7, (3, 40)): 'c19cbeee35d5fe2b',
    ('float64', 1, ()): '6776350d740e3565',
    ('float64', 1, (5,)): '203a7507906c93d6',
    ('float64', 1, (300,)): '376ce727d3f07a09',
    ('float64', 2, ()): '114096b329da12c9',
    ('float64', 2, (5,)): '4f0e5fdcad5ca9af',
    ('float64', 2, (300,)): '76c47f5c699bce41',
    ('float64', 3, ()): '12d1e31caaa1c024',
    ('float64', 3, (5,)): 'ca489c52538b3f0c',
    ('float64', 3, (300,)): '71288fcdc14bdcad',
    ('float64', 4, (9,)): '4cb4bf5783553060',
    ('float64', 4, (300,)): 'bd13fa27b928b3f8',
    ('float64', 4, (3, 40)): 'fddca4d66f19b79a',
    ('float64', 6, (9,)): '27c8e6f23d639637',
    ('float64', 6, (300,)): '9931ea7f59e54fbe',
    ('float64', 6, (3, 40)): '4ff9ab93898cb78e',
    ('float64', 8, (9,)): '0c18785e4ed7d6c0',
    ('float64', 8, (300,)): '3241546f5fff3e07',
    ('float64', 8, (3, 40)): 'a8bef82074a5db57',
    ('float64', 12, (9,)): 'ade5aeb7115ac1fe',
    ('float64', 12, (300,)): 'd42be71429a49cb4',
    ('float64', 12, (3, 40)): '0613965394576de2',
    ('float64', 16, (9,)): '0f19ac7f41f5c2e3',
    ('float64', 16, (300,)): '9baf739b520a5c01',
    ('float64', 16, (3, 40)): '4d9c61d5a215e898',
    ('float64', 8, (2,)): 'b93e78024737a19a',
    ('float64', 16, (2,)): '33fcd5395b3c76c6',
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
