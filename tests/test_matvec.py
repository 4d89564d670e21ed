"""Matrix-vector products on a row-major matrix (rust/backend/cpu/library/matvec.rs: ``A @ x``, ``x @ A``,
``A.T @ x``) and the transposed-operand copies of gemm's AVX2 products (``x @ w.T``, ``x.T @ w``, gemm.rs
``relayout``), mid-size products split by rows between threads and batches of small products shared
between threads (gemm.rs ``split_mid``, ``BATCH_SPLIT_WORK``): float64 NumPy oracles; ``x @ A`` has JAX
0.10.2's bits (digests recorded from real JAX on these inputs); the chunks that threads claim never change a
bit (1, 2 and 3 threads, default and avx2 mode); the copies give the bits of the same product on a row-major
operand."""
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import cranax as jax


def _rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _sha(a):
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k", [(257, 3), (300, 301), (1000, 7), (700, 2049), (4000, 100), (100, 5000)])
def test_matrix_vector_products_against_float64(m, k, dtype, x64):
    a, x, y = _rand((m, k), dtype, 1), _rand((k,), dtype, 2), _rand((m,), dtype, 3)
    tol = 4e-6 if dtype == np.float32 else 1e-14
    f = jax.jit(lambda p, q: p @ q)
    a64 = a.astype(np.float64)
    for got, want, scale in (
        (f(a, x), a64 @ x, np.abs(a64) @ np.abs(x.astype(np.float64))),
        (f(y, a), y.astype(np.float64) @ a64, np.abs(y.astype(np.float64)) @ np.abs(a64)),
        (jax.jit(lambda p, q: p.T @ q)(np.ascontiguousarray(a.T), x), a64 @ x, np.abs(a64) @ np.abs(x.astype(np.float64))),
        # a strided vector (every other element) takes gemm's general path: the same values
        (jax.jit(lambda p, q: p @ q[::2])(a, np.repeat(x, 2)), a64 @ x, np.abs(a64) @ np.abs(x.astype(np.float64))),
    ):
        got = np.asarray(got)
        assert got.dtype == np.dtype(dtype)
        assert np.all(np.abs(got - want) <= tol * (scale + 1e-300) * np.sqrt(k)), (m, k)


_LAYOUTS = {
    "x @ w": (lambda x, w: x @ w, lambda m, k, n: ((m, k), (k, n))),
    "x @ w.T": (lambda x, w: x @ w.T, lambda m, k, n: ((m, k), (n, k))),
    "x.T @ w": (lambda x, w: x.T @ w, lambda m, k, n: ((k, m), (k, n))),
    "x.T @ w.T": (lambda x, w: x.T @ w.T, lambda m, k, n: ((k, m), (n, k))),
    # non-contiguous operands: every other column of x, every other row of w
    "x[:, ::2] @ w[::2]": (lambda x, w: x[:, ::2] @ w[::2], lambda m, k, n: ((m, 2 * k), (2 * k, n))),
    "batched": (lambda x, w: x @ w, lambda m, k, n: ((16, m // 4, k // 4), (16, k // 4, n // 4))),
    "batched w.T": (lambda x, w: x @ jax.numpy.swapaxes(w, 1, 2), lambda m, k, n: ((16, m // 4, k // 4), (16, n // 4, k // 4))),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("m,k,n", [(256, 256, 256), (300, 257, 301), (512, 384, 520), (263, 1000, 129)])
def test_products_against_float64(layout, m, k, n, dtype, x64):
    # Mid-size single products (split by rows between threads) and batches of small ones (shared between
    # threads), every layout, odd sizes.
    fn, shapes = _LAYOUTS[layout]
    x, w = (_rand(s, dtype, i) for i, s in enumerate(shapes(m, k, n)))
    got = np.asarray(jax.jit(fn)(x, w))
    want = fn(x.astype(np.float64), w.astype(np.float64))
    scale = fn(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)))
    tol = 4e-6 if dtype == np.float32 else 1e-14
    assert got.dtype == np.dtype(dtype) and got.shape == want.shape
    assert np.all(np.abs(got - want) <= tol * scale * np.sqrt(k) + 1e-300), layout


def test_vector_matrix_products_have_jax_bits(x64):
    # `x @ A` is x[0]*A[0, j], then one fused multiply-add per row in order: XLA:CPU's order, on every ISA.
    # Digests of real JAX 0.10.2's outputs on these inputs (jax.jit(lambda p, q: q @ p)).
    rng = np.random.default_rng(23)
    want = ["8bb38c1c3178025a2ce9c7733c6cee6bf98129c6", "6d38b556378237625af6afa2dcb0ccd9bc37eb85",
            "896097e6375f383b64dc9072113a375a3fd8ee03"]
    for (dt, (k, n)), w in zip(((np.float32, (300, 2100)), (np.float32, (2049, 700)), (np.float64, (1001, 1030))), want):
        a = rng.standard_normal((k, n)).astype(dt)
        x = rng.standard_normal(k).astype(dt)
        got = np.asarray(jax.jit(lambda p, q: q @ p)(a, x))
        assert _sha(got) == w, (dt, k, n)


SCRIPT = r"""
import hashlib, numpy as np, cranax as jax
jax.config.update("jax_enable_x64", True)
def sha(a):
    return hashlib.sha1(np.ascontiguousarray(np.asarray(a)).tobytes()).hexdigest()
for dt, m, k in ((np.float32, 2048, 2048), (np.float32, 3001, 517), (np.float64, 1500, 1500), (np.float64, 600, 4099)):
    rng = np.random.default_rng(m + k)
    a = rng.standard_normal((m, k)).astype(dt)
    x, y = rng.standard_normal(k).astype(dt), rng.standard_normal(m).astype(dt)
    f = jax.jit(lambda p, q: p @ q)
    print(sha(f(a, x)), sha(f(y, a)), sha(jax.jit(lambda p, q: p.T @ q)(np.ascontiguousarray(a.T), x)))
# mid-size products (row blocks per thread) and batches of small products (shared between threads)
for dt, (m, k, n) in ((np.float32, (256, 256, 256)), (np.float64, (300, 257, 301)), (np.float32, (517, 384, 96))):
    rng = np.random.default_rng(m)
    x, w = rng.standard_normal((m, k)).astype(dt), rng.standard_normal((k, n)).astype(dt)
    wt = np.ascontiguousarray(w.T)
    print(sha(jax.jit(lambda p, q: p @ q)(x, w)), sha(jax.jit(lambda p, q: p @ q.T)(x, wt)))
for dt, (b, m, k, n) in ((np.float32, (16, 64, 64, 64)), (np.float64, (16, 64, 64, 64)), (np.float32, (64, 33, 65, 17))):
    rng = np.random.default_rng(b * m)
    x, w = rng.standard_normal((b, m, k)).astype(dt), rng.standard_normal((b, k, n)).astype(dt)
    print(sha(jax.jit(lambda p, q: p @ q)(x, w)))
# transposed operands: the same bits as the product on a row-major copy (copied inside on AVX2 kernels)
for dt, n in ((np.float32, 64), (np.float32, 256), (np.float64, 300), (np.float32, 700)):
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal((n, n + 5)).astype(dt), rng.standard_normal((n + 3, n + 5)).astype(dt)
    v = rng.standard_normal((n, n + 3)).astype(dt)
    f = jax.jit(lambda p, q: p @ q)
    nt, nt_copy = f(x, w.T), f(x, np.ascontiguousarray(w.T))
    tn, tn_copy = jax.jit(lambda p, q: p.T @ q)(v, x), f(np.ascontiguousarray(v.T), x)
    x64 = x.astype(np.float64)
    tol = 1e-4 if dt == np.float32 else 1e-12
    assert np.allclose(np.asarray(nt), x64 @ w.T.astype(np.float64), rtol=tol, atol=tol * np.sqrt(n))
    assert np.allclose(np.asarray(tn), v.T.astype(np.float64) @ x64, rtol=tol, atol=tol * np.sqrt(n))
    print(sha(nt), sha(nt_copy), sha(tn), sha(tn_copy))
"""


def _digests(threads, mode):
    env = dict(os.environ, CRANAX_NUM_THREADS=str(threads), CRANAX_CPU_BLOCK_MATH=mode)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return [line.split() for line in out.stdout.splitlines()]


@pytest.mark.parametrize("mode", ["", "avx2"])
def test_matvec_bits_do_not_depend_on_the_thread_count(mode):
    runs = [_digests(t, mode) for t in (1, 2, 3)]
    assert len(runs[0]) == 14
    assert runs[0] == runs[1] == runs[2]
    for nt, nt_copy, tn, tn_copy in runs[0][10:]:
        assert nt == nt_copy and tn == tn_copy


GROUPS = r"""
import numpy as np, cranax as jax
jax.config.update("jax_enable_x64", True)
f = jax.jit(lambda p, q: p @ q)
bad = []
for dt in (np.float32, np.float64):
    for k in (37, 500, 1024, 2049):
        rng = np.random.default_rng(k)
        a, x = rng.standard_normal((303, k)).astype(dt), rng.standard_normal(k).astype(dt)
        y = np.asarray(f(a, x))
        for s in (1, 2, 3):   # the same rows in other positions of the row groups (all above 256 outputs)
            if np.asarray(f(np.ascontiguousarray(a[s:]), x)).tobytes() != y[s:].tobytes():
                bad.append((dt.__name__, k, s))
print(bad)
"""


@pytest.mark.parametrize("mode", ["", "avx2"])
def test_matvec_rows_have_the_same_bits_in_any_group_position(mode):
    # matvec.rs computes rows two or four at a time, each in its own fixed order: a row's value must not depend
    # on which rows share its group (here: the matrix shifted by 1-3 rows).
    env = dict(os.environ, CRANAX_CPU_BLOCK_MATH=mode)
    out = subprocess.run([sys.executable, "-c", GROUPS], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_dot_general_dimension_numbers_in_any_spelling(x64):
    # Canonical dimension numbers are cached per spelling (eager products): lists, NumPy ints and tuples give the
    # same product and the same jaxpr parameters; a bad spelling still raises after good ones were cached.
    lax = jax.lax
    a, b = _rand((3, 4, 5), np.float64, 1), _rand((3, 5, 2), np.float64, 2)
    want = np.einsum("bij,bjk->bik", a, b)
    spellings = [(((2,), (1,)), ((0,), (0,))), [[[2], [1]], [[0], [0]]],
                 (((np.int64(2),), (np.int32(1),)), ((np.int64(0),), (0,)))]
    for dn in spellings * 2:
        np.testing.assert_allclose(np.asarray(lax.dot_general(a, b, dn)), want, rtol=1e-13)
        eqn = jax.make_jaxpr(lambda p, q: lax.dot_general(p, q, dn))(a, b).jaxpr.eqns[0]
        assert eqn.params["dimension_numbers"] == (((2,), (1,)), ((0,), (0,)))
        assert all(type(d) is int for side in eqn.params["dimension_numbers"] for dims in side for d in dims)
    with pytest.raises(TypeError, match="dimension_numbers must be"):
        lax.dot_general(a, b, ((2,), (1,)))
