"""A long Adam run (issue 23, denormals): the digits MLP of ``examples/digits_mlp.py`` trained for 10,000 jitted
steps; the median step time over the first and the last 1,000 steps. Adam's second moments of gradients that
have died out decay geometrically into the float32 subnormal range after a few thousand steps; a CPU that
computes with subnormals takes a microcode assist per operation on them, so the step slows down (0.85 ms → 4.3
ms before cranax flushed them). With FTZ/DAZ, as XLA's CPU backend runs, the two medians agree.

    python benches/bench_adam_long.py [--steps 10000] [--jax-python /path/to/python-with-jax]

With ``--jax-python`` (or ``JAX_PYTHON``) the same run is made under JAX in a subprocess of that interpreter.
Prints a markdown table with the machine, ISA (``CRANAX_CPU_BLOCK_MATH``) and load.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))


def run(backend, steps, window=1000, batch_size=128):
    import digits_mlp as m
    m.use_backend(backend)
    x_tr, y_tr, _, _ = m.load_data()
    y1h = m.one_hot(y_tr)
    params = m.init_params(m.random.PRNGKey(0), [x_tr.shape[1], 256, 256, 10])
    opt = m.adam_init(params)
    step = m.make_train_step(lr=3e-3)
    rng = np.random.default_rng(0)
    n_batches = len(x_tr) // batch_size
    times = []
    perm = rng.permutation(len(x_tr))
    for s in range(steps + 1):
        b = s % n_batches
        if b == 0:
            perm = rng.permutation(len(x_tr))
        idx = perm[b * batch_size:(b + 1) * batch_size]
        xb, yb = x_tr[idx], y1h[idx]
        t0 = time.perf_counter()
        params, opt, loss = step(params, opt, xb, yb)
        m.jax.block_until_ready(loss)
        times.append(time.perf_counter() - t0)
    times = times[1:]  # the first call compiles
    v = np.concatenate([np.asarray(leaf).ravel() for leaf in m.jax.tree_util.tree_leaves(opt["v"])])
    sub = int(np.count_nonzero((v != 0) & (np.abs(v) < np.finfo(np.float32).tiny)))
    return {"first": statistics.median(times[:window]), "last": statistics.median(times[-window:]),
            "subnormal_moments": sub, "moments": int(v.size), "loss": float(loss)}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10_000)
    ap.add_argument("--jax-python", default=os.environ.get("JAX_PYTHON"))
    ap.add_argument("--child", choices=["jax"], help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(run(a.child, a.steps)))
        return
    rows = [("cranax", run("cranax", a.steps))]
    if a.jax_python:
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        out = subprocess.run([a.jax_python, __file__, "--child", "jax", "--steps", str(a.steps)],
                             capture_output=True, text=True, env=env, check=True).stdout
        rows.append(("jax", json.loads(out.strip().splitlines()[-1])))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"CRANAX_CPU_BLOCK_MATH={os.environ.get('CRANAX_CPU_BLOCK_MATH', 'default')}, load {load:.1f}; "
          f"{a.steps} steps of the digits MLP (256-256, batch 128, Adam)\n")
    print("| library | first 1,000 steps (median) | last 1,000 steps (median) | last / first | "
          "subnormal moments at the end |")
    print("|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | {r['first'] * 1e3:.3f} ms | {r['last'] * 1e3:.3f} ms | {r['last'] / r['first']:.2f} | "
              f"{r['subnormal_moments']} of {r['moments']} |")


if __name__ == "__main__":
    main()
