"""The lax compositions (associative_scan, general reduce, split, tile, reduce_precision, approx_max_k, ...)
against NumPy and JAX 0.10.2's recorded values, under jit and grad where they apply."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax


def eq(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def test_associative_scan():
    x = np.arange(1., 12.)
    eq(lax.associative_scan(lax.add, x), np.cumsum(x))
    eq(lax.associative_scan(lax.mul, x, reverse=True), np.cumprod(x[::-1])[::-1])
    eq(cranax.jit(lambda v: lax.associative_scan(lax.max, v, axis=1))(np.sin(np.arange(12.)).reshape(3, 4)),
       np.maximum.accumulate(np.sin(np.arange(12.)).reshape(3, 4), axis=1))
    # a non-commutative operator: composition of affine maps (a, b) -> x * a + b, applied left to right
    a, b = np.linspace(0.5, 1.5, 9), np.linspace(-1, 1, 9)
    ra, rb = lax.associative_scan(lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (a, b))
    wa, wb = np.cumprod(a), np.zeros(9)
    acc = 0.
    for i in range(9):
        acc = acc * a[i] + b[i]
        wb[i] = acc
    eq(ra, wa)
    eq(rb, wb)
    g = cranax.grad(lambda v: lax.associative_scan(lax.add, v).sum())(x)
    eq(g, np.arange(11., 0., -1.))
    with pytest.raises(ValueError, match="same first dimension"):
        lax.associative_scan(lambda p, q: p, (np.ones(3), np.ones(4)))


def test_reduce_general():
    a = np.arange(12.).reshape(3, 4)
    eq(lax.reduce(a, 0., lax.add, (1,)), a.sum(1))
    eq(lax.reduce(a, -np.inf, lax.max, (0,)), a.max(0))
    # a computation that is not a monoid: folded in order
    want = np.ones(4)
    for row in a:
        want = want * row + 1
    eq(lax.reduce(a, 1., lambda u, v: u * v + 1, (0,)), want)
    s1, s2 = lax.reduce((a, 2 * a), (0., 0.), lambda u, v: (u[0] + v[0], u[1] + v[1]), (0, 1))
    eq(s1, a.sum())
    eq(s2, 2 * a.sum())
    assert np.asarray(lax.reduce_xor(np.array([[1, 2], [7, 4]]), (1,))).tolist() == [3, 3]


def test_shape_helpers():
    assert [np.asarray(p).tolist() for p in lax.split(np.arange(6), [2, 0, 4])] == [[0, 1], [], [2, 3, 4, 5]]
    with pytest.raises(ValueError, match="Sum of sizes"):
        lax.split(np.arange(6), [2, 2])
    eq(lax.tile(np.array([[1, 2]]), (2, 3)), np.tile([[1, 2]], (2, 3)))
    eq(lax.stack([np.ones(2), np.zeros(2)], 1), np.stack([np.ones(2), np.zeros(2)], 1))
    assert [np.asarray(u).tolist() for u in lax.unstack(np.arange(4).reshape(2, 2), 1)] == [[0, 2], [1, 3]]
    assert lax.collapse(np.zeros((2, 3, 4)), 1).shape == (2, 12)
    assert lax.collapse(np.zeros((2, 3, 4)), 0, 2).shape == (6, 4)
    assert lax.broadcast_to_rank(np.ones(3), 3).shape == (1, 1, 3)
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    eq(lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, 0), [[0, 0], [1, 1], [0, 0]])
    a = np.arange(12.).reshape(3, 4)
    eq(lax.index_take(a, (np.array([0, 2]), np.array([1, 3])), (0, 1)), a[[0, 2], [1, 3]])
    eq(lax.reciprocal(np.float32(4)), 0.25)
    eq(lax.empty((2, 3), np.float32), np.zeros((2, 3)))
    eq(lax.optimization_barrier(np.ones(2)), np.ones(2))
    eq(lax.platform_dependent(2., cpu=lambda v: v * 10, default=lambda v: v), 20.)
    eq(lax.platform_dependent(2., tpu=lambda v: v * 10, default=lambda v: v + 1), 3.)


def test_scatter_sub():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    out = lax.scatter_sub(np.zeros(4, np.float32), np.array([[1], [3], [1]]), np.array([1., 2., 3.], np.float32), dn)
    eq(out, [0, -4, 0, -2])


def test_approx_k():
    x = np.array([[3., 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.float32)
    v, i = lax.approx_max_k(x, 2)
    eq(v, [[5, 4], [9, 6]])
    assert np.asarray(i).tolist() == [[4, 2], [0, 2]]
    v, i = lax.approx_min_k(x, 2, reduction_dimension=0)
    eq(v, np.sort(x, 0)[:2])


def test_reduce_precision_matches_jax():
    x = np.array([1.1, 3.14159, 70000., 1e-6, 6e-5, -2e-5, 65519., 65520., np.nan, -np.inf], np.float32)
    # JAX 0.10.2's results (float16-like, bfloat16-like and a 4/3-bit format)
    eq(lax.reduce_precision(x, 5, 10)[:8], [1.0996094, 3.140625, np.inf, 0, 0, -0., 65504., np.inf])
    eq(lax.reduce_precision(x, 8, 7)[:8], [1.1015625, 3.140625, 70144., 9.9837780e-07, 6.0081482e-05,
                                          -2.0027161e-05, 65536., 65536.])
    eq(lax.reduce_precision(x, 4, 3)[:8], [1.125, 3.25, np.inf, 0, 0, -0., np.inf, np.inf])
    r = np.asarray(lax.reduce_precision(x, 5, 10))
    assert np.isnan(r[8]) and r[9] == -np.inf
    # float16 itself: rounding to its own format is the identity
    h = np.linspace(-3, 3, 101).astype(np.float16)
    eq(lax.reduce_precision(jnp.asarray(h), 5, 10), h)


def test_reduce_precision_is_one_equation_with_jaxs_derivative():
    # JAX 0.10.2: one reduce_precision equation; the tangent and cotangent are rounded the same way (the bit
    # operations that compute it would give a zero derivative)
    f = lambda x: lax.reduce_precision(x * 3.0, 5, 10)
    assert float(cranax.grad(f)(1.1)) == 3.0
    p, t = cranax.jvp(f, (1.1,), (0.1,))
    eq(p, 3.3007812)
    eq(t, 0.30004883)
    eq(cranax.vjp(f, 1.1)[1](1e-4)[0], 0.00030005)
    eq(cranax.vmap(f)(jnp.array([1.1, 70000.0])), [3.3007812, np.inf])
    eq(cranax.jit(f)(jnp.array([1.1, 3.14159])), [3.3007812, 9.421875])
    assert str(cranax.make_jaxpr(cranax.grad(f))(1.1)) == """\
{ lambda ; a:f32[]. let
    b:f32[] = mul a 3.0:f32[]
    _:f32[] = reduce_precision[exponent_bits=5 mantissa_bits=10] b
    c:f32[] = reduce_precision[exponent_bits=5 mantissa_bits=10] 1.0:f32[]
    d:f32[] = mul c 3.0:f32[]
  in (d,) }"""
    assert str(cranax.make_jaxpr(lambda x: lax.reduce_precision(x * 2, 5, 10))(jnp.ones(3, jnp.bfloat16))) == """\
{ lambda ; a:bf16[3]. let
    b:bf16[3] = mul a 2.0:bf16[]
    c:bf16[3] = reduce_precision[exponent_bits=5 mantissa_bits=10] b
  in (c,) }"""
