"""Conv/dot epilogue fusion end to end: a jitted layer whose bias add and activation run in place on the
convolution's (or product's) output blocks (`opt::epilogue`, the CPU backend) gives bitwise the results of
the same programs with the fusion off (``CRANAX_NO_EPILOGUE=1``, in a subprocess, so nothing is shared
with this process's compiled executables), and the values of a NumPy reference. Covered: the bias as
stax writes it (``(1, 1, 1, C)``), the bias reshaped in the jitted function (a view step the pass moves
ahead of the convolution), a dense layer, and the whole training step of ``examples/cnn_digits.py``."""
import os
import subprocess
import sys

import numpy as np

import cranax
import cranax.lax as lax
import cranax.numpy as jnp

DN = ("NHWC", "HWIO", "NHWC")
HERE = os.path.dirname(os.path.abspath(__file__))


def _conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN)


def _programs():
    """name -> (function, arguments): each has at least one convolution or product with an epilogue."""
    r = np.random.default_rng(0)
    f32 = lambda *s: r.standard_normal(s).astype(np.float32)
    x, w, b4 = f32(4, 9, 7, 16), f32(3, 3, 16, 32) * 0.2, f32(1, 1, 1, 32)
    b1 = f32(32)
    xd, wd, bd = f32(24, 40), f32(40, 48), f32(48)
    return {
        "conv_bias4_relu": (lambda x, w, b: jnp.maximum(_conv(x, w) + b, 0.0), (x, w, b4)),
        "conv_reshaped_bias_relu": (lambda x, w, b: cranax.nn.relu(_conv(x, w) + b.reshape(1, 1, 1, -1)), (x, w, b1)),
        "conv_reshaped_bias_tanh": (lambda x, w, b: jnp.tanh(_conv(x, w) + b.reshape((1, 1, 1, 32))), (x, w, b1)),
        "dense_bias_relu": (lambda x, w, b: jnp.maximum(x @ w + b, 0.0), (xd, wd, bd)),
    }


def _cnn_steps(n_steps=3):
    """The cnn_digits training step (value_and_grad of the CNN's loss, then adam) run `n_steps` times on
    fixed random batches: the losses and the final parameters, flattened, and the step's compiled text."""
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import cnn_digits as cd
    cd.use_backend("cranax")
    init_fun, predict = cd.make_model(8)
    _, params = init_fun(cranax.random.PRNGKey(0), (-1, 8, 8, 1))
    opt_init, opt_update, get_params = cd.optimizers.adam(2e-3)

    def loss(p, x, y):
        return -jnp.mean(jnp.sum(predict(p, x) * y, axis=-1))

    def update(i, s, x, y):
        v, g = cranax.value_and_grad(loss)(get_params(s), x, y)
        return opt_update(i, g, s), v

    r = np.random.default_rng(1)
    xs = r.random((n_steps, 16, 8, 8, 1), dtype=np.float32)
    ys = np.eye(10, dtype=np.float32)[r.integers(0, 10, (n_steps, 16))]
    step = cranax.jit(update)
    s = opt_init(params)
    text = step.lower(0, s, xs[0], ys[0]).compile().as_text()
    out = {}
    for i in range(n_steps):
        s, v = step(i, s, xs[i], ys[i])
        out[f"loss{i}"] = np.asarray(v)
    for j, leaf in enumerate(cranax.tree_util.tree_leaves(get_params(s))):
        out[f"param{j}"] = np.asarray(leaf)
    return out, text


def _results():
    """Every program's outputs (arrays by name) and whether its compiled text shows an epilogue."""
    out, fused = {}, {}
    for name, (fn, args) in _programs().items():
        f = cranax.jit(fn)
        out[name] = np.asarray(f(*args))
        fused[name] = "epilogue: step" in f.lower(*args).compile().as_text()
    cnn, text = _cnn_steps()
    out.update({f"cnn_{k}": v for k, v in cnn.items()})
    fused["cnn"] = "epilogue: step" in text
    return out, fused


def _dump(path):
    out, fused = _results()
    np.savez(path, **out, **{f"fused_{k}": np.bool_(v) for k, v in fused.items()})


def _unfused(tmp_path):
    path = tmp_path / "unfused.npz"
    env = dict(os.environ, CRANAX_NO_EPILOGUE="1")
    code = f"import sys; sys.path.insert(0, {HERE!r}); import test_conv_epilogue as t; t._dump({str(path)!r})"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=600)
    return np.load(path)


def test_epilogue_fusion_is_bitwise_the_unfused_plan(tmp_path):
    got, fused = _results()
    assert all(fused.values()), fused  # each program has a fused epilogue here...
    plain = _unfused(tmp_path)
    assert not any(bool(plain[f"fused_{k}"]) for k in fused)  # ...and none with the switch off
    for name, v in got.items():
        p = plain[name]
        assert v.dtype == p.dtype and v.shape == p.shape, name
        assert v.tobytes() == p.tobytes(), f"{name}: max difference {np.max(np.abs(v - p))}"


def test_epilogue_layers_against_numpy():
    """The fused layers against float64 NumPy (the conv by direct sums over the 3×3 window)."""
    def conv_ref(x, w):
        x, w = x.astype(np.float64), w.astype(np.float64)
        n, h, wd, _ = x.shape
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = np.zeros((n, h, wd, w.shape[3]))
        for i in range(3):
            for j in range(3):
                out += xp[:, i:i + h, j:j + wd, :] @ w[i, j]
        return out
    progs = _programs()
    for name, ref in (
        ("conv_bias4_relu", lambda x, w, b: np.maximum(conv_ref(x, w) + b, 0)),
        ("conv_reshaped_bias_relu", lambda x, w, b: np.maximum(conv_ref(x, w) + b, 0)),
        ("conv_reshaped_bias_tanh", lambda x, w, b: np.tanh(conv_ref(x, w) + b)),
        ("dense_bias_relu", lambda x, w, b: np.maximum(x.astype(np.float64) @ w + b, 0)),
    ):
        fn, args = progs[name]
        got = np.asarray(cranax.jit(fn)(*args))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref(*args), rtol=1e-5, atol=1e-5, err_msg=name)
