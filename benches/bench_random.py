"""``random.normal(key, (3000, 3000))`` steady state: cranax vs NumPy (and JAX when importable).

    python benches/bench_random.py            # median of 10 runs after warm-up
    python benches/bench_random.py --quick    # smaller shape, fewer runs (smoke test)

Each figure is the median wall time of a call waited for with ``block_until_ready`` (NumPy is synchronous).
NumPy's generator is a different algorithm (PCG64 + ziggurat), shown for scale only. JAX, when installed in
the running interpreter, is measured in the same process; its results are also compared bit for bit.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

import cranax
from cranax import random
from cranax.bench._timing import call_times

try:  # optional
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
except Exception:  # pragma: no cover
    jax = None


def median_time(fn, runs, warmup=2):
    ts = call_times(fn, runs, warmup)
    return statistics.median(ts)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args(argv)
    n = 500 if a.quick else a.n
    runs = 3 if a.quick else a.runs
    shape = (n, n)
    rows = []

    key = random.PRNGKey(0)
    t0 = time.perf_counter()
    first = random.normal(key, shape).block_until_ready()
    t_first = time.perf_counter() - t0
    t_cx = median_time(lambda: random.normal(key, shape).block_until_ready(), runs)
    rows.append(("cranax random.normal", t_cx, f"first call {t_first * 1e3:.1f} ms"))
    u_cx = median_time(lambda: random.uniform(key, shape).block_until_ready(), runs)
    rows.append(("cranax random.uniform", u_cx, ""))
    b_cx = median_time(lambda: random.bits(key, shape).block_until_ready(), runs)
    rows.append(("cranax random.bits", b_cx, ""))

    u_first = np.asarray(random.uniform(key, shape))
    b_first = np.asarray(random.bits(key, shape))

    rng = np.random.default_rng(0)
    t_np = median_time(lambda: rng.standard_normal(shape, dtype=np.float32), runs)
    rows.append(("numpy standard_normal (f32)", t_np, "different algorithm"))

    if jax is not None:
        jkey = jax.random.PRNGKey(0)
        t_jx = median_time(lambda: jax.random.normal(jkey, shape).block_until_ready(), runs)
        same = np.array_equal(np.asarray(jax.random.normal(jkey, shape)), np.asarray(first))
        rows.append((f"jax {jax.__version__} random.normal", t_jx, f"bit-identical to cranax: {same}"))
        u_jx = median_time(lambda: jax.random.uniform(jkey, shape).block_until_ready(), runs)
        same = np.array_equal(np.asarray(jax.random.uniform(jkey, shape)), u_first)
        rows.append(("jax random.uniform", u_jx, f"bit-identical to cranax: {same}"))
        b_jx = median_time(lambda: jax.random.bits(jkey, shape).block_until_ready(), runs)
        same = np.array_equal(np.asarray(jax.random.bits(jkey, shape)), b_first)
        rows.append(("jax random.bits", b_jx, f"bit-identical to cranax: {same}"))

    print(f"# random.normal(key, {shape}) steady state (median of {runs}), {cranax.default_backend()} "
          f"backend, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print()
    print("| what | time (ms) | vs cranax normal | note |")
    print("|---|---:|---:|---|")
    for name, t, note in rows:
        print(f"| {name} | {t * 1e3:.2f} | {t / t_cx:.2f}x | {note} |")


if __name__ == "__main__":
    main()
