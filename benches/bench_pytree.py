"""Per-call cost of pytree flattening/unflattening: cranax vs JAX (when ``JAX_PYTHON`` names a Python with
JAX 0.10.2, run in a subprocess in the same run). Timings with warm-up, best of 7 repeats; prints one
row per tree with the ratio cranax / JAX.

    JAX_PYTHON=/tmp/jaxvenv/bin/python python benches/bench_pytree.py
    python benches/bench_pytree.py --ab OTHER/python/cranax/_pytree.py   # this checkout vs another, A/B

``--ab`` loads another checkout's ``_pytree.py`` into this process and times both modules' own
``tree_flatten``/``unflatten`` (cranax's internal flattening) interleaved, in CPU time (``time.process_time``),
7 rounds, best of each: on a shared machine that separates differences that separate runs cannot.
"""
import json
import os
import platform
import subprocess
import sys
import timeit

import numpy as np

CASES = ["flat tuple of 2 arrays", "list of 8 leaves", "nested dict of 12 leaves"]


def _trees():
    a, b = np.ones(3), np.ones(4)
    return {
        CASES[0]: (a, b),
        CASES[1]: [a] * 8,
        CASES[2]: {"w": [a, b, (a, b)], "opt": {"m": [a] * 4, "v": [b] * 4}},
    }


def measure(tree_util):
    out = {}
    for name, tree in _trees().items():
        leaves, td = tree_util.tree_flatten(tree)
        res = {}
        for what, fn in (("flatten", lambda: tree_util.tree_flatten(tree)),
                         ("unflatten", lambda: tree_util.tree_unflatten(td, leaves))):
            fn()
            n = 20000
            res[what] = min(timeit.repeat(fn, number=n, repeat=7)) / n
        out[name] = res
    return out


def _ab(other_path):
    import importlib.util
    import time

    import cranax._pytree as mine
    spec = importlib.util.spec_from_file_location("_pytree_other", other_path)
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    best = {}
    for _ in range(7):
        for label, m in (("this", mine), ("other", other)):
            for name, tree in _trees().items():
                leaves, td = m.tree_flatten(tree)
                for what, fn in (("flatten", lambda: m.tree_flatten(tree)),
                                 ("unflatten", lambda: td.unflatten(leaves))):
                    fn()
                    t = min(timeit.repeat(fn, number=5000, repeat=3, timer=time.process_time)) / 5000
                    key = (name, what, label)
                    best[key] = min(best.get(key, t), t)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    print(f"this: {mine.__file__}\nother: {other_path}")
    print(f"{'tree':28s} {'op':10s} {'this us':>8s} {'other us':>9s} {'ratio':>6s}")
    for name in CASES:
        for what in ("flatten", "unflatten"):
            a, b = best[(name, what, "this")] * 1e6, best[(name, what, "other")] * 1e6
            print(f"{name:28s} {what:10s} {a:8.2f} {b:9.2f} {a / b:6.2f}")


def main():
    if "--ab" in sys.argv:
        _ab(sys.argv[sys.argv.index("--ab") + 1])
        return
    if "--worker" in sys.argv:
        import jax
        print(json.dumps(measure(jax.tree_util)))
        return
    import cranax.tree_util as ctu
    mine = measure(ctu)
    theirs = None
    jp = os.environ.get("JAX_PYTHON")
    if jp:
        r = subprocess.run([jp, __file__, "--worker"], capture_output=True, text=True, check=True)
        theirs = json.loads(r.stdout)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    print(f"{'tree':28s} {'op':10s} {'cranax us':>10s} {'JAX us':>8s} {'ratio':>6s}")
    for name in CASES:
        for what in ("flatten", "unflatten"):
            c = mine[name][what] * 1e6
            j = theirs[name][what] * 1e6 if theirs else float("nan")
            print(f"{name:28s} {what:10s} {c:10.2f} {j:8.2f} {c / j if theirs else float('nan'):6.2f}")


if __name__ == "__main__":
    main()
