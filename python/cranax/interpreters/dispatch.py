"""Eager execution: a primitive applied to concrete arrays runs as a one-equation program through the same
compiler as ``jit``, cached by (primitive, params, input avals). There is no NumPy execution path."""
import os
import sys
import threading
from collections import OrderedDict

import numpy as np

from .. import _core, _monitoring, core
from .. import dtypes as _dtypes
from .. import array as _array
from ..array import Array, _to_buffer
from ..config import config
from ..core import get_aval
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from . import lowering
from . import sharding_types as _sharding_types  # noqa: F401  (sets core.propagate_sharding)

# (prim, params, avals) → (executable, out avals), least recently used first. Bounded by
# ``jax_compilation_cache_max_size`` like the core's executable cache, so eager ops on ever new shapes do not pin
# one executable (and its machine code) per shape forever.
_cache = OrderedDict()
_lock = threading.Lock()

# ``broadcast_in_dim_p``, registered by ``primitives.structural`` at import (this interpreter imports no
# primitives): eager programs broadcast rank-0 operands of elementwise primitives with it.
hooks = {}


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        return ("nd", v.shape, v.dtype.str, v.tobytes())
    return v


def _eager_program(prim, params, avals):
    """The one-equation program for ``prim`` on ``avals``. Operands of an elementwise primitive smaller
    than its result (rank 0, or size-1 dimensions of a binary one) are broadcast first."""
    invars = [Var(a) for a in avals]
    out = prim.abstract_eval(*avals, **params)
    if core.sharded_types_seen:
        out = core.propagate_sharding(prim, avals, params, out)
    outs = list(out) if prim.multiple_results else [out]
    outvars = [Var(a) for a in outs]
    eqns = []
    args = list(invars)
    if getattr(prim, "elementwise", False):
        shape = outs[0].shape
        if shape:
            for i, v in enumerate(invars):
                if v.aval.shape != shape:
                    b = Var(v.aval.update(shape=shape))
                    # rank 0 maps to no dimension; equal rank (size-1 dimensions) to each
                    dims = tuple(range(v.aval.ndim))
                    eqns.append(JaxprEqn([v], [b], hooks["broadcast_in_dim_p"],
                                         dict(shape=shape, broadcast_dimensions=dims, sharding=None)))
                    args[i] = b
    eqns.append(JaxprEqn(args, outvars, prim, params))
    return ClosedJaxpr(Jaxpr([], invars, outvars, eqns), []), outs


def compiled_for(prim, params, avals):
    try:
        # Params of one call site keep their keyword order, so the items tuple is a cheap exact key. The x64
        # setting is part of it: a param such as ``lax.empty``'s ``dtype=float`` means f32 or f64 by it.
        key = (prim, tuple(params.items()), tuple(avals), _dtypes._x64)
        hit = _cache.get(key)
    except TypeError:  # an unhashable param value (lists, arrays)
        key = (prim, _freeze(params), tuple(avals), _dtypes._x64)
        hit = _cache.get(key)
    if hit is not None:
        try:
            _cache.move_to_end(key)
        except KeyError:  # evicted or cleared by another thread meanwhile
            pass
        return hit
    # reported to jax.monitoring listeners as JAX reports an eager primitive's jit
    with _monitoring.timed(_monitoring.JAXPR_TRACE_EVENT, prim.name):
        closed, outs = _eager_program(prim, params, avals)
    with _monitoring.timed(_monitoring.LOWERING_EVENT, f"jit({prim.name})"):
        wire = lowering.lower_jaxpr(closed, prim.name)
    with _monitoring.timed(_monitoring.BACKEND_COMPILE_EVENT, f"jit({prim.name})"):
        exe = lowering.executable(wire, closed)
    hit = (exe, outs)
    bound = max(int(config.jax_compilation_cache_max_size), 1)
    with _lock:
        _cache[key] = hit
        while len(_cache) > bound:
            _cache.popitem(last=False)
    return hit


def apply_primitive(prim, *args, **params):
    """Runs ``prim`` on concrete ``args`` (Arrays, NumPy values, Python scalars) and returns Arrays."""
    avals = [get_aval(a) for a in args]
    exe, outs = compiled_for(prim, params, avals)
    bufs = [a._buf if type(a) is Array else _const_buffer(a, av) for a, av in zip(args, avals)]
    if no_execution:
        refuse_execution(prim.name)
    try:
        res = exe.execute(bufs)
    except ValueError as e:
        if _array.is_incompatible_devices(e):
            e.args = (placement_error(prim.name, args) or e.args[0],)
        raise
    arrs = [Array._from_buffer(b, av) for b, av in zip(res, outs)]
    if _float_checks:
        check_float_outputs(prim.name, arrs)
    return arrs if prim.multiple_results else arrs[0]


# The jnp functions JAX runs as jitted functions, so that JAX's placement error names them and their
# parameters: code object -> (name, parameter names), or a function of the running frame's locals giving them
# (a factory's closure serves several names). Filled at import by ``named_as_jitted``; read only on errors.
jitted_names = {}
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep   # the cranax package


def named_as_jitted(name, params):
    """Registers the decorated function (its code) as JAX's jitted ``name`` taking ``params``."""
    def register(f):
        jitted_names[f.__code__] = (name, tuple(params))
        return f
    return register


def placement_error(name, args):
    """JAX's text for committed operands on different devices: named after the outermost registered jnp
    function among the callers in cranax (its arguments, as JAX's jitted function sees them), else after the
    primitive (``args[i]``, as JAX's eager primitive)."""
    found = None
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        entry = jitted_names.get(f.f_code)
        if entry is not None:
            found = (f, entry(f.f_locals) if callable(entry) else entry)
        f = f.f_back
    if found is None:
        return _array.incompatible_devices(name, [f"args[{i}]" for i in range(len(args))], list(args))
    frame, (name, params) = found
    code = frame.f_code
    leaves = [frame.f_locals.get(v) for v in code.co_varnames[:code.co_argcount]]
    return _array.incompatible_devices(name, list(params), leaves)


# ``jax_debug_nans`` / ``jax_debug_infs``: read once per eager op through this global, kept by a listener.
_float_checks = bool(config.jax_debug_nans or config.jax_debug_infs)

DEOPT_MESSAGE = ("Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized "
                 "version.")


def bad_float(arrs):
    """'nan' / 'inf' when an output holds one the flags look for, else None (waits for the values)."""
    for a in arrs:
        if not isinstance(a, Array) or not np.issubdtype(a.dtype, np.inexact):
            continue
        v = np.asarray(a)
        if config.jax_debug_nans and np.isnan(v).any():
            return "nan"
        if config.jax_debug_infs and np.isinf(v).any():
            return "inf"
    return None


def check_float_outputs(name, arrs):
    """FloatingPointError ``invalid value (nan) encountered in <name>`` as JAX raises for a primitive whose
    output holds a NaN (``jax_debug_nans``) or an infinity (``jax_debug_infs``). JAX runs each eager op as a
    jitted program, so it first prints its de-optimization notice; so does cranax."""
    kind = bad_float(arrs)
    if kind is not None:
        print(DEOPT_MESSAGE)   # on stdout, as JAX prints it
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


def _on_config(name, value):
    global _float_checks, no_execution
    if name in ("jax_debug_nans", "jax_debug_infs"):
        _float_checks = bool(config.jax_debug_nans or config.jax_debug_infs)
    elif name == "jax_no_execution":
        no_execution = bool(config._values[name]) or config._override_count(name) > 0


# ``jax_no_execution``: True while the option may be set in some thread (the hot paths test this global).
no_execution = False


def refuse_execution(name):
    """Raises JAX's RuntimeError when ``jax_no_execution`` is set in this thread."""
    if config.jax_no_execution:
        raise RuntimeError(f"JAX tried to execute function jit({name}), but the no_execution config option is set")


config._add_listener(_on_config)


_scalar_bufs = {}


def _const_buffer(x, aval):
    """A device buffer for a host constant. Scalars (the literals of eager code, e.g. ``1.67 * x``) are cached
    by dtype and bit pattern: device buffers are immutable, so one can serve every call."""
    if _array._guards_on:
        _array._guard_h2d(aval)
    if aval.shape == ():
        v = x.val if isinstance(x, core.TypedScalar) else x
        try:
            key = (aval.dtype, np.asarray(v, aval.dtype).tobytes())
        except (TypeError, ValueError, OverflowError):
            return _to_buffer(x, aval)
        b = _scalar_bufs.get(key)
        if b is None:
            b = _to_buffer(x, aval)
            if len(_scalar_bufs) < 1024:
                _scalar_bufs[key] = b
        return b
    return _to_buffer(x, aval)


def clear_cache():
    with _lock:
        _cache.clear()
        _scalar_bufs.clear()


def _default_impl(prim):
    def impl(*args, **params):
        return apply_primitive(prim, *args, **params)
    return impl


core.Primitive.impl_default = staticmethod(_default_impl)
