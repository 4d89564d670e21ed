"""The rest of jax.lax (issue 22 item 5): mulhi, ragged/scaled/batched dots, scatter_apply, broadcast_like,
rng_bit_generator (Philox against Random123's known answers), the dot-API records, tokens and the primitive
objects JAX exports, against NumPy and values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax


def eq(got, want, tol=1e-6):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def _mulhi_ref(x, y, bits, signed):
    p = x.astype(object) * y.astype(object)
    hi = np.array([(int(v) >> bits) for v in p.ravel()], dtype=object).reshape(p.shape)
    if not signed:
        hi = hi % (1 << bits)
    return hi.astype(x.dtype)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_mulhi_against_wide_product(dt):
    info = np.iinfo(dt)
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max, 200, endpoint=True).astype(dt)
    y = rng.integers(info.min, info.max, 200, endpoint=True).astype(dt)
    x[:4] = [info.min, info.max, info.min, 0]
    y[:4] = [info.min, info.min, info.max, info.max]
    want = _mulhi_ref(x, y, 8 * np.dtype(dt).itemsize, info.min < 0)
    np.testing.assert_array_equal(np.asarray(lax.mulhi(x, y)), want)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.mulhi)(x, y)), want)


def test_mulhi_jax_values_and_errors():
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(np.asarray(lax.mulhi(jnp.array([100, -100, 127, -128], jnp.int8), jnp.int8(100))),
                                  [39, -40, 49, -50])
    np.testing.assert_array_equal(np.asarray(lax.mulhi(jnp.array([-2**31, 2**31 - 1, -1], jnp.int32),
                                                       jnp.array([-2**31, -2**31, -1], jnp.int32))),
                                  [1073741824, -1073741824, 0])
    np.testing.assert_array_equal(np.asarray(lax.mulhi(jnp.arange(-3, 3), -7)), [0, 0, 0, 0, -1, -1])
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32 at position 0"):
        lax.mulhi(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match="lax.mulhi requires arguments to have the same dtypes, got int32, int16"):
        lax.mulhi(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int16))
    np.testing.assert_array_equal(np.asarray(lax.mulhi_p.bind(jnp.array([7], jnp.int32), jnp.array([-2], jnp.int32))),
                                  [-1])


def test_ragged_dot():
    x = np.arange(12.).reshape(6, 2)
    w = np.arange(24.).reshape(3, 2, 4)
    g = np.array([3, 1, 1], np.int32)
    # recorded from JAX 0.10.2 (the last row is past sum(group_sizes): zeros)
    want = [[4., 5., 6., 7.], [12., 17., 22., 27.], [20., 29., 38., 47.], [132., 145., 158., 171.],
            [308., 325., 342., 359.], [0., 0., 0., 0.]]
    eq(lax.ragged_dot(x, w, g), want)
    eq(cranax.jit(lax.ragged_dot)(x, w, g), want)
    # against NumPy per group
    g2 = np.array([1, 2, 3], np.int32)
    ref = np.concatenate([x[0:1] @ w[0], x[1:3] @ w[1], x[3:6] @ w[2]])
    eq(lax.ragged_dot(x, w, g2), ref)
    dn = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    eq(lax.ragged_dot_general(x, w, g2, dn), ref)
    # differentiable in lhs
    gx = cranax.grad(lambda a: lax.ragged_dot(a, w, g2).sum())(x)
    eq(gx, np.concatenate([np.broadcast_to(w[i].sum(1), (n, 2)) for i, n in enumerate(g2)]))
    with pytest.raises(NotImplementedError):
        lax.ragged_dot_general(x, w, g2, lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [1], [0]))


def test_batch_matmul_scaled_dot():
    a, b = np.random.default_rng(1).normal(size=(2, 3, 4)), np.random.default_rng(2).normal(size=(2, 4, 5))
    eq(lax.batch_matmul(a.astype(np.float32), b.astype(np.float32)), a @ b, 1e-5)
    with pytest.raises(TypeError, match="batch dimensions"):
        lax.batch_matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    # recorded from JAX 0.10.2: (1 * 2) . (1 * 3) summed over 4
    eq(lax.scaled_dot(jnp.ones((2, 4)), jnp.ones((4, 3)), lhs_scale=jnp.full((2, 2), 2.),
                      rhs_scale=jnp.full((2, 3), 3.)), np.full((2, 3), 24.))
    ls = np.array([[1., 2.], [3., 4.]], np.float32)
    lhs = np.arange(8., dtype=np.float32).reshape(2, 4)
    eq(lax.scaled_dot(lhs, np.eye(4, dtype=np.float32), lhs_scale=ls), lhs * np.repeat(ls, 2, axis=1))


def test_scatter_apply_and_broadcast_like():
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    # recorded from JAX 0.10.2: index 1 twice doubles it twice
    eq(lax.scatter_apply(jnp.arange(5.), jnp.array([[1], [3], [1]]), lambda v: v * 2, dn, update_shape=(3,)),
       [0., 4., 2., 6., 4.])
    eq(cranax.jit(lambda o: lax.scatter_apply(o, jnp.array([[0]]), jnp.sqrt, dn, update_shape=(1,)))(
        jnp.array([16., 4.])), [4., 4.])
    out = lax.broadcast_like(jnp.array([[1], [2]]), jnp.zeros((3, 2, 4)))
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to([[1], [2]], (3, 2, 4)))
    assert lax.broadcast_like(1., jnp.zeros((2, 3), jnp.int32)).dtype == np.float32


def _philox_ref(ctr, key):
    m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    c, k = list(ctr), list(key)
    for _ in range(10):
        p0, p1 = m0 * c[0], m1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k[1], p0 & 0xFFFFFFFF]
        k = [(k[0] + w0) & 0xFFFFFFFF, (k[1] + w1) & 0xFFFFFFFF]
    return c


def test_rng_bit_generator():
    # Random123's known answer for Philox4x32-10 (counter 0, key 0)
    _, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (4,))
    np.testing.assert_array_equal(np.asarray(bits), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8])
    key = np.array([1, 2, 3, 4], np.uint32)
    new, bits = lax.rng_bit_generator(key, (6,))
    want = _philox_ref([3, 4, 0, 0], [1, 2]) + _philox_ref([4, 4, 0, 0], [1, 2])[:2]
    np.testing.assert_array_equal(np.asarray(bits), want)
    # the state advances as XLA's does (recorded from JAX 0.10.2: +1 block for 4 words, +2 for 6 bytes)
    np.testing.assert_array_equal(np.asarray(lax.rng_bit_generator(key, (4,))[0]), [1, 2, 4, 4])
    new8, b8 = lax.rng_bit_generator(key, (2, 3), dtype=np.uint8)
    np.testing.assert_array_equal(np.asarray(new8), [1, 2, 5, 4])
    assert b8.dtype == np.uint8 and b8.shape == (2, 3)
    jn, jb = cranax.jit(lambda k: lax.rng_bit_generator(k, (6,)))(key)
    np.testing.assert_array_equal(np.asarray(jb), want)
    with pytest.raises(TypeError):
        lax.rng_bit_generator(key, (2,), dtype=np.int32)
    u = np.asarray(lax.rng_uniform(2., 3., (1000,)))
    assert u.shape == (1000,) and u.min() >= 2. and u.max() < 3. and abs(u.mean() - 2.5) < 0.05
    assert not np.array_equal(u, np.asarray(lax.rng_uniform(2., 3., (1000,))))


def test_dot_api_records():
    assert [m.name for m in lax.DotAlgorithmPreset][:2] == ["DEFAULT", "ANY_F8_ANY_F8_F32"]
    assert str(lax.DotAlgorithmPreset.F32_F32_F32) == "F32_F32_F32"
    assert repr(lax.DotAlgorithmPreset.DEFAULT) == "DotAlgorithmPreset.DEFAULT"
    assert lax.RandomAlgorithm.RNG_PHILOX == 2 and str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"
    assert lax.AccuracyMode.HIGHEST.value == 1
    alg = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    assert alg.lhs_component_count == 1 and alg.allow_imprecise_accumulation is False
    with pytest.raises(ValueError, match="At least one of atol, rtol, or ulps must be set"):
        lax.Tolerance()
    assert lax.Tolerance(atol=1e-3).atol == 1e-3


def test_small_names():
    assert lax.dtype(1.) == np.float32 and lax.dtype(np.int8(3)) == np.int8
    np.testing.assert_array_equal(np.asarray(lax.shape_as_value((2, 3))), [2, 3])
    assert lax.dce_sink(jnp.ones(2)) is None
    s = lax.stage(np.arange(3.))
    assert isinstance(s, cranax.Array) and s.dtype == np.float32
    eq(s, [0., 1., 2.])
    jx = cranax.make_jaxpr(lax.stage)(1.)
    assert len(jx.jaxpr.eqns) == 0
    tok = lax.after_all(lax.create_token(), lax.create_token())
    assert isinstance(tok, type(lax.create_token()))
    with pytest.raises(TypeError):
        lax.after_all(jnp.ones(2))
    f = lax.composite(lambda x, *, n: x * n, name="my.scale")
    eq(f(jnp.arange(3.), n=2), [0., 2., 4.])
    eq(lax.betainc(1., 2., jnp.array([0.5, .25])), [0.75, 0.4375])
    with pytest.raises(TypeError, match="regularized_incomplete_beta does not accept dtype int32"):
        lax.betainc(1, 2, jnp.array([0.5]))


def test_top_k_axis():
    x = jnp.array([[1., 5, 3], [4, 2, 6]])
    v, i = lax.top_k(x, 1, axis=0)   # recorded from JAX 0.10.2
    eq(v, [[4., 5., 6.]])
    np.testing.assert_array_equal(np.asarray(i), [[1, 0, 1]])


def test_primitive_objects_bind_with_jax_params():
    x = jnp.arange(12.).reshape(3, 4)
    v, i = lax.top_k_p.bind(x, k=2, axis=1)
    eq(v, [[3., 2.], [7., 6.], [11., 10.]])
    a, b = lax.split_p.bind(x, sizes=(1, 3), axis=1)
    assert a.shape == (3, 1) and b.shape == (3, 3)
    eq(lax.tile_p.bind(jnp.arange(2.), reps=(3,)), [0., 1.] * 3)
    eq(lax.stack_p.bind(x, x, axis=1), np.stack([np.asarray(x)] * 2, 1))
    assert len(lax.unstack_p.bind(x, axis=1)) == 4
    eq(lax.reduce_precision_p.bind(jnp.array([1.0001, 3.14159, 65520., 1e-5]), exponent_bits=5, mantissa_bits=10),
       [1., 3.140625, np.inf, 0.])   # recorded from JAX 0.10.2
    np.testing.assert_array_equal(np.asarray(lax.reduce_xor_p.bind(jnp.array([[1, 2], [3, 7]]), axes=(0,))), [2, 5])
    prod, tot = lax.reduce_p.bind(x, x, 1., 0., computation=lambda a, b, c, d: (a * c, b + d), dimensions=(0,))
    eq(prod, np.prod(np.asarray(x), 0))
    eq(tot, np.sum(np.asarray(x), 0))
    vals, idx = lax.approx_top_k_p.bind(x, k=1, reduction_dimension=-1, is_max_k=False)
    eq(vals, [[0.], [4.], [8.]])
    out = lax.optimization_barrier_p.bind(x, 1)
    assert out[1] == 1
    assert lax.eq_to_p.bind(3, 3) and lax.lt_to_p.bind(2, 3) and not lax.le_to_p.bind(4, 3)
    eq(lax.scatter_sub_p.bind(jnp.zeros(3), jnp.array([[1]]), jnp.array([2.]),
                              dimension_numbers=lax.ScatterDimensionNumbers((), (0,), (0,))), [0., -2., 0.])
    op = jnp.array([[1., 5.], [3., 2.]])
    eq(lax.select_and_scatter_p.bind(op, jnp.array([[10.]]), 0., select_prim=lax.ge_p, window_dimensions=(2, 2),
                                     window_strides=(1, 1), padding=((0, 0), (0, 0))), [[0., 10.], [0., 0.]])
    assert lax.top_k_p.name == "top_k" and lax.split_p.multiple_results
    # they differentiate and batch as their parts
    eq(cranax.grad(lambda t: lax.tile_p.bind(t, reps=(2,)).sum())(jnp.ones(3)), [2., 2., 2.])
    eq(cranax.vmap(lambda t: lax.tile_p.bind(t, reps=(2,)))(jnp.ones((2, 3))), np.ones((2, 6)))


def test_betainc_against_scipy(x64):
    sp = pytest.importorskip("scipy.special")
    a = np.array([0.5, 1, 2, 5, 30, 100, 0.1, 3.])
    b = np.array([0.5, 2, 3, 1, 20, 80, 4, 0.2])
    for x in (0.01, 0.3, 0.5, 0.7, 0.99):
        xs = np.full(8, x)
        eq(lax.betainc(a, b, xs), sp.betainc(a, b, xs), 1e-12)
        g = cranax.grad(lambda t: lax.betainc(2., 3., t))(x)
        eq(g, x * (1 - x) ** 2 / sp.beta(2, 3), 1e-10)
    f32 = [v.astype(np.float32) for v in (a, b, np.full(8, 0.3))]
    np.testing.assert_allclose(np.asarray(lax.betainc(*f32)), sp.betainc(a, b, 0.3), rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(lax.betainc(1., 2., jnp.array([0., 1., -1., 2.]))),
                                  [0., 1., np.nan, np.nan])
    eq(lax.regularized_incomplete_beta_p.bind(jnp.float32(1.), jnp.float32(2.), jnp.array([0.5], np.float32)),
       [0.75])
    with pytest.raises(TypeError, match="same dtypes"):
        lax.betainc(jnp.float32(1.), jnp.float16(2.), jnp.array([0.5], np.float32))
