"""The example programs, at reduced size: the digits MLP trains (loss falls, accuracy rises), its per-example
gradient norms agree with a loop of grad, its hand-written NumPy baseline agrees with value_and_grad, logistic
regression learns, and Newton's method in lax.while_loop converges to sqrt(2)."""
import importlib.util
import pathlib

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def mlp():
    pytest.importorskip("sklearn")
    m = load("digits_mlp")
    m.use_backend("cranax")
    return m


@pytest.fixture(scope="module")
def digits(mlp):
    return mlp.load_data()


def test_digits_data(digits):
    x_tr, y_tr, x_te, y_te = digits
    assert x_tr.shape == (1437, 64) and x_te.shape == (360, 64)
    assert x_tr.dtype == np.float32 and 0 <= x_tr.min() and x_tr.max() <= 1
    assert set(np.unique(y_te)) == set(range(10))


def test_digits_mlp_short_training(mlp, digits):
    logs = []
    h = mlp.train("cranax", epochs=3, data=digits, log=logs.append)
    assert len(h["loss"]) == 3 and len(logs) == 3
    assert h["loss"][-1] < 0.5 * h["loss"][0]                       # the loss falls
    assert h["final_accuracy"] > 0.90                               # 3 epochs: ~95% on this split
    assert h["compile_s"] > 0 and h["step_s"] > 0
    assert h["steps"] == 3 * (1437 // 128)                          # fixed batches: the last partial one dropped
    assert all(n > 0 for n in h["grad_norm_mean"]) and all(
        mx >= mn for mx, mn in zip(h["grad_norm_max"], h["grad_norm_mean"]))
    assert "test acc" in logs[0] and "per-example |grad|" in logs[0]


def test_digits_mlp_max_steps_cli(mlp, capsys):
    h = mlp.main(["--max-steps", "4", "--epochs", "2"])
    out = capsys.readouterr().out
    assert h["steps"] == 4 and "total compile time" in out and "CpuDevice" in out


def test_per_example_grad_norms_match_a_loop(mlp, digits):
    x_tr, y_tr, _, _ = digits
    params = mlp.init_params(cranax.random.PRNGKey(1), [64, 32, 10])
    x, y1h = x_tr[:5], mlp.one_hot(y_tr[:5])
    norms = np.asarray(mlp.make_per_example_grad_norms()(params, x, y1h))
    loop = []
    for i in range(5):
        g = cranax.grad(mlp.loss)(params, x[i], y1h[i])
        loop.append(np.sqrt(sum(float(jnp.sum(l ** 2)) for l in cranax.tree_util.tree_leaves(g))))
    np.testing.assert_allclose(norms, loop, rtol=1e-4)


def test_numpy_baseline_matches_value_and_grad(mlp, digits):
    x_tr, y_tr, _, _ = digits
    params = mlp.np_init(0, [64, 48, 32, 10])
    x, y1h = x_tr[:32], mlp.one_hot(y_tr[:32])
    v_np, g_np = mlp.np_value_and_grad(params, x, y1h)
    v, g = cranax.value_and_grad(mlp.loss)(params, x, y1h)
    np.testing.assert_allclose(float(v), v_np, rtol=1e-5)
    for a, b in zip(g, g_np):
        for k in ("w", "b"):
            np.testing.assert_allclose(np.asarray(a[k]), b[k], rtol=1e-4, atol=1e-6)


def test_numpy_backend_trains(mlp, digits):
    h = mlp.train("numpy", epochs=2, data=digits, log=lambda *a: None)
    assert h["loss"][-1] < h["loss"][0] and h["compile_s"] is None


def test_logistic_regression():
    pytest.importorskip("sklearn")
    lr = load("logistic_regression")
    h = lr.train("cranax", steps=100, log=lambda *a: None)
    assert h["loss"][-1] < 0.2 < h["loss"][0]
    assert h["test_accuracy"] > 0.93


def test_newton_sqrt2():
    if not hasattr(cranax.lax, "while_loop"):
        pytest.skip("lax.while_loop is not available yet")
    nt = load("newton")
    nt.use_backend("cranax")
    root, n = nt.make_sqrt()(jnp.asarray(2.0, dtype=jnp.float32))
    assert abs(float(root) - np.sqrt(2.0)) < 1e-6
    assert 1 <= int(n) < 10
    res = nt.main(["--a", "2", "9"])
    assert abs(res[9.0][0] - 3.0) < 1e-6
