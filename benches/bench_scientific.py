"""Scientific figures (issue 22). Special functions: ``gammaln``, ``digamma``, ``erfinv`` and ``ndtri`` on
1e6 float32 values under ``jit``, against SciPy (float64 evaluation of the same inputs, the accuracy oracle
too). Solvers: ``scipy.optimize.minimize`` (BFGS, Rosenbrock in 10 dims from 0) and ``experimental.ode.odeint``
of a planar 3-body problem (float32, 50 output times), each one jitted call, against SciPy's
``minimize``/``odeint`` on the same problem in float64. JAX is measured in a subprocess of the same run when
``JAX_PYTHON`` names an interpreter with jax; the sampler and ``median``/``unique`` figures are in
``bench_random_stats.py``.

    JAX_PYTHON=/path/to/jax-venv/bin/python python benches/bench_scientific.py [--markdown]

Medians of 9 calls (special) or 7 (solvers) after 2 warm-ups, each waited with ``block_until_ready()``;
max relative error is against SciPy in float64.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np
import scipy.special as sc

N = 1_000_000
# (name, scipy oracle, input range)
FUNCS = [("gammaln", sc.gammaln, (0.1, 50.0)), ("digamma", sc.digamma, (0.1, 50.0)),
         ("erfinv", sc.erfinv, (-0.999, 0.999)), ("ndtri", sc.ndtri, (1e-6, 1 - 1e-6))]


def inputs():
    rng = np.random.default_rng(0)
    return {name: rng.uniform(lo, hi, N).astype(np.float32) for name, _, (lo, hi) in FUNCS}


_JAX_SNIPPET = r"""
import json, sys, time, statistics
import numpy as np
import jax, jax.numpy as jnp, jax.scipy.special as S
rng = np.random.default_rng(0)
ranges = json.loads(sys.argv[1])
out = {}
for name, (lo, hi) in ranges.items():
    x = jax.device_put(rng.uniform(lo, hi, %d).astype(np.float32))
    f = jax.jit(getattr(S, name))
    for _ in range(2):
        f(x).block_until_ready()
    ts = []
    for _ in range(9):
        t = time.perf_counter(); f(x).block_until_ready(); ts.append(time.perf_counter() - t)
    out[name] = statistics.median(ts)
print(json.dumps(out))
""" % N


def _rosen(np_):
    return lambda x: np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _three_body(np_):
    """dy/dt for three unit masses in the plane, G = 1; y = (positions (3, 2), velocities (3, 2)) flat."""
    def f(y, t):
        p, v = y[:6].reshape(3, 2), y[6:].reshape(3, 2)
        d = p[None, :, :] - p[:, None, :]
        r3 = (np_.sum(d * d, axis=-1) + np_.eye(3)) ** 1.5
        a = np_.sum(d / r3[:, :, None], axis=1)
        return np_.concatenate([v.reshape(6), a.reshape(6)])
    return f


Y0 = np.array([0.97000436, -0.24308753, -0.97000436, 0.24308753, 0.0, 0.0,
               0.466203685, 0.43236573, 0.466203685, 0.43236573, -0.93240737, -0.86473146], np.float32)
TS = np.linspace(0.0, 2.0, 50).astype(np.float32)


def solver_figures(lib):
    """name -> (median seconds, result as a list) for the jitted solver calls, in cranax or jax."""
    if lib == "jax":
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint
        from jax.scipy.optimize import minimize
    else:
        import cranax as jax
        import cranax.numpy as jnp
        from cranax.experimental.ode import odeint
        from cranax.scipy.optimize import minimize
    rosen = _rosen(jnp)
    cases = {"minimize BFGS rosen 10-d": (jax.jit(lambda x0: minimize(rosen, x0, method="BFGS").fun),
                                          jnp.zeros(10, jnp.float32)),
             "odeint 3-body, 50 times": (jax.jit(lambda y0: odeint(_three_body(jnp), y0, jnp.asarray(TS))),
                                         jnp.asarray(Y0))}
    out = {}
    for name, (f, arg) in cases.items():
        out[name] = (median(lambda: f(arg).block_until_ready(), runs=7), np.asarray(f(arg)).tolist())
    return out


def scipy_solver_figures():
    import scipy.integrate as si
    import scipy.optimize as so
    f = _three_body(np)
    y0 = Y0.astype(np.float64)
    return {"minimize BFGS rosen 10-d": (median(lambda: so.minimize(so.rosen, np.zeros(10), method="BFGS",
                                                                    jac=so.rosen_der), runs=5, warmup=1),
                                         so.minimize(so.rosen, np.zeros(10), method="BFGS", jac=so.rosen_der).fun),
            "odeint 3-body, 50 times": (median(lambda: si.odeint(f, y0, TS.astype(np.float64), rtol=1.4e-8,
                                                                 atol=1.4e-8), runs=5, warmup=1),
                                        si.odeint(f, y0, TS.astype(np.float64), rtol=1.4e-8, atol=1.4e-8))}


def jax_solver_times():
    py = os.environ.get("JAX_PYTHON")
    if not py:
        return {}
    res = subprocess.run([py, os.path.abspath(__file__), "--lib", "jax"], capture_output=True, text=True,
                         timeout=900, cwd="/tmp")
    if res.returncode != 0:
        print(res.stderr[-2000:], file=sys.stderr)
        return {}
    return json.loads(res.stdout.strip().splitlines()[-1])


def jax_times():
    py = os.environ.get("JAX_PYTHON")
    if not py:
        return None
    ranges = {name: r for name, _, r in FUNCS}
    res = subprocess.run([py, "-c", _JAX_SNIPPET, json.dumps(ranges)], capture_output=True, text=True,
                         timeout=600)
    if res.returncode != 0:
        print(res.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def median(fn, runs=9, warmup=2):
    import time
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def fmt(s):
    return "-" if s is None else (f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--lib", help="only print the solver figures of this library (jax) as JSON")
    args = ap.parse_args(argv)
    if args.lib:
        print(json.dumps(solver_figures(args.lib)))
        return
    import cranax
    import cranax.scipy.special as S
    xs = inputs()
    jt = jax_times() or {}
    rows = []
    for name, ref, _ in FUNCS:
        x = cranax.device_put(xs[name])
        f = cranax.jit(getattr(S, name))
        t = median(lambda: f(x).block_until_ready())
        x64 = xs[name].astype(np.float64)
        ts = median(lambda: ref(x64), runs=5, warmup=1)
        want = ref(x64)
        got = np.asarray(f(x)).astype(np.float64)
        err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
        j = jt.get(name)
        rows.append((name, t, j, ts, None if j is None else t / j, err))
    cs, js, ss = solver_figures("cranax"), jax_solver_times(), scipy_solver_figures()
    srows = []
    for name, (t, val) in cs.items():
        j = js.get(name, (None, None))[0]
        ts, want = ss[name]
        # minimize: the value reached (JAX's and ours follow the same iterates); odeint: max error vs SciPy
        got = np.asarray(val, np.float64)
        acc = (f"fun {float(got):.3g} (JAX {js[name][1]:.3g}, SciPy {want:.1e})" if got.ndim == 0 and name in js
               else f"fun {float(got):.3g}" if got.ndim == 0
               else f"max abs err vs SciPy {float(np.max(np.abs(got - want))):.1e}")
        srows.append((name, t, j, ts, None if j is None else t / j, acc))
    if args.markdown:
        print("| solver, jit | cranax | JAX | SciPy (f64) | cranax / JAX | result |")
        print("|---|---:|---:|---:|---:|---|")
        for name, t, j, ts, ratio, acc in srows:
            print(f"| {name} | {fmt(t)} | {fmt(j)} | {fmt(ts)} | {'-' if ratio is None else f'{ratio:.2f}x'} | {acc} |")
        print()
    else:
        for name, t, j, ts, ratio, acc in srows:
            print(f"{name:26s} cranax {fmt(t):>10s}  jax {fmt(j):>10s}  scipy {fmt(ts):>10s}  "
                  f"ratio {'-' if ratio is None else f'{ratio:.2f}x'}  {acc}")
    if args.markdown:
        print("| 1e6 float32, jit | cranax | JAX | SciPy (f64) | cranax / JAX | max rel err vs SciPy |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, t, j, ts, ratio, err in rows:
            r = "-" if ratio is None else f"{ratio:.2f}x"
            print(f"| {name} | {fmt(t)} | {fmt(j)} | {fmt(ts)} | {r} | {err:.1e} |")
    else:
        for name, t, j, ts, ratio, err in rows:
            print(f"{name:8s} cranax {fmt(t):>10s}  jax {fmt(j):>10s}  scipy {fmt(ts):>10s}  "
                  f"ratio {'-' if ratio is None else f'{ratio:.2f}x'}  max rel err {err:.1e}")


if __name__ == "__main__":
    main()
