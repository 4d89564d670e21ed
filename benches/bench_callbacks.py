"""Host-callback figures, cranax vs JAX in the same run (JAX in a subprocess of ``JAX_PYTHON``, default
/tmp/jaxvenv/bin/python, skipped when absent):

1. ``jax.debug.print`` overhead inside a jitted ``fori_loop`` of N iterations (output to a StringIO):
   (time with the print - time of the same loop without it) / N, per printed line.
2. ``pure_callback`` round trip: a jitted function whose only work is one callback on a float32[8]
   (identity in NumPy), per call, waited with ``block_until_ready()``.

Medians of repeated runs after a warm-up. ``python benches/bench_callbacks.py`` prints a Markdown table.
"""
import json
import os
import subprocess
import sys

N = 2000
REPEAT = 7

CODE = r'''
import io, json, statistics, sys, time
from contextlib import redirect_stdout
import numpy as np
{imp}
N, REPEAT = {n}, {repeat}

def loop(with_print):
    def body(i, c):
        if with_print:
            jax.debug.print("i={{}} c={{}}", i, c)
        return c + 1.0
    return jax.jit(lambda x: jax.lax.fori_loop(0, N, body, x))

def timed(f, *args):
    ts = []
    for _ in range(REPEAT):
        buf = io.StringIO()
        with redirect_stdout(buf):
            t = time.perf_counter()
            f(*args).block_until_ready()
            jax.effects_barrier()
            ts.append(time.perf_counter() - t)
    return statistics.median(ts), buf.getvalue().count("\n")

x = jnp.float32(0)
with_p, without = loop(True), loop(False)
with redirect_stdout(io.StringIO()):
    with_p(x).block_until_ready(); without(x).block_until_ready(); jax.effects_barrier()
t_with, lines = timed(with_p, x)
t_without, _ = timed(without, x)

cb = jax.jit(lambda v: jax.pure_callback(lambda a: np.asarray(a), jax.ShapeDtypeStruct(v.shape, v.dtype), v))
v = jnp.arange(8.0)
cb(v).block_until_ready()
ts = []
for _ in range(REPEAT):
    t = time.perf_counter()
    for _ in range(200):
        cb(v).block_until_ready()
    ts.append((time.perf_counter() - t) / 200)
print(json.dumps(dict(print_per_line=(t_with - t_without) / N, lines=lines, loop_without=t_without,
                      callback_round_trip=statistics.median(ts))))
'''


def run(imp, python=sys.executable):
    src = CODE.format(imp=imp, n=N, repeat=REPEAT)
    env = dict(os.environ)
    out = subprocess.run([python, "-c", src], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(s):
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def main():
    cr = run("import cranax as jax\nimport cranax.numpy as jnp")
    jp_py = os.environ.get("JAX_PYTHON", "/tmp/jaxvenv/bin/python")
    jx = run("import jax\nimport jax.numpy as jnp", jp_py) if os.path.exists(jp_py) else None
    rows = [("debug.print in jitted fori_loop, per line", "print_per_line"),
            ("pure_callback round trip (jit, f32[8])", "callback_round_trip")]
    print(f"N = {N}; lines printed: cranax {cr['lines']}" + (f", JAX {jx['lines']}" if jx else ""))
    print("| figure | cranax | JAX | cranax / JAX |\n|---|---:|---:|---:|")
    for label, k in rows:
        j = jx[k] if jx else None
        print(f"| {label} | {fmt(cr[k])} | {fmt(j) if j else '-'} | {cr[k] / j:.2f}x |" if j else
              f"| {label} | {fmt(cr[k])} | - | - |")


if __name__ == "__main__":
    main()
