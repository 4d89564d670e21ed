"""cranax.numpy's index helpers, function transforms, window functions and elementwise extras against
NumPy (the oracle), including under ``jit``."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp


def eq(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_index_tricks():
    eq(jnp.r_[1:4, 0, np.array([7, 8])], np.r_[1:4, 0, [7, 8]])
    eq(jnp.r_["0,2", [1, 2], [3, 4]], np.r_["0,2", [1, 2], [3, 4]])
    eq(jnp.r_[0:1:5j], np.r_[0:1:5j])
    eq(jnp.c_[np.array([1, 2]), np.array([3, 4])], np.c_[[1, 2], [3, 4]])
    eq(jnp.c_[np.array([[1, 2], [3, 4]]), np.array([[5], [6]])], np.c_[np.array([[1, 2], [3, 4]]), [[5], [6]]])
    eq(jnp.mgrid[0:2, 0:3], np.mgrid[0:2, 0:3])
    eq(jnp.mgrid[-1:1:5j], np.mgrid[-1:1:5j])
    for g, w in zip(jnp.ogrid[0:2, 0:3], np.ogrid[0:2, 0:3]):
        eq(g, w)
    assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3] and jnp.index_exp[3] == np.index_exp[3]
    idx = (np.array([1, 2, 0]), np.array([0, 3, 2]))
    for order in ("C", "F"):
        eq(jnp.ravel_multi_index(idx, (3, 4), order=order), np.ravel_multi_index(idx, (3, 4), order=order))
    eq(jnp.ravel_multi_index((np.array([5]), np.array([-1])), (3, 4), mode="wrap"),
       np.ravel_multi_index(([5], [-1]), (3, 4), mode="wrap"))
    eq(jnp.ravel_multi_index((np.array([5]), np.array([-1])), (3, 4), mode="clip"),
       np.ravel_multi_index(([5], [-1]), (3, 4), mode="clip"))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((np.array([5]), np.array([0])), (3, 4))
    for g, w in zip(cranax.jit(lambda i: jnp.unravel_index(i, (3, 4)))(np.array([5, 11, 0])),
                    np.unravel_index([5, 11, 0], (3, 4))):
        eq(g, w)
    a = np.zeros((4, 4))
    for g, w in zip(jnp.tril_indices_from(a, 1), np.tril_indices_from(a, 1)):
        eq(g, w)
    for g, w in zip(jnp.triu_indices_from(a, -1), np.triu_indices_from(a, -1)):
        eq(g, w)
    for g, w in zip(jnp.diag_indices_from(a), np.diag_indices_from(a)):
        eq(g, w)
    want = np.zeros((5, 3))
    np.fill_diagonal(want, [1, 2], wrap=True)
    eq(jnp.fill_diagonal(np.zeros((5, 3)), np.array([1., 2.]), wrap=True, inplace=False), want)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1)


def test_function_transforms():
    a = np.arange(12.).reshape(3, 4)
    dot = jnp.vectorize(lambda u, v: jnp.dot(u, v), signature="(n),(n)->()")
    eq(dot(a, np.ones(4)), a.sum(1))
    eq(jnp.vectorize(lambda u, v: u * v + 1)(np.arange(3.), np.arange(6.).reshape(2, 3)),
       np.arange(3.) * np.arange(6.).reshape(2, 3) + 1)
    scaled = jnp.vectorize(lambda u, k: u * k, excluded={1})
    eq(scaled(np.arange(3.), 2.0), np.arange(3.) * 2)
    eq(jnp.apply_along_axis(lambda v: jnp.sum(v ** 2), 1, a), np.apply_along_axis(lambda v: np.sum(v ** 2), 1, a))
    eq(jnp.apply_along_axis(lambda v: jnp.stack([v.min(), v.max()]), 0, a),
       np.apply_along_axis(lambda v: np.stack([v.min(), v.max()]), 0, a))
    eq(jnp.apply_over_axes(jnp.sum, a.reshape(3, 2, 2), [0, 2]), np.apply_over_axes(np.sum, a.reshape(3, 2, 2), [0, 2]))
    eq(jnp.fromfunction(lambda i, j: i + 10 * j, (2, 3)), np.fromfunction(lambda i, j: i + 10 * j, (2, 3)))
    x = np.array([-2., 0.5, 3.])
    fl = [lambda v: -v, lambda v: v ** 2, 7.]
    eq(jnp.piecewise(x, [x < 0, x > 1], fl), np.piecewise(x, [x < 0, x > 1], fl))
    eq(cranax.jit(lambda v: jnp.piecewise(v, [v < 0], [0., lambda w: w]))(x), np.piecewise(x, [x < 0], [0., lambda w: w]))


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman", "bartlett"])
@pytest.mark.parametrize("M", [0, 1, 2, 7, 16])
def test_windows(name, M):
    eq(getattr(jnp, name)(M), getattr(np, name)(M))


def test_kaiser_and_i0():
    np.testing.assert_allclose(np.asarray(jnp.kaiser(12, 8.6)), np.kaiser(12, 8.6), atol=1e-6)
    x = np.linspace(-8, 8, 33)
    np.testing.assert_allclose(np.asarray(jnp.i0(x)), np.i0(x), rtol=1e-6)


def test_elementwise_extras():
    x = np.array([np.nan, np.inf, -np.inf, 1.], np.float32)
    eq(jnp.nan_to_num(x), np.nan_to_num(x))
    eq(jnp.nan_to_num(x, nan=-1, posinf=9, neginf=-9), np.nan_to_num(x, nan=-1, posinf=9, neginf=-9))
    h = np.float32(0.5)
    eq(jnp.fmax(x, h), np.fmax(x, h))
    eq(jnp.fmin(x, h), np.fmin(x, h))
    eq(jnp.fabs(np.array([-3, 2])), np.fabs([-3, 2]).astype(np.float32))
    t = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(np.asarray(jnp.sinc(t)), np.sinc(t), atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.logspace(0, 3, 7, base=2.)), np.logspace(0, 3, 7, base=2.), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.geomspace(1, 1000, 4)), np.geomspace(1, 1000, 4), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.geomspace(-2, -32, 5)), np.geomspace(-2, -32, 5), rtol=1e-6)
    eq(jnp.bitwise_count(np.array([0, 7, -8, 255])), np.bitwise_count(np.array([0, 7, -8, 255])))
    eq(jnp.cross(np.array([1., 2, 3]), np.array([4., 5, 6])), np.cross([1., 2, 3], [4., 5, 6]))
    eq(jnp.cross(np.arange(6.).reshape(2, 3), np.ones((2, 3))), np.cross(np.arange(6.).reshape(2, 3), np.ones((2, 3))))
    eq(jnp.angle(np.array([-1., 2.]), deg=True), np.angle([-1., 2.], deg=True))
    assert np.asarray(jnp.isreal(np.ones(2))).all() and not np.asarray(jnp.iscomplex(np.ones(2))).any()
    eq(jnp.imag(np.ones(2)), np.zeros(2))
    f = np.array([1., 2, 4, 7, 11])
    eq(jnp.gradient(f), np.gradient(f))
    eq(jnp.gradient(f, np.array([0., 1, 3, 4, 7])), np.gradient(f, [0., 1, 3, 4, 7]))
    g = np.arange(12.).reshape(3, 4) ** 2
    for got, want in zip(jnp.gradient(g, 2.0), np.gradient(g, 2.0)):
        eq(got, want)


def test_selection_and_sorting_helpers():
    a = np.arange(6).reshape(3, 2)
    c = np.array([True, False, True])
    eq(jnp.compress(c, a, axis=0), np.compress(c, a, axis=0))
    eq(jnp.compress(c, np.arange(3), size=4, fill_value=-1), [0, 2, -1, -1])
    eq(jnp.extract(np.arange(6) % 2, np.arange(6)), np.extract(np.arange(6) % 2, np.arange(6)))
    ch = [np.arange(4), 10 * np.arange(4), 100 * np.arange(4)]
    eq(jnp.choose(np.array([0, 1, 2, 1]), ch), np.choose([0, 1, 2, 1], ch))
    eq(jnp.choose(np.array([0, 4, -1, 1]), ch, mode="wrap"), np.choose([0, 4, -1, 1], ch, mode="wrap"))
    eq(jnp.choose(np.array([0, 4, -1, 1]), ch, mode="clip"), np.choose([0, 4, -1, 1], ch, mode="clip"))
    k1, k2 = np.array([1, 1, 0, 0, 2, 1]), np.array([3, 1, 2, 0, 0, 1])
    eq(jnp.lexsort((k2, k1)), np.lexsort((k2, k1)))
    assert jnp.isdtype(np.float32, "real floating") and not jnp.isdtype(np.int32, ("bool", "real floating"))
    assert jnp.isdtype(np.uint8, "integral") and jnp.isdtype(np.int16, np.int16)
    assert jnp.can_cast(np.int32, np.float64) and not jnp.can_cast(np.float32, np.int32)
    assert bool(jnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 2]])))
    assert not bool(jnp.array_equiv(np.array([1, 2]), np.array([1, 2, 3])))
    assert jnp.iterable([1]) and not jnp.iterable(3)
    parts = jnp.unstack(np.arange(6).reshape(2, 3), axis=1)
    assert len(parts) == 3
    eq(parts[2], [2, 5])
    eq(jnp.concat([np.ones(2), np.zeros(1)]), [1, 1, 0])
    for axis, start in ((2, 0), (0, 3), (1, -1)):
        assert jnp.rollaxis(np.zeros((3, 4, 5)), axis, start).shape == np.rollaxis(np.zeros((3, 4, 5)), axis,
                                                                                   start).shape


def test_insert_delete_resize_put_place():
    a = np.arange(6).reshape(2, 3)
    eq(jnp.insert(np.arange(5), 2, 9), np.insert(np.arange(5), 2, 9))
    eq(jnp.insert(a, np.array([0, 2]), 7, axis=1), np.insert(a, [0, 2], 7, axis=1))
    eq(jnp.insert(np.arange(4), np.array([1, 1, 4]), np.array([7, 8, 9])), np.insert(np.arange(4), [1, 1, 4], [7, 8, 9]))
    eq(jnp.insert(np.arange(4), 1, np.array([7, 8])), np.insert(np.arange(4), 1, [7, 8]))
    eq(jnp.insert(a, 1, 5), np.insert(a, 1, 5))
    eq(jnp.delete(np.arange(5), np.array([0, 3])), np.delete(np.arange(5), [0, 3]))
    eq(jnp.delete(a, 1, axis=1), np.delete(a, 1, axis=1))
    eq(jnp.delete(np.arange(6), slice(1, 5, 2)), np.delete(np.arange(6), slice(1, 5, 2)))
    eq(jnp.delete(np.arange(6), -1), np.delete(np.arange(6), -1))
    eq(jnp.resize(np.arange(3), (2, 4)), np.resize(np.arange(3), (2, 4)))
    eq(jnp.trim_zeros(np.array([0, 0, 1, 2, 0])), np.trim_zeros(np.array([0, 0, 1, 2, 0])))
    eq(jnp.trim_zeros(np.array([0, 0, 1, 2, 0]), "f"), np.trim_zeros(np.array([0, 0, 1, 2, 0]), "f"))
    # JAX 0.10.2: out-of-range put indices are dropped by default, clipped with mode="clip"
    eq(jnp.put(np.arange(5), np.array([0, 2]), np.array([9, 8]), inplace=False), [9, 1, 8, 3, 4])
    eq(jnp.put(np.arange(5), np.array([7]), np.array([1]), mode="clip", inplace=False), [0, 1, 2, 3, 1])
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(np.arange(5), np.array([0]), np.array([1]))
    want = np.arange(6)
    np.place(want, want > 1, [7, 6])
    eq(jnp.place(np.arange(6), np.arange(6) > 1, np.array([7, 6]), inplace=False), want)
    f, w = jnp.modf(np.array([-2.5, 3.25, 0.]))
    wf, ww = np.modf(np.array([-2.5, 3.25, 0.]))
    eq(f, wf)
    eq(w, ww)
    assert jnp.get_printoptions() == np.get_printoptions()
