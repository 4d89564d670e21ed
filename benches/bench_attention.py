"""``nn.dot_product_attention``, cranax vs JAX on this machine's CPU (float32, jitted, median wall time).

Shape from issue 21: batch 8, 8 heads, 512 tokens, head dim 64; plain and causal, forward and forward +
backward (gradients of ``sum(attention(q, k, v) ** 2)`` with respect to q, k and v). GFLOP/s counts the two
matmuls (``4·B·N·T·S·H`` flops forward; backward counted as twice the forward).

    python benches/bench_attention.py                  # cranax, then JAX in JAX_PYTHON if set
    python benches/bench_attention.py --quick          # 64 tokens, smoke test
    JAX_PYTHON=/tmp/jaxvenv/bin/python python benches/bench_attention.py
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def measure(lib_name, t, reps):
    if lib_name == "jax":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax as lib
    else:
        import cranax as lib
    nn = lib.nn
    B, N, H = 8, 8, 64
    r = np.random.RandomState(0)
    q, k, v = (r.randn(B, t, N, H).astype(np.float32) for _ in range(3))
    out = {}
    for causal in (False, True):
        fwd = lib.jit(lambda q, k, v, c=causal: nn.dot_product_attention(q, k, v, is_causal=c))
        bwd = lib.jit(lib.grad(lambda q, k, v, c=causal: (nn.dot_product_attention(q, k, v, is_causal=c) ** 2).sum(),
                               argnums=(0, 1, 2)))
        for kind, f in (("fwd", fwd), ("fwd+bwd", bwd)):
            t0 = time.perf_counter()
            lib.block_until_ready(f(q, k, v))
            first = time.perf_counter() - t0
            lib.block_until_ready(f(q, k, v))
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                lib.block_until_ready(f(q, k, v))
                times.append(time.perf_counter() - t0)
            out[f"{'causal' if causal else 'plain'} {kind}"] = {"first_s": first, "median_s": statistics.median(times)}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--lib", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    t = 64 if a.quick else 512
    if a.lib:
        print(json.dumps(measure(a.lib, t, a.reps)))
        return
    res = {"cranax": measure("cranax", t, a.reps)}
    jax_py = os.environ.get("JAX_PYTHON")
    if jax_py:
        cmd = [jax_py, __file__, "--lib", "jax", "--reps", str(a.reps)] + (["--quick"] if a.quick else [])
        res["jax"] = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    flops = 4 * 8 * 8 * t * t * 64
    print(f"dot_product_attention B=8 N=8 T=S={t} H=64 float32 (load {os.getloadavg()[0]:.1f})")
    print("| case | cranax | JAX | cranax / JAX | cranax GFLOP/s |\n|---|---:|---:|---:|---:|")
    for case, c in res["cranax"].items():
        j = res.get("jax", {}).get(case)
        f = flops * (3 if "bwd" in case else 1)
        ratio = f"{c['median_s'] / j['median_s']:.2f}×" if j else "-"
        js = f"{j['median_s'] * 1e3:.1f} ms" if j else "-"
        print(f"| {case} | {c['median_s'] * 1e3:.1f} ms | {js} | {ratio} | {f / c['median_s'] / 1e9:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
