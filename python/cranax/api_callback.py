"""``jax.pure_callback``, ``jax.experimental.io_callback`` and ``jax.effects_barrier``: calls from a
program (eager, jitted, vmapped, inside loops) into Python. The primitives and their rules live in
``primitives/callback.py``."""
import numpy as np

from . import dtypes
from .array import devices
from .core import ShapedArray
from .primitives.callback import VMAP_METHODS, FlatCallback, io_callback_p, pure_callback_p
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["pure_callback", "io_callback", "effects_barrier"]


def _result_avals(result_shape_dtypes):
    def aval(x):
        dt = np.dtype(x.dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled")
        return ShapedArray(tuple(x.shape), dt)
    return tree_flatten(tree_map(aval, result_shape_dtypes))


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None, **kwargs):
    """Calls the pure Python function ``callback(*args, **kwargs)`` from eager or transformed code
    (``jax.pure_callback``).

    ``callback`` gets ``cranax.Array`` arguments (the pytrees ``args``/``kwargs``) and returns a pytree of
    array-likes matching ``result_shape_dtypes`` (leaves with ``shape`` and ``dtype``, e.g.
    ``ShapeDtypeStruct``). The call may be removed when its results are unused (it is pure). Under ``vmap``
    ``vmap_method`` says how: ``"sequential"``/``"sequential_unrolled"`` (one call per element),
    ``"expand_dims"`` (one call, unbatched operands get a leading axis of size 1), ``"broadcast_all"`` (the
    same, broadcast to the batch size), ``"legacy_vectorized"`` (unbatched operands as they are).

    Raises ValueError for an unknown ``vmap_method`` or a 64-bit result dtype without x64, NotImplementedError
    under ``vmap`` without ``vmap_method``, ValueError under ``jvp``/``grad`` (wrap it in ``custom_jvp``),
    RuntimeError when the results do not match ``result_shape_dtypes``; an exception ``callback`` raises
    reaches the caller as itself. Returns a pytree of Arrays shaped like ``result_shape_dtypes``.
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(VMAP_METHODS)}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_flatten((args, kwargs))
    flat_avals, out_tree = _result_avals(result_shape_dtypes)
    out = pure_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree), result_avals=tuple(flat_avals),
                               sharding=sharding, vmap_method=vmap_method)
    return tree_unflatten(out_tree, list(out))


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """Calls the impure Python function ``callback(*args, **kwargs)`` (``jax.experimental.io_callback``).

    Always runs, also when its results are unused, in program order (``ordered=True`` asks for that order
    among ordered effects; cranax runs every callback of a device in program order). Arguments and results as
    ``pure_callback``. Raises ValueError under ``jvp``/``grad``, and under ``vmap`` when ``ordered``
    (unordered calls run once per batch element); RuntimeError on mismatched results.
    """
    flat_args, in_tree = tree_flatten((args, kwargs))
    flat_avals, out_tree = _result_avals(result_shape_dtypes)
    out = io_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree), result_avals=tuple(flat_avals),
                             sharding=sharding, ordered=ordered)
    return tree_unflatten(out_tree, list(out))


def effects_barrier():
    """Waits until every computation dispatched so far (and so every callback it makes) has run
    (``jax.effects_barrier``)."""
    for d in devices():
        d.synchronize()
