"""The strong-Wolfe line search that ``minimize``'s BFGS and L-BFGS use: Nocedal & Wright's Algorithm 3.5
(step doubling until the minimizer is bracketed) with the zoom of Algorithm 3.6 (cubic, then quadratic, then
bisection trial steps). The constants, the order of the tests, the iteration limits and the evaluation counts
are the ones JAX 0.10.2 uses (``jax._src.scipy.optimize.line_search``), so the iterates are JAX's; both loops
are ``while_loop``s of ``where`` selections (no ``cond``), which keeps them traceable, jittable and
vmappable."""
from typing import Any, NamedTuple

from ... import lax
from ... import numpy as jnp
from ...api_ad import value_and_grad

_HI = lax.Precision.HIGHEST
# zoom's safeguards: a cubic (quadratic) trial step must lie this fraction of the bracket inside it
_CUBIC_MARGIN, _QUAD_MARGIN = 0.2, 0.1
_ZOOM_MAXITER = 30


def _dot(a, b):
    return jnp.dot(a, b, precision=_HI)


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc); nan or out of
    the bracket when there is none (the caller checks)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    A = (dc ** 2 * rb + (-db ** 2) * rc) / denom
    B = ((-dc ** 3) * rb + db ** 3 * rc) / denom
    return a + (-B + jnp.sqrt(B * B - 3.0 * A * fpa)) / (3.0 * A)


def _quad_min(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa at a and (b, fb)."""
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * B)


class _Point(NamedTuple):
    """A trial step ``a`` with phi(a) = f(x + a p) and phi'(a)."""
    a: Any
    phi: Any
    dphi: Any


def _pick(mask, new, old):
    return type(old)(*(jnp.where(mask, n, o) for n, o in zip(new, old)))


def _zoom(phi_fn, armijo_fails, curvature_holds, lo, hi, g0, skip):
    """Shrinks the bracket [lo, hi] (``_Point``s; lo has the lower phi) until a step satisfies both strong
    Wolfe conditions. Returns (failed, star, g_star, nfev); the caller counts a zoom as done either way, as
    JAX does. It fails when the bracket is narrower than 1e-5 (below 64-bit floats; 1e-10 in float64) or
    after 30 trials; as in JAX the width is the signed ``hi.a - lo.a``, so a bracket whose hi step is the
    smaller fails after its first trial. ``skip`` (a bool) returns at once with nothing evaluated."""
    dt = lo.a.dtype
    threshold = 1e-10 if jnp.finfo(dt).bits >= 64 else 1e-5
    # rec: the previous hi (or lo), the third point of the cubic fit
    rec = (jnp.asarray((lo.a + hi.a) / 2.0, dt), (lo.phi + hi.phi) / 2.0)
    star = _Point(jnp.asarray(1.0, dt), lo.phi, lo.dphi)
    f = jnp.asarray(False)
    init = (f, f, jnp.asarray(0), lo, hi, rec, star, g0, jnp.asarray(0))

    def cond(s):
        done, failed = s[0], s[1]
        return (~done) & (~skip) & (~failed)

    def body(s):
        done, failed, j, lo, hi, rec, star, g_star, nfev = s
        width = hi.a - lo.a
        left, right = jnp.minimum(hi.a, lo.a), jnp.maximum(hi.a, lo.a)
        failed = failed | (width <= threshold)
        cub = _cubic_min(lo.a, lo.phi, lo.dphi, hi.a, hi.phi, rec[0], rec[1])
        use_cub = (j > 0) & (cub > left + _CUBIC_MARGIN * width) & (cub < right - _CUBIC_MARGIN * width)
        quad = _quad_min(lo.a, lo.phi, lo.dphi, hi.a, hi.phi)
        use_quad = (~use_cub) & (quad > left + _QUAD_MARGIN * width) & (quad < right - _QUAD_MARGIN * width)
        a_j = jnp.where(use_cub, cub, jnp.where(use_quad, quad, (lo.a + hi.a) / 2.0))
        phi_j, dphi_j, g_j = phi_fn(a_j)
        pj = _Point(a_j, phi_j.astype(lo.phi.dtype), dphi_j.astype(lo.dphi.dtype))
        # the four cases of Algorithm 3.6
        to_hi = armijo_fails(pj.a, pj.phi) | (pj.phi >= lo.phi)
        found = curvature_holds(pj.dphi) & ~to_hi
        to_lo = ~to_hi & ~found
        flip = (pj.dphi * (hi.a - lo.a) >= 0.0) & to_lo  # the old lo becomes hi
        new_rec = (jnp.where(to_hi | flip, hi.a, jnp.where(to_lo, lo.a, rec[0])),
                   jnp.where(to_hi | flip, hi.phi, jnp.where(to_lo, lo.phi, rec[1])))
        new_hi = _pick(to_hi, pj, _pick(flip, lo, hi))
        new_lo = _pick(to_lo, pj, lo)
        star = _pick(found, pj, star)
        g_star = jnp.where(found, g_j.astype(g_star.dtype), g_star)
        j = j + 1
        return (done | found, failed | (j >= _ZOOM_MAXITER), j, new_lo, new_hi, new_rec, star, g_star,
                nfev + 1)

    _, failed, _, _, _, _, star, g_star, nfev = lax.while_loop(cond, body, init)
    return failed, star, g_star, nfev


class LineSearchResults(NamedTuple):
    """``failed`` (no strong-Wolfe step found), ``nit``, ``nfev``/``ngev`` (evaluations, value and gradient
    together), ``k``, the step ``a_k``, ``f_k``/``g_k`` at ``x + a_k p`` and ``status`` (0 found, 1 zoom
    failed, 3 iteration limit)."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9, maxiter=20):
    """A step ``a`` along ``pk`` (1-D, same shape as ``xk``; assumed a descent direction) from ``xk`` that
    satisfies the strong Wolfe conditions f(xk + a pk) <= f(xk) + c1 a f'(0) and |f'(a)| <= -c2 f'(0).
    ``old_fval``/``gfk`` (f and its gradient at ``xk``) save an evaluation; ``old_old_fval`` (f at the
    previous iterate) sets the first trial step to min(1, 2.02 (f(xk) - old_old_fval) / f'(0)), else it is
    1. Trials double until the minimizer is bracketed (``maxiter`` trials), then zoom. Returns
    ``LineSearchResults``. Mirrors ``jax._src.scipy.optimize.line_search.line_search``."""
    xk, pk = jnp.asarray(xk), jnp.asarray(pk)
    if not jnp.issubdtype(xk.dtype, jnp.inexact):
        xk = xk.astype(jnp.float_)
    dt = jnp.result_type(xk, pk)
    xk, pk = xk.astype(dt), pk.astype(dt)
    adt = jnp.finfo(dt).dtype  # steps are real even for complex x
    vg = value_and_grad(f)

    def phi_fn(t):
        phi, g = vg(xk + jnp.asarray(t, dt) * pk)
        return phi, jnp.real(_dot(g, pk)), g

    evaluated = old_fval is None or gfk is None
    if evaluated:
        phi0, dphi0, gfk = phi_fn(0.0)
    else:
        phi0, dphi0 = jnp.asarray(old_fval), jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        first = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
        first = jnp.where(first > 1, 1.0, first).astype(adt)
    else:
        first = jnp.asarray(1.0, adt)

    def armijo_fails(a, phi):
        return phi > phi0 + c1 * a * dphi0

    def curvature_holds(dphi):
        return jnp.abs(dphi) <= -c2 * dphi0

    p0 = _Point(jnp.asarray(0.0, adt), phi0, dphi0)
    f = jnp.asarray(False)
    n0 = jnp.asarray(int(evaluated))
    init = (f, f, jnp.asarray(1), p0, n0, p0, gfk)

    def cond(s):
        done, failed, i = s[0], s[1], s[2]
        return (~done) & (i <= maxiter) & (~failed)

    def body(s):
        done, failed, i, prev, nfev, star, g_star = s
        a_i = jnp.where(i == 1, first, prev.a * 2.0)
        phi_i, dphi_i, g_i = phi_fn(a_i)
        pi = _Point(a_i, phi_i, dphi_i)
        # bracketed with the high end at a_i, or a_i is the step, or bracketed with the high end at prev
        zoom_up = armijo_fails(a_i, phi_i) | ((phi_i >= prev.phi) & (i > 1))
        here = curvature_holds(dphi_i) & ~zoom_up
        zoom_down = (dphi_i >= 0.0) & ~zoom_up & ~here
        lo, hi = _pick(zoom_up, prev, pi), _pick(zoom_up, pi, prev)
        z_failed, z_star, z_g, z_nfev = _zoom(phi_fn, armijo_fails, curvature_holds, lo, hi, gfk,
                                              ~(zoom_up | zoom_down))
        zoomed = zoom_up | zoom_down
        star = _pick(here, pi, _pick(zoomed, z_star, star))
        g_star = jnp.where(here, g_i, jnp.where(zoomed, z_g, g_star))
        return (done | zoomed | here, failed | (zoomed & z_failed), i + 1, pi, nfev + 1 + z_nfev, star,
                g_star)

    done, failed, i, _, nfev, star, g_star = lax.while_loop(cond, body, init)
    status = jnp.where(failed, 1, jnp.where(i > maxiter, 3, 0))
    a_k = star.a
    if jnp.finfo(adt).bits != 64:
        # a step this small would stall below 64-bit floats: JAX floors it at 1e-8
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=failed | ~done, nit=i - 1, nfev=nfev, ngev=nfev, k=i, a_k=a_k,
                             f_k=star.phi, g_k=g_star, status=status)
