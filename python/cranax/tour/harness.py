"""The tour's infrastructure: the ``Tour`` that sections print and time through, and its ``Row`` of figures."""
import functools
import sys
import time

import numpy as np

import cranax
from ..bench import _timing as bu

__all__ = ["Tour", "Row", "describe_device"]


class Row:
    """One line of figures (seconds; ``None`` where a figure does not apply)."""

    __slots__ = ("name", "trace", "compile", "first", "steady", "transfer", "numpy", "diff", "note")

    def __init__(self, name, trace=None, compile=None, first=None, steady=None, transfer=None, numpy=None,
                 diff=None, note=""):
        self.name = name
        self.trace = trace
        self.compile = compile
        self.first = first
        self.steady = steady
        self.transfer = transfer
        self.numpy = numpy
        self.diff = diff
        self.note = note


_COLS = [("example", 34), ("trace", 10), ("compile", 10), ("first call", 10), ("steady", 10),
         ("transfer", 10), ("numpy", 10), ("max|Δ|", 9)]


def _header_line():
    return "  ".join(n.ljust(w) if i == 0 else n.rjust(w) for i, (n, w) in enumerate(_COLS)) + "  notes"


def _row_line(r):
    diff = "-" if r.diff is None else (f"{r.diff:.1e}" if r.diff else "0")
    cells = [r.name[:_COLS[0][1]].ljust(_COLS[0][1])]
    for v, (_, w) in zip([r.trace, r.compile, r.first, r.steady, r.transfer, r.numpy], _COLS[1:7]):
        cells.append(bu.fmt_time(v, w))
    cells.append(diff.rjust(_COLS[7][1]))
    return "  ".join(cells) + ("  " + r.note if r.note else "")


def _compile_count():
    cc = getattr(cranax._core, "compile_count", None)
    return cc() if cc is not None else None


def _clear_exe_cache():
    """Empties the core's second-level (structural) executable cache, so the next compile is real."""
    f = getattr(cranax._core, "clear_caches", None)
    if f is not None:
        f()


class Tour:
    """What sections share: the inputs' source, the timing budget, the rows printed so far."""

    def __init__(self, quick=False, out=None):
        self.quick = quick
        self.out = out or sys.stdout
        self.rows = []
        self.rng = np.random.default_rng(0)
        self.has_random = hasattr(cranax, "random") and hasattr(getattr(cranax, "random"), "normal")

    # -- printing
    def say(self, *a):
        print(*a, file=self.out, flush=True)

    def title(self, t):
        self.say()
        self.say(f"== {t} " + "=" * max(0, 100 - len(t)))

    def add(self, row):
        self.rows.append(row)
        self.say(_header_line())
        self.say(_row_line(row))
        return row

    # -- timing
    @property
    def budget(self):
        return 0.1 if self.quick else 0.5

    def median(self, fn, **kw):
        kw.setdefault("budget", self.budget)
        if self.quick:
            kw.setdefault("min_n", 3)
            kw.setdefault("warmup", 1)
        return bu.median_time(fn, **kw)

    # -- inputs
    def normal(self, shape, dtype=np.float32):
        """A NumPy array of standard normal samples (the host copy of the example's input)."""
        return self.rng.standard_normal(shape).astype(dtype)

    def put(self, *host):
        """(device arrays, median host→device transfer seconds) for NumPy inputs ``host``."""
        devs = tuple(cranax.device_put(h) for h in host)
        bu.block(devs)
        t = self.median(lambda: bu.block(tuple(cranax.device_put(h) for h in host)))
        return devs, t

    # -- the standard row for a jitted example
    def measure_jit(self, name, f, args, host_args=None, np_fn=None, static=None, transfer=None, note="",
                    steady=True):
        """Trace, compile, first-call, steady-state, NumPy and difference figures for ``jit(f)(*args)``.

        ``static`` holds keyword arguments passed as ``static_argnames``. ``host_args`` are the NumPy
        inputs for ``np_fn``. Returns (row, result of the jitted call)."""
        static = dict(static or {})
        jit_kw = {"static_argnames": list(static)} if static else {}

        # trace only
        def trace_once():
            g = bu.fresh_function(f)
            fun = functools.partial(g, **static) if static else g
            return cranax.make_jaxpr(fun)(*args)
        ts = []
        for _ in range(3):
            t, _ = bu.timeit_once(trace_once)
            ts.append(t)
        t_trace = sorted(ts)[1]

        # compile only (lower traces; compile lowers the jaxpr to the core's IR and compiles it)
        lowered = cranax.jit(bu.fresh_function(f), **jit_kw).lower(*args, **static)
        _clear_exe_cache()
        c0 = _compile_count()
        t0 = time.perf_counter()
        lowered.compile()
        t_compile = time.perf_counter() - t0
        c1 = _compile_count()
        notes = [note] if note else []
        if c0 is not None and c1 == c0:
            notes.append("compile hit a cache")

        # first call: fresh function object, fresh jit, empty executable cache
        _clear_exe_cache()
        g = cranax.jit(bu.fresh_function(f), **jit_kw)
        t_first, out = bu.timeit_once(lambda: g(*args, **static))

        t_steady = self.median(lambda: g(*args, **static).block_until_ready()) if steady else None

        t_np = diff = None
        if np_fn is not None:
            hargs = host_args if host_args is not None else tuple(np.asarray(a) for a in args)
            expect = np_fn(*hargs, **static)
            diff = bu.max_abs_diff(out, expect)
            t_np = self.median(lambda: np_fn(*hargs, **static))
        row = Row(name, t_trace, t_compile, t_first, t_steady, transfer, t_np, diff, "; ".join(notes))
        return self.add(row), out


def _inputs_note(tour):
    src = "NumPy's np.random.default_rng(0), transferred with cranax.device_put"
    if tour.has_random:
        return (f"inputs:   {src} (the same host arrays feed NumPy, so both compute on identical values)")
    return f"inputs:   {src} (cranax.random is not available yet)"


def describe_device(tour):
    devs = cranax.devices()
    d = devs[0]
    plat = getattr(d, "platform", "?")
    kind = getattr(d, "device_kind", "?")
    desc = getattr(d, "description", "")
    backend = {"cpu": "Cranelift JIT (native CPU code)", "gpu": "wgpu (WGSL compute)"}.get(plat, plat)
    cpu, ncpu = bu.cpu_model()
    tour.say(f"cranax {getattr(cranax, '__version__', '?')} — the seed examples, timed")
    tour.say(f"devices:  {devs}")
    tour.say(f"platform: {plat}; device kind: {kind}{'; ' + desc if desc else ''}; backend: {backend}")
    tour.say(f"host:     {bu.machine_line()}")
    tour.say(_inputs_note(tour))
    tour.say("timing:   warm-up, then medians of repeated calls, each waited for with block_until_ready(); "
             "trace / compile / first call / transfer measured separately")
