"""The core's internal ``fma`` op (``primitives/elementwise.py: fma_p``): a * b + c rounded once, in float32 and
float64, as XLA:CPU's contracted multiply-adds that the samplers need for JAX's bits (``_prng.fma``). JAX 0.10.2
exports no ``lax.fma``, so it is not in ``cranax.lax``. The oracle is exact rational arithmetic, rounded once."""
from fractions import Fraction

import numpy as np
import pytest

import cranax
from cranax import _prng
from cranax.primitives import elementwise as ew


def _exact(a, b, c, dt):
    """The correctly rounded a * b + c: exact in rationals, rounded to nearest-even in ``dt``."""
    out = []
    for x, y, z in zip(a.tolist(), b.tolist(), c.tolist()):
        v = Fraction(x) * Fraction(y) + Fraction(z)
        # round to float64 (correctly rounded from the rational), then to float32 without a second rounding:
        # pick the nearer float32 neighbour of the rational directly
        f = float(v)
        if dt == np.float64:
            out.append(f)
            continue
        r = np.float32(f)
        lo, hi = (np.nextafter(r, np.float32(-np.inf)), r) if Fraction(float(r)) > v else (r, np.nextafter(r, np.float32(np.inf)))
        dlo, dhi = v - Fraction(float(lo)), Fraction(float(hi)) - v
        if dlo < dhi:
            out.append(lo)
        elif dhi < dlo:
            out.append(hi)
        else:
            out.append(lo if int(np.array(lo).view(np.int32)) % 2 == 0 else hi)
    return np.array(out, dt)


def _operands(dt, n=3000):
    rng = np.random.default_rng(7)
    a = rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))
    b = rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))
    a, b = a.astype(dt), b.astype(dt)
    c = rng.standard_normal(n).astype(dt) * np.exp2(rng.integers(-40, 40, n)).astype(dt)
    # a third of the cases cancel the product's rounded value: the answer is its rounding error, which two
    # roundings lose entirely
    c[: n // 3] = -(a[: n // 3] * b[: n // 3])
    return a, b, c


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fma_rounds_once(dt, x64):
    a, b, c = _operands(dt)
    want = _exact(a, b, c, dt)
    for fn in (ew.fma, cranax.jit(ew.fma), cranax.jit(cranax.vmap(ew.fma))):
        got = np.asarray(fn(a, b, c))
        assert got.dtype == dt
        np.testing.assert_array_equal(got, want)
    # two roundings differ on the cancelled third (the product's error is lost)
    assert np.mean(a[:1000] * b[:1000] + c[:1000] != want[:1000]) > 0.9


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_fma_special_values_and_scalars(dt, x64):
    big = np.finfo(dt).max
    a = np.array([np.inf, np.nan, 0.0, big, big, -0.0, 1.0], dt)
    b = np.array([0.0, 1.0, np.inf, 2.0, 2.0, 1.0, 1.0], dt)
    c = np.array([1.0, 1.0, 1.0, -big, -np.inf, 0.0, np.inf], dt)
    got = np.asarray(cranax.jit(ew.fma)(a, b, c))
    # inf * 0 and nan give nan; big * 2 - big stays finite (no intermediate overflow); -0 * 1 + 0 = +0
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isnan(got[2])
    assert got[3] == big and got[4] == -np.inf and got[5] == 0 and not np.signbit(got[5]) and got[6] == np.inf
    # scalars, folded as constants and as runtime values
    s = cranax.jit(lambda: ew.fma(dt(1 + 2.0 ** -20), dt(1 - 2.0 ** -20), dt(-1)))()
    assert np.asarray(s) == dt(-(2.0 ** -40))
    assert np.asarray(cranax.jit(ew.fma)(dt(3), dt(4), dt(5))) == 17


def test_fma_derivatives_batching_and_jaxpr(x64):
    a, b, c = (np.linspace(-2, 2, 5) + i for i in range(3))
    ta, tb, tc = (np.linspace(1, 3, 5) * (i + 1) for i in range(3))
    _, t = cranax.jvp(ew.fma, (a, b, c), (ta, tb, tc))
    np.testing.assert_allclose(np.asarray(t), ta * b + a * tb + tc, rtol=1e-15)
    ga, gb, gc = cranax.grad(lambda x, y, z: ew.fma(x, y, z).sum(), argnums=(0, 1, 2))(a, b, c)
    np.testing.assert_allclose(np.asarray(ga), b)
    np.testing.assert_allclose(np.asarray(gb), a)
    np.testing.assert_allclose(np.asarray(gc), np.ones(5))
    # one operand unbatched: broadcast along the batch axis
    m = np.arange(15.0).reshape(3, 5)
    v = np.asarray(cranax.vmap(ew.fma, in_axes=(0, None, 1))(m, b, m.T))
    np.testing.assert_array_equal(v, m * b + m)
    assert "fma" in str(cranax.make_jaxpr(ew.fma)(a, b, c))
    assert "fma" in str(cranax.make_jaxpr(lambda x: _prng.fma(x, 2.0, 1.0))(a))


def test_fma_rejects_bad_operands(x64):
    f32 = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="same dtypes"):
        ew.fma(f32, f32, f32.astype(np.float64))
    with pytest.raises(TypeError, match="float32 or float64"):
        ew.fma(*(np.ones(3, np.int32),) * 3)
    with pytest.raises(TypeError, match="float32 or float64"):
        ew.fma(*(np.ones(3, np.float16),) * 3)
    with pytest.raises(TypeError):
        ew.fma(f32, f32[:2], f32)
    assert not hasattr(cranax.lax, "fma")   # JAX 0.10.2 has no public lax.fma
