"""``jnp.dot(x, x.T)`` for a 3000×3000 float32 ``x`` (the seed's benchmark): cranax vs NumPy, and JAX when
importable — from a device array and from a NumPy array (transfer included).

    python benches/bench_linalg.py            # n = 3000, median of 7 runs after warm-up
    python benches/bench_linalg.py --quick    # n = 500, smoke test
    JAX_PYTHON=/path/to/venv/bin/python python benches/bench_linalg.py   # JAX measured in that interpreter

Each figure is the median wall time of a call waited for with ``block_until_ready`` (NumPy is synchronous).
GFLOP/s counts 2·n³ flops. cranax runs the product through the ``gemm`` crate (rayon threads); the
transpose is folded into the gemm's strides (no copy), and ``jit`` of the same function is reported too.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import cranax
import cranax.numpy as jnp
from cranax.bench._timing import call_times, machine_line


def median_time(fn, runs, warmup=2):
    ts = call_times(fn, runs, warmup)
    return statistics.median(ts)


_JAX_SNIPPET = r"""
import json, os, statistics, sys, time
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np, jax, jax.numpy as jnp
n, runs = int(sys.argv[1]), int(sys.argv[2])
x_np = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
x = jnp.asarray(x_np)
def med(fn):
    for _ in range(2): fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)
dev = med(lambda: jnp.dot(x, x.T).block_until_ready())
host = med(lambda: jnp.dot(x_np, x_np.T).block_until_ready())
f = jax.jit(lambda a: jnp.dot(a, a.T))
jit = med(lambda: f(x).block_until_ready())
print(json.dumps({"version": jax.__version__, "dev": dev, "host": host, "jit": jit}))
"""


def jax_times(n, runs):
    py = os.environ.get("JAX_PYTHON")
    if not py:
        try:
            import jax  # noqa: F401
            py = sys.executable
        except Exception:
            return None
    try:
        out = subprocess.run([py, "-c", _JAX_SNIPPET, str(n), str(runs)], capture_output=True, text=True,
                             timeout=900, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except Exception as e:  # pragma: no cover
        print(f"(JAX not measured: {e})", file=sys.stderr)
        return None


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args(argv)
    n = 500 if a.quick else a.n
    runs = 3 if a.quick else a.runs
    flops = 2.0 * n ** 3
    x_np = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    x = jnp.asarray(x_np)
    rows = []

    t0 = time.perf_counter()
    first = jnp.dot(x, x.T).block_until_ready()
    t_first = time.perf_counter() - t0
    err = float(np.max(np.abs(np.asarray(first) - x_np @ x_np.T)) / max(1.0, float(np.max(np.abs(x_np @ x_np.T)))))
    dev = median_time(lambda: jnp.dot(x, x.T).block_until_ready(), runs)
    rows.append(("cranax jnp.dot(x, x.T), device array", dev, f"first call {t_first * 1e3:.0f} ms"))
    host = median_time(lambda: jnp.dot(x_np, x_np.T).block_until_ready(), runs)
    rows.append(("cranax jnp.dot(x, x.T), NumPy array in", host, "transfer included"))
    f = cranax.jit(lambda a: jnp.dot(a, a.T))
    jit = median_time(lambda: f(x).block_until_ready(), runs)
    rows.append(("cranax jit(lambda a: jnp.dot(a, a.T))", jit, ""))
    npt = median_time(lambda: x_np @ x_np.T, runs)
    rows.append(("NumPy x @ x.T", npt, f"numpy {np.__version__}"))
    jx = jax_times(n, runs)
    if jx:
        rows.append(("JAX jnp.dot(x, x.T), device array", jx["dev"], f"jax {jx['version']}"))
        rows.append(("JAX jnp.dot(x, x.T), NumPy array in", jx["host"], ""))
        rows.append(("JAX jit", jx["jit"], ""))

    print(f"## jnp.dot(x, x.T), x: float32[{n},{n}]  ({machine_line()})\n")
    print("| what | median | GFLOP/s | vs NumPy | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, t, note in rows:
        print(f"| {name} | {t * 1e3:.1f} ms | {flops / t / 1e9:.0f} | {t / npt:.2f}× | {note} |")
    print(f"\nmax relative difference from NumPy: {err:.1e}")


if __name__ == "__main__":
    main()
