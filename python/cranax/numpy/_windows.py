"""Window functions: ``hanning``, ``hamming``, ``blackman``, ``bartlett``, ``kaiser`` (float of the default
dtype, length ``M``; ``M < 1`` gives an empty array), and ``i0``. Mirrors ``jax.numpy``."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ._creation import arange, ones, zeros
from ._promotion import asarray, astype
from ._ufuncs import abs, cos, exp, multiply, sqrt, subtract, true_divide

__all__ = ["hanning", "hamming", "blackman", "bartlett", "kaiser", "i0"]


def _n(M, name):
    M = int(M)
    dt = _dtypes.canonicalize_dtype(float)
    if M <= 1:
        return M, dt, (zeros((0,), dt) if M < 1 else ones((1,), dt))
    return M, dt, None


def _cos_window(M, coeffs, name):
    M, dt, edge = _n(M, name)
    if edge is not None:
        return edge
    n = astype(arange(M), dt)
    out = 0
    for k, a in enumerate(coeffs):
        out = out + a * cos(multiply(2 * _np.pi * k / (M - 1), n)) if k else a + 0 * n
    return astype(out, dt)


def hanning(M):
    """``0.5 - 0.5 cos(2 pi n / (M - 1))``. Mirrors ``jax.numpy.hanning``."""
    return _cos_window(M, (0.5, -0.5), "hanning")


def hamming(M):
    """``0.54 - 0.46 cos(2 pi n / (M - 1))``. Mirrors ``jax.numpy.hamming``."""
    return _cos_window(M, (0.54, -0.46), "hamming")


def blackman(M):
    """``0.42 - 0.5 cos(2 pi n / (M-1)) + 0.08 cos(4 pi n / (M-1))``. Mirrors ``jax.numpy.blackman``."""
    return _cos_window(M, (0.42, -0.5, 0.08), "blackman")


def bartlett(M):
    """The triangular window ``1 - |2n / (M-1) - 1|``. Mirrors ``jax.numpy.bartlett``."""
    M, dt, edge = _n(M, "bartlett")
    if edge is not None:
        return edge
    n = astype(arange(M), dt)
    return subtract(1, abs(subtract(true_divide(multiply(2, n), M - 1), 1)))


def i0(x):
    """The modified Bessel function of order 0, ``exp(|x|) * bessel_i0e(x)``. Mirrors ``jax.numpy.i0``."""
    x = asarray(x)
    if not _dtypes.issubdtype(x.dtype, _np.inexact):
        x = astype(x, _dtypes.canonicalize_dtype(float))
    return multiply(exp(abs(x)), lax.bessel_i0e(x))


def kaiser(M, beta):
    """``i0(beta * sqrt(1 - (2n/(M-1) - 1)**2)) / i0(beta)``. Mirrors ``jax.numpy.kaiser``."""
    M, dt, edge = _n(M, "kaiser")
    if edge is not None:
        return edge
    n = astype(arange(M), dt)
    alpha = (M - 1) / 2.0
    r = true_divide(subtract(n, alpha), alpha)
    b = asarray(beta, dt)
    return true_divide(i0(multiply(b, sqrt(subtract(1, multiply(r, r))))), i0(b))
