"""The ``fft`` primitive (``lax.fft``) and ``jnp.fft``: values against NumPy's FFTs (complex128 oracle) over
shapes, axes, sizes and norms, under jit and vmap; its jvp and transpose (checked by the adjoint identity
and finite differences); complex128 under x64."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import grad, jit, jvp, lax, vjp, vmap

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 6, 8)).astype(np.float32)
Z = (X + 1j * RNG.normal(size=X.shape)).astype(np.complex64)
R = np.fft.rfftn(X).astype(np.complex64)


def _close(out, ref, tol=1e-6):
    out = np.asarray(out)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert np.abs(out - ref).max() <= tol * max(np.abs(ref).max(), 1), np.abs(out - ref).max()


CASES = [
    ("fft", Z, (), {}), ("fft", Z, (5,), {}), ("fft", Z, (11, 0), {}), ("fft", Z[0, 0], (), {"norm": "ortho"}),
    ("ifft", Z, (), {}), ("ifft", Z, (3, 1), {"norm": "forward"}),
    ("fft2", Z, (), {}), ("ifft2", Z, (), {"norm": "ortho"}), ("fftn", Z, (), {}), ("ifftn", Z, (), {}),
    ("fftn", Z, (), {"axes": (0, 2)}), ("fftn", Z, ((3, 10), (2, 0)), {}),
    ("rfft", X, (), {}), ("rfft", X, (7,), {"norm": "ortho"}), ("rfft2", X, (), {}), ("rfftn", X, (), {}),
    ("rfftn", X, ((3, 5), (0, 1)), {"norm": "forward"}), ("fft", X, (), {}),
    ("irfft", R, (), {}), ("irfft", R, (9,), {}), ("irfft2", R, (), {"norm": "forward"}), ("irfftn", R, (), {}),
    ("hfft", Z[0, 0], (), {}), ("hfft", Z[0, 0], (10,), {"norm": "ortho"}), ("ihfft", X[0, 0], (), {}),
]


@pytest.mark.parametrize("name,src,args,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_jnp_fft_vs_numpy(name, src, args, kw):
    ref = getattr(np.fft, name)(src.astype(np.complex128 if src.dtype.kind == "c" else np.float64), *args, **kw)
    out = getattr(jnp.fft, name)(src, *args, **kw)
    assert out.dtype == (np.float32 if ref.dtype.kind == "f" else np.complex64)
    _close(out, ref)
    _close(jit(lambda a: getattr(jnp.fft, name)(a, *args, **kw))(src), ref)


def test_freqs_and_shifts():
    for n, d in ((8, 0.1), (7, 1.0), (1, 2.0)):
        _close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
        _close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    a = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.fft.fftshift(a)), np.fft.fftshift(a))
    np.testing.assert_array_equal(np.asarray(jnp.fft.ifftshift(a, axes=1)), np.fft.ifftshift(a, axes=1))
    assert sorted(jnp.fft.__all__) == sorted(
        ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
         "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"])


def test_lax_fft_types_and_errors():
    _close(lax.fft(Z, lax.FftType.FFT, (6, 8)), np.fft.fftn(Z.astype(np.complex128), axes=(1, 2)))
    _close(lax.fft(Z, "ifft", (8,)), np.fft.ifft(Z.astype(np.complex128)))
    _close(lax.fft(X, lax.FftType.RFFT, (4, 6, 8)), np.fft.rfftn(X.astype(np.float64)))
    _close(lax.fft(R, lax.FftType.IRFFT, (4, 6, 8)), X.astype(np.float64))
    assert lax.fft(X, "rfft", (8,)).shape == (4, 6, 5)
    with pytest.raises(TypeError, match="FFT requires complex input"):
        lax.fft(X, "fft", (8,))
    with pytest.raises(ValueError, match="must end in"):
        lax.fft(Z, "fft", (7,))
    with pytest.raises(ValueError, match="Unknown FFT type"):
        lax.fft(Z, "dct", (8,))
    with pytest.raises(ValueError, match="Invalid norm value"):
        jnp.fft.fft(Z, norm="bad")


def test_vmap_and_jit():
    f = lambda a: jnp.fft.irfft(jnp.fft.rfft(a) * jnp.arange(5), n=8)  # noqa: E731
    ref = np.fft.irfft(np.fft.rfft(X.astype(np.float64)) * np.arange(5), n=8)
    _close(vmap(f)(X), ref)
    _close(jit(vmap(vmap(f)))(X), ref)
    _close(vmap(jnp.fft.fft, in_axes=1)(Z), np.moveaxis(np.fft.fft(Z.astype(np.complex128)), 1, 0))


@pytest.mark.parametrize("t,lengths,src", [("fft", (8,), Z), ("ifft", (6, 8), Z), ("rfft", (8,), X),
                                           ("rfft", (6, 8), X), ("irfft", (8,), R[..., :5]),
                                           ("irfft", (6, 8), R[:, :, :5])])
def test_transpose_is_the_adjoint(t, lengths, src, x64):
    """<ct, J t> = <J^T ct, t> in JAX's pairing Re Σ a·b, for the linear map x ↦ fft(x)."""
    src = src.astype(np.complex128 if src.dtype.kind == "c" else np.float64)
    f = lambda a: lax.fft(a, t, lengths)  # noqa: E731
    y, pull = vjp(f, src)
    tan = RNG.normal(size=src.shape) + (1j * RNG.normal(size=src.shape) if src.dtype.kind == "c" else 0)
    ct = RNG.normal(size=np.shape(y)) + (1j * RNG.normal(size=np.shape(y)) if np.asarray(y).dtype.kind == "c" else 0)
    _, jt = jvp(f, (src,), (tan.astype(src.dtype),))
    (back,) = pull(ct.astype(np.asarray(y).dtype))
    lhs = np.real(np.sum(ct * np.asarray(jt)))
    rhs = np.real(np.sum(np.asarray(back) * tan))
    assert abs(lhs - rhs) < 1e-9 * max(1, abs(lhs)), (lhs, rhs)


def test_grad_vs_finite_differences(x64):
    x0 = RNG.normal(size=16)
    f = lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(jnp.sin(x))) ** 2 * jnp.arange(9.0)) + \
        jnp.real(jnp.fft.ifft(x * (1 + 2j))[3])  # noqa: E731
    g = np.asarray(grad(f)(x0))
    h = 1e-6
    for k in (0, 5, 15):
        e = np.zeros(16)
        e[k] = h
        fd = (float(f(x0 + e)) - float(f(x0 - e))) / (2 * h)
        assert abs(g[k] - fd) < 1e-5 * max(1, abs(fd)), (k, g[k], fd)


def test_complex128_under_x64(x64):
    z = (RNG.normal(size=(3, 64)) + 1j * RNG.normal(size=(3, 64)))
    out = jnp.fft.fft(z)
    assert out.dtype == np.complex128
    _close(out, np.fft.fft(z), 1e-14)
    _close(jnp.fft.irfft(jnp.fft.rfft(z.real)), z.real, 1e-14)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 33])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_scipy_dct_vs_scipy(n, norm, x64):
    sf = pytest.importorskip("scipy.fft")
    from cranax.scipy import fft as cf
    x = RNG.normal(size=(3, n))
    _close(cf.dct(x, norm=norm), sf.dct(x, norm=norm), 1e-13)
    _close(cf.idct(x, norm=norm), sf.idct(x, norm=norm), 1e-13)
    _close(cf.dct(x, n=n + 2, axis=0, norm=norm), sf.dct(x, n=n + 2, axis=0, norm=norm), 1e-13)
    y = RNG.normal(size=(4, n, 3))
    _close(cf.dctn(y, norm=norm), sf.dctn(y, norm=norm), 1e-13)
    _close(cf.idctn(y, axes=(0, 1), norm=norm), sf.idctn(y, axes=(0, 1), norm=norm), 1e-13)
    _close(jit(cf.idct)(cf.dct(x)), x, 1e-13)
    with pytest.raises(ValueError, match="Only DCT type 2"):
        cf.dct(x, type=3)


@pytest.mark.parametrize("n,m", [(7, 3), (3, 7), (5, 5), (1, 4), (6, 1)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_vs_numpy(n, m, mode):
    a = RNG.normal(size=n).astype(np.float32)
    v = (RNG.normal(size=m) + 1j * RNG.normal(size=m)).astype(np.complex64)
    for f in ("convolve", "correlate"):
        _close(getattr(jnp, f)(a, v, mode), getattr(np, f)(a.astype(np.float64), v.astype(np.complex128), mode))
        _close(jit(getattr(jnp, f), static_argnums=2)(a, a[::-1].copy(), mode), getattr(np, f)(a, a[::-1], mode))
    w = RNG.normal(size=m)
    x0 = RNG.normal(size=n)
    g = np.asarray(grad(lambda x: jnp.sum(jnp.convolve(x, w) ** 2))(x0.astype(np.float32)))
    # d/dx Σ (x * w)^2 = 2 correlate(x * w, w, 'valid')
    _close(g, 2 * np.correlate(np.convolve(x0, w), w, "valid"), 1e-5)
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(a, a, "bad")
