"""Placing arrays by sharding: ``jax.make_array_from_callback``, ``make_array_from_single_device_arrays``,
``make_array_from_process_local_data``, ``lax.with_sharding_constraint``, ``jax.reshard``. The data of an array
sharded over several CPU devices is one host buffer; its sharding says which slice each device holds
(``cranax.sharding``)."""
import numpy as np

from .array import device_put
from .core import Tracer
from .sharding import reshard
from ._pytree import tree_flatten

__all__ = ["make_array_from_callback", "make_array_from_single_device_arrays", "make_array_from_process_local_data",
           "with_sharding_constraint", "apply_out_shardings"]


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An Array of global ``shape`` laid out by ``sharding``, each device's block given by
    ``data_callback(index)`` (``index``: a tuple of slices). Mirrors ``jax.make_array_from_callback``."""
    shape = tuple(shape)
    out = None
    for dev, idx in sharding.addressable_devices_indices_map(shape).items():
        block = np.asarray(data_callback(idx))
        if out is None:
            out = np.empty(shape, dtype or block.dtype)
        out[idx] = block
    if out is None:
        out = np.zeros(shape, dtype or np.float32)
    return device_put(out, sharding)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An Array of global ``shape`` from one Array per addressable device of ``sharding`` (in its
    ``addressable_devices_indices_map`` order). ``ValueError`` when a block's shape is wrong. Mirrors
    ``jax.make_array_from_single_device_arrays``."""
    shape = tuple(shape)
    items = list(sharding.addressable_devices_indices_map(shape).items())
    if len(arrays) != len(items):
        raise ValueError(f"make_array_from_single_device_arrays: got {len(arrays)} arrays for a sharding of "
                         f"{len(items)} addressable devices")
    out = None
    for (dev, idx), a in zip(items, arrays):
        block = np.asarray(a)
        want = sharding.shard_shape(shape)
        if block.shape != want:
            raise ValueError(f"Expected shard shape {want} doesn't match the single device array shape "
                             f"{block.shape}.")
        if out is None:
            out = np.empty(shape, dtype or block.dtype)
        out[idx] = block
    return device_put(out, sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global Array whose addressable part is ``local_data`` (in one process, all of it). Mirrors
    ``jax.make_array_from_process_local_data``."""
    data = np.asarray(local_data)
    if global_shape is not None and tuple(global_shape) != data.shape:
        raise ValueError(f"make_array_from_process_local_data: global_shape {tuple(global_shape)} differs from "
                         f"the local data's {data.shape} in a single-process run")
    return device_put(data, sharding)


def with_sharding_constraint(x, shardings):
    """``x`` with the given sharding(s) (a pytree prefix of ``x``): concrete arrays are placed so; traced
    values pass unchanged (cranax computes unsharded, so the constraint changes no value). Mirrors
    ``jax.lax.with_sharding_constraint``."""
    return reshard(x, shardings)


def apply_out_shardings(fun, out_shardings):
    """``fun`` whose concrete results take ``out_shardings`` (jit's ``out_shardings``)."""
    import functools

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        out = fun(*args, **kwargs)
        if any(isinstance(v, Tracer) for v in tree_flatten(out)[0]):
            return out
        return reshard(out, out_shardings)
    for attr in ("lower", "trace", "eval_shape", "clear_cache", "_cache_size"):
        if hasattr(fun, attr):
            setattr(wrapped, attr, getattr(fun, attr))
    return wrapped
