"""Issue 18, the eleventh pass on JAX 0.10.2's printed forms: ``reshape``'s ``dimensions`` (one equation that
transposes, then reshapes, as JAX's ``lax.reshape(x, new_sizes, dimensions)`` and its reduce_prod jvp stage it),
through jvp, transpose and vmap. Texts and values recorded from JAX 0.10.2 by running the ``def``s below under
JAX (each returns name -> thunk; a thunk's ``str`` is the recorded text)."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def reshape_texts(jax, jnp, lax):
    x = jnp.ones((2, 3, 4))
    c = {}
    c["lax_dims"] = lambda: jax.make_jaxpr(lambda x: lax.reshape(x, (4, 6), (2, 0, 1)))(x)
    c["lax_identity_dims"] = lambda: jax.make_jaxpr(lambda x: lax.reshape(x, (2, 3, 4), (0, 1, 2)))(x)
    c["lax_scalar"] = lambda: jax.make_jaxpr(lambda x: lax.reshape(x, ()))(1.)
    c["vmap_dims"] = lambda: jax.make_jaxpr(jax.vmap(lambda x: lax.reshape(x, (4, 3), (1, 0))))(x)
    c["grad_dims"] = lambda: jax.make_jaxpr(jax.grad(lambda x: lax.reshape(x, (4, 3), (1, 0)).sum()))(x[0])
    c["jvp_dims"] = lambda: jax.make_jaxpr(lambda x, t: jax.jvp(lambda x: lax.reshape(x, (4, 3), (1, 0)), (x,), (t,)))(
        x[0], x[0])
    c["prod_grad_axis1"] = lambda: jax.make_jaxpr(jax.grad(lambda x: jnp.prod(x, axis=1).sum()))(jnp.ones((2, 3)))
    c["prod_grad_last_keepdims"] = lambda: jax.make_jaxpr(
        jax.grad(lambda x: jnp.prod(x, axis=-1, keepdims=True).sum()))(jnp.ones((3, 2)))
    c["prod_grad_axes02"] = lambda: jax.make_jaxpr(jax.grad(lambda x: jnp.prod(x, axis=(0, 2)).sum()))(
        jnp.ones((2, 2, 1)))
    c["prod_jvp_axis1"] = lambda: jax.make_jaxpr(lambda x, t: jax.jvp(lambda x: jnp.prod(x, axis=1), (x,), (t,)))(
        jnp.ones((2, 2)), jnp.ones((2, 2)))
    c["bad_dims"] = lambda: lax.reshape(x, (24,), (0, 1, 1))
    c["bad_dims_traced"] = lambda: jax.make_jaxpr(lambda x: lax.reshape(x, (24,), (2, 1)))(x)
    return c


def reshape_values(jax, jnp, lax):
    x = jnp.arange(1., 25.).reshape(2, 3, 4)
    out = {}
    out["eager"] = lax.reshape(x, (4, 6), (2, 0, 1)).tolist()
    out["jit"] = jax.jit(lambda x: lax.reshape(x, (3, 8), (1, 2, 0)))(x).tolist()
    out["vmap_axis2"] = jax.vmap(lambda x: lax.reshape(x, (6,), (1, 0)), in_axes=2)(x).tolist()
    out["grad"] = jax.grad(lambda x: (lax.reshape(x, (4, 6), (2, 0, 1)) * jnp.arange(24.).reshape(4, 6)).sum())(
        x).tolist()
    out["jvp"] = jax.jvp(lambda x: lax.reshape(x, (12, 2), (1, 2, 0)), (x,), (x * 2,))[1].tolist()
    xc = x[0] + 1j * x[1]
    out["complex"] = [[[v.real, v.imag] for v in row] for row in lax.reshape(xc, (2, 6), (1, 0)).tolist()]
    out["prod_grad_axis1"] = jax.grad(lambda x: jnp.prod(x, axis=1).sum())(x / 4).tolist()
    out["prod_grad_axes02_jit"] = jax.jit(jax.grad(lambda x: jnp.prod(x, axis=(0, 2)).sum()))(x / 8).tolist()
    return out


RESHAPE_TEXTS = {'bad_dims': 'TypeError: reshape dimensions must be a permutation of operand dimensions, got dimensions (0, 1, 1) for '
             'shape (2, 3, 4).',
 'bad_dims_traced': 'TypeError: reshape dimensions must be a permutation of operand dimensions, got dimensions (2, 1) '
                    'for shape (2, 3, 4).',
 'grad_dims': '{ lambda ; a:f32[3,4]. let\n'
              '    b:f32[4,3] = reshape[dimensions=(1, 0) new_sizes=(4, 3) sharding=None] a\n'
              '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n'
              '    c:f32[4,3] = broadcast_in_dim 1.0:f32[]\n'
              '    d:f32[3,4] = transpose[permutation=(1, 0)] c\n'
              '  in (d,) }',
 'jvp_dims': '{ lambda ; a:f32[3,4] b:f32[3,4]. let\n'
             '    c:f32[4,3] = reshape[dimensions=(1, 0) new_sizes=(4, 3) sharding=None] a\n'
             '    d:f32[4,3] = reshape[dimensions=(1, 0) new_sizes=(4, 3) sharding=None] b\n'
             '  in (c, d) }',
 'lax_dims': '{ lambda ; a:f32[2,3,4]. let\n'
             '    b:f32[4,6] = reshape[dimensions=(2, 0, 1) new_sizes=(4, 6) sharding=None] a\n'
             '  in (b,) }',
 'lax_identity_dims': '{ lambda ; a:f32[2,3,4]. let  in (a,) }',
 'lax_scalar': '{ lambda ; a:f32[]. let\n'
               '    b:f32[] = reshape[dimensions=None new_sizes=() sharding=None] a\n'
               '  in (b,) }',
 'prod_grad_axes02': '{ lambda ; a:f32[2,2,1]. let\n'
                     '    b:f32[2,2] = reshape[dimensions=(0, 2, 1) new_sizes=(2, 2) sharding=None] a\n'
                     '    c:f32[1,2] = slice[limit_indices=(1, 2) start_indices=(0, 0) strides=(1, 1)] b\n'
                     '    d:f32[1,2] = slice[limit_indices=(2, 2) start_indices=(1, 0) strides=(1, 1)] b\n'
                     '    e:f32[1,2] = mul c d\n'
                     '    f:f32[2] = squeeze[dimensions=(0,)] e\n'
                     '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f\n'
                     '    g:f32[2] = broadcast_in_dim 1.0:f32[]\n'
                     '    h:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] g\n'
                     '    i:f32[1,2] = mul c h\n'
                     '    j:f32[1,2] = mul h d\n'
                     '    k:f32[2,2] = pad[padding_config=((1, np.int64(0), 0), (0, np.int64(0), 0))] i\n'
                     '      0.0:f32[]\n'
                     '    l:f32[2,2] = pad[padding_config=((0, np.int64(1), 0), (0, np.int64(0), 0))] j\n'
                     '      0.0:f32[]\n'
                     '    m:f32[2,2] = add_any k l\n'
                     '    n:f32[2,1,2] = reshape[dimensions=None new_sizes=(2, 1, 2) sharding=None] m\n'
                     '    o:f32[2,2,1] = transpose[permutation=(0, 2, 1)] n\n'
                     '  in (o,) }',
 'prod_grad_axis1': '{ lambda ; a:f32[2,3]. let\n'
                    '    b:f32[3,2] = reshape[dimensions=(1, 0) new_sizes=(3, 2) sharding=None] a\n'
                    '    c:f32[2,2] = slice[limit_indices=(2, 2) start_indices=(0, 0) strides=(1, 1)] b\n'
                    '    d:f32[1,2] = slice[limit_indices=(3, 2) start_indices=(2, 0) strides=(1, 1)] b\n'
                    '    e:f32[2,2] = pad[padding_config=((0, 1, 0), (0, 0, 0))] d 1.0:f32[]\n'
                    '    f:f32[2,2] = mul c e\n'
                    '    g:f32[1,2] = slice[limit_indices=(1, 2) start_indices=(0, 0) strides=(1, 1)] f\n'
                    '    h:f32[1,2] = slice[limit_indices=(2, 2) start_indices=(1, 0) strides=(1, 1)] f\n'
                    '    i:f32[1,2] = mul g h\n'
                    '    j:f32[2] = squeeze[dimensions=(0,)] i\n'
                    '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] j\n'
                    '    k:f32[2] = broadcast_in_dim 1.0:f32[]\n'
                    '    l:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] k\n'
                    '    m:f32[1,2] = mul g l\n'
                    '    n:f32[1,2] = mul l h\n'
                    '    o:f32[2,2] = pad[padding_config=((1, np.int64(0), 0), (0, np.int64(0), 0))] m\n'
                    '      0.0:f32[]\n'
                    '    p:f32[2,2] = pad[padding_config=((0, np.int64(1), 0), (0, np.int64(0), 0))] n\n'
                    '      0.0:f32[]\n'
                    '    q:f32[2,2] = add_any o p\n'
                    '    r:f32[2,2] = mul c q\n'
                    '    s:f32[2,2] = mul q e\n'
                    '    t:f32[1,2] = pad[\n'
                    '      padding_config=((np.int64(0), np.int64(-1), np.int64(0)), (np.int64(0), np.int64(0), '
                    'np.int64(0)))\n'
                    '    ] r 0.0:f32[]\n'
                    '    u:f32[1,2] = slice[\n'
                    '      limit_indices=(1, 2)\n'
                    '      start_indices=(np.int64(0), np.int64(0))\n'
                    '      strides=(np.int64(1), np.int64(1))\n'
                    '    ] t\n'
                    '    v:f32[3,2] = pad[padding_config=((2, np.int64(0), 0), (0, np.int64(0), 0))] u\n'
                    '      0.0:f32[]\n'
                    '    w:f32[3,2] = pad[padding_config=((0, np.int64(1), 0), (0, np.int64(0), 0))] s\n'
                    '      0.0:f32[]\n'
                    '    x:f32[3,2] = add_any v w\n'
                    '    y:f32[2,3] = transpose[permutation=(1, 0)] x\n'
                    '  in (y,) }',
 'prod_grad_last_keepdims': '{ lambda ; a:f32[3,2]. let\n'
                            '    b:f32[2,3] = reshape[dimensions=(1, 0) new_sizes=(2, 3) sharding=None] a\n'
                            '    c:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] b\n'
                            '    d:f32[1,3] = slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] b\n'
                            '    e:f32[1,3] = mul c d\n'
                            '    f:f32[3] = squeeze[dimensions=(0,)] e\n'
                            '    g:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f\n'
                            '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] g\n'
                            '    h:f32[3,1] = broadcast_in_dim 1.0:f32[]\n'
                            '    i:f32[3] = reduce_sum[axes=(1,) out_sharding=None] h\n'
                            '    j:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] i\n'
                            '    k:f32[1,3] = mul c j\n'
                            '    l:f32[1,3] = mul j d\n'
                            '    m:f32[2,3] = pad[padding_config=((1, np.int64(0), 0), (0, np.int64(0), 0))] k\n'
                            '      0.0:f32[]\n'
                            '    n:f32[2,3] = pad[padding_config=((0, np.int64(1), 0), (0, np.int64(0), 0))] l\n'
                            '      0.0:f32[]\n'
                            '    o:f32[2,3] = add_any m n\n'
                            '    p:f32[3,2] = transpose[permutation=(1, 0)] o\n'
                            '  in (p,) }',
 'prod_jvp_axis1': '{ lambda ; a:f32[2,2] b:f32[2,2]. let\n'
                   '    c:f32[2,2] = reshape[dimensions=(1, 0) new_sizes=(2, 2) sharding=None] a\n'
                   '    d:f32[2,2] = reshape[dimensions=(1, 0) new_sizes=(2, 2) sharding=None] b\n'
                   '    e:f32[1,2] = slice[limit_indices=(1, 2) start_indices=(0, 0) strides=(1, 1)] c\n'
                   '    f:f32[1,2] = slice[limit_indices=(1, 2) start_indices=(0, 0) strides=(1, 1)] d\n'
                   '    g:f32[1,2] = slice[limit_indices=(2, 2) start_indices=(1, 0) strides=(1, 1)] c\n'
                   '    h:f32[1,2] = slice[limit_indices=(2, 2) start_indices=(1, 0) strides=(1, 1)] d\n'
                   '    i:f32[1,2] = mul e g\n'
                   '    j:f32[1,2] = mul f g\n'
                   '    k:f32[1,2] = mul e h\n'
                   '    l:f32[1,2] = add_any j k\n'
                   '    m:f32[2] = squeeze[dimensions=(0,)] i\n'
                   '    n:f32[2] = squeeze[dimensions=(0,)] l\n'
                   '  in (m, n) }',
 'vmap_dims': '{ lambda ; a:f32[2,3,4]. let\n'
              '    b:f32[2,4,3] = reshape[\n'
              '      dimensions=(0, 2, 1)\n'
              '      new_sizes=(2, 4, 3)\n'
              '      sharding=None\n'
              '    ] a\n'
              '  in (b,) }'}
RESHAPE_VALUES = {'complex': [[[1.0, 13.0], [5.0, 17.0], [9.0, 21.0], [2.0, 14.0], [6.0, 18.0], [10.0, 22.0]],
             [[3.0, 15.0], [7.0, 19.0], [11.0, 23.0], [4.0, 16.0], [8.0, 20.0], [12.0, 24.0]]],
 'eager': [[1.0, 5.0, 9.0, 13.0, 17.0, 21.0],
           [2.0, 6.0, 10.0, 14.0, 18.0, 22.0],
           [3.0, 7.0, 11.0, 15.0, 19.0, 23.0],
           [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]],
 'grad': [[[0.0, 6.0, 12.0, 18.0], [1.0, 7.0, 13.0, 19.0], [2.0, 8.0, 14.0, 20.0]],
          [[3.0, 9.0, 15.0, 21.0], [4.0, 10.0, 16.0, 22.0], [5.0, 11.0, 17.0, 23.0]]],
 'jit': [[1.0, 13.0, 2.0, 14.0, 3.0, 15.0, 4.0, 16.0],
         [5.0, 17.0, 6.0, 18.0, 7.0, 19.0, 8.0, 20.0],
         [9.0, 21.0, 10.0, 22.0, 11.0, 23.0, 12.0, 24.0]],
 'jvp': [[2.0, 26.0],
         [4.0, 28.0],
         [6.0, 30.0],
         [8.0, 32.0],
         [10.0, 34.0],
         [12.0, 36.0],
         [14.0, 38.0],
         [16.0, 40.0],
         [18.0, 42.0],
         [20.0, 44.0],
         [22.0, 46.0],
         [24.0, 48.0]],
 'prod_grad_axes02_jit': [[[0.4998779296875, 0.24993896484375, 0.1666259765625, 0.124969482421875],
                           [18.63006591796875, 15.525054931640625, 13.30718994140625, 11.643791198730469],
                           [160.51849365234375, 144.46664428710938, 131.33331298828125, 120.38887023925781]],
                          [[0.0384521484375, 0.03570556640625, 0.0333251953125, 0.03124237060546875],
                           [5.47943115234375, 5.175018310546875, 4.90264892578125, 4.6575164794921875],
                           [68.79364013671875, 65.66665649414062, 62.81158447265625, 60.194435119628906]]],
 'prod_grad_axis1': [[[2.8125, 3.75, 4.8125, 6.0], [0.5625, 1.25, 2.0625, 3.0], [0.3125, 0.75, 1.3125, 2.0]],
                     [[22.3125, 24.75, 27.3125, 30.0],
                      [17.0625, 19.25, 21.5625, 24.0],
                      [13.8125, 15.75, 17.8125, 20.0]]],
 'vmap_axis2': [[1.0, 13.0, 5.0, 17.0, 9.0, 21.0],
                [2.0, 14.0, 6.0, 18.0, 10.0, 22.0],
                [3.0, 15.0, 7.0, 19.0, 11.0, 23.0],
                [4.0, 16.0, 8.0, 20.0, 12.0, 24.0]]}


@pytest.mark.parametrize("name", sorted(RESHAPE_TEXTS))
def test_reshape_text_as_jax(name):
    got = reshape_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == RESHAPE_TEXTS[name]


def test_reshape_values_as_jax():
    got = reshape_values(jax, jnp, lax)
    assert sorted(got) == sorted(RESHAPE_VALUES)
    for k, want in RESHAPE_VALUES.items():
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=1e-6, err_msg=k)


def test_reshape_dims_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    for perm in [(3, 1, 0, 2), (0, 2, 1, 3), (1, 0, 3, 2)]:
        want = x.transpose(perm).reshape(-1, x.shape[perm[-1]])
        np.testing.assert_array_equal(np.asarray(lax.reshape(x, want.shape, perm)), want)
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: lax.reshape(x, want.shape, perm))(x)), want)


# ---- an empty ``jnp.take`` / ``jnp.where``: JAX's ``_where`` returns ``x`` when there is nothing to select ----

def empty_texts(jax, jnp, lax):
    x = jnp.ones((3, 4))
    none = jnp.zeros((0,), jnp.int32)
    c = {}
    c["take_empty_index"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i))(x, none)
    c["take_empty_index_axis1"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i, axis=1))(x, none)
    c["take_from_empty_axis"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i, axis=1))(jnp.ones((3, 0)), none)
    c["take_wrap_empty"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i, mode="wrap"))(jnp.ones((0,)), none)
    c["take_nonempty_from_empty"] = lambda: jnp.take(jnp.ones((0, 4)), jnp.array([0, 1]), axis=0)
    c["where_empty"] = lambda: jax.make_jaxpr(lambda c, x, y: jnp.where(c, x, y))(
        jnp.ones((0, 3), bool), jnp.ones(3), 1.)
    c["where_empty_scalar_pred"] = lambda: jax.make_jaxpr(lambda c, x, y: jnp.where(c, x, y))(
        True, jnp.ones((0, 3)), 1.)
    c["take_empty_value"] = lambda: repr(jnp.take(x, none, axis=1))
    return c


EMPTY_TEXTS = {'take_empty_index': '{ lambda ; a:f32[3,4] b:i32[0]. let\n'
                     '    c:f32[0] = jit[\n'
                     '      name=_take\n'
                     '      jaxpr={ lambda ; a:f32[3,4] b:i32[0]. let\n'
                     '          d:f32[12] = reshape[dimensions=None new_sizes=(12,) sharding=None] a\n'
                     '          e:bool[0] = lt b 0:i32[]\n'
                     '          f:i32[0] = add b 12:i32[]\n'
                     '          g:i32[0] = jit[\n'
                     '            name=_where\n'
                     '            jaxpr={ lambda ; e:bool[0] f:i32[0] b:i32[0]. let  in (f,) }\n'
                     '          ] e f b\n'
                     '          c:f32[0] = broadcast_in_dim 0.0:f32[]\n'
                     '        in (c,) }\n'
                     '    ] a b\n'
                     '  in (c,) }',
 'take_empty_index_axis1': '{ lambda ; a:f32[3,4] b:i32[0]. let\n'
                           '    c:f32[3,0] = jit[\n'
                           '      name=_take\n'
                           '      jaxpr={ lambda ; a:f32[3,4] b:i32[0]. let\n'
                           '          d:bool[0] = lt b 0:i32[]\n'
                           '          e:i32[0] = add b 4:i32[]\n'
                           '          f:i32[0] = jit[\n'
                           '            name=_where\n'
                           '            jaxpr={ lambda ; d:bool[0] e:i32[0] b:i32[0]. let  in (e,) }\n'
                           '          ] d e b\n'
                           '          c:f32[3,0] = broadcast_in_dim 0.0:f32[]\n'
                           '        in (c,) }\n'
                           '    ] a b\n'
                           '  in (c,) }',
 'take_empty_value': 'Array([], shape=(3, 0), dtype=float32)',
 'take_from_empty_axis': '{ lambda ; a:f32[3,0] b:i32[0]. let\n'
                         '    c:f32[3,0] = jit[\n'
                         '      name=_take\n'
                         '      jaxpr={ lambda ; a:f32[3,0] b:i32[0]. let\n'
                         '          d:bool[0] = lt b 0:i32[]\n'
                         '          e:i32[0] = add b 0:i32[]\n'
                         '          f:i32[0] = jit[\n'
                         '            name=_where\n'
                         '            jaxpr={ lambda ; d:bool[0] e:i32[0] b:i32[0]. let  in (e,) }\n'
                         '          ] d e b\n'
                         '        in (a,) }\n'
                         '    ] a b\n'
                         '  in (c,) }',
 'take_nonempty_from_empty': 'IndexError: Cannot do a non-empty jnp.take() from an empty axis.',
 'take_wrap_empty': '{ lambda ; a:f32[0] b:i32[0]. let\n'
                    '    c:f32[0] = jit[\n'
                    '      name=_take\n'
                    '      jaxpr={ lambda ; a:f32[0] b:i32[0]. let\n'
                    '          d:i32[0] = jit[\n'
                    '            name=remainder\n'
                    '            jaxpr={ lambda ; b:i32[0] e:i32[]. let\n'
                    '                f:bool[] = eq e 0:i32[]\n'
                    '                g:i32[] = jit[\n'
                    '                  name=_where\n'
                    '                  jaxpr={ lambda ; f:bool[] h:i32[] e:i32[]. let\n'
                    '                      g:i32[] = select_n f e h\n'
                    '                    in (g,) }\n'
                    '                ] f 1:i32[] e\n'
                    '                i:i32[0] = rem b g\n'
                    '                j:bool[0] = ne i 0:i32[]\n'
                    '                k:bool[0] = lt i 0:i32[]\n'
                    '                l:bool[] = lt g 0:i32[]\n'
                    '                m:bool[0] = ne k l\n'
                    '                n:bool[0] = and m j\n'
                    '                o:i32[0] = add i g\n'
                    '                d:i32[0] = select_n n i o\n'
                    '              in (d,) }\n'
                    '          ] b 0:i32[]\n'
                    '        in (a,) }\n'
                    '    ] a b\n'
                    '  in (c,) }',
 'where_empty': '{ lambda ; a:bool[0,3] b:f32[3] c:f32[]. let\n'
                '    d:f32[0,3] = jit[\n'
                '      name=_where\n'
                '      jaxpr={ lambda ; a:bool[0,3] b:f32[3] c:f32[]. let\n'
                '          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
                '          d:f32[0,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n'
                '          f:f32[0,3] = broadcast_in_dim e\n'
                '        in (d,) }\n'
                '    ] a b c\n'
                '  in (d,) }',
 'where_empty_scalar_pred': '{ lambda ; a:bool[] b:f32[0,3] c:f32[]. let\n'
                            '    d:f32[0,3] = jit[\n'
                            '      name=_where\n'
                            '      jaxpr={ lambda ; a:bool[] b:f32[0,3] c:f32[]. let\n'
                            '          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
                            '          f:f32[0,3] = broadcast_in_dim e\n'
                            '        in (b,) }\n'
                            '    ] a b c\n'
                            '  in (d,) }'}


@pytest.mark.parametrize("name", sorted(EMPTY_TEXTS))
def test_empty_take_text_as_jax(name):
    got = empty_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == EMPTY_TEXTS[name]


# ---- a ref reached by both a while_loop's cond and its body: JAX's eager loop is a jit of ``while`` whose
# arguments hold the ref twice (cond consts, then body consts), its aliasing ValueError; under jit it runs ----

def ref_while_texts(jax, jnp, lax):
    def loop(r, s=None):
        if s is None:
            return lambda a: lax.while_loop(lambda i: i < r[...], lambda i: i + r[...], a)
        return lambda a: lax.while_loop(lambda i: (i < r[...]) & (s[0] < 1), lambda i: i + r[...] + s[1], a)
    c = {}
    c["eager"] = lambda: loop(jax.new_ref(jnp.array(3.)))(0.)
    c["eager_int"] = lambda: loop(jax.new_ref(jnp.array(3)))(0)
    c["eager_two_refs"] = lambda: loop(jax.new_ref(jnp.array(3.)), jax.new_ref(jnp.zeros(2)))(0.)
    c["vmap"] = lambda: jax.vmap(loop(jax.new_ref(jnp.array(3.))))(jnp.zeros(2))
    c["jvp"] = lambda: jax.jvp(loop(jax.new_ref(jnp.array(3.))), (0.,), (1.,))

    def cond_writes(a):
        r = jax.new_ref(jnp.zeros(2))

        def cond(i):
            r[0] = r[0] + 1.
            return i < 3.
        return lax.while_loop(cond, lambda i: i + 1. + r[1], a)
    c["cond_writes_body_reads"] = lambda: cond_writes(0.)
    c["jit"] = lambda: jax.jit(loop(jax.new_ref(jnp.array(3.))))(0.)
    c["jit_two_refs"] = lambda: jax.jit(loop(jax.new_ref(jnp.array(3.)), jax.new_ref(jnp.zeros(2))))(1.)
    r = jax.new_ref(jnp.array(2.))
    c["cond_only"] = lambda: lax.while_loop(lambda i: i < r[...], lambda i: i + 1., 0.)
    c["body_only"] = lambda: lax.while_loop(lambda i: i < 5., lambda i: i + r[...], 0.)
    c["fori"] = lambda: lax.fori_loop(0, 3, lambda i, v: v + r[...], 0.)
    with jax.disable_jit():
        c["disable_jit"] = (lambda v: lambda: v)(loop(r)(0.))
    return c


REF_WHILE_TEXTS = {'body_only': '6.0',
 'cond_only': '2.0',
 'cond_writes_body_reads': 'ValueError: only one reference to a mutable array may be passed as an argument to a '
                           'function, but when tracing while at '
                           '/tmp/jaxvenv/lib/python3.11/site-packages/jax/_src/dispatch.py:101 for jit the mutable '
                           'array reference of type Ref{float32[2]} appeared at both args[0] and args[1].',
 'disable_jit': '2.0',
 'eager': 'ValueError: only one reference to a mutable array may be passed as an argument to a function, but when '
          'tracing while at /tmp/jaxvenv/lib/python3.11/site-packages/jax/_src/dispatch.py:101 for jit the mutable '
          'array reference of type Ref{float32[]} appeared at both args[0] and args[1].',
 'eager_int': 'ValueError: only one reference to a mutable array may be passed as an argument to a function, but when '
              'tracing while at /tmp/jaxvenv/lib/python3.11/site-packages/jax/_src/dispatch.py:101 for jit the mutable '
              'array reference of type Ref{int32[]} appeared at both args[0] and args[1].',
 'eager_two_refs': 'ValueError: only one reference to a mutable array may be passed as an argument to a function, but '
                   'when tracing while at /tmp/jaxvenv/lib/python3.11/site-packages/jax/_src/dispatch.py:101 for jit '
                   'the mutable array reference of type Ref{float32[]} appeared at both args[0] and args[2].',
 'fori': '6.0',
 'jit': '3.0',
 'jit_two_refs': '4.0',
 'jvp': 'ValueError: only one reference to a mutable array may be passed as an argument to a function, but when '
        'tracing while at /tmp/jaxvenv/lib/python3.11/site-packages/jax/_src/dispatch.py:101 for jit the mutable array '
        'reference of type Ref{float32[]} appeared at both args[0] and args[1].',
 'vmap': 'ValueError: only one reference to a mutable array may be passed as an argument to a function, but when '
         'tracing while at /tmp/jaxvenv/lib/python3.11/site-packages/jax/_src/dispatch.py:101 for jit the mutable '
         'array reference of type Ref{float32[]} appeared at both args[0] and args[1].'}


def _normalize_where(text):
    # JAX names its own dispatch.py (where it jits the primitive), cranax its own
    import re
    return re.sub(r"while at \S+:\d+ for jit", "while at <dispatch> for jit", text)


@pytest.mark.parametrize("name", sorted(REF_WHILE_TEXTS))
def test_ref_in_while_cond_and_body_as_jax(name):
    got = ref_while_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert _normalize_where(got) == _normalize_where(REF_WHILE_TEXTS[name])


def test_ref_while_error_names_cranax_dispatch():
    r = jax.new_ref(jnp.array(3.))
    with pytest.raises(ValueError, match=r"while at \S+cranax\S+dispatch\.py:\d+ for jit") as e:
        lax.while_loop(lambda i: i < r[...], lambda i: i + r[...], 0.)
    assert int(jax.freeze(r)) == 3 and "args[0] and args[1]" in str(e.value)


# ---- float0 tangents and cotangents: JAX hands back its ``TypedNdArray`` (a NumPy array subclass) ----

def float0_texts(jax, jnp, lax):
    f0 = jax.dtypes.float0
    z = lambda shape=(): np.zeros(shape, f0)   # noqa: E731
    c = {}
    c["jvp_int"] = lambda: jax.jvp(lambda x: x * 2, (1,), (z(),))
    c["jvp_int_parts"] = lambda: (lambda t: (type(t).__name__, repr(t), str(t), t.dtype, t.shape, t.weak_type,
                                             str(t.aval)))(jax.jvp(lambda x: x * 2, (1,), (z(),))[1])
    c["jvp_int_vector"] = lambda: jax.jvp(lambda x: x * 2, (jnp.arange(3),), (z((3,)),))
    c["jvp_bool_out"] = lambda: jax.jvp(lambda x: (x, x > 0), (1.,), (1.,))[1]
    c["jvp_passthrough"] = lambda: jax.jvp(lambda x, y: (x, y * 2.), (1, 2.), (z(), 1.))[1]
    c["jvp_round_int"] = lambda: jax.jvp(lambda x: jnp.round(x).astype(int), (1.5,), (1.,))
    c["grad_allow_int"] = lambda: repr(jax.grad(lambda x, i: x * i, argnums=1, allow_int=True)(2., 3))
    c["grad_int_array"] = lambda: repr(jax.grad(lambda x: (x * 2.).sum(), allow_int=True)(jnp.arange(3)))
    c["grad_bool"] = lambda: jax.grad(lambda x, b: x * b, argnums=1, allow_int=True)(2., True)
    c["value_and_grad_int"] = lambda: jax.value_and_grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2., 3)
    c["vjp_int"] = lambda: jax.vjp(lambda x, i: x * i, 2., 3)[1](1.)
    c["vjp_int_jit"] = lambda: jax.jit(lambda: jax.vjp(lambda x, i: x * i, 2., 3)[1](1.))()
    c["grad_int_jit"] = lambda: repr(jax.jit(jax.grad(lambda x, i: x * i, argnums=1, allow_int=True))(2., 3))
    c["jit_float0_out"] = lambda: jax.jit(lambda x: (x, np.zeros((2,), f0)))(1.)
    c["linearize_int_out"] = lambda: jax.linearize(lambda x: (x * 2, x > 0), 1.)[1](1.)
    c["vmap_float0"] = lambda: repr(jax.vmap(lambda x: jax.jvp(lambda x: x * 2, (x,), (z(),))[1])(jnp.arange(2)))
    c["repr_wide"] = lambda: repr(jax.jvp(lambda x: x * 2, (jnp.zeros((2, 30), int),), (z((2, 30)),))[1])
    c["repr_empty"] = lambda: repr(jax.jvp(lambda x: x * 2, (jnp.zeros((0, 2), int),), (z((0, 2)),))[1])
    return c


FLOAT0_TEXTS = {'grad_allow_int': "TypedNdArray((b'',), dtype=void)",
 'grad_bool': "(b'',)",
 'grad_int_array': "TypedNdArray([(b'',), (b'',), (b'',)], dtype=void)",
 'grad_int_jit': "TypedNdArray((b'',), dtype=void)",
 'jit_float0_out': "(Array(1., dtype=float32, weak_type=True), TypedNdArray([(b'',), (b'',)], dtype=void))",
 'jvp_bool_out': "(1.0, TypedNdArray((b'',), dtype=void))",
 'jvp_int': "(2, TypedNdArray((b'',), dtype=void))",
 'jvp_int_parts': '(\'TypedNdArray\', "TypedNdArray((b\'\',), dtype=void)", "(b\'\',)", dtype([(\'float0\', \'V\')]), '
                  "(), False, 'float0[]')",
 'jvp_int_vector': "(Array([0, 2, 4], dtype=int32), TypedNdArray([(b'',), (b'',), (b'',)], dtype=void))",
 'jvp_passthrough': "(TypedNdArray((b'',), dtype=void), Array(2., dtype=float32, weak_type=True))",
 'jvp_round_int': "(Array(2, dtype=int32), TypedNdArray((b'',), dtype=void))",
 'linearize_int_out': "(Array(2., dtype=float32, weak_type=True), TypedNdArray((b'',), dtype=void))",
 'repr_empty': 'TypedNdArray([], shape=(0, 2), dtype=void)',
 'repr_wide': "TypedNdArray([[(b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',)],\n"
              "              [(b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',), (b'',), (b'',), (b'',), (b'',), (b'',),\n"
              "               (b'',), (b'',)]], dtype=void)",
 'value_and_grad_int': '(Array(6., dtype=float32, weak_type=True), (Array(3., dtype=float32, weak_type=True), '
                       "TypedNdArray((b'',), dtype=void)))",
 'vjp_int': "(Array(3., dtype=float32, weak_type=True), TypedNdArray((b'',), dtype=void))",
 'vjp_int_jit': "(Array(3., dtype=float32, weak_type=True), TypedNdArray((b'',), dtype=void))",
 'vmap_float0': "TypedNdArray([(b'',), (b'',)], dtype=void)"}


@pytest.mark.parametrize("name", sorted(FLOAT0_TEXTS))
def test_float0_text_as_jax(name):
    got = float0_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == FLOAT0_TEXTS[name]


def test_float0_is_a_numpy_array():
    t = jax.jvp(lambda x: x * 2, (jnp.arange(3),), (np.zeros((3,), jax.dtypes.float0),))[1]
    assert isinstance(t, np.ndarray) and t.dtype == jax.dtypes.float0 and t.shape == (3,)
    assert type(np.asarray(t)) is np.ndarray and type(t.val) is np.ndarray
    import pickle
    assert repr(pickle.loads(pickle.dumps(t))) == repr(t)


# ---- jax.nn's activations that JAX jits (printed jit[name=silu ...]), relu/relu6's custom_jvp around a jit,
# jnp.logaddexp's custom_jvp named logaddexp ----

def nn_texts(jax, jnp, lax):
    names = ["celu", "elu", "hard_sigmoid", "hard_silu", "hard_tanh", "leaky_relu", "log_sigmoid", "mish", "relu",
             "relu6", "selu", "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
             "log_softmax", "standardize", "swish", "hard_swish"]
    c = {n: (lambda f: lambda: jax.make_jaxpr(lambda x: f(x))(jnp.ones(3)))(getattr(jax.nn, n)) for n in names}
    c["grad_relu"] = lambda: jax.make_jaxpr(jax.grad(lambda x: jax.nn.relu(x)))(1.)
    c["log_softmax_axis0"] = lambda: jax.make_jaxpr(lambda x: jax.nn.log_softmax(x, axis=0))(jnp.ones((2, 3)))
    c["logaddexp"] = lambda: jax.make_jaxpr(lambda x: jnp.logaddexp(x, 1.))(jnp.ones(2))
    c["relu_list"] = lambda: jax.nn.silu([1., 2.])
    c["values"] = lambda: [float(getattr(jax.nn, n)(jnp.array([-1.5, 0.5, 2.]))[i]) for n in names for i in range(3)]
    return c


NN_TEXTS = {'celu': '{ lambda ; a:f32[3]. let\n'
         '    b:f32[3] = jit[\n'
         '      name=celu\n'
         '      jaxpr={ lambda ; a:f32[3]. let\n'
         '          c:f32[3] = max a 0.0:f32[]\n'
         '          d:f32[3] = min a 0.0:f32[]\n'
         '          e:f32[3] = div d 1.0:f32[]\n'
         '          f:f32[3] = expm1 e\n'
         '          g:f32[3] = mul 1.0:f32[] f\n'
         '          b:f32[3] = add c g\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'elu': '{ lambda ; a:f32[3]. let\n'
        '    b:f32[3] = jit[\n'
        '      name=elu\n'
        '      jaxpr={ lambda ; a:f32[3]. let\n'
        '          c:bool[3] = gt a 0.0:f32[]\n'
        '          d:bool[3] = gt a 0.0:f32[]\n'
        '          e:f32[3] = jit[\n'
        '            name=_where\n'
        '            jaxpr={ lambda ; d:bool[3] f:f32[] a:f32[3]. let\n'
        '                g:f32[] = convert_element_type[\n'
        '                  new_dtype=float32\n'
        '                  weak_type=False\n'
        '                ] f\n'
        '                h:f32[3] = broadcast_in_dim g\n'
        '                e:f32[3] = select_n d a h\n'
        '              in (e,) }\n'
        '          ] d 0.0:f32[] a\n'
        '          i:f32[3] = expm1 e\n'
        '          j:f32[3] = mul 1.0:f32[] i\n'
        '          b:f32[3] = jit[\n'
        '            name=_where\n'
        '            jaxpr={ lambda ; c:bool[3] a:f32[3] j:f32[3]. let\n'
        '                b:f32[3] = select_n c j a\n'
        '              in (b,) }\n'
        '          ] c a j\n'
        '        in (b,) }\n'
        '    ] a\n'
        '  in (b,) }',
 'grad_relu': '{ lambda ; a:f32[]. let\n'
              '    _:f32[] = custom_jvp_call[\n'
              '      name=relu\n'
              '      call_jaxpr={ lambda ; b:f32[]. let\n'
              '          c:f32[] = jit[\n'
              '            name=relu\n'
              '            jaxpr={ lambda ; b:f32[]. let c:f32[] = max b 0.0:f32[] in (c,) }\n'
              '          ] b\n'
              '        in (c,) }\n'
              '      jvp=jvp\n'
              '      symbolic_zeros=False\n'
              '    ] a\n'
              '    d:bool[] = gt a 0.0:f32[]\n'
              '    e:f32[] = select_n d 0.0:f32[] 1.0:f32[]\n'
              '  in (e,) }',
 'hard_sigmoid': '{ lambda ; a:f32[3]. let\n'
                 '    b:f32[3] = jit[\n'
                 '      name=hard_sigmoid\n'
                 '      jaxpr={ lambda ; a:f32[3]. let\n'
                 '          c:f32[3] = add a 3.0:f32[]\n'
                 '          d:f32[3] = custom_jvp_call[\n'
                 '            name=relu6\n'
                 '            call_jaxpr={ lambda ; e:f32[3]. let\n'
                 '                f:f32[3] = jit[\n'
                 '                  name=relu6\n'
                 '                  jaxpr={ lambda ; e:f32[3]. let\n'
                 '                      g:f32[3] = max e 0.0:f32[]\n'
                 '                      f:f32[3] = min g 6.0:f32[]\n'
                 '                    in (f,) }\n'
                 '                ] e\n'
                 '              in (f,) }\n'
                 '            jvp=jvp\n'
                 '            symbolic_zeros=False\n'
                 '          ] c\n'
                 '          b:f32[3] = div d 6.0:f32[]\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'hard_silu': '{ lambda ; a:f32[3]. let\n'
              '    b:f32[3] = jit[\n'
              '      name=hard_silu\n'
              '      jaxpr={ lambda ; a:f32[3]. let\n'
              '          c:f32[3] = jit[\n'
              '            name=hard_sigmoid\n'
              '            jaxpr={ lambda ; a:f32[3]. let\n'
              '                d:f32[3] = add a 3.0:f32[]\n'
              '                e:f32[3] = custom_jvp_call[\n'
              '                  name=relu6\n'
              '                  call_jaxpr={ lambda ; f:f32[3]. let\n'
              '                      g:f32[3] = jit[\n'
              '                        name=relu6\n'
              '                        jaxpr={ lambda ; f:f32[3]. let\n'
              '                            h:f32[3] = max f 0.0:f32[]\n'
              '                            g:f32[3] = min h 6.0:f32[]\n'
              '                          in (g,) }\n'
              '                      ] f\n'
              '                    in (g,) }\n'
              '                  jvp=jvp\n'
              '                  symbolic_zeros=False\n'
              '                ] d\n'
              '                c:f32[3] = div e 6.0:f32[]\n'
              '              in (c,) }\n'
              '          ] a\n'
              '          b:f32[3] = mul a c\n'
              '        in (b,) }\n'
              '    ] a\n'
              '  in (b,) }',
 'hard_swish': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = jit[\n'
               '      name=hard_silu\n'
               '      jaxpr={ lambda ; a:f32[3]. let\n'
               '          c:f32[3] = jit[\n'
               '            name=hard_sigmoid\n'
               '            jaxpr={ lambda ; a:f32[3]. let\n'
               '                d:f32[3] = add a 3.0:f32[]\n'
               '                e:f32[3] = custom_jvp_call[\n'
               '                  name=relu6\n'
               '                  call_jaxpr={ lambda ; f:f32[3]. let\n'
               '                      g:f32[3] = jit[\n'
               '                        name=relu6\n'
               '                        jaxpr={ lambda ; f:f32[3]. let\n'
               '                            h:f32[3] = max f 0.0:f32[]\n'
               '                            g:f32[3] = min h 6.0:f32[]\n'
               '                          in (g,) }\n'
               '                      ] f\n'
               '                    in (g,) }\n'
               '                  jvp=jvp\n'
               '                  symbolic_zeros=False\n'
               '                ] d\n'
               '                c:f32[3] = div e 6.0:f32[]\n'
               '              in (c,) }\n'
               '          ] a\n'
               '          b:f32[3] = mul a c\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'hard_tanh': 'let _where = { lambda ; a:bool[3] b:i32[] c:f32[3]. let\n'
              '    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
              '    e:f32[3] = broadcast_in_dim d\n'
              '    f:f32[3] = select_n a c e\n'
              '  in (f,) } in\n'
              '{ lambda ; g:f32[3]. let\n'
              '    h:f32[3] = jit[\n'
              '      name=hard_tanh\n'
              '      jaxpr={ lambda ; g:f32[3]. let\n'
              '          i:bool[3] = gt g 1.0:f32[]\n'
              '          j:bool[3] = lt g -1.0:f32[]\n'
              '          k:f32[3] = jit[name=_where jaxpr=_where] j -1:i32[] g\n'
              '          h:f32[3] = jit[name=_where jaxpr=_where] i 1:i32[] k\n'
              '        in (h,) }\n'
              '    ] g\n'
              '  in (h,) }',
 'leaky_relu': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = jit[\n'
               '      name=leaky_relu\n'
               '      jaxpr={ lambda ; a:f32[3]. let\n'
               '          c:bool[3] = ge a 0.0:f32[]\n'
               '          d:f32[3] = mul 0.009999999776482582:f32[] a\n'
               '          b:f32[3] = jit[\n'
               '            name=_where\n'
               '            jaxpr={ lambda ; c:bool[3] a:f32[3] d:f32[3]. let\n'
               '                b:f32[3] = select_n c d a\n'
               '              in (b,) }\n'
               '          ] c a d\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'log_sigmoid': '{ lambda ; a:f32[3]. let\n'
                '    b:f32[3] = jit[\n'
                '      name=log_sigmoid\n'
                '      jaxpr={ lambda ; a:f32[3]. let\n'
                '          c:f32[3] = neg a\n'
                '          d:f32[3] = jit[\n'
                '            name=softplus\n'
                '            jaxpr={ lambda ; c:f32[3]. let\n'
                '                d:f32[3] = custom_jvp_call[\n'
                '                  name=logaddexp\n'
                '                  call_jaxpr={ lambda ; e:f32[3] f:f32[]. let\n'
                '                      g:f32[3] = max e f\n'
                '                      h:f32[3] = sub e f\n'
                '                      i:bool[3] = ne h h\n'
                '                      j:f32[3] = add e f\n'
                '                      k:f32[3] = abs h\n'
                '                      l:f32[3] = neg k\n'
                '                      m:f32[3] = exp l\n'
                '                      n:f32[3] = log1p m\n'
                '                      o:f32[3] = add g n\n'
                '                      p:f32[3] = select_n i o j\n'
                '                    in (p,) }\n'
                '                  jvp=_logaddexp_jvp\n'
                '                  symbolic_zeros=False\n'
                '                ] c 0.0:f32[]\n'
                '              in (d,) }\n'
                '          ] c\n'
                '          b:f32[3] = neg d\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'log_softmax': '{ lambda ; a:f32[3]. let\n'
                '    b:f32[3] = jit[\n'
                '      name=log_softmax\n'
                '      jaxpr={ lambda ; a:f32[3]. let\n'
                '          c:f32[] = reduce_max[axes=(0,)] a\n'
                '          d:f32[] = max -inf:f32[] c\n'
                '          e:f32[1] = broadcast_in_dim d\n'
                '          f:f32[1] = stop_gradient e\n'
                '          g:f32[3] = sub a f\n'
                '          h:f32[3] = exp g\n'
                '          i:f32[] = reduce_sum[axes=(0,) out_sharding=None] h\n'
                '          j:f32[1] = broadcast_in_dim i\n'
                '          k:f32[1] = log j\n'
                '          b:f32[3] = sub g k\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'log_softmax_axis0': '{ lambda ; a:f32[2,3]. let\n'
                      '    b:f32[2,3] = jit[\n'
                      '      name=log_softmax\n'
                      '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                      '          c:f32[3] = reduce_max[axes=(0,)] a\n'
                      '          d:f32[3] = max -inf:f32[] c\n'
                      '          e:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] d\n'
                      '          f:f32[1,3] = stop_gradient e\n'
                      '          g:f32[2,3] = sub a f\n'
                      '          h:f32[2,3] = exp g\n'
                      '          i:f32[3] = reduce_sum[axes=(0,) out_sharding=None] h\n'
                      '          j:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] i\n'
                      '          k:f32[1,3] = log j\n'
                      '          b:f32[2,3] = sub g k\n'
                      '        in (b,) }\n'
                      '    ] a\n'
                      '  in (b,) }',
 'logaddexp': '{ lambda ; a:f32[2]. let\n'
              '    b:f32[2] = custom_jvp_call[\n'
              '      name=logaddexp\n'
              '      call_jaxpr={ lambda ; c:f32[2] d:f32[]. let\n'
              '          e:f32[2] = max c d\n'
              '          f:f32[2] = sub c d\n'
              '          g:bool[2] = ne f f\n'
              '          h:f32[2] = add c d\n'
              '          i:f32[2] = abs f\n'
              '          j:f32[2] = neg i\n'
              '          k:f32[2] = exp j\n'
              '          l:f32[2] = log1p k\n'
              '          m:f32[2] = add e l\n'
              '          n:f32[2] = select_n g m h\n'
              '        in (n,) }\n'
              '      jvp=_logaddexp_jvp\n'
              '      symbolic_zeros=False\n'
              '    ] a 1.0:f32[]\n'
              '  in (b,) }',
 'mish': '{ lambda ; a:f32[3]. let\n'
         '    b:f32[3] = jit[\n'
         '      name=mish\n'
         '      jaxpr={ lambda ; a:f32[3]. let\n'
         '          c:f32[3] = jit[\n'
         '            name=softplus\n'
         '            jaxpr={ lambda ; a:f32[3]. let\n'
         '                c:f32[3] = custom_jvp_call[\n'
         '                  name=logaddexp\n'
         '                  call_jaxpr={ lambda ; d:f32[3] e:f32[]. let\n'
         '                      f:f32[3] = max d e\n'
         '                      g:f32[3] = sub d e\n'
         '                      h:bool[3] = ne g g\n'
         '                      i:f32[3] = add d e\n'
         '                      j:f32[3] = abs g\n'
         '                      k:f32[3] = neg j\n'
         '                      l:f32[3] = exp k\n'
         '                      m:f32[3] = log1p l\n'
         '                      n:f32[3] = add f m\n'
         '                      o:f32[3] = select_n h n i\n'
         '                    in (o,) }\n'
         '                  jvp=_logaddexp_jvp\n'
         '                  symbolic_zeros=False\n'
         '                ] a 0.0:f32[]\n'
         '              in (c,) }\n'
         '          ] a\n'
         '          p:f32[3] = tanh c\n'
         '          b:f32[3] = mul a p\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'relu': '{ lambda ; a:f32[3]. let\n'
         '    b:f32[3] = custom_jvp_call[\n'
         '      name=relu\n'
         '      call_jaxpr={ lambda ; c:f32[3]. let\n'
         '          d:f32[3] = jit[\n'
         '            name=relu\n'
         '            jaxpr={ lambda ; c:f32[3]. let d:f32[3] = max c 0.0:f32[] in (d,) }\n'
         '          ] c\n'
         '        in (d,) }\n'
         '      jvp=jvp\n'
         '      symbolic_zeros=False\n'
         '    ] a\n'
         '  in (b,) }',
 'relu6': '{ lambda ; a:f32[3]. let\n'
          '    b:f32[3] = custom_jvp_call[\n'
          '      name=relu6\n'
          '      call_jaxpr={ lambda ; c:f32[3]. let\n'
          '          d:f32[3] = jit[\n'
          '            name=relu6\n'
          '            jaxpr={ lambda ; c:f32[3]. let\n'
          '                e:f32[3] = max c 0.0:f32[]\n'
          '                d:f32[3] = min e 6.0:f32[]\n'
          '              in (d,) }\n'
          '          ] c\n'
          '        in (d,) }\n'
          '      jvp=jvp\n'
          '      symbolic_zeros=False\n'
          '    ] a\n'
          '  in (b,) }',
 'relu_list': "TypeError: silu requires ndarray or scalar arguments, got <class 'list'> at position 0.",
 'selu': '{ lambda ; a:f32[3]. let\n'
         '    b:f32[3] = jit[\n'
         '      name=selu\n'
         '      jaxpr={ lambda ; a:f32[3]. let\n'
         '          c:f32[3] = jit[\n'
         '            name=elu\n'
         '            jaxpr={ lambda ; a:f32[3] d:f32[]. let\n'
         '                e:bool[3] = gt a 0.0:f32[]\n'
         '                f:bool[3] = gt a 0.0:f32[]\n'
         '                g:f32[3] = jit[\n'
         '                  name=_where\n'
         '                  jaxpr={ lambda ; f:bool[3] h:f32[] a:f32[3]. let\n'
         '                      i:f32[] = convert_element_type[\n'
         '                        new_dtype=float32\n'
         '                        weak_type=False\n'
         '                      ] h\n'
         '                      j:f32[3] = broadcast_in_dim i\n'
         '                      g:f32[3] = select_n f a j\n'
         '                    in (g,) }\n'
         '                ] f 0.0:f32[] a\n'
         '                k:f32[3] = expm1 g\n'
         '                l:f32[] = convert_element_type[\n'
         '                  new_dtype=float32\n'
         '                  weak_type=False\n'
         '                ] d\n'
         '                m:f32[3] = mul l k\n'
         '                c:f32[3] = jit[\n'
         '                  name=_where\n'
         '                  jaxpr={ lambda ; e:bool[3] a:f32[3] m:f32[3]. let\n'
         '                      c:f32[3] = select_n e m a\n'
         '                    in (c,) }\n'
         '                ] e a m\n'
         '              in (c,) }\n'
         '          ] a 1.6732632423543772:f32[]\n'
         '          b:f32[3] = mul 1.0507010221481323:f32[] c\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'silu': '{ lambda ; a:f32[3]. let\n'
         '    b:f32[3] = jit[\n'
         '      name=silu\n'
         '      jaxpr={ lambda ; a:f32[3]. let\n'
         '          c:f32[3] = logistic a\n'
         '          b:f32[3] = mul a c\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'soft_sign': '{ lambda ; a:f32[3]. let\n'
              '    b:f32[3] = jit[\n'
              '      name=soft_sign\n'
              '      jaxpr={ lambda ; a:f32[3]. let\n'
              '          c:f32[3] = abs a\n'
              '          d:f32[3] = add c 1.0:f32[]\n'
              '          b:f32[3] = div a d\n'
              '        in (b,) }\n'
              '    ] a\n'
              '  in (b,) }',
 'softplus': '{ lambda ; a:f32[3]. let\n'
             '    b:f32[3] = jit[\n'
             '      name=softplus\n'
             '      jaxpr={ lambda ; a:f32[3]. let\n'
             '          b:f32[3] = custom_jvp_call[\n'
             '            name=logaddexp\n'
             '            call_jaxpr={ lambda ; c:f32[3] d:f32[]. let\n'
             '                e:f32[3] = max c d\n'
             '                f:f32[3] = sub c d\n'
             '                g:bool[3] = ne f f\n'
             '                h:f32[3] = add c d\n'
             '                i:f32[3] = abs f\n'
             '                j:f32[3] = neg i\n'
             '                k:f32[3] = exp j\n'
             '                l:f32[3] = log1p k\n'
             '                m:f32[3] = add e l\n'
             '                n:f32[3] = select_n g m h\n'
             '              in (n,) }\n'
             '            jvp=_logaddexp_jvp\n'
             '            symbolic_zeros=False\n'
             '          ] a 0.0:f32[]\n'
             '        in (b,) }\n'
             '    ] a\n'
             '  in (b,) }',
 'sparse_plus': '{ lambda ; a:f32[3]. let\n'
                '    b:f32[3] = jit[\n'
                '      name=sparse_plus\n'
                '      jaxpr={ lambda ; a:f32[3]. let\n'
                '          c:bool[3] = le a -1.0:f32[]\n'
                '          d:bool[3] = ge a 1.0:f32[]\n'
                '          e:f32[3] = add a 1.0:f32[]\n'
                '          f:f32[3] = integer_pow[y=2] e\n'
                '          g:f32[3] = div f 4.0:f32[]\n'
                '          h:f32[3] = jit[\n'
                '            name=_where\n'
                '            jaxpr={ lambda ; d:bool[3] a:f32[3] g:f32[3]. let\n'
                '                h:f32[3] = select_n d g a\n'
                '              in (h,) }\n'
                '          ] d a g\n'
                '          b:f32[3] = jit[\n'
                '            name=_where\n'
                '            jaxpr={ lambda ; c:bool[3] i:f32[] h:f32[3]. let\n'
                '                j:f32[] = convert_element_type[\n'
                '                  new_dtype=float32\n'
                '                  weak_type=False\n'
                '                ] i\n'
                '                k:f32[3] = broadcast_in_dim j\n'
                '                b:f32[3] = select_n c h k\n'
                '              in (b,) }\n'
                '          ] c 0.0:f32[] h\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'sparse_sigmoid': '{ lambda ; a:f32[3]. let\n'
                   '    b:f32[3] = jit[\n'
                   '      name=sparse_sigmoid\n'
                   '      jaxpr={ lambda ; a:f32[3]. let\n'
                   '          c:f32[3] = add a 1.0:f32[]\n'
                   '          d:f32[3] = jit[\n'
                   '            name=clip\n'
                   '            jaxpr={ lambda ; c:f32[3] e:f32[] f:f32[]. let\n'
                   '                g:f32[] = convert_element_type[\n'
                   '                  new_dtype=float32\n'
                   '                  weak_type=False\n'
                   '                ] e\n'
                   '                h:f32[3] = max g c\n'
                   '                i:f32[] = convert_element_type[\n'
                   '                  new_dtype=float32\n'
                   '                  weak_type=False\n'
                   '                ] f\n'
                   '                d:f32[3] = min i h\n'
                   '              in (d,) }\n'
                   '          ] c 0.0:f32[] 2.0:f32[]\n'
                   '          b:f32[3] = mul 0.5:f32[] d\n'
                   '        in (b,) }\n'
                   '    ] a\n'
                   '  in (b,) }',
 'squareplus': '{ lambda ; a:f32[3]. let\n'
               '    b:f32[3] = jit[\n'
               '      name=squareplus\n'
               '      jaxpr={ lambda ; a:f32[3]. let\n'
               '          c:f32[3] = square a\n'
               '          d:f32[3] = add c 4.0:f32[]\n'
               '          e:f32[3] = sqrt d\n'
               '          f:f32[3] = add a e\n'
               '          b:f32[3] = div f 2.0:f32[]\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'standardize': 'let standardize = { lambda ; a:f32[3]. let\n'
                '    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a\n'
                '    c:f32[1] = broadcast_in_dim b\n'
                '    d:f32[1] = div c 3.0:f32[]\n'
                '    e:f32[3] = square a\n'
                '    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e\n'
                '    g:f32[1] = broadcast_in_dim f\n'
                '    h:f32[1] = div g 3.0:f32[]\n'
                '    i:f32[1] = square d\n'
                '    j:f32[1] = sub h i\n'
                '    k:f32[1] = jit[\n'
                '      name=clip\n'
                '      jaxpr={ lambda ; j:f32[1] l:i32[]. let\n'
                '          m:f32[] = convert_element_type[new_dtype=float32 weak_type=False] l\n'
                '          k:f32[1] = max m j\n'
                '        in (k,) }\n'
                '    ] j 0:i32[]\n'
                '    n:f32[3] = sub a d\n'
                '    o:f32[1] = add k 9.999999747378752e-06:f32[]\n'
                '    p:f32[1] = rsqrt o\n'
                '    q:f32[3] = mul n p\n'
                '  in (q,) } in\n'
                '{ lambda ; r:f32[3]. let\n'
                '    s:f32[3] = jit[name=standardize jaxpr=standardize] r\n'
                '  in (s,) }',
 'swish': '{ lambda ; a:f32[3]. let\n'
          '    b:f32[3] = jit[\n'
          '      name=silu\n'
          '      jaxpr={ lambda ; a:f32[3]. let\n'
          '          c:f32[3] = logistic a\n'
          '          b:f32[3] = mul a c\n'
          '        in (b,) }\n'
          '    ] a\n'
          '  in (b,) }',
 'values': '[-0.7768698334693909, 0.5, 2.0, -0.7768698334693909, 0.5, 2.0, 0.25, 0.5833333730697632, '
           '0.8333333730697632, -0.375, 0.2916666865348816, 1.6666667461395264, -1.0, 0.5, 1.0, -0.014999999664723873, '
           '0.5, 2.0, -1.7014132738113403, -0.4740769863128662, -0.12692800164222717, -0.29809969663619995, '
           '0.37524524331092834, 1.9439589977264404, 0.0, 0.5, 2.0, 0.0, 0.5, 2.0, -1.3658143281936646, '
           '0.5253505110740662, 2.1014020442962646, -0.2736383080482483, 0.3112296760082245, 1.7615940570831299, '
           '-0.6000000238418579, 0.3333333432674408, 0.6666666865348816, 0.20141328871250153, 0.9740769863128662, '
           '2.1269280910491943, 0.0, 0.5625, 2.0, 0.0, 0.75, 1.0, 0.5, 1.2807763814926147, 2.4142136573791504, '
           '-3.725802183151245, -1.7258020639419556, -0.22580209374427795, -1.2787209749221802, 0.11624734848737717, '
           '1.1624735593795776, -0.2736383080482483, 0.3112296760082245, 1.7615940570831299, -0.375, '
           '0.2916666865348816, 1.6666667461395264]'}


@pytest.mark.parametrize("name", sorted(NN_TEXTS))
def test_nn_text_as_jax(name):
    got = nn_texts(jax, jnp, lax)[name]
    try:
        got = got()
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    if name == "values":
        np.testing.assert_allclose(got, eval(NN_TEXTS[name]), rtol=2e-6, atol=1e-7)
    else:
        assert str(got) == NN_TEXTS[name]


# ---- jnp functions JAX jits (round, linalg.norm, diff; jax.nn.one_hot's _one_hot), with JAX's bodies ----

def jnp_jit_texts(jax, jnp, lax):
    x = jnp.arange(6.).reshape(2, 3)
    c = {}
    for o in [None, 1, 2, 0, 3, "inf", "-inf"]:
        ord_ = {"inf": jnp.inf, "-inf": -jnp.inf}.get(o, o)
        c[f"norm_vec_{o}"] = (lambda q: lambda: jax.make_jaxpr(lambda x: jnp.linalg.norm(x, ord=q, axis=1))(x))(ord_)
    for o in [None, "fro", 1, "inf"]:
        ord_ = {"inf": jnp.inf}.get(o, o)
        c[f"norm_mat_{o}"] = (lambda q: lambda: jax.make_jaxpr(
            lambda x: jnp.linalg.norm(x, ord=q, axis=(0, 1), keepdims=True))(x))(ord_)
    c["norm_all_keepdims"] = lambda: jax.make_jaxpr(lambda x: jnp.linalg.norm(x, keepdims=True))(x)
    c["norm_list"] = lambda: jnp.linalg.norm([1., 2.])
    c["norm_values"] = lambda: [jnp.linalg.norm(x, ord=o, axis=1).tolist() for o in [None, 1, 3, jnp.inf, 0]]
    c["diff_axis0"] = lambda: jax.make_jaxpr(lambda x: jnp.diff(x, axis=0))(x)
    c["diff_prepend"] = lambda: jax.make_jaxpr(lambda x: jnp.diff(x, n=2, prepend=0.))(x)
    c["diff_bool"] = lambda: jax.make_jaxpr(lambda x: jnp.diff(x > 1))(x)
    c["diff_promote"] = lambda: (repr(jnp.diff(jnp.array([1, 2, 4]), prepend=0.5)),
                                 repr(jnp.diff(jnp.array([1., 2.]), append=3)))
    c["diff_negative_n"] = lambda: jnp.diff(x, n=-1)
    c["round"] = lambda: jax.make_jaxpr(lambda v: jnp.round(v))(x)
    c["round_decimals"] = lambda: jax.make_jaxpr(lambda v: jnp.round(v, 2))(x)
    c["round_int"] = lambda: jax.make_jaxpr(lambda v: jnp.round(v))(1)
    c["round_int_negative"] = lambda: jnp.round(15, -1)
    c["round_out"] = lambda: jnp.round(1., out=1)
    c["round_values"] = lambda: repr(jnp.round(jnp.array([1.25, 2.5, -0.5]), 1))
    c["one_hot"] = lambda: jax.make_jaxpr(lambda i: jax.nn.one_hot(i, 3))(jnp.array([2, 0]))
    c["one_hot_axis0_int"] = lambda: jax.make_jaxpr(lambda i: jax.nn.one_hot(i, 2, axis=0, dtype=jnp.int32))(
        jnp.array([1, 0]))
    return c


JNP_JIT_TEXTS = {'diff_axis0': '{ lambda ; a:f32[2,3]. let\n'
               '    b:f32[1,3] = jit[\n'
               '      name=diff\n'
               '      jaxpr={ lambda ; a:f32[2,3]. let\n'
               '          c:f32[1,3] = slice[\n'
               '            limit_indices=(2, 3)\n'
               '            start_indices=(1, 0)\n'
               '            strides=None\n'
               '          ] a\n'
               '          d:f32[1,3] = slice[\n'
               '            limit_indices=(1, 3)\n'
               '            start_indices=(0, 0)\n'
               '            strides=None\n'
               '          ] a\n'
               '          b:f32[1,3] = sub c d\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'diff_bool': '{ lambda ; a:f32[2,3]. let\n'
              '    b:bool[2,3] = gt a 1.0:f32[]\n'
              '    c:bool[2,2] = jit[\n'
              '      name=diff\n'
              '      jaxpr={ lambda ; b:bool[2,3]. let\n'
              '          d:bool[2,2] = slice[\n'
              '            limit_indices=(2, 3)\n'
              '            start_indices=(0, 1)\n'
              '            strides=None\n'
              '          ] b\n'
              '          e:bool[2,2] = slice[\n'
              '            limit_indices=(2, 2)\n'
              '            start_indices=(0, 0)\n'
              '            strides=None\n'
              '          ] b\n'
              '          c:bool[2,2] = ne d e\n'
              '        in (c,) }\n'
              '    ] b\n'
              '  in (c,) }',
 'diff_negative_n': 'ValueError: order must be non-negative but got -1',
 'diff_prepend': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[2,2] = jit[\n'
                 '      name=diff\n'
                 '      jaxpr={ lambda ; a:f32[2,3] c:f32[]. let\n'
                 '          d:f32[2,1] = broadcast_in_dim c\n'
                 '          e:f32[2,1] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
                 '          f:f32[2,4] = concatenate[dimension=1] e a\n'
                 '          g:f32[2,3] = slice[\n'
                 '            limit_indices=(2, 4)\n'
                 '            start_indices=(0, 1)\n'
                 '            strides=None\n'
                 '          ] f\n'
                 '          h:f32[2,3] = slice[\n'
                 '            limit_indices=(2, 3)\n'
                 '            start_indices=(0, 0)\n'
                 '            strides=None\n'
                 '          ] f\n'
                 '          i:f32[2,3] = sub g h\n'
                 '          j:f32[2,2] = slice[\n'
                 '            limit_indices=(2, 3)\n'
                 '            start_indices=(0, 1)\n'
                 '            strides=None\n'
                 '          ] i\n'
                 '          k:f32[2,2] = slice[\n'
                 '            limit_indices=(2, 2)\n'
                 '            start_indices=(0, 0)\n'
                 '            strides=None\n'
                 '          ] i\n'
                 '          b:f32[2,2] = sub j k\n'
                 '        in (b,) }\n'
                 '    ] a 0.0:f32[]\n'
                 '  in (b,) }',
 'diff_promote': "('Array([0.5, 1. , 2. ], dtype=float32, weak_type=True)', 'Array([1., 1.], dtype=float32)')",
 'norm_all_keepdims': '{ lambda ; a:f32[2,3]. let\n'
                      '    b:f32[1,1] = jit[\n'
                      '      name=norm\n'
                      '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                      '          c:f32[2,3] = mul a a\n'
                      '          d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n'
                      '          e:f32[1,1] = broadcast_in_dim d\n'
                      '          b:f32[1,1] = sqrt e\n'
                      '        in (b,) }\n'
                      '    ] a\n'
                      '  in (b,) }',
 'norm_list': "TypeError: jnp.linalg.norm requires ndarray or scalar arguments, got <class 'list'> at position 0.",
 'norm_mat_1': '{ lambda ; a:f32[2,3]. let\n'
               '    b:f32[1,1] = jit[\n'
               '      name=norm\n'
               '      jaxpr={ lambda ; a:f32[2,3]. let\n'
               '          c:f32[2,3] = abs a\n'
               '          d:f32[3] = reduce_sum[axes=(0,) out_sharding=None] c\n'
               '          e:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] d\n'
               '          f:f32[1] = reduce_max[axes=(1,)] e\n'
               '          g:f32[1] = max 0.0:f32[] f\n'
               '          b:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'norm_mat_None': '{ lambda ; a:f32[2,3]. let\n'
                  '    b:f32[1,1] = jit[\n'
                  '      name=norm\n'
                  '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                  '          c:f32[2,3] = mul a a\n'
                  '          d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n'
                  '          e:f32[1,1] = broadcast_in_dim d\n'
                  '          b:f32[1,1] = sqrt e\n'
                  '        in (b,) }\n'
                  '    ] a\n'
                  '  in (b,) }',
 'norm_mat_fro': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[1,1] = jit[\n'
                 '      name=norm\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                 '          c:f32[2,3] = mul a a\n'
                 '          d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n'
                 '          e:f32[1,1] = broadcast_in_dim d\n'
                 '          b:f32[1,1] = sqrt e\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'norm_mat_inf': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[1,1] = jit[\n'
                 '      name=norm\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                 '          c:f32[2,3] = abs a\n'
                 '          d:f32[2] = reduce_sum[axes=(1,) out_sharding=None] c\n'
                 '          e:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d\n'
                 '          f:f32[1] = reduce_max[axes=(0,)] e\n'
                 '          g:f32[1] = max 0.0:f32[] f\n'
                 '          b:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(1,)] g\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'norm_values': '[[2.2360680103302, 7.071067810058594], [3.0, 12.0], [2.0800838470458984, 6.000000476837158], [2.0, '
                '5.0], [2.0, 3.0]]',
 'norm_vec_-inf': '{ lambda ; a:f32[2,3]. let\n'
                  '    b:f32[2] = jit[\n'
                  '      name=norm\n'
                  '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                  '          c:f32[2,3] = abs a\n'
                  '          b:f32[2] = reduce_min[axes=(1,)] c\n'
                  '        in (b,) }\n'
                  '    ] a\n'
                  '  in (b,) }',
 'norm_vec_0': '{ lambda ; a:f32[2,3]. let\n'
               '    b:f32[2] = jit[\n'
               '      name=norm\n'
               '      jaxpr={ lambda ; a:f32[2,3]. let\n'
               '          c:bool[2,3] = ne a 0.0:f32[]\n'
               '          d:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
               '          e:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
               '          b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] e\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'norm_vec_1': '{ lambda ; a:f32[2,3]. let\n'
               '    b:f32[2] = jit[\n'
               '      name=norm\n'
               '      jaxpr={ lambda ; a:f32[2,3]. let\n'
               '          c:f32[2,3] = abs a\n'
               '          b:f32[2] = reduce_sum[axes=(1,) out_sharding=None] c\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'norm_vec_2': '{ lambda ; a:f32[2,3]. let\n'
               '    b:f32[2] = jit[\n'
               '      name=norm\n'
               '      jaxpr={ lambda ; a:f32[2,3]. let\n'
               '          c:f32[2,3] = mul a a\n'
               '          d:f32[2] = reduce_sum[axes=(1,) out_sharding=None] c\n'
               '          b:f32[2] = sqrt d\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'norm_vec_3': '{ lambda ; a:f32[2,3]. let\n'
               '    b:f32[2] = jit[\n'
               '      name=norm\n'
               '      jaxpr={ lambda ; a:f32[2,3]. let\n'
               '          c:f32[2,3] = abs a\n'
               '          d:f32[2,3] = pow c 3.0:f32[]\n'
               '          e:f32[2] = reduce_sum[axes=(1,) out_sharding=None] d\n'
               '          b:f32[2] = pow e 0.3333333432674408:f32[]\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'norm_vec_None': '{ lambda ; a:f32[2,3]. let\n'
                  '    b:f32[2] = jit[\n'
                  '      name=norm\n'
                  '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                  '          c:f32[2,3] = mul a a\n'
                  '          d:f32[2] = reduce_sum[axes=(1,) out_sharding=None] c\n'
                  '          b:f32[2] = sqrt d\n'
                  '        in (b,) }\n'
                  '    ] a\n'
                  '  in (b,) }',
 'norm_vec_inf': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[2] = jit[\n'
                 '      name=norm\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                 '          c:f32[2,3] = abs a\n'
                 '          d:f32[2] = reduce_max[axes=(1,)] c\n'
                 '          b:f32[2] = max 0.0:f32[] d\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'one_hot': '{ lambda ; a:i32[2]. let\n'
            '    b:f32[2,3] = jit[\n'
            '      name=_one_hot\n'
            '      jaxpr={ lambda ; a:i32[2]. let\n'
            '          c:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a\n'
            '          d:i32[1,3] = iota[dimension=1 dtype=int32 shape=(1, 3) sharding=None] \n'
            '          e:bool[2,3] = eq c d\n'
            '          b:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] e\n'
            '        in (b,) }\n'
            '    ] a\n'
            '  in (b,) }',
 'one_hot_axis0_int': '{ lambda ; a:i32[2]. let\n'
                      '    b:i32[2,2] = jit[\n'
                      '      name=_one_hot\n'
                      '      jaxpr={ lambda ; a:i32[2]. let\n'
                      '          c:i32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                      '          d:i32[2,1] = iota[dimension=0 dtype=int32 shape=(2, 1) sharding=None] \n'
                      '          e:bool[2,2] = eq c d\n'
                      '          b:i32[2,2] = convert_element_type[new_dtype=int32 weak_type=False] e\n'
                      '        in (b,) }\n'
                      '    ] a\n'
                      '  in (b,) }',
 'round': '{ lambda ; a:f32[2,3]. let\n'
          '    b:f32[2,3] = jit[\n'
          '      name=round\n'
          '      jaxpr={ lambda ; a:f32[2,3]. let\n'
          '          b:f32[2,3] = round[rounding_method=1] a\n'
          '        in (b,) }\n'
          '    ] a\n'
          '  in (b,) }',
 'round_decimals': '{ lambda ; a:f32[2,3]. let\n'
                   '    b:f32[2,3] = jit[\n'
                   '      name=round\n'
                   '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                   '          c:f32[2,3] = mul a 100.0:f32[]\n'
                   '          d:f32[2,3] = round[rounding_method=1] c\n'
                   '          b:f32[2,3] = div d 100.0:f32[]\n'
                   '        in (b,) }\n'
                   '    ] a\n'
                   '  in (b,) }',
 'round_int': '{ lambda ; a:i32[]. let\n'
              '    b:i32[] = jit[name=round jaxpr={ lambda ; a:i32[]. let  in (a,) }] a\n'
              '  in (b,) }',
 'round_int_negative': 'NotImplementedError: integer np.round not implemented for decimals < 0',
 'round_out': "NotImplementedError: The 'out' argument to jnp.round is not supported.",
 'round_values': 'Array([ 1.2,  2.5, -0.5], dtype=float32)'}


@pytest.mark.parametrize("name", sorted(JNP_JIT_TEXTS))
def test_jnp_jit_text_as_jax(name):
    got = jnp_jit_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == JNP_JIT_TEXTS[name]
