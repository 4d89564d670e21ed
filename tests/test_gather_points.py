"""Gathers of one element per start (`x[i]`, `take`, `x[i, j]`): the library's point loop, over both halves
of a large batch (split across threads) and a small one, every mode and index dtype, against NumPy."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp


N_LARGE = (1 << 16) + 37  # above the split threshold, odd so the halves differ in length


@pytest.mark.parametrize("n", [11, N_LARGE])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.uint32])
def test_take_clip_and_fill_match_numpy(n, idx_dtype):
    rng = np.random.RandomState(0)
    x = rng.rand(5000).astype(np.float32)
    hi = 6000 if idx_dtype == np.uint32 else 5500
    lo = 0 if idx_dtype == np.uint32 else -5500
    i = rng.randint(lo, hi, n).astype(idx_dtype)
    clip = cranax.jit(lambda x, i: jnp.take(x, i, mode="clip"))(x, i)
    np.testing.assert_array_equal(np.asarray(clip), np.take(x, i.astype(np.int64), mode="clip"))
    fill = cranax.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0))(x, i)
    ii = i.astype(np.int64)
    # JAX's `.at[].get` wraps negative indices once, then fills what is still out of range
    ii = np.where(ii < 0, ii + 5000, ii)
    want = np.where((ii >= 0) & (ii < 5000), x[np.clip(ii, 0, 4999)], np.float32(-1.0))
    np.testing.assert_array_equal(np.asarray(fill), want)


@pytest.mark.parametrize("n", [7, N_LARGE])
def test_two_component_points_match_numpy(n):
    rng = np.random.RandomState(1)
    x = rng.randn(300, 200)
    i = rng.randint(0, 300, n).astype(np.int32)
    j = rng.randint(0, 200, n).astype(np.int32)
    got = cranax.jit(lambda x, i, j: x[i, j])(x.astype(np.float32), i, j)
    np.testing.assert_array_equal(np.asarray(got), x.astype(np.float32)[i, j])
    # out-of-range pairs under "fill": a pair is filled when either component is out of range
    i2 = i.copy(); i2[::5] = 400
    j2 = j.copy(); j2[1::7] = 250
    got = cranax.jit(lambda x, i, j: x.at[i, j].get(mode="fill", fill_value=7.0))(x.astype(np.float32), i2, j2)
    ok = (i2 < 300) & (j2 < 200)
    want = np.where(ok, x.astype(np.float32)[np.minimum(i2, 299), np.minimum(j2, 199)], np.float32(7.0))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_int64_indices_and_int_operand():
    cranax.config.update("jax_enable_x64", True)  # conftest restores it after the test
    rng = np.random.RandomState(2)
    x = rng.randint(-1000, 1000, 4000).astype(np.int64)
    i = rng.randint(0, 4000, N_LARGE).astype(np.int64)
    got = cranax.jit(lambda x, i: x[i])(x, i)
    assert np.asarray(got).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), x[i])


def test_point_gather_under_vmap_and_grad():
    x = np.linspace(-1.0, 1.0, 50).astype(np.float32)
    i = np.array([[0, 49, 3], [10, 10, 2]], np.int32)
    xj = jnp.asarray(x)
    got = cranax.vmap(lambda i: xj[i])(i)
    np.testing.assert_array_equal(np.asarray(got), x[i])
    g = cranax.grad(lambda x: (x[i] ** 2).sum())(x)
    want = np.zeros_like(x)
    np.add.at(want, i.ravel(), 2 * x[i.ravel()])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)


@pytest.mark.parametrize("how", ["add", "max", "min", "mul", "set"])
def test_point_scatter_matches_numpy(how):
    """One update element per start: repeated indices combine in batch order; out-of-range starts are
    dropped (JAX's default for `.at[]` updates)."""
    rng = np.random.RandomState(3)
    x = rng.rand(1000).astype(np.float32) + 0.5
    i = rng.randint(0, 1200, 20000).astype(np.int32)  # duplicates, and ~1/6 out of range
    u = (rng.rand(20000).astype(np.float32) * 0.01 + 0.995) if how == "mul" else rng.rand(20000).astype(np.float32)
    got = np.asarray(cranax.jit(lambda x, i, u: getattr(x.at[i], how)(u))(x, i, u))
    want = x.copy()
    keep = i < 1000
    ufunc = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}.get(how)
    if ufunc is None:
        for k, v in zip(i[keep], u[keep]):  # last write wins, in batch order
            want[k] = v
        np.testing.assert_array_equal(got, want)
    else:
        ufunc.at(want, i[keep], u[keep])
        np.testing.assert_allclose(got, want, rtol=2e-6 if how in ("add", "mul") else 0)


def test_point_scatter_two_components_and_counts():
    rng = np.random.RandomState(4)
    x = np.zeros((40, 30), np.int32)
    i = rng.randint(0, 40, 5000).astype(np.int32)
    j = rng.randint(0, 30, 5000).astype(np.int32)
    got = cranax.jit(lambda x, i, j: x.at[i, j].add(1))(x, i, j)
    want = x.copy()
    np.add.at(want, (i, j), 1)
    np.testing.assert_array_equal(np.asarray(got), want)
    v = rng.rand(N_LARGE).astype(np.float32)
    nz = cranax.jit(lambda v: jnp.nonzero(v > 0.5, size=N_LARGE // 2, fill_value=-1)[0])(v)
    want = np.flatnonzero(v > 0.5)[: N_LARGE // 2]
    want = np.concatenate([want, -np.ones(N_LARGE // 2 - want.size, np.int64)])
    np.testing.assert_array_equal(np.asarray(nz), want)
