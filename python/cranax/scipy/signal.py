"""``cranax.scipy.signal``: convolutions (direct and by FFT), detrending and the windowed-FFT spectral
estimates (``stft``/``istft``, ``csd``, ``welch``). Mirrors ``jax.scipy.signal``: operands are promoted to an
inexact dtype, and the results match SciPy's (within floating-point rounding).
"""
import operator as _operator
import warnings as _warnings

import numpy as _np

from .. import lax as _lax
from .. import numpy as _jnp
from ..core import get_aval as _get_aval
from ..numpy import linalg as _nl

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft",
           "stft", "welch"]

_MODES = ("full", "same", "valid")


def _inexact(*xs):
    """The operands as arrays of their promoted inexact dtype (integers and bools to the default float)."""
    return _nl._inexact("jax.scipy.signal", *xs)


def _check_mode(mode):
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")


def _out_shape(mode, s1, s2):
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if mode == "full":
        return full
    if mode == "same":
        return tuple(s1)
    return tuple(a - b + 1 for a, b in zip(s1, s2))


# ----------------------------------------------------------------------------------------------- convolution

def _conv_real(x, k, pads):
    """``lax.conv_general_dilated`` of one real N-d signal with one (already flipped) real kernel."""
    nd = _get_aval(x).ndim
    out = _lax.conv_general_dilated(x[None, None], k[None, None], (1,) * nd, pads,
                                   precision=_lax.Precision.HIGHEST)
    return out[0, 0]


def _direct(in1, in2, mode):
    """The N-d convolution of ``in1`` and ``in2`` computed directly (a sliding dot product)."""
    _check_mode(mode)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and "
                         f"{in2.shape}.")
    in1, in2 = _inexact(in1, in2)
    big = all(a >= b for a, b in zip(in1.shape, in2.shape))
    small = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (big or small):
        raise ValueError("One input must be smaller than the other in every dimension.")
    s1 = in1.shape
    if not big:   # convolution commutes: slide the smaller one (the output stays in1's size for 'same')
        in1, in2 = in2, in1
    ks = in2.shape
    pads = [(0, 0)] * len(ks) if mode == "valid" else [(k - 1, k - 1) for k in ks]
    kern = _jnp.flip(in2)
    if _jnp.iscomplexobj(in1) or _jnp.iscomplexobj(kern):
        # (a + ib)(c + id) = (ac - bd) + i(ad + bc), each a real convolution
        a, b = _jnp.real(in1), _jnp.imag(in1)
        c, d = _jnp.real(kern), _jnp.imag(kern)
        re = _conv_real(a, c, pads) - _conv_real(b, d, pads)
        im = _conv_real(a, d, pads) + _conv_real(b, c, pads)
        out = _lax.complex(re, im)
    else:
        out = _conv_real(in1, kern, pads)
    if mode != "same":
        return out
    # 'same': in1's original extent centred in the full result (as SciPy's _centered)
    starts = tuple((f - w) // 2 for f, w in zip(out.shape, s1))
    return _lax.slice(out, starts, tuple(a + w for a, w in zip(starts, s1)))


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of ``in1`` and ``in2`` (equal ranks; one at least as large as the other in every
    dimension), ``mode`` 'full' (the whole result, each dim ``s1 + s2 - 1``), 'same' (centred, ``in1``'s
    shape) or 'valid' (no zero padding). ``method`` 'auto'/'direct' slide one over the other, 'fft' calls
    ``fftconvolve``. Result dtype: the inputs' promoted inexact dtype. Raises ValueError for bad modes,
    ranks, shapes or empty inputs. Mirrors ``jax.scipy.signal.convolve``."""
    if method not in ("auto", "direct", "fft"):
        raise ValueError("Got method={method}; expected 'auto', 'fft', or 'direct'.")
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    in1, in2 = _jnp.asarray(in1), _jnp.asarray(in2)
    if in1.ndim == 0 or in2.ndim == 0:
        return _jnp.multiply(*_inexact(in1, in2))
    return _direct(in1, in2, mode)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation ``z[k] = Σ_l in1[l + k - K] conj(in2[l])`` of ``in1`` and ``in2``:
    ``convolve(in1, conj(flip(in2)))``. Arguments as ``convolve``. Mirrors ``jax.scipy.signal.correlate``."""
    in1, in2 = _jnp.asarray(in1), _jnp.asarray(in2)
    return convolve(in1, _jnp.flip(_jnp.conj(in2)), mode=mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if _jnp.ndim(in1) != 2 or _jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution of 2-d ``in1`` and ``in2`` (``mode`` as ``convolve``; only ``boundary='fill'``
    with ``fillvalue=0``, else NotImplementedError). Mirrors ``jax.scipy.signal.convolve2d``."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode=mode, precision=precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d cross-correlation of 2-d ``in1`` and ``in2`` (arguments as ``convolve2d``). Mirrors
    ``jax.scipy.signal.correlate2d``."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _jnp.asarray(in1), _jnp.asarray(in2)
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape)) and in1.shape != in2.shape
    if mode == "same":
        # SciPy centres correlate2d's 'same' result as the convolution of the flipped in1
        return _jnp.flip(convolve(_jnp.flip(in1), _jnp.conj(in2), mode="same"))
    if mode == "valid" and smaller:
        return convolve(_jnp.flip(in2), _jnp.conj(in1), mode="valid")
    return correlate(in1, in2, mode=mode, precision=precision)


def _fftconvolve_all(in1, in2, mode):
    full = tuple(a + b - 1 for a, b in zip(in1.shape, in2.shape))
    if mode == "valid":
        big = all(a >= b for a, b in zip(in1.shape, in2.shape))
        small = all(a <= b for a, b in zip(in1.shape, in2.shape))
        if not (big or small):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every "
                             "dimension.")
        if not big:
            in1, in2 = in2, in1
    if all(a == 1 or b == 1 for a, b in zip(in1.shape, in2.shape)):
        prod = in1 * in2
    elif _jnp.iscomplexobj(in1):
        prod = _jnp.fft.ifftn(_jnp.fft.fftn(in1, full) * _jnp.fft.fftn(in2, full), full)
    else:
        prod = _jnp.fft.irfftn(_jnp.fft.rfftn(in1, full) * _jnp.fft.rfftn(in2, full), full)
    out = _out_shape(mode, in1.shape, in2.shape)
    starts = tuple((f - o) // 2 for f, o in zip(full, out))
    return _lax.slice(prod, starts, tuple(s + o for s, o in zip(starts, out)))


def fftconvolve(in1, in2, mode="full", axes=None):
    """The N-d convolution of ``in1`` and ``in2`` (equal ranks) through FFTs: exact up to rounding. ``mode``
    as ``convolve``; ``axes`` (default all) are convolved, the others must match in size and are mapped
    over. Mirrors ``jax.scipy.signal.fftconvolve``."""
    in1, in2 = _inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    _check_mode(mode)
    if axes is None:
        return _fftconvolve_all(in1, in2, mode)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(_operator.index(a) % in1.ndim for a in axes)
    mapped = [i for i in range(in1.ndim) if i not in axes]
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} in2.shape={in2.shape} "
                         f"axes={axes}")
    # the mapped axes first, flattened into one batch; each batch member convolved on its own
    perm = mapped + list(axes)
    a, b = _jnp.transpose(in1, perm), _jnp.transpose(in2, perm)
    bshape = tuple(in1.shape[i] for i in mapped)
    nb = int(_np.prod(bshape)) if bshape else 1
    a = a.reshape((nb,) + a.shape[len(mapped):])
    b = b.reshape((nb,) + b.shape[len(mapped):])
    from ..api_vmap import vmap  # (at call time: the module imports below it)
    out = vmap(lambda u, v: _fftconvolve_all(u, v, mode))(a, b)
    out = out.reshape(bshape + out.shape[1:])
    inv = [perm.index(i) for i in range(in1.ndim)]
    return _jnp.transpose(out, inv)


# ----------------------------------------------------------------------------------------------- detrend

def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """``data`` minus its least-squares trend along ``axis``: its mean (``type='constant'``) or a line on each
    piece between the breakpoints ``bp`` (``'linear'``). Result dtype: ``data``'s inexact dtype. Raises
    ValueError for unknown types or breakpoints outside the axis. Mirrors ``jax.scipy.signal.detrend``."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _inexact(data)
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    bps = _np.unique(_np.concatenate([[0], _np.atleast_1d(_np.asarray(bp, int)), [n]]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    x = _jnp.moveaxis(x, axis, 0)
    shape = x.shape
    x = x.reshape((n, -1))
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        seg = x[lo:hi]
        m = hi - lo
        # the trend of each column: the least-squares line over t = 1..m (centred, so the normal equations
        # decouple: slope = Σ (t - t̄) y / Σ (t - t̄)², intercept = ȳ)
        t = _np.arange(1, m + 1, dtype=_np.float64)
        tc = t - t.mean()
        denom = float((tc * tc).sum())
        tcv = _jnp.asarray(tc).astype(seg.dtype)[:, None]
        mean = seg.mean(0, keepdims=True)
        slope = (tcv * seg).sum(0, keepdims=True) / denom if denom > 0 else _jnp.zeros_like(mean)
        pieces.append(seg - mean - tcv * slope)
    x = _jnp.concatenate(pieces, 0) if pieces else x
    return _jnp.moveaxis(x.reshape(shape), 0, axis)


# ----------------------------------------------------------------------------------------------- spectral

def _window(window, nperseg, dtype):
    """The window array: a name SciPy's ``get_window`` knows ('hann' built in; others through SciPy when it
    is installed), a ``(name, param)`` tuple, or an array of length ``nperseg``."""
    rd = _np.dtype(_jnp.real(_jnp.zeros((), dtype)).dtype)
    if isinstance(window, str) and window in ("hann", "hanning"):
        if nperseg == 1:
            return _jnp.ones((1,), rd)
        # periodic Hann: sin(pi k / N)^2
        return _jnp.asarray(_np.sin(_np.pi * _np.arange(nperseg) / nperseg) ** 2, rd)
    if isinstance(window, str) and window in ("boxcar", "ones", "rectangular", "rect"):
        return _jnp.ones((nperseg,), rd)
    if isinstance(window, (str, tuple)):
        try:
            from scipy.signal import get_window
        except ImportError as err:
            raise ImportError(f"scipy must be available to use window={window!r}") from err
        return _jnp.asarray(get_window(window, nperseg), rd)
    win = _jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win


def _segments(window, nperseg, length, dtype):
    """The window and segment length SciPy uses: ``nperseg`` (default 256, shortened to the signal with a
    warning) for a named window, an array window's own length otherwise."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            nperseg = 256
        if nperseg > length:
            _warnings.warn(f"nperseg = {nperseg} is greater than input length  = {length}, using nperseg = "
                          f"{length}")
            nperseg = length
        return _window(window, nperseg, dtype), nperseg
    win = _jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.shape[-1]:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, win.shape[0]


def _pad_axis(x, lo, hi, mode):
    cfg = [(0, 0)] * (x.ndim - 1) + [(lo, hi)]
    if mode == "odd":
        if lo < 1:
            return x
        if lo > x.shape[-1] - 1:
            raise ValueError(f"The extension length n ({lo}) is too big. It must not exceed x.shape[axis]-1, "
                             f"which is {x.shape[-1] - 1}.")
        left = 2 * x[..., :1] - _jnp.flip(x[..., 1:lo + 1], -1)
        right = 2 * x[..., -1:] - _jnp.flip(x[..., -(lo + 1):-1], -1)
        return _jnp.concatenate([left, x, right], -1)
    return _jnp.pad(x, cfg, mode)


_BOUNDARY = {"even": "reflect", "odd": "odd", "constant": "edge", "zeros": "constant", None: None}


def _frames(x, win, detrend_fn, nperseg, noverlap, nfft, twosided):
    """The FFTs of the detrended, windowed segments of ``x[..., n]``: ``[..., segments, freqs]``."""
    n = x.shape[-1]
    step = nperseg - noverlap
    starts = _np.arange(0, n - nperseg + 1, step)
    idx = starts[:, None] + _np.arange(nperseg)[None, :]
    seg = _jnp.take(x, _jnp.asarray(idx.reshape(-1), _np.int32), axis=-1)
    seg = seg.reshape(x.shape[:-1] + idx.shape)
    seg = detrend_fn(seg)
    if _jnp.iscomplexobj(win) and not _jnp.iscomplexobj(seg):
        seg = seg.astype(_jnp.result_type(seg.dtype, _np.complex64))
    seg = win * seg
    if twosided:
        return _jnp.fft.fft(seg, n=nfft)
    return _jnp.fft.rfft(_jnp.real(seg), n=nfft)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided, scaling, axis,
              mode, boundary=None, padded=False):
    """SciPy's ``_spectral_helper``: ``(freqs, times, result)`` for ``mode`` 'psd' (cross spectra with
    ``y``) or 'stft'."""
    if boundary not in _BOUNDARY:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARY)}")
    axis = _operator.index(axis)
    if y is None:
        (x,) = _inexact(x)
        axis = axis % max(x.ndim, 1)
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, y = _inexact(x, y)
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        axis = axis % max(x.ndim, 1)
        try:
            outer = _np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:], y.shape[:axis] + y.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    cdt = _jnp.result_type(x.dtype, _np.complex64)
    fdt = _jnp.real(_jnp.zeros((), cdt)).dtype
    if nperseg is not None:
        nperseg = _operator.index(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _segments(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else _operator.index(noverlap)
    nfft = nperseg if nfft is None else _operator.index(nfft)
    if y is None and x.size == 0:
        return _jnp.zeros(x.shape, fdt), _jnp.zeros(x.shape, fdt), _jnp.zeros(x.shape, cdt)
    if y is not None and (x.size == 0 or y.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        return _jnp.zeros(shape, fdt), _jnp.zeros(shape, fdt), _jnp.zeros(shape, cdt)
    x = _jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = _jnp.moveaxis(y, axis, -1)
        if x.shape[-1] < y.shape[-1]:
            x = _pad_axis(x, 0, y.shape[-1] - x.shape[-1], "constant")
        elif y.shape[-1] < x.shape[-1]:
            y = _pad_axis(y, 0, x.shape[-1] - y.shape[-1], "constant")
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if boundary is not None:
        ext = _BOUNDARY[boundary]
        x = _pad_axis(x, nperseg // 2, nperseg // 2, ext)
        if y is not None:
            y = _pad_axis(y, nperseg // 2, nperseg // 2, ext)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = _pad_axis(x, 0, extra, "constant")
        if y is not None:
            y = _pad_axis(y, 0, extra, "constant")
    if isinstance(detrend_type, str):
        detrend_fn = lambda d: detrend(d, axis=-1, type=detrend_type)
    elif callable(detrend_type):
        detrend_fn = detrend_type
    elif not detrend_type:
        detrend_fn = lambda d: d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = _jnp.sqrt(scale)
    twosided = not return_onesided
    if return_onesided and (_jnp.iscomplexobj(x) or (y is not None and _jnp.iscomplexobj(y))):
        twosided = True
        _warnings.warn("Input data is complex, switching to return_onesided=False")
    freqs = (_jnp.fft.fftfreq(nfft, 1 / fs) if twosided else _jnp.fft.rfftfreq(nfft, 1 / fs)).astype(fdt)
    res = _frames(x, win, detrend_fn, nperseg, noverlap, nfft, twosided)
    if y is not None:
        res = _jnp.conj(res) * _frames(y, win, detrend_fn, nperseg, noverlap, nfft, twosided)
    elif mode == "psd":
        res = _jnp.conj(res) * res
    res = res * _jnp.asarray(scale).astype(cdt)
    if not twosided and mode == "psd":
        # one-sided: the energy of the negative frequencies folded onto the positive ones
        k = res.shape[-1]
        w = _np.full(k, 2.0)
        w[0] = 1.0
        if nfft % 2 == 0:
            w[-1] = 1.0
        res = res * _jnp.asarray(w, fdt)
    times = _jnp.asarray(_np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step), fdt) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    res = res.astype(cdt)
    if y is None and mode != "stft":
        res = _jnp.real(res)
    # [..., segments, freqs] -> freqs at `axis`, segments last
    res = _jnp.swapaxes(res, -1, -2)
    res = _jnp.moveaxis(res, -2, axis) if axis < res.ndim - 1 else res
    return freqs, times, res


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of ``x`` along ``axis``: ``(f, t, Zxx)`` with ``Zxx[..., f, t]``
    (complex; 'spectrum' scaling) of windows of ``nperseg`` samples overlapping by ``noverlap`` (default
    half), extended at the ``boundary`` ('zeros', 'even', 'odd', 'constant' or None) and zero-``padded`` to
    whole segments. Mirrors ``jax.scipy.signal.stft``."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum", axis,
                     "stft", boundary=boundary, padded=padded)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of ``x`` and ``y`` by Welch's method: ``(f, Pxy)``, the mean (or
    median, ``average='median'``) over segments of ``conj(X) Y``, scaled as a 'density' (per Hz) or a
    'spectrum'. ``y=None`` gives ``x``'s own (real) spectrum. Mirrors ``jax.scipy.signal.csd``."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                              axis, "psd")
    if y is not None and not _jnp.iscomplexobj(pxy):
        pxy = pxy.astype(_jnp.result_type(pxy.dtype, _np.complex64))
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                k = pxy.shape[-1]
                ii = 2 * _np.arange(1, (k - 1) // 2 + 1)
                bias = 1 + _np.sum(1.0 / (ii + 1) - 1.0 / ii)
                if _jnp.iscomplexobj(pxy):
                    pxy = _lax.complex(_jnp.median(_jnp.real(pxy), axis=-1), _jnp.median(_jnp.imag(pxy), axis=-1))
                else:
                    pxy = _jnp.median(pxy, axis=-1)
                pxy = pxy / _jnp.asarray(bias).astype(pxy.dtype)
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = pxy.reshape(pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The power spectral density of ``x`` by Welch's method: ``(f, Pxx)`` (real), ``csd(x, x)``. Mirrors
    ``jax.scipy.signal.welch``."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                     detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis,
                     average=average)
    return freqs, _jnp.real(pxx)


def _overlap_add(frames, step):
    """``Σ_j frames[..., j, :]`` placed at offset ``j * step``: ``[..., step * (n - 1) + len]``."""
    *batch, n, length = frames.shape
    out_len = step * (n - 1) + length
    # scatter-add through one index array (frame j, sample i lands at j * step + i)
    idx = (_np.arange(n)[:, None] * step + _np.arange(length)[None, :]).reshape(-1)
    flat = frames.reshape(tuple(batch) + (n * length,))
    out = _jnp.zeros(tuple(batch) + (out_len,), frames.dtype)
    return out.at[..., _jnp.asarray(idx, _np.int32)].add(flat)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True,
          boundary=True, time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform (windowed overlap-add of each segment's inverse FFT): ``(t,
    x)``; arguments as ``stft``'s. Mirrors ``jax.scipy.signal.istft``."""
    Zxx = _jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = _operator.index(freq_axis) % Zxx.ndim
    time_axis = _operator.index(time_axis) % Zxx.ndim
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(_jnp.result_type(Zxx.dtype, _np.complex64))
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg = _operator.index(nperseg or n_default)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    nfft = _operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = _operator.index(noverlap or nperseg // 2)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
        Zxx = _jnp.transpose(Zxx, outer + (freq_axis, time_axis))
    inv = _jnp.fft.irfft if input_onesided else _jnp.fft.ifft
    segs = inv(Zxx, axis=-2, n=nfft)[..., :nperseg, :]
    win = _window(window, nperseg, segs.dtype).astype(segs.dtype)
    segs = segs * win.sum()          # undoes stft's 'spectrum' scaling
    wcol = win[:, None]
    x = _overlap_add(_jnp.swapaxes(segs * wcol, -2, -1), step)
    norm = _overlap_add(_jnp.broadcast_to(win * win, (segs.shape[-1], nperseg)), step)
    if boundary:
        h = nperseg // 2
        x = x[..., h:x.shape[-1] - h]
        norm = norm[..., h:norm.shape[-1] - h]
    x = x / _jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        t_ax = time_axis - 1 if freq_axis < time_axis else time_axis
        x = _jnp.moveaxis(x, -1, t_ax)
    t = _jnp.arange(x.shape[0], dtype=_jnp.real(_jnp.zeros((), x.dtype)).dtype) / fs
    return t, x
