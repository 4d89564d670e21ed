"""GPU backend figures (issue 9): selu and sum on 1e8 float32, a 4096x4096 float32 matmul, dispatch latency.

    python benches/bench_gpu.py                 # full sizes (a real GPU)
    python benches/bench_gpu.py --quick         # small sizes (smoke test, e.g. on lavapipe)
    python benches/bench_gpu.py --json out.json # also write the figures as JSON

Every figure is the median wall time of calls waited for with ``block_until_ready``, after warm-up, with the
inputs already on the device. Each result is compared with NumPy before anything is timed; a wrong result is
reported as such and not ranked. JAX, when importable and it sees a GPU, is measured in the same process on its
own GPU. The adapter, its backend and driver are printed; a software rasterizer (lavapipe) is labelled and its
times are correctness runs, never GPU speed.
"""
import argparse
import json
import platform
import statistics
import sys

import numpy as np

import cranax
import cranax.numpy as jnp
from cranax import _core
from cranax.bench._timing import call_times


def median_time(fn, runs, warmup=2):
    ts = call_times(fn, runs, warmup)
    return statistics.median(ts), min(ts)


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_np(x, alpha=1.67, lmbda=1.05):
    x = x.astype(np.float64)
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def _jax_gpu():
    try:
        import jax
        import jax.numpy as jjnp
        devs = jax.devices("gpu")
        return (jax, jjnp, devs[0]) if devs else None
    except Exception:
        return None


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-jax", action="store_true")
    a = ap.parse_args(argv)
    n = 1_000_000 if a.quick else 100_000_000
    m = 256 if a.quick else 4096
    runs = 5 if a.quick else a.runs

    gpus = _core.gpu_devices() if getattr(_core, "HAS_GPU_BACKEND", False) else []
    if not gpus:
        print(f"no GPU device: {_core.gpu_unavailable_reason()}")
        return 1
    dev = gpus[0]
    info = _core.gpu_info(dev)
    soft = bool(info["software"])
    print(f"# cranax GPU backend: {dev!r} = {info['name']} via {info['backend']} ({info['device_type']}), "
          f"driver {info['driver']} {info['driver_info']}"
          + ("  [SOFTWARE rasterizer: correctness runs, not GPU speed]" if soft else ""))
    print(f"# host: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}; max storage binding {info['max_storage_buffer_binding_size']:,} bytes; "
          f"shader_f16 {info['shader_f16']}")
    out = {"adapter": info["name"], "backend": info["backend"], "software": soft, "driver": info["driver_info"],
           "n": n, "m": m, "rows": []}
    rng = np.random.default_rng(0)
    xh = rng.standard_normal(n, dtype=np.float32)
    ah = (rng.standard_normal((m, m), dtype=np.float32) / np.float32(np.sqrt(m)))
    bh = rng.standard_normal((m, m), dtype=np.float32)

    jx = None if a.no_jax else _jax_gpu()

    def row(what, t, tmin, figure, correct, note=""):
        out["rows"].append({"what": what, "median_s": t, "min_s": tmin, "figure": figure, "correct": correct,
                            "note": note})
        flag = "" if correct else "  WRONG RESULT (not ranked)"
        print(f"{what:44s} {t * 1e3:10.3f} ms (min {tmin * 1e3:.3f})  {figure}{flag} {note}", flush=True)

    # -- selu on n float32: 8 bytes per element moved (read + write)
    x = cranax.device_put(xh, dev)
    f_selu = cranax.jit(selu)
    r = np.asarray(f_selu(x).block_until_ready())
    want = selu_np(xh)
    ok = bool(np.allclose(r, want, rtol=1e-5, atol=1e-6))
    t, tmin = median_time(lambda: f_selu(x).block_until_ready(), runs)
    row(f"cranax selu {n:.0e} f32", t, tmin, f"{8 * n / t / 1e9:8.1f} GB/s", ok)
    # -- sum of n float32: 4 bytes per element read
    f_sum = cranax.jit(jnp.sum)
    s = float(f_sum(x).block_until_ready())
    want_s = float(np.sum(xh.astype(np.float64)))
    ok = abs(s - want_s) <= 1e-4 * float(np.sum(np.abs(xh.astype(np.float64))))
    t, tmin = median_time(lambda: f_sum(x).block_until_ready(), runs)
    row(f"cranax sum {n:.0e} f32", t, tmin, f"{4 * n / t / 1e9:8.1f} GB/s", ok, f"(sum {s:.6g} vs {want_s:.6g})")
    del x
    # -- m x m matmul
    A = cranax.device_put(ah, dev)
    B = cranax.device_put(bh, dev)
    f_mm = cranax.jit(lambda p, q: p @ q)
    r = np.asarray(f_mm(A, B).block_until_ready())
    want = ah.astype(np.float64) @ bh.astype(np.float64)
    err = float(np.max(np.abs(r - want)))
    ok = err <= 1e-3 * float(np.max(np.abs(want))) + 1e-4
    t, tmin = median_time(lambda: f_mm(A, B).block_until_ready(), max(3, runs // 2))
    row(f"cranax matmul {m}x{m} f32", t, tmin, f"{2 * m ** 3 / t / 1e12:8.2f} TFLOP/s", ok, f"(max|err| {err:.2g})")
    del A, B
    # -- dispatch latency: a tiny jitted kernel, waited for each call; and queued calls per second
    xs = cranax.device_put(np.arange(16, dtype=np.float32), dev)
    f_tiny = cranax.jit(lambda v: v * 2.0 + 1.0)
    ok = bool(np.array_equal(np.asarray(f_tiny(xs)), np.arange(16, dtype=np.float32) * 2 + 1))
    t, tmin = median_time(lambda: f_tiny(xs).block_until_ready(), max(runs * 10, 50), warmup=10)
    row("cranax tiny kernel f32[16], call+wait", t, tmin, f"{t * 1e6:8.1f} µs/call", ok)

    def queued(k=200):
        y = xs
        for _ in range(k):
            y = f_tiny(y)
        y.block_until_ready()

    t, tmin = median_time(queued, 5)
    row("cranax 200 chained tiny calls, one wait", t, tmin, f"{t / 200 * 1e6:8.1f} µs/call", True)

    # -- control flow on the device: a while loop (predicate read back per iteration) and a scan
    from cranax import lax
    f_while = cranax.jit(lambda v: lax.while_loop(lambda c: c[0] < 100, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0),
                                                  (0, v))[1])
    r = np.asarray(f_while(xs))
    want = np.arange(16, dtype=np.float32)
    for _ in range(100):
        want = want * np.float32(0.5) + np.float32(1.0)
    ok = bool(np.allclose(r, want, rtol=1e-6))
    t, tmin = median_time(lambda: f_while(xs).block_until_ready(), 5)
    row("cranax while_loop, 100 iterations", t, tmin, f"{t / 100 * 1e6:8.1f} µs/iteration", ok)
    hs = rng.standard_normal((100, 256), dtype=np.float32)
    w = (rng.standard_normal((256, 256), dtype=np.float32) / 16)
    hd, wd = cranax.device_put(hs, dev), cranax.device_put(w, dev)
    f_scan = cranax.jit(lambda xs_, w_: lax.scan(lambda h, x: (jnp.tanh(h @ w_ + x), None), jnp.zeros(256), xs_)[0])
    r = np.asarray(f_scan(hd, wd))
    h = np.zeros(256, np.float64)
    for x_ in hs:
        h = np.tanh(h @ w.astype(np.float64) + x_)
    ok = bool(np.allclose(r, h, atol=1e-4))
    t, tmin = median_time(lambda: f_scan(hd, wd).block_until_ready(), 5)
    row("cranax scan RNN 256, 100 steps", t, tmin, f"{t / 100 * 1e6:8.1f} µs/step", ok)

    if jx is not None:
        jax, jjnp, jdev = jx
        print(f"# JAX {jax.__version__} on {jdev} ({getattr(jdev, 'device_kind', '')}), same process")
        xj = jax.device_put(xh, jdev)
        js = jax.jit(lambda v, alpha=1.67, lmbda=1.05: lmbda * jjnp.where(v > 0, v, alpha * jjnp.exp(v) - alpha))
        js(xj).block_until_ready()
        t, tmin = median_time(lambda: js(xj).block_until_ready(), runs)
        row(f"jax selu {n:.0e} f32", t, tmin, f"{8 * n / t / 1e9:8.1f} GB/s", True)
        jsum = jax.jit(jjnp.sum)
        t, tmin = median_time(lambda: jsum(xj).block_until_ready(), runs)
        row(f"jax sum {n:.0e} f32", t, tmin, f"{4 * n / t / 1e9:8.1f} GB/s", True)
        del xj
        Aj, Bj = jax.device_put(ah, jdev), jax.device_put(bh, jdev)
        for prec in ("highest", "default"):
            jm = jax.jit(lambda p, q, prec=prec: jjnp.matmul(p, q, precision=prec))
            jm(Aj, Bj).block_until_ready()
            t, tmin = median_time(lambda: jm(Aj, Bj).block_until_ready(), max(3, runs // 2))
            row(f"jax matmul {m}x{m} f32 precision={prec}", t, tmin, f"{2 * m ** 3 / t / 1e12:8.2f} TFLOP/s", True,
                "(default = TF32 tensor cores)" if prec == "default" else "(full f32)")
        jlax = jax.lax
        jw = jax.jit(lambda v: jlax.while_loop(lambda c: c[0] < 100, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, v))[1])
        xsj0 = jax.device_put(np.arange(16, dtype=np.float32), jdev)
        jw(xsj0).block_until_ready()
        t, tmin = median_time(lambda: jw(xsj0).block_until_ready(), 5)
        row("jax while_loop, 100 iterations", t, tmin, f"{t / 100 * 1e6:8.1f} µs/iteration", True)
        js_ = jax.jit(lambda xs_, w_: jlax.scan(lambda h, x: (jjnp.tanh(h @ w_ + x), None), jjnp.zeros(256), xs_)[0])
        hj, wj = jax.device_put(hs, jdev), jax.device_put(w, jdev)
        js_(hj, wj).block_until_ready()
        t, tmin = median_time(lambda: js_(hj, wj).block_until_ready(), 5)
        row("jax scan RNN 256, 100 steps", t, tmin, f"{t / 100 * 1e6:8.1f} µs/step", True)
        xsj = jax.device_put(np.arange(16, dtype=np.float32), jdev)
        jt = jax.jit(lambda v: v * 2.0 + 1.0)
        t, tmin = median_time(lambda: jt(xsj).block_until_ready(), max(runs * 10, 50), warmup=10)
        row("jax tiny kernel f32[16], call+wait", t, tmin, f"{t * 1e6:8.1f} µs/call", True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0 if all(r["correct"] for r in out["rows"]) else 2


if __name__ == "__main__":
    sys.exit(main())
