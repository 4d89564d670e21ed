"""``cranax.nn`` (issue 21): every activation against a float64 NumPy oracle, the derivatives at kinks
against the values JAX 0.10.2 gives (custom jvp rules), softmax / logsumexp / standardize with masks and
weights against NumPy and JAX-recorded values, and ``dot_product_attention`` against a NumPy attention over
masks, bias, causal and sliding windows, sequence lengths and grouped heads."""
import math

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import nn

XS = np.concatenate([np.linspace(-8, 8, 41), [0., -1., 1., 6., -3., 3., 1e-6, -1e-6, 30., -30.]]).astype(np.float32)


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))


def _softplus(x):
    return np.logaddexp(x, 0)


_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf)

# name -> (float64 oracle, extra kwargs)
ORACLES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _sigmoid,
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "log_sigmoid": lambda x: -_softplus(-x),
    "softplus": _softplus,
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "selu": lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(np.minimum(x, 0))),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip(x + 1, 0, 2) / 2,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "identity": lambda x: x,
    "tanh": np.tanh,
    "gelu": lambda x: x * 0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
}


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_activation_values_against_float64(name):
    got = np.asarray(getattr(nn, name)(XS))
    want = ORACLES[name](XS.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == XS.shape
    # atol 3e-7: gelu's 1 + tanh(...) near -1 magnifies tanh's error; float32 tanh is XLA's (JAX 0.10.2 gives
    # these very bits: -0.0018697738 at x = -3.2, 2.1e-7 from the float64 value)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=3e-7)


@pytest.mark.parametrize("name", ["relu", "relu6", "sigmoid", "silu", "mish", "log_sigmoid", "softplus", "elu",
                                  "celu", "selu", "leaky_relu", "hard_sigmoid", "hard_silu", "sparse_plus",
                                  "sparse_sigmoid", "soft_sign", "squareplus", "tanh", "gelu"])
def test_activation_gradients_against_finite_differences(name):
    f = getattr(nn, name)
    xs = np.array([-4.3, -2.2, -0.7, -0.3, 0.4, 0.9, 2.6, 5.1, 7.3], np.float64)  # away from the kinks
    g = np.asarray(cranax.vmap(cranax.grad(f))(xs.astype(np.float32)))
    h = 1e-6
    fd = (ORACLES[name](xs + h) - ORACLES[name](xs - h)) / (2 * h)
    # atol 1.5e-6: gelu's derivative at -4.3 is JAX 0.10.2's bits (XLA's float32 tanh), 1.17e-6 from the float64 one
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1.5e-6)


# JAX 0.10.2: jax.vmap(jax.grad(f))([-1, 0, 1, 6, -3, 3]) -- the derivatives at the kinks follow JAX's rules.
KINK_PTS = np.array([-1., 0., 1., 6., -3., 3.], np.float32)
KINK_GRADS = {
    "relu": [0.0, 0.0, 1.0, 1.0, 0.0, 1.0],
    "relu6": [0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
    "hard_tanh": [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    "hard_sigmoid": [0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.0, 0.0, 0.0],
    "hard_silu": [0.1666666716337204, 0.5, 0.8333333730697632, 1.0, 0.0, 1.0],
    "leaky_relu": [0.009999999776482582, 1.0, 1.0, 1.0, 0.009999999776482582, 1.0],
    "elu": [0.3678794503211975, 1.0, 1.0, 1.0, 0.049787044525146484, 1.0],
    "celu": [0.3678794503211975, 1.0, 1.0, 1.0, 0.049787044525146484, 1.0],
    "selu": [0.6467686295509338, 1.7580993175506592, 1.0507010221481323, 1.0507010221481323,
             0.08753056824207306, 1.0507010221481323],
    "sparse_plus": [0.0, 0.5, 1.0, 1.0, 0.0, 1.0],
    "sparse_sigmoid": [0.25, 0.5, 0.25, 0.0, 0.0, 0.0],
    "soft_sign": [0.25, 1.0, 0.25, 0.02040816843509674, 0.0625, 0.0625],
}


@pytest.mark.parametrize("name", sorted(KINK_GRADS))
def test_gradients_at_kinks_match_jax(name):
    g = np.asarray(cranax.vmap(cranax.grad(getattr(nn, name)))(KINK_PTS))
    np.testing.assert_allclose(g, KINK_GRADS[name], rtol=1e-6)


def test_gelu_exact_and_dtypes():
    x = XS[np.abs(XS) < 10]
    want = x.astype(np.float64) * 0.5 * (1 + _erf(x.astype(np.float64) / np.sqrt(2)))
    np.testing.assert_allclose(np.asarray(nn.gelu(x, approximate=False)), want, rtol=2e-6, atol=1e-7)
    g = np.asarray(cranax.vmap(cranax.grad(lambda t: nn.gelu(t, False)))(x))
    pdf = np.exp(-x.astype(np.float64) ** 2 / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(g, 0.5 * (1 + _erf(x / np.sqrt(2))) + x * pdf, rtol=2e-6, atol=1e-6)
    # ints become the default float (JAX's promote_args_inexact); float16 stays float16
    assert nn.gelu(jnp.array([1, 2])).dtype == np.float32
    assert nn.gelu(jnp.array([1., 2.], jnp.float16)).dtype == np.float16


def test_dtype_rules_match_jax():
    i = jnp.array([1, 2], jnp.int32)
    assert nn.relu(i).dtype == np.int32 and nn.hard_tanh(i).dtype == np.int32 and nn.identity(i).dtype == np.int32
    for f in (nn.relu6, nn.sparse_plus, nn.celu, nn.squareplus, nn.soft_sign, nn.log1mexp, nn.mish, nn.elu):
        assert f(i).dtype == np.float32
    for f in (nn.sigmoid, nn.silu, nn.glu):     # JAX: lax.logistic rejects integers
        with pytest.raises(TypeError, match="logistic"):
            f(jnp.array([1, 2]))
    with pytest.raises(TypeError, match="relu"):
        nn.relu([1.0, 2.0])                      # lists are not arrays (JAX's ensure_arraylike)
    h = jnp.array([0.5, -2.], jnp.float16)
    for name in ORACLES:
        assert getattr(nn, name)(h).dtype == np.float16, name


def test_log1mexp():
    x = np.array([1e-8, 1e-3, 0.3, np.log(2), 0.7, 2., 10., 50.], np.float64)
    got = np.asarray(nn.log1mexp(x.astype(np.float32)))
    x32 = x.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(got, np.where(x32 < 0.5, np.log(-np.expm1(-x32)), np.log1p(-np.exp(-x32))), rtol=2e-6)
    g = np.asarray(cranax.vmap(cranax.grad(nn.log1mexp))(x.astype(np.float32)))
    np.testing.assert_allclose(g, 1 / np.expm1(x), rtol=2e-6)
    # JAX: log1mexp([0, -1]) == [-inf, nan]
    edge = np.asarray(nn.log1mexp(jnp.array([0., -1.])))
    assert edge[0] == -np.inf and np.isnan(edge[1])


def test_glu():
    x = XS[:40].reshape(5, 8)
    a, b = x[:, :4].astype(np.float64), x[:, 4:].astype(np.float64)
    np.testing.assert_allclose(np.asarray(nn.glu(x)), a * _sigmoid(b), rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(nn.glu(x[:4], axis=0)), x[:2] * _sigmoid(x[2:4].astype(np.float64)),
                               rtol=2e-6, atol=1e-7)
    with pytest.raises(AssertionError, match="divisible by 2"):
        nn.glu(jnp.ones(3))


M = np.linspace(-8, 8, 41).astype(np.float32)[:40].reshape(5, 8)
W = (np.arange(40).reshape(5, 8) % 3 != 0)
B = np.where(np.arange(40).reshape(5, 8) % 4 == 0, -1.0, 0.5).astype(np.float32)


def _np_softmax(x, axis=-1, where=None):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True)) if where is None else np.where(where, np.exp(x - 8), 0)
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_and_log_softmax():
    np.testing.assert_allclose(np.asarray(nn.softmax(M)), _np_softmax(M), rtol=2e-6, atol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.softmax(M, axis=0)), _np_softmax(M, 0), rtol=2e-6, atol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.softmax(M, axis=(0, 1))), _np_softmax(M.ravel()).reshape(5, 8),
                               rtol=2e-6, atol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.softmax(M, where=W)), _np_softmax(M, where=W), rtol=2e-6,
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(M)), np.log(_np_softmax(M)), rtol=2e-6, atol=1e-5)
    lw = np.asarray(nn.log_softmax(M, where=W))
    assert np.all(lw[~W] == -np.inf)
    np.testing.assert_allclose(lw[W], np.log(_np_softmax(M, where=W)[W]), rtol=2e-6, atol=1e-5)
    # JAX: softmax([-inf, 0]) == [0, 1]; log_softmax([1, 2], where=[T, F]) == [0, -inf]
    np.testing.assert_array_equal(np.asarray(nn.softmax(jnp.array([-np.inf, 0.]))), [0., 1.])
    np.testing.assert_array_equal(np.asarray(nn.log_softmax(jnp.array([1., 2.]), where=jnp.array([True, False]))),
                                  [0., -np.inf])


def test_softmax_gradients():
    c = np.arange(8.)

    def oracle_grad(where):
        y = _np_softmax(M, where=where)
        return y * (c - (y * c).sum(-1, keepdims=True))     # d/dx sum(softmax(x) * c)

    g = np.asarray(cranax.grad(lambda x: (nn.softmax(x) * jnp.arange(8.)).sum())(M))
    np.testing.assert_allclose(g, oracle_grad(None), rtol=1e-5, atol=1e-6)
    gw = np.asarray(cranax.grad(lambda x: (nn.softmax(x, where=W) * jnp.arange(8.)).sum())(M))
    # JAX 0.10.2, row 1 of the masked gradient
    np.testing.assert_allclose(gw[1], [-0.18862808, 0., -0.24145593, -0.22718118, 0., 0.086520806, 0.570745, 0.],
                               rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(gw, oracle_grad(W), rtol=1e-5, atol=1e-6)
    gl = np.asarray(cranax.grad(lambda x: (nn.log_softmax(x) * jnp.arange(8.)).sum())(M))
    np.testing.assert_allclose(gl, c - _np_softmax(M) * c.sum(), rtol=1e-5, atol=1e-5)


def test_logsumexp_and_logmeanexp():
    m64 = M.astype(np.float64)
    np.testing.assert_allclose(float(nn.logsumexp(M)), np.log(np.exp(m64).sum()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(M, axis=1, keepdims=True)),
                               np.log(np.exp(m64).sum(1, keepdims=True)), rtol=1e-6)
    # JAX 0.10.2 values
    np.testing.assert_allclose(np.asarray(nn.logsumexp(M, axis=1, where=W)),
                               [-4.518634, -1.5828099, 2.0436938, 5.0813665, 8.01719], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logsumexp(M, axis=1, b=B)),
                               [-5.29234, -2.09234, 1.10766, 4.30766, 7.50766], rtol=1e-6)
    out, sign = nn.logsumexp(M, axis=1, b=B, return_sign=True)
    np.testing.assert_allclose(np.asarray(out), np.log(np.abs((B * np.exp(m64)).sum(1))), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(sign), [1.] * 5)
    assert np.isnan(float(nn.logsumexp(jnp.array([1., 2.]), b=jnp.array([1., -2.]))))  # negative sum: NaN
    assert float(nn.logsumexp(jnp.array([-np.inf, -np.inf]))) == -np.inf
    assert float(nn.logsumexp(jnp.array([np.inf, 1.]))) == np.inf
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(M, axis=1)), np.log(np.exp(m64).mean(1)), rtol=1e-6)
    np.testing.assert_allclose(float(nn.logmeanexp(M)), np.log(np.exp(m64).mean()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(M, axis=0, where=W)),
                               [3.7031155, 0.941406, 4.2537265, 4.9031153, 2.141406, 5.453727, 6.103115, 3.3414063],
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(jnp.array([[1., 2.], [3., 4.]]), axis=1, keepdims=True)),
                               [[1.6201143], [3.6201143]], rtol=1e-6)


def test_standardize():
    m64 = M.astype(np.float64)
    want = (m64 - m64.mean(-1, keepdims=True)) / np.sqrt(m64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(M)), want, rtol=1e-5, atol=1e-5)
    want0 = (m64 - m64.mean(0)) / np.sqrt(m64.var(0) + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(M, axis=0, algorithm="stable")), want0, atol=1e-6)
    # JAX 0.10.2, row 1 with a mask
    np.testing.assert_allclose(np.asarray(nn.standardize(M, where=W))[1],
                               [-1.4985272, -1.0302374, -0.56194764, -0.093657844, 0.37463164, 0.84292144,
                                1.3112109, 1.7795007], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.standardize(M, mean=1.0, variance=4.0, epsilon=0.0)), (m64 - 1) / 2,
                               rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown algorithm 'x'"):
        nn.standardize(jnp.ones(3), algorithm="x")


def test_one_hot():
    np.testing.assert_array_equal(np.asarray(nn.one_hot(jnp.array([0, 2, 5, -1]), 4)),
                                  np.eye(4, dtype=np.float32)[[0, 2]].tolist() + [[0.] * 4] * 2)
    r = nn.one_hot(jnp.array([[0, 2], [1, 3]]), 3, axis=0, dtype=jnp.int32)
    assert r.dtype == np.int32
    assert np.asarray(r).tolist() == [[[1, 0], [0, 0]], [[0, 0], [1, 0]], [[0, 1], [0, 0]]]  # JAX's value


def _np_attention(q, k, v, bias=None, mask=None, causal=False, scale=None, qlen=None, kvlen=None, window=None):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    Bn, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    G = N // K
    kk, vv = np.repeat(k, G, axis=2), np.repeat(v, G, axis=2)        # head n uses kv head n // G
    logits = np.einsum("btnh,bsnh->bnts", q, kk) * (1 / np.sqrt(H) if scale is None else scale)
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    if causal:
        keep &= s <= t
    if window is not None:
        keep &= (t <= s + window[0]) & (t >= s - window[1])
    if qlen is not None:
        keep &= (np.arange(T)[None, :, None] < np.asarray(qlen)[:, None, None])[:, None]
    if kvlen is not None:
        keep &= (np.arange(S)[None, None, :] < np.asarray(kvlen)[:, None, None])[:, None]
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = np.einsum("bnts,bsnh->btnh", p, vv)
    if qlen is not None:
        out *= (np.arange(T)[None, :] < np.asarray(qlen)[:, None])[:, :, None, None]
    lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    return out, lse.transpose(0, 2, 1)


_R = np.random.RandomState(0)
Q = _R.randn(2, 5, 4, 8).astype(np.float32)
KK = _R.randn(2, 7, 2, 8).astype(np.float32)
V = _R.randn(2, 7, 2, 8).astype(np.float32)
BIAS = _R.randn(1, 4, 5, 7).astype(np.float32)
MASK = _R.rand(2, 1, 5, 7) > 0.3


@pytest.mark.parametrize("kw", [
    {}, {"bias": BIAS, "mask": MASK, "scale": 0.3}, {"is_causal": True},
    {"query_seq_lengths": np.array([3, 5], np.int32), "key_value_seq_lengths": np.array([4, 7], np.int32)},
    {"local_window_size": (1, 2)}, {"local_window_size": 1, "is_causal": True, "mask": MASK},
], ids=["plain", "bias_mask_scale", "causal", "seq_lengths", "window", "window_causal_mask"])
def test_dot_product_attention_against_numpy(kw):
    got = np.asarray(nn.dot_product_attention(Q, KK, V, **kw))
    w = kw.get("local_window_size")
    want, _ = _np_attention(Q, KK, V, kw.get("bias"), kw.get("mask"), kw.get("is_causal", False), kw.get("scale"),
                            kw.get("query_seq_lengths"), kw.get("key_value_seq_lengths"),
                            (w, w) if isinstance(w, int) else w)
    assert got.shape == Q.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


def test_dot_product_attention_residual_3d_and_gradient():
    o, res = nn.dot_product_attention(Q, KK, V, mask=MASK, is_causal=True, return_residual=True)
    want, lse = _np_attention(Q, KK, V, mask=MASK, causal=True)
    assert res.shape == (2, 5, 4)
    np.testing.assert_allclose(np.asarray(o), want, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(res), lse, rtol=1e-5, atol=2e-6)
    o3 = nn.dot_product_attention(Q[0], KK[0], V[0])          # (T, N, H): leading dims dropped
    np.testing.assert_allclose(np.asarray(o3), _np_attention(Q[:1], KK[:1], V[:1])[0][0], rtol=1e-5, atol=2e-6)
    # gradient w.r.t. the query against central differences of the float64 oracle, on a few entries
    g = np.asarray(cranax.grad(lambda q: nn.dot_product_attention(q, KK, V, BIAS, is_causal=True).sum())(Q))
    h = 1e-5
    for idx in [(0, 0, 0, 0), (0, 3, 1, 5), (1, 4, 3, 7), (1, 2, 2, 1)]:
        qp, qm = Q.astype(np.float64), Q.astype(np.float64)
        qp[idx] += h
        qm[idx] -= h
        fd = (_np_attention(qp, KK, V, BIAS, causal=True)[0].sum()
              - _np_attention(qm, KK, V, BIAS, causal=True)[0].sum()) / (2 * h)
        np.testing.assert_allclose(g[idx], fd, rtol=1e-4, atol=1e-5)


def test_dot_product_attention_errors():
    one = jnp.ones((1, 2, 2, 4))
    with pytest.raises(ValueError, match="multiple of key/value heads, but got 3 vs 2"):
        nn.dot_product_attention(jnp.ones((1, 2, 3, 4)), one, one)
    with pytest.raises(ValueError, match=r"value shape should be \[1, 2, 2, 4\]: but got \(1, 2, 2, 3\)"):
        nn.dot_product_attention(one, one, jnp.ones((1, 2, 2, 3)))
    with pytest.raises(ValueError, match="mask dtype should be bool, but got float32"):
        nn.dot_product_attention(one, one, one, mask=jnp.ones((1, 1, 2, 2)))
    with pytest.raises(ValueError, match="Unsupported implementation option: foo"):
        nn.dot_product_attention(one, one, one, implementation="foo")
    with pytest.raises(ValueError, match="query_seq_lengths dtype should be int32"):
        nn.dot_product_attention(one, one, one, query_seq_lengths=jnp.array([1.0]))


def test_scaled_matmul_and_dot_general():
    r = np.random.RandomState(1)
    a, b = r.randn(2, 3, 64).astype(np.float32), r.randn(2, 4, 64).astype(np.float32)
    sa, sb = r.rand(2, 3, 2).astype(np.float32) + 0.5, r.rand(2, 4, 2).astype(np.float32) + 0.5
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 32, 2), b * np.repeat(sb, 32, 2))
    np.testing.assert_allclose(np.asarray(nn.scaled_matmul(a, b, sa, sb)), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="3-dimensional"):
        nn.scaled_matmul(a[0], b, sa, sb)
    x = np.arange(64.).reshape(2, 32).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(nn.scaled_dot_general(x, x, (((1,), (1,)), ((), ())))),
                                  [[10416., 26288.], [26288., 74928.]])          # JAX's value
    cfg = nn.get_scaled_dot_general_config("mxfp8")
    assert (cfg.mode, cfg.block_size, cfg.global_scale) == ("mxfp8", 32, None)
    assert nn.get_scaled_dot_general_config("nvfp4").block_size == 16
    with pytest.raises(ValueError, match="Unsupported mode"):
        nn.get_scaled_dot_general_config("fp4")
    with pytest.raises(NotImplementedError):
        nn.scaled_dot_general(x, x, (((1,), (1,)), ((), ())), configs=[cfg] * 3)


def test_jit_and_vmap_compose():
    f = cranax.jit(lambda x: nn.softmax(nn.gelu(x)) * nn.logsumexp(x, axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(f(M)), _np_softmax(ORACLES["gelu"](M.astype(np.float64)))
                               * np.log(np.exp(M.astype(np.float64)).sum(-1, keepdims=True)), rtol=1e-5, atol=1e-6)
    v = cranax.vmap(lambda x: nn.one_hot(x, 3))(jnp.array([[0, 1], [2, 0]]))
    np.testing.assert_array_equal(np.asarray(v), np.eye(3)[[[0, 1], [2, 0]]])
