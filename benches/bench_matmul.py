"""General matmul (``dot_general``), cranax ``jit`` vs NumPy's BLAS (and JAX when available) in one run.

    python benches/bench_matmul.py                        # 256, 1024, 2048, 3000; float32 and float64
    python benches/bench_matmul.py --sizes 256,1024 --dtypes float32 --reps 9
    python benches/bench_matmul.py --quick                # 128 and 256, smoke test
    JAX_PYTHON=/tmp/jaxvenv/bin/python python benches/bench_matmul.py   # JAX timed in that interpreter
    CRANAX_CPU_BLOCK_MATH=avx2 python benches/bench_matmul.py          # the AVX2 block routines
    CRANAX_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benches/bench_matmul.py --no-jax   # one thread each

Layouts per size ``n`` (square ``n×n`` operands): ``x @ w``, ``x @ w.T``, ``x.T @ w`` (the transposes are
inside the jitted function, so they are dimension numbers, not copies), a batched product
``[16, n/4, n/4] @ [16, n/4, n/4]``, a matrix-vector product ``[n, n] @ [n]``, a vector-matrix product
``[n] @ [n, n]``, and 16 chained matrix-vector products ``v = A @ v / √n`` (one jitted call; NumPy runs the
same 16 products in Python): the product's own time with the call's overhead shared.

Each figure is a call waited for with ``block_until_ready`` after two warm-up calls. Because the machine is
shared, cranax and NumPy are timed in alternating rounds (so both see the same load) and both the minimum and
the median of all samples are reported; ratios are cranax's time over NumPy's (below 1 is faster). JAX runs
in a subprocess (this file with ``--worker jax``) over the same cases and inputs. The header names the CPU,
its vector ISA, ``CRANAX_CPU_BLOCK_MATH`` and the load average before and after.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def cases(sizes, dtypes):
    """(name, dtype, operand shapes, fn(x, w) on any array module, flops)."""
    out = []
    for n in sizes:
        for dt in dtypes:
            sq = [(n, n), (n, n)]
            out.append((f"x @ w, {n}²", dt, sq, lambda x, w: x @ w, 2.0 * n ** 3))
            out.append((f"x @ w.T, {n}²", dt, sq, lambda x, w: x @ w.T, 2.0 * n ** 3))
            out.append((f"x.T @ w, {n}²", dt, sq, lambda x, w: x.T @ w, 2.0 * n ** 3))
            q = max(1, n // 4)
            out.append((f"[16,{q},{q}] @ [16,{q},{q}]", dt, [(16, q, q), (16, q, q)], lambda x, w: x @ w,
                        2.0 * 16 * q ** 3))
            out.append((f"[{n},{n}] @ [{n}]", dt, [(n, n), (n,)], lambda x, w: x @ w, 2.0 * n * n))
            out.append((f"[{n}] @ [{n},{n}]", dt, [(n,), (n, n)], lambda x, w: x @ w, 2.0 * n * n))
            out.append((f"[{n},{n}] @ [{n}], 16 chained", dt, [(n, n), (n,)], _chain(n), 16 * 2.0 * n * n))
    return out


def _chain(n, steps=16):
    """``v = A @ v / √n`` repeated (a power iteration's products without the norm; the scale keeps ``v``
    bounded for a Gaussian ``A``): per-product time once a call's overhead is shared by 16 products."""
    s = 1.0 / n ** 0.5

    def f(a, v):
        for _ in range(steps):
            v = (a @ v) * v.dtype.type(s)
        return v
    return f


def inputs(shapes, dt, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dt) for s in shapes]


def samples(fn, runs, budget):
    """Times of up to ``runs`` calls of ``fn`` (it waits for its result) within about ``budget`` seconds
    (at least 2), after 2 warm-up calls (1 when a call takes over half a second)."""
    t = time.perf_counter()
    fn()
    if time.perf_counter() - t < 0.5:
        fn()
    ts = []
    t_end = time.perf_counter() + budget
    while len(ts) < runs and (len(ts) < 2 or time.perf_counter() < t_end):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return ts


def worker(lib, sizes, dtypes, runs, budget, rounds, only):
    """Times every case (whose name contains ``only``) with ``lib`` ("jax") and prints one JSON line
    {"version": ..., "times": {case key: [seconds...]}}."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)  # float64 cases stay float64
    res = {"version": jax.__version__, "times": {}}
    for i, (name, dt, shapes, fn, _) in enumerate(cases(sizes, dtypes)):
        if only and only not in name:
            continue
        args = [jnp.asarray(a) for a in inputs(shapes, dt, i)]
        f = jax.jit(fn)
        ts = []
        for _ in range(rounds):
            ts += samples(lambda: f(*args).block_until_ready(), runs, budget)
        res["times"][f"{name}|{dt}"] = ts
    print(json.dumps(res))


def jax_times(sizes, dtypes, runs, budget, rounds, only):
    py = os.environ.get("JAX_PYTHON")
    if not py:
        if os.path.exists("/tmp/jaxvenv/bin/python"):
            py = "/tmp/jaxvenv/bin/python"
        else:
            try:
                import jax  # noqa: F401
                py = sys.executable
            except Exception:
                return None
    cmd = [py, os.path.abspath(__file__), "--worker", "jax", "--sizes", ",".join(map(str, sizes)),
           "--dtypes", ",".join(dtypes), "--reps", str(runs), "--budget", str(budget), "--rounds", str(rounds), "--only", only]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except Exception as e:  # pragma: no cover
        print(f"(JAX not measured: {e})", file=sys.stderr)
        return None


def isa_line():
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    isa = "AVX-512" if " avx512f" in flags else "AVX2+FMA" if " avx2" in flags and " fma" in flags else "other"
    env = ", ".join(f"{k}={os.environ.get(k, 'default')}"
                    for k in ("CRANAX_CPU_BLOCK_MATH", "CRANAX_NUM_THREADS", "OPENBLAS_NUM_THREADS"))
    return f"{isa}, {env}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="256,1024,2048,3000")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--reps", type=int, default=5, help="samples per round and library")
    ap.add_argument("--rounds", type=int, default=2, help="alternating cranax/NumPy rounds")
    ap.add_argument("--budget", type=float, default=3.0, help="seconds per round and library (min 2 samples)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--only", default="", help="run only cases whose name contains this")
    ap.add_argument("--worker", default="")
    a = ap.parse_args(argv)
    sizes = [128, 256] if a.quick else [int(s) for s in a.sizes.split(",")]
    dtypes = a.dtypes.split(",")
    if a.worker:
        return worker(a.worker, sizes, dtypes, a.reps, a.budget, a.rounds, a.only)

    import cranax
    from cranax.bench._timing import machine_line
    cranax.config.update("jax_enable_x64", True)  # float64 cases stay float64 (as in JAX, off by default)

    load0 = os.getloadavg()[0]
    rows = []
    worst = 0.0
    for i, (name, dt, shapes, fn, flops) in enumerate(cases(sizes, dtypes)):
        if a.only and a.only not in name:
            continue
        xs = inputs(shapes, dt, i)
        cx = [cranax.device_put(x) for x in xs]
        f = cranax.jit(fn)
        got = np.asarray(f(*cx))
        assert got.dtype == np.dtype(dt), (name, got.dtype, dt)
        want = fn(*xs)
        ref = fn(*[x.astype(np.float64) for x in xs])
        scale = max(1.0, float(np.max(np.abs(ref))))
        err_c = float(np.max(np.abs(got - ref))) / scale
        err_n = float(np.max(np.abs(want - ref))) / scale
        tc, tn = [], []
        for _ in range(a.rounds):
            tc += samples(lambda: f(*cx).block_until_ready(), a.reps, a.budget)
            tn += samples(lambda: fn(*xs), a.reps, a.budget)
        rows.append((name, dt, flops, tc, tn, err_c, err_n))
        worst = max(worst, min(tc) / min(tn))
        print(f"  {name} {dt}: cranax {min(tc) * 1e3:.3f} ms, NumPy {min(tn) * 1e3:.3f} ms "
              f"({min(tc) / min(tn):.2f}×)", file=sys.stderr, flush=True)
    load1 = os.getloadavg()[0]
    jx = None if a.no_jax else jax_times(sizes, dtypes, a.reps, a.budget, a.rounds, a.only)
    load2 = os.getloadavg()[0]

    print(f"## matmul: cranax jit vs NumPy ({machine_line()}; {isa_line()}; load average {load0:.1f} at start, "
          f"{load1:.1f} after cranax/NumPy, {load2:.1f} after JAX)\n")
    head = "| case | dtype | cranax min / median | NumPy min / median | cranax GFLOP/s (min) | vs NumPy (min, median) |"
    sep = "| --- | --- | ---: | ---: | ---: | ---: |"
    if jx:
        head += f" JAX {jx['version']} min / median | vs JAX (min) |"
        sep += " ---: | ---: |"
    print(head)
    print(sep)
    for name, dt, flops, tc, tn, err_c, err_n in rows:
        mc, dc, mn, dn = min(tc), statistics.median(tc), min(tn), statistics.median(tn)
        line = (f"| {name} | {dt} | {mc * 1e3:.3f} / {dc * 1e3:.3f} ms | {mn * 1e3:.3f} / {dn * 1e3:.3f} ms | "
                f"{flops / mc / 1e9:.1f} | {mc / mn:.2f}×, {dc / dn:.2f}× |")
        if jx:
            tj = jx["times"].get(f"{name}|{dt}")
            if tj:
                line += f" {min(tj) * 1e3:.3f} / {statistics.median(tj) * 1e3:.3f} ms | {mc / min(tj):.2f}× |"
            else:
                line += " - | - |"
        print(line)
    errs = [(r[5], r[6]) for r in rows]
    print(f"\nlargest error vs the float64 product, relative to max |result|: cranax "
          f"{max(e[0] for e in errs):.1e}, NumPy {max(e[1] for e in errs):.1e}; worst min-time ratio vs NumPy "
          f"{worst:.2f}×")


if __name__ == "__main__":
    main()
