"""Dense factorizations (issue 20): cholesky, solve, inv, eigh, svd, qr at n = 100 and 1000 (float32 and
float64), a batch of 1000 3×3 solves and ``grad`` of ``slogdet`` at n = 500 — cranax (faer) vs NumPy/SciPy
(LAPACK) vs JAX (XLA calling LAPACK) when ``JAX_PYTHON`` names an interpreter with jax (measured there, in
a subprocess of the same run; skipped with a note otherwise).

    python benches/bench_linalg_factorizations.py [--quick] [--markdown]
    JAX_PYTHON=/path/to/venv/bin/python python benches/bench_linalg_factorizations.py

Each figure is the median wall time of a jitted call waited for with ``block_until_ready`` (NumPy is
synchronous), after warm-up; inputs are device arrays made once.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# The cases, as source run by both cranax and JAX (``jnp``/``jsl`` bound to each library's modules).
CASES = [
    ("cholesky", "lambda a, b: jnp.linalg.cholesky(a)", "spd"),
    ("solve", "lambda a, b: jnp.linalg.solve(a, b)", "gen"),
    ("inv", "lambda a, b: jnp.linalg.inv(a)", "gen"),
    ("eigh", "lambda a, b: jnp.linalg.eigh(a)", "spd"),
    ("svd", "lambda a, b: jnp.linalg.svd(a)", "gen"),
    ("qr", "lambda a, b: jnp.linalg.qr(a)", "gen"),
]
NUMPY = {"cholesky": lambda a, b: np.linalg.cholesky(a), "solve": lambda a, b: np.linalg.solve(a, b),
         "inv": lambda a, b: np.linalg.inv(a), "eigh": lambda a, b: np.linalg.eigh(a),
         "svd": lambda a, b: np.linalg.svd(a), "qr": lambda a, b: np.linalg.qr(a)}


def inputs(kind, n, dtype, batch=None):
    rng = np.random.default_rng(0)
    shape = (n, n) if batch is None else (batch, n, n)
    a = rng.standard_normal(shape)
    if kind == "spd":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    else:
        a = a + 2 * np.sqrt(n) * np.eye(n)
    b = rng.standard_normal(shape[:-1] + (1,))
    return a.astype(dtype), b.astype(dtype)


def plan(quick):
    sizes = (50, 200) if quick else (100, 1000)
    out = []
    for name, src, kind in CASES:
        for n in sizes:
            for dt in ("float32", "float64"):
                out.append(dict(name=name, src=src, kind=kind, n=n, dtype=dt, batch=None,
                                runs=3 if n >= 1000 else 9))
    out.append(dict(name="solve batch 1000×(3×3)", src="lambda a, b: jnp.linalg.solve(a, b)", kind="gen", n=3,
                    dtype="float32", batch=1000, runs=15))
    out.append(dict(name="grad slogdet", src="jax.grad(lambda a, b: jnp.linalg.slogdet(a)[1])", kind="gen",
                    n=200 if quick else 500, dtype="float64", batch=None, runs=5))
    return out


def measure(jax, jnp, cases):
    """Median seconds per case (jitted, warmed up) for a JAX-like library."""
    res = []
    for c in cases:
        if c["dtype"] == "float64":
            jax.config.update("jax_enable_x64", True)
        a, b = inputs(c["kind"], c["n"], np.dtype(c["dtype"]), c["batch"])
        f = jax.jit(eval(c["src"], {"jnp": jnp, "jax": jax}))
        da, db = jax.device_put(a), jax.device_put(b)
        jax.block_until_ready(f(da, db))
        jax.block_until_ready(f(da, db))
        ts = []
        for _ in range(c["runs"]):
            t = time.perf_counter()
            jax.block_until_ready(f(da, db))
            ts.append(time.perf_counter() - t)
        res.append(statistics.median(ts))
        jax.config.update("jax_enable_x64", False)
    return res


def numpy_times(cases):
    res = []
    for c in cases:
        a, b = inputs(c["kind"], c["n"], np.dtype(c["dtype"]), c["batch"])
        if c["name"] == "grad slogdet":
            fn = lambda: np.linalg.inv(a).T   # noqa: E731  (the analytic gradient)
        else:
            fn = (lambda f: lambda: f(a, b))(NUMPY[c["name"].split()[0]])
        fn()
        ts = []
        for _ in range(c["runs"]):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        res.append(statistics.median(ts))
    return res


def jax_times(cases):
    py = os.environ.get("JAX_PYTHON")
    if not py:
        return None, "JAX not measured (set JAX_PYTHON to an interpreter with jax)"
    code = ("import json, sys; sys.path.insert(0, %r); import jax, jax.numpy as jnp; "
            "import bench_linalg_factorizations as b; cases = json.loads(sys.stdin.read()); "
            "print(json.dumps(b.measure(jax, jnp, cases)))" % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-c", code], input=json.dumps(cases), capture_output=True, text=True, env=env)
    if p.returncode:
        return None, f"JAX run failed: {p.stderr.strip().splitlines()[-1] if p.stderr else p.returncode}"
    out = subprocess.run([py, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True, env=env)
    return json.loads(p.stdout.strip().splitlines()[-1]), f"jax {out.stdout.strip()} (CPU), same run, subprocess"


def fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    import cranax
    import cranax.numpy as cjnp
    cases = plan(args.quick)
    cx = measure(cranax, cjnp, cases)
    npy = numpy_times(cases)
    jx, note = jax_times(cases)
    print(f"load: {os.getloadavg()}; {note}")
    print("| figure | dtype | cranax | NumPy | JAX | cranax/NumPy | cranax/JAX |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for i, c in enumerate(cases):
        label = c["name"] if c["batch"] else f"{c['name']} n={c['n']}"
        j = jx[i] if jx else None
        print(f"| {label} | {c['dtype']} | {fmt(cx[i])} | {fmt(npy[i])} | {fmt(j)} | {cx[i] / npy[i]:.2f}x | "
              f"{(f'{cx[i] / j:.2f}x') if j else '-'} |")


if __name__ == "__main__":
    main()
