"""Thread safety: many Python threads mixing eager ops, jitted calls, compilation of new signatures and
``clear_caches()`` finish with right results and no deadlock (every test has a wall-clock bound)."""
import random
import threading
import time

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import _core, lax

N_THREADS = 16
TIMEOUT_S = 240


def _run_threads(target, n=N_THREADS, timeout=TIMEOUT_S):
    errors = []
    done = []

    def wrap(i):
        try:
            target(i)
            done.append(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            import traceback
            errors.append((i, e, traceback.format_exc()))

    threads = [threading.Thread(target=wrap, args=(i,), daemon=True, name=f"stress-{i}") for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in threads if t.is_alive()]
    assert not alive, f"deadlock or livelock: threads {alive} still running after {timeout} s"
    assert not errors, "\n".join(f"thread {i}: {tb}" for i, _, tb in errors[:3])
    assert len(done) == n


shared = cranax.jit(lambda x, y: jnp.tanh(x) * y + jnp.sum(x))
shared_static = cranax.jit(lambda x, n: lax.integer_pow(x, n) + n, static_argnums=1)


def _check(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


def test_stress_mixed_eager_jit_compile_and_clear_caches():
    iters = 60
    clears = []

    def work(i):
        rng = random.Random(i)
        for k in range(iters):
            n = rng.choice([1, 3, 7, 64, 1000, 20000])
            xn = np.linspace(-1, 1, n, dtype=np.float32) + np.float32(i)
            yn = np.full(n, np.float32(k % 5), np.float32)
            x, y = jnp.asarray(xn), jnp.asarray(yn)
            op = rng.randrange(6)
            if op == 0:  # eager ops
                _check((x + 1.0) * y - x, (xn + 1) * yn - xn)
            elif op == 1:  # a shared jitted function, several signatures
                _check(shared(x, y), np.tanh(xn) * yn + np.sum(xn, dtype=np.float32), rtol=1e-4, atol=1e-2)
            elif op == 2:  # a brand-new program: new lambda with a distinct literal → trace + compile
                c = float(i * 1000 + k)
                f = cranax.jit(lambda v, c=c: v * 2.0 + c)
                _check(f(x), xn * 2 + np.float32(c), rtol=1e-6, atol=1e-3)
            elif op == 3:  # static arguments: new values compile new signatures
                p = rng.choice([1, 2, 3])
                _check(shared_static(x, p), xn.astype(np.float64) ** p + p, rtol=1e-4, atol=1e-4)
            elif op == 4 and rng.random() < 0.3:  # clear every cache while others run
                cranax.clear_caches()
                clears.append(i)
            else:  # integer work and reductions, eager and jitted
                ai = jnp.arange(n, dtype=jnp.int32)
                _check(jnp.sum(ai % 7), np.sum(np.arange(n) % 7), rtol=0, atol=0)
                _check(cranax.jit(lambda a: jnp.max(a * 3 - 1))(ai), 3 * (n - 1) - 1, rtol=0, atol=0)

    _run_threads(work)
    assert clears, "the stress test should clear the caches at least once"
    # still fully usable
    _check(shared(jnp.ones(4), jnp.ones(4)), np.tanh(np.ones(4)) + 4)


def test_one_signature_compiles_once_under_racing_threads():
    f = cranax.jit(lambda x: x * 5.0 + 0.25)
    barrier = threading.Barrier(N_THREADS)
    x = jnp.arange(777, dtype=jnp.float32)   # before the count: arange is itself a compiled iota program
    before = _core.compile_count()

    def work(i):
        barrier.wait()
        for _ in range(50):
            _check(f(x), np.arange(777, dtype=np.float32) * 5 + 0.25)

    _run_threads(work)
    assert f._cache_size() == 1
    assert _core.compile_count() - before <= 1


def test_clear_caches_hammered_while_compiling():
    stop = threading.Event()

    def clearer():
        while not stop.is_set():
            cranax.clear_caches()
            time.sleep(0.001)

    t = threading.Thread(target=clearer, daemon=True)
    t.start()
    try:
        def work(i):
            for k in range(40):
                f = cranax.jit(lambda v: jnp.cos(v) + k)
                x = jnp.full((k + 1,), float(i), dtype=jnp.float32)
                _check(f(x), np.cos(np.full(k + 1, i, np.float32)) + k)
                _check(jnp.exp(x) - 1.0, np.expm1(np.full(k + 1, i, np.float32)), rtol=1e-4)
        _run_threads(work)
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()


def test_threads_share_pending_arrays():
    """Arrays produced on one thread (possibly still pending) are consumed by others."""
    x = jnp.arange(50_000, dtype=jnp.float32)
    big = cranax.jit(lambda v: jnp.sin(v) * 2.0)
    pend = [big(x + float(k)) for k in range(8)]
    want = [np.sin(np.arange(50_000, dtype=np.float32) + k) * 2 for k in range(8)]

    def work(i):
        k = i % 8
        out = cranax.jit(lambda v: v + 1.0)(pend[k])
        _check(out, want[k] + 1, rtol=1e-5, atol=1e-5)

    _run_threads(work)


def test_small_bounded_cache_under_threads():
    old = cranax.config.jax_compilation_cache_max_size
    cranax.config.update("jax_compilation_cache_max_size", 4)
    try:
        def work(i):
            for k in range(30):
                c = float((i * 31 + k) % 40)
                f = cranax.jit(lambda v, c=c: v * c)
                _check(f(jnp.ones(5)), np.full(5, c))
                _check(jnp.ones(k % 9 + 1) * c, np.full(k % 9 + 1, c))
        _run_threads(work)
        assert _core.executable_cache_size() <= 4
    finally:
        cranax.config.update("jax_compilation_cache_max_size", old)
