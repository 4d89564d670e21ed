"""lax functions against values recorded from JAX 0.10.2 (x64 on): sort with num_keys, top_k (NaN largest,
ties), approx_max/min_k, reduce_precision (float16/32/64), nextafter, clz, population_count, cumlogsumexp
(and its gradient), associative_scan, reduce with a general computation, split, optimization_barrier,
platform_dependent, reduce_xor, tile, cummax; their error messages."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

nan, inf = np.nan, np.inf

@pytest.fixture(autouse=True)
def _x64(x64):
    yield


def _setup():
    k1 = jnp.array([2, 1, 2, 1, 0], jnp.int32)
    k2 = jnp.array([5., 3., 1., 4., 9.], jnp.float32)
    v = jnp.arange(5, dtype=jnp.int32)
    return k1, k2, v


CASES = {
    'sort2': (lambda k1, k2, v: lax.sort((k1, k2, v), num_keys=2),
        ("multi", [('int32', [0, 1, 1, 2, 2]), ('float32', [9.0, 3.0, 4.0, 1.0, 5.0]), ('int32', [4, 1, 3, 2, 0])])),
    'sort1': (lambda k1, k2, v: lax.sort((k1, k2, v), num_keys=1),
        ("multi", [('int32', [0, 1, 1, 2, 2]), ('float32', [9.0, 3.0, 4.0, 5.0, 1.0]), ('int32', [4, 1, 3, 0, 2])])),
    'sort_nan': (lambda k1, k2, v: lax.sort(jnp.array([3., jnp.nan, -0., 0., -jnp.inf, 1.], jnp.float32)),
        ('float32', [-inf, -0.0, 0.0, 1.0, 3.0, nan])),
    'sort_unstable': (lambda k1, k2, v: lax.sort(jnp.array([3, 1, 2]), is_stable=False),
        ('int64', [1, 2, 3])),
    'sort_dim': (lambda k1, k2, v: lax.sort(jnp.array([[3, 1], [0, 2]]), dimension=0),
        ('int64', [[0, 1], [3, 2]])),
    'sort_kv': (lambda k1, k2, v: lax.sort_key_val(jnp.array([3, 1, 2]), jnp.array([10, 20, 30])),
        ("multi", [('int64', [1, 2, 3]), ('int64', [20, 30, 10])])),
    'sort_badkeys': (lambda k1, k2, v: lax.sort((k1, k2), num_keys=3),
        ("ERR", ValueError, 'num_keys=3 must be between 1 and len(operand)')),
    'topk_nan': (lambda k1, k2, v: lax.top_k(jnp.array([1., jnp.nan, 3., 2.], jnp.float32), 2),
        ("multi", [('float32', [nan, 3.0]), ('int32', [1, 2])])),
    'topk_ties': (lambda k1, k2, v: lax.top_k(jnp.array([1, 3, 3, 2]), 3),
        ("multi", [('int64', [3, 3, 2]), ('int32', [1, 2, 3])])),
    'topk_bad': (lambda k1, k2, v: lax.top_k(jnp.array([1., 2.]), 3),
        ("ERR", ValueError, 'k argument to top_k must be no larger than si')),
    'approx': (lambda k1, k2, v: lax.approx_max_k(jnp.array([[1., 5., 3.], [4., 2., 6.]], jnp.float32), 2),
        ("multi", [('float32', [[5.0, 3.0], [6.0, 4.0]]), ('int32', [[1, 2], [2, 0]])])),
    'approx_min': (lambda k1, k2, v: lax.approx_min_k(jnp.array([[1., 5., 3.], [4., 2., 6.]], jnp.float32), 1, reduction_dimension=0),
        ("multi", [('float32', [[1.0, 2.0, 3.0]]), ('int32', [[0, 1, 0]])])),
    'rp64': (lambda k1, k2, v: lax.reduce_precision(jnp.array([1.0000001, 3.141592653589793, 1e300, 1e-300]), 8, 23),
        ('float64', [1.0000001192092896, 3.1415927410125732, inf, 0.0])),
    'rp64b': (lambda k1, k2, v: lax.reduce_precision(jnp.array([1.0000001, 3.141592653589793, 70000., 1e-8]), 5, 10),
        ('float64', [1.0, 3.140625, inf, 0.0])),
    'rp32': (lambda k1, k2, v: lax.reduce_precision(jnp.array([1.0001, 3.14159, 65520., 1e-5, -2.5e-8], jnp.float32), 5, 10),
        ('float32', [1.0, 3.140625, inf, 0.0, -0.0])),
    'rp32b': (lambda k1, k2, v: lax.reduce_precision(jnp.array([1.0001, 3.14159, 3e38, 1e-39], jnp.float32), 8, 7),
        ('float32', [1.0, 3.140625, 3.00405527047391e+38, 1.0101904577379033e-39])),
    'rp16': (lambda k1, k2, v: lax.reduce_precision(jnp.array([1.0001, 3.14159, 60000.], jnp.float16), 4, 3),
        ('float16', [1.0, 3.25, inf])),
    'nextafter': (lambda k1, k2, v: lax.nextafter(jnp.array([1., 0., -1., jnp.inf], jnp.float32), jnp.array([2., -1., -2., 0.], jnp.float32)),
        ('float32', [1.0000001192092896, -1.401298464324817e-45, -1.0000001192092896, 3.4028234663852886e+38])),
    'nextafter64': (lambda k1, k2, v: lax.nextafter(jnp.array([1., 0.]), jnp.array([2., 1.])),
        ('float64', [1.0000000000000002, 5e-324])),
    'clz': (lambda k1, k2, v: lax.clz(jnp.array([0, 1, -1, 255], jnp.int32)),
        ('int32', [32, 31, 0, 24])),
    'clz8': (lambda k1, k2, v: lax.clz(jnp.array([0, 1, 128], jnp.uint8)),
        ('uint8', [8, 7, 0])),
    'clz64': (lambda k1, k2, v: lax.clz(jnp.array([0, 1, 2**40], jnp.int64)),
        ('int64', [64, 63, 23])),
    'popc': (lambda k1, k2, v: lax.population_count(jnp.array([0, 1, -1, 255], jnp.int32)),
        ('int32', [0, 1, 32, 8])),
    'popc16': (lambda k1, k2, v: lax.population_count(jnp.array([0, 7, 65535], jnp.uint16)),
        ('uint16', [0, 3, 16])),
    'popc64': (lambda k1, k2, v: lax.population_count(jnp.array([-1, 2**40 + 3], jnp.int64)),
        ('int64', [64, 3])),
    'cumlse': (lambda k1, k2, v: lax.cumlogsumexp(jnp.array([0., 1., -jnp.inf, 2.], jnp.float32)),
        ('float32', [0.0, 1.3132617473602295, 1.3132617473602295, 2.4076061248779297])),
    'cumlse_rev': (lambda k1, k2, v: lax.cumlogsumexp(jnp.array([[0., 1.], [2., 3.]], jnp.float32), axis=0, reverse=True),
        ('float32', [[2.1269280910491943, 3.1269280910491943], [2.0, 3.0]])),
    'cumlse_grad': (lambda k1, k2, v: jax.grad(lambda x: lax.cumlogsumexp(x).sum())(jnp.array([0., 1., 2.], jnp.float32)),
        ('float32', [1.3589719533920288, 0.9757869839668274, 0.6652408838272095])),
    'assoc': (lambda k1, k2, v: lax.associative_scan(jnp.add, jnp.arange(6.).reshape(2, 3), axis=1),
        ('float64', [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]])),
    'assoc_rev': (lambda k1, k2, v: lax.associative_scan(lax.max, jnp.array([1, 5, 2, 7, 3]), reverse=True),
        ('int64', [7, 7, 7, 7, 3])),
    'reduce_gen': (lambda k1, k2, v: lax.reduce((jnp.array([3., 1., 2.]), jnp.array([0, 1, 2])), (jnp.float64(jnp.inf), 0), lambda a, b: (jnp.minimum(a[0], b[0]), jnp.where(a[0] <= b[0], a[1], b[1])), (0,)),
        ("multi", [('float64', 1.0), ('int64', 1)])),
    'reduce_mul': (lambda k1, k2, v: lax.reduce(jnp.arange(1., 5.), 2., lax.mul, (0,)),
        ('float64', 48.0)),
    'split': (lambda k1, k2, v: lax.split(jnp.arange(6), [1, 2, 3]),
        ("multi", [('int64', [0]), ('int64', [1, 2]), ('int64', [3, 4, 5])])),
    'split_bad': (lambda k1, k2, v: lax.split(jnp.arange(6), [1, 2]),
        ("ERR", ValueError, 'Sum of sizes 3 must be equal to dimension 0 o')),
    'opt_barrier': (lambda k1, k2, v: lax.optimization_barrier((jnp.ones(2), 3)),
        ("multi", [('float64', [1.0, 1.0]), ('int64', 3)])),
    'platform': (lambda k1, k2, v: lax.platform_dependent(2., cpu=lambda x: x * 10, default=lambda x: x),
        ('float64', 20.0)),
    'platform_def': (lambda k1, k2, v: lax.platform_dependent(2., tpu=lambda x: x * 10, default=lambda x: x + 1),
        ('float64', 3.0)),
    'platform_jit': (lambda k1, k2, v: jax.jit(lambda x: lax.platform_dependent(x, cpu=lambda x: x * 10, default=lambda x: x))(2.),
        ('float64', 20.0)),
    'reduce_xor': (lambda k1, k2, v: lax.reduce_xor(jnp.array([[1, 2], [3, 7]]), (1,)),
        ('int64', [3, 4])),
    'tile': (lambda k1, k2, v: lax.tile(jnp.array([[1, 2]]), (2, 2)),
        ('int64', [[1, 2, 1, 2], [1, 2, 1, 2]])),
    'cummax_rev': (lambda k1, k2, v: lax.cummax(jnp.array([1, 3, 2, 5, 4]), reverse=True),
        ('int64', [5, 5, 5, 5, 4])),
}


def _check(got, dt, want):
    got = np.asarray(got)
    assert got.dtype.name == dt, (got.dtype, dt)
    np.testing.assert_allclose(got.astype(np.float64) if got.dtype.kind != "b" else got,
                               np.asarray(want, dtype=np.float64 if got.dtype.kind != "b" else bool), rtol=3e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    fn, want = CASES[name]
    args = _setup()
    if want[0] == "ERR":
        with pytest.raises(want[1]) as info:
            fn(*args)
        assert want[2] in str(info.value)
    elif want[0] == "multi":
        got = fn(*args)
        assert len(got) == len(want[1])
        for g, (dt, w) in zip(got, want[1]):
            _check(g, dt, w)
    else:
        _check(fn(*args), want[0], want[1])


def test_reduce_precision_float64_against_casts():
    """float64 reduce_precision (arithmetic, Veltkamp's split) equals the casts to float16/float32 with
    their subnormals flushed, and matches JAX 0.10.2 bit for bit (checksums recorded there)."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(size=300) * 10.0 ** rng.integers(-12, 12, 300),
                        [np.inf, -np.inf, np.nan, 0., -0., 1 + 2**-11, 1 + 3 * 2**-11, 1e300, 1e-300, 65504., 65520.]])
    with np.errstate(over="ignore"):
        for e, m, ft in ((5, 10, np.float16), (8, 23, np.float32)):
            want = x.astype(ft)
            want = np.where(np.abs(want) < np.finfo(ft).tiny, np.copysign(0., x), want).astype(np.float64)
            np.testing.assert_array_equal(np.asarray(lax.reduce_precision(x, e, m)), want)
    sums = {(5, 10): 309713, (8, 23): 412535, (11, 30): 738503, (8, 7): 177093, (11, 52): 892123, (4, 3): 934464}
    for (e, m), want in sums.items():
        r = np.asarray(lax.reduce_precision(x, e, m))
        assert r.view(np.uint64).sum() % 1000003 == want, (e, m)
