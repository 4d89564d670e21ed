"""Figures of issue 22 (jnp part): ``jnp.median`` and ``jnp.unique(size=)`` of 1e6 float32 values under
``jit``, cranax against NumPy and JAX (JAX measured in a subprocess of the same run when ``JAX_PYTHON``
names an interpreter with jax; kept out of bench_scientific.py, which h-rand's special functions fill).

    JAX_PYTHON=/tmp/jaxvenv/bin/python python benches/bench_jnp_stats.py

Medians of 7 calls after 2 warm-ups, each waited with ``block_until_ready()``.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N = 1_000_000
SIZE = 1000   # unique(size=): 1e6 values drawn from 1000 distinct ones

_SNIPPET = r"""
import json, statistics, sys, time
import numpy as np
N, SIZE = %d, %d
if sys.argv[1] == "jax":
    import jax, jax.numpy as jnp
else:
    import cranax as jax, cranax.numpy as jnp
rng = np.random.default_rng(0)
x = rng.normal(size=N).astype(np.float32)
u = rng.integers(0, SIZE, N).astype(np.float32)
cases = {"median": (jax.jit(jnp.median), x),
         "unique(size=)": (jax.jit(lambda v: jnp.unique(v, size=SIZE, fill_value=0)), u)}
out = {}
for name, (f, a) in cases.items():
    a = jnp.asarray(a)
    for _ in range(2):
        jax.block_until_ready(f(a))
    ts = []
    for _ in range(7):
        t = time.perf_counter(); jax.block_until_ready(f(a)); ts.append(time.perf_counter() - t)
    out[name] = statistics.median(ts)
print(json.dumps(out))
""" % (N, SIZE)


def run(python, which):
    env = dict(os.environ)
    res = subprocess.run([python, "-c", _SNIPPET, which], capture_output=True, text=True, timeout=900, env=env)
    if res.returncode != 0:
        print(res.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def numpy_times():
    rng = np.random.default_rng(0)
    x = rng.normal(size=N).astype(np.float32)
    u = rng.integers(0, SIZE, N).astype(np.float32)
    out = {}
    for name, f, a in (("median", np.median, x), ("unique(size=)", np.unique, u)):
        ts = []
        for _ in range(7):
            t = time.perf_counter(); f(a); ts.append(time.perf_counter() - t)
        out[name] = statistics.median(ts)
    return out


def fmt(s):
    return "-" if s is None else f"{s * 1e3:.2f} ms"


def main():
    ours = run(sys.executable, "cranax")
    jx = run(os.environ["JAX_PYTHON"], "jax") if os.environ.get("JAX_PYTHON") else None
    npt = numpy_times()
    print("| function (1e6 float32) | cranax | JAX | NumPy | cranax / JAX |")
    print("|---|---|---|---|---|")
    for name in ("median", "unique(size=)"):
        c, j = (ours or {}).get(name), (jx or {}).get(name)
        ratio = f"{c / j:.2f}x" if c and j else "-"
        print(f"| {name} | {fmt(c)} | {fmt(j)} | {fmt(npt[name])} | {ratio} |")


if __name__ == "__main__":
    main()
