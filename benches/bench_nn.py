"""Neural-network kernels, cranax vs JAX on this machine's CPU (float32, jitted, median wall time).

Convolution part: ResNet-style conv2d (N=32, 56×56, 64→64 channels, NHWC/HWIO, 'SAME'): 3×3, 1×1 and
depthwise 3×3, each forward and forward+backward (gradients with respect to input and kernel of
``sum(conv(x, w) ** 2)``), a 3×3 stride-2 max-pool (forward and forward+backward), ``conv3x3+bias+relu``
(the 3×3 case followed by a bias add and relu: the epilogue the CPU backend runs on the conv's output
tiles), and ``jax.nn.dot_product_attention`` (batch 8, 512 tokens, 8 heads, head dim 64; backward: the
gradients of ``sum(out ** 2)`` with respect to q, k, v). The attention GFLOP/s counts its two products.

    python benches/bench_nn.py                   # full shapes, median of 5 runs after 2 warm-ups
    python benches/bench_nn.py --quick           # N=2, smoke test
    JAX_PYTHON=/tmp/jaxvenv/bin/python python benches/bench_nn.py   # JAX measured in that interpreter
    python benches/bench_nn.py --only attention  # only the cases whose name contains "attention"

GFLOP/s counts 2 flops per multiply-add of the convolution (forward); forward+backward counts three
convolutions' worth (the input and kernel gradients are each a convolution of the same size). The pool
counts one comparison per window element. JAX runs in a subprocess (same shapes, same inputs' shapes).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np


def cases(n, only=""):
    """(name, x shape, w shape or window, feature groups, multiply-adds of the forward conv / window work), for
    the cases whose name contains ``only``."""
    h = w = 56
    c = 64
    out = []
    for name, k, g in (("conv3x3", 3, 1), ("conv1x1", 1, 1), ("depthwise3x3", 3, c)):
        macs = n * h * w * c * (c // g) * k * k
        out.append((name, (n, h, w, c), (k, k, c // g, c), g, macs))
    out.append(("maxpool3x3s2", (n, 112, 112, c), (1, 3, 3, 1), 0, n * 56 * 56 * c * 9))
    out.append(("conv3x3+bias+relu", (n, h, w, c), (3, 3, c, c), 1, n * h * w * c * c * 9))
    b, t = (8, 512) if n >= 8 else (n, 128)
    out.append(("attention", (b, t, 8, 64), None, 0, 2 * b * 8 * t * t * 64))
    return [c for c in out if only in c[0]]


def _args(jnp, name, xs, ws):
    """The inputs of a case (the same values under cranax and JAX)."""
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal(xs, dtype=np.float32))
    if name.startswith("maxpool"):
        return (x,)
    if name == "attention":
        return tuple(jnp.asarray(rng.standard_normal(xs, dtype=np.float32)) for _ in range(3))
    w = jnp.asarray(rng.standard_normal(ws, dtype=np.float32) * 0.1)
    if name.endswith("relu"):
        return x, w, jnp.asarray(rng.standard_normal(ws[-1], dtype=np.float32))
    return x, w


def _fns(mod_lax, mod_jnp, mod_nn, grad, name, g):
    if name.startswith("maxpool"):
        def fwd(x):
            return mod_lax.reduce_window(x, -np.inf, mod_lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")

        def loss(x):
            return mod_jnp.sum(fwd(x) ** 2)
        return fwd, grad(loss)
    if name == "attention":
        def attn(q, k, v):
            return mod_nn.dot_product_attention(q, k, v)

        def attn_loss(q, k, v):
            return mod_jnp.sum(attn(q, k, v) ** 2)
        return attn, grad(attn_loss, (0, 1, 2))
    if name.endswith("relu"):
        def fused(x, w, b):
            y = mod_lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            return mod_nn.relu(y + b)

        def fused_loss(x, w, b):
            return mod_jnp.sum(fused(x, w, b) ** 2)
        return fused, grad(fused_loss, (0, 1, 2))

    def fwd(x, w):
        return mod_lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                            feature_group_count=g)

    def loss(x, w):
        return mod_jnp.sum(fwd(x, w) ** 2)
    return fwd, grad(loss, (0, 1))


_JAX_SNIPPET = r"""
import json, os, statistics, sys, time
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np, jax, jax.numpy as jnp
from jax import lax
sys.path.insert(0, sys.argv[3])
import bench_nn as b
n, runs = int(sys.argv[1]), int(sys.argv[2])
only = sys.argv[4] if len(sys.argv) > 4 else ""
def med(fn):
    for _ in range(2): jax.block_until_ready(fn())
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); jax.block_until_ready(fn()); ts.append(time.perf_counter() - t)
    return statistics.median(ts)
res = {"version": jax.__version__}
for name, xs, ws, g, macs in b.cases(n, only):
    fwd, bwd = b._fns(lax, jnp, jax.nn, jax.grad, name, g)
    args = b._args(jnp, name, xs, ws)
    f, gf = jax.jit(fwd), jax.jit(bwd)
    res[name] = {"fwd": med(lambda: f(*args)), "fwdbwd": med(lambda: gf(*args))}
print(json.dumps(res))
"""


def jax_times(n, runs, only=""):
    py = os.environ.get("JAX_PYTHON")
    if not py:
        try:
            import jax  # noqa: F401
            py = sys.executable
        except Exception:
            return None
    try:
        out = subprocess.run([py, "-c", _JAX_SNIPPET, str(n), str(runs), os.path.dirname(os.path.abspath(__file__)), only],
                             capture_output=True, text=True, timeout=1800, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except Exception as e:  # pragma: no cover
        print(f"(JAX not measured: {e})", file=sys.stderr)
        return None


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    a = ap.parse_args(argv)
    # cranax is imported here: the JAX subprocess imports this file for ``cases`` and ``_fns`` only
    import cranax
    import cranax.lax as lax
    import cranax.numpy as jnp
    from cranax.bench._timing import block, call_times, machine_line
    n = 2 if a.quick else a.n
    runs = 2 if a.quick else a.runs
    print(machine_line())
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min)")
    mine = {}
    for name, xs, ws, g, macs in cases(n, a.only):
        fwd, bwd = _fns(lax, jnp, cranax.nn, cranax.grad, name, g)
        args = _args(jnp, name, xs, ws)
        f, gf = cranax.jit(fwd), cranax.jit(bwd)
        mine[name] = {"fwd": statistics.median(call_times(lambda: block(f(*args)), runs, 2)),
                      "fwdbwd": statistics.median(call_times(lambda: block(gf(*args)), runs, 2))}
    theirs = jax_times(n, runs, a.only)
    print(f"{'case':18s} {'pass':7s} {'cranax ms':>10s} {'GFLOP/s':>8s} {'JAX ms':>9s} {'GFLOP/s':>8s} {'ratio':>6s}")
    for name, xs, ws, g, macs in cases(n, a.only):
        for kind, mult in (("fwd", 1), ("fwdbwd", 3)):
            flops = (1 if name.startswith("maxpool") else 2) * macs * mult
            t = mine[name][kind]
            line = f"{name:18s} {kind:7s} {t * 1e3:10.2f} {flops / t / 1e9:8.1f}"
            if theirs:
                tj = theirs[name][kind]
                line += f" {tj * 1e3:9.2f} {flops / tj / 1e9:8.1f} {t / tj:6.2f}"
            print(line)
    if theirs:
        print(f"(JAX {theirs['version']}; ratio = cranax time / JAX time)")


if __name__ == "__main__":
    main()
