"""benches/bench_programs.py (issue 23, item 5): every program it times runs once in cranax at tiny sizes
(``--smoke``, a subprocess: the ecosystem programs need ``install_as_jax()``, which must not leak into this
process) and gives the right values: NumPy oracles for the RNN (and its gradients: hand-written backprop), selu, while loops, matmul and the digits MLP
Adam step; values recorded from real JAX 0.10.2 running the same definitions (``/tmp/jaxvenv/bin/python
benches/bench_programs.py --worker jax --smoke``) for the ecosystem programs and the short Adam run."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cranax

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "benches"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
import bench_programs as bp  # noqa: E402  (benches/ is not a package: found through the path set above)

# Real JAX 0.10.2, same definitions, tiny sizes: full outputs where short, else the first values, the sum and
# the sum of magnitudes of the flattened numeric leaves.
RECORDED = {
    "diffrax Tsit5 + PID solve (jit)": ("diffrax", [1.1185781955718994, 1.3651752471923828]),
    "blackjax HMC step (10 leapfrog steps)": ("blackjax", [
        -0.8596596717834473, -1.1105754375457764, -0.9861962795257568, 0.8596596717834473, 1.1105754375457764,
        1.004014253616333, -0.9063372015953064, 1.0, 1.0, 0.0, 1.9144350290298462, -0.8596596717834473,
        -1.1105754375457764, 1.1239027976989746, -0.7702726721763611, -0.9861962795257568, 0.8596596717834473,
        1.1105754375457764, 10.0]),
    "blackjax NUTS step": ("blackjax", [
        1.0784193277359009, -0.8496986031532288, -0.9424880146980286, -1.0784193277359009, 0.8496986031532288,
        1.004014253616333, -0.9063372015953064, 0.0, 1.0, 1.9134517908096313, -0.9482840895652771,
        0.9798337817192078, 1.0519195795059204, 0.9276177883148193, -0.9296584725379944, 0.9482840895652771,
        -0.9798337817192078, -0.8596596717834473, -1.1105754375457764, -1.1239027976989746, 0.7702726721763611,
        -0.9861962795257568, 0.8596596717834473, 1.1105754375457764, 4.0, 15.0, 0.9999156594276428]),
    "optax clip+adamw MLP training, 200 steps in one fori_loop": ("optax", dict(
        n=4132, head=[0.003838661592453718, -0.06961903721094131, 0.06627146154642105, 0.1598394215106964,
                      -0.12643644213676453, 0.11023011058568954], sum=197.68581066633607, abs=446.1156003504501)),
    "equinox MLP filter_jit step": ("equinox", dict(
        n=1377, head=[-0.001345124444924295, -0.16125836968421936, 0.31383875012397766, 0.05636734887957573,
                      0.3495064079761505, 0.17246940732002258], sum=2.3845454998809146, abs=145.83653162054543)),
}
ADAM_LOSS = 1.6437273025512695   # bench_adam_long.run("jax", steps=3): the loss of the 4th step


@pytest.fixture(scope="module")
def smoke():
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(cranax.__file__))))
    env.pop("CRANAX_CPU_BLOCK_MATH", None)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benches", "bench_programs.py"), "--smoke"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _values(smoke, name):
    assert name in smoke, (name, sorted(smoke))
    assert "values" in smoke[name], smoke[name]
    return np.asarray(smoke[name]["values"])


def _flat(tree):
    """Leaves of nested lists / dicts (dict keys sorted, as jax.tree_util flattens them) as one vector."""
    if isinstance(tree, dict):
        return np.concatenate([_flat(tree[k]) for k in sorted(tree)])
    if isinstance(tree, (list, tuple)):
        return np.concatenate([_flat(v) for v in tree])
    return np.asarray(tree, np.float64).ravel()


def test_loops_selu_matmul_match_numpy(smoke):
    z, d = bp.SIZES["tiny"], bp.inputs("tiny")
    h, hs = bp.rnn_np(*d["rnn"])
    np.testing.assert_allclose(_values(smoke, f"scan RNN, {z['rnn_T']} steps, hidden {z['rnn_H']}"),
                               np.concatenate([h, hs.ravel()]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_values(smoke, f"selu, {z['selu_n']:,} f32"), bp.selu_np(d["selu"]),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_values(smoke, "while_loop, f32[4] carry (per iteration)"), bp.while4_np(*d["w4"]),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_values(smoke, f"while_loop, f32[{z['wide']}] carry, tanh + sin (per iteration)"),
                               bp.while_wide_np(*d["wide"]), rtol=1e-5, atol=1e-6)
    for n in z["mm"]:
        a, b = d[f"mm{n}"]
        np.testing.assert_allclose(_values(smoke, f"matmul {n}x{n} @ {n}x{n} f32"), (a @ b).ravel(),
                                   rtol=1e-5, atol=1e-4)


def test_rnn_grads_match_hand_written_backprop(smoke):
    z, d = bp.SIZES["tiny"], bp.inputs("tiny")
    name = f"grad of scan RNN, {z['rnn_grad_T']} steps, hidden {z['rnn_H']}"
    dW, dU = bp.rnn_grad_np(*d["rnn_grad"])
    np.testing.assert_allclose(_values(smoke, name), np.concatenate([dW.ravel(), dU.ravel()]), rtol=1e-5, atol=1e-5)
    # the stacked weights' cotangents are added as zero pads (opt::pad_add: window updates of the carry)
    np.testing.assert_allclose(_values(smoke, name + ", stacked weights W[0..2]"),
                               bp.rnn3_grad_np(*d["rnn3_grad"]).ravel(), rtol=1e-5, atol=1e-5)


def test_digits_adam_step_matches_hand_written_numpy(smoke):
    import digits_mlp
    x_tr, y_tr, _, _ = digits_mlp.load_data()
    p = digits_mlp.np_init(0, [x_tr.shape[1], 16, 10])
    zeros = [{k: np.zeros_like(v) for k, v in layer.items()} for layer in p]
    opt = {"t": 0, "m": zeros, "v": [dict(layer) for layer in zeros]}
    p1, opt1, loss = digits_mlp.np_train_step(p, opt, x_tr[:128], digits_mlp.one_hot(y_tr[:128]), lr=3e-3)
    want = np.concatenate([_flat(p1), _flat(opt1), [loss]])
    np.testing.assert_allclose(_values(smoke, "digits MLP Adam step (64-16-10, batch 128)"), want,
                               rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", list(RECORDED))
def test_ecosystem_programs_match_jax(smoke, name):
    lib, want = RECORDED[name]
    if importlib.util.find_spec(lib) is None:
        pytest.skip(f"{lib} is not installed (pip install --no-deps -r tests/ecosystem/requirements.txt)")
    got = _values(smoke, name)
    if isinstance(want, list):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    else:
        assert got.size == want["n"]
        np.testing.assert_allclose(got[:len(want["head"])], want["head"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose([got.sum(), np.abs(got).sum()], [want["sum"], want["abs"]], rtol=1e-4)


def test_short_adam_run_matches_jax(smoke):
    np.testing.assert_allclose(_values(smoke, "adam"), [ADAM_LOSS], rtol=1e-5)
