"""Differences, integration, interpolation and selection: ``diff``, ``ediff1d``, ``trapezoid``, ``interp``,
``select``, plus the integer/float helpers ``gcd``, ``lcm``, ``copysign``, ``ldexp``, and the polynomial
helpers ``vander``, ``polyval``, ``polyadd``, ``polysub``, ``polymul``, ``polyder``, ``polyint``. Mirrors
``jax.numpy``."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..primitives import control_flow as _cf
from ._creation import arange, zeros
from ._promotion import _promote, asarray, astype
from ._reductions import sum
from ._shape_ops import searchsorted, where
from ._shapes import broadcast_arrays, concatenate, expand_dims, moveaxis, ravel, reshape, stack
from ._ufuncs import (abs, add, bitwise_and, equal, floor_divide, isnan, logical_and, multiply, negative,
                      power, remainder, signbit, subtract, true_divide)

__all__ = ["diff", "ediff1d", "trapezoid", "interp", "select", "gcd", "lcm", "copysign", "ldexp", "vander",
           "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint"]


def _slice_axis(a, start, stop, axis):
    idx = [slice(None)] * a.ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``prepend``/``append`` joined first); booleans differ
    by ``!=``. Raises ValueError for a negative ``n`` or a rank-0 ``a``. Mirrors ``jax.numpy.diff``."""
    a = asarray(a)
    n = int(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    if n == 0:
        return a
    axis = axis % a.ndim
    parts = []
    if prepend is not None:
        p = asarray(prepend)
        if p.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            p = lax.broadcast_in_dim(astype(p, a.dtype), tuple(shape), ())
        parts.append(p)
    parts.append(a)
    if append is not None:
        q = asarray(append)
        if q.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            q = lax.broadcast_in_dim(astype(q, a.dtype), tuple(shape), ())
        parts.append(q)
    if len(parts) > 1:
        a = concatenate(parts, axis=axis)
    for _ in range(n):
        hi, lo = _slice_axis(a, 1, None, axis), _slice_axis(a, None, -1, axis)
        a = lax.ne(hi, lo) if a.dtype == _np.bool_ else subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened ``ary``, with ``to_begin``/``to_end`` joined. Mirrors
    ``jax.numpy.ediff1d``."""
    a = ravel(asarray(ary))
    d = subtract(a[1:], a[:-1])
    parts = []
    if to_begin is not None:
        parts.append(astype(ravel(asarray(to_begin)), d.dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(astype(ravel(asarray(to_end)), d.dtype))
    return concatenate(parts) if len(parts) > 1 else d


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Trapezoidal-rule integral of ``y`` along ``axis`` (sample points ``x``, else spacing ``dx``). Mirrors
    ``jax.numpy.trapezoid``."""
    y = asarray(y)
    if not _dtypes.issubdtype(y.dtype, _np.inexact):
        y = astype(y, _dtypes.canonicalize_dtype(float))
    y = moveaxis(y, axis, -1)
    if x is None:
        d = asarray(dx)
    else:
        x = asarray(x)
        d = subtract(x[..., 1:], x[..., :-1]) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    avg = true_divide(add(y[..., 1:], y[..., :-1]), 2)
    return sum(multiply(d, avg), axis=-1)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` (``xp`` increasing) at ``x``; ``left`` /
    ``right`` (default ``fp[0]``/``fp[-1]``) outside, or ``"extrapolate"``; ``period`` wraps ``x`` and ``xp``.
    Mirrors ``jax.numpy.interp``."""
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("xp and fp must be of the same length")
    dt = _dtypes.result_type(x.dtype, xp.dtype, fp.dtype)
    if not _dtypes.issubdtype(dt, _np.inexact):
        dt = _dtypes.canonicalize_dtype(float)
    x, xp, fp = astype(x, dt), astype(xp, dt), astype(fp, dt)
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("left and right are not supported with period")
        period = abs(asarray(period, dt))
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = lax.sort_key_val(xp, fp)
        xp, fp = order
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    i = searchsorted(xp, x, side="right")
    i = where(i < 1, 1, where(i > xp.shape[0] - 1, xp.shape[0] - 1, i))
    x0, x1, y0, y1 = xp[i - 1], xp[i], fp[i - 1], fp[i]
    dx = subtract(x1, x0)
    t = true_divide(subtract(x, x0), where(dx == 0, 1, dx))
    f = add(y0, multiply(t, subtract(y1, y0)))
    f = where(dx == 0, y0, f)
    if period is None:
        if isinstance(left, str):
            if left != "extrapolate":
                raise ValueError(f"the only valid string value of `left` is 'extrapolate', but got: {left!r}")
        else:
            f = where(x < xp[0], fp[0] if left is None else asarray(left, dt), f)
        if isinstance(right, str):
            if right != "extrapolate":
                raise ValueError(f"the only valid string value of `right` is 'extrapolate', but got: {right!r}")
        else:
            f = where(x > xp[-1], fp[-1] if right is None else asarray(right, dt), f)
    return f


def select(condlist, choicelist, default=0):
    """The entry of the first ``choicelist`` array whose condition holds, else ``default``. Raises
    ValueError for lists of different lengths or an empty list. Mirrors ``jax.numpy.select``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(choicelist)}), "
                         f"but has length {len(condlist)}")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    out = asarray(default)
    for c, v in reversed(list(zip(condlist, choicelist))):
        c = asarray(c)
        if c.dtype != _np.bool_:
            raise TypeError(f"condlist must be a list of boolean arrays, got {c.dtype}")
        out = where(c, v, out)
    return out


def _int_pair(name, x1, x2):
    x1, x2 = _promote(name, asarray(x1), asarray(x2))
    if not _dtypes.issubdtype(x1.dtype, _np.integer):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers.")
    return x1, x2


def gcd(x1, x2):
    """Greatest common divisor, elementwise (Euclid's algorithm in a ``while_loop``). Mirrors
    ``jax.numpy.gcd``."""
    x1, x2 = _int_pair("gcd", x1, x2)
    x1, x2 = broadcast_arrays(abs(x1), abs(x2))

    def cond(c):
        return lax.reduce_or(lax.ne(c[1], zeros((), c[1].dtype)), tuple(range(c[1].ndim))) if c[1].ndim else \
            lax.ne(c[1], zeros((), c[1].dtype))

    def body(c):
        a, b = c
        nz = lax.ne(b, zeros((), b.dtype))
        safe = where(nz, b, 1)
        return where(nz, b, a), where(nz, remainder(a, safe), 0)

    return _cf.while_loop(cond, body, (x1, x2))[0]


def lcm(x1, x2):
    """Least common multiple, elementwise (0 when either is 0). Mirrors ``jax.numpy.lcm``."""
    x1, x2 = _int_pair("lcm", x1, x2)
    g = gcd(x1, x2)
    return where(equal(g, 0), 0, multiply(abs(x1), floor_divide(abs(x2), where(equal(g, 0), 1, g))))


def copysign(x1, x2, /):
    """``|x1|`` with the sign bit of ``x2``. Mirrors ``jax.numpy.copysign``."""
    x1, x2 = _promote("copysign", asarray(x1), asarray(x2), to_float=True)
    return where(signbit(x2), negative(abs(x1)), abs(x1))


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` (``x2`` integer). Mirrors ``jax.numpy.ldexp``."""
    x2 = asarray(x2)
    if not _dtypes.issubdtype(x2.dtype, _np.integer):
        raise ValueError(f"ldexp: x2 must be an integer array, got {x2.dtype}")
    x1 = asarray(x1)
    if not _dtypes.issubdtype(x1.dtype, _np.inexact):
        x1 = astype(x1, _dtypes.canonicalize_dtype(float))
    # two halves keep 2**x2 finite where the product is
    h = floor_divide(x2, 2)
    two = asarray(2, x1.dtype)
    return multiply(multiply(x1, power(two, astype(h, x1.dtype))), power(two, astype(x2 - h, x1.dtype)))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1) ... x**0`` (or increasing). Mirrors
    ``jax.numpy.vander``."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else int(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    p = arange(N) if increasing else arange(N - 1, -1, -1)
    return power(x[:, None], astype(p, x.dtype)[None, :] if _dtypes.issubdtype(x.dtype, _np.inexact) else p)


def polyval(p, x, *, unroll=16):
    """``p[0] * x**(n-1) + ... + p[-1]`` by Horner's rule. Mirrors ``jax.numpy.polyval``."""
    p, x = _same_dtype(p, x)
    y = zeros(x.shape, x.dtype) if p.ndim == 1 else zeros(p.shape[1:], p.dtype)
    for i in range(p.shape[0]):
        y = add(multiply(y, x), p[i])
    return y


def _same_dtype(*xs):
    """Promoted to one dtype (JAX's lattice), shapes left alone."""
    xs = [asarray(x) for x in xs]
    dt = _dtypes.result_type(*xs)
    return [astype(x, dt) for x in xs]


def _poly_pad(a, n):
    return concatenate([zeros((n - a.shape[0],), a.dtype), a]) if a.shape[0] < n else a


def polyadd(a1, a2):
    """Sum of two polynomials (highest power first). Mirrors ``jax.numpy.polyadd``."""
    a1, a2 = _same_dtype(a1, a2)
    n = max(a1.shape[0], a2.shape[0])
    return add(_poly_pad(a1, n), _poly_pad(a2, n))


def polysub(a1, a2):
    """Difference of two polynomials. Mirrors ``jax.numpy.polysub``."""
    a1, a2 = _same_dtype(a1, a2)
    return polyadd(a1, negative(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials (their coefficients' full convolution). Mirrors ``jax.numpy.polymul``."""
    a1, a2 = _same_dtype(a1, a2)
    n1, n2 = a1.shape[0], a2.shape[0]
    if n1 == 0 or n2 == 0:
        return zeros((0,), a1.dtype)
    out = zeros((n1 + n2 - 1,), a1.dtype)
    for i in range(n1):
        out = out.at[i:i + n2].add(multiply(a1[i], a2))
    return out


def polyder(p, m=1):
    """The ``m``-th derivative of the polynomial ``p``. Mirrors ``jax.numpy.polyder``."""
    p = asarray(p)
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    for _ in range(m):
        n = p.shape[0]
        if n <= 1:
            return zeros((0,), p.dtype)
        p = multiply(p[:-1], astype(arange(n - 1, 0, -1), p.dtype))
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of ``p`` with integration constants ``k`` (default 0). Mirrors
    ``jax.numpy.polyint``."""
    p = asarray(p)
    if not _dtypes.issubdtype(p.dtype, _np.inexact):
        p = astype(p, _dtypes.canonicalize_dtype(float))
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = zeros((m,), p.dtype) if k is None else ravel(astype(asarray(k), p.dtype))
    if ks.shape[0] == 1 and m > 1:
        ks = ks[0] * zeros((m,), p.dtype) + ks[0]
    for i in range(m):
        n = p.shape[0]
        p = concatenate([true_divide(p, astype(arange(n, 0, -1), p.dtype)), ks[i:i + 1]])
    return p
