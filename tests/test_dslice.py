"""jax.ds (dslice): reads clamp a window by start and size, updates drop a window that does not fit, the start
may be traced, and refs index with it. Expected values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp

X = jnp.arange(10)


def eq(got, want):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_constructor_and_pytree():
    assert repr(jax.ds(1, 2)) == "Slice(start=1, size=2, stride=1)"
    assert repr(jax.ds(3)) == "Slice(start=0, size=3, stride=1)"
    assert repr(jax.ds(1, 4, 2)) == "Slice(start=1, size=4, stride=2)"
    assert jax.ds(None) == slice(None)
    leaves, tree = jax.tree_util.tree_flatten(jax.ds(1, 2))
    assert leaves == [] and jax.tree_util.tree_unflatten(tree, leaves) == jax.ds(1, 2)
    with pytest.raises(ValueError, match="Non-static stride"):
        jax.ds(1, 2, 1.5)
    with pytest.raises(ValueError, match="must be >= 0"):
        jax.ds(1, 2, -1)


def test_reads_static_and_traced():
    eq(X[jax.ds(2, 3, 2)], [2, 4, 6])
    eq(X[jax.ds(3)], [0, 1, 2])
    eq(X[jax.ds(None)], np.arange(10))
    eq(X[jax.ds(8, 4)], [6, 7, 8, 9])       # the start is clamped so the window fits
    eq(X[jax.ds(-2, 2)], [8, 9])
    eq(X[jax.ds(2, 0)], np.zeros(0, np.int32))
    eq(jax.jit(lambda x, i: x[jax.ds(i, 3)])(X, 8), [7, 8, 9])
    eq(jax.jit(lambda x, i: x[jax.ds(i, 2)])(X, -2), [8, 9])
    eq(jax.jit(lambda x, i: x[jax.ds(i, 2)])(X, -3), [7, 8])
    y = jnp.arange(12).reshape(3, 4)
    eq(jax.jit(lambda y, i: y[:, jax.ds(i, 2)])(y, 1), [[1, 2], [5, 6], [9, 10]])
    eq(jax.jit(lambda y, i: y[jax.ds(i, 2), None, 1])(y, 1), [[5], [9]])
    with pytest.raises(TypeError, match="slice_sizes must be less than or equal to operand shape"):
        X[jax.ds(2, 12)]


def test_updates_drop_a_window_that_does_not_fit():
    eq(jax.jit(lambda x, i: x.at[jax.ds(i, 2)].set(-1))(X, 3), [0, 1, 2, -1, -1, 5, 6, 7, 8, 9])
    eq(X.at[jax.ds(8, 4)].set(-1), np.arange(10))
    eq(jax.jit(lambda x, i: x.at[jax.ds(i, 4)].set(-1))(X, 8), np.arange(10))
    eq(X.at[jax.ds(-3, 2)].add(5), np.arange(10))
    eq(jax.jit(lambda x, i: x.at[jax.ds(i, 2)].add(5))(X, -3), np.arange(10))
    eq(X.at[jax.ds(7, 3)].add(5), [0, 1, 2, 3, 4, 5, 6, 12, 13, 14])
    eq(jax.jit(lambda x, i: x.at[jax.ds(i, 3)].add(5))(X, 7), [0, 1, 2, 3, 4, 5, 6, 12, 13, 14])


def test_strided_with_a_traced_start_says_it_is_unsupported():
    with pytest.raises(NotImplementedError, match="stride other than 1"):
        jax.jit(lambda x, i: x[jax.ds(i, 3, 2)])(X, 1)


def test_refs_index_with_ds():
    r = jax.new_ref(jnp.arange(6.0))
    eq(r[jax.ds(1, 2)], [1.0, 2.0])
    r[jax.ds(2, 3)] = jnp.ones(3)
    eq(r[...], [0.0, 1.0, 1.0, 1.0, 1.0, 5.0])

    @jax.jit
    def f(r, i):
        r[jax.ds(i, 2)] = r[jax.ds(i, 2)] * 10

    f(r, 1)
    eq(r[...], [0.0, 10.0, 10.0, 1.0, 1.0, 5.0])
