"""Rank-0 operands of binary primitives (issue 18 (a)): a rank-0 value meeting an array stays rank-0 in the
jaxpr, as JAX's `x * y` with `y: f32[]` is one `mul` (JAX's lax broadcasting_shape_rule and jnp's
promote_shapes); the lowering broadcasts it for the core. Jaxpr texts recorded from JAX 0.10.2."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

RECORDED = {
    'scalar_const': '{ lambda ; a:f32[3]. let\n    b:f32[3] = mul a 2.0:f32[]\n    c:f32[3] = add b 3.0:f32[]\n  in (c,) }',
    'div_sum': '{ lambda ; a:f32[3]. let\n    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n    c:f32[3] = div a b\n  in (c,) }',
    'mul_scalar_arg': '{ lambda ; a:f32[3] b:f32[]. let c:f32[3] = mul a b in (c,) }',
    'scalar_first': '{ lambda ; a:f32[] b:f32[3]. let c:f32[3] = sub a b in (c,) }',
    'grad_div_sum': '{ lambda ; a:f32[3]. let\n    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n    c:f32[3] = div a b\n    d:f32[] = integer_pow[y=-2] b\n    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n    e:f32[3] = broadcast_in_dim 1.0:f32[]\n    f:f32[3] = mul e d\n    g:f32[3] = mul f a\n    h:f32[] = reduce_sum[axes=(0,) out_sharding=None] g\n    i:f32[] = neg h\n    j:f32[3] = div e b\n    k:f32[3] = broadcast_in_dim i\n    l:f32[3] = add_any j k\n  in (l,) }',
    'vmap_unbatched_scalar': '{ lambda ; a:f32[2,3] b:f32[]. let c:f32[2,3] = mul a b in (c,) }',
    'vmap_batched_scalar': '{ lambda ; a:f32[] b:f32[3]. let c:f32[3] = mul a b in (c,) }',
    'int_scalar': '{ lambda ; a:i32[3] b:i32[]. let c:i32[3] = add a b in (c,) }',
}

x = jnp.ones(3)
CASES = {
    "scalar_const": (lambda x: x * 2.0 + jnp.float32(3), (x,)),
    "div_sum": (lambda x: x / x.sum(), (x,)),
    "mul_scalar_arg": (lambda x, y: x * y, (x, jnp.float32(2))),
    "scalar_first": (lambda y, x: y - x, (jnp.float32(2), x)),
    "grad_div_sum": (jax.grad(lambda x: (x / x.sum()).sum()), (x,)),
    "vmap_unbatched_scalar": (jax.vmap(lambda x, y: x * y, (0, None)), (jnp.ones((2, 3)), jnp.float32(2))),
    "vmap_batched_scalar": (jax.vmap(lambda x, y: x * y, (None, 0)), (jnp.float32(2), x)),
    "int_scalar": (lambda i, n: i + n, (jnp.arange(3), jnp.int32(5))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_matches_jax(name):
    f, args = CASES[name]
    assert str(jax.make_jaxpr(f)(*args)) == RECORDED[name]


def test_values_eager_and_jit():
    a = np.arange(1.0, 5.0, dtype=np.float32)
    s = np.float32(3.0)
    for fn, ref in [(lambda x, y: x * y, a * s), (lambda x, y: y - x, s - a), (lambda x, y: x / y, a / s),
                    (lambda x, y: jnp.maximum(x, y), np.maximum(a, s)), (lambda x, y: x ** y, a ** s),
                    (lambda x, y: x > y, a > s), (lambda x, y: x / x.sum() + y, a / a.sum() + s)]:
        np.testing.assert_allclose(fn(jnp.asarray(a), jnp.asarray(s)), ref, rtol=1e-6)
        np.testing.assert_allclose(jax.jit(fn)(jnp.asarray(a), jnp.asarray(s)), ref, rtol=1e-6)
    np.testing.assert_array_equal(jax.jit(lambda i, n: i * n)(jnp.arange(4), jnp.int32(-2)), np.arange(4) * -2)
    np.testing.assert_array_equal(jax.jit(lambda b, c: b & c)(jnp.array([True, False]), jnp.bool_(True)),
                                  [True, False])
    z = jax.jit(lambda z, c: z * c)(jnp.ones(3, jnp.complex64), jnp.complex64(1 + 2j))
    np.testing.assert_allclose(z, np.full(3, 1 + 2j, np.complex64))
    np.testing.assert_allclose(jax.jit(lambda x, y: lax.complex(x, y))(jnp.arange(3.0), jnp.float32(1)),
                               np.arange(3.0) + 1j)


def test_grad_of_rank0_operand_sums_the_cotangent():
    a = jnp.arange(1.0, 4.0)
    f = lambda x, y: (x * y - y / x + y).sum()
    gx, gy = jax.grad(f, argnums=(0, 1))(a, jnp.float32(2))
    np.testing.assert_allclose(gx, 2 + 2 / np.arange(1.0, 4.0) ** 2, rtol=1e-6)
    np.testing.assert_allclose(gy, (np.arange(1.0, 4.0) - 1 / np.arange(1.0, 4.0) + 1).sum(), rtol=1e-6)
    gj = jax.jit(jax.grad(f, argnums=(0, 1)))(a, jnp.float32(2))
    np.testing.assert_allclose(gj[1], gy, rtol=1e-6)
    # jvp: a tangent only on the rank-0 operand gives the array-shaped tangent
    _, t = jax.jvp(lambda x, y: x + y, (a, jnp.float32(1)), (jnp.zeros(3), jnp.float32(1)))
    np.testing.assert_allclose(t, np.ones(3))
    # transpose of x * y in the rank-0 y: the sum of x * ct
    (ty,) = jax.linear_transpose(lambda y: a * y, jnp.float32(1))(jnp.ones(3))
    assert ty.shape == () and float(ty) == 6.0


def test_vmap_with_rank0_operands():
    m = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(jax.vmap(lambda x, y: x * y, (1, None))(m, jnp.float32(2)), (np.arange(6.0).reshape(2, 3) * 2).T)
    np.testing.assert_allclose(jax.vmap(lambda x, y: x + y, (None, 0))(m, jnp.arange(4.0)),
                               np.arange(6.0).reshape(1, 2, 3) + np.arange(4.0).reshape(4, 1, 1))
    g = jax.vmap(jax.grad(lambda x, y: (x * y - y / x).sum(), argnums=(0, 1)), (0, None))
    gx, gy = jax.jit(g)(jnp.ones((2, 3)), jnp.float32(2))
    np.testing.assert_allclose(gx, np.full((2, 3), 4.0))
    np.testing.assert_allclose(gy, np.zeros(2))
