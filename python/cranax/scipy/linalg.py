"""``cranax.scipy.linalg``: SciPy's dense linear algebra on the ``lax.linalg`` primitives. Mirrors
``jax.scipy.linalg`` (operands promoted to an inexact dtype; leading axes are a batch where JAX allows it).
"""
import numpy as _np

from .. import dtypes as _dtypes
from .. import numpy as _jnp
from ..core import get_aval as _get_aval
from ..numpy import linalg as _nl
from ..primitives import linalg as _pl

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "det", "eigh", "expm",
           "fiedler", "hadamard", "hankel", "helmert", "hilbert", "inv", "leslie", "lu", "lu_factor", "lu_solve",
           "polar", "qr", "solve", "solve_triangular", "svd", "toeplitz"]


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of ``a``: upper ``U`` (``a = U.T @ U``) by default, lower when ``lower``. NaNs when
    not positive definite. Mirrors ``jax.scipy.linalg.cholesky``."""
    (a,) = _nl._inexact("cholesky", a)
    L = _pl.cholesky(a)
    return L if lower else _nl._mH(L)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for ``cho_solve``: the Cholesky factor in the ``lower`` (or upper) triangle. Mirrors
    ``jax.scipy.linalg.cho_factor`` (the other triangle is zero here; SciPy leaves it unspecified)."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves ``a @ x = b`` from ``cho_factor(a)``; ``b[..., n]`` or ``[..., n, k]``. Mirrors
    ``jax.scipy.linalg.cho_solve``."""
    c, lower = c_and_lower
    c, b = _nl._inexact("cho_solve", c, b)
    vec = _get_aval(b).ndim == _get_aval(c).ndim - 1
    if vec:
        b = b[..., None]
    L = c if lower else _nl._mH(c)
    y = _pl.triangular_solve(L, b, left_side=True, lower=True)
    x = _pl.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
    return x[..., 0] if vec else x


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)``: LAPACK's packed LU factors and 0-based row interchanges (int32). Mirrors
    ``jax.scipy.linalg.lu_factor``."""
    (a,) = _nl._inexact("lu_factor", a)
    lu_, piv, _ = _pl.lu(a)
    return lu_, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves ``a @ x = b`` (``trans=0``) or ``a.T @ x = b`` (1 or 2) from ``lu_factor(a)``. Mirrors
    ``jax.scipy.linalg.lu_solve``."""
    lu_, piv = lu_and_piv
    lu_, b = _nl._inexact("lu_solve", lu_, b)
    n = _get_aval(lu_).shape[-1]
    perm = _pl.lu_pivots_to_permutation(piv, n)
    vec = _get_aval(b).ndim == 1
    if vec:
        b = b[:, None]
    if trans == 0:
        x = _nl._lu_solve(lu_, perm, b)
    elif trans in (1, 2):
        # a = P^T L U: a^T x = b is U^T L^T (P x) = b
        y = _pl.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
        y = _pl.triangular_solve(lu_, y, left_side=True, lower=True, unit_diagonal=True, transpose_a=True)
        inv_perm = _jnp.argsort(perm, axis=-1).astype(_np.int32)
        x = _pl._permute_rows(y, inv_perm)
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return x[:, 0] if vec else x


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (or ``(p @ l, u)`` when ``permute_l``). Mirrors
    ``jax.scipy.linalg.lu``."""
    (a,) = _nl._inexact("lu", a)
    av = _get_aval(a)
    m, n = av.shape[-2:]
    k = min(m, n)
    lu_, _, perm = _pl.lu(a)
    eye_m = _jnp.eye(m, dtype=av.dtype)
    l = _pl._tril(lu_, -1)[..., :, :k] + eye_m[:, :k]
    u = _pl._triu(lu_)[..., :k, :]
    p = _jnp.matrix_transpose(eye_m[perm]) if av.ndim == 2 else _jnp.swapaxes(_jnp.take(eye_m, perm, axis=0), -1, -2)
    if permute_l:
        return _jnp.matmul(p, l), u
    return p, l, u


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """Solves ``op(a) @ x = b`` for triangular ``a``; ``trans`` 0/'N', 1/'T', 2/'C'. Mirrors
    ``jax.scipy.linalg.solve_triangular``."""
    a, b = _nl._inexact("solve_triangular", a, b)
    t = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}
    if trans not in t:
        raise ValueError(f"Invalid 'trans' value {trans}")
    vec = _get_aval(b).ndim == _get_aval(a).ndim - 1
    if vec:
        b = b[..., None]
    x = _pl.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=t[trans],
                             unit_diagonal=unit_diagonal)
    return x[..., 0] if vec else x


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True,
          assume_a="gen"):
    """Solves ``a @ x = b``: LU for ``assume_a='gen'``, Cholesky for 'pos'; 'sym'/'her' use LU. Mirrors
    ``jax.scipy.linalg.solve``."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of {{'gen', 'sym', 'her', 'pos'}}, got {assume_a}.")
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    return _nl.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of square ``a``. Mirrors ``jax.scipy.linalg.inv``."""
    return _nl.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of square ``a``. Mirrors ``jax.scipy.linalg.det``."""
    return _nl.det(a)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(q, r)`` for ``mode`` 'full' or 'economic', ``r`` alone for 'r'. Mirrors ``jax.scipy.linalg.qr``."""
    if pivoting:
        raise NotImplementedError("qr with pivoting=True is not implemented in cranax")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _nl._inexact("qr", a)
    q, r = _pl.qr(a, full_matrices=mode == "full")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """``(u, s, vh)``, or ``s`` when ``compute_uv=False``. Mirrors ``jax.scipy.linalg.svd``."""
    out = _nl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True,
         eigvals=None, type=1, check_finite=True):
    """``(w, v)`` (or ``w`` when ``eigvals_only``) of symmetric ``a``; ``b`` (generalized) raises
    NotImplementedError. Mirrors ``jax.scipy.linalg.eigh``."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _nl._inexact("eigh", a)
    v, w = _pl.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def block_diag(*arrs):
    """The block diagonal matrix of the given (rank <= 2) arrays. Mirrors ``jax.scipy.linalg.block_diag``."""
    if not arrs:
        return _jnp.zeros((1, 0))
    arrs = [_jnp.atleast_2d(_jnp.asarray(x)) for x in arrs]
    dt = _jnp.result_type(*arrs)
    rows = sum(_get_aval(x).shape[0] for x in arrs)
    cols = sum(_get_aval(x).shape[1] for x in arrs)
    out, r0, c0 = [], 0, 0
    for x in arrs:
        r, c = _get_aval(x).shape
        out.append(_jnp.pad(x.astype(dt), ((r0, rows - r0 - r), (c0, cols - c0 - c))))
        r0, c0 = r0 + r, c0 + c
    res = out[0]
    for x in out[1:]:
        res = res + x
    return res


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r = c`` when None; ``r[0]`` is
    ignored). Mirrors ``jax.scipy.linalg.toeplitz`` for 1-d ``c``/``r``."""
    c = _jnp.ravel(_jnp.asarray(c))
    r = c if r is None else _jnp.ravel(_jnp.asarray(r))
    n, m = _get_aval(c).shape[0], _get_aval(r).shape[0]
    dt = _jnp.result_type(c, r)
    vals = _jnp.concatenate([c[::-1].astype(dt), r[1:].astype(dt)])   # vals[n - 1 + j - i] = a[i, j]
    idx = (n - 1) + _np.arange(m)[None, :] - _np.arange(n)[:, None]
    return vals[idx]


# Padé approximants of degree 3, 5, 7, 9, 13 and the 1-norm bounds below which each is accurate in
# float64 (Higham 2005, "The scaling and squaring method for the matrix exponential revisited").
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0,
        90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
         1.0),
}
_THETA64 = ((3, 1.495585217958292e-002), (5, 2.539398330063230e-001), (7, 9.504178996162932e-001),
            (9, 2.097847961257068e+000))
_THETA13_64 = 5.371920351148152
_THETA32 = ((3, 4.258730016922831e-001), (5, 1.880152677804762e+000))
_THETA7_32 = 3.925724783138660


def _pade_uv(A, deg):
    b = _PADE[deg]
    av = _get_aval(A)
    I = _jnp.broadcast_to(_jnp.eye(av.shape[-1], dtype=av.dtype), av.shape)
    A2 = _jnp.matmul(A, A)
    if deg == 13:
        A4 = _jnp.matmul(A2, A2)
        A6 = _jnp.matmul(A4, A2)
        U = _jnp.matmul(A, _jnp.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4
                       + b[3] * A2 + b[1] * I)
        V = _jnp.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * I
        return U, V
    powers = [I, A2]
    while len(powers) <= deg // 2:
        powers.append(_jnp.matmul(powers[-1], A2))
    U = sum(b[2 * i + 1] * powers[i] for i in range(deg // 2 + 1))
    V = sum(b[2 * i] * powers[i] for i in range(deg // 2 + 1))
    return _jnp.matmul(A, U), V


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential by Padé approximation with scaling and squaring (Higham 2005): the degree is
    the lowest whose 1-norm bound holds for every matrix of the batch, else degree 13 (float64) / 7
    (float32) after scaling by ``2^-s``, then ``s`` squarings; NaNs when more than ``max_squarings`` would
    be needed. Differentiable (through matmul and solve). Mirrors ``jax.scipy.linalg.expm``."""
    (A,) = _nl._inexact("expm", A)
    av = _get_aval(A)
    if av.ndim < 2 or av.shape[-1] != av.shape[-2]:
        raise ValueError(f"expected A to be a square matrix (or a stack of them), got shape {av.shape}")
    n = av.shape[-1]
    if n == 0:
        return A
    f64 = av.dtype == _np.float64
    thetas, top_deg, top_theta = (_THETA64, 13, _THETA13_64) if f64 else (_THETA32, 7, _THETA7_32)
    norm1 = _jnp.max(_jnp.sum(_jnp.abs(A), axis=-2), axis=-1)     # 1-norm of each matrix
    # squarings needed with the top degree (0 when the norm is within its bound), per matrix
    s = _jnp.maximum(0, _jnp.ceil(_jnp.log2(_jnp.maximum(norm1, 1e-300 if f64 else 1e-30) / top_theta)))
    s = _jnp.where(norm1 > top_theta, s, 0).astype(av.dtype)
    scale = _jnp.power(_jnp.asarray(2.0, av.dtype), -s)[..., None, None]
    U, V = _pade_uv(A * scale, top_deg)
    R = _nl.solve(V - U, V + U)
    # squarings, selected per matrix: R is squared while i < s
    for i in range(max_squarings):
        R = _jnp.where((s > i)[..., None, None], _jnp.matmul(R, R), R)
    R = _jnp.where((s > max_squarings)[..., None, None], _np.nan, R)
    # smaller degrees where the norm allows (cheaper; more accurate for small matrices)
    for deg, theta in reversed(thetas):
        Ud, Vd = _pade_uv(A, deg)
        R = _jnp.where((norm1 <= theta)[..., None, None], _nl.solve(Vd - Ud, Vd + Ud), R)
    return R


# ----------------------------------------------------------------------------------------------- special matrices

def hilbert(n):
    """The ``n×n`` Hilbert matrix ``1 / (i + j + 1)`` (default float dtype). Mirrors
    ``jax.scipy.linalg.hilbert``."""
    i = _jnp.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (zeros when None; ``r[0]`` is ignored).
    Mirrors ``jax.scipy.linalg.hankel`` for 1-d ``c``/``r``."""
    c = _jnp.ravel(_jnp.asarray(c))
    r = _jnp.zeros_like(c) if r is None else _jnp.ravel(_jnp.asarray(r))
    n, m = _get_aval(c).shape[0], _get_aval(r).shape[0]
    dt = _jnp.result_type(c, r)
    vals = _jnp.concatenate([c.astype(dt), r[1:].astype(dt)])     # a[i, j] = vals[i + j]
    return vals[_np.arange(n)[:, None] + _np.arange(m)[None, :]]


def circulant(c):
    """The circulant matrix with first column ``c``: ``a[i, j] = c[(i - j) % n]``. Mirrors
    ``jax.scipy.linalg.circulant`` for 1-d ``c``."""
    c = _jnp.ravel(_jnp.asarray(c))
    n = _get_aval(c).shape[0]
    return c[(_np.arange(n)[:, None] - _np.arange(n)[None, :]) % max(n, 1)]


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree first). Raises
    ValueError for fewer than two coefficients. Mirrors ``jax.scipy.linalg.companion`` for 1-d ``a``."""
    (a,) = _nl._inexact("companion", a)
    n = _get_aval(a).shape[-1]
    if n < 2:
        raise ValueError("The length of `a` must be at least 2.")
    first = -a[1:] / a[0]
    sub = _jnp.eye(n - 2, n - 1, dtype=_get_aval(a).dtype) if n > 2 else _jnp.zeros((0, n - 1), _get_aval(a).dtype)
    return _jnp.concatenate([first[None, :], sub], 0)


def hadamard(n, dtype=int):
    """The Sylvester Hadamard matrix of order ``n`` (a power of two; ValueError otherwise). Mirrors
    ``jax.scipy.linalg.hadamard``."""
    n = int(n)
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive a power of 2 integer")
    h = _np.ones((1, 1))
    while h.shape[0] < n:
        h = _np.block([[h, h], [h, -h]])
    return _jnp.asarray(h, dtype=dtype)


def fiedler(a):
    """The symmetric Fiedler matrix ``|a[i] - a[j]|``. Mirrors ``jax.scipy.linalg.fiedler`` for 1-d ``a``."""
    a = _jnp.ravel(_jnp.asarray(a))
    return _jnp.abs(a[:, None] - a[None, :])


def helmert(n, full=False):
    """The Helmert matrix of order ``n`` (its first row dropped unless ``full``). Mirrors
    ``jax.scipy.linalg.helmert``."""
    n = int(n)
    h = _np.tril(_np.ones((n, n)), -1) - _np.diag(_np.arange(n))
    d = _np.arange(n) * _np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    out = _jnp.asarray(h / _np.sqrt(d)[:, None], dtype=_dtypes.canonicalize_dtype(_np.float64))
    return out if full else out[1:]


def leslie(f, s):
    """The Leslie matrix of fecundities ``f[n]`` and survival rates ``s[n - 1]``. Mirrors
    ``jax.scipy.linalg.leslie``."""
    f, s = _nl._inexact("leslie", f, s)
    n = _get_aval(f).shape[-1]
    if _get_aval(s).shape[-1] != n - 1:
        raise ValueError(f"Incorrect shape for s. s.shape[-1] must be f.shape[-1] - 1, got {_get_aval(s).shape}")
    sub = _jnp.concatenate([_jnp.diag(s), _jnp.zeros((n - 1, 1), _get_aval(f).dtype)], 1) if n > 1 else \
        _jnp.zeros((0, n), _get_aval(f).dtype)
    return _jnp.concatenate([f[None, :], sub], 0)


def polar(a, side="right", *, method="svd", eps=None, max_iterations=None):
    """The polar decomposition ``a = u @ p`` (``side='right'``) or ``p @ u`` (``'left'``) with ``u`` having
    orthonormal columns and ``p`` symmetric positive semi-definite, from the SVD (``method='qdwh'``, JAX's
    default, gives the same factors; it is computed by the SVD here). Mirrors ``jax.scipy.linalg.polar``."""
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not 'right' or 'left'")
    if method not in ("svd", "qdwh"):
        raise ValueError(f"Unknown polar decomposition method {method!r}.")
    (a,) = _nl._inexact("polar", a)
    u_svd, s, vh = _nl.svd(a, full_matrices=False)
    u = _jnp.matmul(u_svd, vh)
    if side == "right":
        p = _jnp.matmul(_nl._mH(vh) * s[..., None, :], vh)
    else:
        p = _jnp.matmul(u_svd * s[..., None, :], _nl._mH(u_svd))
    return u, p


# ----------------------------------------------------------------------------------------------- decompositions
# built on lax.linalg's schur / hessenberg / householder_product

def schur(a, output="real"):
    """``(T, Z)`` with ``a = Z T Z^H``: the real Schur form (quasi-triangular ``T``, 2x2 blocks for complex
    conjugate pairs) of real ``a`` for ``output='real'``, the complex (triangular) one for ``'complex'``.
    See ``lax.linalg.schur`` for how it is computed (accurate for diagonalizable ``a``). Mirrors
    ``jax.scipy.linalg.schur``."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected output='real' or 'complex', got output={output!r}")
    (a,) = _nl._inexact("schur", a)
    if output == "complex" and not _jnp.iscomplexobj(a):
        a = a.astype(_jnp.result_type(a.dtype, _np.complex64))
    return _pl.schur(a)


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form ``(T', Z')`` of a real Schur form ``(T, Z)``: each 2x2 block on ``T``'s
    diagonal is split by a unitary rotation, so ``Z T Z^H == Z' T' Z'^H`` and ``T'`` is triangular. Mirrors
    ``jax.scipy.linalg.rsf2csf``."""
    T, Z = _nl._inexact("rsf2csf", T, Z)
    if T.ndim != 2 or T.shape[0] != T.shape[1] or Z.shape != T.shape:
        raise ValueError(f"Input must be square matrices of one shape, got {T.shape} and {Z.shape}")
    cdt = _jnp.result_type(T.dtype, _np.complex64)
    T, Z = T.astype(cdt), Z.astype(cdt)
    n = T.shape[0]
    eps = _np.finfo(_jnp.real(T).dtype).eps
    idx = _np.arange(n)
    for m in range(n - 1, 0, -1):
        sub = T[m, m - 1]
        block = T[m - 1:m + 1, m - 1:m + 1]
        split = _jnp.abs(sub) > eps * (_jnp.abs(T[m - 1, m - 1]) + _jnp.abs(T[m, m]))
        # the eigenvalue of the block nearer T[m, m]'s rotation: mu - T[m, m] and sub give the rotation
        tr, dt = block[0, 0] + block[1, 1], block[0, 0] * block[1, 1] - block[0, 1] * block[1, 0]
        mu = tr / 2 + _jnp.sqrt(tr * tr / 4 - dt)
        x, y = mu - T[m, m], sub
        r = _jnp.sqrt(_jnp.abs(x) ** 2 + _jnp.abs(y) ** 2)
        r = _jnp.where(split & (r > 0), r, 1.0)
        c, s = _jnp.where(split, x / r, 1.0), _jnp.where(split, y / r, 0.0)
        # G acts on rows/cols m-1, m: [[conj(c), s], [-s, c]]
        G = _jnp.eye(n, dtype=cdt)
        G = G.at[m - 1, m - 1].set(_jnp.conj(c)).at[m - 1, m].set(s).at[m, m - 1].set(-s).at[m, m].set(c)
        Gh = _jnp.conj(G.T)
        T = G @ T @ Gh
        Z = Z @ Gh
        T = T.at[m, m - 1].set(_jnp.where(split, 0, T[m, m - 1]))
    return _jnp.where(idx[:, None] > idx[None, :], 0, T), Z


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form ``H`` of square ``a`` (``a = Q H Q^H``), and ``Q`` when ``calc_q``. Mirrors
    ``jax.scipy.linalg.hessenberg``."""
    (a,) = _nl._inexact("hessenberg", a)
    n = a.shape[-1]
    if a.ndim < 2 or a.shape[-2] != n:
        raise ValueError(f"hessenberg expects a square matrix, got shape {a.shape}")
    packed, taus = _pl.hessenberg(a)
    H = _jnp.triu(packed, -1)
    if not calc_q:
        return H
    if n <= 1:
        return H, _jnp.broadcast_to(_jnp.eye(n, dtype=a.dtype), a.shape)
    q = _pl.householder_product(packed[..., 1:, :-1], taus)
    Q = _jnp.zeros(a.shape, a.dtype).at[..., 0, 0].set(1).at[..., 1:, 1:].set(q)
    return H, Q


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """``(Q @ c, R)`` (``mode='left'``, ``c[..., K, P]``) or ``(c @ Q, R)`` (``'right'``, ``c[..., P, M]``)
    with the economic QR ``a = Q R`` (``K = min(M, N)``); ``conjugate`` uses ``conj(Q)``; a 1-D ``c`` is a
    column (left) or row (right) and the result is raveled. ``pivoting=True`` raises NotImplementedError.
    Mirrors ``jax.scipy.linalg.qr_multiply``."""
    if pivoting:
        raise NotImplementedError("qr_multiply with pivoting=True is not implemented in cranax")
    if mode not in ("left", "right"):
        raise ValueError(f"mode must be 'left' or 'right', got {mode!r}")
    a, c = _nl._inexact("qr_multiply", a, c)
    q, r = _pl.qr(a, full_matrices=False)
    if conjugate:
        q = _jnp.conj(q)
    vec = c.ndim == 1
    if mode == "left":
        out = q @ (c[:, None] if vec else c)
    else:
        out = (c[None, :] if vec else c) @ q
    return (out.ravel() if vec else out), r


# ----------------------------------------------------------------------------------------------- matrix functions

def _upper_recurrence(T, step):
    """Fills an upper triangular ``F`` diagonal by diagonal: ``step(F, d)`` gives superdiagonal ``d``
    from the diagonals below it (a Parlett-type recurrence on a triangular Schur factor)."""
    n = T.shape[-1]
    F = step(None, 0)
    for d in range(1, n):
        F = F + _jnp.diag(step(F, d), d)
    return F


def sqrtm(A, blocksize=1):
    """The principal matrix square root ``X`` (``X @ X == A``) of square ``A[N, N]``: the triangular square
    root of its complex Schur factor (Björck and Hammarling). Complex result (complex64 for float32 input).
    ``blocksize`` other than 1 raises NotImplementedError. Mirrors ``jax.scipy.linalg.sqrtm``."""
    if blocksize != 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    (A,) = _nl._inexact("sqrtm", A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"sqrtm expects a square matrix, got shape {A.shape}")
    T, Z = schur(A, output="complex")
    root = _jnp.sqrt(_jnp.diagonal(T))

    def step(R, d):
        if R is None:
            return _jnp.diag(root)
        # R[i, i+d] = (T[i, i+d] - sum_k R[i, k] R[k, i+d]) / (R[i, i] + R[i+d, i+d]); the sum is (R @ R)'s
        # superdiagonal d while R's is still zero
        s = _jnp.diagonal(R @ R, d)
        den = root[:-d] + root[d:]
        return (_jnp.diagonal(T, d) - s) / den

    R = _upper_recurrence(T, step)
    return Z @ R @ _jnp.conj(Z.T)


def funm(A, func, disp=True):
    """``func`` applied to square ``A[N, N]`` as a matrix function: Parlett's recurrence on its complex
    Schur factor (needs distinct eigenvalues; repeated ones give NaNs). Complex result; with ``disp=False``
    also an error estimate (the relative commutator ``|F A - A F|_1 / |F|_1``). Mirrors
    ``jax.scipy.linalg.funm``."""
    (A,) = _nl._inexact("funm", A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"funm expects a square matrix, got shape {A.shape}")
    T, Z = schur(A, output="complex")
    tdiag = _jnp.diagonal(T)
    fdiag = _jnp.asarray(func(tdiag)).astype(T.dtype)

    def step(F, d):
        if F is None:
            return _jnp.diag(fdiag)
        # F T = T F at (i, j): F[i, j] (T[j, j] - T[i, i]) = (T F - F T)[i, j] evaluated while F[i, j] is still
        # zero (that sum then holds exactly the other terms: T[i, j] (F[j, j] - F[i, i]) and the inner ones)
        S = _jnp.diagonal(T @ F - F @ T, d)
        return S / (tdiag[d:] - tdiag[:-d])

    F = Z @ _upper_recurrence(T, step) @ _jnp.conj(Z.T)
    if disp:
        return F
    Ac = A.astype(F.dtype)
    err = _jnp.linalg.norm(F @ Ac - Ac @ F, 1) / _jnp.maximum(_jnp.linalg.norm(F, 1), _np.finfo(_jnp.real(F).dtype).tiny)
    return F, err


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """The solution ``X[..., m, n]`` of ``A X + X B = C`` (``A[..., m, m]``, ``B[..., n, n]``, batch dims
    broadcast). ``method='schur'`` (Bartels-Stewart on the complex Schur factors, column by column) or
    ``'eigen'`` (through the eigendecompositions); NaNs when an eigenvalue sum of ``A`` and ``B`` is within
    ``tol`` of zero (no unique solution). Real inputs give real results. Mirrors
    ``jax.scipy.linalg.solve_sylvester``."""
    if method not in ("schur", "eigen"):
        raise ValueError(f"Unknown method {method!r}; expected 'schur' or 'eigen'")
    A, B, C = _nl._inexact("solve_sylvester", A, B, C)
    real = not _jnp.iscomplexobj(A)
    cdt = _jnp.result_type(A.dtype, _np.complex64)
    batch = _np.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2])
    m, n = A.shape[-1], B.shape[-1]
    A = _jnp.broadcast_to(A, batch + (m, m)).astype(cdt)
    B = _jnp.broadcast_to(B, batch + (n, n)).astype(cdt)
    C = _jnp.broadcast_to(C, batch + (m, n)).astype(cdt)
    H = lambda x: _jnp.conj(_jnp.swapaxes(x, -1, -2))
    if method == "eigen":
        wa, va = _jnp.linalg.eig(A)
        wb, vb = _jnp.linalg.eig(B)
        F = _jnp.linalg.solve(va, C @ vb)
        den = wa[..., :, None] + wb[..., None, :]
        Y = F / den
        X = va @ Y @ _jnp.linalg.inv(vb)
    else:
        # A = Q R Q^H, B = U S U^H: R Y + Y S = F with F = Q^H C U, triangular R and S; column j of Y solves
        # (R + S[j, j]) y_j = f_j - Y[:, :j] S[:j, j]
        R, Q = _pl.schur(A)
        S, U = _pl.schur(B)
        F = H(Q) @ C @ U
        eye = _jnp.eye(m, dtype=cdt)
        cols = []
        for j in range(n):
            rhs = F[..., :, j]
            if j:
                rhs = rhs - (_jnp.stack(cols, -1) @ S[..., :j, j:j + 1])[..., 0]
            M = R + S[..., j, j][..., None, None] * eye
            cols.append(_pl.triangular_solve(M, rhs[..., None], left_side=True, lower=False)[..., 0])
        Y = _jnp.stack(cols, -1) if cols else _jnp.zeros(batch + (m, 0), cdt)
        X = Q @ Y @ H(U)
        wa, wb = _jnp.diagonal(R, axis1=-2, axis2=-1), _jnp.diagonal(S, axis1=-2, axis2=-1)
        den = wa[..., :, None] + wb[..., None, :]
    bad = _jnp.any(_jnp.abs(den) < tol, axis=(-2, -1))[..., None, None]
    X = _jnp.where(bad, _jnp.nan, X)
    return _jnp.real(X) if real else X


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Fréchet derivative ``L(A, E)`` of the matrix exponential at ``A[..., n, n]`` in the direction
    ``E``, and ``expm(A)`` first when ``compute_expm``: both read off ``expm([[A, E], [0, A]]) = [[e^A,
    L], [0, e^A]]``. ``method`` other than None/'SPS'/'blockEnlarge' raises ValueError. Mirrors
    ``jax.scipy.linalg.expm_frechet``."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"Unknown implementation {method!r}")
    A, E = _nl._inexact("expm_frechet", A, E)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape != E.shape:
        raise ValueError(f"expected A and E to be square matrices of one shape, got {A.shape} and {E.shape}")
    n = A.shape[-1]
    top = _jnp.concatenate([A, E], -1)
    bottom = _jnp.concatenate([_jnp.zeros_like(A), A], -1)
    big = expm(_jnp.concatenate([top, bottom], -2))
    eA, L = big[..., :n, :n], big[..., :n, n:]
    return (eA, L) if compute_expm else L


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """The eigenvalues (ascending) of the symmetric real tridiagonal matrix with diagonal ``d[N]`` and
    off-diagonal ``e[N-1]``; ``select='i'`` keeps indices ``select_range[0] ..= select_range[1]``.
    ``eigvals_only=False`` and ``select='v'`` raise NotImplementedError, as in JAX. Mirrors
    ``jax.scipy.linalg.eigh_tridiagonal``."""
    if not eigvals_only:
        raise NotImplementedError("Calculation of eigenvectors is not implemented")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError(f"Unsupported select={select!r}")
    d, e = _nl._inexact("eigh_tridiagonal", d, e)
    if d.ndim != 1 or e.shape != (max(d.shape[0] - 1, 0),):
        raise ValueError(f"expected d[N] and e[N-1], got {d.shape} and {e.shape}")
    T = _jnp.diag(d) + _jnp.diag(e, 1) + _jnp.diag(e, -1)
    w = _nl.eigvalsh(T)
    if select == "i":
        lo, hi = int(select_range[0]), int(select_range[1])
        w = w[lo:hi + 1]
    return w


# ----------------------------------------------------------------------------------------------- more special matrices

def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix ``A[..., k, n]`` with ``A @ v == jnp.convolve(a, v, mode)`` for ``a[..., m]``:
    ``k = m + n - 1`` ('full'), ``max(m, n)`` ('same') or ``max(m, n) - min(m, n) + 1`` ('valid');
    ``a``'s dtype. Raises ValueError for an empty ``a``, ``n < 1`` or an unknown mode. Mirrors
    ``jax.scipy.linalg.convolution_matrix``."""
    a = _jnp.asarray(a)
    n = int(n)
    if a.ndim < 1 or a.shape[-1] == 0:
        raise ValueError("len(a) must be at least 1.")
    if n < 1:
        raise ValueError("n must be a positive integer.")
    if mode not in ("full", "same", "valid"):
        raise ValueError("'mode' argument must be one of ('full', 'valid', 'same')")
    m = a.shape[-1]
    if mode == "full":
        start, k = 0, m + n - 1
    elif mode == "same":
        start, k = (min(m, n) - 1) // 2, max(m, n)
    else:
        start, k = min(m, n) - 1, max(m, n) - min(m, n) + 1
    # A[i, j] = a[i + start - j] where that index is in range
    idx = _np.arange(k)[:, None] + start - _np.arange(n)[None, :]
    ok = (idx >= 0) & (idx < m)
    vals = _jnp.take(a, _jnp.asarray(_np.clip(idx, 0, m - 1).reshape(-1), _np.int32), axis=-1)
    vals = vals.reshape(a.shape[:-1] + (k, n))
    return _jnp.where(_jnp.asarray(ok), vals, _jnp.zeros((), a.dtype))


def dft(n, scale=None, *, dtype=None):
    """The ``n×n`` DFT matrix ``W[i, j] = exp(-2πi ij / n)``, unscaled, or scaled by ``1/sqrt(n)``
    (``'sqrtn'``) or ``1/n`` (``'n'``); ``dtype`` a complex dtype (default: the default complex dtype).
    Mirrors ``jax.scipy.linalg.dft``."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid.")
    dt = _dtypes.canonicalize_dtype(_np.complex128) if dtype is None else _np.dtype(dtype)
    if dt.kind != "c":
        raise ValueError(f"dtype must be a complex dtype, got {dt}")
    k = _np.arange(n)
    # the exponent reduced mod n first: exact angles for large n
    w = _np.exp(-2j * _np.pi * (_np.outer(k, k) % max(n, 1)) / max(n, 1))
    if scale == "sqrtn":
        w = w / _np.sqrt(n)
    elif scale == "n":
        w = w / n
    return _jnp.asarray(w.astype(dt))


def fiedler_companion(a):
    """The Fiedler companion matrix (pentadiagonal, with the monic polynomial's roots as its eigenvalues)
    of the coefficients ``a[N+1]`` (descending, ``a[0] != 0``): ``[N, N]``; empty for ``N < 1``. Mirrors
    ``jax.scipy.linalg.fiedler_companion``."""
    (a,) = _nl._inexact("fiedler_companion", a)
    if a.ndim != 1:
        raise ValueError("Input 'a' must be a 1D array.")
    if a.shape[0] <= 2:
        if a.shape[0] == 2:
            return (-a[1] / a[0])[None, None]
        return _jnp.zeros((0, 0), a.dtype)
    c = a[1:] / a[0]
    n = c.shape[0]
    # the product of Fiedler's elementary factors, laid out as a pentadiagonal matrix: -c[0] and a 1 start
    # column 0; odd k put -c[k] above the diagonal with a 1 three rows below, even k put -c[k] below it with a
    # 1 two rows above
    out = _jnp.zeros((n, n), a.dtype).at[0, 0].set(-c[0]).at[1, 0].set(1)
    for k in range(1, n):
        if k % 2 == 1:   # c[k] at (k - 1, k), a one at (k + 2, k) below it
            out = out.at[k - 1, k].set(-c[k])
            if k + 2 < n:
                out = out.at[k + 2, k].set(1)
        else:            # c[k] at (k, k - 1), a one at (k - 2, k) above
            out = out.at[k, k - 1].set(-c[k]).at[k - 2, k].set(1)
    return out


def invhilbert(n):
    """The inverse of the ``n×n`` Hilbert matrix from its closed form ``(-1)^(i+j) (i+j+1) C(n+i, n-j-1)
    C(n+j, n-i-1) C(i+j, i)^2`` (integers, exact in float64 up to n = 14; default float dtype). Mirrors
    ``jax.scipy.linalg.invhilbert``."""
    from math import comb
    out = _np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = (-1) ** (i + j) * (i + j + 1) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1) * \
                comb(i + j, i) ** 2
    return _jnp.asarray(out.astype(_dtypes.canonicalize_dtype(_np.float64)))


def _pascal_lower(n):
    from math import comb
    return _np.array([[comb(i, j) for j in range(n)] for i in range(n)], dtype=_np.float64).reshape(n, n)


def pascal(n, kind=None):
    """The ``n×n`` Pascal matrix of binomial coefficients: ``C(i+j, i)`` (``kind`` None/'symmetric'),
    ``C(i, j)`` ('lower') or its transpose ('upper'); default float dtype. Mirrors
    ``jax.scipy.linalg.pascal``."""
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be 'symmetric', 'lower', or 'upper'; got {kind!r}")
    L = _pascal_lower(n)
    out = {"lower": L, "upper": L.T, "symmetric": L @ L.T}[kind]
    return _jnp.asarray(out.astype(_dtypes.canonicalize_dtype(_np.float64)))


def invpascal(n, kind=None):
    """The inverse of ``pascal(n, kind)``: ``(-1)^(i-j) C(i, j)`` ('lower'), its transpose ('upper'), and
    ``upper^-1 @ lower^-1`` for the symmetric one. Mirrors ``jax.scipy.linalg.invpascal``."""
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Expected kind to be 'symmetric', 'lower', or 'upper'; got {kind!r}")
    i, j = _np.indices((n, n))
    Linv = _np.where((i - j) % 2, -1.0, 1.0) * _pascal_lower(n)   # -0.0 above the diagonal, as JAX prints
    out = {"lower": Linv, "upper": Linv.T, "symmetric": Linv.T @ Linv}[kind]
    return _jnp.asarray(out.astype(_dtypes.canonicalize_dtype(_np.float64)))


__all__ += ["convolution_matrix", "dft", "eigh_tridiagonal", "expm_frechet", "fiedler_companion", "funm",
            "hessenberg", "invhilbert", "invpascal", "pascal", "qr_multiply", "rsf2csf", "schur",
            "solve_sylvester", "sqrtm"]
