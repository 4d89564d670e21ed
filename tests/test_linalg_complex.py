"""lax.linalg on complex operands (cholesky, lu, qr, eigh, svd, triangular_solve), the faer-backed eig,
hessenberg and tridiagonal, the composed primitives (householder_product, ormqr, tridiagonal_solve,
cholesky_update, symmetric_product, schur) and qdwh, and the jax.scipy.linalg functions built on them: values
against NumPy/SciPy (float64/complex128 oracle) and reconstruction identities over batched and empty shapes,
under jit and vmap; jvps against finite differences; values JAX's docs print."""
import numpy as np
import pytest
import scipy.linalg as sl

import cranax as jax
import cranax.numpy as jnp
import cranax.scipy.linalg as jsl
from cranax.lax import linalg as lxl

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same matrices however the tests are selected or ordered."""
    RNG.bit_generator.state = np.random.default_rng(7).bit_generator.state
CDTYPES = [np.complex64, np.complex128]


def _set_x64(dtype):
    jax.config.update("jax_enable_x64", np.dtype(dtype) in (np.float64, np.complex128))  # restored by conftest


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _cplx(shape, dtype=np.complex128):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def _same_set(got, want, dtype):
    """The same eigenvalues per matrix in any order (sorting would split near-equal real parts)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    g, w = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    for a, b in zip(g, w):
        d = np.abs(a[:, None] - b[None, :]).min(axis=1)
        assert d.max(initial=0) <= _tol(dtype) * 10 * max(1, np.abs(b).max(initial=0)), d


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _close(got, want, dtype):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    t = _tol(dtype)
    np.testing.assert_allclose(got, want, rtol=t, atol=t * 10)


SHAPES = [(3, 3), (2, 4, 4), (0, 3, 3), (1, 1)]




# ----------------------------------------------------------------------------------------------- complex factorizations

@pytest.mark.parametrize("dtype,shape", [(np.complex128, s) for s in SHAPES if len(s) != 3 or s[0] == 0] + [(np.complex64, (3, 3))])
def test_complex_factorizations(dtype, shape):
    _set_x64(dtype)
    n = shape[-1]
    z = _cplx(shape, dtype)
    h = (z @ _H(z) + n * np.eye(n)).astype(dtype)
    L = lxl.cholesky(h)
    assert L.dtype == dtype
    _close(np.asarray(L) @ _H(np.asarray(L)), h, dtype)
    _close(np.triu(np.asarray(L), 1), np.zeros(shape), dtype)
    lu, piv, perm = lxl.lu(z)
    lu = np.asarray(lu)
    Lm = np.tril(lu, -1) + np.eye(n)
    _close(Lm @ np.triu(lu), np.take_along_axis(z, np.asarray(perm)[..., None], -2), dtype)
    q, r = lxl.qr(z)
    _close(np.asarray(q) @ np.asarray(r), z, dtype)
    _close(_H(np.asarray(q)) @ np.asarray(q), np.broadcast_to(np.eye(n), shape), dtype)
    v, w = lxl.eigh(h)
    assert w.dtype == np.real(np.zeros((), dtype)).dtype
    _close(w, np.linalg.eigvalsh(h.astype(np.complex128)), dtype)
    _close(h @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :], dtype)
    u, s, vh = lxl.svd(z)
    _close(s, np.linalg.svd(z.astype(np.complex128), compute_uv=False), dtype)
    _close((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), z, dtype)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("left_side,lower,transpose_a,conjugate_a",
                         [(l, lo, t, c) for l in (True, False) for lo in (True, False) for t in (False, True)
                          for c in (False, True)])
def test_complex_triangular_solve(dtype, left_side, lower, transpose_a, conjugate_a):
    _set_x64(dtype)
    a = _cplx((2, 4, 4), dtype) + 4 * np.eye(4)
    a = np.tril(a) if lower else np.triu(a)
    b = _cplx((2, 4, 3) if left_side else (2, 3, 4), dtype)
    x = np.asarray(lxl.triangular_solve(a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                        conjugate_a=conjugate_a))
    op = np.swapaxes(a, -1, -2) if transpose_a else a
    op = np.conj(op) if conjugate_a else op
    _close(op @ x if left_side else x @ op, b, dtype)


def test_complex_jit_vmap_and_jvp(x64):
    z = _cplx((3, 3, 3))
    h = z @ _H(z) + 3 * np.eye(3)
    _close(jax.jit(lxl.cholesky)(h), np.linalg.cholesky(h), np.complex128)
    _close(jax.vmap(lambda m: lxl.eigh(m)[1])(h), np.linalg.eigvalsh(h), np.complex128)
    # jvps (convention-free) against central differences along a complex direction
    t = _cplx((3, 3))
    th = t + _H(t)
    eps = 1e-6
    cases = [(lambda m: lxl.cholesky(m), h[0], th),
             (lambda m: lxl.eigh(m)[1], h[0], th),
             (lambda m: lxl.svd(m, compute_uv=False), z[0], t),
             (lambda m: jnp.linalg.solve(m, z[1]), z[0], t),
             ]
    for f, x, d in cases:
        _, out = jax.jvp(f, (x,), (d,))
        fd = (np.asarray(f(x + eps * d)) - np.asarray(f(x - eps * d))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(out), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("which", ["det", "qr", "svd"])
def test_complex_det_qr_svd_jvp(x64, which):
    # seeds 2, 9 and 11 gave wrong det jvps before faer ran with IEEE subnormals (see test_complex_unit_pivots)
    f = {"det": jnp.linalg.det, "qr": lambda m: jnp.abs(lxl.qr(m)[1]),
         "svd": lambda m: jnp.abs(lxl.svd(m, full_matrices=False)[0])}[which]
    eps = 1e-6
    for seed in (2, 9, 11, 19, 23, 80):
        rng = np.random.default_rng(seed)
        z = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
        t = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
        _, out = jax.jvp(f, (z,), (t,))
        fd = (np.asarray(f(z + eps * t)) - np.asarray(f(z - eps * t))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(out), fd, rtol=1e-5, atol=1e-6, err_msg=f"seed {seed}")


@pytest.mark.parametrize("dtype", CDTYPES)
def test_complex_unit_pivots(dtype):
    """Diagonal entries with |z| > 1 but both parts <= 1: faer's complex reciprocal takes a subnormal
    intermediate there, which came out 0 under cranax's flush-to-zero (the last column of a triangular solve
    was zero, LU/det/eig went wrong). faer now runs with IEEE subnormals."""
    _set_x64(dtype)
    u = np.triu(_cplx((3, 3))).astype(dtype)
    u[np.diag_indices(3)] = [0.8 + 0.7j, -0.9 + 0.6j, 0.68 - 0.94j]
    b = _cplx((3, 2), dtype)
    _close(lxl.triangular_solve(u, b, left_side=True, lower=False), np.linalg.solve(u, b), dtype)
    _close(lxl.triangular_solve(u.T, b.T, left_side=False, lower=True), np.linalg.solve(u, b).T, dtype)
    a = (np.tril(_cplx((3, 3)), -1) * 0.1 + np.eye(3)) @ u
    _close(jnp.linalg.det(a.astype(dtype)), np.linalg.det(a.astype(np.complex128)), dtype)
    _close(jnp.linalg.inv(a.astype(dtype)), np.linalg.inv(a.astype(np.complex128)), dtype)


def test_complex_jnp_linalg(x64):
    z = _cplx((3, 3))
    b = _cplx((3, 2))
    h = z @ _H(z) + np.eye(3)
    for got, want in [(jnp.linalg.solve(z, b), np.linalg.solve(z, b)), (jnp.linalg.inv(z), np.linalg.inv(z)),
                      (jnp.linalg.det(z), np.linalg.det(z)), (jnp.linalg.slogdet(z)[0], np.linalg.slogdet(z)[0]),
                      (jnp.linalg.pinv(z), np.linalg.pinv(z)),
                      (jnp.linalg.lstsq(z, b)[0], np.linalg.lstsq(z, b, rcond=None)[0]),
                      (jnp.linalg.cholesky(h), np.linalg.cholesky(h)), (jnp.linalg.norm(z, 2), np.linalg.norm(z, 2)),
                      (jsl.cholesky(h), sl.cholesky(h)), (jsl.cho_solve(jsl.cho_factor(h), b), np.linalg.solve(h, b)),
                      (jsl.polar(z)[1], sl.polar(z)[1]), (jsl.expm(z), sl.expm(z))]:
        _close(got, want, np.complex128)


# ----------------------------------------------------------------------------------------------- eig

@pytest.mark.parametrize("dtype", [np.float32, np.float64] + CDTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (0, 3, 3), (1, 1)])
def test_eig(dtype, shape):
    _set_x64(dtype)
    a = (_cplx(shape) if np.dtype(dtype).kind == "c" else RNG.normal(size=shape)).astype(dtype)
    w, vl, vr = lxl.eig(a)
    cdt = np.complex64 if np.dtype(dtype) in (np.float32, np.complex64) else np.complex128
    assert w.dtype == vl.dtype == vr.dtype == cdt
    w, vl, vr = np.asarray(w), np.asarray(vl), np.asarray(vr)
    ref = np.linalg.eigvals(a.astype(np.complex128))
    _same_set(w, ref, dtype)
    _close(a @ vr, vr * w[..., None, :], dtype)
    _close(_H(vl) @ a, w[..., :, None] * _H(vl), dtype)
    _close(np.linalg.norm(vr, axis=-2), np.ones(shape[:-1]), dtype)
    _close(jnp.linalg.eigvals(a), w, dtype)


@pytest.mark.parametrize("dtype,n,seeds", [(np.float32, 4, (7,)), (np.float64, 4, (7,)), (np.float64, 8, (27,)),
                                            (np.complex64, 4, (10, 48)), (np.complex128, 4, (10, 48))])
def test_eig_former_failures(dtype, n, seeds):
    """Matrices whose eigenvectors (or eigenvalues) were wrong while faer's complex reciprocal ran under
    flush-to-zero: residuals of both eigenvector sets against the eigenvalues, and the eigenvalues against
    NumPy's."""
    _set_x64(dtype)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        a = rng.normal(size=(n, n)) + (1j * rng.normal(size=(n, n)) if np.dtype(dtype).kind == "c" else 0)
        a = a.astype(dtype)
        w, vl, vr = (np.asarray(x) for x in lxl.eig(a))
        _same_set(w, np.linalg.eigvals(a.astype(np.complex128)), dtype)
        _close(a @ vr, vr * w[None, :], dtype)
        _close(_H(vl) @ a, w[:, None] * _H(vl), dtype)


def test_eigvals_grad_and_vmap(x64):
    a = RNG.normal(size=(4, 4))
    f = lambda m: jnp.sum(jnp.real(jnp.linalg.eigvals(m)) ** 2)
    g = np.asarray(jax.grad(f)(a))
    eps = 1e-6
    fd = np.array([[(f(a + eps * e) - f(a - eps * e)) / (2 * eps) for e in row]
                   for row in np.eye(16).reshape(4, 4, 4, 4)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
    b = RNG.normal(size=(3, 4, 4))
    _same_set(jax.vmap(jnp.linalg.eigvals)(b), np.linalg.eigvals(b), np.float64)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        jax.jvp(lambda m: lxl.eig(m)[2], (a,), (a,))


# ----------------------------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_hessenberg_householder(dtype, batch):
    _set_x64(dtype)
    n = 5
    a = (_cplx(batch + (n, n)) if np.dtype(dtype).kind == "c" else RNG.normal(size=batch + (n, n))).astype(dtype)
    packed, taus = lxl.hessenberg(a)
    packed, taus = np.asarray(packed), np.asarray(taus)
    assert taus.shape == batch + (n - 1,)
    q = np.asarray(lxl.householder_product(packed[..., 1:, :-1], taus))
    Q = np.zeros(a.shape, a.dtype)
    Q[..., 0, 0] = 1
    Q[..., 1:, 1:] = q
    H = np.triu(packed, -1)
    _close(Q @ H @ _H(Q), a, dtype)
    H2, Q2 = jsl.hessenberg(a, calc_q=True)
    _close(np.asarray(Q2) @ np.asarray(H2) @ _H(np.asarray(Q2)), a, dtype)
    if not batch:
        _close(np.abs(np.asarray(H2)), np.abs(sl.hessenberg(a)), dtype)


def test_tridiagonal(x64):
    s = RNG.normal(size=(2, 5, 5))
    s = s + np.swapaxes(s, -1, -2)
    packed, d, e, taus = (np.asarray(x) for x in lxl.tridiagonal(s))
    for b in range(2):
        q = np.asarray(lxl.householder_product(packed[b, 1:, :-1], taus[b]))
        Q = np.eye(5)
        Q[1:, 1:] = q
        T = np.diag(d[b]) + np.diag(e[b], 1) + np.diag(e[b], -1)
        _close(Q @ T @ Q.T, s[b], np.float64)
    with pytest.raises(NotImplementedError):
        lxl.tridiagonal(s, lower=False)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_householder_product_ormqr(dtype, x64):
    a = _cplx((6, 4)) if np.dtype(dtype).kind == "c" else RNG.normal(size=(6, 4))
    h, taus = np.linalg.qr(a, mode="raw")
    h = h.T
    Qfull = np.linalg.qr(a, mode="complete")[0]
    _close(lxl.householder_product(h, taus), np.linalg.qr(a)[0], dtype)
    c = (_cplx((6, 3)) if np.dtype(dtype).kind == "c" else RNG.normal(size=(6, 3))).astype(dtype)
    _close(lxl.ormqr(h, taus, c), Qfull @ c, dtype)
    _close(lxl.ormqr(h, taus, c, transpose=True), _H(Qfull) @ c, dtype)
    _close(lxl.ormqr(h, taus, c.T, left=False), c.T @ Qfull, dtype)
    _close(lxl.ormqr(h, taus, c.T, left=False, transpose=True), c.T @ _H(Qfull), dtype)
    # batched through vmap; a zero tau is an identity reflector
    _close(jax.vmap(lxl.householder_product)(np.stack([h, h]), np.stack([taus, taus])),
           np.stack([np.linalg.qr(a)[0]] * 2), dtype)
    t0 = taus.copy()
    t0[-1] = 0
    ref = np.eye(6, dtype=dtype)[:, :4]
    for i in range(3, -1, -1):
        v = np.concatenate([np.zeros(i), [1], h[i + 1:, i]])
        ref = ref - t0[i] * np.outer(v, v.conj() @ ref)
    _close(lxl.householder_product(h, t0), ref, dtype)
    with pytest.raises(ValueError):
        lxl.householder_product(h.T, taus)


def test_tridiagonal_solve(x64):
    m = 7
    dl, d, du = RNG.normal(size=(3, m)), RNG.normal(size=(3, m)) + 6, RNG.normal(size=(3, m))
    b = RNG.normal(size=(3, m, 2))
    A = np.stack([np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1) for i in range(3)])
    x = lxl.tridiagonal_solve(dl, d, du, b)
    _close(x, np.linalg.solve(A, b), np.float64)
    _close(jax.jit(lxl.tridiagonal_solve)(dl, d, du, b), np.linalg.solve(A, b), np.float64)
    _close(jax.vmap(lxl.tridiagonal_solve, in_axes=(None, None, None, 0))(dl[0], d[0], du[0], b),
           np.linalg.solve(A[0], b), np.float64)
    # gradients through b (transpose rule) and through the diagonals (jvp) against finite differences
    f = lambda dl_, d_, du_, b_: jnp.sum(lxl.tridiagonal_solve(dl_, d_, du_, b_) ** 3)
    grads = jax.grad(f, argnums=(0, 1, 2, 3))(dl[0], d[0], du[0], b[0])
    args = [dl[0], d[0], du[0], b[0]]
    eps = 1e-6
    for k, g in enumerate(grads):
        e = np.zeros_like(args[k])
        e.flat[3] = 1
        up = list(args)
        dn = list(args)
        up[k] = args[k] + eps * e
        dn[k] = args[k] - eps * e
        np.testing.assert_allclose(np.asarray(g).flat[3], (f(*up) - f(*dn)) / (2 * eps), rtol=1e-5, atol=1e-8)
    with pytest.raises(ValueError):
        lxl.tridiagonal_solve(dl[0], d[0], du[0, :-1], b[0])


def test_cholesky_update_symmetric_product(x64):
    s = RNG.normal(size=(5, 5))
    a = s @ s.T + np.eye(5)
    r = np.linalg.cholesky(a).T
    w = RNG.normal(size=5)
    _close(lxl.cholesky_update(r, w), np.linalg.cholesky(a + np.outer(w, w)).T, np.float64)
    x = RNG.normal(size=(2, 5, 3))
    c = np.stack([a, a])
    _close(lxl.symmetric_product(x, c, alpha=2.0, beta=0.5), 2 * x @ np.swapaxes(x, -1, -2) + 0.5 * c, np.float64)
    out = np.asarray(lxl.symmetric_product(x[0], np.triu(a), symmetrize_output=True))
    _close(out, out.T, np.float64)


def test_rsf2csf(x64):
    a = RNG.normal(size=(5, 5))
    T, Z = jsl.schur(a)
    T2, Z2 = (np.asarray(x) for x in jsl.rsf2csf(T, Z))
    _close(Z2 @ T2 @ _H(Z2), a, np.float64)
    _close(np.tril(T2, -1), np.zeros((5, 5)), np.float64)
    _same_set(np.diag(T2), np.linalg.eigvals(a), np.float64)


@pytest.mark.parametrize("x", [RNG.normal(size=(6, 4)), _cplx((5, 5)), np.diag([1e-6, 1.0, 2.0])])
def test_qdwh(x, x64):
    u, h, k, converged = lxl.qdwh(x)
    u2, h2 = sl.polar(x)
    _close(u, u2, np.float64)
    _close(h, h2, np.float64)
    assert bool(converged) and 0 < int(k) <= 10
    assert lxl.EigImplementation.LAPACK.value == "lapack" and lxl.SvdAlgorithm.JACOBI.value == "Jacobi"


# ----------------------------------------------------------------------------------------------- jax.scipy.linalg

def test_qr_multiply(x64):
    a = RNG.normal(size=(5, 3))
    q = np.asarray(jnp.linalg.qr(a)[0])
    for mode, c in (("right", RNG.normal(size=(2, 5))), ("left", RNG.normal(size=(3, 2))),
                    ("right", RNG.normal(size=5)), ("left", RNG.normal(size=3))):
        out, r = jsl.qr_multiply(a, c, mode=mode)
        ref, r2 = sl.qr_multiply(a, c, mode=mode)
        # Q's column signs are free (LAPACK's here and SciPy's agree up to them): |R| and Q-consistency
        _close(np.abs(np.asarray(r)), np.abs(r2), np.float64)
        want = (c[None] if c.ndim == 1 else c) @ q if mode == "right" else q @ (c[:, None] if c.ndim == 1 else c)
        _close(np.asarray(out).reshape(want.shape), want, np.float64)
        assert np.asarray(out).shape == np.shape(ref)


def test_special_matrices(x64):
    for a in (np.array([1., -6, 11, -6, 2]), np.array([2., 3, -1, 5, 4, 7]), np.arange(1., 9), np.array([3., 1])):
        _close(jsl.fiedler_companion(a), sl.fiedler_companion(a), np.float64)
    _close(jsl.invhilbert(6), sl.invhilbert(6), np.float64)
    for kind in (None, "lower", "upper"):
        _close(jsl.pascal(6, kind), sl.pascal(6, kind or "symmetric"), np.float64)
        _close(jsl.invpascal(6, kind), sl.invpascal(6, kind or "symmetric"), np.float64)
    for scale in (None, "sqrtn", "n"):
        _close(jsl.dft(6, scale), sl.dft(6, scale), np.complex128)
    for mode in ("full", "same", "valid"):
        for a, n in ((np.array([-1., 4, -2]), 5), (np.arange(1., 6), 3)):
            _close(jsl.convolution_matrix(a, n, mode), sl.convolution_matrix(a, n, mode), np.float64)
            v = RNG.normal(size=n)
            _close(np.asarray(jsl.convolution_matrix(a, n, mode)) @ v, np.convolve(a, v, mode), np.float64)
    with pytest.raises(ValueError):
        jsl.convolution_matrix(np.ones(3), 0)


def test_jax_doc_values():
    # values JAX 0.10.2's docstrings print (float32 / complex64 / int32)
    out = jsl.convolution_matrix(jnp.array([-1, 4, -2]), 5, mode="same")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[4, -1, 0, 0, 0], [-2, 4, -1, 0, 0], [0, -2, 4, -1, 0], [0, 0, -2, 4, -1],
                                        [0, 0, 0, -2, 4]])
    w = jsl.eigh_tridiagonal(jnp.array([1., 2., 3., 4.]), jnp.array([1., 1., 1.]), eigvals_only=True)
    np.testing.assert_allclose(w, [0.2547188, 1.8227171, 3.1772828, 4.745281], rtol=2e-6)
    np.testing.assert_array_equal(jsl.pascal(3, kind="lower"), [[1., 0., 0.], [1., 1., 0.], [1., 2., 1.]])
    np.testing.assert_array_equal(jsl.pascal(5)[4], [1., 5., 15., 35., 70.])
    np.testing.assert_array_equal(jsl.invpascal(5)[1], [-10., 30., -35., 19., -4.])
    inv_lower = np.asarray(jsl.invpascal(4, kind="lower"))
    assert np.signbit(inv_lower[0, 1]) and not np.signbit(inv_lower[0, 2])   # JAX prints "-0." there
    d = jsl.dft(4)
    assert d.dtype == np.complex64
    np.testing.assert_allclose(d, [[1, 1, 1, 1], [1, -1j, -1, 1j], [1, -1, 1, -1], [1, 1j, -1, -1j]], atol=1e-6)
    X = jsl.solve_sylvester(jnp.array([[1, 2], [3, 4]]), jnp.array([[5, 6], [7, 8]]), jnp.array([[6, 8], [10, 12]]))
    np.testing.assert_allclose(X, [[1., 0.], [0., 1.]], atol=1e-5)
    F = jsl.funm(jnp.array([[1., 2.], [3., 4.]]), lambda x: jnp.sin(x) + 2 * jnp.cos(x))
    assert F.dtype == np.complex64
    np.testing.assert_allclose(F, [[1.2452652, -0.3701772], [-0.55526584, 0.6899995]], atol=1e-5)
    S = jsl.sqrtm(jnp.array([[1., 2., 3.], [2., 4., 2.], [3., 2., 1.]]))
    np.testing.assert_allclose(S, [[0.92387986 + 0.70710754j, 0.54119635, 0.9238795 - 0.70710737j],
                                   [0.54119647, 1.8477597, 0.5411962],
                                   [0.92388 - 0.70710754j, 0.5411966, 0.9238796 + 0.70710737j]], atol=2e-5)
    T, Z = jsl.schur(jnp.array([[1., 2.], [3., 4.]]))
    np.testing.assert_allclose(np.sort(np.diag(np.asarray(T))), [-0.37228107, 5.3722816], rtol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match=r"shape \[..., n, n\]"):
        lxl.eig(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        lxl.eig(np.eye(2, dtype=np.int32))
    with pytest.raises(NotImplementedError):
        jsl.eigh_tridiagonal(np.ones(3, np.float32), np.ones(2, np.float32))
    with pytest.raises(NotImplementedError):
        jsl.sqrtm(np.eye(2, dtype=np.float32), blocksize=2)
    with pytest.raises(ValueError, match="output"):
        jsl.schur(np.eye(2, dtype=np.float32), output="bad")
    with pytest.raises(TypeError, match="one dtype"):
        lxl.ormqr(np.eye(3, dtype=np.float32), np.ones(2, np.float32), np.eye(3, dtype=np.int32))


def test_norms_of_complex_arrays_are_real():
    # JAX's norms use real(x * conj(x)): a float result equal to NumPy's (optax's muon normalizes complex
    # updates by it).
    import cranax.numpy as jnp
    x = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], np.complex64)
    for kw in ({}, {"axis": 0}, {"axis": (0, 1)}, {"ord": "fro"}, {"ord": 2, "axis": 1}):
        got = jnp.linalg.norm(x, **kw)
        assert got.dtype == np.float32, kw
        np.testing.assert_allclose(np.asarray(got), np.linalg.norm(x, **kw), rtol=1e-6)
    got = jnp.linalg.vector_norm(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.linalg.norm(x), rtol=1e-6)


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("n", [1, 7, 70, 300])
def test_complex_cholesky_diagonal_is_real(dtype, n):
    """LAPACK's potrf stores a real diagonal (the imaginary part exactly 0): the complex updates leave a few
    ulp of imaginary part on the diagonal, which potrf drops before its square root and faer kept."""
    _set_x64(dtype)
    z = _cplx((2, n, n), np.complex128)
    h = (z @ _H(z) + n * np.eye(n)).astype(dtype)
    for f in (lxl.cholesky, jnp.linalg.cholesky, jax.jit(lambda m: jsl.cholesky(m, lower=True))):
        lo = np.asarray(f(h))
        d = np.diagonal(lo, axis1=-2, axis2=-1)
        assert lo.dtype == np.dtype(dtype)
        assert np.all(d.imag == 0) and np.all(d.real > 0), np.abs(d.imag).max()
        want = np.linalg.cholesky(h.astype(np.complex128))
        np.testing.assert_allclose(lo, want, rtol=_tol(dtype) * 10, atol=_tol(dtype) * np.sqrt(n) * 10)
    # upper: the conjugate transpose, also with a real diagonal (SciPy's convention)
    up = np.asarray(jsl.cholesky(h, lower=False))
    assert np.all(np.diagonal(up, axis1=-2, axis2=-1).imag == 0)
    want = np.stack([sl.cholesky(m.astype(np.complex128), lower=False) for m in h])
    np.testing.assert_allclose(up, want, rtol=_tol(dtype) * 10, atol=_tol(dtype) * np.sqrt(n) * 10)
