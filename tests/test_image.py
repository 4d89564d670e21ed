"""``cranax.image`` (issue 21): ``resize`` with every method, with and without antialiasing, against the
values JAX 0.10.2 gives (recorded here) and against NumPy oracles (half-pixel bilinear, integer-factor box
means, nearest indices, a direct Keys-cubic sum); ``scale_and_translate`` with traced scale and translation
and its gradient; JAX's errors."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import image

ROW = np.array([[0.3, -1.2, 2.0, 0.7, 1.5, -0.4]], np.float32)

# (method, antialias) -> (resize to (1, 9), resize to (1, 4)), from jax 0.10.2
RECORDED = {
    ("linear", True): ([0.3, -0.45, -0.6666664, 1.4666672, 1.35, 0.8333334, 1.3666668, 0.55, -0.4],
                       [-0.2625, 0.7888888, 1.1111112, 0.3125]),
    ("linear", False): ([0.3, -0.45, -0.6666664, 1.4666672, 1.35, 0.8333334, 1.3666668, 0.55, -0.4],
                        [-0.075, 1.2, 0.9, 0.075]),
    ("cubic", True): ([0.398684, -0.5941177, -0.8865741, 1.6726861, 1.5, 0.7430558, 1.4986112, 0.5411765, -0.5250002],
                      [-0.3618126, 0.7814701, 1.2318529, 0.2831711]),
    ("cubic", False): ([0.398684, -0.5941177, -0.8865741, 1.6726861, 1.5, 0.7430558, 1.4986112, 0.5411765, -0.5250002],
                       [-0.0547445, 1.40625, 0.815625, -0.0218978]),
    ("lanczos3", True): ([0.5293778, -0.7242053, -0.8844323, 1.6580861, 1.6076088, 0.6973231, 1.5360686, 0.5635697,
                          -0.5978008], [-0.4513198, 0.6911736, 1.4060608, 0.2399058]),
    ("lanczos3", False): ([0.5293778, -0.7242053, -0.8844323, 1.6580861, 1.6076088, 0.6973231, 1.5360686, 0.5635697,
                           -0.5978008], [-0.1706106, 1.4021515, 0.7615894, 0.0150168]),
    ("lanczos5", True): ([0.618874, -0.8212991, -0.8462718, 1.7163346, 1.5501686, 0.6677971, 1.4862523, 0.6804463,
                          -0.6769695], [-0.4376142, 0.6306235, 1.4958402, 0.1585682]),
    ("lanczos5", False): ([0.618874, -0.8212991, -0.8462718, 1.7163346, 1.5501686, 0.6677971, 1.4862523, 0.6804463,
                           -0.6769695], [-0.2531211, 1.4789956, 0.7151091, 0.1060497]),
    ("area", True): ([0.3, -0.4500001, -1.2, 2.0, 1.3499998, 0.7, 1.5, 0.5499993, -0.4],
                     [-0.2, 0.9333333, 0.9666667, 0.2333333]),
    ("area", False): ([0.3, -0.4500001, -1.2, 2.0, 1.3499998, 0.7, 1.5, 0.5499993, -0.4],
                      [-0.2, 0.9333333, 0.9666667, 0.2333333]),
    ("cubic-pytorch", True): ([0.398684, -0.5941177, -0.8865741, 1.6726861, 1.5, 0.7430558, 1.4986112, 0.5411765,
                               -0.5250002], [-0.3618126, 0.7814701, 1.2318529, 0.2831711]),
    ("cubic-pytorch", False): ([0.4302085, -0.75, -0.8483797, 1.6275461, 1.5749999, 0.7349541, 1.5275466, 0.625,
                                -0.5649309], [-0.1523438, 1.359375, 0.8109375, 0.0585937]),
}


@pytest.mark.parametrize("method,antialias", sorted(RECORDED))
def test_resize_matches_jax(method, antialias):
    up, down = RECORDED[(method, antialias)]
    np.testing.assert_allclose(np.asarray(image.resize(ROW, (1, 9), method, antialias=antialias))[0], up,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(image.resize(ROW, (1, 4), method, antialias=antialias))[0], down,
                               rtol=1e-5, atol=1e-6)


def test_nearest_matches_jax_and_index_formula():
    np.testing.assert_array_equal(np.asarray(image.resize(ROW, (1, 9), "nearest"))[0],
                                  np.float32([0.3, -1.2, -1.2, 2.0, 0.7, 0.7, 1.5, -0.4, -0.4]))
    np.testing.assert_array_equal(np.asarray(image.resize(ROW, (1, 4), "nearest"))[0],
                                  np.float32([0.3, 2.0, 0.7, -0.4]))
    x = np.arange(5 * 7, dtype=np.int32).reshape(5, 7)
    got = image.resize(x, (8, 3), image.ResizeMethod.NEAREST)
    assert got.dtype == np.int32                               # nearest keeps the dtype (JAX)
    rows = np.floor((np.arange(8) + 0.5) * 5 / 8).astype(int)
    cols = np.floor((np.arange(3) + 0.5) * 7 / 3).astype(int)
    np.testing.assert_array_equal(np.asarray(got), x[rows][:, cols])


def _np_bilinear_axis(x, n, axis):
    # half-pixel centres, clamped at the edges (what a triangle kernel gives when upsampling)
    m = x.shape[axis]
    s = np.clip((np.arange(n) + 0.5) * m / n - 0.5, 0, m - 1)
    lo = np.floor(s).astype(int)
    hi = np.minimum(lo + 1, m - 1)
    f = (s - lo).reshape([-1 if d == axis else 1 for d in range(x.ndim)])
    return np.take(x, lo, axis) * (1 - f) + np.take(x, hi, axis) * f


def test_linear_upsampling_against_numpy_bilinear():
    img = np.random.RandomState(0).rand(2, 7, 9, 3)
    got = np.asarray(image.resize(img.astype(np.float32), (2, 14, 20, 3), "bilinear"))
    want = _np_bilinear_axis(_np_bilinear_axis(img, 14, 1), 20, 2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    vol = np.random.RandomState(1).rand(4, 5, 6)
    got = np.asarray(image.resize(vol.astype(np.float32), (8, 10, 6), "trilinear"))
    np.testing.assert_allclose(got, _np_bilinear_axis(_np_bilinear_axis(vol, 8, 0), 10, 1), rtol=1e-5, atol=1e-6)


def test_integer_factor_downsampling_is_a_box_mean():
    img = np.random.RandomState(2).rand(1, 12, 8, 2)
    box = img.reshape(1, 4, 3, 4, 2, 2).mean(axis=(2, 4))
    got = np.asarray(image.resize(img.astype(np.float32), (1, 4, 4, 2), "area"))
    np.testing.assert_allclose(got, box, rtol=1e-5, atol=1e-6)
    # a 2x linear downsample without antialiasing averages the two middle neighbours
    got = np.asarray(image.resize(img.astype(np.float32), (1, 6, 8, 2), "linear", antialias=False))
    np.testing.assert_allclose(got, img.reshape(1, 6, 2, 8, 2).mean(axis=2), rtol=1e-5, atol=1e-6)


def test_cubic_upsampling_against_direct_keys_sum():
    x = np.random.RandomState(3).rand(10).astype(np.float64)
    n = 23

    def keys(t):
        t = abs(t)
        return (1.5 * t - 2.5) * t * t + 1 if t < 1 else ((-0.5 * t + 2.5) * t - 4) * t + 2 if t < 2 else 0.0

    want = []
    for j in range(n):
        s = (j + 0.5) * 10 / n - 0.5
        w = np.array([keys(s - i) for i in range(10)])
        want.append((w * x).sum() / w.sum())           # taps off the edge are dropped and renormalized
    got = np.asarray(image.resize(x.astype(np.float32)[None], (1, n), "bicubic"))[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_scale_and_translate_matches_jax_and_is_differentiable():
    got = image.scale_and_translate(ROW, (1, 7), (1,), jnp.array([1.3]), jnp.array([0.4]), "lanczos3")
    np.testing.assert_allclose(np.asarray(got)[0], [0.7514787912368774, -0.3812486231327057, -1.0122528076171875,
                                                    1.7885810136795044, 1.2479387521743774, 0.9972720742225647,
                                                    1.2405346632003784], rtol=1e-5, atol=1e-6)
    got = image.scale_and_translate(ROW, (1, 5), (1,), jnp.array([0.7]), jnp.array([-0.5]), "cubic", antialias=False)
    np.testing.assert_allclose(np.asarray(got)[0], [-1.2304126024246216, 1.7817058563232422, 1.4692788124084473,
                                                    -0.5507215261459351, 0.0], rtol=1e-5, atol=1e-6)
    g = cranax.grad(lambda s: image.scale_and_translate(ROW, (1, 7), (1,), s, jnp.array([0.4]), "linear").sum())(
        jnp.array([1.3]))
    np.testing.assert_allclose(np.asarray(g), [-1.272189736366272], rtol=1e-4)
    # scale 1, translation 0 is the identity for every kernel
    for m in ("linear", "cubic", "lanczos5", "area"):
        got = image.scale_and_translate(ROW, (1, 6), (1,), jnp.array([1.0]), jnp.array([0.0]), m)
        np.testing.assert_allclose(np.asarray(got), ROW, rtol=1e-6, atol=1e-6)
    # under jit with a traced scale
    f = cranax.jit(lambda s: image.scale_and_translate(ROW, (1, 7), (1,), s, jnp.array([0.4]), "lanczos3"))
    np.testing.assert_allclose(np.asarray(f(jnp.array([1.3])))[0, 0], 0.7514787912368774, rtol=1e-5)


def test_errors_and_dtypes():
    with pytest.raises(ValueError, match="shape must have length equal to the number of dimensions"):
        image.resize(ROW, (9,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "foo"'):
        image.resize(ROW, (1, 9), "foo")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        image.scale_and_translate(ROW, (1, 7), (1,), jnp.array([1.3]), jnp.array([0.4]), "nearest")
    assert image.resize(np.arange(6, dtype=np.int32).reshape(2, 3), (3, 4), "linear").dtype == np.float32
    assert image.resize(ROW.astype(np.float16), (1, 9), "cubic").dtype == np.float16
    assert image.ResizeMethod.from_string("tricubic") is image.ResizeMethod.CUBIC
    assert cranax.image is image
