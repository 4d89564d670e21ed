"""Remat peak memory (issue 18): the peak resident-set rise of one ``grad`` of a deep chain, with and without
``jax.checkpoint(..., policy=nothing_saveable)`` around each block, cranax and JAX (JAX in a subprocess of
``JAX_PYTHON``, default /tmp/jaxvenv/bin/python, skipped when absent).

Chains: ``sin``: 24 blocks of 4 ``sin(x) * 1.01`` on float32[2**20] (4 MiB per value); ``matmul``: 24 blocks of
4 ``tanh(x @ w)`` on float32[512, 512] (1 MiB). Each configuration runs in a fresh process: peak = VmHWM after
the call (reset just before it) − VmRSS before it, so it counts the values the call keeps alive (compilation
included under ``jit``). ``python benches/bench_remat_memory.py`` prints a Markdown table.
"""
import importlib.util
import os
import subprocess
import sys

CODE = r'''
import gc, sys, time
{imp}
chain, policy, use_jit = {chain!r}, {policy!r}, {use_jit!r}
if chain == "sin":
    def block(w, x):
        for _ in range(4):
            x = jnp.sin(x) * 1.01
        return x
    w, x = 1.0, jnp.linspace(0., 1., 1 << 20)
else:
    def block(w, x):
        for _ in range(4):
            x = jnp.tanh(x @ w)
        return x
    w, x = jnp.eye(512) * 0.9 + 0.001, jnp.linspace(0., 1., 512 * 512).reshape(512, 512)
def loss(x):
    for _ in range(24):
        x = block(w, x) if policy == "off" else jax.checkpoint(block, policy=jax.checkpoint_policies.nothing_saveable)(w, x)
    return jnp.sum(x)
g = jax.jit(jax.grad(loss)) if use_jit else jax.grad(loss)
x.block_until_ready()
def status(k):
    for line in open("/proc/self/status"):
        if line.startswith(k):
            return int(line.split()[1]) * 1024
gc.collect()
base = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
t = time.perf_counter()
r = g(x)
r.block_until_ready()
dt = time.perf_counter() - t
print((status("VmHWM") - base) / 2**20, dt, float(jnp.sum(r)))
'''

CRANAX = "import cranax as jax, cranax.numpy as jnp"
JAX = "import jax, jax.numpy as jnp"


def run(python, imp, chain, policy, use_jit, env=None):
    code = CODE.format(imp=imp, chain=chain, policy=policy, use_jit=use_jit)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    rise, dt, s = out.stdout.split()
    return float(rise), float(dt), float(s)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    # the children import the cranax installed here (or the checkout's python/ when none is)
    env = dict(os.environ, PYTHONPATH=(os.path.dirname(os.path.dirname(importlib.util.find_spec("cranax").origin))
                 if importlib.util.find_spec("cranax") else os.path.join(here, "..", "python")))
    jax_py = os.environ.get("JAX_PYTHON", "/tmp/jaxvenv/bin/python")
    have_jax = os.path.exists(jax_py)
    print("| chain | mode | cranax: no remat | cranax: nothing_saveable | JAX: no remat | JAX: nothing_saveable |")
    print("|---|---|---:|---:|---:|---:|")
    for chain in ("sin", "matmul"):
        for use_jit in (False, True):
            cells = []
            for python, imp, e in ((sys.executable, CRANAX, env), (jax_py, JAX, None)):
                for policy in ("off", "nothing"):
                    if python == jax_py and not have_jax:
                        cells.append("–")
                        continue
                    rise, dt, _ = run(python, imp, chain, policy, use_jit, e)
                    cells.append(f"{rise:.0f} MiB ({dt * 1e3:.0f} ms)")
            print(f"| {chain} | {'jit' if use_jit else 'eager'} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
