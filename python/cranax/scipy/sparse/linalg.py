"""``cranax.scipy.sparse.linalg``: iterative solvers of ``A x = b`` for a linear operator ``A`` given as a
function, a square matrix or an object with ``@``. Mirrors ``jax.scipy.sparse.linalg``.

Each solve is JAX's algorithm step for step (so it takes JAX's number of iterations and gives its values): a
``lax.while_loop`` inside ``lax.custom_linear_solve``, whose implicit rules give the derivatives (another solve
of the same kind, never differentiation through the iterations). ``b``/``x0`` may be any pytree of arrays;
every inner product is over all leaves, at ``Precision.HIGHEST``.
"""
import functools as _functools
import operator as _operator

import numpy as _np

from ... import dtypes as _dtypes
from ... import lax as _lax
from ... import numpy as _jnp
from ...array import Array as _Array, device_put as _device_put
from ...core import Tracer as _Tracer
from ...tree_util import (Partial as _Partial, tree_leaves as _leaves, tree_map as _tmap,
                          tree_structure as _structure)
from .. import linalg as _sl

__all__ = ["cg", "bicgstab", "gmres"]

_HI = _lax.Precision.HIGHEST


def _dot(a, b):
    return _jnp.dot(a, b, precision=_HI)


def _re_dot(x, y):
    """The real part of <x, y> (the imaginary cross terms left out): the solvers only take it of z^H M z
    with M Hermitian positive definite, which is real."""
    out = _jnp.vdot(_jnp.real(x), _jnp.real(y), precision=_HI)
    if _jnp.iscomplexobj(x) or _jnp.iscomplexobj(y):
        out = out + _jnp.vdot(_jnp.imag(x), _jnp.imag(y), precision=_HI)
    return out


def _re_dot_tree(x, y):
    return sum(_leaves(_tmap(_re_dot, x, y)))


def _dot_tree(x, y):
    return sum(_leaves(_tmap(lambda a, b: _jnp.vdot(a, b, precision=_HI), x, y)))


def _norm(x):
    return _jnp.sqrt(sum(_re_dot(v, v) for v in _leaves(x)))


def _scale(s, tree):
    return _tmap(lambda v: s * v, tree)


def _add(x, y):
    return _tmap(_operator.add, x, y)


def _sub(x, y):
    return _tmap(_operator.sub, x, y)


@_Partial
def _identity(x):
    return x


def _as_operator(f):
    """A function computing ``f @ x`` for a square matrix (or matmul-able object) ``f``; a function as is."""
    if callable(f):
        return f
    if isinstance(f, (_np.ndarray, _Array, _Tracer)):
        if _np.ndim(f) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return _functools.partial(_dot, f)
    if hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
        return _functools.partial(_operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _result_dtype(tree):
    return _dtypes.result_type(*_leaves(tree))


# ----------------------------------------------------------------------------------------------- cg, bicgstab

def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned conjugate gradients; stops when |r|^2 <= max(tol^2 |b|^2, atol^2) (SciPy's non-legacy
    test; with no preconditioner |r|^2 is the carried gamma) or after ``maxiter`` steps."""
    limit = _jnp.maximum(_jnp.square(tol) * _re_dot_tree(b, b), _jnp.square(atol))
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dtype = _result_dtype(z0)
    gamma0 = _re_dot_tree(r0, z0).astype(dtype)

    def cond(state):
        _, r, gamma, _, k = state
        rs = gamma.real if M is _identity else _re_dot_tree(r, r)
        return (rs > limit) & (k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _re_dot_tree(p, Ap).astype(dtype)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, Ap))
        z = M(r)
        gamma_new = _re_dot_tree(r, z).astype(dtype)
        p = _add(z, _scale(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    return _lax.while_loop(cond, step, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned BiCGSTAB with JAX's stopping test and breakdown exits (the step counter set to -10
    when rho vanishes, -11 when omega or alpha does)."""
    limit = _jnp.maximum(_jnp.square(tol) * _re_dot_tree(b, b), _jnp.square(atol))
    r0 = _sub(b, A(x0))
    one = _jnp.asarray(1, dtype=_result_dtype(b))

    def cond(state):
        r, k = state[1], state[-1]
        return (_re_dot_tree(r, r) > limit) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _dot_tree(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _dot_tree(rhat, q)
        s = _sub(r, _scale(alpha, q))
        done = _re_dot_tree(s, s) < limit
        shat = M(s)
        t = A(shat)
        omega = _dot_tree(t, s) / _dot_tree(t, t)
        x = _tmap(_functools.partial(_jnp.where, done), _add(x, _scale(alpha, phat)),
                  _add(x, _add(_scale(alpha, phat), _scale(omega, shat))))
        r = _tmap(_functools.partial(_jnp.where, done), s, _sub(s, _scale(omega, t)))
        k = _jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = _jnp.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    return _lax.while_loop(cond, step, (x0, r0, r0, one, one, one, r0, r0, 0))[0]


def _shapes(tree):
    return [_np.shape(v) for v in _leaves(tree)]


def _check_x0(x0, b, shapes):
    if _structure(x0) != _structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {_structure(x0)} vs {_structure(b)}")
    if shapes and _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")


def _isolve(solver, A, b, x0, tol, atol, maxiter, M, symmetric_if_real):
    if x0 is None:
        x0 = _tmap(_jnp.zeros_like, b)
    b, x0 = _device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(_np.size(v) for v in _leaves(b))   # SciPy's default
    M = _identity if M is None else _as_operator(M)
    A = _as_operator(A)
    _check_x0(x0, b, True)
    solve = _functools.partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # a real positive definite operator is symmetric: its transpose solve is the same solve
    symmetric = symmetric_if_real and not any(_jnp.iscomplexobj(v) for v in _leaves(b))
    x = _lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` by conjugate gradients, for ``A`` Hermitian positive definite. Returns ``(x,
    None)`` (JAX reports no convergence information), ``x`` with ``b``'s structure.

    ``A``/``M``: a function ``x -> A x`` (of ``b``'s structure and shapes), a square 2-D array or an object
    with ``@``; ``M`` is a preconditioner approximating ``A``'s inverse. ``b``/``x0``: arrays or pytrees of
    arrays of any shape (``x0`` defaults to zeros). Stops when ``norm(r) <= max(tol * norm(b), atol)`` or after
    ``maxiter`` steps (default ``10 * b.size``). Derivatives (``jvp``/``grad`` in ``b`` and in arrays the
    operator closes over) come from another ``cg`` solve through ``lax.custom_linear_solve``. Errors:
    ``ValueError`` for a non-square matrix or an ``x0`` whose structure or shapes differ from ``b``'s;
    ``TypeError`` for an operator that is neither. Mirrors ``jax.scipy.sparse.linalg.cg``."""
    return _isolve(_cg_solve, A, b, x0, tol, atol, maxiter, M, True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` by BiCGSTAB, for any (nonsymmetric) ``A``. Arguments, result ``(x, None)``, stopping
    test, derivatives (another ``bicgstab`` solve, of the transposed system) and errors as :func:`cg`'s. A
    breakdown (a zero inner product) ends the iteration with the current ``x``. Mirrors
    ``jax.scipy.sparse.linalg.bicgstab``."""
    return _isolve(_bicgstab_solve, A, b, x0, tol, atol, maxiter, M, False)


# ----------------------------------------------------------------------------------------------- gmres

def _safe_normalize(x, thresh=None):
    """``(x / norm(x), norm(x))``, or zeros and 0 when the norm is at most ``thresh`` (default: the dtype's
    machine epsilon)."""
    norm = _norm(x)
    dtype = _result_dtype(x)
    if thresh is None:
        thresh = _dtypes.finfo(norm.dtype).eps
    thresh = _jnp.real(_jnp.asarray(thresh).astype(dtype))
    ok = norm > thresh
    norm_c = norm.astype(dtype)
    unit = _tmap(lambda v: _jnp.where(ok, v / norm_c, 0.0), x)
    return unit, _jnp.where(ok, norm, 0.0)


def _project(Q, v):
    """Q^H v over all leaves (each leaf of Q has one more, last, axis: the columns)."""
    parts = _tmap(lambda X, y: _jnp.einsum("...n,...->n", X.conj(), y, precision=_HI), Q, v)
    return _functools.reduce(_operator.add, _leaves(parts))


def _gram_schmidt(Q, x, xnorm, passes=2):
    """``x`` orthogonalized against Q's orthonormal columns by classical Gram-Schmidt, repeated (up to
    ``passes`` times) while the overlaps are not small next to ``x``'s norm ("twice is enough"). Returns the
    new vector and the overlaps."""
    Q0 = _leaves(Q)[0]
    r = _jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    root2 = _jnp.sqrt(2.0)

    def one_pass(state):
        k, q, r, qnorm_scaled = state
        h = _project(Q, q)
        q = _sub(q, _tmap(lambda X: _dot(X, h), Q))
        r = _add(r, h)
        # the norm that decides on another pass is re-measured only while another pass may follow
        qnorm_scaled = _lax.cond(k < passes - 1, lambda q: _safe_normalize(q)[1] / root2,
                                 lambda q: qnorm_scaled, q)
        return k + 1, q, r, qnorm_scaled

    def again(state):
        k, _, r, qnorm_scaled = state
        return (k < passes - 1) & (_safe_normalize(r)[1] < qnorm_scaled)

    state = one_pass((0, x, r, xnorm / root2))
    _, q, r, _ = _lax.while_loop(again, one_pass, state)
    return q, r


def _arnoldi_step(k, A, M, V, H):
    """Adds the k-th Krylov vector M(A(V[:, k])), orthonormalized, as V[:, k+1] and its overlaps as row k of
    H; a vector that vanishes (below eps times its norm before orthogonalization) is a breakdown: an
    invariant subspace."""
    dtype = _result_dtype(V)
    eps = _dtypes.finfo(dtype).eps
    v = M(A(_tmap(lambda X: X[..., k], V)))
    _, norm0 = _safe_normalize(v)
    v, h = _gram_schmidt(V, v, norm0)
    unit, norm1 = _safe_normalize(v, thresh=eps * norm0)
    V = _tmap(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    h = h.at[k + 1].set(norm1.astype(dtype))
    return V, H.at[k, :].set(h), norm1 == 0.0


def _rotate(H, i, cs, sn):
    x, y = H[i], H[i + 1]
    H = H.at[i].set(cs.conj() * x - sn.conj() * y)
    return H.at[i + 1].set(sn * x + cs * y)


def _givens(a, b):
    """The rotation (cs, sn) that zeroes ``b`` against ``a``."""
    b_zero = abs(b) == 0
    a_small = abs(a) < abs(b)
    t = -_jnp.where(a_small, a, b) / _jnp.where(a_small, b, a)
    r = _lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = _jnp.where(b_zero, 1, _jnp.where(a_small, r * t, r))
    sn = _jnp.where(b_zero, 0, _jnp.where(a_small, r, r * t))
    return cs, sn


def _givens_row(row, givens, k):
    """Row ``k`` of H with the k earlier rotations applied, then the new rotation that zeroes its (k+1)-th
    entry (stored in ``givens[k]``) applied too."""
    row = _lax.fori_loop(0, k, lambda i, row: _rotate(row, i, givens[i, 0], givens[i, 1]), row)
    cs, sn = _givens(row[k], row[k + 1])
    givens = givens.at[k, :].set(_jnp.stack([cs, sn]))
    return _rotate(row, k, cs, sn), givens


def _krylov_basis(unit_residual, restart):
    return _tmap(lambda x: _jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


def _finish(A, M, b, x0, V, y):
    x = _add(x0, _tmap(lambda X: _dot(X[..., :-1], y), V))
    unit, norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit, norm


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One GMRES cycle building the QR factors of the Hessenberg matrix with Givens rotations as the Arnoldi
    process goes, so it stops as soon as the estimated residual is at most ``ptol``."""
    V = _krylov_basis(unit_residual, restart)
    dtype = _result_dtype(b)
    R = _jnp.eye(restart, restart + 1, dtype=dtype)
    givens = _jnp.zeros((restart, 2), dtype=dtype)
    beta = _jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def cond(state):
        return (state[0] < restart) & (state[1] > ptol)

    def step(state):
        k, _, V, R, beta, givens = state
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row, givens = _givens_row(H[k, :], givens, k)
        R = R.at[k, :].set(row)
        beta = _rotate(beta, k, givens[k, 0], givens[k, 1])
        return k + 1, abs(beta[k + 1]), V, R, beta, givens

    _, _, V, R, beta, _ = _lax.while_loop(cond, step, (0, residual_norm, V, R, beta, givens))
    y = _sl.solve_triangular(R[:, :-1].T, beta[:-1])
    return _finish(A, M, b, x0, V, y)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One GMRES cycle running the whole Arnoldi process (up to a breakdown), then the least-squares
    problem by its normal equations (a Cholesky solve)."""
    V = _krylov_basis(unit_residual, restart)
    dtype = _result_dtype(b)
    H = _jnp.eye(restart, restart + 1, dtype=dtype)

    def cond(state):
        return (state[3] < restart) & ~state[2]

    def step(state):
        V, H, _, k = state
        V, H, broke = _arnoldi_step(k, A, M, V, H)
        return V, H, broke, k + 1

    V, H, _, _ = _lax.while_loop(cond, step, (V, H, False, 0))
    beta = _jnp.zeros(restart + 1, dtype=H.dtype).at[0].set(residual_norm.astype(dtype))
    Ht = H.T
    Hh = Ht.T.conj()
    y = _sl.solve(_dot(Hh, Ht), _dot(Hh, beta), assume_a="pos")
    return _finish(A, M, b, x0, V, y)


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle):
    """Restarted GMRES: cycles from the last solution until ``norm(M(b - A x)) <= atol`` or ``maxiter``
    cycles."""
    unit, norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond(state):
        return (state[1] < maxiter) & (state[3] > atol)

    def step(state):
        x, k, unit, norm = state
        x, unit, norm = cycle(A, b, x, unit, norm, ptol, restart, M)
        return x, k + 1, unit, norm

    return _lax.while_loop(cond, step, (x0, 0, unit, norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method="batched"):
    """Solves ``A x = b`` by restarted GMRES, for any ``A``. Returns ``(x, info)``: ``x`` with ``b``'s
    structure, ``info`` an int32 array, -1 when ``x`` holds NaNs, else 0.

    ``A``/``M``/``b``/``x0`` as for :func:`cg`. Each cycle builds a Krylov space of dimension ``restart``
    (at most ``b``'s size, default 20) and projects onto it; up to ``maxiter`` cycles (default ``10 *
    b.size``) run until ``norm(M(b - A x)) <= max(tol * norm(b), atol)``. ``solve_method``: 'batched'
    (default: the whole Arnoldi process, then a least-squares solve) or 'incremental' (QR by Givens
    rotations during the process, stopping early within a cycle). Derivatives: another ``gmres`` solve
    through ``lax.custom_linear_solve``. Errors: ``ValueError`` for another ``solve_method``, a non-square
    matrix or an ``x0`` of another structure; ``TypeError`` for an operator that is neither a function nor a
    matrix. Mirrors ``jax.scipy.sparse.linalg.gmres``."""
    if x0 is None:
        x0 = _tmap(_jnp.zeros_like, b)
    M = _identity if M is None else _as_operator(M)
    A = _as_operator(A)
    b, x0 = _device_put((b, x0))
    size = sum(_np.size(v) for v in _leaves(b))
    if maxiter is None:
        maxiter = 10 * size   # SciPy's default
    restart = min(restart, size)
    _check_x0(x0, b, False)
    b_norm = _norm(b)
    atol = _jnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * _jnp.minimum(1.0, atol / b_norm)
    cycles = {"incremental": _gmres_incremental, "batched": _gmres_batched}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")
    cycle = cycles[solve_method]

    def solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, cycle)
    x = _lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = _jnp.where(_jnp.isnan(_norm(x)), -1, 0)
    return x, info
