"""jax.experimental.jet (Taylor mode): derivatives along a path, recorded from JAX 0.10.2 in float64, and
checked against closed forms."""
import math

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental.jet import jet, jet2

X0, SER = 0.7, ([1.3, -0.4, 0.25, 0.1],)

# name -> (primal, terms) from JAX 0.10.2, jet(f, (0.7,), ([1.3, -0.4, 0.25, 0.1],)) with x64
JAX = {
    "sin": (0.644217687237691, [0.9942948434698351, -1.3946647663454919, -0.48416814655210033, 3.87192678359082]),
    "exp": (2.0137527074704766, [2.6178785197116197, 2.597740992636911, 1.7861986515263095, 1.369553216350662]),
    "log": (-0.35667494393873245, [1.8571428571428574, -4.020408163265302, 16.351311953352788, -98.51270304039996]),
    "tanh": (0.6043677771171634, [0.8251614669771964, -1.550518440048321, 1.6227055346499768, 6.130252323772436]),
    "sqrt": (0.8366600265340756, [0.776898596067356, -0.9604515610722798, 2.824947210582441, -13.740577207430256]),
    "logistic": (0.6681877721681662, [0.28822673528104176, -0.21472330178142118, 0.010892033655183,
                                      0.5401341427746721]),
    "powm2": (2.0408163265306123, [-7.5801749271137036, 44.56476468138271, -354.1679062295476, 3536.2595517174013]),
    "pow1.5": (0.5856620185738528, [1.6314870517414473, 1.0129562464108968, -2.4914113494215004, 8.236969795121759]),
    "xpowx": (0.779055912670449, [0.6515420453016523, 2.225288404778596, -0.4321639575894988, 22.686494330189934]),
    "div": (0.43236086391791345, [0.1391933363350555, -2.094353118693696, 7.363130100116478, -9.63267020594872]),
    "abs": (1.4, [2.6, -0.8, 0.5, 0.2]),
    "max": (0.7, [1.3, -0.4, 0.25, 0.1]),
    "composite": (0.32738436713985997, [2.964076531968291, -2.8716762371919224, -76.74810909093772,
                                        180.16180997521957]),
    "jit": (0.5849835714501206, [-1.2810846489849983, -0.18030905100743022, 8.944067280490232, -12.808019166357484]),
}
FNS = {
    "sin": jnp.sin, "exp": jnp.exp, "log": jnp.log, "tanh": jnp.tanh, "sqrt": jnp.sqrt, "logistic": jax.nn.sigmoid,
    "powm2": lambda x: x ** -2, "pow1.5": lambda x: x ** 1.5, "xpowx": lambda x: x ** x,
    "div": lambda x: jnp.sin(x) / (1 + x * x), "abs": lambda x: jnp.abs(-2 * x),
    "max": lambda x: jnp.maximum(x, 0.3 * x),
    "composite": lambda x: jnp.tanh(jnp.exp(jnp.sin(x)) * x - jnp.log(x + 2.0)),
    "jit": jax.jit(lambda x: jnp.cos(x) ** 2),
}


@pytest.mark.parametrize("name", sorted(JAX))
def test_scalar_functions_as_jax(x64, name):
    p, t = jet(FNS[name], (X0,), SER)
    want_p, want_t = JAX[name]
    np.testing.assert_allclose(float(p), want_p, rtol=1e-13)
    np.testing.assert_allclose([float(v) for v in t], want_t, rtol=1e-12, atol=1e-13)


def test_derivatives_of_a_straight_path_are_the_function_derivatives(x64):
    # x(t) = x0 + t: the terms are f', f'', f''' at x0 (closed forms)
    x = 0.3
    _, t = jet(jnp.sin, (x,), ([1.0, 0.0, 0.0],))
    np.testing.assert_allclose([float(v) for v in t], [math.cos(x), -math.sin(x), -math.cos(x)], rtol=1e-14)
    _, t = jet(lambda x: x ** 5, (x,), ([1.0, 0.0, 0.0, 0.0],))
    np.testing.assert_allclose([float(v) for v in t], [5 * x ** 4, 20 * x ** 3, 60 * x ** 2, 120 * x], rtol=1e-13)
    _, t = jet(lambda x: x ** 3, (0.0,), ([1.0, 0.0, 0.0],))   # exact at 0 (products, not the power recurrence)
    np.testing.assert_allclose([float(v) for v in t], [0.0, 0.0, 6.0])


def test_arrays_and_several_arguments_as_jax(x64):
    A = np.arange(6.0).reshape(2, 3) / 7
    v = np.array([0.3, -0.2, 0.5])
    p, t = jet(lambda x: jnp.sum(jnp.tanh(A @ x) ** 2), (v,), ([np.ones(3), np.array([0.1, 0.2, 0.3])],))
    np.testing.assert_allclose(float(p), 0.13914424034185824, rtol=1e-13)
    np.testing.assert_allclose([float(x) for x in t], [1.1605373277366262, 3.7962355500809597], rtol=1e-12)
    p, t = jet(jax.nn.softmax, (v,), ([np.ones(3), np.array([0.1, 0.2, 0.3])],))
    np.testing.assert_allclose(p, [0.3536151147265019, 0.2144784088194238, 0.4319064764540744], rtol=1e-13)
    np.testing.assert_allclose(t[0], [0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(t[1], [-0.03813001235858917, -0.0016791806687635744, 0.03980919302735265], rtol=1e-11)
    p, t = jet(lambda x: jnp.concatenate([x[:2] * 2, jnp.exp(x[1:])]).reshape(4, 1).T, (v,), ([np.ones(3)],))
    np.testing.assert_allclose(t[0], [[2.0, 2.0, 0.8187307530779818, 1.6487212707001282]], rtol=1e-14)
    p, t = jet(lambda x: jnp.where(x > 0, x ** 2, jnp.sin(x)), (v,), ([np.ones(3), v],))
    np.testing.assert_allclose(t[1], [2.179999999999998, 0.002656015226812605, 2.499999999999998], rtol=1e-12)
    p, t = jet(lambda x, y: jnp.exp(x * y) + jnp.sin(y), (0.5, 1.5), ([1.0, 0.5], [0.2, -0.3]))
    np.testing.assert_allclose(float(p), 3.1144950032167293, rtol=1e-14)
    np.testing.assert_allclose([float(x) for x in t], [3.4013474669138204, 7.475399099176642], rtol=1e-12)
    p, t = jet2(jnp.exp, (0.5,), ([1.0, 0.0, 0.0],))   # Taylor coefficients: e^0.5 (1, 1, 1/2, 1/6)
    np.testing.assert_allclose([float(x) for x in t], np.exp(0.5) * np.array([1, 0.5, 1 / 6]), rtol=1e-14)


def test_constant_outputs_and_errors():
    p, t = jet(jnp.floor, (1.5,), ((1.0, 2.0),))
    assert float(p) == 1.0 and [float(x) for x in t] == [0.0, 0.0]
    p, t = jet(lambda x: 3.0 * jnp.ones(2), (1.5,), ((1.0, 2.0),))
    np.testing.assert_array_equal(t, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="^jet terms have inconsistent lengths for different arguments$"):
        jet(lambda x, y: x * y, (1.0, 2.0), ([1.0, 2.0], [1.0]))
    with pytest.raises(ValueError, match="^primal value at position 0 is not an array$"):
        jet(jnp.sin, ((1.0, 2.0),), ((1.0,),))
    with pytest.raises(NotImplementedError, match="no Taylor rule for primitive 'while'"):
        jet(lambda x: jax.lax.while_loop(lambda c: c < 3, lambda c: c + x, 0.0), (1.0,), ((1.0,),))


# jet(f, ...) for erf, erfc, erf_inv, atan2, the cumulative family and conv, recorded from JAX 0.10.2 with x64
JAX_MORE = {'atan2': (0.5768846733028983, [-0.13484487164487202, -1.819731507866404, 11.046488941840016, -62.24642754900469]),
 'atan2_c': (0.33667481938672716,
             [0.5790645879732739, -0.41289477730765195, 0.0823997441682009, 1.0795537019043067]),
 'conv': ([[[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]],
          [[[[[1.05, 1.325, 1.5999999999999999], [2.15, 2.425, 2.7]]]],
           [[[[5.499999999999993, 5.499999999999993, 5.499999999999993],
              [5.499999999999993, 5.499999999999993, 5.499999999999993]]]]]),
 'cummax': ([0.7833269096274833, 0.7833269096274833, 0.9974949866040544, 0.9974949866040544],
            [[1.8648299048119936, 1.8648299048119936, 0.2122116050031087, 0.2122116050031087],
             [-6.863459196166142, -6.863459196166142, -9.041118360937412, -9.041118360937412]]),
 'cummin_rev': ([0.04000000000000001, 0.04000000000000001, 0.25, 1.2100000000000002],
                [[-0.4, -0.4, 1.0, 2.2],
                 [1.9199999999999975, 1.9199999999999975, 1.6999999999999977, 2.879999999999998]]),
 'cumprod': ([1.3, 1.04, 1.56, 3.2760000000000007],
             [[1.0, 2.1, 4.19, 10.359000000000002],
              [0.10000000000000002, 2.3399999999999976, 7.397999999999992, 24.539799999999975]]),
 'cumsum': ([0.3, 0.09999999999999998, 0.6, 1.7000000000000002],
            [[1.0, 2.0, 3.0, 4.0],
             [0.10000000000000002, 0.30000000000000004, 5.551115123125776e-17, 0.40000000000000013]]),
 'erf': (0.6778011938374184, [0.8986573185337002, -1.9120662638955475, 1.6218137755063744, 9.625547295848666]),
 'erf_inv': (0.6339023948388705, [1.5496882123226374, 2.567848601869685, 16.894565419430368, 140.3798426069621]),
 'erfc': (0.32219880616258156, [-0.8986573185337002, 1.9120662638955475, -1.6218137755063744, -9.625547295848666])}


def test_more_rules_as_jax(x64):
    """Taylor rules JAX has that cranax lacked: erf (y' = 2/sqrt(pi) exp(-x^2) x'), erfc, erf_inv, atan2,
    cumprod/cummax/cummin (through the parallel-prefix scan, as JAX) and conv (bilinear)."""
    from cranax import lax
    out = {}
    for name, f in {"erf": lax.erf, "erfc": lax.erfc, "erf_inv": lambda x: lax.erf_inv(x * 0.9),
                    "atan2": lambda x: lax.atan2(jnp.sin(x), x * x + 0.5),
                    "atan2_c": lambda x: lax.atan2(x, 2.0)}.items():
        p, t = jet(f, (X0,), SER)
        out[name] = (float(p), [float(v) for v in t])
    v = np.array([0.3, -0.2, 0.5, 1.1])
    for name, f in {"cumprod": lambda x: lax.cumprod(x + 1.0), "cummax": lambda x: lax.cummax(jnp.sin(3 * x)),
                    "cummin_rev": lambda x: lax.cummin(x * x, reverse=True), "cumsum": jnp.cumsum}.items():
        p, t = jet(f, (v,), ([np.ones(4), np.array([0.1, 0.2, -0.3, 0.4])],))
        out[name] = (np.asarray(p).tolist(), [np.asarray(x).tolist() for x in t])
    lhs = np.arange(12.0).reshape(1, 1, 3, 4) / 10
    rhs = np.array([[[[1.0, -0.5], [0.25, 2.0]]]])
    p, t = jet(lambda x: lax.conv_general_dilated(x, rhs * x[0, 0, 0, 0], (1, 1), "VALID"), (lhs,),
               ([np.ones_like(lhs), lhs],))
    out["conv"] = (np.asarray(p).tolist(), [np.asarray(x).tolist() for x in t])
    assert sorted(out) == sorted(JAX_MORE)
    for k, (p, t) in JAX_MORE.items():
        np.testing.assert_allclose(np.asarray(out[k][0]), np.asarray(p), rtol=1e-12, atol=1e-13, err_msg=k)
        np.testing.assert_allclose(np.asarray(out[k][1]), np.asarray(t), rtol=1e-11, atol=1e-12, err_msg=k)
