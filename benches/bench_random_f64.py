"""float64 sampler and elementwise costs under ``jax_enable_x64`` (issue 22's bit-exact f64 path).

    python benches/bench_random_f64.py            # median of 7 runs after warm-up, per case
    python benches/bench_random_f64.py --quick    # smaller sizes

Cases: ``random.normal`` of 1e6 float64 (threefry + XLA's Giles f64 erf_inv), ``random.gamma`` of 1e5
float64 (Marsaglia-Tsang with the emulated f64 fma and XLA's rsqrt), ``jnp.exp`` and ``jnp.log1p`` of 1e6
float64. Run it with ``CRANAX_CPU_BLOCK_MATH=avx2`` too (f64 math is scalar calls in every mode).
"""
import argparse
import statistics

import numpy as np

import cranax
from cranax import random
import cranax.numpy as jnp
from cranax.bench._timing import timeit_once


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args(argv)
    cranax.config.update("jax_enable_x64", True)
    n = 100_000 if a.quick else 1_000_000
    # a fresh key per call (a repeated call on the same arrays could be answered from a cache)
    keys = iter([random.PRNGKey(i) for i in range(4 * a.runs + 16)])
    x = np.linspace(-5.0, 5.0, n)
    exp = cranax.jit(jnp.exp)
    log1p = cranax.jit(jnp.log1p)
    normal = cranax.jit(lambda k: random.normal(k, (n,), "float64"))
    gamma = cranax.jit(lambda k: random.gamma(k, 2.5, (n // 10,), "float64"))
    cases = {
        f"normal f64 {n:.0e}": lambda: normal(next(keys)),
        f"gamma(2.5) f64 {n // 10:.0e}": lambda: gamma(next(keys)),
        f"exp f64 {n:.0e}": lambda: exp(x),
        f"log1p f64 {n:.0e}": lambda: log1p(x + 5.5),
    }
    for name, fn in cases.items():
        for _ in range(2):
            fn().block_until_ready()
        t = statistics.median(timeit_once(fn)[0] for _ in range(a.runs))
        print(f"{name:26s} {t * 1e3:9.2f} ms")


if __name__ == "__main__":
    main()
