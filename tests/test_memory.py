"""Memory: long runs of jitted calls and eager ops keep the resident set flat, and a bounded executable cache
(``jax_compilation_cache_max_size``) evicts and frees compiled machine code.

RSS is read from ``/proc/self/statm`` after a warm-up, so one-time costs (imports, the first compilations,
the buffer pool, allocator arenas) are excluded; the bounds are far below what one leaked buffer or one leaked
executable per call would add up to. ``CRANAX_MEMORY_REPORT=1`` prints the figures.
"""
import gc
import os
import sys

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import _core

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MiB = 1 << 20


def rss():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def report(name, **figures):
    if os.environ.get("CRANAX_MEMORY_REPORT"):
        sizes = {"before", "after", "growth", "base", "full", "kept", "after_clear", "freed"}
        parts = ", ".join(f"{k}={v / MiB:.2f} MiB" if k in sizes else f"{k}={v}" for k, v in figures.items())
        print(f"\n[memory] {name}: {parts}", file=sys.stderr)


N_CALLS = int(os.environ.get("CRANAX_MEMORY_CALLS", "100000"))


def _body_jitted_calls_keep_rss_flat():
    f = cranax.jit(lambda x, y: jnp.sin(x) * y + 1.0)
    x = jnp.arange(64, dtype=jnp.float32)
    y = jnp.ones(64, dtype=jnp.float32)
    for _ in range(3000):
        out = f(x, y)
    out.block_until_ready()
    before = rss()
    for i in range(N_CALLS):
        out = f(x, y)
        if i % 1000 == 0:
            out.block_until_ready()
    out.block_until_ready()
    after = rss()
    report("jitted calls", calls=N_CALLS, before=before, after=after, growth=after - before)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(64, dtype=np.float32)) + 1, rtol=1e-5,
                               atol=1e-6)
    # One leaked 256-byte buffer per call would be 25 MiB.
    assert after - before < 4 * MiB, f"RSS grew {(after - before) / MiB:.1f} MiB over {N_CALLS} jitted calls"


def _body_eager_ops_keep_rss_flat():
    x = jnp.arange(32, dtype=jnp.float32)
    one = jnp.float32(1.0)
    for _ in range(2000):
        y = (x + one) * 2.0
    y.block_until_ready()
    n = N_CALLS // 2  # two ops per iteration
    before = rss()
    for i in range(n):
        y = (x + one) * 2.0
    y.block_until_ready()
    after = rss()
    report("eager ops", ops=2 * n, before=before, after=after, growth=after - before)
    np.testing.assert_array_equal(np.asarray(y), (np.arange(32, dtype=np.float32) + 1) * 2)
    assert after - before < 4 * MiB, f"RSS grew {(after - before) / MiB:.1f} MiB over {2 * n} eager ops"


def _body_large_buffers_are_recycled_not_leaked():
    f = cranax.jit(lambda x: x * 2.0 + 1.0)
    x = jnp.ones(1 << 18, dtype=jnp.float32)  # 1 MiB
    for _ in range(50):
        f(x).block_until_ready()
    before = rss()
    for _ in range(2000):
        out = f(x)
    out.block_until_ready()
    after = rss()
    report("1 MiB buffers", calls=2000, before=before, after=after, growth=after - before)
    assert after - before < 32 * MiB, f"RSS grew {(after - before) / MiB:.1f} MiB over 2000 1-MiB results"


def _program(k):
    """A distinct program per k (the literal differs, so the canonical key and the machine code differ)."""
    return ('{"version":1,"name":"p","invars":[[0,"f32",[16]]],"eqns":['
            '{"prim":"mul","params":{},"in":[0,{"lit":%d.5,"dtype":"f32"}],"out":[[1,"f32",[16]]]},'
            '{"prim":"max","params":{},"in":[1,0],"out":[[2,"f32",[16]]]},'
            '{"prim":"add","params":{},"in":[2,{"lit":%d,"dtype":"f32"}],"out":[[3,"f32",[16]]]}],'
            '"outvars":[3]}' % (k, k))


def _compile_many(start, n):
    arg = _core.DeviceArray.from_numpy(np.ones(16, np.float32))
    for k in range(start, start + n):
        exe = _core.compile(_program(k))
        exe.execute([arg])[0].block_until_ready()
    del exe


def bounded_cache():
    cranax.config.update("jax_compilation_cache_max_size", 8)


def _body_config_bounds_the_core_cache():
    bounded_cache()
    assert _core.cache_max_size() == 8
    _compile_many(10_000_000, 40)
    assert _core.executable_cache_size() <= 8


def _body_bounded_cache_evicts_and_frees_machine_code():
    bounded_cache()
    n = int(os.environ.get("CRANAX_MEMORY_PROGRAMS", "800"))
    _compile_many(0, 100)  # warm-up: allocator arenas, Cranelift's own one-time state
    count0 = _core.compile_count()
    before = rss()
    _compile_many(1_000_000, n)
    after = rss()
    assert _core.compile_count() - count0 == n, "each distinct program compiles once"
    assert _core.executable_cache_size() <= 8
    report("bounded cache (8)", programs=n, before=before, after=after, growth=after - before,
           per_program_bytes=(after - before) // n)
    # Kept, each executable costs tens of KiB (machine code pages, plan, text: see the unbounded test below),
    # so 800 leaked ones would be well over 16 MiB.
    assert after - before < 6 * MiB, f"RSS grew {(after - before) / MiB:.1f} MiB over {n} evicted executables"


def _body_unbounded_cache_grows_then_clear_caches_frees():
    """The counterpart of the test above: kept executables cost memory, and clear_caches gives it back."""
    n = int(os.environ.get("CRANAX_MEMORY_PROGRAMS", "800"))
    old = cranax.config.jax_compilation_cache_max_size
    cranax.config.update("jax_compilation_cache_max_size", 1_000_000)
    try:
        _compile_many(2_000_000, 100)
        cranax.clear_caches()
        base = rss()
        _compile_many(3_000_000, n)
        full = rss()
        assert _core.executable_cache_size() >= n
        cranax.clear_caches()
        assert _core.executable_cache_size() == 0
        cleared = rss()
    finally:
        cranax.config.update("jax_compilation_cache_max_size", old)
    report("unbounded cache", programs=n, base=base, full=full, kept=full - base, after_clear=cleared,
           freed=full - cleared, per_program_bytes=(full - base) // n)
    assert full - base > 0
    # What the cache held goes back to the OS (clear_caches trims the allocator's free memory).
    assert cleared - base < max((full - base) // 4, 4 * MiB), (base, full, cleared)


def _body_eager_op_cache_follows_the_bound():
    bounded_cache()
    """Eager ops on many distinct shapes do not pin one executable per shape forever."""
    from cranax.interpreters import dispatch
    for n in range(1, 200):
        (jnp.ones(n) * 3.0).block_until_ready()
    assert len(dispatch._cache) <= 8 + 2
    assert _core.executable_cache_size() <= 8


def _body_many_distinct_jitted_lambdas_are_freed():
    bounded_cache()
    """The seed's "jit a new lambda in a loop" pattern with distinct programs: the wrappers die with their
    functions, and their executables are evicted."""
    x = jnp.ones(8)
    for k in range(100):
        cranax.jit(lambda v, k=k: v * k + 1.0)(x).block_until_ready()
    before = rss()
    for k in range(100, 900):
        cranax.jit(lambda v, k=k: v * k + 1.0)(x).block_until_ready()
    after = rss()
    report("800 jitted lambdas", before=before, after=after, growth=after - before)
    assert after - before < 8 * MiB


# Each measurement runs in a fresh interpreter: RSS in a process that already ran hundreds of other tests
# (fragmented heap, other tests' threads and pools) says little about this code's growth.

def _run(body):
    import subprocess
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__)] + sys.path)
    r = subprocess.run([sys.executable, os.path.abspath(__file__), body], capture_output=True, text=True,
                       env=env, timeout=900)
    if r.stderr and os.environ.get("CRANAX_MEMORY_REPORT"):
        print(r.stderr, file=sys.stderr)
    assert r.returncode == 0, f"{body} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def test_jitted_calls_keep_rss_flat():
    _run("_body_jitted_calls_keep_rss_flat")


def test_eager_ops_keep_rss_flat():
    _run("_body_eager_ops_keep_rss_flat")


def test_large_buffers_are_recycled_not_leaked():
    _run("_body_large_buffers_are_recycled_not_leaked")


def test_config_bounds_the_core_cache():
    _run("_body_config_bounds_the_core_cache")


def test_bounded_cache_evicts_and_frees_machine_code():
    _run("_body_bounded_cache_evicts_and_frees_machine_code")


def test_unbounded_cache_grows_then_clear_caches_frees():
    _run("_body_unbounded_cache_grows_then_clear_caches_frees")


def test_eager_op_cache_follows_the_bound():
    _run("_body_eager_op_cache_follows_the_bound")


def test_many_distinct_jitted_lambdas_are_freed():
    _run("_body_many_distinct_jitted_lambdas_are_freed")


if __name__ == "__main__":
    globals()[sys.argv[1]]()


def test_kernel_with_a_4gib_intermediate_runs_in_constant_memory():
    # sum(tanh(x[:, None] * y[None, :]), axis=1) over 32768 x 32768: the broadcast product and its tanh
    # (4 GiB of float32 if materialized) live only inside one fused reduction kernel.
    n = 32768
    x = jnp.asarray(np.linspace(-1, 1, n, dtype=np.float32))
    y = jnp.asarray(np.linspace(0, 2, n, dtype=np.float32))
    f = cranax.jit(lambda x, y: jnp.sum(jnp.tanh(x[:, None] * y[None, :]), axis=1))
    before = rss()
    r = np.asarray(f(x, y))
    growth = rss() - before
    report("4 GiB intermediate", before=before, growth=growth)
    assert growth < 64 * MiB, f"RSS grew by {growth / MiB:.1f} MiB"
    xn, yn = np.asarray(x, np.float64), np.asarray(y, np.float64)
    rows = list(range(0, n, 4093)) + [n - 1]
    want = np.array([np.tanh(xn[i] * yn).sum() for i in rows])
    np.testing.assert_allclose(r[rows], want, rtol=1e-4, atol=1e-2)
