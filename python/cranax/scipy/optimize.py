"""``cranax.scipy.optimize``: mirrors ``jax.scipy.optimize`` (``minimize`` with ``method='BFGS'``)."""
from typing import Any, NamedTuple

from .. import lax
from .. import numpy as jnp
from ..api_ad import value_and_grad

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of ``minimize``: the solution ``x``, ``success`` (converged: gradient norm below
    ``gtol``), ``status`` (0 converged, 1 iteration limit, 3 line search failed), ``fun``, ``jac``,
    ``hess_inv`` (the BFGS inverse-Hessian estimate), evaluation counts ``nfev``/``njev`` and ``nit``."""
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
    """Minimizes ``fun(x, *args)`` (a scalar) over a 1-D ``x`` starting at ``x0``. ``method`` must be
    'BFGS' (case-insensitive; ``ValueError`` otherwise, as JAX). ``options``: ``maxiter`` (default
    200 * len(x0)), ``gtol`` (default 1e-5, or ``tol``), ``norm`` (default inf). The whole iteration is one
    ``while_loop`` (so it traces and jits); the line search backtracks from step 1 until the Armijo and
    curvature conditions hold (at most 30 halvings, then status 3). Gradients come from ``grad``. Mirrors
    ``jax.scipy.optimize.minimize``; its path differs from JAX's zoom line search, so iterates and
    counts differ (the minimizer it converges to is the same)."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"x0 must be a 1-D array, got shape {x0.shape}")
    if not jnp.issubdtype(x0.dtype, jnp.floating):
        x0 = x0.astype(jnp.float_)
    n = x0.shape[0]
    maxiter = int(options.get("maxiter", 200 * n))
    gtol = float(options.get("gtol", 1e-5 if tol is None else tol))
    norm = options.get("norm", jnp.inf)
    vg = value_and_grad(lambda x: fun(x, *args))
    dt = x0.dtype

    def gnorm(g):
        return jnp.max(jnp.abs(g)) if norm == jnp.inf else jnp.sum(jnp.abs(g) ** norm) ** (1.0 / norm)

    f0, g0 = vg(x0)
    eye = jnp.eye(n, dtype=dt)
    c1, c2 = 1e-4, 0.9

    def line_search(x, f, g, p):
        slope = jnp.dot(g, p)

        def cond(s):
            t, fn, gn, k, ok = s
            return (~ok) & (k < 30)

        def body(s):
            t, _, _, k, _ = s
            t = t * 0.5
            fn, gn = vg(x + t * p)
            ok = (fn <= f + c1 * t * slope) & (jnp.dot(gn, p) >= c2 * slope)
            return t, fn, gn, k + 1, ok

        f1, g1 = vg(x + p)
        ok1 = (f1 <= f + c1 * slope) & (jnp.dot(g1, p) >= c2 * slope)
        t, fn, gn, k, ok = lax.while_loop(cond, body, (jnp.asarray(1.0, dt), f1, g1, jnp.asarray(0), ok1))
        # no curvature-satisfying step: accept the best Armijo step if there is one
        return t, fn, gn, k + 1, ok | (fn < f)

    def cond(state):
        x, f, g, H, k, nfev, status = state
        return (status == -1) & (k < maxiter)

    def body(state):
        x, f, g, H, k, nfev, status = state
        p = -(H @ g)
        # not a descent direction (H lost definiteness): restart from the gradient
        bad = jnp.dot(p, g) >= 0
        p = jnp.where(bad, -g, p)
        H = jnp.where(bad, eye, H)
        t, fn, gn, evals, ok = line_search(x, f, g, p)
        s = t * p
        xn = x + s
        y = gn - g
        sy = jnp.dot(s, y)
        rho = jnp.where(sy > 0, 1.0 / jnp.where(sy > 0, sy, 1.0), 0.0)
        V = eye - rho * jnp.outer(s, y)
        Hn = jnp.where(sy > 0, V @ H @ V.T + rho * jnp.outer(s, s), H)
        conv = gnorm(gn) <= gtol
        status = jnp.where(~ok, 3, jnp.where(conv, 0, -1))
        x = jnp.where(ok, xn, x)
        f = jnp.where(ok, fn, f)
        g = jnp.where(ok, gn, g)
        H = jnp.where(ok, Hn, H)
        return x, f, g, H, k + 1, nfev + evals, status

    status0 = jnp.where(gnorm(g0) <= gtol, 0, -1)
    x, f, g, H, k, nfev, status = lax.while_loop(
        cond, body, (x0, f0, g0, eye, jnp.asarray(0), jnp.asarray(1), status0))
    status = jnp.where(status == -1, 1, status)
    return OptimizeResults(x=x, success=status == 0, status=status, fun=f, jac=g, hess_inv=H, nfev=nfev,
                           njev=nfev, nit=k)
