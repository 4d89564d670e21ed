"""jax.dlpack: cranax arrays exported to NumPy without a copy (the consumer aliases the host buffer and keeps it
alive), imports from NumPy, and JAX 0.10.2's errors and device answers."""
import gc
import importlib.util

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp


def _addr(a):
    return a.__array_interface__["data"][0]


def test_export_to_numpy_aliases_the_host_buffer():
    x = jnp.arange(4.0) * 2
    b = np.from_dlpack(x)
    np.testing.assert_array_equal(b, [0.0, 2.0, 4.0, 6.0])
    assert b.dtype == np.float32
    assert not b.flags.writeable                 # as JAX's: a read-only view
    assert _addr(b) == _addr(np.asarray(x))      # no copy: the same memory np.asarray gives
    assert _addr(np.from_dlpack(x)) == _addr(b)
    assert x.__dlpack_device__() == (jax.dlpack.DLDeviceType.kDLCPU, 0)
    assert x.__dlpack_device__()[0] == 1


def test_export_keeps_the_data_alive():
    x = jnp.arange(1000, dtype=jnp.int32)
    b = np.from_dlpack(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(b, np.arange(1000, dtype=np.int32))


def test_export_dtypes_and_copies():
    for dt in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.float16, np.float32):
        v = np.arange(5).astype(dt)
        np.testing.assert_array_equal(np.from_dlpack(jnp.asarray(v)), v)
    z = jnp.arange(3) + 1j
    np.testing.assert_array_equal(np.from_dlpack(z), np.arange(3) + 1j)
    x = jnp.ones(3)
    c = np.from_dlpack(x, copy=True)
    assert c.flags.writeable and _addr(c) != _addr(np.asarray(x))
    # A consumer of DLPack < 1.0 cannot be told "read-only": it gets a copy, or an error with copy=False.
    assert type(x.__dlpack__()).__name__ == "PyCapsule"
    with pytest.raises(BufferError):
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 0), dl_device=(2, 0))


def test_from_dlpack():
    a = np.arange(4, dtype=np.float32)
    y = jax.dlpack.from_dlpack(a)
    assert isinstance(y, jax.Array) and y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), a)
    # Recorded from JAX 0.10.2: float64 canonicalizes to float32 with x64 off.
    assert repr(jax.dlpack.from_dlpack(np.arange(3.0))) == "Array([0., 1., 2.], dtype=float32)"
    x = jnp.arange(3)
    assert jax.dlpack.from_dlpack(x) is x
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(x, copy=True)), [0, 1, 2])
    with pytest.raises(TypeError, match="The array passed to from_dlpack must have __dlpack__ and "
                                        "__dlpack_device__ methods."):
        jax.dlpack.from_dlpack([1, 2])
    with pytest.raises(BufferError):
        jax.dlpack.from_dlpack(a, copy=False)
    # The imported array owns its data: changing the source later does not change it.
    a[0] = 100
    assert float(y[0]) == 0.0


def test_is_supported_dtype():
    assert jax.dlpack.is_supported_dtype(np.float32) and jax.dlpack.is_supported_dtype("int8")
    assert jax.dlpack.is_supported_dtype(np.complex64)
    assert not jax.dlpack.is_supported_dtype(np.dtype("O"))
    with pytest.raises(TypeError, match="Expected a string or dtype-like object; got dtype=None"):
        jax.dlpack.is_supported_dtype(None)
    with pytest.raises(TypeError):
        jax.dlpack.is_supported_dtype("foo")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_torch_round_trip():
    import torch
    x = jnp.arange(4.0)
    t = torch.from_dlpack(x)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    y = jax.dlpack.from_dlpack(torch.arange(3, dtype=torch.float32))
    np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, 2.0])
