"""``cranax.ffi``: JAX's foreign function interface names. Mirrors ``jax.ffi``, as far as cranax can.

XLA FFI handlers are compiled against XLA's C ABI (``XLA_FFI_CallFrame``, its type ids and execution
stages), which cranax's Cranelift runtime does not implement, so cranax cannot run them. What it can do:

* ``pycapsule`` wraps a ``ctypes`` function pointer, as JAX's;
* the ``register_*`` functions check their arguments and record the registration (so a library that registers
  its kernels at import time imports), and ``ffi_call`` returns a callable, as JAX's;
* calling that callable, ``include_dir`` (XLA's FFI headers, which cranax does not ship) and the MLIR lowering
  builders ``ffi_lowering``/``build_ffi_lowering_function`` raise ``NotImplementedError`` saying so.
"""
import ctypes as _ctypes

__all__ = ["build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir", "pycapsule",
           "register_ffi_target", "register_ffi_target_as_batch_partitionable", "register_ffi_type",
           "register_ffi_type_id"]

_targets = {}          # (name, platform) -> (handler capsule(s), api_version)
_types = {}            # (name, platform) -> type registration
_batch_partitionable = set()

_NO_ABI = ("cranax cannot run XLA FFI handlers: they are compiled against XLA's C ABI (XLA_FFI_CallFrame), which "
           "cranax's runtime does not implement; write the computation with cranax operations or call host code "
           "through jax.pure_callback")


def _is_capsule(x):
    return type(x).__name__ == "PyCapsule"


def pycapsule(funcptr):
    """``funcptr`` (a ``ctypes`` function pointer from a loaded library) wrapped in an opaque ``PyCapsule``, as
    FFI registration takes it. ``TypeError`` for anything else. Mirrors ``jax.ffi.pycapsule``."""
    if not isinstance(funcptr, (_ctypes._CFuncPtr, _ctypes.c_void_p)):
        raise TypeError(f"pycapsule: expected a ctypes function pointer, got {type(funcptr).__name__}")
    address = _ctypes.cast(funcptr, _ctypes.c_void_p).value
    if not address:
        raise ValueError("pycapsule: the function pointer is NULL")
    new = _ctypes.pythonapi.PyCapsule_New
    new.restype = _ctypes.py_object
    new.argtypes = (_ctypes.c_void_p, _ctypes.c_char_p, _ctypes.c_void_p)
    return new(address, None, None)   # unnamed, no destructor: the library owns the function


def register_ffi_target(name, fn, platform="cpu", api_version=1, **kwargs):
    """Records FFI handler ``fn`` (a ``PyCapsule``, or a dict from stage names such as ``"execute"`` to capsules)
    under target ``name`` for ``platform``. cranax cannot run it (``ffi_call`` of it raises
    ``NotImplementedError``); recording lets libraries that register handlers at import time load. ``TypeError``
    for a non-str ``name`` or a ``fn`` that is not a capsule (dict). Mirrors ``jax.ffi.register_ffi_target``."""
    if not isinstance(name, str):
        raise TypeError(f"register_ffi_target: name must be a str, got {type(name).__name__}")
    handlers = fn.values() if isinstance(fn, dict) else [fn]
    if not all(_is_capsule(h) for h in handlers):
        raise TypeError(f"register_ffi_target: fn must be a PyCapsule (see jax.ffi.pycapsule) or a dict of them, "
                        f"got {type(fn).__name__}")
    if api_version not in (0, 1):
        raise ValueError(f"register_ffi_target: api_version must be 0 or 1, got {api_version!r}")
    _targets[(name, str(platform).lower())] = (fn, api_version)


def register_ffi_type_id(name, obj, platform="cpu"):
    """Raises ``ValueError``, as JAX 0.10.2's (use ``register_ffi_type``). Mirrors
    ``jax.ffi.register_ffi_type_id``."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(name, type_registration, platform="cpu"):
    """Records custom FFI type ``name`` (``type_registration``: a dict with a ``"type_id"`` capsule and an
    optional ``"type_info"`` capsule). ``TypeError`` for another form. Mirrors ``jax.ffi.register_ffi_type``."""
    if not isinstance(type_registration, dict) or "type_id" not in type_registration:
        raise TypeError("register_ffi_type: type_registration must be a dict with a 'type_id' PyCapsule")
    _types[(name, str(platform).lower())] = type_registration


def register_ffi_target_as_batch_partitionable(name):
    """Records that FFI target ``name`` may be partitioned along its batch dimensions. Mirrors
    ``jax.ffi.register_ffi_target_as_batch_partitionable``."""
    _batch_partitionable.add(name)


def include_dir():
    """JAX returns jaxlib's folder of XLA FFI headers, for building handlers; cranax ships none and cannot run
    such handlers: ``NotImplementedError``. Mirrors ``jax.ffi.include_dir``."""
    raise NotImplementedError("jax.ffi.include_dir(): cranax ships no XLA FFI headers; " + _NO_ABI)


def ffi_call(target_name, result_shape_dtypes, *, has_side_effect=False, vmap_method=None, input_layouts=None,
             output_layouts=None, input_output_aliases=None, custom_call_api_version=4,
             legacy_backend_config=None):
    """A function that would call FFI target ``target_name`` with results of ``result_shape_dtypes`` (objects
    with ``.shape`` and ``.dtype``, or a sequence of them). Calling it raises ``NotImplementedError`` (cranax
    cannot run XLA FFI handlers). ``ValueError`` for an unknown ``vmap_method``, as JAX. Mirrors
    ``jax.ffi.ffi_call``."""
    methods = ['sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized', None]
    if vmap_method not in methods:
        # JAX's text (its typo included)
        raise ValueError(f"vmap_method must be on of the allowed methods {methods}, but got: {vmap_method}")
    known = any(n == target_name for n, _ in _targets)

    def call(*args, **kwargs):
        state = "registered with jax.ffi.register_ffi_target" if known else "not registered"
        raise NotImplementedError(f"jax.ffi.ffi_call: FFI target '{target_name}' ({state}): " + _NO_ABI)
    return call


def ffi_lowering(call_target_name, *, operand_layouts=None, result_layouts=None, backend_config=None,
                 skip_ffi_layout_processing=False, **lowering_args):
    """JAX builds an MLIR lowering rule calling FFI target ``call_target_name``; cranax has no MLIR lowering
    and cannot run the target: ``NotImplementedError``. Mirrors ``jax.ffi.ffi_lowering``."""
    raise NotImplementedError(f"jax.ffi.ffi_lowering('{call_target_name}'): cranax lowers to its own program "
                              f"format, not MLIR; " + _NO_ABI)


def build_ffi_lowering_function(call_target_name, *, operand_layouts=None, result_layouts=None,
                                backend_config=None, skip_ffi_layout_processing=False, **lowering_args):
    """As :func:`ffi_lowering`: ``NotImplementedError``. Mirrors ``jax.ffi.build_ffi_lowering_function``."""
    raise NotImplementedError(f"jax.ffi.build_ffi_lowering_function('{call_target_name}'): cranax lowers to its "
                              f"own program format, not MLIR; " + _NO_ABI)
