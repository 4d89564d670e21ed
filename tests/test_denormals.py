"""Subnormal floats on the CPU backend behave as on JAX's (XLA's CPU backend runs with FTZ and DAZ set):
arithmetic reads subnormal operands as zeros of their sign and flushes subnormal results to zero, while moving
data (copies, transposes, bit casts, ``abs``/``neg``) keeps them. The setting is scoped to cranax's own
execution: NumPy on the same thread still computes with subnormals afterwards.

Expected values were recorded from JAX 0.10.2 on x86-64 (``jax.jit`` of the same functions)."""
import threading

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax
from cranax.config import config

f32 = np.float32
SUB = np.array([1e-39, -1e-39, 3e-39], f32)  # subnormal in float32 (< 1.1754944e-38)


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _jit(f, *args):
    return np.asarray(cranax.jit(f)(*args))


def test_results_flushed_to_zero():
    # JAX: jit(lambda x: x * 1.5)([1e-39, -1e-39, 1e-30]) -> [0.0, -0.0, 1.5e-30]
    _same(_jit(lambda x: x * f32(1.5), np.array([1e-39, -1e-39, 1e-30], f32)), [0.0, -0.0, f32(1e-30) * f32(1.5)])
    # JAX: jit(lambda x: x * 1e-10)([1e-30]) -> [0.0]; exp(-100) -> 0.0; x / 2 of 2e-38 -> 0.0
    _same(_jit(lambda x: x * f32(1e-10), np.array([1e-30], f32)), [0.0])
    _same(_jit(jnp.exp, np.array([-100.0], f32)), [0.0])
    _same(_jit(lambda x: x / f32(2), np.array([2e-38], f32)), [0.0])
    # JAX: sum([1e-40, 1e-40]) -> 0.0
    _same(_jit(jnp.sum, np.array([1e-40, 1e-40], f32)), f32(0.0))


def test_operands_read_as_zero():
    # JAX: x == 0 -> [True, True] for [1e-39, -1e-39]; x > 0 -> False; 1 / 1e-40 -> inf; rsqrt(1e-40) -> inf;
    # sqrt([1e-40, -1e-40]) -> [0.0, -0.0]; log(1e-40) -> -inf; sign(±1e-38) -> [0.0, -0.0]
    _same(_jit(lambda x: x == 0, np.array([1e-39, -1e-39, 1e-37], f32)), [True, True, False])
    _same(_jit(lambda x: x > 0, SUB[:1]), [False])
    _same(_jit(lambda x: f32(1) / x, np.array([1e-40], f32)), [np.inf])
    _same(_jit(lax.rsqrt, np.array([1e-40], f32)), [np.inf])
    _same(_jit(jnp.sqrt, np.array([1e-40, -1e-40], f32)), [0.0, -0.0])
    _same(_jit(jnp.log, np.array([1e-40], f32)), [-np.inf])
    _same(_jit(jnp.sign, np.array([1e-38, -1e-38], f32)), [0.0, -0.0])
    # JAX: maximum([1e-40, -1e-40], 0) -> [0.0, 0.0]; floor -> [0.0, -0.0]
    _same(_jit(lambda x: jnp.maximum(x, f32(0)), np.array([1e-40, -1e-40], f32)), [0.0, 0.0])
    _same(_jit(jnp.floor, np.array([1e-40, -1e-40], f32)), [0.0, -0.0])


def test_conversions_flush():
    config.update("jax_enable_x64", True)
    try:
        # JAX (x64): float64 1e-40 -> float32 0.0; float32 1e-40 -> float64 0.0
        _same(_jit(lambda x: x.astype(jnp.float32), np.array([1e-40, 0.1])), [0.0, f32(0.1)])
        _same(_jit(lambda x: x.astype(jnp.float64), np.array([1e-40], f32)), [0.0])
        # float64 subnormals flush too: JAX gives 0.0 for 1e-310 * 1.5
        _same(_jit(lambda x: x * 1.5, np.array([1e-310])), [0.0])
    finally:
        config.update("jax_enable_x64", False)


def test_bool_of_a_subnormal_is_false_for_arrays_true_for_scalars():
    # JAX 0.10.2: an array converts on the device (denormals-are-zero: a subnormal is zero), a NumPy scalar on
    # the host; complex by its real part
    x = np.array([1e-40, -1e-40, 1.5e-45, 0.0, -0.0, np.nan, np.inf, 2.0], f32)
    want = [False, False, False, False, False, True, True, True]
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(x, jnp.bool_)), want)
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(jnp.asarray(x), jnp.bool_)), want)
    np.testing.assert_array_equal(np.asarray(_jit(lambda v: lax.convert_element_type(jnp.abs(v), jnp.bool_), x)),
                                  want)
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(x.astype(np.complex64) * 1j, jnp.bool_)),
                                  [False, False, False, False, False, True, True, False])
    assert bool(lax.convert_element_type(np.float32(1e-40), jnp.bool_)) is True


def test_data_movement_keeps_subnormals():
    # JAX: identity, abs, neg, transpose and bitcast keep the bits of a subnormal.
    _same(_jit(lambda x: x, SUB), SUB)
    _same(_jit(jnp.abs, -SUB), np.abs(SUB))
    _same(_jit(lambda x: -x, SUB), -SUB)
    m = np.array([[1e-40, 2.0], [3.0, -1e-41]], f32)
    _same(_jit(lambda x: x.T, m), m.T)
    _same(_jit(lambda x: lax.bitcast_convert_type(x, jnp.int32), SUB), SUB.view(np.int32))
    _same(np.asarray(jnp.asarray(SUB)), SUB)


def test_float16_subnormals_kept():
    # float16 arithmetic runs in float32, where float16's subnormals are normal. JAX: 1e-7 * 2 -> 2.384e-07
    x = np.array([1e-7, -6e-8], np.float16)
    _same(_jit(lambda v: v * np.float16(2), x), x * np.float16(2))


def test_eager_large_and_loops_flush():
    # eager dispatch, a large array split across the pool's threads, and a while_loop body all flush
    _same(np.asarray(jnp.asarray(SUB) * f32(1.5)), [0.0, -0.0, 0.0])
    big = np.full(300_000, 1e-39, f32)
    out = _jit(lambda x: x * f32(1.5), big)
    assert not out.any()
    assert float(_jit(lambda x: jnp.sum(x * f32(2)), big)) == 0.0

    def body(c):
        i, v = c
        return i + 1, v * f32(0.5)

    _, v = cranax.jit(lambda v: lax.while_loop(lambda c: c[0] < 3, body, (0, v)))(np.array([1e-37], f32))
    # 1e-37 * 0.125 = 1.25e-38 is normal; one more halving would not be. JAX: [1.25e-38]
    _same(np.asarray(v), [f32(1e-37) * f32(0.125)])
    _, v = cranax.jit(lambda v: lax.while_loop(lambda c: c[0] < 4, body, (0, v)))(np.array([1e-37], f32))
    _same(np.asarray(v), [0.0])


def test_numpy_on_the_same_thread_keeps_subnormals():
    tiny = np.array([1e-39], f32)
    before = tiny * f32(1.5)
    assert before[0] != 0
    _jit(lambda x: x * f32(1.5), tiny)
    np.asarray(jnp.asarray(tiny) * f32(2))
    after = tiny * f32(1.5)
    _same(after, before)
    assert np.float64(1e-310) * 1.5 != 0.0

    # and on another thread that called cranax
    seen = []

    def other():
        _jit(lambda x: x * f32(3), tiny)
        seen.append(float((tiny * f32(1.5))[0]))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [float(before[0])]


def test_errors_restore_the_callers_mode():
    # A failing call (bad input) leaves the caller's float mode as it was.
    f = cranax.jit(lambda x: x * f32(1.5))
    f(np.ones(3, f32))
    with pytest.raises(Exception):
        f(np.ones((2, 2), np.int8).astype(object))
    assert (np.array([1e-39], f32) * f32(1.5))[0] != 0
