"""Loop overhead per iteration (issue 23, item 1), cranax vs JAX in the same run.

Cases: a `while_loop` over an f32[4] carry plus counter; the same over f32[1000] with `tanh` and `sin` in the
body; a `fori_loop` (static bounds) whose body is a small product `tanh(a @ w)` on f32[32, 32]; `fori_loop`s
updating or reading a f32[1e5] array at points and windows (`x.at[i[k]].add`, `.set`, `dynamic_slice`, a
recurrence `y.at[k+1].set(y[k] * a + b)`) and a scan writing rows with `dynamic_update_slice`; loops whose
big carry is also read whole by products (a column set into V f32[500, 32] then `V.T @ w`, gmres's Arnoldi
step; a power iteration on f32[500, 500]) and whole `gmres` solves (100 and 500 unknowns, restart 20, the
time of one solve); a 1,000-step scan RNN cell, hidden 128; an elementwise update ``x = x * 0.99 + 1`` of
an f32[1024 / 8192 / 32768] carry over 2,000 steps (min and median rows). Per-iteration times of the loops come from two trip counts (the difference of the
medians over the difference of the counts: the call's own overhead cancels); the RNN's is its median / 1000.
JAX runs the same cases in a subprocess of ``JAX_PYTHON`` (default /tmp/jaxvenv/bin/python, skipped when
absent). The table names the CPU, ``CRANAX_CPU_BLOCK_MATH`` and the load.

    python benches/bench_loops.py [--quick]
"""
import argparse
import importlib
import json
import os
import subprocess
import sys

import statistics
import time

import numpy as np


def median_time(fn, budget=1.0, warmup=3):
    """Median seconds per call of ``fn`` (which waits for its result), samples of at least ~1 ms.
    (Here rather than ``cranax.bench._timing`` so the JAX child needs no cranax.)"""
    return min_median_time(fn, budget, warmup)[1]


def min_median_time(fn, budget=1.0, warmup=3):
    """(min, median) seconds per call of ``fn``, as ``median_time`` samples them."""
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-9)
    inner = max(1, min(1000, int(1e-3 / one)))
    ts = []
    for _ in range(max(5, min(51, int(budget / (one * inner))))):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t) / inner)
    return min(ts), statistics.median(ts)


def cases(jax, jnp, lax, quick):
    out = {}
    scale = 10 if quick else 1

    def per_iter(make, args_for, n1, n2):
        t = []
        for n in (n1, n2):
            f, args = make(n), args_for(n)
            run = lambda: jax.block_until_ready(f(*args))  # noqa: E731
            t.append(median_time(run, budget=0.3 if quick else 1.0, warmup=3))
        return max(t[1] - t[0], 0.0) / (n2 - n1)

    def while_case(size, body):
        def make(_):
            return jax.jit(lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, body(c[1])), (0, x)))
        x = jnp.asarray(np.linspace(-1, 1, size).astype(np.float32))
        return make, lambda n: (x, n)

    m, a = while_case(4, lambda v: v * 0.999 + 0.5)
    out["while_loop, f32[4] carry + counter"] = per_iter(m, a, 1_000, 1_000 + 200_000 // scale)
    m, a = while_case(1000, lambda v: jnp.tanh(v) * 0.5 + jnp.sin(v) * 0.25)
    out["while_loop, f32[1000] carry, tanh + sin"] = per_iter(m, a, 10, 10 + 4_000 // scale)

    # an elementwise update of a cache-resident carry: the kernel's stores bound it (`wide.rs`); per step
    # by min and by median
    for size in (1024, 8192, 32768):
        xe = jnp.asarray(np.linspace(-1, 1, size).astype(np.float32))
        t = []
        for n in (200, 200 + 2_000 // scale):
            f = jax.jit(lambda x, n=n: lax.fori_loop(0, n, lambda i, c: c * 0.99 + 1, x))
            t.append(min_median_time(lambda: jax.block_until_ready(f(xe)), budget=0.3 if quick else 1.0))
        for j, stat in enumerate(("min", "median")):
            out[f"fori_loop, x = x * 0.99 + 1 on f32[{size}] ({stat})"] = max(t[1][j] - t[0][j], 0.0) / (2_000 // scale)

    rng = np.random.default_rng(0)
    w32 = jnp.asarray((rng.standard_normal((32, 32)) * 0.2).astype(np.float32))
    a32 = jnp.asarray(rng.standard_normal((32, 32)).astype(np.float32))

    def fori_make(n):
        return jax.jit(lambda a, w: lax.fori_loop(0, n, lambda i, c: jnp.tanh(c @ w), a))
    out["fori_loop, tanh(a @ w) on f32[32, 32]"] = per_iter(fori_make, lambda n: (a32, w32), 10, 10 + 4_000 // scale)

    # point and window updates of a big carry (XLA updates its loop buffer in place)
    xb = jnp.asarray(rng.standard_normal(100_000).astype(np.float32))
    ib = jnp.asarray(rng.integers(0, 100_000, 40_000).astype(np.int32))
    m2 = jnp.asarray(rng.standard_normal((4096, 16)).astype(np.float32))

    def fori(body, *args):
        return lambda n: jax.jit(lambda *a: lax.fori_loop(0, n, lambda k, c: body(k, c, *a[1:]), a[0])), \
            lambda n: args
    m, a = fori(lambda k, x, i: x.at[i[k]].add(1.0), xb, ib)
    out["fori_loop, x.at[i[k]].add(1) on f32[1e5]"] = per_iter(m, a, 1_000, 1_000 + 40_000 // scale)
    m, a = fori(lambda k, x, i: x.at[i[k]].set(k.astype(jnp.float32) * 0.5), xb, ib)
    out["fori_loop, x.at[i[k]].set(k / 2) on f32[1e5]"] = per_iter(m, a, 1_000, 1_000 + 40_000 // scale)
    m, a = fori(lambda k, c, x: c + lax.dynamic_slice(x, (k * 3,), (8,)), jnp.zeros(8, jnp.float32), xb)
    out["fori_loop, acc + dynamic_slice(x, (3k,), (8,)) of f32[1e5]"] = per_iter(m, a, 1_000, 1_000 + 30_000 // scale)
    m, a = fori(lambda k, y, a: y.at[k + 1].set(y[k] * a + 0.5), xb, jnp.float32(0.999))
    out["fori_loop, y.at[k+1].set(y[k] * a + b) on f32[1e5]"] = per_iter(m, a, 1_000, 1_000 + 40_000 // scale)

    def dus_make(n):
        def body(m, k):
            r = lax.dynamic_slice(m, ((k + 4095) % 4096, 0), (1, 16))
            return lax.dynamic_update_slice(m, jnp.tanh(r) + 0.5, (k % 4096, 0)), None
        return jax.jit(lambda m: lax.scan(body, m, jnp.arange(n, dtype=jnp.int32))[0])
    out["scan, dynamic_update_slice of a row of f32[4096, 16]"] = per_iter(
        dus_make, lambda n: (m2,), 1_000, 1_000 + 20_000 // scale)

    # loops whose big carry is also read whole by products (issue 23: gmres's Arnoldi process)
    def arnoldi(n, m):
        Vm = jnp.asarray(np.zeros((n, m), np.float32))
        w0 = jnp.asarray(rng.standard_normal(n).astype(np.float32))

        def body(k, c):
            V, w = c
            V = V.at[:, k % m].set(w / jnp.linalg.norm(w))
            h = V.T @ w
            return V, w * 0.5 + V[:, 0] * h[0] + 0.1
        return lambda t: jax.jit(lambda V, w: lax.fori_loop(0, t, body, (V, w))), lambda t: (Vm, w0)
    m, a = arnoldi(500, 32)
    out["fori_loop, V.at[:, k].set(w / norm(w)) then V.T @ w, V f32[500, 32]"] = per_iter(m, a, 100, 100 + 2_000 // scale)
    Ap = jnp.asarray((rng.standard_normal((500, 500)) / np.sqrt(500)).astype(np.float32))
    m, a = fori(lambda k, x, A: (A @ x) / jnp.linalg.norm(A @ x), jnp.ones(500, jnp.float32), Ap)
    out["fori_loop, power iteration x = A @ x / norm, A f32[500, 500]"] = per_iter(m, a, 10, 10 + 1_000 // scale)
    spl = importlib.import_module(jax.__name__ + ".scipy.sparse.linalg")
    for n in (100, 500):
        Ag = jnp.asarray((np.eye(n) * 4 + rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32))
        bg = jnp.asarray(rng.standard_normal(n).astype(np.float32))
        g = jax.jit(lambda A, b: spl.gmres(A, b, restart=20, tol=1e-6)[0])
        out[f"gmres f32[{n}, {n}], restart 20, tol 1e-6 (whole solve)"] = median_time(
            lambda: jax.block_until_ready(g(Ag, bg)), budget=0.3 if quick else 1.0)

    H = 128
    W = jnp.asarray((rng.standard_normal((H, H)) * 0.1).astype(np.float32))
    U = jnp.asarray((rng.standard_normal((H, H)) * 0.1).astype(np.float32))
    xs = jnp.asarray(rng.standard_normal((1000, H)).astype(np.float32))

    @jax.jit
    def rnn(W, U, xs):
        def cell(h, x):
            h = jnp.tanh(h @ W + x @ U)
            return h, h
        return lax.scan(cell, jnp.zeros(H, jnp.float32), xs)
    out["scan RNN cell, 1000 steps, hidden 128"] = median_time(
        lambda: jax.block_until_ready(rnn(W, U, xs)), budget=0.3 if quick else 1.0) / 1000
    return out


def measure(lib, quick):
    if lib == "jax":
        import jax
        import jax.numpy as jnp
        from jax import lax
    else:
        import cranax as jax
        import cranax.numpy as jnp
        from cranax import lax
    return cases(jax, jnp, lax, quick)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lib", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.lib:
        print(json.dumps(measure(a.lib, a.quick)))
        return 0
    from cranax.bench._timing import machine_line
    load0 = os.getloadavg()[0]
    res = {"cranax": measure("cranax", a.quick)}
    jax_py = os.environ.get("JAX_PYTHON", "/tmp/jaxvenv/bin/python")
    if os.path.exists(jax_py):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cmd = [jax_py, __file__, "--lib", "jax"] + (["--quick"] if a.quick else [])
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if r.returncode == 0:
            res["jax"] = json.loads(r.stdout.strip().splitlines()[-1])
        else:
            print(f"(JAX run failed: {r.stderr.strip().splitlines()[-1:]})")
    load1 = os.getloadavg()[0]
    print(f"{machine_line()}; CRANAX_CPU_BLOCK_MATH={os.environ.get('CRANAX_CPU_BLOCK_MATH', 'default')}; "
          f"load {load0:.1f} -> {load1:.1f}")
    print("| per iteration | cranax | JAX | cranax / JAX |\n|---|---:|---:|---:|")
    for case, c in res["cranax"].items():
        j = res.get("jax", {}).get(case)
        ratio = f"{c / j:.2f}×" if j else "-"
        js = f"{j * 1e9:,.0f} ns" if j else "-"
        print(f"| {case} | {c * 1e9:,.0f} ns | {js} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
