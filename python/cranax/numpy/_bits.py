"""Bits of integers and floats: ``packbits``, ``unpackbits``, ``frexp``, ``spacing`` and the array-API names
``bitwise_left_shift``/``bitwise_right_shift``. Mirrors ``jax.numpy``."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ._promotion import _promote, asarray, astype
from ._shape_ops import where
from ._shapes import moveaxis, ravel, reshape
from ._reductions import sum
from ._ufuncs import abs, isfinite, left_shift, right_shift, signbit, subtract

__all__ = ["packbits", "unpackbits", "frexp", "spacing", "bitwise_left_shift", "bitwise_right_shift"]

bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def _bitorder(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return bitorder


def packbits(a, axis=None, bitorder="big"):
    """The nonzero-ness of ``a``'s elements packed 8 to a uint8 along ``axis`` (flattened when None), the
    last byte padded with zeros; ``bitorder`` 'big' puts the first element in the high bit. TypeError for
    non-integer, non-bool input. Mirrors ``jax.numpy.packbits``."""
    a = asarray(a)
    if not (_dtypes.issubdtype(a.dtype, _np.integer) or a.dtype == _np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    _bitorder(bitorder)
    bits = astype(a > 0, _np.uint8)
    if axis is None:
        bits, axis = ravel(bits), 0
    bits = moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    pad = (-n) % 8
    if pad:
        bits = lax.pad(bits, _np.uint8(0), [(0, 0, 0)] * (bits.ndim - 1) + [(0, pad, 0)])
    bits = reshape(bits, bits.shape[:-1] + ((n + pad) // 8, 8))
    shifts = _np.arange(8, dtype=_np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1].copy()
    packed = sum(left_shift(bits, shifts), axis=-1, dtype=_np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array ``a`` (8 per element along ``axis``, flattened when None), the first
    ``count`` of them (a negative count drops from the end). TypeError for other dtypes. Mirrors
    ``jax.numpy.unpackbits``."""
    a = asarray(a)
    if a.dtype != _np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _bitorder(bitorder)
    shifts = _np.arange(8, dtype=_np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1].copy()
    bits = (right_shift(a[..., None], shifts) & _np.uint8(1)).astype(_np.uint8)
    if axis is None:
        bits, axis = ravel(bits), 0
    else:
        axis = axis % a.ndim
        bits = moveaxis(bits, -1, axis + 1)
        bits = reshape(bits, a.shape[:axis] + (8 * a.shape[axis],) + a.shape[axis + 1:])
    if count is not None:
        idx = [slice(None)] * bits.ndim
        idx[axis] = slice(None, count)
        bits = bits[tuple(idx)]
    return bits


_FREXP = {2: (_np.uint16, _np.int16, 10, 5), 4: (_np.uint32, _np.int32, 23, 8), 8: (_np.uint64, _np.int64, 52, 11)}


def frexp(x, /):
    """``(mantissa, exponent)`` with ``x = mantissa * 2**exponent`` and 0.5 <= |mantissa| < 1 (zeros, infs and
    NaNs: themselves and exponent 0; subnormals are normalized first). Integers compute in the default float
    dtype; the exponent is int32. Mirrors ``jax.numpy.frexp``."""
    x, = _promote("frexp", x, to_float=True)
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    udt, idt, mbits, ebits = _FREXP[x.dtype.itemsize]
    bias = (1 << (ebits - 1)) - 1
    # subnormals: scale into the normal range (2**mbits), then take that many off the exponent
    tiny = _np.finfo(x.dtype).tiny
    sub = (abs(x) < tiny) & (x != 0)
    xs = where(sub, x * x.dtype.type(2.0 ** mbits), x)
    bits = lax.bitcast_convert_type(xs, udt)
    emask = udt(((1 << ebits) - 1) << mbits)
    e = astype(lax.shift_right_logical(bits & emask, udt(mbits)), idt) - idt(bias - 1)
    e = where(sub, e - idt(mbits), e)
    mant = lax.bitcast_convert_type((bits & ~emask) | udt((bias - 1) << mbits), x.dtype)
    special = (x == 0) | ~isfinite(x)
    return where(special, x, mant), astype(where(special, 0, e), _np.int32)


def spacing(x, /):
    """The distance from ``x`` to the next representable value away from zero (negative for negative
    ``x``; NaN at infinity). Integers compute in the default float dtype. Mirrors ``jax.numpy.spacing``."""
    x, = _promote("spacing", x, to_float=True)
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("spacing does not support complex-valued inputs")
    udt = _FREXP[x.dtype.itemsize][0]
    # the next float away from zero is the next bit pattern of |x| (inf's is a NaN, so inf gives NaN)
    ax = abs(x)
    up = lax.bitcast_convert_type(lax.bitcast_convert_type(ax, udt) + udt(1), x.dtype)
    d = subtract(up, ax)
    # at zero the step is the smallest subnormal, which a flushing subtraction would turn into 0
    smallest = lax.bitcast_convert_type(_np.asarray(1, udt), x.dtype)
    d = where(ax == 0, smallest, d)
    return where(signbit(x), -d, d)
