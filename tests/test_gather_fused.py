"""One-element gathers fused into the kernel that computes their index (`KOp::Gather`): `take`, `x[i]`,
`x[:, i]`, `take_along_axis` and searchsorted's probes, over every mode, index dtype, negative and
out-of-range indices, empty arrays, operand dtypes, vmap, small loops compiled whole (the stack-slot path) and
both vector and scalar kernels, against NumPy. The compiled text shows the gather inside the kernel."""
import os

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64]


def np_take_fill(x, i, fill):
    """JAX's `take` under mode="fill" (its default): negatives wrap once, what stays out of range is `fill`."""
    n = x.shape[0]
    i = i.astype(np.int64)
    j = np.where(i < 0, i + n, i)
    ok = (j >= 0) & (j < n)
    return np.where(ok, x[np.clip(j, 0, n - 1)], fill).astype(x.dtype)


def compiled_text(f, *args):
    """The compiled plan's listing (after the optimized program's text)."""
    text = cranax.jit(f).lower(*args).compile().as_text()
    return text[text.index("\nplan "):]


@pytest.mark.parametrize("idt", INT_DTYPES)
@pytest.mark.parametrize("mode", ["clip", "fill", None, "wrap"])
@pytest.mark.parametrize("n_idx", [1, 7, 1029])
def test_take_modes_and_index_dtypes_match_numpy(idt, mode, n_idx):
    rng = np.random.RandomState(n_idx)
    n = 100 if np.iinfo(idt).max < 1000 else 1000
    x = rng.rand(n).astype(np.float32)
    lo = max(-n - 30 if np.issubdtype(idt, np.signedinteger) else 0, np.iinfo(idt).min)
    i = rng.randint(lo, min(n + 30, np.iinfo(idt).max), n_idx).astype(idt)
    got = np.asarray(cranax.jit(lambda x, i: jnp.take(x, i, mode=mode) * 2.0)(x, i))
    if mode in ("clip", "wrap"):
        want = np.take(x, i.astype(np.int64), mode=mode)
    else:
        want = np_take_fill(x, i, np.nan)
    np.testing.assert_array_equal(got, want * np.float32(2.0))


def test_take_is_one_kernel_with_the_gather_inside():
    x = np.arange(10, dtype=np.float32)
    i = np.array([-1, 3, 12], np.int32)
    text = compiled_text(lambda x, i: jnp.take(x, i) + 1.0, x, i)
    assert "gather in" in text and "= gather[" not in text, text
    got = cranax.jit(lambda x, i: jnp.take(x, i) + 1.0)(x, i)
    np.testing.assert_array_equal(np.asarray(got), [10.0, 4.0, np.nan])


def test_rows_of_a_matrix_stay_the_library_step():
    # x[i] of rows copies whole rows: the library's row copies are faster than a load per element
    x = np.arange(24, dtype=np.float32).reshape(6, 4)
    i = np.array([5, 0, 2], np.int32)
    text = compiled_text(lambda x, i: x[i], x, i)
    assert "= gather[" in text, text
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda x, i: x[i])(x, i)), x[i])


@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_columns_and_take_along_axis_match_numpy(mode):
    rng = np.random.RandomState(3)
    x = rng.randn(33, 57).astype(np.float32)
    i = rng.randint(-70, 70, 19).astype(np.int32)
    got = np.asarray(cranax.jit(lambda x, i: jnp.take(x, i, axis=1, mode=mode))(x, i))
    if mode == "clip":
        want = np.take(x, i, axis=1, mode="clip")
    else:
        want = np.stack([np_take_fill(row, i, np.nan) for row in x])
    np.testing.assert_array_equal(got, want)
    assert "gather in" in compiled_text(lambda x, i: jnp.take(x, i, axis=1, mode=mode), x, i)
    # take_along_axis: 1-D, and along the last axis of a matrix
    v = rng.randn(40).astype(np.float32)
    j = rng.randint(0, 40, 40).astype(np.int32)
    got = cranax.jit(lambda v, j: jnp.take_along_axis(v, j, axis=0))(v, j)
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(v, j, axis=0))
    k = rng.randint(0, 57, (33, 5)).astype(np.int32)
    got = cranax.jit(lambda x, k: jnp.take_along_axis(x, k, axis=1))(x, k)
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(x, k, axis=1))


def test_promise_in_bounds_and_custom_fill_values():
    rng = np.random.RandomState(4)
    x = rng.rand(300).astype(np.float32)
    i = rng.randint(0, 300, 500).astype(np.int32)
    got = cranax.jit(lambda x, i: x.at[i].get(mode="promise_in_bounds"))(x, i)
    np.testing.assert_array_equal(np.asarray(got), x[i])
    j = rng.randint(-400, 400, 500).astype(np.int32)
    got = cranax.jit(lambda x, j: x.at[j].get(mode="fill", fill_value=-7.5))(x, j)
    np.testing.assert_array_equal(np.asarray(got), np_take_fill(x, j, np.float32(-7.5)))


@pytest.mark.parametrize("dt, fill", [(np.int32, np.iinfo(np.int32).min), (np.uint8, 255), (np.int16, np.iinfo(np.int16).min),
                                      (np.uint16, 65535), (np.float16, np.nan), (np.bool_, True), (np.uint32, 2**32 - 1)])
def test_operand_dtypes_and_their_default_fill(dt, fill):
    rng = np.random.RandomState(5)
    x = (rng.rand(64) * 100).astype(dt) if dt != np.bool_ else rng.rand(64) > 0.5
    i = rng.randint(-90, 90, 301).astype(np.int32)
    got = np.asarray(cranax.jit(lambda x, i: jnp.take(x, i))(x, i))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, np_take_fill(x, i, fill))
    got = np.asarray(cranax.jit(lambda x, i: jnp.take(x, i, mode="clip"))(x, i))
    np.testing.assert_array_equal(got, np.take(x, i, mode="clip"))


def test_empty_operands_and_indices():
    x = np.arange(5, dtype=np.float32)
    e = np.zeros(0, np.int32)
    assert np.asarray(cranax.jit(lambda x, i: jnp.take(x, i))(x, e)).shape == (0,)
    assert np.asarray(cranax.jit(lambda x, i: jnp.take(x, i, mode="clip"))(np.zeros(0, np.float32), e)).shape == (0,)
    # columns of a matrix with no rows: an empty result of the right shape
    got = cranax.jit(lambda x, i: jnp.take(x, i, axis=1))(np.zeros((0, 4), np.float32), np.array([0, -1, 9], np.int32))
    assert np.asarray(got).shape == (0, 3)


def test_vmap_of_take_matches_numpy():
    rng = np.random.RandomState(6)
    x = rng.randn(8, 50).astype(np.float32)
    i = rng.randint(-60, 60, (8, 13)).astype(np.int32)
    got = cranax.jit(cranax.vmap(lambda x, i: jnp.take(x, i, mode="clip")))(x, i)
    np.testing.assert_array_equal(np.asarray(got), np.stack([np.take(a, b, mode="clip") for a, b in zip(x, i)]))
    got = cranax.vmap(lambda x, i: jnp.take(x, i), in_axes=(None, 0))(x[0], i)
    np.testing.assert_array_equal(np.asarray(got), np.stack([np_take_fill(x[0], b, np.nan) for b in i]))


def test_gather_inside_small_loops_compiled_whole():
    # a fori_loop over small values becomes one function: the fused gather reads a stack copy of `x`
    x = np.array([0.5, -1.0, 2.0, 3.5, -4.0, 7.0, 1.25], np.float32)

    def f(x):
        def body(k, acc):
            i = jnp.stack([k % 7, (3 * k) % 11 - 2])
            return acc + jnp.take(x, i, mode="fill", fill_value=100.0) * (k + 1)
        return lax.fori_loop(0, 20, body, jnp.zeros(2, jnp.float32))

    want = np.zeros(2, np.float32)
    for k in range(20):
        i = np.array([k % 7, (3 * k) % 11 - 2])
        want = want + np_take_fill(x, i, np.float32(100.0)) * np.float32(k + 1)
    np.testing.assert_allclose(np.asarray(cranax.jit(f)(x)), want, rtol=1e-6)


def test_while_loop_binary_search_per_element():
    # searchsorted's halving as a user would write it: the probe is gathered inside the loop kernel
    rng = np.random.RandomState(7)
    a = np.sort(rng.rand(1000).astype(np.float32))
    v = rng.rand(333).astype(np.float32)

    def search(a, v):
        def body(c):
            lo, hi = c
            mid = (lo + hi) // 2
            go = a[mid] < v
            return jnp.where(go, mid + 1, lo), jnp.where(go, hi, mid)
        lo = jnp.zeros(v.shape, jnp.int32)
        hi = jnp.full(v.shape, a.shape[0], jnp.int32)
        return lax.while_loop(lambda c: jnp.any(c[0] < c[1]), body, (lo, hi))[0]

    np.testing.assert_array_equal(np.asarray(cranax.jit(search)(a, v)), np.searchsorted(a, v))


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n", [1, 1000, 70001])
def test_searchsorted_matches_numpy(side, n):
    rng = np.random.RandomState(n)
    a = np.sort(np.round(rng.rand(n) * 50).astype(np.float32))  # duplicates
    v = np.concatenate([np.round(rng.rand(4000) * 52 - 1).astype(np.float32), [np.nan, -np.inf, np.inf, -0.0]])
    a_nan = np.concatenate([a, [np.nan]]).astype(np.float32)
    for arr in (a, a_nan):
        got = cranax.jit(lambda a, v: jnp.searchsorted(a, v, side=side))(arr, v)
        np.testing.assert_array_equal(np.asarray(got), np.searchsorted(arr, v, side=side))


def test_searchsorted_scan_body_is_one_kernel():
    # the halving's two carries (lo, hi) share their operands: one kernel computes both (sibling outputs)
    a = np.sort(np.random.RandomState(8).rand(100).astype(np.float32))
    text = compiled_text(jnp.searchsorted, a, a)
    body = text.split("plan scan_body:")[1].split("outputs:")[0]
    assert body.count("kernel ") == 1 and "gather in" in body, body


def test_scalar_and_vector_kernels_agree():
    rng = np.random.RandomState(9)
    x = rng.randn(1000).astype(np.float32)
    i = rng.randint(-1100, 1100, 4099).astype(np.int32)
    f = lambda x, i: jnp.sin(jnp.take(x, i, mode="fill", fill_value=0.25)) + jnp.take(x, i // 2, mode="clip")
    want = np.sin(np_take_fill(x, i, np.float32(0.25))) + np.take(x, i // 2, mode="clip")
    np.testing.assert_allclose(np.asarray(cranax.jit(f)(x, i)), want, rtol=2e-6, atol=1e-6)
    # the same kernels compiled scalar-only (`CRANAX_CPU_NO_SIMD`, read per compile) give the same bits
    outs = []
    for off in (False, True):
        cranax.clear_caches()
        if off:
            os.environ["CRANAX_CPU_NO_SIMD"] = "1"
        try:
            outs.append(np.asarray(cranax.jit(f)(x, i)))
            outs.append(np.asarray(cranax.jit(lambda x, i: jnp.take(x.astype(jnp.float16), i))(x, i)))
        finally:
            os.environ.pop("CRANAX_CPU_NO_SIMD", None)
    cranax.clear_caches()
    for a, b in zip(outs[:2], outs[2:]):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))
    np.testing.assert_array_equal(outs[1], np_take_fill(x.astype(np.float16), i, np.nan))


def test_gpu_shader_gather_matches_the_cpu():
    # the WGSL kernel reads the array at the clamped index (the device tests run on lavapipe in CI)
    from cranax import _core
    gpus = _core.gpu_devices() if getattr(_core, "HAS_GPU_BACKEND", False) else []
    if not gpus:
        pytest.skip("no GPU adapter")
    g = cranax.device_put
    rng = np.random.RandomState(10)
    x = rng.rand(1000).astype(np.float32)
    i = rng.randint(-1100, 1100, 5000).astype(np.int32)
    for mode in ["clip", "fill", None]:
        f = cranax.jit(lambda x, i: jnp.take(x, i, mode=mode) * 2.0)
        got = f(g(x, gpus[0]), g(i, gpus[0]))
        assert got.devices() == {gpus[0]}
        want = np.take(x, i, mode="clip") if mode == "clip" else np_take_fill(x, i, np.nan)
        np.testing.assert_array_equal(np.asarray(got), want * np.float32(2.0))
    xb = x > 0.5
    got = cranax.jit(lambda x, i: jnp.take(x, i, mode="fill"))(g(xb, gpus[0]), g(i.astype(np.uint32), gpus[0]))
    np.testing.assert_array_equal(np.asarray(got), np_take_fill(xb, i.astype(np.uint32), True))
    a = np.sort(rng.rand(3000).astype(np.float32))
    got = cranax.jit(jnp.searchsorted)(g(a, gpus[0]), g(x, gpus[0]))
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, x))


# Several start components (`x[i, j]`, `x[tuple_of_index_arrays]`, `take_along_axis` on N-d arrays): one
# `KOp::Gather` at the row-major offset of the clamped components, the start vectors' concatenate read
# component by component in the same kernel.

def np_point_gather(x, comps, mode, fill=np.nan):
    """x[comps] with JAX's rules: negatives wrap once (the jnp front end), then clip or fill."""
    comps = [np.asarray(c).astype(np.int64) for c in comps]
    comps = [np.where(c < 0, c + n, c) for c, n in zip(comps, x.shape)]
    ok = np.ones(np.broadcast(*comps).shape, bool)
    clipped = []
    for c, n in zip(comps, x.shape):
        ok &= (c >= 0) & (c < n)
        clipped.append(np.clip(c, 0, n - 1))
    got = x[tuple(clipped)]
    if mode == "clip":
        return got
    return np.where(ok, got, np.asarray(fill, x.dtype)).astype(x.dtype)


@pytest.mark.parametrize("idt", INT_DTYPES)
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_two_index_arrays_match_numpy_and_fuse(idt, mode):
    rng = np.random.RandomState(11)
    x = rng.randn(30, 41).astype(np.float32)
    lo = -45 if np.issubdtype(idt, np.signedinteger) else 0
    i = rng.randint(max(lo, np.iinfo(idt).min), 45, 1037).astype(idt)
    j = rng.randint(max(lo, np.iinfo(idt).min), 50, 1037).astype(idt)
    f = lambda x, i, j: x.at[i, j].get(mode=mode, fill_value=-3.5 if mode == "fill" else None) * 2.0
    got = np.asarray(cranax.jit(f)(x, i, j))
    np.testing.assert_array_equal(got, np_point_gather(x, (i, j), mode, -3.5) * np.float32(2.0))
    text = compiled_text(f, x, i, j)
    assert "gather in" in text and "= gather[" not in text and "concatenate" not in text, text


def test_index_arithmetic_and_the_gather_are_one_kernel():
    rng = np.random.RandomState(12)
    x = rng.randn(30, 40).astype(np.float32)
    i = rng.randint(-5000, 5000, 1000).astype(np.int32)
    f = lambda x, i: x[i % 30, (i * 7) % 40] + 1.0
    np.testing.assert_array_equal(np.asarray(cranax.jit(f)(x, i)), x[i % 30, (i * 7) % 40] + np.float32(1.0))
    plan = compiled_text(f, x, i).split("\n;")[0]
    assert plan.count("kernel ") == 1 and "gather in" in plan, plan


def test_three_index_arrays_windows_and_broadcast_indices():
    rng = np.random.RandomState(13)
    x = rng.randn(5, 6, 7).astype(np.float32)
    i, j, k = rng.randint(-5, 5, (2, 9)), rng.randint(-6, 6, (2, 9)), rng.randint(-7, 7, (2, 9))
    i, j, k = (a.astype(np.int32) for a in (i, j, k))
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda x, i, j, k: x[i, j, k])(x, i, j, k)),
                                  np_point_gather(x, (i, j, k), "clip"))
    assert "= gather[" not in compiled_text(lambda x, i, j, k: x[i, j, k], x, i, j, k)
    # a window between the indexed axes (x[i, :, k]): the middle axis follows the output
    got = cranax.jit(lambda x, i, k: x[i, :, k])(x, i[0], k[0])
    np.testing.assert_array_equal(np.asarray(got), x[np.where(i[0] < 0, i[0] + 5, i[0]), :, np.where(k[0] < 0, k[0] + 7, k[0])])
    # a contiguous window on the last axis (x[i, j] of rows) stays the library step, same values
    got = cranax.jit(lambda x, i, j: x[i, j])(x, i[0], j[0])
    np.testing.assert_array_equal(np.asarray(got), x[i[0], j[0]])
    # broadcast index arrays and a scalar index
    got = cranax.jit(lambda x, i, k: x[i[:, None], 2, k[None, :]])(x, i[0], k[0])
    np.testing.assert_array_equal(np.asarray(got), x[i[0][:, None], 2, k[0][None, :]])


def test_take_along_axis_nd_and_int64_indices():
    rng = np.random.RandomState(14)
    x = rng.randn(6, 7, 8).astype(np.float32)
    for axis in (0, 1, 2):
        shape = list(x.shape)
        shape[axis] = 5
        idx = rng.randint(0, x.shape[axis], shape).astype(np.int32)
        f = lambda x, idx: jnp.take_along_axis(x, idx, axis=axis)
        np.testing.assert_array_equal(np.asarray(cranax.jit(f)(x, idx)), np.take_along_axis(x, idx, axis=axis))
    cranax.config.update("jax_enable_x64", True)
    try:
        i = rng.randint(-6, 6, 300).astype(np.int64)
        j = rng.randint(-8, 8, 300).astype(np.int64)
        got = cranax.jit(lambda x, i, j: x[i, 3, j])(x, i, j)
        np.testing.assert_array_equal(np.asarray(got), np_point_gather(x[:, 3, :], (i, j), "clip"))
    finally:
        cranax.config.update("jax_enable_x64", False)


def test_multi_index_gather_under_vmap_grad_and_loops():
    rng = np.random.RandomState(15)
    x = rng.randn(8, 9).astype(np.float32)
    i = rng.randint(-8, 8, (4, 11)).astype(np.int32)
    j = rng.randint(-9, 9, (4, 11)).astype(np.int32)
    xa = jnp.asarray(x)
    got = cranax.jit(cranax.vmap(lambda i, j: xa[i, j]))(i, j)
    np.testing.assert_array_equal(np.asarray(got), np_point_gather(x, (i, j), "clip"))
    # grad: a scatter-add of ones at the (wrapped) points, duplicates accumulating
    g = cranax.jit(cranax.grad(lambda x: jnp.sum(x[i, j] ** 2)))(x)
    want = np.zeros_like(x)
    np.add.at(want, (np.where(i < 0, i + 8, i), np.where(j < 0, j + 9, j)), 2 * np_point_gather(x, (i, j), "clip"))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)

    def f(x):
        def body(k, acc):
            return acc + xa[(k * 3) % 8, (k * 5) % 9 - 4] * k
        return lax.fori_loop(0, 50, body, jnp.float32(0))
    want = np.float32(0)
    for k in range(50):
        want = want + x[(k * 3) % 8, (k * 5) % 9 - 4] * np.float32(k)
    np.testing.assert_allclose(float(cranax.jit(f)(x)), want, rtol=1e-5)


def test_multi_index_scalar_and_vector_kernels_agree():
    rng = np.random.RandomState(16)
    x = rng.randn(40, 50).astype(np.float32)
    i = rng.randint(-60, 60, 4099).astype(np.int32)
    f = lambda x, i: jnp.cos(x.at[i, i // 2].get(mode="fill", fill_value=0.5)) + x[i // 3, i]
    outs = []
    for off in (False, True):
        cranax.clear_caches()
        if off:
            os.environ["CRANAX_CPU_NO_SIMD"] = "1"
        try:
            outs.append(np.asarray(cranax.jit(f)(x, i)))
        finally:
            os.environ.pop("CRANAX_CPU_NO_SIMD", None)
    cranax.clear_caches()
    np.testing.assert_array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32))
    want = np.cos(np_point_gather(x, (i, i // 2), "fill", 0.5)) + np_point_gather(x, (i // 3, i), "clip")
    np.testing.assert_allclose(outs[0], want, rtol=2e-6, atol=1e-6)


def test_gpu_shader_multi_index_gather_matches_numpy():
    # the WGSL kernel computes the clamped row-major offset in int32 and reads the array there
    from cranax import _core
    gpus = _core.gpu_devices() if getattr(_core, "HAS_GPU_BACKEND", False) else []
    if not gpus:
        pytest.skip("no GPU adapter")
    put = lambda a: cranax.device_put(a, gpus[0])
    rng = np.random.RandomState(17)
    x = rng.randn(30, 41).astype(np.float32)
    i = rng.randint(-45, 45, 1037).astype(np.int32)
    j = rng.randint(-45, 50, 1037).astype(np.int32)
    for mode in ["clip", "fill"]:
        f = cranax.jit(lambda x, i, j: x.at[i, j].get(mode=mode, fill_value=-3.5 if mode == "fill" else None) * 2.0)
        got = f(put(x), put(i), put(j))
        assert got.devices() == {gpus[0]}
        np.testing.assert_array_equal(np.asarray(got), np_point_gather(x, (i, j), mode, -3.5) * np.float32(2.0))


def test_start_vectors_shared_by_two_gathers():
    # one concatenate (after CSE) feeding two gathers is stored whole and stays the library step; the values
    # match NumPy either way (a case `jnp.pad`'s reflect/symmetric modes build)
    rng = np.random.RandomState(18)
    x, y = rng.randn(6, 7).astype(np.float32), rng.randn(6, 7).astype(np.float32)
    i, j = rng.randint(-6, 6, 50).astype(np.int32), rng.randint(-7, 7, 50).astype(np.int32)
    got = cranax.jit(lambda x, y, i, j: x[i, j] + y[i, j] * 2.0)(x, y, i, j)
    np.testing.assert_array_equal(np.asarray(got), x[i, j] + y[i, j] * np.float32(2.0))
    x2 = np.arange(12, dtype=np.float32).reshape(3, 4)
    for mode in ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum", "mean", "minimum"]:
        got = cranax.jit(lambda a: jnp.pad(a, ((1, 0), (2, 1)), mode=mode))(x2)
        np.testing.assert_allclose(np.asarray(got), np.pad(x2, ((1, 0), (2, 1)), mode=mode), rtol=1e-6)
