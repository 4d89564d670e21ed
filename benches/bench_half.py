"""Half-float kernels and samplers (issues 22 and 23): elementwise bfloat16/float16 work, which cranax computes
in float32 lanes rounded per operation as XLA:CPU does, and the half-float random samplers, each beside its
float32 twin.

    python benches/bench_half.py                                  # cranax (this tree), medians in ms
    python benches/bench_half.py --jax /tmp/jaxvenv/bin/python    # and JAX 0.10.2, same cases, ratios
    CRANAX_CPU_BLOCK_MATH=avx2 python benches/bench_half.py --jax /tmp/jaxvenv/bin/python

Each case: the median (and min) of ``--runs`` jitted calls after 3 warm-ups, each waited with
``block_until_ready()``; two inputs (keys) alternate. The same snippet times JAX in a subprocess of the given
interpreter. The header names the CPU, its vector ISA, the block-math mode and the load average.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

_SNIPPET = r"""
import json, statistics, sys, time
import numpy as np
if sys.argv[1] == "jax":
    import jax, jax.numpy as jnp
else:
    import cranax as jax, cranax.numpy as jnp
runs = int(sys.argv[2])
N, D = 1_000_000, 8192
ELEM = [("x * 2 + 1", lambda x: x * 2 + 1), ("exp(x)", jnp.exp), ("tanh(x)", jnp.tanh),
        ("f32 -> dtype", None)]
SAMPLERS = [("normal", lambda k, dt: jax.random.normal(k, (D,), dt)),
            ("uniform", lambda k, dt: jax.random.uniform(k, (D,), dt)),
            ("gamma a=2.5", lambda k, dt: jax.random.gamma(k, 2.5, (D,), dt)),
            ("dirichlet k=3", lambda k, dt: jax.random.dirichlet(k, jnp.array([1.0, 2.0, 3.0]), (D // 3,), dt))]
out = {}
rng = np.random.default_rng(0)

def timed(name, f, args):
    for i in range(3):
        jax.block_until_ready(f(args[i % 2]))
    ts = []
    for i in range(runs):
        t = time.perf_counter()
        jax.block_until_ready(f(args[i % 2]))
        ts.append(time.perf_counter() - t)
    out[name] = (1e3 * statistics.median(ts), 1e3 * min(ts))

for dt in ("bfloat16", "float16", "float32"):
    d = jnp.dtype(dt)
    for label, fn in ELEM:
        src = [rng.standard_normal(N).astype(np.float32) for _ in range(2)]
        if fn is None:
            timed(f"{label} {dt} 1e6", jax.jit(lambda x: x.astype(d)), [jnp.asarray(s) for s in src])
        else:
            timed(f"{label} {dt} 1e6", jax.jit(fn), [jnp.asarray(s).astype(d) for s in src])
    keys = [jax.random.PRNGKey(0), jax.random.PRNGKey(1)]
    for label, fn in SAMPLERS:
        timed(f"{label} {dt} {D}", jax.jit(lambda k, fn=fn: fn(k, d)), keys)
print(json.dumps(out))
"""


def measure(python, which, runs):
    r = subprocess.run([python, "-c", _SNIPPET, which, str(runs)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def machine():
    cpu, isa = platform.processor() or platform.machine(), "?"
    try:
        info = open("/proc/cpuinfo").read()
        cpu = next(l.split(":", 1)[1].strip() for l in info.splitlines() if l.startswith("model name"))
        flags = next(l for l in info.splitlines() if l.startswith("flags")).split()
        isa = "avx512f" if "avx512f" in flags else "avx2" if "avx2" in flags else "sse/neon"
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    mode = os.environ.get("CRANAX_CPU_BLOCK_MATH", "default")
    return f"{cpu}; ISA {isa}; CRANAX_CPU_BLOCK_MATH={mode}; load {load:.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--jax", help="an interpreter with jax installed: time JAX on the same cases")
    a = ap.parse_args(argv)
    print(machine())
    mine = measure(sys.executable, "cranax", a.runs)
    theirs = measure(a.jax, "jax", a.runs) if a.jax else {}
    print(f"{'case':32s} {'cranax ms (min)':>17s}" + (f" {'JAX ms (min)':>17s} {'ratio':>6s}" if theirs else ""))
    for k, (med, lo) in mine.items():
        line = f"{k:32s} {med:8.3f} ({lo:6.3f})"
        if k in theirs:
            jm, jl = theirs[k]
            line += f" {jm:8.3f} ({jl:6.3f}) {med / jm:6.2f}"
        print(line)


if __name__ == "__main__":
    main()
