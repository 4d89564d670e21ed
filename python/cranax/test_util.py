"""``cranax.test_util``: ``check_grads``/``check_jvp``/``check_vjp``, comparing a function's derivatives with
central finite differences, as ``jax.test_util``."""
import itertools

import numpy as np

from . import dtypes
from . import numpy as jnp
from .api_ad import jvp, vjp
from .core import get_aval
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2, np.dtype(np.float64): 1e-5}
_DEFAULT_TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-5}


def _dtype(x):
    return get_aval(x).dtype if not isinstance(x, np.ndarray) else x.dtype


def _tol(tol, xs):
    if tol is not None:
        return tol
    ds = [_dtype(x) for x in tree_flatten(xs)[0]]
    return max([_DEFAULT_TOL.get(np.dtype(d), 1e-5) for d in ds] or [1e-5])


def _assert_close(x, y, atol, rtol, err_msg):
    for a, b in zip(tree_flatten(x)[0], tree_flatten(y)[0]):
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=err_msg)


def _rand_like(rng, x):
    x = np.asarray(x)
    return rng.standard_normal(x.shape).astype(x.dtype) if dtypes.issubdtype(x.dtype, np.inexact) \
        else np.zeros(x.shape, x.dtype)


def _numerical_jvp(f, primals, tangents, eps):
    plus = tree_map(lambda p, t: p + eps * t, primals, tangents)
    minus = tree_map(lambda p, t: p - eps * t, primals, tangents)
    fp, fm = f(*plus), f(*minus)
    return tree_map(lambda a, b: (np.asarray(a, np.float64) - np.asarray(b, np.float64)) / (2 * eps), fp, fm)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=1e-4, err_msg=""):
    """Asserts ``f_jvp(args, tangents)`` (as ``jax.jvp``) agrees with central differences of ``f`` along random
    tangents. Raises ``AssertionError``."""
    rng = np.random.RandomState(0)
    tangents = tree_map(lambda x: _rand_like(rng, x), args)
    out, t_out = f_jvp(args, tangents)
    _assert_close(out, f(*args), _tol(atol, out), _tol(rtol, out), err_msg + " (primal)")
    t_num = _numerical_jvp(f, args, tangents, eps)
    _assert_close(t_out, t_num, _tol(atol, out), _tol(rtol, out), err_msg + " (tangent)")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=1e-4, err_msg=""):
    """Asserts ``f_vjp(*args)`` (as ``jax.vjp``) agrees with the transposed central difference:
    ``<ct, J t> == <J^T ct, t>`` for random ``t`` and ``ct``. Raises ``AssertionError``."""
    rng = np.random.RandomState(0)
    out, pullback = f_vjp(*args)
    _assert_close(out, f(*args), _tol(atol, out), _tol(rtol, out), err_msg + " (primal)")
    tangents = tree_map(lambda x: _rand_like(rng, x), args)
    ct = tree_map(lambda x: _rand_like(rng, x), out)
    t_num = _numerical_jvp(f, args, tangents, eps)
    lhs = sum(float(np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64)))
              for a, b in zip(tree_flatten(ct)[0], tree_flatten(t_num)[0]))
    cts_in = pullback(ct)
    rhs = sum(float(np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64)))
              for a, b in zip(tree_flatten(cts_in)[0], tree_flatten(tangents)[0]))
    _assert_close(lhs, rhs, _tol(atol, out), _tol(rtol, out), err_msg + " (vjp)")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks ``f``'s derivatives at ``args`` up to ``order`` in forward (``"fwd"``) and reverse (``"rev"``)
    mode against finite differences. Raises ``AssertionError``. Mirrors ``jax.test_util.check_grads``."""
    args = tuple(args)
    if eps is None:
        eps = max([_DEFAULT_EPS.get(np.dtype(_dtype(x)), 1e-4) for x in tree_flatten(args)[0]] or [1e-4])

    def _check(fun, o):
        if "fwd" in modes:
            check_jvp(fun, lambda a, t: jvp(fun, a, t), args, atol, rtol, eps)
            if o > 1:
                _check(lambda *a: jvp(fun, a, tree_map(jnp.ones_like, a))[1], o - 1)
        if "rev" in modes:
            check_vjp(fun, lambda *a: vjp(fun, *a), args, atol, rtol, eps)
            if o > 1:
                def f_vjp(*a):
                    out, pb = vjp(fun, *a)
                    return pb(tree_map(jnp.ones_like, out))
                _check(f_vjp, o - 1)
    _check(f, order)
