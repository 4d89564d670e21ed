"""float32 (and float64) math library throughput (issue 23, item 2): cranax vs NumPy vs JAX in one run.

    python benches/bench_math_f32.py [--quick] [--jax-python /tmp/jaxvenv/bin/python] [--baseline DIR] [--pinned CPU]
                                     [--dtype float64] [--cpu-time]

Each figure is the median (and the minimum) steady-state time of ``jit(f)(x)`` on 1e6 float32 (after warm-up, waited for with
``block_until_ready``; NumPy: the ufunc on the same array). cranax runs in child processes, one per block-math
choice: the host's default, ``CRANAX_CPU_BLOCK_MATH=avx2`` and ``off`` (inline f32x4 code only). JAX runs in a
child of ``--jax-python`` (a venv with JAX; skipped when missing). ``--baseline DIR`` adds a cranax child whose
``PYTHONPATH`` is DIR (e.g. another checkout's ``python/``, for before/after figures; default and avx2 modes).
``--pinned CPU`` instead runs cranax (default, avx2) and JAX children on that one CPU (``taskset``), 3 rounds in
rotating order, and prints each cell's median over the rounds: an A/B on a shared machine where both sides get
the same single core. ``--dtype float64`` runs the float64 cases instead (``CASES64``: the functions with float64
block routines, jax.nn's compositions of them and a few the C library computes, with ``jax_enable_x64``), and
``--cpu-time`` times calls by the process's CPU time (every thread's; ``time.process_time``, read per batch of
calls of at least 50 ms, see ``median``) instead of the wall clock: on a shared host, the work each side does
rather than when the scheduler let it run. A second JAX child runs with ``XLA_FLAGS=--xla_cpu_max_isa=AVX2``
(XLA's code held to AVX2, as on an AVX2-only host): the reference for the ``avx2`` columns. Ratios are of medians.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

N = 1_000_000
# name: (function name in NumPy and jax.numpy, input range(s)): a unary case's operand is uniform in
# [-scale, scale] (asin/acos: [-1, 1]; log1p/atanh: [-0.99, 0.99]); a binary case's first operand is uniform in [lo, hi] of its first range,
# its second in its second range (pow: a positive base and an exponent in [-3, 3], as the gamma sampler's boost)
CASES = {
    "sin": ("sin", 10.0),
    "cos": ("cos", 10.0),
    "tan": ("tan", 10.0),
    "sin |x|<1e5": ("sin", 1e5),
    "exp": ("exp", 10.0),
    "tanh": ("tanh", 10.0),
    "asin": ("arcsin", 1.0),
    "acos": ("arccos", 1.0),
    "atan": ("arctan", 10.0),
    "sinh": ("sinh", 10.0),
    "cosh": ("cosh", 10.0),
    "expm1": ("expm1", 10.0),
    "log1p": ("log1p", 0.99),
    "asinh": ("arcsinh", 10.0),
    "atanh": ("arctanh", 0.99),
    "cbrt": ("cbrt", 1e3),
    "pow": ("power", ((0.1, 3.0), (-3.0, 3.0))),
    "atan2": ("arctan2", ((-10.0, 10.0), (-10.0, 10.0))),
}

# float64 (`--dtype float64`): "nn.<name>" is jax.nn's function, its NumPy reference in `NP_REF`
CASES64 = {
    "exp": ("exp", 10.0),
    "tanh": ("tanh", 10.0),
    "expm1": ("expm1", 10.0),
    "logistic": ("nn.sigmoid", 10.0),
    "sinh": ("sinh", 10.0),
    "cosh": ("cosh", 10.0),
    "exp2": ("exp2", 10.0),
    "silu": ("nn.silu", 10.0),
    "softplus": ("nn.softplus", 10.0),
    "sin": ("sin", 10.0),
    "log1p": ("log1p", 0.99),
    "atanh": ("arctanh", 0.99),
}
NP_REF = {
    "nn.sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "nn.silu": lambda x: x / (1 + np.exp(-x)),
    "nn.softplus": lambda x: np.logaddexp(x, 0.0),
}
DTYPE = "float32"
CLOCK = time.perf_counter
BATCH_S = 0.05


def cases():
    return CASES64 if DTYPE == "float64" else CASES


def np_fn(fname):
    return NP_REF[fname] if fname in NP_REF else getattr(np, fname)


def inputs():
    rng = np.random.default_rng(0)
    dt = np.dtype(DTYPE)
    base = rng.uniform(-1.0, 1.0, N).astype(dt)
    out = {}
    for name, (_, scale) in cases().items():
        if isinstance(scale, tuple):
            out[name] = tuple(rng.uniform(lo, hi, N).astype(dt) for lo, hi in scale)
        else:
            out[name] = ((base * dt.type(scale)).astype(dt),)
    return out


def median(fn, quick):
    for _ in range(3 if quick else 5):
        fn()
    times = []
    budget = 0.3 if quick else 1.5
    # CPU time is read per batch of calls of at least BATCH_S: Linux adds a thread's time to the process clock
    # at ticks and context switches, so a pool thread still running when a call ends has that time counted in
    # some later call's reading; per call, two-thread runs read too low or too high (JAX's exp2 read 0.04 ms
    # for 1e6 elements). Over a batch the error is a tick or two per thread. Wall time is read per call.
    batch = 1
    if CLOCK is time.process_time:
        t0 = time.perf_counter()
        fn()
        batch = max(1, int(BATCH_S / max(time.perf_counter() - t0, 1e-6)))
    t_end = time.perf_counter() + budget
    while len(times) < 7 or (time.perf_counter() < t_end and len(times) < 200):
        t0 = CLOCK()
        for _ in range(batch):
            fn()
        times.append((CLOCK() - t0) / batch)
    # (median, minimum): on a loaded machine the minimum is the better estimate of the uncontended cost
    return float(np.median(times)), float(np.min(times))


def child(kind, quick):
    xs = inputs()
    out = {}
    if kind == "jax":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax  # a child process: only this kind needs JAX
        import jax.numpy as jnp
    else:
        import cranax as jax  # a child process: only this kind needs cranax
        import cranax.numpy as jnp
    if DTYPE == "float64":
        jax.config.update("jax_enable_x64", True)
    for name, (fname, _) in cases().items():
        fn = getattr(jax.nn, fname[3:]) if fname.startswith("nn.") else getattr(jnp, fname)
        f = jax.jit(fn)
        x = tuple(jnp.asarray(v) for v in xs[name])
        got = np.asarray(f(*x))
        want = np_fn(fname)(*(v.astype(np.float64) for v in xs[name]))
        err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
        out[name] = (*median(lambda: f(*x).block_until_ready(), quick), err)
    print(json.dumps(out))


def run_child(python, kind, env_extra, quick):
    env = dict(os.environ, **env_extra)
    cmd = [python, os.path.abspath(__file__), "--child", kind] + (["--quick"] if quick else []) + child_flags()
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"# {kind} {env_extra}: {e}", file=sys.stderr)
        return None
    if r.returncode != 0:
        print(f"# {kind} {env_extra} failed:\n{r.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def pinned(cpu, jax_python, quick):
    kinds = [("default", sys.executable, "cranax", {}), ("avx2", sys.executable, "cranax", {"CRANAX_CPU_BLOCK_MATH": "avx2"}),
             ("jax", jax_python, "jax", {})]
    res = {k: [] for k, *_ in kinds}
    for r in range(3):
        for k, py, kind, env in kinds[r:] + kinds[:r]:
            cmd = ["taskset", "-c", str(cpu), py, os.path.abspath(__file__), "--child", kind] + (["--quick"] if quick else [])
            cmd += child_flags()
            out = subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True, timeout=900)
            res[k].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"machine: {cpu_line()}; pinned to CPU {cpu}; load average {os.getloadavg()[0]:.2f} at the end; "
          f"{N} {DTYPE} per call, {clock_name()}, median over 3 rounds of each child's median")
    print("| function | cranax default | cranax avx2 | JAX | default / JAX | avx2 / JAX |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in cases():
        m = {k: float(np.median([run[name][0] for run in res[k]])) for k in res}
        print(f"| {name} | {m['default'] * 1e3:.2f} ms | {m['avx2'] * 1e3:.2f} ms | {m['jax'] * 1e3:.2f} ms | "
              f"{m['default'] / m['jax']:.2f}× | {m['avx2'] / m['jax']:.2f}× |")


def child_flags():
    return ["--dtype", DTYPE] + (["--cpu-time"] if CLOCK is time.process_time else [])


def clock_name():
    return "CPU time (all threads)" if CLOCK is time.process_time else "wall time"


def cpu_line():
    model, flags = platform.processor(), ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    isa = "AVX-512F" if " avx512f" in flags else ("AVX2+FMA" if " avx2" in flags and " fma" in flags else "other")
    return f"{model}, {os.cpu_count()} CPUs, {isa}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--jax-python", default="/tmp/jaxvenv/bin/python")
    ap.add_argument("--baseline")
    ap.add_argument("--pinned", type=int)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--cpu-time", action="store_true")
    a = ap.parse_args()
    global DTYPE, CLOCK
    DTYPE = a.dtype
    if a.cpu_time:
        CLOCK = time.process_time
    if a.child:
        child(a.child, a.quick)
        return
    if a.pinned is not None:
        pinned(a.pinned, a.jax_python, a.quick)
        return
    load0 = os.getloadavg()
    cols = []
    if a.baseline:
        env = {"PYTHONPATH": os.path.abspath(a.baseline)}
        cols.append(("cranax before (default)", run_child(sys.executable, "cranax", env, a.quick)))
        cols.append(("cranax before (avx2)", run_child(sys.executable, "cranax", dict(env, CRANAX_CPU_BLOCK_MATH="avx2"), a.quick)))
    for label, mode in [("cranax default", None), ("cranax avx2", "avx2"), ("cranax off (inline)", "off")]:
        env = {} if mode is None else {"CRANAX_CPU_BLOCK_MATH": mode}
        cols.append((label, run_child(sys.executable, "cranax", env, a.quick)))
    jax_res = run_child(a.jax_python, "jax", {}, a.quick) if os.path.exists(a.jax_python) else None
    # JAX with XLA's code generation held to AVX2 (XLA_FLAGS --xla_cpu_max_isa), the reference for the avx2 column
    jax2_res = (run_child(a.jax_python, "jax", {"XLA_FLAGS": "--xla_cpu_max_isa=AVX2"}, a.quick)
                if os.path.exists(a.jax_python) else None)
    xs = inputs()
    np_res = {name: median(lambda f=np_fn(fn), x=xs[name]: f(*x), a.quick) for name, (fn, _) in cases().items()}
    load1 = os.getloadavg()
    print(f"machine: {cpu_line()}; load average {load0[0]:.2f} before, {load1[0]:.2f} after; "
          f"{N} {DTYPE} per call, {clock_name()}, median / minimum ms (ratio of medians to JAX's: the avx2 "
          f"column's to JAX avx2's, XLA_FLAGS=--xla_cpu_max_isa=AVX2)")
    head = ["function", "NumPy"] + [c for c, _ in cols] + ["JAX", "JAX avx2"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in cases():
        cells = [name, f"{np_res[name][0] * 1e3:.2f} / {np_res[name][1] * 1e3:.2f}"]
        for label, res in cols:
            if res is None:
                cells.append("-")
                continue
            ref = jax2_res if "avx2" in label else jax_res
            med = f"{res[name][0] * 1e3:.2f} / {res[name][1] * 1e3:.2f}"
            cells.append(f"{med} ({res[name][0] / ref[name][0]:.2f}×)" if ref else med)
        for ref in (jax_res, jax2_res):
            cells.append(f"{ref[name][0] * 1e3:.2f} / {ref[name][1] * 1e3:.2f}" if ref else "-")
        print("| " + " | ".join(cells) + " |")
    errs = {c: max(v[2] for v in res.values()) for c, res in cols if res}
    print("max relative error vs float64 NumPy: " + ", ".join(f"{c} {e:.1e}" for c, e in errs.items()))


if __name__ == "__main__":
    main()
