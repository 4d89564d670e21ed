"""``minimize``: the SciPy-style front of the BFGS and L-BFGS solvers, with JAX 0.10.2's result fields."""
from typing import Any, NamedTuple

from ... import numpy as jnp
from ._bfgs import minimize_bfgs
from ._lbfgs import _minimize_lbfgs


class OptimizeResults(NamedTuple):
    """The result of ``minimize``: the solution ``x``, ``success`` (converged and no failure), ``status``
    (0 converged; BFGS: 1 ``maxiter`` reached, 3 zoom failed, 5 line-search iteration limit, -1 undefined;
    L-BFGS: 1 ``maxiter``, 2 ``maxfun``, 3 ``maxgrad``, 4 decrease below ``ftol``, 5 line search failed),
    ``fun``, ``jac``, ``hess_inv`` (BFGS's inverse-Hessian estimate; None for L-BFGS), evaluation counts
    ``nfev``/``njev`` and ``nit``. Mirrors ``jax.scipy.optimize.OptimizeResults``."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimizes ``fun(x, *args)`` (a real scalar) over a 1-D ``x`` of shape (n,) starting at ``x0``.
    ``method``: 'BFGS' or 'l-bfgs-experimental-do-not-rely-on-this' (case-insensitive; ``ValueError``
    otherwise). ``options`` are the solver's keywords (a ``TypeError`` names an unknown one): BFGS takes
    ``maxiter`` (200 n), ``norm`` (inf), ``gtol`` (1e-5), ``line_search_maxiter`` (10); L-BFGS takes
    ``maxiter``, ``norm``, ``maxcor`` (10), ``ftol`` (2.2e-9), ``gtol``, ``maxfun``, ``maxgrad``, ``maxls``
    (20). ``tol`` is accepted and unused, as in JAX. Gradients come from ``value_and_grad``; the whole
    solve is ``while_loop``s, so it jits and vmaps, and it follows JAX's iterates and counts. ``TypeError``
    when ``args`` is not a tuple, ``ValueError`` when ``x0`` is not 1-D. Mirrors
    ``jax.scipy.optimize.minimize``."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"x0 must be a 1-D array, got shape {x0.shape}")

    def f(x):
        return fun(x, *args)

    m = method.lower()
    if m == "bfgs":
        r = minimize_bfgs(f, x0, **options)
        hess_inv = r.H_k
    elif m == "l-bfgs-experimental-do-not-rely-on-this":
        r = _minimize_lbfgs(f, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status, fun=r.f_k, jac=r.g_k,
                           hess_inv=hess_inv, nfev=r.nfev, njev=r.ngev, nit=r.k)
