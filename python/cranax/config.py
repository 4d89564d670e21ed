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
import logging
import os
import threading

__all__ = ["config", "Config", "State", "numpy_dtype_promotion", "numpy_rank_promotion", "default_matmul_precision",
           "transfer_guard"]


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
        "jax_numpy_dtype_promotion": lambda: os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard"),
        "jax_numpy_rank_promotion": lambda: os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow"),
        "jax_default_matmul_precision": lambda: os.environ.get("JAX_DEFAULT_MATMUL_PRECISION"),
        "jax_transfer_guard": lambda: os.environ.get("JAX_TRANSFER_GUARD"),
        "jax_transfer_guard_host_to_device": lambda: None,
        "jax_transfer_guard_device_to_host": lambda: None,
        "jax_transfer_guard_device_to_device": lambda: None,
        # Flags whose JAX default is the only behaviour cranax has (another value raises NotImplementedError,
        # see _only); flags with no visible effect in cranax (sharding types and thread guards on one device,
        # jax2tf, internal checks, the softmax/f16-reduction implementation choices) are accepted and kept;
        # jax_no_tracing / jax_no_execution raise as JAX's (api.py, interpreters/dispatch.py).
        "jax_debug_key_reuse": lambda: False,
        "jax_threefry_partitionable": lambda: True,
        "jax_enable_custom_prng": lambda: False,
        "jax_default_prng_impl": lambda: "threefry2x32",
        "jax_legacy_prng_key": lambda: "allow",
        "jax_array_garbage_collection_guard": lambda: None,
        "jax_softmax_custom_jvp": lambda: False,
        "jax_enable_checks": lambda: False,
        "jax_thread_guard": lambda: False,
        "jax_allow_f16_reductions": lambda: True,
        "jax_auto_pcast": lambda: True,
        "jax_remove_size_one_mesh_axis_from_type": lambda: False,
        "jax2tf_associative_scan_reductions": lambda: False,
        "jax_no_tracing": lambda: False,
        "jax_no_execution": lambda: False,
        # JAX's switch to its next remat (a hijax primitive). cranax keeps remat2's rules either way (same
        # values; a jaxpr prints remat2 where JAX's would print the hi primitive); True makes ``checkpoint``
        # return a ``functools.partial``, as JAX's remat3, whose arguments print_saved_residuals names
        # ``args[i]``, and keeps what remat3 keeps: named values only (``primitives.remat._remat3_policy``).
        "jax_remat3": lambda: False,
        # How errors leaving a JAX entry point lose cranax's frames (``errors._filtered``), JAX's values.
        "jax_traceback_filtering": lambda: os.environ.get("JAX_TRACEBACK_FILTERING", "auto"),
        # The level of the "jax" (and cranax's own "cranax") loggers, with a stderr handler, as JAX sets it.
        "jax_logging_level": lambda: os.environ.get("JAX_LOGGING_LEVEL") or logging.getLevelName(
            logging.getLogger("jax").level),
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
        # How many CPU devices (-1: XLA_FLAGS' --xla_force_host_platform_device_count, else 1); only before
        # the devices start (array.py checks it and hands it to the core through CRANAX_NUM_CPU_DEVICES).
        "jax_num_cpu_devices": lambda: -1,
        # JAX's absl flags (no check on update; ``config.jax_dump_ir_to`` is an AttributeError, as JAX's):
        # where jitted programs are dumped and how (``interpreters/dump_ir.py``), and XLA's mock GPU
        # topology, which only JAX's CUDA client reads (cranax has none: kept, no effect).
        "jax_dump_ir_to": lambda: os.environ.get("JAX_DUMP_IR_TO", ""),
        "jax_dump_ir_modes": lambda: os.environ.get("JAX_DUMP_IR_MODES", "stablehlo"),
        "jax_mock_gpu_topology": lambda: "",
    }
    _flags = frozenset(("jax_dump_ir_to", "jax_dump_ir_modes", "jax_mock_gpu_topology"))

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
        if name in self._flags:
            raise AttributeError(f"'Config' object has no attribute '{name}'")
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
    value = getattr(value, "value", value)   # JAX's NumpyDtypePromotion enum members too
    if value not in ("standard", "strict"):
        raise ValueError(f"{value!r} is not a valid NumpyDtypePromotion")
    return value


def _typed(kind, types):
    """JAX's check for a typed option that may also be None (its message)."""
    def check(name, value):
        if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
            raise ValueError(f"new {kind} config value must be None or of type {types[0].__name__}, got {value} "
                             f"of type {type(value)}" + ("." if kind == "string" else ""))
        return value
    return check


def _enum(values, optional=False):
    """JAX's enum option check: ``values`` (and None when ``optional``)."""
    def check(name, value):
        if (value is None and optional) or value in values:
            return value
        raise ValueError(f"new enum value must be {'None or ' if optional else ''}in {list(values)}, got {value} of "
                         f"type {type(value)}.")
    return check


_LOG_LEVELS = ("NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _only(default, check=_bool):
    """An option cranax implements only at JAX's default value."""
    def only(name, value):
        value = check(name, value)
        if value != default:
            raise NotImplementedError(f"cranax implements only {name}={default!r}, got {value!r}")
        return value
    return only


_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F8_ANY_F8_F32",
               "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
               "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
               "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
_GUARDS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_PRNG_IMPLS = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")

_validators = {"jax_compilation_cache_max_size": _nonnegative_int, "jax_disable_jit": _bool, "jax_debug_nans": _bool,
               "jax_debug_infs": _bool, "jax_log_compiles": _bool, "jax_check_tracer_leaks": _bool,
               "jax_numpy_dtype_promotion": _promotion_mode,
               "jax_numpy_rank_promotion": _enum(("allow", "warn", "raise")),
               "jax_default_matmul_precision": _enum(_PRECISIONS, optional=True),
               "jax_transfer_guard": _enum(_GUARDS, optional=True),
               "jax_transfer_guard_host_to_device": _enum(_GUARDS, optional=True),
               "jax_transfer_guard_device_to_host": _enum(_GUARDS, optional=True),
               "jax_transfer_guard_device_to_device": _enum(_GUARDS, optional=True),
               "jax_debug_key_reuse": _only(False), "jax_threefry_partitionable": _only(True),
               "jax_enable_custom_prng": _only(False),
               "jax_default_prng_impl": _only("threefry2x32", _enum(_PRNG_IMPLS)),
               "jax_legacy_prng_key": _only("allow", _enum(("allow", "warn", "error"))),
               "jax_array_garbage_collection_guard": _only(None, _enum(("allow", "log", "fatal"), optional=True)),
               "jax_softmax_custom_jvp": _bool, "jax_enable_checks": _bool, "jax_thread_guard": _bool,
               "jax_allow_f16_reductions": _bool, "jax_auto_pcast": _bool,
               "jax_remove_size_one_mesh_axis_from_type": _bool, "jax2tf_associative_scan_reductions": _bool,
               "jax_compilation_cache_dir": _typed("string", (str,)),
               "jax_persistent_cache_min_compile_time_secs": _typed("float", (float, int)),
               "jax_persistent_cache_min_entry_size_bytes": _typed("int", (int,)),
               "jax_enable_compilation_cache": _bool, "jax_raise_persistent_cache_errors": _bool,
               "jax_persistent_cache_enable_xla_caches": _typed("string", (str,)),
               "jax_num_cpu_devices": _typed("int", (int,)),
               "jax_no_tracing": _bool, "jax_no_execution": _bool, "jax_remat3": _bool,
               "jax_logging_level": _enum(_LOG_LEVELS, optional=True),
               "jax_traceback_filtering": _enum(("off", "tracebackhide", "remove_frames", "quiet_remove_frames",
                                                 "auto"))}

config = Config()


_log_handler = logging.StreamHandler()
_log_levels_set = {}   # logger name -> level before jax_logging_level set it


def _set_logging_level(name, value):
    """``jax_logging_level``: JAX's logging_config.update_logging_level_global on the "jax" and "cranax"
    loggers: the earlier handler removed first, then the level set (None sets none). As JAX's, the level
    remembered for the undo is the one just set, so None keeps it."""
    if name != "jax_logging_level":
        return
    for logger_name, level in _log_levels_set.items():
        logger = logging.getLogger(logger_name)
        logger.removeHandler(_log_handler)
        logger.setLevel(level)
    _log_levels_set.clear()
    if value is None:
        return
    for logger in (logging.getLogger("jax"), logging.getLogger("cranax")):
        logger.setLevel(logging.getLevelName(value))
        if value != "NOTSET":
            logger.addHandler(_log_handler)
        _log_levels_set[logger.name] = logger.level


config._add_listener(_set_logging_level)
if os.environ.get("JAX_LOGGING_LEVEL") in _LOG_LEVELS:
    _set_logging_level("jax_logging_level", config.jax_logging_level)


_no_default = object()


class _StateContext(contextlib.ContextDecorator):
    """``with state(value):`` (or ``@state(value)``): the option is ``value`` in this thread within."""

    def __init__(self, name, value):
        self._name, self._value, self._cm = name, value, None
        check = _validators.get(name)
        if check is not None:
            check(name, value)   # a bad value raises at the call, as JAX's

    def __enter__(self):
        self._cm = config._override(self._name, self._value)
        self._cm.__enter__()

    def __exit__(self, *exc):
        cm, self._cm = self._cm, None
        return cm.__exit__(*exc)


class State:
    """One option as JAX exposes it at the top level (``jax.enable_x64``, ``jax.numpy_rank_promotion``...):
    ``value`` reads it (this thread's override first), ``state(new_value)`` is a context manager and
    decorator setting it for this thread; a boolean option called without a value means True. Mirrors
    ``jax._src.config.State``."""

    def __init__(self, name):
        if name not in config._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        self.name = name
        self._is_bool = isinstance(config._values[name], bool)

    @property
    def value(self):
        return getattr(config, self.name)

    def get_global(self):
        return config._values[self.name]

    def set_global(self, value):
        config.update(self.name, value)

    def __call__(self, new_val=_no_default):
        if new_val is _no_default:
            if not self._is_bool:
                short = self.name[4:] if self.name.startswith("jax_") else self.name
                raise TypeError(f"Context manager for {short} config option requires an argument representing the "
                                "new value for the config option.")
            new_val = True
        return _StateContext(self.name, new_val)

    def __repr__(self):
        return f"<cranax.config.State {self.name}={self.value!r}>"


# The top-level names (``jax.<name>``) of options.
numpy_dtype_promotion = State("jax_numpy_dtype_promotion")
numpy_rank_promotion = State("jax_numpy_rank_promotion")
default_matmul_precision = State("jax_default_matmul_precision")
enable_x64 = State("jax_enable_x64")
default_device = State("jax_default_device")
explain_cache_misses = State("jax_explain_cache_misses")
transfer_guard_host_to_device = State("jax_transfer_guard_host_to_device")
transfer_guard_device_to_host = State("jax_transfer_guard_device_to_host")
transfer_guard_device_to_device = State("jax_transfer_guard_device_to_device")
debug_key_reuse = State("jax_debug_key_reuse")
threefry_partitionable = State("jax_threefry_partitionable")
enable_custom_prng = State("jax_enable_custom_prng")
default_prng_impl = State("jax_default_prng_impl")
legacy_prng_key = State("jax_legacy_prng_key")
array_garbage_collection_guard = State("jax_array_garbage_collection_guard")
softmax_custom_jvp = State("jax_softmax_custom_jvp")
enable_checks = State("jax_enable_checks")
thread_guard = State("jax_thread_guard")
allow_f16_reductions = State("jax_allow_f16_reductions")
auto_pcast = State("jax_auto_pcast")
remove_size_one_mesh_axis_from_type = State("jax_remove_size_one_mesh_axis_from_type")
jax2tf_associative_scan_reductions = State("jax2tf_associative_scan_reductions")
no_tracing = State("jax_no_tracing")
no_execution = State("jax_no_execution")


@contextlib.contextmanager
def transfer_guard(new_val):
    """All three transfer guards (host to device, device to host, device to device) set to ``new_val`` for
    the block, this thread: ``"allow"``, ``"log"`` (implicit transfers logged), ``"disallow"`` (implicit
    transfers raise), ``"log_explicit"`` / ``"disallow_explicit"`` (explicit ones too). Raises ValueError for
    another value. Mirrors ``jax.transfer_guard``."""
    with transfer_guard_host_to_device(new_val), transfer_guard_device_to_host(new_val), \
            transfer_guard_device_to_device(new_val):
        yield


def _transfer_guard_level(direction):
    """The guard of ``direction`` ("host_to_device", ...): its own option, else ``jax_transfer_guard``, else
    "allow"."""
    v = getattr(config, "jax_transfer_guard_" + direction)
    if v is None:
        v = config.jax_transfer_guard
    return v or "allow"
