"""Issue 18, the fifteenth pass on JAX 0.10.2's printed forms (helper h-api15): float literals, pow's jvp,
``stack``/``split`` as primitives and the constants of a nested ``jit``. Texts recorded from JAX 0.10.2 by
running the ``def``s between the ``cases`` markers under JAX (each returns name -> thunk; a thunk's ``str`` is
the recorded text)."""
import warnings

import numpy as np
import pytest

import cranax as jax
import cranax.extend.core
import cranax.numpy as jnp
from cranax import lax


# --- cases
def literal_cases(jax, jnp, lax):
    one, h, b = np.float32(1), jnp.float16(1), jnp.bfloat16(1)
    mj = jax.make_jaxpr
    c = {}
    # JAX prints a literal as ``str(value.item())``: a weakly typed one keeps the Python scalar it came from
    # (``0.1``), a strong one holds its dtype's value (``0.10000000149011612`` in float32)
    for i, v in enumerate([0.1, -0.0, float("inf"), float("nan"), 1e-8, 1 / 3, 2, -3, True, 2.5e-8, 1e40]):
        c[f"weak_{i}"] = lambda v=v: mj(lambda x: x * v)(1.0)
        c[f"f32_{i}"] = lambda v=v: mj(lambda x: x * v)(one)
        c[f"f16_{i}"] = lambda v=v: mj(lambda x: x * v)(h)
        c[f"bf16_{i}"] = lambda v=v: mj(lambda x: x * v)(b)
        c[f"vec_{i}"] = lambda v=v: mj(lambda x: x * v)(jnp.ones(3))
    c["int_to_weak_float"] = lambda: mj(lambda x: x * 3)(1.0)
    c["int"] = lambda: mj(lambda x: x * 3)(1)
    c["int_plus_float"] = lambda: mj(lambda x: x + 0.1)(1)
    c["where"] = lambda: mj(lambda x: jnp.where(x > 0.1, x, 0.2))(1.0)
    c["sin_affine"] = lambda: mj(lambda x: jnp.sin(x) * 0.1 + 0.3)(jnp.ones(3))
    c["np_f32"] = lambda: mj(lambda x: x * jnp.float32(0.1))(1.0)
    c["asarray_strong"] = lambda: mj(lambda x: x * jnp.asarray(0.1))(jnp.ones(2))
    c["lax_mul"] = lambda: mj(lambda x: lax.mul(x, 0.1))(1.0)
    c["lax_add_vec"] = lambda: mj(lambda x: lax.add(x, 0.1))(jnp.ones(2))
    c["pow"] = lambda: mj(lambda x: x ** 0.1)(1.0)
    c["grad"] = lambda: mj(jax.grad(lambda x: 0.1 * x * x))(1.0)
    c["full"] = lambda: mj(lambda x: jnp.full((2,), 0.1) * x)(1.0)
    c["clip"] = lambda: mj(lambda x: jnp.clip(x, 0.1, 0.7))(1.0)
    c["astype_f16"] = lambda: mj(lambda x: x.astype(jnp.float16) * 0.1)(1.0)
    c["maximum"] = lambda: mj(lambda x: jnp.maximum(x, 0.1))(1.0)
    c["complex_weak"] = lambda: mj(lambda x: x + (0.1 + 0.2j))(1.0)
    c["complex_strong"] = lambda: mj(lambda x: x + (0.1 + 0.2j))(jnp.ones(2))
    c["c64"] = lambda: mj(lambda x: x * (1 + 2j))(np.complex64(1.0))
    for dt in [np.int8, np.int32, np.uint8, np.uint32]:
        c[f"int_{dt.__name__}"] = lambda dt=dt: mj(lambda x: x * dt(3))(dt(1))
    c["bool"] = lambda: mj(lambda x: x & True)(True)
    return c

def pow_cases(jax, jnp, lax):
    mj = jax.make_jaxpr

    def jv(f):
        return lambda x: jax.jvp(f, (x,), (x,))
    return {
        "pow_weak": lambda: mj(jv(lambda y: y ** 2.0))(1.0),
        "pow_strong": lambda: mj(jv(lambda y: y ** 2.0))(jnp.ones(3)),
        "pow_arr": lambda: mj(lambda x, y: jax.jvp(lambda a, b: a ** b, (x, y), (x, y)))(jnp.ones(3),
                                                                                        jnp.full(3, 2.)),
        "pow_rhs": lambda: mj(lambda x: jax.jvp(lambda b: 2.0 ** b, (x,), (x,)))(jnp.ones(3)),
        "cube": lambda: mj(jv(lambda y: y ** 3))(1.0),
        "inv": lambda: mj(jv(lambda y: y ** -1))(1.0),
        "sq": lambda: mj(jv(lambda y: y ** 2))(jnp.ones(2)),
        "one": lambda: mj(jv(lambda y: lax.integer_pow(y, 1)))(jnp.ones(2)),
        "zero": lambda: mj(jv(lambda y: lax.integer_pow(y, 0)))(jnp.ones(2)),
        "ipow_neg2": lambda: mj(jv(lambda y: lax.integer_pow(y, -2)))(jnp.ones(2)),
        "grad_pow": lambda: mj(jax.grad(lambda y: y ** 2.5))(1.0),
        "grad_cube": lambda: mj(jax.grad(lambda y: y ** 3))(1.0),
        "grad_pow_both": lambda: mj(jax.grad(lambda x, y: (x ** y).sum(), argnums=(0, 1)))(jnp.ones(2),
                                                                                          jnp.ones(2)),
        "power_f": lambda: mj(jv(lambda y: jnp.power(y, 2.5)))(jnp.ones(2)),
        "sqrt_pow": lambda: mj(jv(lambda y: y ** 0.5))(jnp.ones(2)),
        "f16_pow": lambda: mj(jv(lambda y: y ** 1.5))(jnp.ones(2, jnp.float16)),
        # an integer exponent: pow takes it as it is; the jvp selects 0 where y == 0
        "pow_int_exp": lambda: mj(lambda x, y: jax.jvp(lambda a: lax.pow(a, y), (x,), (x,)))(
            jnp.ones(3), jnp.full(3, 2, jnp.int32)),
        "pow_int_scalar_exp": lambda: mj(lambda x, y: jax.jvp(lambda a: lax.pow(a, y), (x,), (x,)))(
            jnp.ones(3), jnp.int32(2)),
        "power_int_exp": lambda: mj(jnp.power)(jnp.array([-2.0, 3.]), jnp.array([3, 2])),
        "power_int_scalar_exp": lambda: mj(jnp.power)(jnp.ones((2, 2)), jnp.array(3)),
        "power_weak_base": lambda: mj(jnp.power)(2.0, jnp.array([3, -2])),
        "pow_operator_int": lambda: mj(lambda x, y: x ** y)(jnp.ones(2), jnp.array([1, 2])),
    }

def stack_split_cases(jax, jnp, lax):
    mj = jax.make_jaxpr
    x3, m, x6 = jnp.ones(3), jnp.ones((2, 6)), jnp.ones(6)
    return {
        "stack": lambda: mj(lambda x: jnp.stack([x, x]))(x3),
        "stack1": lambda: mj(lambda x: jnp.stack([x, x * 2, x], axis=1))(m),
        "stack_neg": lambda: mj(lambda x: jnp.stack([x, x], axis=-1))(m),
        "stack_mixed": lambda: mj(lambda x: jnp.stack([x, 1.0]))(1.0),
        "stack_dtype": lambda: mj(lambda x: jnp.stack([x, x], dtype=jnp.int32))(x3),
        "stack_promote": lambda: mj(lambda x, y: jnp.stack([x, y]))(x3, jnp.ones(3, jnp.int32)),
        "stack_one": lambda: mj(lambda x: jnp.stack([x]))(x3),
        "lax_stack": lambda: mj(lambda x: lax.stack([x, x], axis=1))(m),
        "unstack": lambda: mj(lambda x: lax.unstack(x, axis=1))(jnp.ones((2, 3))),
        "jnp_unstack": lambda: mj(lambda x: jnp.unstack(x))(jnp.ones((2, 3))),
        "array_list": lambda: mj(lambda x: jnp.array([x, x]))(x3),
        "split": lambda: mj(lambda x: jnp.split(x, 3))(x6),
        "split_idx": lambda: mj(lambda x: jnp.split(x, [1, 4]))(x6),
        "split_axis": lambda: mj(lambda x: jnp.split(x, 2, axis=1))(m),
        "array_split": lambda: mj(lambda x: jnp.array_split(x, 4))(x6),
        "hsplit": lambda: mj(lambda x: jnp.hsplit(x, 3))(m),
        "vsplit": lambda: mj(lambda x: jnp.vsplit(x, 2))(m),
        "dsplit": lambda: mj(lambda x: jnp.dsplit(x, 2))(jnp.ones((1, 2, 4))),
        "lax_split": lambda: mj(lambda x: lax.split(x, (2, 4), axis=1))(m),
        "split_1d_hsplit": lambda: mj(lambda x: jnp.hsplit(x, 2))(x6),
        "grad_stack": lambda: mj(jax.grad(lambda x: (jnp.stack([x, 2 * x], axis=1) ** 2).sum()))(x3),
        "grad_split": lambda: mj(jax.grad(lambda x: jnp.split(x, 3)[1].sum()))(x6),
        "grad_unstack": lambda: mj(jax.grad(lambda x: lax.unstack(x)[0].sum()))(jnp.ones((2, 3))),
        "vmap_stack": lambda: mj(jax.vmap(lambda x: jnp.stack([x, x], axis=0)))(m),
        "vmap_stack_mixed": lambda: mj(jax.vmap(lambda x, y: jnp.stack([x, y]), in_axes=(0, None)))(m, x6),
        "vmap_split": lambda: mj(jax.vmap(lambda x: jnp.split(x, 2)))(m),
        "vmap_split1": lambda: mj(jax.vmap(lambda x: jnp.split(x, 2), in_axes=1))(m),
        "vmap_unstack": lambda: mj(jax.vmap(lambda x: lax.unstack(x)))(jnp.ones((2, 3, 4))),
        "jvp_split": lambda: mj(lambda x: jax.jvp(lambda a: jnp.split(a, 2), (x,), (x,)))(x6),
        "split_sections_err": lambda: mj(lambda x: jnp.split(x, 4))(x6),
        "split_sizes_err": lambda: lax.split(x6, (4, 3)),
        "split_negative_err": lambda: lax.split(x6, (-1, 7)),
        "split_backwards_err": lambda: jnp.split(x6, [4, 1]),
        "split_past_end_err": lambda: jnp.split(x6, [2, 10]),
        "stack_shape_err": lambda: lax.stack([x3, jnp.ones(2)]),
        "stack_dtype_err": lambda: lax.stack([x3, jnp.ones(3, jnp.int32)]),
        "jnp_stack_shape_err": lambda: jnp.stack([x3, jnp.ones(2)]),
        "stack_axis_err": lambda: lax.stack([x3], axis=2),
        "unstack_scalar_err": lambda: lax.unstack(jnp.ones(())),
        "split_axis_err": lambda: lax.split(x6, (6,), axis=1),
    }

def nested_const_cases(jax, jnp, lax):
    mj = jax.make_jaxpr
    c = np.arange(3.0, dtype=np.float32)
    ca = jnp.arange(3.0)
    inner = jax.jit(lambda x: x * c)
    inner.__name__ = "inner"
    inner_a = jax.jit(lambda x: x * ca)
    inner_s = jax.jit(lambda x: x * np.float32(2))

    def closes_tracer(x):
        return jax.jit(lambda y: y * x)(x) + 1.0
    x3 = jnp.ones(3)
    return {
        "basic": lambda: mj(lambda x: inner(x) + 1.0)(x3),
        "jax_array": lambda: mj(lambda x: inner_a(x) + 1.0)(x3),
        "scalar": lambda: mj(lambda x: inner_s(x))(x3),
        "tracer": lambda: mj(closes_tracer)(x3),
        "tracer_and_array": lambda: mj(lambda x: jax.jit(lambda y: y * x * c)(x))(x3),
        "top_const": lambda: mj(lambda x: x * c)(x3),
        "top_and_inner": lambda: mj(lambda x: inner(x) * c)(x3),
        "nested2": lambda: mj(lambda x: jax.jit(lambda y: inner(y) * 2.0)(x))(x3),
        "jit_of_jit": lambda: mj(jax.jit(lambda x: inner(x) + 1.0))(x3),
        "vmap": lambda: mj(jax.vmap(inner))(jnp.ones((2, 3))),
        "vmap_bcast": lambda: mj(jax.vmap(lambda x, y: x * y, in_axes=(0, None)))(jnp.ones((2, 3, 4)),
                                                                               jnp.ones((3, 4))),
        "jvp": lambda: mj(lambda x: jax.jvp(inner, (x,), (x,)))(x3),
        "scan": lambda: mj(lambda x: lax.scan(lambda cr, _: (cr * c, None), x, None, length=2)[0])(x3),
        "cond": lambda: mj(lambda x: lax.cond(x.sum() > 0, lambda y: y * c, lambda y: y, x))(x3),
        "while": lambda: mj(lambda x: lax.while_loop(lambda y: y.sum() < 10, lambda y: y + c, x))(x3),
        "traced": lambda: jax.jit(lambda x: inner(x) * 2.0).trace(x3).jaxpr,
    }

def atleast_cases(jax, jnp, lax):
    mj = jax.make_jaxpr
    c = {}
    for f in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        for shape in [(), (3,), (2, 3), (2, 3, 4)]:
            c[f"{f}_{len(shape)}"] = lambda f=f, shape=shape: mj(getattr(jnp, f))(jnp.ones(shape))
    c["atleast_2d_two"] = lambda: mj(lambda a, b: jnp.atleast_2d(a, b))(jnp.ones(3), 1.0)
    for f in ["vstack", "hstack", "dstack", "column_stack"]:
        for shape in [(), (3,), (2, 3)]:
            c[f"{f}_{len(shape)}"] = lambda f=f, shape=shape: mj(lambda x: getattr(jnp, f)([x, x]))(jnp.ones(shape))
    c["vstack_scalar"] = lambda: mj(lambda x: jnp.vstack([x, 1.0]))(jnp.ones(1))
    c["hstack_dtype"] = lambda: mj(lambda x: jnp.hstack([x, x], dtype=jnp.int32))(jnp.ones(2))
    c["atleast_1d_value"] = lambda: repr(jnp.atleast_1d(1.0))
    c["atleast_2d_value"] = lambda: repr(jnp.atleast_2d(3))
    return c
# --- end cases


LITERAL_CASES = {'asarray_strong': '{ lambda ; a:f32[2]. let b:f32[2] = mul a 0.10000000149011612:f32[] in (b,) }',
 'astype_f16': '{ lambda ; a:f32[]. let\n'
               '    b:f16[] = convert_element_type[new_dtype=float16 weak_type=False] a\n'
               '    c:f16[] = mul b 0.0999755859375:f16[]\n'
               '  in (c,) }',
 'bf16_0': '{ lambda ; a:bf16[]. let b:bf16[] = mul a 0.10009765625:bf16[] in (b,) }',
 'bf16_1': '{ lambda ; a:bf16[]. let b:bf16[] = mul a -0.0:bf16[] in (b,) }',
 'bf16_10': '{ lambda ; a:bf16[]. let b:bf16[] = mul a inf:bf16[] in (b,) }',
 'bf16_2': '{ lambda ; a:bf16[]. let b:bf16[] = mul a inf:bf16[] in (b,) }',
 'bf16_3': '{ lambda ; a:bf16[]. let b:bf16[] = mul a nan:bf16[] in (b,) }',
 'bf16_4': '{ lambda ; a:bf16[]. let\n    b:bf16[] = mul a 1.0011717677116394e-08:bf16[]\n  in (b,) }',
 'bf16_5': '{ lambda ; a:bf16[]. let b:bf16[] = mul a 0.333984375:bf16[] in (b,) }',
 'bf16_6': '{ lambda ; a:bf16[]. let b:bf16[] = mul a 2.0:bf16[] in (b,) }',
 'bf16_7': '{ lambda ; a:bf16[]. let b:bf16[] = mul a -3.0:bf16[] in (b,) }',
 'bf16_8': '{ lambda ; a:bf16[]. let b:bf16[] = mul a 1.0:bf16[] in (b,) }',
 'bf16_9': '{ lambda ; a:bf16[]. let\n    b:bf16[] = mul a 2.5029294192790985e-08:bf16[]\n  in (b,) }',
 'bool': '{ lambda ; a:bool[]. let b:bool[] = and a True:bool[] in (b,) }',
 'c64': '{ lambda ; a:c64[]. let b:c64[] = mul a (1+2j):c64[] in (b,) }',
 'clip': '{ lambda ; a:f32[]. let\n'
         '    b:f32[] = jit[\n'
         '      name=clip\n'
         '      jaxpr={ lambda ; a:f32[] c:f32[] d:f32[]. let\n'
         '          e:f32[] = max c a\n'
         '          b:f32[] = min d e\n'
         '        in (b,) }\n'
         '    ] a 0.1:f32[] 0.7:f32[]\n'
         '  in (b,) }',
 'complex_strong': '{ lambda ; a:f32[2]. let\n'
                   '    b:c64[2] = convert_element_type[new_dtype=complex64 weak_type=False] a\n'
                   '    c:c64[2] = add b (0.10000000149011612+0.20000000298023224j):c64[]\n'
                   '  in (c,) }',
 'complex_weak': '{ lambda ; a:f32[]. let\n'
                 '    b:c64[] = convert_element_type[new_dtype=complex64 weak_type=True] a\n'
                 '    c:c64[] = add b (0.1+0.2j):c64[]\n'
                 '  in (c,) }',
 'f16_0': '{ lambda ; a:f16[]. let b:f16[] = mul a 0.0999755859375:f16[] in (b,) }',
 'f16_1': '{ lambda ; a:f16[]. let b:f16[] = mul a -0.0:f16[] in (b,) }',
 'f16_10': '{ lambda ; a:f16[]. let b:f16[] = mul a inf:f16[] in (b,) }',
 'f16_2': '{ lambda ; a:f16[]. let b:f16[] = mul a inf:f16[] in (b,) }',
 'f16_3': '{ lambda ; a:f16[]. let b:f16[] = mul a nan:f16[] in (b,) }',
 'f16_4': '{ lambda ; a:f16[]. let b:f16[] = mul a 0.0:f16[] in (b,) }',
 'f16_5': '{ lambda ; a:f16[]. let b:f16[] = mul a 0.333251953125:f16[] in (b,) }',
 'f16_6': '{ lambda ; a:f16[]. let b:f16[] = mul a 2.0:f16[] in (b,) }',
 'f16_7': '{ lambda ; a:f16[]. let b:f16[] = mul a -3.0:f16[] in (b,) }',
 'f16_8': '{ lambda ; a:f16[]. let b:f16[] = mul a 1.0:f16[] in (b,) }',
 'f16_9': '{ lambda ; a:f16[]. let b:f16[] = mul a 0.0:f16[] in (b,) }',
 'f32_0': '{ lambda ; a:f32[]. let b:f32[] = mul a 0.10000000149011612:f32[] in (b,) }',
 'f32_1': '{ lambda ; a:f32[]. let b:f32[] = mul a -0.0:f32[] in (b,) }',
 'f32_10': '{ lambda ; a:f32[]. let b:f32[] = mul a inf:f32[] in (b,) }',
 'f32_2': '{ lambda ; a:f32[]. let b:f32[] = mul a inf:f32[] in (b,) }',
 'f32_3': '{ lambda ; a:f32[]. let b:f32[] = mul a nan:f32[] in (b,) }',
 'f32_4': '{ lambda ; a:f32[]. let b:f32[] = mul a 9.99999993922529e-09:f32[] in (b,) }',
 'f32_5': '{ lambda ; a:f32[]. let b:f32[] = mul a 0.3333333432674408:f32[] in (b,) }',
 'f32_6': '{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }',
 'f32_7': '{ lambda ; a:f32[]. let b:f32[] = mul a -3.0:f32[] in (b,) }',
 'f32_8': '{ lambda ; a:f32[]. let b:f32[] = mul a 1.0:f32[] in (b,) }',
 'f32_9': '{ lambda ; a:f32[]. let b:f32[] = mul a 2.5000000292152436e-08:f32[] in (b,) }',
 'full': '{ lambda ; a:f32[]. let\n'
         '    b:f32[2] = broadcast_in_dim 0.1:f32[]\n'
         '    c:f32[2] = mul b a\n'
         '  in (c,) }',
 'grad': '{ lambda ; a:f32[]. let\n'
         '    b:f32[] = mul 0.1:f32[] a\n'
         '    _:f32[] = mul b a\n'
         '    c:f32[] = mul b 1.0:f32[]\n'
         '    d:f32[] = mul 1.0:f32[] a\n'
         '    e:f32[] = mul 0.1:f32[] d\n'
         '    f:f32[] = add_any c e\n'
         '  in (f,) }',
 'int': '{ lambda ; a:i32[]. let b:i32[] = mul a 3:i32[] in (b,) }',
 'int_int32': '{ lambda ; a:i32[]. let b:i32[] = mul a 3:i32[] in (b,) }',
 'int_int8': '{ lambda ; a:i8[]. let b:i8[] = mul a 3:i8[] in (b,) }',
 'int_plus_float': '{ lambda ; a:i32[]. let\n'
                   '    b:f32[] = convert_element_type[new_dtype=float32 weak_type=True] a\n'
                   '    c:f32[] = add b 0.1:f32[]\n'
                   '  in (c,) }',
 'int_to_weak_float': '{ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }',
 'int_uint32': '{ lambda ; a:u32[]. let b:u32[] = mul a 3:u32[] in (b,) }',
 'int_uint8': '{ lambda ; a:u8[]. let b:u8[] = mul a 3:u8[] in (b,) }',
 'lax_add_vec': '{ lambda ; a:f32[2]. let b:f32[2] = add a 0.1:f32[] in (b,) }',
 'lax_mul': '{ lambda ; a:f32[]. let b:f32[] = mul a 0.1:f32[] in (b,) }',
 'maximum': '{ lambda ; a:f32[]. let b:f32[] = max a 0.1:f32[] in (b,) }',
 'np_f32': '{ lambda ; a:f32[]. let\n'
           '    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
           '    c:f32[] = mul b 0.10000000149011612:f32[]\n'
           '  in (c,) }',
 'pow': '{ lambda ; a:f32[]. let b:f32[] = pow a 0.1:f32[] in (b,) }',
 'sin_affine': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = sin a\n'
               '    c:f32[3] = mul b 0.10000000149011612:f32[]\n'
               '    d:f32[3] = add c 0.30000001192092896:f32[]\n'
               '  in (d,) }',
 'vec_0': '{ lambda ; a:f32[3]. let b:f32[3] = mul a 0.10000000149011612:f32[] in (b,) }',
 'vec_1': '{ lambda ; a:f32[3]. let b:f32[3] = mul a -0.0:f32[] in (b,) }',
 'vec_10': '{ lambda ; a:f32[3]. let b:f32[3] = mul a inf:f32[] in (b,) }',
 'vec_2': '{ lambda ; a:f32[3]. let b:f32[3] = mul a inf:f32[] in (b,) }',
 'vec_3': '{ lambda ; a:f32[3]. let b:f32[3] = mul a nan:f32[] in (b,) }',
 'vec_4': '{ lambda ; a:f32[3]. let b:f32[3] = mul a 9.99999993922529e-09:f32[] in (b,) }',
 'vec_5': '{ lambda ; a:f32[3]. let b:f32[3] = mul a 0.3333333432674408:f32[] in (b,) }',
 'vec_6': '{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }',
 'vec_7': '{ lambda ; a:f32[3]. let b:f32[3] = mul a -3.0:f32[] in (b,) }',
 'vec_8': '{ lambda ; a:f32[3]. let b:f32[3] = mul a 1.0:f32[] in (b,) }',
 'vec_9': '{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.5000000292152436e-08:f32[] in (b,) }',
 'weak_0': '{ lambda ; a:f32[]. let b:f32[] = mul a 0.1:f32[] in (b,) }',
 'weak_1': '{ lambda ; a:f32[]. let b:f32[] = mul a -0.0:f32[] in (b,) }',
 'weak_10': '{ lambda ; a:f32[]. let b:f32[] = mul a 1e+40:f32[] in (b,) }',
 'weak_2': '{ lambda ; a:f32[]. let b:f32[] = mul a inf:f32[] in (b,) }',
 'weak_3': '{ lambda ; a:f32[]. let b:f32[] = mul a nan:f32[] in (b,) }',
 'weak_4': '{ lambda ; a:f32[]. let b:f32[] = mul a 1e-08:f32[] in (b,) }',
 'weak_5': '{ lambda ; a:f32[]. let b:f32[] = mul a 0.3333333333333333:f32[] in (b,) }',
 'weak_6': '{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }',
 'weak_7': '{ lambda ; a:f32[]. let b:f32[] = mul a -3.0:f32[] in (b,) }',
 'weak_8': '{ lambda ; a:f32[]. let b:f32[] = mul a 1.0:f32[] in (b,) }',
 'weak_9': '{ lambda ; a:f32[]. let b:f32[] = mul a 2.5e-08:f32[] in (b,) }',
 'where': '{ lambda ; a:f32[]. let\n'
          '    b:bool[] = gt a 0.1:f32[]\n'
          '    c:f32[] = jit[\n'
          '      name=_where\n'
          '      jaxpr={ lambda ; b:bool[] a:f32[] d:f32[]. let\n'
          '          c:f32[] = select_n b d a\n'
          '        in (c,) }\n'
          '    ] b a 0.2:f32[]\n'
          '  in (c,) }'}


@pytest.mark.parametrize("name", sorted(LITERAL_CASES))
def test_literal_text(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the strong 1e40 overflows float32, as in JAX
        assert str(literal_cases(jax, jnp, lax)[name]()) == LITERAL_CASES[name]


def test_weak_literal_values():
    # a weak literal prints its Python value but computes in the array's dtype
    assert np.asarray(jax.jit(lambda x: x * 0.1)(1.0)).item() == float(np.float32(0.1))
    assert np.asarray(jax.jit(lambda x: x * 0.1)(jnp.float16(1))).item() == float(np.float16(0.1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no overflow warning for a weak 1e40 (JAX gives none)
        jaxpr = jax.make_jaxpr(lambda x: x * 1e40)(1.0)
    assert np.isinf(np.asarray(jax.jit(lambda x: x * 1e40)(1.0)))
    assert jaxpr.eqns[0].invars[1].val == np.float32(np.inf)
    np.testing.assert_array_equal(jax.jit(lambda x: jnp.full((2,), 0.1) * x)(2.0), np.float32(0.1) * 2)
    np.testing.assert_array_equal(jax.extend.core.eval_jaxpr(jax.make_jaxpr(lambda x: x * 0.1 + 0.3)(1.0).jaxpr, [],
                                                      2.0)[0], np.float32(0.1) * 2 + np.float32(0.3))


POW_CASES = {'cube': '{ lambda ; a:f32[]. let\n'
         '    b:f32[] = integer_pow[y=3] a\n'
         '    c:f32[] = integer_pow[y=2] a\n'
         '    d:f32[] = mul 3.0:f32[] c\n'
         '    e:f32[] = mul a d\n'
         '  in (b, e) }',
 'f16_pow': '{ lambda ; a:f16[2]. let\n'
            '    b:f16[2] = pow a 1.5:f16[]\n'
            '    c:f16[] = sub 1.5:f16[] 1.0:f16[]\n'
            '    d:f16[2] = pow a c\n'
            '    e:f16[2] = mul 1.5:f16[] d\n'
            '    f:f16[2] = mul a e\n'
            '  in (b, f) }',
 'grad_cube': '{ lambda ; a:f32[]. let\n'
              '    _:f32[] = integer_pow[y=3] a\n'
              '    b:f32[] = integer_pow[y=2] a\n'
              '    c:f32[] = mul 3.0:f32[] b\n'
              '    d:f32[] = mul 1.0:f32[] c\n'
              '  in (d,) }',
 'grad_pow': '{ lambda ; a:f32[]. let\n'
             '    _:f32[] = pow a 2.5:f32[]\n'
             '    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
             '    c:f32[] = sub 2.5:f32[] 1.0:f32[]\n'
             '    d:f32[] = pow b c\n'
             '    e:f32[] = mul 2.5:f32[] d\n'
             '    f:f32[] = mul 1.0:f32[] e\n'
             '  in (f,) }',
 'grad_pow_both': '{ lambda ; a:f32[2] b:f32[2]. let\n'
                  '    c:f32[2] = pow a b\n'
                  '    d:f32[2] = broadcast_in_dim 1.0:f32[]\n'
                  '    e:f32[2] = sub b d\n'
                  '    f:f32[2] = pow a e\n'
                  '    g:f32[2] = mul b f\n'
                  '    h:bool[2] = eq a 0.0:f32[]\n'
                  '    i:f32[2] = broadcast_in_dim 1.0:f32[]\n'
                  '    j:f32[2] = select_n h a i\n'
                  '    k:f32[2] = log j\n'
                  '    l:f32[2] = mul k c\n'
                  '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n'
                  '    m:f32[2] = broadcast_in_dim 1.0:f32[]\n'
                  '    n:f32[2] = mul m l\n'
                  '    o:f32[2] = mul m g\n'
                  '  in (o, n) }',
 'inv': '{ lambda ; a:f32[]. let\n'
        '    b:f32[] = integer_pow[y=-1] a\n'
        '    c:f32[] = integer_pow[y=-2] a\n'
        '    d:f32[] = mul -1.0:f32[] c\n'
        '    e:f32[] = mul a d\n'
        '  in (b, e) }',
 'ipow_neg2': '{ lambda ; a:f32[2]. let\n'
              '    b:f32[2] = integer_pow[y=-2] a\n'
              '    c:f32[2] = integer_pow[y=-3] a\n'
              '    d:f32[2] = mul -2.0:f32[] c\n'
              '    e:f32[2] = mul a d\n'
              '  in (b, e) }',
 'one': '{ lambda ; a:f32[2]. let b:f32[2] = integer_pow[y=1] a in (b, a) }',
 'pow_arr': '{ lambda ; a:f32[3] b:f32[3]. let\n'
            '    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
            '    d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
            '    e:f32[3] = pow a c\n'
            '    f:f32[3] = broadcast_in_dim 1.0:f32[]\n'
            '    g:f32[3] = sub c f\n'
            '    h:f32[3] = pow a g\n'
            '    i:f32[3] = mul c h\n'
            '    j:f32[3] = mul a i\n'
            '    k:bool[3] = eq a 0.0:f32[]\n'
            '    l:f32[3] = broadcast_in_dim 1.0:f32[]\n'
            '    m:f32[3] = select_n k a l\n'
            '    n:f32[3] = log m\n'
            '    o:f32[3] = mul n e\n'
            '    p:f32[3] = mul d o\n'
            '    q:f32[3] = add_any j p\n'
            '  in (e, q) }',
 'pow_int_exp': '{ lambda ; a:f32[3] b:i32[3]. let\n'
                '    c:f32[3] = pow a b\n'
                '    d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                '    e:bool[3] = eq d 0.0:f32[]\n'
                '    f:f32[3] = broadcast_in_dim 0.0:f32[]\n'
                '    g:bool[3] = eq d 0.0:f32[]\n'
                '    h:f32[3] = broadcast_in_dim 1.0:f32[]\n'
                '    i:f32[3] = select_n g d h\n'
                '    j:f32[3] = broadcast_in_dim 1.0:f32[]\n'
                '    k:f32[3] = sub d j\n'
                '    l:f32[3] = pow a k\n'
                '    m:f32[3] = mul i l\n'
                '    n:f32[3] = select_n e m f\n'
                '    o:f32[3] = mul a n\n'
                '  in (c, o) }',
 'pow_int_scalar_exp': '{ lambda ; a:f32[3] b:i32[]. let\n'
                       '    c:f32[3] = pow a b\n'
                       '    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                       '    e:f32[3] = broadcast_in_dim d\n'
                       '    f:bool[3] = eq e 0.0:f32[]\n'
                       '    g:f32[3] = broadcast_in_dim 0.0:f32[]\n'
                       '    h:bool[3] = eq e 0.0:f32[]\n'
                       '    i:f32[3] = broadcast_in_dim 1.0:f32[]\n'
                       '    j:f32[3] = select_n h e i\n'
                       '    k:f32[3] = broadcast_in_dim 1.0:f32[]\n'
                       '    l:f32[3] = sub e k\n'
                       '    m:f32[3] = pow a l\n'
                       '    n:f32[3] = mul j m\n'
                       '    o:f32[3] = select_n f n g\n'
                       '    p:f32[3] = mul a o\n'
                       '  in (c, p) }',
 'pow_operator_int': '{ lambda ; a:f32[2] b:i32[2]. let\n'
                     '    _:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                     '    c:f32[2] = pow a b\n'
                     '  in (c,) }',
 'pow_rhs': '{ lambda ; a:f32[3]. let\n'
            '    b:f32[3] = pow 2.0:f32[] a\n'
            '    c:bool[] = eq 2.0:f32[] 0.0:f32[]\n'
            '    d:f32[] = select_n c 2.0:f32[] 1.0:f32[]\n'
            '    e:f32[] = log d\n'
            '    f:f32[3] = mul e b\n'
            '    g:f32[3] = mul a f\n'
            '  in (b, g) }',
 'pow_strong': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = pow a 2.0:f32[]\n'
               '    c:f32[] = sub 2.0:f32[] 1.0:f32[]\n'
               '    d:f32[3] = pow a c\n'
               '    e:f32[3] = mul 2.0:f32[] d\n'
               '    f:f32[3] = mul a e\n'
               '  in (b, f) }',
 'pow_weak': '{ lambda ; a:f32[]. let\n'
             '    b:f32[] = pow a 2.0:f32[]\n'
             '    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
             '    d:f32[] = sub 2.0:f32[] 1.0:f32[]\n'
             '    e:f32[] = pow c d\n'
             '    f:f32[] = mul 2.0:f32[] e\n'
             '    g:f32[] = mul a f\n'
             '  in (b, g) }',
 'power_f': '{ lambda ; a:f32[2]. let\n'
            '    b:f32[2] = pow a 2.5:f32[]\n'
            '    c:f32[] = sub 2.5:f32[] 1.0:f32[]\n'
            '    d:f32[2] = pow a c\n'
            '    e:f32[2] = mul 2.5:f32[] d\n'
            '    f:f32[2] = mul a e\n'
            '  in (b, f) }',
 'power_int_exp': '{ lambda ; a:f32[2] b:i32[2]. let\n'
                  '    _:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                  '    c:f32[2] = pow a b\n'
                  '  in (c,) }',
 'power_int_scalar_exp': '{ lambda ; a:f32[2,2] b:i32[]. let\n'
                         '    _:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                         '    c:f32[2,2] = pow a b\n'
                         '  in (c,) }',
 'power_weak_base': '{ lambda ; a:f32[] b:i32[2]. let\n'
                    '    _:f32[2] = convert_element_type[new_dtype=float32 weak_type=True] b\n'
                    '    c:f32[2] = pow a b\n'
                    '  in (c,) }',
 'sq': '{ lambda ; a:f32[2]. let\n'
       '    b:f32[2] = integer_pow[y=2] a\n'
       '    c:f32[2] = mul 2.0:f32[] a\n'
       '    d:f32[2] = mul a c\n'
       '  in (b, d) }',
 'sqrt_pow': '{ lambda ; a:f32[2]. let\n'
             '    b:f32[2] = pow a 0.5:f32[]\n'
             '    c:f32[] = sub 0.5:f32[] 1.0:f32[]\n'
             '    d:f32[2] = pow a c\n'
             '    e:f32[2] = mul 0.5:f32[] d\n'
             '    f:f32[2] = mul a e\n'
             '  in (b, f) }',
 'zero': '{ lambda ; a:f32[2]. let\n'
         '    b:f32[2] = integer_pow[y=0] a\n'
         '    c:f32[2] = broadcast_in_dim 0.0:f32[]\n'
         '  in (b, c) }'}


@pytest.mark.parametrize("name", sorted(POW_CASES))
def test_pow_jvp_text(name):
    assert str(pow_cases(jax, jnp, lax)[name]()) == POW_CASES[name]


def test_pow_jvp_values():
    x = np.array([0.5, 1.5, 3.0], np.float32)
    for p in [2.0, 2.5, 0.5, -1.5]:
        y, t = jax.jvp(lambda a: a ** p, (x,), (np.ones(3, np.float32),))
        np.testing.assert_allclose(t, p * x.astype(np.float64) ** (p - 1), rtol=2e-6)
    for n in [-2, -1, 0, 1, 2, 3]:
        t = jax.jvp(lambda a: lax.integer_pow(a, n), (x,), (np.ones(3, np.float32),))[1]
        np.testing.assert_allclose(t, n * x.astype(np.float64) ** (n - 1), rtol=2e-6)
    # the exponent's tangent: log(x) * x ** y, with x == 0 giving 0 (not nan)
    g = jax.grad(lambda b, e: (b ** e).sum(), argnums=(0, 1))(np.array([0.0, 2.0], np.float32),
                                                             np.array([2.0, 3.0], np.float32))
    np.testing.assert_allclose(g[0], [0.0, 12.0])
    np.testing.assert_allclose(g[1], [0.0, 8 * np.log(2.0)], rtol=1e-6)
    # an integer exponent array: computed exactly for negative bases; the tangent is 0 where y == 0
    b, e = np.array([-2.0, 3.0, 0.0, 2.0], np.float32), np.array([3, -2, 0, 1], np.int32)
    np.testing.assert_allclose(lax.pow(b, e), [-8.0, 1 / 9, 1.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jnp.power)(b, e), [-8.0, 1 / 9, 1.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda a: jnp.power(a, e).sum())(b), [12.0, -2 / 27, 0.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(lax.pow, in_axes=(0, None))(np.stack([b, 2 * b]), e),
                               np.stack([b ** e.astype(np.float32), (2 * b) ** e.astype(np.float32)]), rtol=1e-6)
    np.testing.assert_allclose(jnp.power(2.0, np.array([3, -2])), [8.0, 0.25])
    # a weak base: the rule makes it strong, so the tangent is a strong float32 (JAX: Array(3., dtype=float32))
    t = jax.jvp(lambda a: a ** 2.0, (1.5,), (1.0,))[1]
    assert t.dtype == np.float32 and not t.weak_type and float(t) == 3.0


STACK_SPLIT_CASES = {'array_list': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
               '    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
               '    d:f32[2,3] = concatenate[dimension=0] b c\n'
               '  in (d,) }',
 'array_split': '{ lambda ; a:f32[6]. let\n'
                '    b:f32[2] c:f32[2] d:f32[1] e:f32[1] = split[\n'
                '      axis=0\n'
                '      sizes=(np.int64(2), np.int64(2), np.int64(1), np.int64(1))\n'
                '    ] a\n'
                '  in (b, c, d, e) }',
 'dsplit': '{ lambda ; a:f32[1,2,4]. let\n'
           '    b:f32[1,2,2] c:f32[1,2,2] = split[axis=2 sizes=(np.int64(2), np.int64(2))] a\n'
           '  in (b, c) }',
 'grad_split': '{ lambda ; a:f32[6]. let\n'
               '    _:f32[2] b:f32[2] _:f32[2] = split[\n'
               '      axis=0\n'
               '      sizes=(np.int64(2), np.int64(2), np.int64(2))\n'
               '    ] a\n'
               '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
               '    c:f32[2] = broadcast_in_dim 1.0:f32[]\n'
               '    d:f32[2] = broadcast_in_dim 0.0:f32[]\n'
               '    e:f32[2] = broadcast_in_dim 0.0:f32[]\n'
               '    f:f32[6] = concatenate[dimension=0] d c e\n'
               '  in (f,) }',
 'grad_stack': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = mul 2.0:f32[] a\n'
               '    c:f32[3,2] = stack[axis=1] a b\n'
               '    d:f32[3,2] = integer_pow[y=2] c\n'
               '    e:f32[3,2] = mul 2.0:f32[] c\n'
               '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d\n'
               '    f:f32[3,2] = broadcast_in_dim 1.0:f32[]\n'
               '    g:f32[3,2] = mul f e\n'
               '    h:f32[3] i:f32[3] = unstack[axis=1] g\n'
               '    j:f32[3] = mul 2.0:f32[] i\n'
               '    k:f32[3] = add_any h j\n'
               '  in (k,) }',
 'grad_unstack': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[3] _:f32[3] = unstack[axis=0] a\n'
                 '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                 '    c:f32[3] = broadcast_in_dim 1.0:f32[]\n'
                 '    d:f32[3] = broadcast_in_dim 0.0:f32[]\n'
                 '    e:f32[2,3] = stack[axis=0] c d\n'
                 '  in (e,) }',
 'hsplit': '{ lambda ; a:f32[2,6]. let\n'
           '    b:f32[2,2] c:f32[2,2] d:f32[2,2] = split[\n'
           '      axis=1\n'
           '      sizes=(np.int64(2), np.int64(2), np.int64(2))\n'
           '    ] a\n'
           '  in (b, c, d) }',
 'jnp_stack_shape_err': 'ERR ValueError: All input arrays must have the same shape. Got (3,), (2,).',
 'jnp_unstack': '{ lambda ; a:f32[2,3]. let b:f32[3] c:f32[3] = unstack[axis=0] a in (b, c) }',
 'jvp_split': '{ lambda ; a:f32[6]. let\n'
              '    b:f32[3] c:f32[3] = split[axis=0 sizes=(np.int64(3), np.int64(3))] a\n'
              '    d:f32[3] e:f32[3] = split[axis=0 sizes=(np.int64(3), np.int64(3))] a\n'
              '  in (b, c, d, e) }',
 'lax_split': '{ lambda ; a:f32[2,6]. let\n'
              '    b:f32[2,2] c:f32[2,4] = split[axis=1 sizes=(2, 4)] a\n'
              '  in (b, c) }',
 'lax_stack': '{ lambda ; a:f32[2,6]. let b:f32[2,2,6] = stack[axis=1] a a in (b,) }',
 'split': '{ lambda ; a:f32[6]. let\n'
          '    b:f32[2] c:f32[2] d:f32[2] = split[\n'
          '      axis=0\n'
          '      sizes=(np.int64(2), np.int64(2), np.int64(2))\n'
          '    ] a\n'
          '  in (b, c, d) }',
 'split_1d_hsplit': '{ lambda ; a:f32[6]. let\n'
                    '    b:f32[3] c:f32[3] = split[axis=0 sizes=(np.int64(3), np.int64(3))] a\n'
                    '  in (b, c) }',
 'split_axis': '{ lambda ; a:f32[2,6]. let\n'
               '    b:f32[2,3] c:f32[2,3] = split[axis=1 sizes=(np.int64(3), np.int64(3))] a\n'
               '  in (b, c) }',
 'split_axis_err': 'ERR ValueError: axis 1 is out of bounds for array of dimension 1',
 'split_backwards_err': 'ERR ValueError: Sizes passed to split must be nonnegative, got [np.int64(4), '
                        'np.int64(-3), np.int64(5)]',
 'split_idx': '{ lambda ; a:f32[6]. let\n'
              '    b:f32[1] c:f32[3] d:f32[2] = split[\n'
              '      axis=0\n'
              '      sizes=(np.int64(1), np.int64(3), np.int64(2))\n'
              '    ] a\n'
              '  in (b, c, d) }',
 'split_negative_err': 'ERR ValueError: Sizes passed to split must be nonnegative, got [-1, 7]',
 'split_past_end_err': 'ERR ValueError: Sizes passed to split must be nonnegative, got [np.int64(2), '
                       'np.int64(8), np.int64(-4)]',
 'split_sections_err': 'ERR ValueError: array split does not result in an equal division: rest is 2',
 'split_sizes_err': 'ERR ValueError: Sum of sizes 7 must be equal to dimension 0 of the operand shape [6]',
 'stack': '{ lambda ; a:f32[3]. let b:f32[2,3] = stack[axis=0] a a in (b,) }',
 'stack1': '{ lambda ; a:f32[2,6]. let\n'
           '    b:f32[2,6] = mul a 2.0:f32[]\n'
           '    c:f32[2,3,6] = stack[axis=1] a b a\n'
           '  in (c,) }',
 'stack_axis_err': 'ERR ValueError: axis 2 is out of bounds for array of dimension 2',
 'stack_dtype': '{ lambda ; a:f32[3]. let\n'
                '    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
                '    c:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
                '    d:i32[2,3] = stack[axis=0] b c\n'
                '  in (d,) }',
 'stack_dtype_err': 'ERR TypeError: lax.stack requires arguments to have the same dtypes, got float32, '
                    'int32.',
 'stack_mixed': '{ lambda ; a:f32[]. let b:f32[2] = stack[axis=0] a 1.0:f32[] in (b,) }',
 'stack_neg': '{ lambda ; a:f32[2,6]. let b:f32[2,6,2] = stack[axis=2] a a in (b,) }',
 'stack_one': '{ lambda ; a:f32[3]. let b:f32[1,3] = stack[axis=0] a in (b,) }',
 'stack_promote': '{ lambda ; a:f32[3] b:i32[3]. let\n'
                  '    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                  '    d:f32[2,3] = stack[axis=0] a c\n'
                  '  in (d,) }',
 'stack_shape_err': 'ERR ValueError: All input arrays must have the same shape. Got (3,), (2,).',
 'unstack': '{ lambda ; a:f32[2,3]. let\n'
            '    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a\n'
            '  in (b, c, d) }',
 'unstack_scalar_err': 'ERR ValueError: axis 0 is out of bounds for array of dimension 0',
 'vmap_split': '{ lambda ; a:f32[2,6]. let\n'
               '    b:f32[2,3] c:f32[2,3] = split[axis=1 sizes=(np.int64(3), np.int64(3))] a\n'
               '  in (b, c) }',
 'vmap_split1': '{ lambda ; a:f32[2,6]. let\n'
                '    b:f32[1,6] c:f32[1,6] = split[axis=0 sizes=(np.int64(1), np.int64(1))] a\n'
                '    d:f32[6,1] = transpose[permutation=(1, 0)] b\n'
                '    e:f32[6,1] = transpose[permutation=(1, 0)] c\n'
                '  in (d, e) }',
 'vmap_stack': '{ lambda ; a:f32[2,6]. let\n'
               '    b:f32[2,2,6] = stack[axis=0] a a\n'
               '    c:f32[2,2,6] = transpose[permutation=(1, 0, 2)] b\n'
               '  in (c,) }',
 'vmap_stack_mixed': '{ lambda ; a:f32[2,6] b:f32[6]. let\n'
                     '    c:f32[2,6] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n'
                     '    d:f32[2,2,6] = stack[axis=1] a c\n'
                     '  in (d,) }',
 'vmap_unstack': '{ lambda ; a:f32[2,3,4]. let\n'
                 '    b:f32[2,4] c:f32[2,4] d:f32[2,4] = unstack[axis=1] a\n'
                 '  in (b, c, d) }',
 'vsplit': '{ lambda ; a:f32[2,6]. let\n'
           '    b:f32[1,6] c:f32[1,6] = split[axis=0 sizes=(np.int64(1), np.int64(1))] a\n'
           '  in (b, c) }'}


def _text_or_error(thunk):
    try:
        return str(thunk())
    except Exception as e:
        return f"ERR {type(e).__name__}: {e}"


@pytest.mark.parametrize("name", sorted(STACK_SPLIT_CASES))
def test_stack_split_text(name):
    assert _text_or_error(stack_split_cases(jax, jnp, lax)[name]) == STACK_SPLIT_CASES[name]


def test_stack_split_values():
    x = np.arange(24.).reshape(2, 3, 4).astype(np.float32)
    for ax in [0, 1, 2, 3, -1, -4]:
        np.testing.assert_array_equal(jnp.stack([x, x + 1, x * 2], axis=ax), np.stack([x, x + 1, x * 2], axis=ax))
        np.testing.assert_array_equal(jax.jit(lambda a: lax.stack([a, a + 1], axis=ax))(x),
                                      np.stack([x, x + 1], axis=ax))
    for ax in [0, 1, 2, -1]:
        got = jax.jit(lambda a: jnp.unstack(a, axis=ax))(x)
        want = [np.take(x, i, ax) for i in range(x.shape[ax])]
        assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want))
    for ios in [2, [1], [1, 3], [0, 4], 4, 3]:
        for got, want in zip(jax.jit(lambda a: jnp.array_split(a, ios, axis=2))(x), np.array_split(x, ios, axis=2)):
            np.testing.assert_array_equal(got, want)
    for f, nf, a, k in [(jnp.hsplit, np.hsplit, x, 3), (jnp.vsplit, np.vsplit, x, 2), (jnp.dsplit, np.dsplit, x, 2),
                        (jnp.hsplit, np.hsplit, x[0, 0], 2), (jnp.hsplit, np.hsplit, x, [1])]:
        for got, want in zip(f(a, k), nf(a, k)):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jnp.stack(x), x)   # an array stacks its rows
    assert jnp.stack([1, 2.5]).dtype == np.float32 and jnp.stack([jnp.int8(1), 3]).dtype == np.int8
    np.testing.assert_array_equal(jnp.stack([x[0], x[1]], dtype=jnp.int32), x.astype(np.int32))
    assert lax.unstack(jnp.ones((0, 3))) == ()
    assert [p.shape for p in lax.split(jnp.ones((2, 5)), (0, 5, 0), axis=1)] == [(2, 0), (2, 5), (2, 0)]


def test_stack_split_rules():
    x = np.arange(12.).reshape(3, 4).astype(np.float32)
    # grad: stack transposes to unstack, unstack to stack (zeros filled in), split to concatenate
    np.testing.assert_allclose(jax.grad(lambda a: (jnp.stack([a, 2 * a], 1) ** 2).sum())(x), 10 * x)
    np.testing.assert_allclose(jax.grad(lambda a: lax.unstack(a, 1)[2].sum())(x),
                               np.eye(4, dtype=np.float32)[2][None].repeat(3, 0))
    w = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(jax.grad(lambda a: (jnp.split(a, [1, 3], axis=1)[1] * w[:, None]).sum())(x),
                               np.array([[0, 0, 0, 0], [0, 1, 1, 0], [0, 2, 2, 0]], np.float32))
    # jvp: linear, the tangent takes the same path
    y, t = jax.jvp(lambda a: jnp.split(a, 2, axis=1), (x,), (2 * x,))
    for yy, tt, ww in zip(y, t, np.split(x, 2, axis=1)):
        np.testing.assert_array_equal(yy, ww)
        np.testing.assert_array_equal(tt, 2 * ww)
    y, t = jax.jvp(lambda a: lax.stack([a, 1.0 + a], 0), (x,), (x,))
    np.testing.assert_array_equal(t, np.stack([x, x]))
    # vmap over every axis, batched and unbatched operands mixed
    b = np.arange(24.).reshape(2, 3, 4).astype(np.float32)
    for ia in [0, 1, 2]:
        for ax in [0, 1, 2]:
            got = jax.vmap(lambda a, c: lax.stack([a, c, a], axis=ax), in_axes=(ia, None))(b, np.take(b, 0, ia))
            want = np.stack([np.stack([np.take(b, i, ia), np.take(b, 0, ia), np.take(b, i, ia)], axis=ax)
                             for i in range(b.shape[ia])])
            np.testing.assert_array_equal(got, want)
            got = jax.vmap(lambda a: lax.stack([a, 2 * a], axis=ax), in_axes=ia)(b)
            np.testing.assert_array_equal(got, np.stack([np.stack([np.take(b, i, ia), 2 * np.take(b, i, ia)], ax)
                                                         for i in range(b.shape[ia])]))
        for ax in [0, 1]:
            got = jax.vmap(lambda a: lax.unstack(a, axis=ax), in_axes=ia)(b)
            sl = [np.take(b, i, ia) for i in range(b.shape[ia])]
            for k, g in enumerate(got):
                np.testing.assert_array_equal(g, np.stack([np.take(s, k, ax) for s in sl]))
            got = jax.vmap(lambda a: lax.split(a, (1, a.shape[ax] - 1), axis=ax), in_axes=ia)(b)
            for k, g in enumerate(got):
                np.testing.assert_array_equal(g, np.stack([np.split(s, [1], axis=ax)[k] for s in sl]))


NESTED_CONST_CASES = {'basic': '{ lambda ; a:f32[3]. let\n'
          '    b:f32[3] = jit[\n'
          '      name=<lambda>\n'
          '      jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }\n'
          '    ] a\n'
          '    d:f32[3] = add b 1.0:f32[]\n'
          '  in (d,) }',
 'cond': '{ lambda a:f32[3]; b:f32[3]. let\n'
         '    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
         '    d:bool[] = gt c 0.0:f32[]\n'
         '    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d\n'
         '    f:f32[3] = cond[\n'
         '      branches=(\n'
         '        { lambda ; g:f32[3] h:f32[3]. let  in (h,) }\n'
         '        { lambda ; i:f32[3] j:f32[3]. let k:f32[3] = mul j i in (k,) }\n'
         '      )\n'
         '    ] e a b\n'
         '  in (f,) }',
 'jax_array': '{ lambda ; a:f32[3]. let\n'
              '    b:f32[3] = jit[\n'
              '      name=<lambda>\n'
              '      jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }\n'
              '    ] a\n'
              '    d:f32[3] = add b 1.0:f32[]\n'
              '  in (d,) }',
 'jit_of_jit': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = jit[\n'
               '      name=<lambda>\n'
               '      jaxpr={ lambda ; a:f32[3]. let\n'
               '          c:f32[3] = jit[\n'
               '            name=<lambda>\n'
               '            jaxpr={ lambda d:f32[3]; a:f32[3]. let c:f32[3] = mul a d in (c,) }\n'
               '          ] a\n'
               '          b:f32[3] = add c 1.0:f32[]\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'jvp': '{ lambda ; a:f32[3]. let\n'
        '    b:f32[3] c:f32[3] = jit[\n'
        '      name=<lambda>\n'
        '      jaxpr={ lambda d:f32[3]; a:f32[3] e:f32[3]. let\n'
        '          b:f32[3] = mul a d\n'
        '          c:f32[3] = mul e d\n'
        '        in (b, c) }\n'
        '    ] a a\n'
        '  in (b, c) }',
 'nested2': '{ lambda ; a:f32[3]. let\n'
            '    b:f32[3] = jit[\n'
            '      name=<lambda>\n'
            '      jaxpr={ lambda ; a:f32[3]. let\n'
            '          c:f32[3] = jit[\n'
            '            name=<lambda>\n'
            '            jaxpr={ lambda d:f32[3]; a:f32[3]. let c:f32[3] = mul a d in (c,) }\n'
            '          ] a\n'
            '          b:f32[3] = mul c 2.0:f32[]\n'
            '        in (b,) }\n'
            '    ] a\n'
            '  in (b,) }',
 'scalar': '{ lambda ; a:f32[3]. let\n'
           '    b:f32[3] = jit[\n'
           '      name=<lambda>\n'
           '      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }\n'
           '    ] a\n'
           '  in (b,) }',
 'scan': '{ lambda a:f32[3]; b:f32[3]. let\n'
         '    c:f32[3] = scan[\n'
         '      jaxpr={ lambda ; d:f32[3] e:f32[3]. let f:f32[3] = mul e d in (f,) }\n'
         '      length=2\n'
         '      num_carry=1\n'
         '      num_consts=1\n'
         '      reverse=False\n'
         '      unroll=1\n'
         '    ] a b\n'
         '  in (c,) }',
 'top_and_inner': '{ lambda a:f32[3]; b:f32[3]. let\n'
                  '    c:f32[3] = jit[\n'
                  '      name=<lambda>\n'
                  '      jaxpr={ lambda d:f32[3]; b:f32[3]. let c:f32[3] = mul b d in (c,) }\n'
                  '    ] b\n'
                  '    e:f32[3] = mul c a\n'
                  '  in (e,) }',
 'top_const': '{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }',
 'traced': '{ lambda ; a:f32[3]. let\n'
           '    b:f32[3] = jit[\n'
           '      name=<lambda>\n'
           '      jaxpr={ lambda c:f32[3]; a:f32[3]. let b:f32[3] = mul a c in (b,) }\n'
           '    ] a\n'
           '    d:f32[3] = mul b 2.0:f32[]\n'
           '  in (d,) }',
 'tracer': '{ lambda ; a:f32[3]. let\n'
           '    b:f32[3] = jit[\n'
           '      name=<lambda>\n'
           '      jaxpr={ lambda ; a:f32[3] c:f32[3]. let b:f32[3] = mul c a in (b,) }\n'
           '    ] a a\n'
           '    d:f32[3] = add b 1.0:f32[]\n'
           '  in (d,) }',
 'tracer_and_array': '{ lambda a:f32[3]; b:f32[3]. let\n'
                     '    c:f32[3] = jit[\n'
                     '      name=<lambda>\n'
                     '      jaxpr={ lambda ; b:f32[3] a:f32[3] d:f32[3]. let\n'
                     '          e:f32[3] = mul d b\n'
                     '          c:f32[3] = mul e a\n'
                     '        in (c,) }\n'
                     '    ] b a b\n'
                     '  in (c,) }',
 'vmap': '{ lambda ; a:f32[2,3]. let\n'
         '    b:f32[2,3] = jit[\n'
         '      name=<lambda>\n'
         '      jaxpr={ lambda c:f32[3]; a:f32[2,3]. let\n'
         '          d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] c\n'
         '          b:f32[2,3] = mul a d\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'vmap_bcast': '{ lambda ; a:f32[2,3,4] b:f32[3,4]. let\n'
               '    c:f32[1,3,4] = broadcast_in_dim[\n'
               '      broadcast_dimensions=(np.int64(1), np.int64(2))\n'
               '    ] b\n'
               '    d:f32[2,3,4] = mul a c\n'
               '  in (d,) }',
 'while': '{ lambda a:f32[3]; b:f32[3]. let\n'
          '    c:f32[3] = while[\n'
          '      body_jaxpr={ lambda ; d:f32[3] e:f32[3]. let f:f32[3] = add e d in (f,) }\n'
          '      body_nconsts=1\n'
          '      cond_jaxpr={ lambda ; g:f32[3]. let\n'
          '          h:f32[] = reduce_sum[axes=(0,) out_sharding=None] g\n'
          '          i:bool[] = lt h 10.0:f32[]\n'
          '        in (i,) }\n'
          '      cond_nconsts=0\n'
          '    ] a b\n'
          '  in (c,) }'}


@pytest.mark.parametrize("name", sorted(NESTED_CONST_CASES))
def test_nested_jit_const_text(name):
    assert str(nested_const_cases(jax, jnp, lax)[name]()) == NESTED_CONST_CASES[name]


def test_nested_jit_const_values():
    c = np.arange(3.0, dtype=np.float32)
    inner = jax.jit(lambda x: x * c)
    outer = jax.jit(lambda x: inner(x) + 1.0)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(outer(x), x * c + 1)
    np.testing.assert_array_equal(jax.grad(lambda a: (inner(a) ** 2).sum())(x), 2 * x * c * c)
    np.testing.assert_array_equal(jax.vmap(inner)(np.stack([x, 2 * x])), np.stack([x * c, 2 * x * c]))
    np.testing.assert_array_equal(jax.jit(jax.vmap(inner))(np.stack([x, 2 * x])), np.stack([x * c, 2 * x * c]))
    # the printed jaxpr (its inner jit holds the const) evaluates, eagerly and re-staged under jit
    closed = jax.make_jaxpr(lambda a: jax.jit(lambda b: inner(b) * 2.0)(a) + inner(a))(x)
    assert not closed.consts and closed.eqns[0].params["jaxpr"].eqns[0].params["jaxpr"].consts
    f = jax.extend.core.jaxpr_as_fun(closed)
    np.testing.assert_array_equal(f(x)[0], 3 * x * c)
    np.testing.assert_array_equal(jax.jit(f)(x)[0], 3 * x * c)
    np.testing.assert_array_equal(jax.grad(lambda a: f(a)[0].sum())(x), 3 * c)
    np.testing.assert_array_equal(jax.vmap(f)(np.stack([x, x]))[0], np.stack([3 * x * c] * 2))
    # a jit call after make_jaxpr of the same function still compiles (its trace hoists the const)
    np.testing.assert_array_equal(inner(x), x * c)
    # AOT: Traced.jaxpr shows the inner const (JAX's text); lowering and export hoist it
    t = jax.jit(lambda a: jax.jit(lambda b: inner(b) * 2.0)(a) + inner(a)).trace(x)
    assert not t.jaxpr.consts
    np.testing.assert_array_equal(t.lower().compile()(x), 3 * x * c)
    exp = jax.export.export(jax.jit(lambda a: inner(a) * 2.0))(x)
    np.testing.assert_array_equal(jax.export.deserialize(exp.serialize()).call(x), 2 * x * c)
    closed = jax.make_jaxpr(lambda a: lax.scan(lambda cr, _: (inner(cr), None), a, None, length=2)[0])(x)
    np.testing.assert_array_equal(jax.extend.core.jaxpr_as_fun(closed)(x)[0], x * c * c)


ATLEAST_CASES = {'atleast_1d_0': '{ lambda ; a:f32[]. let\n'
                 '    b:f32[1] = jit[\n'
                 '      name=atleast_1d\n'
                 '      jaxpr={ lambda ; a:f32[]. let b:f32[1] = broadcast_in_dim a in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_1d_1': '{ lambda ; a:f32[3]. let\n'
                 '    b:f32[3] = jit[name=atleast_1d jaxpr={ lambda ; a:f32[3]. let  in (a,) }] a\n'
                 '  in (b,) }',
 'atleast_1d_2': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[2,3] = jit[\n'
                 '      name=atleast_1d\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let  in (a,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_1d_3': '{ lambda ; a:f32[2,3,4]. let\n'
                 '    b:f32[2,3,4] = jit[\n'
                 '      name=atleast_1d\n'
                 '      jaxpr={ lambda ; a:f32[2,3,4]. let  in (a,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_1d_value': 'Array([1.], dtype=float32, weak_type=True)',
 'atleast_2d_0': '{ lambda ; a:f32[]. let\n'
                 '    b:f32[1,1] = jit[\n'
                 '      name=atleast_2d\n'
                 '      jaxpr={ lambda ; a:f32[]. let b:f32[1,1] = broadcast_in_dim a in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_2d_1': '{ lambda ; a:f32[3]. let\n'
                 '    b:f32[1,3] = jit[\n'
                 '      name=atleast_2d\n'
                 '      jaxpr={ lambda ; a:f32[3]. let\n'
                 '          b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_2d_2': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[2,3] = jit[\n'
                 '      name=atleast_2d\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let  in (a,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_2d_3': '{ lambda ; a:f32[2,3,4]. let\n'
                 '    b:f32[2,3,4] = jit[\n'
                 '      name=atleast_2d\n'
                 '      jaxpr={ lambda ; a:f32[2,3,4]. let  in (a,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_2d_two': '{ lambda ; a:f32[3] b:f32[]. let\n'
                   '    c:f32[1,3] d:f32[1,1] = jit[\n'
                   '      name=atleast_2d\n'
                   '      jaxpr={ lambda ; a:f32[3] b:f32[]. let\n'
                   '          c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                   '          d:f32[1,1] = broadcast_in_dim b\n'
                   '        in (c, d) }\n'
                   '    ] a b\n'
                   '  in (c, d) }',
 'atleast_2d_value': 'Array([[3]], dtype=int32, weak_type=True)',
 'atleast_3d_0': '{ lambda ; a:f32[]. let\n'
                 '    b:f32[1,1,1] = jit[\n'
                 '      name=atleast_3d\n'
                 '      jaxpr={ lambda ; a:f32[]. let b:f32[1,1,1] = broadcast_in_dim a in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_3d_1': '{ lambda ; a:f32[3]. let\n'
                 '    b:f32[1,3,1] = jit[\n'
                 '      name=atleast_3d\n'
                 '      jaxpr={ lambda ; a:f32[3]. let\n'
                 '          b:f32[1,3,1] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_3d_2': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[2,3,1] = jit[\n'
                 '      name=atleast_3d\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                 '          b:f32[2,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'atleast_3d_3': '{ lambda ; a:f32[2,3,4]. let\n'
                 '    b:f32[2,3,4] = jit[\n'
                 '      name=atleast_3d\n'
                 '      jaxpr={ lambda ; a:f32[2,3,4]. let  in (a,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'column_stack_0': 'let atleast_2d = { lambda ; a:f32[]. let\n'
                   '    b:f32[1,1] = broadcast_in_dim a\n'
                   '  in (b,) } in\n'
                   '{ lambda ; c:f32[]. let\n'
                   '    d:f32[1,1] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
                   '    e:f32[1,1] = transpose[permutation=(1, 0)] d\n'
                   '    f:f32[1,1] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
                   '    g:f32[1,1] = transpose[permutation=(1, 0)] f\n'
                   '    h:f32[1,2] = concatenate[dimension=1] e g\n'
                   '  in (h,) }',
 'column_stack_1': 'let atleast_2d = { lambda ; a:f32[3]. let\n'
                   '    b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                   '  in (b,) } in\n'
                   '{ lambda ; c:f32[3]. let\n'
                   '    d:f32[1,3] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
                   '    e:f32[3,1] = transpose[permutation=(1, 0)] d\n'
                   '    f:f32[1,3] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
                   '    g:f32[3,1] = transpose[permutation=(1, 0)] f\n'
                   '    h:f32[3,2] = concatenate[dimension=1] e g\n'
                   '  in (h,) }',
 'column_stack_2': '{ lambda ; a:f32[2,3]. let b:f32[2,6] = concatenate[dimension=1] a a in (b,) }',
 'dstack_0': 'let atleast_3d = { lambda ; a:f32[]. let\n'
             '    b:f32[1,1,1] = broadcast_in_dim a\n'
             '  in (b,) } in\n'
             '{ lambda ; c:f32[]. let\n'
             '    d:f32[1,1,1] = jit[name=atleast_3d jaxpr=atleast_3d] c\n'
             '    e:f32[1,1,1] = jit[name=atleast_3d jaxpr=atleast_3d] c\n'
             '    f:f32[1,1,2] = concatenate[dimension=2] d e\n'
             '  in (f,) }',
 'dstack_1': 'let atleast_3d = { lambda ; a:f32[3]. let\n'
             '    b:f32[1,3,1] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
             '  in (b,) } in\n'
             '{ lambda ; c:f32[3]. let\n'
             '    d:f32[1,3,1] = jit[name=atleast_3d jaxpr=atleast_3d] c\n'
             '    e:f32[1,3,1] = jit[name=atleast_3d jaxpr=atleast_3d] c\n'
             '    f:f32[1,3,2] = concatenate[dimension=2] d e\n'
             '  in (f,) }',
 'dstack_2': 'let atleast_3d = { lambda ; a:f32[2,3]. let\n'
             '    b:f32[2,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a\n'
             '  in (b,) } in\n'
             '{ lambda ; c:f32[2,3]. let\n'
             '    d:f32[2,3,1] = jit[name=atleast_3d jaxpr=atleast_3d] c\n'
             '    e:f32[2,3,1] = jit[name=atleast_3d jaxpr=atleast_3d] c\n'
             '    f:f32[2,3,2] = concatenate[dimension=2] d e\n'
             '  in (f,) }',
 'hstack_0': 'let atleast_1d = { lambda ; a:f32[]. let b:f32[1] = broadcast_in_dim a in (b,) } in\n'
             '{ lambda ; c:f32[]. let\n'
             '    d:f32[1] = jit[name=atleast_1d jaxpr=atleast_1d] c\n'
             '    e:f32[1] = jit[name=atleast_1d jaxpr=atleast_1d] c\n'
             '    f:f32[2] = concatenate[dimension=0] d e\n'
             '  in (f,) }',
 'hstack_1': 'let atleast_1d = { lambda ; a:f32[3]. let  in (a,) } in\n'
             '{ lambda ; b:f32[3]. let\n'
             '    c:f32[3] = jit[name=atleast_1d jaxpr=atleast_1d] b\n'
             '    d:f32[3] = jit[name=atleast_1d jaxpr=atleast_1d] b\n'
             '    e:f32[6] = concatenate[dimension=0] c d\n'
             '  in (e,) }',
 'hstack_2': 'let atleast_1d = { lambda ; a:f32[2,3]. let  in (a,) } in\n'
             '{ lambda ; b:f32[2,3]. let\n'
             '    c:f32[2,3] = jit[name=atleast_1d jaxpr=atleast_1d] b\n'
             '    d:f32[2,3] = jit[name=atleast_1d jaxpr=atleast_1d] b\n'
             '    e:f32[2,6] = concatenate[dimension=1] c d\n'
             '  in (e,) }',
 'hstack_dtype': 'let atleast_1d = { lambda ; a:f32[2]. let  in (a,) } in\n'
                 '{ lambda ; b:f32[2]. let\n'
                 '    c:f32[2] = jit[name=atleast_1d jaxpr=atleast_1d] b\n'
                 '    d:f32[2] = jit[name=atleast_1d jaxpr=atleast_1d] b\n'
                 '    e:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
                 '    f:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] d\n'
                 '    g:i32[4] = concatenate[dimension=0] e f\n'
                 '  in (g,) }',
 'vstack_0': 'let atleast_2d = { lambda ; a:f32[]. let\n'
             '    b:f32[1,1] = broadcast_in_dim a\n'
             '  in (b,) } in\n'
             '{ lambda ; c:f32[]. let\n'
             '    d:f32[1,1] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
             '    e:f32[1,1] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
             '    f:f32[2,1] = concatenate[dimension=0] d e\n'
             '  in (f,) }',
 'vstack_1': 'let atleast_2d = { lambda ; a:f32[3]. let\n'
             '    b:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
             '  in (b,) } in\n'
             '{ lambda ; c:f32[3]. let\n'
             '    d:f32[1,3] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
             '    e:f32[1,3] = jit[name=atleast_2d jaxpr=atleast_2d] c\n'
             '    f:f32[2,3] = concatenate[dimension=0] d e\n'
             '  in (f,) }',
 'vstack_2': 'let atleast_2d = { lambda ; a:f32[2,3]. let  in (a,) } in\n'
             '{ lambda ; b:f32[2,3]. let\n'
             '    c:f32[2,3] = jit[name=atleast_2d jaxpr=atleast_2d] b\n'
             '    d:f32[2,3] = jit[name=atleast_2d jaxpr=atleast_2d] b\n'
             '    e:f32[4,3] = concatenate[dimension=0] c d\n'
             '  in (e,) }',
 'vstack_scalar': '{ lambda ; a:f32[1]. let\n'
                  '    b:f32[1,1] = jit[\n'
                  '      name=atleast_2d\n'
                  '      jaxpr={ lambda ; a:f32[1]. let\n'
                  '          b:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                  '        in (b,) }\n'
                  '    ] a\n'
                  '    c:f32[1,1] = jit[\n'
                  '      name=atleast_2d\n'
                  '      jaxpr={ lambda ; d:f32[]. let c:f32[1,1] = broadcast_in_dim d in (c,) }\n'
                  '    ] 1.0:f32[]\n'
                  '    e:f32[1,1] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
                  '    f:f32[2,1] = concatenate[dimension=0] b e\n'
                  '  in (f,) }'}


@pytest.mark.parametrize("name", sorted(ATLEAST_CASES))
def test_atleast_and_stacks_text(name):
    assert str(atleast_cases(jax, jnp, lax)[name]()) == ATLEAST_CASES[name]


def test_atleast_and_stacks_values():
    for shape in [(), (3,), (2, 3), (2, 3, 4)]:
        x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        for f in ["atleast_1d", "atleast_2d", "atleast_3d"]:
            np.testing.assert_array_equal(getattr(jnp, f)(x), getattr(np, f)(x))
        if len(shape) < 3:
            for f in ["vstack", "hstack", "dstack", "column_stack"]:
                np.testing.assert_array_equal(getattr(jnp, f)([x, x + 1]), getattr(np, f)([x, x + 1]))
                np.testing.assert_array_equal(jax.jit(lambda a: getattr(jnp, f)([a, 2 * a]))(x),
                                              getattr(np, f)([x, 2 * x]))
    a, b = jnp.atleast_3d(np.ones(2), [[1, 2]])
    assert a.shape == (1, 2, 1) and b.shape == (1, 2, 1) and b.dtype == np.int32
    np.testing.assert_array_equal(jax.grad(lambda v: jnp.vstack([v, 2 * v]).sum())(np.ones(3, np.float32)),
                                  np.full(3, 3.0, np.float32))
    np.testing.assert_array_equal(jax.vmap(lambda v: jnp.column_stack([v, v]))(np.ones((2, 3), np.float32)),
                                  np.ones((2, 3, 2), np.float32))
