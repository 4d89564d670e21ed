"""``jax.experimental.ode``: ``odeint``, an adaptive Dormand-Prince (RK45) integrator with dense output, and
its gradient by the adjoint method (the augmented system integrated backwards in time between the output
times, Chen et al. 2018, appendix C). The step-size control (Hairer-Norsett-Wanner's initial step, the
RMS error ratio, the safety-factor update) follows JAX's, so the solutions agree with JAX's to within the
tolerances. The helpers JAX's module exposes (``runge_kutta_step``, ``interp_fit_dopri``, ...) are here too
with the same signatures.
"""
import builtins
import operator
from collections.abc import Callable
from functools import partial

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..api import jit
from ..api_ad import vjp
from ..api_vmap import vmap
from ..core import Tracer, get_aval
from ..custom_derivatives import custom_vjp
from ..flatten_util import ravel_pytree
from ..interpreters.eval import eval_jaxpr
from ..interpreters.partial_eval import trace_to_jaxpr
from .._pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from .._util import safe_map, safe_zip  # jax._src.util's, which JAX's ode module imports

__all__ = ["odeint", "runge_kutta_step", "interp_fit_dopri", "fit_4th_order_polynomial", "initial_step_size",
           "mean_error_ratio", "optimal_step_size", "abs2", "ravel_first_arg", "ravel_first_arg_",
           "promote_dtypes_inexact", "ravel_pytree", "tree_leaves", "tree_map", "safe_map", "safe_zip", "map",
           "zip", "partial", "Callable"]



map = safe_map
zip = safe_zip


def promote_dtypes_inexact(*args):
    """The arrays converted to their common inexact dtype (float for integer inputs)."""
    dt = jnp.result_type(*args)
    if not jnp.issubdtype(dt, jnp.inexact):
        dt = jnp.result_type(dt, jnp.float32) if jnp.issubdtype(dt, jnp.bool_) else jnp.result_type(float)
    return [jnp.asarray(a, dt) for a in args]


def ravel_first_arg(f, unravel, debug_info=None):
    """``f(y, *args)`` as a function of the flat vector of ``y`` returning a flat vector."""
    return ravel_first_arg_(f, unravel)


def ravel_first_arg_(f, unravel):
    def flat_f(y_flat, *args):
        return ravel_pytree(f(unravel(y_flat), *args))[0]
    return flat_f


# ----------------------------------------------------------------------------------------------- Dormand-Prince

# the nodes, the stage coefficients (lower triangle), the 5th-order weights and weights(5th) - weights(4th)
_C = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1.)
_A = ((1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0., 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B5 = (35 / 384, 0., 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.)
_BERR = (35 / 384 - 1951 / 21600, 0., 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
         -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
# weights giving y at the step's midpoint (Shampine's dense output for DOPRI5)
_BMID = (6025192743 / 30085553152 / 2, 0., 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
         187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _weighted(w, k, dtype):
    """``sum_j w[j] * k[j]`` over the 7 stage rows of ``k`` (a (7, n) array), in ``dtype``."""
    return jnp.dot(jnp.asarray(np.asarray(w, np.float64), dtype), k, precision=lax.Precision.HIGHEST)


def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step of size ``dt`` from ``(t0, y0)`` with ``f0 = func(y0, t0)`` (FSAL). Returns
    ``(y1, f1, y1_error, k)``: the 5th-order solution, ``func(y1, t0 + dt)``, the embedded error estimate
    and the (7, n) stage derivatives."""
    dtype = get_aval(f0).dtype
    h = dt.astype(dtype)
    ks = [f0]
    for i in range(6):
        k = jnp.stack(ks + [jnp.zeros_like(f0)] * (7 - len(ks)))
        w = tuple(_A[i]) + (0.,) * (7 - len(_A[i]))
        yi = y0 + h * _weighted(w, k, dtype)
        ks.append(func(yi, t0 + dt * jnp.asarray(_C[i], get_aval(dt).dtype)))
    k = jnp.stack(ks)
    y1 = h * _weighted(_B5, k, dtype) + y0
    err = h * _weighted(_BERR, k, dtype)
    return y1, ks[-1], err, k


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """Coefficients ``(a, b, c, d, e)`` of the quartic in s in [0, 1] matching y and dy/dt at both ends and
    y at the midpoint of a step of size ``dt``."""
    dt = dt.astype(get_aval(y0).dtype)
    a = -2. * dt * dy0 + 2. * dt * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * dt * dy0 - 3. * dt * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * dt * dy0 + dt * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    d = dt * dy0
    e = y0
    return a, b, c, d, e


def interp_fit_dopri(y0, y1, k, dt):
    """The (5, n) dense-output coefficients of a Dormand-Prince step (for ``jnp.polyval``)."""
    dtype = get_aval(y0).dtype
    y_mid = y0 + dt.astype(dtype) * _weighted(_BMID, k, dtype)
    return jnp.stack(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """The first step's size (Hairer, Norsett and Wanner, Solving ODEs I, sec. II.4)."""
    y0, f0 = promote_dtypes_inexact(y0, f0)
    dtype = y0.dtype
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


def abs2(x):
    """``|x|**2`` elementwise (real for complex ``x``)."""
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """The RMS over components of the error estimate relative to ``atol + rtol * max(|y0|, |y1|)``."""
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    ratio = error_estimate / tol.astype(get_aval(error_estimate).dtype)
    return jnp.sqrt(jnp.mean(abs2(ratio)))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5.0):
    """The next step: ``last_step * safety * ratio**(-1/order)``, growing at most ``ifactor`` times and (after
    a rejected step) shrinking at most to ``dfactor`` times."""
    dfactor = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


# ----------------------------------------------------------------------------------------------- odeint

def _valid_leaf(x):
    if isinstance(x, (Tracer, bool, int, float, complex, np.generic, np.ndarray)):
        return True
    try:
        get_aval(x)
        return True
    except TypeError:
        return False


def _closure_convert(func, y0, t0, args):
    """``func`` as ``converted(y, t, *args, *consts)`` with the values it closes over (tracers of an outer
    transformation above all) made explicit arguments, so the adjoint can return their cotangents."""
    leaves, tree = tree_flatten((y0, t0, args))
    store = {}

    def flat(*xs):
        y, t, a = tree_unflatten(tree, list(xs))
        out, store["tree"] = tree_flatten(func(y, t, *a))
        return out
    closed, consts = trace_to_jaxpr(flat, [get_aval(x) for x in leaves]).hoist_consts()
    out_tree = store["tree"]
    nconst = len(consts)

    def converted(y, t, *rest):
        a, cs = rest[:len(rest) - nconst], rest[len(rest) - nconst:]
        ins, _ = tree_flatten((y, t, tuple(a)))
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, [], *cs, *ins))
    return converted, list(consts)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf, hmax=jnp.inf):
    """Solves ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` and returns ``y`` at every time of ``t``
    (a pytree like ``y0`` with a leading axis of ``len(t)``). Adaptive Dormand-Prince steps (local error
    ``rtol``/``atol``, at most ``mxstep`` steps per output interval, steps at most ``hmax``) with quartic
    dense output at ``t``; ``t`` must be increasing floats (TypeError otherwise); ``args`` pytrees of arrays
    (TypeError otherwise). Differentiable in ``y0``, ``t``, ``args`` and the values ``func`` closes over, by
    the adjoint method. Mirrors ``jax.experimental.ode.odeint``."""
    for arg in tree_leaves(args):
        if not _valid_leaf(arg):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    t = t if isinstance(t, Tracer) else jnp.asarray(t)
    if not jnp.issubdtype(get_aval(t).dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = _closure_convert(func, y0, t[0], args)
    return _odeint_wrapper(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_wrapper(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    y_flat, unravel = ravel_pytree(y0)
    flat_func = ravel_first_arg(func, unravel)
    out = _odeint(flat_func, rtol, atol, mxstep, hmax, y_flat, ts, *args)
    return vmap(unravel)(out)


def _integrate(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    fun = lambda y, t: func(y, t, *args)  # noqa: E731

    def to_target(carry, target_t):
        def cond(state):
            i, _, _, t, dt, _, _ = state
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def body(state):
            i, y, f, t, dt, last_t, coeff = state
            y1, f1, err, k = runge_kutta_step(fun, y, f, t, dt)
            ratio = mean_error_ratio(err, rtol, atol, y, y1)
            new_coeff = interp_fit_dopri(y, y1, k, dt)
            dt_next = jnp.clip(optimal_step_size(dt, ratio), min=0., max=hmax)
            accept = ratio <= 1.
            taken = (y1, f1, t + dt, t, new_coeff)
            kept = (y, f, t, last_t, coeff)
            y, f, t, last_t, coeff = (jnp.where(accept, a, b) for a, b in builtins.zip(taken, kept))
            return i + 1, y, f, t, dt_next, last_t, coeff

        _, y, f, t, dt, last_t, coeff = lax.while_loop(cond, body, (0,) + tuple(carry))
        s = (target_t - last_t) / (t - last_t)
        return (y, f, t, dt, last_t, coeff), jnp.polyval(coeff, s.astype(get_aval(coeff).dtype))

    t0 = ts[0]
    f0 = fun(y0, t0)
    dt = jnp.clip(initial_step_size(fun, t0, y0, 4, rtol, atol, f0), min=0., max=hmax)
    coeff = jnp.stack([y0] * 5)
    _, ys = lax.scan(to_target, (y0, f0, t0, dt, t0, coeff), ts[1:])
    return jnp.concatenate([y0[None], ys])


_odeint = custom_vjp(_integrate, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def adjoint_dynamics(state, s, *args):
        # integrated in reversed time s = -t: y, the adjoint a = dL/dy, and the accumulated dL/dt0, dL/dargs
        y, a = state[0], state[1]
        y_dot, pullback = vjp(func, y, -s, *args)
        return (-y_dot, *pullback(a))

    def back_one(carry, i):
        a, t0_bar, args_bar = carry
        # moving output time t_i moves the output by f(y_i, t_i)
        t_bar = jnp.real(jnp.dot(func(ys[i], ts[i], *args), g[i]))
        t0_bar = t0_bar - t_bar
        _, a, t0_bar, args_bar = odeint(adjoint_dynamics, (ys[i], a, t0_bar, args_bar),
                                        jnp.stack([-ts[i], -ts[i - 1]]), *args, rtol=rtol, atol=atol,
                                        mxstep=mxstep, hmax=hmax)
        a, t0_bar, args_bar = tree_map(operator.itemgetter(1), (a, t0_bar, args_bar))
        return (a + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], jnp.zeros((), get_aval(ts).dtype), tree_map(jnp.zeros_like, args))
    (a, t0_bar, args_bar), rev_ts_bar = lax.scan(back_one, init, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([t0_bar[None], rev_ts_bar[::-1]])
    return (a, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
