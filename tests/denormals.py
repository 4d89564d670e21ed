"""Subnormal floats under JAX's CPU semantics (tests only).

cranax's CPU backend flushes subnormals to zero in arithmetic (FTZ: results; DAZ: operands), as XLA's CPU
backend does (`rust/backend/cpu/fpenv.rs`). A float64 NumPy oracle keeps them, so a sweep through the
subnormal range accepts either answer: the oracle's on the true inputs, or the oracle's on the inputs with
subnormals read as zero and its result flushed (``flushed_oracle``). The exact FTZ/DAZ results are pinned by
``tests/test_denormals.py`` with values recorded from JAX 0.10.2.
"""
import numpy as np


def flush(a, dtype=None):
    """`a` with the subnormals of `dtype` (default: `a`'s own float dtype) replaced by zeros of their sign;
    non-float arrays are returned unchanged."""
    a = np.asarray(a)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    if a.dtype.kind != "f" or dt.kind != "f":
        return a
    tiny = np.finfo(dt).tiny
    with np.errstate(invalid="ignore"):
        sub = (np.abs(a) < tiny) & (a != 0)
    return np.where(sub, np.copysign(a.dtype.type(0), a), a)


def flushed_oracle(oracle, *args, dtype=np.float32):
    """`oracle` evaluated as under FTZ/DAZ in `dtype`: operands' `dtype`-subnormals read as zero, the result's
    flushed."""
    with np.errstate(all="ignore"):
        return flush(oracle(*[flush(a, dtype) for a in args]), dtype)


def closer(actual, want, flushed):
    """Per element, whichever of `want` (subnormals kept) and `flushed` (FTZ/DAZ) is nearer `actual`; NaNs
    match NaNs. For assertions that accept either subnormal semantics."""
    a, w, f = (np.asarray(v) for v in (actual, want, flushed))
    if w.dtype.kind != "f":
        return w
    with np.errstate(all="ignore"):
        dw = np.where(np.isnan(w) & np.isnan(a), 0.0, np.abs(a.astype(np.float64) - w.astype(np.float64)))
        df = np.where(np.isnan(f) & np.isnan(a), 0.0, np.abs(a.astype(np.float64) - f.astype(np.float64)))
        pick_f = (np.nan_to_num(df, nan=np.inf) < np.nan_to_num(dw, nan=np.inf)) | (
            (a == f) & (np.signbit(a) == np.signbit(f)))
    return np.where(pick_f, f, w).astype(w.dtype)
