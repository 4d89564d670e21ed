"""float32 math library throughput (issue 23, item 2): cranax vs NumPy vs JAX in one run.

    python benches/bench_math_f32.py [--quick] [--jax-python /tmp/jaxvenv/bin/python] [--baseline DIR] [--pinned CPU]

Each figure is the median (and the minimum) steady-state time of ``jit(f)(x)`` on 1e6 float32 (after warm-up, waited for with
``block_until_ready``; NumPy: the ufunc on the same array). cranax runs in child processes, one per block-math
choice: the host's default, ``CRANAX_CPU_BLOCK_MATH=avx2`` and ``off`` (inline f32x4 code only). JAX runs in a
child of ``--jax-python`` (a venv with JAX; skipped when missing). ``--baseline DIR`` adds a cranax child whose
``PYTHONPATH`` is DIR (e.g. another checkout's ``python/``, for before/after figures). Ratios are to JAX's time.
``--pinned CPU`` instead runs cranax (default, avx2) and JAX children on that one CPU (``taskset``), 3 rounds in
rotating order, and prints each cell's median over the rounds: an A/B on a shared machine where both sides get
the same single core.
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


def inputs():
    rng = np.random.default_rng(0)
    base = rng.uniform(-1.0, 1.0, N).astype(np.float32)
    out = {}
    for name, (_, scale) in CASES.items():
        if isinstance(scale, tuple):
            out[name] = tuple(rng.uniform(lo, hi, N).astype(np.float32) for lo, hi in scale)
        else:
            out[name] = ((base * np.float32(scale)).astype(np.float32),)
    return out


def median(fn, quick):
    for _ in range(3 if quick else 5):
        fn()
    times = []
    budget = 0.3 if quick else 1.5
    t_end = time.perf_counter() + budget
    while len(times) < 7 or (time.perf_counter() < t_end and len(times) < 200):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
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
    for name, (fname, _) in CASES.items():
        f = jax.jit(getattr(jnp, fname))
        x = tuple(jnp.asarray(v) for v in xs[name])
        got = np.asarray(f(*x))
        want = getattr(np, fname)(*(v.astype(np.float64) for v in xs[name]))
        err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
        out[name] = (*median(lambda: f(*x).block_until_ready(), quick), err)
    print(json.dumps(out))


def run_child(python, kind, env_extra, quick):
    env = dict(os.environ, **env_extra)
    cmd = [python, os.path.abspath(__file__), "--child", kind] + (["--quick"] if quick else [])
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
            out = subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True, timeout=900)
            res[k].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"machine: {cpu_line()}; pinned to CPU {cpu}; load average {os.getloadavg()[0]:.2f} at the end; "
          f"{N} float32 per call, median over 3 rounds of each child's median")
    print("| function | cranax default | cranax avx2 | JAX | default / JAX | avx2 / JAX |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in CASES:
        m = {k: float(np.median([run[name][0] for run in res[k]])) for k in res}
        print(f"| {name} | {m['default'] * 1e3:.2f} ms | {m['avx2'] * 1e3:.2f} ms | {m['jax'] * 1e3:.2f} ms | "
              f"{m['default'] / m['jax']:.2f}× | {m['avx2'] / m['jax']:.2f}× |")


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
    a = ap.parse_args()
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
    for label, mode in [("cranax default", None), ("cranax avx2", "avx2"), ("cranax off (inline)", "off")]:
        env = {} if mode is None else {"CRANAX_CPU_BLOCK_MATH": mode}
        cols.append((label, run_child(sys.executable, "cranax", env, a.quick)))
    jax_res = run_child(a.jax_python, "jax", {}, a.quick) if os.path.exists(a.jax_python) else None
    xs = inputs()
    np_res = {name: median(lambda f=getattr(np, fn), x=xs[name]: f(*x), a.quick) for name, (fn, _) in CASES.items()}
    load1 = os.getloadavg()
    print(f"machine: {cpu_line()}; load average {load0[0]:.2f} before, {load1[0]:.2f} after; "
          f"{N} float32 per call, median / minimum ms (ratio of minima to JAX's)")
    head = ["function", "NumPy"] + [c for c, _ in cols] + ["JAX"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in CASES:
        jt = jax_res[name][1] if jax_res else None
        cells = [name, f"{np_res[name][0] * 1e3:.2f} / {np_res[name][1] * 1e3:.2f}"]
        for _, res in cols:
            if res is None:
                cells.append("-")
                continue
            t = res[name][1]
            med = f"{res[name][0] * 1e3:.2f} / {t * 1e3:.2f}"
            cells.append(f"{med} ({t / jt:.2f}×)" if jt else med)
        cells.append(f"{jax_res[name][0] * 1e3:.2f} / {jt * 1e3:.2f}" if jt else "-")
        print("| " + " | ".join(cells) + " |")
    errs = {c: max(v[2] for v in res.values()) for c, res in cols if res}
    print("max relative error vs float64 NumPy: " + ", ".join(f"{c} {e:.1e}" for c, e in errs.items()))


if __name__ == "__main__":
    main()
