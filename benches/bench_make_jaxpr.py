"""Tracing cost: ``make_jaxpr`` of a 300-op function (jnp ops with literals, as user code writes them),
median of repeated runs in microseconds per trace and per op. Run it once per checkout for an A/B
(``PYTHONPATH=<checkout>/python python benches/bench_make_jaxpr.py``); it prints one line of figures."""
import statistics
import sys
import time

import cranax
import cranax.numpy as jnp

N_OPS = 300


def f(x):
    # 100 rounds of three ops: a unary, a binary with a literal, a binary of two traced values
    y = x
    for _ in range(N_OPS // 3):
        z = jnp.sin(y)
        z = z * 1.5
        y = z + y
    return y


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    x = jnp.ones(8)
    mk = cranax.make_jaxpr(f)
    assert len(mk(x).jaxpr.eqns) == N_OPS
    for _ in range(5):
        mk(x)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        mk(x)
        ts.append(time.perf_counter() - t0)
    med = statistics.median(ts) * 1e6
    print(f"make_jaxpr {N_OPS} ops: median {med:.0f} us/trace, {med / N_OPS:.2f} us/op "
          f"(min {min(ts) * 1e6:.0f} us, {reps} reps) [{cranax.__file__}]")


if __name__ == "__main__":
    main()
