"""grad of a scan whose carry starts weakly typed (a Python float) (issue 18 (a)): the transposed body types the
carry by its cotangent, as JAX's scan transpose does, so the convert of the weak carry transposes to the
identity and is not printed (JAX's staging drops identity converts); a convert inside the body still
transposes to the weak convert, as JAX prints. Jaxpr texts and values recorded from JAX 0.10.2."""
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

RECORDED = {
    'scan_weak_carry': '{ lambda ; a:f32[]. let\n    b:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] \n    _:f32[] _:f32[3] = scan[\n      jaxpr={ lambda ; c:f32[] d:f32[]. let\n          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n          f:f32[] = mul e d\n          g:f32[] = add f 1.0:f32[]\n        in (g, c) }\n      length=3\n      num_carry=1\n      num_consts=0\n      reverse=False\n      unroll=1\n    ] a b\n    h:f32[] = scan[\n      jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = mul i j in (k,) }\n      length=3\n      num_carry=1\n      num_consts=0\n      reverse=True\n      unroll=1\n    ] 1.0:f32[] b\n  in (h,) }',
    'fori_weak_carry': '{ lambda ; a:f32[]. let\n    _:i32[] _:f32[] = scan[\n      jaxpr={ lambda ; b:i32[] c:f32[]. let\n          d:i32[] = add b 1:i32[]\n          e:f32[] = mul c 2.0:f32[]\n          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n          g:f32[] = add f 1.0:f32[]\n        in (d, g) }\n      length=3\n      num_carry=2\n      num_consts=0\n      reverse=False\n      unroll=1\n    ] 0:i32[] a\n    h:f32[] = scan[\n      jaxpr={ lambda ; i:f32[]. let\n          j:f32[] = convert_element_type[new_dtype=float32 weak_type=True] i\n          k:f32[] = mul j 2.0:f32[]\n        in (k,) }\n      length=3\n      num_carry=1\n      num_consts=0\n      reverse=True\n      unroll=1\n    ] 1.0:f32[]\n  in (h,) }',
    'convert_top': '{ lambda ; a:f32[]. let\n    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n    _:f32[] = mul b 3.0:f32[]\n    c:f32[] = mul 1.0:f32[] 3.0:f32[]\n    d:f32[] = convert_element_type[new_dtype=float32 weak_type=True] c\n  in (d,) }',
    'scan_strong_carry': '{ lambda ; a:f32[]. let\n    b:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] \n    _:f32[] _:f32[3] = scan[\n      jaxpr={ lambda ; c:f32[] d:f32[]. let\n          e:f32[] = mul c d\n          f:f32[] = add e 1.0:f32[]\n        in (f, c) }\n      length=3\n      num_carry=1\n      num_consts=0\n      reverse=False\n      unroll=1\n    ] a b\n    g:f32[] = scan[\n      jaxpr={ lambda ; h:f32[] i:f32[]. let j:f32[] = mul h i in (j,) }\n      length=3\n      num_carry=1\n      num_consts=0\n      reverse=True\n      unroll=1\n    ] 1.0:f32[] b\n  in (g,) }',
}
VALUES = {'scan_weak_carry': 0.0, 'fori_weak_carry': 8.0, 'convert_top': 3.0, 'scan_strong_carry': 0.0}


def fs(x):
    def body(c, xi):
        return c * xi + 1.0, c
    return lax.scan(body, x, jnp.arange(3.0))[0]


def fw(x):
    return lax.fori_loop(0, 3, lambda i, c: c * 2.0 + jnp.float32(1), x)


CASES = {"scan_weak_carry": (jax.grad(fs), 2.0), "fori_weak_carry": (jax.grad(fw), 2.0),
         "convert_top": (jax.grad(lambda x: lax.convert_element_type(x, jnp.float32) * 3.), 2.0),
         "scan_strong_carry": (jax.grad(fs), jnp.float32(2.0))}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_text_as_jax(name):
    f, a = CASES[name]
    assert str(jax.make_jaxpr(f)(a)) == RECORDED[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_as_jax(name):
    f, a = CASES[name]
    assert float(f(a)) == VALUES[name]
    assert float(jax.jit(f)(a)) == VALUES[name]
