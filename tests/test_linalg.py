"""dot_general and the products built on it (dot, matmul/@, vdot, inner, outer, tensordot, einsum, trace)
against NumPy over shapes with empty and size-1 dims, every dimension layout of dot_general, dtypes,
preferred_element_type, errors naming both shapes, gradients by finite differences (float64) and vmap."""
import itertools
import warnings

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def _rand(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-5, 6, shape).astype(dtype)


def _close(got, want, dtype=np.float32):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    if np.dtype(dtype).kind == "f":
        tol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)
    else:
        np.testing.assert_array_equal(got, want)


MODES = ["eager", "jit"]


def _run(mode, f, *args):
    return (jax.jit(f) if mode == "jit" else f)(*args)


# ----------------------------------------------------------------------------------------------- dot_general

def _dot_general_ref(a, b, lc, rc, lb, rb):
    """NumPy reference: move batch, free, contracting axes into place and use einsum."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    la = [None] * a.ndim
    lr = [None] * b.ndim
    for x, y in zip(lb, rb):
        c = next(letters)
        la[x] = lr[y] = c
    for x, y in zip(lc, rc):
        c = next(letters)
        la[x] = lr[y] = c
    for i in range(a.ndim):
        if la[i] is None:
            la[i] = next(letters)
    for i in range(b.ndim):
        if lr[i] is None:
            lr[i] = next(letters)
    out = [la[x] for x in lb] + [la[i] for i in range(a.ndim) if i not in lb and i not in lc] + \
          [lr[i] for i in range(b.ndim) if i not in rb and i not in rc]
    return np.einsum(f"{''.join(la)},{''.join(lr)}->{''.join(out)}", a, b)


def _layouts():
    """(lhs shape, rhs shape, lc, rc, lb, rb): every way of laying out batch/free/contracting dims over
    rank ≤ 3 operands with a batch and a contracting dim, plus matrix/vector cases."""
    cases = []
    # rank-2 x rank-2: contracting any axis of each
    for la, ra in itertools.product(range(2), range(2)):
        ls = [3, 5]
        rs = [4, 6]
        ls[la] = 7
        rs[ra] = 7
        cases.append((tuple(ls), tuple(rs), (la,), (ra,), (), ()))
    # rank-3 x rank-3 with one batch and one contracting axis at every position
    for lbx, lcx in itertools.permutations(range(3), 2):
        for rbx, rcx in itertools.permutations(range(3), 2):
            ls = [3, 3, 3]
            rs = [2, 2, 2]
            ls[lbx] = rs[rbx] = 4
            ls[lcx] = rs[rcx] = 5
            free_l = [i for i in range(3) if i not in (lbx, lcx)][0]
            free_r = [i for i in range(3) if i not in (rbx, rcx)][0]
            ls[free_l], rs[free_r] = 3, 6
            cases.append((tuple(ls), tuple(rs), (lcx,), (rcx,), (lbx,), (rbx,)))
    cases += [
        ((5,), (5,), (0,), (0,), (), ()),
        ((3, 5), (5,), (1,), (0,), (), ()),
        ((5,), (5, 2), (0,), (0,), (), ()),
        ((3,), (4,), (), (), (), ()),
        ((2, 3, 4, 5), (4, 5, 6), (2, 3), (0, 1), (), ()),
        ((2, 3, 4, 5), (5, 6, 4), (3, 2), (0, 2), (), ()),
        ((2, 3, 4), (3, 4, 2), (1,), (0,), (0, 2), (2, 1)),
        ((0, 4), (4, 5), (1,), (0,), (), ()),
        ((3, 0), (0, 5), (1,), (0,), (), ()),
        ((1, 4), (4, 1), (1,), (0,), (), ()),
        ((0, 2, 3), (0, 3, 2), (2,), (1,), (0,), (0,)),
        ((1, 1, 1), (1, 1, 1), (2,), (1,), (0,), (0,)),
        ((70, 60), (50, 60), (1,), (1,), (), ()),
    ]
    return cases


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", _layouts(), ids=lambda c: f"{c[0]}x{c[1]}c{c[2]}{c[3]}b{c[4]}{c[5]}")
def test_dot_general_layouts(case, mode):
    ls, rs, lc, rc, lb, rb = case
    a, b = _rand(ls, seed=1), _rand(rs, seed=2)
    got = _run(mode, lambda x, y: lax.dot_general(x, y, ((lc, rc), (lb, rb))), a, b)
    _close(got, _dot_general_ref(a, b, lc, rc, lb, rb))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.int64, np.bool_])
def test_dot_general_dtypes(dtype, x64):
    a, b = _rand((4, 6), dtype, 1), _rand((6, 3), dtype, 2)
    got = lax.dot_general(a, b, (((1,), (0,)), ((), ())))
    assert got.dtype == np.dtype(dtype)
    want = (a @ b) if dtype != np.bool_ else (a.astype(int) @ b.astype(int)) > 0
    _close(got, want.astype(dtype), dtype)


def test_preferred_element_type():
    a, b = _rand((3, 4), np.int32, 1), _rand((4, 2), np.int32, 2)
    got = lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.float32)
    assert got.dtype == np.float32
    _close(got, (a @ b).astype(np.float32))
    jaxpr = str(jax.make_jaxpr(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                                           preferred_element_type=np.float32))(a, b))
    assert "preferred_element_type=float32" in jaxpr and "dot_general" in jaxpr


def test_contraction_size_mismatch_names_both_shapes():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    for f in (lambda: jnp.dot(a, b), lambda: jnp.matmul(a, b), lambda: a @ jnp.asarray(b),
              lambda: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), lambda: jnp.inner(a, b.T),
              lambda: jnp.tensordot(a, b, 1), lambda: jax.jit(jnp.matmul)(a, b)):
        with pytest.raises(TypeError) as e:
            f()
        msg = str(e.value)
        assert "(3,)" in msg and "(4,)" in msg, msg
    with pytest.raises(TypeError) as e:   # JAX 0.10.2's text exactly (it does not repeat the shapes)
        lax.dot_general(a, b, (((1,), (0,)), ((), ())))
    assert str(e.value) == "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."
    with pytest.raises(TypeError, match="batch"):
        lax.dot_general(np.ones((2, 3, 4)), np.ones((3, 4, 5)), (((2,), (1,)), ((0,), (0,))))


# ----------------------------------------------------------------------------------------------- jnp products

SHAPE_PAIRS = [((), ()), ((3,), ()), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
               ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
               ((0, 4), (4, 5)), ((3, 0), (0, 5)), ((1, 1), (1, 1)), ((2, 0, 4), (4, 3))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_matmul_and_dot(shapes, mode):
    sa, sb = shapes
    a, b = _rand(sa, seed=3), _rand(sb, seed=4)
    if len(sa) >= 1 and len(sb) >= 1:
        want = np.matmul(a, b)
        _close(_run(mode, jnp.matmul, a, b), want)
        _close(_run(mode, lambda x, y: x @ y, jnp.asarray(a), b), want)
    _close(_run(mode, jnp.dot, a, b), np.dot(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k", [(1037, 1029), (3000, 700), (20, 40000)])
def test_large_matrix_vector_products(m, k, dtype, x64):
    """Matrix-vector products big enough to be split between threads by output rows (columns): float64
    NumPy oracle; each row of ``A @ x`` has the same bits in a product of other rows around it (the split
    runs the same dot product per output); a strided (transposed) matrix and a batch of one take the same path."""
    a, x = _rand((m, k), dtype, 11), _rand((k,), dtype, 12)
    y = _rand((m,), dtype, 13)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    want = a.astype(np.float64) @ x.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(x).astype(np.float64)
    f = jax.jit(lambda p, q: p @ q)
    got = np.asarray(f(a, x))
    assert got.dtype == np.dtype(dtype)
    assert np.all(np.abs(got - want) <= tol * scale)
    if m >= 544:   # 272-row blocks (over gemm's 256-output horizontal kernels) give the same rows' bits
        for lo in (0, 16, m // 2 - 7, m - 272):
            assert np.array_equal(np.asarray(f(np.ascontiguousarray(a[lo:lo + 272]), x)), got[lo:lo + 272]), lo
    want_t = y.astype(np.float64) @ a.astype(np.float64)
    got_t = np.asarray(f(y, a))
    assert np.all(np.abs(got_t - want_t) <= tol * (np.abs(y).astype(np.float64) @ np.abs(a).astype(np.float64)))
    at = np.ascontiguousarray(a.T)   # (k, m): `at.T @ x` reads it column by column
    got_s = np.asarray(jax.jit(lambda p, q: p.T @ q)(at, x))
    assert np.all(np.abs(got_s - want) <= tol * scale)
    got_b = np.asarray(jax.jit(lambda p, q: jnp.einsum("bmk,bk->bm", p, q))(a[None], x[None]))
    assert np.all(np.abs(got_b[0] - want) <= tol * scale)


@pytest.mark.parametrize("mode", MODES)
def test_vdot_inner_outer_tensordot(mode):
    a, b = _rand((3, 4), seed=5), _rand((3, 4), seed=6)
    _close(_run(mode, jnp.vdot, a, b), np.vdot(a, b))
    _close(_run(mode, jnp.inner, a, b), np.inner(a, b))
    _close(_run(mode, jnp.inner, a[0], b[1]), np.inner(a[0], b[1]))
    _close(_run(mode, jnp.outer, a[0], b[:, 0]), np.outer(a[0], b[:, 0]))
    _close(_run(mode, jnp.outer, a, b), np.outer(a, b))
    c, d = _rand((2, 3, 4), seed=7), _rand((3, 4, 5), seed=8)
    _close(_run(mode, jnp.tensordot, c, d), np.tensordot(c, d))
    _close(_run(mode, lambda x, y: jnp.tensordot(x, y, 1), c, _rand((4, 2), seed=9)),
           np.tensordot(c, _rand((4, 2), seed=9), 1))
    _close(_run(mode, lambda x, y: jnp.tensordot(x, y, ((1, 0), (0, 2))), c, _rand((3, 5, 2), seed=9)),
           np.tensordot(c, _rand((3, 5, 2), seed=9), ((1, 0), (0, 2))))
    _close(_run(mode, lambda x, y: jnp.tensordot(x, y, 0), a[0], b[0]), np.tensordot(a[0], b[0], 0))


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ij->ji", [(3, 4)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]), ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("i,i,i->i", [(4,), (4,), (4,)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("iij->j", [(3, 3, 4)]), ("ij,j", [(0, 4), (4,)]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("spec", EINSUMS, ids=lambda s: s[0])
def test_einsum(spec, mode):
    sub, shapes = spec
    ops = [_rand(s, seed=i + 10) for i, s in enumerate(shapes)]
    _close(_run(mode, lambda *xs: jnp.einsum(sub, *xs), *ops), np.einsum(sub, *ops))


@pytest.mark.parametrize("shape,offset", [((3, 3), 0), ((3, 4), 1), ((4, 3), -1), ((2, 3, 3), 0), ((3, 3), 5)])
def test_trace(shape, offset):
    a = _rand(shape, seed=3)
    if len(shape) == 2:
        _close(jnp.trace(a, offset), np.trace(a, offset))
    else:
        _close(jnp.trace(a, offset, 1, 2), np.trace(a, offset, 1, 2))


def test_int_and_bool_products():
    a, b = _rand((3, 4), np.int32, 1), _rand((4, 2), np.int32, 2)
    _close(jnp.dot(a, b), a @ b, np.int32)
    _close(jnp.matmul(a, b.astype(np.float32)), a @ b.astype(np.float32))  # promotes to float32
    assert jnp.matmul(a, b.astype(np.float32)).dtype == np.float32
    m = np.array([[True, False], [False, False]])
    assert jnp.dot(m, m).dtype == np.bool_
    _close(jnp.dot(m, m), np.dot(m, m), np.bool_)


def test_weak_types_and_dtype_promotion():
    x = jnp.ones((2, 2), jnp.float32)
    assert (x @ x).dtype == np.float32
    assert jnp.dot(x, 2.0).dtype == np.float32
    assert jnp.dot(np.ones((2, 2), np.int32), np.ones((2, 2), np.float32)).dtype == np.float32


# ----------------------------------------------------------------------------------------------- fusion / jaxpr

def test_dot_epilogue_fuses_and_transposes_fold():
    """bias + relu after a matmul run as one kernel reading the gemm output; x @ w.T needs no copy."""
    from cranax import _core
    from cranax.interpreters.lowering import lower_jaxpr

    def f(x, w, b):
        return jnp.maximum(x @ w.T + b, 0.0)
    x, w, b = _rand((8, 5), seed=1), _rand((6, 5), seed=2), _rand((6,), seed=3)
    _close(jax.jit(f)(x, w, b), np.maximum(x @ w.T + b, 0))
    closed = jax.make_jaxpr(f)(x, w, b)
    text = str(closed)
    assert "dot_general" in text and "transpose" in text
    plan_text = None
    for name in ("plan_text", "explain", "compile_text"):
        fn = getattr(_core, name, None)
        if fn is not None:
            try:
                plan_text = fn(lower_jaxpr(closed))
                break
            except Exception:
                pass
    if plan_text is not None and isinstance(plan_text, str):
        assert plan_text.count("kernel") <= 2, plan_text


# ----------------------------------------------------------------------------------------------- autodiff

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
    cts = vjp(ct)
    lhs = sum(float(np.sum(np.asarray(c) * t)) for c, t in zip(cts, tangents))
    np.testing.assert_allclose(lhs, float(np.sum(ct * fd)), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in _layouts() if 0 not in c[0] + c[1]][::3],
                         ids=lambda c: f"{c[0]}x{c[1]}")
def test_dot_general_gradients(case, x64):
    ls, rs, lc, rc, lb, rb = case
    a, b = _rand(ls, np.float64, 1), _rand(rs, np.float64, 2)
    _fd_check(lambda x, y: lax.dot_general(x, y, ((lc, rc), (lb, rb))), [a, b])


def test_product_gradients(x64):
    a, b = _rand((3, 4), np.float64, 1), _rand((4, 5), np.float64, 2)
    _fd_check(lambda x, y: jnp.sum(jnp.tanh(x @ y)), [a, b])
    _fd_check(lambda x, y: jnp.einsum("ij,kj->ik", x, y), [a, b.T])
    _fd_check(lambda x: jnp.trace(x @ x.T), [a])
    g = jax.grad(lambda w: jnp.sum((a @ w) ** 2))(b)
    np.testing.assert_allclose(np.asarray(g), 2 * a.T @ (a @ b), rtol=1e-10)
    gj = jax.jit(jax.grad(lambda w: jnp.sum((a @ w) ** 2)))(b)
    np.testing.assert_allclose(np.asarray(gj), 2 * a.T @ (a @ b), rtol=1e-10)


# ----------------------------------------------------------------------------------------------- vmap

@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (1, 0), (2, 1)])
def test_vmap_matmul(axes):
    ax, ay = axes
    x, y = _rand((3, 4, 5), seed=1), _rand((5, 3, 6), seed=2)
    if ax is None:
        x = x[0]
    if ay is None:
        y = y[:, 0]
    xs = x if ax is None else np.moveaxis(x, 0, ax)
    ys = y if ay is None else np.moveaxis(y, 1, ay) if ay is not None else y
    if ay == 0:
        ys = np.moveaxis(y, 1, 0)
    if ay == 1:
        ys = y
    got = jax.vmap(jnp.matmul, in_axes=(ax, ay))(xs, ys)
    want = np.stack([(x[i] if ax is not None else x) @ (y[:, i] if ay is not None else y) for i in range(3)])
    _close(got, want)


def test_vmap_dot_general_batch_dims():
    x, y = _rand((3, 2, 4, 5), seed=1), _rand((3, 2, 5, 6), seed=2)
    f = lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))  # noqa: E731
    got = jax.vmap(f)(x, y)
    _close(got, np.einsum("nbij,nbjk->nbik", x, y))
    got = jax.vmap(jax.vmap(jnp.matmul), in_axes=(1, 1), out_axes=1)(x, y)
    _close(got, np.einsum("nbij,nbjk->nbik", x, y))


# --- Gram products: x @ x.T is computed as a symmetric product (half the flops, like BLAS syrk) --------------

@pytest.mark.parametrize("n,k", [(300, 40), (513, 17), (16, 3)])
@pytest.mark.parametrize("path", ["jit", "eager", "numpy-in", "matmul"])
def test_gram_product_paths(n, k, path):
    x_np = np.random.default_rng(n).standard_normal((n, k)).astype(np.float32)
    x = jnp.asarray(x_np)
    if path == "jit":
        r = jax.jit(lambda a: jnp.dot(a, a.T))(x)
    elif path == "eager":
        r = jnp.dot(x, x.T)
    elif path == "numpy-in":
        r = jnp.dot(x_np, x_np.T)
    else:
        r = x @ x.T
    r = np.asarray(r)
    want = x_np.astype(np.float64) @ x_np.T.astype(np.float64)
    assert r.shape == (n, n) and r.dtype == np.float32
    np.testing.assert_allclose(r, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(r, r.T)  # mirrored exactly


def test_gram_float64_and_transposed_left():
    jax.config.update("jax_enable_x64", True)  # restored by conftest
    x_np = np.random.default_rng(1).standard_normal((260, 300))
    r = np.asarray(jax.jit(lambda a: a.T @ a)(jnp.asarray(x_np)))
    assert r.dtype == np.float64
    np.testing.assert_allclose(r, x_np.T @ x_np, rtol=1e-12, atol=1e-10)


def test_eager_transpose_is_a_lazy_view():
    x_np = np.arange(300 * 400, dtype=np.float32).reshape(300, 400) / 1e4
    y_np = np.random.default_rng(2).standard_normal((500, 400)).astype(np.float32)
    x, y = jnp.asarray(x_np), jnp.asarray(y_np)
    t = x.T
    assert isinstance(t, jax.Array) and t.shape == (400, 300) and t.dtype == np.float32
    # products fold the transpose; every other use materializes it once, with the right values
    np.testing.assert_allclose(np.asarray(x @ y.T), x_np @ y_np.T, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.asarray(jnp.dot(t, x)), x_np.T @ x_np, rtol=1e-4, atol=1e-2)
    np.testing.assert_array_equal(np.asarray(t + 0), x_np.T)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a * 1)(t)), x_np.T)
    np.testing.assert_array_equal(np.asarray(t), x_np.T)
    assert t.devices() == x.devices()
    with pytest.raises(TypeError) as e:
        jnp.dot(t, y.T)
    # JAX 0.10.2's text
    assert str(e.value) == "dot_general requires contracting dimensions to have the same shape, got (300,) and (400,)."
    # under a trace, .T is lax.transpose as in JAX
    assert "transpose" in str(jax.make_jaxpr(lambda a: a.T)(x))


def test_independent_large_products_run_side_by_side():
    # Two consecutive, independent products above 4M multiply-adds run at once (one thread each); a product
    # reading the other's result does not. Values against NumPy either way.
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in [(128, 256), (256, 256), (256, 192)])
    f = jax.jit(lambda a, b, c: (a @ b, a @ c, (a @ b) @ b))
    r1, r2, r3 = (np.asarray(r) for r in f(a, b, c))
    a64, b64, c64 = (v.astype(np.float64) for v in (a, b, c))
    np.testing.assert_allclose(r1, a64 @ b64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r2, a64 @ c64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(r3, (a64 @ b64) @ b64, rtol=1e-4, atol=1e-2)
    # reverse mode of a two-layer net: the weight and input gradients of a layer form such a pair
    w1, w2 = rng.standard_normal((256, 256)).astype(np.float32) / 16, rng.standard_normal((256, 64)).astype(np.float32) / 16
    x = rng.standard_normal((128, 256)).astype(np.float32)
    g1, g2 = jax.jit(jax.grad(lambda w1, w2: jnp.sum(jnp.tanh(x @ w1) @ w2), argnums=(0, 1)))(w1, w2)
    h = np.tanh(x.astype(np.float64) @ w1)
    dh = np.ones((128, 64)) @ w2.T.astype(np.float64) * (1 - h ** 2)
    np.testing.assert_allclose(np.asarray(g2), h.T @ np.ones((128, 64)), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(np.asarray(g1), x.T.astype(np.float64) @ dh, rtol=1e-4, atol=1e-3)


# ----------------------------------------------------------------------------------------------- lax.linalg
# Factorizations against NumPy/SciPy (LAPACK) up to the sign freedom of each, over batched and empty shapes,
# float32/float64, eager, jit and vmap; jvps against central finite differences in float64.
import scipy.linalg as _sla  # noqa: E402

from cranax.lax import linalg as lxl  # noqa: E402

LA_SHAPES = [(3, 3), (1, 1), (0, 0), (2, 4, 4), (2, 3, 5, 5), (0, 3, 3)]
RECT_SHAPES = [(4, 3), (3, 5), (2, 6, 4), (2, 3, 5), (0, 2), (1, 3, 0)]
FLOATS = [np.float32, np.float64]


def _tol(dtype):
    return (2e-4, 2e-4) if np.dtype(dtype) == np.float32 else (1e-10, 1e-10)


def _spd(shape, dtype, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _lapply(f, x, *rest):
    """NumPy/SciPy function over the leading batch axes."""
    x = np.asarray(x)
    if x.ndim == 2:
        return f(x, *rest)
    outs = [_lapply(f, x[i], *[r[i] for r in rest]) for i in range(x.shape[0])]
    if isinstance(outs[0] if outs else None, tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs) if outs else None


def _set_x64(dtype):
    jax.config.update("jax_enable_x64", np.dtype(dtype) == np.float64)  # restored by conftest


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(512, 512), (641, 641), (2, 530, 530)])
def test_cholesky_in_blocks_against_numpy(shape, dtype):
    """From n = 512 cranax factors in 128-blocks (`cholesky_blocked`): whole blocks, a narrow last one (641 =
    5·128 + 1), a batch; and a matrix that fails in a middle block gives NaNs (lower) and zeros (upper) like JAX."""
    _set_x64(dtype)
    a = _spd(shape, dtype, seed=2)
    got = np.asarray(jax.jit(lxl.cholesky)(a))
    assert got.dtype == dtype and got.shape == shape
    want = np.linalg.cholesky(a.astype(np.float64))
    scale = np.abs(want).max()
    np.testing.assert_allclose(got / scale, want / scale, rtol=0, atol=(2e-5 if dtype == np.float32 else 1e-13))
    bad = a.copy()
    bad[..., 300, 300] = -1.0
    got = np.asarray(lxl.cholesky(bad))
    low = np.tril(np.ones(shape[-2:], bool))
    assert np.isnan(got[..., low]).all() and (got[..., ~low] == 0).all()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LA_SHAPES)
def test_cholesky_against_numpy(shape, dtype, mode):
    _set_x64(dtype)
    a = _spd(shape, dtype)
    got = np.asarray(_run(mode, lxl.cholesky, a))
    assert got.dtype == dtype and got.shape == shape
    rtol, atol = _tol(dtype)
    np.testing.assert_allclose(got, np.linalg.cholesky(a.astype(np.float64)), rtol=rtol * 10, atol=atol * 10)


def test_cholesky_not_positive_definite_gives_nans_like_jax():
    # JAX 0.10.2: lax.linalg.cholesky([[1., 2.], [2., 1.]]) -> [[nan, 0.], [nan, nan]]
    got = np.asarray(lxl.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)))
    assert np.isnan(got[0, 0]) and got[0, 1] == 0 and np.isnan(got[1]).all()
    # one bad matrix in a batch spoils only itself
    b = np.stack([_spd((2, 2), np.float32), np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)])
    got = np.asarray(lxl.cholesky(b))
    assert np.isfinite(got[0]).all() and np.isnan(got[1, 1, 0])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LA_SHAPES + RECT_SHAPES)
def test_lu_against_scipy(shape, dtype, mode):
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=3)
    lu, piv, perm = _run(mode, lxl.lu, a)
    lu, piv, perm = np.asarray(lu), np.asarray(piv), np.asarray(perm)
    m, n = shape[-2:]
    assert lu.dtype == dtype and piv.dtype == np.int32 and perm.dtype == np.int32
    assert piv.shape == shape[:-2] + (min(m, n),) and perm.shape == shape[:-2] + (m,)
    rtol, atol = _tol(dtype)
    for idx in np.ndindex(shape[:-2]):
        if m == 0 or n == 0:
            np.testing.assert_array_equal(perm[idx], np.arange(m))
            continue
        p, l, u = _sla.lu(a[idx].astype(np.float64))
        k = min(m, n)
        want_lu = np.zeros((m, n))
        want_lu[:, :k] += np.tril(l, -1)
        want_lu[:k, :] += np.triu(u)
        np.testing.assert_allclose(lu[idx], want_lu, rtol=rtol * 10, atol=atol * 10)
        if m == n:
            np.testing.assert_array_equal(piv[idx], _sla.lu_factor(a[idx].astype(np.float64))[1])
        np.testing.assert_array_equal(perm[idx], np.argmax(p, axis=0))
        np.testing.assert_array_equal(np.asarray(lxl.lu_pivots_to_permutation(piv[idx], m)), perm[idx])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(512, 512), (641, 641), (1000, 1000), (2, 600, 600)])
def test_lu_in_blocks_against_scipy(shape, dtype):
    """From n = 512 cranax factors in 128-column blocks (`lu_blocked`: faer's LU of each tall panel, the other
    columns swapped, solved and updated around it): whole blocks, a narrow last one (641 = 5·128 + 1), 1000
    (7·128 + 104), a batch (its matrices one per thread). float64: getrf's interchanges exactly (SciPy's) and
    its factors; both dtypes: partial pivoting (|L| <= 1) and the backward error bound of an LU,
    |P a - L U| <= 3 n eps |L| |U| entrywise (Higham's gamma_n, plus the check's own float64 product)."""
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=7)
    lu, piv, perm = (np.asarray(x) for x in jax.jit(lxl.lu)(a))
    n = shape[-1]
    assert lu.dtype == dtype and lu.shape == shape and piv.shape == perm.shape == shape[:-1]
    eps = np.finfo(dtype).eps
    for idx in np.ndindex(shape[:-2]):
        l = np.tril(lu[idx], -1).astype(np.float64) + np.eye(n)
        u = np.triu(lu[idx]).astype(np.float64)
        assert np.abs(l).max() <= 1 + 4 * eps
        err = np.abs(a[idx][perm[idx]].astype(np.float64) - l @ u)
        assert (err <= 3 * n * eps * (np.abs(l) @ np.abs(u))).all(), err.max()
        np.testing.assert_array_equal(perm[idx], np.asarray(lxl.lu_pivots_to_permutation(piv[idx], n)))
        if dtype == np.float64:
            want_lu, want_piv = _sla.lu_factor(a[idx])
            np.testing.assert_array_equal(piv[idx], want_piv)
            scale = np.abs(want_lu).max()
            np.testing.assert_allclose(lu[idx] / scale, want_lu / scale, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [600, 1000])
def test_solve_inv_det_slogdet_in_blocks(n, dtype):
    """`solve`, `inv`, `det`, `slogdet`, `lu_factor`/`lu_solve` at orders that take the blocked LU, against
    NumPy/SciPy in float64; a singular matrix (all ones) gives det 0, slogdet (0, -inf) and a non-finite
    inverse, as JAX's."""
    _set_x64(dtype)
    rtol, atol = _tol(dtype)
    a = _rand((n, n), dtype, seed=n) + np.asarray(2 * np.sqrt(n) * np.eye(n), dtype)
    b = _rand((n, 3), dtype, seed=1)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    got = np.asarray(jax.jit(jnp.linalg.solve)(a, b))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, np.linalg.solve(a64, b64), rtol=rtol * 10, atol=atol * 10)
    np.testing.assert_allclose(np.asarray(jax.jit(jnp.linalg.inv)(a)), np.linalg.inv(a64), rtol=rtol * 10,
                               atol=atol * 10)
    sign, logdet = (np.asarray(x) for x in jax.jit(jnp.linalg.slogdet)(a))
    want_sign, want_logdet = np.linalg.slogdet(a64)
    assert sign == want_sign and sign.dtype == logdet.dtype == dtype
    np.testing.assert_allclose(logdet, want_logdet, rtol=rtol)
    # det of a scaled so that |det| = 1 (a's own overflows)
    s = (a64 / np.exp(want_logdet / n)).astype(dtype)
    np.testing.assert_allclose(np.asarray(jax.jit(jnp.linalg.det)(s)), np.linalg.det(s.astype(np.float64)),
                               rtol=rtol * 10)
    lu, piv = jax.jit(jsl.lu_factor)(a)
    if dtype == np.float64:
        np.testing.assert_array_equal(np.asarray(piv), _sla.lu_factor(a64)[1])
    got = np.asarray(jax.jit(jsl.lu_solve)((lu, piv), b))
    np.testing.assert_allclose(got, _sla.lu_solve(_sla.lu_factor(a64), b64), rtol=rtol * 10, atol=atol * 10)
    ones = np.ones((n, n), dtype)
    assert np.asarray(jnp.linalg.det(ones)) == 0
    sign, logdet = (np.asarray(x) for x in jnp.linalg.slogdet(ones))
    assert sign == 0 and logdet == -np.inf
    assert not np.isfinite(np.asarray(jnp.linalg.inv(ones))).all()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LA_SHAPES + RECT_SHAPES)
def test_qr_against_numpy(shape, dtype, full, mode):
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=4)
    q, r = _run(mode, lambda x: lxl.qr(x, full_matrices=full), a)
    q, r = np.asarray(q), np.asarray(r)
    wq, wr = np.linalg.qr(a.astype(np.float64), mode="complete" if full else "reduced")
    rtol, atol = _tol(dtype)
    # LAPACK's geqrf signs (faer's Householder reflections make the same choice)
    np.testing.assert_allclose(q, wq, rtol=rtol * 10, atol=atol * 10)
    np.testing.assert_allclose(r, wr, rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(384, 384), (641, 641), (1000, 1000), (800, 500), (500, 800), (2, 450, 450)])
def test_qr_in_blocks_against_numpy(shape, dtype, full):
    """From min(m, n) = 384 cranax factors in panels of whole reflector blocks (`qr_blocked`: faer's QR of each
    tall panel, its reflectors applied to the columns right of it in chunks) and builds Q in column chunks that
    skip the reflectors right of each chunk (`qr_q_chunks`): panels that do not divide n (641, 1000), tall and
    wide matrices (the wide one's last columns take every reflector and none of their own), a batch (its
    matrices one per thread). Q orthonormal and Q R = a within a bound of the order of n eps, R upper
    triangular, both equal to NumPy's (LAPACK geqrf/orgqr, the same signs)."""
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=11)
    q, r = (np.asarray(x) for x in jax.jit(lambda x: lxl.qr(x, full_matrices=full))(a))
    m, n = shape[-2:]
    k = min(m, n)
    qc = m if full else k
    assert q.dtype == r.dtype == dtype and q.shape == shape[:-2] + (m, qc) and r.shape == shape[:-2] + (qc, n)
    eps = np.finfo(dtype).eps
    rtol, atol = _tol(dtype)
    for idx in np.ndindex(shape[:-2]):
        q64, r64, a64 = q[idx].astype(np.float64), r[idx].astype(np.float64), a[idx].astype(np.float64)
        assert np.abs(q64.T @ q64 - np.eye(qc)).max() <= 0.05 * m * eps
        assert np.abs(q64 @ r64 - a64).max() <= 0.05 * m * eps * np.abs(a64).max()
        assert (np.tril(r64, -1) == 0).all()
        wq, wr = np.linalg.qr(a64, mode="complete" if full else "reduced")
        np.testing.assert_allclose(q64, wq, rtol=0, atol=atol * 10)
        np.testing.assert_allclose(r64, wr, rtol=0, atol=atol * 10 * np.abs(wr).max())


@pytest.mark.parametrize("dtype", FLOATS)
def test_qr_in_blocks_of_a_dependent_column(dtype):
    """A column that faer's QR takes for dependent (a copy of an earlier one) sends the driver back to faer's own
    QR (its rank test, which a panel sees only in part): Q orthonormal and Q R = a all the same, R upper
    triangular, R's diagonal tiny at that column."""
    _set_x64(dtype)
    a = _rand((641, 641), dtype, seed=12)
    a[:, 500] = a[:, 3]
    q, r = (np.asarray(x).astype(np.float64) for x in jax.jit(lxl.qr)(a))
    eps = np.finfo(dtype).eps
    assert np.abs(q.T @ q - np.eye(641)).max() <= 0.05 * 641 * eps
    assert np.abs(q @ r - a).max() <= 0.05 * 641 * eps * np.abs(a).max()
    assert (np.tril(r, -1) == 0).all()
    assert abs(r[500, 500]) <= 100 * 641 * eps * np.linalg.norm(a[:, 3])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [600, 1000])
def test_eigh_and_svd_large_against_numpy(n, dtype):
    """eigh and svd at orders where the pool takes them (eigh's back-transformation in column blocks of 128 on
    the pool's threads): eigenvalues / singular values against LAPACK's (NumPy) within n eps of the
    largest, eigen/singular vectors orthonormal, a V = V diag(w) and U diag(s) V^T = a."""
    _set_x64(dtype)
    eps = np.finfo(dtype).eps
    g = _rand((n, n), dtype, seed=n + 1)
    s = ((g + g.T) / 2).astype(dtype)
    w, v = (np.asarray(x).astype(np.float64) for x in jax.jit(jnp.linalg.eigh)(s))
    s64 = s.astype(np.float64)
    wn = np.linalg.eigvalsh(s64)
    scale = np.abs(wn).max()
    assert np.abs(w - wn).max() <= n * eps * scale
    assert np.abs(v.T @ v - np.eye(n)).max() <= n * eps
    assert np.abs(s64 @ v - v * w).max() <= n * eps * scale
    u, sv, vt = (np.asarray(x).astype(np.float64) for x in jax.jit(jnp.linalg.svd)(g))
    g64 = g.astype(np.float64)
    sn = np.linalg.svd(g64, compute_uv=False)
    assert np.abs(sv - sn).max() <= n * eps * sn[0]
    assert np.abs(u.T @ u - np.eye(n)).max() <= n * eps
    assert np.abs(vt @ vt.T - np.eye(n)).max() <= n * eps
    assert np.abs((u * sv) @ vt - g64).max() <= n * eps * sn[0]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LA_SHAPES)
def test_eigh_against_numpy(shape, dtype, lower, mode):
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=5)
    # symmetrize_input=False reads one triangle only: the other holds garbage
    v, w = _run(mode, lambda x: lxl.eigh(x, lower=lower, symmetrize_input=False), a)
    v, w = np.asarray(v), np.asarray(w)
    wa = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2) if lower else \
        np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)
    rtol, atol = _tol(dtype)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(wa.astype(np.float64)), rtol=rtol * 10, atol=atol * 10)
    np.testing.assert_allclose(wa @ v, v * w[..., None, :], rtol=rtol * 20, atol=atol * 20)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(shape[-1]), shape),
                               atol=atol * 10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LA_SHAPES + [(130, 130), (2, 300, 300)])
def test_jnp_eigh_symmetrized_and_eigvalsh(shape, dtype, mode):
    """jnp.linalg.eigh/eigvalsh symmetrize a non-symmetric operand, which the optimizer folds into the copy
    into faer's workspace (`eigh_folded`); eigvalsh's unread eigenvectors are not computed. 130: faer's
    divide and conquer (from 128); 300: its back-transformation split over the pool's threads."""
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=15)
    s = (a.astype(np.float64) + np.swapaxes(a, -1, -2)) / 2
    want = np.linalg.eigvalsh(s)
    rtol, atol = _tol(dtype)
    scale = max(1.0, float(np.abs(want).max(initial=0.0))) * max(1, shape[-1] // 10)
    for uplo in ("L", "U"):
        w, v = (np.asarray(t) for t in _run(mode, lambda x: JLA.eigh(x, UPLO=uplo), a))
        assert w.dtype == dtype and v.shape == shape
        np.testing.assert_allclose(w, want, rtol=rtol * 10, atol=atol * 10 * scale)
        np.testing.assert_allclose(s @ v, v * w[..., None, :], atol=atol * 20 * scale)
        np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(shape[-1]), shape),
                                   atol=atol * 10 * max(1, shape[-1] // 10))
        wv = np.asarray(_run(mode, lambda x: JLA.eigvalsh(x, UPLO=uplo), a))
        assert wv.dtype == dtype and wv.shape == shape[:-1]
        np.testing.assert_allclose(wv, want, rtol=rtol * 10, atol=atol * 10 * scale)
    # the eigenvalues alone of an operand read by one triangle (symmetrize_input=False)
    wl = np.asarray(_run(mode, lambda x: lxl.eigh(x, symmetrize_input=False)[1], a))
    lo = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    np.testing.assert_allclose(wl, np.linalg.eigvalsh(lo.astype(np.float64)), rtol=rtol * 10,
                               atol=atol * 10 * scale)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(100, 100), (2, 70, 90), (120, 60)])
def test_svd_divide_and_conquer_below_128(shape, dtype):
    """Below 128 the SVD divides down to 48 (`svd_params`) instead of faer's QR iteration."""
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=16)
    rtol, atol = _tol(dtype)
    for full in (True, False):
        u, s, vt = (np.asarray(t) for t in jax.jit(lambda x: JLA.svd(x, full_matrices=full))(a))
        ws = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        np.testing.assert_allclose(s, ws, rtol=rtol * 10, atol=atol * 100)
        k = s.shape[-1]
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, atol=atol * 100)
        for m_ in (u, np.swapaxes(vt, -1, -2)):
            eye = np.broadcast_to(np.eye(m_.shape[-1]), m_.shape[:-2] + (m_.shape[-1],) * 2)
            np.testing.assert_allclose(np.swapaxes(m_, -1, -2) @ m_, eye, atol=atol * 100)
    np.testing.assert_allclose(np.asarray(JLA.svd(a, compute_uv=False)), ws, rtol=rtol * 10, atol=atol * 100)


def test_eigh_and_eigvalsh_of_nan_give_nans():
    a = _spd((2, 140, 140), np.float32)
    a[1, 3, 5] = a[1, 5, 3] = np.nan
    w, v = JLA.eigh(a)
    w, v, wv = np.asarray(w), np.asarray(v), np.asarray(jax.jit(JLA.eigvalsh)(a))
    np.testing.assert_allclose(w[0], np.linalg.eigvalsh(a[0]), rtol=1e-4)
    np.testing.assert_allclose(wv[0], np.linalg.eigvalsh(a[0]), rtol=1e-4)
    # JAX 0.10.2 (LAPACK) gives 139 NaN eigenvalues of 140 here, and 272.19 first: a NaN spreads, not
    # necessarily to every value
    assert np.isnan(w[1]).any() and np.isnan(v[1]).any() and np.isnan(wv[1]).sum() >= 139


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", LA_SHAPES + RECT_SHAPES)
def test_svd_against_numpy(shape, dtype, full, mode):
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=6)
    u, s, vt = (np.asarray(t) for t in _run(mode, lambda x: lxl.svd(x, full_matrices=full), a))
    wu, ws, wvt = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    assert u.shape == wu.shape and vt.shape == wvt.shape and s.dtype == dtype
    rtol, atol = _tol(dtype)
    np.testing.assert_allclose(s, ws, rtol=rtol * 10, atol=atol * 10)
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vt[..., :k, :], a, rtol=rtol * 20, atol=atol * 20)
    for m_ in (u, np.swapaxes(vt, -1, -2)):   # orthonormal columns
        np.testing.assert_allclose(np.swapaxes(m_, -1, -2) @ m_, np.broadcast_to(np.eye(m_.shape[-1]),
                                   m_.shape[:-2] + (m_.shape[-1],) * 2), atol=atol * 10)
    np.testing.assert_allclose(np.asarray(lxl.svd(a, compute_uv=False)), ws, rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("flags", list(itertools.product([True, False], repeat=4)))
@pytest.mark.parametrize("dtype", FLOATS)
def test_triangular_solve_against_scipy(flags, dtype, mode):
    _set_x64(dtype)
    left, lower, trans, unit = flags
    a = _rand((2, 4, 4), dtype, seed=7) + 4 * np.eye(4, dtype=dtype)
    b = _rand((2, 4, 3) if left else (2, 3, 4), dtype, seed=8)
    got = np.asarray(_run(mode, lambda a, b: lxl.triangular_solve(a, b, left_side=left, lower=lower,
                                                                  transpose_a=trans, unit_diagonal=unit), a, b))
    want = []
    for i in range(2):
        t = np.tril(a[i]) if lower else np.triu(a[i])
        if unit:
            t = t - np.diag(np.diag(t)) + np.eye(4)
        op = t.T if trans else t
        want.append(np.linalg.solve(op, b[i]) if left else np.linalg.solve(op.T, b[i].T).T)
    rtol, atol = _tol(dtype)
    np.testing.assert_allclose(got, np.stack(want), rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("flags", list(itertools.product([True, False], repeat=4)))
def test_triangular_solve_in_column_blocks_against_scipy(flags):
    # 200 to 700 right-hand columns: solved in 2-4 independent blocks of columns (linalg.rs, `rhs_blocks`),
    # the blocks of the bigger ones on the pool's threads; a batch of two keeps every matrix its own
    _set_x64(np.float64)
    left, lower, trans, unit = flags
    for n, k in ((40, 700), (170, 200), (180, 390)):
        # small off-diagonal entries: well conditioned with a unit diagonal too
        a = _rand((2, n, n), np.float64, seed=n) / np.sqrt(n) + 2 * np.eye(n)
        b = _rand((2, n, k) if left else (2, k, n), np.float64, seed=k)
        got = np.asarray(jax.jit(lambda a, b: lxl.triangular_solve(a, b, left_side=left, lower=lower,
                                                                   transpose_a=trans, unit_diagonal=unit))(a, b))
        for i in range(2):
            tri = np.tril(a[i]) if lower else np.triu(a[i])
            if unit:
                tri = tri - np.diag(np.diag(tri)) + np.eye(n)
            op = tri.T if trans else tri
            want = _sla.solve(op, b[i]) if left else _sla.solve(op.T, b[i].T).T
            np.testing.assert_allclose(got[i], want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [100, 200, 300, 520])
def test_inv_and_wide_solves_in_column_blocks_match_numpy(n, dtype):
    # inv solves against the identity in 4-8 blocks of columns, each from its own first row (no getri);
    # solve against many columns in 2-4 blocks; from n²c = 160³ the blocks run on the pool's threads
    _set_x64(dtype)
    a = _rand((n, n), dtype, seed=n) + (2 * np.sqrt(n) * np.eye(n)).astype(dtype)
    b = _rand((n, 2 * n), dtype, seed=n + 1)
    rtol, atol = (2e-4, 2e-5) if np.dtype(dtype) == np.float32 else (1e-10, 1e-12)
    a64 = a.astype(np.float64)
    inv = np.asarray(jax.jit(jnp.linalg.inv)(a))
    assert inv.dtype == dtype
    np.testing.assert_allclose(inv, np.linalg.inv(a64), rtol=rtol, atol=atol)
    x = np.asarray(jax.jit(jnp.linalg.solve)(a, b))
    np.testing.assert_allclose(x, np.linalg.solve(a64, b.astype(np.float64)), rtol=rtol, atol=atol * 10)
    # a batch of two: each matrix its own blocks
    a2 = np.stack([a, a.T.copy()])
    inv2 = np.asarray(jax.jit(jnp.linalg.inv)(a2))
    np.testing.assert_allclose(inv2[1], np.linalg.inv(a64.T), rtol=rtol, atol=atol)
    np.testing.assert_array_equal(inv2[0], inv)


def test_linalg_vmap_matches_batched():
    a = _spd((3, 4, 4), np.float32)
    np.testing.assert_allclose(np.asarray(jax.vmap(lxl.cholesky)(a)), np.asarray(lxl.cholesky(a)), rtol=1e-6)
    v1, w1 = jax.vmap(lxl.eigh, in_axes=2, out_axes=0)(np.moveaxis(a, 0, 2))
    np.testing.assert_allclose(np.asarray(w1), np.asarray(lxl.eigh(a)[1]), rtol=1e-5)
    b = _rand((4, 2), np.float32)   # an unbatched right-hand side against a batch of matrices
    got = jax.vmap(lambda m: lxl.triangular_solve(m, b, left_side=True, lower=True))(a)
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(np.tril(a), b), rtol=1e-4, atol=1e-5)
    for f in (lambda x: lxl.lu(x)[0], lambda x: lxl.qr(x)[1], lambda x: lxl.svd(x)[1]):
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(a)), np.asarray(f(a)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n, batch", [(3, 1000), (5, 300), (120, 3)])
def test_large_batches_split_over_threads_match_numpy(n, batch):
    # batches big enough to be split into runs over the thread pool (each run reusing one workspace), and
    # matrices big enough for faer's own parallelism (n=120): every matrix must still be its own
    _set_x64(np.float64)
    a = _rand((batch, n, n), np.float64, seed=5) + 2 * np.sqrt(n) * np.eye(n)
    a[batch // 2] = 0  # a singular matrix mid-batch must not disturb its neighbours' workspace
    b = _rand((batch, n, 2), np.float64, seed=6)
    lu, piv, perm = (np.asarray(x) for x in jax.jit(lxl.lu)(a))
    x = np.asarray(jax.jit(jnp.linalg.solve)(a, b))
    spd = _spd((batch, n, n), np.float64, seed=7)
    spd[1] = -spd[1]  # not positive definite: NaNs for that matrix only
    chol = np.asarray(jax.jit(lxl.cholesky)(spd))
    for i in range(batch):
        if i == batch // 2:
            assert np.array_equal(perm[i], np.arange(n))
            continue
        want_lu, want_piv = _sla.lu_factor(a[i])
        np.testing.assert_allclose(lu[i], want_lu, rtol=1e-9, atol=1e-11)
        np.testing.assert_array_equal(piv[i], want_piv)
        np.testing.assert_array_equal(perm[i], np.asarray(lxl.lu_pivots_to_permutation(piv[i], n)))
        np.testing.assert_allclose(x[i], np.linalg.solve(a[i], b[i]), rtol=1e-9, atol=1e-11)
        if i == 1:
            assert np.isnan(chol[i][np.tril_indices(n)]).all()
        else:
            np.testing.assert_allclose(chol[i], np.linalg.cholesky(spd[i]), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 17])
def test_fused_solves_match_numpy(n, dtype):
    # jnp.linalg.solve compiles to one lu_solve step (opt::lu_solve): order <= 8 through the direct
    # elimination, larger through faer; batched and not, several right-hand sides or a vector one, inv
    _set_x64(dtype)
    rtol, atol = _tol(dtype)
    for batch, k in [((), 1), ((6,), 3), ((2, 3), 2), ((), None)]:
        a = _rand(batch + (n, n), dtype, seed=n) + np.asarray(2 * np.sqrt(n) * np.eye(n), dtype)
        b = _rand(batch + ((n,) if k is None else (n, k)), dtype, seed=n + 1)
        f = jax.jit(jnp.linalg.solve)
        assert "lu_solve" in f.lower(a, b).compile().as_text()
        got = np.asarray(f(a, b))
        assert got.dtype == dtype and got.shape == b.shape
        want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64)[..., None] if k is None else b)
        np.testing.assert_allclose(got, want[..., 0] if k is None else want, rtol=rtol * 10, atol=atol * 10)
        np.testing.assert_allclose(np.asarray(jax.jit(jnp.linalg.inv)(a)), np.linalg.inv(a.astype(np.float64)),
                                   rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("dtype", FLOATS)
def test_inv_through_the_lu_inverse_matches_numpy(dtype):
    # inv solves against the identity: up to order 256 by two triangular solves, the first in column blocks
    # over the lower triangle only (101: blocks of 26, the last shorter), above by faer's LU inverse
    # (U^-1 L^-1 P); sizes across the copies' 32-wide tiles, a batch, a right-hand side one entry off the
    # identity (the full solves), singular matrices (non-finite, no exception) and the other
    # factorizations' copies
    _set_x64(dtype)
    rtol, atol = _tol(dtype)
    for shape in [(33, 33), (3, 70, 70), (101, 101), (130, 130), (2, 257, 257), (300, 300)]:
        n = shape[-1]
        a = _rand(shape, dtype, seed=n) + np.asarray(2 * np.sqrt(n) * np.eye(n), dtype)
        got = np.asarray(jax.jit(jnp.linalg.inv)(a))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.linalg.inv(a.astype(np.float64)), rtol=rtol * 10, atol=atol * 10)
        b = np.broadcast_to(np.eye(n, dtype=dtype), shape).copy()
        b[..., n - 1, 0] = 2
        got = np.asarray(jax.jit(jnp.linalg.solve)(a, b))
        np.testing.assert_allclose(got, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)),
                                   rtol=rtol * 10, atol=atol * 10)
        lu = np.asarray(jax.jit(lambda x: lxl.lu(x)[0])(a))
        want = _sla.lu_factor(a.astype(np.float64))[0] if len(shape) == 2 else None
        if want is not None:
            np.testing.assert_allclose(lu, want, rtol=rtol * 10, atol=atol * 10)
    for n in (40, 300):
        s = np.ones((n, n), dtype)
        assert not np.isfinite(np.asarray(jax.jit(jnp.linalg.inv)(s))).all()


def test_small_lu_pivots_as_lapack():
    # the direct elimination for order <= 8 follows getrf: the first largest |a| is the pivot (ties keep
    # the upper row), an exactly zero column is neither swapped nor scaled (no NaNs in L)
    _set_x64(np.float64)
    cases = [np.array([[1.0, 2.0], [-1.0, 3.0]]), np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 7.0]]),
             np.zeros((4, 4)), _rand((8, 8), np.float64, seed=21), np.array([[2.0, 1.0], [4.0, 2.0]])]
    for a in cases:
        lu, piv, perm = (np.asarray(x) for x in jax.jit(lxl.lu)(a))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns of the singular ones
            want_lu, want_piv = _sla.lu_factor(a)
        np.testing.assert_allclose(lu, want_lu, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(piv, want_piv)
        np.testing.assert_array_equal(perm, np.asarray(lxl.lu_pivots_to_permutation(piv, len(a))))
    # a singular system gives non-finite values, not an exception
    x = np.asarray(jax.jit(jnp.linalg.solve)(np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([1.0, 1.0])))
    assert not np.isfinite(x).all()


def _fd_jvp(f, x, t, eps=1e-6):
    """Central difference of f along t."""
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


def _check_jvp(f, x, seed=0, rtol=1e-5, atol=1e-7):
    t = np.random.default_rng(seed).standard_normal(x.shape)
    _, got = jax.jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.asarray(got), _fd_jvp(f, x, t), rtol=rtol, atol=atol)


def _sign_fixed(v):
    """Columns scaled to a positive first row entry (eigenvectors/singular vectors up to sign)."""
    return v * np.sign(v[..., :1, :])


def test_linalg_jvps_against_finite_differences(x64):
    a = _spd((4, 4), np.float64)
    g = _rand((4, 4), np.float64, seed=11)
    _check_jvp(lxl.cholesky, a)
    _check_jvp(lambda x: lxl.lu(x)[0], g)
    _check_jvp(lambda x: lxl.qr(x)[0], g)
    _check_jvp(lambda x: lxl.qr(x)[1], g)
    _check_jvp(lambda x: lxl.qr(x, full_matrices=False)[0], _rand((5, 3), np.float64, seed=12))
    _check_jvp(lambda x: lxl.eigh(x)[1], a)
    _check_jvp(lambda x: lxl.eigh(x)[0] * jnp.sign(lxl.eigh(x)[0][..., :1, :]), a)
    _check_jvp(lambda x: lxl.svd(x, compute_uv=False), g)
    for shape in ((4, 4), (5, 3), (3, 5)):
        x = _rand(shape, np.float64, seed=13)
        _check_jvp(lambda x: lxl.svd(x, full_matrices=False)[1], x)
        _check_jvp(lambda x: (lambda u, s, vt: u * jnp.sign(u[..., :1, :]))(*lxl.svd(x, full_matrices=False)), x)
    tri = np.tril(a)
    b = _rand((4, 3), np.float64, seed=14)
    _check_jvp(lambda m: lxl.triangular_solve(m, b, left_side=True, lower=True), tri)
    _check_jvp(lambda bb: lxl.triangular_solve(tri, bb, left_side=True, lower=True, transpose_a=True), b)
    # the transpose rule: grad through b
    f = lambda bb: jnp.sum(lxl.triangular_solve(tri, bb, left_side=True, lower=True) ** 2)
    eps, e = 1e-6, np.zeros_like(b)
    e[1, 2] = 1
    np.testing.assert_allclose(np.asarray(jax.grad(f)(b))[1, 2], (f(b + eps * e) - f(b - eps * e)) / (2 * eps),
                               rtol=1e-6)


def test_linalg_errors_name_the_problem():
    with pytest.raises(ValueError, match="square"):
        lxl.cholesky(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        lxl.cholesky(np.eye(2, dtype=np.int32))
    with pytest.raises(TypeError, match="Incompatible shapes"):
        lxl.triangular_solve(np.eye(3, dtype=np.float32), np.ones((2, 2), np.float32), left_side=True)
    with pytest.raises(NotImplementedError):
        jax.jvp(lambda x: lxl.qr(x)[0], (np.ones((3, 2)),), (np.ones((3, 2)),))


def test_linalg_jaxprs_print_like_jax():
    # JAX 0.10.2's make_jaxpr of lax.linalg.svd / triangular_solve on f32[2,2] (params as JAX prints them)
    text = str(jax.make_jaxpr(lambda x: lxl.svd(x))(np.eye(2, dtype=np.float32)))
    assert "b:f32[2] c:f32[2,2] d:f32[2,2] = svd[" in text and "compute_uv=True" in text and "in (c, b, d)" in text
    text = str(jax.make_jaxpr(lambda x: lxl.triangular_solve(x, x))(np.eye(2, dtype=np.float32)))
    assert "triangular_solve[" in text and "conjugate_a=False" in text and "unit_diagonal=False" in text
    text = str(jax.make_jaxpr(lxl.lu)(np.eye(2, dtype=np.float32)))
    assert "b:f32[2,2] c:i32[2] d:i32[2] = lu a" in text


# ----------------------------------------------------------------------------------------------- jnp.linalg
# and cranax.scipy.linalg against NumPy/SciPy; gradients against finite differences (float64).
import cranax.scipy.linalg as jsl  # noqa: E402

JLA = jnp.linalg


def _gen(shape, dtype, seed=0):
    """Well-conditioned general matrices."""
    n = shape[-1]
    return (_rand(shape, np.float64, seed) + 2 * n ** 0.5 * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)])
def test_jnp_linalg_square_functions(shape, dtype, mode):
    _set_x64(dtype)
    a = _gen(shape, dtype)
    a64 = a.astype(np.float64)
    rtol, atol = _tol(dtype)
    tol = dict(rtol=rtol * 50, atol=atol * 50)
    b = _rand(shape[:-1] + (2,), dtype, seed=1)
    np.testing.assert_allclose(np.asarray(_run(mode, JLA.solve, a, b)), np.linalg.solve(a64, b), **tol)
    if len(shape) == 2:
        np.testing.assert_allclose(np.asarray(_run(mode, JLA.solve, a, b[:, 0])), np.linalg.solve(a64, b[:, 0]),
                                   **tol)
    np.testing.assert_allclose(np.asarray(_run(mode, JLA.inv, a)), np.linalg.inv(a64), **tol)
    np.testing.assert_allclose(np.asarray(_run(mode, JLA.det, a)), np.linalg.det(a64), **tol)
    s, ld = _run(mode, JLA.slogdet, a)
    ws, wld = np.linalg.slogdet(a64)
    np.testing.assert_allclose(np.asarray(s), ws, **tol)
    np.testing.assert_allclose(np.asarray(ld), wld, **tol)
    spd = _spd(shape, dtype)
    np.testing.assert_allclose(np.asarray(_run(mode, JLA.cholesky, spd)), np.linalg.cholesky(spd.astype(np.float64)),
                               **tol)
    np.testing.assert_allclose(np.asarray(_run(mode, JLA.eigvalsh, spd)), np.linalg.eigvalsh(spd.astype(np.float64)),
                               **tol)
    for p in (-3, -1, 0, 1, 2, 5):
        np.testing.assert_allclose(np.asarray(JLA.matrix_power(a, p)), np.linalg.matrix_power(a64, p), **tol)
    if shape[-1]:
        for p in (None, 1, -1, 2, -2, np.inf, -np.inf, "fro"):
            np.testing.assert_allclose(np.asarray(JLA.cond(a, p)), np.linalg.cond(a64, p), **tol)


def test_jnp_linalg_det_sign_and_singular():
    p = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    assert float(JLA.det(p)) == -1.0
    s, ld = JLA.slogdet(np.zeros((2, 2), np.float32))
    assert float(s) == 0 and float(ld) == -np.inf


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 4), (3, 3)])
def test_jnp_linalg_rectangular_functions(shape, dtype):
    _set_x64(dtype)
    a = _rand(shape, dtype, seed=2)
    a64 = a.astype(np.float64)
    rtol, atol = _tol(dtype)
    tol = dict(rtol=rtol * 50, atol=atol * 50)
    np.testing.assert_allclose(np.asarray(JLA.svdvals(a)), np.linalg.svd(a64, compute_uv=False), **tol)
    u, s, vh = JLA.svd(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(u * s[..., None, :]) @ np.asarray(vh), a64, **tol)
    q, r = JLA.qr(a)
    wq, wr = np.linalg.qr(a64)
    np.testing.assert_allclose(np.asarray(q), wq, **tol)
    np.testing.assert_allclose(np.asarray(JLA.qr(a, mode="r")), np.linalg.qr(a64, mode="r"), **tol)
    np.testing.assert_allclose(np.asarray(JLA.qr(a, mode="complete").Q), np.linalg.qr(a64, mode="complete")[0],
                               **tol)
    np.testing.assert_allclose(np.asarray(JLA.pinv(a)), np.linalg.pinv(a64), **tol)
    np.testing.assert_array_equal(np.asarray(JLA.matrix_rank(a)), np.linalg.matrix_rank(a64))
    low = a64.copy()
    low[..., -1] = low[..., 0]    # a repeated column: rank drops
    np.testing.assert_array_equal(np.asarray(JLA.matrix_rank(low.astype(dtype))), np.linalg.matrix_rank(low))
    if len(shape) == 2:
        b = _rand((shape[0], 2), dtype, seed=3)
        x, resid, rank, sv = JLA.lstsq(a, b)
        wx, wres, wrank, wsv = np.linalg.lstsq(a64, b, rcond=None)
        np.testing.assert_allclose(np.asarray(x), wx, **tol)
        assert int(rank) == wrank
        np.testing.assert_allclose(np.asarray(sv), wsv, **tol)
        if shape[0] > shape[1]:
            np.testing.assert_allclose(np.asarray(JLA.lstsq(a, b, numpy_resid=True)[1]), wres, **tol)


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_jnp_linalg_matrix_norms(ord, keepdims):
    x = _rand((2, 3, 4), np.float32, seed=4)
    for axis in ((1, 2), (2, 0), (-1, -2)):
        np.testing.assert_allclose(np.asarray(JLA.norm(x, ord, axis, keepdims)),
                                   np.linalg.norm(x, ord, axis, keepdims), rtol=1e-5, atol=1e-6)
    if ord is not None:
        np.testing.assert_allclose(np.asarray(JLA.matrix_norm(x, ord=ord, keepdims=keepdims)),
                                   np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ord", [None, 0, 1, -1, 2, -2, 3, 0.5, np.inf, -np.inf])
def test_jnp_linalg_vector_norms(ord):
    x = _rand((3, 5), np.float32, seed=5)
    for axis in (0, 1, -1):
        np.testing.assert_allclose(np.asarray(JLA.norm(x, ord, axis)), np.linalg.norm(x, ord, axis), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(JLA.norm(x[0], ord)), np.linalg.norm(x[0], ord), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(JLA.vector_norm(x, ord=2 if ord is None else ord)),
                               np.linalg.vector_norm(x, ord=2 if ord is None else ord), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(JLA.norm(x)), np.linalg.norm(x), rtol=1e-6)
    with pytest.raises(ValueError, match="Invalid order"):
        JLA.norm(x, "bad", axis=(0, 1))


def test_jnp_linalg_tensor_and_product_functions():
    a = _gen((6, 6), np.float32).reshape(2, 3, 6)
    b = _rand((2, 3), np.float32, seed=6)
    np.testing.assert_allclose(np.asarray(JLA.tensorsolve(a, b)), np.linalg.tensorsolve(a, b), rtol=1e-4, atol=1e-5)
    t = _gen((6, 6), np.float32).reshape(6, 2, 3)
    np.testing.assert_allclose(np.asarray(JLA.tensorinv(t, ind=1)), np.linalg.tensorinv(t, ind=1), rtol=1e-4,
                               atol=1e-5)
    ms = [_rand((3, 4), np.float32, 7), _rand((4, 5), np.float32, 8), _rand((5,), np.float32, 9)]
    np.testing.assert_allclose(np.asarray(JLA.multi_dot(ms)), np.linalg.multi_dot(ms), rtol=1e-5)
    u, v = _rand((4, 3), np.float32, 10), _rand((4, 3), np.float32, 11)
    np.testing.assert_allclose(np.asarray(JLA.cross(u, v)), np.linalg.cross(u, v), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(JLA.cross(u.T, v.T, axis=0)), np.cross(u.T, v.T, axis=0), rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="3-dimensional"):
        JLA.cross(np.ones(2), np.ones(2))
    np.testing.assert_allclose(np.asarray(JLA.outer(u[0], v[0])), np.linalg.outer(u[0], v[0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(JLA.vecdot(u, v)), np.linalg.vecdot(u, v), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(JLA.trace(a[0, :, :3])), np.linalg.trace(a[0, :, :3]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(JLA.diagonal(a)), np.linalg.diagonal(a), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(JLA.matrix_transpose(a)), np.linalg.matrix_transpose(a))
    np.testing.assert_allclose(np.asarray(JLA.tensordot(a, b, axes=((0, 1), (0, 1)))),
                               np.tensordot(a, b, ((0, 1), (0, 1))), rtol=1e-5)
    # eig/eigvals of the identity: complex ones and unit vectors
    w, v = JLA.eig(np.eye(2, dtype=np.float32))
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(w), [1, 1])
    np.testing.assert_allclose(np.abs(np.asarray(v)), np.eye(2), atol=1e-6)
    np.testing.assert_allclose(np.asarray(JLA.eigvals(np.diag([2.0, -3.0]).astype(np.float32))), [2, -3])


def test_jnp_linalg_eigh_results():
    a = _spd((2, 4, 4), np.float32)
    w, v = JLA.eigh(a)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigh(a)[0], rtol=1e-5)
    np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], rtol=1e-4,
                               atol=1e-4)
    assert JLA.eigh(a).eigenvalues is not None and JLA.eigh(a, UPLO="U").eigenvectors.shape == (2, 4, 4)
    assert np.asarray(JLA.cholesky(a, upper=True)).tolist() == np.swapaxes(np.asarray(JLA.cholesky(a)), -1, -2).tolist()


def test_jnp_linalg_vmap_and_integer_inputs():
    a = _gen((5, 3, 3), np.float32)
    b = _rand((5, 3), np.float32, seed=12)
    np.testing.assert_allclose(np.asarray(jax.vmap(JLA.solve)(a, b)), np.linalg.solve(a, b[..., None])[..., 0],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.vmap(JLA.det)(a)), np.linalg.det(a), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(jax.vmap(JLA.inv)(a)), np.linalg.inv(a), rtol=1e-4, atol=1e-5)
    # JAX 0.10.2's error for a rank-(n-1) b
    with pytest.raises(ValueError, match=r"Invalid shapes for solve: \(5, 3, 3\), \(5, 3\)\. Prior to JAX v0.5.0"):
        JLA.solve(a, b)
    got = JLA.inv(np.array([[2, 0], [0, 4]], np.int32))       # integers promote to the default float
    assert got.dtype == np.float32 and np.asarray(got).tolist() == [[0.5, 0.0], [0.0, 0.25]]


def _fd_grad_check(f, x, seed=0, rtol=1e-5, atol=1e-8):
    """grad(f) against central differences along random directions."""
    g = np.asarray(jax.grad(f)(x))
    rng = np.random.default_rng(seed)
    for _ in range(3):
        t = rng.standard_normal(x.shape)
        fd = (float(f(x + 1e-6 * t)) - float(f(x - 1e-6 * t))) / 2e-6
        np.testing.assert_allclose(np.sum(g * t), fd, rtol=rtol, atol=atol)


def test_linalg_gradients_against_finite_differences(x64):
    a = _gen((4, 4), np.float64)
    spd = _spd((4, 4), np.float64)
    b = _rand((4, 2), np.float64, seed=13)
    w = _rand((4, 4), np.float64, seed=14)
    _fd_grad_check(lambda x: JLA.slogdet(x)[1], a)
    np.testing.assert_allclose(np.asarray(jax.grad(lambda x: JLA.slogdet(x)[1])(a)), np.linalg.inv(a).T, rtol=1e-10)
    _fd_grad_check(lambda x: JLA.det(x), a)
    _fd_grad_check(lambda x: jnp.sum(JLA.solve(x, b) * b), a)
    _fd_grad_check(lambda bb: jnp.sum(JLA.solve(a, bb) ** 2), b)
    _fd_grad_check(lambda x: jnp.sum(JLA.inv(x) * w), a)
    _fd_grad_check(lambda x: jnp.sum(JLA.cholesky(x) * w), spd)
    _fd_grad_check(lambda x: jnp.sum(JLA.eigh(x)[0] * w[0]), spd)
    _fd_grad_check(lambda x: jnp.sum(jnp.abs(JLA.eigh(x)[1]) * w), spd)
    _fd_grad_check(lambda x: jnp.sum(JLA.svd(x, compute_uv=False) * w[0]), a)
    _fd_grad_check(lambda x: jnp.sum(jnp.abs(JLA.svd(x, full_matrices=False)[0]) * w), a)
    _fd_grad_check(lambda x: JLA.norm(x, 2), a)
    _fd_grad_check(lambda x: JLA.norm(x, "nuc"), a)
    _fd_grad_check(lambda x: jnp.sum(JLA.pinv(x[:, :3]) * w[:3]), a)
    _fd_grad_check(lambda x: jnp.sum(jsl.expm(x * 0.3) * w), a)
    _fd_grad_check(lambda x: jnp.sum(jsl.expm(x * 0.001) * w), a)   # a low Padé degree
    _fd_grad_check(lambda x: jnp.sum(jsl.cho_solve(jsl.cho_factor(x), b) * b), spd)


def test_slogdet_jvp_is_jaxs_solve_rule(x64):
    """slogdet's jvp is JAX's custom rule, trace(solve(a, da)) (the LU is not differentiated): values
    recorded from JAX 0.10.2 (real, complex, float32, a Hessian block), finite differences, and the jaxpr
    of its grad holds one LU and no differentiated one."""
    a = np.array([[4., 1., -2.], [1., -3., 0.5], [2., 0.5, 1.]])
    t = np.array([[0.3, -1., 0.2], [0.5, 0.1, -0.4], [1., 0.2, 0.7]])
    (s, ld), (ds, dld) = jax.jvp(JLA.slogdet, (a,), (t,))
    np.testing.assert_allclose([float(s), float(ld), float(ds), float(dld)],
                               [-1.0, 3.258096538021482, 0.0, 0.5874999999999999], rtol=1e-13, atol=1e-15)
    (s, ld), (ds, dld) = jax.jvp(JLA.slogdet, (a.astype(np.float32),), (t.astype(np.float32),))
    assert s.dtype == ds.dtype == np.float32 and dld.dtype == np.float32
    np.testing.assert_allclose([float(ld), float(dld)], [3.2580967, 0.5875], rtol=1e-6)
    z, tz = a + 1j * t[::-1], t - 0.5j * a
    (s, ld), (ds, dld) = jax.jvp(JLA.slogdet, (z,), (tz,))
    assert s.dtype == ds.dtype == np.complex128 and ld.dtype == dld.dtype == np.float64
    np.testing.assert_allclose(complex(s), -0.9978787089781636 + 0.06510055428392135j, rtol=1e-13)
    np.testing.assert_allclose(complex(ds), 0.09862729169232864 + 1.5117855076122007j, rtol=1e-12)
    np.testing.assert_allclose([float(ld), float(dld)], [3.2295625996752446, 0.6393882128058279], rtol=1e-12)
    hess = jax.hessian(lambda x: JLA.slogdet(x)[1])(a)[0, 1]
    np.testing.assert_allclose(np.asarray(hess), [[0.0, 0.0, 0.0], [0.038461538461538464, 0.0, -0.07692307692307693],
                                                  [-0.019230769230769232, 0.0, 0.038461538461538464]], atol=1e-14)
    # batched, against finite differences and inv(a)^T
    ab = _gen((3, 6, 6), np.float64)
    _fd_grad_check(lambda x: jnp.sum(JLA.slogdet(x)[1] * np.array([1.0, -2.0, 0.5])), ab)
    g = jax.jit(jax.grad(lambda x: jnp.sum(JLA.slogdet(x)[1])))(ab)
    np.testing.assert_allclose(np.asarray(g), np.linalg.inv(ab).transpose(0, 2, 1), rtol=1e-10, atol=1e-13)
    # the grad factors once and transposes the two triangular solves; differentiating the LU would add
    # its jvp's products (dot_general)
    jaxpr = str(jax.make_jaxpr(jax.grad(lambda x: JLA.slogdet(x)[1]))(a))
    assert jaxpr.count(" lu ") == 1 and jaxpr.count("triangular_solve") == 2 and "dot_general" not in jaxpr


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (300, 300), (400, 400), (600, 600), (2, 40, 40)])
def test_slogdet_grad_is_one_lu_solve_of_the_identity(shape, dtype):
    """grad of slogdet's logabsdet is a^-T, computed as `inv` is (the identity's rows in the LU's order, then
    the two triangular solves), so the compiled grad is one fused `lu_solve` of the identity (no separate `lu`
    step): against NumPy's inverse in float64 and finite differences, below and above the blocked LU's order
    (384), batched; `value_and_grad` (which keeps the LU for the value) and `jacfwd` agree with it."""
    _set_x64(dtype)
    a = _gen(shape, dtype, seed=shape[-1])
    a64 = a.astype(np.float64)
    f = jax.jit(jax.grad(lambda x: jnp.sum(JLA.slogdet(x)[1])))
    g = np.asarray(f(a))
    assert g.dtype == dtype and g.shape == shape
    want = np.swapaxes(np.linalg.inv(a64), -1, -2)
    rtol, atol = (2e-3, 1e-5) if dtype == np.float32 else (1e-10, 1e-13)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol * np.abs(want).max())
    text = f.lower(a).compile().as_text()
    assert "lu_solve" in text and " = lu " not in text and "triangular_solve" not in text
    v, g2 = jax.jit(jax.value_and_grad(lambda x: jnp.sum(JLA.slogdet(x)[1])))(a)
    np.testing.assert_allclose(float(v), np.sum(np.linalg.slogdet(a64)[1]), rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(np.asarray(g2), g, rtol=rtol, atol=atol * np.abs(want).max())
    if shape == (5, 5):
        jf = np.asarray(jax.jacfwd(lambda x: JLA.slogdet(x)[1])(a))
        np.testing.assert_allclose(jf, want, rtol=rtol, atol=atol)
        if dtype == np.float64:
            _fd_grad_check(lambda x: JLA.slogdet(x)[1], a)


def test_det_of_singular_and_non_finite_matrices(x64):
    """det/slogdet read whether `a` is finite only when a pivot is NaN (a `lax.cond` in `_lu_det_parts`): a
    singular finite matrix (exact zero pivot) still gives det 0 and slogdet (0, -inf), a NaN input NaN, in a batch
    mixing them (one branch for all), under `jit` and `vmap`, eagerly, and grad of det through it (JAX 0.10.2:
    det of diag(2, 3, 4) has grad diag(12, 8, 6))."""
    cases = [np.ones((3, 3)), np.array([[np.nan, 1, 0], [1, 2, 0], [0, 0, 1.]]), np.diag([2., 3, 4]),
             np.array([[1., 2, 3], [2, 4, 6], [0, 1, 1]])]
    b = np.stack(cases)
    want = [0.0, np.nan, 24.0, 0.0]
    for got in (jnp.linalg.det(b), jax.jit(jnp.linalg.det)(b), jax.vmap(jnp.linalg.det)(b),
                np.array([float(jax.jit(jnp.linalg.det)(c)) for c in cases])):
        np.testing.assert_array_equal(np.asarray(got), want)
    sign, ld = jax.jit(jnp.linalg.slogdet)(b)
    np.testing.assert_array_equal(np.asarray(sign)[[0, 2, 3]], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(ld)[[0, 1, 3]], [-np.inf, np.nan, -np.inf])
    np.testing.assert_allclose(float(np.asarray(ld)[2]), np.log(24.0), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jax.grad(jnp.linalg.det)(np.diag([2., 3, 4]))), np.diag([12., 8, 6]),
                               rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(jnp.linalg.det))(np.diag([2., 3, 4]))),
                               np.diag([12., 8, 6]), rtol=1e-15)


_KNOB_SCRIPT = r"""
import numpy as np, cranax, cranax.numpy as jnp
cranax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(2)
for dt, n in ((np.float64, 300), (np.float32, 260)):
    a = rng.standard_normal((n, n)).astype(dt)
    h = (a + a.T) / 2
    w, v = (np.asarray(x, np.float64) for x in jnp.linalg.eigh(h))
    s = np.asarray(jnp.linalg.svd(a, compute_uv=False), np.float64)
    u, s2, vt = (np.asarray(x, np.float64) for x in jnp.linalg.svd(a))
    h64, a64 = h.astype(np.float64), a.astype(np.float64)
    print(np.abs(w - np.linalg.eigvalsh(h64)).max() / np.abs(w).max(), np.abs(v.T @ v - np.eye(n)).max(),
          np.abs(v * w @ v.T - h64).max() / np.abs(h64).max(),
          np.abs(s - np.linalg.svd(a64, compute_uv=False)).max() / s.max(), np.abs(s2 - s).max() / s.max(),
          np.abs(u.T @ u - np.eye(n)).max(), np.abs(u * s2 @ vt - a64).max() / np.abs(a64).max())
"""


@pytest.mark.parametrize("knobs", [
    {"CRANAX_LINALG_EIGH_RECURSION": "1000", "CRANAX_LINALG_SVD_RECURSION": "1000"},   # QR iterations only
    {"CRANAX_LINALG_EIGH_RECURSION": "16", "CRANAX_LINALG_SVD_RECURSION": "16",
     "CRANAX_LINALG_TRIDIAG_PAR": "0", "CRANAX_LINALG_BIDIAG_PAR": "0"},   # deep divide and conquer, parallel steps
    {"CRANAX_LINALG_TRIDIAG_PAR": "100000000", "CRANAX_LINALG_BIDIAG_PAR": "100000000"},   # one-thread reductions
])
def test_eigh_svd_tuning_knobs_keep_the_values(knobs):
    """The measurement knobs for faer's eigh/svd parameters (rust/backend/cpu/library/linalg.rs:
    `eigh_evd_params`, `eigh_tridiag_params`, `svd_params`) change how, not what: eigenvalues and singular
    values against NumPy's, vectors orthonormal and reconstructions all within 2 n ε (faer's QR iterations,
    which the first case forces at every size, reach 1.1 n ε in float32; the defaults 0.2 n ε), on two threads
    in a fresh process (the knobs are read once)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, CRANAX_NUM_THREADS="2", CRANAX_LINALG_YIELD="0", **knobs)
    out = subprocess.run([sys.executable, "-c", _KNOB_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    rows = [[float(x) for x in line.split()] for line in out.stdout.split("\n") if line.strip()]
    assert len(rows) == 2
    for errs, n, eps in zip(rows, (300, 260), (np.finfo(np.float64).eps, np.finfo(np.float32).eps)):
        assert max(errs) <= 2 * n * eps, (knobs, errs)


@pytest.mark.parametrize("dtype", FLOATS)
def test_scipy_linalg_against_scipy(dtype):
    _set_x64(dtype)
    rtol, atol = _tol(dtype)
    tol = dict(rtol=rtol * 50, atol=atol * 50)
    a = _gen((4, 4), dtype)
    a64 = a.astype(np.float64)
    spd = _spd((4, 4), dtype)
    s64 = spd.astype(np.float64)
    b = _rand((4, 2), dtype, seed=15)
    for lower in (False, True):
        np.testing.assert_allclose(np.asarray(jsl.cholesky(spd, lower=lower)), _sla.cholesky(s64, lower=lower), **tol)
        np.testing.assert_allclose(np.asarray(jsl.cho_solve(jsl.cho_factor(spd, lower=lower), b)),
                                   _sla.cho_solve(_sla.cho_factor(s64, lower=lower), b), **tol)
        np.testing.assert_allclose(np.asarray(jsl.cho_solve(jsl.cho_factor(spd, lower=lower), b[:, 0])),
                                   _sla.cho_solve(_sla.cho_factor(s64, lower=lower), b[:, 0]), **tol)
    lu_, piv = jsl.lu_factor(a)
    wlu, wpiv = _sla.lu_factor(a64)
    np.testing.assert_allclose(np.asarray(lu_), wlu, **tol)
    np.testing.assert_array_equal(np.asarray(piv), wpiv)
    for trans in (0, 1, 2):
        np.testing.assert_allclose(np.asarray(jsl.lu_solve((lu_, piv), b, trans=trans)),
                                   _sla.lu_solve((wlu, wpiv), b, trans=trans), **tol)
    for shape in ((4, 4), (5, 3), (3, 5)):
        x = _rand(shape, dtype, seed=16)
        for got, want in zip(jsl.lu(x), _sla.lu(x.astype(np.float64))):
            np.testing.assert_allclose(np.asarray(got), want, **tol)
        pl_, u_ = jsl.lu(x, permute_l=True)
        np.testing.assert_allclose(np.asarray(pl_), _sla.lu(x.astype(np.float64), permute_l=True)[0], **tol)
        for mode in ("full", "economic"):
            for got, want in zip(jsl.qr(x, mode=mode), _sla.qr(x.astype(np.float64), mode=mode)):
                np.testing.assert_allclose(np.asarray(got), want, **tol)
        np.testing.assert_allclose(np.asarray(jsl.svd(x, compute_uv=False)), _sla.svd(x, compute_uv=False), **tol)
    for trans in (0, 1, "T"):
        for lower in (False, True):
            t = np.tril(a) if lower else np.triu(a)
            np.testing.assert_allclose(np.asarray(jsl.solve_triangular(t, b, trans=trans, lower=lower)),
                                       _sla.solve_triangular(t.astype(np.float64), b, trans=trans, lower=lower), **tol)
    np.testing.assert_allclose(np.asarray(jsl.solve(a, b)), _sla.solve(a64, b), **tol)
    np.testing.assert_allclose(np.asarray(jsl.solve(spd, b, assume_a="pos")), _sla.solve(s64, b, assume_a="pos"),
                               **tol)
    np.testing.assert_allclose(np.asarray(jsl.inv(a)), _sla.inv(a64), **tol)
    np.testing.assert_allclose(np.asarray(jsl.det(a)), _sla.det(a64), **tol)
    w, v = jsl.eigh(spd)
    np.testing.assert_allclose(np.asarray(w), _sla.eigh(s64)[0], **tol)
    np.testing.assert_allclose(np.asarray(jsl.eigh(spd, eigvals_only=True)), _sla.eigh(s64, eigvals_only=True), **tol)
    blocks = [np.ones((2, 2), dtype), np.arange(3, dtype=dtype), np.array(5, dtype)]
    np.testing.assert_array_equal(np.asarray(jsl.block_diag(*blocks)), _sla.block_diag(*blocks))
    np.testing.assert_array_equal(np.asarray(jsl.toeplitz([1, 2, 3])), _sla.toeplitz([1, 2, 3]))
    np.testing.assert_array_equal(np.asarray(jsl.toeplitz([1, 2, 3], [1, 7, 8, 9])), _sla.toeplitz([1, 2, 3], [1, 7, 8, 9]))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("scale", [0.0, 1e-3, 0.1, 1.0, 4.0, 30.0])
def test_expm_against_scipy(scale, dtype):
    _set_x64(dtype)
    a = _rand((2, 5, 5), np.float64, seed=17) * scale
    got = np.asarray(jax.jit(jsl.expm)(a.astype(dtype)))
    want = np.stack([_sla.expm(m) for m in a])
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * np.abs(want).max())
    assert got.dtype == dtype


def test_scipy_linalg_special_matrices_and_polar():
    np.testing.assert_allclose(np.asarray(jsl.hilbert(4)), _sla.hilbert(4), rtol=1e-6)
    assert jsl.hilbert(3).dtype == np.float32      # JAX 0.10.2: float32
    np.testing.assert_array_equal(np.asarray(jsl.hankel([1, 2, 3])), _sla.hankel([1, 2, 3]))
    np.testing.assert_array_equal(np.asarray(jsl.hankel([1, 2, 3], [9, 4, 5, 6])), _sla.hankel([1, 2, 3], [9, 4, 5, 6]))
    # JAX 0.10.2: circulant([1, 2, 3]) == [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    assert np.asarray(jsl.circulant(np.array([1, 2, 3]))).tolist() == [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    np.testing.assert_allclose(np.asarray(jsl.companion(np.array([1.0, 2, 3, 4]))), _sla.companion([1.0, 2, 3, 4]))
    np.testing.assert_array_equal(np.asarray(jsl.hadamard(8)), _sla.hadamard(8))
    with pytest.raises(ValueError):
        jsl.hadamard(6)
    np.testing.assert_array_equal(np.asarray(jsl.fiedler(np.array([1, 4, 12]))), _sla.fiedler([1, 4, 12]))
    for full in (False, True):
        np.testing.assert_allclose(np.asarray(jsl.helmert(5, full)), _sla.helmert(5, full), rtol=1e-6)
    f, s = np.array([0.1, 2.0, 1.0]), np.array([0.2, 0.8])
    np.testing.assert_allclose(np.asarray(jsl.leslie(f, s)), _sla.leslie(f, s), rtol=1e-6)
    a = _rand((5, 3), np.float32, seed=20)
    for side in ("right", "left"):
        u, p = jsl.polar(a, side)
        wu, wp = _sla.polar(a.astype(np.float64), side)
        np.testing.assert_allclose(np.asarray(u), wu, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(np.asarray(p), wp, rtol=1e-4, atol=1e-5)


def test_linalg_on_the_gpu_device_runs_on_the_host():
    # the GPU backend has no shader for the factorizations: their library steps run on the host buffers
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("no GPU adapter")
    spd = _spd((2, 3, 3), np.float32)
    x = jax.device_put(spd, gpus[0])
    out = jax.jit(lambda m: jnp.linalg.solve(m, m[..., :1])[..., 0] + jnp.linalg.cholesky(m)[..., 0])(x)
    assert out.devices() == {gpus[0]}
    want = np.linalg.solve(spd, spd[..., 0:1])[..., 0] + np.linalg.cholesky(spd)[..., 0]
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-5)


def test_det_is_jaxs_expansion_and_cofactor_gradient():
    """JAX 0.10.2's det: the cofactor expansion for 2x2 and 3x3 (bit for bit, JAX's order of products under its
    jit; inf entries give NaN), sign * exp(logabsdet) beyond (within the LU's last-ulp freedom), and the
    adjugate as the derivative, finite for singular matrices (rank n-1: JAX's cofactor solve; rank < n-1:
    zero). slogdet of a singular matrix has sign +0. Literals recorded from JAX 0.10.2 (CPU)."""
    rng = np.random.default_rng(7)
    want = {2: [0.08080189675092697, -0.549715518951416], 3: [-0.4401792287826538, 1.487231969833374],
            4: [-0.198168084025383, -0.11736911535263062], 6: [-8.262539863586426, -5.325567722320557]}
    for n in (2, 3, 4, 6):
        a = rng.standard_normal((2, n, n)).astype(np.float32)
        for got in (JLA.det(a), jax.jit(JLA.det)(a), jax.vmap(JLA.det)(a)):
            if n <= 3:
                np.testing.assert_array_equal(np.asarray(got), np.float32(want[n]))
            else:
                np.testing.assert_allclose(np.asarray(got), want[n], rtol=2e-6)
        np.testing.assert_allclose(np.asarray(JLA.det(a)), np.linalg.det(a.astype(np.float64)), rtol=1e-5)
    assert np.isnan(float(JLA.det(np.array([[np.inf, 1, 0], [1, 1, 0], [0, 0, 1]], np.float32))))
    rank3 = np.array([[1, 2, 3, 4], [2, 4, 6, 8], [1, 0, 1, 0], [0, 1, 0, 1]], np.float32)
    adj = [[-4.0, 4.0, 4.0, -4.0], [2.0, -2.0, -2.0, 2.0], [0.0] * 4, [0.0] * 4]
    for f in (jax.grad(JLA.det), jax.jit(jax.grad(JLA.det)), jax.jacfwd(JLA.det), jax.jacrev(JLA.det)):
        np.testing.assert_array_equal(np.asarray(f(rank3)), adj)
    rank2 = np.array([[1, 2, 3, 4], [2, 4, 6, 8], [3, 6, 9, 12], [0, 1, 0, 1]], np.float32)
    np.testing.assert_array_equal(np.asarray(jax.grad(JLA.det)(rank2)), np.zeros((4, 4)))
    # the 3x3 singular case goes through the expansion: its gradient is the adjugate too
    s3 = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)
    np.testing.assert_array_equal(np.asarray(jax.grad(JLA.det)(s3)), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]])
    # a nonsingular matrix: the adjugate is det(a) inv(a)^T
    jax.config.update("jax_enable_x64", True)  # restored by conftest
    a = rng.standard_normal((5, 5))
    np.testing.assert_allclose(np.asarray(jax.grad(JLA.det)(a)), np.linalg.det(a) * np.linalg.inv(a).T,
                               rtol=1e-10)
    sign, ld = JLA.slogdet(np.array([[1, 2], [2, 4]], np.float32))
    assert float(sign) == 0 and not np.signbit(np.asarray(sign)) and float(ld) == -np.inf
