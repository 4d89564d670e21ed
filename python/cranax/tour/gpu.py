"""Tour section ``gpu``: the same jitted programs on every device (a GPU column when a GPU device exists).

Each GPU is named with its adapter and backend; a software rasterizer (lavapipe/llvmpipe) is labelled as
such and its times are correctness runs, never GPU speed.
"""
import sys

import numpy as np

import cranax
import cranax.numpy as jnp
from cranax import _core
from ..bench import _timing as bu

__all__ = ["tour_gpu"]


def tour_gpu(out=None, quick=False):
    """GPU column: selu, sum and matmul on each device (adapter and backend named; software labelled)."""

    tour = out if hasattr(out, "say") else None
    if tour is not None:
        say = tour.say
        quick = getattr(tour, "quick", quick)
        tour.title("the same programs on every device (GPU column)")
    else:
        stream = sys.stdout if out is None else out

        def say(*a):
            print(*a, file=stream)

    gpus = _core.gpu_devices() if getattr(_core, "HAS_GPU_BACKEND", False) else []
    if not gpus:
        why = _core.gpu_unavailable_reason() if hasattr(_core, "gpu_unavailable_reason") else "no gpu backend"
        say(f"no GPU device: {why}")
        return
    devices = [cranax.devices("cpu")[0]] + list(gpus)
    labels = []
    for d in devices:
        if d.platform == "cpu":
            labels.append("cpu (Cranelift)")
            continue
        info = _core.gpu_info(d)
        soft = " SOFTWARE, not GPU speed" if info["software"] else ""
        labels.append(f"{d!r}: {info['name']} via {info['backend']}{soft}")
        say(f"{d!r}: {info['name']}, {info['backend']}, {info['device_type']}, driver {info['driver_info']}"
            + ("  [software rasterizer: times below are correctness runs, not GPU speed]" if info["software"] else ""))
    rng = np.random.default_rng(0)
    n = 100_000 if quick else 1_000_000
    m = 128 if quick else 256
    xh = rng.standard_normal(n).astype(np.float32)
    ah = rng.standard_normal((m, m)).astype(np.float32)

    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    progs = [(f"selu {n:,}", cranax.jit(selu), xh), (f"sum {n:,}", cranax.jit(jnp.sum), xh),
             (f"matmul {m}x{m}", cranax.jit(lambda a: a @ a), ah)]
    say(f"{'program':18s} " + " ".join(f"{('dev ' + str(i)):>12s}" for i in range(len(devices))) + "   max|Δ| vs cpu")
    for name, f, h in progs:
        times, res = [], []
        for d in devices:
            x = cranax.device_put(h, d)
            r = f(x).block_until_ready()
            res.append(np.asarray(r))
            times.append(bu.median_time(lambda: f(x).block_until_ready(), budget=0.2 if quick else 0.5, max_n=11))
        diff = max(float(np.max(np.abs(r.astype(np.float64) - res[0]))) for r in res[1:])
        say(f"{name:18s} " + " ".join(f"{bu.fmt_time(t):>12s}" for t in times) + f"   {diff:.3g}")
    for i, lab in enumerate(labels):
        say(f"  dev {i}: {lab}")
