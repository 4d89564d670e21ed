"""The persistent compilation cache, mirroring ``jax.experimental.compilation_cache.compilation_cache``.

With ``jax_compilation_cache_dir`` set (``set_cache_dir(path)``, ``cranax.config.update``, or the
``JAX_COMPILATION_CACHE_DIR`` environment variable), the CPU machine code of every program whose compile took
at least ``jax_persistent_cache_min_compile_time_secs`` (default 1.0) and whose entry is at least
``jax_persistent_cache_min_entry_size_bytes`` (default 0) is written under that directory; another process
running the same program loads it instead of compiling (``cranax._core.compile_count()`` does not move).
``jax_enable_compilation_cache=False`` turns the cache off.

An entry is keyed by SHA-256 of everything that changes the code: the optimized program, cranax's version and
a digest of its native module (so a rebuilt core never loads an older build's code), the target triple, the
host ISA features, and the codegen switches. Its contents carry a SHA-256 checksum, its key and a digest of
the plan it was compiled for; a corrupt, truncated or foreign entry is never loaded: it is ignored and the
fresh compile rewrites it. Entries hold CPU code; the GPU backend's shaders are built from the (cached) CPU
executable's plan each process.

Differences from JAX: settings take effect when made (JAX reads the directory once, at the first compile,
until ``reset_cache()``); a cache read or write that fails never fails the compile and is not warned about:
it is counted (``_stats()``), and ``jax_raise_persistent_cache_errors`` is accepted but has no effect.

As JAX warns: the cache is trusted. Anyone who can write to the directory can make this process run their
code; do not share it with users you do not trust.
"""
import hashlib
import os
import threading
import warnings

from ... import _core
from ..._version import __version__
from ...config import config

__all__ = ["set_cache_dir", "reset_cache"]

_lock = threading.Lock()
_build_id = None
_options = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
            "jax_persistent_cache_min_entry_size_bytes", "jax_enable_compilation_cache")


def _core_build_id():
    """cranax's version and the SHA-256 of the native module's file (computed once per process)."""
    global _build_id
    if _build_id is None:
        h = hashlib.sha256()
        path = getattr(_core, "__file__", None)
        if path and os.path.exists(path):
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        _build_id = f"{__version__}:{h.hexdigest()}"
    return _build_id


def _apply():
    """Pushes the current options to the core (the cache is off without a directory or when disabled)."""
    path = config.jax_compilation_cache_dir
    on = bool(path) and bool(config.jax_enable_compilation_cache)
    with _lock:
        if not on:
            _core.set_persistent_cache(None, 1.0, 0, "")
            return
        try:
            _core.set_persistent_cache(os.fspath(path), float(config.jax_persistent_cache_min_compile_time_secs),
                                       int(config.jax_persistent_cache_min_entry_size_bytes), _core_build_id())
        except OSError as e:
            # As JAX: a cache that cannot be set up is a warning, and compiles go on without it.
            _core.set_persistent_cache(None, 1.0, 0, "")
            warnings.warn(f"Error initializing the persistent compilation cache: {e}")


def _on_update(name, value):
    if name in _options:
        _apply()


def set_cache_dir(path) -> None:
    """Sets the persistent compilation cache directory (``jax_compilation_cache_dir``): compiled programs are
    saved under ``path`` and looked up there before compiling. Warns (and the cache stays off) when ``path``
    cannot be created. Mirrors ``jax.experimental.compilation_cache.compilation_cache.set_cache_dir``."""
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Gets back to a pristine state: the core forgets the directory and its counters, then reads the options
    again (the directory option itself is kept, as JAX keeps it). Mirrors
    ``jax.experimental.compilation_cache.compilation_cache.reset_cache``."""
    with _lock:
        _core.set_persistent_cache(None, 1.0, 0, "")
        _core.reset_persistent_cache_stats()
    _apply()


def _stats():
    """The core's counters since the last reset: ``hits`` (entries loaded), ``misses`` (no entry),
    ``rejected`` (an entry failed a check and was not used), ``writes``, ``errors`` (reads/writes that
    failed), and ``last_error``."""
    return _core.persistent_cache_stats()


config._add_listener(_on_update)
if config.jax_compilation_cache_dir:
    _apply()
