"""Samplers whose tail XLA:CPU runs in YNNPACK (issue 22): dirichlet and ball, float32 and float64, and f.

    python benches/bench_random_ynn.py            # median of 7 runs after warm-up, per case
    python benches/bench_random_ynn.py --quick    # smaller sizes

Cases: ``random.dirichlet`` with alpha = [0.5, 1, 3] and ``random.ball(d=3, p=2)`` of 66666 draws (the
bench survey's size: YNNPACK's exp/log/log1p and row sum), ``random.f(3, 5)`` of 2e5 float64. Run it with
``CRANAX_CPU_BLOCK_MATH=avx2`` too.
"""
import argparse
import statistics

import numpy as np

import cranax
from cranax import random
from cranax.bench._timing import timeit_once


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args(argv)
    cranax.config.update("jax_enable_x64", True)
    n = 6_666 if a.quick else 66_666
    # a fresh key per call (a repeated call on the same arrays could be answered from a cache)
    keys = iter([random.PRNGKey(i) for i in range(8 * a.runs + 32)])
    cases = {}
    for dt in ("float32", "float64"):
        alpha = np.array([0.5, 1.0, 3.0], dt)
        dirichlet = cranax.jit(lambda k, al=alpha, dt=dt: random.dirichlet(k, al, (n,), dt))
        ball = cranax.jit(lambda k, dt=dt: random.ball(k, 3, 2, (n,), dt))
        cases[f"dirichlet {dt} {n}x3"] = lambda f=dirichlet: f(next(keys))
        cases[f"ball {dt} {n}x3"] = lambda f=ball: f(next(keys))
    f = cranax.jit(lambda k: random.f(k, 3.0, 5.0, (3 * n,), "float64"))
    cases[f"f float64 {3 * n}"] = lambda: f(next(keys))
    for name, fn in cases.items():
        for _ in range(2):
            fn().block_until_ready()
        t = statistics.median(timeit_once(fn)[0] for _ in range(a.runs))
        print(f"{name:26s} {t * 1e3:9.2f} ms")


if __name__ == "__main__":
    main()
