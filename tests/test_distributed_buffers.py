"""The host-buffer path of the cross-process collectives, without MPI: the core's zero-copy host views
(``DeviceArray._host_view``, ``DeviceArray._empty_host``), a compiled host callback handing back core arrays
as they are (``callback.BufferCallback``), and the transport's Open MPI settings. The collectives themselves
run under ``mpirun`` in ``tests/test_distributed.py``."""
import gc
import os

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import _core, _transport, dtypes
from cranax.core import ShapedArray
from cranax.primitives import callback as _cb
from cranax.tree_util import tree_flatten


def test_host_view_reads_the_bytes_read_only_and_keeps_them_alive():
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    d = _core.DeviceArray.from_numpy(x)
    v = d._host_view()
    assert v.dtype == np.uint8 and v.shape == (48,) and not v.flags.writeable
    with pytest.raises(ValueError):
        v[0] = 1
    got = v.view(np.float32).reshape(3, 4)
    del d
    gc.collect()
    np.testing.assert_array_equal(got, x)   # the view's base holds the buffer
    assert _core.DeviceArray.from_numpy(np.zeros((0, 3), np.int32))._host_view().shape == (0,)


def test_host_view_of_a_computed_array_and_of_a_reshape_view():
    y = jax.jit(lambda a: a * 3 + 1)(jnp.arange(6, dtype=jnp.int32))
    np.testing.assert_array_equal(y._buf._host_view().view(np.int32), np.arange(6) * 3 + 1)
    r = y._buf.reshape_view([2, 3])
    np.testing.assert_array_equal(r._host_view().view(np.int32).reshape(2, 3), (np.arange(6) * 3 + 1).reshape(2, 3))


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "u8", "bool", "bf16"])
def test_empty_host_is_filled_through_its_writable_view(dtype):
    names = {"f32": "float32", "f64": "float64", "i32": "int32", "u8": "uint8", "bool": "bool"}
    np_dt = jnp.dtype(jnp.bfloat16) if dtype == "bf16" else np.dtype(names[dtype])
    arr, view = _core.DeviceArray._empty_host(dtype, [2, 3])
    assert view.flags.writeable and view.shape == (6 * np_dt.itemsize,)
    want = (np.arange(6) % 2 == 1) if dtype == "bool" else np.arange(6).astype(np_dt)
    view.view(np_dt)[:] = want
    assert arr.shape == (2, 3) and arr.dtype == dtype and arr.is_ready()
    np.testing.assert_array_equal(arr.to_numpy().reshape(-1), want)


def test_empty_host_refuses_an_unknown_dtype():
    with pytest.raises(TypeError, match="unsupported dtype"):
        _core.DeviceArray._empty_host("c64", [2])


def _negate_buffers(bufs):
    """Writes -x straight into a fresh core buffer and returns the core array (no NumPy result); ``bufs`` are
    the operands' core buffers as the step hands them over (no Array wrapping)."""
    (b,) = bufs
    assert type(b) is _core.DeviceArray
    x = b._host_view().view(dtypes.from_short_name(b.dtype)).reshape(b.shape)
    arr, view = _core.DeviceArray._empty_host(b.dtype, list(x.shape))
    np.negative(x, out=view.view(x.dtype).reshape(x.shape))
    return [arr]


def test_compiled_io_callback_takes_core_arrays_as_they_are():
    calls = []

    def numpy_path(a):   # what the object does when called (eagerly); the compiled step uses `buffers`
        calls.append("numpy")
        return -np.asarray(a)

    cb = _cb.BufferCallback(numpy_path, tree_flatten(((0,), {}))[1], _negate_buffers)
    aval = ShapedArray((5,), np.dtype(np.float32))

    @jax.jit
    def f(x):
        (y,) = _cb.io_callback_p.bind(x * 2, callback=cb, result_avals=(aval,), sharding=None, ordered=True)
        return y + 1

    x = np.linspace(-1, 1, 5).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(f(x)), -(x * 2) + 1)
    np.testing.assert_array_equal(np.asarray(f(x + 1)), -((x + 1) * 2) + 1)
    assert calls == []
    assert cb == _cb.BufferCallback(numpy_path, cb.in_tree, _negate_buffers) and hash(cb) == hash(
        _cb.BufferCallback(numpy_path, cb.in_tree, _negate_buffers))
    assert cb != _cb.FlatCallback(numpy_path, cb.in_tree)


def test_compiled_io_callback_result_of_the_wrong_aval_is_an_error():
    def wrong(args):
        return [_core.DeviceArray._empty_host("f32", [4])[0]]

    cb = _cb.BufferCallback(lambda a: a, tree_flatten(((0,), {}))[1], wrong)
    aval = ShapedArray((5,), np.dtype(np.float32))
    f = jax.jit(lambda x: _cb.io_callback_p.bind(x, callback=cb, result_avals=(aval,), sharding=None,
                                                  ordered=True)[0])
    with pytest.raises(Exception, match=r"result 0 is f32\[4\], expected f32\[5\]"):
        np.asarray(f(np.zeros(5, np.float32)))


def test_open_mpi_ring_setting_for_small_jobs_only(monkeypatch):
    key = "OMPI_MCA_coll_libnbc_iallreduce_algorithm"
    for size, want in (("2", "1"), ("3", "1"), ("4", None), ("16", None), ("", None)):
        monkeypatch.delenv(key, raising=False)
        monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", size)
        _transport._tune_open_mpi()
        assert os.environ.get(key) == want, size
    monkeypatch.setenv(key, "3")                      # the user's choice is kept
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    _transport._tune_open_mpi()
    assert os.environ[key] == "3"


def test_size_one_reductions_and_broadcasts_move_no_data():
    # What pmap over one local device wraps around a cross-process psum: a sum over the stacked size-1 axis
    # and a broadcast back to it. Both become reshapes (views) in the core, so -0.0 stays -0.0 as in JAX
    # 0.10.2 (jit(lambda a: a.sum(0))(jnp.array([[-0.0, 1.0]])) -> [-0., 1.]), where a summing kernel's
    # 0 + x gave +0.0.
    x = jnp.array([[-0.0, 1.0, -2.5]], jnp.float32)
    for f in (lambda a: a.sum(0), lambda a: a.max(0), lambda a: a.min(0), lambda a: a.prod(0)):
        got = np.asarray(jax.jit(f)(x))
        np.testing.assert_array_equal(got, [-0.0, 1.0, -2.5])
        assert np.signbit(got[0])
    y = jax.jit(lambda a: jax.lax.broadcast_in_dim(a.sum(0) * 2, (1, 3, 1), (1,)))(x)
    np.testing.assert_array_equal(np.asarray(y), np.array([-0.0, 2.0, -5.0]).reshape(1, 3, 1))
    b = jax.jit(lambda a: jax.lax.broadcast_in_dim(a, (1, 1, 3), (1, 2)))(x)
    np.testing.assert_array_equal(np.asarray(b), np.asarray(x).reshape(1, 1, 3))
    assert np.signbit(np.asarray(b)[0, 0, 0])
    i = jnp.arange(6, dtype=jnp.int32).reshape(1, 2, 3)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a.sum((0,)) + a.sum((0, 2)).reshape(2, 1))(i)),
                                  np.arange(6).reshape(2, 3) + np.array([[3], [12]]))
