"""Small program-level API of the top-level ``jax`` namespace: ``linear_transpose``, ``fwd_and_bwd``,
``live_arrays``, ``copy_to_host_async``, ``print_environment_info``, ``make_user_context`` and the
``jax.memory`` namespace."""
import enum
import functools
import gc
import platform
import sys
import threading
import types

import numpy as np

from . import dtypes
from ._version import __version__
from . import lax
from .api import ShapeDtypeStruct, _all_jit_caches, _registry_lock, eval_shape, jit
from .api_ad import vjp
from .array import Array, devices, process_count
from .core import ShapedArray, get_aval
from ._pytree import Partial, tree_flatten, tree_leaves, tree_unflatten

__all__ = ["linear_transpose", "fwd_and_bwd", "live_arrays", "copy_to_host_async", "print_environment_info",
           "make_user_context", "memory"]


def _transposed(fun, in_tree, in_avals, out_tree, out_avals, out_cotangent):
    cts, ct_tree = tree_flatten(out_cotangent)
    if ct_tree != out_tree:
        raise TypeError(f"cotangent tree does not match function output, expected {out_tree} but got {ct_tree}")
    for c, a in zip(cts, out_avals):
        if tuple(np.shape(c)) != tuple(a.shape) or dtypes.result_type(c) != a.dtype:
            raise TypeError(f"cotangent type does not match function output, expected {list(out_avals)} but got "
                            f"{cts}")
    # The VJP of a linear function is its transpose at every point: take it at zero.
    zeros = [np.zeros(a.shape, a.dtype) for a in in_avals]
    _, f_vjp = vjp(lambda *xs: fun(*tree_unflatten(in_tree, list(xs))), *zeros)
    in_cts = tree_leaves(f_vjp(tree_unflatten(out_tree, cts)))
    # Each cotangent has its primal's type (weak for a Python scalar primal, as JAX's).
    return tree_unflatten(in_tree, [lax._convert(c, a.dtype, a.weak_type) for c, a in zip(in_cts, in_avals)])


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``: ``linear_transpose(f, *primals)(ct)`` gives, for an output
    cotangent ``ct`` of ``f(*primals)``'s structure, shapes and dtypes, a tuple shaped as ``primals`` (arrays or
    ``ShapeDtypeStruct``s; only their shapes/dtypes matter). The result is a ``Partial`` (a pytree). Raises
    TypeError for functions that are not float/complex to float/complex, and for a cotangent of another
    structure or type; NotImplementedError for ``reduce_axes`` and integer functions (JAX transposes those;
    cranax's VJP gives integers no cotangent). Mirrors ``jax.linear_transpose``."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_flatten(primals)
    in_avals = [ShapedArray(tuple(a.shape), dtypes.canonicalize_dtype(a.dtype), bool(getattr(a, "weak_type", False)))
                if isinstance(a, ShapeDtypeStruct) else get_aval(a) for a in leaves]
    out = eval_shape(fun, *primals)
    out_leaves, out_tree = tree_flatten(out)
    in_dts = [a.dtype for a in in_avals]
    out_dts = [np.dtype(a.dtype) for a in out_leaves]
    inexact = all(dtypes.issubdtype(d, np.inexact) for d in in_dts + out_dts)
    if not inexact:
        if all(dtypes.issubdtype(d, np.integer) for d in in_dts + out_dts):
            raise NotImplementedError("linear_transpose of integer -> integer functions is not implemented in "
                                      "cranax")
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
                        f"integer functions, but got {in_dts} -> {out_dts}.")
    out_avals = [types.SimpleNamespace(shape=tuple(a.shape), dtype=np.dtype(a.dtype)) for a in out_leaves]
    # A pytree with no leaves (the function and its types are static), as JAX returns a Partial.
    return Partial(functools.partial(_transposed, fun, in_tree, in_avals, out_tree, out_avals))


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """``(fwd, bwd)``: ``fwd(*primals)`` gives ``(fun(*primals), residuals)`` (with ``has_aux``,
    ``(out, residuals, aux)``), ``bwd(residuals, ct)`` the cotangents of the arguments ``argnums`` (a tuple for
    a sequence of argnums, the one cotangent for an int). With ``jitted`` both are ``jit``-compiled once and
    reused. cranax's residuals are the primal arguments: ``bwd`` recomputes the forward pass inside its
    compiled program (values as JAX's). Mirrors ``jax.fwd_and_bwd``."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def _partial(args):
        def f(*dyn):
            full = list(args)
            for i, d in zip(nums, dyn):
                full[i] = d
            return fun(*full)
        return f, [args[i] for i in nums]

    def fwd(*args):
        out = fun(*args)
        if has_aux:
            out, aux = out
            return out, tuple(args), aux
        return out, tuple(args)

    def bwd(residuals, ct):
        f, dyn = _partial(residuals)
        if has_aux:
            _, f_vjp, _ = vjp(f, *dyn, has_aux=True)
        else:
            _, f_vjp = vjp(f, *dyn)
        cts = f_vjp(ct)
        return cts[0] if single else cts

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd


def live_arrays(platform=None):
    """The Arrays alive now (on ``platform``'s devices, default: every platform). Mirrors
    ``jax.live_arrays``."""
    return [o for o in gc.get_objects() if type(o) is Array and (platform is None or o.device.platform == platform)]


def copy_to_host_async(x):
    """Starts the host copy of every Array leaf of ``x`` (a no-op for other leaves); returns ``x``. Mirrors
    ``jax.copy_to_host_async``."""
    for leaf in tree_leaves(x):
        fn = getattr(leaf, "copy_to_host_async", None)
        if fn is not None:
            fn()
    return x


def print_environment_info(return_string=False):
    """cranax's version, NumPy's and Python's, the devices, the process count and the platform, in JAX's
    layout; returned with ``return_string=True``, else printed. Mirrors ``jax.print_environment_info``."""
    devs = devices()
    info = "\n".join([
        f"cranax: {__version__}",
        f"numpy:  {np.__version__}",
        f"python: {sys.version}",
        f"device info: {devs[0].platform}-{len(devs)}, {len(devs)} local devices\"",
        f"process_count: {process_count()}",
        f"platform: {platform.uname()}",
    ]) + "\n"
    if return_string:
        return info
    print(info)


class UserContext:
    """A value that ``jit``'s caches depend on (``jax.make_user_context``): ``ctx.value``; ``with ctx(v):``
    sets it in this thread. A change of value makes jitted functions trace again (cranax empties the
    trace caches at each change rather than keying them by the value: same retracing, no reuse when the
    value comes back; compiled executables are still shared through the core's cache)."""

    def __init__(self, default_value=None):
        self._default = default_value
        self._local = threading.local()

    @property
    def value(self):
        stack = getattr(self._local, "stack", None)
        return stack[-1] if stack else self._default

    def __call__(self, new_value):
        return _UserContextManager(self, new_value)


class _UserContextManager:
    def __init__(self, ctx, value):
        self._ctx, self._value = ctx, value

    def __enter__(self):
        before = self._ctx.value
        self._ctx._local.__dict__.setdefault("stack", []).append(self._value)
        if before != self._value:
            _drop_traces()
        return self

    def __exit__(self, *exc):
        inner = self._ctx._local.stack.pop()
        if inner != self._ctx.value:
            _drop_traces()
        return False


def _drop_traces():
    with _registry_lock:
        holders = list(_all_jit_caches)
    for h in holders:
        h.execs.clear()
        h.traces.clear()


def make_user_context(default_value=None):
    """A :class:`UserContext` starting at ``default_value``. Mirrors ``jax.make_user_context``."""
    return UserContext(default_value)


class MemorySpace(enum.Enum):
    """Where an array's memory lives (``jax.memory.Space``); cranax arrays live in device memory."""
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"


memory = types.SimpleNamespace(Space=MemorySpace)
