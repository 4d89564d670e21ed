"""``jax.experimental.multihost_utils``: host-level helpers for multi-process runs (``cranax.distributed``),
carried by the MPI transport. In a single-process run each is the identity (or a no-op), as in JAX."""
import zlib

import numpy as np

from .. import _transport
from ..array import _from_host
from .._pytree import tree_map

__all__ = ["process_allgather", "sync_global_devices", "broadcast_one_to_all", "assert_equal"]


def _host(x):
    return np.asarray(x)


def process_allgather(in_tree, tiled=False):
    """Every process's value of each leaf of ``in_tree``: stacked along a new leading axis (``tiled``:
    concatenated along axis 0), in process order, as host-backed Arrays. Mirrors
    ``jax.experimental.multihost_utils.process_allgather``."""
    def one(x):
        x = _host(x)
        if _transport.state.process_count == 1:
            g = x[None]
        else:
            g = _transport.allgather(x)
        if tiled:
            g = g.reshape((-1,) + g.shape[2:]) if g.ndim > 1 else g
        return _from_host(g)
    return tree_map(one, in_tree)


def sync_global_devices(name):
    """Blocks until every process reaches a call with the same ``name``; ``AssertionError`` when the
    processes passed different names. Mirrors ``jax.experimental.multihost_utils.sync_global_devices``."""
    if _transport.state.process_count == 1:
        return
    h = np.array([zlib.crc32(str(name).encode())], np.uint32)
    hs = _transport.allgather(h)
    if not (hs == h).all():
        raise AssertionError(f"sync_global_devices name mismatch ('{name}')")


def broadcast_one_to_all(in_tree, is_source=None):
    """Every process gets the source process's ``in_tree`` (the source: ``is_source``, default process 0;
    the first process that says True when several do). Mirrors
    ``jax.experimental.multihost_utils.broadcast_one_to_all``."""
    st = _transport.state
    if st.process_count == 1:
        return tree_map(lambda x: _from_host(_host(x)), in_tree)
    if is_source is None:
        is_source = st.process_index == 0
    flags = _transport.allgather(np.array([bool(is_source)], np.int32))[:, 0]
    if not flags.any():
        raise ValueError("broadcast_one_to_all: no process is the source (is_source=False everywhere)")
    root = int(np.argmax(flags))
    return tree_map(lambda x: _from_host(_transport.bcast(_host(x), root)), in_tree)


def assert_equal(in_tree, fail_message=""):
    """``AssertionError`` (starting with ``fail_message``) unless every process holds equal leaves. Mirrors
    ``jax.experimental.multihost_utils.assert_equal``."""
    if _transport.state.process_count == 1:
        return

    def check(x):
        x = _host(x)
        g = _transport.allgather(x)
        if not all(np.array_equal(g[0], g[i]) for i in range(1, g.shape[0])):
            raise AssertionError(f"{fail_message} Expected equal values across processes, got {g.tolist()}")
    tree_map(check, in_tree)
