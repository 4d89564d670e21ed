"""float64 samplers (``jax_enable_x64``) bit for bit as JAX 0.10.2 draws them on the CPU: sha256 prefixes of
the raw bytes of JAX's results for the same key, shape and dtype, recorded with JAX (issue 22). They rest on
XLA:CPU's f64 ``erf_inv``/``log1p``/``exp``/``rsqrt`` sequences in the core (``math_xla64.rs``), exact f64
literals, the emulated f64 fused multiply-add of ``_prng.fma`` and XLA's constant folds (see random.py)."""
import hashlib

import os

import numpy as np
import pytest

import cranax
from cranax import random

K = random.PRNGKey
F8 = "float64"


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(np.asarray(a)).tobytes()).hexdigest()[:32]


CASES = [
    ("normal", lambda: random.normal(K(3), (200000,), F8), "c2d96ab0c0133ed9ab2ddfce6563b05d"),
    ("normal_2d", lambda: random.normal(K(11), (300, 301), F8), "b913533b8b3a9101ad986a2f2aa1aaaf"),
    ("uniform_span", lambda: random.uniform(K(4), (100000,), F8, -3.7, 5.1), "d8c419460d64dbdb87e6b6da9258d9f4"),
    ("truncated_normal", lambda: random.truncated_normal(K(3), -1.0, 2.0, (100000,), F8),
     "54e75277649d78f17441181389df1e19"),
    ("exponential", lambda: random.exponential(K(2), (100000,), F8), "cefdea6de5f52f736437747d6a07cb3c"),
    ("laplace", lambda: random.laplace(K(0), (100000,), F8), "be8ec268ac4063b502970b278dbf65f6"),
    ("logistic", lambda: random.logistic(K(0), (100000,), F8), "4c68bbfc3a0fb7eb6c880dca46ce9275"),
    ("lognormal", lambda: random.lognormal(K(5), 0.7, (100000,), F8), "ced71f7e7c8d181dff271779634d25b6"),
    ("pareto", lambda: random.pareto(K(5), 2.5, (100000,), F8), "f8d9ea3f5dc4ee55569782e02560fab6"),
    ("weibull_min", lambda: random.weibull_min(K(3), 1.5, 2.0, (100000,), F8), "a778f4dd12b09c36bcb0421d359f7e25"),
    ("t", lambda: random.t(K(3), 3.0, (50000,), F8), "c698600dbd47aa3beca33baaa9c7dfbf"),
    ("chisquare", lambda: random.chisquare(K(3), 3.0, (50000,), F8), "bbf87f54eacd2f6249ecee359508bb99"),
    ("gamma_scalar", lambda: random.gamma(K(3), 2.5, (50000,), F8), "3eb76e8568a0954b5c27fca8ebbc896f"),
    ("gamma_small", lambda: random.gamma(K(7), 0.4, (50000,), F8), "07b1706447fd6b552c04a4ecc78345ca"),
    ("gamma_array", lambda: random.gamma(K(3), np.linspace(0.2, 5.0, 50000), (50000,), F8),
     "b2e02cc1838de5968566a6f7969364a6"),
    ("loggamma_array", lambda: random.loggamma(K(5), np.linspace(0.3, 4.0, 50000), (50000,), F8),
     "bc24cc03403aaa2b93a8e4a7b9c5835d"),
    ("beta_array", lambda: random.beta(K(3), np.linspace(0.2, 5.0, 50000), 2.0, (50000,), F8),
     "c9d486d4b78acfa2b4f6c228de29dda2"),
    ("generalized_normal", lambda: random.generalized_normal(K(3), 1.5, (50000,), F8),
     "0ea983e8e9d9b91441e1e71c098fe0bd"),
    ("double_sided_maxwell", lambda: random.double_sided_maxwell(K(5), 0.5, 2.0, (50000,), F8),
     "ee8a98dd2d9a19c6479510b62273ecd5"),
]

# The gamma family reads XLA's f64 rsqrt, which on AVX-512 hosts is the vrsqrt14 estimate plus Newton steps
# (the recording's host); elsewhere both XLA's and cranax's bits differ from it.
_RSQRT_HOST = {"gamma_small", "gamma_array", "loggamma_array", "beta_array"}


def _avx512():
    # CRANAX_CPU_BLOCK_MATH=avx2 runs cranax as on an AVX2-only host (its rsqrt too), whatever this CPU has
    if os.environ.get("CRANAX_CPU_BLOCK_MATH", "").strip().lower() == "avx2":
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f" in f.read()
    except OSError:
        return False


@pytest.mark.parametrize("name,fn,digest", CASES, ids=[c[0] for c in CASES])
def test_f64_draws_bit_identical_to_jax(name, fn, digest, x64):
    v = fn()
    assert v.dtype == np.float64
    assert np.all(np.isfinite(np.asarray(v)))
    if name in _RSQRT_HOST and not _avx512():
        pytest.skip("JAX's f64 rsqrt bits were recorded on an AVX-512 host")
    assert _digest(v) == digest, name


def test_f64_literal_exact(x64):
    # literals reach the core exactly (the JSON parser rounds correctly): nextafter(-1, 0) is not -1
    for c in [np.nextafter(-1.0, 0.0), 1 - 2.0 ** -53, 2 - 2.0 ** -52, 1 + 3 * 2.0 ** -52]:
        c = np.float64(c)
        assert np.asarray(cranax.jit(lambda x: x + c)(np.zeros(3)))[0] == c


def test_f64_fma_emulation_exact(x64):
    from cranax import _prng
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((3, 20000)) * np.array([[1.0], [3.0], [1e-3]])
    got = np.asarray(cranax.jit(_prng.fma)(a, b, c))
    # exact reference: the sum in rationals rounded once (Python floats of exact fractions)
    from fractions import Fraction
    want = np.array([float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)])
    assert np.array_equal(got, want)
