"""L-BFGS (Nocedal & Wright's Algorithm 7.5, with Sorber et al.'s extension to complex x) as JAX 0.10.2's
``minimize(method='l-bfgs-experimental-do-not-rely-on-this')`` runs it: the two-loop recursion over the last
``maxcor`` (s, y) pairs, the strong-Wolfe line search of ``_line_search`` from step 1, and JAX's stopping
rules and status codes."""
from typing import Any, NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...api_ad import value_and_grad
from ._line_search import line_search

_HI = lax.Precision.HIGHEST


class LBFGSResults(NamedTuple):
    """``converged`` (gradient norm below ``gtol``), ``failed`` (stopped otherwise), ``k`` iterations,
    ``nfev``/``ngev``, ``x_k``/``f_k``/``g_k``, the history ``s_history``/``y_history`` (``maxcor`` rows,
    newest last), ``rho_history`` (1 / y.s), the initial-Hessian scale ``gamma``, ``status`` (0 converged,
    1 ``maxiter``, 2 ``maxfun``, 3 ``maxgrad``, 4 decrease below ``ftol``, 5 line search failed) and
    ``ls_status``."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09, gtol=1e-05,
                    maxfun=None, maxgrad=None, maxls=20):
    """Minimizes ``fun`` (1-D array -> real scalar) from ``x0`` (shape (n,); the complex steps are written as
    JAX's, but a complex ``x0`` raises ``NotImplementedError`` for now: cranax does not lower a ``while_loop``
    with complex carries yet). Stops when
    ``norm(grad, ord=norm) < gtol``, or (status > 0) when an iteration decreased f by less than ``ftol``, a
    line search (``maxls`` trials) failed, or the counts reached ``maxiter`` (default 200 n when no limit is
    given), ``maxfun`` or ``maxgrad``; as in JAX the limits are checked against the counts before each
    iteration's own, so ``maxiter`` allows one iteration more. Returns ``LBFGSResults``. Mirrors
    ``jax._src.scipy.optimize._lbfgs._minimize_lbfgs``."""
    n = len(x0)
    dt = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200
    maxiter, maxfun, maxgrad = (np.inf if m is None else m for m in (maxiter, maxfun, maxgrad))
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    f, zero = jnp.asarray(False), jnp.asarray(0)
    init = LBFGSResults(converged=f, failed=f, k=zero, nfev=jnp.asarray(1), ngev=jnp.asarray(1), x_k=x0, f_k=f0,
                        g_k=g0, s_history=jnp.zeros((maxcor, n), dt), y_history=jnp.zeros((maxcor, n), dt),
                        rho_history=jnp.zeros((maxcor,), dt), gamma=jnp.asarray(1.0, g0.dtype), status=zero,
                        ls_status=zero)

    def body(s):
        p = _two_loop(s)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        step = ls.a_k.astype(p.dtype) * p
        y = ls.g_k - s.g_k
        ys = jnp.real(jnp.dot(y, step, precision=_HI))
        gamma = ys / jnp.real(jnp.dot(jnp.conj(y), y, precision=_HI))
        # the last matching rule wins, as in JAX
        status = jnp.where(s.f_k - ls.f_k < ftol, 4, 0)
        status = jnp.where(s.ngev >= maxgrad, 3, status)
        status = jnp.where(s.nfev >= maxfun, 2, status)
        status = jnp.where(s.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return LBFGSResults(
            converged=converged, failed=(status > 0) & ~converged, k=s.k + 1, nfev=s.nfev + ls.nfev,
            ngev=s.ngev + ls.ngev, x_k=(s.x_k + step).astype(dt), f_k=ls.f_k.astype(s.f_k.dtype),
            g_k=ls.g_k.astype(s.g_k.dtype), s_history=_push(s.s_history, step), y_history=_push(s.y_history, y),
            rho_history=_push(s.rho_history, jnp.reciprocal(ys).astype(y.dtype)),
            gamma=gamma.astype(s.g_k.dtype), status=jnp.where(converged, 0, status), ls_status=ls.status)

    return lax.while_loop(lambda s: ~s.converged & ~s.failed, body, init)


def _push(history, new):
    """Drops the oldest row (the first) and appends ``new`` as the last."""
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _two_loop(s):
    """The search direction -H g from the stored pairs (only the last min(k, maxcor) rows are filled)."""
    m = s.rho_history.shape[0]
    used = jnp.minimum(s.k, m)
    rdt = s.rho_history.dtype

    def newest_first(j, carry):
        q, alphas = carry
        i = m - 1 - j
        a = s.rho_history[i] * jnp.real(jnp.dot(jnp.conj(s.s_history[i]), q, precision=_HI)).astype(rdt)
        return q - a * jnp.conj(s.y_history[i]), alphas.at[i].set(a)

    q, alphas = lax.fori_loop(0, used, newest_first, (-jnp.conj(s.g_k), jnp.zeros_like(s.rho_history)))

    def oldest_first(j, q):
        i = m - used + j
        b = s.rho_history[i] * jnp.real(jnp.dot(s.y_history[i], q, precision=_HI)).astype(rdt)
        return q + (alphas[i] - b) * s.s_history[i]

    return lax.fori_loop(0, used, oldest_first, s.gamma * q)
