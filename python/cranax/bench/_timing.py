"""Timing helpers shared by ``python -m cranax.bench``, ``python -m cranax.tour`` and ``benches/``.

The rules the seed documents ask for, in one place: warm up before timing, wait for asynchronous results
(``block_until_ready``) before stopping the clock, report medians, keep trace / compile / transfer / steady
state apart, and name the device and backend the figures came from. Nothing here depends on cranax's core, so
the same helpers time NumPy and (when installed) JAX in the same run.
"""
import os
import platform
import statistics
import sys
import time
import types

import numpy as np

__all__ = ["block", "timeit_once", "call_times", "median_time", "fmt_time", "fmt_ratio", "max_abs_diff", "cpu_model",
           "machine_line", "fresh_function", "Timer"]


def block(x):
    """Waits for every array in the pytree-ish ``x`` (cranax or JAX arrays; NumPy values pass through)
    and returns ``x``."""
    if isinstance(x, (tuple, list)):
        for v in x:
            block(v)
        return x
    if isinstance(x, dict):
        for v in x.values():
            block(v)
        return x
    b = getattr(x, "block_until_ready", None)
    if b is not None:
        b()
    return x


def timeit_once(fn):
    """(seconds, result) of one call of ``fn``, waiting for its result."""
    t0 = time.perf_counter()
    r = block(fn())
    return time.perf_counter() - t0, r


def call_times(fn, runs, warmup=2):
    """Seconds of each of ``runs`` calls of ``fn`` (which must itself wait for its result), after ``warmup``
    untimed calls: for benchmarks that report the median and the minimum of a fixed number of calls."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return ts


def median_time(fn, n=None, inner=None, warmup=2, budget=0.5, min_n=5, max_n=51):
    """Median seconds per call of ``fn`` (which must itself wait for its result).

    ``warmup`` untimed calls first. When ``inner`` (calls per sample) is not given it is chosen so that a
    sample lasts at least ~1 ms, so microsecond-scale calls are not swamped by timer resolution. When ``n``
    (number of samples) is not given it is chosen to fit ``budget`` seconds, between ``min_n`` and ``max_n``.
    """
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-9)
    if inner is None:
        inner = max(1, min(1000, int(1e-3 / one)))
    if n is None:
        n = int(budget / (one * inner))
        n = max(min_n, min(max_n, n))
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t) / inner)
    return statistics.median(ts)


def fmt_time(s, width=0):
    """``s`` seconds as a short human string (ns/µs/ms/s); ``None`` gives ``-``."""
    if s is None:
        out = "-"
    elif s != s:  # nan
        out = "n/a"
    elif s < 1e-6:
        out = f"{s * 1e9:.0f} ns"
    elif s < 1e-3:
        out = f"{s * 1e6:.1f} µs"
    elif s < 1:
        out = f"{s * 1e3:.2f} ms"
    else:
        out = f"{s:.2f} s"
    return out.rjust(width) if width else out


def fmt_ratio(a, b):
    """``a / b`` as ``1.23x``; ``-`` when either is missing."""
    if a is None or b is None or b == 0 or a != a or b != b:
        return "-"
    r = a / b
    return f"{r:.3g}x"


def max_abs_diff(a, b):
    """Largest absolute elementwise difference of two arrays (as float64); nan-aware: positions where both
    are nan count as equal, nan against a number counts as inf."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        try:
            a, b = np.broadcast_arrays(a, b)
        except ValueError:
            return float("inf")
    if a.size == 0:
        return 0.0
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b)
    d = np.where(both_nan, 0.0, d)
    d = np.where(np.isnan(d), np.inf, d)
    same_inf = np.isinf(a) & (a == b)
    d = np.where(same_inf, 0.0, d)
    return float(d.max())


def cpu_model():
    """The CPU model name from /proc/cpuinfo (or ``platform.processor()``), and the number of CPUs this
    process may use."""
    name = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if not name:
        name = platform.processor() or platform.machine() or "unknown CPU"
    try:
        ncpu = len(os.sched_getaffinity(0))
    except AttributeError:
        ncpu = os.cpu_count() or 1
    return name, ncpu


def machine_line():
    """One line naming the host: CPU model, CPU count, OS, Python and NumPy versions."""
    name, ncpu = cpu_model()
    return (f"{name}, {ncpu} CPU{'s' if ncpu != 1 else ''}, {platform.system()} {platform.machine()}, "
            f"Python {sys.version.split()[0]}, NumPy {np.__version__}")


def fresh_function(f):
    """A new function object with ``f``'s code, globals, defaults and closure: jit caches keyed on the
    function object miss for it, so its first call traces and compiles from scratch."""
    g = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f.__qualname__
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


class Timer:
    """``with Timer() as t: ...`` then ``t.s`` is the elapsed seconds."""

    def __enter__(self):
        self.t0 = time.perf_counter()
        self.s = None
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0
        return False
