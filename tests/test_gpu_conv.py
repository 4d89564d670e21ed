"""conv_general_dilated on the GPU backend: the implicit-GEMM WGSL shader (`rust/backend/gpu/conv.rs`) against
the CPU backend and a float64 direct-loop NumPy convolution, over test_conv.py's table of dimension numbers,
strides, paddings, dilations and group counts (1-D, 2-D, 3-D) plus shapes reaching each of the product
shaders (thin, 16×16 tiled, 128×128 register-blocked); float64 where the adapter has 64-bit shaders;
jit(grad) of a small CNN loss on the GPU against the CPU.

Runs on any wgpu adapter, including Mesa's lavapipe; skipped, with the reason, only where no adapter exists
(or cranax was built without the ``gpu`` feature).
"""
import numpy as np
import pytest

import cranax as jax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax import _core

from test_conv import CASES, CASE_IDS, _explicit, ref_conv
# the adapter query and the module fixture that gives lavapipe's memory back are test_gpu.py's
from test_gpu import _gpu_state, _release_gpu_memory  # noqa: F401  (an autouse fixture, used by import)

GPUS, REASON = _gpu_state()
pytestmark = pytest.mark.skipif(not GPUS, reason=f"no GPU adapter: {REASON}")
GPU = GPUS[0] if GPUS else None
CPU = jax.devices("cpu")[0]


def _shaders(f, *args):
    """The WGSL the GPU backend compiles for jit(f) on `args`' avals."""
    import cranax.interpreters.lowering as lowering
    closed = jax.make_jaxpr(f)(*args)
    return _core.gpu_shaders(_core.compile(lowering.lower_jaxpr(closed, "conv")), GPU)


def _conv_fn(case):
    _, _, st, pad, ld, rd, dn, G, B = case
    return lambda x, w: lax.conv_general_dilated(x, w, st, pad, ld, rd, dn, G, B)


def _on(dev, *xs):
    return [jax.device_put(x, dev) for x in xs]


# Shapes for each product shader the convolution runs through (M = batch × output positions,
# N = out-features per group, K = kernel positions × in-features per group):
EXTRA = [
    # register-blocked (M, N >= 64): NHWC, K = 27 not a multiple of 16, partial 128-blocks
    ((2, 12, 11, 3), (3, 3, 3, 72), (1, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    # register-blocked with feature groups, NCHW (K over kernel positions fastest), strided
    ((2, 8, 17, 15), (130, 4, 2, 3), (2, 1), ((1, 0), (2, 1)), (1, 1), (1, 2), None, 2, 1),
    # tiled (N between 8 and 64), long K with input dilation (a transposed convolution)
    ((3, 9, 9, 20), (3, 3, 20, 24), (1, 1), ((2, 2), (2, 2)), (2, 2), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    # thin (N < 8): one out-feature, long K
    ((2, 16, 10, 10), (1, 16, 5, 5), (1, 1), "VALID", (1, 1), (1, 1), None, 1, 1),
    # batch groups with many out-features per group (the kernel-gradient shape of a grouped convolution)
    ((8, 7, 6), (3, 6, 20), (1,), "SAME", (1,), (1,), ("NWC", "WIO", "NWC"), 1, 2),
    # 3-D, channels last, stride and dilation together
    ((2, 6, 7, 5, 4), (2, 3, 2, 4, 9), (2, 1, 1), "SAME", (1, 1, 1), (2, 1, 2), ("NDHWC", "DHWIO", "NDHWC"), 1, 1),
]
EXTRA_IDS = ["blocked-nhwc", "blocked-grouped-nchw", "tiled-lhs-dilated", "thin-one-feature", "batch-groups-wide",
             "3d-ndhwc"]


def _check(case, dtype, rtol, atol):
    ls, rs, st, pad, ld, rd, dn, G, B = case
    rng = np.random.default_rng(len(ls) * 100 + ls[0])
    x = rng.standard_normal(ls).astype(dtype)
    w = rng.standard_normal(rs).astype(dtype)
    f = jax.jit(_conv_fn(case))
    g = f(*_on(GPU, x, w))
    assert g.devices() == {GPU}
    c = np.asarray(f(*_on(CPU, x, w)))
    g = np.asarray(g)
    d, pads = _explicit(ls, rs, dn, st, pad, rd)
    want = ref_conv(x, w, st, pads, ld, rd, d, G, B)
    assert g.dtype == dtype and g.shape == want.shape == c.shape
    k = np.prod(rs) / max(1, rs[d.rhs_spec[0]])   # the reduction length (kernel positions × in-features)
    tol = atol * np.sqrt(max(k, 1.0))
    np.testing.assert_allclose(g, want, rtol=rtol, atol=tol)
    np.testing.assert_allclose(g, c, rtol=rtol, atol=tol)
    shaders = _shaders(_conv_fn(case), x, w)
    if g.size:
        # run as the shader, not on the host
        assert any("conv_general_dilated" in s for s in shaders), shaders
    return shaders


# test_conv's cases with kernels over 100,000 entries exist for the CPU's split reduction (its parts must
# chain exactly); the shader's one f32 sum over ~18,000 terms drifts by about k·eps of the partial sums, more
# than the sqrt(k) tolerance below allows, so they are not run on the shader.
_GPU_CASES = [(c, i) for c, i in zip(CASES, CASE_IDS) if np.prod(c[1]) <= 100_000]


@pytest.mark.parametrize("case", [c for c, _ in _GPU_CASES] + EXTRA, ids=[i for _, i in _GPU_CASES] + EXTRA_IDS)
def test_conv_shader_against_cpu_and_direct_loops(case):
    _check(case, np.float32, 2e-5, 2e-6)


def test_each_product_shader_is_used():
    blocked = _check(EXTRA[0], np.float32, 2e-5, 2e-6)
    assert any("c77" in s for s in blocked)               # the 8x8 register block
    thin = _check(EXTRA[3], np.float32, 2e-5, 2e-6)
    assert any("var<workgroup> part" in s for s in thin)  # K split over rows of a workgroup
    tiled = _check(EXTRA[2], np.float32, 2e-5, 2e-6)
    assert any("var<workgroup> ta" in s and "c77" not in s for s in tiled)


def test_conv_float64_where_the_adapter_has_64_bit_shaders(x64):
    cases = [CASES[6], CASES[13], EXTRA[1]]
    if not _core.gpu_info(GPU).get("shader_f64"):
        # float64 runs on the host on this adapter (the arrays cannot live on it): same values as the CPU
        pytest.skip(f"{GPU} has no 64-bit shaders")
    for case in cases:
        _check(case, np.float64, 1e-12, 1e-13)


def test_cnn_loss_gradient_on_the_gpu_matches_the_cpu():
    """jit(grad) of a two-layer CNN (NHWC conv, strided conv, dense head, softmax cross-entropy): the input
    and kernel gradients are convolutions too (input dilation, batch groups), all run as shaders."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 10, 10, 2)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 4)]
    params = [
        (rng.standard_normal((3, 3, 2, 8)) * 0.3).astype(np.float32),
        (rng.standard_normal((3, 3, 8, 6)) * 0.2).astype(np.float32),
        (rng.standard_normal((5 * 5 * 6, 3)) * 0.1).astype(np.float32),
    ]
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(params, x, y):
        w1, w2, wd = params
        h = jnp.tanh(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn))
        h = jnp.tanh(lax.conv_general_dilated(h, w2, (2, 2), "SAME", dimension_numbers=dn))
        logits = h.reshape(h.shape[0], -1) @ wd
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))

    step = jax.jit(jax.value_and_grad(loss))
    lg, gg = step(*_on(GPU, params, x, y))
    lc, gc = step(*_on(CPU, params, x, y))
    for a in gg:
        assert a.devices() == {GPU}
    np.testing.assert_allclose(float(lg), float(lc), rtol=1e-5)
    for a, b in zip(gg, gc):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    # every convolution of the gradient program (forward, input and kernel gradients) is a shader
    n_conv = str(jax.make_jaxpr(jax.grad(loss))(params, x, y)).count("conv_general_dilated")
    shaders = _shaders(jax.grad(loss), params, x, y)
    assert sum("conv_general_dilated" in s for s in shaders) == n_conv >= 5, (n_conv, len(shaders))
