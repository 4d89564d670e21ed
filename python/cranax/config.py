"""Global configuration, mirroring ``jax.config``.

``cranax.config.update(name, value)`` sets an option; options are read as attributes
(``cranax.config.jax_enable_x64``). Environment variables of the same upper-case name set the initial value
(``JAX_ENABLE_X64=1``); ``CRANAX_PLATFORMS`` / ``JAX_PLATFORMS`` choose platforms.

Options: ``jax_enable_x64`` (bool, default False: 64-bit dtypes canonicalize to 32-bit),
``jax_explain_cache_misses`` (bool: log why a jitted call retraced), ``jax_platforms`` (str or None),
``jax_platform_name`` (str or None), ``jax_default_device`` (device or None),
``jax_compilation_cache_max_size`` (int: executables kept before least-recently-used eviction),
``jax_disable_jit`` (bool, default False: ``jit``-decorated functions run op by op; see
:func:`cranax.disable_jit`), ``jax_debug_nans`` / ``jax_debug_infs`` (bool: a NaN / infinity in an output raises
FloatingPointError naming the primitive), ``jax_log_compiles`` (bool: log each trace and compile),
``jax_check_tracer_leaks`` (bool: a tracer still referenced after its trace ended raises; see
:func:`cranax.checking_leaks`); the persistent compilation cache's ``jax_compilation_cache_dir`` (str or None),
``jax_persistent_cache_min_compile_time_secs`` (float, default 1.0), ``jax_persistent_cache_min_entry_size_bytes``
(int, default 0), ``jax_enable_compilation_cache`` (bool, default True), ``jax_raise_persistent_cache_errors``
(see :mod:`cranax.experimental.compilation_cache`).

Raises ``AttributeError`` for an unknown option name, mirroring ``jax.config.update``.
"""
import contextlib
import os
import threading

__all__ = ["config", "Config", "numpy_dtype_promotion"]


def _env_bool(name, default):
    v = os.environ.get(name)
    if v is None:
        return default
    return v.strip().lower() in ("1", "true", "yes", "on")


class Config:
    """Holds the option values; ``update`` validates names. Mirrors ``jax.config``."""

    _defaults = {
        "jax_enable_x64": lambda: _env_bool("JAX_ENABLE_X64", False),
        "jax_explain_cache_misses": lambda: _env_bool("JAX_EXPLAIN_CACHE_MISSES", False),
        "jax_platforms": lambda: os.environ.get("CRANAX_PLATFORMS") or os.environ.get("JAX_PLATFORMS"),
        "jax_platform_name": lambda: None,
        "jax_default_device": lambda: None,
        "jax_compilation_cache_max_size": lambda: int(os.environ.get("CRANAX_CACHE_MAX_SIZE", "4096")),
        "jax_debug_nans": lambda: _env_bool("JAX_DEBUG_NANS", False),
        "jax_debug_infs": lambda: _env_bool("JAX_DEBUG_INFS", False),
        "jax_log_compiles": lambda: _env_bool("JAX_LOG_COMPILES", False),
        "jax_check_tracer_leaks": lambda: _env_bool("JAX_CHECK_TRACER_LEAKS", False),
        "jax_disable_jit": lambda: _env_bool("JAX_DISABLE_JIT", False),
        # Only "standard" is implemented (libraries read the option, e.g. diffrax).
        "jax_numpy_dtype_promotion": lambda: "standard",
        # The persistent compilation cache (cranax.experimental.compilation_cache), JAX's names and defaults.
        "jax_compilation_cache_dir": lambda: os.environ.get("JAX_COMPILATION_CACHE_DIR") or None,
        "jax_persistent_cache_min_compile_time_secs":
            lambda: float(os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "1.0")),
        "jax_persistent_cache_min_entry_size_bytes":
            lambda: int(os.environ.get("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")),
        "jax_enable_compilation_cache": lambda: _env_bool("JAX_ENABLE_COMPILATION_CACHE", True),
        "jax_raise_persistent_cache_errors": lambda: _env_bool("JAX_RAISE_PERSISTENT_CACHE_ERRORS", False),
        # XLA's own caches; cranax has none (the value is kept, as JAX's, and has no effect).
        "jax_persistent_cache_enable_xla_caches": lambda: "xla_gpu_per_fusion_autotune_cache_dir",
    }

    def __init__(self):
        object.__setattr__(self, "_values", {k: f() for k, f in self._defaults.items()})
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_listeners", [])
        # Context-manager overrides (``disable_jit()``) are per thread, as JAX's: name -> active count over
        # all threads (reads only look at the thread's stack while some override is active).
        object.__setattr__(self, "_active", {})
        object.__setattr__(self, "_local", threading.local())

    def update(self, name, value):
        """Set option ``name`` to ``value``. Raises AttributeError for an unknown name, TypeError/ValueError
        for a value the option cannot take."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        check = _validators.get(name)
        if check is not None:
            value = check(name, value)
        with self._lock:
            self._values[name] = value
        for fn in list(self._listeners):
            fn(name, value)

    def _add_listener(self, fn):
        self._listeners.append(fn)

    @contextlib.contextmanager
    def _override(self, name, value):
        """Within the block, this thread reads ``value`` for option ``name`` (other threads and the global
        value are unchanged); listeners are told on entry and exit."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        check = _validators.get(name)
        if check is not None:
            value = check(name, value)
        stacks = self._local.__dict__.setdefault("stacks", {})
        stack = stacks.setdefault(name, [])
        with self._lock:
            stack.append(value)
            self._active[name] = self._active.get(name, 0) + 1
        try:
            for fn in list(self._listeners):
                fn(name, value)
            yield
        finally:
            with self._lock:
                stack.pop()
                self._active[name] -= 1
                if not self._active[name]:
                    del self._active[name]
            for fn in list(self._listeners):
                fn(name, getattr(self, name))

    def _override_count(self, name):
        return self._active.get(name, 0)

    def __getattr__(self, name):
        if self._active and name in self._active:
            stack = self._local.__dict__.get("stacks", {}).get(name)
            if stack:
                return stack[-1]
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def __setattr__(self, name, value):
        self.update(name, value)


def _nonnegative_int(name, value):
    import operator
    if isinstance(value, bool):
        raise TypeError(f"config option {name} must be an int, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"config option {name} must be an int, got {type(value).__name__} {value!r}") from None
    if n < 0:
        raise ValueError(f"config option {name} must be >= 0, got {n}")
    return n


def _bool(name, value):
    return bool(value)  # JAX's boolean flags take any value and keep its truth


def _promotion_mode(name, value):
    if value != "standard":
        raise NotImplementedError(f"{name}: cranax implements only the 'standard' dtype promotion mode, got "
                                  f"{value!r}")
    return value


def _typed(kind, types):
    """JAX's check for a typed option that may also be None (its message)."""
    def check(name, value):
        if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
            raise ValueError(f"new {kind} config value must be None or of type {types[0].__name__}, got {value} "
                             f"of type {type(value)}" + ("." if kind == "string" else ""))
        return value
    return check


_validators = {"jax_compilation_cache_max_size": _nonnegative_int, "jax_disable_jit": _bool, "jax_debug_nans": _bool,
               "jax_debug_infs": _bool, "jax_log_compiles": _bool, "jax_check_tracer_leaks": _bool,
               "jax_numpy_dtype_promotion": _promotion_mode,
               "jax_compilation_cache_dir": _typed("string", (str,)),
               "jax_persistent_cache_min_compile_time_secs": _typed("float", (float, int)),
               "jax_persistent_cache_min_entry_size_bytes": _typed("int", (int,)),
               "jax_enable_compilation_cache": _bool, "jax_raise_persistent_cache_errors": _bool,
               "jax_persistent_cache_enable_xla_caches": _typed("string", (str,))}

config = Config()


@contextlib.contextmanager
def numpy_dtype_promotion(mode):
    """Context manager choosing the type-promotion mode: ``"standard"`` (JAX's lattice, the only one cranax
    implements) runs the block as it is; ``"strict"`` raises ``NotImplementedError``; anything else
    ``ValueError``. Mirrors ``jax.numpy_dtype_promotion``."""
    if mode not in ("standard", "strict"):
        raise ValueError(f"jax_numpy_dtype_promotion: invalid value {mode!r}; expected 'standard' or 'strict'")
    if mode == "strict":
        raise NotImplementedError("cranax implements only the 'standard' dtype promotion mode")
    yield

