"""``cranax.ops``: segment reductions, ``out[s] = reduce(data[i] for i with segment_ids[i] == s)``, as one
scatter each. Mirrors ``jax.ops``."""
import numpy as np

from . import numpy as jnp
from .core import Tracer
from .errors import ConcretizationTypeError

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _segments(name, data, segment_ids, num_segments, mode):
    data, ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {ids.dtype}")
    if ids.ndim != 1 or data.ndim < 1 or data.shape[0] != ids.shape[0]:
        raise ValueError(f"{name}: segment_ids must be 1-D with data's leading length, got shapes "
                         f"{tuple(ids.shape)} and {tuple(data.shape)}")
    if num_segments is None:
        if isinstance(ids, Tracer):
            raise ConcretizationTypeError(ids, f"The error arose in {name}: pass a static num_segments= under jit")
        num_segments = int(np.asarray(ids).max(initial=-1)) + 1
    num_segments = int(num_segments)
    if mode not in (None, "drop", "fill", "clip", "promise_in_bounds"):
        raise ValueError(f"{name}: unknown mode {mode!r}")
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    if mode == "clip":   # clamped into [0, num_segments - 1]
        ids = jnp.clip(ids, 0, max(num_segments - 1, 0))
    else:   # out-of-range ids (negative or >= num_segments) are dropped, as JAX's default mode
        ids = jnp.where((ids < 0) | (ids >= num_segments), num_segments, ids)
    return data, ids, num_segments


def _reduce(name, method, identity, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
            bucket_size, mode):
    data, ids, n = _segments(name, data, segment_ids, num_segments, mode)
    if bucket_size is None:
        init = jnp.full((n,) + tuple(data.shape[1:]), identity(data.dtype), data.dtype)
        return getattr(init.at[ids], method)(data, indices_are_sorted=indices_are_sorted,
                                             unique_indices=unique_indices, mode="drop")
    # buckets of bucket_size consecutive rows reduce separately, then the buckets combine (as JAX, for the
    # rounding of long sums and products)
    nb = -(-ids.shape[0] // int(bucket_size))
    init = jnp.full((nb, n) + tuple(data.shape[1:]), identity(data.dtype), data.dtype)
    rows = jnp.arange(ids.shape[0]) // int(bucket_size)
    out = getattr(init.at[rows, ids], method)(data, indices_are_sorted=indices_are_sorted,
                                              unique_indices=unique_indices, mode="drop")
    combine = {"add": jnp.sum, "multiply": jnp.prod, "max": jnp.max, "min": jnp.min}[method]
    return combine(out, axis=0).astype(data.dtype)


def _max_identity(dt):
    return -np.inf if np.issubdtype(dt, np.floating) else (False if dt == np.bool_ else np.iinfo(dt).min)


def _min_identity(dt):
    return np.inf if np.issubdtype(dt, np.floating) else (True if dt == np.bool_ else np.iinfo(dt).max)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """Sum of ``data``'s rows per segment (shape ``(num_segments, *data.shape[1:])``; empty segments 0;
    ids out of range dropped). ``num_segments`` must be static under ``jit``. Mirrors
    ``jax.ops.segment_sum``."""
    return _reduce("segment_sum", "add", lambda dt: 0, data, segment_ids, num_segments, indices_are_sorted,
                   unique_indices, bucket_size, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None):
    """Product per segment (empty segments 1). Mirrors ``jax.ops.segment_prod``."""
    return _reduce("segment_prod", "multiply", lambda dt: 1, data, segment_ids, num_segments, indices_are_sorted,
                   unique_indices, bucket_size, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """Maximum per segment (empty segments -inf, or the dtype's minimum). Mirrors ``jax.ops.segment_max``."""
    return _reduce("segment_max", "max", _max_identity, data, segment_ids, num_segments, indices_are_sorted,
                   unique_indices, bucket_size, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """Minimum per segment (empty segments +inf, or the dtype's maximum). Mirrors ``jax.ops.segment_min``."""
    return _reduce("segment_min", "min", _min_identity, data, segment_ids, num_segments, indices_are_sorted,
                   unique_indices, bucket_size, mode)
