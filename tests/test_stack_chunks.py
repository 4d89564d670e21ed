"""cranax._stack_chunks: CPython's freed frame-stack chunks reused instead of unmapped and mapped again (the
first call's hidden cost, issue 23; rust/py/stack_chunks.rs)."""
import os
import resource
import subprocess
import sys
import threading

import pytest

import cranax  # noqa: F401  (installs the reuse at import)
from cranax import _stack_chunks

# CPython 3.10 keeps frames in heap objects: there are no chunks to reuse (the wrapper is installed all the same)
chunked = pytest.mark.skipif(sys.version_info < (3, 11), reason="CPython < 3.11 has no frame-stack chunks")


def _deep(n):
    """A recursion n frames deep (about 100 bytes of CPython's frame stack each): it crosses a 16 KiB chunk."""
    return 0 if n == 0 else _deep(n - 1) + 1


def _oscillate(times, depth=400):
    return sum(_deep(depth) for _ in range(times))


def _faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@chunked
def test_freed_chunks_are_reused_and_values_unchanged():
    r0, _ = _stack_chunks.keep(_stack_chunks.KEEP)
    assert _oscillate(2000) == 2000 * 400
    r1, held = _stack_chunks.keep(_stack_chunks.KEEP)
    # every descent after the first finds its chunk(s) among the kept ones
    assert r1 - r0 >= 1999
    assert 1 <= held <= _stack_chunks.KEEP


@chunked
def test_reuse_off_passes_every_block_through():
    _oscillate(10)
    _, held = _stack_chunks.keep(0)
    try:
        assert held == 0                       # the kept blocks were released
        r0, _ = _stack_chunks.keep(0)
        assert _oscillate(500) == 500 * 400
        r1, held = _stack_chunks.keep(0)
        assert (r1, held) == (r0, 0)
    finally:
        _stack_chunks.keep(_stack_chunks.KEEP)


@chunked
def test_no_page_fault_per_descent_with_reuse_and_one_without():
    """The point of it: 2,000 descents across a chunk boundary fault ~2,000 pages when CPython unmaps the chunk
    each time (the reuse off), and almost none with the chunks kept."""
    _oscillate(10)
    f0 = _faults()
    _oscillate(2000)
    with_reuse = _faults() - f0
    _stack_chunks.keep(0)
    try:
        f0 = _faults()
        _oscillate(2000)
        without = _faults() - f0
    finally:
        _stack_chunks.keep(_stack_chunks.KEEP)
    assert with_reuse < 200
    assert without >= 1900


def test_threads_and_deep_recursion_keep_their_values():
    out = {}

    def work(i):
        out[i] = [_oscillate(200, depth=100 + 37 * i), _deep(3000)]

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(10000)
    try:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert out == {i: [200 * (100 + 37 * i), 3000] for i in range(6)}
        # a frame larger than one chunk (a function with 5,000 locals) gets a 64 KiB block of its own
        src = "def big():\n" + "".join(f"    v{k} = {k}\n" for k in range(5000)) + "    return v0 + v4999\n"
        ns = {}
        exec(src, ns)
        assert [ns["big"]() for _ in range(3)] == [4999] * 3
    finally:
        sys.setrecursionlimit(old)


@chunked
def test_environment_variable_leaves_cpython_alone():
    code = ("import resource, cranax\n"
            "def d(n): return 0 if n == 0 else d(n - 1) + 1\n"
            "f = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
            "[d(400) for _ in range(10)]; f0 = f(); [d(400) for _ in range(1000)]; print(f() - f0)")
    # (the child imports the cranax this process does: conftest exports PYTHONPATH for a checkout run)
    env = dict(os.environ)
    counts = {}
    for v in ("0", "1"):
        env["CRANAX_STACK_CHUNK_CACHE"] = v
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        counts[v] = int(r.stdout.split()[-1])
    assert counts["0"] >= 950 and counts["1"] < 100, counts
