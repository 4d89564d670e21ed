"""Printed jaxprs against JAX 0.10.2's text (recorded from JAX and written here): params that JAX's vmap and
transpose rules build with NumPy (``axes=(np.int64(2),)``, ``broadcast_dimensions=(np.int64(0), ...)``),
``reduce_sum`` alone carrying ``out_sharding``, the reduce_max/min jvp's reshape, integer ``jnp.power`` as
JAX's ``_pow_int_int`` (six ``_where`` steps), and the integer power values."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def _cases(jax, jnp, lax):
    """The same cases run under cranax here and under JAX to record ``JAX_TEXTS``."""
    x = jnp.ones((3, 4, 5))
    J = jax.make_jaxpr

    def red(name):
        return lambda v: getattr(jnp, name)(v > 0 if name in ("any", "all") else v, axis=1)

    cases = {}
    for name in ("sum", "max", "min", "prod", "argmax", "argmin", "any", "all", "mean"):
        cases[f"{name}_plain"] = (lambda f: lambda: J(f)(x))(red(name))
        cases[f"{name}_vmap"] = (lambda f: lambda: J(jax.vmap(f, in_axes=1))(x))(red(name))
    for name in ("sum", "max", "min", "mean"):
        cases[f"{name}_grad"] = (lambda f: lambda: J(jax.grad(lambda v: jnp.sum(f(v))))(x))(red(name))
    cases["max_all_grad"] = lambda: J(jax.grad(lambda v: jnp.max(v)))(jnp.ones((3,)))
    cases["lax_reduce_max"] = lambda: J(lambda v: lax.reduce_max(v, (0, 2)))(x)
    i3 = jnp.arange(3)
    cases["pow_int_int"] = lambda: J(lambda a, b: jnp.power(a, b))(i3, i3)
    cases["pow_int_int_broadcast"] = lambda: J(lambda a, b: jnp.power(a, b))(i3[:, None], jnp.arange(2))
    cases["pow_weak_base"] = lambda: J(lambda a, b: jnp.power(a, b))(2, jnp.arange(2))
    cases["pow_static_exponent"] = lambda: J(lambda a: jnp.power(a, 5))(i3)
    return cases


# Recorded from JAX 0.10.2 (str(jax.make_jaxpr(...)) of the same cases).
JAX_TEXTS = {'all_plain': '{ lambda ; a:f32[3,4,5]. let\n'
              '    b:bool[3,4,5] = gt a 0.0:f32[]\n'
              '    c:bool[3,5] = reduce_and[axes=(1,)] b\n'
              '  in (c,) }',
 'all_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:bool[3,4,5] = gt a 0.0:f32[]\n'
             '    c:bool[3,4] = reduce_and[axes=(np.int64(2),)] b\n'
             '    d:bool[4,3] = transpose[permutation=(1, 0)] c\n'
             '  in (d,) }',
 'any_plain': '{ lambda ; a:f32[3,4,5]. let\n'
              '    b:bool[3,4,5] = gt a 0.0:f32[]\n'
              '    c:bool[3,5] = reduce_or[axes=(1,)] b\n'
              '  in (c,) }',
 'any_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:bool[3,4,5] = gt a 0.0:f32[]\n'
             '    c:bool[3,4] = reduce_or[axes=(np.int64(2),)] b\n'
             '    d:bool[4,3] = transpose[permutation=(1, 0)] c\n'
             '  in (d,) }',
 'argmax_plain': '{ lambda ; a:f32[3,4,5]. let\n'
                 '    b:i32[3,5] = argmax[axes=(1,) index_dtype=int32] a\n'
                 '  in (b,) }',
 'argmax_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
                '    b:i32[3,4] = argmax[axes=(np.int64(2),) index_dtype=int32] a\n'
                '    c:i32[4,3] = transpose[permutation=(1, 0)] b\n'
                '  in (c,) }',
 'argmin_plain': '{ lambda ; a:f32[3,4,5]. let\n'
                 '    b:i32[3,5] = argmin[axes=(1,) index_dtype=int32] a\n'
                 '  in (b,) }',
 'argmin_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
                '    b:i32[3,4] = argmin[axes=(np.int64(2),) index_dtype=int32] a\n'
                '    c:i32[4,3] = transpose[permutation=(1, 0)] b\n'
                '  in (c,) }',
 'lax_reduce_max': '{ lambda ; a:f32[3,4,5]. let b:f32[4] = reduce_max[axes=(0, 2)] a in (b,) }',
 'max_all_grad': '{ lambda ; a:f32[3]. let\n'
                 '    b:f32[] = reduce_max[axes=(0,)] a\n'
                 '    c:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] b\n'
                 '    d:bool[3] = eq a c\n'
                 '    e:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
                 '    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e\n'
                 '    g:f32[] = div 1.0:f32[] f\n'
                 '    h:f32[3] = broadcast_in_dim g\n'
                 '    i:f32[3] = mul h e\n'
                 '  in (i,) }',
 'max_grad': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:f32[3,5] = reduce_max[axes=(1,)] a\n'
             '    c:f32[3,1,5] = reshape[dimensions=None new_sizes=(3, 1, 5) sharding=None] b\n'
             '    d:bool[3,4,5] = eq a c\n'
             '    e:f32[3,4,5] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
             '    f:f32[3,5] = reduce_sum[axes=(1,) out_sharding=None] e\n'
             '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n'
             '    g:f32[3,5] = broadcast_in_dim 1.0:f32[]\n'
             '    h:f32[3,5] = div g f\n'
             '    i:f32[3,4,5] = broadcast_in_dim[\n'
             '      broadcast_dimensions=(np.int64(0), np.int64(2))\n'
             '    ] h\n'
             '    j:f32[3,4,5] = mul i e\n'
             '  in (j,) }',
 'max_plain': '{ lambda ; a:f32[3,4,5]. let b:f32[3,5] = reduce_max[axes=(1,)] a in (b,) }',
 'max_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:f32[3,4] = reduce_max[axes=(np.int64(2),)] a\n'
             '    c:f32[4,3] = transpose[permutation=(1, 0)] b\n'
             '  in (c,) }',
 'mean_grad': '{ lambda ; a:f32[3,4,5]. let\n'
              '    b:f32[3,5] = reduce_sum[axes=(1,) out_sharding=None] a\n'
              '    c:f32[3,5] = div b 4.0:f32[]\n'
              '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n'
              '    d:f32[3,5] = broadcast_in_dim 1.0:f32[]\n'
              '    e:f32[3,5] = div d 4.0:f32[]\n'
              '    f:f32[3,4,5] = broadcast_in_dim[\n'
              '      broadcast_dimensions=(np.int64(0), np.int64(2))\n'
              '    ] e\n'
              '  in (f,) }',
 'mean_plain': '{ lambda ; a:f32[3,4,5]. let\n'
               '    b:f32[3,5] = reduce_sum[axes=(1,) out_sharding=None] a\n'
               '    c:f32[3,5] = div b 4.0:f32[]\n'
               '  in (c,) }',
 'mean_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
              '    b:f32[3,4] = reduce_sum[axes=(np.int64(2),) out_sharding=None] a\n'
              '    c:f32[3,4] = div b 5.0:f32[]\n'
              '    d:f32[4,3] = transpose[permutation=(1, 0)] c\n'
              '  in (d,) }',
 'min_grad': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:f32[3,5] = reduce_min[axes=(1,)] a\n'
             '    c:f32[3,1,5] = reshape[dimensions=None new_sizes=(3, 1, 5) sharding=None] b\n'
             '    d:bool[3,4,5] = eq a c\n'
             '    e:f32[3,4,5] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
             '    f:f32[3,5] = reduce_sum[axes=(1,) out_sharding=None] e\n'
             '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n'
             '    g:f32[3,5] = broadcast_in_dim 1.0:f32[]\n'
             '    h:f32[3,5] = div g f\n'
             '    i:f32[3,4,5] = broadcast_in_dim[\n'
             '      broadcast_dimensions=(np.int64(0), np.int64(2))\n'
             '    ] h\n'
             '    j:f32[3,4,5] = mul i e\n'
             '  in (j,) }',
 'min_plain': '{ lambda ; a:f32[3,4,5]. let b:f32[3,5] = reduce_min[axes=(1,)] a in (b,) }',
 'min_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:f32[3,4] = reduce_min[axes=(np.int64(2),)] a\n'
             '    c:f32[4,3] = transpose[permutation=(1, 0)] b\n'
             '  in (c,) }',
 'pow_int_int': 'let _where = { lambda ; a:i32[3] b:i32[3] c:i32[3]. let\n'
                '    d:bool[3] = ne a 0:i32[]\n'
                '    e:i32[3] = select_n d c b\n'
                '  in (e,) } in\n'
                '{ lambda ; f:i32[3] g:i32[3]. let\n'
                '    h:bool[3] = eq f 0:i32[]\n'
                '    i:bool[3] = ne g 0:i32[]\n'
                '    j:bool[3] = and h i\n'
                '    k:i32[3] = jit[\n'
                '      name=_where\n'
                '      jaxpr={ lambda ; j:bool[3] l:i32[] m:i32[]. let\n'
                '          n:i32[3] = broadcast_in_dim l\n'
                '          o:i32[3] = broadcast_in_dim m\n'
                '          k:i32[3] = select_n j o n\n'
                '        in (k,) }\n'
                '    ] j 0:i32[] 1:i32[]\n'
                '    p:i32[3] = and g 1:i32[]\n'
                '    q:i32[3] = mul k f\n'
                '    r:i32[3] = jit[name=_where jaxpr=_where] p q k\n'
                '    s:i32[3] = mul f f\n'
                '    t:i32[3] = shift_right_logical g 1:i32[]\n'
                '    u:i32[3] = and t 1:i32[]\n'
                '    v:i32[3] = mul r s\n'
                '    w:i32[3] = jit[name=_where jaxpr=_where] u v r\n'
                '    x:i32[3] = mul s s\n'
                '    y:i32[3] = shift_right_logical t 1:i32[]\n'
                '    z:i32[3] = and y 1:i32[]\n'
                '    ba:i32[3] = mul w x\n'
                '    bb:i32[3] = jit[name=_where jaxpr=_where] z ba w\n'
                '    bc:i32[3] = mul x x\n'
                '    bd:i32[3] = shift_right_logical y 1:i32[]\n'
                '    be:i32[3] = and bd 1:i32[]\n'
                '    bf:i32[3] = mul bb bc\n'
                '    bg:i32[3] = jit[name=_where jaxpr=_where] be bf bb\n'
                '    bh:i32[3] = mul bc bc\n'
                '    bi:i32[3] = shift_right_logical bd 1:i32[]\n'
                '    bj:i32[3] = and bi 1:i32[]\n'
                '    bk:i32[3] = mul bg bh\n'
                '    bl:i32[3] = jit[name=_where jaxpr=_where] bj bk bg\n'
                '    bm:i32[3] = mul bh bh\n'
                '    bn:i32[3] = shift_right_logical bi 1:i32[]\n'
                '    bo:i32[3] = and bn 1:i32[]\n'
                '    bp:i32[3] = mul bl bm\n'
                '    bq:i32[3] = jit[name=_where jaxpr=_where] bo bp bl\n'
                '    _:i32[3] = mul bm bm\n'
                '    _:i32[3] = shift_right_logical bn 1:i32[]\n'
                '  in (bq,) }',
 'pow_int_int_broadcast': 'let _where = { lambda ; a:i32[1,2] b:i32[3,2] c:i32[3,2]. let\n'
                          '    d:bool[1,2] = ne a 0:i32[]\n'
                          '    e:bool[3,2] = broadcast_in_dim[broadcast_dimensions=(0, 1)] d\n'
                          '    f:i32[3,2] = select_n e c b\n'
                          '  in (f,) } in\n'
                          '{ lambda ; g:i32[3,1] h:i32[2]. let\n'
                          '    i:i32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] h\n'
                          '    j:bool[3,1] = eq g 0:i32[]\n'
                          '    k:bool[1,2] = ne i 0:i32[]\n'
                          '    l:bool[3,2] = and j k\n'
                          '    m:i32[3,2] = jit[\n'
                          '      name=_where\n'
                          '      jaxpr={ lambda ; l:bool[3,2] n:i32[] o:i32[]. let\n'
                          '          p:i32[3,2] = broadcast_in_dim n\n'
                          '          q:i32[3,2] = broadcast_in_dim o\n'
                          '          m:i32[3,2] = select_n l q p\n'
                          '        in (m,) }\n'
                          '    ] l 0:i32[] 1:i32[]\n'
                          '    r:i32[1,2] = and i 1:i32[]\n'
                          '    s:i32[3,2] = mul m g\n'
                          '    t:i32[3,2] = jit[name=_where jaxpr=_where] r s m\n'
                          '    u:i32[3,1] = mul g g\n'
                          '    v:i32[1,2] = shift_right_logical i 1:i32[]\n'
                          '    w:i32[1,2] = and v 1:i32[]\n'
                          '    x:i32[3,2] = mul t u\n'
                          '    y:i32[3,2] = jit[name=_where jaxpr=_where] w x t\n'
                          '    z:i32[3,1] = mul u u\n'
                          '    ba:i32[1,2] = shift_right_logical v 1:i32[]\n'
                          '    bb:i32[1,2] = and ba 1:i32[]\n'
                          '    bc:i32[3,2] = mul y z\n'
                          '    bd:i32[3,2] = jit[name=_where jaxpr=_where] bb bc y\n'
                          '    be:i32[3,1] = mul z z\n'
                          '    bf:i32[1,2] = shift_right_logical ba 1:i32[]\n'
                          '    bg:i32[1,2] = and bf 1:i32[]\n'
                          '    bh:i32[3,2] = mul bd be\n'
                          '    bi:i32[3,2] = jit[name=_where jaxpr=_where] bg bh bd\n'
                          '    bj:i32[3,1] = mul be be\n'
                          '    bk:i32[1,2] = shift_right_logical bf 1:i32[]\n'
                          '    bl:i32[1,2] = and bk 1:i32[]\n'
                          '    bm:i32[3,2] = mul bi bj\n'
                          '    bn:i32[3,2] = jit[name=_where jaxpr=_where] bl bm bi\n'
                          '    bo:i32[3,1] = mul bj bj\n'
                          '    bp:i32[1,2] = shift_right_logical bk 1:i32[]\n'
                          '    bq:i32[1,2] = and bp 1:i32[]\n'
                          '    br:i32[3,2] = mul bn bo\n'
                          '    bs:i32[3,2] = jit[name=_where jaxpr=_where] bq br bn\n'
                          '    _:i32[3,1] = mul bo bo\n'
                          '    _:i32[1,2] = shift_right_logical bp 1:i32[]\n'
                          '  in (bs,) }',
 'pow_static_exponent': '{ lambda ; a:i32[3]. let b:i32[3] = integer_pow[y=5] a in (b,) }',
 'pow_weak_base': 'let _where = { lambda ; a:i32[2] b:i32[2] c:i32[2]. let\n'
                  '    d:bool[2] = ne a 0:i32[]\n'
                  '    e:i32[2] = select_n d c b\n'
                  '  in (e,) } in\n'
                  '{ lambda ; f:i32[] g:i32[2]. let\n'
                  '    h:i32[] = convert_element_type[new_dtype=int32 weak_type=False] f\n'
                  '    i:bool[] = eq h 0:i32[]\n'
                  '    j:bool[2] = ne g 0:i32[]\n'
                  '    k:bool[2] = and i j\n'
                  '    l:i32[2] = jit[\n'
                  '      name=_where\n'
                  '      jaxpr={ lambda ; k:bool[2] m:i32[] n:i32[]. let\n'
                  '          o:i32[2] = broadcast_in_dim m\n'
                  '          p:i32[2] = broadcast_in_dim n\n'
                  '          l:i32[2] = select_n k p o\n'
                  '        in (l,) }\n'
                  '    ] k 0:i32[] 1:i32[]\n'
                  '    q:i32[2] = and g 1:i32[]\n'
                  '    r:i32[2] = mul l h\n'
                  '    s:i32[2] = jit[name=_where jaxpr=_where] q r l\n'
                  '    t:i32[] = mul h h\n'
                  '    u:i32[2] = shift_right_logical g 1:i32[]\n'
                  '    v:i32[2] = and u 1:i32[]\n'
                  '    w:i32[2] = mul s t\n'
                  '    x:i32[2] = jit[name=_where jaxpr=_where] v w s\n'
                  '    y:i32[] = mul t t\n'
                  '    z:i32[2] = shift_right_logical u 1:i32[]\n'
                  '    ba:i32[2] = and z 1:i32[]\n'
                  '    bb:i32[2] = mul x y\n'
                  '    bc:i32[2] = jit[name=_where jaxpr=_where] ba bb x\n'
                  '    bd:i32[] = mul y y\n'
                  '    be:i32[2] = shift_right_logical z 1:i32[]\n'
                  '    bf:i32[2] = and be 1:i32[]\n'
                  '    bg:i32[2] = mul bc bd\n'
                  '    bh:i32[2] = jit[name=_where jaxpr=_where] bf bg bc\n'
                  '    bi:i32[] = mul bd bd\n'
                  '    bj:i32[2] = shift_right_logical be 1:i32[]\n'
                  '    bk:i32[2] = and bj 1:i32[]\n'
                  '    bl:i32[2] = mul bh bi\n'
                  '    bm:i32[2] = jit[name=_where jaxpr=_where] bk bl bh\n'
                  '    bn:i32[] = mul bi bi\n'
                  '    bo:i32[2] = shift_right_logical bj 1:i32[]\n'
                  '    bp:i32[2] = and bo 1:i32[]\n'
                  '    bq:i32[2] = mul bm bn\n'
                  '    br:i32[2] = jit[name=_where jaxpr=_where] bp bq bm\n'
                  '    _:i32[] = mul bn bn\n'
                  '    _:i32[2] = shift_right_logical bo 1:i32[]\n'
                  '  in (br,) }',
 'prod_plain': '{ lambda ; a:f32[3,4,5]. let b:f32[3,5] = reduce_prod[axes=(1,)] a in (b,) }',
 'prod_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
              '    b:f32[3,4] = reduce_prod[axes=(np.int64(2),)] a\n'
              '    c:f32[4,3] = transpose[permutation=(1, 0)] b\n'
              '  in (c,) }',
 'sum_grad': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:f32[3,5] = reduce_sum[axes=(1,) out_sharding=None] a\n'
             '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n'
             '    c:f32[3,5] = broadcast_in_dim 1.0:f32[]\n'
             '    d:f32[3,4,5] = broadcast_in_dim[\n'
             '      broadcast_dimensions=(np.int64(0), np.int64(2))\n'
             '    ] c\n'
             '  in (d,) }',
 'sum_plain': '{ lambda ; a:f32[3,4,5]. let\n'
              '    b:f32[3,5] = reduce_sum[axes=(1,) out_sharding=None] a\n'
              '  in (b,) }',
 'sum_vmap': '{ lambda ; a:f32[3,4,5]. let\n'
             '    b:f32[3,4] = reduce_sum[axes=(np.int64(2),) out_sharding=None] a\n'
             '    c:f32[4,3] = transpose[permutation=(1, 0)] b\n'
             '  in (c,) }'}


@pytest.mark.parametrize("name", sorted(JAX_TEXTS))
def test_jaxpr_text_as_jax(name):
    assert str(_cases(jax, jnp, lax)[name]()) == JAX_TEXTS[name]


def test_integer_power_values_as_jax():
    # JAX's _pow_int_int reads only the exponent's low 6 bits and gives pow(0, n) = 0 for n != 0 (negative n too)
    r = np.arange(-2, 3)
    assert jnp.power(jnp.array(r), jnp.array(r)).tolist() == [0, -1, 1, 1, 4]
    assert jnp.power(0, jnp.arange(-2, 3)).tolist() == [0, 0, 1, 0, 0]
    assert jnp.power(2, jnp.arange(-2, 3)).tolist() == [0, 0, 1, 2, 4]
    assert jnp.power(jnp.arange(3)[:, None], jnp.arange(2)).tolist() == [[1, 0], [1, 1], [1, 2]]
    out = jnp.power(jnp.array([3], jnp.int8), jnp.array([200], jnp.uint8))
    assert out.dtype == np.int16 and out.tolist() == [6561]      # 3 ** (200 & 63)
    assert jnp.power(jnp.array([3], jnp.uint8), jnp.array([130], jnp.uint8)).tolist() == [9]
    assert jnp.power(jnp.arange(5), jnp.arange(5)).tolist() == [1, 1, 4, 27, 256]
    assert jax.jit(jnp.power)(jnp.arange(-3, 3), jnp.full(6, 3)).tolist() == [-27, -8, -1, 0, 1, 8]


def test_vmapped_reduction_values():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    for name in ("sum", "max", "min", "prod", "argmax", "argmin", "mean"):
        got = jax.vmap(lambda v: getattr(jnp, name)(v, axis=1), in_axes=1)(jnp.asarray(x))
        want = getattr(np, name)(np.moveaxis(x, 1, 0), axis=2)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    g = jax.grad(lambda v: jnp.sum(jnp.max(v, axis=1)))(jnp.asarray(np.array([[1., 3., 3.], [2., 0., 1.]])))
    np.testing.assert_allclose(np.asarray(g), [[0, .5, .5], [1, 0, 0]])
