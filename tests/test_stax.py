"""``cranax.example_libraries.stax`` and ``optimizers`` (issue 21): a conv net's parameters are JAX's bit for
bit for the same key (SHA-256 prefixes recorded from JAX 0.10.2), its outputs and gradients are JAX's
values, every optimizer and schedule follows JAX's trajectory on a quadratic, and the state packs and
unpacks; JAX's examples/mnist_classifier.py and mnist_vae.py logic trains on synthetic data."""
import hashlib
import pickle

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import random
from cranax.example_libraries import optimizers, stax


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(np.asarray(a)).tobytes()).hexdigest()[:16]


X = np.linspace(-1, 1, 2 * 8 * 8).astype(np.float32).reshape(2, 8, 8, 1)


def _convnet():
    return stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
                       stax.Conv(3, (2, 2), strides=(1, 1)), stax.Tanh, stax.AvgPool((2, 2), (1, 1), "SAME"),
                       stax.BatchNorm(), stax.SumPool((2, 2)), stax.Flatten, stax.Dense(5), stax.Gelu, stax.Dense(3),
                       stax.LogSoftmax)


def test_convnet_matches_jax():
    init, apply = _convnet()
    shape, params = init(random.key(0), (-1, 8, 8, 1))
    assert shape == (-1, 3)
    # jax 0.10.2, same model, jax.random.key(0)
    assert [_digest(l) for l in cranax.tree_util.tree_leaves(params)] == [
        "f5a70334a50287db", "0ad7d4754fbee9b9", "27d898e169c226de", "83fe376cd7e83573", "15ec7bf0b50732b4",
        "8a31a40ecac0ceb4", "2b01b1efcc38b52e", "4454fbecff2533ac", "7c1e0b6fc84df8d1", "7edf02e5fac46595"]
    out = apply(params, X)
    np.testing.assert_allclose(np.asarray(out), [[-1.1313655, -1.2524495, -0.937505],
                                                 [-11.306605, -0.10153637, -2.3378046]], rtol=2e-6)
    g = cranax.grad(lambda p: apply(p, X)[:, 0].sum())(params)
    np.testing.assert_allclose(np.asarray(g[11][0])[:2], [[6.7852788e+00, -6.1302242e+00, -6.5505445e-01],
                                                          [1.2937948e-01, -1.2333093e-01, -6.0485564e-03]],
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np.asarray(g[0][0]).ravel()[:6], [-0.6958325, -0.013969924, -0.040266573,
                                                                 0.21194202, -0.6704649, 0.08260879],
                               rtol=1e-5, atol=2e-6)
    jitted = cranax.jit(apply)(params, X)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(out), rtol=1e-6)


def test_pools_against_numpy():
    x = np.random.RandomState(0).randn(2, 5, 6, 3).astype(np.float32)
    for layer, red in [(stax.MaxPool, np.max), (stax.SumPool, np.sum), (stax.AvgPool, np.mean)]:
        init, apply = layer((2, 3), (1, 3))
        shape, _ = init(None, x.shape)
        got = np.asarray(apply((), x))
        want = np.stack([np.stack([red(x[:, i:i + 2, j:j + 3], axis=(1, 2)) for j in range(0, 4, 3)], 1)
                         for i in range(4)], 1)
        assert shape == (2, 4, 2, 3) == got.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    # AvgPool with SAME padding divides by the covered inputs only
    got = np.asarray(stax.AvgPool((3, 3), (1, 1), "SAME")[1]((), np.ones((1, 4, 4, 1), np.float32)))
    np.testing.assert_allclose(got, np.ones((1, 4, 4, 1)), rtol=1e-6)
    # spec puts the channel first
    xc = np.transpose(x, (0, 3, 1, 2))
    got = np.asarray(stax.MaxPool((2, 3), (1, 3), spec="NCHW")[1]((), xc))
    np.testing.assert_allclose(got, np.transpose(np.asarray(stax.MaxPool((2, 3), (1, 3))[1]((), x)), (0, 3, 1, 2)))


def test_transpose_conv_and_fan_layers_match_jax():
    init2, apply2 = stax.serial(stax.FanOut(2), stax.parallel(
        stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"),
        stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME")), stax.FanInSum, stax.Identity)
    s2, p2 = init2(random.key(0), (2, 8, 8, 1))
    assert tuple(s2) == (2, 16, 16, 2)
    assert [_digest(l) for l in cranax.tree_util.tree_leaves(p2)] == [
        "8353547ead3e3b45", "11d71eff60082ed8", "dd5ad8960d32984f", "8cc713c1cf4914a1"]
    np.testing.assert_allclose(np.asarray(apply2(p2, X))[0, :3, :3, 0],
                               [[-0.18392773, -0.38303208, -0.03601019], [0.52332217, -0.8033889, 0.7259077],
                                [-0.080417156, -0.5915399, -0.07687974]], rtol=1e-5, atol=1e-7)
    init3, apply3 = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInConcat())
    s3, p3 = init3(random.key(0), (4, 2))
    assert s3 == (4, 5)
    np.testing.assert_allclose(np.asarray(apply3(p3, X.reshape(-1, 2)[:4]))[0],
                               [0.09295448660850525, -0.9733550548553467, -0.0896744355559349, -1.0,
                                -0.9842519760131836], rtol=1e-6)
    s4, _ = stax.Conv1DTranspose(2, (3,), padding="VALID")[0](random.key(0), (2, 5, 3))
    assert tuple(s4) == (2, 7, 2)


def test_dropout_and_batchnorm():
    i5, a5 = stax.Dropout(0.7)
    d = np.asarray(a5((), jnp.ones((4, 4)), rng=random.key(1)))
    k = np.float32(1 / 0.7)
    np.testing.assert_array_equal(d, [[k, k, k, k], [0, k, 0, 0], [k, k, k, k], [0, 0, 0, 0]])   # JAX's draw
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        a5((), jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(stax.Dropout(0.5, mode="test")[1]((), jnp.ones(3), rng=random.key(0))),
                                  np.ones(3))
    init, apply = stax.BatchNorm(axis=(0,))
    _, (beta, gamma) = init(random.key(0), (6, 3))
    x = np.random.RandomState(2).randn(6, 3).astype(np.float32)
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(np.asarray(apply((beta + 1, gamma * 2), x)), 2 * want + 1, rtol=1e-5, atol=1e-5)


C = {"a": np.array([1., 2., 3.], np.float32), "b": np.array([[0.5, 4.]], np.float32)}
P0 = {"a": np.array([1., -1., 0.5], np.float32), "b": np.array([[2., -3.]], np.float32)}


def _loss(p):
    return sum(jnp.sum(C[k] * p[k] ** 2 + p[k]) for k in p)


# six steps of each optimizer from P0 on _loss, from jax 0.10.2: (a, b)
TRAJECTORIES = {
    "sgd": (optimizers.sgd(0.1), [-0.10678402334451675, -0.2849920094013214, -0.16393600404262543],
            [[0.5943229794502258, -0.12518399953842163]]),
    "momentum": (optimizers.momentum(0.05, 0.9), [-0.8849118947982788, 0.2817305028438568, -0.6111519932746887],
                 [[-0.25427743792533875, 0.922937273979187]]),
    "nesterov": (optimizers.nesterov(0.05, 0.9), [-0.8823257684707642, 0.04851355031132698, -0.29597949981689453],
                 [[-0.5053701400756836, -0.12729987502098083]]),
    "adagrad": (optimizers.adagrad(0.3), [0.6429571509361267, -0.6521626710891724, 0.1546054482460022],
                [[1.638680100440979, -2.638861656188965]]),
    "rmsprop": (optimizers.rmsprop(0.05), [0.4421570897102356, -0.5023829340934753, 0.01920374110341072],
                [[1.4168524742126465, -2.4178855419158936]]),
    "rmsprop_momentum": (optimizers.rmsprop_momentum(0.02),
                         [0.2431042343378067, -0.29462820291519165, -0.19064059853553772],
                         [[1.2216124534606934, -2.2224926948547363]]),
    "adam": (optimizers.adam(0.1), [0.4076419472694397, -0.4234979748725891, -0.07066557556390762],
             [[1.4030693769454956, -2.403233289718628]]),
    "adamax": (optimizers.adamax(0.1), [0.45186084508895874, -0.5016478300094604, 0.013554222881793976],
               [[1.425635814666748, -2.426795244216919]]),
    "sm3": (optimizers.sm3(0.2), [0.7600550651550293, -0.7639514207839966, 0.264965683221817],
            [[1.7582004070281982, -2.758280038833618]]),
    "adam_exponential_decay": (optimizers.adam(optimizers.exponential_decay(0.1, 3, 0.5)),
                               [0.6386392116546631, -0.6425352692604065, 0.14387544989585876],
                               [[1.6373772621154785, -2.6374244689941406]]),
    "sgd_polynomial_decay": (optimizers.sgd(optimizers.polynomial_decay(0.2, 4, 0.01, 2.0)),
                             [0.060505468398332596, -0.3017221689224243, -0.18669471144676208],
                             [[0.9150473475456238, -0.08272086828947067]]),
    "sgd_piecewise_constant": (optimizers.sgd(optimizers.piecewise_constant([2, 4], [0.2, 0.1, 0.05])),
                               [-0.3133760094642639, -0.25172799825668335, -0.16726399958133698],
                               [[0.18195195496082306, -0.11009600013494492]]),
    "sgd_inverse_time_decay": (optimizers.sgd(optimizers.inverse_time_decay(0.2, 2, 0.5, staircase=True)),
                               [-0.31414398550987244, -0.2523519992828369, -0.16649600863456726],
                               [[0.16812792420387268, -0.12518399953842163]]),
}


@pytest.mark.parametrize("name", sorted(TRAJECTORIES))
def test_optimizer_trajectories_match_jax(name):
    (opt_init, opt_update, get_params), a, b = TRAJECTORIES[name]
    state = opt_init(P0)
    for i in range(6):
        state = opt_update(i, cranax.grad(_loss)(get_params(state)), state)
    p = get_params(state)
    np.testing.assert_allclose(np.asarray(p["a"]), a, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(p["b"]), b, rtol=2e-6, atol=1e-7)


def test_adam_against_numpy_formula_and_under_jit():
    opt_init, opt_update, get_params = optimizers.adam(0.01)
    step = cranax.jit(lambda i, s: opt_update(i, cranax.grad(_loss)(get_params(s)), s))
    state = opt_init(P0)
    x, m, v = P0["a"].astype(np.float64), 0., 0.
    for i in range(5):
        state = step(i, state)
        g = 2 * C["a"] * x + 1
        m = 0.1 * g + 0.9 * m
        v = 0.001 * g * g + 0.999 * v
        x = x - 0.01 * (m / (1 - 0.9 ** (i + 1))) / (np.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-8)
    np.testing.assert_allclose(np.asarray(get_params(state)["a"]), x, rtol=1e-5)


def test_state_pack_unpack_and_errors():
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    state = opt_init(P0)
    state = opt_update(0, cranax.grad(_loss)(P0), state)
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["a"], optimizers.JoinPoint)
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(unpacked)))
    for k in P0:
        np.testing.assert_array_equal(np.asarray(get_params(restored)[k]), np.asarray(get_params(state)[k]))
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        opt_update(1, {"a": P0["a"]}, state)
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0])
    with pytest.raises(TypeError):
        optimizers.make_schedule(np.ones(3))
    # JAX's values
    assert float(optimizers.l2_norm(P0)) == pytest.approx(3.9051249027252197, rel=1e-7)
    clipped = optimizers.clip_grads(P0, 1.0)
    np.testing.assert_allclose(np.asarray(clipped["b"]), [[0.5121474862098694, -0.7682212591171265]], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(optimizers.clip_grads(P0, 10.0)["a"]), P0["a"])


def test_mnist_classifier_logic_trains():
    # JAX's examples/mnist_classifier.py: Dense-Relu-Dense-Relu-Dense-LogSoftmax, momentum, jit'd update;
    # synthetic data: 4 Gaussian blobs in 20 dimensions.
    rs = np.random.RandomState(0)
    centers = rs.randn(4, 20).astype(np.float32) * 2
    labels = rs.randint(0, 4, 256)
    images = centers[labels] + rs.randn(256, 20).astype(np.float32)
    targets = np.eye(4, dtype=np.float32)[labels]
    init_random_params, predict = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(32), stax.Relu, stax.Dense(4),
                                              stax.LogSoftmax)

    def loss(params, batch):
        inputs, t = batch
        return -jnp.mean(jnp.sum(predict(params, inputs) * t, axis=1))

    def accuracy(params, batch):
        inputs, t = batch
        return jnp.mean(jnp.argmax(predict(params, inputs), axis=1) == jnp.argmax(t, axis=1))

    opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)

    @cranax.jit
    def update(i, opt_state, batch):
        return opt_update(i, cranax.grad(loss)(get_params(opt_state), batch), opt_state)

    _, init_params = init_random_params(random.key(0), (-1, 20))
    opt_state = opt_init(init_params)
    first = float(loss(init_params, (images, targets)))
    for i in range(60):
        sl = slice((i % 8) * 32, (i % 8) * 32 + 32)
        opt_state = update(i, opt_state, (images[sl], targets[sl]))
    params = get_params(opt_state)
    assert float(loss(params, (images, targets))) < 0.2 * first
    assert float(accuracy(params, (images, targets))) > 0.95


def test_mnist_vae_logic_trains():
    # JAX's examples/mnist_vae.py: encoder to (mean, log-variance) via FanOut/parallel, reparameterized
    # sample, decoder with Sigmoid-free logits, adam; the ELBO must improve on synthetic binary images.
    rs = np.random.RandomState(1)
    protos = (rs.rand(3, 16) > 0.5).astype(np.float32)
    images = protos[rs.randint(0, 3, 96)]
    encoder_init, encode = stax.serial(stax.Dense(32), stax.Relu,
                                       stax.FanOut(2),
                                       stax.parallel(stax.Dense(2), stax.serial(stax.Dense(2), stax.Softplus)))
    decoder_init, decode = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(16))

    def gaussian_kl(mu, sigmasq):
        return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu ** 2. - sigmasq)

    def bernoulli_logpdf(logits, x):
        return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))

    def elbo(rng, params, x):
        enc_params, dec_params = params
        mu, sigmasq = encode(enc_params, x)
        z = mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)
        return bernoulli_logpdf(decode(dec_params, z), x) - gaussian_kl(mu, sigmasq)

    def objective(params, rng):
        return -elbo(rng, params, images) / images.shape[0]

    _, enc_params = encoder_init(random.key(2), (-1, 16))
    _, dec_params = decoder_init(random.key(3), (-1, 2))
    opt_init, opt_update, get_params = optimizers.adam(0.01)
    opt_state = opt_init((enc_params, dec_params))

    @cranax.jit
    def run_epoch(i, opt_state, rng):
        return opt_update(i, cranax.grad(objective)(get_params(opt_state), rng), opt_state)

    before = float(objective(get_params(opt_state), random.key(9)))
    for i in range(80):
        opt_state = run_epoch(i, opt_state, random.fold_in(random.key(4), i))
    after = float(objective(get_params(opt_state), random.key(9)))
    assert after < 0.6 * before, (before, after)
