"""jax.ffi: JAX 0.10.2's names; what cranax can do (capsules, registrations) works, running an XLA FFI handler
raises NotImplementedError naming the target."""
import ctypes
import ctypes.util

import pytest

import cranax as jax
from cranax import ffi

JAX_NAMES = ['build_ffi_lowering_function', 'ffi_call', 'ffi_lowering', 'include_dir', 'pycapsule',
             'register_ffi_target', 'register_ffi_target_as_batch_partitionable', 'register_ffi_type',
             'register_ffi_type_id']


def test_names_as_jax():
    assert sorted(n for n in dir(ffi) if not n.startswith("_")) == JAX_NAMES
    assert jax.ffi is ffi


def test_pycapsule_and_registration():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    cap = ffi.pycapsule(libc.abs)
    assert type(cap).__name__ == "PyCapsule"
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, (ctypes.py_object, ctypes.c_char_p)
    assert get(cap, None) == ctypes.cast(libc.abs, ctypes.c_void_p).value
    ffi.register_ffi_target("cranax_test_abs", cap, platform="cpu")
    ffi.register_ffi_target("cranax_test_stages", {"execute": cap})
    ffi.register_ffi_target_as_batch_partitionable("cranax_test_abs")
    ffi.register_ffi_type("cranax_test_type", {"type_id": cap})
    with pytest.raises(TypeError, match="fn must be a PyCapsule"):
        ffi.register_ffi_target("bad", libc.abs)
    with pytest.raises(TypeError, match="expected a ctypes function pointer"):
        ffi.pycapsule("abs")
    with pytest.raises(ValueError, match="^register_ffi_type_id is not supported after jaxlib version 381.$"):
        ffi.register_ffi_type_id("t", cap)


def test_calls_that_need_xla_raise():
    f = ffi.ffi_call("cranax_test_abs", jax.ShapeDtypeStruct((2,), "float32"), vmap_method="broadcast_all")
    with pytest.raises(NotImplementedError, match="FFI target 'cranax_test_abs' \\(registered with"):
        f(jax.numpy.ones(2))
    with pytest.raises(NotImplementedError, match="'nowhere' \\(not registered\\).*XLA's C ABI"):
        ffi.ffi_call("nowhere", jax.ShapeDtypeStruct((2,), "float32"))(1.0)
    with pytest.raises(ValueError) as e:
        ffi.ffi_call("x", jax.ShapeDtypeStruct((2,), "float32"), vmap_method="foo")
    assert str(e.value) == ("vmap_method must be on of the allowed methods ['sequential', 'sequential_unrolled', "
                            "'expand_dims', 'broadcast_all', 'legacy_vectorized', None], but got: foo")
    for fn in (ffi.include_dir, lambda: ffi.ffi_lowering("t"), lambda: ffi.build_ffi_lowering_function("t")):
        with pytest.raises(NotImplementedError, match="cannot run XLA FFI handlers"):
            fn()
