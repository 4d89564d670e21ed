"""``cranax.make_jaxpr`` prints exactly JAX's text.

The first two expected texts are copied from the JAX 0.10.2 reference outputs (the seed examples); the
others are small programs whose JAX text follows the same printer rules (one line when the whole jaxpr fits
in 80 columns, literals as ``value:dtype[]``, params sorted and in brackets).
"""
import numpy as np

import cranax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax.config import config


def text(fn, *args, **kw):
    return str(cranax.make_jaxpr(fn, **kw)(*args))


# --------------------------------------------------------------------------------------- recorded from JAX

SEED_SUM = """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a b
    d:f32[3] = sin a
    e:f32[3] = add c d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }"""

SEED_RELU = """{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:f32[] = mul 0.0:f32[] a
    d:f32[] = jit[
      name=_where
      jaxpr={ lambda ; b:bool[] a:f32[] c:f32[]. let
          d:f32[] = select_n b c a
        in (d,) }
    ] b a c
  in (d,) }"""


def test_seed_sum_of_mul_plus_sin():
    def f(x, y):
        return jnp.sum(x * y + jnp.sin(x))

    assert text(f, jnp.ones(3), jnp.ones(3) * 2) == SEED_SUM
    closed = cranax.make_jaxpr(f)(jnp.ones(3), jnp.ones(3))
    # recorded (jit_make_jaxpr_primitives): primitive sequence, input and output avals, and the value
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul", "sin", "add", "reduce_sum"]
    assert [(tuple(v.aval.shape), str(v.aval.dtype)) for v in closed.jaxpr.invars] == [((3,), "float32")] * 2
    assert [(tuple(a.shape), str(a.dtype)) for a in closed.out_avals] == [((), "float32")]
    out = f(jnp.arange(3.0), jnp.ones(3))
    assert out.dtype == np.float32 and out.shape == ()
    np.testing.assert_allclose(float(out), 4.750768661499023, rtol=1e-6)


def test_seed_relu_where():
    def relu_where(x):
        return jnp.where(x > 0, x, 0.0 * x)

    assert text(relu_where, jnp.array(3.0)) == SEED_RELU


def test_seed_texts_with_shape_dtype_structs():
    s = cranax.ShapeDtypeStruct((3,), jnp.float32)
    assert text(lambda x, y: jnp.sum(x * y + jnp.sin(x)), s, s) == SEED_SUM


# --------------------------------------------------------------------------------------- short forms

def test_one_line_mul_literal():
    assert text(lambda x: x * 2.0, np.float32(1.0)) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"


def test_one_line_add_int():
    assert text(lambda x: x + 1, jnp.arange(3)) == "{ lambda ; a:i32[3]. let b:i32[3] = add a 1:i32[] in (b,) }"


def test_one_line_sin():
    assert text(jnp.sin, jnp.ones(3)) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"


def test_one_line_two_inputs():
    assert text(lambda x, y: x + y, jnp.ones(3), jnp.ones(3)) == \
        "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b in (c,) }"


def test_identity_and_multiple_outputs():
    assert text(lambda x: x, jnp.ones(3)) == "{ lambda ; a:f32[3]. let  in (a,) }"
    assert text(lambda x: (x, x * 2.0), np.float32(1.0)) == \
        "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (a, b) }"


def test_literal_first_operand():
    assert text(lambda x: 1.0 - x, np.float32(0.0)) == "{ lambda ; a:f32[]. let b:f32[] = sub 1.0:f32[] a in (b,) }"


def test_multiline_convert_element_type():
    assert text(lambda x: x.astype(jnp.int32), jnp.ones(3)) == """{ lambda ; a:f32[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
  in (b,) }"""


def test_promotion_int_plus_float_scalar():
    # i32[3] + 1.5: the int array becomes a (weak) float32 array first
    assert text(lambda x: x + 1.5, jnp.ones(3, jnp.int32)) == """{ lambda ; a:i32[3]. let
    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] a
    c:f32[3] = add b 1.5:f32[]
  in (c,) }"""


def test_reduce_over_axis():
    assert text(lambda x: jnp.sum(x, axis=1), jnp.ones((2, 3))) == """{ lambda ; a:f32[2,3]. let
    b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] a
  in (b,) }"""
    assert text(lambda x: jnp.max(x, axis=(0, 2)), jnp.ones((2, 3, 4))) == """{ lambda ; a:f32[2,3,4]. let
    b:f32[3] = reduce_max[axes=(0, 2) out_sharding=None] a
  in (b,) }"""


def test_x64_literal_and_types():
    config.update("jax_enable_x64", True)
    assert text(lambda x: x * 2.0, np.float64(1.0)) == "{ lambda ; a:f64[]. let b:f64[] = mul a 2.0:f64[] in (b,) }"
    assert text(lambda x: x + 1, np.int64(1)) == "{ lambda ; a:i64[]. let b:i64[] = add a 1:i64[] in (b,) }"


def test_unsigned_and_bool_types():
    assert text(lambda x: x + 1, jnp.arange(2, dtype=jnp.uint32)) == \
        "{ lambda ; a:u32[2]. let b:u32[2] = add a 1:u32[] in (b,) }"
    assert text(lambda x: ~x, jnp.array([True, False])) == "{ lambda ; a:bool[2]. let b:bool[2] = not a in (b,) }"


def test_lax_ops_names():
    assert text(lambda x: lax.integer_pow(x, 3), np.float32(1.0)) == \
        "{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=3] a in (b,) }"
    assert text(lambda x, y: lax.max(x, y), np.float32(1.0), np.float32(2.0)) == \
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] = max a b in (c,) }"


def test_jaxpr_of_jitted_function_is_a_jit_equation():
    @cranax.jit
    def inner(x):
        return x * 2.0

    t = text(lambda x: inner(x) + 1.0, np.float32(1.0))
    assert t == """{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=inner
      jaxpr={ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
    ] a
    c:f32[] = add b 1.0:f32[]
  in (c,) }"""


def test_closure_constant_scalar_is_literal():
    k = 3.0
    assert text(lambda x: x * k, np.float32(1.0)) == "{ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }"


def test_static_argnums_in_make_jaxpr():
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x

    assert text(f, np.float32(1.0), 2, static_argnums=(1,)) == """{ lambda ; a:f32[]. let
    b:f32[] = mul a 2.0:f32[]
    c:f32[] = mul b 2.0:f32[]
  in (c,) }"""
