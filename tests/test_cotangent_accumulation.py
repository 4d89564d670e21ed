"""Cotangents accumulated the way reverse mode writes them, after the optimizer's rewrites (issue 23):
`a + pad(x, 0)` as an update of `a`'s window (`opt::pad_add`, written in place when `a` is dead), outer
products as products of broadcasts (`opt::outer`), and broadcasts shared by several kernels read through
their index map (`opt::fusion`). Values against NumPy (exact where each element is one rounding), float64
finite differences, and hand-written backprop."""
import os
import sys

import numpy as np
import pytest

import cranax
import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from test_fma import _exact   # the correctly rounded a * b + c (exact rationals)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches"))
import bench_programs as bp  # noqa: E402  (benches/ is not a package: found through the path set above)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("config, xshape", [
    ([(1, 1, 0), (0, 0, 0)], (1, 4)),      # a middle row
    ([(0, 2, 0), (2, 1, 0)], (1, 2)),      # a corner
    ([(2, 0, 0), (0, 0, 0)], (1, 4)),      # the last row
    ([(0, 0, 1), (0, 0, 0)], (2, 4)),      # interior padding: kept as a pad
    ([(-1, 2, 0), (0, 0, 0)], (2, 4)),     # cropping: kept as a pad
])
def test_add_of_zero_pad(dtype, config, xshape):
    if dtype == np.float64:
        cranax.config.update("jax_enable_x64", True)  # conftest restores it after the test
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(xshape) * 10).astype(dtype)
    out_shape = tuple(lo + hi + n + max(n - 1, 0) * it for (lo, hi, it), n in zip(config, xshape))
    a = (rng.standard_normal(out_shape) * 10).astype(dtype)

    def f(a, x):
        s = a + lax.pad(x, dtype(0), config)
        return s, a * 2   # `a` still read after the update: its buffer must not be written

    s, a2 = jax.jit(f)(a, x)
    want = a.copy()
    for idx in np.ndindex(*xshape):
        pos = tuple(lo + i * (it + 1) for (lo, _, it), i in zip(config, idx))
        if all(0 <= p < n for p, n in zip(pos, out_shape)):
            want[pos] += x[idx]
    np.testing.assert_array_equal(np.asarray(s), want)
    np.testing.assert_array_equal(np.asarray(a2), a * 2)


def test_window_updates_chained_over_a_loop_carry():
    """Three slices' cotangents added to one carried accumulator per step, the carry also stacked as ys (so
    the update must copy where the old value is still read)."""
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((6, 3, 4)).astype(np.float32)

    def f(acc, xs):
        def body(c, x):
            c = c + lax.pad(x[0:1] * 2, 0.0, [(0, 2, 0), (0, 0, 0)])
            c = c + lax.pad(x[1:2], 0.0, [(1, 1, 0), (0, 0, 0)])
            old = c
            c = c + lax.pad(x[2:3] - 1, 0.0, [(2, 0, 0), (0, 0, 0)])
            return c, old
        return lax.scan(body, acc, xs)

    acc0 = rng.standard_normal((3, 4)).astype(np.float32)
    c, olds = jax.jit(f)(acc0, xs)
    want, wolds = acc0.copy(), []
    for x in xs:
        want[0] += x[0] * 2
        want[1] += x[1]
        wolds.append(want.copy())
        want[2] += x[2] - 1
    np.testing.assert_array_equal(np.asarray(c), want)
    np.testing.assert_array_equal(np.asarray(olds), np.stack(wolds))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_outer_products_exact(dtype):
    if dtype == np.float64:
        cranax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(2)
    a = (rng.standard_normal(37) * 100).astype(dtype)
    b = (rng.standard_normal(19) * 100).astype(dtype)
    np.testing.assert_array_equal(np.asarray(jax.jit(jnp.outer)(a, b)), np.outer(a, b))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a, b: jnp.outer(a, b).T)(a, b)), np.outer(a, b).T)
    # batched (vmap): batch axes leading on both sides
    A = (rng.standard_normal((5, 7)) * 100).astype(dtype)
    B = (rng.standard_normal((5, 3)) * 100).astype(dtype)
    got = jax.jit(jax.vmap(jnp.outer))(A, B)
    np.testing.assert_array_equal(np.asarray(got), A[:, :, None] * B[:, None, :])


def test_outer_product_of_mixed_dtypes_converts():
    a = np.array([1.5, -2.25, 3.0], np.float32)
    b = jnp.asarray(np.array([0.5, 4.0], np.float32)).astype(jnp.bfloat16)
    got = jax.jit(lambda a, b: lax.dot_general(a, b, (((), ()), ((), ())), preferred_element_type=jnp.float32))(a, b)
    np.testing.assert_array_equal(np.asarray(got), np.outer(a, [0.5, 4.0]).astype(np.float32))


def test_broadcast_shared_by_two_kernels():
    """`a[:, None]` read by two kernels (after CSE, one broadcast): both read `a` through the index map."""
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((64,), (64,), (64, 64)))

    def f(a, b, c):
        m = jnp.dot(a, c)   # makes `a` a stored value (a product's operand)
        return c + a[:, None] * b[None, :], c * a[:, None] - 1.0, m

    x, y, m = jax.jit(f)(a, b, c)
    # each multiply-add rounds once under jit, as XLA's (JAX 0.10.2 gives these bits: `opt::contract`)
    A, B = np.broadcast_arrays(a[:, None], b[None, :])
    np.testing.assert_array_equal(np.asarray(x), _exact(A.ravel(), B.ravel(), c.ravel(), np.float32).reshape(c.shape))
    np.testing.assert_array_equal(np.asarray(y), _exact(c.ravel(), A.ravel(), -np.ones(c.size, np.float32),
                                                        np.float32).reshape(c.shape))
    np.testing.assert_allclose(np.asarray(m), a @ c, rtol=1e-5, atol=1e-5)


def _rnn3_loss(W3, xs):
    def cell(h, x):
        h = jnp.tanh(h @ W3[0] + x @ W3[1])
        return h, h @ W3[2]
    h, ys = lax.scan(cell, jnp.zeros(W3.shape[1], W3.dtype), xs)
    return jnp.sum(h) + jnp.sum(ys)


# the hand-written float64 backprop of that cell: one home, in the bench that times it
_rnn3_grad_np = bp.rnn3_grad_np


def test_rnn_grad_with_stacked_weights_float64_finite_differences():
    cranax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(4)
    H, T = 6, 9
    W3 = rng.standard_normal((3, H, H)) * 0.3
    xs = rng.standard_normal((T, H))
    g = np.asarray(jax.jit(jax.grad(_rnn3_loss))(W3, xs))
    np.testing.assert_allclose(g, _rnn3_grad_np(W3, xs), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    for idx in [(0, 1, 2), (1, 5, 0), (2, 3, 3), (0, 0, 5)]:
        e = np.zeros_like(W3)
        e[idx] = eps
        fd = (float(_rnn3_loss(W3 + e, xs)) - float(_rnn3_loss(W3 - e, xs))) / (2 * eps)
        assert abs(g[idx] - fd) < 1e-7 * max(1.0, abs(fd)), (idx, g[idx], fd)


def test_rnn_grads_float32_against_backprop():
    rng = np.random.default_rng(5)
    H, T = 32, 40
    W3 = (rng.standard_normal((3, H, H)) * 0.1).astype(np.float32)
    xs = rng.standard_normal((T, H)).astype(np.float32)
    g = np.asarray(jax.jit(jax.grad(_rnn3_loss))(W3, xs))
    want = _rnn3_grad_np(W3.astype(np.float64), xs.astype(np.float64))
    np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())

    def loss2(W, U, xs):
        def cell(h, x):
            h = jnp.tanh(h @ W + x @ U)
            return h, h
        h, hs = lax.scan(cell, jnp.zeros(H, jnp.float32), xs)
        return jnp.sum(h) + jnp.sum(hs)
    W, U = W3[0], W3[1]
    dW, dU = jax.jit(jax.grad(loss2, argnums=(0, 1)))(W, U, xs)
    hs = [np.zeros(H)]
    for x in xs.astype(np.float64):
        hs.append(np.tanh(hs[-1] @ W + x @ U))
    wW, wU, gh = np.zeros((H, H)), np.zeros((H, H)), np.ones(H)
    for t in range(T, 0, -1):
        dz = (gh + 1.0) * (1.0 - hs[t] ** 2)
        wW += np.outer(hs[t - 1], dz)
        wU += np.outer(xs[t - 1], dz)
        gh = W.astype(np.float64) @ dz
    np.testing.assert_allclose(np.asarray(dW), wW, rtol=2e-5, atol=2e-5 * np.abs(wW).max())
    np.testing.assert_allclose(np.asarray(dU), wU, rtol=2e-5, atol=2e-5 * np.abs(wU).max())


# ---- scan carries that only add outer products leave the loop (`opt::accumulate`, `outer_accumulate`)

def _fma_outer(u, v, acc):
    """`acc + outer(u, v)` with each multiply-add rounded once (XLA's contraction: `opt::contract`)."""
    U, V = np.broadcast_arrays(u[:, None], v[None, :])
    return _exact(U.ravel(), V.ravel(), acc.ravel(), acc.dtype.type).reshape(acc.shape)


def _plan(f, *args):
    text = f.lower(*args).compile().as_text()
    return text[text.index("plan "):]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("form", ["rows_cols", "cols_rows", "outer_T"])
def test_outer_product_accumulator_after_the_loop_has_the_loops_bits(dtype, reverse, form):
    """`acc + u_t[:, None] * g_t[None, :]` with `g_t` computed from another carry: the accumulator is computed
    after the loop, with the same roundings in the same order as NumPy's loop (bit for bit)."""
    if dtype == np.float64:
        cranax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(11)
    T, M, N = 23, 13, 37
    us = rng.standard_normal((T, M)).astype(dtype)
    acc0 = rng.standard_normal((M, N)).astype(dtype)
    h0 = rng.standard_normal(N).astype(dtype)

    def f(acc0, h0, us):
        def body(c, u):
            acc, h = c
            g = h * dtype(0.75) + dtype(0.5)
            if form == "rows_cols":
                p = u[:, None] * g[None, :]
            elif form == "cols_rows":
                p = g[None, :] * u[:, None]
            else:
                p = jnp.outer(g, u).T
            return (acc + p, g), g
        return lax.scan(body, (acc0, h0), us, reverse=reverse)

    jf = jax.jit(f)
    assert "outer_accumulate" in _plan(jf, acc0, h0, us)
    (acc, h), gs = jf(acc0, h0, us)
    # the loop on cranax's own g values, each multiply-add rounded once as XLA's contracted loop body (JAX
    # 0.10.2 gives the same bits for `acc + outer`, `acc + u[:, None] * v[None, :]` and the padded windows)
    gs = np.asarray(gs)
    want = acc0.copy()
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        want = _fma_outer(us[t], gs[t], want)
    assert acc.dtype == dtype
    np.testing.assert_array_equal(np.asarray(acc), want)
    g = h0.astype(np.float64)
    for t in range(T):
        g = g * 0.75 + 0.5
    np.testing.assert_allclose(np.asarray(h), g, rtol=1e-5)


def test_accumulator_read_in_the_body_stays_in_the_loop():
    rng = np.random.default_rng(12)
    T, M, N = 7, 5, 6
    us, vs = rng.standard_normal((T, M)).astype(np.float32), rng.standard_normal((T, N)).astype(np.float32)

    def f(us, vs):
        def body(acc, uv):
            u, v = uv
            new = acc + u[:, None] * v[None, :]
            return new, acc.sum()      # the carry is read: it must stay a carry
        return lax.scan(body, jnp.zeros((M, N), jnp.float32), (us, vs))

    jf = jax.jit(f)
    assert "outer_accumulate" not in _plan(jf, us, vs)
    acc, sums = jf(us, vs)
    want, wsums = np.zeros((M, N), np.float32), []
    for t in range(T):
        wsums.append(want.astype(np.float64).sum())
        want = _fma_outer(us[t], vs[t], want)   # XLA's contracted loop body (JAX 0.10.2 gives these bits)
    np.testing.assert_array_equal(np.asarray(acc), want)
    np.testing.assert_allclose(np.asarray(sums), wsums, rtol=1e-5, atol=1e-5)


def test_rnn_grad_weight_cotangents_leave_the_loop_and_match_backprop():
    """The bench's RNN gradient: both weight cotangents become `outer_accumulate` steps after the backward
    scan; values against the float64 backprop of `bench_programs`."""
    rng = np.random.default_rng(13)
    H, T = 24, 30
    W = (rng.standard_normal((H, H)) * 0.2).astype(np.float32)
    U = (rng.standard_normal((H, H)) * 0.2).astype(np.float32)
    xs = rng.standard_normal((T, H)).astype(np.float32)
    f, args = bp.scan_rnn_grad(jax, jnp, lax, W, U, xs)
    assert _plan(f, *args).count("outer_accumulate[reverse=True]") == 2
    dW, dU = f(*args)
    wW, wU = bp.rnn_grad_np(W, U, xs)
    np.testing.assert_allclose(np.asarray(dW), wW, rtol=2e-5, atol=2e-5 * np.abs(wW).max())
    np.testing.assert_allclose(np.asarray(dU), wU, rtol=2e-5, atol=2e-5 * np.abs(wU).max())


def test_stacked_weights_windows_leave_the_loop_with_mains_values():
    """Stacked weights `W3[k]`: after `pad_add` each window of the f32[3, H, H] accumulator is a chain of window
    updates; all three leave the loop as `outer_accumulate` steps written into the initial value's windows.
    Values against the float64 backprop; each window against NumPy's float32 loop on the same factors."""
    rng = np.random.default_rng(14)
    H, T = 16, 21
    W3 = (rng.standard_normal((3, H, H)) * 0.2).astype(np.float32)
    xs = rng.standard_normal((T, H)).astype(np.float32)
    f = jax.jit(jax.grad(_rnn3_loss))
    assert _plan(f, W3, xs).count("outer_accumulate[reverse=True]") == 3
    g = np.asarray(f(W3, xs))
    want = _rnn3_grad_np(W3.astype(np.float64), xs.astype(np.float64))
    np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def test_windowed_accumulator_bits_match_the_loop():
    """`acc.at[k].add(outer(u_t, v_t))` for two windows of a [3, M, N] carry (the third left as it was):
    NumPy's float32 loop, bit for bit."""
    rng = np.random.default_rng(15)
    T, M, N = 17, 6, 11
    us, vs = rng.standard_normal((T, M)).astype(np.float32), rng.standard_normal((T, N)).astype(np.float32)
    acc0 = rng.standard_normal((3, M, N)).astype(np.float32)

    def f(acc0, us, vs):
        def body(acc, uv):
            u, v = uv
            # zero pads as reverse mode writes them (a literal padding value)
            acc = acc + lax.pad(jnp.outer(u, v)[None], 0.0, [(2, 0, 0), (0, 0, 0), (0, 0, 0)])
            acc = acc + lax.pad((v[None, :] * u[:, None])[None], 0.0, [(0, 2, 0), (0, 0, 0), (0, 0, 0)])
            return acc, None
        return lax.scan(body, acc0, (us, vs), reverse=True)[0]

    jf = jax.jit(f)
    assert _plan(jf, acc0, us, vs).count("outer_accumulate") == 2
    want = acc0.copy()
    for t in range(T - 1, -1, -1):
        want[2] = _fma_outer(us[t], vs[t], want[2])
        want[0] = _fma_outer(us[t], vs[t], want[0])
    np.testing.assert_array_equal(np.asarray(jf(acc0, us, vs)), want)


# ---- batched accumulators: `acc + h_t.T @ g_t` (a product over the batch each step) leave the loop too

def _fma_chain_products(xs, ys):
    """Per step `sum_b xs[t, b, i] * ys[t, b, j]` as one fused multiply-add chain over b from zero (the loop's
    product in cranax and in XLA:CPU), emulated in long double for float32 operands: each product is exact
    there and each sum rounds once to 64 bits before the rounding to float32 (a double rounding that changes
    nothing short of a one-in-2^40 tie)."""
    dt = xs.dtype
    x, y = xs.astype(np.longdouble), ys.astype(np.longdouble)
    out = np.zeros((xs.shape[0], xs.shape[2], ys.shape[2]), dt)
    for t in range(xs.shape[0]):
        p = np.zeros(out.shape[1:], dt)
        for b in range(xs.shape[1]):
            p = (x[t, b][:, None] * y[t, b][None, :] + p.astype(np.longdouble)).astype(dt)
        out[t] = p
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("form", ["xT_y", "yT_x_T"])
def test_batched_accumulator_after_the_loop_has_the_loops_bits(dtype, reverse, form):
    """`acc + x_t.T @ g_t` over a batch of 8, `g_t` computed from another carry: computed after the loop by
    `outer_accumulate` on [T, B, M] / [T, B, N] factors, bit for bit the loop's own result (the same scan
    with the carry also read in the body, which keeps it in the loop) and, in float32, an emulated FMA chain
    per step (the loop's and XLA's order)."""
    if dtype == np.float64:
        cranax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(21)
    T, B, M, N = 9, 8, 24, 40
    xs = rng.standard_normal((T, B, M)).astype(dtype)
    acc0 = rng.standard_normal((M, N)).astype(dtype)
    h0 = rng.standard_normal((B, N)).astype(dtype)

    def make(read_carry):
        def f(acc0, h0, xs):
            def body(c, x):
                acc, h = c
                g = h * dtype(0.75) + dtype(0.5)
                p = x.T @ g if form == "xT_y" else (g.T @ x).T
                return (acc + p, g), ((g, acc[0, 0]) if read_carry else g)
            return lax.scan(body, (acc0, h0), xs, reverse=reverse)
        return jax.jit(f)

    jf, jloop = make(False), make(True)
    assert "outer_accumulate" in _plan(jf, acc0, h0, xs)
    assert "outer_accumulate" not in _plan(jloop, acc0, h0, xs)
    (acc, _), gs = jf(acc0, h0, xs)
    (acc_loop, _), _ = jloop(acc0, h0, xs)
    assert acc.dtype == dtype
    np.testing.assert_array_equal(np.asarray(acc), np.asarray(acc_loop))
    if dtype == np.float32 and np.finfo(np.longdouble).nmant >= 63:
        prods = _fma_chain_products(xs, np.asarray(gs))
        want = acc0.copy()
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            want = want + prods[t]
        np.testing.assert_array_equal(np.asarray(acc), want)


@pytest.mark.parametrize("B, M, N", [(2, 24, 40), (8, 8, 8), (16, 24, 40)])
def test_batched_accumulator_outside_the_fma_chain_order_stays_in_the_loop(B, M, N):
    """A batch of 2 (gemm's `k <= 2` kernel rounds each product), a 64-element output (gemm's small kernels
    sum in another order) and a batch of 16 (there the loop's products were as fast as the hoisted form)
    stay in the loop; values against NumPy's float64 loop."""
    rng = np.random.default_rng(22)
    T = 5
    xs, ys = rng.standard_normal((T, B, M)).astype(np.float32), rng.standard_normal((T, B, N)).astype(np.float32)

    def f(xs, ys):
        return lax.scan(lambda a, xy: (a + xy[0].T @ xy[1], None), jnp.zeros((M, N), jnp.float32), (xs, ys))[0]

    jf = jax.jit(f)
    assert "outer_accumulate" not in _plan(jf, xs, ys)
    want = np.einsum("tbm,tbn->mn", xs.astype(np.float64), ys.astype(np.float64))
    np.testing.assert_allclose(np.asarray(jf(xs, ys)), want, rtol=1e-5, atol=1e-5)


def _batched_rnn_loss(W, U, xs):
    def cell(h, x):
        h = jnp.tanh(h @ W + x @ U)
        return h, h
    h, hs = lax.scan(cell, jnp.zeros((xs.shape[1], W.shape[0]), W.dtype), xs)
    return jnp.sum(h) + jnp.sum(hs)


def _batched_rnn_grad_np(W, U, xs):
    """(dW, dU) of `_batched_rnn_loss` by hand-written backprop in float64."""
    W, U, xs = (a.astype(np.float64) for a in (W, U, xs))
    T, B, H = xs.shape
    hs = [np.zeros((B, H))]
    for t in range(T):
        hs.append(np.tanh(hs[-1] @ W + xs[t] @ U))
    dW, dU, dh = np.zeros_like(W), np.zeros_like(U), np.zeros((B, H))
    for t in range(T - 1, -1, -1):
        dh = dh + 1.0 + (1.0 if t == T - 1 else 0.0)
        dz = dh * (1 - hs[t + 1] ** 2)
        dW += hs[t].T @ dz
        dU += xs[t].T @ dz
        dh = dz @ W.T
    return dW, dU


def test_batched_rnn_grad_weight_cotangents_leave_the_loop_and_match_backprop():
    """A batched RNN's gradient (batch 8, hidden 24): both weight cotangents are `h_t.T @ dz_t` products per
    step; both leave the backward scan as `outer_accumulate` steps. Values against float64 backprop, and
    the float64 gradient against central finite differences in one direction."""
    cranax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(23)
    T, B, H = 12, 8, 24
    W = (rng.standard_normal((H, H)) * 0.2).astype(np.float32)
    U = (rng.standard_normal((H, H)) * 0.2).astype(np.float32)
    xs = rng.standard_normal((T, B, H)).astype(np.float32)
    f = jax.jit(jax.grad(_batched_rnn_loss, argnums=(0, 1)))
    assert _plan(f, W, U, xs).count("outer_accumulate[reverse=True]") == 2
    dW, dU = f(W, U, xs)
    wW, wU = _batched_rnn_grad_np(W, U, xs)
    np.testing.assert_allclose(np.asarray(dW), wW, rtol=2e-5, atol=2e-5 * np.abs(wW).max())
    np.testing.assert_allclose(np.asarray(dU), wU, rtol=2e-5, atol=2e-5 * np.abs(wU).max())
    W64, U64, xs64 = W.astype(np.float64), U.astype(np.float64), xs.astype(np.float64)
    dW64, dU64 = (np.asarray(a) for a in f(W64, U64, xs64))
    dirW, dirU = rng.standard_normal((H, H)), rng.standard_normal((H, H))
    eps = 1e-6
    lp = float(_batched_rnn_loss(W64 + eps * dirW, U64 + eps * dirU, xs64))
    lm = float(_batched_rnn_loss(W64 - eps * dirW, U64 - eps * dirU, xs64))
    np.testing.assert_allclose((lp - lm) / (2 * eps), np.sum(dW64 * dirW) + np.sum(dU64 * dirU), rtol=1e-6)
