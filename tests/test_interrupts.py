"""Interrupts and faults in the runtime: Ctrl-C during a long wait raises KeyboardInterrupt promptly and leaves
the runtime usable; an error in one queued computation fails only the arrays that depend on it."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import _core
from cranax.array import Array
from cranax.core import ShapedArray

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")


@pytest.fixture(autouse=True)
def _python_sigint_handler():
    """Python's KeyboardInterrupt handler for SIGINT even when the suite was started with SIGINT ignored
    (a non-interactive shell's background job, `nohup ... &`): what is tested is cranax's wait, not the shell."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _sigint_after(delay):
    """Sends SIGINT to this (main) thread after ``delay`` seconds, from a helper thread."""
    main = threading.main_thread().ident

    def fire():
        time.sleep(delay)
        signal.pthread_kill(main, signal.SIGINT)
    t = threading.Thread(target=fire, daemon=True)
    t.start()
    return t


def _pending_array():
    """An f32[1000] computation queued behind a busy stream (so it stays pending for a while)."""
    x = jnp.arange(1000, dtype=jnp.float32)
    x.block_until_ready()
    _core._stream_sleep(2500)
    y = cranax.jit(lambda v: v * 2.0 + 1.0)(x)
    assert not y.is_ready()
    return y


def _wait_idle():
    cranax.devices()[0].synchronize()


@pytest.mark.parametrize("wait", ["block_until_ready", "np.asarray", "tree_block", "synchronize"])
def test_ctrl_c_interrupts_a_long_wait_promptly(wait):
    y = _pending_array()
    t = _sigint_after(0.2)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        if wait == "block_until_ready":
            y.block_until_ready()
        elif wait == "np.asarray":
            np.asarray(y)
        elif wait == "tree_block":
            cranax.block_until_ready({"a": [y]})
        else:
            cranax.devices()[0].synchronize()
    elapsed = time.monotonic() - start
    t.join()
    assert elapsed < 1.5, f"KeyboardInterrupt took {elapsed:.2f}s (the stream was busy for 2.5 s)"
    # The runtime is still usable: the interrupted computation finishes with the right value, and new work runs.
    np.testing.assert_allclose(np.asarray(y), np.arange(1000, dtype=np.float32) * 2 + 1)
    z = cranax.jit(lambda v: v - 1.0)(y)
    np.testing.assert_allclose(np.asarray(z), np.arange(1000, dtype=np.float32) * 2)
    np.testing.assert_array_equal(np.asarray(jnp.ones(3) + 1), [2, 2, 2])


def test_wait_without_interrupt_still_returns_the_value():
    y = _pending_array()
    np.testing.assert_allclose(np.asarray(y), np.arange(1000, dtype=np.float32) * 2 + 1)


def _wrap(buf):
    return Array._from_buffer(buf, ShapedArray((), np.dtype(np.float32)))


@pytest.mark.parametrize("panic", [False, True])
def test_queued_failure_fails_only_its_dependents(panic):
    _wait_idle()
    bad = _wrap(_core._queued_failure("injected fault", panic, 100))
    # queued after the failing job: an independent computation and two dependents
    ok_in = jnp.arange(5, dtype=jnp.float32)
    independent = cranax.jit(lambda v: v + 1.0)(ok_in)
    dependent = cranax.jit(lambda a, v: a + v)(bad, ok_in)
    dependent2 = cranax.jit(lambda d: d * 3.0)(dependent)
    eager_dependent = bad * 2.0
    for arr in (bad, dependent, dependent2, eager_dependent):
        with pytest.raises(RuntimeError, match="injected fault"):
            arr.block_until_ready()
        with pytest.raises(RuntimeError, match="injected fault"):
            np.asarray(arr)
    np.testing.assert_array_equal(np.asarray(independent), [1, 2, 3, 4, 5])
    # the error does not poison later work, the stream or the caches
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda v: v + 1.0)(ok_in)), [1, 2, 3, 4, 5])
    _wait_idle()
    assert float(jnp.float32(1.0) + 1.0) == 2.0


def test_many_queued_failures_and_successes_interleaved():
    _wait_idle()
    f = cranax.jit(lambda a, v: a + v)
    v = jnp.ones(4, dtype=jnp.float32)
    outs = []
    for i in range(50):
        if i % 3 == 0:
            outs.append(("bad", f(_wrap(_core._queued_failure(f"fault {i}")), v)))
        else:
            outs.append(("ok", f(jnp.float32(i), v)))
    for i, (kind, o) in enumerate(outs):
        if kind == "bad":
            with pytest.raises(RuntimeError, match=f"fault {i}"):
                o.block_until_ready()
        else:
            np.testing.assert_array_equal(np.asarray(o), np.full(4, i + 1, np.float32))


def test_ctrl_c_while_another_thread_waits_too():
    """The interrupt reaches the main thread; a second thread's wait on the same array completes."""
    y = _pending_array()
    got = {}

    def other():
        got["v"] = np.asarray(y)
    th = threading.Thread(target=other)
    th.start()
    t = _sigint_after(0.2)
    with pytest.raises(KeyboardInterrupt):
        y.block_until_ready()
    t.join()
    th.join(timeout=10)
    assert not th.is_alive()
    np.testing.assert_allclose(got["v"], np.arange(1000, dtype=np.float32) * 2 + 1)


def test_subprocess_sigint_exits_cleanly(tmp_path):
    """A process interrupted during a wait exits through KeyboardInterrupt (status 130-ish), no abort."""
    import subprocess
    import sys
    script = tmp_path / "s.py"
    script.write_text(
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import cranax, cranax.numpy as jnp\n"
        "from cranax import _core\n"
        "x = jnp.ones(1000)\n"
        "_core._stream_sleep(5000)\n"
        "y = cranax.jit(lambda v: v * 2)(x)\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    y.block_until_ready()\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    raise SystemExit(3)\n")
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert "interrupted" in out
    assert p.returncode == 3
    assert time.monotonic() - start < 4.5, "exit waited for the whole 5 s stream job"
