"""Dot-algorithm presets (``precision='BF16_BF16_F32'``, ``lax.DotAlgorithmPreset``) as JAX 0.10.2 runs them on
the CPU (the precision guide): recorded in the jaxpr by name (``jnp.dot``/``inner``/``tensordot``/``vdot`` pass
their ``precision`` as ``matmul`` did), computed as the plain product for the presets XLA:CPU runs, JAX's
ValueError when compiling the others; ``jax_default_matmul_precision`` takes a preset. The expected text is JAX
0.10.2's output of the same program."""
import numpy as np

import cranax as jax
import cranax.numpy as jnp
from cranax import config

JAX_OUTPUT = """\
{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a a
  in (b,) }
{ lambda ; a:f32[4,8] b:f32[8,2]. let
    c:f32[4,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=BF16_BF16_F32
      preferred_element_type=float32
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,2] = broadcast_in_dim 1.0:f32[]
    e:f32[2,8] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      precision=BF16_BF16_F32
      preferred_element_type=float32
    ] d a
    f:f32[8,2] = transpose[permutation=(1, 0)] e
  in (f,) }
[4. 4.]
ValueError: The precision 'TF32_TF32_F32' is not supported by dot_general on CPU
[[2. 2.]
 [2. 2.]]
ValueError: The precision 'F16_F16_F32' is not supported by dot_general on CPU
ValueError: The precision 'BF16_BF16_F32_X9' is not supported by dot_general on CPU
{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=BF16_BF16_F32_X3
      preferred_element_type=float32
    ] a a
  in (b,) }
{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      precision=BF16_BF16_F32_X3
      preferred_element_type=float32
    ] a a
  in (b,) }
[[2.0, 3.0], [6.0, 11.0]]
"""


def test_presets_print_run_and_refuse_as_jax(capsys):
    x = jnp.ones((2, 2))
    print(jax.make_jaxpr(lambda x: jnp.dot(x, x, precision='highest'))(x))

    def loss(x, w):
        return jnp.sum(jnp.dot(x, w, precision='BF16_BF16_F32'))
    x4, w = jnp.ones((4, 8)), jnp.ones((8, 2))
    print(jax.jit(jax.grad(loss, argnums=1)).trace(x4, w).jaxpr)
    print(jax.grad(loss, argnums=1)(x4, w)[0])
    for f in (lambda: jnp.dot(x, x, precision='TF32_TF32_F32'), lambda: jax.jit(lambda a: a @ a.T)(x),
              lambda: jax.jit(lambda a: jnp.matmul(a, a, precision=jax.lax.DotAlgorithmPreset.F16_F16_F32))(x),
              lambda: jnp.tensordot(x, x, 1, precision='BF16_BF16_F32_X9')):
        try:
            print(f())
        except ValueError as e:
            print(f"ValueError: {e}")
    try:
        config.update('jax_default_matmul_precision', 'BF16_BF16_F32_X3')
        print(jax.make_jaxpr(lambda a: a @ a)(x))
        print(jax.make_jaxpr(lambda a: jnp.inner(a, a))(x))
        print(np.asarray(jnp.dot(jnp.arange(4.0).reshape(2, 2), jnp.arange(4.0).reshape(2, 2))).tolist())
    finally:
        config.update('jax_default_matmul_precision', None)
    assert capsys.readouterr().out == JAX_OUTPUT


def test_supported_presets_compute_the_plain_product():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 24)).astype(np.float32)
    b = rng.standard_normal((24, 8)).astype(np.float32)
    plain = np.asarray(jnp.dot(a, b))
    np.testing.assert_allclose(plain, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    for p in ("DEFAULT", "F32_F32_F32", "F64_F64_F64", "F16_F16_F16", "BF16_BF16_F32", "BF16_BF16_F32_X3",
              "BF16_BF16_F32_X6"):
        np.testing.assert_array_equal(np.asarray(jnp.dot(a, b, precision=p)), plain)
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda u, v: jnp.matmul(u, v, precision=p))(a, b)), plain)


def test_shape_error_is_jax_text():
    for f in (lambda: jnp.dot(jnp.ones((4, 8)), jnp.ones((4, 8))), lambda: jnp.inner(jnp.ones((4, 8)), jnp.ones((4, 3))),
              lambda: jnp.tensordot(jnp.ones((4, 8)), jnp.ones((4, 8)), 1)):
        try:
            f()
            raise AssertionError("no error")
        except TypeError as e:
            assert str(e).startswith("dot_general requires contracting dimensions to have the same shape, got (8,) "
                                     "and ("), str(e)


EINSUM_JAX = """\
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a b
  in (c,) }
{ lambda ; a:f32[2,3] b:f32[3,4]. let
    c:f32[2,4] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=BF16_BF16_F32
      preferred_element_type=float32
    ] a b
  in (c,) }
"""


def test_einsum_records_precision(capsys):
    a, b = jnp.ones((2, 3)), jnp.ones((3, 4))
    print(jax.make_jaxpr(lambda a, b: jnp.einsum('ij,jk->ik', a, b, precision='highest'))(a, b))
    print(jax.make_jaxpr(lambda a, b: jnp.einsum('ij,jk->ik', a, b, precision='BF16_BF16_F32'))(a, b))
    assert capsys.readouterr().out == EINSUM_JAX


def test_lazy_transposes_keep_the_precision():
    # an eager x.T is a lazy view folded into the product: the preset still reaches dot_general
    x = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    for f in (lambda: jnp.dot(x.T, x, precision='TF32_TF32_F32'), lambda: jnp.matmul(x, x.T, precision='TF32_TF32_F32')):
        try:
            f()
            raise AssertionError("no error")
        except ValueError as e:
            assert str(e) == "The precision 'TF32_TF32_F32' is not supported by dot_general on CPU"
    np.testing.assert_array_equal(np.asarray(jnp.dot(x.T, x, precision='BF16_BF16_F32')),
                                  np.asarray(x).T @ np.asarray(x))
