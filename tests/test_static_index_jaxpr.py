"""Static indexing as JAX 0.10.2 stages it (issue 18): one ``slice`` (``rev`` for negative strides), then
``squeeze`` of the int axes and ``expand_dims`` (a ``broadcast_in_dim``) for each None; an out-of-range
static int takes JAX's ``dynamic_slice`` path instead (each start normalized by ``select(i < 0, i + d, i)``,
then clamped), so ``jnp.arange(3)[5]`` is 2 and checkify's index checks see it. Texts recorded from JAX
0.10.2; values against NumPy with JAX's clamping."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental import checkify

RECORDED = {
    'oob': '{ lambda ; a:i32[3]. let\n    b:bool[] = lt 5:i32[] 0:i32[]\n    c:i32[] = add 5:i32[] 3:i32[]\n    d:i32[] = select_n b 5:i32[] c\n    e:i32[1] = dynamic_slice[slice_sizes=(1,)] a d\n    f:i32[] = squeeze[dimensions=(0,)] e\n  in (f,) }',
    'neg_oob': '{ lambda ; a:i32[3]. let\n    b:bool[] = lt -5:i32[] 0:i32[]\n    c:i32[] = add -5:i32[] 3:i32[]\n    d:i32[] = select_n b -5:i32[] c\n    e:i32[1] = dynamic_slice[slice_sizes=(1,)] a d\n    f:i32[] = squeeze[dimensions=(0,)] e\n  in (f,) }',
    'newaxis': '{ lambda ; a:i32[3]. let\n    b:i32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n  in (b,) }',
    'int_newaxis': '{ lambda ; a:i32[3]. let\n    b:i32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=None] a\n    c:i32[] = squeeze[dimensions=(0,)] b\n    d:i32[1] = broadcast_in_dim c\n  in (d,) }',
    'newaxis_int_slice': '{ lambda ; a:f32[2,3]. let\n    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=None] a\n    c:f32[3] = squeeze[dimensions=(0,)] b\n    d:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] c\n  in (d,) }',
    'oob_with_slice': '{ lambda ; a:f32[2,3]. let\n    b:bool[] = lt 5:i32[] 0:i32[]\n    c:i32[] = add 5:i32[] 2:i32[]\n    d:i32[] = select_n b 5:i32[] c\n    e:bool[] = lt 1:i32[] 0:i32[]\n    f:i32[] = add 1:i32[] 3:i32[]\n    g:i32[] = select_n e 1:i32[] f\n    h:f32[1,2] = dynamic_slice[slice_sizes=(1, 2)] a d g\n    i:f32[2] = squeeze[dimensions=(0,)] h\n  in (i,) }',
    'two_ints_oob': '{ lambda ; a:f32[2,3]. let\n    b:bool[] = lt 0:i32[] 0:i32[]\n    c:i32[] = add 0:i32[] 2:i32[]\n    d:i32[] = select_n b 0:i32[] c\n    e:bool[] = lt 7:i32[] 0:i32[]\n    f:i32[] = add 7:i32[] 3:i32[]\n    g:i32[] = select_n e 7:i32[] f\n    h:f32[1,1] = dynamic_slice[slice_sizes=(1, 1)] a d g\n    i:f32[] = squeeze[dimensions=(0, 1)] h\n  in (i,) }',
    'ellipsis_int': '{ lambda ; a:f32[2,3]. let\n    b:f32[2,1] = slice[limit_indices=(2, 2) start_indices=(0, 1) strides=None] a\n    c:f32[2] = squeeze[dimensions=(1,)] b\n  in (c,) }',
    'row': '{ lambda ; a:f32[2,3]. let\n    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=None] a\n    c:f32[3] = squeeze[dimensions=(0,)] b\n  in (c,) }',
    'slice_newaxis_int': '{ lambda ; a:f32[2,3]. let\n    b:f32[2,1] = slice[limit_indices=(2, 2) start_indices=(0, 1) strides=None] a\n    c:f32[2] = squeeze[dimensions=(1,)] b\n    d:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c\n  in (d,) }',
    'rev': '{ lambda ; a:i32[3]. let b:i32[3] = rev[dimensions=(0,)] a in (b,) }',
    'row_rev': '{ lambda ; a:f32[2,3]. let\n    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=None] a\n    c:f32[1,3] = rev[dimensions=(1,)] b\n    d:f32[3] = squeeze[dimensions=(0,)] c\n  in (d,) }',
    'last': '{ lambda ; a:i32[3]. let\n    b:i32[1] = slice[limit_indices=(3,) start_indices=(2,) strides=None] a\n    c:i32[] = squeeze[dimensions=(0,)] b\n  in (c,) }',
}

x = jnp.arange(3)
x2 = jnp.ones((2, 3))
CASES = {
    "oob": (lambda x: x[5], x), "neg_oob": (lambda x: x[-5], x), "newaxis": (lambda x: x[None], x),
    "int_newaxis": (lambda x: x[1, None], x), "newaxis_int_slice": (lambda x: x[None, 0, :], x2),
    "oob_with_slice": (lambda x: x[5, 1:], x2), "two_ints_oob": (lambda x: x[0, 7], x2),
    "ellipsis_int": (lambda x: x[..., 1], x2), "row": (lambda x: x[0], x2),
    "slice_newaxis_int": (lambda x: x[:, None, 1], x2), "rev": (lambda x: x[::-1], x),
    "row_rev": (lambda x: x[0, ::-1], x2), "last": (lambda x: x[-1], x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_text_as_jax(name):
    f, a = CASES[name]
    assert str(jax.make_jaxpr(f)(a)) == RECORDED[name]


def test_values_clamp_as_jax():
    a = np.arange(6).reshape(2, 3)
    ja = jnp.asarray(a)
    # JAX 0.10.2's values: out-of-range ints are normalized once, then clamped into the axis
    np.testing.assert_array_equal(np.asarray(ja[5, 1:]), [4, 5])
    assert int(ja[0, 7]) == 2 and int(jnp.arange(3)[-5]) == 0 and int(jnp.arange(3)[5]) == 2
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v[5, 1:])(ja)), [4, 5])
    for idx in [(1, None), (None, 0, slice(None)), (Ellipsis, 1), (slice(None), None, 1), (0, slice(None, None, -1))]:
        np.testing.assert_array_equal(np.asarray(ja[idx]), a[idx])
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v[idx])(ja)), a[idx])


def test_grad_and_vmap_through_the_dynamic_path():
    g = jax.grad(lambda v: v[5].sum() * 2.0)(jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(g), [0., 0., 2.])
    out = jax.vmap(lambda v: v[5, 1:])(jnp.arange(12.0).reshape(2, 2, 3))
    np.testing.assert_array_equal(np.asarray(out), [[4., 5.], [10., 11.]])


def test_checkify_index_check_sees_a_static_out_of_range_int():
    err, out = checkify.checkify(lambda v: v[5], errors=checkify.index_checks)(jnp.arange(3))
    assert err.get() == ("out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for axis 0 "
                         "with size 3. ")   # JAX 0.10.2's text
    assert int(out) == 2
