"""``cranax.numpy.fft``: NumPy's FFT functions on the ``fft`` primitive (``lax.fft``). Mirrors
``jax.numpy.fft``.

``n``/``s`` crop or zero-pad the input along the transformed axes; ``axes`` default to the last one(s);
``norm`` is ``"backward"`` (default: unscaled forward, ``1/n`` inverse), ``"ortho"`` (``1/sqrt(n)`` both ways)
or ``"forward"``. Real inputs promote to complex64 (complex128 with x64) for the complex transforms; ``rfft*``
take real inputs. At most 3 axes per transform, as JAX.
"""
import numpy as _np

from .. import lax
from ..core import get_aval
from ._promotion import _promote, asarray, astype
from ._shape_ops import roll
from ._shapes import moveaxis
from ._creation import arange

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _complex_dtype(dt):
    return _np.dtype(_np.complex128 if dt in (_np.float64, _np.complex128) else _np.complex64)


def _fit(x, axis, n):
    """``x`` cropped or zero-padded to length ``n`` along ``axis``."""
    av = get_aval(x)
    have = av.shape[axis]
    if n == have:
        return x
    if n < have:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    cfg = [(0, 0, 0)] * av.ndim
    cfg[axis] = (0, n - have, 0)
    return lax.pad(x, _np.zeros((), av.dtype)[()], cfg)


def _scale(x, norm, n, inverse):
    if norm is None or norm == "backward":
        return x
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    if norm == "ortho":  # 1/sqrt(n) both ways (the inverse primitive already holds 1/n)
        f = 1 / _np.sqrt(n) if not inverse else _np.sqrt(n)
    else:  # forward: 1/n on the forward transform, none on the inverse
        f = 1 / n if not inverse else n
    return lax.mul(x, lax._coerce(float(f), get_aval(x).dtype))


def _axes_and_sizes(a, s, axes, name):
    nd = get_aval(a).ndim
    if axes is None:
        axes = list(range(nd - len(s), nd)) if s is not None else list(range(nd))
    axes = [int(ax) % nd if -nd <= int(ax) < nd else None for ax in axes]
    if None in axes:
        raise ValueError(f"{name}: axes out of range for an array of rank {nd}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name} does not support repeated axes. Got axes {axes}.")
    if len(axes) > 3:
        raise ValueError(f"{name} only supports 1D, 2D, and 3D FFTs. Got axes {axes} with input rank {nd}.")
    if s is None:
        s = [get_aval(a).shape[ax] for ax in axes]
    if len(s) != len(axes):
        raise ValueError(f"Shape and axes have different lengths: {s} and {axes}")
    return axes, [int(v) for v in s]


def _fftn(name, kind, a, s, axes, norm):
    (a,) = _promote(name, a)
    dt = get_aval(a).dtype
    if kind in ("fft", "ifft"):
        a = astype(a, _complex_dtype(dt)) if dt.kind != "c" else a
    elif kind == "rfft":
        if dt.kind == "c":
            raise TypeError(f"{name} requires real-valued input, got {dt.name}")
        (a,) = _promote(name, a, to_float=True)
    else:
        a = astype(a, _complex_dtype(dt)) if dt.kind != "c" else a
    axes, s = _axes_and_sizes(a, s, axes, name)
    if not axes:
        return a
    for ax, n in zip(axes[:-1] if kind == "irfft" else axes, s[:-1] if kind == "irfft" else s):
        a = _fit(a, ax, n)
    if kind == "irfft":
        a = _fit(a, axes[-1], s[-1] // 2 + 1)
    k = len(axes)
    nd = get_aval(a).ndim
    a = moveaxis(a, axes, list(range(nd - k, nd)))
    if kind == "irfft" and s[-1] < 1:
        raise ValueError(f"Invalid number of FFT data points ({s[-1]}) specified.")
    out = lax.fft(a, kind, tuple(s))
    out = moveaxis(out, list(range(nd - k, nd)), axes)
    total = int(_np.prod(s))
    return _scale(out, norm, total, kind in ("ifft", "irfft"))


def _doc(name, what):
    return (f"{what} Returns complex64 (complex128 with x64){' ' if 'irfft' not in name else ' (irfft*: real)'}. "
            f"Raises ``ValueError`` for bad axes/norm. Mirrors ``jax.numpy.fft.{name}``.")


def fft(a, n=None, axis=-1, norm=None):
    return _fftn("fft", "fft", a, None if n is None else [n], [axis], norm)


def ifft(a, n=None, axis=-1, norm=None):
    return _fftn("ifft", "ifft", a, None if n is None else [n], [axis], norm)


def rfft(a, n=None, axis=-1, norm=None):
    return _fftn("rfft", "rfft", a, None if n is None else [n], [axis], norm)


def irfft(a, n=None, axis=-1, norm=None):
    if n is None:
        n = 2 * (get_aval(asarray(a)).shape[axis] - 1)
    return _fftn("irfft", "irfft", a, [n], [axis], norm)


def fftn(a, s=None, axes=None, norm=None):
    return _fftn("fftn", "fft", a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fftn("ifftn", "ifft", a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _fftn("rfftn", "rfft", a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    a = asarray(a)
    nd = get_aval(a).ndim
    if axes is None:
        axes = list(range(nd - len(s), nd)) if s is not None else list(range(nd))
    if s is None:
        s = [get_aval(a).shape[ax] for ax in axes]
        s[-1] = 2 * (s[-1] - 1)
    return _fftn("irfftn", "irfft", a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _fftn("fft2", "fft", a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _fftn("ifft2", "ifft", a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fftn("rfft2", "rfft", a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return irfftn(a, s, axes, norm)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry (real spectrum): ``irfft(conj(a))`` scaled as a forward
    transform. Mirrors ``jax.numpy.fft.hfft``."""
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    a = asarray(a)
    return irfft(lax.conj(a) if get_aval(a).dtype.kind == "c" else a, n, axis, _SWAP[norm])


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``hfft``: ``conj(rfft(a))`` scaled as an inverse transform. Mirrors
    ``jax.numpy.fft.ihfft``."""
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return lax.conj(rfft(a, n, axis, _SWAP[norm]))


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies ``[0, 1, ..., -1] / (d * n)`` of an FFT of length ``n``. Mirrors
    ``jax.numpy.fft.fftfreq``."""
    n = int(n)
    k = arange(0, n, dtype=dtype or float)
    k = lax.select(lax.ge(k, lax._coerce((n + 1) // 2, get_aval(k).dtype)),
                   lax.sub(k, lax._coerce(float(n), get_aval(k).dtype)), k) if n else k
    return lax.div(k, lax._coerce(float(d * n), get_aval(k).dtype)) if n else k


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies ``[0, 1, ..., n//2] / (d * n)`` of an RFFT of length ``n``. Mirrors
    ``jax.numpy.fft.rfftfreq``."""
    n = int(n)
    k = arange(0, n // 2 + 1, dtype=dtype or float)
    return lax.div(k, lax._coerce(float(d * n), get_aval(k).dtype))


def fftshift(x, axes=None):
    """``x`` with the zero frequency moved to the centre (rolled by ``n//2`` along ``axes``, default all).
    Mirrors ``jax.numpy.fft.fftshift``."""
    x = asarray(x)
    axes = tuple(range(get_aval(x).ndim)) if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    return roll(x, tuple(get_aval(x).shape[a] // 2 for a in axes), axes)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``. Mirrors ``jax.numpy.fft.ifftshift``."""
    x = asarray(x)
    axes = tuple(range(get_aval(x).ndim)) if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))
    return roll(x, tuple(-(get_aval(x).shape[a] // 2) for a in axes), axes)


for _f, _what in ((fft, "1-D discrete Fourier transform along ``axis`` (length ``n``)."),
                  (ifft, "1-D inverse discrete Fourier transform."),
                  (rfft, "1-D FFT of a real input: the ``n//2 + 1`` non-negative frequencies."),
                  (irfft, "Inverse of ``rfft``: a real output of length ``n`` (default ``2*(m-1)``)."),
                  (fftn, "N-D FFT over ``axes`` (sizes ``s``)."), (ifftn, "N-D inverse FFT."),
                  (rfftn, "N-D FFT of a real input (last axis halved)."), (irfftn, "Inverse of ``rfftn``."),
                  (fft2, "2-D FFT over ``axes``."), (ifft2, "2-D inverse FFT."),
                  (rfft2, "2-D FFT of a real input."), (irfft2, "Inverse of ``rfft2``.")):
    _f.__doc__ = _doc(_f.__name__, _what)
del _f, _what
