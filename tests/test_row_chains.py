"""Row chains (rust/backend/cpu/row_chain.rs): a run of kernels starting with a reduction over the last axis
of a large array (softmax, log-softmax, a normalization, attention's softmax between its two products)
runs a block of rows at a time, its intermediates in per-thread scratch.

Each program below must give byte-identical results with chains on and off (`CRANAX_NO_ROW_CHAINS=1`), on
one thread and on two; values are checked against NumPy float64 within float32 tolerances.
"""
import os
import subprocess
import sys

import numpy as np

import cranax
import cranax.numpy as jnp

CHILD = r'''
import sys
import numpy as np
import cranax
import cranax.numpy as jnp

rng = np.random.default_rng(11)
out = {}
# 4.4 MB: above the chain threshold; 1000 rows is not a multiple of the block.
x = (rng.standard_normal((1000, 1100)) * 3).astype(np.float32)
out["softmax"] = np.asarray(cranax.jit(lambda a: cranax.nn.softmax(a, axis=-1))(x))
out["log_softmax"] = np.asarray(cranax.jit(lambda a: cranax.nn.log_softmax(a, axis=-1))(x))
# Rows over several leading axes, a row holding -inf, and the unnormalized exp kept as a second output.
y = (rng.standard_normal((4, 5, 50, 1030)) * 2).astype(np.float32)
y[1, 2, 3, :] = -np.inf
y[2, 0, 7, 5] = np.inf
out["softmax4d"] = np.asarray(cranax.jit(lambda a: cranax.nn.softmax(a, axis=-1))(y))
def two(a):
    e = jnp.exp(a - jnp.max(a, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True), e
s, e = cranax.jit(two)(x)
out["two_softmax"], out["two_exp"] = np.asarray(s), np.asarray(e)
# A layer norm: mean, variance, normalize.
def norm(a):
    m = jnp.mean(a, axis=-1, keepdims=True)
    v = jnp.mean((a - m) ** 2, axis=-1, keepdims=True)
    return (a - m) / jnp.sqrt(v + 1e-5)
out["norm"] = np.asarray(cranax.jit(norm)(x))
# Attention (the bench's layout, smaller): the softmax sits between the two products.
q, k, v = ((rng.standard_normal((2, 256, 4, 32)) * 1.5).astype(np.float32) for _ in range(3))
k2 = (rng.standard_normal((2, 600, 4, 32))).astype(np.float32)
v2 = (rng.standard_normal((2, 600, 4, 32))).astype(np.float32)
q2 = (rng.standard_normal((2, 700, 4, 32))).astype(np.float32)
out["attention"] = np.asarray(cranax.jit(cranax.nn.dot_product_attention)(q2, k2, v2))
# Its gradients: softmax's backward is a chain too.
loss = lambda a, b, c: jnp.sum(cranax.nn.dot_product_attention(a, b, c) ** 2)
for name, g in zip("qkv", cranax.jit(cranax.grad(loss, (0, 1, 2)))(q2, k2, v2)):
    out["attention_grad_" + name] = np.asarray(g)
# Smaller than the threshold: no chain, same values either way.
out["small"] = np.asarray(cranax.jit(lambda a: cranax.nn.softmax(a, axis=-1))(x[:30]))
np.savez(sys.argv[1], **out)
'''


def _run(tmp_path, name, **env_extra):
    env = dict(os.environ)
    env.pop("CRANAX_NO_ROW_CHAINS", None)
    env.update(env_extra)
    path = tmp_path / f"{name}.npz"
    r = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _softmax64(a):
    a = a.astype(np.float64)
    m = np.max(a, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(a - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def _inputs():
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((1000, 1100)) * 3).astype(np.float32)
    y = (rng.standard_normal((4, 5, 50, 1030)) * 2).astype(np.float32)
    y[1, 2, 3, :] = -np.inf
    y[2, 0, 7, 5] = np.inf
    for _ in range(3):
        rng.standard_normal((2, 256, 4, 32))
    k2 = rng.standard_normal((2, 600, 4, 32)).astype(np.float32)
    v2 = rng.standard_normal((2, 600, 4, 32)).astype(np.float32)
    q2 = rng.standard_normal((2, 700, 4, 32)).astype(np.float32)
    return x, y, (q2, k2, v2)


def test_row_chains_bit_identical_on_off_and_across_threads(tmp_path):
    base = _run(tmp_path, "off_1", CRANAX_NO_ROW_CHAINS="1", CRANAX_NUM_THREADS="1")
    for name, env in {
        "on_1": dict(CRANAX_NUM_THREADS="1"),
        "on_2": dict(CRANAX_NUM_THREADS="2"),
        "off_2": dict(CRANAX_NO_ROW_CHAINS="1", CRANAX_NUM_THREADS="2"),
    }.items():
        got = _run(tmp_path, name, **env)
        assert sorted(got) == sorted(base)
        for k in base:
            assert base[k].dtype == got[k].dtype and base[k].shape == got[k].shape, (name, k)
            assert base[k].tobytes() == got[k].tobytes(), f"{name}: {k} differs from the steps run one by one"

    x, y, (q, k, v) = _inputs()
    tol = dict(rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(base["softmax"], _softmax64(x), **tol)
    x64 = x.astype(np.float64)
    want_ls = x64 - x64.max(-1, keepdims=True) - np.log(np.exp(x64 - x64.max(-1, keepdims=True)).sum(-1, keepdims=True))
    np.testing.assert_allclose(base["log_softmax"], want_ls, rtol=2e-5, atol=2e-5)
    want4 = _softmax64(y)
    # The row of -inf is NaN (0/0) in JAX too; the row holding +inf is NaN except... also NaN (inf - inf).
    np.testing.assert_allclose(base["softmax4d"], want4, **tol)
    assert np.isnan(base["softmax4d"][1, 2, 3]).all() and np.isnan(base["softmax4d"][2, 0, 7]).all()
    np.testing.assert_allclose(base["two_softmax"], _softmax64(x), **tol)
    np.testing.assert_allclose(base["two_exp"], np.exp(x64 - x64.max(-1, keepdims=True)), rtol=2e-6, atol=1e-30)
    m = x64.mean(-1, keepdims=True)
    want_norm = (x64 - m) / np.sqrt(((x64 - m) ** 2).mean(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(base["norm"], want_norm, rtol=1e-4, atol=2e-5)
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    logits = np.einsum("bqhd,bkhd->bhqk", q64, k64) / np.sqrt(q.shape[-1])
    want_att = np.einsum("bhqk,bkhd->bqhd", _softmax64(logits), v64)
    np.testing.assert_allclose(base["attention"], want_att, rtol=1e-4, atol=2e-5)
    # d/dv sum(out ** 2) = probabilitiesᵀ · 2 out.
    want_dv = np.einsum("bhqk,bqhd->bkhd", _softmax64(logits), 2 * want_att)
    np.testing.assert_allclose(base["attention_grad_v"], want_dv, rtol=1e-4, atol=1e-4)
    assert all(np.isfinite(base["attention_grad_" + n]).all() for n in "qk")
    np.testing.assert_allclose(base["small"], _softmax64(x[:30]), **tol)


def test_softmax_and_attention_run_as_row_chains():
    # The chain is announced in the compiled text (unless turned off in this process's environment).
    x, _, (q, k, v) = _inputs()
    text = cranax.jit(lambda a: cranax.nn.softmax(a, axis=-1)).lower(x).compile().as_text()
    att = cranax.jit(cranax.nn.dot_product_attention).lower(q, k, v).compile().as_text()
    small = cranax.jit(lambda a: cranax.nn.softmax(a, axis=-1)).lower(x[:30]).compile().as_text()
    if os.environ.get("CRANAX_NO_ROW_CHAINS") == "1":
        assert "row chain" not in text
        return
    assert "row chain: steps" in text and "1000 rows" in text
    assert "row chain: steps" in att and f"{2 * 4 * 700} rows" in att
    assert "row chain" not in small
    loss = lambda a, b, c: jnp.sum(cranax.nn.dot_product_attention(a, b, c) ** 2)
    grad_text = cranax.jit(cranax.grad(loss, (0, 1, 2))).lower(q, k, v).compile().as_text()
    assert grad_text.count("row chain: steps") == 2  # the forward softmax and its backward
    np.testing.assert_allclose(np.asarray(cranax.jit(lambda a: cranax.nn.softmax(a, axis=-1))(x)), _softmax64(x),
                               rtol=2e-5, atol=1e-7)
