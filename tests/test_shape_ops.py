"""Shape manipulation, sorting and scans against NumPy (eager and jit, shapes with empty and size-1 dims),
cranax.nn against stable reference formulas, gradients by finite differences (float64) and vmap."""
import numpy as np
import pytest

import cranax as jax
import cranax.nn as nn
import cranax.numpy as jnp
from cranax import lax

MODES = ["eager", "jit"]


def _rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-5, 6, shape).astype(dtype)


def _run(mode, f, *args):
    return (jax.jit(f) if mode == "jit" else f)(*args)


def _eq(got, want):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _eq(g, w)
        return
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


SHAPES = [(5,), (3, 4), (2, 1, 3), (0, 3), (1, 1), (3, 0, 2)]


# ----------------------------------------------------------------------------------------------- joining / splitting

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_concatenate_stack(shape, mode):
    a, b = _rand(shape, seed=1), _rand(shape, seed=2)
    for ax in range(len(shape)):
        _eq(_run(mode, lambda x, y: jnp.concatenate([x, y, x], axis=ax), a, b), np.concatenate([a, b, a], ax))
        _eq(_run(mode, lambda x, y: jnp.stack([x, y], axis=ax), a, b), np.stack([a, b], ax))
    _eq(_run(mode, lambda x, y: jnp.concatenate([x, y], axis=None), a, b), np.concatenate([a, b], None))
    _eq(_run(mode, lambda x, y: jnp.stack([x, y], axis=-1), a, b), np.stack([a, b], -1))


def test_concatenate_promotes_and_errors():
    got = jnp.concatenate([np.ones(2, np.int32), np.ones(3, np.float32)])
    assert got.dtype == np.float32 and got.shape == (5,)
    with pytest.raises(TypeError, match="Cannot concatenate arrays with shapes"):  # as recorded from JAX
        jnp.concatenate([np.ones((2, 3)), np.ones((2, 4))], axis=0)
    with pytest.raises(ValueError):
        jnp.concatenate([np.ones((2, 3)), np.ones(2)], axis=0)
    with pytest.raises(ValueError):
        jnp.concatenate([np.float32(1), np.float32(2)])
    with pytest.raises(ValueError):
        jnp.stack([np.ones(2), np.ones(3)])


@pytest.mark.parametrize("mode", MODES)
def test_hstack_vstack_dstack_column_stack(mode):
    a, b = _rand((3,), seed=1), _rand((3,), seed=2)
    A, B = _rand((2, 3), seed=3), _rand((2, 3), seed=4)
    for f, g in [(jnp.hstack, np.hstack), (jnp.vstack, np.vstack), (jnp.dstack, np.dstack),
                 (jnp.column_stack, np.column_stack)]:
        _eq(_run(mode, lambda x, y: f([x, y]), a, b), g([a, b]))
        _eq(_run(mode, lambda x, y: f([x, y]), A, B), g([A, B]))
    _eq(jnp.atleast_2d(np.float32(1)), np.atleast_2d(np.float32(1)))
    _eq(jnp.atleast_3d(a), np.atleast_3d(a))
    _eq(jnp.append(A, B), np.append(A, B))
    _eq(jnp.append(A, B, axis=0), np.append(A, B, axis=0))


@pytest.mark.parametrize("mode", MODES)
def test_split(mode):
    a = _rand((6, 4), seed=1)
    _eq(_run(mode, lambda x: jnp.split(x, 3), a), np.split(a, 3))
    _eq(_run(mode, lambda x: jnp.split(x, [1, 4], axis=0), a), np.split(a, [1, 4]))
    _eq(_run(mode, lambda x: jnp.split(x, [1, 3], axis=1), a), np.split(a, [1, 3], axis=1))
    _eq(_run(mode, lambda x: jnp.array_split(x, 4), a), np.array_split(a, 4))
    _eq(_run(mode, lambda x: jnp.hsplit(x, 2), a), np.hsplit(a, 2))
    _eq(_run(mode, lambda x: jnp.vsplit(x, 2), a), np.vsplit(a, 2))
    with pytest.raises(ValueError, match="equal division: rest is 2"):
        jnp.split(a, 4)
    # unlike NumPy, JAX refuses indices past the end or going backwards (negative sizes for lax.split)
    with pytest.raises(ValueError, match=r"Sizes passed to split must be nonnegative, got \[np.int64\(1\), "
                                         r"np.int64\(9\), np.int64\(-6\)\]"):
        jnp.split(a, [1, 10], axis=1)


# ----------------------------------------------------------------------------------------------- tile / repeat / pad

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_tile_repeat(shape, mode):
    a = _rand(shape, np.int32, 1)
    for reps in (2, (2, 1), (1, 2, 3), (0, 2)):
        _eq(_run(mode, lambda x: jnp.tile(x, reps), a), np.tile(a, reps))
    _eq(_run(mode, lambda x: jnp.repeat(x, 3), a), np.repeat(a, 3))
    for ax in range(len(shape)):
        _eq(_run(mode, lambda x: jnp.repeat(x, 2, axis=ax), a), np.repeat(a, 2, axis=ax))
        reps = np.arange(shape[ax]) % 3
        _eq(jnp.repeat(a, reps, axis=ax), np.repeat(a, reps, axis=ax))


def test_repeat_traced_repeats_needs_total_length():
    a = np.arange(4, dtype=np.float32)
    r = np.array([1, 0, 2, 3])
    got = jax.jit(lambda x, k: jnp.repeat(x, k, total_repeat_length=6))(a, r)
    _eq(got, np.repeat(a, r))
    got = jax.jit(lambda x, k: jnp.repeat(x, k, total_repeat_length=8))(a, r)
    _eq(got, np.concatenate([np.repeat(a, r), [3, 3]]))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda x, k: jnp.repeat(x, k))(a, r)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("pmode", ["constant", "edge", "wrap", "reflect", "symmetric"])
def test_pad(pmode, mode):
    a = _rand((3, 4), seed=1)
    for pw in (1, (1, 2), ((0, 2), (3, 1)), ((2, 0), (0, 0))):
        _eq(_run(mode, lambda x: jnp.pad(x, pw, mode=pmode), a), np.pad(a, pw, mode=pmode))
    if pmode == "constant":
        _eq(_run(mode, lambda x: jnp.pad(x, 2, constant_values=7.0), a), np.pad(a, 2, constant_values=7.0))
        _eq(jnp.pad(a, ((1, 2), (3, 4)), constant_values=((1, 2), (3, 4))),
            np.pad(a, ((1, 2), (3, 4)), constant_values=((1, 2), (3, 4))))
        _eq(jnp.pad(np.zeros((0, 2), np.float32), 1), np.pad(np.zeros((0, 2), np.float32), 1))


@pytest.mark.parametrize("mode", MODES)
def test_lax_pad_negative_and_interior(mode):
    a = _rand((4, 5), seed=2)
    cfg = [(1, -2, 1), (-1, 2, 2)]
    got = _run(mode, lambda x: lax.pad(x, np.float32(9), cfg), a)
    # reference: interior then edges (negative crops)
    ref = np.full((4 + 3, 5 + 8), 9, np.float32)
    ref[::2, ::3] = a
    ref = np.pad(ref, ((1, 0), (0, 2)), constant_values=9)[:-2, 1:]
    _eq(got, ref)


# ----------------------------------------------------------------------------------------------- flips / rolls / grids

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_flip_roll(shape, mode):
    a = _rand(shape, seed=1)
    _eq(_run(mode, jnp.flip, a), np.flip(a))
    for ax in range(len(shape)):
        _eq(_run(mode, lambda x: jnp.flip(x, ax), a), np.flip(a, ax))
        for s in (0, 1, -2, 7):
            _eq(_run(mode, lambda x: jnp.roll(x, s, ax), a), np.roll(a, s, ax))
    _eq(_run(mode, lambda x: jnp.roll(x, 3), a), np.roll(a, 3))
    if len(shape) >= 2:
        _eq(_run(mode, jnp.fliplr, a), np.fliplr(a))
        _eq(_run(mode, jnp.flipud, a), np.flipud(a))
        _eq(_run(mode, lambda x: jnp.roll(x, (1, 2), (0, 1)), a), np.roll(a, (1, 2), (0, 1)))
        for k in range(4):
            _eq(_run(mode, lambda x: jnp.rot90(x, k), a), np.rot90(a, k))


def test_roll_traced_shift():
    a = np.arange(10, dtype=np.float32).reshape(2, 5)
    f = jax.jit(lambda x, s: jnp.roll(x, s, 1))
    for s in (-7, -1, 0, 3, 12):
        _eq(f(a, s), np.roll(a, s, 1))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    x, y, z = np.arange(3.0), np.arange(4.0), np.arange(2.0)
    _eq(jnp.meshgrid(x, y, indexing=indexing, sparse=sparse), np.meshgrid(x, y, indexing=indexing, sparse=sparse))
    _eq(jnp.meshgrid(x, y, z, indexing=indexing, sparse=sparse),
        np.meshgrid(x, y, z, indexing=indexing, sparse=sparse))


def test_moveaxis_swapaxes_ravel_broadcast_arrays():
    a = _rand((2, 3, 4), seed=1)
    _eq(jnp.moveaxis(a, 0, -1), np.moveaxis(a, 0, -1))
    _eq(jnp.moveaxis(a, (0, 1), (2, 0)), np.moveaxis(a, (0, 1), (2, 0)))
    _eq(jnp.swapaxes(a, 0, 2), np.swapaxes(a, 0, 2))
    _eq(jnp.ravel(a), np.ravel(a))
    _eq(jnp.broadcast_arrays(a, np.ones((3, 1))), np.broadcast_arrays(a, np.ones((3, 1))))


# ----------------------------------------------------------------------------------------------- triangles / diagonals

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3), (0, 3), (1, 1)], ids=str)
def test_tril_triu_diagonal(shape, mode):
    a = _rand(shape, seed=1)
    for k in (-2, -1, 0, 1, 3):
        _eq(_run(mode, lambda x: jnp.tril(x, k), a), np.tril(a, k))
        _eq(_run(mode, lambda x: jnp.triu(x, k), a), np.triu(a, k))
        _eq(_run(mode, lambda x: jnp.diagonal(x, k), a), np.diagonal(a, k))
        if len(shape) == 3:
            _eq(_run(mode, lambda x: jnp.diagonal(x, k, 1, 2), a), np.diagonal(a, k, 1, 2))
            _eq(_run(mode, lambda x: jnp.diagonal(x, k, 2, 0), a), np.diagonal(a, k, 2, 0))
        if len(shape) == 2:
            _eq(_run(mode, lambda x: jnp.diag(x, k), a), np.diag(a, k))


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag_of_vector(k):
    v = np.arange(1, 4, dtype=np.float32)
    _eq(jnp.diag(v, k), np.diag(v, k))
    _eq(jax.jit(lambda x: jnp.diag(x, k))(v), np.diag(v, k))
    _eq(jnp.diagflat(v.reshape(1, 3), k), np.diagflat(v.reshape(1, 3), k))


# ----------------------------------------------------------------------------------------------- scans

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_cumsum_cumprod(shape, dtype, mode):
    a = _rand(shape, dtype, 1)
    if dtype == np.float32:
        a = a / 2
    _eq(_run(mode, jnp.cumsum, a), np.cumsum(a))
    for ax in range(len(shape)):
        _eq(_run(mode, lambda x: jnp.cumsum(x, ax), a), np.cumsum(a, ax))
        _eq(_run(mode, lambda x: jnp.cumprod(x, ax), a), np.cumprod(a, ax))
        _eq(_run(mode, lambda x: lax.cumsum(x, ax, reverse=True), a), np.flip(np.cumsum(np.flip(a, ax), ax), ax))
        _eq(_run(mode, lambda x: lax.cummax(x, ax), a), np.maximum.accumulate(a, ax))
        _eq(_run(mode, lambda x: lax.cummin(x, ax), a), np.minimum.accumulate(a, ax))


def test_cumsum_bool_and_dtype():
    m = np.array([True, False, True])
    assert jnp.cumsum(m).dtype == np.int32
    _eq(jnp.cumsum(m), np.cumsum(m).astype(np.int32))
    _eq(jnp.cumsum(np.arange(4), dtype=np.float32), np.cumsum(np.arange(4), dtype=np.float32))
    _eq(jnp.cumulative_sum(np.arange(4), include_initial=True), np.array([0, 0, 1, 3, 6]))


# ----------------------------------------------------------------------------------------------- sorting

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_sort_argsort(shape, dtype, mode):
    a = _rand(shape, np.int32, 1).astype(dtype)  # many ties: checks stability
    for ax in list(range(len(shape))) + [-1, None]:
        _eq(_run(mode, lambda x: jnp.sort(x, axis=ax), a), np.sort(a, axis=ax))
        _eq(_run(mode, lambda x: jnp.argsort(x, axis=ax), a), np.argsort(a, axis=ax, kind="stable"))
        _eq(_run(mode, lambda x: jnp.argsort(x, axis=ax, descending=True), a),
            (a.shape[ax] - 1) - np.flip(np.argsort(np.flip(a, ax), axis=ax, kind="stable"), ax)
            if ax is not None else np.argsort(-a.ravel().astype(np.int64), kind="stable"))
        _eq(_run(mode, lambda x: jnp.sort(x, axis=ax, descending=True), a),
            np.flip(np.sort(a, axis=ax), ax) if ax is not None else np.sort(a, axis=None)[::-1])


def test_sort_floats_nan_and_signed_zero():
    a = np.array([3.0, np.nan, -0.0, 1.0, 0.0, -np.inf, np.nan, -1.0], np.float32)
    got = np.asarray(jnp.sort(a))
    np.testing.assert_array_equal(got[:6], [-np.inf, -1.0, -0.0, 0.0, 1.0, 3.0])
    assert np.isnan(got[6:]).all()
    # -0.0 and 0.0 compare equal: the stable order keeps them as given
    assert np.signbit(got[2]) and not np.signbit(got[3])
    _eq(jnp.argsort(a), [5, 7, 2, 4, 3, 0, 1, 6])


def test_lax_sort_multi_operand_and_top_k():
    k = np.array([2, 1, 2, 0], np.int32)
    v = np.array([10., 20., 30., 40.], np.float32)
    sk, sv = lax.sort((k, v), num_keys=1)
    _eq(sk, [0, 1, 2, 2])
    _eq(sv, [40., 20., 10., 30.])
    vals, idx = lax.top_k(np.array([1., 5., 3., 5.], np.float32), 2)
    _eq(vals, [5., 5.])
    _eq(idx, [1, 3])


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.array([1, 2, 2, 3, 5], np.float32)
    v = np.array([0, 2, 2.5, 5, 6], np.float32)
    _eq(jnp.searchsorted(a, v, side=side), np.searchsorted(a, v, side=side))


def test_argmax_argmin():
    a = _rand((3, 4), seed=1)
    _eq(jnp.argmax(a, 1), np.argmax(a, 1))
    _eq(jnp.argmin(a), np.argmin(a))


# ----------------------------------------------------------------------------------------------- nn

def test_nn_functions():
    x = np.array([[-3.0, -0.5, 0.0, 0.5, 3.0], [1000.0, 1000.0, -1000.0, 0.0, 1.0]], np.float32)
    _eq(nn.relu(x), np.maximum(x, 0))
    e = np.exp(x - x.max(-1, keepdims=True))
    _eq(nn.softmax(x), e / e.sum(-1, keepdims=True))
    _eq(nn.softmax(x, axis=0), np.exp(x - x.max(0)) / np.exp(x - x.max(0)).sum(0))
    x64 = x.astype(np.float64)
    lse = x64.max(-1) + np.log(np.exp(x64 - x64.max(-1, keepdims=True)).sum(-1))
    _eq(nn.logsumexp(x, axis=-1), lse)
    _eq(nn.logsumexp(x), np.max(x) + np.log(np.exp(x - np.max(x)).sum()))
    _eq(nn.log_softmax(x), (x64 - lse[:, None]).astype(np.float32))
    assert np.isfinite(np.asarray(nn.log_softmax(x))).all()
    from math import erf
    exact = np.vectorize(lambda v: v * (1 + erf(v / np.sqrt(2))) / 2)(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(nn.gelu(x, approximate=False)), exact, rtol=1e-5, atol=1e-5)
    approx = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(np.asarray(nn.gelu(x)), approx, rtol=1e-5, atol=1e-5)
    assert float(nn.logsumexp(np.array([-np.inf, -np.inf], np.float32))) == -np.inf
    assert float(nn.logsumexp(np.array([np.inf, 1.0], np.float32))) == np.inf


def test_one_hot():
    ids = np.array([0, 2, -1, 3, 1])
    _eq(nn.one_hot(ids, 3), np.eye(3, dtype=np.float32)[np.clip(ids, 0, 2)] * ((ids >= 0) & (ids < 3))[:, None])
    assert nn.one_hot(ids, 3, dtype=jnp.int32).dtype == np.int32
    _eq(nn.one_hot(np.array([[0, 1]]), 2, axis=0), np.array([[[1, 0]], [[0, 1]]], np.float32))
    _eq(jax.jit(lambda i: nn.one_hot(i, 4))(np.array([3, 0])), np.eye(4, dtype=np.float32)[[3, 0]])


def test_nn_gradients(x64):
    x = np.array([0.3, -1.2, 2.0, 0.1])
    g = jax.grad(lambda v: nn.logsumexp(v))(x)
    _eq(g, np.exp(x) / np.exp(x).sum())
    g = jax.grad(lambda v: jnp.sum(nn.softmax(v) * np.arange(4.0)))(x)
    s = np.exp(x) / np.exp(x).sum()
    _eq(g, s * (np.arange(4.0) - (s * np.arange(4.0)).sum()))
    _eq(jax.grad(lambda v: jnp.sum(nn.relu(v)))(x), (x > 0).astype(float))


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
    ("concatenate", lambda x, y: jnp.concatenate([x, y, x], axis=1)),
    ("stack", lambda x, y: jnp.stack([x, y])),
    ("pad", lambda x, y: jnp.pad(x * y, ((1, 2), (0, 1)))),
    ("lax.pad", lambda x, y: lax.pad(x, 0.5, [(1, -1, 1), (-1, 1, 0)]) * 2),
    ("tile_repeat", lambda x, y: jnp.tile(x, (2, 1)) + jnp.repeat(y, 2, axis=0)),
    ("flip_roll", lambda x, y: jnp.flip(x, 0) * jnp.roll(y, 1, 1)),
    ("tril_diag", lambda x, y: jnp.tril(x) + jnp.sum(jnp.diagonal(y))),
    ("cumsum", lambda x, y: jnp.cumsum(x, 1) * lax.cumsum(y, 0, reverse=True)),
    ("cumprod", lambda x, y: jnp.cumprod(x + 3.0, 1)),
    ("cummax", lambda x, y: lax.cummax(x, 1) + lax.cummin(y, 0, reverse=True)),
    ("sort", lambda x, y: jnp.sort(x * y, axis=1)),
    ("split", lambda x, y: jnp.split(x, 2, axis=1)[1] * y[:, :2]),
    ("take_along_axis", lambda x, y: jnp.take_along_axis(x, np.array([[2, 0], [1, 1], [3, 3]]), 1)),
])
def test_shape_op_gradients(name, f, x64):
    x, y = _rand((3, 4), np.float64, 1), _rand((3, 4), np.float64, 2)
    _fd_check(f, [x, y])


def test_vmap_shape_ops():
    x = _rand((5, 3, 4), seed=1)
    y = _rand((3, 4), seed=2)
    _eq(jax.vmap(lambda a: jnp.concatenate([a, y], 0))(x), np.stack([np.concatenate([xi, y], 0) for xi in x]))
    _eq(jax.vmap(lambda a, b: jnp.concatenate([a, b], 1), in_axes=(0, None))(x, y),
        np.stack([np.concatenate([xi, y], 1) for xi in x]))
    _eq(jax.vmap(lambda a: jnp.sort(a, 1))(x), np.sort(x, 2))
    _eq(jax.vmap(lambda a: jnp.argsort(a, 0), in_axes=2, out_axes=2)(x), np.argsort(x, 0, kind="stable"))
    _eq(jax.vmap(lambda a: jnp.cumsum(a, 0), in_axes=1)(x), np.moveaxis(np.cumsum(x, 0), 1, 0))
    _eq(jax.vmap(lambda a: jnp.pad(a, 1))(x), np.stack([np.pad(xi, 1) for xi in x]))
    _eq(jax.vmap(lambda a, s: jnp.roll(a, s, 1))(x, np.arange(5)), np.stack([np.roll(xi, s, 1) for s, xi in enumerate(x)]))


def test_reshape_ravel_order_f_match_jax():
    # column-major reshape/ravel; the expected values are JAX 0.10.2's (and NumPy's) for the same calls
    x = jnp.arange(24).reshape(2, 3, 4)
    xn = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.reshape(jnp.arange(6), (2, 3), order="F")), [[0, 2, 4], [1, 3, 5]])
    np.testing.assert_array_equal(np.asarray(x.reshape(4, -1, order="F")), xn.reshape(4, -1, order="F"))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: jnp.ravel(a, order="F"))(x)), xn.ravel(order="F"))
    np.testing.assert_array_equal(np.asarray(x.flatten(order="F")), xn.flatten(order="F"))
    with pytest.raises(NotImplementedError, match="order=A"):
        jnp.reshape(x, (24,), order="A")
    with pytest.raises(ValueError, match="Unexpected value for 'order' argument: Q"):
        jnp.reshape(x, (24,), order="Q")
