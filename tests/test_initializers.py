"""``cranax.nn.initializers`` (issue 21): for the same key, the values JAX 0.10.2 gives, bit for bit (a
SHA-256 prefix of the array's bytes and its first values, recorded from JAX), the fan arithmetic against
a direct computation, the variance each scheme promises, and JAX's errors."""
import hashlib

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import random
from cranax.nn import initializers as I

SHAPE = (3, 3, 4, 5)

# name -> (initializer, sha256(bytes)[:32], first three values), from jax 0.10.2 with jax.random.key(42),
# shape (3, 3, 4, 5), float32.
RECORDED = {
    "zeros": (I.zeros, "fe2f74a1e0b16a66452888eb4d734bc4", [0.0, 0.0, 0.0]),
    "ones": (I.ones, "8ae5327754f051e8b131fee8d9fbe322", [1.0, 1.0, 1.0]),
    "constant": (I.constant(-0.5), "2bf962061af246122dd3b1909ab0938c", [-0.5, -0.5, -0.5]),
    "uniform": (I.uniform(), "102b4a3a8fa5e3c5c9bc6b4501f297f6",
                [0.004887095652520657, 0.006797971669584513, 0.006162714678794146]),
    "normal": (I.normal(0.3), "b1504e4a2104cf1478b5c7fea5e24de2",
               [-0.00849138479679823, 0.14013956487178802, 0.08871088922023773]),
    "truncated_normal": (I.truncated_normal(0.5, lower=-1.0, upper=1.5), "0e792b1c6cc1fed687beab1e5cca1c53",
                         [0.04666484147310257, 0.2411220520734787, 0.17386789619922638]),
    "glorot_uniform": (I.glorot_uniform(), "fdfad900da4045bb61e7507c1a2834ad",
                       [-0.00614573247730732, 0.09786918759346008, 0.06329018622636795]),
    "glorot_normal": (I.glorot_normal(), "d10b78ff04c5624d0f68dd62426ebb96",
                      [-0.004826181568205357, 0.07938344031572342, 0.05035404488444328]),
    "lecun_uniform": (I.lecun_uniform(), "6499806c7f4b911e2a0085f3b5b1e648",
                      [-0.006518533453345299, 0.10380594432353973, 0.06712938100099564]),
    "lecun_normal": (I.lecun_normal(), "ca1a47d29aae556c5fa18d91acd81c3f",
                     [-0.0051189386285841465, 0.08419884741306305, 0.05340852588415146]),
    "he_uniform": (I.he_uniform(), "0be89ef3c2c91d897531fdd2ec3c279c",
                   [-0.00921859871596098, 0.14680378139019012, 0.09493528306484222]),
    "he_normal": (I.he_normal(), "493cf8af83aee29c55856843b4b57b4b",
                  [-0.007239271886646748, 0.11907514929771423, 0.07553105801343918]),
    "vs_fanout_normal": (I.variance_scaling(0.7, "fan_out", "normal"), "97d85a931e84464d60526c2601c1d0e1",
                         [-0.003530205925926566, 0.058261580765247345, 0.03688063845038414]),
    "vs_geo_uniform": (I.variance_scaling(1.3, "fan_geo_avg", "uniform", in_axis=(0, 1), out_axis=3, batch_axis=2),
                       "269f68778891e26704b065435586f9bf",
                       [-0.0172174833714962, 0.2741839289665222, 0.17730966210365295]),
}


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:32]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_bit_identical_to_jax(name):
    init, digest, first = RECORDED[name]
    out = init(random.key(42), SHAPE, jnp.float32)
    a = np.asarray(out)
    assert a.shape == SHAPE and a.dtype == np.float32
    np.testing.assert_array_equal(a.ravel()[:3], np.float32(first))
    assert _digest(a) == digest


def test_float16_and_aliases():
    # jax 0.10.2: he_uniform()(key(42), (4, 6), float16)
    a = np.asarray(I.he_uniform()(random.key(42), (4, 6), jnp.float16))
    assert a.dtype == np.float16
    np.testing.assert_array_equal(a.ravel()[:3], np.float16([-1.0380859375, -0.75830078125, 1.1650390625]))
    assert _digest(a) == "52fe88a1dd9d6a96a2490fb24fbecaf4"
    assert I.xavier_uniform is I.glorot_uniform and I.xavier_normal is I.glorot_normal
    assert I.kaiming_uniform is I.he_uniform and I.kaiming_normal is I.he_normal
    # the default dtype is the default float, and the initializer's own dtype is its default
    assert I.normal()(random.key(0), (2, 3)).dtype == np.float32
    assert I.normal(dtype=jnp.float16)(random.key(0), (2, 3)).dtype == np.float16
    assert isinstance(I.normal(), I.Initializer) and isinstance(I.zeros, I.Initializer)


def test_matches_cranax_random_directly():
    k = random.key(7)
    np.testing.assert_array_equal(np.asarray(I.normal(0.25)(k, (6,))), np.asarray(random.normal(k, (6,)) * 0.25))
    # variance_scaling(2, fan_in, uniform) on (in=10, out=4): bound sqrt(3 * 2 / 10)
    got = np.asarray(I.variance_scaling(2.0, "fan_in", "uniform")(k, (10, 4)))
    want = np.asarray(random.uniform(k, (10, 4), jnp.float32, -1)) * np.float32(np.sqrt(np.float32(3 * 0.2)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mode,scale,fan", [("fan_in", 1.0, 900.), ("fan_out", 2.0, 1080.), ("fan_avg", 1.0, 990.),
                                            ("fan_geo_avg", 0.5, np.sqrt(900. * 1080.))])
def test_variance_scaling_statistics(mode, scale, fan):
    shape = (3, 3, 100, 120)  # HWIO: receptive field 9, fan_in 9 * 100, fan_out 9 * 120
    for dist in ("normal", "uniform", "truncated_normal"):
        a = np.asarray(I.variance_scaling(scale, mode, dist)(random.key(3), shape)).astype(np.float64)
        np.testing.assert_allclose(a.var(), scale / fan, rtol=0.03)
        assert abs(a.mean()) < 0.02 * np.sqrt(scale / fan)
        if dist == "uniform":
            assert np.abs(a).max() <= np.sqrt(3 * scale / fan) * (1 + 1e-6)
        if dist == "truncated_normal":
            assert np.abs(a).max() <= 2 * np.sqrt(scale / fan) / 0.87962566103423978 * (1 + 1e-6)


def test_compute_fans_and_errors():
    assert I._compute_fans((3, 3, 4, 5)) == (36.0, 45.0)
    assert I._compute_fans((2, 3, 7), in_axis=0, out_axis=2, batch_axis=1) == (2.0, 7.0)
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a 1-dimensional"):
        I.glorot_uniform()(random.key(0), (5,))
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan_x"):
        I.variance_scaling(1.0, "fan_x", "normal")(random.key(0), (2, 2))
    with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer: cauchy"):
        I.variance_scaling(1.0, "fan_in", "cauchy")(random.key(0), (2, 2))
    with pytest.raises(ValueError, match="orthogonal initializer requires at least a 2D shape"):
        I.orthogonal()(random.key(0), (4,))
    with pytest.raises(ValueError, match="requires a 3D, 4D or 5D shape"):
        I.delta_orthogonal()(random.key(0), (4, 4))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        I.delta_orthogonal()(random.key(0), (3, 5, 4))


def test_initializers_under_jit():
    f = cranax.jit(lambda k: I.glorot_normal()(k, SHAPE))
    np.testing.assert_array_equal(np.asarray(f(random.key(42))),
                                  np.asarray(I.glorot_normal()(random.key(42), SHAPE)))


# jax 0.10.2 values. QR is computed by a different routine (LAPACK there), so these agree to rounding, not bits.
ORTHO_6x4 = [[-0.017076612, 0.389236, -0.1037771, 0.019842977],
             [-0.074830934, 0.2575358, -0.7372828, -0.25305027],
             [0.31457457, 0.3591571, -0.32522076, 0.7313516],
             [0.87226534, -0.14582765, 0.15605688, -0.030693838],
             [0.3362556, -0.21259786, -0.42771795, -0.4831187],
             [-0.14572905, -0.7659721, -0.36411425, 0.40786108]]


def test_orthogonal_matches_jax():
    q = np.asarray(I.orthogonal()(random.key(42), (6, 4), jnp.float32))
    np.testing.assert_allclose(q, ORTHO_6x4, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-6)
    # more rows than columns along column_axis=0, scale 2: jax's [:, :, 0, 0] slice
    c0 = np.asarray(I.orthogonal(2.0, column_axis=0)(random.key(42), SHAPE, jnp.float32))
    np.testing.assert_allclose(c0[:, :, 0, 0], [[-0.008625984, -0.31648853, -0.10067271],
                                                [0.14471008, -0.17336133, -0.036469262],
                                                [0.099407986, 0.2033146, -0.05699123]], rtol=2e-5, atol=2e-6)
    flat = np.moveaxis(c0, 0, -1).reshape(-1, 3)
    np.testing.assert_allclose(flat.T @ flat, 4 * np.eye(3), atol=1e-5)
    # fewer rows than columns: orthonormal rows
    w = np.asarray(I.orthogonal(0.5)(random.key(3), (3, 5)))
    np.testing.assert_allclose(w, [[-0.23985851, 0.32683656, -0.206535, -0.1884158, -0.086536214],
                                   [0.32481197, 0.04775654, -0.248649, 0.06829432, -0.27518362],
                                   [0.19504766, 0.007286131, -0.20372848, -0.18241496, 0.370301]],
                               rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(w @ w.T, 0.25 * np.eye(3), atol=1e-6)
    assert np.asarray(I.orthogonal()(random.key(0), (0, 3))).shape == (0, 3)


def test_delta_orthogonal_matches_jax():
    w = np.array(I.delta_orthogonal()(random.key(42), (3, 3, 2, 4)))
    centre = [[-0.019171357, 0.20028646, -0.0840103, -0.9759407],
              [0.7993234, 0.5303018, 0.27390707, 0.069550626]]
    np.testing.assert_allclose(w[1, 1], centre, rtol=2e-5, atol=2e-6)
    w[1, 1] = 0
    assert not w.any()                                   # zero away from the spatial centre
    w3 = np.asarray(I.delta_orthogonal(scale=3.0)(random.key(1), (4, 3, 3)))
    np.testing.assert_allclose(w3[1] @ w3[1].T, 9 * np.eye(3), atol=1e-5)   # centre (k - 1) // 2 = 1
