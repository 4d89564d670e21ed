"""Indexing against NumPy: static ints/slices/None/Ellipsis with negative steps, integer-array and
boolean-mask indices (NumPy's placement of advanced dims), JAX's out-of-bounds semantics (gather clamps,
scatter drops, jnp.take fills), lax.dynamic_slice/dynamic_update_slice (clamped starts), lax.gather and
scatter, x.at[idx].set/add/mul/min/max/get, jnp.nonzero/where(size=) under jit, gradients and vmap."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

MODES = ["eager", "jit"]


def _rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-5, 6, shape).astype(dtype)


def _eq(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)

STATIC = [0, -1, (1, 2), slice(None), slice(1, None, 2), slice(None, None, -1), slice(3, 0, -2), (Ellipsis, 1),
          (None, 0), (0, None, Ellipsis, None), (slice(0, 0),), (1, slice(None), -2), (Ellipsis,),
          (slice(None, None, -2), None, 2)]

ARRAY = [
    np.array([1, 0, 1]),
    (slice(None), np.array([2, 0])),
    (np.array([0, 1]), np.array([2, 0])),                       # adjacent: placed where they stand
    (slice(None), np.array([[0, 1], [2, 1]]), np.array([3, 0])),  # broadcast index arrays
    (np.array([1, 0]), slice(None), np.array([3, 2])),          # not adjacent: placed in front
    (0, slice(None), np.array([1, 3])),                         # int + array not adjacent -> front
    (Ellipsis, np.array([4, -1])),                              # negative index
    (None, np.array([1]), None, 2),
    ([0, 1], 1),                                                 # list index
    (np.array([], dtype=np.int32),),                             # empty index
    (slice(None, None, -1), np.array([0, 2])),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("idx", STATIC + ARRAY, ids=repr)
def test_getitem(idx, mode):
    f = (lambda x: x[idx])
    got = jax.jit(f)(X) if mode == "jit" else jnp.asarray(X)[idx]
    _eq(got, X[idx])


@pytest.mark.parametrize("idx", [X > 50, (X[:, :, 0, 0] > 20,), (0, X[0, :, :, 0] > 30),
                                 (slice(None), np.array([True, False, True]))], ids=["full", "lead", "mid", "1d"])
def test_boolean_mask(idx):
    _eq(jnp.asarray(X)[idx], X[idx])


def test_traced_boolean_mask_is_an_error():
    # JAX 0.10.2's NonConcreteBooleanIndexError (an IndexError); its text is in tests/test_error_texts.py
    with pytest.raises(IndexError, match=r"^Array boolean indices must be concrete; got bool\["):
        jax.jit(lambda x: x[x > 0])(X)


def test_traced_scalar_index():
    f = jax.jit(lambda x, i, j: x[i, :, j])
    _eq(f(X, 1, 2), X[1, :, 2])
    _eq(f(X, -1, -2), X[-1, :, -2])


def test_out_of_bounds_gather_clamps():
    x = np.arange(5.0, dtype=np.float32)
    _eq(jnp.asarray(x)[np.array([0, 7, -9])], x[[0, 4, 0]])
    _eq(jax.jit(lambda a, i: a[i])(x, 10), x[4])
    _eq(jax.jit(lambda a, i: a[i])(x, -10), x[0])
    # the static form clamps too, like JAX (sharp bits: jnp.arange(10)[11] is 9)
    _eq(jnp.asarray(x)[7], x[4])
    _eq(jnp.asarray(x)[-9], x[0])
    # jnp.take fills with NaN (floats) / the dtype minimum (ints) by default
    _eq(jnp.take(x, np.array([1, 7, -1])), [1.0, np.nan, 4.0])
    _eq(jnp.take(np.arange(5, dtype=np.int32), np.array([9])), [np.iinfo(np.int32).min])
    _eq(jnp.take(x, np.array([1, 7]), mode="clip"), [1.0, 4.0])
    _eq(jnp.take(x, np.array([6, -7]), mode="wrap"), [1.0, 3.0])
    _eq(jnp.asarray(x).at[np.array([1, 9])].get(mode="fill", fill_value=-1.0), [1.0, -1.0])


def test_take_and_take_along_axis():
    a = _rand((3, 4), seed=1)
    idx = np.array([[0, 3], [2, 1]])
    for ax in (None, 0, 1, -1):
        i = idx if ax is not None else idx.ravel()
        _eq(jnp.take(a, np.clip(i, 0, 2), axis=ax), np.take(a, np.clip(i, 0, 2), axis=ax))
    order = np.argsort(a, axis=1)
    _eq(jnp.take_along_axis(a, order, axis=1), np.take_along_axis(a, order, axis=1))
    _eq(jnp.take_along_axis(a, np.array([[1], [0], [2]]), axis=1), np.take_along_axis(a, np.array([[1], [0], [2]]), 1))
    _eq(jax.jit(lambda x, i: jnp.take_along_axis(x, i, 0))(a, np.array([[2, 0, 1, 1]])),
        np.take_along_axis(a, np.array([[2, 0, 1, 1]]), 0))


# ----------------------------------------------------------------------------------------------- dynamic slices

@pytest.mark.parametrize("mode", MODES)
def test_dynamic_slice_and_update(mode):
    a = _rand((5, 6), seed=2)
    run = (lambda f, *xs: jax.jit(f)(*xs)) if mode == "jit" else (lambda f, *xs: f(*xs))
    for (i, j) in [(0, 0), (1, 2), (4, 5), (-3, 1), (100, -100)]:
        # JAX: a negative start counts from the end, then the window is clamped to fit
        ci, cj = min(max(i + 5 if i < 0 else i, 0), 5 - 2), min(max(j + 6 if j < 0 else j, 0), 6 - 3)
        _eq(run(lambda x, p, q: lax.dynamic_slice(x, (p, q), (2, 3)), a, i, j), a[ci:ci + 2, cj:cj + 3])
        u = np.full((2, 3), 9.0, np.float32)
        want = a.copy()
        want[ci:ci + 2, cj:cj + 3] = u
        _eq(run(lambda x, p, q: lax.dynamic_update_slice(x, u, (p, q)), a, i, j), want)
    _eq(run(lambda x, p: lax.dynamic_slice_in_dim(x, p, 2, axis=1), a, 3), a[:, 3:5])
    _eq(run(lambda x, p: lax.dynamic_index_in_dim(x, p, 0, keepdims=False), a, 4), a[4])
    _eq(run(lambda x, p: lax.dynamic_update_slice_in_dim(x, np.zeros((5, 1), np.float32), p, 1), a, 2),
        np.concatenate([a[:, :2], np.zeros((5, 1)), a[:, 3:]], 1))


def test_dynamic_slice_errors():
    with pytest.raises(TypeError):
        lax.dynamic_slice(np.ones((3, 3)), (0,), (1, 1))
    with pytest.raises(TypeError):
        lax.dynamic_slice(np.ones((3, 3)), (0, 0), (4, 1))
    with pytest.raises(TypeError):
        lax.dynamic_update_slice(np.ones((3, 3), np.float32), np.ones((4, 1), np.float32), (0, 0))


# ----------------------------------------------------------------------------------------------- .at[]

AT_INDICES = [1, -1, (0, 2), np.array([0, 2, 0]), (slice(None), np.array([1, 3])), (slice(1, None, 2),),
              (Ellipsis, -1), (np.array([1, 0]), np.array([3, 3])), (None, 0)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("idx", AT_INDICES, ids=repr)
def test_at_updates(idx, mode):
    x = np.arange(3 * 4, dtype=np.float32).reshape(3, 4) - 5
    shape = x[idx].shape
    v = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + 0.5
    run = (lambda f: jax.jit(f)(x)) if mode == "jit" else (lambda f: f(jnp.asarray(x)))
    want = x.copy()
    want[idx] = v
    _eq(run(lambda a: a.at[idx].set(v)), want)
    want = x.copy()
    np.add.at(want, idx, v)
    _eq(run(lambda a: a.at[idx].add(v)), want)
    want = x.copy()
    np.multiply.at(want, idx, v)
    _eq(run(lambda a: a.at[idx].mul(v)), want)
    want = x.copy()
    np.minimum.at(want, idx, v)
    _eq(run(lambda a: a.at[idx].min(v)), want)
    want = x.copy()
    np.maximum.at(want, idx, v)
    _eq(run(lambda a: a.at[idx].max(v)), want)
    _eq(run(lambda a: a.at[idx].get()), x[idx])
    # scalar update broadcast
    want = x.copy()
    want[idx] = 7
    _eq(run(lambda a: a.at[idx].set(7.0)), want)


def test_at_out_of_bounds_updates_are_dropped():
    x = jnp.zeros(5)
    _eq(x.at[np.array([1, 5, -6, 9])].set(np.array([1.0, 2.0, 3.0, 4.0])), [0, 1, 0, 0, 0])
    _eq(x.at[7].add(1.0), np.zeros(5))
    _eq(jax.jit(lambda a, i: a.at[i].set(3.0))(x, 11), np.zeros(5))
    _eq(jax.jit(lambda a, i: a.at[i].set(3.0))(x, -1), [0, 0, 0, 0, 3.0])
    _eq(x.at[np.array([0, 9])].set(1.0, mode="clip"), [1, 0, 0, 0, 1.0])


def test_at_duplicates_accumulate_and_dtype_kept():
    x = jnp.zeros(3, jnp.int32)
    got = x.at[np.array([0, 0, 2, 0])].add(1)
    assert got.dtype == np.int32
    _eq(got, [3, 0, 1])
    _eq(jnp.ones(3).at[1].mul(5.0), [1, 5, 1])
    assert jnp.ones(3, jnp.float32).at[0].set(2).dtype == np.float32


def test_at_is_functional():
    x = jnp.arange(4.0)
    y = x.at[0].set(10.0)
    _eq(x, [0, 1, 2, 3])
    _eq(y, [10, 1, 2, 3])


# ----------------------------------------------------------------------------------------------- nonzero / where(size=)

def test_nonzero_and_where_size():
    m = np.array([[0, 1, 0], [2, 0, 3]])
    _eq(jnp.nonzero(m)[0], np.nonzero(m)[0])
    _eq(jnp.nonzero(m)[1], np.nonzero(m)[1])
    f = jax.jit(lambda a: jnp.nonzero(a, size=5, fill_value=-1))
    r, c = f(m)
    _eq(r, [0, 1, 1, -1, -1])
    _eq(c, [1, 0, 2, -1, -1])
    r, c = jax.jit(lambda a: jnp.where(a > 0, size=2))(m)
    _eq(r, [0, 1])
    _eq(c, [1, 0])
    _eq(jnp.flatnonzero(m), np.flatnonzero(m))
    _eq(jnp.argwhere(m), np.argwhere(m))
    _eq(jax.jit(lambda a: jnp.argwhere(a, size=4))(m), np.concatenate([np.argwhere(m), [[0, 0]]]))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda a: jnp.nonzero(a))(m)
    # boolean-mask selection of a static count under jit
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = jax.jit(lambda a, msk: a[jnp.nonzero(msk, size=3)])(x, m > 0)
    _eq(got, x[m > 0])


# ----------------------------------------------------------------------------------------------- lax.gather / scatter

def test_lax_gather_scatter_modes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    idx = np.array([[2], [-1], [5]])
    _eq(lax.gather(x, idx, dn, (1, 4), mode="clip"), x[[2, 0, 2]])
    # JAX 0.10.2's default is promise_in_bounds, which clamps as clip does (its values recorded from JAX)
    _eq(lax.gather(x, idx, dn, (1, 4)), x[[2, 0, 2]])
    got = np.asarray(lax.gather(x, idx, dn, (1, 4), mode="fill"))
    _eq(got[0], x[2])
    assert np.isnan(got[1:]).all()
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    upd = np.ones((3, 4), np.float32)
    want = x.copy()
    want[2] += 1
    _eq(lax.scatter_add(x, idx, upd, sdn), want)           # out-of-range rows dropped
    want = x.copy()
    want[2] += 2
    want[0] += 1
    _eq(lax.scatter_add(x, idx, upd, sdn, mode="clip"), want)
    _eq(lax.scatter(x, np.array([[1]]), np.full((1, 4), -1.0, np.float32), sdn), np.where(np.arange(3)[:, None] == 1, -1.0, x))
    _eq(lax.scatter_max(x, np.array([[0]]), np.full((1, 4), 2.0, np.float32), sdn), np.where(np.arange(12).reshape(3, 4) < 4, np.maximum(x, 2), x))



def test_lax_gather_window_bound_skipped_without_indices():
    """As JAX's _gather_shape_rule: with no index vectors the window may exceed an empty operand axis (a
    gather vmapped over an empty batch, as optax's Hungarian algorithm does); with indices it is a TypeError
    with JAX's text. Shapes recorded from JAX 0.10.2."""
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    x, i = jnp.zeros((0, 2, 2), jnp.float32), jnp.zeros((0, 2), jnp.int32)
    f = lambda x, i: lax.gather(x, i, dn, (1, 1, 2), mode="clip")
    assert f(x, i).shape == (0, 2)
    assert jax.jit(f)(x, i).shape == (0, 2)             # the compiled program passes the core's verifier too
    g = jax.vmap(lambda m, r: m[r[0], r[1]])
    assert g(x, i).shape == (0,) and jax.jit(g)(x, i).shape == (0,)
    assert jax.jit(jax.vmap(lambda m, k: m[k]))(jnp.zeros((0, 3)), jnp.zeros((0,), jnp.int32)).shape == (0,)
    with pytest.raises(TypeError, match=r"^Slice size at index 0 in gather op is out of range, must be within "
                                        r"\[0, 0 \+ 1\), got 1\.$"):
        lax.gather(x, jnp.zeros((1, 2), jnp.int32), dn, (1, 1, 2), mode="clip")


# ----------------------------------------------------------------------------------------------- autodiff / vmap

def _fd_check(f, args, seed=0, eps=1e-6, rtol=1e-5):
    rng = np.random.default_rng(seed)
    args = [np.asarray(a, np.float64) for a in args]
    tangents = [rng.standard_normal(np.shape(a)) for a in args]
    _, t_out = jax.jvp(f, tuple(args), tuple(tangents))
    plus = f(*[a + eps * t for a, t in zip(args, tangents)])
    minus = f(*[a - eps * t for a, t in zip(args, tangents)])
    fd = (np.asarray(plus, np.float64) - np.asarray(minus, np.float64)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(t_out), fd, rtol=rtol, atol=1e-6)
    out, vjp = jax.vjp(f, *args)
    ct = rng.standard_normal(np.shape(out))
    lhs = sum(float(np.sum(np.asarray(c) * t)) for c, t in zip(vjp(ct), tangents))
    np.testing.assert_allclose(lhs, float(np.sum(ct * fd)), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name,f", [
    ("gather", lambda x, u: x[np.array([2, 0, 2])] * 2),
    ("gather2d", lambda x, u: x[:, np.array([[1, 3], [0, 0]])]),
    ("at_set", lambda x, u: jnp.asarray(x).at[np.array([0, 2, 0])].set(u[0:3])),
    ("at_add", lambda x, u: jnp.asarray(x).at[np.array([0, 2, 0])].add(u[0:3])),
    ("at_mul", lambda x, u: jnp.asarray(x).at[np.array([0, 2])].mul(u[0:2] + 2.0)),
    ("at_max", lambda x, u: jnp.asarray(x).at[1].max(u[1])),
    ("dynamic_slice", lambda x, u: lax.dynamic_slice(x, (1, 1), (2, 2)) * u[:2, :2]),
    ("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u[:2, :2] * 3.0, (2, 1))),
    ("take", lambda x, u: jnp.take(x, np.array([3, 1]), axis=1)),
])
def test_indexing_gradients(name, f, x64):
    x, u = _rand((3, 4), np.float64, 1), _rand((3, 4), np.float64, 2)
    _fd_check(f, [x, u])


def test_grad_through_traced_index_under_jit(x64):
    x = np.arange(5.0)
    g = jax.jit(jax.grad(lambda a, i: a[i] ** 2))(x, 3)
    _eq(g, [0, 0, 0, 6.0, 0])


def test_vmap_indexing():
    x = _rand((4, 5, 6), seed=1)
    idx = np.array([[0, 5], [1, 2], [3, 3], [4, 0]])
    _eq(jax.vmap(lambda a, i: a[:, i])(x, idx), np.stack([x[k][:, idx[k]] for k in range(4)]))
    _eq(jax.vmap(lambda a: a[np.array([1, 0])])(x), x[:, [1, 0]])
    _eq(jax.vmap(lambda i: jnp.asarray(x[0])[i])(np.array([2, 4])), x[0][[2, 4]])
    _eq(jax.vmap(lambda a, i: a.at[i].set(0.0))(x, np.array([0, 1, 2, 4])),
        np.stack([np.where(np.arange(5)[:, None] == i, 0, x[k]) for k, i in enumerate([0, 1, 2, 4])]))
    _eq(jax.vmap(lambda a, i: lax.dynamic_slice(a, (i, 0), (2, 6)))(x, np.array([0, 1, 3, 9])),
        np.stack([x[k][min(i, 3):min(i, 3) + 2] for k, i in enumerate([0, 1, 3, 9])]))
    _eq(jax.vmap(lambda a, i: lax.dynamic_update_slice(a, np.ones((1, 6), np.float32), (i, 0)))(x, np.array([0, 4, 2, 1])),
        np.stack([np.where(np.arange(5)[:, None] == i, 1, x[k]) for k, i in enumerate([0, 4, 2, 1])]))


def test_dynamic_slice_negative_starts_count_from_the_end():
    # Recorded from JAX 0.10.2: a negative start is wrapped by the dimension size, then clamped to fit.
    a = jnp.arange(20.0).reshape(5, 4)
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice(a, (-4, 1), (3, 2))),
                                  [[5, 6], [9, 10], [13, 14]])
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice(a, (-40, 1), (3, 2))),
                                  [[1, 2], [5, 6], [9, 10]])
    traced = jax.jit(lambda a, i: lax.dynamic_slice(a, (i, 1), (3, 2)))
    np.testing.assert_array_equal(np.asarray(traced(a, -4)), [[5, 6], [9, 10], [13, 14]])
    want = np.arange(20.0).reshape(5, 4)
    want[3:, 2:] = 0
    np.testing.assert_array_equal(np.asarray(lax.dynamic_update_slice(a, jnp.zeros((2, 2)), (-1, -1))), want)
    want = np.arange(20.0).reshape(5, 4)
    want[3:, :2] = 0
    got = jax.jit(lambda a, i: lax.dynamic_update_slice(a, jnp.zeros((2, 2)), (i, 0)))(a, -2)
    np.testing.assert_array_equal(np.asarray(got), want)
