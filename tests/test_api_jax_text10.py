"""Issue 18, the tenth pass on JAX 0.10.2's printed forms: ``jnp.take`` staged as JAX's jitted ``_take`` (every
``mode``; ``remainder`` as JAX's jitted ``remainder``), ``reduce_prod``'s jvp as JAX's product tree (and the
pad/slice/squeeze transposes its ``grad`` prints, NumPy-int params included), operands wrapped at the width as
JAX's ``pp_vars``. Texts and values recorded from JAX 0.10.2 by running ``cases``/``values`` below under JAX."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

nan = float("nan")


def cases(jax, jnp, lax):
    x34 = jnp.ones((3, 4))
    i2 = jnp.array([0, 2])
    c = {}
    c["take_default"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i))(x34, i2)
    for mode in ["clip", "wrap", "fill"]:
        c["take_axis1_" + mode] = (lambda m: lambda: jax.make_jaxpr(
            lambda x, i: jnp.take(x, i, axis=1, mode=m))(x34, i2))(mode)
    c["take_fill_value"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i, axis=0, fill_value=-1.))(x34, 1)
    c["take_int_2d_idx"] = lambda: jax.make_jaxpr(lambda x, i: jnp.take(x, i, axis=0))(
        jnp.ones((3, 4), jnp.int32), jnp.zeros((2, 2), jnp.int32))
    c["remainder_int"] = lambda: jax.make_jaxpr(lambda x: jnp.remainder(x, 3))(jnp.arange(4))
    c["prod_jvp"] = lambda: jax.make_jaxpr(lambda x, t: jax.jvp(jnp.prod, (x,), (t,)))(jnp.ones(3), jnp.ones(3))
    c["prod_grad"] = lambda: jax.make_jaxpr(jax.grad(jnp.prod))(jnp.ones(3))
    c["prod_grad_5"] = lambda: jax.make_jaxpr(jax.grad(jnp.prod))(jnp.ones(5))
    c["prod_grad_2d_all"] = lambda: jax.make_jaxpr(jax.grad(jnp.prod))(jnp.ones((2, 2)))
    c["pad_neg_grad"] = lambda: jax.make_jaxpr(jax.grad(lambda x: lax.pad(x, 0., ((-1, 2, 1),)).sum()))(jnp.ones(3))
    c["strided_slice_grad"] = lambda: jax.make_jaxpr(jax.grad(lambda x: x[::2].sum()))(jnp.ones(5))
    c["slice_grad"] = lambda: jax.make_jaxpr(jax.grad(lambda x: x[1:3].sum()))(jnp.ones(5))
    c["squeeze_grad"] = lambda: jax.make_jaxpr(jax.grad(lambda x: jnp.squeeze(x).sum()))(jnp.ones((1, 5)))
    return c


def values(jax, jnp, lax):
    x = jnp.arange(12.).reshape(3, 4)
    out = {}
    for mode in [None, "clip", "wrap", "fill"]:
        out[f"take_{mode}"] = jnp.take(x, jnp.array([-1, 0, 5, 2]), axis=1, mode=mode).tolist()
        out[f"take_jit_{mode}"] = jax.jit(lambda x: jnp.take(x, jnp.array([-5, 3, 7]), mode=mode))(x).tolist()
    out["take_grad"] = jax.grad(lambda x: jnp.take(x, jnp.array([1, 1, 2])).sum())(jnp.arange(4.)).tolist()
    out["prod_grad_zero"] = jax.grad(jnp.prod)(jnp.array([1., 2., 0., 4.])).tolist()
    out["prod_grad_two_zeros"] = jax.grad(jnp.prod)(jnp.array([1., 0., 0., 4.])).tolist()
    out["prod_jvp"] = [float(v) for v in jax.jvp(jnp.prod, (jnp.array([1., 2., 3.]),), (jnp.array([1., 1., 1.]),))]
    out["prod_grad_axis1"] = jax.grad(lambda x: jnp.prod(x, axis=1).sum())(jnp.arange(1., 7.).reshape(2, 3)).tolist()
    out["prod_grad_axis0_3d"] = jax.grad(lambda x: jnp.prod(x, axis=(0, 2)).sum())(
        jnp.arange(1., 13.).reshape(2, 3, 2)).tolist()
    out["pad_grads"] = [v.tolist() for v in jax.grad(lambda x, p: lax.pad(x, p, ((1, 2, 1),)).sum(), argnums=(0, 1))(jnp.ones(3), 2.)]
    out["pad_neg_grad"] = jax.grad(lambda x: (lax.pad(x, 0., ((-1, 2, 1),)) ** 2).sum())(jnp.arange(3.)).tolist()
    return out


JAX_TEXTS = {'pad_neg_grad': '{ lambda ; a:f32[3]. let\n'
                 '    b:f32[6] = pad[padding_config=((-1, 2, 1),)] a 0.0:f32[]\n'
                 '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                 '    c:f32[6] = broadcast_in_dim 1.0:f32[]\n'
                 '    d:f32[5] = pad[padding_config=((np.int64(1), np.int64(-2), np.int64(0)),)] c\n'
                 '      0.0:f32[]\n'
                 '    e:f32[3] = slice[\n'
                 '      limit_indices=(5,)\n'
                 '      start_indices=(np.int64(0),)\n'
                 '      strides=(np.int64(2),)\n'
                 '    ] d\n'
                 '  in (e,) }',
 'prod_grad': '{ lambda ; a:f32[3]. let\n'
              '    b:f32[2] = slice[limit_indices=(2,) start_indices=(0,) strides=(1,)] a\n'
              '    c:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=(1,)] a\n'
              '    d:f32[2] = pad[padding_config=((0, 1, 0),)] c 1.0:f32[]\n'
              '    e:f32[2] = mul b d\n'
              '    f:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] e\n'
              '    g:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] e\n'
              '    h:f32[1] = mul f g\n'
              '    _:f32[] = squeeze[dimensions=(0,)] h\n'
              '    i:f32[1] = broadcast_in_dim 1.0:f32[]\n'
              '    j:f32[1] = mul f i\n'
              '    k:f32[1] = mul i g\n'
              '    l:f32[2] = pad[padding_config=((1, np.int64(0), 0),)] j 0.0:f32[]\n'
              '    m:f32[2] = pad[padding_config=((0, np.int64(1), 0),)] k 0.0:f32[]\n'
              '    n:f32[2] = add_any l m\n'
              '    o:f32[2] = mul b n\n'
              '    p:f32[2] = mul n d\n'
              '    q:f32[1] = pad[padding_config=((np.int64(0), np.int64(-1), np.int64(0)),)] o\n'
              '      0.0:f32[]\n'
              '    r:f32[1] = slice[\n'
              '      limit_indices=(1,)\n'
              '      start_indices=(np.int64(0),)\n'
              '      strides=(np.int64(1),)\n'
              '    ] q\n'
              '    s:f32[3] = pad[padding_config=((2, np.int64(0), 0),)] r 0.0:f32[]\n'
              '    t:f32[3] = pad[padding_config=((0, np.int64(1), 0),)] p 0.0:f32[]\n'
              '    u:f32[3] = add_any s t\n'
              '  in (u,) }',
 'prod_grad_2d_all': '{ lambda ; a:f32[2,2]. let\n'
                     '    b:f32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] a\n'
                     '    c:f32[2] = slice[limit_indices=(2,) start_indices=(0,) strides=(1,)] b\n'
                     '    d:f32[2] = slice[limit_indices=(4,) start_indices=(2,) strides=(1,)] b\n'
                     '    e:f32[2] = mul c d\n'
                     '    f:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] e\n'
                     '    g:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] e\n'
                     '    h:f32[1] = mul f g\n'
                     '    _:f32[] = squeeze[dimensions=(0,)] h\n'
                     '    i:f32[1] = broadcast_in_dim 1.0:f32[]\n'
                     '    j:f32[1] = mul f i\n'
                     '    k:f32[1] = mul i g\n'
                     '    l:f32[2] = pad[padding_config=((1, np.int64(0), 0),)] j 0.0:f32[]\n'
                     '    m:f32[2] = pad[padding_config=((0, np.int64(1), 0),)] k 0.0:f32[]\n'
                     '    n:f32[2] = add_any l m\n'
                     '    o:f32[2] = mul c n\n'
                     '    p:f32[2] = mul n d\n'
                     '    q:f32[4] = pad[padding_config=((2, np.int64(0), 0),)] o 0.0:f32[]\n'
                     '    r:f32[4] = pad[padding_config=((0, np.int64(2), 0),)] p 0.0:f32[]\n'
                     '    s:f32[4] = add_any q r\n'
                     '    t:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] s\n'
                     '  in (t,) }',
 'prod_grad_5': '{ lambda ; a:f32[5]. let\n'
                '    b:f32[3] = slice[limit_indices=(3,) start_indices=(0,) strides=(1,)] a\n'
                '    c:f32[2] = slice[limit_indices=(5,) start_indices=(3,) strides=(1,)] a\n'
                '    d:f32[3] = pad[padding_config=((0, 1, 0),)] c 1.0:f32[]\n'
                '    e:f32[3] = mul b d\n'
                '    f:f32[2] = slice[limit_indices=(2,) start_indices=(0,) strides=(1,)] e\n'
                '    g:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=(1,)] e\n'
                '    h:f32[2] = pad[padding_config=((0, 1, 0),)] g 1.0:f32[]\n'
                '    i:f32[2] = mul f h\n'
                '    j:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] i\n'
                '    k:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] i\n'
                '    l:f32[1] = mul j k\n'
                '    _:f32[] = squeeze[dimensions=(0,)] l\n'
                '    m:f32[1] = broadcast_in_dim 1.0:f32[]\n'
                '    n:f32[1] = mul j m\n'
                '    o:f32[1] = mul m k\n'
                '    p:f32[2] = pad[padding_config=((1, np.int64(0), 0),)] n 0.0:f32[]\n'
                '    q:f32[2] = pad[padding_config=((0, np.int64(1), 0),)] o 0.0:f32[]\n'
                '    r:f32[2] = add_any p q\n'
                '    s:f32[2] = mul f r\n'
                '    t:f32[2] = mul r h\n'
                '    u:f32[1] = pad[padding_config=((np.int64(0), np.int64(-1), np.int64(0)),)] s\n'
                '      0.0:f32[]\n'
                '    v:f32[1] = slice[\n'
                '      limit_indices=(1,)\n'
                '      start_indices=(np.int64(0),)\n'
                '      strides=(np.int64(1),)\n'
                '    ] u\n'
                '    w:f32[3] = pad[padding_config=((2, np.int64(0), 0),)] v 0.0:f32[]\n'
                '    x:f32[3] = pad[padding_config=((0, np.int64(1), 0),)] t 0.0:f32[]\n'
                '    y:f32[3] = add_any w x\n'
                '    z:f32[3] = mul b y\n'
                '    ba:f32[3] = mul y d\n'
                '    bb:f32[2] = pad[padding_config=((np.int64(0), np.int64(-1), np.int64(0)),)] z\n'
                '      0.0:f32[]\n'
                '    bc:f32[2] = slice[\n'
                '      limit_indices=(2,)\n'
                '      start_indices=(np.int64(0),)\n'
                '      strides=(np.int64(1),)\n'
                '    ] bb\n'
                '    bd:f32[5] = pad[padding_config=((3, np.int64(0), 0),)] bc 0.0:f32[]\n'
                '    be:f32[5] = pad[padding_config=((0, np.int64(2), 0),)] ba 0.0:f32[]\n'
                '    bf:f32[5] = add_any bd be\n'
                '  in (bf,) }',
 'prod_jvp': '{ lambda ; a:f32[3] b:f32[3]. let\n'
             '    c:f32[2] = slice[limit_indices=(2,) start_indices=(0,) strides=(1,)] a\n'
             '    d:f32[2] = slice[limit_indices=(2,) start_indices=(0,) strides=(1,)] b\n'
             '    e:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=(1,)] a\n'
             '    f:f32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=(1,)] b\n'
             '    g:f32[2] = pad[padding_config=((0, 1, 0),)] e 1.0:f32[]\n'
             '    h:f32[2] = pad[padding_config=((0, 1, 0),)] f 0.0:f32[]\n'
             '    i:f32[2] = mul c g\n'
             '    j:f32[2] = mul d g\n'
             '    k:f32[2] = mul c h\n'
             '    l:f32[2] = add_any j k\n'
             '    m:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] i\n'
             '    n:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] l\n'
             '    o:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] i\n'
             '    p:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] l\n'
             '    q:f32[1] = mul m o\n'
             '    r:f32[1] = mul n o\n'
             '    s:f32[1] = mul m p\n'
             '    t:f32[1] = add_any r s\n'
             '    u:f32[] = squeeze[dimensions=(0,)] q\n'
             '    v:f32[] = squeeze[dimensions=(0,)] t\n'
             '  in (u, v) }',
 'remainder_int': 'let remainder = { lambda ; a:i32[4] b:i32[]. let\n'
                  '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n'
                  '    d:bool[] = eq c 0:i32[]\n'
                  '    e:i32[] = jit[\n'
                  '      name=_where\n'
                  '      jaxpr={ lambda ; d:bool[] f:i32[] c:i32[]. let\n'
                  '          e:i32[] = select_n d c f\n'
                  '        in (e,) }\n'
                  '    ] d 1:i32[] c\n'
                  '    g:i32[4] = rem a e\n'
                  '    h:bool[4] = ne g 0:i32[]\n'
                  '    i:bool[4] = lt g 0:i32[]\n'
                  '    j:bool[] = lt e 0:i32[]\n'
                  '    k:bool[4] = ne i j\n'
                  '    l:bool[4] = and k h\n'
                  '    m:i32[4] = add g e\n'
                  '    n:i32[4] = select_n l g m\n'
                  '  in (n,) } in\n'
                  '{ lambda ; o:i32[4]. let\n'
                  '    p:i32[4] = jit[name=remainder jaxpr=remainder] o 3:i32[]\n'
                  '  in (p,) }',
 'slice_grad': '{ lambda ; a:f32[5]. let\n'
               '    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=None] a\n'
               '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
               '    c:f32[2] = broadcast_in_dim 1.0:f32[]\n'
               '    d:f32[5] = pad[padding_config=((1, np.int64(2), 0),)] c 0.0:f32[]\n'
               '  in (d,) }',
 'squeeze_grad': '{ lambda ; a:f32[1,5]. let\n'
                 '    b:f32[5] = squeeze[dimensions=(0,)] a\n'
                 '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                 '    c:f32[5] = broadcast_in_dim 1.0:f32[]\n'
                 '    d:f32[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n'
                 '  in (d,) }',
 'strided_slice_grad': '{ lambda ; a:f32[5]. let\n'
                       '    b:f32[3] = slice[limit_indices=(5,) start_indices=(0,) strides=(2,)] a\n'
                       '    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                       '    c:f32[3] = broadcast_in_dim 1.0:f32[]\n'
                       '    d:f32[5] = pad[padding_config=((0, np.int64(0), np.int64(1)),)] c 0.0:f32[]\n'
                       '  in (d,) }',
 'take_axis1_clip': '{ lambda ; a:f32[3,4] b:i32[2]. let\n'
                    '    c:f32[3,2] = jit[\n'
                    '      name=_take\n'
                    '      jaxpr={ lambda ; a:f32[3,4] b:i32[2]. let\n'
                    '          d:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b\n'
                    '          c:f32[3,2] = gather[\n'
                    '            dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), '
                    'collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(), '
                    'start_indices_batching_dims=())\n'
                    '            fill_value=None\n'
                    '            indices_are_sorted=False\n'
                    '            mode=GatherScatterMode.CLIP\n'
                    '            slice_sizes=(3, 1)\n'
                    '            unique_indices=False\n'
                    '          ] a d\n'
                    '        in (c,) }\n'
                    '    ] a b\n'
                    '  in (c,) }',
 'take_axis1_fill': '{ lambda ; a:f32[3,4] b:i32[2]. let\n'
                    '    c:f32[3,2] = jit[\n'
                    '      name=_take\n'
                    '      jaxpr={ lambda ; a:f32[3,4] b:i32[2]. let\n'
                    '          d:bool[2] = lt b 0:i32[]\n'
                    '          e:i32[2] = add b 4:i32[]\n'
                    '          f:i32[2] = jit[\n'
                    '            name=_where\n'
                    '            jaxpr={ lambda ; d:bool[2] e:i32[2] b:i32[2]. let\n'
                    '                f:i32[2] = select_n d b e\n'
                    '              in (f,) }\n'
                    '          ] d e b\n'
                    '          g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f\n'
                    '          c:f32[3,2] = gather[\n'
                    '            dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), '
                    'collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(), '
                    'start_indices_batching_dims=())\n'
                    '            fill_value=nan\n'
                    '            indices_are_sorted=False\n'
                    '            mode=GatherScatterMode.FILL_OR_DROP\n'
                    '            slice_sizes=(3, 1)\n'
                    '            unique_indices=False\n'
                    '          ] a g\n'
                    '        in (c,) }\n'
                    '    ] a b\n'
                    '  in (c,) }',
 'take_axis1_wrap': '{ lambda ; a:f32[3,4] b:i32[2]. let\n'
                    '    c:f32[3,2] = jit[\n'
                    '      name=_take\n'
                    '      jaxpr={ lambda ; a:f32[3,4] b:i32[2]. let\n'
                    '          d:i32[2] = jit[\n'
                    '            name=remainder\n'
                    '            jaxpr={ lambda ; b:i32[2] e:i32[]. let\n'
                    '                f:bool[] = eq e 0:i32[]\n'
                    '                g:i32[] = jit[\n'
                    '                  name=_where\n'
                    '                  jaxpr={ lambda ; f:bool[] h:i32[] e:i32[]. let\n'
                    '                      g:i32[] = select_n f e h\n'
                    '                    in (g,) }\n'
                    '                ] f 1:i32[] e\n'
                    '                i:i32[2] = rem b g\n'
                    '                j:bool[2] = ne i 0:i32[]\n'
                    '                k:bool[2] = lt i 0:i32[]\n'
                    '                l:bool[] = lt g 0:i32[]\n'
                    '                m:bool[2] = ne k l\n'
                    '                n:bool[2] = and m j\n'
                    '                o:i32[2] = add i g\n'
                    '                d:i32[2] = select_n n i o\n'
                    '              in (d,) }\n'
                    '          ] b 4:i32[]\n'
                    '          p:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] d\n'
                    '          c:f32[3,2] = gather[\n'
                    '            dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), '
                    'collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(), '
                    'start_indices_batching_dims=())\n'
                    '            fill_value=None\n'
                    '            indices_are_sorted=False\n'
                    '            mode=GatherScatterMode.PROMISE_IN_BOUNDS\n'
                    '            slice_sizes=(3, 1)\n'
                    '            unique_indices=False\n'
                    '          ] a p\n'
                    '        in (c,) }\n'
                    '    ] a b\n'
                    '  in (c,) }',
 'take_default': '{ lambda ; a:f32[3,4] b:i32[2]. let\n'
                 '    c:f32[2] = jit[\n'
                 '      name=_take\n'
                 '      jaxpr={ lambda ; a:f32[3,4] b:i32[2]. let\n'
                 '          d:f32[12] = reshape[dimensions=None new_sizes=(12,) sharding=None] a\n'
                 '          e:bool[2] = lt b 0:i32[]\n'
                 '          f:i32[2] = add b 12:i32[]\n'
                 '          g:i32[2] = jit[\n'
                 '            name=_where\n'
                 '            jaxpr={ lambda ; e:bool[2] f:i32[2] b:i32[2]. let\n'
                 '                g:i32[2] = select_n e b f\n'
                 '              in (g,) }\n'
                 '          ] e f b\n'
                 '          h:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g\n'
                 '          c:f32[2] = gather[\n'
                 '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), '
                 'start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n'
                 '            fill_value=nan\n'
                 '            indices_are_sorted=False\n'
                 '            mode=GatherScatterMode.FILL_OR_DROP\n'
                 '            slice_sizes=(1,)\n'
                 '            unique_indices=False\n'
                 '          ] d h\n'
                 '        in (c,) }\n'
                 '    ] a b\n'
                 '  in (c,) }',
 'take_fill_value': '{ lambda ; a:f32[3,4] b:i32[]. let\n'
                    '    c:f32[4] = jit[\n'
                    '      name=_take\n'
                    '      jaxpr={ lambda ; a:f32[3,4] b:i32[]. let\n'
                    '          d:bool[] = lt b 0:i32[]\n'
                    '          e:i32[] = add b 3:i32[]\n'
                    '          f:i32[] = jit[\n'
                    '            name=_where\n'
                    '            jaxpr={ lambda ; d:bool[] e:i32[] b:i32[]. let\n'
                    '                f:i32[] = select_n d b e\n'
                    '              in (f,) }\n'
                    '          ] d e b\n'
                    '          g:i32[1] = broadcast_in_dim f\n'
                    '          c:f32[4] = gather[\n'
                    '            dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), '
                    'collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), '
                    'start_indices_batching_dims=())\n'
                    '            fill_value=-1.0\n'
                    '            indices_are_sorted=False\n'
                    '            mode=GatherScatterMode.FILL_OR_DROP\n'
                    '            slice_sizes=(1, 4)\n'
                    '            unique_indices=False\n'
                    '          ] a g\n'
                    '        in (c,) }\n'
                    '    ] a b\n'
                    '  in (c,) }',
 'take_int_2d_idx': '{ lambda ; a:i32[3,4] b:i32[2,2]. let\n'
                    '    c:i32[2,2,4] = jit[\n'
                    '      name=_take\n'
                    '      jaxpr={ lambda ; a:i32[3,4] b:i32[2,2]. let\n'
                    '          d:bool[2,2] = lt b 0:i32[]\n'
                    '          e:i32[2,2] = add b 3:i32[]\n'
                    '          f:i32[2,2] = jit[\n'
                    '            name=_where\n'
                    '            jaxpr={ lambda ; d:bool[2,2] e:i32[2,2] b:i32[2,2]. let\n'
                    '                f:i32[2,2] = select_n d b e\n'
                    '              in (f,) }\n'
                    '          ] d e b\n'
                    '          g:i32[2,2,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] f\n'
                    '          c:i32[2,2,4] = gather[\n'
                    '            dimension_numbers=GatherDimensionNumbers(offset_dims=(2,), '
                    'collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), '
                    'start_indices_batching_dims=())\n'
                    '            fill_value=-2147483648\n'
                    '            indices_are_sorted=False\n'
                    '            mode=GatherScatterMode.FILL_OR_DROP\n'
                    '            slice_sizes=(1, 4)\n'
                    '            unique_indices=False\n'
                    '          ] a g\n'
                    '        in (c,) }\n'
                    '    ] a b\n'
                    '  in (c,) }'}
JAX_VALUES = {'pad_grads': [[1.0, 1.0, 1.0], 5.0],
 'pad_neg_grad': [0.0, 2.0, 4.0],
 'prod_grad_axis0_3d': [[[112.0, 56.0], [360.0, 270.0], [792.0, 660.0]],
                        [[16.0, 14.0], [120.0, 108.0], [360.0, 330.0]]],
 'prod_grad_axis1': [[6.0, 3.0, 2.0], [30.0, 24.0, 20.0]],
 'prod_grad_two_zeros': [0.0, 0.0, 0.0, 0.0],
 'prod_grad_zero': [0.0, 0.0, 8.0, 0.0],
 'prod_jvp': [6.0, 11.0],
 'take_None': [[3.0, 0.0, nan, 2.0], [7.0, 4.0, nan, 6.0], [11.0, 8.0, nan, 10.0]],
 'take_clip': [[0.0, 0.0, 3.0, 2.0], [4.0, 4.0, 7.0, 6.0], [8.0, 8.0, 11.0, 10.0]],
 'take_fill': [[3.0, 0.0, nan, 2.0], [7.0, 4.0, nan, 6.0], [11.0, 8.0, nan, 10.0]],
 'take_grad': [0.0, 2.0, 1.0, 0.0],
 'take_jit_None': [7.0, 3.0, 7.0],
 'take_jit_clip': [0.0, 3.0, 7.0],
 'take_jit_fill': [7.0, 3.0, 7.0],
 'take_jit_wrap': [7.0, 3.0, 7.0],
 'take_wrap': [[3.0, 0.0, 1.0, 2.0], [7.0, 4.0, 5.0, 6.0], [11.0, 8.0, 9.0, 10.0]]}


@pytest.mark.parametrize("name", sorted(JAX_TEXTS))
def test_jaxpr_text_as_jax(name):
    assert str(cases(jax, jnp, lax)[name]()) == JAX_TEXTS[name]


@pytest.mark.parametrize("name", sorted(JAX_VALUES))
def test_values_as_jax(name):
    got = values(jax, jnp, lax)[name]
    want = JAX_VALUES[name]
    if name == "prod_jvp" or name == "pad_grads":
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=1e-6)
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-6)


def test_prod_grad_matches_finite_differences_with_axes():
    x = np.arange(1., 13.).reshape(2, 3, 2).astype(np.float32) / 4
    g = np.asarray(jax.grad(lambda x: jnp.prod(x, axis=(0, 2)).sum())(jnp.asarray(x)))
    want = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        sel = np.ones(x.shape, bool)
        sel[i] = False
        rest = np.where(sel, x, 1.0)
        want[i] = np.prod(rest[:, i[1], :])
    np.testing.assert_allclose(g, want, rtol=1e-5)


def test_take_errors_as_jax():
    with pytest.raises(ValueError, match="Invalid mode 'promise_in_bounds' for np.take"):
        jnp.take(jnp.ones(3), jnp.array([0]), mode="promise_in_bounds")
    with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.take is not supported."):
        jnp.take(jnp.ones(3), jnp.array([0]), mode="raise")
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.take is not supported."):
        jnp.take(jnp.ones(3), jnp.array([0]), out=jnp.ones(1))
    with pytest.raises(IndexError, match="Cannot do a non-empty jnp.take"):
        jnp.take(jnp.ones((0,)), jnp.array([0]))
    assert jnp.take(jnp.ones((3, 4)), jnp.array([], jnp.int32), axis=1).shape == (3, 0)


# ----------------------------------------------------------------------------------------------- jnp.pad modes
# jnp.pad's linear_ramp / maximum / minimum / mean / median / callable modes and jnp.linspace as JAX's (values and
# texts recorded from JAX 0.10.2 running pad_values / pad_texts).

def pad_values(jax, jnp, lax):
    x = jnp.arange(1., 6.)
    xi = jnp.array([[1, 5, 2], [7, 3, 4]])
    x2 = jnp.arange(12.).reshape(3, 4) ** 1.5
    out = {}
    for mode, kw in [("linear_ramp", {}), ("linear_ramp", dict(end_values=(5, -4))), ("maximum", {}),
                     ("maximum", dict(stat_length=2)), ("minimum", dict(stat_length=(1, 3))), ("mean", {}),
                     ("mean", dict(stat_length=2)), ("median", {}), ("median", dict(stat_length=3)),
                     ("minimum", dict(stat_length=10))]:
        key = mode + "_" + "_".join(f"{k}={v}" for k, v in kw.items())
        out[key + "_1d"] = jnp.pad(x, (2, 3), mode=mode, **kw).tolist()
        out[key + "_int"] = jnp.pad(xi, ((1, 2), (2, 1)), mode=mode, **kw).tolist()
        out[key + "_2d"] = jnp.pad(x2, ((1, 0), (2, 1)), mode=mode, **kw).tolist()
        out[key + "_jit"] = jax.jit(lambda a: jnp.pad(a, 2, mode=mode, **kw))(x2).tolist()
        out[key + "_grad"] = jax.grad(lambda a: (jnp.pad(a, (2, 3), mode=mode, **kw) ** 2).sum())(x).tolist()
    out["ramp_pairs"] = jnp.pad(xi, 2, mode="linear_ramp", end_values=((1, 2), (3, 4))).tolist()

    def pad_with(vector, pad_width, iaxis, kwargs):
        pad_value = kwargs.get('padder', 10)
        vector = vector.at[:pad_width[0]].set(pad_value)
        vector = vector.at[vector.shape[0] - pad_width[1]:].set(pad_value)
        return vector
    a = jnp.arange(6).reshape((2, 3))
    out["callable"] = jnp.pad(a, 2, pad_with).tolist()
    out["callable_kw"] = jnp.pad(a, 2, pad_with, padder=100).tolist()
    out["callable_jit"] = jax.jit(lambda a: jnp.pad(a, 1, pad_with))(a * 1.0).tolist()
    out["mean_int"] = jnp.pad(jnp.array([1, 2, 4]), 2, mode="mean").tolist()
    out["linspace_axis"] = jnp.linspace(jnp.array([0., 1.]), jnp.array([1., 3.]), 5, axis=1).tolist()
    out["linspace_noend"] = jnp.linspace(0., 1., 7, endpoint=False).tolist()
    out["linspace_int"] = jnp.linspace(0, 10, 4, dtype=jnp.int32).tolist()
    return out


def pad_texts(jax, jnp, lax):
    x = jnp.arange(1., 6.)
    return {"pad_maximum": str(jax.make_jaxpr(lambda a: jnp.pad(a, 1, mode="maximum"))(x)),
            "pad_linear_ramp": str(jax.make_jaxpr(lambda a: jnp.pad(a, (1, 2), mode="linear_ramp"))(x)),
            "linspace": str(jax.make_jaxpr(lambda a, b: jnp.linspace(a, b, 4))(0., 1.))}


PAD_TEXTS = {'linspace': 'let _linspace = { lambda ; a:f32[] b:f32[]. let\n'
             '    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
             '    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
             '    e:f32[] = sub d c\n'
             '    f:f32[] = div e 3.0:f32[]\n'
             '    g:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] \n'
             '    h:f32[3] = div g 3.0:f32[]\n'
             '    i:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] c\n'
             '    j:f32[3] = sub 1.0:f32[] h\n'
             '    k:f32[3] = mul i j\n'
             '    l:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] d\n'
             '    m:f32[3] = mul l h\n'
             '    n:f32[3] = add k m\n'
             '    o:f32[1] = broadcast_in_dim d\n'
             '    p:f32[4] = concatenate[dimension=0] n o\n'
             '  in (p,) } in\n'
             '{ lambda ; q:f32[] r:f32[]. let\n'
             '    s:f32[4] = jit[name=_linspace jaxpr=_linspace] q r\n'
             '  in (s,) }',
 'pad_linear_ramp': 'let _linspace = { lambda ; a:i32[] b:f32[]. let\n'
                    '    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
                    '    d:f32[] = sub b c\n'
                    '    e:f32[] = div d 2.0:f32[]\n'
                    '    f:f32[2] = iota[dimension=0 dtype=float32 shape=(2,) sharding=None] \n'
                    '    g:f32[2] = div f 2.0:f32[]\n'
                    '    h:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] c\n'
                    '    i:f32[2] = sub 1.0:f32[] g\n'
                    '    j:f32[2] = mul h i\n'
                    '    k:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] b\n'
                    '    l:f32[2] = mul k g\n'
                    '    m:f32[2] = add j l\n'
                    '  in (m,) } in\n'
                    '{ lambda ; n:f32[5]. let\n'
                    '    o:f32[8] = jit[\n'
                    '      name=_pad\n'
                    '      jaxpr={ lambda ; n:f32[5] p:i32[]. let\n'
                    '          q:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] n\n'
                    '          r:f32[1] = slice[limit_indices=(5,) start_indices=(4,) strides=(1,)] n\n'
                    '          s:f32[] = squeeze[dimensions=(0,)] q\n'
                    '          t:f32[1] = jit[\n'
                    '            name=_linspace\n'
                    '            jaxpr={ lambda ; u:i32[] s:f32[]. let\n'
                    '                v:f32[] = convert_element_type[\n'
                    '                  new_dtype=float32\n'
                    '                  weak_type=False\n'
                    '                ] u\n'
                    '                w:f32[] = sub s v\n'
                    '                t:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] v\n'
                    '              in (t,) }\n'
                    '          ] 0:i32[] s\n'
                    '          x:f32[] = squeeze[dimensions=(0,)] r\n'
                    '          y:f32[2] = jit[name=_linspace jaxpr=_linspace] 0:i32[] x\n'
                    '          z:f32[2] = jit[\n'
                    '            name=_flip\n'
                    '            jaxpr={ lambda ; y:f32[2]. let\n'
                    '                z:f32[2] = rev[dimensions=(0,)] y\n'
                    '              in (z,) }\n'
                    '          ] y\n'
                    '          o:f32[8] = concatenate[dimension=0] t n z\n'
                    '        in (o,) }\n'
                    '    ] n 0:i32[]\n'
                    '  in (o,) }',
 'pad_maximum': '{ lambda ; a:f32[5]. let\n'
                '    b:f32[7] = jit[\n'
                '      name=_pad\n'
                '      jaxpr={ lambda ; a:f32[5] c:i32[]. let\n'
                '          d:f32[] = reduce_max[axes=(0,)] a\n'
                '          e:f32[1] = broadcast_in_dim d\n'
                '          f:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                '          g:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] f\n'
                '          h:f32[1,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                '          i:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] h\n'
                '          b:f32[7] = concatenate[dimension=0] g a i\n'
                '        in (b,) }\n'
                '    ] a 0:i32[]\n'
                '  in (b,) }'}
PAD_VALUES = {'callable': [[10, 10, 10, 10, 10, 10, 10], [10, 10, 10, 10, 10, 10, 10], [10, 10, 0, 1, 2, 10, 10],
              [10, 10, 3, 4, 5, 10, 10], [10, 10, 10, 10, 10, 10, 10], [10, 10, 10, 10, 10, 10, 10]],
 'callable_jit': [[10.0, 10.0, 10.0, 10.0, 10.0], [10.0, 0.0, 1.0, 2.0, 10.0], [10.0, 3.0, 4.0, 5.0, 10.0],
                  [10.0, 10.0, 10.0, 10.0, 10.0]],
 'callable_kw': [[100, 100, 100, 100, 100, 100, 100], [100, 100, 100, 100, 100, 100, 100],
                 [100, 100, 0, 1, 2, 100, 100], [100, 100, 3, 4, 5, 100, 100], [100, 100, 100, 100, 100, 100, 100],
                 [100, 100, 100, 100, 100, 100, 100]],
 'linear_ramp__1d': [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 3.3333334922790527, 1.6666667461395264, 0.0],
 'linear_ramp__2d': [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                     [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0],
                     [0.0, 4.0, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734, 0.0],
                     [0.0, 11.313708305358887, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344, 0.0]],
 'linear_ramp__grad': [2.5, 4.0, 6.0, 8.0, 15.55555534362793],
 'linear_ramp__int': [[0, 0, 0, 0, 0, 0], [0, 0, 1, 5, 2, 0], [0, 3, 7, 3, 4, 0], [0, 1, 3, 1, 2, 0],
                      [0, 0, 0, 0, 0, 0]],
 'linear_ramp__jit': [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                      [0.0, 0.0, 0.0, 0.5, 1.4142135381698608, 2.598076105117798, 1.299038052558899, 0.0],
                      [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 2.598076105117798, 0.0],
                      [0.0, 4.0, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734, 9.260129928588867,
                       0.0],
                      [0.0, 11.313708305358887, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                       18.241436004638672, 0.0],
                      [0.0, 5.656854152679443, 11.313708305358887, 13.5, 15.81138801574707, 18.241436004638672,
                       9.120718002319336, 0.0],
                      [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]],
 'linear_ramp_end_values=(5, -4)_1d': [5.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 2.000000238418579, -0.9999997615814209,
                                       -4.0],
 'linear_ramp_end_values=(5, -4)_2d': [[5.0, 5.0, 5.0, 5.0, 5.0, 5.0, -4.0],
                                       [5.0, 2.5, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, -4.0],
                                       [5.0, 6.5, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734,
                                        -4.0],
                                       [5.0, 13.813708305358887, 22.627416610717773, 27.0, 31.62277603149414,
                                        36.482872009277344, -4.0]],
 'linear_ramp_end_values=(5, -4)_grad': [5.0, 4.0, 6.0, 8.0, 12.0],
 'linear_ramp_end_values=(5, -4)_int': [[5, 5, 5, 5, 5, -4], [5, 3, 1, 5, 2, -4], [5, 6, 7, 3, 4, -4],
                                        [5, 3, 1, -1, 0, -4], [5, 0, -4, -4, -4, -4]],
 'linear_ramp_end_values=(5, -4)_jit': [[5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 0.5, -4.0],
                                        [5.0, 3.75, 2.5, 3.0, 3.9142136573791504, 5.098075866699219,
                                         0.5490379333496094, -4.0],
                                        [5.0, 2.5, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
                                         0.5980761051177979, -4.0],
                                        [5.0, 6.5, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734,
                                         7.260129928588867, -4.0],
                                        [5.0, 13.813708305358887, 22.627416610717773, 27.0, 31.62277603149414,
                                         36.482872009277344, 16.241436004638672, -4.0],
                                        [5.0, 7.156854152679443, 9.313708305358887, 11.5, 13.81138801574707,
                                         16.241436004638672, 6.120718002319336, -4.0],
                                        [5.0, 0.5, -4.0, -4.0, -4.0, -4.0, -4.0, -4.0]],
 'linspace_axis': [[0.0, 0.25, 0.5, 0.75, 1.0], [1.0, 1.5, 2.0, 2.5, 3.0]],
 'linspace_int': [0, 3, 6, 10],
 'linspace_noend': [0.0, 0.1428571492433548, 0.2857142984867096, 0.4285714626312256, 0.5714285969734192,
                    0.7142857313156128, 0.8571429252624512],
 'maximum__1d': [5.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 5.0],
 'maximum__2d': [[36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                  36.482872009277344, 36.482872009277344],
                 [5.196152210235596, 5.196152210235596, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
                  5.196152210235596],
                 [18.520259857177734, 18.520259857177734, 8.0, 11.180339813232422, 14.696938514709473,
                  18.520259857177734, 18.520259857177734],
                 [36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                  36.482872009277344, 36.482872009277344]],
 'maximum__grad': [2.0, 4.0, 6.0, 8.0, 60.0],
 'maximum__int': [[7, 7, 7, 5, 4, 7], [5, 5, 1, 5, 2, 5], [7, 7, 7, 3, 4, 7], [7, 7, 7, 5, 4, 7], [7, 7, 7, 5, 4, 7]],
 'maximum__jit': [[36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                   36.482872009277344, 36.482872009277344, 36.482872009277344],
                  [36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                   36.482872009277344, 36.482872009277344, 36.482872009277344],
                  [5.196152210235596, 5.196152210235596, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
                   5.196152210235596, 5.196152210235596],
                  [18.520259857177734, 18.520259857177734, 8.0, 11.180339813232422, 14.696938514709473,
                   18.520259857177734, 18.520259857177734, 18.520259857177734],
                  [36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                   36.482872009277344, 36.482872009277344, 36.482872009277344],
                  [36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                   36.482872009277344, 36.482872009277344, 36.482872009277344],
                  [36.482872009277344, 36.482872009277344, 22.627416610717773, 27.0, 31.62277603149414,
                   36.482872009277344, 36.482872009277344, 36.482872009277344]],
 'maximum_stat_length=2_1d': [2.0, 2.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0, 5.0],
 'maximum_stat_length=2_2d': [[11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 18.520259857177734],
                              [1.0, 1.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 5.196152210235596],
                              [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 18.520259857177734],
                              [27.0, 27.0, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                               36.482872009277344]],
 'maximum_stat_length=2_grad': [2.0, 12.0, 6.0, 8.0, 40.0],
 'maximum_stat_length=2_int': [[7, 7, 7, 5, 4, 5], [5, 5, 1, 5, 2, 5], [7, 7, 7, 3, 4, 4], [7, 7, 7, 5, 4, 5],
                               [7, 7, 7, 5, 4, 5]],
 'maximum_stat_length=2_jit': [[11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                                18.520259857177734, 18.520259857177734, 18.520259857177734],
                               [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                                18.520259857177734, 18.520259857177734, 18.520259857177734],
                               [1.0, 1.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 5.196152210235596,
                                5.196152210235596],
                               [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                                18.520259857177734, 18.520259857177734, 18.520259857177734],
                               [27.0, 27.0, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                                36.482872009277344, 36.482872009277344],
                               [27.0, 27.0, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                                36.482872009277344, 36.482872009277344],
                               [27.0, 27.0, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                                36.482872009277344, 36.482872009277344]],
 'mean__1d': [3.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 3.0, 3.0],
 'mean__2d': [[14.929598808288574, 14.929598808288574, 10.209138870239258, 13.060113906860352, 16.382713317871094,
               20.066429138183594, 14.929598808288574],
              [2.2561447620391846, 2.2561447620391846, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
               2.2561447620391846],
              [13.099384307861328, 13.099384307861328, 8.0, 11.180339813232422, 14.696938514709473,
               18.520259857177734, 13.099384307861328],
              [29.43326759338379, 29.43326759338379, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
               29.43326759338379]],
 'mean__grad': [8.0, 10.0, 12.0, 14.0, 16.0],
 'mean__int': [[4, 4, 4, 4, 3, 4], [3, 3, 1, 5, 2, 3], [5, 5, 7, 3, 4, 5], [4, 4, 4, 4, 3, 4], [4, 4, 4, 4, 3, 4]],
 'mean__jit': [[14.929598808288574, 14.929598808288574, 10.209138870239258, 13.060113906860352, 16.382713317871094,
                20.066429138183594, 14.929598808288574, 14.929598808288574],
               [14.929598808288574, 14.929598808288574, 10.209138870239258, 13.060113906860352, 16.382713317871094,
                20.066429138183594, 14.929598808288574, 14.929598808288574],
               [2.2561447620391846, 2.2561447620391846, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
                2.2561447620391846, 2.2561447620391846],
               [13.099384307861328, 13.099384307861328, 8.0, 11.180339813232422, 14.696938514709473,
                18.520259857177734, 13.099384307861328, 13.099384307861328],
               [29.43326759338379, 29.43326759338379, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                29.43326759338379, 29.43326759338379],
               [14.929598808288574, 14.929598808288574, 10.209138870239258, 13.060113906860352, 16.382713317871094,
                20.066429138183594, 14.929598808288574, 14.929598808288574],
               [14.929598808288574, 14.929598808288574, 10.209138870239258, 13.060113906860352, 16.382713317871094,
                20.066429138183594, 14.929598808288574, 14.929598808288574]],
 'mean_int': [2, 2, 1, 2, 4, 2, 2],
 'mean_stat_length=2_1d': [1.5, 1.5, 1.0, 2.0, 3.0, 4.0, 5.0, 4.5, 4.5, 4.5],
 'mean_stat_length=2_2d': [[5.0450849533081055, 5.0450849533081055, 4.0, 6.090169906616211, 8.762682914733887,
                            11.858205795288086, 10.310443878173828],
                           [0.5, 0.5, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 4.012289524078369],
                           [9.590169906616211, 9.590169906616211, 8.0, 11.180339813232422, 14.696938514709473,
                            18.520259857177734, 16.608598709106445],
                           [24.813709259033203, 24.813709259033203, 22.627416610717773, 27.0, 31.62277603149414,
                            36.482872009277344, 34.052825927734375]],
 'mean_stat_length=2_grad': [5.0, 7.0, 6.0, 21.5, 23.5],
 'mean_stat_length=2_int': [[4, 4, 4, 4, 3, 4], [3, 3, 1, 5, 2, 4], [5, 5, 7, 3, 4, 4], [4, 4, 4, 4, 3, 4],
                            [4, 4, 4, 4, 3, 4]],
 'mean_stat_length=2_jit': [[5.0450849533081055, 5.0450849533081055, 4.0, 6.090169906616211, 8.762682914733887,
                             11.858205795288086, 10.310443878173828, 10.310443878173828],
                            [5.0450849533081055, 5.0450849533081055, 4.0, 6.090169906616211, 8.762682914733887,
                             11.858205795288086, 10.310443878173828, 10.310443878173828],
                            [0.5, 0.5, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 4.012289524078369,
                             4.012289524078369],
                            [9.590169906616211, 9.590169906616211, 8.0, 11.180339813232422, 14.696938514709473,
                             18.520259857177734, 16.608598709106445, 16.608598709106445],
                            [24.813709259033203, 24.813709259033203, 22.627416610717773, 27.0, 31.62277603149414,
                             36.482872009277344, 34.052825927734375, 34.052825927734375],
                            [17.20193862915039, 17.20193862915039, 15.313708305358887, 19.09016990661621,
                             23.15985679626465, 27.50156593322754, 25.330711364746094, 25.330711364746094],
                            [17.20193862915039, 17.20193862915039, 15.313708305358887, 19.09016990661621,
                             23.15985679626465, 27.50156593322754, 25.330711364746094, 25.330711364746094]],
 'median__1d': [3.0, 3.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 3.0, 3.0],
 'median__2d': [[12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                 18.520259857177734, 12.938638687133789],
                [1.9142135381698608, 1.9142135381698608, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
                 1.9142135381698608],
                [12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                 18.520259857177734, 12.938638687133789],
                [29.31138801574707, 29.31138801574707, 22.627416610717773, 27.0, 31.62277603149414,
                 36.482872009277344, 29.31138801574707]],
 'median__grad': [2.0, 4.0, 36.0, 8.0, 10.0],
 'median__int': [[4, 4, 4, 4, 3, 4], [2, 2, 1, 5, 2, 2], [4, 4, 7, 3, 4, 4], [4, 4, 4, 4, 3, 4], [4, 4, 4, 4, 3, 4]],
 'median__jit': [[12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                  18.520259857177734, 12.938638687133789, 12.938638687133789],
                 [12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                  18.520259857177734, 12.938638687133789, 12.938638687133789],
                 [1.9142135381698608, 1.9142135381698608, 0.0, 1.0, 2.8284270763397217, 5.196152210235596,
                  1.9142135381698608, 1.9142135381698608],
                 [12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                  18.520259857177734, 12.938638687133789, 12.938638687133789],
                 [29.31138801574707, 29.31138801574707, 22.627416610717773, 27.0, 31.62277603149414,
                  36.482872009277344, 29.31138801574707, 29.31138801574707],
                 [12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                  18.520259857177734, 12.938638687133789, 12.938638687133789],
                 [12.938638687133789, 12.938638687133789, 8.0, 11.180339813232422, 14.696938514709473,
                  18.520259857177734, 12.938638687133789, 12.938638687133789]],
 'median_stat_length=3_1d': [2.0, 2.0, 1.0, 2.0, 3.0, 4.0, 5.0, 4.0, 4.0, 4.0],
 'median_stat_length=3_2d': [[11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                              18.520259857177734, 14.696938514709473],
                             [1.0, 1.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 2.8284270763397217],
                             [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                              18.520259857177734, 14.696938514709473],
                             [27.0, 27.0, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                              31.62277603149414]],
 'median_stat_length=3_grad': [2.0, 12.0, 6.0, 32.0, 10.0],
 'median_stat_length=3_int': [[4, 4, 4, 4, 3, 4], [2, 2, 1, 5, 2, 2], [4, 4, 7, 3, 4, 4], [4, 4, 4, 4, 3, 4],
                              [4, 4, 4, 4, 3, 4]],
 'median_stat_length=3_jit': [[11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 14.696938514709473, 14.696938514709473],
                              [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 14.696938514709473, 14.696938514709473],
                              [1.0, 1.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 2.8284270763397217,
                               2.8284270763397217],
                              [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 14.696938514709473, 14.696938514709473],
                              [27.0, 27.0, 22.627416610717773, 27.0, 31.62277603149414, 36.482872009277344,
                               31.62277603149414, 31.62277603149414],
                              [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 14.696938514709473, 14.696938514709473],
                              [11.180339813232422, 11.180339813232422, 8.0, 11.180339813232422, 14.696938514709473,
                               18.520259857177734, 14.696938514709473, 14.696938514709473]],
 'minimum_stat_length=(1, 3)_1d': [1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 3.0, 3.0],
 'minimum_stat_length=(1, 3)_2d': [[0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0],
                                   [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0],
                                   [8.0, 8.0, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734,
                                    11.180339813232422],
                                   [22.627416610717773, 22.627416610717773, 22.627416610717773, 27.0,
                                    31.62277603149414, 36.482872009277344, 27.0]],
 'minimum_stat_length=(1, 3)_grad': [6.0, 4.0, 24.0, 8.0, 10.0],
 'minimum_stat_length=(1, 3)_int': [[1, 1, 1, 5, 2, 1], [1, 1, 1, 5, 2, 1], [7, 7, 7, 3, 4, 3], [1, 1, 1, 3, 2, 1],
                                    [1, 1, 1, 3, 2, 1]],
 'minimum_stat_length=(1, 3)_jit': [[0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0, 1.0],
                                    [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0, 1.0],
                                    [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0, 1.0],
                                    [8.0, 8.0, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734,
                                     11.180339813232422, 11.180339813232422],
                                    [22.627416610717773, 22.627416610717773, 22.627416610717773, 27.0,
                                     31.62277603149414, 36.482872009277344, 27.0, 27.0],
                                    [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0, 1.0],
                                    [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 1.0, 1.0]],
 'minimum_stat_length=10_1d': [1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 1.0, 1.0],
 'minimum_stat_length=10_2d': [[0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0],
                               [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0],
                               [8.0, 8.0, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734, 8.0],
                               [22.627416610717773, 22.627416610717773, 22.627416610717773, 27.0, 31.62277603149414,
                                36.482872009277344, 22.627416610717773]],
 'minimum_stat_length=10_grad': [12.0, 4.0, 6.0, 8.0, 10.0],
 'minimum_stat_length=10_int': [[1, 1, 1, 3, 2, 1], [1, 1, 1, 5, 2, 1], [3, 3, 7, 3, 4, 3], [1, 1, 1, 3, 2, 1],
                                [1, 1, 1, 3, 2, 1]],
 'minimum_stat_length=10_jit': [[0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0, 0.0],
                                [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0, 0.0],
                                [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0, 0.0],
                                [8.0, 8.0, 8.0, 11.180339813232422, 14.696938514709473, 18.520259857177734, 8.0, 8.0],
                                [22.627416610717773, 22.627416610717773, 22.627416610717773, 27.0, 31.62277603149414,
                                 36.482872009277344, 22.627416610717773, 22.627416610717773],
                                [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0, 0.0],
                                [0.0, 0.0, 0.0, 1.0, 2.8284270763397217, 5.196152210235596, 0.0, 0.0]],
 'ramp_pairs': [[3, 2, 1, 1, 1, 2, 4], [3, 2, 1, 3, 1, 2, 4], [3, 2, 1, 5, 2, 3, 4], [3, 5, 7, 3, 4, 4, 4],
                [3, 3, 4, 2, 3, 3, 4], [3, 2, 2, 2, 2, 3, 4]]}


@pytest.mark.parametrize("name", sorted(PAD_TEXTS))
def test_pad_jaxpr_text_as_jax(name):
    assert pad_texts(jax, jnp, lax)[name] == PAD_TEXTS[name]


def test_pad_values_as_jax():
    got = pad_values(jax, jnp, lax)
    assert sorted(got) == sorted(PAD_VALUES)
    for k, want in PAD_VALUES.items():
        # (mean sums in another order than XLA: the last float32 digit may differ)
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=2e-7 * 4,
                                   err_msg=k)


def test_pad_matches_numpy_pad():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5)).astype(np.float32)
    for mode, kw in [("linear_ramp", dict(end_values=((1., -2.), (0.5, 3.)))), ("maximum", dict(stat_length=(2, 3))),
                     ("minimum", {}), ("mean", dict(stat_length=((1, 2), (3, 1)))), ("median", dict(stat_length=2))]:
        np.testing.assert_allclose(np.asarray(jnp.pad(x, ((1, 2), (3, 0)), mode=mode, **kw)),
                                   np.pad(x, ((1, 2), (3, 0)), mode=mode, **kw), rtol=1e-5, atol=1e-6, err_msg=mode)


def test_pad_mode_errors_as_jax():
    with pytest.raises(ValueError, match="stat_length of 0 yields no value for padding"):
        jnp.pad(jnp.ones(3), 2, mode="mean", stat_length=0)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'mean': {'end_values'}"):
        jnp.pad(jnp.ones(3), 2, mode="mean", end_values=0)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'nope' for np.pad."):
        jnp.pad(jnp.ones(3), 2, mode="nope")
