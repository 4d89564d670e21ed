"""Control-flow figures (issue 6): compile time of a fori_loop with 10 and 10,000 iterations (must be equal
within noise: loops are not unrolled), compile time of a scan whose body has 75 and 300 ops, steady state of
a 1,000-step scan RNN cell (hidden 128) and of the seed's g(x, n) while loop. JAX is measured in the same
process when ``import jax`` works.

    python benches/bench_control_flow.py [--markdown]
"""
import statistics
import sys
import time

import numpy as np

from bench_programs import scan_rnn
from cranax.bench._timing import call_times


def median_time(fn, n=15, warmup=2):
    return statistics.median(call_times(fn, n, warmup))


def fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def figures(jax, jnp, lax, clear):
    out = {}

    def compile_time(make, arg):
        ts = []
        for _ in range(5):
            clear()
            lo = jax.jit(make()).lower(arg)
            t = time.perf_counter()
            lo.compile()
            ts.append(time.perf_counter() - t)
        return statistics.median(ts)

    x16 = jnp.ones(16)
    for n in (10, 10_000):
        out[f"fori_loop compile, {n} iterations"] = compile_time(
            lambda: (lambda x: lax.fori_loop(0, n, lambda i, c: c * 1.01 + jnp.sin(c), x)), x16)

    def body(nops):
        def f(c, x):
            for _ in range(nops // 3):
                c = jnp.sin(c) * 1.01 + x
            return c, c
        return f
    xs4 = jnp.ones((10, 4))
    for nops in (75, 300):
        out[f"scan compile, body of {nops} ops"] = compile_time(
            lambda: (lambda xs: lax.scan(body(nops), jnp.zeros(4), xs)), xs4)

    rng = np.random.default_rng(0)
    H = 128
    W = rng.standard_normal((H, H)).astype(np.float32) * 0.1
    U = rng.standard_normal((H, H)).astype(np.float32) * 0.1
    xs = rng.standard_normal((1000, H)).astype(np.float32)
    rnn, args = scan_rnn(jax, jnp, lax, W, U, xs)   # one definition, shared with bench_programs.py
    out["scan RNN cell, 1000 steps, hidden 128 (steady)"] = median_time(
        lambda: rnn(*args)[0].block_until_ready())

    @jax.jit
    def g(x, n):
        return x + lax.while_loop(lambda i: i < n, lambda i: i + 1, 0)
    out["g(x, n) while_loop, n = 20 (steady)"] = median_time(lambda: g(10, 20).block_until_ready(), n=51)
    out["g(x, n) while_loop, n = 1,000,000 (steady)"] = median_time(
        lambda: g(10, 1_000_000).block_until_ready())
    return out


def main():
    import cranax
    import cranax.numpy as cjnp
    from cranax import lax as clax
    res = {"cranax": figures(cranax, cjnp, clax, cranax.clear_caches)}
    try:
        import jax
        import jax.numpy as jjnp
        from jax import lax as jlax
        res["jax"] = figures(jax, jjnp, jlax, jax.clear_caches)
    except ImportError:
        res["jax"] = None
    rows = list(res["cranax"])
    md = "--markdown" in sys.argv
    if md:
        print("| figure | cranax | JAX | cranax / JAX |\n|---|---:|---:|---:|")
    for r in rows:
        c = res["cranax"][r]
        j = res["jax"][r] if res["jax"] else None
        ratio = f"{c / j:.3g}x" if j else "-"
        if md:
            print(f"| {r} | {fmt(c)} | {fmt(j)} | {ratio} |")
        else:
            print(f"{r:50s} {fmt(c):>12s} {fmt(j):>12s} {ratio:>8s}")
    if res["jax"] is None:
        print("\n(JAX is not installed here: JAX column empty)")


if __name__ == "__main__":
    main()
