"""``cranax.numpy.linalg``: NumPy's linear algebra built on the ``lax.linalg`` primitives
(``cranax.primitives.linalg``: faer's factorizations) and the ``dot_general`` products. Mirrors
``jax.numpy.linalg``: arguments are promoted to an inexact dtype (float32, float64 under x64), the last two
axes are the matrix and leading axes a batch. ``eig``/``eigvals`` need complex outputs and raise
NotImplementedError until cranax has complex dtypes.
"""
from collections import namedtuple
import builtins
import operator

import numpy as np

from ..api import jit
from ..core import get_aval
from ..custom_derivatives import custom_jvp
from ..primitives import linalg as _pl
from ..lax import cond as _lax_cond
from ._creation import arange, eye, ones, zeros
from ._products import matmul, outer, tensordot, vecdot
from ._products import trace as _trace
from .. import dtypes
from ._promotion import _operand, _promote, _to_inexact, asarray
from ._reductions import max, min, prod, sum
from ._shape_ops import count_nonzero, cumprod, where
from ._shape_ops import diagonal as _diagonal
from ._shapes import broadcast_to, concatenate, expand_dims, matrix_transpose, moveaxis, reshape, stack, swapaxes
from ._ufuncs import conj, real
from ._ufuncs import abs, exp, isfinite, isinf, isnan, log, power, sign, sqrt

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm",
           "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve",
           "trace", "vecdot", "vector_norm", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])


def _inexact(name, *xs):
    """The operands converted to their common inexact dtype (JAX's ``promote_dtypes_inexact``; shapes are
    left alone)."""
    xs = [asarray(x) for x in xs]
    dt, weak = dtypes.result_type(*xs, return_weak_type_flag=True)
    if not dtypes.issubdtype(dt, np.inexact):
        dt = _to_inexact(dt, weak)
    return [x if get_aval(x).dtype == dt else x.astype(dt) for x in xs]


def _mH(x):
    """The conjugate transpose of the last two axes."""
    xt = matrix_transpose(x)
    return xt.conj() if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating) else xt


def _square(name, a, min_rank=2):
    sh = get_aval(a).shape
    if len(sh) < min_rank or (min_rank >= 2 and sh[-1] != sh[-2]):
        raise ValueError(f"{name}: argument must be a square matrix (or a stack of them), got shape {sh}")


# ----------------------------------------------------------------------------------------------- factorizations

def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of symmetric positive definite ``a[..., n, n]``: lower ``L`` (``a = L @ L.T``), or
    upper ``L.T`` when ``upper``; NaNs when ``a`` is not positive definite. Mirrors
    ``jax.numpy.linalg.cholesky``."""
    (a,) = _inexact("cholesky", a)
    _square("cholesky", a)
    L = _pl.cholesky(a, symmetrize_input=symmetrize_input)
    return _mH(L) if upper else L


def qr(a, mode="reduced"):
    """QR decomposition of ``a[..., m, n]``: ``QRResult(Q, R)`` (``mode`` 'reduced' or 'complete'), or ``R``
    alone for mode 'r'. Raises ValueError for other modes. Mirrors ``jax.numpy.linalg.qr``."""
    (a,) = _inexact("qr", a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if mode == "raw":
        raise NotImplementedError("qr mode='raw' is not implemented in cranax")
    q, r = _pl.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric ``a[..., n, n]``:
    ``EighResult(eigenvalues, eigenvectors)``; ``UPLO`` 'L' (default) or 'U' names the triangle read. Mirrors
    ``jax.numpy.linalg.eigh``."""
    (a,) = _inexact("eigh", a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    v, w = _pl.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues (ascending) of symmetric ``a``. Mirrors ``jax.numpy.linalg.eigvalsh``."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors (columns, unit 2-norm) of the general square ``a[..., n, n]``:
    ``EigResult(eigenvalues, eigenvectors)``, complex64 for float32/complex64 input, complex128 otherwise, in
    no particular order. Only the eigenvalues are differentiable. Mirrors ``jax.numpy.linalg.eig``."""
    (a,) = _inexact("eig", a)
    _square("eig", a)
    w, v = _pl.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The (complex) eigenvalues of the general square ``a``. Mirrors ``jax.numpy.linalg.eigvals``."""
    (a,) = _inexact("eigvals", a)
    _square("eigvals", a)
    return _pl.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition: ``SVDResult(U, S, Vh)`` with ``a == U * S @ Vh`` and ``S`` descending, or
    ``S`` alone when ``compute_uv=False``. Mirrors ``jax.numpy.linalg.svd``."""
    (a,) = _inexact("svd", a)
    # hermitian: the general SVD gives the same factors up to sign (JAX goes through eigh)
    if not compute_uv:
        return _pl.svd(a, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index)
    return SVDResult(*_pl.svd(a, full_matrices=full_matrices, compute_uv=True, subset_by_index=subset_by_index))


def svdvals(x, /):
    """The singular values of ``x`` (descending). Mirrors ``jax.numpy.linalg.svdvals``."""
    return svd(x, compute_uv=False)


# ----------------------------------------------------------------------------------------------- solves

def _lu_solve(lu_, perm, b):
    """Solves ``a @ x = b`` for ``b[..., n, k]`` given ``lu(a)``."""
    pb = _pl._permute_rows(b, perm)
    x = _pl.triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return _pl.triangular_solve(lu_, x, left_side=True, lower=False)


def solve(a, b):
    """Solves ``a @ x = b`` for square ``a[..., n, n]``; ``b`` is a vector when it has rank 1, else
    ``[..., n, k]`` (batch dims broadcast). LU with partial pivoting (faer); a singular ``a`` gives
    inf/NaN, no exception. Mirrors ``jax.numpy.linalg.solve``."""
    a, b = _inexact("solve", a, b)
    _square("solve", a)
    av, bv = get_aval(a), get_aval(b)
    vec = bv.ndim == 1
    if vec:
        b = expand_dims(b, -1)
        bv = get_aval(b)
    if bv.shape[-2] != av.shape[-1]:
        if not vec and bv.ndim == av.ndim - 1 and bv.shape[-1] == av.shape[-1]:
            raise ValueError(f"Invalid shapes for solve: {av.shape}, {bv.shape}. Prior to JAX v0.5.0, this would "
                             f"have been treated as a batched 1-dimensional solve. To recover this behavior, use "
                             f"solve(a, b[..., None]).squeeze(-1).")
        raise ValueError(f"Invalid shapes for solve: {av.shape}, {get_aval(b).shape if not vec else (bv.shape[0],)}")
    batch = np.broadcast_shapes(av.shape[:-2], bv.shape[:-2])
    a = broadcast_to(a, batch + av.shape[-2:])
    b = broadcast_to(b, batch + bv.shape[-2:])
    lu_, _, perm = _pl.lu(a)
    x = _lu_solve(lu_, perm, b)
    return x[..., 0] if vec else x


def inv(a):
    """The inverse of square ``a[..., n, n]`` (inf/NaN when singular). Mirrors ``jax.numpy.linalg.inv``."""
    (a,) = _inexact("inv", a)
    _square("inv", a)
    av = get_aval(a)
    return solve(a, broadcast_to(eye(av.shape[-1], dtype=av.dtype), av.shape))


def _lu_det_parts(a, lu_piv=None):
    lu_, piv = lu_piv if lu_piv is not None else _pl.lu(a)[:2]
    d = _diagonal(lu_, axis1=-2, axis2=-1)
    n = get_aval(piv).shape[-1]
    swaps = count_nonzero(piv != arange(n, dtype=np.int32), axis=-1)
    parity = where(swaps % 2 == 1, -1.0, 1.0).astype(get_aval(a).dtype)
    # faer divides by an exactly zero pivot (LAPACK skips that column): a NaN from a finite matrix means
    # it is singular, with determinant 0. Whether `a` is finite is read only when some diagonal is NaN
    # (a branch): a whole pass over `a` after the LU cost det/slogdet ~5-10% at n = 1000
    nan_d = isnan(d).any(axis=-1)
    singular = _lax_cond(nan_d.any(), lambda: nan_d & isfinite(a).all(axis=(-2, -1)), lambda: nan_d)[..., None]
    d = where(singular, 0, d).astype(get_aval(a).dtype)
    return d, parity


def _det_impl(a):
    """The determinant of square ``a[..., n, n]``: ``a[..., n, n]`` → ``a.shape[:-2]``, the operand's inexact
    dtype. As JAX's: the cofactor expansion written out for n = 2 and 3 (so a matrix holding inf gives NaN
    there), ``sign * exp(logabsdet)`` from the LU (``slogdet``) for larger n; its derivative is
    ``trace(adj(a) @ da)``, finite for singular ``a`` (the adjugate from the LU, zero when the rank is below
    n - 1, as JAX's ``_cofactor_solve``). Raises ValueError unless square. Mirrors ``jax.numpy.linalg.det``."""
    (a,) = _inexact("det", a)
    _square("det", a)
    n = get_aval(a).shape[-1]
    if n == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    if n == 3:
        # JAX's order of the six products (the rounding follows it)
        return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
                + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
                - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])
    return _det_lu(a)


_det_impl.__name__ = _det_impl.__qualname__ = "det"
# JAX's det is a jitted function (so under XLA the 3x3 expansion's products contract into multiply-adds)
det = jit(_det_impl)
det.__doc__ = _det_impl.__doc__


def _det_lu_impl(a):
    s, logdet = _slogdet_lu(a)
    return s * exp(logdet).astype(get_aval(s).dtype)


def _cofactor_solve(a, b):
    """``(det(a), adj(a) @ b)`` for ``a, b[..., n, n]``, defined for singular ``a`` too. With ``a[perm] = L U``,
    ``adj(a) b = det(a) U^-1 L^-1 b[perm]``; rank n - 1 leaves ``u_nn = 0`` (JAX's LU puts the zero pivot
    last), so the last back-substitution step, which would divide by it, instead multiplies by the product
    of the other pivots (``u_nn`` replaced by its inverse), and the other rows take ``det(a)`` (zero) as
    their factor. If ``U`` is still singular the rank is below n - 1 and the adjugate is zero: both
    operand and result are masked to zero there, so no inf/NaN enters the tangent's transpose."""
    av = get_aval(a)
    n = av.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu_, piv, perm = _pl.lu(a)
    dt = av.dtype
    swaps = count_nonzero(piv != arange(n, dtype=np.int32), axis=-1)
    # the partial products of the pivots, with the permutation's sign: [..., -1] is det(a), [..., -2] det(a)
    # without u_nn
    partial = cumprod(_diagonal(lu_, axis1=-2, axis2=-1), axis=-1) * where(swaps % 2 == 1, -1, 1).astype(dt)[..., None]
    lu_ = lu_.at[..., -1, -1].set(1 / partial[..., -2])
    probe = _pl.triangular_solve(lu_, ones(av.shape[:-1] + (1,), dt), left_side=True, lower=False)
    low_rank = (~isfinite(probe)).any(axis=(-2, -1))[..., None, None]
    x = where(low_rank, 0, b).astype(get_aval(b).dtype)
    x = _pl.triangular_solve(lu_, _pl._permute_rows(x, perm), left_side=True, lower=True, unit_diagonal=True)
    x = concatenate([x[..., :-1, :] * partial[..., -1, None, None], x[..., -1:, :]], axis=-2)
    x = _pl.triangular_solve(lu_, x, left_side=True, lower=False)
    return partial[..., -1], where(low_rank, 0, x).astype(get_aval(x).dtype)


def _det_jvp(primals, tangents):
    (a,), (g,) = primals, tangents
    y, z = _cofactor_solve(a, g)
    return y, _trace(z, axis1=-1, axis2=-2)


_det_lu_impl.__name__ = "_det"
_det_lu = custom_jvp(_det_lu_impl)
_det_lu.defjvp(_det_jvp)


def slogdet(a, *, method=None):
    """``SlogdetResult(sign, logabsdet)`` of square ``a[..., n, n]`` (from LU; sign 0 and logabsdet -inf when
    singular). Mirrors ``jax.numpy.linalg.slogdet``."""
    (a,) = _inexact("slogdet", a)
    _square("slogdet", a)
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (None)")
    return SlogdetResult(*_slogdet_lu(a))


def _slogdet_from_lu(a, lu_, piv):
    d, parity = _lu_det_parts(a, (lu_, piv))
    # JAX's: a zero pivot gives sign +0 and logabsdet -inf (not the product's -0 or a sum holding log 0)
    is_zero = (d == 0).any(axis=-1)
    dt = get_aval(d).dtype
    s = where(is_zero, 0, parity * prod(sign(d), axis=-1)).astype(dt)
    return s, where(is_zero, -np.inf, real(sum(log(abs(d)), axis=-1))).astype(get_aval(real(d)).dtype)


def _slogdet_lu_impl(a):
    lu_, piv, _ = _pl.lu(a)
    return _slogdet_from_lu(a, lu_, piv)


def _slogdet_jvp(primals, tangents):
    """JAX's rule: d log|det a| = trace(a^-1 da), with ``a^-1`` from the primal's LU (the LU itself is not
    differentiated, so ``grad`` costs one LU and two triangular solves, as JAX's). The trace is written
    ``sum(a^-T * da)`` with ``a^-1`` computed from the primal alone, not ``trace(solve(a, da))``: the
    tangent then enters only through an elementwise product, whose transpose is another product, where
    the solve's transpose would scatter-add ``da``'s cotangent through the row permutation (several times
    the cost of the gather it replaces, about a tenth of ``grad`` at n = 500). Forward mode costs the same
    (the inverse is the solve of the identity, the same flops as the solve of an n×n ``da``) and a batch of
    tangents (``jacfwd``) shares one inverse. ``sign`` has a zero tangent for real ``a``; for complex ``a``
    it turns with the imaginary part of the trace."""
    (a,), (g,) = primals, tangents
    lu_, piv, perm = _pl.lu(a)
    s, ans = _slogdet_from_lu(a, lu_, piv)
    # a^-1 as `inv` writes it (the identity's rows in perm's order, then the two solves): under `grad` the
    # primal's uses of the factors are dead, and the core fuses lu + solves into one `lu_solve` of the
    # identity, whose first solve skips the zeros above each column's one (~2.1 n³ flops against ~2.7 n³ for
    # the solves of the permuted identity, which have no such structure); under `jvp` the LU stays shared
    dt, av = get_aval(a).dtype, get_aval(a)
    a_inv = _lu_solve(lu_, perm, broadcast_to(eye(av.shape[-1], dtype=dt), av.shape))
    ans_dot = sum(matrix_transpose(a_inv) * g, axis=(-2, -1))
    if dtypes.issubdtype(get_aval(a).dtype, np.complexfloating):
        sign_dot = (ans_dot - real(ans_dot).astype(get_aval(ans_dot).dtype)) * s
        ans_dot = real(ans_dot)
    else:
        sign_dot = zeros(get_aval(s).shape, get_aval(s).dtype)
    return (s, ans), (sign_dot, ans_dot)


_slogdet_lu_impl.__name__ = "_slogdet_lu"
_slogdet_lu = custom_jvp(_slogdet_lu_impl)
_slogdet_lu.defjvp(_slogdet_jvp)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least squares ``argmin ||a @ x - b||`` through the SVD: ``(x, resid, rank, s)``. ``resid`` is the sum
    of squared residuals (empty unless ``numpy_resid`` and ``a`` has full column rank with m > n, as JAX).
    Mirrors ``jax.numpy.linalg.lstsq``."""
    a, b = _inexact("lstsq", a, b)
    av, bv = get_aval(a), get_aval(b)
    if av.ndim != 2 or bv.ndim not in (1, 2):
        raise TypeError(f"lstsq: a must have rank 2 and b rank 1 or 2, got shapes {av.shape} and {bv.shape}")
    vec = bv.ndim == 1
    if vec:
        b = b[:, None]
    m, n = av.shape
    dt = av.dtype
    if rcond is None:
        rcond = float(np.finfo(dt).eps) * builtins.max(m, n)
    u, s, vt = svd(a, full_matrices=False)
    mask = s >= (rcond * s[0] if s.shape[0] else 0.0)
    rank = sum(mask.astype(np.int32))
    safe_s = where(mask, s, 1)
    s_inv = where(mask, 1 / safe_s, 0).astype(dt)
    uTb = matmul(_mH(u), b)
    x = matmul(_mH(vt), s_inv[:, None] * uTb)
    if numpy_resid:
        if m > n:
            r = b - matmul(a, x)
            resid = where(rank == n, sum(abs(r) ** 2, axis=0), zeros(get_aval(x).shape[1:], get_aval(s).dtype))
        else:
            resid = zeros((0,), get_aval(s).dtype)
    else:
        r = b - matmul(a, x)
        resid = sum(abs(r) ** 2, axis=0)
    if vec:
        x = x[:, 0]
        resid = resid[0] if get_aval(resid).shape else resid
        if not numpy_resid:
            resid = reshape(resid, (1,))
    return x, resid, rank, s




def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse through the SVD; singular values below ``rtol * s_max`` are dropped
    (default ``10 * max(m, n) * eps``). Mirrors ``jax.numpy.linalg.pinv``."""
    (a,) = _inexact("pinv", a)
    av = get_aval(a)
    m, n = av.shape[-2:]
    if rtol is None:
        rtol = rcond
    if rtol is None:
        rtol = 10.0 * builtins.max(m, n) * float(np.finfo(av.dtype).eps)
    if m == 0 or n == 0:
        return zeros(av.shape[:-2] + (n, m), av.dtype)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = asarray(rtol, dtype=get_aval(s).dtype)[..., None] * max(s, axis=-1, keepdims=True)
    s_inv = where(s > cutoff, 1 / where(s > cutoff, s, 1), 0).astype(av.dtype)
    return matmul(_mH(vh) * expand_dims(s_inv, -2), _mH(u))


def matrix_rank(M, rtol=None, *, tol=None):
    """The number of singular values above ``rtol * s_max`` (default ``max(m, n) * eps``), or above ``tol``.
    Mirrors ``jax.numpy.linalg.matrix_rank``."""
    (M,) = _inexact("matrix_rank", M)
    av = get_aval(M)
    if av.ndim < 2:
        return (M != 0).any().astype(np.int32) if av.ndim else (M != 0).astype(np.int32)
    s = svd(M, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = builtins.max(av.shape[-2:]) * float(np.finfo(av.dtype).eps)
        tol = asarray(rtol, dtype=av.dtype)[..., None] * max(s, axis=-1, keepdims=True)
    else:
        tol = asarray(tol, dtype=av.dtype)[..., None]
    return sum((s > tol).astype(np.int32), axis=-1)


def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring (``inv(a)`` first for negative ``n``). Raises
    TypeError for a non-integer ``n``. Mirrors ``jax.numpy.linalg.matrix_power``."""
    (a,) = _promote("matrix_power", asarray(a))
    _square("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError(f"exponent must be an integer, got {n}") from e
    av = get_aval(a)
    if n == 0:
        return broadcast_to(eye(av.shape[-1], dtype=av.dtype), av.shape)
    if n < 0:
        a = inv(a)
        n = -n
    result, z = None, a
    while n:
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if n:
            z = matmul(z, z)
    return result


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a matrix of its first ``ind`` axes by the rest. Mirrors
    ``jax.numpy.linalg.tensorinv``."""
    (a,) = _inexact("tensorinv", a)
    sh = get_aval(a).shape
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}")
    out_sh, in_sh = sh[:ind], sh[ind:]
    rows, cols = int(np.prod(out_sh)), int(np.prod(in_sh))
    if rows != cols:
        raise ValueError(f"tensorinv: product of the first {ind} axes ({rows}) must equal that of the rest ({cols})")
    return reshape(inv(reshape(a, (rows, cols))), in_sh + out_sh)


def tensorsolve(a, b, axes=None):
    """Solves ``tensordot(a, x, x.ndim) = b`` for ``x``. Mirrors ``jax.numpy.linalg.tensorsolve``."""
    a, b = _inexact("tensorsolve", a, b)
    if axes is not None:
        a = moveaxis(a, axes, tuple(range(get_aval(a).ndim - len(axes), get_aval(a).ndim)))
    sh = get_aval(a).shape
    bsh = get_aval(b).shape
    out_sh = sh[len(bsh):]
    n = int(np.prod(bsh))
    if int(np.prod(out_sh)) != n:
        raise ValueError(f"tensorsolve: a of shape {sh} is not square over b's shape {bsh}")
    return reshape(solve(reshape(a, (n, n)), reshape(b, (n,))), out_sh)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (first/last may be vectors), multiplied left to right. Mirrors
    ``jax.numpy.linalg.multi_dot``."""
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    out = arrays[0]
    for x in arrays[1:]:
        out = matmul(out, x)
    return out


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``. Raises ValueError when that axis is not of size 3.
    Mirrors ``jax.numpy.linalg.cross``."""
    x1, x2 = _promote("cross", asarray(x1), asarray(x2))
    for x in (x1, x2):
        if get_aval(x).shape[axis] != 3:
            raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
                             f"shape[axis]={get_aval(x1).shape[axis]} and {get_aval(x2).shape[axis]}")
    a = moveaxis(x1, axis, -1)
    b = moveaxis(x2, axis, -1)
    c = stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
               a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], -1)
    return moveaxis(c, -1, axis)


def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes. Mirrors ``jax.numpy.linalg.diagonal``."""
    return _diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the last two axes. Mirrors ``jax.numpy.linalg.trace``."""
    return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


# ----------------------------------------------------------------------------------------------- norms

def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector ``ord``-norm over ``axis`` (all axes when None): 2 (default), 1, inf, -inf, 0 (count of
    non-zeros) or any other float. Mirrors ``jax.numpy.linalg.vector_norm``."""
    (x,) = _inexact("vector_norm", x)
    if axis is None:
        out = vector_norm(reshape(x, (-1,)), axis=0, ord=ord)
        return reshape(out, (1,) * get_aval(x).ndim) if keepdims else out
    if ord == 2:
        return sqrt(sum(_abs_sq(x), axis=axis, keepdims=keepdims))
    if ord == 0:
        return sum(x != 0, dtype=get_aval(x).dtype, axis=axis, keepdims=keepdims)
    ax = x_abs = abs(x)   # (after the cases without it: make_jaxpr would show it unused)
    if ord == np.inf:
        return max(ax, axis=axis, keepdims=keepdims, initial=0)   # (as JAX's: 0 for an empty axis)
    if ord == -np.inf:
        return min(ax, axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(x_abs, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = float(ord)
    return power(sum(power(x_abs, p), axis=axis, keepdims=keepdims), 1.0 / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf. Mirrors
    ``jax.numpy.linalg.matrix_norm``."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _abs_sq(x):
    """|x|**2 elementwise: ``x * x`` for real x, ``real(x * conj(x))`` for complex x (as JAX's norms)."""
    if dtypes.issubdtype(get_aval(x).dtype, np.complexfloating):
        return real(x * conj(x))
    return x * x


def norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's ``linalg.norm``: a vector norm for one axis (or a rank-1 input with ``axis=None``), a matrix
    norm for two axes ('fro', 'nuc', +-1, +-2, +-inf), the Frobenius norm of everything for ``ord=None,
    axis=None``. Raises ValueError for an unknown ``ord`` or an invalid ``axis``. One jitted call with
    ``ord``/``axis``/``keepdims`` static (printed ``jit[name=norm]``, as JAX's). Mirrors
    ``jax.numpy.linalg.norm``."""
    _operand(x, "jnp.linalg.norm")   # (a list raises JAX's TypeError before the call)
    return _norm_jit(x, ord=ord, axis=axis, keepdims=keepdims)


def _norm(x, ord=None, axis=None, keepdims=False):
    (x,) = _inexact("norm", x)
    nd = get_aval(x).ndim
    if axis is None:
        if ord is None:
            return sqrt(sum(_abs_sq(x), keepdims=keepdims))
        axis = tuple(range(nd))
    elif isinstance(axis, int) or np.ndim(axis) == 0:
        axis = (operator.index(axis),)
    axis = tuple(operator.index(a) % nd if nd else operator.index(a) for a in axis)
    if len(axis) == 1:
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axis) != 2:
        raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")
    r, c = axis
    if r == c:
        raise ValueError(f"Duplicate axes given to jnp.linalg.norm: {axis}")
    if ord in (None, "fro", "f"):
        return sqrt(sum(_abs_sq(x), axis=axis, keepdims=keepdims))
    ax = abs(x)
    if ord in (1, -1):
        red = max if ord == 1 else min
        s = sum(ax, axis=r, keepdims=True)
        out = red(s, axis=c, keepdims=True, **({"initial": 0} if ord == 1 else {}))   # (JAX's max has initial 0)
    elif ord in (np.inf, -np.inf):
        red = max if ord == np.inf else min
        s = sum(ax, axis=c, keepdims=True)
        out = red(s, axis=r, keepdims=True, **({"initial": 0} if ord == np.inf else {}))
    elif ord in (2, -2, "nuc"):
        y = moveaxis(x, (r, c), (-2, -1))
        s = svd(y, compute_uv=False)
        out = max(s, axis=-1) if ord == 2 else min(s, axis=-1) if ord == -2 else sum(s, axis=-1)
        if keepdims:
            out = expand_dims(out, tuple(sorted(axis)))
        return out
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    return out if keepdims else reshape(out, tuple(d for i, d in enumerate(get_aval(out).shape) if i not in axis))


def cond(x, p=None):
    """The condition number ``norm(x, p) * norm(inv(x), p)`` (``s_max / s_min`` for p None or 2). Mirrors
    ``jax.numpy.linalg.cond``."""
    (x,) = _inexact("cond", x)
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        return s[..., -1] / s[..., 0]
    _square("cond", x)
    r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isinf(r) | (r != r), np.inf, r).astype(get_aval(x).dtype)


_norm.__name__ = "norm"
_norm_jit = jit(_norm, static_argnames=("ord", "axis", "keepdims"))
