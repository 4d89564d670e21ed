"""``cranax.lax.linalg``: dense linear algebra primitives and their wrappers, a face over
``cranax.primitives.linalg``, plus ``qdwh`` (a polar decomposition composed of lax operations) and the
algorithm enums. Mirrors ``jax.lax.linalg``."""
import enum

import numpy as np

from ..primitives.linalg import (cholesky, cholesky_p, cholesky_update, cholesky_update_p, eig, eig_p, eigh, eigh_p,
    hessenberg, hessenberg_p, householder_product, householder_product_p, lu, lu_p, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, ormqr, ormqr_p, qr, qr_p, schur, schur_p, svd, svd_p, symmetric_product,
    symmetric_product_p, triangular_solve, triangular_solve_p, tridiagonal, tridiagonal_p, tridiagonal_solve,
    tridiagonal_solve_p)

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p", "cholesky_update",
           "cholesky_update_p", "eig", "eig_p", "eigh", "eigh_p", "hessenberg", "hessenberg_p",
           "householder_product", "householder_product_p", "lu", "lu_p", "lu_pivots_to_permutation",
           "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qdwh", "qr", "qr_p", "schur", "schur_p", "svd",
           "svd_p", "symmetric_product", "symmetric_product_p", "triangular_solve", "triangular_solve_p",
           "tridiagonal", "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p"]


class EigImplementation(enum.Enum):
    """The back end of ``eig`` (accepted and ignored: cranax runs faer). Mirrors
    ``jax.lax.linalg.EigImplementation``."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """The algorithm of ``eigh`` (accepted and ignored: cranax runs faer's). Mirrors
    ``jax.lax.linalg.EighImplementation``."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """The algorithm of ``svd`` (accepted and ignored: cranax runs faer's). Mirrors
    ``jax.lax.linalg.SvdAlgorithm``."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """The polar decomposition ``x = u @ h`` of the full-rank ``x[m, n]`` (``m >= n``) by the QR-based
    dynamically weighted Halley iteration (Nakatsukasa, Bai and Gygi): ``(u, h, num_iters, is_converged)``
    with ``u`` having orthonormal columns, ``h`` Hermitian positive semidefinite, the iteration count (int32)
    and whether ``|u_k - u_{k-1}| < |u_k| (4 eps)^(1/3)`` held within ``max_iterations`` (default 10).
    ``dynamic_shape`` other than None raises NotImplementedError. Mirrors ``jax.lax.linalg.qdwh``."""
    from .. import lax  # (at call time: the module imports below it)
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh with dynamic_shape is not implemented in cranax")
    x = x if hasattr(x, "dtype") else np.asarray(x, np.float32)
    if not np.issubdtype(x.dtype, np.inexact):   # integers compute in float32, as jnp.linalg's inputs
        x = lax.convert_element_type(x, np.float32)
    if x.ndim != 2:
        raise ValueError(f"qdwh requires a matrix, got shape {x.shape}")
    m, n = x.shape
    if m < n:
        raise ValueError(f"qdwh requires m >= n, got shape {x.shape}")
    dt = x.dtype
    rdt = np.dtype(np.float32) if dt in (np.float32, np.complex64) else np.dtype(np.float64)
    eps = float(np.finfo(rdt).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    abs_ = lax.abs(x)
    # ||x||_2 <= sqrt(||x||_1 ||x||_inf): the start has singular values in (0, 1]
    alpha = lax.sqrt(lax.reduce_max(abs_.sum(0), (0,)) * lax.reduce_max(abs_.sum(1), (0,)))
    alpha = lax.select(alpha > 0, alpha, lax.full((), 1, rdt))
    u0 = x / alpha.astype(dt)
    tol_l = 10.0 * eps / 2.0
    tol_u = (4.0 * eps) ** (1.0 / 3.0)
    eye = lax.convert_element_type(lax.broadcasted_iota(np.int32, (n, n), 0) == lax.broadcasted_iota(
        np.int32, (n, n), 1), dt)

    def weights(l):
        l2 = l * l
        d = (4.0 * (1.0 - l2) / (l2 * l2)) ** (1.0 / 3.0)
        f = 8.0 * (2.0 - l2) / (l2 * lax.sqrt(1.0 + d))
        a = lax.sqrt(1.0 + d) + 0.5 * lax.sqrt(8.0 - 4.0 * d + f)
        b = (a - 1.0) ** 2 / 4.0
        return a, b, a + b - 1.0

    def body(state):
        k, u, l, _ = state
        a, b, c = weights(l)
        sc = lax.sqrt(c)
        q, _ = qr(lax.concatenate([u * sc.astype(dt), eye], 0), full_matrices=False)
        q1, q2 = q[:m], q[m:]
        q2h = lax.conj(q2.T) if dt.kind == "c" else q2.T
        u_new = u * (b / c).astype(dt) + (q1 @ q2h) * ((a - b / c) / sc).astype(dt)
        l_new = lax.min(l * (a + b * l * l) / (1.0 + c * l * l), lax.full((), 1, rdt))
        diff = _fro(u_new - u)
        done = (diff < tol_u * _fro(u_new)) & (lax.abs(1.0 - l_new) < tol_l)
        return k + 1, u_new, l_new, done

    def cond(state):
        k, _, _, done = state
        return (k < max_iterations) & ~done

    init = (lax.full((), 0, np.int32), u0, lax.full((), eps, rdt), lax.full((), False, np.bool_))
    if dt.kind != "c":
        k, u, _, done = lax.while_loop(cond, body, init)
    else:
        # complex loop carries are not lowered yet: the iterations unrolled, each kept only while running
        state = init
        for _ in range(max_iterations):
            run = cond(state)
            new = body(state)
            state = tuple(lax.select(run, a, b) if a.ndim == 0 else
                          lax.select(lax.broadcast(run, a.shape), a, b) for a, b in zip(new, state))
        k, u, _, done = state
    uh = lax.conj(u.T) if dt.kind == "c" else u.T
    h = uh @ x
    h = (h + (lax.conj(h.T) if dt.kind == "c" else h.T)) / lax.full((), 2, dt)
    return u, h, k, done


def _fro(a):
    from .. import lax  # (at call time: the module imports below it)
    r = lax.abs(a)
    return lax.sqrt((r * r).sum())
