"""CPython's freed frame-stack chunks kept for reuse, process-wide (``rust/py/stack_chunks.rs`` says why).

CPython 3.11+ maps a 16 KiB chunk each time the Python stack grows past a chunk's end and unmaps it as soon as
the stack shrinks back, with no slack; tracing a program such as diffrax's solve goes up and down across those
depths over a thousand times in one first call, each time a system call pair and a page fault (costly on
virtual machines and sandboxes). ``install`` wraps CPython's arena allocator so that up to ``keep`` freed
blocks of at most 64 KiB are handed back for the next request of the same size (diffrax's first call never
held more than two 16 KiB chunks at once).
``CRANAX_STACK_CHUNK_CACHE=0`` leaves CPython's allocator alone (set before importing cranax); ``keep(0)``
turns the reuse off later (for A/B measurements).
"""
import ctypes
import os

from . import _core

KEEP = 4


def _addresses():
    """The addresses of CPython's ``PyObject_GetArenaAllocator``/``PyObject_SetArenaAllocator`` (None when
    this interpreter does not export them)."""
    try:
        api = ctypes.pythonapi
        return (ctypes.cast(api.PyObject_GetArenaAllocator, ctypes.c_void_p).value,
                ctypes.cast(api.PyObject_SetArenaAllocator, ctypes.c_void_p).value)
    except (AttributeError, OSError):
        return None


def keep(n):
    """Keep up to ``n`` (0-8) freed blocks from now on (installing the wrapper on first use); returns (blocks
    reused so far, blocks held now), or None when the interpreter has no arena allocator to wrap."""
    addr = _addresses()
    if addr is None or not all(addr):
        return None
    return _core._stack_chunk_cache(addr[0], addr[1], n)


def install():
    """At import: the wrapper with ``KEEP`` slots, unless ``CRANAX_STACK_CHUNK_CACHE=0``."""
    if os.environ.get("CRANAX_STACK_CHUNK_CACHE", "1").strip() not in ("0", "off", "false"):
        keep(KEEP)


install()
