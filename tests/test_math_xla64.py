"""float64 ``exp``, ``expm1``, ``log1p`` and ``erf_inv`` bit for bit as JAX 0.10.2 computes them on the CPU
(XLA:CPU's own sequences, ``rust/backend/cpu/math_xla64.rs``; f64 ``log`` is libm's in both). The digests
are sha256 prefixes of JAX's results over the grids below, recorded with ``jax_enable_x64``; the sample
values were printed by JAX. The f64 samplers of ``random`` (``normal`` = sqrt(2) * erf_inv(u), ...) rest on
these. The sequences use fused multiply-adds through ``f64::mul_add`` (exact with or without FMA hardware),
so the digests hold on any x86-64/aarch64 host."""
import hashlib
import math

import numpy as np
import pytest
from scipy import special

import cranax
from cranax import lax
import cranax.numpy as jnp


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(np.asarray(a)).tobytes()).hexdigest()[:32]


GRIDS = {
    "exp": (jnp.exp, lambda: np.linspace(-746.0, 710.0, 400001)),
    "expm1": (jnp.expm1, lambda: np.concatenate([np.linspace(-40.0, 40.0, 200001), np.linspace(-1.0, 1.0, 200001)])),
    "log1p": (jnp.log1p, lambda: np.concatenate([np.linspace(-0.999, 3.0, 200001),
                                                 np.geomspace(1e-300, 1e300, 200001)])),
    "erf_inv": (lax.erf_inv, lambda: np.concatenate([np.linspace(-1.0, 1.0, 400001),
                                                     1 - np.geomspace(1e-16, 1e-1, 100001)])),
}

# name: (digest of the whole grid, values at indices 1, 1000, 123457, 300000), from JAX 0.10.2
JAX = {
    "exp": ("493e1859b7fdd8e8af914b38d639f082", [0.0, 0.0, 1.5173372603123885e-129, 1.8445513014941297e+150]),
    "expm1": ("7874d808fb4a2a8f369079a6148ce61f", [-1.0, -1.0, 11881.238487017186, -9.999950000121157e-06]),
    "log1p": ("39a8a29f2147bfedd6c5a5d6a15b568d",
              [-6.887957553658706, -3.8634709648459813, 0.904024899174502, 0.6896992675439858]),
    "erf_inv": ("67f539fd2a7ca9a9a198eeb0a3e4f918",
                [-3.2277923587578217, -1.984872612615533, -0.3533425964794918, 0.47693627620447004]),
}


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_f64_bit_identical_to_jax(name, x64):
    f, grid = GRIDS[name]
    y = np.asarray(cranax.jit(f)(grid()))
    assert y.dtype == np.float64
    assert y[[1, 1000, 123457, 300000]].tolist() == JAX[name][1], name
    assert _digest(y) == JAX[name][0], name


def test_f64_special_values(x64):
    inf, nan = math.inf, math.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, 709.8, -745.2])
    e = np.asarray(cranax.jit(jnp.exp)(x))
    assert e[0] == 1 and e[1] == 1 and e[2] == inf and e[3] == 0 and np.isnan(e[4]) and e[5] == inf and e[6] == 0
    m = np.asarray(cranax.jit(jnp.expm1)(x))
    assert m[0] == 0 and math.copysign(1, m[1]) == -1 and m[2] == inf and m[3] == -1 and np.isnan(m[4])
    lp = np.asarray(cranax.jit(jnp.log1p)(np.array([0.0, -1.0, -2.0, inf, 1e-300])))
    assert lp[0] == 0 and lp[1] == -inf and np.isnan(lp[2]) and lp[3] == inf and lp[4] == 1e-300
    ei = np.asarray(cranax.jit(lax.erf_inv)(np.array([0.0, 1.0, -1.0, 1.5, nan])))
    assert ei[0] == 0 and ei[1] == inf and ei[2] == -inf and np.isnan(ei[3]) and np.isnan(ei[4])


def test_f64_accuracy_against_numpy(x64):
    # XLA's sequences are not correctly rounded: within a few ulp of NumPy/SciPy (erf_inv away from ±1,
    # where -x**2 rounds and JAX's result loses digits too)
    rng = np.random.default_rng(0)
    x = rng.uniform(-700, 700, 100000)
    for f, ref in [(jnp.exp, np.exp), (jnp.expm1, np.expm1)]:
        got = np.asarray(cranax.jit(f)(x))
        want = ref(x)
        ok = np.isfinite(want) & (np.abs(want) > 1e-300)
        assert np.max(np.abs(got[ok] - want[ok]) / np.spacing(np.abs(want[ok]))) <= 4
    u = rng.uniform(-0.9, 3, 100000)
    err = np.abs(np.asarray(cranax.jit(jnp.log1p)(u)) - np.log1p(u)) / np.spacing(np.abs(np.log1p(u)))
    # XLA applies Cephes' rational function (designed for 1 + x in [sqrt(1/2), sqrt(2)]) down to
    # x = -0.414: up to 128 ulp in (-0.414, -0.29), as JAX's own log1p
    inside = (u > -0.4143) & (u < -0.29)
    assert err[~inside].max() <= 4 and err[inside].max() <= 160
    y = rng.uniform(-0.99, 0.99, 100000)
    z = np.asarray(cranax.jit(lax.erf_inv)(y))
    want = special.erfinv(y)
    assert np.max(np.abs(z - want) / np.spacing(np.abs(want))) <= 32


# ---------------------------------------------------------------------------------------------------------------
# The other float64 functions: XLA:CPU calls the C library for sin, cos, tan, atan, atan2 and cbrt (with the
# operand's bits: sin/tan/atan of a subnormal x give x back under DAZ, as JAX does), expands tanh (Eigen's rational
# form), and JAX composes sinh, cosh, asinh, acosh, atanh, exp2, logistic, asin and acos of those and of exp,
# expm1, log, log1p and atan2; log10 is log(x) * (1/ln 10 rounded). The same in every block-math mode and without
# SIMD: exp, expm1, tanh, logistic, sinh, cosh and exp2 (and log1p and atanh below sqrt(2) - 1, the C library's log
# above) run as float64 block routines on long rows (f64x8 / f64x4 lanes, `blockmath::FUNCTIONS64`) and per element
# elsewhere (row tails, short rows, `off`, no SIMD), with the same bits: the `tail_`/`rows_` entries cut odd lengths
# at an odd offset and rows of 1001 and 2049, and jax.nn's silu, softplus and sigmoid compose them. (jax.nn.gelu in
# float64 is not JAX's bits on 4% of uniform points in [-10, 10], on main too: its steps are not looked at here.)

# Recorded from JAX 0.10.2 with jax_enable_x64 (`jax.jit(f)(x)` over CHILD64's grid, digest as CHILD64 computes
# it; glibc 2.36's libm, x86-64 with FMA).
JAX_DIGESTS64 = {
    "sin": "1f2d21f2bcf7d037", "cos": "b70be510055acc5b", "tan": "87abf474fe449da3", "asin": "766efd8f89837259",
    "acos": "0c258231ff661f86", "atan": "88c04d48b933484d", "sinh": "062234d892c9566f", "cosh": "d7c2ae5953cc20b3",
    "tanh": "cd95c8322177fb21", "asinh": "8ae8b24066604cd2", "acosh": "0b0947d05a342ad5", "atanh": "333b1e677282dcd1",
    "exp2": "badea8189265a24c", "expm1": "9c5e7d5ede856e8f", "cbrt": "1ab72ab1b608a9cd", "log10": "8edf088afc9a3823",
    "logistic": "8be153c9621aad88", "erf": "183ca9c66a3b2b16", "atan2": "f6c6f2ebd9e9e6ac",
    "exp": "7bcdbafc7503f10e", "tail_exp": "ab09c5674971c457", "tail_expm1": "d1c3260033146e7b",
    "tail_tanh": "7c9a5ee787be21dc", "tail_logistic": "af75756e66f09afe", "tail_sinh": "ff711f666676987d",
    "tail_cosh": "d6e0e3342581709d", "tail_exp2": "f483bbd3a02e6a1f", "rows_tanh": "ddddb21bcd785058",
    "rows_sinh": "bc5b9462908c5f40", "silu": "7560bf9f2bf759f7", "softplus": "690cfc3281181ea5",
    "sigmoid": "9024cd3622dc9989", "tanh_mlp": "58d66393284fe687", "tail_log1p": "8dec22d5d02cb04f",
    "tail_atanh": "f6aab01a2ebbfd6c", "log1p": "a79bcb442c401a61", "log1p_small": "6a511289acdc7fc6",
}

CHILD64 = r'''
import hashlib, json
import numpy as np
import cranax
import cranax.numpy as jnp
import cranax.nn as nn
from cranax.scipy.special import erf
from cranax.lax import logistic
cranax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(20261207)
q = 1 << 16
bits = rng.integers(0, 1 << 64, q, dtype=np.uint64)
x = np.concatenate([bits.view(np.float64), rng.uniform(-1, 1, q), rng.uniform(-10, 10, q),
                    rng.uniform(-1000, 1000, q), rng.uniform(-1e-3, 1e-3, q)])

def digest(y):
    y = np.asarray(y, dtype=np.float64).copy()
    y[np.isnan(y)] = np.nan
    return hashlib.sha256(y.view(np.uint64).astype("<u8").tobytes()).hexdigest()[:16]

F = dict(sin=jnp.sin, cos=jnp.cos, tan=jnp.tan, asin=jnp.arcsin, acos=jnp.arccos, atan=jnp.arctan,
         sinh=jnp.sinh, cosh=jnp.cosh, tanh=jnp.tanh, asinh=jnp.arcsinh, acosh=jnp.arccosh, atanh=jnp.arctanh,
         exp2=jnp.exp2, expm1=jnp.expm1, cbrt=jnp.cbrt, log10=jnp.log10, logistic=logistic, erf=erf)
out = {n: digest(cranax.jit(f)(x)) for n, f in F.items()}
out["atan2"] = digest(cranax.jit(jnp.arctan2)(x, np.roll(x, 12345)[::-1].copy()))
out["exp"] = digest(cranax.jit(jnp.exp)(x))
t = np.ascontiguousarray(x[3:100006][::-1])
F["log1p"] = jnp.log1p
for n in ("exp", "expm1", "tanh", "logistic", "sinh", "cosh", "exp2", "log1p", "atanh"):
    out["tail_" + n] = digest(cranax.jit(F.get(n, jnp.exp))(t))
out["log1p"] = digest(cranax.jit(jnp.log1p)(x))
out["log1p_small"] = digest(cranax.jit(jnp.log1p)(x[q:2 * q] * 0.45))
out["rows_tanh"] = digest(cranax.jit(jnp.tanh)(x[:7 * 1001].reshape(7, 1001)))
out["rows_sinh"] = digest(cranax.jit(lambda v: jnp.sinh(v) * 2.0 + 1.0)(x[:5 * 2049].reshape(5, 2049)))
y = x[2 * q:3 * q]
for n in ("silu", "softplus", "sigmoid"):
    out[n] = digest(cranax.jit(getattr(nn, n))(y))
out["tanh_mlp"] = digest(cranax.jit(lambda v: jnp.tanh(v * 0.5 + 0.25) * jnp.exp(-v * v))(y))
print(json.dumps(out))
'''


@pytest.mark.parametrize("mode", ["default", "avx2", "off", "no_simd"])
def test_float64_math_gives_jax_bits(mode):
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ)
    env.pop("CRANAX_CPU_BLOCK_MATH", None)
    env.pop("CRANAX_CPU_NO_SIMD", None)
    if mode == "no_simd":
        env["CRANAX_CPU_NO_SIMD"] = "1"
    elif mode != "default":
        env["CRANAX_CPU_BLOCK_MATH"] = mode
    r = subprocess.run([sys.executable, "-c", CHILD64], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    wrong = {n: (got[n], want) for n, want in JAX_DIGESTS64.items() if got[n] != want}
    assert not wrong, f"{mode}: digests differ from JAX's: {wrong}"


def test_float64_subnormals_and_specials(x64):
    # values printed by JAX 0.10.2: sin/tan/atan/expm1/asin of a subnormal give it back (the C library's or XLA's
    # tiny-argument path returns x itself), atan2 with a subnormal numerator reads it as zero in the quotient
    s = 8.1621549541288e-310
    x = np.array([s, -s])
    for f in (jnp.sin, jnp.tan, jnp.arctan, jnp.expm1):
        np.testing.assert_array_equal(np.asarray(cranax.jit(f)(x)).view(np.uint64), x.view(np.uint64))
    # the others compute on it as zero (DAZ), keeping the sign
    for f in (jnp.tanh, jnp.arcsin, jnp.sinh, jnp.cbrt, jnp.arctanh, jnp.arcsinh):
        np.testing.assert_array_equal(np.asarray(cranax.jit(f)(x)).view(np.uint64), np.array([0.0, -0.0]).view(np.uint64))
    np.testing.assert_array_equal(np.asarray(cranax.jit(jnp.cos)(x)), [1.0, 1.0])
    at = np.asarray(cranax.jit(jnp.arctan2)(np.array([s, s, -s, 1.0]), np.array([-1.0, 1.0, -2.0, s])))
    np.testing.assert_array_equal(at, [-math.pi, 0.0, -math.pi, math.pi / 2])
    inf, nan = math.inf, math.nan
    v = np.array([0.0, -0.0, 1.0, -1.0, inf, -inf, nan, 2.0, 1e300, 1e-300])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(cranax.jit(jnp.arcsin)(v[:4])), np.arcsin(v[:4]))
        np.testing.assert_array_equal(np.asarray(cranax.jit(jnp.arccos)(v[:4])), np.arccos(v[:4]))
        for f, ref in ((jnp.sinh, np.sinh), (jnp.cosh, np.cosh), (jnp.tanh, np.tanh), (jnp.arcsinh, np.arcsinh),
                       (jnp.arctanh, np.arctanh), (jnp.exp2, np.exp2), (jnp.cbrt, np.cbrt)):
            got, want = np.asarray(cranax.jit(f)(v)), ref(v)
            np.testing.assert_allclose(got, want, rtol=4e-16, err_msg=f.__name__)
    a = np.asarray(cranax.jit(jnp.arccosh)(np.array([1.0, 0.5, inf, 1e308])))
    assert a[0] == 0 and np.isnan(a[1]) and a[2] == inf and abs(a[3] - np.arccosh(1e308)) < 1e-13


def test_float64_functions_accuracy(x64):
    # XLA's sequences and compositions are not correctly rounded: these are JAX's own errors against NumPy
    # (measured; cranax gives JAX's bits): sinh/cosh round x - ln 2 first, exp2 rounds x * ln 2 (both grow
    # with |x|), atanh near +-0.414 runs Cephes' log1p outside its range (as log1p, above)
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-30, 30, 50000), rng.uniform(-1, 1, 50000)])
    u = rng.uniform(-0.999, 0.999, 100000)
    c = rng.uniform(1, 1e6, 100000)
    for f, ref, arg, bound in ((jnp.sinh, np.sinh, x, 20), (jnp.cosh, np.cosh, x, 20), (jnp.tanh, np.tanh, x, 8),
                               (jnp.arcsinh, np.arcsinh, x, 4), (jnp.exp2, np.exp2, x, 32),
                               (jnp.arctanh, np.arctanh, u, 160), (jnp.arcsin, np.arcsin, u, 2),
                               (jnp.arccos, np.arccos, u, 2), (jnp.arccosh, np.arccosh, c, 2),
                               (jnp.cbrt, np.cbrt, x, 4), (jnp.log10, np.log10, c, 2)):
        got, want = np.asarray(cranax.jit(f)(arg)), ref(arg)
        ok = np.abs(want) > 1e-300
        err = np.abs(got[ok] - want[ok]) / np.spacing(np.abs(want[ok]))
        assert err.max() <= bound, (f.__name__, err.max())


CHILD_RED64 = r'''
import hashlib, json
import numpy as np
import cranax
import cranax.numpy as jnp
cranax.config.update("jax_enable_x64", True)
x = np.random.default_rng(0).uniform(-5, 5, (3, 100003))
fs = {"lse": lambda v: jnp.log(jnp.sum(jnp.exp(v - v.max(axis=1, keepdims=True)), axis=1)),
      "softmax": lambda v: cranax.nn.softmax(v, axis=1), "tanh_sum": lambda v: jnp.sum(jnp.tanh(v), axis=1),
      "mean_exp": lambda v: jnp.mean(jnp.exp(v)), "log1p_sum": lambda v: jnp.sum(jnp.log1p(v * 0.19), axis=1)}
out = {n: hashlib.sha256(np.asarray(cranax.jit(f)(x)).tobytes()).hexdigest()[:16] for n, f in fs.items()}
out["strips"] = all("float64 routines" in cranax.jit(f).lower(x).compile().as_text() for f in fs.values())
print(json.dumps(out))
'''


def test_float64_row_reductions_same_bits_in_strips():
    # Row reductions over float64 math (logsumexp, softmax, sums of tanh) walk their rows in strips that call the
    # float64 routines where the host has the lanes, feeding the accumulators in the plain loop's order: the same
    # bits as `off` (per-element calls). mean(exp(x)) is also JAX 0.10.2's value (digest recorded from JAX).
    import json
    import os
    import subprocess
    import sys
    got = {}
    for mode in ("default", "avx2", "off"):
        env = dict(os.environ)
        env.pop("CRANAX_CPU_BLOCK_MATH", None)
        env.pop("CRANAX_CPU_NO_SIMD", None)
        if mode != "default":
            env["CRANAX_CPU_BLOCK_MATH"] = mode
        r = subprocess.run([sys.executable, "-c", CHILD_RED64], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        got[mode] = json.loads(r.stdout.strip().splitlines()[-1])
    strips = got["default"].pop("strips")
    got["avx2"].pop("strips")
    assert not got["off"].pop("strips")
    assert got["default"] == got["off"] and got["avx2"] == got["off"], got
    assert got["off"]["mean_exp"] == "20c796e34f16855f", got["off"]["mean_exp"]
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    # (hosts without AVX2+FMA have no routines: the comparison above is then of the same code)
    assert strips == (" avx2" in flags and " fma" in flags)
