"""Loops over big arrays touched only at windows and points (`x.at[i].add(v)`, `dynamic_slice`,
`dynamic_update_slice`, gathers of a few elements) compile whole, the arrays kept in memory and the carries
updated in place (rust/backend/cpu/scalar_loop.rs, `resident_fits`).

Oracles: the NumPy loops they replace, with JAX's index semantics (checked against JAX 0.10.2: a negative
start or scatter index wraps once, `dynamic_slice`/`dynamic_update_slice` starts are then clamped so the
window fits, a scatter index still out of range after the wrap is dropped); finite differences and closed
forms for gradients. The `_control_stats` counters tell whether a loop ran as one call (fused) or as
sub-plans.
"""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import _core, lax

N = 1000
RNG = np.random.default_rng(0)
IDX = np.array(list(RNG.integers(-N, N, 300)) + [N, N + 7, -N - 1, -3 * N, 2 * N, -1, 0, N - 1], np.int32)
X0 = RNG.standard_normal(N).astype(np.float32)


def wrap(k, n):
    k = int(k)
    return k + n if k < 0 else k


def run_counted(f, *args):
    """Runs jitted `f` once to compile, then again counting sub-plan runs and fused-loop calls."""
    jf = jax.jit(f)
    jf(*args)
    runs0, fused0, _ = _core._control_stats()
    out = jf(*args)
    runs1, fused1, _ = _core._control_stats()
    return out, runs1 - runs0, fused1 - fused0


def scatter_add_np(x, idx, v):
    x = x.copy()
    for k in idx:
        k = wrap(k, x.shape[0])
        if 0 <= k < x.shape[0]:
            x[k] += v
    return x


def test_point_scatter_add_with_wrapped_and_dropped_indices_runs_as_one_call():
    f = lambda x, i: lax.fori_loop(0, i.shape[0], lambda k, x: x.at[i[k]].add(1.5), x)
    out, runs, fused = run_counted(f, X0, IDX)
    np.testing.assert_array_equal(np.asarray(out), scatter_add_np(X0, IDX, np.float32(1.5)))
    assert (runs, fused) == (0, 1)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float32, np.bool_])
def test_point_set_of_a_loop_value_every_dtype(dtype):
    x0 = (RNG.integers(0, 100, N) % 2 == 0).astype(dtype) if dtype == np.bool_ else RNG.integers(0, 100, N).astype(dtype)
    f = lambda x, i: lax.fori_loop(0, i.shape[0], lambda k, x: x.at[i[k]].set((k * 3 + 1).astype(x.dtype)), x)
    out, runs, fused = run_counted(f, x0, IDX)
    want = x0.copy()
    for k, j in enumerate(IDX):
        j = wrap(j, N)
        if 0 <= j < N:
            want[j] = np.array(k * 3 + 1).astype(dtype)
    np.testing.assert_array_equal(np.asarray(out), want)
    assert (runs, fused) == (0, 1)


def test_int32_scatter_add_wraps_and_max_min_multiply():
    x0 = np.full(300, 2**31 - 3, np.int32)
    idx = np.array([5, 5, 5, 7, -1, 299, 300], np.int32)
    f = lambda x, i: lax.fori_loop(0, 7, lambda k, x: x.at[i[k]].add(2), x)
    out, runs, fused = run_counted(f, x0, idx)
    want = x0.astype(np.int64)
    for k in idx:
        if 0 <= wrap(k, 300) < 300:
            want[wrap(k, 300)] += 2
    np.testing.assert_array_equal(np.asarray(out), ((want + 2**31) % 2**32 - 2**31).astype(np.int32))
    assert fused == 1
    y0 = RNG.standard_normal(300).astype(np.float32)
    g = lambda x, i: lax.fori_loop(
        0, 7, lambda k, x: x.at[i[k]].max(0.5).at[(i[k] + 1) % 300].min(-0.25).at[i[k] - 2].multiply(3.0), x)
    out, runs, fused = run_counted(g, y0, idx)
    want = y0.copy()
    for k in idx:
        for j, op in ((wrap(k, 300), lambda a: max(a, np.float32(0.5))),
                      ((int(k) + 1) % 300, lambda a: min(a, np.float32(-0.25))),
                      (wrap(int(k) - 2, 300), lambda a: np.float32(a * np.float32(3.0)))):
            if 0 <= j < 300:
                want[j] = op(want[j])
    np.testing.assert_array_equal(np.asarray(out), want)
    assert (runs, fused) == (0, 1)


def test_dynamic_slice_window_of_a_big_constant_with_clamped_starts():
    f = lambda x, s: lax.fori_loop(
        0, s.shape[0], lambda k, acc: acc + jnp.sum(lax.dynamic_slice(x, (s[k],), (4,)) * 2.0), jnp.float32(0))
    out, runs, fused = run_counted(f, X0, IDX)
    acc = np.float32(0)
    for k in IDX:
        st = min(max(wrap(k, N), 0), N - 4)
        t = np.float32(0)
        for v in X0[st:st + 4] * np.float32(2):
            t = np.float32(t + v)
        acc = np.float32(acc + t)
    assert float(out) == float(acc)
    assert (runs, fused) == (0, 1)


@pytest.mark.parametrize("with_ys", [False, True])
def test_dynamic_update_slice_of_a_row_in_a_scan(with_ys):
    m0 = RNG.standard_normal((50, 8)).astype(np.float32)

    def f(m):
        def body(m, k):
            r = lax.dynamic_slice(m, (k, 0), (1, 8))
            m = lax.dynamic_update_slice(m, r * 2.0 + k.astype(jnp.float32), (k * 3 - 5, 0))
            return m, (m[k % 50, 1] if with_ys else None)
        return lax.scan(body, m, jnp.arange(40, dtype=jnp.int32))

    (out, ys), runs, fused = run_counted(f, m0)
    m = m0.copy()
    want_ys = []
    for k in range(40):
        r = m[min(max(k, 0), 49)].copy()
        st = min(max(wrap(k * 3 - 5, 50), 0), 49)
        m[st] = r * np.float32(2) + np.float32(k)
        want_ys.append(m[k % 50, 1])
    np.testing.assert_array_equal(np.asarray(out), m)
    if with_ys:
        np.testing.assert_array_equal(np.asarray(ys), np.array(want_ys, np.float32))
    assert (runs, fused) == (0, 1)


def test_cumulative_recurrence_reads_the_previous_element():
    f = lambda y, a, b: lax.fori_loop(1, y.shape[0], lambda i, y: y.at[i].set(y[i - 1] * a + b), y)
    out, runs, fused = run_counted(f, X0, np.float32(0.9), np.float32(0.25))
    y = X0.copy()
    for i in range(1, N):
        y[i] = np.float32(y[i - 1] * np.float32(0.9)) + np.float32(0.25)
    # (XLA may contract the multiply-add: JAX's own result differs from this loop by an ulp)
    np.testing.assert_allclose(np.asarray(out), y, rtol=1e-6, atol=1e-6)
    assert (runs, fused) == (0, 1)


def test_while_loop_whose_condition_reads_the_big_carry():
    def f(x):
        def body(c):
            j, x = c
            x = x.at[0].add(1.0)
            return j + 1, x.at[(j * 7) % N].set(-1.0 * j)
        return lax.while_loop(lambda c: c[1][0] < 50.0, body, (jnp.int32(1), x))

    x0 = X0.copy()
    x0[0] = 3.25
    (j, out), runs, fused = run_counted(f, x0)
    x, jj = x0.copy(), 1
    while x[0] < 50.0:
        x[0] += np.float32(1)
        x[(jj * 7) % N] = np.float32(-1.0 * jj)
        jj += 1
    assert int(j) == jj
    np.testing.assert_array_equal(np.asarray(out), x)
    assert (runs, fused) == (0, 1)


def test_values_used_outside_the_loop_keep_their_contents():
    x = jnp.asarray(X0)
    f = jax.jit(lambda x, i: (lax.fori_loop(0, 50, lambda k, y: y.at[i[k]].set(0.0), x), x * 2.0, x))
    a, b, c = f(x, IDX)
    want = X0.copy()
    for k in IDX[:50]:
        if 0 <= wrap(k, N) < N:
            want[wrap(k, N)] = 0
    np.testing.assert_array_equal(np.asarray(a), want)
    np.testing.assert_array_equal(np.asarray(b), X0 * 2)
    np.testing.assert_array_equal(np.asarray(c), X0)
    np.testing.assert_array_equal(np.asarray(x), X0)
    a2, _, _ = f(x, IDX)  # the same input again: it was not written
    np.testing.assert_array_equal(np.asarray(a2), want)


def test_bodies_the_in_place_form_cannot_take_keep_their_values():
    # the old value read after the write; carries swapped; a write into a loop constant
    def old_read(x, i):
        def body(k, x):
            y = x.at[i[k] % N].set(0.0)
            return y.at[(i[k] + 1) % N].add(x[i[k] % N])
        return lax.fori_loop(0, 40, body, x)
    x = X0.copy()
    for k in IDX[:40]:
        j = int(k) % N
        old = x[j]
        x[j] = 0
        x[(j + 1) % N] += old
    np.testing.assert_array_equal(np.asarray(jax.jit(old_read)(X0, IDX)), x)

    swap = jax.jit(lambda a, b: lax.fori_loop(0, 5, lambda k, c: (c[1].at[k].add(1.0), c[0]), (a, b)))
    p, q = swap(X0, -X0)
    a, b = X0.copy(), -X0.copy()
    for k in range(5):
        a, b = b.copy(), a
        a[k] += 1
    np.testing.assert_array_equal(np.asarray(p), a)
    np.testing.assert_array_equal(np.asarray(q), b)

    into_const = jax.jit(lambda c, x: lax.fori_loop(0, 5, lambda k, x: c.at[k].set(x[k] + 1.0), x))
    want = X0.copy()
    cur = X0 * 3
    for k in range(5):
        nxt = want.copy()
        nxt[k] = cur[k] + 1
        cur = nxt
    np.testing.assert_array_equal(np.asarray(into_const(X0, X0 * 3)), cur)


def test_vmap_of_the_loop():
    xb = RNG.standard_normal((3, 300)).astype(np.float32)
    ib = RNG.integers(-320, 320, (3, 60)).astype(np.int32)
    f = lambda x, i: lax.fori_loop(0, 60, lambda k, x: x.at[i[k]].add(x[(i[k] + 1) % 300] * 0.5), x)
    out = jax.jit(jax.vmap(f))(xb, ib)
    want = xb.copy()
    for r in range(3):
        for k in ib[r]:
            j = wrap(k, 300)
            v = want[r, (int(k) + 1) % 300] * np.float32(0.5)
            if 0 <= j < 300:
                want[r, j] += v
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)
    shared = jax.jit(jax.vmap(f, in_axes=(0, None)))(xb, ib[0])
    for r in range(3):
        np.testing.assert_allclose(np.asarray(shared[r]), np.asarray(f(jnp.asarray(xb[r]), jnp.asarray(ib[0]))), rtol=1e-6, atol=1e-6)


def test_grad_through_fori_loop_of_point_updates():
    idx = jnp.asarray(np.array([3, 7, 3, 299, -1, 400, 0, 7], np.int32))
    x0 = RNG.standard_normal(300).astype(np.float32)

    def loss(v, x):
        y = lax.fori_loop(0, 8, lambda k, y: y.at[idx[k]].add(v * k.astype(jnp.float32)), x)
        return jnp.sum(y * y)

    gv, gx = jax.jit(jax.grad(loss, argnums=(0, 1)))(jnp.float32(0.75), x0)
    c = np.zeros(300)
    for k, j in enumerate(idx):
        if 0 <= wrap(j, 300) < 300:
            c[wrap(j, 300)] += k
    y = x0.astype(np.float64) + 0.75 * c
    np.testing.assert_allclose(float(gv), 2 * np.sum(y * c), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gx), 2 * y, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------------------------
# Loops whose big carries are also read whole (products, kernels, nested loops) run their bodies in place
# (rust/backend/cpu/loop_body.rs): a scatter or dynamic_update_slice into a carry writes into the loop's own
# copy of it unless the old value is still read (then it is copied, as the stepwise path does).

def run_direct(f, *args):
    """Runs jitted `f` once to compile, then again counting fused-loop calls and in-place loop runs."""
    jf = jax.jit(f)
    jf(*args)
    _, fused0, _ = _core._control_stats()
    d0 = _core._direct_loop_calls()
    out = jax.block_until_ready(jf(*args))   # (calls run on a stream: count once they are done)
    _, fused1, _ = _core._control_stats()
    return out, fused1 - fused0, _core._direct_loop_calls() - d0


def arnoldi_np(V, w, steps, read_old=False):
    V, w = V.copy(), w.copy()
    m = V.shape[1]
    for k in range(steps):
        old = V.copy()
        V[:, k % m] = w / np.sqrt(np.sum(w.astype(np.float64) ** 2)).astype(np.float32)
        h = (old if read_old else V).T.astype(np.float64) @ w
        w = (w * np.float32(0.5) + V[:, 0] * np.float32(h[0]) + np.float32(0.1)).astype(np.float32)
    return V, w


@pytest.mark.parametrize("read_old", [False, True])
def test_column_updates_read_whole_by_a_product(read_old):
    n, m = 200, 12
    V0 = RNG.standard_normal((n, m)).astype(np.float32)
    w0 = RNG.standard_normal(n).astype(np.float32)

    def body(k, c):
        V, w = c
        Vn = V.at[:, k % m].set(w / jnp.linalg.norm(w))
        h = (V if read_old else Vn).T @ w
        return Vn, w * 0.5 + Vn[:, 0] * h[0] + 0.1

    (V, w), fused, direct = run_direct(lambda V, w: lax.fori_loop(0, 30, body, (V, w)), V0, w0)
    Vw, ww = arnoldi_np(V0, w0, 30, read_old)
    np.testing.assert_allclose(np.asarray(V), Vw, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(w), ww, rtol=2e-5, atol=2e-5)
    assert (fused, direct) == (0, 1)
    # the caller's arrays are untouched (the loop updated its own copy)
    np.testing.assert_array_equal(np.asarray(V0), V0)


@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_one_window_scatters_in_a_loop_set_add_and_out_of_range(mode):
    x0 = RNG.integers(-50, 50, (6, 40, 3)).astype(np.int32)
    rows = RNG.integers(-50, 50, (40, 3)).astype(np.int32)
    idx = np.array([0, 5, -1, 7, 3, -7, 2, 100], np.int32)

    ij = jnp.asarray(idx)

    def body(k, x):
        x = x.at[ij[k]].add(rows * k, mode=mode)
        return x.at[:, 1, ij[k] % 3].set(jnp.sum(x, axis=(1, 2)) + k, mode=mode)

    out, fused, direct = run_direct(lambda x: lax.fori_loop(0, 8, body, x), x0)
    want = x0.astype(np.int64)
    for k, j in enumerate(idx):
        j = wrap(j, 6)
        if mode == "clip":
            j = min(max(j, 0), 5)
        if 0 <= j < 6:
            want[j] += rows * k
        want[:, 1, int(idx[k]) % 3] = want.sum(axis=(1, 2)) + k
    np.testing.assert_array_equal(np.asarray(out), want.astype(np.int32))
    assert fused == 0 and direct == 1


def test_loop_with_a_nested_loop_and_a_library_step_in_its_body():
    n = 150
    A = (np.eye(n) * 3 + RNG.standard_normal((n, n)) / n).astype(np.float32)
    x0 = RNG.standard_normal(n).astype(np.float32)

    def body(k, c):
        X, x = c
        # a while inside the body (three halvings), a sort (a library step) and a row update
        y = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 0.5), (0, A @ x))[1]
        y = jnp.sort(y)
        return X.at[k].set(y), y / jnp.max(jnp.abs(y))

    (X, x), fused, direct = run_direct(
        lambda X, x: lax.fori_loop(0, 6, body, (X, x)), np.zeros((6, n), np.float32), x0)
    Xw, xw = np.zeros((6, n), np.float32), x0.copy()
    for k in range(6):
        y = np.sort((A.astype(np.float64) @ xw) * 0.125)
        Xw[k] = y
        xw = (y / np.max(np.abs(y))).astype(np.float32)
    np.testing.assert_allclose(np.asarray(X), Xw, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(x), xw, rtol=1e-5, atol=1e-5)
    assert fused == 0 and direct >= 1


def test_gmres_runs_its_loops_in_place():
    from cranax.scipy.sparse.linalg import gmres
    n = 120
    A = (np.eye(n) * 4 + RNG.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    x, fused, direct = run_direct(lambda A, b: gmres(A, b, restart=20, tol=1e-6)[0], A, b)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A.astype(np.float64), b), rtol=1e-4, atol=1e-5)
    assert direct >= 2


def test_grad_through_fori_loop_with_a_product_of_the_carry():
    W = (RNG.standard_normal((8, 8)) * 0.3).astype(np.float32)

    def loss(x):
        def body(k, c):
            X, h = c
            h = jnp.tanh(W @ h)
            return X.at[:, k].set(h), h
        X, _ = lax.fori_loop(0, 8, body, (jnp.zeros((8, 8)), x))
        return jnp.sum(X @ X.T)

    x0 = RNG.standard_normal(8).astype(np.float32)
    g = np.asarray(jax.jit(jax.grad(loss))(x0))
    eps = 1e-3
    for i in range(0, 8, 3):
        e = np.zeros(8, np.float32)
        e[i] = eps
        fd = (float(loss(x0 + e)) - float(loss(x0 - e))) / (2 * eps)
        np.testing.assert_allclose(g[i], fd, rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_matrix_vector_products(dtype):
    # `V.T @ w` of a row-major V with a multiple of 16 columns runs as the vector-matrix kernel `w^T V`
    V = RNG.standard_normal((300, 48)).astype(dtype)
    w = RNG.standard_normal(300).astype(dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    want = V.astype(np.float64).T @ w.astype(np.float64)
    with jax.enable_x64(dtype == np.float64):
        got = np.asarray(jax.jit(lambda V, w: V.T @ w)(V, w))
        got2 = np.asarray(jax.jit(lambda V, w: jnp.einsum("ij,i->j", V, w))(V, w))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got2, want, rtol=tol, atol=tol)
    assert got.dtype == dtype


# ----------------------------------------------------------------------------------------------------------
# Control flow known when compiling (`opt::control_fold`): a cond on a literal index is its branch, a while
# whose condition is false on its literal initial operands returns them. Values are the unfolded program's.

def _plan_text(jf, *args):
    text = jf.lower(*args).compile().as_text()
    return text[text.index("plan "):]


@pytest.mark.parametrize("index", [0, 1, 2, 5, -3, True, False])
def test_cond_on_a_literal_index_inside_a_loop_runs_its_branch(index):
    x0 = RNG.standard_normal(16).astype(np.float32)
    branches = [lambda x: x * 0.5 + 1.0, lambda x: jnp.sin(x), lambda x: x - jnp.sum(x) / 16]

    def f(x):
        def body(k, x):
            if isinstance(index, bool):
                return lax.cond(index, branches[1], branches[0], x) * 0.99
            return lax.switch(index, branches, x) * 0.99
        return lax.fori_loop(0, 5, body, x)

    jf = jax.jit(f)
    assert "cond (" not in _plan_text(jf, x0)
    pick = (1 if index else 0) if isinstance(index, bool) else min(max(index, 0), 2)
    want = x0.astype(np.float64)
    for _ in range(5):
        want = [lambda x: x * 0.5 + 1.0, np.sin, lambda x: x - np.sum(x) / 16][pick](want) * 0.99
    np.testing.assert_allclose(np.asarray(jf(x0)), want, rtol=2e-5, atol=1e-5)


def test_cond_on_a_traced_index_stays():
    jf = jax.jit(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos], x))
    x = np.linspace(0, 1, 8, dtype=np.float32)
    assert "cond (" in _plan_text(jf, 1, x)
    np.testing.assert_allclose(np.asarray(jf(1, x)), np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jf(0, x)), np.sin(x), rtol=1e-6)


@pytest.mark.parametrize("start, runs", [(1, False), (3, False), (0, True)])
def test_while_false_on_entry_returns_its_operands(start, runs):
    """`k < 1 & norm(x) > 0` with k starting at a literal: from 1 on the loop never runs and folds away (the
    shape of gmres's second Gram-Schmidt pass); from 0 it runs once."""
    x0 = RNG.standard_normal(32).astype(np.float32)

    def f(x):
        def cond(c):
            k, x = c
            return (k < 1) & (jnp.sqrt(jnp.sum(x * x)) > 0)
        return lax.while_loop(cond, lambda c: (c[0] + 1, jnp.tanh(c[1]) * 2.0), (start, x))

    jf = jax.jit(f)
    assert ("while (" in _plan_text(jf, x0)) == runs
    k, x = jf(x0)
    assert int(k) == (1 if runs else start)
    want = np.tanh(x0.astype(np.float64)) * 2.0 if runs else x0
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-6, atol=1e-6)


def test_gmres_gram_schmidt_has_no_cond_or_dead_loop_left():
    """gmres's Arnoldi step: the first Gram-Schmidt pass's `cond` (k = 0, a literal) is inlined and the second
    pass's loop (k = 1 on entry: JAX's `max_iterations=2` runs one pass) is gone; the restart loop and the
    Arnoldi loop remain. The solution still solves the system."""
    from cranax.scipy.sparse.linalg import gmres
    n = 60
    A = (np.eye(n) * 4 + RNG.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    jf = jax.jit(lambda A, b: gmres(A, b, restart=20, tol=1e-6)[0])
    plan = _plan_text(jf, A, b)
    assert "cond (" not in plan and plan.count("while (") == 2, plan
    np.testing.assert_allclose(np.asarray(jf(A, b)), np.linalg.solve(A.astype(np.float64), b), rtol=1e-4, atol=1e-5)


# Column slices and one-window column scatters inside loops run in place (gmres's `V[:, k]` and
# `V.at[:, k].set(w)`): `dynamic_slice` copies a column with fixed-size moves per element size
# (shape_ops::copy_box), the column scatter picks its combiner once (gather::one_window), and the operands'
# handles are kept between iterations and runs (loop_body::Frame::handles). Oracle: the NumPy loop.

def columns_np(V, acc, steps, m):
    V, acc = V.copy(), acc.copy()
    for k in range(steps):
        col = V[:, k % m].copy()
        V[:, (k + 1) % m] = col
        V[:, (k + 2) % m] += col
        V[:, (k + 3) % m] = np.maximum(V[:, (k + 3) % m], col) if V.dtype.kind != "c" else V[:, (k + 3) % m]
        box = V[1:3, (k % 2):(k % 2) + 2]
        acc = acc + V.sum(axis=1).astype(acc.dtype)
        acc[:2] = acc[:2] + box[:, 0].astype(acc.dtype) * 2
    return V, acc


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.float32, np.float64, np.complex64])
def test_column_slices_and_scatters_in_a_loop_every_element_size(dtype):
    n, m, steps = 37, 5, 11

    def body(k, c):
        V, acc = c
        col = lax.dynamic_slice(V, (0, k % m), (n, 1))[:, 0]
        V = V.at[:, (k + 1) % m].set(col)
        V = V.at[:, (k + 2) % m].add(col)
        if np.dtype(dtype).kind != "c":
            V = V.at[:, (k + 3) % m].max(col)
        box = lax.dynamic_slice(V, (1, k % 2), (2, 2))
        # the sum reads V whole: the loop runs in place, not as one fused call
        acc = acc + jnp.sum(V, axis=1).astype(acc.dtype)
        return V, acc.at[:2].add(box[:, 0].astype(acc.dtype) * 2)

    f = lambda V, acc: lax.fori_loop(0, steps, body, (V, acc))
    for seed in range(2):   # a second call with other arrays reuses the loop's frame and handles
        r = np.random.default_rng(seed)
        V0 = r.integers(0, 4, (n, m)).astype(dtype)
        acc0 = r.integers(0, 4, n).astype(dtype)
        (V, acc), fused, direct = run_direct(f, V0, acc0)
        Vw, accw = columns_np(V0, acc0, steps, m)
        np.testing.assert_array_equal(np.asarray(V), Vw)
        np.testing.assert_array_equal(np.asarray(acc), accw)
        assert (fused, direct) == (0, 1)


def test_column_of_a_three_axis_array_in_a_loop():
    # runs of one element along the middle axis, boxes in the leading one (rank 3, 2-byte and 8-byte elements)
    for dtype in (np.float16, np.int64):
        X0 = RNG.integers(-9, 9, (4, 30, 6)).astype(dtype)

        def body(k, c):
            X, acc = c
            win = lax.dynamic_slice(X, (k % 3, 0, (k * 5) % 6), (2, 30, 1))
            X = lax.dynamic_update_slice(X, win[::-1], ((k + 1) % 3, 0, (k + 1) % 6))
            return X, acc + jnp.sum(X, axis=(0, 2)).astype(acc.dtype)

        (X, acc), fused, direct = run_direct(lambda X, a: lax.fori_loop(0, 7, body, (X, a)), X0, np.zeros(30, dtype))
        Xw, accw = X0.copy(), np.zeros(30, dtype)
        for k in range(7):
            i, j = k % 3, (k * 5) % 6
            win = Xw[i:i + 2, :, j:j + 1].copy()
            i2, j2 = (k + 1) % 3, (k + 1) % 6
            Xw[i2:i2 + 2, :, j2:j2 + 1] = win[::-1]
            accw = accw + Xw.sum(axis=(0, 2)).astype(dtype)
        np.testing.assert_array_equal(np.asarray(X), Xw)
        np.testing.assert_array_equal(np.asarray(acc), accw)
        assert fused == 0 and direct == 1


def test_library_steps_on_values_whose_buffers_change_every_iteration():
    # the second sort reads the carry (two buffers used on alternate iterations), the slice reads the first
    # sort's result (a fresh buffer each iteration): the kept handles follow their addresses
    n = 300
    x0 = RNG.standard_normal(n).astype(np.float32)
    A = (RNG.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)

    def body(k, x):
        y = jnp.sort(A @ x) + jnp.sort(x)[0]
        return y[::-1] / jnp.max(jnp.abs(y)) + lax.dynamic_slice(y, (k,), (1,))

    f = lambda x, A: lax.fori_loop(0, 9, body, x)
    x, fused, direct = run_direct(f, x0, A)
    xw = x0.astype(np.float64)
    for k in range(9):
        y = np.sort(A.astype(np.float64) @ xw) + np.sort(xw)[0]
        xw = y[::-1] / np.max(np.abs(y)) + y[k]
    np.testing.assert_allclose(np.asarray(x), xw, rtol=2e-4, atol=2e-4)
    assert fused == 0 and direct == 1
