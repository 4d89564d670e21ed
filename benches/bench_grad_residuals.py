"""The residuals grad keeps for a jitted log_softmax of 1e6 float32 (issue 18): per-call time of ``grad`` (a
forward and a backward jit call from Python) and of ``jit(grad)``, the bytes ``vjp`` holds, and peak RSS.

    PYTHONPATH=python python benches/bench_grad_residuals.py   (optionally CRANAX_CPU_BLOCK_MATH=avx2)
"""
import resource
import time

import numpy as np

import cranax as jax

x = jax.numpy.asarray(np.random.RandomState(0).randn(1_000_000).astype(np.float32))
f = jax.jit(jax.nn.log_softmax)
h = jax.grad(lambda x: f(x).sum())
g = jax.jit(h)
out = {}
for fn, name in ((h, "grad"), (g, "jit(grad)")):
    fn(x).block_until_ready()
    ts = []
    for _ in range(40):
        t = time.perf_counter()
        fn(x).block_until_ready()
        ts.append(time.perf_counter() - t)
    out[name] = np.median(ts) * 1e3
    out[name + "_min"] = np.min(ts) * 1e3
_, f_vjp = jax.vjp(f, x)
res = sum(np.asarray(r).nbytes for r in f_vjp._res)
print(" ".join(f"{k}={v:.3f}ms" for k, v in out.items()), f"residual_bytes={res}",
      f"maxrss={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}MiB")
