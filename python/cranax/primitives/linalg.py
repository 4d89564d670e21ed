"""Dense linear algebra primitives (``rust/ir/linalg.rs``, run through ``faer`` on the CPU; the GPU backend
runs them on the host): ``cholesky``, ``lu``, ``lu_pivots_to_permutation``, ``qr``, ``eigh``, ``svd`` and
``triangular_solve``, ``eig``, ``hessenberg``, ``tridiagonal``; and primitives composed of lax operations
(``householder_product``, ``tridiagonal_solve``, ...; ``_composite``). Each acts on the last two axes; leading
axes are a batch. Each primitive has its lax wrapper, abstract eval, wire params, jvp rule (JAX's), transpose
rule where linear and batching rule in this file. Mirrors ``jax.lax.linalg``. float32/float64/complex64/
complex128: a complex operand reaches the core as its two real parts (``_complex_lowering``).
"""
import numpy as np

from ..core import Primitive, ShapedArray, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters import lowering as _lo
from . import elementwise as _ew
from . import library as _lib
from . import reductions as _red
from . import structural as _st
from .standard import standard_primitive

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INEXACT = _FLOATS + (np.dtype(np.complex64), np.dtype(np.complex128))


# ----------------------------------------------------------------------------------------------- helpers

def _float_aval(name, a, rank=2, real_only=False):
    if a.dtype not in (_FLOATS if real_only else _INEXACT):
        kinds = "float32 or float64" if real_only else "float32, float64, complex64 or complex128"
        raise TypeError(f"{name} requires a {kinds} operand, got {a.dtype.name}")
    if a.ndim < rank:
        raise ValueError(f"{name} requires an operand of rank >= {rank}, got shape {a.shape}")
    return a.shape[:-2], a.shape[-2], a.shape[-1]


def _T(x):
    """Swaps the last two axes."""
    nd = get_aval(x).ndim
    return _st.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _is_complex(x):
    return get_aval(x).dtype.kind == "c"


def _real_dt(dt):
    return np.dtype(np.float32) if np.dtype(dt) == np.complex64 else (
        np.dtype(np.float64) if np.dtype(dt) == np.complex128 else np.dtype(dt))


def _complex_dt(dt):
    return np.dtype(np.complex64) if np.dtype(dt) in (np.float32, np.complex64) else np.dtype(np.complex128)


def _H(x):
    """The conjugate transpose of the last two axes."""
    return _ew.conj(_T(x)) if _is_complex(x) else _T(x)


def _cast(x, dt):
    return x if get_aval(x).dtype == np.dtype(dt) else _ew.convert_element_type(x, np.dtype(dt))


def _re(x):
    return _ew.real(x) if _is_complex(x) else x


def _mm(a, b):
    """Batched matrix product over equal leading batch axes."""
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return _lib.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _tri_mask(shape, k, lower):
    """``i >= j - k`` (lower, the ``tril(k)`` mask) or ``i <= j - k`` (``triu(k)``) for the last two axes."""
    nd = len(shape)
    i = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=tuple(shape), dimension=nd - 2, sharding=None)
    j = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=tuple(shape), dimension=nd - 1, sharding=None)
    j = _ew.sub(j, _st.full(shape, k, np.int32))
    return _ew.ge(i, j) if lower else _ew.le(i, j)


def _tril(x, k=0):
    av = get_aval(x)
    return _ew.select(_tri_mask(av.shape, k, True), x, _st.full(av.shape, 0, av.dtype))


def _triu(x, k=0):
    av = get_aval(x)
    return _ew.select(_tri_mask(av.shape, k, False), x, _st.full(av.shape, 0, av.dtype))


def _eye_like(x):
    """The identity broadcast to ``x``'s (square) shape."""
    av = get_aval(x)
    nd = av.ndim
    i = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=av.shape, dimension=nd - 2, sharding=None)
    j = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=av.shape, dimension=nd - 1, sharding=None)
    return _ew.convert_element_type(_ew.eq(i, j), av.dtype)


def _lib_diag(x):
    """The diagonal of the last two axes: ``[..., n, n] -> [..., n]``."""
    return _red.reduce_sum(_ew.mul(x, _eye_like(x)), (get_aval(x).ndim - 1,))


def _row(v, shape):
    """``v[..., k]`` broadcast along axis -2 of ``shape`` (scales columns)."""
    nd = len(shape)
    return _st.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 1,))


def _col(v, shape):
    """``v[..., k]`` broadcast along axis -1 of ``shape`` (scales rows)."""
    nd = len(shape)
    return _st.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 2,))


def _batch_front(prim, nout):
    """Batching rule: the batch axis moves to the front (linalg operands batch over leading axes)."""
    def rule(vals, dims, **params):
        size = _batching.axis_size_of(vals, dims)
        ops = [_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        out = prim.bind(*ops, **params)
        return (out, [0] * nout) if prim.multiple_results else (out, 0)
    return rule


def _bools(eqn, *names):
    return {n: bool(eqn.params[n]) for n in names}


# ----------------------------------------------------------------------------------------------- cholesky

def _cholesky_abstract(a):
    _, m, n = _float_aval("cholesky", a)
    if m != n:
        raise ValueError(f"cholesky requires square matrices, got shape {a.shape}")
    return ShapedArray(a.shape, a.dtype)


cholesky_p = standard_primitive("cholesky", _cholesky_abstract, wire=lambda eqn: {})


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor ``L`` of the Hermitian positive definite ``x[..., n, n]`` (float32/float64/
    complex64/complex128), ``x = L @ L^H``; a matrix that is not positive definite gives NaNs (no exception). Symmetrizes
    ``(x + x.T) / 2`` first unless ``symmetrize_input=False`` (then only the lower triangle is read).
    Raises TypeError for other dtypes, ValueError for non-square operands. Mirrors
    ``jax.lax.linalg.cholesky``."""
    x = _ew._as_operand(x)
    _cholesky_abstract(get_aval(x))   # a non-square operand fails here, not in symmetrize
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def symmetrize(x):
    """``(x + x^H) / 2`` over the last two axes."""
    av = get_aval(x)
    return _ew.div(_ew.add(x, _H(x)), _st.full(av.shape, 2, av.dtype))


def _phi(x):
    """The lower triangle with its diagonal halved."""
    av = get_aval(x)
    half = _ew.sub(_st.full(av.shape, 1, av.dtype), _ew.mul(_eye_like(x), _st.full(av.shape, 0.5, av.dtype)))
    return _ew.mul(_tril(x), half)


def _cholesky_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    L = _tril(cholesky_p.bind(x))
    if _ad.is_zero(t):
        return L, _ad.Zero(get_aval(L))
    t = _ad.instantiate_zeros(t)
    # dL = L phi(L^-1 dA L^-T), dA taken symmetric
    tmp = triangular_solve(L, t, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    dL = _mm(L, _phi(triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)))
    return L, dL


_ad.jvp_rules[cholesky_p] = _cholesky_jvp
_batching.batching_rules[cholesky_p] = _batch_front(cholesky_p, 1)


# ----------------------------------------------------------------------------------------------- triangular_solve

def _triangular_solve_abstract(a, b, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                               unit_diagonal=False):
    ab, m, m2 = _float_aval("triangular_solve", a)
    bb, r, c = _float_aval("triangular_solve", b)
    if m != m2:
        raise TypeError(f"triangular_solve requires a to be a square matrix, got shape {a.shape}")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve requires a and b of one dtype, got {a.dtype.name} and {b.dtype.name}")
    if ab != bb:
        raise TypeError(f"triangular_solve requires both arguments to have the same number of dimensions and "
                        f"equal batch dimensions, got {a.shape} and {b.shape}")
    common = r if left_side else c
    if common != m:
        raise TypeError(f"Incompatible shapes for arguments to triangular_solve: {a.shape} and {b.shape}.")
    return ShapedArray(b.shape, b.dtype)


_TS_FLAGS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")
triangular_solve_p = standard_primitive("triangular_solve", _triangular_solve_abstract,
                                        wire=lambda eqn: _bools(eqn, *_TS_FLAGS))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """Solves ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a[..., m, m]``, where
    ``op(a)`` is ``a`` or ``a.T`` (``transpose_a``); only the ``lower`` (or upper) triangle is read and its
    diagonal taken as ones when ``unit_diagonal``. ``b`` has a's batch dims: ``[..., m, n]`` (left) or
    ``[..., n, m]``; a rank-1 ``b`` is treated as a vector. Raises TypeError for mismatched shapes or
    dtypes. Mirrors ``jax.lax.linalg.triangular_solve``."""
    a, b = _ew._as_operand(a), _ew._as_operand(b)
    vec = get_aval(b).ndim == get_aval(a).ndim - 1
    if vec:
        b = _st.expand_dims(b, (get_aval(b).ndim - 1 if left_side else get_aval(b).ndim - 1,))
        if not left_side:
            b = _T(b)
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                  unit_diagonal=bool(unit_diagonal))
    if vec:
        out = _st.squeeze(out, (get_aval(out).ndim - 1,) if left_side else (get_aval(out).ndim - 2,))
    return out


def _ts_jvp(primals, tangents, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = primals
    ta, tb = tangents
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
                  unit_diagonal=unit_diagonal)
    x = triangular_solve_p.bind(a, b, **params)
    out = None
    if not _ad.is_zero(tb):
        out = triangular_solve_p.bind(a, _ad.instantiate_zeros(tb), **params)
    if not _ad.is_zero(ta):
        ta = _ad.instantiate_zeros(ta)
        ta = _tril(ta, -1 if unit_diagonal else 0) if lower else _triu(ta, 1 if unit_diagonal else 0)
        op = _T(ta) if transpose_a else ta
        op = _ew.conj(op) if conjugate_a and _is_complex(op) else op
        prod = _mm(op, x) if left_side else _mm(x, op)
        d = _ew.neg(triangular_solve_p.bind(a, prod, **params))
        out = d if out is None else _ew.add(out, d)
    return x, (_ad.Zero(get_aval(x)) if out is None else out)


def _ts_transpose(ct, a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    assert not _ad.is_undefined(a), "triangular_solve is linear in b only"
    if _ad.is_zero(ct):
        return [None, _ad.Zero(b.aval)]
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                          transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                          unit_diagonal=unit_diagonal)]


_ad.jvp_rules[triangular_solve_p] = _ts_jvp
_ad.transpose_rules[triangular_solve_p] = _ts_transpose
_batching.batching_rules[triangular_solve_p] = _batch_front(triangular_solve_p, 1)


# ----------------------------------------------------------------------------------------------- lu

def _lu_abstract(a):
    batch, m, n = _float_aval("lu", a)
    i32 = np.dtype(np.int32)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (min(m, n),), i32), ShapedArray(batch + (m,), i32)]


lu_p = standard_primitive("lu", _lu_abstract, multiple_results=True, wire=lambda eqn: {})


def lu(x):
    """LU decomposition with partial pivoting of ``x[..., m, n]``: ``(lu, pivots, permutation)`` as LAPACK's
    getrf returns them: ``lu`` packs the unit lower factor (diagonal not stored) and the upper factor;
    ``pivots[..., min(m, n)]`` (int32) are the row interchanges, ``permutation[..., m]`` (int32) the
    resulting order, so that ``x[permutation] == L @ U``. Mirrors ``jax.lax.linalg.lu``."""
    return list(lu_p.bind(_ew._as_operand(x)))   # a list, as JAX's bind result


def _lu_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    lu_, piv, perm = lu_p.bind(a)
    zeros = [_ad.Zero(get_aval(piv)), _ad.Zero(get_aval(perm))]
    if _ad.is_zero(t):
        return [lu_, piv, perm], [_ad.Zero(get_aval(lu_))] + zeros
    av = get_aval(a)
    m, n = av.shape[-2:]
    if m != n:
        raise NotImplementedError(f"the jvp of lu is implemented for square matrices, got shape {av.shape}")
    t = _ad.instantiate_zeros(t)
    # A[perm] = L U: L^-1 dA[perm] U^-1 = L^-1 dL + dU U^-1 (strictly lower + upper parts)
    pa = _permute_rows(t, perm)
    eye = _eye_like(lu_)
    L = _ew.add(_tril(lu_, -1), eye)
    U = _triu(lu_)
    x = triangular_solve(L, pa, left_side=True, lower=True, unit_diagonal=True)
    x = triangular_solve(U, x, left_side=False, lower=False)
    dL = _mm(L, _tril(x, -1))
    dU = _mm(_triu(x), U)
    return [lu_, piv, perm], [_ew.add(dL, dU)] + zeros


def _permute_rows(x, perm):
    """``x[..., perm, :]`` with ``perm[...]`` sharing x's batch axes."""
    av = get_aval(x)
    nd = av.ndim
    if 0 in av.shape:
        return x
    batch = av.shape[:-2]
    idx = _st.expand_dims(perm, (nd - 1,))
    if batch:
        its = [_st.iota_p.bind(dtype=np.dtype(np.int32), shape=batch + (av.shape[-2], 1), dimension=d,
                               sharding=None) for d in range(len(batch))]
        idx = _lib.concatenate(its + [idx], nd - 1)
    dn = _lib.GatherDimensionNumbers(offset_dims=(nd - 1,), collapsed_slice_dims=tuple(range(nd - 1)),
                                     start_index_map=tuple(range(nd - 1)))
    return _lib.gather(x, idx, dn, (1,) * (nd - 1) + (av.shape[-1],), mode="clip")


_ad.jvp_rules[lu_p] = _lu_jvp
_batching.batching_rules[lu_p] = _batch_front(lu_p, 3)


def _lu_p2p_abstract(pivots, permutation_size):
    if pivots.dtype != np.dtype(np.int32) or pivots.ndim < 1:
        raise TypeError(f"lu_pivots_to_permutation requires int32 pivots of rank >= 1, got "
                        f"{pivots.dtype.name}{list(pivots.shape)}")
    if pivots.shape[-1] > permutation_size:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the trailing dimension "
                         f"of the pivots. Got pivots size {pivots.shape[-1]}")
    return ShapedArray(pivots.shape[:-1] + (int(permutation_size),), pivots.dtype)


lu_pivots_to_permutation_p = standard_primitive(
    "lu_pivots_to_permutation", _lu_p2p_abstract,
    wire=lambda eqn: {"permutation_size": int(eqn.params["permutation_size"])})


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation ``[..., permutation_size]`` (int32) that LAPACK's row interchanges ``pivots[..., k]``
    (int32, 0-based) apply to ``arange(permutation_size)``. Mirrors
    ``jax.lax.linalg.lu_pivots_to_permutation``."""
    return lu_pivots_to_permutation_p.bind(_ew._as_operand(pivots), permutation_size=int(permutation_size))


_ad.defjvp_zero(lu_pivots_to_permutation_p)
_batching.batching_rules[lu_pivots_to_permutation_p] = _batch_front(lu_pivots_to_permutation_p, 1)


# ----------------------------------------------------------------------------------------------- qr

def _qr_abstract(a, full_matrices=True, pivoting=False, use_magma=None):
    batch, m, n = _float_aval("qr", a)
    q = m if full_matrices else min(m, n)
    return [ShapedArray(batch + (m, q), a.dtype), ShapedArray(batch + (q, n), a.dtype)]


qr_p = standard_primitive("qr", _qr_abstract, multiple_results=True,
                          wire=lambda eqn: {"full_matrices": bool(eqn.params["full_matrices"])})


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition of ``x[..., m, n]`` by Householder reflections: ``(q, r)``, ``q[..., m, m]`` and
    ``r[..., m, n]`` (``full_matrices``) or ``q[..., m, k]``, ``r[..., k, n]`` with ``k = min(m, n)``; signs as
    LAPACK's geqrf/orgqr. ``pivoting=True`` raises NotImplementedError. Mirrors ``jax.lax.linalg.qr``."""
    if pivoting:
        raise NotImplementedError("qr with pivoting=True is not implemented in cranax")
    return tuple(qr_p.bind(_ew._as_operand(x), full_matrices=bool(full_matrices), pivoting=False,
                           use_magma=None))


def _qr_jvp(primals, tangents, full_matrices, pivoting=False, use_magma=None):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices, pivoting=pivoting, use_magma=use_magma)
    if _ad.is_zero(dx):
        return [q, r], [_ad.Zero(get_aval(q)), _ad.Zero(get_aval(r))]
    m, n = get_aval(x).shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")
    dx = _ad.instantiate_zeros(dx)
    dx_rinv = triangular_solve(r, dx)                 # dx R^-1
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    low = _tril(qt_dx_rinv, -1)
    do = _ew.sub(low, _H(low))                        # skew-Hermitian
    if _is_complex(qt_dx_rinv):
        # the imaginary part of the diagonal (JAX's correction for complex inputs)
        im = _ew.sub(qt_dx_rinv, _cast(_ew.real(qt_dx_rinv), get_aval(qt_dx_rinv).dtype))
        do = _ew.add(do, _ew.mul(_eye_like(do), im))
    dq = _ew.add(_mm(q, _ew.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(_ew.sub(qt_dx_rinv, do), r)
    return [q, r], [dq, dr]


_ad.jvp_rules[qr_p] = _qr_jvp
_batching.batching_rules[qr_p] = _batch_front(qr_p, 2)


# ----------------------------------------------------------------------------------------------- eigh

def _eigh_abstract(a, lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None):
    batch, m, n = _float_aval("eigh", a)
    if m != n:
        raise ValueError(f"Argument to symmetric eigendecomposition must have shape [..., n, n], got shape "
                         f"{a.shape}")
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (n,), _real_dt(a.dtype))]


eigh_p = standard_primitive("eigh", _eigh_abstract, multiple_results=True,
                            wire=lambda eqn: _bools(eqn, "lower", "sort_eigenvalues"))


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    """Eigendecomposition of the symmetric (Hermitian) ``x[..., n, n]``: ``(v, w)`` with real eigenvalues
    ``w[..., n]`` ascending and eigenvectors as the columns of ``v`` (each up to sign), ``x @ v == v * w``. Reads the
    ``lower`` (or upper) triangle; symmetrizes first unless ``symmetrize_input=False``. ``subset_by_index``
    other than None raises NotImplementedError. Mirrors ``jax.lax.linalg.eigh``."""
    if subset_by_index is not None:
        raise NotImplementedError("eigh with subset_by_index is not implemented in cranax")
    x = _ew._as_operand(x)
    _eigh_abstract(get_aval(x))   # a non-square operand fails here, not in symmetrize
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=None,
                       algorithm=None)
    return v, w


def _eigh_jvp(primals, tangents, lower, sort_eigenvalues, subset_by_index=None, algorithm=None):
    (a,), (t,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower, sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index,
                       algorithm=algorithm)
    if _ad.is_zero(t):
        return [v, w], [_ad.Zero(get_aval(v)), _ad.Zero(get_aval(w))]
    t = _ad.instantiate_zeros(t)
    shape = get_aval(v).shape
    dt = get_aval(v).dtype
    wc = _cast(w, dt)
    eye = _eye_like(v)
    # F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it
    F = _ew.sub(_ew.div(_st.full(shape, 1, dt), _ew.add(eye, _ew.sub(_row(wc, shape), _col(wc, shape)))), eye)
    vt_dot_v = _mm(_mm(_H(v), t), v)
    dv = _mm(v, _ew.mul(F, vt_dot_v))
    dw = _re(_lib_diag(vt_dot_v))
    return [v, w], [dv, dw]


_ad.jvp_rules[eigh_p] = _eigh_jvp
_batching.batching_rules[eigh_p] = _batch_front(eigh_p, 2)


# ----------------------------------------------------------------------------------------------- svd

def _svd_abstract(a, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    batch, m, n = _float_aval("svd", a)
    k = min(m, n)
    s = ShapedArray(batch + (k,), _real_dt(a.dtype))
    if not compute_uv:
        return [s]
    u, vt = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(batch + (m, u), a.dtype), ShapedArray(batch + (vt, n), a.dtype)]


svd_p = standard_primitive("svd", _svd_abstract, multiple_results=True,
                           wire=lambda eqn: _bools(eqn, "full_matrices", "compute_uv"))


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition of ``x[..., m, n]``: ``(u, s, vh)`` with ``x == u * s @ vh``, singular
    values ``s[..., k]`` descending (``k = min(m, n)``), ``u[..., m, m]``/``vh[..., n, n]`` when
    ``full_matrices`` else ``[..., m, k]``/``[..., k, n]``; only ``s`` when ``compute_uv=False``. Mirrors
    ``jax.lax.linalg.svd``."""
    if subset_by_index is not None:
        raise NotImplementedError("svd with subset_by_index is not implemented in cranax")
    outs = svd_p.bind(_ew._as_operand(x), full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=None, algorithm=None)
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def _svd_jvp(primals, tangents, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    (A,), (dA,) = primals, tangents
    outs = svd_p.bind(A, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index,
                      algorithm=algorithm)
    if _ad.is_zero(dA):
        return outs, [_ad.Zero(get_aval(o)) for o in outs]
    m, n = get_aval(A).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    dA = _ad.instantiate_zeros(dA)
    s, U, Vt = svd_p.bind(A, full_matrices=False, compute_uv=True, subset_by_index=None, algorithm=None)
    V = _H(Vt)
    dS = _mm(_mm(_H(U), dA), V)
    ds = _re(_lib_diag(dS))
    if not compute_uv:
        return outs, [ds]
    adt = get_aval(A).dtype
    rdt = get_aval(s).dtype
    kk = get_aval(dS).shape
    s_row, s_col = _row(s, kk), _col(s, kk)
    eye = _eye_like(_re(dS))
    one = _st.full(kk, 1, rdt)
    s_diffs = _ew.mul(_ew.add(s_row, s_col), _ew.sub(s_row, s_col))
    F = _cast(_ew.sub(_ew.div(one, _ew.add(s_diffs, eye)), eye), adt)
    dSS = _ew.mul(_cast(s_row, adt), dS)
    SdS = _ew.mul(_cast(s_col, adt), dS)
    dU = _mm(U, _ew.mul(F, _ew.add(dSS, _H(dSS))))
    if _is_complex(dS):
        # the phase freedom: (dS - dS^H) / 2 / s on the diagonal (JAX's dUdV_diag)
        zeros = _cast(_ew.eq(s, _st.full(get_aval(s).shape, 0, rdt)), rdt)
        s_inv = _ew.sub(_ew.div(_st.full(get_aval(s).shape, 1, rdt), _ew.add(s, zeros)), zeros)
        s_inv_mat = _ew.mul(_cast(_row(s_inv, kk), adt), _cast(eye, adt))
        half = _st.full(kk, 0.5, adt)
        dU = _ew.add(dU, _mm(U, _ew.mul(_ew.mul(half, _ew.sub(dS, _H(dS))), s_inv_mat)))
    dV = _mm(V, _ew.mul(F, _ew.add(SdS, _H(SdS))))
    if m > n:
        dAV = _mm(dA, V)
        sh = get_aval(dAV).shape
        dU = _ew.add(dU, _ew.div(_ew.sub(dAV, _mm(U, _mm(_H(U), dAV))), _cast(_row(s, sh), adt)))
    if n > m:
        dAHU = _mm(_H(dA), U)
        sh = get_aval(dAHU).shape
        dV = _ew.add(dV, _ew.div(_ew.sub(dAHU, _mm(V, _mm(Vt, dAHU))), _cast(_row(s, sh), adt)))
    return outs, [ds, dU, _H(dV)]


_ad.jvp_rules[svd_p] = _svd_jvp
def _svd_batch_rule(vals, dims, **params):
    size = _batching.axis_size_of(vals, dims)
    out = svd_p.bind(_batching.bdim_at_front(vals[0], dims[0], size), **params)
    return out, [0] * len(out)


_batching.batching_rules[svd_p] = _svd_batch_rule


# ----------------------------------------------------------------------------------------------- eig

def _eig_abstract(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True, use_magma=None):
    batch, m, n = _float_aval("eig", a)
    if m != n:
        raise ValueError(f"Argument to nonsymmetric eigendecomposition must have shape [..., n, n], got shape "
                         f"{a.shape}")
    cdt = _complex_dt(a.dtype)
    outs = [ShapedArray(batch + (n,), cdt)]
    outs += [ShapedArray(a.shape, cdt)] * (bool(compute_left_eigenvectors) + bool(compute_right_eigenvectors))
    return outs


eig_p = standard_primitive("eig", _eig_abstract, multiple_results=True,
                           wire=lambda eqn: _bools(eqn, "compute_left_eigenvectors", "compute_right_eigenvectors"))


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False,
        implementation=None, use_magma=None):
    """Eigendecomposition of the general ``x[..., n, n]`` (float32/float64/complex64/complex128): the
    complex eigenvalues ``w[..., n]`` (in no particular order), then the left eigenvectors ``vl`` (``vl^H @ x ==
    w[:, None] * vl^H``) and the right ones ``vr`` (``x @ vr == vr * w``) as columns when asked for; each
    eigenvector has unit 2-norm and its largest component real, as LAPACK's geev. Results are complex64 for
    float32/complex64 operands, complex128 otherwise. Only the eigenvalues are differentiable
    (``enable_eigvec_derivs=True`` raises NotImplementedError). Mirrors ``jax.lax.linalg.eig``."""
    if enable_eigvec_derivs:
        raise NotImplementedError("eig with enable_eigvec_derivs=True is not implemented in cranax")
    x = _ew._as_operand(x)
    want_v = bool(compute_left_eigenvectors) or bool(compute_right_eigenvectors)
    outs = list(eig_p.bind(x, compute_left_eigenvectors=False, compute_right_eigenvectors=want_v,
                           use_magma=use_magma))
    if not compute_left_eigenvectors:
        return outs if compute_right_eigenvectors else outs[:1]
    # the left eigenvectors: the rows of vr^-1 (conjugated), each scaled to unit norm (faer's own are
    # unreliable)
    w, vr = outs
    vl = _H(_solve(vr, _eye_like(vr)))
    av = get_aval(vl)
    norm = _ew.sqrt(_ew.add(_red.reduce_sum(_ew.mul(_ew.real(vl), _ew.real(vl)), (av.ndim - 2,)),
                            _red.reduce_sum(_ew.mul(_ew.imag(vl), _ew.imag(vl)), (av.ndim - 2,))))
    vl = _ew.div(vl, _cast(_row(norm, av.shape), av.dtype))
    return [w, vl, vr] if compute_right_eigenvectors else [w, vl]


def _solve(a, b):
    """``a^-1 @ b`` through ``lu`` (square ``a``, ``b[..., n, k]``)."""
    lu_, _, perm = lu_p.bind(a)
    x = triangular_solve(lu_, _permute_rows(b, perm), left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, x, left_side=True, lower=False)


def _eig_jvp(primals, tangents, compute_left_eigenvectors, compute_right_eigenvectors, use_magma=None):
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError("The derivatives of eigenvectors are not implemented, only eigenvalues. See "
                                  "https://github.com/jax-ml/jax/issues/2748 for discussion.")
    (a,), (da,) = primals, tangents
    w, v = eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True, use_magma=use_magma)
    if _ad.is_zero(da):
        return [w], [_ad.Zero(get_aval(w))]
    da = _cast(_ad.instantiate_zeros(da), get_aval(v).dtype)
    # dw = diag(V^-1 dA V)
    return [w], [_lib_diag(_mm(_solve(v, da), v))]


_ad.jvp_rules[eig_p] = _eig_jvp
_batching.batching_rules[eig_p] = _batch_front(eig_p, 3)


# ----------------------------------------------------------------------------------------------- hessenberg, tridiagonal

def _hessenberg_abstract(a):
    batch, m, n = _float_aval("hessenberg", a)
    if m != n:
        raise ValueError(f"hessenberg requires a square matrix, got shape {a.shape}")
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (max(n - 1, 0),), a.dtype)]


hessenberg_p = standard_primitive("hessenberg", _hessenberg_abstract, multiple_results=True,
                                  wire=lambda eqn: {})


def hessenberg(a):
    """Reduces ``a[..., n, n]`` to upper Hessenberg form ``a = Q H Q^H``: ``(packed, taus)`` as LAPACK's gehrd
    returns them: ``H`` in the upper triangle and first subdiagonal of ``packed``, the Householder vectors
    ``v_i`` (unit first entry, not stored) below it and ``taus[..., n-1]`` their scales, ``Q = H_0 ...
    H_{n-2}`` with ``H_i = I - tau_i v_i v_i^H`` (``householder_product`` builds it). Mirrors
    ``jax.lax.linalg.hessenberg``."""
    return list(hessenberg_p.bind(_ew._as_operand(a)))


_batching.batching_rules[hessenberg_p] = _batch_front(hessenberg_p, 2)


def _tridiagonal_abstract(a, lower=True):
    batch, m, n = _float_aval("tridiagonal", a, real_only=True)
    if m != n:
        raise ValueError(f"tridiagonal requires a square matrix, got shape {a.shape}")
    e = ShapedArray(batch + (max(n - 1, 0),), a.dtype)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (n,), a.dtype), e, e]


tridiagonal_p = standard_primitive("tridiagonal", _tridiagonal_abstract, multiple_results=True,
                                   wire=lambda eqn: {})


def tridiagonal(a, *, lower=True):
    """Reduces the symmetric real ``a[..., n, n]`` (its lower triangle) to tridiagonal form ``a = Q T Q^T``:
    ``(packed, d, e, taus)`` as LAPACK's sytrd (uplo L): ``d[..., n]`` the diagonal and ``e[..., n-1]`` the
    subdiagonal of ``T``, the Householder vectors below the subdiagonal of ``packed`` with scales
    ``taus[..., n-1]`` (``Q = householder_product(packed[..., 1:, :-1], taus)`` padded by one). Complex
    operands and ``lower=False`` raise NotImplementedError. Mirrors ``jax.lax.linalg.tridiagonal``."""
    a = _ew._as_operand(a)
    if not lower:
        raise NotImplementedError("tridiagonal with lower=False is not implemented in cranax")
    if _is_complex(a):
        raise NotImplementedError("tridiagonal of a complex Hermitian matrix is not implemented in cranax")
    return list(tridiagonal_p.bind(a, lower=True))


_batching.batching_rules[tridiagonal_p] = _batch_front(tridiagonal_p, 4)


# ----------------------------------------------------------------------------------------------- complex lowering

def _complex_lowering(em, eqn, ins):
    """A linalg equation with complex operands or results: one core equation with ``"complex": true`` taking
    each complex operand as its (re, im) parts (eig of a real operand takes it as it is) and giving each
    complex result as its parts."""
    from .complex_lowering import _wire_of  # (at call time: the module imports below it)
    cplx = any(v.aval.dtype.kind == "c" for v in eqn.invars)
    real_eqn, params = _wire_of(eqn)
    if cplx:
        params = dict(params, complex=True)
    flat = []
    for v, a in zip(eqn.invars, ins):
        if type(a) is tuple:
            flat.extend(a)
        elif cplx:
            rd = _lo.real_dtype(v.aval.dtype)
            zero = em.op("broadcast_in_dim", [_lo._literal_json_slow(rd, 0.0)], rd, v.aval.shape,
                         {"shape": list(v.aval.shape), "broadcast_dimensions": []})
            flat.extend([a, zero])
        else:
            flat.append(a)
    decls, atoms = [], []
    for v in eqn.outvars:
        n_parts = 2 if v.aval.dtype.kind == "c" else 1
        ids = []
        for _ in range(n_parts):
            vid, decl = em.new_var(_lo.real_dtype(v.aval.dtype), v.aval.shape, eqn.primitive.name)
            ids.append(vid)
            decls.append(decl)
        atoms.append(tuple(ids) if n_parts == 2 else ids[0])
    em.eqns.append({"prim": eqn.primitive.name, "params": params, "in": flat, "out": decls})
    return atoms


for _p in (cholesky_p, lu_p, qr_p, eigh_p, svd_p, triangular_solve_p, eig_p, hessenberg_p):
    _lo.complex_rules[_p.name] = _complex_lowering



# ----------------------------------------------------------------------------------------------- composites

def _params_key(params):
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def _composite(name, fn, multiple_results=False, jvp=None, transpose=None):
    """A primitive computed by ``fn(*operands, **params)`` from lax operations that accept leading batch
    axes: its abstract eval traces ``fn``, lowering inlines that jaxpr, the jvp differentiates ``fn`` (or is
    ``jvp``), batching moves the batch axis to the front."""
    from ..interpreters import dispatch  # (at call time: the module imports below it)
    from ..interpreters.partial_eval import trace_to_jaxpr  # (at call time: the module imports below it)
    p = Primitive(name, multiple_results)
    cache = {}

    def flat(params):
        def f(*xs):
            out = fn(*xs, **params)
            return list(out) if multiple_results else [out]
        return f

    def traced(avals, params):
        key = (tuple((a.shape, a.dtype) for a in avals), _params_key(params))
        closed = cache.get(key)
        if closed is None:
            closed = cache[key] = trace_to_jaxpr(flat(params), [ShapedArray(a.shape, a.dtype) for a in avals])
        return closed

    def abstract(*avals, **params):
        outs = [ShapedArray(v.aval.shape, v.aval.dtype) for v in traced(avals, params).jaxpr.outvars]
        return outs if multiple_results else outs[0]

    def inline(eqn):
        closed = traced([v.aval for v in eqn.invars], eqn.params)
        if closed.consts:
            raise NotImplementedError(f"{name}: its composition closes over arrays")
        return closed.jaxpr, eqn.invars

    def jvp_rule(primals, tangents, **params):
        po, to = _ad.jvp_flat(flat(params), list(primals), list(tangents))
        return (po, to) if multiple_results else (po[0], to[0])

    p.abstract_eval = abstract
    p.impl = dispatch._default_impl(p)
    p.inline_jaxpr = staticmethod(inline)
    _ad.jvp_rules[p] = jvp if jvp is not None else jvp_rule
    if transpose is not None:
        _ad.transpose_rules[p] = transpose
    def batch(vals, dims, **params):
        size = _batching.axis_size_of(vals, dims)
        ops = [_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        out = p.bind(*ops, **params)
        return (out, [0] * len(out)) if multiple_results else (out, 0)

    _batching.batching_rules[p] = batch
    return p


def _scalar(v, dt):
    return _st.full((), v, dt)


def _slice_last(x, i, size=1):
    """``x[..., i:i+size]`` for a traced ``i``."""
    av = get_aval(x)
    zero = _scalar(0, np.int32)
    starts = [zero] * (av.ndim - 1) + [i]
    return _lib.dynamic_slice(x, starts, av.shape[:-1] + (size,))


def _reflectors(a, k):
    """The unit lower-trapezoidal Householder basis ``V[..., m, k]`` packed below ``a``'s diagonal."""
    av = get_aval(a)
    m = av.shape[-2]
    a = _lib.slice_in_dim(a, 0, k, axis=av.ndim - 1)
    shape = av.shape[:-2] + (m, k)
    nd = len(shape)
    i = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=nd - 2, sharding=None)
    j = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=nd - 1, sharding=None)
    one, zero = _st.full(shape, 1, av.dtype), _st.full(shape, 0, av.dtype)
    return _ew.select(_ew.gt(i, j), a, _ew.select(_ew.eq(i, j), one, zero))


def _ormqr_fn(a, taus, c, *, left, transpose):
    # Q = H_0 ... H_{k-1} = I - V T V^H (the compact WY form) with T^-1 = diag(1 / tau) + striu(V^H V); no loop,
    # so batches and complex dtypes go through as they are
    k = get_aval(taus).shape[-1]
    if k == 0:
        return c
    V = _reflectors(a, k)
    dt = get_aval(V).dtype
    kk = get_aval(V).shape[:-2] + (k, k)
    # a zero tau is an identity reflector: its vector is dropped and its tau made 1 (no 1 / 0)
    tshape = get_aval(taus).shape
    none = _ew.eq(taus, _st.full(tshape, 0, dt))
    V = _ew.select(_row(none, get_aval(V).shape), _st.full(get_aval(V).shape, 0, dt), V)
    taus = _ew.select(none, _st.full(tshape, 1, dt), taus)
    gram = _triu(_mm(_H(V), V), 1)
    inv_tau = _ew.div(_st.full(tshape, 1, dt), taus)
    tinv = _ew.add(gram, _ew.mul(_eye_like(gram), _row(inv_tau, kk)))
    # T y = z is solved as T^-1-triangular: Q c = c - V (T (V^H c)) etc.; T^H for Q^H
    if left:
        z = _mm(_H(V), c)
        y = triangular_solve(tinv, z, left_side=True, lower=False, transpose_a=transpose, conjugate_a=transpose)
        return _ew.sub(c, _mm(V, y))
    z = _mm(c, V)
    y = triangular_solve(tinv, z, left_side=False, lower=False, transpose_a=transpose, conjugate_a=transpose)
    return _ew.sub(c, _mm(y, _H(V)))


ormqr_p = _composite("ormqr", _ormqr_fn)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Multiplies ``c[..., r, s]`` by ``Q`` of a QR factorization without forming it: ``Q @ c`` (``left``),
    ``c @ Q``, or with ``Q^H`` (``transpose``; ``Q^T`` for reals). ``a[..., m, n]`` holds the Householder
    vectors below its diagonal and ``taus[..., k]`` their scales, as LAPACK's geqrf returns them; ``Q =
    H_0 ... H_{k-1}``, ``H_i = I - tau_i v_i v_i^H``. Result: ``c``'s shape and dtype. Mirrors
    ``jax.lax.linalg.ormqr``."""
    a, taus, c = (_ew._as_operand(x) for x in (a, taus, c))
    av, cv = get_aval(a), get_aval(c)
    m = av.shape[-2]
    if (cv.shape[-2] if left else cv.shape[-1]) != m:
        raise ValueError(f"ormqr: c of shape {cv.shape} does not match reflectors of shape {av.shape} "
                         f"(left={left})")
    if get_aval(taus).shape[-1] > min(av.shape[-2:]):
        raise ValueError(f"ormqr: {get_aval(taus).shape[-1]} taus for reflectors of shape {av.shape}")
    if not av.dtype == get_aval(taus).dtype == cv.dtype:
        raise TypeError(f"ormqr: a, taus and c must have one dtype, got {av.dtype.name}, "
                        f"{get_aval(taus).dtype.name} and {cv.dtype.name}")
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def _householder_fn(a, taus):
    av = get_aval(a)
    eye = _eye_rect(av.shape, av.dtype)
    return _ormqr_fn(a, taus, eye, left=True, transpose=False)


def _eye_rect(shape, dtype):
    nd = len(shape)
    i = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=tuple(shape), dimension=nd - 2, sharding=None)
    j = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=tuple(shape), dimension=nd - 1, sharding=None)
    return _ew.convert_element_type(_ew.eq(i, j), np.dtype(dtype))


householder_product_p = _composite("householder_product", _householder_fn)


def householder_product(a, taus):
    """The first ``n`` columns of ``Q = H_0 ... H_{k-1}`` (``H_i = I - tau_i v_i v_i^H``) for Householder
    vectors below the diagonal of ``a[..., m, n]`` (``m >= n``) and ``taus[..., k]`` (``k <= n``), as
    LAPACK's orgqr: ``[..., m, n]``, ``a``'s dtype. Raises ValueError for other shapes. Mirrors
    ``jax.lax.linalg.householder_product``."""
    a, taus = _ew._as_operand(a), _ew._as_operand(taus)
    av, tv = get_aval(a), get_aval(taus)
    _float_aval("householder_product", av)
    m, n = av.shape[-2:]
    if m < n or tv.ndim < 1 or tv.shape[-1] > n or tv.shape[:-1] != av.shape[:-2]:
        raise ValueError(f"householder_product: expected a[..., m, n] with m >= n and taus[..., k] with k <= n "
                         f"and the same batch dims, got {av.shape} and {tv.shape}")
    if tv.dtype != av.dtype:
        raise TypeError(f"householder_product: a and taus must have one dtype, got {av.dtype.name} and "
                        f"{tv.dtype.name}")
    return householder_product_p.bind(a, taus)


# tridiagonal_solve: forward elimination and back substitution (the Thomas algorithm) in two scans

def _shift(x, axis, k):
    """``x`` moved ``k`` places along ``axis`` (``y[i] = x[i - k]``), zeros shifted in."""
    av = get_aval(x)
    n = av.shape[axis]
    k = max(-n, min(n, k))
    if k == 0 or n == 0:
        return x
    zshape = av.shape[:axis] + (abs(k),) + av.shape[axis + 1:]
    z = _st.full(zshape, 0, av.dtype)
    if k > 0:
        return _lib.concatenate([z, _lib.slice_in_dim(x, 0, n - k, axis=axis)], axis)
    return _lib.concatenate([_lib.slice_in_dim(x, -k, n, axis=axis), z], axis)


def _tridiagonal_solve_fn(dl, d, du, b):
    from .control_flow import scan  # (at call time: the module imports below it)
    bv = get_aval(b)
    m = bv.shape[-2]
    if m == 0 or bv.shape[-1] == 0:
        return b
    nd = bv.ndim
    # scan over rows: move the row axis first
    perm = (nd - 2,) + tuple(range(nd - 2)) + (nd - 1,)
    bt = _st.transpose(b, perm)                                        # [m, ..., n]
    vperm = (nd - 2,) + tuple(range(nd - 2))
    dlt, dt_, dut = (_st.transpose(v, vperm) for v in (dl, d, du))     # [m, ...]
    def col(v):   # v[...] broadcast over b's columns
        sh = get_aval(bt).shape[1:]
        return _st.broadcast_in_dim(v, sh, tuple(range(len(sh) - 1)))

    def fwd(carry, row):
        cp, dp = carry                       # previous c', d' ([...], [..., n])
        a_i, b_i, c_i, r_i = row
        denom = _ew.sub(b_i, _ew.mul(a_i, cp))
        c_new = _ew.div(c_i, denom)
        d_new = _ew.div(_ew.sub(r_i, _ew.mul(col(a_i), dp)), col(denom))
        return (c_new, d_new), (c_new, d_new)

    zero_c = _st.full(get_aval(dlt).shape[1:], 0, bv.dtype)
    zero_d = _st.full(get_aval(bt).shape[1:], 0, bv.dtype)
    _, (cs, ds) = scan(fwd, (zero_c, zero_d), (dlt, dt_, dut, bt))

    def back(x_next, row):
        c_i, d_i = row
        x = _ew.sub(d_i, _ew.mul(col(c_i), x_next))
        return x, x

    _, xs = scan(back, zero_d, (cs, ds), reverse=True)
    inv = tuple(perm.index(i) for i in range(nd))
    return _st.transpose(xs, inv)


def _tridiagonal_solve_jvp(primals, tangents, **params):
    dl, d, du, b = primals
    x = tridiagonal_solve_p.bind(dl, d, du, b)
    if all(_ad.is_zero(t) for t in tangents):
        return x, _ad.Zero(get_aval(x))
    tdl, td, tdu, tb = tangents
    # A dx = db - dA x, dA x[i] = ddl[i] x[i-1] + dd[i] x[i] + ddu[i] x[i+1]
    rhs = _ad.Zero(get_aval(x)) if _ad.is_zero(tb) else tb
    rhs = _ad.instantiate_zeros(rhs)
    nd = get_aval(x).ndim
    col = lambda v: _st.broadcast_in_dim(v, get_aval(x).shape, tuple(range(nd - 2)) + (nd - 2,))
    for t, xs in ((tdl, _shift(x, nd - 2, 1)), (td, x), (tdu, _shift(x, nd - 2, -1))):
        if not _ad.is_zero(t):
            rhs = _ew.sub(rhs, _ew.mul(col(t), xs))
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs)


def _tridiagonal_solve_transpose(ct, dl, d, du, b):
    assert not any(_ad.is_undefined(v) for v in (dl, d, du)), "tridiagonal_solve is linear in b only"
    if _ad.is_zero(ct):
        return [None, None, None, _ad.Zero(b.aval)]
    # A^T has lower diagonal du[i-1] and upper diagonal dl[i+1]
    ax = get_aval(dl).ndim - 1
    dl_t, du_t = _shift(du, ax, 1), _shift(dl, ax, -1)
    return [None, None, None, tridiagonal_solve_p.bind(dl_t, d, du_t, ct)]


tridiagonal_solve_p = _composite("tridiagonal_solve", _tridiagonal_solve_fn, jvp=_tridiagonal_solve_jvp,
                                 transpose=_tridiagonal_solve_transpose)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solves ``A @ x = b`` for the tridiagonal ``A`` with sub-, main and super-diagonals ``dl[..., m]``
    (``dl[..., 0]`` ignored), ``d[..., m]`` and ``du[..., m]`` (``du[..., m-1]`` ignored) and ``b[...,
    m, n]``; all one float or complex dtype. Elimination without pivoting (exact for diagonally dominant
    ``A``; ``perturb_singular=True`` raises NotImplementedError). Linear in ``b`` (transpose rule), jvp in
    all four. Mirrors ``jax.lax.linalg.tridiagonal_solve``."""
    if perturb_singular:
        raise NotImplementedError("tridiagonal_solve with perturb_singular=True is not implemented in cranax")
    dl, d, du, b = (_ew._as_operand(x) for x in (dl, d, du, b))
    avs = [get_aval(x) for x in (dl, d, du, b)]
    if len({a.dtype for a in avs}) != 1:
        raise TypeError(f"tridiagonal_solve: dl, d, du and b must have one dtype, got "
                        f"{[a.dtype.name for a in avs]}")
    _float_aval("tridiagonal_solve", avs[3])
    if avs[3].ndim < 2 or any(a.shape != avs[3].shape[:-1] for a in avs[:3]):
        raise ValueError(f"tridiagonal_solve: expected dl, d, du of shape [..., m] and b of shape [..., m, n], "
                         f"got {[a.shape for a in avs]}")
    # the ignored corners are made zero, so the elimination reads no garbage
    m = avs[0].shape[-1]
    if m:
        keep = lambda v, idx: _ew.select(_ew.ne(_st.iota_p.bind(dtype=np.dtype(np.int32), shape=get_aval(v).shape,
                                                                 dimension=get_aval(v).ndim - 1, sharding=None),
                                                 _st.full(get_aval(v).shape, idx, np.int32)),
                                         v, _st.full(get_aval(v).shape, 0, get_aval(v).dtype))
        dl, du = keep(dl, 0), keep(du, m - 1)
    return tridiagonal_solve_p.bind(dl, d, du, b)


def _symmetric_product_fn(a, c, *, alpha, beta, symmetrize_output):
    av = get_aval(a)
    out = _mm(a, _T(a))
    sh = get_aval(out).shape
    out = _ew.add(_ew.mul(_st.full(sh, alpha, av.dtype), out), _ew.mul(_st.full(sh, beta, av.dtype), c))
    if symmetrize_output:
        out = _ew.add(_tril(out), _T(_tril(out, -1)))
    return out


symmetric_product_p = _composite("symmetric_product", _symmetric_product_fn)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """``alpha * a @ a.T + beta * c`` for ``a[..., m, n]`` and symmetric ``c[..., m, m]``; with
    ``symmetrize_output`` the upper triangle is the transpose of the lower one. Mirrors
    ``jax.lax.linalg.symmetric_product`` (every entry is computed here, not only the lower triangle)."""
    a, c = _ew._as_operand(a_matrix), _ew._as_operand(c_matrix)
    av, cv = get_aval(a), get_aval(c)
    _float_aval("symmetric_product", av)
    if cv.shape != av.shape[:-1] + (av.shape[-2],) or av.dtype != cv.dtype:
        raise ValueError(f"symmetric_product: expected a[..., m, n] and c[..., m, m] of one dtype, got "
                         f"{av.dtype.name}{list(av.shape)} and {cv.dtype.name}{list(cv.shape)}")
    return symmetric_product_p.bind(a, c, alpha=float(alpha), beta=float(beta),
                                    symmetrize_output=bool(symmetrize_output))


def _cholesky_update_fn(r, w):
    # R'^T R' = R^T R + w w^T, refactored through faer's Cholesky (O(n^3), where LAPACK-less JAX rotates in
    # O(n^2)); the factor is unique, so the results agree
    nd = get_aval(r).ndim
    wc = _st.expand_dims(w, (nd - 1,))
    a = _ew.add(_mm(_H(r), r), _mm(wc, _H(wc)))
    return _H(_tril(cholesky_p.bind(symmetrize(a))))


cholesky_update_p = _composite("cholesky_update", _cholesky_update_fn)


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of ``R^T R + w w^T`` for upper triangular ``r_matrix[n, n]`` and
    ``w_vector[n]``. Mirrors ``jax.lax.linalg.cholesky_update``."""
    r, w = _ew._as_operand(r_matrix), _ew._as_operand(w_vector)
    rv, wv = get_aval(r), get_aval(w)
    _float_aval("cholesky_update", rv)
    if rv.shape[-1] != rv.shape[-2] or wv.shape != rv.shape[:-1] or rv.dtype != wv.dtype:
        raise ValueError(f"cholesky_update: expected r[n, n] and w[n] of one dtype, got "
                         f"{rv.dtype.name}{list(rv.shape)} and {wv.dtype.name}{list(wv.shape)}")
    return cholesky_update_p.bind(r, w)


# schur: faer keeps its Schur reduction private, so the form is built from the eigendecomposition: the QR of
# the eigenvector matrix gives an orthonormal basis Q of nested invariant subspaces, and Q^H A Q is upper
# triangular (real inputs: each conjugate pair's real and imaginary parts span a real invariant plane, giving
# LAPACK's quasi-triangular real form). Exact for diagonalizable matrices; the accuracy follows the
# conditioning of the eigenvectors (a defective matrix gives a poor Q).

def _schur_fn(x, *, compute_schur_vectors):
    av = get_aval(x)
    nd = av.ndim
    n = av.shape[-1]
    if n == 0:
        return (x, x) if compute_schur_vectors else (x,)
    w, v = eig_p.bind(x, compute_left_eigenvectors=False, compute_right_eigenvectors=True, use_magma=None)
    rdt = _real_dt(av.dtype)
    re, im = _ew.real(w), _ew.imag(w)
    vshape = get_aval(re).shape
    scale = _st.broadcast_in_dim(_red.reduce_max(_ew.abs(w), (nd - 2,)), vshape, tuple(range(nd - 2)))
    scale = _ew.max(scale, _st.full(vshape, np.finfo(rdt).tiny, rdt))
    tol = _ew.mul(scale, _st.full(vshape, 1e3 * np.finfo(rdt).eps, rdt))
    if _is_complex(x):
        order = [re, im]
    else:
        # conjugate pairs adjacent, the +imag member first: sort by the real part (quantized, so a pair's
        # rounding differences do not separate it) and then by -imag
        q = _ew.round(_ew.mul(_ew.div(re, scale), _st.full(vshape, 2.0 ** 24 if rdt == np.float32 else 2.0 ** 36,
                                                                rdt)))
        order = [q, _ew.neg(im)]
    idx = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=vshape, dimension=nd - 2, sharding=None)
    sorted_ = _lib.sort(order + [re, im, idx], dimension=nd - 2, num_keys=2)
    re, im, perm = sorted_[-3], sorted_[-2], sorted_[-1]
    # the columns of v in sorted order: v @ P with P[i, j] = (perm[j] == i)
    shape = av.shape
    rows = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=nd - 2, sharding=None)
    P = _ew.convert_element_type(_ew.eq(rows, _row(perm, shape)), get_aval(v).dtype)
    v = _mm(v, P)
    if _is_complex(x):
        basis = v
    else:
        # the second member of a pair (imag < -tol) contributes its imaginary part, the others their real part
        second = _ew.lt(im, _ew.neg(tol))
        basis = _ew.select(_row(second, shape), _ew.imag(v), _ew.real(v))
    Q, _ = qr_p.bind(basis, full_matrices=True, pivoting=False, use_magma=None)
    T = _mm(_mm(_H(Q), x), Q)
    if _is_complex(x):
        T = _triu(T)
    else:
        # zero below the subdiagonal, and on it except inside a pair's 2x2 block (first member: imag > tol)
        first = _ew.gt(im, tol)
        cols = _st.iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=nd - 1, sharding=None)
        sub = _ew.eq(rows, _ew.add(cols, _st.full(shape, 1, np.int32)))
        keep = _ew.bitwise_or(_ew.le(rows, cols), _ew.bitwise_and(sub, _row(first, shape)))
        T = _ew.select(keep, T, _st.full(shape, 0, av.dtype))
    return (T, Q) if compute_schur_vectors else (T,)


schur_p = _composite("schur", _schur_fn, multiple_results=True)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """The Schur decomposition ``x = Q T Q^H`` of ``x[..., n, n]``: ``(T, Q)`` (``T`` alone without
    ``compute_schur_vectors``). Complex ``x``: ``T`` upper triangular with the eigenvalues on its diagonal;
    real ``x``: the real Schur form (``T`` quasi-triangular with a 2x2 block per complex conjugate pair,
    real orthogonal ``Q``). Built from the eigendecomposition (faer's Schur reduction is private): accurate
    for diagonalizable ``x``, losing accuracy as its eigenvectors become ill-conditioned. ``sort_eig_vals``
    and ``select_callable`` are unused, as in JAX. Mirrors ``jax.lax.linalg.schur``."""
    x = _ew._as_operand(x)
    av = get_aval(x)
    _float_aval("schur", av)
    if av.shape[-1] != av.shape[-2]:
        raise ValueError(f"schur requires square matrices, got shape {av.shape}")
    out = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))
    return list(out) if compute_schur_vectors else [out[0]]   # JAX's: a list, of one without the vectors


__all__ = ["cholesky", "cholesky_p", "cholesky_update", "cholesky_update_p", "eig", "eig_p", "eigh", "eigh_p",
           "hessenberg", "hessenberg_p", "householder_product", "householder_product_p", "lu", "lu_p",
           "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qr", "qr_p", "schur",
           "schur_p", "svd", "svd_p", "symmetric_product", "symmetric_product_p", "symmetrize", "triangular_solve",
           "triangular_solve_p", "tridiagonal", "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p"]
