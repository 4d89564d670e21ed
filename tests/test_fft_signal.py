"""``jax.scipy.signal``: convolutions (direct, 2-d, FFT), detrend and the spectral estimates (welch, csd, stft,
istft) against SciPy (float64 oracle) over shapes, modes and options; the values JAX's docs print; jit and
vmap; gradients of convolve by finite differences."""
import numpy as np
import pytest
import scipy.signal as ss

import cranax as jax
import cranax.numpy as jnp
import cranax.scipy.signal as cs

RNG = np.random.default_rng(0)


def _close(got, want, tol=1e-10):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


SHAPES = [((7,), (3,)), ((3,), (7,)), ((6,), (6,)), ((1,), (4,)), ((5, 6), (2, 3)), ((2, 3), (5, 6)),
          ((4, 5, 3), (2, 2, 2))]


@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_fftconvolve(s1, s2, mode, x64):
    a, b = RNG.normal(size=s1), RNG.normal(size=s2)
    _close(cs.convolve(a, b, mode=mode), ss.convolve(a, b, mode=mode, method="direct"))
    _close(cs.correlate(a, b, mode=mode), ss.correlate(a, b, mode=mode, method="direct"))
    _close(cs.fftconvolve(a, b, mode=mode), ss.fftconvolve(a, b, mode=mode))
    _close(cs.convolve(a, b, mode=mode, method="fft"), ss.convolve(a, b, mode=mode))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_complex_convolve(mode, x64):
    a = RNG.normal(size=(7,)) + 1j * RNG.normal(size=(7,))
    b = RNG.normal(size=(3,)) + 1j * RNG.normal(size=(3,))
    out = cs.convolve(a, b, mode=mode)
    assert out.dtype == np.complex128
    _close(out, ss.convolve(a, b, mode=mode))
    _close(cs.correlate(a, b, mode=mode), ss.correlate(a, b, mode=mode))
    _close(cs.fftconvolve(a, b.real, mode=mode), ss.fftconvolve(a, b.real, mode=mode))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("swap", [False, True])
def test_2d(mode, swap, x64):
    A, B = RNG.normal(size=(5, 6)), RNG.normal(size=(2, 3))
    if swap:
        A, B = B, A
    _close(cs.convolve2d(A, B, mode), ss.convolve2d(A, B, mode))
    _close(cs.correlate2d(A, B, mode), ss.correlate2d(A, B, mode))


def test_docs_values():
    # the values jax.scipy.signal's docstrings print (float32)
    x, y = jnp.array([1, 2, 3, 2, 1]), jnp.array([1, 1, 1])
    out = cs.fftconvolve(x, y, mode="full")
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [1., 3., 6., 7., 6., 3., 1.], atol=1e-5)
    np.testing.assert_allclose(cs.fftconvolve(x, y, mode="same"), [3., 6., 7., 6., 3.], atol=1e-5)
    np.testing.assert_allclose(cs.fftconvolve(x, y, mode="valid"), [6., 7., 6.], atol=1e-5)
    x = jnp.array([[2, 1, 3], [1, 3, 1], [4, 1, 2]])
    y = jnp.array([[1, 3], [4, 2]])
    np.testing.assert_array_equal(cs.correlate2d(x, y, mode="full"),
                                  [[4., 10., 10., 12.], [8., 15., 24., 7.], [11., 28., 14., 9.], [12., 7., 7., 2.]])
    np.testing.assert_array_equal(cs.correlate2d(x, y, mode="same"), [[15., 24., 7.], [28., 14., 9.], [7., 7., 2.]])


def test_fftconvolve_axes(x64):
    a, b = RNG.normal(size=(3, 8, 4)), RNG.normal(size=(3, 5, 4))
    _close(cs.fftconvolve(a, b, axes=1), ss.fftconvolve(a, b, axes=1))
    _close(cs.fftconvolve(a, b, mode="same", axes=(1,)), ss.fftconvolve(a, b, mode="same", axes=(1,)))
    with pytest.raises(ValueError, match="mapped axes"):
        cs.fftconvolve(a, RNG.normal(size=(2, 5, 4)), axes=1)


def test_convolve_errors():
    with pytest.raises(ValueError, match="mode"):
        cs.convolve(np.ones(3), np.ones(2), mode="bad")
    with pytest.raises(ValueError, match="same number of dimensions"):
        cs.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="smaller than the other"):
        cs.convolve(np.ones((3, 1)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="zero-size"):
        cs.convolve(np.ones(0), np.ones(2))
    with pytest.raises(NotImplementedError):
        cs.convolve2d(np.ones((2, 2)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="2-dimensional"):
        cs.correlate2d(np.ones(3), np.ones(3))


def test_convolve_jit_vmap_grad(x64):
    a, b = RNG.normal(size=(9,)), RNG.normal(size=(4,))
    _close(jax.jit(lambda u, v: cs.convolve(u, v, mode="same"))(a, b), ss.convolve(a, b, mode="same"))
    A = RNG.normal(size=(3, 9))
    _close(jax.vmap(lambda u: cs.fftconvolve(u, b))(A), np.stack([ss.fftconvolve(r, b) for r in A]))
    f = lambda u: jnp.sum(cs.convolve(u, b, mode="valid") ** 2)
    g = np.asarray(jax.grad(f)(a))
    eps = 1e-6
    fd = [(f(a + eps * e) - f(a - eps * e)) / (2 * eps) for e in np.eye(9)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"type": "constant"}, {"bp": [10, 30]}, {"axis": 0}])
def test_detrend(kw, x64):
    x = RNG.normal(size=(50, 3)) if kw.get("axis") == 0 else RNG.normal(size=(3, 50))
    x = x + np.linspace(0, 5, x.size).reshape(x.shape)
    _close(cs.detrend(x, **kw), ss.detrend(x, **kw))
    with pytest.raises(ValueError, match="Trend type"):
        cs.detrend(x, type="quadratic")


WELCH = [{}, {"nperseg": 16}, {"nperseg": 16, "noverlap": 4, "nfft": 20}, {"nperseg": 16, "scaling": "spectrum"},
         {"nperseg": 15, "average": "median"}, {"nperseg": 16, "detrend": "linear", "window": "hamming"},
         {"nperseg": 16, "return_onesided": False}, {"nperseg": 8, "fs": 100.0, "detrend": False}]


@pytest.mark.parametrize("kw", WELCH, ids=[str(i) for i in range(len(WELCH))])
@pytest.mark.filterwarnings("ignore:nperseg")
def test_welch_csd(kw, x64):
    x, y = RNG.normal(size=(3, 50)), RNG.normal(size=(3, 50))
    f, p = cs.welch(x, **kw)
    f2, p2 = ss.welch(x, **kw)
    _close(f, f2)
    _close(p, p2)
    f, p = cs.csd(x, y, **kw)
    f2, p2 = ss.csd(x, y, **kw)
    assert np.asarray(p).dtype == np.complex128
    _close(p, p2)


def test_welch_axis_and_complex(x64):
    x = RNG.normal(size=(40, 2))
    _close(cs.welch(x, nperseg=8, axis=0)[1], ss.welch(x, nperseg=8, axis=0)[1])
    z = RNG.normal(size=40) + 1j * RNG.normal(size=40)
    with pytest.warns(UserWarning, match="complex"):
        p = cs.welch(z, nperseg=8)[1]
    _close(p, ss.welch(z, nperseg=8, return_onesided=False)[1])


STFT = [{"nperseg": 16}, {"nperseg": 16, "noverlap": 10, "boundary": "even"},
        {"nperseg": 15, "boundary": None, "padded": False}, {"nperseg": 16, "return_onesided": False},
        {"nperseg": 12, "boundary": "odd", "window": "hamming"}, {"nperseg": 16, "nfft": 24, "boundary": "constant"}]


@pytest.mark.parametrize("kw", STFT, ids=[str(i) for i in range(len(STFT))])
def test_stft_istft(kw, x64):
    x = RNG.normal(size=(3, 50))
    f, t, Z = cs.stft(x, **kw)
    f2, t2, Z2 = ss.stft(x, **kw)
    _close(f, f2)
    _close(t, t2)
    _close(Z, Z2)
    if kw.get("boundary", "zeros") is not None and kw.get("return_onesided", True):
        ikw = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")}
        t1, x1 = cs.istft(Z2, **ikw)
        t3, x3 = ss.istft(Z2, **ikw)
        _close(t1, t3)
        _close(x1, x3)
        _close(x1[..., :50], x)


def test_stft_jit_float32():
    x = RNG.normal(size=64).astype(np.float32)
    f, t, Z = jax.jit(lambda v: cs.stft(v, nperseg=16))(x)
    assert Z.dtype == np.complex64 and f.dtype == np.float32
    np.testing.assert_allclose(Z, ss.stft(x.astype(np.float64), nperseg=16)[2], atol=1e-5)


def test_spectral_errors():
    x = np.ones(32)
    with pytest.raises(ValueError, match="noverlap"):
        cs.welch(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft"):
        cs.welch(x, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="scaling"):
        cs.welch(x, nperseg=8, scaling="bad")
    with pytest.raises(ValueError, match="average"):
        cs.welch(np.ones((2, 32)), nperseg=8, average="mode")
    with pytest.raises(ValueError, match="boundary"):
        cs.stft(x, nperseg=8, boundary="wrap")
    with pytest.raises(ValueError, match="at least 2d"):
        cs.istft(np.ones(8))
