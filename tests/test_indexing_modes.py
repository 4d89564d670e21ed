"""Indexing modes as JAX 0.10.2 documents and runs them: jnp.take / x.at[...].get/set/add/... /
take_along_axis with every mode=, fill_value=, indices_are_sorted=, unique_indices=, under jit/grad/vmap,
and jax.ops.segment_* (num_segments, bucket_size, mode). Expected values were recorded from JAX 0.10.2."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp

nan, inf = np.nan, np.inf
x = jnp.arange(10.)
i = jnp.array([0, 3, 12, -1, -12])

CASES = {
    'take_default': (lambda: jnp.take(x, i),
        [0.0, 3.0, nan, 9.0, nan]),
    'take_fill': (lambda: jnp.take(x, i, mode="fill"),
        [0.0, 3.0, nan, 9.0, nan]),
    'take_fill_v': (lambda: jnp.take(x, i, mode="fill", fill_value=-5),
        [0.0, 3.0, -5.0, 9.0, -5.0]),
    'take_clip': (lambda: jnp.take(x, i, mode="clip"),
        [0.0, 3.0, 9.0, 0.0, 0.0]),
    'take_wrap': (lambda: jnp.take(x, i, mode="wrap"),
        [0.0, 3.0, 2.0, 9.0, 8.0]),
    'take_raise': (lambda: jnp.take(x, i, mode="raise"),
        ("ERR", NotImplementedError, "The 'raise' mode to jnp.take is not supp")),
    'take_promise': (lambda: jnp.take(x, jnp.array([1,2]), mode="promise_in_bounds"),
        ("ERR", ValueError, "Invalid mode 'promise_in_bounds' for np.")),
    'take_int_fill': (lambda: jnp.take(jnp.arange(10), i),
        [0, 3, -2147483648, 9, -2147483648]),
    'take_bool_fill': (lambda: jnp.take(jnp.arange(10) > 4, i),
        [False, False, True, True, True]),
    'take_axis': (lambda: jnp.take(x.reshape(2,5), jnp.array([0,7]), axis=1),
        [[0.0, nan], [5.0, nan]]),
    'take_uint_fill': (lambda: jnp.take(jnp.arange(10, dtype=jnp.uint8), i),
        [0, 3, 255, 9, 255]),
    'get_default': (lambda: x.at[i].get(),
        [0.0, 3.0, 9.0, 9.0, 0.0]),
    'get_fill': (lambda: x.at[i].get(mode="fill", fill_value=7.),
        [0.0, 3.0, 7.0, 9.0, 7.0]),
    'get_clip': (lambda: x.at[i].get(mode="clip"),
        [0.0, 3.0, 9.0, 9.0, 0.0]),
    'get_sorted': (lambda: x.at[jnp.array([1,2])].get(indices_are_sorted=True, unique_indices=True),
        [1.0, 2.0]),
    'idx_plain': (lambda: x[i],
        [0.0, 3.0, 9.0, 9.0, 0.0]),
    'set_default': (lambda: x.at[i].set(-1.),
        [-1.0, 1.0, 2.0, -1.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0]),
    'set_clip': (lambda: x.at[i].set(-1., mode="clip"),
        [-1.0, 1.0, 2.0, -1.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0]),
    'set_drop': (lambda: x.at[i].set(-1., mode="drop"),
        [-1.0, 1.0, 2.0, -1.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0]),
    'set_fill': (lambda: x.at[i].set(-1., mode="fill"),
        [-1.0, 1.0, 2.0, -1.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0]),
    'set_promise': (lambda: x.at[jnp.array([1,2])].set(-1., mode="promise_in_bounds"),
        [0.0, -1.0, -1.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
    'add_dup': (lambda: x.at[jnp.array([1,1,2])].add(1., unique_indices=False),
        [0.0, 3.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
    'add_clip': (lambda: x.at[i].add(1., mode="clip"),
        [2.0, 1.0, 2.0, 4.0, 4.0, 5.0, 6.0, 7.0, 8.0, 11.0]),
    'mul': (lambda: x.at[i].multiply(2.),
        [0.0, 1.0, 2.0, 6.0, 4.0, 5.0, 6.0, 7.0, 8.0, 18.0]),
    'min': (lambda: x.at[i].min(-1.),
        [-1.0, 1.0, 2.0, -1.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0]),
    'max': (lambda: x.at[i].max(20.),
        [20.0, 1.0, 2.0, 20.0, 4.0, 5.0, 6.0, 7.0, 8.0, 20.0]),
    'divide': (lambda: x.at[jnp.array([2,4])].divide(2.),
        [0.0, 1.0, 1.0, 3.0, 2.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
    'power': (lambda: x.at[jnp.array([2,3])].power(2.),
        [0.0, 1.0, 4.0, 9.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
    'apply': (lambda: x.at[jnp.array([2,3, 12])].apply(lambda v: v * 10),
        [0.0, 1.0, 20.0, 30.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
    'set_badmode': (lambda: x.at[i].set(1., mode="bogus"),
        ("ERR", ValueError, 'Unknown gather mode "bogus"')),
    'tal_default': (lambda: jnp.take_along_axis(x.reshape(2,5), jnp.array([[0,7],[-1,-9]]), axis=1),
        [[0.0, nan], [9.0, nan]]),
    'tal_fill': (lambda: jnp.take_along_axis(x.reshape(2,5), jnp.array([[0,7],[-1,-9]]), axis=1, mode="fill", fill_value=99.),
        [[0.0, 99.0], [9.0, 99.0]]),
    'tal_clip': (lambda: jnp.take_along_axis(x.reshape(2,5), jnp.array([[0,7],[-1,-9]]), axis=1, mode="clip"),
        [[0.0, 4.0], [9.0, 5.0]]),
    'tal_none': (lambda: jnp.take_along_axis(x.reshape(2,5), jnp.array([3,1,12]), axis=None),
        [3.0, 1.0, nan]),
    'jit_take_fill': (lambda: jax.jit(lambda a, b: jnp.take(a, b, mode="fill", fill_value=-3.))(x, i),
        [0.0, 3.0, -3.0, 9.0, -3.0]),
    'grad_take': (lambda: jax.grad(lambda a: jnp.take(a, i, mode="fill").sum())(x),
        [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
    'grad_get_clip': (lambda: jax.grad(lambda a: a.at[i].get(mode="clip").sum())(x),
        [2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0]),
    'vmap_take': (lambda: jax.vmap(lambda a: jnp.take(a, i, mode="clip"))(x.reshape(2,5)),
        [[0.0, 3.0, 4.0, 0.0, 0.0], [5.0, 8.0, 9.0, 5.0, 5.0]]),
    'take_float_idx': (lambda: jnp.take(x, jnp.array([1.0])),
        ("ERR", ValueError, 'indices must have an integer type')),
    'at_slice_set': (lambda: x.at[2:5].set(0.),
        [0.0, 1.0, 0.0, 0.0, 0.0, 5.0, 6.0, 7.0, 8.0, 9.0]),
    'at_bool': (lambda: x.at[x > 5].set(0.),
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 0.0, 0.0, 0.0]),
    'seg_sum': (lambda: jax.ops.segment_sum(jnp.arange(6.), jnp.array([0,0,1,2,2,5]), num_segments=4),
        [1.0, 2.0, 7.0, 0.0]),
    'seg_max': (lambda: jax.ops.segment_max(jnp.arange(6.), jnp.array([0,0,1,2,2,5]), num_segments=4),
        [1.0, 2.0, 4.0, -inf]),
    'seg_min': (lambda: jax.ops.segment_min(jnp.arange(6), jnp.array([0,0,1,2,2,-1]), num_segments=4),
        [0, 2, 3, 2147483647]),
    'seg_prod': (lambda: jax.ops.segment_prod(jnp.arange(1.,7.), jnp.array([0,0,1,2,2,3])),
        [2.0, 3.0, 20.0, 6.0]),
    'seg_sum_sorted': (lambda: jax.ops.segment_sum(jnp.arange(6.), jnp.array([0,0,1,2,2,3]), indices_are_sorted=True, unique_indices=False, bucket_size=2),
        [1.0, 2.0, 7.0, 5.0]),
    'seg_sum_mode': (lambda: jax.ops.segment_sum(jnp.arange(6.), jnp.array([0,0,1,2,2,7]), num_segments=3, mode="clip"),
        [1.0, 2.0, 12.0]),
    'seg_2d': (lambda: jax.ops.segment_sum(jnp.arange(6.).reshape(3,2), jnp.array([1,0,1])),
        [[2.0, 3.0], [4.0, 6.0]]),
    'seg_bucket': (lambda: jax.ops.segment_sum(jnp.arange(7.), jnp.array([0,0,1,2,2,3,0]), bucket_size=3),
        [7.0, 2.0, 7.0, 5.0]),
    'seg_bucket_prod': (lambda: jax.ops.segment_prod(jnp.arange(1.,8.), jnp.array([0,0,1,2,2,3,0]), bucket_size=2),
        [14.0, 3.0, 20.0, 6.0]),
    'seg_bucket_max': (lambda: jax.ops.segment_max(jnp.arange(7), jnp.array([0,0,1,2,2,3,0]), num_segments=5, bucket_size=2),
        [6, 2, 4, 5, -2147483648]),
    'seg_neg': (lambda: jax.ops.segment_sum(jnp.arange(3.), jnp.array([0,1,1]), num_segments=-1),
        ("ERR", ValueError, 'num_segments must be non-negative.')),
    'seg_clip_neg': (lambda: jax.ops.segment_sum(jnp.arange(6.), jnp.array([0,0,1,2,2,-1]), num_segments=3, mode="clip"),
        [6.0, 2.0, 7.0]),
}



@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    fn, want = CASES[name]
    if isinstance(want, tuple) and want and want[0] == "ERR":
        _, exc, msg = want
        with pytest.raises(exc) as info:
            fn()
        assert msg.split("'")[0].split('"')[0] in str(info.value)
        return
    got = fn()
    if isinstance(got, tuple):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w, dtype=np.asarray(g).dtype), rtol=1e-6)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype), rtol=1e-6)
