"""Persistent compilation cache figures (issue 18, item 12): the first call of a jitted function in a process
with an empty cache (it compiles and writes the entry) vs in a second process (it loads the entry), for a
chain of N=1000 ``tanh`` and the digits MLP's training step (``examples/digits_mlp.py``).

    python benches/bench_compilation_cache.py [--reps 3]

Each figure is the median over ``--reps`` pairs of fresh processes (a new cache directory per pair). The
first call is split, from a ``jax.profiler`` trace of it, into tracing (Python: function → jaxpr), the core's
compile span (pipeline + code generation, or pipeline + load) and the rest (lowering to the wire format,
running, waiting). Prints a markdown table; the machine, its ISA and load are named.
"""
import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r'''
import gzip, json, os, sys, time
import numpy as np
sys.path.insert(0, os.path.join(sys.argv[3], "examples"))
import cranax as jax
import cranax.numpy as jnp
from cranax import _core, profiler
from cranax.experimental.compilation_cache import compilation_cache as cc

cache_dir, which = sys.argv[1], sys.argv[2]
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
cc.set_cache_dir(cache_dir)

if which == "tanh":
    def chain(x):
        for _ in range(1000):
            x = jnp.tanh(x)
        return x
    f, args, name = jax.jit(chain), (jax.device_put(np.linspace(-1, 1, 1000, dtype=np.float32)),), "chain"
else:
    import digits_mlp as d
    d.use_backend("cranax")
    params = d.init_params(jax.random.key(0), [64, 256, 256, 10])
    opt = d.adam_init(params)
    r = np.random.default_rng(0)
    x = jax.device_put(r.random((128, 64), dtype=np.float32))
    y = jax.device_put(np.eye(10, dtype=np.float32)[r.integers(0, 10, 128)])
    jax.block_until_ready((params, opt, x, y))
    f, args, name = d.make_train_step(), (params, opt, x, y), "train_step"
n0 = _core.compile_count()
log = os.path.join(cache_dir, "..", "log-" + str(os.getpid()))
with profiler.trace(log):
    t0 = time.perf_counter()
    jax.block_until_ready(f(*args))
    first = time.perf_counter() - t0
path = next(os.path.join(r, fn) for r, _, fs in os.walk(log) for fn in fs if fn.endswith(".trace.json.gz"))
ev = [e for e in json.load(gzip.open(path))["traceEvents"] if e["ph"] == "X"]
span = lambda prefix: sum(e["dur"] for e in ev if e["name"] == prefix + " " + name) / 1e6
t1 = time.perf_counter()
jax.block_until_ready(f(*args))
second_call = time.perf_counter() - t1
st = cc._stats()
print(json.dumps({"first": first, "trace": span("trace"), "compile": span("compile"), "call2": second_call,
                  "compiles": _core.compile_count() - n0, "hits": st["hits"], "writes": st["writes"],
                  "bytes": sum(os.path.getsize(os.path.join(cache_dir, p)) for p in os.listdir(cache_dir))}))
'''


def run_child(cache_dir, which):
    # the child imports the cranax installed here (or the checkout's python/ when none is)
    env = dict(os.environ, PYTHONPATH=(os.path.dirname(os.path.dirname(importlib.util.find_spec("cranax").origin))
                 if importlib.util.find_spec("cranax") else os.path.join(ROOT, "python")))
    p = subprocess.run([sys.executable, "-c", CHILD, cache_dir, which, ROOT], capture_output=True, text=True,
                       env=env, timeout=1800)
    if p.returncode:
        raise SystemExit(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    rows = []
    for which, label in (("tanh", "tanh chain, N=1000 (f32[1000])"), ("mlp", "digits MLP train step (64-256-256-10, batch 128)")):
        cold, warm = [], []
        for _ in range(a.reps):
            with tempfile.TemporaryDirectory() as tmp:
                d = os.path.join(tmp, "cache")
                cold.append(run_child(d, which))
                warm.append(run_child(d, which))
        med = lambda rs, k: statistics.median(r[k] for r in rs)
        rows.append((label, cold, warm, med))
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {load:.1f}; medians of "
          f"{a.reps} process pairs\n")
    print("| first call | process | total (ms) | tracing (ms) | core compile span (ms) | compiles | entry bytes |")
    print("|---|---|---|---|---|---|---|")
    for label, cold, warm, med in rows:
        for tag, rs in (("1st (empty cache: compiles, writes)", cold), ("2nd (loads the entry)", warm)):
            print(f"| {label} | {tag} | {med(rs, 'first') * 1e3:.1f} | {med(rs, 'trace') * 1e3:.1f} | "
                  f"{med(rs, 'compile') * 1e3:.1f} | {int(med(rs, 'compiles'))} | {int(med(rs, 'bytes'))} |")
        print(f"| {label} | ratio 2nd/1st | {med(warm, 'first') / med(cold, 'first'):.2f}× | | "
              f"{med(warm, 'compile') / med(cold, 'compile'):.2f}× | | |")


if __name__ == "__main__":
    main()
