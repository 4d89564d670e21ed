"""Random-distribution and statistics figures (issue 22): ``random.gamma`` and ``random.poisson`` of 1e6
samples, ``jnp.median`` and ``jnp.unique(size=)`` of 1e6 float32, each jitted, steady state (median of 7
after 2 warm-ups, each call waited with ``block_until_ready()``), against NumPy and JAX. JAX runs in the
interpreter named by ``JAX_PYTHON`` (a subprocess running this file with ``--lib jax``).

    JAX_PYTHON=/path/to/jax-venv/bin/python python benches/bench_random_stats.py [--markdown]
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N = 1_000_000


def median_time(fn, runs=7, warmup=2):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def figures(lib):
    if lib == "jax":
        import jax
        import jax.numpy as jnp
    else:
        import cranax as jax
        import cranax.numpy as jnp
    key = jax.random.PRNGKey(0)
    x = jnp.asarray(np.random.default_rng(0).standard_normal(N).astype(np.float32))
    xi = jnp.asarray(np.random.default_rng(1).integers(0, 1000, N).astype(np.int32))
    cases = {
        "random.gamma(a=2.5) 1e6": (jax.jit(lambda k: jax.random.gamma(k, 2.5, (N,))), key),
        "random.poisson(lam=4) 1e6": (jax.jit(lambda k: jax.random.poisson(k, 4.0, (N,))), key),
        "random.poisson(lam=40) 1e6": (jax.jit(lambda k: jax.random.poisson(k, 40.0, (N,))), key),
        "jnp.median 1e6 f32": (jax.jit(jnp.median), x),
        "jnp.unique(size=1000) 1e6 int32": (jax.jit(lambda v: jnp.unique(v, size=1000)), xi),
    }
    out = {}
    for name, (f, arg) in cases.items():
        out[name] = median_time(lambda: f(arg).block_until_ready())
    return out


def numpy_figures():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    xi = np.random.default_rng(1).integers(0, 1000, N).astype(np.int32)
    return {"random.gamma(a=2.5) 1e6": median_time(lambda: rng.standard_gamma(2.5, N).astype(np.float32)),
            "random.poisson(lam=4) 1e6": median_time(lambda: rng.poisson(4.0, N)),
            "random.poisson(lam=40) 1e6": median_time(lambda: rng.poisson(40.0, N)),
            "jnp.median 1e6 f32": median_time(lambda: np.median(x)),
            "jnp.unique(size=1000) 1e6 int32": median_time(lambda: np.unique(xi))}


def fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def main():
    if "--lib" in sys.argv:
        print(json.dumps(figures(sys.argv[sys.argv.index("--lib") + 1])))
        return
    cr = figures("cranax")
    jx = {}
    py = os.environ.get("JAX_PYTHON")
    if py:
        r = subprocess.run([py, os.path.abspath(__file__), "--lib", "jax"], capture_output=True, text=True,
                           cwd="/tmp")
        jx = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {}
        if r.returncode:
            print(r.stderr[-2000:], file=sys.stderr)
    nps = numpy_figures()
    print("| figure | cranax | JAX | NumPy | cranax / JAX |")
    print("|---|---:|---:|---:|---:|")
    for k, v in cr.items():
        j = jx.get(k)
        ratio = f"{v / j:.2f}x" if j else "-"
        print(f"| {k} | {fmt(v)} | {fmt(j)} | {fmt(nps.get(k))} | {ratio} |")


if __name__ == "__main__":
    main()
