"""cranax.scipy.integrate.trapezoid, cluster.vq.vq and ndimage.map_coordinates against
SciPy and values recorded from JAX 0.10.2."""
import numpy as np
import pytest
import scipy.cluster.vq as svq
import scipy.integrate as sint
import scipy.ndimage as snd

import cranax
import cranax.numpy as jnp
import cranax.scipy as cs
from cranax.scipy.cluster import vq


@pytest.fixture
def x64():
    cranax.config.update("jax_enable_x64", True)
    yield
    cranax.config.update("jax_enable_x64", False)


def test_trapezoid(x64):
    r = np.random.RandomState(0)
    y = r.normal(size=(3, 10))
    x = np.sort(r.uniform(size=10))
    np.testing.assert_allclose(np.asarray(cs.integrate.trapezoid(y, x)), sint.trapezoid(y, x), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(cs.integrate.trapezoid(y, dx=0.3, axis=0)),
                               sint.trapezoid(y, dx=0.3, axis=0), rtol=1e-14)
    g = cranax.grad(lambda v: cs.integrate.trapezoid(v ** 2, x))(y[0])
    np.testing.assert_allclose(np.asarray(g), [sint.trapezoid(2 * y[0] * e, x) for e in np.eye(10)], rtol=1e-12)


def test_vq(x64):
    r = np.random.RandomState(1)
    obs, cb = r.normal(size=(30, 3)), r.normal(size=(4, 3))
    code, dist = vq.vq(obs, cb)
    wc, wd = svq.vq(obs, cb)
    np.testing.assert_array_equal(np.asarray(code), wc)
    np.testing.assert_allclose(np.asarray(dist), wd, rtol=1e-12)
    c1, _ = vq.vq(obs[:, 0], cb[:, 0])
    np.testing.assert_array_equal(np.asarray(c1), svq.vq(obs[:, :1], cb[:, :1])[0])
    with pytest.raises(ValueError, match="same rank"):
        vq.vq(obs, cb[0])


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
def test_map_coordinates(x64, order, mode):
    r = np.random.RandomState(0)
    img = r.normal(size=(5, 6))
    c = [r.uniform(-2, 7, 20), r.uniform(-2, 8, 20)]
    got = np.asarray(cs.ndimage.map_coordinates(img, c, order, mode=mode, cval=1.5))
    if mode == "constant":
        # JAX 0.10.2 (SciPy's 'constant' treats the border differently)
        want = {0: [1.5, 2.269755, 0.950088, 1.5, 1.469359, 1.5], 1: [1.5, 0.735951, 1.149457, 1.42464, 1.497876, 1.5]}
        np.testing.assert_allclose(got[:6], want[order], atol=1e-6)
    else:
        smode = {"wrap": "grid-wrap"}.get(mode, mode)
        np.testing.assert_allclose(got, snd.map_coordinates(img, np.array(c), order=order, mode=smode), atol=1e-12)
    with pytest.raises(NotImplementedError, match="order<=1"):
        cs.ndimage.map_coordinates(img, c, 3)


def test_regular_grid_interpolator(x64):
    import scipy.interpolate as si
    r = np.random.RandomState(5)
    pts = (np.sort(r.uniform(0, 3, 6)), np.sort(r.uniform(-1, 1, 5)), np.linspace(0, 1, 4))
    vals = r.normal(size=(6, 5, 4))
    xi = np.stack([r.uniform(-0.2, 3.2, 40), r.uniform(-1.1, 1.1, 40), r.uniform(0, 1, 40)], -1)
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, 0.25):
            got = np.asarray(cs.interpolate.RegularGridInterpolator(pts, vals, method, fill_value=fill)(xi))
            want = si.RegularGridInterpolator(pts, vals, method, bounds_error=False, fill_value=fill)(xi)
            np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{method} {fill}")
    with pytest.raises(ValueError, match="dimension"):
        cs.interpolate.RegularGridInterpolator(pts, vals)(xi[:, :2])
