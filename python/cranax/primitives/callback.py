"""Host callbacks: ``pure_callback_p``, ``io_callback_p``, ``debug_callback_p`` and ``debug_print_p``, with
their rules (abstract eval, jvp, transpose, batching) and their lowering.

A compiled program calls back into Python through one library step (``rust/backend/cpu/library/
callback.rs``): the wire names the callback by an id this module registers at lowering; the core's
dispatcher takes the GIL for the call only and hands ``_dispatch`` the operands as ready buffers. The GPU
backend runs such a step on the host between its kernels (its inputs are read back, its results uploaded).
Callbacks get ``cranax.Array`` arguments (as JAX's get ``jax.Array``s) and may return anything
``numpy.asarray`` accepts; results are checked against the declared shapes and dtypes with JAX's errors.
An exception a callback raises reaches the caller as itself, at the call (eager) or where the result is
waited for (jit).

Outside ``jit`` each primitive calls its callback directly on the concrete values (its impl).
"""
import copy
import itertools
import logging
import sys
import threading

import numpy as np

from .. import _core, dtypes
from ..array import Array, _from_host
from ..core import Primitive, ShapedArray
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters import lowering
from .._pytree import tree_leaves, tree_unflatten
from . import control_flow as _cf
from . import library as _lib
from . import state as _state
from . import structural as _st

__all__ = ["pure_callback_p", "io_callback_p", "debug_callback_p", "debug_print_p", "FlatCallback", "BufferCallback",
           "check_results", "VMAP_METHODS"]

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None)


class FlatCallback:
    """A Python function called with flat arguments, returning flat results (JAX's ``_FlatCallback``):
    equal for the same function and argument structure, so retracing gives equal params."""

    __slots__ = ("callback_func", "in_tree", "__weakref__")

    def __init__(self, callback_func, in_tree):
        self.callback_func = callback_func
        self.in_tree = in_tree

    def __call__(self, *flat_args):
        args, kwargs = tree_unflatten(self.in_tree, list(flat_args))
        return tree_leaves(self.callback_func(*args, **kwargs))

    def __eq__(self, other):
        return (type(other) is FlatCallback and self.callback_func == other.callback_func
                and self.in_tree == other.in_tree)

    def __hash__(self):
        return hash((self.callback_func, self.in_tree))

    def __repr__(self):
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"


class BufferCallback(FlatCallback):
    """An internal callback (the cross-process collectives) that hands back core arrays: ``buffers`` (list of
    the operands' ``_core.DeviceArray``s -> list of ``_core.DeviceArray`` with exactly the declared avals) is
    what the compiled step calls, and the step takes its results without a copy or the checks of
    ``check_results``. Calling the object itself runs ``callback_func`` as any ``FlatCallback``."""

    __slots__ = ("buffers",)

    def __init__(self, callback_func, in_tree, buffers):
        super().__init__(callback_func, in_tree)
        self.buffers = buffers

    def __eq__(self, other):
        return (type(other) is BufferCallback and self.callback_func == other.callback_func
                and self.in_tree == other.in_tree and self.buffers == other.buffers)

    def __hash__(self):
        return hash((self.callback_func, self.in_tree, self.buffers))


def _canonical(v):
    """``np.asarray(v)`` with 64-bit dtypes narrowed when x64 is off (as JAX canonicalizes callback results)."""
    a = np.asarray(v)
    dt = dtypes.canonicalize_dtype(a.dtype)
    return a if dt == a.dtype else a.astype(dt)


def check_results(outs, result_avals):
    """The callback's flat results as NumPy arrays, checked against ``result_avals`` (RuntimeError with
    JAX's messages on a count, shape or dtype mismatch)."""
    outs = list(outs)
    if len(outs) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(outs)}")
    vals = [_canonical(o) for o in outs]
    for i, (v, a) in enumerate(zip(vals, result_avals)):
        if v.shape != tuple(a.shape):
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {tuple(a.shape)}, Actual: {v.shape}")
        if v.dtype != a.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {a.dtype}, Actual: {v.dtype}")
    return vals


# ----------------------------------------------------------------------------------------------- registry

_lock = threading.Lock()
_registry = {}          # id -> host function (list of Arrays -> list of NumPy results)
_ids = {}               # key of the equation's params -> id
_counter = itertools.count(1)


def _register(key, host):
    """The id of ``host`` (one per distinct ``key``; unhashable keys get a fresh id each time). The registry
    keeps callbacks alive for as long as compiled programs may call them (the process)."""
    with _lock:
        try:
            hit = _ids.get(key)
        except TypeError:
            key, hit = None, None
        if hit is not None:
            return hit
        cid = next(_counter)
        _registry[cid] = host
        if key is not None:
            _ids[key] = cid
        return cid


def _arg(b):
    return Array._from_buffer(b, ShapedArray(tuple(b.shape), dtypes.from_short_name(b.dtype)))


def _dispatch(cid, bufs, avals):
    """Called by the core (GIL taken) for callback ``cid`` with its operands' buffers (``_core.DeviceArray``s);
    returns its results."""
    return _registry[cid](bufs)


def _on_arrays(host):
    """``host`` (list of Arrays -> results) called with core buffers, each wrapped as an Array first."""
    # a ref's buffer is copied first: the callback may keep what it was given
    return lambda bufs: host([_arg(b) for b in _state.detach_for_host(bufs)])


_core._set_host_callback(_dispatch)


def _host_fn(prim, params):
    """The host function of an equation: list of Arrays -> list of NumPy results."""
    if prim is debug_print_p:
        cb = _print_callback(params)
        return lambda args: (cb(*args), [])[1]
    cb = params["callback"]
    if prim is debug_callback_p:
        return lambda args: (cb(*args), [])[1]
    if type(cb) is BufferCallback:
        return lambda args: cb.buffers([a._buf for a in args])
    avals = params["result_avals"]
    return lambda args: check_results(cb(*args), avals)


def _wire(prim):
    def wire(eqn):
        p = eqn.params
        key = (prim, tuple(sorted(p.items())))
        cb = p.get("callback")
        # A BufferCallback takes the core buffers as they come: no Array made per operand per call (the
        # cross-process collectives, where these microseconds are the overhead over the MPI call itself).
        host = cb.buffers if type(cb) is BufferCallback else _on_arrays(_host_fn(prim, p))
        cid = _register(key, host)
        avals = [v.aval for v in eqn.outvars]
        return {"callback": cid, "results": [[dtypes.short_name(a.dtype), list(a.shape)] for a in avals]}
    return wire


def _impl(prim):
    def impl(*args, **params):
        host = _host_fn(prim, params)
        args = [a if isinstance(a, Array) else _from_host(a) for a in args]
        return [_from_host(v) for v in host(args)]
    return impl


def _callback_primitive(name):
    p = Primitive(name, multiple_results=True)
    p.operands_reach_user_code = True
    p.impl = _impl(p)
    lowering.wire_params[name] = _wire(p)
    return p


# ----------------------------------------------------------------------------------------------- primitives

pure_callback_p = _callback_primitive("pure_callback")
io_callback_p = _callback_primitive("io_callback")
debug_callback_p = _callback_primitive("debug_callback")
debug_print_p = _callback_primitive("debug_print")

pure_callback_p.abstract_eval = lambda *avals, callback, result_avals, sharding, vmap_method: list(result_avals)
io_callback_p.abstract_eval = lambda *avals, callback, result_avals, sharding, ordered: list(result_avals)
debug_callback_p.abstract_eval = lambda *avals, **params: []
debug_print_p.abstract_eval = lambda *avals, **params: []
# JAX prints these tuple params with str() (quoted strings inside).
debug_print_p.pp_params = lambda eqn: sorted(
    (k, str(v) if k in ("np_printoptions", "static_args") else v) for k, v in eqn.params.items())
# JAX's callback param is a plain function, printed as Python prints it (address masked by the printer)
debug_callback_p.pp_params = lambda eqn: sorted(
    (k, f"<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0x{id(v):x}>"
     if k == "callback" else v) for k, v in eqn.params.items())
# Effects: the core keeps io/debug callbacks even when their results are unused (``Prim::is_effectful``),
# and runs them in program order on the device's one stream, so ``ordered=`` holds for every call.


def _print_callback(params):
    """The formatting function of a ``debug_print`` equation (JAX's rule: ``str.format`` under the NumPy
    print options of the trace; without placeholders the values follow the text, space-separated)."""
    fmt, in_tree, static_args = params["fmt"], params["in_tree"], dict(params["static_args"])
    opts = dict(params["np_printoptions"])
    has_placeholders = params["has_placeholders"]

    def cb(*dyn):
        dyn = iter(dyn)
        flat = [static_args[i] if i in static_args else next(dyn) for i in range(in_tree.num_leaves)]
        args, kwargs = tree_unflatten(in_tree, flat)
        if has_placeholders:
            with np.printoptions(**opts):
                msg = fmt.format(*args, **kwargs)
        else:
            msg = " ".join((fmt, *(str(a) for a in args)))
        record = params["logging_record"]
        if record is not None:  # jax.debug.log: the record made at the call, with the text filled in
            record = copy.copy(record)
            record.msg = msg
            logging.getLogger(record.name).handle(record)
        else:
            sys.stdout.write(msg + "\n")
    return cb


# --- jvp: pure and io callbacks refuse (JAX's messages); debug callbacks see the primals only. No transpose
# rules: the jvps never put a callback in a linear jaxpr (a debug callback has no results to transpose).

def _refuse(msg):
    def rule(*args, **kwargs):
        raise ValueError(msg)
    return rule


_ad.jvp_rules[pure_callback_p] = _refuse(
    "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.")
_ad.jvp_rules[io_callback_p] = _refuse("IO callbacks do not support JVP.")


def _debug_jvp(prim):
    def rule(primals, tangents, **params):
        return prim.bind(*primals, **params), []
    return rule


for _p in (debug_callback_p, debug_print_p):
    _ad.jvp_rules[_p] = _debug_jvp(_p)


# --- batching

def _axis_size(vals, dims):
    return next(v.shape[d] for v, d in zip(vals, dims) if d is not None)


def _unmapped(size, aval):
    return ShapedArray((size,) + tuple(aval.shape), aval.dtype, aval.weak_type)


def _sequential(prim, vals, dims, params):
    """One call per batch element, in a scan over the batched operands (JAX's ``sequential``)."""
    moved = [v if d is None else _batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    batched = [i for i, d in enumerate(dims) if d is not None]

    def body(carry, xs):
        args = list(moved)
        for i, x in zip(batched, xs):
            args[i] = x
        return carry, prim.bind(*args, **params)

    _, outs = _cf.scan(body, (), [moved[i] for i in batched])
    return list(outs), [0] * len(outs)


def _pure_batch(vals, dims, *, callback, result_avals, sharding, vmap_method):
    size = _axis_size(vals, dims)
    params = dict(callback=callback, result_avals=result_avals, sharding=sharding, vmap_method=vmap_method)
    # a shard_map runs the callback once per device on its block, whatever vmap_method says (as JAX's)
    if vmap_method in ("sequential", "sequential_unrolled") or _batching.in_shard_map():
        return _sequential(pure_callback_p, vals, dims, params)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of 'sequential', "
            "'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. "
            f"Got vmap_method={vmap_method}.")
    moved = [v if d is None else _batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    if vmap_method != "legacy_vectorized":
        n = size if vmap_method == "broadcast_all" else 1
        moved = [_st.broadcast(v, (n,)) if d is None else v for v, d in zip(moved, dims)]
    params["result_avals"] = tuple(_unmapped(size, a) for a in result_avals)
    outs = pure_callback_p.bind(*moved, **params)
    return list(outs), [0] * len(outs)


def _io_batch(vals, dims, *, callback, result_avals, sharding, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, vals, dims,
                       dict(callback=callback, result_avals=result_avals, sharding=sharding, ordered=ordered))


def _debug_batch(prim):
    def rule(vals, dims, **params):
        # One call per batch element, unrolled, so each element prints its own line (as JAX).
        for i in range(_axis_size(vals, dims)):
            prim.bind(*[v if d is None else _lib.index_in_dim(v, i, d, keepdims=False)
                        for v, d in zip(vals, dims)], **params)
        return [], []
    return rule


_batching.batching_rules[pure_callback_p] = _pure_batch
_batching.batching_rules[io_callback_p] = _io_batch
_batching.batching_rules[debug_callback_p] = _debug_batch(debug_callback_p)
_batching.batching_rules[debug_print_p] = _debug_batch(debug_print_p)
