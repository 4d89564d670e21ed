"""Dense linear algebra primitives (``rust/ir/linalg.rs``, run through ``faer`` on the CPU; the GPU backend
runs them on the host): ``cholesky``, ``lu``, ``lu_pivots_to_permutation``, ``qr``, ``eigh``, ``svd`` and
``triangular_solve``. Each acts on the last two axes; leading axes are a batch. Each primitive has its lax
wrapper, abstract eval, wire params, jvp rule (JAX's), transpose rule where linear and batching rule in this
file. Mirrors ``jax.lax.linalg``. float32/float64 (complex dtypes join in ``_float_aval``).
"""
import numpy as np

from ..core import ShapedArray, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from . import elementwise as _ew
from . import library as _lib
from . import reductions as _red
from . import structural as _st
from .standard import standard_primitive

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# ----------------------------------------------------------------------------------------------- helpers

def _float_aval(name, a, rank=2):
    if a.dtype not in _FLOATS:
        raise TypeError(f"{name} requires a float32 or float64 operand, got {a.dtype.name}")
    if a.ndim < rank:
        raise ValueError(f"{name} requires an operand of rank >= {rank}, got shape {a.shape}")
    return a.shape[:-2], a.shape[-2], a.shape[-1]


def _T(x):
    """Swaps the last two axes."""
    nd = get_aval(x).ndim
    return _st.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


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
    """The lower Cholesky factor ``L`` of the symmetric positive definite ``x[..., n, n]`` (float32/float64),
    ``x = L @ L.T``; a matrix that is not positive definite gives NaNs (no exception). Symmetrizes
    ``(x + x.T) / 2`` first unless ``symmetrize_input=False`` (then only the lower triangle is read).
    Raises TypeError for other dtypes, ValueError for non-square operands. Mirrors
    ``jax.lax.linalg.cholesky``."""
    x = _ew._as_operand(x)
    _cholesky_abstract(get_aval(x))   # a non-square operand fails here, not in symmetrize
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(cholesky_p.bind(x))


def symmetrize(x):
    """``(x + x^T) / 2`` over the last two axes."""
    av = get_aval(x)
    return _ew.div(_ew.add(x, _T(x)), _st.full(av.shape, 2, av.dtype))


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
    tmp = triangular_solve(L, t, left_side=False, transpose_a=True, lower=True)
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
    return tuple(lu_p.bind(_ew._as_operand(x)))


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
    qt_dx_rinv = _mm(_T(q), dx_rinv)
    low = _tril(qt_dx_rinv, -1)
    do = _ew.sub(low, _T(low))                        # skew-symmetric
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
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (n,), a.dtype)]


eigh_p = standard_primitive("eigh", _eigh_abstract, multiple_results=True,
                            wire=lambda eqn: _bools(eqn, "lower", "sort_eigenvalues"))


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, subset_by_index=None):
    """Eigendecomposition of the symmetric ``x[..., n, n]``: ``(v, w)`` with eigenvalues ``w[..., n]``
    ascending and eigenvectors as the columns of ``v`` (each up to sign), ``x @ v == v * w``. Reads the
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
    eye = _eye_like(v)
    # F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it
    F = _ew.sub(_ew.div(_st.full(shape, 1, get_aval(v).dtype),
                        _ew.add(eye, _ew.sub(_row(w, shape), _col(w, shape)))), eye)
    vt_dot_v = _mm(_mm(_T(v), t), v)
    dv = _mm(v, _ew.mul(F, vt_dot_v))
    dw = _lib_diag(vt_dot_v)
    return [v, w], [dv, dw]


_ad.jvp_rules[eigh_p] = _eigh_jvp
_batching.batching_rules[eigh_p] = _batch_front(eigh_p, 2)


# ----------------------------------------------------------------------------------------------- svd

def _svd_abstract(a, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    batch, m, n = _float_aval("svd", a)
    k = min(m, n)
    s = ShapedArray(batch + (k,), a.dtype)
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
    V = _T(Vt)
    dS = _mm(_mm(_T(U), dA), V)
    ds = _lib_diag(dS)
    if not compute_uv:
        return outs, [ds]
    dt = get_aval(s).dtype
    kk = get_aval(dS).shape
    s_row, s_col = _row(s, kk), _col(s, kk)
    eye = _eye_like(dS)
    one = _st.full(kk, 1, dt)
    s_diffs = _ew.mul(_ew.add(s_row, s_col), _ew.sub(s_row, s_col))
    F = _ew.sub(_ew.div(one, _ew.add(s_diffs, eye)), eye)
    dSS = _ew.mul(s_row, dS)
    SdS = _ew.mul(s_col, dS)
    dU = _mm(U, _ew.mul(F, _ew.add(dSS, _T(dSS))))
    dV = _mm(V, _ew.mul(F, _ew.add(SdS, _T(SdS))))
    if m > n:
        dAV = _mm(dA, V)
        sh = get_aval(dAV).shape
        dU = _ew.add(dU, _ew.div(_ew.sub(dAV, _mm(U, _mm(_T(U), dAV))), _row(s, sh)))
    if n > m:
        dAHU = _mm(_T(dA), U)
        sh = get_aval(dAHU).shape
        dV = _ew.add(dV, _ew.div(_ew.sub(dAHU, _mm(V, _mm(Vt, dAHU))), _row(s, sh)))
    return outs, [ds, dU, _T(dV)]


_ad.jvp_rules[svd_p] = _svd_jvp
def _svd_batch_rule(vals, dims, **params):
    size = _batching.axis_size_of(vals, dims)
    out = svd_p.bind(_batching.bdim_at_front(vals[0], dims[0], size), **params)
    return out, [0] * len(out)


_batching.batching_rules[svd_p] = _svd_batch_rule

__all__ = ["cholesky", "cholesky_p", "eigh", "eigh_p", "lu", "lu_p", "lu_pivots_to_permutation",
           "lu_pivots_to_permutation_p", "qr", "qr_p", "svd", "svd_p", "symmetrize", "triangular_solve",
           "triangular_solve_p"]
