"""Row sums, means and products (issue 22): ``jnp.sum``/``jnp.mean`` over the last axis, which XLA:CPU 0.10.2
adds in YNNPACK's order from 4096 elements and in its own below, and ``jnp.prod``, in its own at every size
(cranax follows them: ``loop_plan::SumOrder``).

    python benches/bench_reductions.py                           # cranax (this tree), medians in ms
    python benches/bench_reductions.py --jax /tmp/jaxvenv/bin/python   # and JAX 0.10.2, same cases
    CRANAX_CPU_BLOCK_MATH=avx2 python benches/bench_reductions.py

Each case: the median of ``--runs`` calls after 3 warm-ups, each waited with ``block_until_ready()``; two
inputs alternate. The same snippet times JAX (in a subprocess of the given interpreter).
"""
import argparse
import json
import subprocess
import sys

_SNIPPET = r"""
import json, statistics, sys, time
import numpy as np
if sys.argv[1] == "jax":
    import jax, jax.numpy as jnp
else:
    import cranax as jax, cranax.numpy as jnp
jax.config.update("jax_enable_x64", True)
runs = int(sys.argv[2])
CASES = [
    ("sum f32 1000x1000, axis -1", (1000, 1000), "float32", lambda a: jnp.sum(a, -1)),
    ("mean f32 1000x1000, axis -1", (1000, 1000), "float32", lambda a: jnp.mean(a, -1)),
    ("sum f32 100000x10, axis -1", (100000, 10), "float32", lambda a: jnp.sum(a, -1)),
    ("sum f32 200000x3, axis -1", (200000, 3), "float32", lambda a: jnp.sum(a, -1)),
    ("sum f32 10000x100, axis -1", (10000, 100), "float32", lambda a: jnp.sum(a, -1)),
    ("sum f32 1e6 (one row)", (1000000,), "float32", lambda a: jnp.sum(a)),
    ("sum f32 1000x1000, all axes", (1000, 1000), "float32", lambda a: jnp.sum(a)),
    ("sum(x*x) f32 1000x1000, axis -1", (1000, 1000), "float32", lambda a: jnp.sum(a * a, -1)),
    ("sum f64 1000x1000, axis -1", (1000, 1000), "float64", lambda a: jnp.sum(a, -1)),
    ("sum f32 100x30, axis -1 (XLA's order)", (100, 30), "float32", lambda a: jnp.sum(a, -1)),
    ("sum f32 30x100, axis -1 (XLA's order)", (30, 100), "float32", lambda a: jnp.sum(a, -1)),
    # below 4096 elements over several axes / a leading axis: XLA's windows per axis (``SumOrder::XlaGrid``)
    ("sum f32 40x50, all axes (XLA's windows)", (40, 50), "float32", lambda a: jnp.sum(a)),
    ("sum f64 100x20, axis 0 (XLA's windows)", (100, 20), "float64", lambda a: jnp.sum(a, 0)),
    # products: XLA's loop and windows at every size (inputs near 1: no overflow, no subnormals)
    ("prod f32 1000x1000, axis -1", (1000, 1000), "float32", lambda a: jnp.prod(a, -1)),
    ("prod f64 1000x1000, axis -1", (1000, 1000), "float64", lambda a: jnp.prod(a, -1)),
    ("prod f32 1e6 (one row)", (1000000,), "float32", lambda a: jnp.prod(a)),
    ("prod f32 100000x10, axis -1", (100000, 10), "float32", lambda a: jnp.prod(a, -1)),
    ("prod f32 30x100, axis -1", (30, 100), "float32", lambda a: jnp.prod(a, -1)),
]
rng = np.random.default_rng(0)
out = {}
for name, shape, dt, fn in CASES:
    near1 = name.startswith("prod")
    xs = [jnp.asarray((1 + 1e-3 * rng.standard_normal(shape) if near1 else rng.standard_normal(shape)).astype(dt))
          for _ in range(2)]
    f = jax.jit(fn)
    for i in range(3):
        f(xs[i % 2]).block_until_ready()
    ts = []
    for i in range(runs):
        t = time.perf_counter()
        f(xs[i % 2]).block_until_ready()
        ts.append(time.perf_counter() - t)
    out[name] = 1e3 * statistics.median(ts)
print(json.dumps(out))
"""


def measure(python, which, runs):
    r = subprocess.run([python, "-c", _SNIPPET, which, str(runs)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--jax", help="an interpreter with jax installed: time JAX on the same cases")
    a = ap.parse_args(argv)
    mine = measure(sys.executable, "cranax", a.runs)
    theirs = measure(a.jax, "jax", a.runs) if a.jax else {}
    print(f"{'case':40s} {'cranax ms':>10s}" + (f" {'JAX ms':>8s} {'ratio':>6s}" if theirs else ""))
    for k, v in mine.items():
        line = f"{k:40s} {v:10.3f}"
        if k in theirs:
            line += f" {theirs[k]:8.3f} {v / theirs[k]:6.2f}"
        print(line)


if __name__ == "__main__":
    main()
