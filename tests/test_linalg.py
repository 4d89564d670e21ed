"""dot_general and the products built on it (dot, matmul/@, vdot, inner, outer, tensordot, einsum, trace)
against NumPy over shapes with empty and size-1 dims, every dimension layout of dot_general, dtypes,
preferred_element_type, errors naming both shapes, gradients by finite differences (float64) and vmap."""
import itertools

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
    with pytest.raises(TypeError, match=r"\(2, 3\).*\(4, 5\)"):
        lax.dot_general(a, b, (((1,), (0,)), ((), ())))
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
    with pytest.raises(TypeError, match=r"\(400, 300\) and \(400, 500\)"):
        jnp.dot(t, y.T)
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
