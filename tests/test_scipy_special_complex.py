"""cranax.scipy.special's complex-valued functions, wofz and sph_harm_y, against SciPy (float64 oracle: the
upper and lower half-planes, near the real axis, large |z|; degrees to 30, negative orders) and values
recorded from JAX 0.10.2 (complex64); the derivative of wofz against its closed form and finite
differences."""
import numpy as np
import pytest
import scipy.special as sc

import cranax
import cranax.numpy as jnp
import cranax.scipy.special as S

Z = np.array([0.5 + 0.5j, -1 + 2j, 3 - 0.2j, -4 - 4j, 0j, 10 + 0.1j], np.complex64)
# JAX 0.10.2: wofz(Z), rounded to 6 decimals
JAX_WOFZ = [(0.533157 + 0.230488j), (0.218493 - 0.092998j), (-0.015534 + 0.199908j), (1.596876 - 1.172228j),
            (1 + 0j), (0.000573 + 0.0567j)]
# JAX 0.10.2: sph_harm_y(N, M, TH, PH) and with n_max=3 (orders and degrees clipped to 3), rounded to 5
N = np.array([0, 1, 2, 3, 5, 5, 2])
M = np.array([0, -1, 2, -3, 1, -5, 3])
TH = np.array([0.3, 1.0, 2.0, 0.5, 1.5, 2.5, 1.0], np.float32)
PH = np.array([0.1, 2.0, 4.0, 1.0, 5.0, 0.3, 1.0], np.float32)
JAX_SPH = [(0.28209 + 0j), (-0.12098 - 0.26435j), (-0.04647 + 0.31598j), (-0.04552 - 0.00649j),
           (-0.08432 + 0.28506j), (0.00252 - 0.03554j), 0j]
JAX_SPH_CLIP = [(0.28209 + 0j), (-0.12098 - 0.26435j), (-0.04647 + 0.31598j), (-0.04552 - 0.00649j),
                (0.08916 - 0.3014j), (0.00633 - 0.08921j), 0j]


def test_wofz_matches_jax_float32():
    w = S.wofz(Z)
    assert w.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(w), JAX_WOFZ, atol=2e-6)
    # real input promotes to complex64 (JAX: 0.10539922+0.48322737j)
    w1 = S.wofz(np.float32(1.5))
    assert w1.dtype == np.complex64
    np.testing.assert_allclose(complex(w1), 0.10539922 + 0.48322737j, rtol=1e-6)


@pytest.mark.parametrize("scale", [0.1, 1., 5., 30., 1e3])
def test_wofz_against_scipy(x64, scale):
    rng = np.random.default_rng(int(scale * 10))
    z = (rng.normal(size=4000) + 1j * rng.normal(size=4000)) * scale
    # points hugging the real axis from both sides, where the reflection 2 exp(-z^2) - w(-z) is used
    z = np.concatenate([z, np.linspace(-5, 5, 41) * scale + 1e-8j, np.linspace(-5, 5, 41) * scale - 1e-3j])
    ref = sc.wofz(z)
    ok = np.isfinite(ref) & (np.abs(ref) > 1e-250) & (np.abs(ref) < 1e250)
    w = np.asarray(S.wofz(z))
    assert w.dtype == np.complex128
    np.testing.assert_allclose(w[ok], ref[ok], rtol=1e-12)


def test_wofz_real_axis_and_derivative(x64):
    x = np.linspace(-20., 20., 201)
    np.testing.assert_allclose(np.asarray(S.wofz(x)), sc.wofz(x), rtol=1e-12)
    # Re w(x) = exp(-x^2), Im w(x) = 2 dawsn(x) / sqrt(pi); the error is relative to |w| (~ 1/(sqrt(pi) x)),
    # not to each part, so the tiny real part of large x is only absolutely accurate (as in JAX)
    np.testing.assert_allclose(np.asarray(jnp.real(S.wofz(x))), np.exp(-x * x), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.asarray(jnp.imag(S.wofz(x))), 2 * sc.dawsn(x) / np.sqrt(np.pi), rtol=1e-12)
    # d Re w / dx = -2x exp(-x^2); d Im w / dx = (2 - 4x dawsn(x)) / sqrt(pi)
    g_re = cranax.vmap(cranax.grad(lambda t: jnp.real(S.wofz(t))))(x)
    g_im = cranax.vmap(cranax.grad(lambda t: jnp.imag(S.wofz(t))))(x)
    np.testing.assert_allclose(np.asarray(g_re), -2 * x * np.exp(-x * x), rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(np.asarray(g_im), (2 - 4 * x * sc.dawsn(x)) / np.sqrt(np.pi), rtol=1e-10,
                               atol=1e-14)
    # complex tangent: jvp along a complex direction against a central difference
    z0, dz = 0.7 - 1.3j, 0.3 + 0.4j
    _, t = cranax.jvp(S.wofz, (jnp.asarray(z0),), (jnp.asarray(dz),))
    h = 1e-6
    fd = (sc.wofz(z0 + h * dz) - sc.wofz(z0 - h * dz)) / (2 * h)
    np.testing.assert_allclose(complex(t), fd, rtol=1e-8)
    # float32: JAX 0.10.2 grad(lambda x: real(wofz(x)))(0.7) = -0.8576771
    np.testing.assert_allclose(float(cranax.grad(lambda t: jnp.real(S.wofz(t)))(np.float32(0.7))), -0.8576771,
                               rtol=1e-6)


def test_sph_harm_y_matches_jax_float32():
    y = S.sph_harm_y(N, M, TH, PH)
    assert y.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(y), JAX_SPH, atol=2e-5)
    np.testing.assert_allclose(np.asarray(S.sph_harm_y(N, M, TH, PH, n_max=3)), JAX_SPH_CLIP, atol=2e-5)
    one = S.sph_harm_y(np.array([2]), np.array([1]), np.float32(0.4), np.float32(0.2))
    assert one.shape == (1,)
    np.testing.assert_allclose(np.asarray(one), [-0.27157 - 0.05505j], atol=2e-5)


def test_sph_harm_y_against_scipy(x64):
    rng = np.random.default_rng(3)
    n = rng.integers(0, 31, 3000)
    m = np.array([rng.integers(-k, k + 1) for k in n])
    # include the poles and the equator
    th = np.concatenate([rng.uniform(0, np.pi, 2997), [0., np.pi / 2, np.pi]])
    ph = rng.uniform(0, 2 * np.pi, 3000)
    y = np.asarray(S.sph_harm_y(n, m, th, ph))
    np.testing.assert_allclose(y, sc.sph_harm_y(n, m, th, ph), rtol=1e-12, atol=1e-13)
    # orthonormality on a quadrature grid: <Y_2^1, Y_2^1> = 1, <Y_2^1, Y_3^1> = 0
    t, wt = np.polynomial.legendre.leggauss(40)
    theta = np.arccos(t)
    phi = np.linspace(0, 2 * np.pi, 80, endpoint=False)
    T, P = np.meshgrid(theta, phi, indexing="ij")
    W = np.broadcast_to(wt[:, None] * (2 * np.pi / 80), T.shape)
    a = np.asarray(S.sph_harm_y(2 * np.ones(T.size, int), np.ones(T.size, int), T.ravel(), P.ravel()))
    b = np.asarray(S.sph_harm_y(3 * np.ones(T.size, int), np.ones(T.size, int), T.ravel(), P.ravel()))
    np.testing.assert_allclose(np.sum(W.ravel() * np.abs(a) ** 2), 1., rtol=1e-12)
    np.testing.assert_allclose(abs(np.sum(W.ravel() * a * np.conj(b))), 0., atol=1e-13)


def test_sph_harm_y_jit_and_errors():
    f = cranax.jit(lambda th, ph: S.sph_harm_y(N, M, th, ph, n_max=5))
    np.testing.assert_allclose(np.asarray(f(TH, PH)), JAX_SPH, atol=2e-5)
    with pytest.raises(NotImplementedError, match="diff_n"):
        S.sph_harm_y(N, M, TH, PH, diff_n=1)
    with pytest.raises(TypeError, match="must be statically specified"):
        cranax.jit(lambda n: S.sph_harm_y(n, M, TH, PH))(N)
