"""The user API: ``jit``, ``make_jaxpr``, ``eval_shape``, ``clear_caches``.

A jitted call flattens its arguments, builds the signature (pytree structure; each leaf's shape, dtype,
weak type; static argument values) and looks it up in the function's ``JitCache`` (in Rust, thread-safe,
one trace+compile per signature even under racing threads). A miss traces the function to a jaxpr, lowers
it and compiles it in the core, whose second-level cache (keyed by the optimized program's structure) means
a re-created ``lambda`` retraces but does not recompile. Inside another transformation the call is staged
as one ``jit`` equation whose rules (eval, jvp, transpose, batching) apply to the inner jaxpr.
"""
import contextlib
import functools
import gc
import inspect
import logging
import operator
import sys
import threading
import time
import warnings
import weakref

import numpy as np

from . import _core, core, dtypes
from . import errors as _errors
from . import profiler as _profiler
from . import dump_ir as _dump_ir
from . import _monitoring
from .array import (Array, _arg_buffer, _scalar_buffer, _to_buffer, float0_out_tree, incompatible_devices,
                    is_incompatible_devices)
from .config import config
from .core import ShapedArray, Tracer, get_aval
from .interpreters import dispatch, lowering
from .interpreters.eval import eval_jaxpr
from .interpreters.partial_eval import (_STATIC, DynamicJaxprTracer, LazyNames, arg_names, debug_info,
                                        keeps_call_consts, trace_to_jaxpr)
from .jaxpr import ClosedJaxpr, Jaxpr
from .primitives.jit import hi_runner as _hi_runner, jit_p
from .primitives import state as _state
from .api_sharding import apply_out_shardings
from ._layout import Format
from .stages import Traced, Wrapped
from ._pytree import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["jit", "make_jaxpr", "eval_shape", "clear_caches", "ShapeDtypeStruct", "disable_jit", "named_call",
           "named_scope", "checking_leaks", "check_tracer_leaks", "debug_nans", "debug_infs", "log_compiles"]

_log = logging.getLogger("cranax")
_compile_log = logging.getLogger("jax._src.dispatch")


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (``jax.ShapeDtypeStruct``). ``sharding`` may be a
    ``Format`` (its layout kept apart, printed ``format=Layout(...)``); equality and hash cover the sharding,
    layout and weak type, as JAX's."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "_dll")

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape = tuple(shape)
        # a typed key's dtype (``key<fry>``) is kept as given: NumPy has no name for it
        self.dtype = dtype if dtypes._extended_type(dtype) else dtypes.canonicalize_dtype(dtype)
        self.weak_type = weak_type
        fmt = isinstance(sharding, Format)
        self._dll = sharding.layout if fmt else None
        # kept as given (None: unspecified), as JAX's; cranax places on one device
        self.sharding = sharding.sharding if fmt else sharding

    @classmethod
    def like(cls, x):
        """The struct of array-like ``x`` (its shape, dtype and weak type; a struct's sharding and layout kept),
        as JAX's ``ShapeDtypeStruct.like``: the ``result_shape_dtypes`` of a callback written from an example."""
        if isinstance(x, _state.Ref):
            raise NotImplementedError("Ref/AbstractRef support is not implemented. Please file an issue at"
                                      " https://github.com/jax-ml/jax/issues")
        if isinstance(x, ShapeDtypeStruct):
            return cls(x.shape, x.dtype, weak_type=x.weak_type, sharding=x.format if x._dll else x.sharding)
        if isinstance(x, str):   # JAX's texts: a str names itself, other dtype-less values their type
            raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
        try:
            aval = core.typeof(x)
        except TypeError:
            raise TypeError(f"Cannot interpret value of type {type(x)} as an abstract array; it does not have a "
                            f"dtype attribute") from None
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)

    @property
    def format(self):
        return Format(self._dll, self.sharding)

    @property
    def aval(self):
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))

    def __repr__(self):
        sh = f", sharding={self.sharding}" if self.sharding is not None else ""
        fm = f", format={self._dll}" if self._dll is not None else ""
        w = f", weak_type={self.weak_type}" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={getattr(self.dtype, 'name', self.dtype)}{sh}{fm}{w})"

    def _key(self):
        return (self.shape, self.dtype, self.sharding, self._dll, bool(self.weak_type))

    def __eq__(self, o):
        return isinstance(o, ShapeDtypeStruct) and self._key() == o._key()

    def __hash__(self):
        return hash(self._key())


# ----------------------------------------------------------------------------------------------- the jit primitive

# ----------------------------------------------------------------------------------------------- jit

_miss_callsites = set()   # call sites that reported a never-seen function (JAX's re-definition hint)


def _static_arg_paths(statics, in_tree):
    """``{input path: static value}`` for a call's static arguments, where JAX's cache key holds them as
    ``Static`` nodes: ``[0][i]`` for the i-th positional argument, ``[1]['name']`` for a keyword."""
    return {(f"[0][{k}]" if isinstance(k, int) else f"[1]['{k}']"): v.v for k, v in statics}


def _treedef_diffs(path, new, old):
    """Yields ``(path, now, before, why)`` where two treedefs differ, as JAX's equality_errors_pytreedef."""
    if new == old:
        return
    na, nb = new.node_data(), old.node_data()
    if na is None or nb is None:
        yield path, "pytree leaf" if na is None else str(na[0]), "pytree leaf" if nb is None else str(nb[0]), \
            "their Python types differ"
        return
    (ta, ma), (tb, mb) = na, nb
    ca, cb = new.children(), old.children()
    if ta is not tb:
        yield path, str(ta), str(tb), "their Python types differ"
        return
    if ta in (list, tuple) and len(ca) != len(cb):
        yield path, f"{ta.__name__} of length {len(ca)}", f"{tb.__name__} of length {len(cb)}", \
            "the lengths do not match"
        return
    if len(ca) != len(cb):
        why = "the numbers of children do not match"
        if ta is dict:
            why += f", with the symmetric difference of key sets: {set(ma) ^ set(mb)}"
        yield path, f"{ta} with {len(ca)} child", f"{tb} with {len(cb)} child", why
        return
    if ma != mb:
        yield path, f"{ta} with pytree metadata {ma}", f"{tb} with pytree metadata {mb}", \
            "the pytree node metadata does not match"
        return
    keys = ([f"['{k}']" if isinstance(k, str) else f"[{k!r}]" for k in ma] if ta is dict
            else [f".{f}" for f in ta._fields] if hasattr(ta, "_fields") else [f"[{i}]" for i in range(len(ca))])
    for k, a, b in zip(keys, ca, cb):
        yield from _treedef_diffs(path + k, a, b)


def _arg_trees(in_tree, statics):
    """The argument subtrees at their input paths (positional ones at their positions among the statics)."""
    args_t, kw_t = in_tree.children()
    static_pos = sorted(k for k, _ in statics if isinstance(k, int))
    out, i = {}, 0
    for t in args_t.children():
        while i in static_pos:
            i += 1
        out[f"[0][{i}]"] = t
        i += 1
    keys = kw_t.node_data()[1] or []
    for k, t in zip(keys, kw_t.children()):
        out[f"[1]['{k}']"] = t
    return out


def _diff_signature(new, old, names):
    """``(severity, count, text)`` of how call signature ``new`` differs from ``old`` (each ``(in_tree,
    statics, avals)``), as JAX's diff_tracing_cache_keys: the input pytree (static arguments included, as
    JAX's ``Static`` nodes) first, then the types of the leaves, named by argument path."""
    (tree, statics, avals), (otree, ostatics, oavals) = new, old
    errs = []
    if tree != otree or statics != ostatics:
        n_args, o_args = _arg_trees(tree, statics), _arg_trees(otree, ostatics)
        n_st, o_st = _static_arg_paths(statics, tree), _static_arg_paths(ostatics, otree)
        same_shape = (len(tree.children()[0].children()) + sum(isinstance(k, int) for k, _ in statics) ==
                      len(otree.children()[0].children()) + sum(isinstance(k, int) for k, _ in ostatics))
        n_kw = {p for p in list(n_args) + list(n_st) if p.startswith("[1]")}
        o_kw = {p for p in list(o_args) + list(o_st) if p.startswith("[1]")}
        if not same_shape:
            errs.extend(_treedef_diffs("", tree, otree))
        elif n_kw != o_kw:   # keyword arguments (static ones included) named differently: the dict differs
            why = f"the numbers of children do not match, with the symmetric difference of key sets: " \
                  f"{ {p[5:-2] for p in n_kw ^ o_kw} }"
            errs.append(("[1]", f"<class 'dict'> with {len(n_kw)} child", f"<class 'dict'> with {len(o_kw)} child",
                         why) if len(n_kw) != len(o_kw) else
                        ("[1]", f"<class 'dict'> with pytree metadata {sorted(p[5:-2] for p in n_kw)}",
                         f"<class 'dict'> with pytree metadata {sorted(p[5:-2] for p in o_kw)}",
                         "the pytree node metadata does not match"))
        else:
            for p in sorted(set(n_args) | set(n_st) | set(o_args) | set(o_st)):
                if p in n_st and p in o_st:
                    if n_st[p] != o_st[p] or type(n_st[p]) is not type(o_st[p]):
                        st = "<class 'jax._src.tree_util.Static'> with pytree metadata Static(val={!r})"
                        errs.append((p, st.format(n_st[p]), st.format(o_st[p]),
                                     "the pytree node metadata does not match"))
                elif p in n_args and p in o_args:
                    errs.extend(_treedef_diffs(p, n_args[p], o_args[p]))
                else:
                    def kind(d, s, p=p):
                        return "<class 'jax._src.tree_util.Static'>" if p in s else (
                            str(d[p].node_data()[0]) if p in d and d[p].node_data() else "pytree leaf")
                    errs.append((p, kind(n_args, n_st), kind(o_args, o_st), "their Python types differ"))
        if errs:
            lines = [f"  * at input path {p}, now {a} and before {b}, so {why}" for p, a, b, why in errs]
            return 1, len(lines), "different input pytree:\n" + "\n".join(lines)
    diffs, weak_hint = [], False
    names = names or [""] * len(avals)
    for name, a, b in zip(names, avals, oavals):
        if a != b:
            ns, os_ = a.str_short(), b.str_short()
            if len(a.shape) != len(b.shape):   # JAX's shardings differ then, and it prints their (empty) specs
                ns, os_ = ns + "({})", os_ + "({})"
            if a.weak_type != b.weak_type:
                weak_hint = True
                ns += f"{{weak_type={a.weak_type}}}"
                os_ += f"{{weak_type={b.weak_type}}}"
            diffs.append(f"  * at {name}, now {ns} and before {os_}")
    if diffs:
        text = "different input types:\n" + "\n".join(diffs)
        if weak_hint:
            text += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
        return 3, len(diffs), text
    return 4, 0, "cache miss explanation unavailable"


def _resolve_static(fun, static_argnums, static_argnames):
    if static_argnums is None:
        static_argnums = ()
    elif isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if static_argnames is None:
        static_argnames = ()
    elif isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    try:
        static_argnums = tuple(operator.index(i) for i in static_argnums)
    except TypeError:
        raise TypeError(f"static_argnums must be an int or a sequence of ints, got {static_argnums!r}") from None
    static_argnames = tuple(static_argnames)
    for n in static_argnames:
        if not isinstance(n, str):
            raise TypeError(f"static_argnames must be a str or a sequence of str, got {static_argnames!r}")
    if not static_argnums and not static_argnames:
        # nothing to check against the signature (inspect.signature costs ~20 µs; libraries jit or
        # eval_shape fresh closures by the dozen while tracing)
        return (), (), None
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = None
    param_names = []
    if params is not None:
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        param_names = [p.name for p in positional]
        # As JAX: argnums past a fixed signature, or names it does not take, are errors.
        if not any(p.kind is p.VAR_POSITIONAL for p in params):
            for i in static_argnums:
                if not -len(positional) <= i < len(positional):
                    raise ValueError(f"jitted function has static_argnums={static_argnums}, but only accepts "
                                     f"{len(positional)} positional arguments.")
            static_argnums = tuple(i + len(positional) if i < 0 else i for i in static_argnums)
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            named = {p.name for p in params if p.kind is not p.POSITIONAL_ONLY}
            bad = [n for n in static_argnames if n not in named]
            if bad:
                raise ValueError(f"jitted function has invalid argnames {set(bad)} in static_argnames. "
                                 f"Function does not take these args.")
        for n in static_argnames:
            if n in param_names and param_names.index(n) not in static_argnums:
                static_argnums += (param_names.index(n),)
        for i in static_argnums:
            if 0 <= i < len(param_names) and param_names[i] not in static_argnames:
                static_argnames += (param_names[i],)
    return tuple(sorted(set(static_argnums))), static_argnames, param_names


def _static_key(v):
    """The cache-key part of static argument ``v`` (hashed once: a call with a static argument pays it every
    time); ValueError, as JAX's, when ``v`` cannot be hashed."""
    try:
        return _Static(v)
    except TypeError as e:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying to hash an "
            f"object of type {type(v)}, {v}. The error was:\n{type(e).__name__}: {e}\n") from None


class _Static:
    """A static argument in a cache key: hash and equality of the value (plus its type, as JAX does)."""

    __slots__ = ("v", "h")

    def __init__(self, v):
        self.v = v
        self.h = hash((type(v), _nan_canonical(v)))

    def __hash__(self):
        return self.h

    def __eq__(self, o):
        if type(o) is not _Static or type(o.v) is not type(self.v):
            return False
        a, b = self.v, o.v
        if a is b:
            return True
        try:
            if bool(a == b):
                return True
        except Exception:
            return False
        # NaN is not equal to itself; two NaN static values are the same signature (else every call with
        # a NaN would retrace and grow the cache).
        return _nan_equal(a, b)

    def __repr__(self):
        return repr(self.v)


def _nan_canonical(v):
    """``v`` with NaNs replaced by one marker, for hashing: since Python 3.10 each NaN object hashes by
    identity, so ``float('nan')`` passed anew on every call would otherwise never hit the cache."""
    if type(v) is tuple:
        # Most static tuples (e.g. equinox's static halves of modules, tuples of tuples) hold no NaN: return
        # them as they are, rebuilding a level only when a NaN was found below it.
        for x in v:
            if type(x) is tuple:
                if _nan_canonical(x) is not x:
                    break
            elif isinstance(x, float) and x != x:
                break
        else:
            return v
        return tuple([_nan_canonical(x) for x in v])
    if isinstance(v, float) and v != v:
        return ("<nan>",)
    return v


def _nan_equal(a, b):
    if isinstance(a, (float, np.floating)):
        return bool(np.isnan(a) and np.isnan(b))
    if isinstance(a, complex):
        return (a.real == b.real or (a.real != a.real and b.real != b.real)) and \
            (a.imag == b.imag or (a.imag != a.imag and b.imag != b.imag))
    if isinstance(a, tuple) and len(a) == len(b):
        return all(x is y or x == y or (type(x) is type(y) and _nan_equal(x, y)) for x, y in zip(a, b))
    return False


_py_scalar_avals = {}


def _leaf_sig(x):
    """A leaf's signature: its aval. A Python scalar gives the same (weakly typed) aval as the Array it
    becomes, so ``f(1)`` and ``f(f(0))`` share a cache entry, as in JAX."""
    t = type(x)
    if t is Array:
        return x.aval
    if t is float or t is int or t is bool:
        if t is int:
            _check_int_leaf(x)
        key = (t, dtypes._x64_enabled())
        av = _py_scalar_avals.get(key)
        if av is None:
            av = _py_scalar_avals[key] = get_aval(x)
        return av
    return get_aval(x)


class _HiCall(Exception):
    """A compiled signature whose jaxpr has hi-typed values (``jax.experimental.hijax``): ``jit.__call__``
    runs it through its ``_HiExe`` instead of the buffer paths."""


class _HiExe:
    """The executable of a jaxpr with hi-typed values: ``run(leaves)`` lowers them to their arrays and runs
    the lo program; ``execute`` (the buffer paths) hands over to it."""

    def __init__(self, run, name):
        self.run = lambda leaves: run(list(leaves), name)

    def execute(self, bufs):
        raise _HiCall()


class _IntOverflow(OverflowError):
    """A Python int argument outside the default int type; ``jit.__call__`` names the argument."""


def _check_int_leaf(x):
    bound = 2**63 if dtypes._x64_enabled() else 2**31
    if not -bound <= x < bound:
        raise _IntOverflow(x)


def _sig_aval(sig):
    return sig


def _arg_names_of(fun, in_tree, statics):
    dargs, dkwargs = tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    static_pos = {k for k, _ in statics if isinstance(k, int)}
    it = iter(dargs)
    args = [_STATIC if i in static_pos else next(it) for i in range(len(dargs) + len(static_pos))]
    kwargs = dict(dkwargs, **{k: _STATIC for k, _ in statics if isinstance(k, str)})
    names = arg_names(fun, args, kwargs)
    return names if len(names) == in_tree.num_leaves else None


_ARITY_TREES = {}
_new_array = object.__new__


def _arity_tree(n):
    """The treedef of ``(args, {})`` for ``n`` leaf arguments, one object per arity: the signature keys of both
    call paths hold it, so a cache hit compares it by identity, not by ``PyTreeDef.__eq__`` (a Python call)."""
    t = _ARITY_TREES.get(n)
    if t is None:
        t = _ARITY_TREES[n] = tree_flatten((tuple(range(n)), {}))[1]
    return t


_registry_lock = threading.Lock()
_caches = weakref.WeakKeyDictionary()  # fun -> {options: (JitCache, trace cache)}
_all_jit_caches = weakref.WeakSet()


class _CacheHolder:
    __slots__ = ("execs", "traces", "seen", "refs", "__weakref__")

    def __init__(self):
        self.execs = _core.JitCache()
        self.traces = {}
        self.seen = []
        self.refs = None   # array references the function reaches: {"plan": refs, "inner": JitWrapped}


def _holder_for(fun, options):
    """The caches shared by every ``jit(fun, **options)``: jitting the same function again reuses them."""
    with _registry_lock:
        try:
            per_fun = _caches.get(fun)
        except TypeError:
            per_fun = None
        if per_fun is None:
            per_fun = {}
            try:
                _caches[fun] = per_fun
            except TypeError:
                pass
        h = per_fun.get(options)
        if h is None:
            h = per_fun[options] = _CacheHolder()
            _all_jit_caches.add(h)
        return h


class _Entry:
    __slots__ = ("exe", "out_tree", "const_bufs", "out_avals", "closed", "n_out", "single", "finals_idx")

    def __init__(self, exe, out_tree, const_bufs, out_avals, closed):
        self.exe = exe
        self.out_tree = out_tree
        self.const_bufs = const_bufs
        self.out_avals = out_avals
        self.closed = closed
        self.n_out = len(out_avals)
        self.single = out_tree.num_leaves == 1 and out_tree.num_nodes == 1
        self.finals_idx = None   # a ref-writing call's pure twin: the output index of each ref's final value


def _hashable_opt(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v


# fun → {(static_argnums, static_argnames): resolved statics}; weak on the function so it does not keep it alive.
_resolved_statics = weakref.WeakKeyDictionary()


def _no_nan_in_deoptimized(what):
    """JAX 0.10.2's text when the jitted program made a NaN/inf and the function run without jit did not."""
    return (f"{what}. Because jax_config.debug_nans.value and/or config.jax_debug_infs is set, the de-optimized "
            "function (i.e., the function as if the `jit` decorator were removed) was called in an attempt to get "
            "a more precise error message. However, the de-optimized function did not produce invalid values "
            "during its execution. This behavior can result from `jit` optimizations causing the invalid value to "
            "be produced. It may also arise from having nan/inf literals as inputs or outputs, like "
            "`jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the invalid value by "
            "removing the `jit` decorator, at the cost of losing optimizations. \n\nIf you see this error, "
            "consider opening a bug report at https://github.com/jax-ml/jax.")


_NOT_STAGED = object()


def _statics_of(fun, static_argnums, static_argnames):
    """``(static_argnums, static_argnames)`` of ``jit(fun, ...)`` resolved against ``fun``'s signature (JAX's
    checks). inspect.signature costs tens of µs; `jit(f)` re-created in a loop (the seed's pattern) reuses it."""
    try:
        per_fun = _resolved_statics.get(fun)
        okey = (_hashable_opt(static_argnums), _hashable_opt(static_argnames))
        resolved = per_fun.get(okey) if per_fun is not None else None
    except TypeError:  # an unhashable or non-weakrefable function/option: resolve every time
        per_fun = okey = resolved = None
    if resolved is None:
        resolved = _resolve_static(fun, static_argnums, static_argnames)
        if okey is not None:
            try:
                if per_fun is None:
                    per_fun = _resolved_statics[fun] = {}
                per_fun[okey] = resolved
            except TypeError:
                pass
    return resolved[0], resolved[1]


def _donation_of(fun, donate_argnums, donate_argnames, static_argnums, static_argnames):
    """``(donate_argnums, donate_argnames)`` of ``jit(fun, ...)``, each completed from the other through
    ``fun``'s signature where it has one (as JAX resolves them), with JAX's error when a donated argument is
    also static."""
    nums = (() if donate_argnums is None else
            (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums))
    names = (() if donate_argnames is None else
             (donate_argnames,) if isinstance(donate_argnames, str) else tuple(donate_argnames))
    if not nums and not names:
        return (), ()
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind != p.KEYWORD_ONLY]
    names = tuple(dict.fromkeys(names + tuple(positional[i] for i in nums if 0 <= i < len(positional))))
    nums = tuple(sorted(set(nums) | {positional.index(n) for n in names if n in positional}))
    both = set(names) & (set(static_argnames) | {positional[i] for i in static_argnums if 0 <= i < len(positional)})
    if both:
        raise ValueError(f"static_argnames and donate_argnames cannot intersect. Argument names {both} appear in "
                         "both static_argnames and donate_argnames")
    both = set(nums) & set(static_argnums)
    if both:
        raise ValueError(f"static_argnums and donate_argnums cannot intersect. Argument numbers {both} appear in "
                         "both static_argnums and donate_argnums")
    return nums, names


class JitWrapped(Wrapped):
    """The function returned by ``jit``: call it, or ``lower(*args)`` / ``trace(*args)`` it."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, keep_unused, inline,
                 donate_argnames=None):
        self._fun = fun
        self._static_argnums, self._static_argnames = _statics_of(fun, static_argnums, static_argnames)
        # donated arguments (JAX's donation: deleted after the call; their buffers may take outputs)
        self._donate_argnums, self._donate_argnames = _donation_of(fun, donate_argnums, donate_argnames,
                                                                   self._static_argnums, self._static_argnames)
        # a donating jit takes the general call path (``_split``, then ``_call``'s last part: ``_execute_donating``)
        self._has_static = bool(self._static_argnums or self._static_argnames or self._donate_argnums
                                or self._donate_argnames)
        self._inline = inline
        self._holder = _holder_for(fun, (self._static_argnums, self._static_argnames))
        self._cache = self._holder.execs
        functools.update_wrapper(self, fun, updated=())
        self._name = getattr(fun, "__name__", type(fun).__name__)

    @classmethod
    def _tracing_only(cls, fun, static_argnums=()):
        """A JitWrapped for ``eval_shape`` and ``make_jaxpr``, which trace once and keep nothing: without jit's
        per-function caches (a core JitCache, weak entries keyed by the function, dropped again when it dies),
        which cost more than the trace of the small fresh closures equinox hands them by the dozen per trace."""
        w = cls.__new__(cls)
        w._fun = fun
        w._donate_argnums = w._donate_argnames = ()
        w._static_argnums, w._static_argnames = (_statics_of(fun, static_argnums, None) if static_argnums
                                                 else ((), ()))
        w._has_static = bool(w._static_argnums)
        w._inline = False
        w._name = getattr(fun, "__name__", type(fun).__name__)
        return w

    # -- argument handling
    def _split(self, args, kwargs):
        """(dynamic args tuple, dynamic kwargs dict, static key tuple)."""
        if not self._has_static:
            return args, kwargs, ()
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self._static_argnums:
                statics.append((i, _static_key(a)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self._static_argnames:
                statics.append((k, _static_key(v)))
            else:
                dyn_kwargs[k] = v
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def _flat_fun(self, statics, in_tree):
        """A function of flat dynamic leaves returning flat outputs; records the output tree."""
        static_pos = {k: s.v for k, s in statics if isinstance(k, int)}
        static_kw = {k: s.v for k, s in statics if isinstance(k, str)}
        store = {}

        def flat(*leaves):
            dyn_args, dyn_kwargs = tree_unflatten(in_tree, list(leaves))
            args = []
            it = iter(dyn_args)
            n = len(dyn_args) + len(static_pos)
            for i in range(n):
                args.append(static_pos[i] if i in static_pos else next(it))
            out = self._fun(*args, **dyn_kwargs, **static_kw)
            outs, out_tree = float0_out_tree(out)
            if _state.any_refs():
                _state.check_no_refs(outs, f"{debug_info(self._fun, 'jit', None).func_src_info} traced for jit")
            store["tree"] = out_tree
            return outs
        return flat, store

    def _arg_names(self, in_tree, statics):
        """A name per flattened dynamic leaf (``x``, ``params['w']``...), for error messages."""
        return _arg_names_of(self._fun, in_tree, statics)

    def _lazy_arg_names(self, in_tree, statics):
        """``_arg_names`` for a DebugInfo, computed when an error text reads them. The thunk holds the function
        weakly: the DebugInfo lives in this function's own cache entries (through their jaxprs), and a strong
        reference there would keep the function, the key of its weak cache, alive forever."""
        try:
            ref = weakref.ref(self._fun)
        except TypeError:   # not weak-referenceable: the names now
            return self._arg_names(in_tree, statics)

        def make():
            fun = ref()
            return None if fun is None else _arg_names_of(fun, in_tree, statics)
        return LazyNames(make)

    def _trace(self, in_tree, statics, in_avals, traced_for="jit", detect=True, lazy_names=False, keep=False):
        with _monitoring.timed(_monitoring.JAXPR_TRACE_EVENT, self._name):   # jax.monitoring listeners
            if _core.profiler_enabled():
                # jax.profiler: tracing the function is a span of its own
                with _profiler._Span(f"trace {self._name}"):
                    return self._trace_body(in_tree, statics, in_avals, traced_for, detect, lazy_names, keep)
            return self._trace_body(in_tree, statics, in_avals, traced_for, detect, lazy_names, keep)

    def _trace_body(self, in_tree, statics, in_avals, traced_for, detect=True, lazy_names=False, keep=False):
        # ``keep``: a jaxpr for the user (make_jaxpr, or a jit inside it), whose nested jits keep their consts
        keep = keep or traced_for == "make_jaxpr"
        flat, store = self._flat_fun(statics, in_tree)
        # A jit call's or eval_shape's trace (no jaxpr handed to the user, whose debug_info they could read)
        # computes the argument names only when an error text asks: inspect.signature per trace otherwise.
        names = self._lazy_arg_names(in_tree, statics) if lazy_names else self._arg_names(in_tree, statics)
        dbg = debug_info(self._fun, traced_for, names)
        if traced_for == "jit" and config.jax_no_tracing:
            raise RuntimeError(f"re-tracing function {dbg.func_src_info} for `jit`, but 'no_tracing' is set")
        # a call reaching a ref made outside is made through a pure twin (_call_with_refs); AOT tracing and
        # make_jaxpr (detect=False) read such refs as constants (writing one is an error there)
        if not detect:
            closed = trace_to_jaxpr(flat, in_avals, dbg, keep_call_consts=keep)
        else:
            call = _state._Call("jit", f"{dbg.func_src_info} traced for {traced_for}")
            try:
                closed = _state.run_plumbed(call, (), (), lambda: trace_to_jaxpr(flat, in_avals, dbg,
                                                                                 keep_call_consts=keep))[0]
            except _state._NeedRef as e:
                if e.call is not call:
                    raise
                raise _NeedsPlumbing(e.ref) from None
        dbg.out_tree = store["tree"]
        if config.jax_check_tracer_leaks:
            _check_leaks(dbg)
        return closed, store["tree"]

    def _compile(self, key, in_tree, statics, sigs):
        in_avals = [_sig_aval(s) for s in sigs]
        if config.jax_explain_cache_misses:
            self._explain_miss(key, in_tree, statics, in_avals)
        # Tracing allocates many small, acyclic objects; a cyclic-GC pass in the middle of a first call
        # costs milliseconds and frees nothing, so collection waits until the compile is done.
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            log = config.jax_log_compiles
            t0 = time.perf_counter()
            closed, out_tree = self._trace(in_tree, statics, in_avals, lazy_names=True)
            if not core._state.axis_env:   # one trace per signature, as JAX: a later grad(jit(f)) reuses it
                self._holder.traces.setdefault((in_tree, tuple(in_avals), statics), (*closed.hoist_consts(), out_tree))
            if log:
                # JAX's texts for the steps it shares with cranax; then cranax's own two steps.
                t1 = time.perf_counter()
                _log.warning("Finished tracing %s for jit in %s sec", self._name, f"{t1 - t0:.9f}")
                shapes = "".join(f"{a!r}, " for a in in_avals).rstrip(" ")
                _log.warning("Compiling jit(%s) with global shapes and types (%s). Argument mapping: (%s).",
                             self._name, shapes, ", ".join(["UnspecifiedValue"] * len(in_avals)) + ",")
            _dump_ir.maybe_dump(self._name, closed, self._fun)
            run = _hi_runner[0](closed) if _hi_runner else None
            if run is not None:
                return _Entry(_HiExe(run, self._name), out_tree, [], closed.out_avals, closed)
            with _monitoring.timed(_monitoring.LOWERING_EVENT, f"jit({self._name})"):
                wire = lowering.lower_jaxpr(closed, self._name)
            if log:
                t2 = time.perf_counter()
                _log.warning("Finished jaxpr to wire format conversion jit(%s) in %s sec", self._name,
                             f"{t2 - t1:.9f}")
            with _monitoring.timed(_monitoring.BACKEND_COMPILE_EVENT, f"jit({self._name})"):
                exe = lowering.executable(wire, closed)
            if log:
                _log.warning("Finished cranax compilation of jit(%s) in %s sec", self._name,
                             f"{time.perf_counter() - t2:.9f}")
                # JAX's record and logger name too, which user code filters on (optax's tests count it)
                _compile_log.warning("Finished XLA compilation of jit(%s) in %.9f sec", self._name,
                                     time.perf_counter() - t0)
        finally:
            if gc_was_on:
                gc.enable()
        const_bufs = [c._buf if type(c) is Array else _to_buffer(c, get_aval(c)) for c in closed.consts]
        return _Entry(exe, out_tree, const_bufs, closed.out_avals, closed)

    def _explain_miss(self, key, in_tree, statics, in_avals):
        """JAX's ``jax_explain_cache_misses`` warning: where the call is, and either that the function is new
        or how its arguments differ from the closest earlier signature (pytree and static-argument
        differences before type differences, as JAX ranks them)."""
        seen = self._holder.seen
        callsite = core.summarize_source(core.user_source())
        code = getattr(self._fun, "__code__", None)
        src = f" defined at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
        msg = [f"TRACING CACHE MISS at {callsite}:"]
        if not seen:
            msg.append(f"  never seen function:\n    {self._name} id={id(self._fun)}{src}")
            if callsite in _miss_callsites:
                msg.append("  but seen another function defined on the same line; maybe the function is\n"
                           "  being re-defined repeatedly, preventing caching?")
            _miss_callsites.add(callsite)
        else:
            msg.append(f"  for {self._name}{src}")
            diffs = [_diff_signature((in_tree, statics, in_avals), old, self._arg_names(in_tree, statics))
                     for old in seen]
            msg.append("  all previously seen cache keys differ. For the closest previous key:")
            msg.append("  " + min(diffs)[-1])
        _log.warning("\n".join(msg))
        seen.append((in_tree, statics, in_avals))
        del seen[:-8]

    # -- calling
    def __call__(self, *args, **kwargs):
        try:
            # The steady-state call (positional Arrays and Python scalars of a signature already compiled; no Ref
            # ever made, nothing traced, jit on, no NaN checks) in this one frame: for a program that runs in a
            # few µs, each Python layer and list between the call and the executable is a visible part of it.
            if (not kwargs and not self._has_static and not _state._made[0] and core._state.trace is None
                    and not _jit_disabled and not dispatch._float_checks):
                avals = []
                scalars = False
                for a in args:
                    t = type(a)
                    if t is Array:
                        avals.append(a.aval)
                    elif t is float or t is int or t is bool:
                        avals.append(_leaf_sig(a))
                        scalars = True
                    else:
                        break
                else:
                    entry = self._cache.get((_arity_tree(len(args)), tuple(avals), ()))
                    if entry is not None and not dispatch.no_execution:
                        if scalars:
                            bufs = [a._buf if type(a) is Array else _scalar_buffer(a, av) for a, av in zip(args, avals)]
                        else:
                            bufs = [a._buf for a in args]
                        if entry.const_bufs:
                            bufs = entry.const_bufs + bufs
                        outs = entry.exe.execute(bufs)
                        if entry.single:
                            r = _new_array(Array)
                            r._buf = outs[0]
                            r.aval = entry.out_avals[0]
                            r._npy = None
                            return r
                        return tree_unflatten(entry.out_tree,
                                              [Array._from_buffer(b, av) for b, av in zip(outs, entry.out_avals)])
            if _state.any_refs() and _state._local.__dict__.get("staging"):
                staged = self._call_staged(args, kwargs)
                if staged is not _NOT_STAGED:
                    return staged
            if self._holder.refs is not None:
                return self._call_with_refs(args, kwargs)
            try:
                return self._call(args, kwargs)
            except _NeedsPlumbing as e:
                self._holder.refs = {"plan": (e.ref,)}
            except _HasRefArgs:
                self._holder.refs = {"plan": ()}
            return self._call_with_refs(args, kwargs)
        except _IntOverflow as e:   # (a try costs nothing on the steady-state path)
            raise self._int_overflow(args, kwargs, e.args[0]) from None
        except _HiCall:
            dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
            leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
            entry = self._cache.get((in_tree, tuple(_leaf_sig(x) for x in leaves), statics))
            return tree_unflatten(entry.out_tree, entry.exe.run(leaves))
        except Exception as e:   # JAX's api_boundary: cranax's frames dropped, JAX's note added
            if is_incompatible_devices(e):
                e.args = (self._incompatible_devices(args, kwargs) or e.args[0],)
            _errors._filtered(e)
            raise

    def _incompatible_devices(self, args, kwargs):
        """JAX's text for committed arguments on different devices, naming them by their paths."""
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        name = getattr(self._fun, "__qualname__", self._name)
        return incompatible_devices(name, self._arg_names(in_tree, statics), leaves)

    def _int_overflow(self, args, kwargs, value):
        """JAX's error for a Python int argument too large for the default int type, naming its path."""
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        names = self._arg_names(in_tree, statics) or [f"args[{i}]" for i in range(len(leaves))]
        path = next((n for x, n in zip(leaves, names) if type(x) is int and x == value), "args")
        return OverflowError(f"An overflow was encountered while parsing an argument to a jitted computation, "
                             f"whose argument path is {path}. Got <class 'int'> with value {value}")

    def _call(self, args, kwargs):
        if _jit_disabled or dispatch._float_checks:
            if _jit_disabled and config.jax_disable_jit:
                return self._fun(*args, **kwargs)
            if dispatch._float_checks and core._state.trace is None:
                return self._call_checked(args, kwargs)
        if core._state.trace is not None:
            return self._call_traced(args, kwargs)
        if not kwargs and not self._has_static:
            # Fast path: positional plain Arrays and Python scalars. Same key as the general path (the tree
            # of ``(args, {})`` depends only on the arity), so both find the same cache entry.
            avals = []
            bufs = None
            for a in args:
                t = type(a)
                if t is Array:
                    avals.append(a.aval)
                elif t is int or t is float or t is bool:
                    avals.append(_leaf_sig(a))
                    bufs = True
                else:
                    break
            n = len(args)
            if len(avals) == n:
                entry = self._cache.get((_arity_tree(n), tuple(avals), ()))
                if entry is not None:
                    if bufs is None:
                        bufs = [a._buf for a in args]
                    else:
                        bufs = [a._buf if type(a) is Array else _scalar_buffer(a, av) for a, av in zip(args, avals)]
                    if dispatch.no_execution:
                        dispatch.refuse_execution(self._name)
                    outs = entry.exe.execute(entry.const_bufs + bufs)
                    res = [Array._from_buffer(b, av) for b, av in zip(outs, entry.out_avals)]
                    if entry.single:
                        return res[0]
                    return tree_unflatten(entry.out_tree, res)
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        if not kwargs and not statics and len(leaves) == len(args):
            t = _arity_tree(len(args))
            if t == in_tree:   # the fast path's treedef object: its cache hits then compare it by identity
                in_tree = t
        # One pass for the common all-Array case (an Array is never a Tracer); anything else takes the
        # general checks below, in the same order as before (signature errors before tracer errors).
        sigs = []
        all_arrays = True
        for x in leaves:
            if type(x) is Array:
                sigs.append(x.aval)
            else:
                all_arrays = False
                break
        if not all_arrays:
            try:
                sigs = [_leaf_sig(x) for x in leaves]
            except TypeError as e:
                if any(isinstance(x, _state.Ref) for x in leaves):
                    raise _HasRefArgs() from None
                # JAX's text: the first such leaf, by its type and its path among the arguments; for an array
                # of a dtype cranax lacks, a last line names the dtype (JAX's says it only in the context)
                bad = next((i for i, x in enumerate(leaves) if not _ok_leaf(x)), 0)
                dt_line = f"\n{e}" if hasattr(leaves[bad], "dtype") else ""
                names = self._arg_names(in_tree, statics)
                path = f" at path {names[bad]}" if names and names[bad] else ""
                raise TypeError(
                    f"Error interpreting argument to {self._fun!r} as an abstract array. The problematic value is of "
                    f"type {type(leaves[bad])} and was passed to the function{path}.\nThis typically means that a "
                    f"jit-wrapped function was called with a non-array argument, and this argument was not marked as "
                    f"static using the static_argnums or static_argnames parameters of jax.jit.{dt_line}") from None
            for x in leaves:
                if isinstance(x, Tracer):
                    raise core.UnexpectedTracerError(core._escaped_tracer_message(x))
        sigs = tuple(sigs)
        key = (in_tree, sigs, statics)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache.get_or_insert_with(key, lambda: self._compile(key, in_tree, statics, sigs))
        if type(entry.exe) is _HiExe:
            return tree_unflatten(entry.out_tree, entry.exe.run(leaves))
        if all_arrays:
            bufs = entry.const_bufs + [x._buf for x in leaves]
        else:
            bufs = entry.const_bufs + [x._buf if type(x) is Array else _arg_buffer(x, _sig_aval(s))
                                       for x, s in zip(leaves, sigs)]
        if dispatch.no_execution:
            dispatch.refuse_execution(self._name)
        don = _state._local.__dict__.get("donate") if _state._made[0] else None
        if don is not None and don[0] is self and don[1]:   # a ref-writing call's pure twin
            fi = entry.finals_idx
            if fi is None:   # the call returns (out, finals): where each final value's leaf lands
                fi = entry.finals_idx = tree_unflatten(entry.out_tree, list(range(entry.n_out)))[1]
            outs = entry.exe.execute(bufs, _state.alias_pairs(don[1], leaves, len(entry.const_bufs), fi))
        elif self._donate_argnums or self._donate_argnames:
            outs = self._execute_donating(entry, bufs, leaves, args, kwargs)
        else:
            outs = entry.exe.execute(bufs)
        avals = entry.out_avals
        res = [Array._from_buffer(b, av) for b, av in zip(outs, avals)]
        return tree_unflatten(entry.out_tree, res)

    def _donated_leaves(self, args, kwargs):
        """The indices, among the call's dynamic leaves, of the leaves of donated arguments."""
        out, pos = [], 0
        for i, a in enumerate(args):
            if i in self._static_argnums:
                continue
            n = len(tree_leaves(a))
            if i in self._donate_argnums:
                out.extend(range(pos, pos + n))
            pos += n
        for k in sorted(kwargs):   # a dict's leaves come in key order
            if k in self._static_argnames:
                continue
            n = len(tree_leaves(kwargs[k]))
            if k in self._donate_argnames:
                out.extend(range(pos, pos + n))
            pos += n
        return out

    def _execute_donating(self, entry, bufs, leaves, args, kwargs):
        """Runs a donating jit's executable as JAX does: each donated array is paired with the first output
        of its shape and dtype not taken by an earlier one, written into its buffer where nothing else
        holds that (``Executable.execute(donate=)``), and deleted after the call; a donated array with no
        such output is kept, with JAX's warning (once per signature)."""
        n_consts = len(entry.const_bufs)
        free = {}   # (shape, dtype) -> the outputs of that type not yet taken, last first
        for k in reversed(range(len(entry.out_avals))):
            a = entry.out_avals[k]
            free.setdefault((a.shape, a.dtype), []).append(k)
        pairs, used, unusable = [], [], []
        seen = {}   # id of each leaf -> how many times it appears
        for x2 in leaves:
            seen[id(x2)] = seen.get(id(x2), 0) + 1
        for i in self._donated_leaves(args, kwargs):
            x = leaves[i]
            if type(x) is not Array:
                continue
            if seen[id(x)] > 1:   # passed again beside its donation (the other position, for XLA's text)
                j = next(j for j, x2 in enumerate(leaves) if x2 is x and j != i)
                raise _errors.JaxRuntimeError(
                    "INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in the same call to "
                    f"Execute() (flattened argument {max(i, j)}, replica 0, partition 0, first use: "
                    f"{min(i, j)}). Toy example for this bug: `f(donate(a), a)`.")
            ks = free.get((x.aval.shape, x.aval.dtype))
            if not ks:
                unusable.append(x.aval)
                continue
            k = ks.pop()
            used.append(x)
            # the buffer is offered only when this Array alone holds its DeviceArray (slot, local, argument)
            b = x._buf
            if type(b) is _core.DeviceArray and sys.getrefcount(b) == 4:
                pairs.append((n_consts + i, k))
            del b
        warned = self.__dict__.setdefault("_donation_warned", set())
        if unusable and id(entry) not in warned:
            warned.add(id(entry))
            warnings.warn("Some donated buffers were not usable: "
                          f"{', '.join(a.str_short(short_dtypes=False) for a in unusable)}.\nSee an explanation at "
                          "https://docs.jax.dev/en/latest/faq.html#buffer-donation.", UserWarning, stacklevel=4)
        outs = entry.exe.execute(bufs, None, pairs) if pairs else entry.exe.execute(bufs)
        del bufs
        for x in used:
            x.delete()
        return outs

    def _call_checked(self, args, kwargs):
        """A call under ``jax_debug_nans``/``jax_debug_infs``: when an output holds a NaN (infinity), the
        program runs again op by op (nested jits inlined), each op checking its outputs, so the
        FloatingPointError names the primitive that made it (JAX's de-optimized re-run)."""
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        sigs = tuple([_leaf_sig(x) for x in leaves])
        key = (in_tree, sigs, statics)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache.get_or_insert_with(key, lambda: self._compile(key, in_tree, statics, sigs))
        bufs = entry.const_bufs + [x._buf if type(x) is Array else _arg_buffer(x, _sig_aval(s))
                                   for x, s in zip(leaves, sigs)]
        if dispatch.no_execution:
            dispatch.refuse_execution(self._name)
        res = [Array._from_buffer(b, av) for b, av in zip(entry.exe.execute(bufs), entry.out_avals)]
        kind = dispatch.bad_float(res)
        if kind is not None:
            # As JAX 0.10.2: the notice on stdout, then the Python function itself called again with the same
            # arguments (its eager ops and nested jits check their own outputs; plain Python arithmetic on
            # Python numbers may raise ZeroDivisionError instead, as in JAX).
            print(dispatch.DEOPT_MESSAGE)
            try:
                self._fun(*args, **kwargs)
            except (FloatingPointError, ZeroDivisionError) as e:
                raise e from None
            raise FloatingPointError(_no_nan_in_deoptimized(f"invalid value ({kind}) encountered in jit({self._name})"))
        return tree_unflatten(entry.out_tree, res)

    def _call_staged(self, args, kwargs):
        """make_jaxpr staging refs, a call with staged ref arguments: a ``jit`` equation whose jaxpr takes
        ``Ref{...}`` inputs (as JAX prints it); ``_NOT_STAGED`` for any other call."""
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        # refs the function closes over: those made in the trace are its leading inputs (JAX's closure
        # conversion), eager ones (JAX's Ref consts) its trailing ones
        crefs = _state.staged_closure_refs(self._fun)
        if not crefs and not _state.staged_ref_args(leaves):
            return _NOT_STAGED
        lead = [r for r in crefs if not r._val.const]
        trail = [r for r in crefs if r._val.const]
        order = lead + leaves + trail
        in_avals = [x._ref_aval() if isinstance(x, _state.Ref) else get_aval(x) for x in order]
        flat, store = self._flat_fun(statics, in_tree)
        nl, nleaves = len(lead), len(leaves)

        def with_closure(*args):
            inner = list(args[:nl]) + list(args[nl + nleaves:])
            saved = [_state.bind_staged(r, w) for r, w in zip(lead + trail, inner)]   # the inner Ref variables
            try:
                return flat(*args[nl:nl + nleaves])
            finally:
                for r, sv in zip(lead + trail, saved):
                    _state.restore(r, sv)
        names = self._arg_names(in_tree, statics)
        dbg = debug_info(self._fun, "jit", None if names is None else [""] * nl + list(names) + [""] * len(trail))
        closed = _state.stage_nested(lambda: trace_to_jaxpr(with_closure, in_avals, dbg))
        jaxpr, consts = closed.hoist_consts()
        vals = [x._val.tracer if isinstance(x, _state.Ref) else x for x in order]
        if trail and any(isinstance(c, Tracer) for c in consts):
            jaxpr, consts, vals = _refs_with_closure(jaxpr, consts, vals, len(trail))
        outs = jit_p.bind(*consts, *vals, jaxpr=jaxpr, name=self._name)
        return tree_unflatten(store["tree"], outs)

    def _call_traced(self, args, kwargs):
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        for x in leaves:
            if type(x) is int:
                _check_int_leaf(x)
        try:
            in_avals = [get_aval(x) for x in leaves]
        except TypeError:
            if any(isinstance(x, _state.Ref) for x in leaves):
                raise _HasRefArgs() from None
            raise
        key = (in_tree, tuple(in_avals), statics)
        if core._state.axis_env:   # collectives' shapes depend on the named axes' sizes
            key += (tuple(core._state.axis_env),)
        keep = keeps_call_consts()
        if keep:   # staged for the user: the arrays it closes over stay its jaxpr's consts (JAX's text)
            key += ("keep_call_consts",)
        hit = self._holder.traces.get(key)
        if hit is None:
            closed, out_tree = self._trace(in_tree, statics, in_avals, lazy_names=True, keep=keep)
            jaxpr, consts = closed.hoist_consts()
            if keep and consts and not any(isinstance(c, Tracer) for c in consts):
                jaxpr, consts = closed, []
            hit = (jaxpr, consts, out_tree)
            if not any(isinstance(c, Tracer) for c in consts):
                self._holder.traces[key] = hit
        jaxpr, consts, out_tree = hit
        if self._inline:
            outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *leaves)
        else:
            outs = jit_p.bind(*consts, *leaves, jaxpr=jaxpr, name=self._name)
        return tree_unflatten(out_tree, outs)

    def _check_ref_args(self, leaves, ref_pos, in_tree, statics):
        """JAX's errors for a ref passed twice, or passed and closed over (aliasing)."""
        ids = [id(leaves[i]) for i in ref_pos]
        closed_over = {id(r) for r in _state.closure_refs(self._fun)}
        if len(set(ids)) == len(ids) and not closed_over.intersection(ids):
            return
        names = self._arg_names(in_tree, statics)
        where = debug_info(self._fun, "jit", names).func_src_info
        seen = {}
        for i in ref_pos:
            r = leaves[i]
            if id(r) in seen:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a function, but "
                    f"when tracing {where} for jit the mutable array reference of type {r._ref_aval()} "
                    f"appeared at both {names[seen[id(r)]]} and {names[i]}.")
            seen[id(r)] = i
        for i in ref_pos:
            if id(leaves[i]) in closed_over:
                raise ValueError(f"when tracing {where} for jit, a mutable array reference of type "
                                 f"{leaves[i]._ref_aval()} was both closed over and passed as the argument "
                                 f"{names[i]}")

    def _call_with_refs(self, args, kwargs):
        """A call reaching array references: ``fun`` runs as a pure twin taking the refs' values (closed-over
        ones, then those passed as arguments) and returning their final values, written back afterwards."""
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        ref_pos = tuple(i for i, x in enumerate(leaves) if isinstance(x, _state.Ref))
        arg_refs = [leaves[i] for i in ref_pos]
        if arg_refs:
            self._check_ref_args(leaves, ref_pos, in_tree, statics)
        info = self._holder.refs
        inner = info.get("inner")
        if inner is None:
            inner = info["inner"] = JitWrapped(self._pure_twin(), (2, 3, 4), (), None, False, self._inline)
        plans = info.setdefault("plans", {"plan": info["plan"]})
        where = info.get("where")
        if where is None:
            where = info["where"] = f"{debug_info(self._fun, 'jit', None).func_src_info} traced for jit"

        def runner(call, refs, vals):
            arg_vals = [_state.read_for_plumbing(r, keep_weak=True) for r in arg_refs]
            flat = list(leaves)
            for i, v in zip(ref_pos, arg_vals):
                flat[i] = v
            call.where = where
            _state._local.pending.append((call, refs, arg_refs))
            # each ref's value may take the program's new value for it in its own buffer (no copy after)
            _state._local.donate = (inner, _state.donatable(list(refs) + arg_refs, list(vals) + arg_vals,
                                                            [len(vals) + p for p in ref_pos]))
            try:
                out, finals = inner(tuple(vals), flat, in_tree, statics, ref_pos)
            finally:
                _state._local.pending.pop()
                _state._local.donate = None
            if refs or arg_refs:   # an output (or final value) may be a ref's own buffer: copied before the
                held = list(refs) + arg_refs   # writes land
                if out is not None:
                    ls, tree = tree_flatten(out)
                    out = tree_unflatten(tree, _state.detach_outputs(ls, held))
                if len(held) > 1:   # (a ref's final value on its own buffer is a write that copies nothing)
                    finals = _state.detach_finals(finals, held)
            _state.write_back(arg_refs, finals[len(refs):])
            return out, finals[:len(refs)]
        return _state.plumbed_loop(plans, "plan", "jit", runner)

    def _pure_twin(self):
        fun, name = self._fun, self._name

        def pure(closure_vals, flat, in_tree, statics, ref_pos):
            call, refs, arg_refs = _state._local.pending[-1]
            static_pos = {k: s.v for k, s in statics if isinstance(k, int)}
            static_kw = {k: s.v for k, s in statics if isinstance(k, str)}

            def body():
                ls = list(flat)
                for i, r in zip(ref_pos, arg_refs):
                    ls[i] = r
                dyn_args, dyn_kwargs = tree_unflatten(in_tree, ls)
                it = iter(dyn_args)
                a = [static_pos[i] if i in static_pos else next(it)
                     for i in range(len(dyn_args) + len(static_pos))]
                return fun(*a, **dyn_kwargs, **static_kw)
            all_refs = list(refs) + list(arg_refs)
            out, finals = _state.run_plumbed(call, all_refs, list(closure_vals) + [flat[i] for i in ref_pos],
                                             body)
            # a ref the function only read is no output of the call and is not written back (JAX swaps only
            # the refs a function writes; under vmap a write into an unbatched ref is an error)
            finals = [f if w else None for f, w in zip(finals, call.written)]
            if arg_refs:
                names = self._arg_names(in_tree, statics)
                arg_names = [(r, names[i]) for i, r in zip(ref_pos, arg_refs)]
            else:
                arg_names = None
            _state.check_no_refs(tree_leaves(out), f"{debug_info(fun, 'jit', None).func_src_info} traced for jit",
                                 arg_names)
            return out, finals
        pure.__name__ = name
        return pure

    # -- AOT
    def trace(self, *args, **kwargs):
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        in_avals = [get_aval(x) for x in leaves]
        # a jaxpr for the user: nested jits keep their consts, as JAX's Traced.jaxpr shows them
        closed, out_tree = self._trace(in_tree, statics, in_avals, detect=False, keep=True)
        return Traced(self, closed, out_tree, in_tree, statics, self._arg_names(in_tree, statics), ShapeDtypeStruct)

    def lower(self, *args, **kwargs):
        """Traces for ``args``' signature; ``.as_text()`` is the jaxpr, ``.compile()`` the executable. Committed
        arguments on different devices raise JAX's ValueError here, as JAX's lowering does."""
        traced = self.trace(*args, **kwargs)
        leaves = tree_flatten(self._split(args, kwargs)[:2])[0]
        msg = incompatible_devices(getattr(self._fun, "__qualname__", self._name), traced._arg_names, leaves)
        if msg is not None:
            raise ValueError(msg)
        return traced.lower()

    def eval_shape(self, *args, **kwargs):
        # trace's work without its Traced (whose argument names cost an inspect.signature)
        dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        closed, out_tree = self._trace(in_tree, statics, [get_aval(x) for x in leaves], detect=False,
                                       lazy_names=True)
        return tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                        for a in closed.out_avals])

    def _cache_size(self):
        """Number of signatures traced and compiled for this function."""
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()
        self._holder.traces.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<CompiledFunction of {self._fun!r}>"


def _refs_with_closure(jaxpr, consts, vals, ntrail):
    """A staged jit that closes over traced values too: JAX converts its closed-over eager refs with them, so
    they lead together, in the order the body first uses them. ``jaxpr``'s invars are the hoisted consts,
    the arguments, then the ``ntrail`` refs."""
    j = jaxpr.jaxpr
    nc, n = len(consts), len(j.invars)
    first = {}
    for k, e in enumerate(j.eqns):
        for v in e.invars:
            first.setdefault(id(v), k)
    group = list(range(nc)) + list(range(n - ntrail, n))
    tr = [i for i in group if i >= nc or isinstance(consts[i], Tracer)]
    rest = [i for i in range(nc) if i not in tr]   # constant arrays stay first
    tr.sort(key=lambda i: first.get(id(j.invars[i]), len(j.eqns)))
    perm = rest + tr + list(range(nc, n - ntrail))
    allv = list(consts) + list(vals)
    new = ClosedJaxpr(Jaxpr([], [j.invars[i] for i in perm], j.outvars, j.eqns), [])
    return new, [], [allv[i] for i in perm]


class _NeedsPlumbing(Exception):
    """Internal: tracing reached an array reference made outside the function (``_call_with_refs``)."""

    def __init__(self, ref):
        super().__init__("internal: a jitted function reached an array reference")
        self.ref = ref


class _HasRefArgs(Exception):
    """Internal: an argument is an array reference (``_call_with_refs``)."""


def _ok_leaf(x):
    try:
        get_aval(x)
        return True
    except TypeError:
        return False


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None, donate_argnames=None,
        keep_unused=False, device=None, backend=None, inline=False, in_shardings=None, out_shardings=None):
    """Compiles ``fun`` with the cranax core. Usable as ``jit(f)``, ``@jit``, ``@jit(static_argnames=...)``
    and ``functools.partial(jit, static_argnums=...)``.

    ``static_argnums``/``static_argnames`` mark arguments whose (hashable) values are part of the signature;
    a non-hashable static value raises ``ValueError``. Each new signature (pytree structure, leaf shapes,
    dtypes, weak types, static values) traces and compiles once; a Python ``if`` on a traced value raises
    ``TracerBoolConversionError``. ``donate_argnums``/``donate_argnames`` donate arguments as JAX does: each
    donated array is paired with an output of its shape and dtype, which is written into its buffer where no
    other array holds that, and deleted after the call (later use raises ``RuntimeError``); one with no such
    output is kept, with JAX's ``UserWarning``. Mirrors ``jax.jit``.
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             keep_unused=keep_unused, inline=inline,
                             in_shardings=in_shardings, out_shardings=out_shardings)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    w = JitWrapped(fun, static_argnums, static_argnames, donate_argnums, keep_unused, inline, donate_argnames)
    if out_shardings is not None and _several_devices(out_shardings):
        return apply_out_shardings(w, out_shardings)
    return w


def _several_devices(shardings):
    """True when some sharding in ``shardings`` (a sharding or a pytree of them) spans several devices."""
    return any(len(getattr(s, "device_set", ())) > 1 for s in tree_leaves(shardings))


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None, *,
               _stage_refs=True):
    """Returns a function that gives ``fun``'s ``ClosedJaxpr`` for example arguments (arrays, scalars or
    ``ShapeDtypeStruct``s); printing it gives JAX's text. Mirrors ``jax.make_jaxpr``."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        w = JitWrapped._tracing_only(fun, static_argnums)
        dyn_args, dyn_kwargs, statics = w._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        with contextlib.ExitStack() as stack:
            for name, size in (axis_env or ()):
                stack.enter_context(core.extend_axis_env(name, size))
            # Refs are staged, as JAX prints them (``a:Ref{f32[3]}``, ``b:f32[3] <- a[...]``); a use staging
            # does not cover traces again with refs discharged (a ref argument then is JAX's TypeError).
            refs = any(isinstance(x, _state.Ref) for x in leaves)
            try:
                in_avals = [x._ref_aval() if isinstance(x, _state.Ref) else get_aval(x) for x in leaves]
                # (cranax's own callers that evaluate the jaxpr under other traces, checkify, pass False)
                prev = _state.staging(bool(_stage_refs))
                try:
                    closed, out_tree = w._trace(in_tree, statics, in_avals, traced_for="make_jaxpr", detect=False)
                finally:
                    _state.staging(prev)
            except _state._sj.Unsupported:
                if refs:
                    raise TypeError("make_jaxpr: this use of an array reference argument is not staged by "
                                    "cranax (a reference reached inside a nested jit/scan/cond body, or "
                                    "indexed other than by static ints, stride-1 slices and traced scalars)") from None
                in_avals = [get_aval(x) for x in leaves]
                closed, out_tree = w._trace(in_tree, statics, in_avals, traced_for="make_jaxpr", detect=False)
        if return_shape:
            shapes = tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                               for a in closed.out_avals])
            return closed, shapes
        return closed
    return make


def eval_shape(fun, *args, **kwargs):
    """Output shapes/dtypes of ``fun`` as ``ShapeDtypeStruct``s, without running it. Mirrors
    ``jax.eval_shape``."""
    return JitWrapped._tracing_only(fun).eval_shape(*args, **kwargs)


# True when jit may be disabled in some thread (the flag is set, or a disable_jit() block is active
# somewhere): the warm call path reads this module global on every call and only then asks the config.
_jit_disabled = bool(config.jax_disable_jit)


def _on_config_update(name, value):
    global _jit_disabled
    if name == "jax_compilation_cache_max_size":
        _core.set_cache_max_size(int(value))
    elif name == "jax_disable_jit":
        _jit_disabled = bool(config._values["jax_disable_jit"]) or config._override_count(name) > 0


def _describe(obj):
    return f"<{type(obj).__name__} {id(obj)}>"


def _referrer_lines(obj, ignore, depth=2):
    """JAX-style lines saying what holds ``obj``: ``<list 1397...>[0]``, ``__main__.name``."""
    lines = []
    refs = gc.get_referrers(obj)
    ignore = ignore | {id(refs)}
    for r in refs:
        if inspect.isframe(r) or id(r) in ignore:
            continue
        if isinstance(r, list):
            where = f"{_describe(r)}[{next(i for i, x in enumerate(r) if x is obj)}]"
        elif isinstance(r, dict):
            key = next((k for k, v in r.items() if v is obj), None)
            mod = next((m for m in list(sys.modules.values()) if getattr(m, "__dict__", None) is r), None)
            if mod is not None:
                lines.append(f"{_describe(obj)} is referred to by {mod.__name__}.{key}")
                continue
            where = f"{_describe(r)}[{key!r}]"
        else:
            continue
        lines.append(f"{_describe(obj)} is referred to by {where}")
        if depth > 1:
            lines.extend(_referrer_lines(r, ignore, depth - 1))
    return lines


def _check_leaks(dbg):
    """``jax_check_tracer_leaks``: a tracer of the trace just finished that something still holds."""
    gc.collect()
    objs = gc.get_objects()
    leaked = [o for o in objs if type(o) is DynamicJaxprTracer and o._trace.debug is dbg]
    ignore = {id(objs), id(leaked)}
    del objs
    if leaked:
        t = leaked[0]
        lines = [repr(t), t._trace.error_context(t)] + _referrer_lines(t, ignore)
        raise Exception("Leaked trace DynamicJaxprTrace. Leaked tracer(s):\n\n" + "\n".join(lines))


@contextlib.contextmanager
def checking_leaks():
    """Within the block, ``jax_check_tracer_leaks`` is on for this thread: tracing a function that lets a
    tracer escape (stores it in a global, a list...) raises ``Exception`` naming the tracer, where it was
    traced and what holds it (``jax.checking_leaks``)."""
    with config._override("jax_check_tracer_leaks", True):
        yield


@contextlib.contextmanager
def check_tracer_leaks(value=True):
    """``jax_check_tracer_leaks`` for the block, this thread (``jax.check_tracer_leaks``)."""
    with config._override("jax_check_tracer_leaks", value):
        yield


@contextlib.contextmanager
def debug_nans(value=True):
    """``jax_debug_nans`` for the block, this thread (``jax.debug_nans``)."""
    with config._override("jax_debug_nans", value):
        yield


@contextlib.contextmanager
def debug_infs(value=True):
    """``jax_debug_infs`` for the block, this thread (``jax.debug_infs``)."""
    with config._override("jax_debug_infs", value):
        yield


@contextlib.contextmanager
def log_compiles(value=True):
    """``jax_log_compiles`` for the block, this thread (``jax.log_compiles``)."""
    with config._override("jax_log_compiles", value):
        yield


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within the ``with`` block, ``jit``-decorated functions are not compiled: they run as plain Python, op by
    op (so ``print`` shows values, and a debugger can step through), and ``cond``/``while_loop``/``scan``
    with concrete values run as Python control flow. Like JAX's, it applies to the calling thread only and
    overrides ``config.jax_disable_jit`` there. Mirrors ``jax.disable_jit``."""
    with config._override("jax_disable_jit", disable):
        yield


config._add_listener(_on_config_update)


def clear_caches():
    """Clears every jit cache and the core's executable cache. Mirrors ``jax.clear_caches``."""
    with _registry_lock:   # another thread may be adding a holder (a WeakSet is not safe to copy meanwhile)
        holders = list(_all_jit_caches)
    for h in holders:
        h.execs.clear()
        h.traces.clear()
    dispatch.clear_cache()
    jit_p._exe_cache.clear()
    _core.clear_caches()


def named_call(fun, *, name=None):
    """``fun`` under the name ``name`` (default: its ``__name__``) for profiles and compiled-code names; values
    and printed jaxprs are unchanged, as in JAX 0.10.2 (cranax records no name stack). Mirrors
    ``jax.named_call``."""
    @functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)
    return named


@contextlib.contextmanager
def _named_scope(name):
    yield


def named_scope(name):
    """A context manager naming the operations traced inside it (for profiles; values and printed jaxprs are
    unchanged, as in JAX 0.10.2). Raises ``TypeError`` when ``name`` is not a string. Mirrors
    ``jax.named_scope``."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return _named_scope(name)
