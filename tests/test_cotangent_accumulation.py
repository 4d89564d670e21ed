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
