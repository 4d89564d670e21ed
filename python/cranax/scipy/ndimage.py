"""``cranax.scipy.ndimage``: mirrors ``jax.scipy.ndimage``."""
import itertools as _itertools

from .. import numpy as _jnp

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _fix_index(i, n, mode):
    if mode == "nearest":
        return _jnp.clip(i, 0, n - 1), None
    if mode == "wrap":
        return _jnp.mod(i, n), None
    if mode == "mirror":
        p = 2 * (n - 1) if n > 1 else 1
        m = _jnp.mod(i, p)
        return _jnp.where(m >= n, p - m, m), None
    if mode == "reflect":
        p = 2 * n
        m = _jnp.mod(i, p)
        return _jnp.where(m >= n, p - 1 - m, m), None
    valid = (i >= 0) & (i < n)
    return _jnp.clip(i, 0, n - 1), valid


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """Samples ``input`` (any rank) at the points ``coordinates`` (one array per input axis, all of one
    shape) by spline interpolation of ``order`` 0 (nearest) or 1 (linear); ``mode`` is 'constant' (``cval``
    outside), 'nearest', 'wrap', 'mirror' or 'reflect'. Shape: the coordinates'; dtype: ``input``'s.
    Raises ``ValueError`` for a wrong number of coordinate arrays, ``NotImplementedError`` for order > 1
    (as JAX). Mirrors ``jax.scipy.ndimage.map_coordinates``."""
    input = _jnp.asarray(input)
    coordinates = [_jnp.asarray(c) for c in coordinates]
    if len(coordinates) != input.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input.ndim}")
    if order not in (0, 1):
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    if mode not in _MODES:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}")
    cdt = coordinates[0].dtype if _jnp.issubdtype(coordinates[0].dtype, _jnp.floating) else _jnp.float_
    per_axis = []
    for c, n in zip(coordinates, input.shape):
        c = c.astype(cdt)
        if order == 0:
            # nearest sample: floor(c + 1/2), as JAX
            i = _jnp.floor(c + 0.5).astype(_jnp.int32)
            idx, valid = _fix_index(i, n, mode)
            per_axis.append([(idx, valid, None)])
        else:
            lo = _jnp.floor(c)
            w = c - lo
            lo = lo.astype(_jnp.int32)
            i0, v0 = _fix_index(lo, n, mode)
            i1, v1 = _fix_index(lo + 1, n, mode)
            per_axis.append([(i0, v0, 1 - w), (i1, v1, w)])
    out = None
    for combo in _itertools.product(*per_axis):
        idx = tuple(t[0] for t in combo)
        val = input[idx]
        valid = None
        weight = None
        for _, v, w in combo:
            if v is not None:
                valid = v if valid is None else valid & v
            if w is not None:
                weight = w if weight is None else weight * w
        if valid is not None:
            val = _jnp.where(valid, val, _jnp.asarray(cval, val.dtype))
        term = val if weight is None else val * weight.astype(val.dtype) if _jnp.issubdtype(val.dtype, _jnp.inexact) \
            else val * weight
        out = term if out is None else out + term
    if _jnp.issubdtype(input.dtype, _jnp.integer):
        out = _jnp.round(out).astype(input.dtype)
    return out.astype(input.dtype)
