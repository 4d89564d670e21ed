"""``CRANAX_CPU_BLOCK_MATH=avx2`` reaches the libraries: faer (pulp's dispatch), faer's and the gemm crate's
matrix products run on AVX2 lanes even on an AVX-512 host (rust/backend/cpu/host_simd.rs hides AVX-512 from
the one feature detection at import, through CPUID faulting), and the factorizations still agree with NumPy.
"""
import json
import os
import platform
import subprocess
import sys

import numpy as np

CHILD = r'''
import json, sys
import numpy as np
import cranax
cranax.config.update("jax_enable_x64", True)
import cranax.numpy as jnp
import cranax.scipy.linalg as jsl
from cranax import _core
rng = np.random.default_rng(3)
n = 300
g = rng.standard_normal((n, n))
spd = g @ g.T + n * np.eye(n)
gen = g + 2 * np.sqrt(n) * np.eye(n)
out = {"levels": _core._simd_levels()}
for dt in ("float32", "float64"):
    a, s = gen.astype(dt), spd.astype(dt)
    L = np.asarray(jnp.linalg.cholesky(s), np.float64)
    lu, piv = jsl.lu_factor(a)
    lu = np.asarray(lu, np.float64)
    P = np.eye(n)[np.asarray(jsl.lu_factor(a)[1])]
    q, r = (np.asarray(t, np.float64) for t in jnp.linalg.qr(a))
    w, v = (np.asarray(t, np.float64) for t in jnp.linalg.eigh(s))
    sv = np.asarray(jnp.linalg.svd(a, compute_uv=False), np.float64)
    x = np.asarray(jnp.linalg.solve(a, a[:, :7]), np.float64)
    t = np.asarray(jsl.solve_triangular(s, s, lower=True), np.float64)
    prod = np.asarray(jnp.dot(a, s), np.float64)
    a64, s64 = a.astype(np.float64), s.astype(np.float64)
    lo = np.tril(lu, -1) + np.eye(n)
    up = np.triu(lu)
    # the row interchanges applied in order (LAPACK's ipiv)
    pa = a64.copy()
    for i, p in enumerate(np.asarray(jsl.lu_factor(a)[1])):
        pa[[i, p]] = pa[[p, i]]
    scale = np.abs(a64).max() * n
    out[dt] = {
        "chol": float(np.abs(L @ L.T - s64).max() / (np.abs(s64).max() * n)),
        "lu": float(np.abs(lo @ up - pa).max() / scale),
        "qr": float(np.abs(q @ r - a64).max() / scale),
        "eigh": float(np.abs(s64 @ v - v * w).max() / (np.abs(s64).max() * n)),
        "svd": float(np.abs(sv - np.linalg.svd(a64, compute_uv=False)).max() / (sv.max() * n)),
        "solve": float(np.abs(a64 @ x - a64[:, :7]).max() / scale),
        "trsm": float(np.abs(np.tril(s64) @ t - s64).max() / (np.abs(s64).max() * n)),
        "dot": float(np.abs(prod - a64 @ s64).max() / (np.abs(a64).max() * np.abs(s64).max() * n)),
    }
print("RESULT " + json.dumps(out))
'''


def _run(code, **env_extra):
    env = dict(os.environ)
    env.pop("CRANAX_CPU_BLOCK_MATH", None)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def _child(**env_extra):
    r = _run(CHILD, **env_extra)
    assert r.returncode == 0, r.stderr[-3000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def _flags():
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split())
    return set()


def _check_accuracy(res):
    # Residuals relative to the largest entry times n: each well under the dtype's epsilon (measured: float32
    # <= 1.5e-8, float64 <= 7e-18 in both modes on the AVX-512 host).
    for dt, tol in (("float32", 1e-7), ("float64", 1e-15)):
        for k, v in res[dt].items():
            assert v < tol, f"{dt} {k}: residual {v:.3g} over {tol:g}"


def test_avx2_mode_moves_faer_and_the_products_to_avx2():
    flags = _flags()
    res = _child(CRANAX_CPU_BLOCK_MATH="avx2")
    lv = res["levels"]
    if flags is None:
        # not an x86-64 Linux host: nothing to hide, and faer picks its own lanes
        assert lv["masking"] == "Unavailable"
    elif "avx512f" not in flags:
        assert lv["masking"] == "NotNeeded"
        assert lv["faer"] in ("avx2", "scalar") and lv["gemm"] in ("avx2", "scalar")
    elif "cpuid_fault" in flags:
        assert lv == {"masking": "Masked", "faer": "avx2", "gemm": "avx2"}, lv
    else:
        # the kernel offers no CPUID faulting: the mode covers cranax's own kernels only, and says so
        assert lv["masking"] == "Unavailable" and lv["gemm"] == "avx512", lv
    _check_accuracy(res)


def test_default_mode_keeps_the_hosts_lanes():
    flags = _flags()
    res = _child()
    lv = res["levels"]
    assert lv["masking"] == "NotRequested"
    if flags is not None and {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= flags:
        assert lv["faer"] == "avx512" and lv["gemm"] == "avx512", lv
    if flags is not None and "avx512f" not in flags and {"avx2", "fma"} <= flags:
        assert lv["faer"] == "avx2" and lv["gemm"] == "avx2", lv
    _check_accuracy(res)


def test_avx2_mode_restores_the_previous_segfault_handler():
    # faulthandler's SIGSEGV handler, installed before the import, still reports a real fault afterwards:
    # the masked detection chained and then restored it.
    code = ("import faulthandler, ctypes; faulthandler.enable()\n"
            "import cranax, cranax.numpy as jnp\n"
            "from cranax import _core; print(_core._simd_levels()['masking'], flush=True)\n"
            "jnp.linalg.cholesky(jnp.eye(3)).block_until_ready()\n"
            "ctypes.string_at(0)\n")
    r = _run(code, CRANAX_CPU_BLOCK_MATH="avx2")
    assert r.returncode != 0
    assert "Fatal Python error: Segmentation fault" in r.stderr, r.stderr[-2000:]
    assert r.stdout.split()[0] in ("Masked", "NotNeeded", "Unavailable")
