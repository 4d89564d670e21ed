"""Half-float samplers against float32 (issues 22/23): cranax and JAX in one run.

    python benches/bench_random_half.py            # min / median of 41 calls after warm-up, per case
    python benches/bench_random_half.py --quick    # 9 calls
    CRANAX_CPU_BLOCK_MATH=avx2 python benches/bench_random_half.py

``random.normal``, ``uniform``, ``gamma(2.0)`` and ``dirichlet([0.5, 1, 3])`` of 8192 draws in float32,
bfloat16 and float16, jitted, each call on a fresh key, waited for with ``block_until_ready``. JAX's figures
come from the same cases run by ``--jax-python`` (default ``/tmp/jaxvenv/bin/python``, ``JAX_PLATFORMS=cpu``)
in a child process right after cranax's; the table prints both and the ratio cranax / JAX (by median).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

N = 8192
DTYPES = ("float32", "bfloat16", "float16")
SAMPLERS = ("normal", "uniform", "gamma", "dirichlet")


def measure(lib, runs):
    """{case: (min, median) seconds} for `lib` = "cranax" or "jax"."""
    if lib == "jax":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        from jax import random
        jit = jax.jit
    else:
        import cranax
        import cranax.numpy as jnp
        from cranax import random
        jit = cranax.jit
    out = {}
    for dt in DTYPES:
        dtype = getattr(jnp, dt)
        alpha = jnp.array([0.5, 1.0, 3.0], dtype)
        fns = {
            "normal": jit(lambda k, d=dtype: random.normal(k, (N,), d)),
            "uniform": jit(lambda k, d=dtype: random.uniform(k, (N,), d)),
            "gamma": jit(lambda k, d=dtype: random.gamma(k, 2.0, (N,), d)),
            "dirichlet": jit(lambda k, a=alpha, d=dtype: random.dirichlet(k, a, (N,), d)),
        }
        for name in SAMPLERS:
            f = fns[name]
            keys = [random.PRNGKey(i) for i in range(runs + 3)]
            for k in keys[:3]:
                f(k).block_until_ready()
            ts = []
            for k in keys[3:]:
                t0 = time.perf_counter()
                f(k).block_until_ready()
                ts.append(time.perf_counter() - t0)
            out[f"{name} {dt}"] = (min(ts), statistics.median(ts))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--jax-python", default="/tmp/jaxvenv/bin/python")
    ap.add_argument("--child", choices=("jax",), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    runs = 9 if a.quick else a.runs
    if a.child:
        print(json.dumps(measure(a.child, runs)))
        return
    cx = measure("cranax", runs)
    jx = None
    if os.path.exists(a.jax_python):
        env = dict(os.environ, JAX_PLATFORMS="cpu")
        r = subprocess.run([a.jax_python, __file__, "--child", "jax", "--runs", str(runs)], env=env,
                           capture_output=True, text=True, check=True)
        jx = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"load {os.getloadavg()[0]:.1f}, CRANAX_CPU_BLOCK_MATH={os.environ.get('CRANAX_CPU_BLOCK_MATH', '')}, "
          f"{runs} calls (ms, min / median)")
    print(f"{'case':20s} {'cranax':>17s} {'jax':>17s} {'ratio':>6s}")
    for case, (lo, med) in cx.items():
        if jx:
            jl, jm = jx[case]
            print(f"{case:20s} {lo * 1e3:7.3f} / {med * 1e3:7.3f} {jl * 1e3:7.3f} / {jm * 1e3:7.3f} {med / jm:6.2f}")
        else:
            print(f"{case:20s} {lo * 1e3:7.3f} / {med * 1e3:7.3f}")


if __name__ == "__main__":
    main()
