"""Differences, integration, interpolation and selection: ``diff``, ``ediff1d``, ``trapezoid``, ``interp``,
``select``, plus the integer/float helpers ``gcd``, ``lcm``, ``copysign``, ``ldexp``, and the polynomial
helpers ``vander``, ``polyval``, ``polyadd``, ``polysub``, ``polymul``, ``polyder``, ``polyint``. Mirrors
``jax.numpy``."""
import numpy as _np

from ..api import jit
from .. import dtypes as _dtypes
from .. import lax
from ..primitives import control_flow as _cf
from ._creation import arange, linspace, zeros
from ._promotion import _promote, asarray, astype
from ._reductions import sum
from ._shape_ops import cumsum, nonzero, searchsorted, take, where
from ._shapes import broadcast_arrays, concatenate, expand_dims, moveaxis, ravel, reshape, stack
from ._ufuncs import (abs, add, bitwise_and, equal, floor_divide, isnan, logical_and, multiply, negative,
                      power, remainder, signbit, subtract, true_divide)

__all__ = ["diff", "ediff1d", "trapezoid", "interp", "select", "gcd", "lcm", "copysign", "ldexp", "vander",
           "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint", "nan_to_num", "fmax", "fmin", "fabs",
           "sinc", "logspace", "geomspace", "bitwise_count", "isreal", "iscomplex", "imag", "angle", "cross",
           "compress", "extract", "choose", "lexsort", "isdtype", "can_cast", "array_equiv", "iterable",
           "unstack", "concat", "rollaxis", "gradient", "delete", "insert", "resize", "trim_zeros", "put", "place",
           "modf", "printoptions", "get_printoptions", "set_printoptions"]

# NumPy's print options govern how arrays print (cranax arrays print through NumPy)
printoptions = _np.printoptions
get_printoptions = _np.get_printoptions
set_printoptions = _np.set_printoptions


def _slice_axis(a, start, stop, axis):
    idx = [slice(None)] * a.ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``prepend``/``append`` joined first); booleans differ
    by ``!=``. Raises ValueError for a negative ``n`` or a rank-0 ``a``. One jitted call with ``n`` and
    ``axis`` static (printed ``jit[name=diff]``, as JAX's). Mirrors ``jax.numpy.diff``."""
    asarray(a)   # (a non-array operand raises before the call)
    return _diff_jit(a, n=n, axis=axis, prepend=prepend, append=append)


def _diff(a, n=1, axis=-1, prepend=None, append=None):
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
            p = lax.broadcast_in_dim(p, tuple(shape), ())   # (concatenate promotes, as JAX's)
        parts.append(p)
    parts.append(a)
    if append is not None:
        q = asarray(append)
        if q.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            q = lax.broadcast_in_dim(q, tuple(shape), ())
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


# ------------------------------------------------------------------------------ more elementwise helpers

def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN to ``nan``, +-inf to ``posinf``/``neginf`` (default the dtype's largest finite values). Mirrors
    ``jax.numpy.nan_to_num``."""
    x = asarray(x)
    if not _dtypes.issubdtype(x.dtype, _np.inexact):
        return x
    info = _np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = where(isnan(x), asarray(nan, x.dtype), x)
    x = where(equal(x, _np.inf), asarray(posinf, x.dtype), x)
    return where(equal(x, -_np.inf), asarray(neginf, x.dtype), x)


def fmax(x1, x2):
    """Elementwise maximum ignoring NaNs (NaN only where both are). Mirrors ``jax.numpy.fmax``."""
    x1, x2 = _promote("fmax", asarray(x1), asarray(x2))
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.max(x1, x2)))


def fmin(x1, x2):
    """Elementwise minimum ignoring NaNs. Mirrors ``jax.numpy.fmin``."""
    x1, x2 = _promote("fmin", asarray(x1), asarray(x2))
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.min(x1, x2)))


def fabs(x, /):
    """``abs`` for real floats (integers become floats). Mirrors ``jax.numpy.fabs``."""
    x = asarray(x)
    if _dtypes.issubdtype(x.dtype, _np.complexfloating):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    if not _dtypes.issubdtype(x.dtype, _np.inexact):
        x = astype(x, _dtypes.canonicalize_dtype(float))
    return abs(x)


def sinc(x, /):
    """``sin(pi x) / (pi x)``, 1 at 0. Mirrors ``jax.numpy.sinc``."""
    x = asarray(x)
    if not _dtypes.issubdtype(x.dtype, _np.inexact):
        x = astype(x, _dtypes.canonicalize_dtype(float))
    zero = equal(x, 0)
    px = multiply(_np.pi, where(zero, 1, x))
    return where(zero, asarray(1, x.dtype), true_divide(lax.sin(px), px))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``. Mirrors ``jax.numpy.logspace``."""
    y = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = power(asarray(base, y.dtype), y)
    return out if dtype is None else astype(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric progression from ``start`` to ``stop`` (same sign). Mirrors ``jax.numpy.geomspace``."""
    start, stop = asarray(start), asarray(stop)
    dt = _dtypes.result_type(start.dtype, stop.dtype, _dtypes.canonicalize_dtype(float))
    start, stop = astype(start, dt), astype(stop, dt)
    sign = where(start < 0, -1, 1)
    y = linspace(true_divide(lax.log(abs(start)), _np.log(10)), true_divide(lax.log(abs(stop)), _np.log(10)),
                 num, endpoint=endpoint, axis=axis)
    out = multiply(power(asarray(10, dt), y), sign)
    if num > 0:
        out = out.at[0].set(start) if axis == 0 and out.ndim == 1 else out
        if endpoint and axis == 0 and out.ndim == 1:
            out = out.at[-1].set(stop)
    return out if dtype is None else astype(out, dtype)


def bitwise_count(x, /):
    """The number of 1 bits of ``|x|``, as uint8. Mirrors ``jax.numpy.bitwise_count``."""
    x = asarray(x)
    if not _dtypes.issubdtype(x.dtype, _np.integer) and x.dtype != _np.bool_:
        raise TypeError(f"bitwise_count requires an integer or boolean input, got {x.dtype}")
    if x.dtype == _np.bool_:
        return astype(x, _np.uint8)
    return astype(lax.population_count(abs(x) if _dtypes.issubdtype(x.dtype, _np.signedinteger) else x),
                  _np.uint8)


def isreal(x):
    """True for entries with zero imaginary part (all, for real dtypes). Mirrors ``jax.numpy.isreal``."""
    x = asarray(x)
    return lax.full(x.shape, True, _np.dtype(bool)) if not _dtypes.issubdtype(x.dtype, _np.complexfloating) \
        else equal(imag(x), 0)


def iscomplex(x):
    """True for entries with a nonzero imaginary part. Mirrors ``jax.numpy.iscomplex``."""
    x = asarray(x)
    return lax.full(x.shape, False, _np.dtype(bool)) if not _dtypes.issubdtype(x.dtype, _np.complexfloating) \
        else lax.ne(imag(x), asarray(0, imag(x).dtype))


def _complex_part(name, z):
    fn = getattr(lax, name, None)
    if fn is None:
        raise NotImplementedError(f"jnp: lax.{name} of complex values (the complex-dtype work) is not in cranax yet")
    return fn(z)


def imag(val, /):
    """The imaginary part (zeros for real dtypes). Mirrors ``jax.numpy.imag``."""
    val = asarray(val)
    if _dtypes.issubdtype(val.dtype, _np.complexfloating):
        return _complex_part("imag", val)
    return lax.full(val.shape, 0, val.dtype)


def angle(z, deg=False):
    """The argument ``atan2(imag, real)`` (0 or pi for reals), in degrees with ``deg``. Mirrors
    ``jax.numpy.angle``."""
    z = asarray(z)
    if _dtypes.issubdtype(z.dtype, _np.complexfloating):
        re, im = _complex_part("real", z), _complex_part("imag", z)
    else:
        if not _dtypes.issubdtype(z.dtype, _np.inexact):
            z = astype(z, _dtypes.canonicalize_dtype(float))
        re, im = z, lax.full(z.shape, 0, z.dtype)
    a = lax.atan2(im, re)
    return multiply(a, 180 / _np.pi) if deg else a


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or 2-vectors, giving the z component) along the given axes. Mirrors
    ``jax.numpy.cross``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asarray(a), asarray(b)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return subtract(multiply(a[..., 0], b[..., 1]), multiply(a[..., 1], b[..., 0]))
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else zeros(a0.shape, a.dtype)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if b.shape[-1] == 3 else zeros(b0.shape, b.dtype)
    c = stack([subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
               subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)
    return moveaxis(c, -1, axisc)


def compress(condition, a, axis=None, *, size=None, fill_value=0):
    """The slices of ``a`` along ``axis`` where the 1-D ``condition`` holds (``size`` fixes the count, padded
    with ``fill_value``, needed under ``jit``). Mirrors ``jax.numpy.compress``."""
    cond, a = asarray(condition), asarray(a)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        a, axis = ravel(a), 0
    axis = axis % a.ndim
    n = a.shape[axis]
    cond = cond[:n] if cond.shape[0] > n else cond
    idx = nonzero(cond, size=size, fill_value=n)[0] if size is not None else nonzero(cond)[0]
    out = take(a, where(idx < n, idx, 0), axis=axis)
    if size is not None:
        valid = reshape(idx < n, tuple(-1 if i == axis else 1 for i in range(a.ndim)))
        out = where(valid, out, asarray(fill_value, a.dtype))
    return out


def extract(condition, arr, *, size=None, fill_value=0):
    """``ravel(arr)[ravel(condition) != 0]``. Mirrors ``jax.numpy.extract``."""
    return compress(lax.ne(ravel(asarray(condition)), asarray(0, asarray(condition).dtype))
                    if asarray(condition).dtype != _np.bool_ else ravel(asarray(condition)),
                    ravel(asarray(arr)), size=size, fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` with broadcasting; ``mode`` ``"wrap"``/``"clip"`` (``"raise"`` checks concrete
    indices). Mirrors ``jax.numpy.choose``."""
    a = asarray(a)
    if not _dtypes.issubdtype(a.dtype, _np.integer):
        raise TypeError(f"choose: a must be integer, got {a.dtype}")
    n = len(choices)
    if mode == "raise":
        v = _np.asarray(a)
        if v.size and (v.min() < 0 or v.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = where(a < 0, 0, where(a >= n, n - 1, a))
    else:
        raise ValueError(f"invalid mode {mode!r}")
    arrs = broadcast_arrays(a, *[asarray(c) for c in choices])
    a, cs = arrs[0], arrs[1:]
    out = cs[0]
    for i in range(1, n):
        out = where(equal(a, i), cs[i], out)
    return out


def lexsort(keys, axis=-1):
    """Indices sorting by the last key, then the one before, ... (stable). Mirrors ``jax.numpy.lexsort``."""
    keys = [asarray(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = keys[0].shape
    axis = axis % len(shape)
    it = lax.broadcasted_iota(_np.dtype(_np.int32), shape, axis)
    outs = lax.sort([*keys[::-1], it], dimension=axis, is_stable=True, num_keys=len(keys))
    return outs[-1]


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (a dtype, or "bool", "signed integer", "unsigned integer",
    "integral", "real floating", "complex floating", "numeric", or a tuple of these). Mirrors
    ``jax.numpy.isdtype``."""
    dt = _np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            ok = {"bool": dt == _np.bool_, "signed integer": dt.kind == "i", "unsigned integer": dt.kind == "u",
                  "integral": dt.kind in "iu", "real floating": dt.kind == "f" or dt in _dtypes._CUSTOM_FLOATS,
                  "complex floating": dt.kind == "c",
                  "numeric": dt.kind in "iufc" or dt in _dtypes._CUSTOM_FLOATS}.get(k)
            if ok is None:
                raise ValueError(f"Unrecognized {k!r} in kind={kind!r}")
            if ok:
                return True
        elif _np.dtype(k) == dt:
            return True
    return False


def can_cast(from_, to, casting="safe"):
    """Whether ``from_`` (a dtype or array) casts to ``to`` under NumPy's ``casting`` rule. Mirrors
    ``jax.numpy.can_cast``."""
    is_array = hasattr(from_, "shape") and not isinstance(from_, type)
    src = asarray(from_).dtype if is_array else _np.dtype(from_)
    return bool(_np.can_cast(src, _np.dtype(to), casting=casting))


def array_equiv(a1, a2):
    """Whether the arrays broadcast together and are equal everywhere. Mirrors ``jax.numpy.array_equiv``."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        _np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray(False)
    return lax.reduce_and(equal(a1, a2), tuple(range(max(a1.ndim, a2.ndim)))) if max(a1.ndim, a2.ndim) \
        else equal(a1, a2)


def iterable(y):
    """Whether ``iter(y)`` works. Mirrors ``jax.numpy.iterable``."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis`` as a tuple. Mirrors ``jax.numpy.unstack``."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    return lax.unstack(x, axis=axis)   # one ``unstack`` equation, as JAX's


def concat(arrays, /, *, axis=0):
    """``concatenate`` (the array API's name). Mirrors ``jax.numpy.concat``."""
    return concatenate(arrays, axis=axis)


def rollaxis(a, axis, start=0):
    """Moves ``axis`` to before ``start`` (NumPy's older ``moveaxis``). Mirrors ``jax.numpy.rollaxis``."""
    a = asarray(a)
    nd = a.ndim
    axis = axis % nd
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    start = start + nd if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order one-sided at the edges (``edge_order`` 1), with
    unit or given spacings (scalars or coordinate arrays). A list per axis, or one array for one axis.
    Mirrors ``jax.numpy.gradient``."""
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    f = asarray(f)
    if not _dtypes.issubdtype(f.dtype, _np.inexact):
        f = astype(f, _dtypes.canonicalize_dtype(float))
    axes = tuple(range(f.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(a % f.ndim for a in axes)
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments")
    outs = []
    for ax, h in zip(axes, spacing):
        if f.shape[ax] < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements "
                             "are required.")
        g = moveaxis(f, ax, -1)
        h = asarray(h)
        if h.ndim == 0:
            inner = true_divide(subtract(g[..., 2:], g[..., :-2]), multiply(2, h))
            first = true_divide(subtract(g[..., 1:2], g[..., :1]), h)
            last = true_divide(subtract(g[..., -1:], g[..., -2:-1]), h)
        else:
            dx = subtract(h[1:], h[:-1])
            d1, d2 = dx[:-1], dx[1:]
            a = true_divide(negative(d2), multiply(d1, add(d1, d2)))
            b = true_divide(subtract(d2, d1), multiply(d1, d2))
            c = true_divide(d1, multiply(d2, add(d1, d2)))
            inner = add(add(multiply(a, g[..., :-2]), multiply(b, g[..., 1:-1])), multiply(c, g[..., 2:]))
            first = true_divide(subtract(g[..., 1:2], g[..., :1]), dx[:1])
            last = true_divide(subtract(g[..., -1:], g[..., -2:-1]), dx[-1:])
        outs.append(moveaxis(concatenate([first, inner, last], axis=-1), -1, ax))
    return outs[0] if len(outs) == 1 else outs


# ------------------------------------------------------------------------------ insert, delete and friends

def _concrete_ints(obj, name):
    try:
        return _np.asarray(obj).astype(_np.int64)
    except Exception:  # a tracer: the result shape would depend on its values
        raise TypeError(f"jnp.{name} needs concrete (non-traced) indices: the result's shape depends on them") \
            from None


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` (an index, indices or a slice) along ``axis`` (flattened when
    None). The indices must be concrete. Mirrors ``jax.numpy.delete``."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = axis % a.ndim
    n = a.shape[axis]
    if isinstance(obj, slice):
        drop = _np.arange(n)[obj]
    else:
        drop = _concrete_ints(obj, "delete").ravel()
        if drop.size and (drop.min() < -n or drop.max() >= n):
            raise IndexError(f"index out of bounds for axis {axis} with size {n}")
        drop = drop % n if n else drop
    keep = _np.setdiff1d(_np.arange(n), drop)
    return take(a, asarray(keep.astype(_np.int32)), axis=axis)


def insert(arr, obj, values, axis=None):
    """``values`` inserted before the index or indices ``obj`` (concrete) along ``axis`` (flattened when
    None), as ``numpy.insert``. Mirrors ``jax.numpy.insert``."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = axis % a.ndim
    n = a.shape[axis]
    scalar = not isinstance(obj, slice) and _np.ndim(obj) == 0
    idx = _np.arange(n + 1)[obj] if isinstance(obj, slice) else _concrete_ints(obj, "insert").ravel()
    idx = _np.where(idx < 0, idx + n, idx)
    if idx.size and (idx.min() < 0 or idx.max() > n):
        raise IndexError(f"index out of bounds for axis {axis} with size {n}")
    v = asarray(values, a.dtype)
    k = idx.size
    vshape = list(a.shape)
    if scalar:
        # NumPy: a scalar index inserts the values as a block (their own length along axis)
        v = moveaxis(v, 0, axis) if v.ndim == a.ndim else v
        if v.ndim < a.ndim:
            v = expand_dims(v, axis) if v.ndim == a.ndim - 1 else v
        k = v.shape[axis] if v.ndim == a.ndim else 1
        idx = _np.full(k, idx[0])
    vshape[axis] = k
    v = lax.broadcast_in_dim(v, tuple(vshape), tuple(range(len(vshape) - v.ndim, len(vshape)))) \
        if v.shape != tuple(vshape) else v
    # position of every output slot: the original entries shift right by the inserts at or before them
    order = _np.argsort(idx, kind="stable")
    new_pos = idx[order] + _np.arange(k)
    old_pos = _np.arange(n) + _np.searchsorted(idx[order], _np.arange(n), side="right")
    src = _np.empty(n + k, _np.int64)
    src[old_pos] = _np.arange(n)
    src[new_pos] = n + order
    both = concatenate([a, v], axis=axis)
    return take(both, asarray(src.astype(_np.int32)), axis=axis)


def resize(a, new_shape):
    """``a`` flattened, repeated to fill ``new_shape``. Mirrors ``jax.numpy.resize``."""
    a = ravel(asarray(a))
    new_shape = (int(new_shape),) if _np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    size = int(_np.prod(new_shape))
    if any(s < 0 for s in new_shape):
        raise ValueError("All elements of `new_shape` must be non-negative")
    if a.shape[0] == 0 or size == 0:
        return zeros(new_shape, a.dtype)
    reps = -(-size // a.shape[0])
    return reshape(concatenate([a] * reps)[:size], new_shape)


def trim_zeros(filt, trim="fb"):
    """The 1-D ``filt`` without its leading (``"f"``) and/or trailing (``"b"``) zeros; ``filt`` must be
    concrete. Mirrors ``jax.numpy.trim_zeros``."""
    f = asarray(filt)
    nz = _np.flatnonzero(_concrete_ints(lax.ne(f, asarray(0, f.dtype)), "trim_zeros"))
    if nz.size == 0:
        return f[:0]
    lo = int(nz[0]) if "f" in trim.lower() else 0
    hi = int(nz[-1]) + 1 if "b" in trim.lower() else f.shape[0]
    return f[lo:hi]


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of ``a`` with ``ravel(a)[ind] = v`` (``v`` cycled; ``mode`` ``"clip"``/``"wrap"``, default
    ``"fill"`` drops out-of-range indices). ``inplace=False`` is required (arrays are immutable). Mirrors
    ``jax.numpy.put``."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")
    a = asarray(a)
    ind = ravel(asarray(ind))
    v = ravel(asarray(v, a.dtype))
    if v.shape[0] != ind.shape[0] and v.shape[0]:
        v = concatenate([v] * (-(-ind.shape[0] // v.shape[0])))[:ind.shape[0]]
    flat = ravel(a)
    size = flat.shape[0]
    if mode == "clip":
        ind = where(ind < 0, 0, where(ind >= size, size - 1, ind))
    elif mode == "wrap":
        ind = remainder(ind, size)
    elif mode not in (None, "fill", "drop", "raise"):
        raise ValueError(f"mode={mode!r} is not supported by jnp.put")
    return reshape(flat.at[ind].set(v, mode="drop"), a.shape)


def place(arr, mask, vals, *, inplace=True):
    """A copy of ``arr`` whose entries where ``mask`` (concrete) take ``vals`` in order, cycled. Requires
    ``inplace=False``. Mirrors ``jax.numpy.place``."""
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")
    a = asarray(arr)
    pos = _np.flatnonzero(_concrete_ints(mask, "place"))
    vals = ravel(asarray(vals, a.dtype))
    if pos.size == 0:
        return a
    cyc = _np.arange(pos.size) % vals.shape[0]
    return reshape(ravel(a).at[asarray(pos.astype(_np.int32))].set(take(vals, asarray(cyc.astype(_np.int32)))),
                   a.shape)


def modf(x, /, out=None):
    """``(fractional part, integral part)``, both with ``x``'s sign. Mirrors ``jax.numpy.modf``."""
    x = asarray(x)
    if not _dtypes.issubdtype(x.dtype, _np.inexact):
        x = astype(x, _dtypes.canonicalize_dtype(float))
    whole = where(x < 0, lax.ceil(x), lax.floor(x))
    return subtract(x, whole), whole



def unwrap(p, discont=None, axis=-1, period=2 * _np.pi):
    """``p`` with jumps between neighbours along ``axis`` larger than ``discont`` (default ``period / 2``)
    replaced by their equivalents modulo ``period``; ``p`` and ``period`` share the promoted dtype (integer
    input with an integer period stays integer, with half-period ``period // 2``). ValueError for complex
    input. Mirrors ``jax.numpy.unwrap``."""
    p, period = _same_dtype(p, period)
    if p.dtype.kind == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = floor_divide(period, 2) if p.dtype.kind in "iu" else period / 2
    dd = diff(p, axis=axis)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correct = where(abs(dd) < discont, 0, ddmod - dd)
    axis = axis % p.ndim
    rest = _slice_axis(p, 1, None, axis) + cumsum(correct, axis=axis)
    return concatenate([_slice_axis(p, 0, 1, axis), rest], axis=axis)


__all__ += ['unwrap']


_diff.__name__ = "diff"
_diff_jit = jit(_diff, static_argnames=("n", "axis"))
