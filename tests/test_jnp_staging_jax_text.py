"""``jnp``/``jax.nn`` functions staged as JAX 0.10.2 stages them (printed jaxprs recorded from JAX and written
here): ``jnp.pad`` as the jitted ``_pad`` (widths as NumPy ints), ``jnp.var``/``std`` as the jitted
``_var``/``_std`` (count, correction, the ``_where`` guarding a non-positive count), keepdims through
``broadcast_in_dim``, a ``where=`` mask as one jitted ``_where`` with the op's identity, ``initial`` combined as
``op(initial, result)``, ``jax.nn.softmax`` through ``stop_gradient`` (JAX's default without the custom jvp),
``jnp.tile`` as one ``tile`` primitive; and their values against NumPy."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def _cases(jax, jnp, lax):
    """The same cases run under cranax here and under JAX to record ``JAX_TEXTS``."""
    x = jnp.ones((2, 3))
    J = jax.make_jaxpr
    return {
        "pad": lambda: J(lambda x: jnp.pad(x, 1))(x),
        "pad_pairs": lambda: J(lambda x: jnp.pad(x, ((1, 2), (0, 1))))(x),
        "pad_edge": lambda: J(lambda x: jnp.pad(x, 1, mode="edge"))(x),
        "pad_wrap": lambda: J(lambda x: jnp.pad(x, (2, 1), mode="wrap"))(x),
        "pad_reflect": lambda: J(lambda x: jnp.pad(x, ((0, 0), (2, 3)), mode="reflect"))(x),
        "pad_symmetric_odd": lambda: J(lambda x: jnp.pad(x, (1, 2), mode="symmetric", reflect_type="odd"))(x),
        "var": lambda: J(lambda x: jnp.var(x))(x),
        "var_axis": lambda: J(lambda x: jnp.var(x, axis=0))(x),
        "var_int": lambda: J(lambda x: jnp.var(jnp.arange(3)))(x),
        "var_where_ddof": lambda: J(lambda x: jnp.var(x, axis=1, ddof=1, where=x > 0))(x),
        "std_axis": lambda: J(lambda x: jnp.std(x, axis=0))(x),
        "mean_keepdims": lambda: J(lambda x: jnp.mean(x, keepdims=True))(x),
        "mean_where": lambda: J(lambda x: jnp.mean(x, axis=0, keepdims=True, where=x > 0))(x),
        "sum_keepdims": lambda: J(lambda x: jnp.sum(x, axis=0, keepdims=True))(x),
        "sum_initial": lambda: J(lambda x: jnp.sum(x, initial=3, axis=0, keepdims=True))(x),
        "max_initial": lambda: J(lambda x: jnp.max(jnp.arange(3), initial=3.5))(x),
        "min_where": lambda: J(lambda x: jnp.min(x, axis=1, where=x > 0, initial=2.0))(x),
        "softmax": lambda: J(lambda x: jax.nn.softmax(x))(x),
        "softmax_where": lambda: J(lambda x: jax.nn.softmax(x, where=x > 0))(x),
        "tile": lambda: J(lambda x: jnp.tile(x, (2, 1)))(x),
        "tile_int": lambda: J(lambda x: jnp.tile(x, 2))(x),
        "tile_more_reps": lambda: J(lambda x: jnp.tile(x, (2, 1, 3)))(x),
        "tile_vmap": lambda: J(jax.vmap(lambda r: jnp.tile(r, 3)))(x),
        "vmap_dynamic_slice": lambda: J(jax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))))(
            jnp.ones((3, 4)), jnp.arange(3)),
        "vmap_dynamic_slice_2d": lambda: J(jax.vmap(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2))))(
            jnp.ones((3, 4, 5)), jnp.arange(3)),
        "vmap_dynamic_slice_operand": lambda: J(jax.vmap(lambda x: lax.dynamic_slice(x, (1,), (2,))))(
            jnp.ones((3, 4))),
        "vmap_dynamic_slice_index": lambda: J(jax.vmap(lambda i: lax.dynamic_slice(jnp.ones(4), (i,), (2,))))(
            jnp.arange(3)),
        "lax_gather": lambda: J(lambda x, i: lax.gather(
            x, i, lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
            (1, 3), mode="clip"))(x, jnp.zeros((2, 1), jnp.int32)),
        "lax_scatter_add": lambda: J(lambda x, i, u: lax.scatter_add(
            x, i, u, lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                                 scatter_dims_to_operand_dims=(0,)),
            mode="promise_in_bounds"))(x, jnp.zeros((2, 1), jnp.int32), jnp.ones((2, 3))),
    }


# Recorded from JAX 0.10.2 (str(jax.make_jaxpr(...)) of the same cases).
JAX_TEXTS = {'lax_gather': '{ lambda ; a:f32[2,3] b:i32[2,1]. let\n'
               '    c:f32[2,3] = gather[\n'
               '      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), '
               'start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n'
               '      fill_value=None\n'
               '      indices_are_sorted=False\n'
               '      mode=GatherScatterMode.CLIP\n'
               '      slice_sizes=(1, 3)\n'
               '      unique_indices=False\n'
               '    ] a b\n'
               '  in (c,) }',
 'lax_scatter_add': '{ lambda ; a:f32[2,3] b:i32[2,1] c:f32[2,3]. let\n'
                    '    d:f32[2,3] = scatter-add[\n'
                    '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(1,), '
                    'inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), '
                    'scatter_indices_batching_dims=())\n'
                    '      indices_are_sorted=False\n'
                    '      mode=GatherScatterMode.PROMISE_IN_BOUNDS\n'
                    '      unique_indices=False\n'
                    '      update_consts=()\n'
                    '      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = add e f in (g,) }\n'
                    '    ] a b c\n'
                    '  in (d,) }',
 'max_initial': '{ lambda ; a:f32[2,3]. let\n'
                '    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] \n'
                '    c:i32[] = reduce_max[axes=(0,)] b\n'
                '    d:i32[] = max 3:i32[] c\n'
                '  in (d,) }',
 'mean_keepdims': '{ lambda ; a:f32[2,3]. let\n'
                  '    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a\n'
                  '    c:f32[1,1] = broadcast_in_dim b\n'
                  '    d:f32[1,1] = div c 6.0:f32[]\n'
                  '  in (d,) }',
 'mean_where': '{ lambda ; a:f32[2,3]. let\n'
               '    b:bool[2,3] = gt a 0.0:f32[]\n'
               '    c:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] b\n'
               '    d:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
               '    e:f32[3] = reduce_sum[axes=(0,) out_sharding=None] d\n'
               '    f:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] e\n'
               '    g:f32[2,3] = jit[\n'
               '      name=_where\n'
               '      jaxpr={ lambda ; b:bool[2,3] a:f32[2,3] h:f32[]. let\n'
               '          i:f32[2,3] = broadcast_in_dim h\n'
               '          g:f32[2,3] = select_n b i a\n'
               '        in (g,) }\n'
               '    ] b a 0.0:f32[]\n'
               '    j:f32[3] = reduce_sum[axes=(0,) out_sharding=None] g\n'
               '    k:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] j\n'
               '    l:f32[1,3] = div k f\n'
               '  in (l,) }',
 'min_where': '{ lambda ; a:f32[2,3]. let\n'
              '    b:bool[2,3] = gt a 0.0:f32[]\n'
              '    c:f32[2,3] = jit[\n'
              '      name=_where\n'
              '      jaxpr={ lambda ; b:bool[2,3] a:f32[2,3] d:f32[]. let\n'
              '          e:f32[2,3] = broadcast_in_dim d\n'
              '          c:f32[2,3] = select_n b e a\n'
              '        in (c,) }\n'
              '    ] b a inf:f32[]\n'
              '    f:f32[2] = reduce_min[axes=(1,)] c\n'
              '    g:f32[2] = min 2.0:f32[] f\n'
              '  in (g,) }',
 'pad': '{ lambda ; a:f32[2,3]. let\n'
        '    b:f32[4,5] = jit[\n'
        '      name=_pad\n'
        '      jaxpr={ lambda ; a:f32[2,3] c:i32[]. let\n'
        '          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
        '          b:f32[4,5] = pad[\n'
        '            padding_config=((np.int64(1), np.int64(1), 0), (np.int64(1), np.int64(1), 0))\n'
        '          ] a d\n'
        '        in (b,) }\n'
        '    ] a 0:i32[]\n'
        '  in (b,) }',
 'pad_edge': 'let _pad = { lambda ; a:f32[2,3] b:i32[]. let\n'
             '    c:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] a\n'
             '    d:f32[1,1,3] = broadcast_in_dim[broadcast_dimensions=(0, 2)] c\n'
             '    e:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] d\n'
             '    f:f32[1,3] = slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] a\n'
             '    g:f32[1,1,3] = broadcast_in_dim[broadcast_dimensions=(0, 2)] f\n'
             '    h:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] g\n'
             '    i:f32[4,3] = concatenate[dimension=0] e a h\n'
             '    j:f32[4,1] = slice[limit_indices=(4, 1) start_indices=(0, 0) strides=(1, 1)] i\n'
             '    k:f32[4,1,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] j\n'
             '    l:f32[4,1] = reshape[dimensions=None new_sizes=(4, 1) sharding=None] k\n'
             '    m:f32[4,1] = slice[limit_indices=(4, 3) start_indices=(0, 2) strides=(1, 1)] i\n'
             '    n:f32[4,1,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] m\n'
             '    o:f32[4,1] = reshape[dimensions=None new_sizes=(4, 1) sharding=None] n\n'
             '    p:f32[4,5] = concatenate[dimension=1] l i o\n'
             '  in (p,) } in\n'
             '{ lambda ; q:f32[2,3]. let\n'
             '    r:f32[4,5] = jit[name=_pad jaxpr=_pad] q 0:i32[]\n'
             '  in (r,) }',
 'pad_pairs': '{ lambda ; a:f32[2,3]. let\n'
              '    b:f32[5,4] = jit[\n'
              '      name=_pad\n'
              '      jaxpr={ lambda ; a:f32[2,3] c:i32[]. let\n'
              '          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
              '          b:f32[5,4] = pad[\n'
              '            padding_config=((np.int64(1), np.int64(2), 0), (np.int64(0), np.int64(1), 0))\n'
              '          ] a d\n'
              '        in (b,) }\n'
              '    ] a 0:i32[]\n'
              '  in (b,) }',
 'pad_reflect': 'let _pad = { lambda ; a:f32[2,3] b:i32[]. let\n'
                '    c:f32[2,1] = slice[limit_indices=(2, 1) start_indices=(0, 0) strides=(1, 1)] a\n'
                '    d:f32[2,2] = slice[limit_indices=(2, 3) start_indices=(0, 1) strides=(1, 1)] a\n'
                '    e:f32[2,2] = jit[name=_flip jaxpr=_flip] d\n'
                '    f:f32[2,5] = concatenate[dimension=1] e a\n'
                '    g:f32[2,1] = slice[limit_indices=(2, 5) start_indices=(0, 4) strides=(1, 1)] f\n'
                '    h:f32[2,2] = slice[limit_indices=(2, 4) start_indices=(0, 2) strides=(1, 1)] f\n'
                '    i:f32[2,2] = jit[name=_flip jaxpr=_flip] h\n'
                '    j:f32[2,7] = concatenate[dimension=1] f i\n'
                '    k:f32[2,1] = slice[limit_indices=(2, 6) start_indices=(0, 5) strides=(1, 1)] j\n'
                '    l:f32[2,1] = jit[\n'
                '      name=_flip\n'
                '      jaxpr={ lambda ; k:f32[2,1]. let\n'
                '          l:f32[2,1] = rev[dimensions=(1,)] k\n'
                '        in (l,) }\n'
                '    ] k\n'
                '    m:f32[2,8] = concatenate[dimension=1] j l\n'
                '  in (m,) } in\n'
                'let _flip = { lambda ; n:f32[2,2]. let\n'
                '    o:f32[2,2] = rev[dimensions=(1,)] n\n'
                '  in (o,) } in\n'
                '{ lambda ; p:f32[2,3]. let\n'
                '    q:f32[2,8] = jit[name=_pad jaxpr=_pad] p 0:i32[]\n'
                '  in (q,) }',
 'pad_symmetric_odd': 'let _pad = { lambda ; a:f32[2,3] b:i32[]. let\n'
                      '    c:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] a\n'
                      '    d:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] a\n'
                      '    e:f32[1,3] = jit[\n'
                      '      name=_flip\n'
                      '      jaxpr={ lambda ; d:f32[1,3]. let\n'
                      '          e:f32[1,3] = rev[dimensions=(0,)] d\n'
                      '        in (e,) }\n'
                      '    ] d\n'
                      '    f:f32[1,3] = mul 2.0:f32[] c\n'
                      '    g:f32[1,3] = sub f e\n'
                      '    h:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] g\n'
                      '    i:f32[3,3] = concatenate[dimension=0] g a\n'
                      '    j:f32[1,3] = slice[limit_indices=(3, 3) start_indices=(2, 0) strides=(1, 1)] i\n'
                      '    k:f32[2,3] = slice[limit_indices=(3, 3) start_indices=(1, 0) strides=(1, 1)] i\n'
                      '    l:f32[2,3] = jit[\n'
                      '      name=_flip\n'
                      '      jaxpr={ lambda ; k:f32[2,3]. let\n'
                      '          l:f32[2,3] = rev[dimensions=(0,)] k\n'
                      '        in (l,) }\n'
                      '    ] k\n'
                      '    m:f32[1,3] = mul 2.0:f32[] j\n'
                      '    n:f32[2,3] = sub m l\n'
                      '    o:f32[1,3] = slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] n\n'
                      '    p:f32[5,3] = concatenate[dimension=0] i n\n'
                      '    q:f32[5,1] = slice[limit_indices=(5, 1) start_indices=(0, 0) strides=(1, 1)] p\n'
                      '    r:f32[5,1] = slice[limit_indices=(5, 1) start_indices=(0, 0) strides=(1, 1)] p\n'
                      '    s:f32[5,1] = jit[\n'
                      '      name=_flip\n'
                      '      jaxpr={ lambda ; r:f32[5,1]. let\n'
                      '          s:f32[5,1] = rev[dimensions=(1,)] r\n'
                      '        in (s,) }\n'
                      '    ] r\n'
                      '    t:f32[5,1] = mul 2.0:f32[] q\n'
                      '    u:f32[5,1] = sub t s\n'
                      '    v:f32[5,1] = slice[limit_indices=(5, 1) start_indices=(0, 0) strides=(1, 1)] u\n'
                      '    w:f32[5,4] = concatenate[dimension=1] u p\n'
                      '    x:f32[5,1] = slice[limit_indices=(5, 4) start_indices=(0, 3) strides=(1, 1)] w\n'
                      '    y:f32[5,2] = slice[limit_indices=(5, 4) start_indices=(0, 2) strides=(1, 1)] w\n'
                      '    z:f32[5,2] = jit[\n'
                      '      name=_flip\n'
                      '      jaxpr={ lambda ; y:f32[5,2]. let\n'
                      '          z:f32[5,2] = rev[dimensions=(1,)] y\n'
                      '        in (z,) }\n'
                      '    ] y\n'
                      '    ba:f32[5,1] = mul 2.0:f32[] x\n'
                      '    bb:f32[5,2] = sub ba z\n'
                      '    bc:f32[5,1] = slice[\n'
                      '      limit_indices=(5, 2)\n'
                      '      start_indices=(0, 1)\n'
                      '      strides=(1, 1)\n'
                      '    ] bb\n'
                      '    bd:f32[5,6] = concatenate[dimension=1] w bb\n'
                      '  in (bd,) } in\n'
                      '{ lambda ; be:f32[2,3]. let\n'
                      '    bf:f32[5,6] = jit[name=_pad jaxpr=_pad] be 0:i32[]\n'
                      '  in (bf,) }',
 'pad_wrap': '{ lambda ; a:f32[2,3]. let\n'
             '    b:f32[5,6] = jit[\n'
             '      name=_pad\n'
             '      jaxpr={ lambda ; a:f32[2,3] c:i32[]. let\n'
             '          d:f32[1,3] = slice[\n'
             '            limit_indices=(1, 3)\n'
             '            start_indices=(0, 0)\n'
             '            strides=(1, 1)\n'
             '          ] a\n'
             '          e:f32[5,3] = concatenate[dimension=0] a a d\n'
             '          f:f32[5,2] = slice[\n'
             '            limit_indices=(5, 3)\n'
             '            start_indices=(0, 1)\n'
             '            strides=(1, 1)\n'
             '          ] e\n'
             '          g:f32[5,1] = slice[\n'
             '            limit_indices=(5, 1)\n'
             '            start_indices=(0, 0)\n'
             '            strides=(1, 1)\n'
             '          ] e\n'
             '          b:f32[5,6] = concatenate[dimension=1] f e g\n'
             '        in (b,) }\n'
             '    ] a 0:i32[]\n'
             '  in (b,) }',
 'softmax': '{ lambda ; a:f32[2,3]. let\n'
            '    b:f32[2] = reduce_max[axes=(1,)] a\n'
            '    c:f32[2] = max -inf:f32[] b\n'
            '    d:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c\n'
            '    e:f32[2,1] = stop_gradient d\n'
            '    f:f32[2,3] = sub a e\n'
            '    g:f32[2,3] = exp f\n'
            '    h:f32[2] = reduce_sum[axes=(1,) out_sharding=None] g\n'
            '    i:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] h\n'
            '    j:f32[2,3] = div g i\n'
            '  in (j,) }',
 'softmax_where': 'let _where = { lambda ; a:bool[2,3] b:f32[2,3] c:f32[]. let\n'
                  '    d:f32[2,3] = broadcast_in_dim c\n'
                  '    e:f32[2,3] = select_n a d b\n'
                  '  in (e,) } in\n'
                  '{ lambda ; f:f32[2,3]. let\n'
                  '    g:bool[2,3] = gt f 0.0:f32[]\n'
                  '    h:f32[2,3] = jit[name=_where jaxpr=_where] g f -inf:f32[]\n'
                  '    i:f32[2] = reduce_max[axes=(1,)] h\n'
                  '    j:f32[2] = max -inf:f32[] i\n'
                  '    k:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] j\n'
                  '    l:f32[2,3] = jit[\n'
                  '      name=_where\n'
                  '      jaxpr={ lambda ; g:bool[2,3] f:f32[2,3] m:f32[]. let\n'
                  '          n:f32[] = convert_element_type[new_dtype=float32 weak_type=False] m\n'
                  '          o:f32[2,3] = broadcast_in_dim n\n'
                  '          l:f32[2,3] = select_n g o f\n'
                  '        in (l,) }\n'
                  '    ] g f -inf:f32[]\n'
                  '    p:f32[2,1] = stop_gradient k\n'
                  '    q:f32[2,3] = sub l p\n'
                  '    r:f32[2,3] = exp q\n'
                  '    s:f32[2,3] = jit[name=_where jaxpr=_where] g r 0.0:f32[]\n'
                  '    t:f32[2] = reduce_sum[axes=(1,) out_sharding=None] s\n'
                  '    u:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] t\n'
                  '    v:f32[2,3] = div r u\n'
                  '    w:f32[2,3] = jit[\n'
                  '      name=_where\n'
                  '      jaxpr={ lambda ; g:bool[2,3] v:f32[2,3] x:i32[]. let\n'
                  '          y:f32[] = convert_element_type[new_dtype=float32 weak_type=False] x\n'
                  '          z:f32[2,3] = broadcast_in_dim y\n'
                  '          w:f32[2,3] = select_n g z v\n'
                  '        in (w,) }\n'
                  '    ] g v 0:i32[]\n'
                  '  in (w,) }',
 'std_axis': 'let _var = { lambda ; a:f32[2,3] b:i32[]. let\n'
             '    c:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n'
             '    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n'
             '    e:f32[1,3] = div d 2.0:f32[]\n'
             '    f:f32[2,3] = sub a e\n'
             '    g:f32[2,3] = square f\n'
             '    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
             '    i:f32[] = sub 2.0:f32[] h\n'
             '    j:f32[3] = reduce_sum[axes=(0,) out_sharding=None] g\n'
             '    k:f32[3] = div j i\n'
             '    l:bool[] = gt i 0.0:f32[]\n'
             '    m:f32[3] = jit[\n'
             '      name=_where\n'
             '      jaxpr={ lambda ; l:bool[] k:f32[3] n:f32[]. let\n'
             '          o:f32[] = convert_element_type[new_dtype=float32 weak_type=False] n\n'
             '          p:f32[3] = broadcast_in_dim o\n'
             '          m:f32[3] = select_n l p k\n'
             '        in (m,) }\n'
             '    ] l k nan:f32[]\n'
             '  in (m,) } in\n'
             '{ lambda ; q:f32[2,3]. let\n'
             '    r:f32[3] = jit[\n'
             '      name=_std\n'
             '      jaxpr={ lambda ; q:f32[2,3] s:i32[]. let\n'
             '          t:f32[3] = jit[name=_var jaxpr=_var] q s\n'
             '          r:f32[3] = sqrt t\n'
             '        in (r,) }\n'
             '    ] q 0:i32[]\n'
             '  in (r,) }',
 'sum_initial': '{ lambda ; a:f32[2,3]. let\n'
                '    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n'
                '    c:f32[3] = add 3.0:f32[] b\n'
                '    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n'
                '  in (d,) }',
 'sum_keepdims': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n'
                 '    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n'
                 '  in (c,) }',
 'tile': '{ lambda ; a:f32[2,3]. let b:f32[4,3] = tile[reps=(2, 1)] a in (b,) }',
 'tile_int': '{ lambda ; a:f32[2,3]. let b:f32[2,6] = tile[reps=(1, 2)] a in (b,) }',
 'tile_more_reps': '{ lambda ; a:f32[2,3]. let\n'
                   '    b:f32[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n'
                   '    c:f32[2,2,9] = tile[reps=(2, 1, 3)] b\n'
                   '  in (c,) }',
 'tile_vmap': '{ lambda ; a:f32[2,3]. let b:f32[2,9] = tile[reps=(1, 3)] a in (b,) }',
 'var': 'let _var = { lambda ; a:f32[2,3] b:i32[]. let\n'
        '    c:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a\n'
        '    d:f32[1,1] = broadcast_in_dim c\n'
        '    e:f32[1,1] = div d 6.0:f32[]\n'
        '    f:f32[2,3] = sub a e\n'
        '    g:f32[2,3] = square f\n'
        '    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
        '    i:f32[] = sub 6.0:f32[] h\n'
        '    j:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] g\n'
        '    k:f32[] = div j i\n'
        '    l:bool[] = gt i 0.0:f32[]\n'
        '    m:f32[] = jit[\n'
        '      name=_where\n'
        '      jaxpr={ lambda ; l:bool[] k:f32[] n:f32[]. let\n'
        '          o:f32[] = convert_element_type[new_dtype=float32 weak_type=False] n\n'
        '          m:f32[] = select_n l o k\n'
        '        in (m,) }\n'
        '    ] l k nan:f32[]\n'
        '  in (m,) } in\n'
        '{ lambda ; p:f32[2,3]. let\n'
        '    q:f32[] = jit[name=_var jaxpr=_var] p 0:i32[]\n'
        '  in (q,) }',
 'var_axis': 'let _var = { lambda ; a:f32[2,3] b:i32[]. let\n'
             '    c:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n'
             '    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n'
             '    e:f32[1,3] = div d 2.0:f32[]\n'
             '    f:f32[2,3] = sub a e\n'
             '    g:f32[2,3] = square f\n'
             '    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
             '    i:f32[] = sub 2.0:f32[] h\n'
             '    j:f32[3] = reduce_sum[axes=(0,) out_sharding=None] g\n'
             '    k:f32[3] = div j i\n'
             '    l:bool[] = gt i 0.0:f32[]\n'
             '    m:f32[3] = jit[\n'
             '      name=_where\n'
             '      jaxpr={ lambda ; l:bool[] k:f32[3] n:f32[]. let\n'
             '          o:f32[] = convert_element_type[new_dtype=float32 weak_type=False] n\n'
             '          p:f32[3] = broadcast_in_dim o\n'
             '          m:f32[3] = select_n l p k\n'
             '        in (m,) }\n'
             '    ] l k nan:f32[]\n'
             '  in (m,) } in\n'
             '{ lambda ; q:f32[2,3]. let\n'
             '    r:f32[3] = jit[name=_var jaxpr=_var] q 0:i32[]\n'
             '  in (r,) }',
 'var_int': 'let _var = { lambda ; a:i32[3] b:i32[]. let\n'
            '    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
            '    d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n'
            '    e:f32[1] = broadcast_in_dim d\n'
            '    f:f32[1] = div e 3.0:f32[]\n'
            '    g:f32[3] = sub c f\n'
            '    h:f32[3] = square g\n'
            '    i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
            '    j:f32[] = sub 3.0:f32[] i\n'
            '    k:f32[] = reduce_sum[axes=(0,) out_sharding=None] h\n'
            '    l:f32[] = div k j\n'
            '    m:bool[] = gt j 0.0:f32[]\n'
            '    n:f32[] = jit[\n'
            '      name=_where\n'
            '      jaxpr={ lambda ; m:bool[] l:f32[] o:f32[]. let\n'
            '          p:f32[] = convert_element_type[new_dtype=float32 weak_type=False] o\n'
            '          n:f32[] = select_n m p l\n'
            '        in (n,) }\n'
            '    ] m l nan:f32[]\n'
            '  in (n,) } in\n'
            '{ lambda ; q:f32[2,3]. let\n'
            '    r:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] \n'
            '    s:f32[] = jit[name=_var jaxpr=_var] r 0:i32[]\n'
            '  in (s,) }',
 'var_where_ddof': 'let _var = { lambda ; a:f32[2,3] b:i32[] c:bool[2,3]. let\n'
                   '    d:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
                   '    e:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
                   '    f:f32[2] = reduce_sum[axes=(1,) out_sharding=None] e\n'
                   '    g:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f\n'
                   '    h:f32[2,3] = jit[name=_where jaxpr=_where] c a 0.0:f32[]\n'
                   '    i:f32[2] = reduce_sum[axes=(1,) out_sharding=None] h\n'
                   '    j:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] i\n'
                   '    k:f32[2,1] = div j g\n'
                   '    l:f32[2,3] = sub a k\n'
                   '    m:f32[2,3] = square l\n'
                   '    n:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
                   '    o:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] n\n'
                   '    p:f32[2] = reduce_sum[axes=(1,) out_sharding=None] o\n'
                   '    q:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
                   '    r:f32[2] = sub p q\n'
                   '    s:f32[2,3] = jit[name=_where jaxpr=_where] c m 0.0:f32[]\n'
                   '    t:f32[2] = reduce_sum[axes=(1,) out_sharding=None] s\n'
                   '    u:f32[2] = div t r\n'
                   '    v:bool[2] = gt r 0.0:f32[]\n'
                   '    w:f32[2] = jit[\n'
                   '      name=_where\n'
                   '      jaxpr={ lambda ; v:bool[2] u:f32[2] x:f32[]. let\n'
                   '          y:f32[] = convert_element_type[new_dtype=float32 weak_type=False] x\n'
                   '          z:f32[2] = broadcast_in_dim y\n'
                   '          w:f32[2] = select_n v z u\n'
                   '        in (w,) }\n'
                   '    ] v u nan:f32[]\n'
                   '  in (w,) } in\n'
                   'let _where = { lambda ; ba:bool[2,3] bb:f32[2,3] bc:f32[]. let\n'
                   '    bd:f32[2,3] = broadcast_in_dim bc\n'
                   '    be:f32[2,3] = select_n ba bd bb\n'
                   '  in (be,) } in\n'
                   '{ lambda ; bf:f32[2,3]. let\n'
                   '    bg:bool[2,3] = gt bf 0.0:f32[]\n'
                   '    bh:f32[2] = jit[name=_var jaxpr=_var] bf 1:i32[] bg\n'
                   '  in (bh,) }',
 'vmap_dynamic_slice': '{ lambda ; a:f32[3,4] b:i32[3]. let\n'
                       '    c:bool[3] = lt b 0:i32[]\n'
                       '    d:i32[3] = add b 4:i32[]\n'
                       '    e:i32[3] = select_n c b d\n'
                       '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                       '    g:f32[3,2] = gather[\n'
                       '      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1),), '
                       'collapsed_slice_dims=(), start_index_map=(np.int64(1),), operand_batching_dims=(0,), '
                       'start_indices_batching_dims=(0,))\n'
                       '      fill_value=None\n'
                       '      indices_are_sorted=True\n'
                       '      mode=GatherScatterMode.CLIP\n'
                       '      slice_sizes=(1, 2)\n'
                       '      unique_indices=True\n'
                       '    ] a f\n'
                       '  in (g,) }',
 'vmap_dynamic_slice_2d': '{ lambda ; a:f32[3,4,5] b:i32[3]. let\n'
                          '    c:bool[3] = lt b 0:i32[]\n'
                          '    d:i32[3] = add b 4:i32[]\n'
                          '    e:i32[3] = select_n c b d\n'
                          '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                          '    g:i32[3,1] = broadcast_in_dim 0:i32[]\n'
                          '    h:i32[3,2] = concatenate[dimension=1] f g\n'
                          '    i:f32[3,2,2] = gather[\n'
                          '      dimension_numbers=GatherDimensionNumbers(offset_dims=(np.int64(1), '
                          'np.int64(2)), collapsed_slice_dims=(), start_index_map=(np.int64(1), '
                          'np.int64(2)), operand_batching_dims=(0,), start_indices_batching_dims=(0,))\n'
                          '      fill_value=None\n'
                          '      indices_are_sorted=True\n'
                          '      mode=GatherScatterMode.CLIP\n'
                          '      slice_sizes=(1, 2, 2)\n'
                          '      unique_indices=True\n'
                          '    ] a h\n'
                          '  in (i,) }',
 'vmap_dynamic_slice_index': '{ lambda ; a:i32[3]. let\n'
                             '    b:f32[4] = broadcast_in_dim 1.0:f32[]\n'
                             '    c:bool[3] = lt a 0:i32[]\n'
                             '    d:i32[3] = add a 4:i32[]\n'
                             '    e:i32[3] = select_n c a d\n'
                             '    f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n'
                             '    g:f32[3,2] = gather[\n'
                             '      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), '
                             'collapsed_slice_dims=(), start_index_map=(0,), operand_batching_dims=(), '
                             'start_indices_batching_dims=())\n'
                             '      fill_value=None\n'
                             '      indices_are_sorted=False\n'
                             '      mode=GatherScatterMode.CLIP\n'
                             '      slice_sizes=(2,)\n'
                             '      unique_indices=False\n'
                             '    ] b f\n'
                             '  in (g,) }',
 'vmap_dynamic_slice_operand': '{ lambda ; a:f32[3,4]. let\n'
                               '    b:i32[1] = broadcast_in_dim 1:i32[]\n'
                               '    c:f32[3,2] = gather[\n'
                               '      dimension_numbers=GatherDimensionNumbers(offset_dims=(0, np.int64(1)), '
                               'collapsed_slice_dims=(), start_index_map=(np.int64(1),), '
                               'operand_batching_dims=(), start_indices_batching_dims=())\n'
                               '      fill_value=None\n'
                               '      indices_are_sorted=True\n'
                               '      mode=GatherScatterMode.CLIP\n'
                               '      slice_sizes=(3, 2)\n'
                               '      unique_indices=True\n'
                               '    ] a b\n'
                               '  in (c,) }'}


@pytest.mark.parametrize("name", sorted(JAX_TEXTS))
def test_jaxpr_text_as_jax(name):
    assert str(_cases(jax, jnp, lax)[name]()) == JAX_TEXTS[name]


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric", "empty"])
def test_pad_values(mode):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for pw in [1, (2, 3), ((0, 5), (7, 1)), ((4, 0), (0, 9))]:
        want = np.pad(x, pw) if mode == "empty" else np.pad(x, pw, mode=mode)
        np.testing.assert_array_equal(np.asarray(jnp.pad(x, pw, mode=mode)), want)
    if mode in ("reflect", "symmetric"):
        np.testing.assert_array_equal(np.asarray(jnp.pad(x, ((5, 6), (2, 9)), mode=mode, reflect_type="odd")),
                                      np.pad(x, ((5, 6), (2, 9)), mode=mode, reflect_type="odd"))
    if mode == "constant":
        np.testing.assert_array_equal(np.asarray(jnp.pad(x, 1, constant_values=((1, 2), (3, 4)))),
                                      np.pad(x, 1, constant_values=((1, 2), (3, 4))))
        assert jax.jit(lambda x, c: jnp.pad(x, 1, constant_values=c))(x, 5.0)[0].tolist() == [5.0] * 6


def test_pad_errors():
    with pytest.raises(ValueError, match="index can't contain negative values"):
        jnp.pad(jnp.ones(3), -1)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'foo' for np.pad."):
        jnp.pad(jnp.ones(3), 1, mode="foo")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(jnp.ones(3), 1, mode="edge", constant_values=2)


def test_var_std_values():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    w = rng.random((3, 4, 5)) > 0.3
    for f in ("var", "std"):
        for axis in (None, 0, (0, 2), -1):
            for ddof in (0, 1):
                for kd in (False, True):
                    got = getattr(jnp, f)(x, axis=axis, ddof=ddof, keepdims=kd)
                    np.testing.assert_allclose(np.asarray(got), getattr(np, f)(x, axis=axis, ddof=ddof, keepdims=kd),
                                               rtol=2e-5, atol=1e-6)
                    got = getattr(jnp, f)(x, axis=axis, ddof=ddof, keepdims=kd, where=w)
                    want = getattr(np, f)(x, axis=axis, ddof=ddof, keepdims=kd, where=w)
                    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-6)
    assert jnp.var(jnp.arange(5)).dtype == np.float32 and float(jnp.var(jnp.arange(5))) == 2.0
    assert jnp.var(jnp.ones(3, jnp.float16)).dtype == np.float16
    assert jnp.var(jnp.array([1 + 2j, 3 - 1j])).dtype == np.float32
    np.testing.assert_allclose(float(jnp.std(jnp.array([1 + 2j, 3 - 1j]))), np.std([1 + 2j, 3 - 1j]), rtol=1e-6)
    assert np.isnan(float(jnp.var(jnp.ones(1), ddof=1)))
    np.testing.assert_allclose(float(jnp.var(x, correction=1.5)), np.var(x, ddof=1.5), rtol=1e-5)
    with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously."):
        jnp.var(x, ddof=1, correction=1)
    np.testing.assert_allclose(np.asarray(jax.grad(jnp.std)(jnp.arange(4.0))),
                               [-0.33541018, -0.1118034, 0.1118034, 0.33541018], rtol=1e-6)


def test_masked_and_initial_reductions():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    w = rng.random((3, 4, 5)) > 0.3
    np.testing.assert_allclose(np.asarray(jnp.mean(x, axis=(0, 1), where=w)), np.mean(x, axis=(0, 1), where=w),
                               rtol=1e-5)
    np.testing.assert_allclose(float(jnp.sum(x, where=w)), np.sum(x, where=w), rtol=1e-5)
    assert float(jnp.max(x, where=w, initial=-5)) == np.max(x, where=w, initial=-5)
    assert int(jnp.min(jnp.arange(5), where=jnp.arange(5) > 2, initial=100)) == 3
    assert int(jnp.max(jnp.arange(5), where=jnp.arange(5) < 0, initial=-7)) == -7   # int identity: iinfo.min
    assert int(jnp.prod(jnp.arange(1, 5), where=jnp.arange(4) > 0)) == 24
    assert bool(jnp.all(jnp.array([True, False]), where=jnp.array([True, False]))) is True
    assert bool(jnp.any(jnp.array([True, False]), where=jnp.array([False, True]))) is False
    assert jnp.sum(jnp.ones(3), initial=2).tolist() == 5.0


def test_softmax_values_and_grad():
    x = jnp.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    e = np.exp(np.asarray(x) - np.asarray(x).max(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(jax.nn.softmax(x)), e / e.sum(1, keepdims=True), rtol=1e-6)
    # recorded from JAX 0.10.2
    np.testing.assert_allclose(np.asarray(jax.grad(lambda x: jax.nn.softmax(x)[:, 0].sum())(x)),
                               [[0.08192507, -0.02203305, -0.05989202], [0.22222224, -0.11111111, -0.11111111]],
                               rtol=1e-6)
    with jax.softmax_custom_jvp(True):
        np.testing.assert_allclose(np.asarray(jax.grad(lambda x: jax.nn.softmax(x)[:, 0].sum())(x)),
                                   [[0.08192507, -0.02203305, -0.05989202], [0.22222224, -0.11111111, -0.11111111]],
                                   rtol=1e-6)


def test_tile_values_and_rules():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for reps in [(2, 1), 2, (2, 1, 3), (0, 2), (1,), ()]:
        np.testing.assert_array_equal(np.asarray(jnp.tile(x, reps)), np.tile(x, reps))
    np.testing.assert_array_equal(np.asarray(lax.tile(x, (2, 3))), np.tile(x, (2, 3)))
    w = np.arange(36.0, dtype=np.float32).reshape(4, 9)
    g = jax.grad(lambda x: (jnp.tile(x, (2, 3)) * w).sum())(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(g), np.tile(w, 1).reshape(2, 2, 3, 3).sum((0, 2)))
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda r: jnp.tile(r, 3))(x)), np.tile(x, (1, 3)))
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda r: lax.tile(r, (2,)), in_axes=1)(x)), np.tile(x.T, 2))
    _, t = jax.jvp(lambda x: jnp.tile(x, 2), (jnp.ones(2),), (jnp.arange(2.0),))
    assert t.tolist() == [0.0, 1.0, 0.0, 1.0]
    assert jax.linear_transpose(lambda x: jnp.tile(x, 2), jnp.ones(2))(jnp.arange(4.0))[0].tolist() == [2.0, 4.0]
    assert jax.jit(lambda x: lax.tile(x, (1, 2)))(x).shape == (2, 6)
    with pytest.raises(TypeError, match="reps length must be equal to the ndim of x"):
        lax.tile(x, (2,))


def test_vmapped_dynamic_slice_values_as_jax():
    # a gather with batching dims (JAX's batching rule); values, nested vmaps and gradients recorded from JAX
    x = jnp.arange(60.0).reshape(3, 4, 5)
    i = jnp.array([0, 2, 5])
    f = lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 3))  # noqa: E731
    want = np.stack([np.asarray(x)[k, min(int(s), 2):min(int(s), 2) + 2, 1:4] for k, s in enumerate(i)])
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(x, i)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(f))(x, i)), want)
    np.testing.assert_array_equal(np.asarray(jax.vmap(f, (None, 0))(x[0], i)),
                                  np.stack([np.asarray(x)[0, min(int(s), 2):min(int(s), 2) + 2, 1:4] for s in i]))
    np.testing.assert_array_equal(np.asarray(jax.vmap(f, (0, None))(x, 1)), np.asarray(x)[:, 1:3, 1:4])
    xx, ii = jnp.stack([x, x + 1]), jnp.stack([i, i[::-1]])
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.vmap(f))(xx, ii)),
                                  np.stack([np.asarray(jax.vmap(f)(xx[k], ii[k])) for k in range(2)]))
    g = jax.grad(lambda x: jax.vmap(f)(x, i).sum())(x)
    assert np.asarray(g)[:, :, 1].tolist() == [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
    assert float(jax.grad(lambda x: (jax.vmap(f)(x, i) ** 2).sum())(x).sum()) == 2 * float(jax.vmap(f)(x, i).sum())
    g2 = jax.grad(lambda x: jax.vmap(jax.vmap(f))(jnp.stack([x, x]), ii).sum())(x)
    assert np.asarray(g2)[0, :, 1].tolist() == [1.0, 1.0, 1.0, 1.0] and float(g2.sum()) == 36.0


def test_reductions_of_weak_values_are_strong_as_jax():
    # JAX 0.10.2 (recorded): jnp reductions and cumulative reductions convert a weakly typed operand to its
    # dtype, strong, before reducing (an explicit convert_element_type); any/all cast to bool first.
    assert str(jax.make_jaxpr(jnp.sum)(2.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "    c:f32[] = reduce_sum[axes=() out_sharding=None] b\n"
        "  in (c,) }")
    assert str(jax.make_jaxpr(jnp.max)(np.ones(3, np.float32))) == \
        "{ lambda ; a:f32[3]. let b:f32[] = reduce_max[axes=(0,)] a in (b,) }"
    assert str(jax.make_jaxpr(jnp.any)(2.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:bool[] = convert_element_type[new_dtype=bool weak_type=False] a\n"
        "    c:bool[] = reduce_or[axes=()] b\n"
        "  in (c,) }")
    assert str(jax.make_jaxpr(jnp.cumsum)(2.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[1] = jit[\n"
        "      name=cumsum\n"
        "      jaxpr={ lambda ; a:f32[]. let\n"
        "          c:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] a\n"
        "          d:f32[1] = convert_element_type[new_dtype=float32 weak_type=False] c\n"
        "          b:f32[1] = cumsum[axis=0 reverse=False] d\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }")
    y = jnp.asarray(2.0) * 1.0
    assert y.weak_type
    for f in (jnp.sum, jnp.max, jnp.min, jnp.prod, jnp.mean, jnp.cumsum):
        assert not f(y).weak_type, f.__name__
    assert repr(jnp.sum(y)) == "Array(2., dtype=float32)"
