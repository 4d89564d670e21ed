"""FFT figures (issue 20): jnp.fft.fft of 2^20 complex64 and jnp.fft.rfft of 2^20 float32, cranax vs NumPy
vs JAX (JAX in a subprocess of the same run, from the interpreter named by JAX_PYTHON, if any).

Run: ``JAX_PYTHON=/path/to/jax-venv/bin/python python benches/bench_fft.py``. Medians of 15 calls after 3
warm-ups, each waited with ``block_until_ready()``; the max relative difference from NumPy (float64
internally) is printed too."""
import json
import os
import subprocess
import sys
import time

import numpy as np

N = 1 << 20
REPS = 15

_CASES = """
import numpy as np
rng = np.random.default_rng(0)
zc = (rng.normal(size=N) + 1j * rng.normal(size=N)).astype(np.complex64)
xr = rng.normal(size=N).astype(np.float32)
"""


def _median(f, reps=REPS):
    for _ in range(3):
        f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


_JAX = """
import json, time, numpy as np, jax, jax.numpy as jnp
N = %d
%s
def med(f):
    for _ in range(3): f()
    ts = []
    for _ in range(%d):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return float(np.median(ts))
fft, rfft = jax.jit(jnp.fft.fft), jax.jit(jnp.fft.rfft)
a, b = jnp.asarray(zc), jnp.asarray(xr)
print(json.dumps({"fft": med(lambda: fft(a).block_until_ready()), "rfft": med(lambda: rfft(b).block_until_ready()),
                  "version": jax.__version__}))
""" % (N, _CASES, REPS)


def main():
    import cranax
    import cranax.numpy as jnp
    g = {"N": N}
    exec(_CASES, g)
    zc, xr = g["zc"], g["xr"]
    fft, rfft = cranax.jit(jnp.fft.fft), cranax.jit(jnp.fft.rfft)
    a, b = jnp.asarray(zc), jnp.asarray(xr)
    res = {
        "fft": {"cranax": _median(lambda: fft(a).block_until_ready()), "numpy": _median(lambda: np.fft.fft(zc))},
        "rfft": {"cranax": _median(lambda: rfft(b).block_until_ready()), "numpy": _median(lambda: np.fft.rfft(xr))},
    }
    err = {"fft": np.max(np.abs(np.asarray(fft(a)) - np.fft.fft(zc.astype(np.complex128)))) /
           np.max(np.abs(np.fft.fft(zc.astype(np.complex128)))),
           "rfft": np.max(np.abs(np.asarray(rfft(b)) - np.fft.rfft(xr.astype(np.float64)))) /
           np.max(np.abs(np.fft.rfft(xr.astype(np.float64))))}
    jax_py = os.environ.get("JAX_PYTHON")
    jax_ver = None
    if jax_py:
        out = subprocess.run([jax_py, "-c", _JAX], capture_output=True, text=True, check=True).stdout
        j = json.loads(out.strip().splitlines()[-1])
        jax_ver = j.pop("version")
        for k, v in j.items():
            res[k]["jax"] = v
    print(f"load: {os.getloadavg()}; numpy {np.__version__}; jax {jax_ver}")
    print("| figure | cranax | NumPy | JAX | cranax / NumPy | cranax / JAX | max rel diff vs NumPy f64 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    names = {"fft": "jnp.fft.fft, 2^20 complex64", "rfft": "jnp.fft.rfft, 2^20 float32"}
    for k, r in res.items():
        jx = r.get("jax")
        vs_jax = "-" if jx is None else f"{r['cranax'] / jx:.2f}x"
        print(f"| {names[k]} | {r['cranax'] * 1e3:.2f} ms | {r['numpy'] * 1e3:.2f} ms | "
              f"{'-' if jx is None else f'{jx * 1e3:.2f} ms'} | {r['cranax'] / r['numpy']:.2f}x | "
              f"{vs_jax} | "
              f"{err[k]:.1e} |")


if __name__ == "__main__":
    sys.exit(main())
