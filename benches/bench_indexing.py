"""Point gathers and scatters (``x[i]``, ``take``, ``x[i, j]``, ``take_along_axis``, ``.at[i].add``),
``nonzero(size=)``, ``searchsorted`` of 1e6 float32 and a ``fori_loop`` of 1e4 point scatters into a carry, each jitted, steady state (median of 7 after 2 warm-ups, each call waited with
``block_until_ready()``), against NumPy and JAX. JAX runs in the interpreter named by ``JAX_PYTHON`` (a
subprocess running this file with ``--lib jax``). Prints the machine's load and both libraries' times.

    JAX_PYTHON=/path/to/jax-venv/bin/python python benches/bench_indexing.py
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N = 1_000_000
LOOP = 10_000


def median_time(fn, runs=7, warmup=2):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def inputs():
    v = np.random.RandomState(1).rand(N).astype(np.float32)
    i = np.random.RandomState(2).randint(0, N, N).astype(np.int32)
    return v, i, np.sort(i), np.sort(v), v.reshape(1000, 1000)


def figures(lib):
    if lib == "jax":
        import jax
        import jax.numpy as jnp
    else:
        import cranax as jax
        import cranax.numpy as jnp
    v, i, si, a, m = (jnp.asarray(t) for t in inputs())
    cases = {
        "take(x, i) random 1e6": (jax.jit(lambda x, i: jnp.take(x, i)), (v, i)),
        "x[i] clip, random 1e6": (jax.jit(lambda x, i: jnp.take(x, i, mode="clip")), (v, i)),
        "x[i] clip, sorted 1e6": (jax.jit(lambda x, i: jnp.take(x, i, mode="clip")), (v, si)),
        "x[i % 1000, i // 1000] 1e6 of 1000x1000": (jax.jit(lambda m, i: m[i % 1000, i // 1000]), (m, i)),
        "take_along_axis 1000x1000, axis 1": (
            jax.jit(lambda m, i: jnp.take_along_axis(m, i.reshape(1000, 1000) % 1000, axis=1)), (m, i)),
        "x.at[i].add(1) 1e6": (jax.jit(lambda x, i: x.at[i].add(1.0)), (v, i)),
        "nonzero(x > 0.5, size=5e5)": (jax.jit(lambda x: jnp.nonzero(x > 0.5, size=N // 2)[0]), (v,)),
        "searchsorted 1e6 in 1e6": (jax.jit(lambda a, x: jnp.searchsorted(a, x)), (a, v)),
        # a carry updated by point scatters, one per iteration (XLA writes it in place)
        "fori_loop 1e4 x.at[i[k]].add(1) on 1e5": (jax.jit(lambda x, i: jax.lax.fori_loop(
            0, LOOP, lambda k, x: x.at[i[k]].add(1.0), x)), (v[:N // 10], i[:LOOP] % (N // 10))),
    }
    return {name: median_time(lambda: f(*args).block_until_ready()) for name, (f, args) in cases.items()}


def numpy_figures():
    v, i, si, a, m = inputs()
    def add():
        x = v.copy()
        np.add.at(x, i, 1.0)
    return {"take(x, i) random 1e6": median_time(lambda: np.take(v, i)),
            "x[i] clip, random 1e6": median_time(lambda: np.take(v, i, mode="clip")),
            "x[i] clip, sorted 1e6": median_time(lambda: np.take(v, si, mode="clip")),
            "x[i % 1000, i // 1000] 1e6 of 1000x1000": median_time(lambda: m[i % 1000, i // 1000]),
            "take_along_axis 1000x1000, axis 1": median_time(
                lambda: np.take_along_axis(m, i.reshape(1000, 1000) % 1000, axis=1)),
            "x.at[i].add(1) 1e6": median_time(add),
            "nonzero(x > 0.5, size=5e5)": median_time(lambda: np.nonzero(v > 0.5)[0][:N // 2]),
            "searchsorted 1e6 in 1e6": median_time(lambda: np.searchsorted(a, v)),
            "fori_loop 1e4 x.at[i[k]].add(1) on 1e5": median_time(lambda: loop_add(v[:N // 10], i[:LOOP] % (N // 10)))}


def loop_add(x, i):
    x = x.copy()
    for k in i:
        x[k] += np.float32(1.0)
    return x


def fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def main():
    if "--lib" in sys.argv:
        print(json.dumps(figures(sys.argv[sys.argv.index("--lib") + 1])))
        return
    print(f"load average {os.getloadavg()[0]:.2f}, CRANAX_CPU_BLOCK_MATH={os.environ.get('CRANAX_CPU_BLOCK_MATH', '(default)')}")
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
