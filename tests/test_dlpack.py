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
    # complex: the planes are interleaved once into the host value, which every export then aliases
    zc = np.from_dlpack(z)
    assert zc.dtype == np.complex64 and not zc.flags.writeable
    assert _addr(zc) == _addr(np.asarray(z)) == _addr(np.from_dlpack(z))
    x = jnp.ones(3)
    c = np.from_dlpack(x, copy=True)
    assert c.flags.writeable and _addr(c) != _addr(np.asarray(x))
    # A consumer of DLPack < 1.0 cannot be told "read-only": it gets a copy, or an error with copy=False.
    assert type(x.__dlpack__()).__name__ == "PyCapsule"
    with pytest.raises(BufferError):
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 0), dl_device=(2, 0))


def _aligned(n, dtype=np.float32, offset=0):
    """A NumPy array of ``n`` elements whose data starts ``offset`` bytes past a 64-byte boundary."""
    dtype = np.dtype(dtype)
    raw = np.zeros(n * dtype.itemsize + 128 + offset, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + n * dtype.itemsize].view(dtype)


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
    # Recorded from JAX 0.10.2: transposed data (a copy is needed) with copy=False.
    with pytest.raises(ValueError, match="Specified input which requires a copy since the source data buffer is "
                                         "not aligned to 64 bytes.  However copy=False. Set copy=True or "
                                         "copy=None to perform the requested operation."):
        jax.dlpack.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3).T, copy=False)
    assert repr(jax.dlpack.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3).T)) == (
        "Array([[0., 3.],\n       [1., 4.],\n       [2., 5.]], dtype=float32)")
    assert repr(jax.dlpack.from_dlpack(np.zeros((0, 3), np.float32))) == "Array([], shape=(0, 3), dtype=float32)"
    # JAX asks for a legacy capsule, which cannot say "read-only": NumPy refuses a read-only array.
    ro = np.arange(3, dtype=np.float32)
    ro.flags.writeable = False
    with pytest.raises(BufferError, match="Cannot export readonly array"):
        jax.dlpack.from_dlpack(ro)


def test_from_dlpack_aliases_aligned_cpu_buffers():
    # As JAX 0.10.2 on the CPU: a C-contiguous buffer aligned to 64 bytes becomes the array's storage.
    for dt in (np.float32, np.int32, np.bool_, np.uint8, np.float16):
        a = _aligned(16, dt)
        a[:] = np.arange(16).astype(dt)
        y = jax.dlpack.from_dlpack(a)
        assert y.unsafe_buffer_pointer() == a.ctypes.data, dt
        assert y.dtype == dt and y.committed       # committed to the CPU, as JAX's
        np.testing.assert_array_equal(np.asarray(y), a)
        np.testing.assert_array_equal(np.asarray(y + y), a + a)   # computations read it in place
    a = _aligned(8)
    a[:] = 1.0
    y = jax.dlpack.from_dlpack(a, copy=False)
    assert y.unsafe_buffer_pointer() == a.ctypes.data
    a[0] = 100.0   # recorded from JAX 0.10.2: the producer's later writes show through (no copy was made)
    assert float(y[0]) == 100.0
    z = jax.dlpack.from_dlpack(a, device=jax.devices()[0])
    assert z.unsafe_buffer_pointer() == a.ctypes.data and z.committed
    # copy=True copies (JAX documents so).
    c = jax.dlpack.from_dlpack(a, copy=True)
    assert c.unsafe_buffer_pointer() != a.ctypes.data
    a[1] = 7.0
    assert float(c[1]) == 1.0 and float(y[1]) == 7.0
    # jnp.from_dlpack is the same import
    w = jnp.from_dlpack(a)
    assert w.unsafe_buffer_pointer() == a.ctypes.data


def test_from_dlpack_copies_what_it_cannot_alias():
    b = _aligned(16, offset=4)   # not 64-byte aligned: JAX copies
    b[:] = 3.0
    y = jax.dlpack.from_dlpack(b)
    assert y.unsafe_buffer_pointer() != b.ctypes.data
    b[0] = 0.0
    assert float(y[0]) == 3.0
    with pytest.raises(ValueError, match="not aligned to 64 bytes.  However copy=False"):
        jax.dlpack.from_dlpack(b, copy=False)
    u = _aligned(4, np.uint64)    # recorded from JAX 0.10.2: uint64 is uint32 with x64 off
    u[:] = [1, 2, 3, 2**40]
    assert repr(jax.dlpack.from_dlpack(u)) == "Array([1, 2, 3, 0], dtype=uint32)"
    d = _aligned(4, np.float64)   # float64 with x64 off: canonicalized, so copied (no error with copy=False)
    assert jax.dlpack.from_dlpack(d, copy=False).dtype == np.float32
    # cranax holds a complex array as two real planes: it copies where JAX aliases.
    z = _aligned(3, np.complex64)
    z[:] = [1 + 2j, 3, 4j]
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(z)), z)
    with pytest.raises(ValueError, match="needs a copy"):
        jax.dlpack.from_dlpack(z, copy=False)


def test_from_dlpack_keeps_the_producer_alive():
    import sys
    a = _aligned(1024)
    a[:] = np.arange(1024)
    before = sys.getrefcount(a)
    y = jax.dlpack.from_dlpack(a)
    assert sys.getrefcount(a) == before + 1   # as JAX's: the import holds the producer
    addr = a.ctypes.data
    del a
    gc.collect()
    np.testing.assert_array_equal(np.asarray(y), np.arange(1024, dtype=np.float32))
    assert y.unsafe_buffer_pointer() == addr
    v = y.reshape(32, 32)   # a view shares the borrowed storage and keeps it alive too
    del y
    gc.collect()
    np.testing.assert_array_equal(np.asarray(v)[1], np.arange(32, 64, dtype=np.float32))
    # Dropping the last cranax handle releases the producer.
    p = _aligned(64)
    base = sys.getrefcount(p)
    w = jax.dlpack.from_dlpack(p)
    del w
    gc.collect()
    assert sys.getrefcount(p) == base


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
    t = torch.arange(64, dtype=torch.float32)
    y = jax.dlpack.from_dlpack(t)
    if t.data_ptr() % 64 == 0:   # aligned: aliased, as JAX does
        assert y.unsafe_buffer_pointer() == t.data_ptr()
