"""BFGS (Nocedal & Wright's Algorithm 6.1) as JAX 0.10.2's ``minimize(method='BFGS')`` runs it: a dense
inverse-Hessian estimate from the identity, the strong-Wolfe line search of ``_line_search`` started from the
previous decrease, and JAX's stopping rules and status codes."""
from typing import Any, NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...api_ad import value_and_grad
from ._line_search import line_search

_HI = lax.Precision.HIGHEST


class BFGSResults(NamedTuple):
    """``converged`` (gradient norm below ``gtol``), ``failed`` (the last line search failed), ``k``
    iterations, ``nfev``/``ngev``/``nhev`` evaluations, the iterate ``x_k`` with ``f_k``, ``g_k`` and the
    inverse-Hessian estimate ``H_k``, ``status`` (0 converged, 1 ``maxiter`` reached, 2 + the line search's
    status when it failed: 3 zoom failed, 5 its iteration limit) and ``line_search_status``."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimizes ``fun`` (1-D array -> real scalar) from ``x0`` (shape (n,)). Stops when
    ``norm(grad, ord=norm) < gtol``, after ``maxiter`` iterations (default 200 n) or when a line search
    (at most ``line_search_maxiter`` doubling trials) fails. Returns ``BFGSResults``. Mirrors
    ``jax._src.scipy.optimize.bfgs.minimize_bfgs``."""
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = x0.shape[0]
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    eye = jnp.eye(n, dtype=x0.dtype)
    zero = jnp.asarray(0)
    init = BFGSResults(converged=jnp.linalg.norm(g0, ord=norm) < gtol, failed=jnp.asarray(False), k=zero,
                       nfev=jnp.asarray(1), ngev=jnp.asarray(1), nhev=zero, x_k=x0, f_k=f0, g_k=g0, H_k=eye,
                       old_old_fval=f0 + jnp.linalg.norm(g0) / 2, status=zero, line_search_status=zero)

    def cond(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def body(s):
        p = -jnp.dot(s.H_k, s.g_k, precision=_HI)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=s.old_old_fval, gfk=s.g_k,
                         maxiter=line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - s.g_k
        rho = jnp.reciprocal(jnp.dot(y, step, precision=_HI))
        # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T, skipped when y.s = 0 (rho not finite)
        w = jnp.eye(n, dtype=rho.dtype) - rho * (step[:, None] * y[None, :])
        H = (jnp.dot(jnp.dot(w, s.H_k, precision=_HI), w.T, precision=_HI)
             + rho * step[:, None] * step[None, :])
        H = jnp.where(jnp.isfinite(rho), H, s.H_k)
        return s._replace(converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol, failed=ls.failed, k=s.k + 1,
                          nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + step, f_k=ls.f_k,
                          g_k=ls.g_k, H_k=H, old_old_fval=s.f_k, line_search_status=ls.status)

    s = lax.while_loop(cond, body, init)
    status = jnp.where(s.converged, 0, jnp.where(s.k == maxiter, 1,
                                                 jnp.where(s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)
