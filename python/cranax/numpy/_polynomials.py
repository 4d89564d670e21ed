"""Polynomials that need more than coefficient arithmetic: ``poly`` (from roots), ``polydiv``, ``polyfit``
(least squares through ``linalg.lstsq``) and ``roots``. Coefficients are highest power first. Mirrors
``jax.numpy``."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import Tracer
from ..primitives import control_flow as _cf
from .linalg import eigvals as _eigvals, inv as _inv, lstsq as _lstsq
from ._creation import ones, zeros
from ._numeric import lexsort, vander
from ._products import convolve, dot, outer
from ._promotion import _to_inexact, asarray, astype
from ._reductions import max, sum
from ._shape_ops import atleast_1d, take, where
from ._ufuncs import abs, sqrt

__all__ = ["poly", "polydiv", "polyfit", "roots"]


def _inexact(name, *xs):
    """JAX's ``promote_dtypes_inexact``: one float (or complex) dtype, shapes left alone."""
    xs = [asarray(x) for x in xs]
    dt = _np.dtype(_dtypes.result_type(*xs))
    if dt.kind not in "fc" and dt.name != "bfloat16":
        dt = _to_inexact(dt, False)
    return [astype(x, dt) for x in xs]


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (a 1-D array), or of the
    characteristic polynomial of a square matrix (its eigenvalues' polynomial). ValueError for other
    shapes. Mirrors ``jax.numpy.poly``."""
    a = asarray(seq_of_zeros)
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] != 0:
        a = _eigvals(a)
    elif a.ndim == 1 or a.size == 0:
        pass
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    a, = _inexact("poly", a)
    a = a.reshape(-1)
    out = ones((1,), a.dtype)
    for k in range(a.shape[0]):
        out = convolve(out, lax.concatenate([ones((1,), a.dtype), -a[k:k + 1]], 0), mode="full")
    return out


def polydiv(u, v, *, trim_leading_zeros=False):
    """``(quotient, remainder)`` of the polynomial division ``u / v`` (float dtype; the remainder keeps
    ``u``'s length unless ``trim_leading_zeros``, which drops its leading near-zeros, |r| < sqrt(eps)).
    Mirrors ``jax.numpy.polydiv``."""
    u, v = _inexact("polydiv", u, v)
    if u.ndim != 1 or v.ndim != 1:
        raise ValueError("polydiv: u and v must be 1-D")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1. / v[0]
    q = zeros((builtin_max(m - n + 1, 1),), u.dtype)
    r = u
    for k in range(m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        tol = _np.sqrt(_np.finfo(u.dtype).eps)
        rv = _np.asarray(r)
        lead = int(_np.argmax(_np.abs(rv) >= tol)) if (_np.abs(rv) >= tol).any() else rv.shape[0]
        r = r[lead:]
    return q, r


def builtin_max(a, b):
    return a if a >= b else b


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial of degree ``deg`` through ``(x, y)`` (``y`` 1-D or 2-D: one fit per column),
    weighted by ``w``: the coefficients, or with ``full`` ``(c, residuals, rank, singular_values, rcond)``,
    or with ``cov`` ``(c, covariance)`` (scaled by residuals / (n - deg - 1) unless ``cov='unscaled'``).
    Columns of the Vandermonde matrix are scaled to unit norm before ``lstsq``. Mirrors
    ``jax.numpy.polyfit``."""
    if isinstance(deg, Tracer):
        raise TypeError("polyfit: deg must be a concrete integer (it sets the output shape)")
    deg = int(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    x, y = _inexact("polyfit", x, y)
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * float(_np.finfo(x.dtype).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w, = _inexact("polyfit", w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
    scale = sqrt(sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, _, rank, s = _lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        r2 = rhs - dot(lhs, c * (scale if c.ndim == 1 else scale[:, None]))
        resids = sum(r2 * r2, axis=0).reshape(-1) if rhs.ndim == 1 else sum(r2 * r2, axis=0)
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = _inv(dot(lhs.T, lhs)) / outer(scale, scale)
        if cov == "unscaled":
            fac = 1
        else:
            if len(x) <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            r2 = rhs - dot(lhs, c * (scale if c.ndim == 1 else scale[:, None]))
            fac = sum(r2 * r2, axis=0) / (len(x) - order)
        if y.ndim == 1:
            return c, vbase * fac
        return c, vbase[:, :, None] * fac
    return c


def _cmul(ar, ai, br, bi):
    return ar * br - ai * bi, ar * bi + ai * br


def _cdiv(ar, ai, br, bi):
    d = br * br + bi * bi
    return (ar * br + ai * bi) / d, (ai * br - ar * bi) / d


def _aberth(p):
    """The roots of the polynomial ``p`` (real, highest power first, p[0] != 0) by Aberth-Ehrlich iterations
    on (real, imaginary) pairs: ``(re, im)``."""
    n = p.shape[0] - 1
    dt = p.dtype
    a = p / p[0]
    radius = 1 + max(abs(a[1:]))   # Cauchy's bound: every root lies within
    ang = _np.arange(n) * (2 * _np.pi / n) + 0.4
    zr = radius * asarray(_np.cos(ang), dt)
    zi = radius * asarray(_np.sin(ang), dt)
    eye = asarray(_np.eye(n, dtype=bool))
    tiny = asarray(_np.finfo(dt).tiny, dt)

    def body(_, z):
        zr, zi = z
        pr, pi_ = ones((n,), dt), zeros((n,), dt)
        dr, di = zeros((n,), dt), zeros((n,), dt)
        for k in range(1, n + 1):
            dr, di = _cmul(dr, di, zr, zi)
            dr, di = dr + pr, di + pi_
            pr, pi_ = _cmul(pr, pi_, zr, zi)
            pr = pr + a[k]
        wr, wi = _cdiv(pr, pi_, where((dr == 0) & (di == 0), tiny, dr), di)
        xr, xi = zr[:, None] - zr[None, :], zi[:, None] - zi[None, :]
        xr = where(eye, 1, xr)
        xi = where(eye, 0, xi)
        ir, ii = _cdiv(ones((n, n), dt), zeros((n, n), dt), xr, xi)
        sr, si = sum(where(eye, 0, ir), axis=1), sum(where(eye, 0, ii), axis=1)
        tr, ti = _cmul(wr, wi, sr, si)
        denr, deni = 1 - tr, -ti
        denr = where((denr == 0) & (deni == 0), tiny, denr)
        cr, ci = _cdiv(wr, wi, denr, deni)
        nr, ni = zr - cr, zi - ci
        ok = (nr == nr) & (ni == ni)   # keep the last good iterate where a step went non-finite
        return where(ok, nr, zr), where(ok, ni, zi)

    steps = 200 if dt.itemsize == 8 else 80
    return _cf.fori_loop(0, steps, body, (zr, zi))


def roots(p, *, strip_zeros=True):
    """The complex roots of the polynomial with coefficients ``p`` (1-D, highest power first), largest
    real part first. ``strip_zeros`` drops leading zero coefficients (they must be concrete); without it
    their roots are NaN, at the end. Computed by Aberth-Ehrlich iterations (JAX takes the eigenvalues of the
    companion matrix; the roots agree to the dtype's accuracy, multiple roots to about its square root).
    Mirrors ``jax.numpy.roots``."""
    p, = _inexact("roots", p)
    p = atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input argument p must be 1-D.")
    if isinstance(p, Tracer):
        raise NotImplementedError("jnp.roots needs concrete coefficients in cranax (the degree sets the "
                                  "output's shape)")
    pv = _np.asarray(p)
    nz = _np.flatnonzero(pv != 0)
    lead = int(nz[0]) if nz.size else pv.shape[0]
    cdt = _np.result_type(pv.dtype, _np.complex64)
    q = p[lead:]
    trail = 0
    if q.shape[0]:
        qz = _np.flatnonzero(_np.asarray(q) != 0)
        trail = q.shape[0] - 1 - int(qz[-1])
        q = q[:q.shape[0] - trail]   # trailing zeros are roots at zero
    if q.shape[0] >= 2:
        zr, zi = _aberth(q)
        order = lexsort((-zi, -zr))
        out = lax.complex(take(zr, order), take(zi, order))
    else:
        out = zeros((0,), cdt)
    if trail:
        out = lax.concatenate([out, zeros((trail,), cdt)], 0)
    if not strip_zeros and lead:
        out = lax.concatenate([out, asarray(_np.full(lead, _np.nan + 1j * _np.nan, cdt))], 0)
    return astype(out, cdt)
