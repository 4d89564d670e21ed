"""``python -m cranax.tour`` — the seed documents' examples, run and timed honestly.

The examples come from the three seed documents (JAX's "Just-in-time compilation", the quickstart notes on
benchmarking honestly, and "02. jit과 XLA 컴파일"). Each section prints what the document says should happen
and a row of figures:

    trace      ``cranax.make_jaxpr(f)(*args)``: Python tracing to a jaxpr only (median of 3)
    compile    ``jit(f).lower(*args).compile()``: lowering the jaxpr to the core's IR, verifying, optimizing
               and Cranelift codegen (the core's executable cache is emptied first so this really compiles)
    first      the first call of a fresh ``jit`` of a fresh function object, waited for (trace + compile + run)
    steady     median of warm calls with ``block_until_ready()``
    transfer   host→device: ``cranax.device_put(numpy_input).block_until_ready()`` for the inputs
    numpy      NumPy running the same computation on the same (host) inputs, median
    max|Δ|     largest absolute difference between cranax's result and NumPy's

Sections are plain functions of a ``Tour`` listed in ``SECTIONS``, or named in ``OPTIONAL_SECTIONS`` when they
live in their own module; later work appends its own (grad, vmap, cond, dot, random,
GPU). ``python -m cranax.tour --list`` names them, ``python -m cranax.tour selu jaxpr`` runs a subset,
``--quick`` shortens the timing loops.
"""
import argparse
import functools
import sys
import time
import traceback

import numpy as np

import cranax
import cranax.numpy as jnp
from cranax import _bench_util as bu

__all__ = ["main", "SECTIONS", "Tour", "Row"]


# ----------------------------------------------------------------------------------------------------------
# infrastructure

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


# ----------------------------------------------------------------------------------------------------------
# sections (seed examples)

def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_np(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def section_selu(tour):
    """jit of selu on 1e6 elements vs eager op-by-op vs NumPy (seed: Just-in-time compilation, quickstart)."""
    tour.title("selu on 1,000,000 float32: jit vs eager (op-by-op) vs NumPy")
    xh = tour.normal((1_000_000,))
    (x,), t_put = tour.put(xh)
    row_jit, out = tour.measure_jit("selu 1M jit", selu, (x,), (xh,), selu_np, transfer=t_put)

    # eager: every jnp op runs as its own one-equation program
    cranax.clear_caches()
    t_first, out_e = bu.timeit_once(lambda: selu(x))
    t_eager = tour.median(lambda: selu(x).block_until_ready())
    d_e = bu.max_abs_diff(out_e, selu_np(xh))
    row_e = tour.add(Row("selu 1M eager (op-by-op)", first=t_first, steady=t_eager, transfer=t_put,
                         numpy=row_jit.numpy, diff=d_e, note="first call compiles each primitive once"))
    tour.say(f"speed-up of jit (steady state) over eager: {bu.fmt_ratio(row_e.steady, row_jit.steady)}, "
             f"over NumPy: {bu.fmt_ratio(row_jit.numpy, row_jit.steady)} (above 1x: jit is faster). "
             f"JAX 0.10.2 on the reference 2-core Zen 4: jit 345.5 µs, eager 2598.5 µs, NumPy 4822.7 µs")


def f200(x):
    y = x
    for _ in range(200):
        y = jnp.sin(y) + y * 0.5
    return y


def f200_np(x):
    y = x
    for _ in range(200):
        y = np.sin(y) + y * np.float32(0.5)
    return y


def section_first_call(tour):
    """The 200-step ``sin(y) + y * 0.5`` function: first call vs cached replay (seed: 02. jit과 XLA 컴파일)."""
    tour.title("first call vs cached replay: 200 × (sin(y) + y * 0.5) on a scalar")
    xh = np.array(1.0, dtype=np.float32)
    (x,), t_put = tour.put(xh)
    row, out = tour.measure_jit("f200 (200-step sin)", f200, (x,), (xh,), f200_np, transfer=t_put)
    n_eqns = len(cranax.make_jaxpr(f200)(x).jaxpr.eqns)
    tour.say(f"jaxpr has {n_eqns} equations; result {float(out):.6f} (NumPy float32: {float(f200_np(xh)):.6f})")
    tour.say(f"first call / replay = {bu.fmt_ratio(row.first, row.steady)} "
             f"(the seed saw ~7000x; JAX 0.10.2 here: first 108.2 ms, replay 7.3 µs, trace 477.8 µs)")


def _sum_fn(x, y):
    return jnp.sum(x * y + jnp.sin(x))


_SUM_JAXPR_JAX = """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a b
    d:f32[3] = sin a
    e:f32[3] = add c d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }"""


def section_jaxpr(tour):
    """``jnp.sum(x * y + jnp.sin(x))`` and its jaxpr (seed: 02. jit과 XLA 컴파일)."""
    tour.title("make_jaxpr(lambda x, y: jnp.sum(x * y + jnp.sin(x)))(ones(3), ones(3) * 2)")
    xh = np.ones(3, np.float32)
    yh = np.ones(3, np.float32) * 2
    (x, y), t_put = tour.put(xh, yh)
    text = str(cranax.make_jaxpr(_sum_fn)(x, y))
    tour.say(text)
    tour.say(f"same text as JAX 0.10.2: {'yes' if text.strip() == _SUM_JAXPR_JAX else 'NO'}")
    row, out = tour.measure_jit("sum(x*y + sin(x)) f32[3]", _sum_fn, (x, y), (xh, yh),
                                lambda a, b: np.sum(a * b + np.sin(a)), transfer=t_put)
    tour.say(f"result {float(out):.6f}")
    low = cranax.jit(_sum_fn).lower(x, y)
    try:
        lines = []
        for line in str(low.compile().as_text()).strip().splitlines():
            if line.startswith(";") and "cranelift" in line.lower():
                break  # the machine-level IR follows; too long for the tour
            lines.append(line)
        tour.say("optimized program and fused kernels (jit(f).lower(x, y).compile().as_text(), "
                 "Cranelift IR omitted):")
        tour.say("  " + "\n  ".join(lines[:40]).rstrip())
    except Exception as e:  # as_text is informative only
        tour.say(f"(optimized program text unavailable: {type(e).__name__}: {e})")


def section_retracing(tour):
    """A side-effect print shows when tracing happens: new shapes retrace, new values don't."""
    tour.title("retracing: shape changes retrace, values don't (side-effect print runs only while tracing)")
    events = []

    def f(x):
        print("  tracing with", x)
        events.append(x.shape)
        return x * 2

    f_jit = cranax.jit(f)
    c0 = _compile_count()
    tour.say(">>> f_jit(jnp.array([1.0, 2.0, 3.0]))"); r1 = f_jit(jnp.array([1.0, 2.0, 3.0]))
    tour.say(f"  -> {r1}")
    tour.say(">>> f_jit(jnp.array([4.0, 5.0, 6.0]))   # same shape/dtype: replay, no print")
    r2 = f_jit(jnp.array([4.0, 5.0, 6.0]))
    tour.say(f"  -> {r2}")
    tour.say(">>> f_jit(jnp.array([1.0, 2.0]))        # new shape: traces again")
    r3 = f_jit(jnp.array([1.0, 2.0]))
    tour.say(f"  -> {r3}")
    tour.say(">>> f_jit(jnp.array([1, 2, 3]))         # new dtype (int32): traces again")
    r4 = f_jit(jnp.array([1, 2, 3]))
    tour.say(f"  -> {r4}")
    c1 = _compile_count()
    tour.say(f"traced {len(events)} times for 4 calls (expected 3); f_jit._cache_size() = {f_jit._cache_size()}"
             + (f"; core compiles: {c1 - c0}" if c0 is not None else ""))
    ok = len(events) == 3 and np.allclose(np.asarray(r2), [8.0, 10.0, 12.0])
    tour.say("as the seed says" if ok else "UNEXPECTED: the seed says 3 traces")
    xh = np.array([4.0, 5.0, 6.0], np.float32)
    (x,), t_put = tour.put(xh)

    def f_quiet(x):
        return x * 2
    tour.measure_jit("x * 2 f32[3]", f_quiet, (x,), (xh,), lambda a: a * 2, transfer=t_put)


def _power_iter(x, n):
    for _ in range(n):
        x = x * x
    return x


def _power_iter_np(x, n):
    for _ in range(n):
        x = x * x
    return x


def _seed_f_g():
    """The seed's ``f`` (``if x > 0``) and ``g`` (``while i < n``), defined with the seed's names so error
    messages name them as the seed shows."""
    def f(x):
        if x > 0:
            return x
        else:
            return 2 * x

    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    return f, g


def section_static(tour):
    """static_argnums / static_argnames (seeds: Just-in-time compilation; 02. jit과 XLA 컴파일)."""
    tour.title("static arguments: power_iter (static_argnames=['n']), f_jit_correct, g_jit_correct")
    f, g = _seed_f_g()
    power_iter = functools.partial(cranax.jit, static_argnames=["n"])(_power_iter)
    a = power_iter(jnp.array(2.0), 3)
    b = power_iter(jnp.array(2.0), 4)
    c = power_iter(jnp.array(3.0), 3)
    tour.say(">>> print(power_iter(jnp.array(2.0), 3), power_iter(jnp.array(2.0), 4), "
             "power_iter(jnp.array(3.0), 3))")
    tour.say(a, b, c)
    tour.say(f"power_iter._cache_size() = {power_iter._cache_size()} (n=3 and n=4; x=3.0 with n=3 replays)")
    f_jit_correct = cranax.jit(f, static_argnums=0)
    tour.say(">>> print(jax.jit(f, static_argnums=0)(10))")
    tour.say(f_jit_correct(10))
    g_jit_correct = cranax.jit(g, static_argnames=["n"])
    tour.say(">>> print(jax.jit(g, static_argnames=['n'])(10, 20))")
    tour.say(g_jit_correct(10, 20))

    @cranax.jit(static_argnames=["n"])
    def g_jit_decorated(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    tour.say(">>> print(g_jit_decorated(10, 20))   # @jax.jit(static_argnames=['n'])")
    tour.say(g_jit_decorated(10, 20))
    tour.say(">>> jax.jit(g, static_argnums=0)(jnp.ones(2), 20)   # an array as a static argument")
    try:
        cranax.jit(g, static_argnums=0)(jnp.ones(2), 20)
        tour.say("UNEXPECTED: no error")
    except ValueError as e:
        tour.say(f"ValueError: {str(e).splitlines()[0]}")
    xh = np.array(2.0, np.float32)
    (x,), t_put = tour.put(xh)
    tour.measure_jit("power_iter(2.0, n=3)", _power_iter, (x,), (xh,), _power_iter_np, static={"n": 3},
                     transfer=t_put)


def section_errors(tour):
    """The errors tracers raise for Python control flow on traced values (seeds)."""
    tour.title("TracerBoolConversionError: `if x > 0` and `while i < n` under jit")
    f, g = _seed_f_g()
    for label, fn, args in (("jax.jit(f)(10)", f, (10,)), ("jax.jit(g)(10, 20)", g, (10, 20))):
        tour.say(f">>> {label}")
        try:
            r = cranax.jit(fn)(*args)
            tour.say(f"UNEXPECTED: returned {r}")
        except cranax.errors.TracerBoolConversionError as e:
            tour.say(f"{type(e).__name__}: {e}")
    tour.say(">>> relu_broken(jnp.array(3.0))")

    @cranax.jit
    def relu_broken(x):
        if x > 0:
            return x
        else:
            return 0.0 * x
    try:
        relu_broken(jnp.array(3.0))
        tour.say("UNEXPECTED: no error")
    except cranax.errors.TracerBoolConversionError as e:
        tour.say(f"{type(e).__name__}: {str(e).splitlines()[0]} ...")

    tour.say(">>> g_inner_jitted(10, 20)   # jit only the loop body")

    @cranax.jit
    def loop_body(prev_i):
        return prev_i + 1

    def g_inner_jitted(x, n):
        i = 0
        while i < n:
            i = loop_body(i)
        return x + i
    tour.say(repr(g_inner_jitted(10, 20)))


def relu_where(x):
    return jnp.where(x > 0, x, 0.0 * x)


def section_where(tour):
    """relu with jnp.where instead of a Python if (seed: 02. jit과 XLA 컴파일)."""
    tour.title("relu with jnp.where: both branches computed, select_n picks")
    rj = cranax.jit(relu_where)
    tour.say(">>> print(relu_where(jnp.array(3.0)), relu_where(jnp.array(-2.0)))")
    tour.say(rj(jnp.array(3.0)), rj(jnp.array(-2.0)))
    tour.say(str(cranax.make_jaxpr(relu_where)(jnp.array(3.0))))
    xh = tour.normal((1_000_000,))
    (x,), t_put = tour.put(xh)
    tour.measure_jit("relu_where 1M", relu_where, (x,), (xh,),
                     lambda a: np.where(a > 0, a, np.float32(0.0) * a), transfer=t_put)


def section_closure(tour):
    """Closed-over Python values are frozen at trace time (seed: 02. jit과 XLA 컴파일)."""
    tour.title("closures: a captured Python value is frozen when the function is traced")
    hyper = {"scale": 2.0}

    def scaled(x):
        return x * hyper["scale"]
    sj = cranax.jit(scaled)
    x3 = jnp.ones(3)
    tour.say(f">>> scale = 2.0; scaled_jit(ones(3)) -> {sj(x3)}")
    hyper["scale"] = 3.0
    r_same = sj(x3)
    tour.say(f">>> scale = 3.0; scaled_jit(ones(3)) -> {r_same}   # cached trace: still 2.0")
    r_new = sj(jnp.ones(2))
    tour.say(f">>> scaled_jit(ones(2)) -> {r_new}   # new shape retraces and reads 3.0")
    ok = np.allclose(np.asarray(r_same), 2.0) and np.allclose(np.asarray(r_new), 3.0)
    tour.say("as the seed says" if ok else "UNEXPECTED")

    def scaled_arg(x, scale):
        return x * scale
    sa = cranax.jit(scaled_arg)
    tour.say(f"fix: pass it as an argument: {sa(x3, 2.0)} then {sa(x3, 3.0)} "
             f"(one trace: _cache_size() = {sa._cache_size()})")
    xh = tour.normal((1000,))
    (x,), t_put = tour.put(xh)
    s = np.float32(3.0)
    tour.measure_jit("x * scale (arg) f32[1000]", scaled_arg, (x, 3.0), (xh, s), lambda a, b: a * b,
                     transfer=t_put)


_loop_traces = []


def unjitted_loop_body(prev_i):
    _loop_traces.append(1)  # runs only while tracing
    return prev_i + 1


def g_inner_jitted_partial(x, n):
    i = 0
    while i < n:
        i = cranax.jit(functools.partial(unjitted_loop_body))(i)
    return x + i


def g_inner_jitted_lambda(x, n):
    i = 0
    while i < n:
        i = cranax.jit(lambda x: unjitted_loop_body(x))(i)
    return x + i


def g_inner_jitted_normal(x, n):
    i = 0
    while i < n:
        i = cranax.jit(unjitted_loop_body)(i)
    return x + i


def section_jit_in_loop(tour):
    """``jax.jit(lambda ...)`` in a loop vs ``jax.jit(unjitted_loop_body)`` (seed: Just-in-time compilation)."""
    tour.title("jit inside a loop: jax.jit(lambda/partial) retraces every time; the core still compiles once")
    tour.say("JAX 0.10.2 here: g_inner_jitted_lambda(10, 20) 537.6 ms (recompiles each time), "
             "g_inner_jitted 419.1 µs")
    for name, fn in (("g_inner_jitted_normal", g_inner_jitted_normal),
                     ("g_inner_jitted_partial", g_inner_jitted_partial),
                     ("g_inner_jitted_lambda", g_inner_jitted_lambda)):
        _clear_exe_cache()
        cranax.clear_caches()
        del _loop_traces[:]
        c0 = _compile_count()
        t_first, r = bu.timeit_once(lambda: fn(10, 20))
        c1 = _compile_count()
        traces = len(_loop_traces)
        t_steady = tour.median(lambda: bu.block(fn(10, 20)), n=3 if tour.quick else 7, inner=1)
        comp = f"{c1 - c0}" if c0 is not None else "?"
        note = f"= {int(r)}; first call: {traces} traces, {comp} compiles"
        tour.add(Row(f"{name}(10, 20)", first=t_first, steady=t_steady, numpy=None, note=note))
        if int(r) != 30:
            tour.say("UNEXPECTED result")


SECTIONS = [
    ("selu", section_selu),
    ("first_call", section_first_call),
    ("jaxpr", section_jaxpr),
    ("retracing", section_retracing),
    ("static", section_static),
    ("errors", section_errors),
    ("where", section_where),
    ("closure", section_closure),
    ("jit_in_loop", section_jit_in_loop),
]

# Sections that live in their own modules (added by later work: grad, vmap, cond, dot, random, GPU).
# Each entry is (name, module, function); the function takes the Tour. A module that is missing is skipped.
OPTIONAL_SECTIONS = [
    ("grad", "cranax._tour_grad", "tour_grad"),
    ("vmap", "cranax._tour_vmap", "tour_vmap"),
    ("control_flow", "cranax._tour_cf", "tour_control_flow"),
    ("gpu", "cranax._tour_gpu", "tour_gpu"),
]


def _all_sections():
    import importlib
    out = list(SECTIONS)
    have = {n for n, _ in out}
    for name, mod, fn in OPTIONAL_SECTIONS:
        if name in have:
            continue
        try:
            f = getattr(importlib.import_module(mod), fn)
        except (ImportError, AttributeError):
            continue
        out.append((name, f))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m cranax.tour", description=__doc__.splitlines()[0])
    p.add_argument("sections", nargs="*", help="names of sections to run (default: all)")
    p.add_argument("--list", action="store_true", help="list the sections and exit")
    p.add_argument("--quick", action="store_true", help="shorter timing loops")
    ns = p.parse_args(argv)
    sections = _all_sections()
    if ns.list:
        for name, fn in sections:
            print(f"{name:14s} {(fn.__doc__ or '').strip().splitlines()[0]}")
        return 0
    chosen = sections
    if ns.sections:
        known = dict(sections)
        bad = [s for s in ns.sections if s not in known]
        if bad:
            p.error(f"unknown section(s) {bad}; --list names them")
        chosen = [(s, known[s]) for s in ns.sections]

    tour = Tour(quick=ns.quick)
    describe_device(tour)
    failed = []
    for name, fn in chosen:
        try:
            fn(tour)
        except Exception:
            failed.append(name)
            tour.say(f"!! section {name!r} failed:")
            tour.say(traceback.format_exc())

    tour.title("summary (all times are medians after warm-up unless 'first call'; waited with block_until_ready)")
    tour.say(_header_line())
    for r in tour.rows:
        tour.say(_row_line(r))
    if failed:
        tour.say(f"\nFAILED sections: {', '.join(failed)}")
        return 1
    tour.say("\nall sections ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
