"""float32 transcendental functions give JAX 0.10.2's bits (XLA:CPU's sequences; sin/cos/tan/atan/atan2: the C
library's sinf/cosf/tanf/atanf/atan2f, which XLA:CPU calls; asin/acos: XLA's compositions over atan2f), in every
block-math mode: the default (AVX-512 or AVX2 block routines), `avx2`
and `off` (inline f32x4 code only).

The digests below were recorded by running this file's `CHILD` code under JAX 0.10.2 (jaxlib's CPU backend, on
Linux x86-64 with glibc 2.36 and FMA): the first 16 hex digits of the SHA-256 of the float32 outputs' bits, NaNs
made one NaN, over a fixed grid of 2^20 points (2^18 random bit patterns, 2^18 uniform in each of [-1, 1],
[-10, 10], [-100, 100]; atan2's second operand is that grid reversed after a roll by 12345). sin/cos's reference is
the host C library for |x| >= 2^26, tan's for |x| >= 2^23 (cranax calls it there, as XLA does); glibc 2.28 and
later compute those lanes as 2.36 does.
"""
import json
import os
import subprocess
import sys

import pytest

# Recorded from JAX 0.10.2 (`jax.jit(f)(grid())`, digest as `CHILD` computes it).
JAX_DIGESTS = {
    "sin": "9c02585a78c9cada", "cos": "e0120880d6898308", "exp": "30b9aedbf123f0b5", "log": "b1e1ce22e4be6c1a",
    "expm1": "5e150fef513163c2", "log1p": "8cce566ee96229f6", "sinh": "e2fe6237b690b5ec",
    "cosh": "a127df4dd6bfeba5", "tanh": "b4b4294db24dfa98", "asinh": "df1769fd98f6301e",
    "atanh": "0744445c321cae70", "erf": "8db454ac61d5931d", "softplus": "a456e0ed72b7e9a5",
    "logistic": "0d550af894d378b7", "atan": "de26b619bad1d412",
    "tan": "b18f509e96fad4f3", "asin": "3eb58160aa6ff286", "acos": "31342de0dbe593d9", "atan2": "e76c4dacf547a5ef",
}

CHILD = r'''
import hashlib, json
import numpy as np
import cranax, cranax.numpy as jnp
from cranax.lax import logistic
from cranax.nn import softplus
from cranax.scipy.special import erf

rng = np.random.default_rng(20261206)
q = 1 << 18
bits = rng.integers(0, 1 << 32, q, dtype=np.uint64).astype(np.uint32).view(np.float32)
x = np.concatenate([bits, rng.uniform(-1, 1, q).astype(np.float32), rng.uniform(-10, 10, q).astype(np.float32),
                    rng.uniform(-100, 100, q).astype(np.float32)])

def digest(y):
    y = np.asarray(y, dtype=np.float32).copy()
    y[np.isnan(y)] = np.float32(np.nan)
    return hashlib.sha256(y.view(np.uint32).astype("<u4").tobytes()).hexdigest()[:16]

F = dict(sin=jnp.sin, cos=jnp.cos, exp=jnp.exp, log=jnp.log, expm1=jnp.expm1, log1p=jnp.log1p, sinh=jnp.sinh,
         cosh=jnp.cosh, tanh=jnp.tanh, asinh=jnp.arcsinh, atanh=jnp.arctanh, erf=erf, softplus=softplus,
         logistic=logistic, atan=jnp.arctan, tan=jnp.tan, asin=jnp.arcsin, acos=jnp.arccos)
out = {n: digest(cranax.jit(f)(x)) for n, f in F.items()}
out["atan2"] = digest(cranax.jit(jnp.arctan2)(x, np.roll(x, 12345)[::-1].copy()))
print(json.dumps(out))
'''


@pytest.mark.parametrize("mode", ["default", "avx2", "off"])
def test_float32_math_gives_jax_bits(mode):
    env = dict(os.environ)
    env.pop("CRANAX_CPU_BLOCK_MATH", None)
    if mode != "default":
        env["CRANAX_CPU_BLOCK_MATH"] = mode
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    wrong = {n: (got[n], want) for n, want in JAX_DIGESTS.items() if got[n] != want}
    assert not wrong, f"{mode}: digests differ from JAX's: {wrong}"
