"""``cranax.bench`` — measuring a jitted function the way the seed documents insist.

    >>> import cranax, cranax.numpy as jnp, numpy as np
    >>> from cranax import bench
    >>> def selu(x): return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
    >>> def selu_np(x): return 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)
    >>> x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    >>> r = bench.measure(cranax.jit(selu), x, reference=selu_np)
    >>> print(r)              # the table
    >>> r.correct, r.steady_median_s, r.to_dict()

What :func:`measure` does, in this order (each step is one of the seeds' rules):

1. **transfer** — the NumPy (host) copies of the arguments are put on the device with ``device_put`` and waited
   for; the median is the host→device figure. Every later call gets the *device* arrays, so no timed call pays
   for a transfer.
2. **trace** — ``fn.trace(*args)`` (Python tracing to a jaxpr only), with the function's caches emptied first;
   median of three.
3. **compile** — ``traced.lower().compile()`` with the executable caches emptied, so it really compiles.
4. **first call** — caches emptied, then one call waited for with ``block_until_ready``: trace + compile + run.
5. **correctness** — given a NumPy ``reference`` (a function called with the host arguments, or the expected
   value) the first call's result is compared *before any time is reported*: max absolute and relative
   difference, and ``correct`` (all within ``atol + rtol·|expected|``). A fast wrong answer is flagged, not
   ranked: ``report.correct`` is False and the table says WRONG instead of showing the steady-state time.
6. **steady state** — ``warmup`` untimed calls, then ``repeat`` samples, each of ``inner`` calls (chosen so a
   sample lasts ≥ 1 ms unless given) each waited for with ``block_until_ready``; median / min / max / mean per
   call.
7. **peak memory** — the process's peak resident set (``VmHWM``, reset before the first call through
   ``/proc/self/clear_refs`` where Linux allows it) and its rise over the resident set before the calls.
8. **where** — the device, the platform, the backend and the host machine are recorded in every report.

Works for ``cranax.jit`` functions (a plain function is jitted with ``cranax.jit``), for ``jax.jit`` functions
when JAX is installed (detected from the function, or ``backend="jax"``), and for plain NumPy functions with
``backend="numpy"`` (no trace / compile / transfer; "first call" is just the first call).
"""
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

from . import _timing as bu

__all__ = ["measure", "BenchReport", "ReportTable", "format_table", "System", "get_system", "machine_info",
           "FIELDS"]

# Field order of ``BenchReport.to_dict()`` and of the single-report table.
FIELDS = ["name", "system", "backend", "device", "platform", "size", "correct", "max_abs_diff",
          "max_rel_diff", "rtol", "atol", "trace_s", "compile_s", "transfer_s", "first_call_s",
          "steady_median_s", "steady_min_s", "steady_max_s", "steady_mean_s", "repeat", "inner", "warmup",
          "peak_rss_bytes", "peak_rss_delta_bytes", "input_bytes", "output_bytes", "flops", "gflops",
          "notes", "error"]


# ----------------------------------------------------------------------------------------------------------
# systems: what measure needs from cranax, JAX or NumPy

class System:
    """The few operations :func:`measure` needs from an array library: ``device_put``, waiting, tree
    flattening, jitting and cache clearing, and a description of where it runs."""

    name = "?"
    jits = True

    def put(self, tree):
        raise NotImplementedError

    def block(self, tree):
        for leaf in self.leaves(tree):
            b = getattr(leaf, "block_until_ready", None)
            if b is not None:
                b()
        return tree

    def leaves(self, tree):
        raise NotImplementedError

    def unflatten_like(self, tree, leaves):
        raise NotImplementedError

    def jit(self, fn):
        return fn

    def clear(self, fn):
        """Empties the caches a first call of ``fn`` would hit (trace and executable caches)."""

    def clear_executables(self):
        """Empties the compiled-executable caches only (so ``compile()`` really compiles)."""

    def device_info(self):
        return {"system": self.name, "version": "?", "device": "?", "platform": "?", "backend": "?"}


class _Cranax(System):
    name = "cranax"

    def __init__(self):
        import cranax
        self.mod = cranax

    def put(self, tree):
        return self.mod.device_put(tree)

    def leaves(self, tree):
        return self.mod.tree_util.tree_leaves(tree)

    def unflatten_like(self, tree, leaves):
        tu = self.mod.tree_util
        return tu.tree_unflatten(tu.tree_structure(tree), leaves)

    def jit(self, fn):
        from ..api import JitWrapped
        return fn if isinstance(fn, JitWrapped) else self.mod.jit(fn)

    def clear(self, fn):
        cc = getattr(fn, "clear_cache", None)
        if cc is not None:
            cc()
        self.clear_executables()

    def clear_executables(self):
        from ..api import jit_p
        jit_p._exe_cache.clear()
        f = getattr(self.mod._core, "clear_caches", None)
        if f is not None:
            f()

    def device_info(self):
        d = self.mod.devices()[0]
        plat = getattr(d, "platform", "?")
        backend = {"cpu": "Cranelift JIT (native CPU code)", "gpu": "wgpu (WGSL compute)"}.get(plat, plat)
        return {"system": "cranax", "version": getattr(self.mod, "__version__", "?"), "device": repr(d),
                "device_description": getattr(d, "description", ""), "platform": plat, "backend": backend}


class _Jax(System):
    name = "jax"

    def __init__(self):
        from .. import _alias
        if _alias.is_installed():   # ``import jax`` would be cranax itself (cranax.install_as_jax())
            raise ImportError("jax is unavailable: cranax.install_as_jax() maps it to cranax in this process")
        import jax
        self.mod = jax

    def put(self, tree):
        return self.mod.device_put(tree)

    def leaves(self, tree):
        return self.mod.tree_util.tree_leaves(tree)

    def unflatten_like(self, tree, leaves):
        tu = self.mod.tree_util
        return tu.tree_unflatten(tu.tree_structure(tree), leaves)

    def jit(self, fn):
        return fn if hasattr(fn, "lower") and hasattr(fn, "trace") else self.mod.jit(fn)

    def clear(self, fn):
        cc = getattr(fn, "clear_cache", None)
        if cc is not None:
            cc()
        self.mod.clear_caches()

    def clear_executables(self):
        self.mod.clear_caches()

    def device_info(self):
        d = self.mod.devices()[0]
        return {"system": "jax", "version": self.mod.__version__, "device": repr(d),
                "device_description": getattr(d, "device_kind", ""), "platform": d.platform,
                "backend": f"XLA ({self.mod.default_backend()})"}


class _Numpy(System):
    name = "numpy"
    jits = False

    def put(self, tree):
        return tree

    def leaves(self, tree):
        return _py_leaves(tree)

    def unflatten_like(self, tree, leaves):
        it = iter(leaves)
        return _py_map(lambda _: next(it), tree)

    def device_info(self):
        return {"system": "numpy", "version": np.__version__, "device": "host CPU", "platform": "cpu",
                "backend": "NumPy (eager, op by op)"}


def _py_leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [l for v in tree for l in _py_leaves(v)]
    if isinstance(tree, dict):
        return [l for k in sorted(tree) for l in _py_leaves(tree[k])]
    if tree is None:
        return []
    return [tree]


def _py_map(f, tree):
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*[_py_map(f, v) for v in tree])
    if isinstance(tree, (tuple, list)):
        return type(tree)(_py_map(f, v) for v in tree)
    if isinstance(tree, dict):
        return {k: _py_map(f, tree[k]) for k in sorted(tree)}
    if tree is None:
        return None
    return f(tree)


_SYSTEMS = {}


def get_system(name):
    """The :class:`System` called ``name`` ("cranax", "jax" or "numpy"); ImportError when it is missing."""
    if name not in _SYSTEMS:
        cls = {"cranax": _Cranax, "jax": _Jax, "numpy": _Numpy}.get(name)
        if cls is None:
            raise ValueError(f"unknown backend {name!r}: expected 'cranax', 'jax' or 'numpy'")
        _SYSTEMS[name] = cls()
    return _SYSTEMS[name]


def _detect(fn):
    mod = type(fn).__module__ or ""
    if mod.startswith(("jax", "jaxlib")):
        return "jax"
    fmod = getattr(fn, "__module__", "") or ""
    if mod.startswith("cranax") or fmod.startswith("cranax"):
        return "cranax"
    return "cranax"


def machine_info():
    """The host: CPU model and count, OS, Python and NumPy versions, the 1/5/15-minute load average when the
    OS reports it (a busy machine makes every figure noisier), as a dict, with ``line`` as one string."""
    cpu, ncpu = bu.cpu_model()
    try:
        load = [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        load = None
    return {"cpu": cpu, "cpus": ncpu, "os": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": sys.version.split()[0], "numpy": np.__version__, "load_average": load,
            "line": bu.machine_line()}


# ----------------------------------------------------------------------------------------------------------
# memory

def _status_kb(key):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak():
    """Resets the process's peak RSS (Linux ≥ 4.0); True when it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss():
    v = _status_kb("VmHWM")
    if v is not None:
        return v
    try:
        import resource
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return r if sys.platform == "darwin" else r * 1024
    except Exception:  # pragma: no cover
        return None


# ----------------------------------------------------------------------------------------------------------
# correctness

def _default_rtol(dtype):
    dt = np.dtype(dtype) if dtype is not None else np.dtype(np.float64)
    if dt.kind in "biu":
        return 0.0
    if dt.itemsize <= 2:
        return 1e-2
    if dt.itemsize == 4 or dt.kind == "c" and dt.itemsize == 8:
        return 1e-4
    return 1e-9


def compare(result, expected, rtol=None, atol=None):
    """(correct, max_abs_diff, max_rel_diff, rtol, atol, notes) of ``result`` against ``expected``.

    Both are pytrees of arrays (compared leaf by leaf, in order, after NumPy conversion). A leaf passes when
    shapes agree and every element satisfies ``|r - e| <= atol + rtol·|e|``; nan matches nan. Defaults: ``rtol``
    from the result's dtype (1e-4 for float32, 1e-9 for float64, exact for integers and bools) and ``atol =
    rtol·max|e|`` (errors are judged against the expected value's scale, so sums of many float32 terms pass
    and a different function does not). ``max_rel_diff`` is ``max |r - e| / max |e|``: the largest error
    relative to the expected value's scale (with the default atol, a result is correct when this is at most
    about ``2·rtol``)."""
    rl, el = _py_leaves(_to_host(result)), _py_leaves(_to_host(expected))
    notes = []
    if len(rl) != len(el):
        return False, math.inf, math.inf, rtol, atol, [f"{len(rl)} outputs, reference has {len(el)}"]
    ok = True
    max_abs = max_rel = 0.0
    used_rtol = used_atol = None
    for i, (r, e) in enumerate(zip(rl, el)):
        r, e = np.asarray(r), np.asarray(e)
        if r.shape != e.shape:
            notes.append(f"output {i}: shape {r.shape}, reference {e.shape}")
            ok = False
            max_abs = max_rel = math.inf
            continue
        if r.dtype != e.dtype and not (r.dtype.kind == e.dtype.kind == "f"):
            notes.append(f"output {i}: dtype {r.dtype}, reference {e.dtype}")
        lrtol = _default_rtol(r.dtype) if rtol is None else rtol
        r64, e64 = r.astype(np.float64), e.astype(np.float64)
        scale = float(np.max(np.abs(e64[np.isfinite(e64)]))) if np.isfinite(e64).any() else 0.0
        latol = lrtol * scale if atol is None else atol
        used_rtol = lrtol if used_rtol is None else max(used_rtol, lrtol)
        used_atol = latol if used_atol is None else max(used_atol, latol)
        if r.size == 0:
            continue
        d = bu.max_abs_diff(r64, e64)
        both_nan = np.isnan(r64) & np.isnan(e64)
        same_inf = np.isinf(r64) & (r64 == e64)
        with np.errstate(invalid="ignore"):
            diff = np.abs(r64 - e64)
        diff = np.where(both_nan | same_inf, 0.0, diff)
        diff = np.where(np.isnan(diff), np.inf, diff)
        max_abs = max(max_abs, d)
        max_rel = max(max_rel, d / scale if scale > 0 else (0.0 if d == 0 else math.inf))
        if not bool(np.all(diff <= latol + lrtol * np.abs(np.where(np.isfinite(e64), e64, 0.0)))):
            ok = False
    return ok, max_abs, max_rel, used_rtol, used_atol, notes


def _to_host(tree):
    def conv(v):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return np.asarray(v)
        return v
    return _py_map(conv, tree)


def _host_copy(system, tree):
    """NumPy copies of the array leaves of ``tree`` (Python scalars and other leaves as they are)."""
    def conv(v):
        if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.ndarray):
            return np.asarray(v)
        return v
    return _py_map(conv, tree)


def _nbytes(tree):
    n = 0
    for v in _py_leaves(tree):
        n += int(getattr(v, "nbytes", 0) or 0)
    return n


# ----------------------------------------------------------------------------------------------------------
# the report

NOISY_SPREAD = 2.0  # median / min above this marks a figure as noisy


class BenchReport:
    """The figures of one :func:`measure` call. Times in seconds (None where a figure does not apply to the
    system, e.g. compile time for NumPy). ``correct`` is None without a reference. ``str(report)`` or
    ``report.table()`` is the terminal table; ``report.to_dict()`` the JSON-ready dict (keys in ``FIELDS``
    order, then ``machine`` and ``device_info``)."""

    def __init__(self, **kw):
        for k in FIELDS:
            setattr(self, k, kw.pop(k, None))
        self.notes = list(self.notes or [])
        self.machine = kw.pop("machine", None) or machine_info()
        self.device_info = kw.pop("device_info", None) or {}
        self.extra = kw

    @property
    def ranked(self):
        """True when the figures may be compared with others: it ran, and the answer was not wrong."""
        return self.error is None and self.correct is not False

    @property
    def noisy(self):
        """True when the steady-state median is more than ``NOISY_SPREAD`` times the fastest call."""
        if not self.steady_median_s or not self.steady_min_s:
            return False
        return self.steady_median_s / self.steady_min_s > NOISY_SPREAD

    @property
    def steady_s(self):
        return self.steady_median_s

    def to_dict(self):
        d = {k: getattr(self, k) for k in FIELDS}
        d["ranked"] = self.ranked
        d["noisy"] = self.noisy
        d["machine"] = self.machine
        d["device_info"] = self.device_info
        d.update(self.extra)
        return _jsonable(d)

    def table(self):
        """A two-column table (figure, value) naming the device and backend; WRONG answers say so first."""
        rows = []
        title = f"{self.name}  [{self.system} · {self.backend} · {self.device}]"
        if self.error is not None:
            rows.append(("status", f"FAILED: {self.error}"))
        elif self.correct is False:
            rows.append(("status", "WRONG ANSWER — not ranked (times below are not comparable)"))
        elif self.correct:
            rows.append(("status", "correct (matches reference)"))
        else:
            rows.append(("status", "unchecked (no reference given)"))
        if self.correct is not None:
            rows.append(("max |Δ| / max rel Δ", f"{_fmt_num(self.max_abs_diff)} / {_fmt_num(self.max_rel_diff)}"
                         f"  (rtol {_fmt_num(self.rtol)}, atol {_fmt_num(self.atol)})"))
        rows += [("trace", bu.fmt_time(self.trace_s)), ("compile", bu.fmt_time(self.compile_s)),
                 ("host→device transfer", bu.fmt_time(self.transfer_s)),
                 ("first call (trace+compile+run)", bu.fmt_time(self.first_call_s))]
        steady = (f"{bu.fmt_time(self.steady_median_s)}  (min {bu.fmt_time(self.steady_min_s)}, "
                  f"max {bu.fmt_time(self.steady_max_s)}; {self.repeat}×{self.inner} calls after "
                  f"{self.warmup} warm-up)")
        if self.correct is False:
            steady = "WRONG — " + steady
        rows.append(("steady state median", steady))
        if self.gflops:
            rows.append(("throughput", f"{self.gflops:.1f} GFLOP/s"))
        rows.append(("peak RSS (rise)", f"{_fmt_bytes(self.peak_rss_bytes)} "
                     f"(+{_fmt_bytes(self.peak_rss_delta_bytes)})"))
        rows.append(("inputs / outputs", f"{_fmt_bytes(self.input_bytes)} / {_fmt_bytes(self.output_bytes)}"))
        m = self.machine or {}
        rows.append(("machine", m.get("line", "?")))
        for n in self.notes:
            rows.append(("note", n))
        w = max(len(k) for k, _ in rows)
        return "\n".join([title] + [f"  {k.ljust(w)}  {v}" for k, v in rows])

    def __str__(self):
        return self.table()

    def __repr__(self):
        st = "WRONG" if self.correct is False else ("FAILED" if self.error else bu.fmt_time(self.steady_median_s))
        return f"<BenchReport {self.name} [{self.system}] steady {st}>"


def _fmt_num(v):
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return str(v)
    return f"{v:.2g}" if v else "0"


def _fmt_bytes(n):
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else str(f)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    return v


# ----------------------------------------------------------------------------------------------------------
# measure

def measure(fn, *args, reference=None, repeat=None, warmup=3, inner=None, name=None, backend=None,
            rtol=None, atol=None, size=None, flops=None, budget=1.0, first_call=True, trace=True,
            max_repeat=101):
    """Measures ``fn(*args)`` honestly and returns a :class:`BenchReport`.

    ``fn``: a ``cranax.jit`` function (a plain function is jitted with ``cranax.jit``), a ``jax.jit``
    function (or any function with ``backend="jax"``), or a NumPy function with ``backend="numpy"``.
    ``args``: its arguments (pytrees of NumPy or device arrays and Python scalars; NumPy copies are taken as
    the host data, and the timed calls get device copies). Static arguments: close over them (e.g.
    ``functools.partial``) before jitting.

    ``reference``: a NumPy function (called with the host copies of ``args``) or the expected value; the
    result is checked against it before timing (see :func:`compare` for ``rtol``/``atol``). ``repeat``:
    number of timed samples (default: fit ``budget`` seconds, 5..``max_repeat``); ``inner``: calls per sample
    (default: enough for ≥ 1 ms a sample); ``warmup``: untimed calls before. ``size``/``flops``: recorded
    (``flops`` gives GFLOP/s). ``first_call``/``trace``: set False to skip those (they empty caches).

    Exceptions raised by ``fn`` are recorded in ``report.error`` (and the report is not ranked).
    """
    sysname = backend or _detect(fn)
    system = get_system(sysname)
    name = name or getattr(fn, "__name__", None) or getattr(getattr(fn, "_fun", None), "__name__", "fn")
    info = system.device_info()
    rep = dict(name=name, system=system.name, backend=info.get("backend"), device=info.get("device"),
               platform=info.get("platform"), size=size, warmup=warmup, flops=flops, notes=[],
               device_info=info)
    host_args = _host_copy(system, args)
    rep["input_bytes"] = _nbytes(host_args)
    jf = system.jit(fn)
    try:
        _measure_into(rep, system, jf, host_args, reference, repeat, warmup, inner, rtol, atol, budget,
                      first_call, trace, max_repeat)
    except Exception as e:  # the failure is the result
        rep["error"] = f"{type(e).__name__}: {e}"
    return BenchReport(**rep)


def _median_of(fn, n=3):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _measure_into(rep, system, jf, host_args, reference, repeat, warmup, inner, rtol, atol, budget,
                  first_call, trace, max_repeat):
    # 1. host -> device transfer (the timed calls below all get device arrays)
    if system.jits:
        dev_args = system.block(system.put(host_args))
        rep["transfer_s"] = _median_of(lambda: system.block(system.put(host_args)), 5)
    else:
        dev_args = host_args

    # 2-3. trace, then compile (caches emptied so both really happen)
    if system.jits and trace and hasattr(jf, "trace"):
        def do_trace():
            system.clear(jf)
            return jf.trace(*dev_args)
        rep["trace_s"] = _median_of(do_trace, 3)
        traced = do_trace()
        lowered = traced.lower()
        system.clear_executables()
        t0 = time.perf_counter()
        lowered.compile()
        rep["compile_s"] = time.perf_counter() - t0

    # 4. first call: trace + compile + run, waited for
    baseline_rss = _status_kb("VmRSS")
    peak_reset = _reset_peak()
    if system.jits and first_call:
        system.clear(jf)
    t0 = time.perf_counter()
    out = system.block(jf(*dev_args))
    rep["first_call_s"] = time.perf_counter() - t0
    rep["output_bytes"] = _nbytes(_host_copy(system, out))

    # 5. correctness, before any steady-state time
    if reference is not None:
        expected = reference(*host_args) if callable(reference) else reference
        ok, mabs, mrel, ur, ua, notes = compare(out, expected, rtol, atol)
        rep.update(correct=ok, max_abs_diff=mabs, max_rel_diff=mrel, rtol=ur, atol=ua)
        rep["notes"] += notes
        if not ok:
            rep["notes"].append("result differs from the reference beyond tolerance: not ranked")

    # 6. steady state: warm-up, then samples of `inner` waited calls
    def call():
        return system.block(jf(*dev_args))
    for _ in range(warmup):
        call()
    t0 = time.perf_counter()
    call()
    one = max(time.perf_counter() - t0, 1e-9)
    if inner is None:
        inner = max(1, min(1000, int(1e-3 / one)))
    if repeat is None:
        repeat = max(5, min(max_repeat, int(budget / (one * inner))))
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            call()
        ts.append((time.perf_counter() - t) / inner)
    rep.update(steady_median_s=statistics.median(ts), steady_min_s=min(ts), steady_max_s=max(ts),
               steady_mean_s=statistics.fmean(ts), repeat=repeat, inner=inner)
    if rep.get("flops"):
        rep["gflops"] = rep["flops"] / rep["steady_median_s"] / 1e9
    spread = rep["steady_median_s"] / max(rep["steady_min_s"], 1e-12)
    if spread > NOISY_SPREAD:
        rep["notes"].append(f"noisy: the median is {spread:.1f}x the fastest call (a busy machine, or a "
                            f"library stalling); compare minimums too")

    # 7. memory
    peak = _peak_rss()
    rep["peak_rss_bytes"] = peak
    if peak is not None and baseline_rss is not None:
        rep["peak_rss_delta_bytes"] = max(0, peak - baseline_rss)
    if not peak_reset:
        rep["notes"].append("peak RSS is the process's lifetime peak (could not reset it)")


# ----------------------------------------------------------------------------------------------------------
# many reports

_TABLE_COLS = [("benchmark", 36), ("system", 7), ("size", 9), ("trace", 9), ("compile", 9),
               ("transfer", 9), ("first call", 10), ("steady med", 10), ("min", 9), ("max", 9),
               ("peak Δ", 9), ("max|Δ|", 8), ("check", 7)]


def _size_str(s):
    if s is None:
        return "-"
    if isinstance(s, (int, np.integer)) and s >= 10000:
        e = int(round(math.log10(s)))
        return f"1e{e}" if 10 ** e == s else f"{s:.2g}"
    return str(s)


def format_table(reports, title=None):
    """The reports as one terminal table (one row each); wrong answers show WRONG instead of steady times,
    failures FAILED."""
    head = "  ".join(n.ljust(w) if i < 3 else n.rjust(w) for i, (n, w) in enumerate(_TABLE_COLS))
    lines = []
    if title:
        lines.append(title)
    lines += [head, "-" * len(head)]
    for r in reports:
        lines.append(_table_row(r))
    if any(r.noisy and r.correct is not False and r.error is None for r in reports):
        lines.append(f"* noisy: steady-state median more than {NOISY_SPREAD:g}x the fastest call (machine load or a "
                     "stalling library); read the min column as well")
    return "\n".join(lines)


def _table_row(r):
    c = _TABLE_COLS
    cells = [r.name[:c[0][1]].ljust(c[0][1]), (r.system or "?")[:c[1][1]].ljust(c[1][1]),
             _size_str(r.size).ljust(c[2][1])]
    if r.error is not None:
        msg = f"FAILED: {r.error}"
        return "  ".join(cells) + "  " + msg[:90]
    wrong = r.correct is False
    for v, (_, w) in zip([r.trace_s, r.compile_s, r.transfer_s, r.first_call_s], c[3:7]):
        cells.append(bu.fmt_time(v, w))
    if wrong:
        cells += ["WRONG".rjust(c[7][1]), "-".rjust(c[8][1]), "-".rjust(c[9][1])]
    else:
        for v, (_, w) in zip([r.steady_median_s, r.steady_min_s, r.steady_max_s], c[7:10]):
            cells.append(bu.fmt_time(v, w))
    cells.append(_fmt_bytes(r.peak_rss_delta_bytes).rjust(c[10][1]))
    cells.append((f"{r.max_abs_diff:.1e}" if r.max_abs_diff else ("0" if r.max_abs_diff == 0 else "-"))
                 .rjust(c[11][1]))
    mark = {True: "ok", False: "WRONG", None: "-"}[r.correct] + ("*" if r.noisy and not wrong else "")
    cells.append(mark.rjust(c[12][1]))
    return "  ".join(cells)


class ReportTable(list):
    """A list of :class:`BenchReport` that prints as one table and serialises to JSON."""

    def table(self, title=None):
        return format_table(self, title)

    def __str__(self):
        return self.table()

    def to_dict(self):
        return {"machine": machine_info(), "reports": [r.to_dict() for r in self]}
