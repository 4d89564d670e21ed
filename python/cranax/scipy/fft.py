"""``cranax.scipy.fft``: the type-2 discrete cosine transforms of ``jax.scipy.fft`` (``dct``, ``idct``,
``dctn``, ``idctn``), computed with one complex FFT of the reordered input (Makhoul's method). Mirrors
``jax.scipy.fft``: ``type`` must be 2, ``norm`` is None (SciPy's unnormalized ``2 Σ x cos``) or ``"ortho"``;
``n``/``s`` crop or zero-pad the input first.
"""
import numpy as _np

from .. import lax as _lax
from ..core import get_aval as _get_aval
from ..numpy import _shapes, fft as _fft
from ..numpy._shape_ops import take as _take
from ..numpy._ufuncs import multiply as _mul
from ..numpy._promotion import _promote

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(type, norm, name):
    if type != 2:
        raise ValueError(f"Only DCT type 2 is implemented in {name}, got type={type}.")
    if norm not in (None, "ortho"):
        raise ValueError(f"norm must be None or 'ortho' in {name}, got {norm!r}.")


def _fit(x, axis, n):
    return _fft._fit(x, axis, n) if n is not None else x


def _twiddle(n, dtype, sign):
    k = _np.arange(n)
    return _np.exp(sign * 1j * _np.pi * k / (2 * n)).astype(dtype)


def _dct1(x, axis, norm):
    """DCT-II along ``axis``."""
    x = _shapes.moveaxis(x, axis, -1)
    n = _get_aval(x).shape[-1]
    # Makhoul's reordering: v[j] = x[2j], v[n-1-j] = x[2j+1]
    perm = _np.concatenate([_np.arange(0, n, 2), _np.arange(n - 1 if n % 2 == 0 else n - 2, 0, -2)])
    v = _take(x, perm, -1)
    V = _fft.fft(v)
    cdt = _get_aval(V).dtype
    out = _mul(_lax.real(_mul(V, _np.asarray(_twiddle(n, cdt, -1)))), 2.0)
    if norm == "ortho":
        scale = _np.full(n, _np.sqrt(1 / (2 * n)), _get_aval(out).dtype)
        scale[0] = _np.sqrt(1 / (4 * n))
        out = _mul(out, scale)
    return _shapes.moveaxis(out, -1, axis)


def _idct1(x, axis, norm):
    """The inverse of ``_dct1`` (SciPy's ``idct`` of type 2, i.e. a scaled DCT-III) along ``axis``."""
    x = _shapes.moveaxis(x, axis, -1)
    n = _get_aval(x).shape[-1]
    rdt = _get_aval(x).dtype
    if norm == "ortho":  # undo the orthonormal scaling, then invert the plain transform
        scale = _np.full(n, _np.sqrt(2 * n), rdt)
        scale[0] = _np.sqrt(4 * n)
        x = _mul(x, scale)
    # W_k = (X_k - i X_{n-k}) e^{iπk/2n} / 2 (X_n = 0) is the FFT of the reordered signal; invert it
    rev = _lax.concatenate([_lax.full_like(x[..., :1], 0), _lax.rev(x[..., 1:], (_get_aval(x).ndim - 1,))],
                          _get_aval(x).ndim - 1)
    cdt = _np.dtype(_np.complex128 if rdt == _np.float64 else _np.complex64)
    w = _mul(_lax.complex(x, _lax.neg(rev)), _np.asarray(_twiddle(n, cdt, 1) / 2))
    v = _lax.real(_fft.ifft(w))
    inv = _np.empty(n, int)  # x[2j] = v[j], x[2j+1] = v[n-1-j]
    inv[0::2] = _np.arange((n + 1) // 2)
    inv[1::2] = _np.arange(n - 1, (n + 1) // 2 - 1, -1)
    out = _take(v, inv, -1)
    return _shapes.moveaxis(out, -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The type-2 DCT of ``x`` along ``axis`` (float; ints promote). Mirrors ``jax.scipy.fft.dct``."""
    _check(type, norm, "dct")
    (x,) = _promote("dct", x, to_float=True)
    axis = axis % _get_aval(x).ndim
    return _dct1(_fit(x, axis, n), axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of ``dct`` along ``axis``. Mirrors ``jax.scipy.fft.idct``."""
    _check(type, norm, "idct")
    (x,) = _promote("idct", x, to_float=True)
    axis = axis % _get_aval(x).ndim
    return _idct1(_fit(x, axis, n), axis, norm)


def _axes(x, s, axes):
    nd = _get_aval(x).ndim
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    axes = [a % nd for a in axes]
    return axes, [None] * len(axes) if s is None else list(s)


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The type-2 DCT over ``axes`` (default all). Mirrors ``jax.scipy.fft.dctn``."""
    _check(type, norm, "dctn")
    (x,) = _promote("dctn", x, to_float=True)
    axes, s = _axes(x, s, axes)
    for a, n in zip(axes, s):
        x = _dct1(_fit(x, a, n), a, norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of ``dctn``. Mirrors ``jax.scipy.fft.idctn``."""
    _check(type, norm, "idctn")
    (x,) = _promote("idctn", x, to_float=True)
    axes, s = _axes(x, s, axes)
    for a, n in zip(axes, s):
        x = _idct1(_fit(x, a, n), a, norm)
    return x
