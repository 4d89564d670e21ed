"""The ``fft`` primitive (``lax.fft`` with ``FftType``): FFT / IFFT / RFFT / IRFFT over the trailing
``len(fft_lengths)`` axes, with its abstract eval, jvp and transpose (it is linear), batching rule and its
lowering.

Lowering: the core's ``fft`` library step (``rust/backend/cpu/library/fft.rs``, rustfft/realfft) transforms
the last axis of a (real, imag) pair of real arrays; a transform over several axes is emitted as one such step
per axis (transposing the axis last and back), RFFT first on the last axis, IRFFT last on it. The GPU backend
runs the step on the host. Transposes (bilinear pairing ``Re Σ ct·y``, as JAX's complex transposes): FFT and
IFFT are symmetric matrices; RFFT's is ``real(fft(ct padded to n))``, IRFFT's ``w·conj(rfft(ct))/n`` with
``w = 2`` except for the frequencies 0 and n/2.
"""
import enum

import numpy as np

from ..core import ShapedArray, get_aval, typed_scalar
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters import lowering as _lo
from . import elementwise as _el
from . import library as _lib
from . import structural as _st
from .standard import standard_primitive


class FftType(enum.IntEnum):
    """The transforms of ``lax.fft``. Mirrors ``jax.lax.FftType``."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


_BY_NAME = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT, "irfft": FftType.IRFFT}


def _fft_type(t):
    if isinstance(t, str):
        try:
            return _BY_NAME[t.lower()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{t}'") from None
    return FftType(int(t))


def _complex_of(dt):
    return np.dtype(np.complex128 if np.dtype(dt) in (np.float64, np.complex128) else np.complex64)


def _real_of(dt):
    return np.dtype(np.float64 if np.dtype(dt) in (np.float64, np.complex128) else np.float32)


def _fft_abstract(x, fft_type, fft_lengths):
    k = len(fft_lengths)
    if k < 1 or k > 3 or k > x.ndim:
        raise ValueError(f"fft_lengths {tuple(fft_lengths)} must name 1 to 3 of the trailing axes of an operand of "
                         f"shape {x.shape}")
    tail = tuple(x.shape[x.ndim - k:])
    if fft_type in (FftType.FFT, FftType.IFFT):
        if x.dtype.kind != "c":
            raise TypeError(f"{fft_type.name} requires complex input, got {x.dtype.name}")
        if tail != tuple(fft_lengths):
            raise ValueError(f"FFT input shape {x.shape} must end in fft_lengths {tuple(fft_lengths)}")
        return x
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise TypeError(f"RFFT requires float32 or float64 input, got {x.dtype.name}")
        if tail != tuple(fft_lengths):
            raise ValueError(f"RFFT input shape {x.shape} must end in fft_lengths {tuple(fft_lengths)}")
        shape = x.shape[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _complex_of(x.dtype), False)
    if x.dtype.kind != "c":
        raise TypeError(f"IRFFT requires complex input, got {x.dtype.name}")
    want = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
    if tail != want:
        raise ValueError(f"IRFFT input shape {x.shape} must end in {want} for fft_lengths {tuple(fft_lengths)}")
    return ShapedArray(x.shape[:-1] + (fft_lengths[-1],), _real_of(x.dtype), False)


fft_p = standard_primitive("fft", _fft_abstract)
fft_p.pp_params = lambda eqn: [("fft_lengths", tuple(eqn.params["fft_lengths"])),
                               ("fft_type", eqn.params["fft_type"])]


def fft(x, fft_type, fft_lengths):
    """The FFT of ``x`` over its trailing ``len(fft_lengths)`` axes (1 to 3), unnormalized forward and
    ``1/n``-normalized inverse: ``FFT``/``IFFT`` complex → complex; ``RFFT`` float32/64 → complex64/128 with
    the last axis ``n//2 + 1``; ``IRFFT`` the inverse of RFFT (last axis ``n``). ``fft_type`` is an
    ``FftType`` or its name. Raises ``TypeError`` for wrong dtypes and ``ValueError`` for shapes that do not
    end in ``fft_lengths``. Mirrors ``jax.lax.fft``."""
    t = _fft_type(fft_type)
    x = _el._as_operand(x)
    lengths = tuple(int(n) for n in np.atleast_1d(fft_lengths))
    return fft_p.bind(x, fft_type=t, fft_lengths=lengths)


# ---- lowering: one library step per axis

def _step(em, kind, n, ins, rd, shape_in):
    """One core ``fft`` step on the last axis: returns its result atoms (a pair, or one for IRFFT)."""
    shape = list(shape_in)
    if kind == "RFFT":
        shape[-1] = n // 2 + 1
    elif kind == "IRFFT":
        shape[-1] = n
    n_out = 1 if kind == "IRFFT" else 2
    outs = [em.new_var(rd, shape, "fft") for _ in range(n_out)]
    em.eqns.append({"prim": "fft", "params": {"fft_type": kind, "n": int(n)}, "in": list(ins),
                    "out": [d for _, d in outs]})
    vids = [v for v, _ in outs]
    return (tuple(vids), shape) if n_out == 2 else (vids[0], shape)


def _swap_last(em, pair, rd, shape, axis):
    """``pair`` with ``axis`` and the last axis exchanged (the same permutation undoes it)."""
    perm = list(range(len(shape)))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    out_shape = [shape[p] for p in perm]
    return tuple(em.op("transpose", [p], rd, out_shape, {"permutation": perm}) for p in pair), out_shape


def _complex_steps(em, pair, rd, shape, kind, axes):
    for a in axes:
        if a == len(shape) - 1:
            pair, shape = _step(em, kind, shape[a], pair, rd, shape)
        else:
            pair, shape = _swap_last(em, pair, rd, shape, a)
            pair, shape = _step(em, kind, shape[-1], pair, rd, shape)
            pair, shape = _swap_last(em, pair, rd, shape, a)
    return pair, shape


def _fft_lowering(em, eqn, ins):
    x = eqn.invars[0].aval
    t, lengths = eqn.params["fft_type"], eqn.params["fft_lengths"]
    rd = _lo.real_dtype(x.dtype)
    r = x.ndim
    lead = list(range(r - len(lengths), r - 1))
    shape = list(x.shape)
    if t in (FftType.FFT, FftType.IFFT):
        pair, _ = _complex_steps(em, ins[0], rd, shape, t.name, list(reversed(lead)) + [r - 1])
        return [pair]
    if t == FftType.RFFT:
        pair, shape = _step(em, "RFFT", lengths[-1], [ins[0]], rd, shape)
        pair, _ = _complex_steps(em, pair, rd, shape, "FFT", lead)
        return [pair]
    pair, shape = _complex_steps(em, ins[0], rd, shape, "IFFT", lead)
    out, _ = _step(em, "IRFFT", lengths[-1], pair, rd, shape)
    return [out]


_lo.complex_rules["fft"] = _fft_lowering


# ---- rules

def _fft_transpose(ct, x, fft_type, fft_lengths):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    k = len(fft_lengths)
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft(ct, fft_type, fft_lengths)]
    if fft_type == FftType.RFFT:
        # x ↦ FFT_lead(RFFT_last(x)): transpose the leading FFTs, then RFFT_last's: real(fft(pad(ct, n)))
        if k > 1:
            ct = _lead_fft(ct, FftType.FFT, k - 1)
        n = fft_lengths[-1]
        m = n // 2 + 1
        cfg = [(0, 0, 0)] * (ct.ndim - 1) + [(0, n - m, 0)]
        padded = _lib.lax_pad(ct, typed_scalar(0, get_aval(ct).dtype, False), cfg)
        return [_el.real(fft(padded, FftType.FFT, (n,)))]
    # IRFFT: x ↦ IRFFT_last(IFFT_lead(X)); transposes in reverse order
    n = fft_lengths[-1]
    m = n // 2 + 1
    d = _el.conj(fft(ct, FftType.RFFT, (n,)))
    w = np.full(m, 2.0 / n)
    w[0] = 1.0 / n
    if n % 2 == 0:
        w[-1] = 1.0 / n
    d = _el.mul(d, _st.broadcast_in_dim(np.asarray(w, get_aval(d).dtype), get_aval(d).shape, (get_aval(d).ndim - 1,)))
    if k > 1:
        d = _lead_fft(d, FftType.IFFT, k - 1)
    return [d]


def _lead_fft(x, t, k):
    """``t`` (FFT/IFFT) over the ``k`` axes before the last of ``x``: moved last, transformed, moved back."""
    r = get_aval(x).ndim
    perm = list(range(r - k - 1)) + [r - 1] + list(range(r - k - 1, r - 1))
    y = _st.transpose(x, perm)
    y = fft(y, t, get_aval(y).shape[r - k:])
    inv = [perm.index(i) for i in range(r)]
    return _st.transpose(y, inv)


_ad.deflinear(fft_p, _fft_transpose)


def _fft_batch(vals, dims, fft_type, fft_lengths):
    (x,), (d,) = vals, dims
    x = _batching.moveaxis(x, d, 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


_batching.batching_rules[fft_p] = _fft_batch
