"""Scientific figures (issue 22), special-function part: ``gammaln``, ``digamma``, ``erfinv`` and ``ndtri`` on
1e6 float32 values under ``jit``, against SciPy (float64 evaluation of the same inputs, the accuracy oracle
too) and JAX (measured in a subprocess of the same run when ``JAX_PYTHON`` names an interpreter with jax).

    JAX_PYTHON=/path/to/jax-venv/bin/python python benches/bench_scientific.py [--markdown]

Medians of 9 calls after 2 warm-ups, each waited with ``block_until_ready()``; max relative error is
against SciPy in float64.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import scipy.special as sc

N = 1_000_000
# (name, scipy oracle, input range)
FUNCS = [("gammaln", sc.gammaln, (0.1, 50.0)), ("digamma", sc.digamma, (0.1, 50.0)),
         ("erfinv", sc.erfinv, (-0.999, 0.999)), ("ndtri", sc.ndtri, (1e-6, 1 - 1e-6))]


def inputs():
    rng = np.random.default_rng(0)
    return {name: rng.uniform(lo, hi, N).astype(np.float32) for name, _, (lo, hi) in FUNCS}


_JAX_SNIPPET = r"""
import json, sys, time, statistics
import numpy as np
import jax, jax.numpy as jnp, jax.scipy.special as S
rng = np.random.default_rng(0)
ranges = json.loads(sys.argv[1])
out = {}
for name, (lo, hi) in ranges.items():
    x = jax.device_put(rng.uniform(lo, hi, %d).astype(np.float32))
    f = jax.jit(getattr(S, name))
    for _ in range(2):
        f(x).block_until_ready()
    ts = []
    for _ in range(9):
        t = time.perf_counter(); f(x).block_until_ready(); ts.append(time.perf_counter() - t)
    out[name] = statistics.median(ts)
print(json.dumps(out))
""" % N


def jax_times():
    py = os.environ.get("JAX_PYTHON")
    if not py:
        return None
    ranges = {name: r for name, _, r in FUNCS}
    res = subprocess.run([py, "-c", _JAX_SNIPPET, json.dumps(ranges)], capture_output=True, text=True,
                         timeout=600)
    if res.returncode != 0:
        print(res.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def median(fn, runs=9, warmup=2):
    import time
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def fmt(s):
    return "-" if s is None else (f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    import cranax
    import cranax.scipy.special as S
    xs = inputs()
    jt = jax_times() or {}
    rows = []
    for name, ref, _ in FUNCS:
        x = cranax.device_put(xs[name])
        f = cranax.jit(getattr(S, name))
        t = median(lambda: f(x).block_until_ready())
        x64 = xs[name].astype(np.float64)
        ts = median(lambda: ref(x64), runs=5, warmup=1)
        want = ref(x64)
        got = np.asarray(f(x)).astype(np.float64)
        err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
        j = jt.get(name)
        rows.append((name, t, j, ts, None if j is None else t / j, err))
    if args.markdown:
        print("| 1e6 float32, jit | cranax | JAX | SciPy (f64) | cranax / JAX | max rel err vs SciPy |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, t, j, ts, ratio, err in rows:
            r = "-" if ratio is None else f"{ratio:.2f}x"
            print(f"| {name} | {fmt(t)} | {fmt(j)} | {fmt(ts)} | {r} | {err:.1e} |")
    else:
        for name, t, j, ts, ratio, err in rows:
            print(f"{name:8s} cranax {fmt(t):>10s}  jax {fmt(j):>10s}  scipy {fmt(ts):>10s}  "
                  f"ratio {'-' if ratio is None else f'{ratio:.2f}x'}  max rel err {err:.1e}")


if __name__ == "__main__":
    main()
