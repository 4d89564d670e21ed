"""Issue 18, the fourteenth pass on JAX 0.10.2's printed forms: ``jacrev``/``jacfwd`` give each Jacobian block
the dtype and weak type of its input (jacrev) or its output (jacfwd), as JAX does (a weakly typed scalar
argument gives a weakly typed block); ``jnp.take_along_axis``
is one jitted ``take_along_axis`` holding one gather with batching dims. Values recorded from JAX 0.10.2 by running the ``def``s below under JAX
(each returns name -> thunk; a thunk's ``str`` is the recorded text)."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def jr(jax, jnp, lax):
    import numpy as np
    f1 = lambda x: x * 2
    f2 = lambda x, y: x * y + 1.0
    f3 = lambda x: jnp.sin(x) + 1
    out = {}
    for nm, jac in (("rev", jax.jacrev), ("fwd", jax.jacfwd)):
        out[nm+"_f1_f"] = lambda jac=jac: repr(jac(f1, allow_int=True)(3.0))
        out[nm+"_f1_i"] = lambda jac=jac: repr(jac(f1, allow_int=True)(3))
        out[nm+"_f2_if"] = lambda jac=jac: repr(jac(f2, argnums=(0,1), allow_int=True)(3, 2.0))
        out[nm+"_f2_ff"] = lambda jac=jac: repr(jac(f2, argnums=(0,1), allow_int=True)(3., 2.0))
        out[nm+"_f3_f"] = lambda jac=jac: repr(jac(f3, allow_int=True)(jnp.arange(2.)))
        out[nm+"_f3_s"] = lambda jac=jac: repr(jac(f3, allow_int=True)(1.0))
        out[nm+"_f1_plain"] = lambda jac=jac: repr(jac(f1)(3.0))
        out[nm+"_f1_arr"] = lambda jac=jac: repr(jac(f1, allow_int=True)(jnp.array([1, 2])))
    return out


JR = {'fwd_f1_arr': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f1_f': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f1_i': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f1_plain': 'Array(2., dtype=float32, weak_type=True)',
 'fwd_f2_ff': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f2_if': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f3_f': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f3_s': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'rev_f1_arr': 'TypeError: jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but '
               'got int32. For differentiation of functions with integer outputs, use jax.vjp directly.',
 'rev_f1_f': 'Array(2., dtype=float32, weak_type=True)',
 'rev_f1_i': 'TypeError: jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but '
             'got int32. For differentiation of functions with integer outputs, use jax.vjp directly.',
 'rev_f1_plain': 'Array(2., dtype=float32, weak_type=True)',
 'rev_f2_ff': '(Array(2., dtype=float32, weak_type=True), Array(3., dtype=float32, weak_type=True))',
 'rev_f2_if': '(Array(0, dtype=int32, weak_type=True), Array(3., dtype=float32, weak_type=True))',
 'rev_f3_f': 'Array([[1.       , 0.       ],\n       [0.       , 0.5403023]], dtype=float32)',
 'rev_f3_s': 'Array(0.5403023, dtype=float32, weak_type=True)'}


def ta(jax, jnp, lax):
    import numpy as np
    x = jnp.arange(12.).reshape(3, 4)
    i0 = jnp.array([[0, 2, 1, 0]], dtype=jnp.int32)
    i1 = jnp.array([[0], [3], [1]], dtype=jnp.int32)
    mj = lambda f, *a: jax.make_jaxpr(f)(*a)
    return dict(
        ax0=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=0), x, i0),
        ax1=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=1), x, i1),
        axm1=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=-1), x, i1),
        clip=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=1, mode='clip'), x, i1),
        fill=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=0, mode='fill'), x, i0),
        full=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=1), x, jnp.array([[0, 1, 2, 3]] * 3, dtype=jnp.int32)),
        v0=lambda: jnp.take_along_axis(x, i0, axis=0),
        v1=lambda: jnp.take_along_axis(x, jnp.array([[0], [5], [-1]]), axis=1, mode='fill'),
        v2=lambda: jnp.take_along_axis(x, jnp.array([[0], [5], [-1]]), axis=1, mode='clip'),
    )


TA = {'ax0': '{ lambda ; a:f32[3,4] b:i32[1,4]. let\n'
        '    c:f32[1,4] = jit[\n'
        '      name=take_along_axis\n'
        '      jaxpr={ lambda ; a:f32[3,4] b:i32[1,4]. let\n'
        '          d:bool[1,4] = lt b 0:i32[]\n'
        '          e:i32[1,4] = add b 3:i32[]\n'
        '          f:i32[1,4] = select_n d b e\n'
        '          g:i32[1,4,1] = reshape[\n'
        '            dimensions=None\n'
        '            new_sizes=(1, 4, 1)\n'
        '            sharding=None\n'
        '          ] f\n'
        '          c:f32[1,4] = gather[\n'
        '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), '
        'start_index_map=(0,), operand_batching_dims=(1,), start_indices_batching_dims=(1,))\n'
        '            fill_value=nan\n'
        '            indices_are_sorted=False\n'
        '            mode=GatherScatterMode.FILL_OR_DROP\n'
        '            slice_sizes=(1, 1)\n'
        '            unique_indices=False\n'
        '          ] a g\n'
        '        in (c,) }\n'
        '    ] a b\n'
        '  in (c,) }',
 'ax1': '{ lambda ; a:f32[3,4] b:i32[3,1]. let\n'
        '    c:f32[3,1] = jit[\n'
        '      name=take_along_axis\n'
        '      jaxpr={ lambda ; a:f32[3,4] b:i32[3,1]. let\n'
        '          d:bool[3,1] = lt b 0:i32[]\n'
        '          e:i32[3,1] = add b 4:i32[]\n'
        '          f:i32[3,1] = select_n d b e\n'
        '          g:i32[3,1,1] = reshape[\n'
        '            dimensions=None\n'
        '            new_sizes=(3, 1, 1)\n'
        '            sharding=None\n'
        '          ] f\n'
        '          c:f32[3,1] = gather[\n'
        '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), '
        'start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))\n'
        '            fill_value=nan\n'
        '            indices_are_sorted=False\n'
        '            mode=GatherScatterMode.FILL_OR_DROP\n'
        '            slice_sizes=(1, 1)\n'
        '            unique_indices=False\n'
        '          ] a g\n'
        '        in (c,) }\n'
        '    ] a b\n'
        '  in (c,) }',
 'axm1': '{ lambda ; a:f32[3,4] b:i32[3,1]. let\n'
         '    c:f32[3,1] = jit[\n'
         '      name=take_along_axis\n'
         '      jaxpr={ lambda ; a:f32[3,4] b:i32[3,1]. let\n'
         '          d:bool[3,1] = lt b 0:i32[]\n'
         '          e:i32[3,1] = add b 4:i32[]\n'
         '          f:i32[3,1] = select_n d b e\n'
         '          g:i32[3,1,1] = reshape[\n'
         '            dimensions=None\n'
         '            new_sizes=(3, 1, 1)\n'
         '            sharding=None\n'
         '          ] f\n'
         '          c:f32[3,1] = gather[\n'
         '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), '
         'start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))\n'
         '            fill_value=nan\n'
         '            indices_are_sorted=False\n'
         '            mode=GatherScatterMode.FILL_OR_DROP\n'
         '            slice_sizes=(1, 1)\n'
         '            unique_indices=False\n'
         '          ] a g\n'
         '        in (c,) }\n'
         '    ] a b\n'
         '  in (c,) }',
 'clip': '{ lambda ; a:f32[3,4] b:i32[3,1]. let\n'
         '    c:f32[3,1] = jit[\n'
         '      name=take_along_axis\n'
         '      jaxpr={ lambda ; a:f32[3,4] b:i32[3,1]. let\n'
         '          d:bool[3,1] = lt b 0:i32[]\n'
         '          e:i32[3,1] = add b 4:i32[]\n'
         '          f:i32[3,1] = select_n d b e\n'
         '          g:i32[3,1,1] = reshape[\n'
         '            dimensions=None\n'
         '            new_sizes=(3, 1, 1)\n'
         '            sharding=None\n'
         '          ] f\n'
         '          c:f32[3,1] = gather[\n'
         '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), '
         'start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))\n'
         '            fill_value=None\n'
         '            indices_are_sorted=False\n'
         '            mode=GatherScatterMode.CLIP\n'
         '            slice_sizes=(1, 1)\n'
         '            unique_indices=False\n'
         '          ] a g\n'
         '        in (c,) }\n'
         '    ] a b\n'
         '  in (c,) }',
 'fill': '{ lambda ; a:f32[3,4] b:i32[1,4]. let\n'
         '    c:f32[1,4] = jit[\n'
         '      name=take_along_axis\n'
         '      jaxpr={ lambda ; a:f32[3,4] b:i32[1,4]. let\n'
         '          d:bool[1,4] = lt b 0:i32[]\n'
         '          e:i32[1,4] = add b 3:i32[]\n'
         '          f:i32[1,4] = select_n d b e\n'
         '          g:i32[1,4,1] = reshape[\n'
         '            dimensions=None\n'
         '            new_sizes=(1, 4, 1)\n'
         '            sharding=None\n'
         '          ] f\n'
         '          c:f32[1,4] = gather[\n'
         '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), '
         'start_index_map=(0,), operand_batching_dims=(1,), start_indices_batching_dims=(1,))\n'
         '            fill_value=nan\n'
         '            indices_are_sorted=False\n'
         '            mode=GatherScatterMode.FILL_OR_DROP\n'
         '            slice_sizes=(1, 1)\n'
         '            unique_indices=False\n'
         '          ] a g\n'
         '        in (c,) }\n'
         '    ] a b\n'
         '  in (c,) }',
 'full': '{ lambda ; a:f32[3,4] b:i32[3,4]. let\n'
         '    c:f32[3,4] = jit[\n'
         '      name=take_along_axis\n'
         '      jaxpr={ lambda ; a:f32[3,4] b:i32[3,4]. let\n'
         '          d:bool[3,4] = lt b 0:i32[]\n'
         '          e:i32[3,4] = add b 4:i32[]\n'
         '          f:i32[3,4] = select_n d b e\n'
         '          g:i32[3,4,1] = reshape[\n'
         '            dimensions=None\n'
         '            new_sizes=(3, 4, 1)\n'
         '            sharding=None\n'
         '          ] f\n'
         '          c:f32[3,4] = gather[\n'
         '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), '
         'start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))\n'
         '            fill_value=nan\n'
         '            indices_are_sorted=False\n'
         '            mode=GatherScatterMode.FILL_OR_DROP\n'
         '            slice_sizes=(1, 1)\n'
         '            unique_indices=False\n'
         '          ] a g\n'
         '        in (c,) }\n'
         '    ] a b\n'
         '  in (c,) }',
 'v0': '[[0. 9. 6. 3.]]',
 'v1': '[[ 0.]\n [nan]\n [11.]]',
 'v2': '[[ 0.]\n [ 7.]\n [11.]]'}


def tb(jax, jnp, lax):
    import numpy as np
    x = jnp.arange(24.).reshape(2, 3, 4)
    mj = lambda f, *a: jax.make_jaxpr(f)(*a)
    i_b = jnp.array([[[0, 3]]], dtype=jnp.int32)        # (1,1,2) axis=2: dims 0,1 offset
    x1 = jnp.arange(4.).reshape(1, 4)
    i_s = jnp.array([[1], [2], [-1]], dtype=jnp.int32)  # (3,1) vs arr (1,4) axis=1: squeeze dim 0
    return dict(
        bc=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=2), x, i_b),
        bc_v=lambda: jnp.take_along_axis(x, i_b, axis=2),
        sq=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=1), x1, i_s),
        sq_v=lambda: jnp.take_along_axis(x1, i_s, axis=1),
        none=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=None), x1, jnp.array([3, 0])),
        none_v=lambda: jnp.take_along_axis(x1, jnp.array([3, 0]), axis=None),
        int_v=lambda: jnp.take_along_axis(jnp.arange(12).reshape(3, 4), jnp.array([[0], [9], [-1]]), axis=1),
        u8=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=0), jnp.arange(3.), jnp.array([2, 0], jnp.uint8)),
        grad=lambda: jax.grad(lambda a: jnp.take_along_axis(a, jnp.array([[0], [3], [1]]), axis=1).sum())(jnp.arange(12.).reshape(3, 4)),
        vmap=lambda: jax.vmap(lambda a, i: jnp.take_along_axis(a, i, axis=0))(jnp.arange(12.).reshape(3, 4), jnp.array([[0, 3], [1, 1], [2, -1]])),
        pib=lambda: mj(lambda a, i: jnp.take_along_axis(a, i, axis=0, mode='promise_in_bounds'), jnp.arange(3.), jnp.array([2, 0])),
        fillv=lambda: jnp.take_along_axis(jnp.arange(3.), jnp.array([2, 5]), axis=0, fill_value=-1.),
    )


TB = {'bc': '{ lambda ; a:f32[2,3,4] b:i32[1,1,2]. let\n'
       '    c:f32[2,3,2] = jit[\n'
       '      name=take_along_axis\n'
       '      jaxpr={ lambda ; a:f32[2,3,4] b:i32[1,1,2]. let\n'
       '          d:bool[1,1,2] = lt b 0:i32[]\n'
       '          e:i32[1,1,2] = add b 4:i32[]\n'
       '          f:i32[1,1,2] = select_n d b e\n'
       '          g:i32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] f\n'
       '          c:f32[2,3,2] = gather[\n'
       '            dimension_numbers=GatherDimensionNumbers(offset_dims=(0, 1), collapsed_slice_dims=(2,), '
       'start_index_map=(2,), operand_batching_dims=(), start_indices_batching_dims=())\n'
       '            fill_value=nan\n'
       '            indices_are_sorted=False\n'
       '            mode=GatherScatterMode.FILL_OR_DROP\n'
       '            slice_sizes=(2, 3, 1)\n'
       '            unique_indices=False\n'
       '          ] a g\n'
       '        in (c,) }\n'
       '    ] a b\n'
       '  in (c,) }',
 'bc_v': '[[[ 0.  3.]\n  [ 4.  7.]\n  [ 8. 11.]]\n\n [[12. 15.]\n  [16. 19.]\n  [20. 23.]]]',
 'fillv': '[ 2. -1.]',
 'grad': '[[1. 0. 0. 0.]\n [0. 0. 0. 1.]\n [0. 1. 0. 0.]]',
 'int_v': '[[          0]\n [-2147483648]\n [         11]]',
 'none': '{ lambda ; a:f32[1,4] b:i32[2]. let\n'
         '    c:f32[2] = jit[\n'
         '      name=take_along_axis\n'
         '      jaxpr={ lambda ; a:f32[1,4] b:i32[2]. let\n'
         '          d:f32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] a\n'
         '          e:bool[2] = lt b 0:i32[]\n'
         '          f:i32[2] = add b 4:i32[]\n'
         '          g:i32[2] = select_n e b f\n'
         '          h:i32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] g\n'
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
 'none_v': '[3. 0.]',
 'pib': '{ lambda ; a:f32[3] b:i32[2]. let\n'
        '    c:f32[2] = jit[\n'
        '      name=take_along_axis\n'
        '      jaxpr={ lambda ; a:f32[3] b:i32[2]. let\n'
        '          d:i32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] b\n'
        '          c:f32[2] = gather[\n'
        '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), '
        'start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n'
        '            fill_value=None\n'
        '            indices_are_sorted=False\n'
        '            mode=GatherScatterMode.PROMISE_IN_BOUNDS\n'
        '            slice_sizes=(1,)\n'
        '            unique_indices=False\n'
        '          ] a d\n'
        '        in (c,) }\n'
        '    ] a b\n'
        '  in (c,) }',
 'sq': '{ lambda ; a:f32[1,4] b:i32[3,1]. let\n'
       '    c:f32[3,1] = jit[\n'
       '      name=take_along_axis\n'
       '      jaxpr={ lambda ; a:f32[1,4] b:i32[3,1]. let\n'
       '          d:bool[3,1] = lt b 0:i32[]\n'
       '          e:i32[3,1] = add b 4:i32[]\n'
       '          f:i32[3,1] = select_n d b e\n'
       '          g:i32[3,1,1] = reshape[\n'
       '            dimensions=None\n'
       '            new_sizes=(3, 1, 1)\n'
       '            sharding=None\n'
       '          ] f\n'
       '          h:f32[4] = squeeze[dimensions=(0,)] a\n'
       '          c:f32[3,1] = gather[\n'
       '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), '
       'start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n'
       '            fill_value=nan\n'
       '            indices_are_sorted=False\n'
       '            mode=GatherScatterMode.FILL_OR_DROP\n'
       '            slice_sizes=(1,)\n'
       '            unique_indices=False\n'
       '          ] h g\n'
       '        in (c,) }\n'
       '    ] a b\n'
       '  in (c,) }',
 'sq_v': '[[1.]\n [2.]\n [3.]]',
 'u8': '{ lambda ; a:f32[3] b:u8[2]. let\n'
       '    c:f32[2] = jit[\n'
       '      name=take_along_axis\n'
       '      jaxpr={ lambda ; a:f32[3] b:u8[2]. let\n'
       '          d:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] b\n'
       '          e:bool[2] = lt d 0:i32[]\n'
       '          f:i32[2] = add d 3:i32[]\n'
       '          g:i32[2] = select_n e d f\n'
       '          h:i32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] g\n'
       '          c:f32[2] = gather[\n'
       '            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), '
       'start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())\n'
       '            fill_value=nan\n'
       '            indices_are_sorted=False\n'
       '            mode=GatherScatterMode.FILL_OR_DROP\n'
       '            slice_sizes=(1,)\n'
       '            unique_indices=False\n'
       '          ] a h\n'
       '        in (c,) }\n'
       '    ] a b\n'
       '  in (c,) }',
 'vmap': '[[ 0.  3.]\n [ 5.  5.]\n [10. 11.]]'}

def _run(fns):
    res = {}
    for k, v in fns.items():
        try:
            v = v()
        except Exception as e:
            v = f"{type(e).__name__}: {e}"
        res[k] = str(v)
    return res


@pytest.mark.parametrize("name", sorted(JR))
def test_jacobian_weak_types(name):
    assert _run(jr(jax, jnp, lax))[name] == JR[name]


@pytest.mark.parametrize("name", sorted(TA))
def test_take_along_axis_texts(name):
    assert _run(ta(jax, jnp, lax))[name] == TA[name]


@pytest.mark.parametrize("name", sorted(TB))
def test_take_along_axis_broadcasts(name):
    assert _run(tb(jax, jnp, lax))[name] == TB[name]
