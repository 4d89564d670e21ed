"""lax.conv_general_dilated and its wrappers against a direct-loop float64 NumPy convolution over a table of
dimension numbers, strides, paddings, dilations and group counts (1-D, 2-D, 3-D; float dtypes); gradients
against finite differences (float64) and against values recorded from JAX 0.10.2; vmap against a loop; the
errors JAX raises; the calls of JAX's "Generalized convolutions" guide."""
import itertools

import numpy as np
import pytest

import cranax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax.primitives import convolution as _conv


def ref_conv(lhs, rhs, strides, padding, lhs_dil, rhs_dil, dn, G=1, B=1):
    """XLA's ConvGeneralDilated by direct loops over output and kernel positions, in float64."""
    ls, rs, os_ = dn
    x = np.transpose(np.asarray(lhs, np.float64), ls)
    w = np.transpose(np.asarray(rhs, np.float64), rs)
    N, C = x.shape[:2]
    O = w.shape[0]
    sp, ksp = x.shape[2:], w.shape[2:]
    dil = tuple(0 if n == 0 else (n - 1) * d + 1 for n, d in zip(sp, lhs_dil))
    xd = np.zeros((N, C) + dil)
    xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dil)] = x
    for i, (lo, hi) in enumerate(padding):
        ax = 2 + i
        if lo < 0:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
            lo = 0
        if hi < 0:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
            hi = 0
        pw = [(0, 0)] * xd.ndim
        pw[ax] = (lo, hi)
        xd = np.pad(xd, pw)
    eff = [(k - 1) * d + 1 for k, d in zip(ksp, rhs_dil)]
    out_sp = tuple(max(0, (n - e) // s + 1) for n, e, s in zip(xd.shape[2:], eff, strides))
    groups = G * B
    Nb, Oq, Cg = N // B, O // groups, C // G
    out = np.zeros((Nb, O) + out_sp)
    for g in range(groups):
        bg, fg = (g, 0) if B > 1 else (0, g)
        xs = xd[bg * Nb:(bg + 1) * Nb, fg * Cg:(fg + 1) * Cg]
        ws = w[g * Oq:(g + 1) * Oq]
        for o in itertools.product(*(range(n) for n in out_sp)):
            acc = np.zeros((Nb, Oq))
            for k in itertools.product(*(range(n) for n in ksp)):
                pos = tuple(oi * s + ki * d for oi, s, ki, d in zip(o, strides, k, rhs_dil))
                acc += xs[(slice(None), slice(None)) + pos] @ ws[(slice(None), slice(None)) + k].T
            out[(slice(None), slice(g * Oq, (g + 1) * Oq)) + o] = acc
    return np.transpose(out, np.argsort(os_))


def _explicit(x_shape, w_shape, dn, strides, padding, rhs_dil):
    d = lax.conv_dimension_numbers(x_shape, w_shape, dn)
    if isinstance(padding, str):
        ksp = [(w_shape[i] - 1) * r + 1 for i, r in zip(d.rhs_spec[2:], rhs_dil)]
        padding = lax.padtype_to_pads([x_shape[i] for i in d.lhs_spec[2:]], ksp, strides, padding)
    return d, padding


# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, feature groups,
#  batch groups)
CASES = [
    ((2, 3, 7), (4, 3, 3), (1,), "VALID", (1,), (1,), None, 1, 1),
    ((2, 7, 3), (3, 3, 4), (2,), "SAME", (1,), (1,), ("NWC", "WIO", "NWC"), 1, 1),
    ((3, 8, 2), (3, 2, 4), (3,), "SAME_LOWER", (1,), (2,), ("NWC", "WIO", "NCW"), 1, 1),
    ((4, 3, 5), (6, 3, 2), (2,), ((2, 1),), (2,), (2,), None, 1, 2),
    ((2, 3, 6, 5), (4, 3, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), None, 1, 1),
    ((2, 6, 5, 3), (3, 3, 3, 4), (2, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 4, 5, 6), (6, 2, 3, 2), (1, 2), ((1, 0), (2, -1)), (2, 1), (1, 2), None, 2, 1),
    ((2, 4, 5, 6), (3, 2, 4, 2), (1, 1), "SAME_LOWER", (1, 1), (1, 1), ("NCHW", "HWOI", "NHCW"), 2, 1),
    ((4, 5, 5, 3), (2, 3, 3, 4), (1, 1), "VALID", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 2),
    ((2, 5, 6, 4), (3, 3, 1, 4), (1, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 4, 1),  # depthwise
    ((2, 5, 6, 4), (3, 3, 1, 8), (2, 2), ((1, 1), (0, 2)), (1, 1), (2, 1), ("NHWC", "HWIO", "NHWC"), 4, 1),
    ((1, 3, 4, 4), (5, 3, 1, 1), (1, 1), "VALID", (1, 1), (1, 1), None, 1, 1),                      # 1x1
    ((2, 3, 4, 4), (2, 3, 2, 2), (3, 3), ((-1, 0), (0, -1)), (1, 1), (1, 1), None, 1, 1),
    ((1, 2, 3, 4, 5), (2, 2, 2, 2, 2), (1, 2, 1), "SAME", (1, 1, 1), (1, 1, 2), None, 1, 1),
    ((2, 4, 3, 5, 4), (3, 2, 2, 4, 3), (1, 1, 2), "VALID", (1, 1, 1), (1, 1, 1), ("NDHWC", "DHWIO", "NDHWC"), 1, 1),
    ((1, 2, 3, 3, 2), (4, 2, 2, 2, 2), (2, 1, 1), ((0, 1), (1, 1), (1, 0)), (1, 2, 1), (1, 1, 1), None, 1, 1),
    ((1, 2, 2), (3, 2, 3), (1,), "VALID", (1,), (1,), None, 1, 1),                                 # empty output
    # few output positions, long reduction (the core's reduction-blocked kernel, as kernel gradients)
    ((2, 3, 12, 12), (4, 3, 10, 10), (1, 1), "VALID", (1, 1), (1, 1), None, 1, 1),
    ((4, 3, 9), (6, 3, 8), (1,), "VALID", (1,), (1,), ("NCW", "OIW", "NWC"), 1, 2),
    ((2, 4, 10), (4, 2, 9), (1,), ((1, 0),), (1,), (1,), None, 2, 1),
    # one image and one out-feature per batch group (a depthwise kernel gradient: the core's group loops)
    ((3, 2, 6), (3, 2, 3), (1,), ((1, 1),), (1,), (2,), None, 1, 3),
    ((2, 5, 5, 4), (3, 3, 2, 4), (1, 1), "SAME", (1, 1), (1, 1), ("CHWN", "HWIO", "NHWC"), 1, 4),
    # channels-last with >= 8 in-features and out-features in whole vectors (the core's implicit-GEMM tiles
    # on AVX-512/AVX2 hosts): partial tiles, 64/32/16-wide feature panels, strides, padding, both dilations,
    # feature and batch groups, 1-D and 3-D
    ((2, 7, 6, 16), (3, 3, 16, 32), (1, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 9, 8, 8), (3, 3, 8, 80), (2, 1), ((2, 1), (0, 2)), (1, 1), (2, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 6, 5, 32), (3, 3, 16, 32), (1, 1), ((1, 2), (0, 0)), (2, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 2, 1),
    ((4, 5, 5, 8), (3, 3, 8, 32), (1, 2), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 2),
    ((1, 4, 5, 6, 8), (2, 3, 2, 8, 16), (1, 1, 1), "SAME", (1, 1, 1), (1, 1, 1), ("NDHWC", "DHWIO", "NDHWC"), 1, 1),
    ((3, 20, 12), (5, 12, 48), (1,), "SAME", (1,), (3,), ("NWC", "WIO", "NWC"), 1, 1),
    ((2, 6, 6, 64), (64, 64, 3, 3), (1, 1), "SAME", (1, 1), (1, 1), ("NHWC", "OIHW", "NHWC"), 1, 1),
    # a reduction of at most 32 elements (a first layer over 1 or 3 channels) takes the tiles too
    ((3, 8, 8, 1), (3, 3, 1, 32), (1, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 6, 5, 3), (3, 3, 3, 16), (2, 1), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
] + (KERNEL_GRAD_CASES := [
    # kernel gradients of channels-last convolutions, as reverse mode writes them (the forward channels are
    # the batch, the forward images the features): the core's tiles along the reduction over a padded copy
    # of the input; strides, negative padding, a dilated first kernel dimension, one channel
    (xs, ws, st, pad, (1, 1), rd, ("CHWN", "IHWO", "HWNC"), 1, 1) for xs, ws, st, pad, rd in (
        ((32, 6, 6, 16), (32, 6, 6, 32), (1, 1), ((1, 1), (1, 1)), (1, 1)),
        ((16, 5, 5, 1), (16, 5, 5, 16), (1, 1), ((1, 1), (1, 1)), (1, 1)),
        ((64, 7, 7, 8), (64, 3, 4, 16), (1, 1), ((0, 1), (1, 0)), (2, 1)),
        ((32, 7, 6, 8), (32, 3, 4, 16), (2, 1), ((1, 1), (0, 0)), (1, 1)),
        ((32, 6, 6, 8), (32, 4, 4, 16), (1, 1), ((-1, 1), (1, -1)), (1, 1)),
        # a kernel too long for one part of the reduction (its rows take over 1 MiB): two parts, the
        # second accumulating onto the first's partial sums
        ((32, 26, 26, 8), (32, 24, 24, 16), (1, 1), ((1, 0), (0, 1)), (1, 1)),
    )
])
CASE_IDS = [f"{len(c[0]) - 2}d-{i}" for i, c in enumerate(CASES)]


def _rand(shape, dtype, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _run(case, dtype, seed=0):
    ls, rs, st, pad, ld, rd, dn, G, B = case
    x, w = _rand(ls, dtype, seed), _rand(rs, dtype, seed + 1)
    got = lax.conv_general_dilated(x, w, st, pad, ld, rd, dn, G, B)
    d, pads = _explicit(ls, rs, dn, st, pad, rd)
    want = ref_conv(x, w, st, pads, ld, rd, d, G, B)
    return np.asarray(got), want


def _atol32(case, want):
    """float32 tolerance: 2e-5, relative to the largest value for the kernel gradients (sums of hundreds
    of products in one float32 chain, whose rounding grows with the sum's magnitude, not the element's)."""
    return 2e-5 * (max(1.0, float(np.abs(want).max())) if case in KERNEL_GRAD_CASES else 1.0)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_conv_against_direct_loops_float32(case):
    got, want = _run(case, np.float32)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=_atol32(case, want))


TILE_CASES = [c for c in CASES if c[6] is not None and c[6][2][-1] == "C"]   # out-features contiguous


def test_conv_tiles_on_avx2_lanes(tmp_path):
    """The channels-last cases again in a process whose CPU kernels use 256-bit lanes
    (``CRANAX_CPU_BLOCK_MATH=avx2``: the core's AVX2 tiles on an AVX-512 host, as on an AVX2-only one)."""
    import os
    import subprocess
    import sys
    assert len(TILE_CASES) >= 6
    code = (
        "import sys, numpy as np, cranax.lax as lax\n"
        "cases = eval(sys.argv[1])\n"
        "out = {}\n"
        "for i, (ls, rs, st, pad, ld, rd, dn, G, B) in enumerate(cases):\n"
        "    r = lambda s, k: np.random.default_rng(k).standard_normal(s).astype(np.float32)\n"
        "    out[f'c{i}'] = np.asarray(lax.conv_general_dilated(r(ls, 0), r(rs, 1), st, pad, ld, rd, dn, G, B))\n"
        "np.savez(sys.argv[2], **out)\n")
    path = tmp_path / "avx2.npz"
    env = dict(os.environ, CRANAX_CPU_BLOCK_MATH="avx2")
    subprocess.run([sys.executable, "-c", code, repr(TILE_CASES), str(path)], env=env, check=True, timeout=300)
    got = np.load(path)
    for i, case in enumerate(TILE_CASES):
        g, want = got[f"c{i}"], _run(case, np.float32)[1]
        assert g.dtype == np.float32 and g.shape == want.shape
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=_atol32(case, want))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_conv_against_direct_loops_float64(case, x64):
    got, want = _run(case, np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", [CASES[i] for i in (1, 6, 9, 13)], ids=[CASE_IDS[i] for i in (1, 6, 9, 13)])
def test_conv_float16_and_bfloat16_free_paths(case):
    """float16 runs the im2col composition (the core's op takes float32/float64)."""
    got, want = _run(case, np.float16)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-2, atol=3e-2)


def test_conv_preferred_element_type_and_integers(x64):
    x = np.arange(2 * 3 * 5, dtype=np.int32).reshape(1, 6, 5) % 7
    w = (np.arange(4 * 6 * 2, dtype=np.int32).reshape(4, 6, 2) % 5) - 2
    got = lax.conv_general_dilated(x, w, (1,), "VALID")
    assert got.dtype == np.int32
    want = ref_conv(x, w, (1,), [(0, 0)], (1,), (1,), ((0, 1, 2),) * 3)
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.int32))
    xf, wf = x.astype(np.float32), w.astype(np.float32)
    got = lax.conv_general_dilated(xf, wf, (1,), "VALID", preferred_element_type=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), want)


# ----------------------------------------------------------------------------------------------- wrappers

def test_conv_and_conv_with_general_padding():
    x, w = _rand((2, 3, 6, 5), np.float32, 3), _rand((4, 3, 3, 2), np.float32, 4)
    iota = ((0, 1, 2, 3),) * 3
    np.testing.assert_allclose(np.asarray(lax.conv(x, w, (2, 1), "SAME")),
                               ref_conv(x, w, (2, 1), [(0, 1), (0, 1)], (1, 1), (1, 1), iota), rtol=1e-5, atol=1e-5)
    got = lax.conv_with_general_padding(x, w, (1, 2), ((1, 2), (0, 1)), (2, 1), (1, 2))
    np.testing.assert_allclose(np.asarray(got), ref_conv(x, w, (1, 2), ((1, 2), (0, 1)), (2, 1), (1, 2), iota),
                               rtol=1e-5, atol=1e-5)


# JAX 0.10.2: lax.conv_transpose(x, w, strides, padding, dimension_numbers=('NHWC', 'HWIO', 'NHWC'),
# transpose_kernel=tk) with x = sin(arange(18)).reshape(1, 3, 3, 2) and w = cos(arange(24)) reshaped to
# (2, 2, 2, 3) ((2, 2, 3, 2) when tk), float32: the output shape and sum(out * arange(out.size)) / out.size.
CONV_TRANSPOSE_JAX = [
    ((2, 2), "SAME", False, (1, 6, 6, 3), 2.2985706910473738),
    ((2, 2), "VALID", False, (1, 6, 6, 3), 2.2985706910473738),
    ((2, 1), "SAME", True, (1, 6, 3, 3), -0.5852929455814537),
    ((1, 1), ((1, 2), (0, 1)), True, (1, 5, 3, 3), 0.15034892360369412),
]


def _inp(shape, f):
    return f(np.arange(int(np.prod(shape)), dtype=np.float32)).reshape(shape).astype(np.float32)


@pytest.mark.parametrize("strides,padding,tk,shape,checksum", CONV_TRANSPOSE_JAX)
def test_conv_transpose_matches_jax(strides, padding, tk, shape, checksum):
    x = _inp((1, 3, 3, 2), np.sin)
    w = _inp((2, 2, 3, 2) if tk else (2, 2, 2, 3), np.cos)
    out = np.asarray(lax.conv_transpose(x, w, strides, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        transpose_kernel=tk))
    assert out.shape == shape
    got = float(np.sum(out.astype(np.float64) * np.arange(out.size).reshape(out.shape)) / out.size)
    assert abs(got - checksum) < 1e-5 * max(1.0, abs(checksum))


# ----------------------------------------------------------------------------------------------- gradients

GRAD_CASES = [((1, 2, 4, 4), (3, 2, 2, 2), (2, 1), ((1, 0), (0, 1)), (1, 1), (1, 2), None, 1, 1),
              ((2, 4, 3, 3), (4, 1, 2, 2), (1, 1), "SAME", (1, 1), (1, 1), None, 4, 1),
              ((4, 2, 3), (4, 2, 2), (1,), "VALID", (1,), (1,), ("NCW", "OIW", "NWC"), 1, 2),
              ((1, 2, 3), (2, 2, 2), (1,), ((1, 1),), (2,), (1,), None, 1, 1)]
# JAX 0.10.2: jax.grad(f, (0, 1)) of f(x, w) = sum(conv(x, w) * cos(0.7 * arange(out.size)).reshape(out.shape))
# with x = sin(arange), w = cos(arange) (float32), for each GRAD_CASES entry: (d x, d w), flattened.
GRADS_JAX = [
    ([-0.347678, -1.10058, -2.84145, -1.69338, -0.194923, -1.24632, -2.76448, -1.25185, -0.942868, -0.106428, 0.81412, 1.13684, 0.0, 0.0, 0.0, 0.0, 1.4124, 1.70757, 2.60268, 0.939902, 0.979666, 1.3349, 2.08689, 0.305662, 0.127498, -1.0046, -2.55103, -1.39124, 0.0, 0.0, 0.0, 0.0],
     [1.54725, -0.477966, 0.419815, 2.23409, -1.24092, 0.801796, -1.28308, -1.92245, -1.52249, 0.215928, 2.07864, -1.71731, 1.54222, -0.646818, -1.50888, 1.8796, -0.0544188, 0.266244, -2.45797, -0.550231, -0.271252, -0.167578, 2.76257, 0.0794612]),
    ([1.0, 1.30514, 0.583213, -0.920993, -2.52327, -2.27346, -0.280171, 0.81352, 2.19884, -0.653551, -0.209161, 0.113602, 1.29946, 1.94984, 1.05497, -0.187774, -1.56905, -2.06408, -0.145418, -1.01869, -0.696636, -0.760961, 0.00602305, 0.89128, 0.514744, 1.18504, 0.455388, 0.842781, 1.52348, 0.765009, -0.32564, -1.96409, -2.18277, -0.450992, 0.0796722, 1.49673, 0.997739, 1.2589, 0.492271, -0.976925, -2.55341, -2.18649, -0.196818, 0.976161, 2.28444, -0.651335, -0.180147, 0.144229, 1.33298, 1.89991, 0.933346, -0.281142, -1.65564, -2.06042, -0.14476, -1.00778, -0.644373, -0.749074, 0.0985101, 0.959755, 0.552593, 1.13532, 0.367065, 0.838015, 1.47828, 0.665385, -0.372818, -2.03065, -2.1471, -0.406892, 0.229281, 1.60446],
     [1.02788, 2.35296, 0.775787, -1.67467, 1.09593, -1.02789, -2.39933, 0.140692, -3.02557, -0.51766, 3.56849, 1.42472, 4.39696, 2.00008, -4.06747, -2.7373]),
    ([0.500066, 0.427146, -0.774722, 0.318232, -0.920431, 0.226796, 0.122015, 0.802846, -0.549405, 0.637285, -0.707882, -0.200398, -0.450747, -0.384261, 0.615942, -0.211646, 0.821145, -0.143861, 0.0197325, -0.813631, 0.416215, -0.611606, 0.602491, 0.357142],
     [-1.35072, -0.0195151, 1.45632, 0.244076, -1.69002, -0.488667, 1.74429, 0.722925, -1.00281, -1.15068, 0.890667, 1.20307, 0.162799, -0.438511, -0.249462, 0.367086]),
    ([1.04416, -0.846565, -1.33194, -1.4988, 1.58656, 2.03813],
     [-1.27633, -0.713738, 1.38799, 0.916008, 0.980815, 1.33814, -0.877449, -1.37907]),
]


def _weighted_sum(case):
    ls, rs, st, pad, ld, rd, dn, G, B = case

    def f(x, w):
        o = lax.conv_general_dilated(x, w, st, pad, ld, rd, dn, G, B)
        n = int(np.prod(o.shape))
        return jnp.sum(o * jnp.cos(jnp.arange(n, dtype=o.dtype).reshape(o.shape) * 0.7))
    return f


@pytest.mark.parametrize("i", range(len(GRAD_CASES)))
def test_conv_gradients_match_jax(i):
    case = GRAD_CASES[i]
    x, w = _inp(case[0], np.sin), _inp(case[1], np.cos)
    gx, gw = cranax.grad(_weighted_sum(case), (0, 1))(x, w)
    want_x, want_w = GRADS_JAX[i]
    np.testing.assert_allclose(np.asarray(gx).ravel(), want_x, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(gw).ravel(), want_w, rtol=2e-5, atol=2e-5)


def _fd(f, args, i, eps=1e-6):
    a = [np.array(v, np.float64) for v in args]
    g = np.zeros_like(a[i])
    for idx in np.ndindex(a[i].shape):
        p = [v.copy() for v in a]
        m = [v.copy() for v in a]
        p[i][idx] += eps
        m[i][idx] -= eps
        g[idx] = (float(f(*p)) - float(f(*m))) / (2 * eps)
    return g


@pytest.mark.parametrize("case", [CASES[i] for i in (2, 3, 6, 8, 10, 12, 15)],
                         ids=[CASE_IDS[i] for i in (2, 3, 6, 8, 10, 12, 15)])
def test_conv_gradients_against_finite_differences(case, x64):
    x, w = _rand(case[0], np.float64, 5), _rand(case[1], np.float64, 6)
    f = _weighted_sum(case)
    gx, gw = cranax.grad(f, (0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), _fd(f, (x, w), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(gw), _fd(f, (x, w), 1), rtol=1e-6, atol=1e-7)


def test_conv_jvp_is_bilinear(x64):
    case = CASES[6]
    ls, rs, st, pad, ld, rd, dn, G, B = case
    x, w = _rand(ls, np.float64, 1), _rand(rs, np.float64, 2)
    tx, tw = _rand(ls, np.float64, 3), _rand(rs, np.float64, 4)
    f = lambda a, b: lax.conv_general_dilated(a, b, st, pad, ld, rd, dn, G, B)  # noqa: E731
    y, t = cranax.jvp(f, (x, w), (tx, tw))
    np.testing.assert_allclose(np.asarray(t), np.asarray(f(tx, w)) + np.asarray(f(x, tw)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(y), np.asarray(f(x, w)))


# ----------------------------------------------------------------------------------------------- vmap

@pytest.mark.parametrize("case", [CASES[i] for i in (1, 3, 7, 9)], ids=[CASE_IDS[i] for i in (1, 3, 7, 9)])
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (1, 2)])
def test_conv_vmap_against_a_loop(case, axes):
    ls, rs, st, pad, ld, rd, dn, G, B = case
    V = 3
    xs = _rand(ls, np.float32, 7)
    ws = _rand(rs, np.float32, 8)
    ax, aw = axes
    if ax is not None:
        xs = np.stack([xs * (k + 1) for k in range(V)], ax)
    if aw is not None:
        ws = np.stack([ws - k for k in range(V)], aw)
    f = lambda a, b: lax.conv_general_dilated(a, b, st, pad, ld, rd, dn, G, B)  # noqa: E731
    got = np.asarray(cranax.vmap(f, in_axes=axes)(xs, ws))
    want = np.stack([np.asarray(f(np.take(xs, k, ax) if ax is not None else xs,
                                  np.take(ws, k, aw) if aw is not None else ws)) for k in range(V)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------------- API

def test_conv_dimension_numbers():
    dn = lax.conv_dimension_numbers((2, 3, 5, 5), (4, 3, 3, 3), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    assert isinstance(dn, lax.ConvDimensionNumbers)
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3
    # spatial dimensions ordered as the kernel names them (JAX's rule)
    assert lax.conv_dimension_numbers((1,) * 4, (1,) * 4, ("NCHW", "OIWH", "NWHC")) == \
        ((0, 1, 3, 2), (0, 1, 2, 3), (0, 3, 1, 2))
    assert lax.padtype_to_pads((5,), (3,), (2,), "SAME") == [(1, 1)]
    assert lax.padtype_to_pads((6, 4), (3, 2), (2, 1), "SAME_LOWER") == [(1, 0), (1, 0)]


def test_conv_jaxpr_prints_as_jax():
    x, w = np.ones((2, 5, 5, 3), np.float32), np.ones((3, 3, 3, 4), np.float32)
    text = str(cranax.make_jaxpr(lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))(x, w))
    # JAX 0.10.2's text for the same call
    want = """{ lambda ; a:f32[2,5,5,3] b:f32[3,3,3,4]. let
    c:f32[2,5,5,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""
    assert text == want


# (call, exception type, JAX 0.10.2's message)
ERRORS = [
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5)), np.ones((1, 1, 3)), (1,), "FOO"), RuntimeError,
     "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got FOO."),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5)), np.ones((1, 1, 3)), (1,), ((1, 1), (1, 1))), TypeError,
     "Wrong number of explicit pads for convolution: expected 1, got 2."),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5)), np.ones((1, 1, 3)), (1,), "VALID",
                                      feature_group_count=2), ValueError,
     "conv_general_dilated feature_group_count must divide lhs feature dimension size, but 2 does not divide 1."),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5)), np.ones((1, 1, 3)), (1, 1), "VALID"), ValueError,
     "conv_general_dilated window and window_strides must have the same number of dimensions, but got 1 and 2"),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5), np.float32), np.ones((1, 1, 3), np.float16), (1,),
                                      "VALID"), TypeError,
     "lax.conv_general_dilated requires arguments to have the same dtypes, got float32, float16."),
    (lambda: lax.conv_general_dilated(np.ones((1, 5)), np.ones((1, 1, 3)), (1,), "VALID"), TypeError,
     "convolution requires lhs and rhs ndim to be equal, got 2 and 3."),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5)), np.ones((1, 1, 3)), (1,), "VALID",
                                      dimension_numbers=("NCX", "OIW", "NCW")), TypeError,
     "convolution dimension_numbers elements must each have the same set of spatial characters, got "
     "('NCX', 'OIW', 'NCW')."),
    (lambda: lax.conv_general_dilated(np.ones((2, 4, 5)), np.ones((4, 2, 3)), (1,), "VALID", feature_group_count=2,
                                      batch_group_count=2), ValueError,
     "At most one of batch_group_count and feature_group_count may be > 1, got batch_group_count=2 and "
     "feature_group_count=2"),
    (lambda: lax.conv_general_dilated(np.ones((2, 4, 5)), np.ones((4, 3, 3)), (1,), "VALID"), ValueError,
     "conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs input "
     "feature dimension size, but 4 // 1 != 3."),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 5)), np.ones((1, 1, 3)), (1,), "SAME", lhs_dilation=(2,)),
     ValueError, "String padding is not implemented for transposed convolution using this op. Please either "
     "exactly specify the required padding or use conv_transpose."),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_conv_errors_match_jax(i):
    call, exc, msg = ERRORS[i]
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == msg


# ----------------------------------------------------------------------------------------------- the guide

def test_generalized_convolutions_guide():
    """The calls of JAX's "Generalized convolutions" guide (jax.readthedocs.io, notebooks/convolutions)."""
    kernel = np.zeros((3, 3, 3, 3), dtype=jnp.float32)
    kernel += np.array([[1, 1, 0], [1, 0, -1], [0, -1, -1]])[:, :, np.newaxis, np.newaxis]
    img = np.zeros((1, 200, 198, 3), dtype=jnp.float32)
    for k in range(3):
        x = 30 + 60 * k
        y = 20 + 60 * k
        img[0, x:x + 10, y:y + 10, k] = 1.0
    dn = lax.conv_dimension_numbers(img.shape, kernel.shape, ("NHWC", "HWIO", "NHWC"))
    assert dn == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    want = lambda x, w, st, pad, ld, rd: ref_conv(x, w, st, pad, ld, rd, dn)  # noqa: E731
    out = lax.conv_general_dilated(img, kernel, (1, 1), "SAME", (1, 1), (1, 1), dn)
    assert out.shape == (1, 200, 198, 3)
    np.testing.assert_allclose(np.asarray(out), want(img, kernel, (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1)), atol=1e-5)
    out = lax.conv_general_dilated(img, kernel, (1, 1), "VALID", (1, 1), (1, 1), dn)
    assert out.shape == (1, 198, 196, 3)
    out = lax.conv_general_dilated(img, kernel, (2, 2), "SAME", (1, 1), (1, 1), dn)
    assert out.shape == (1, 100, 99, 3)
    out = lax.conv_general_dilated(img, kernel, (1, 1), "VALID", (1, 1), (12, 12), dn)
    assert out.shape == (1, 176, 174, 3)
    np.testing.assert_allclose(np.asarray(out), want(img, kernel, (1, 1), [(0, 0), (0, 0)], (1, 1), (12, 12)),
                               atol=1e-5)
    out = lax.conv_general_dilated(img, kernel, (1, 1), ((0, 0), (0, 0)), (2, 2), (1, 1), dn)
    assert out.shape == (1, 397, 393, 3)
    out = lax.conv_general_dilated(img, kernel, (1, 1), ((2, 1), (2, 1)), (2, 2), (1, 1), dn)
    assert out.shape == (1, 400, 396, 3)
    np.testing.assert_allclose(np.asarray(out), want(img, kernel, (1, 1), [(2, 1), (2, 1)], (2, 2), (1, 1)), atol=1e-5)
    # 1-D: jnp.convolve-style and a 3-D volume
    k1 = np.array([1, 0, -1], np.float32)[:, None, None]
    x1 = np.arange(1, 201, dtype=np.float32)[None, :, None]
    dn1 = lax.conv_dimension_numbers(x1.shape, k1.shape, ("NWC", "WIO", "NWC"))
    out = lax.conv_general_dilated(x1, k1, (1,), "SAME", (1,), (1,), dn1)
    assert out.shape == (1, 200, 1)
    np.testing.assert_allclose(np.asarray(out)[0, 1:-1, 0], -2.0)
    k3 = np.ones((3, 3, 3, 1, 1), np.float32)
    x3 = np.zeros((1, 10, 10, 10, 1), np.float32)
    x3[0, 5, 5, 5, 0] = 1.0
    dn3 = lax.conv_dimension_numbers(x3.shape, k3.shape, ("NHWDC", "HWDIO", "NHWDC"))
    out = np.asarray(lax.conv_general_dilated(x3, k3, (1, 1, 1), "SAME", (1, 1, 1), (1, 1, 1), dn3))
    assert out.shape == (1, 10, 10, 10, 1) and out.sum() == 27.0 and out[0, 4:7, 4:7, 4:7, 0].min() == 1.0


# ----------------------------------------------------------------------------------------------- lowering

def test_float_convolutions_lower_to_the_core_library_op():
    from cranax.interpreters import lowering
    x, w = np.ones((2, 5, 5, 3), np.float32), np.ones((3, 3, 3, 4), np.float32)
    f = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))  # noqa
    wire = lowering.lower_jaxpr(cranax.make_jaxpr(f)(x, w))
    assert '"prim":"conv_general_dilated"' in wire and '"prim":"dot_general"' not in wire
    wire16 = lowering.lower_jaxpr(cranax.make_jaxpr(f)(x.astype(np.float16), w.astype(np.float16)))
    assert '"prim":"conv_general_dilated"' not in wire16 and '"prim":"dot_general"' in wire16   # im2col


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_core_kernel_and_im2col_composition_agree(case, monkeypatch):
    """The core's kernels (im2col blocks into gemm, in-place 1x1, depthwise loops) and the inlined im2col
    composition give the same values."""
    native, _ = _run(case, np.float32, seed=11)
    from cranax.interpreters import dispatch
    monkeypatch.setitem(_conv.native_lowering, "enabled", False)
    dispatch.clear_cache()        # the eager executables were compiled with the core's op
    try:
        composed, want = _run(case, np.float32, seed=11)
    finally:
        dispatch.clear_cache()
    np.testing.assert_allclose(native, composed, rtol=2e-5, atol=_atol32(case, want))
    np.testing.assert_allclose(composed, want, rtol=2e-5, atol=_atol32(case, want))


def test_shape_helpers_match_jax():
    # JAX 0.10.2's values
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NHWC")) == ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_shape_tuple((4, 3, 10, 9), (5, 3, 3, 2), (2, 1), "SAME", 2) == (2, 5, 5, 9)
    assert lax.conv_general_shape_tuple((4, 10, 9, 3), (3, 2, 3, 5), (2, 1), ((1, 0), (0, 2)),
                                        ("NHWC", "HWIO", "NHWC")) == (4, 5, 10, 5)
    assert lax.conv_transpose_shape_tuple((1, 3, 3, 2), (2, 2, 2, 3), (2, 2), "SAME",
                                          ("NHWC", "HWIO", "NHWC")) == (1, 6, 6, 3)
    assert lax.conv_transpose_shape_tuple((1, 3, 3, 2), (3, 2, 2, 3), (2, 1), "VALID",
                                          ("NHWC", "HWIO", "NHWC")) == (1, 7, 4, 3)


def test_conv_general_dilated_patches_matches_jax():
    x = np.sin(np.arange(2 * 3 * 5 * 4, dtype=np.float32)).reshape(2, 3, 5, 4)
    # JAX 0.10.2: shape and sum(p * arange(p.size)) / p.size
    for args, kw, shape, checksum in [
            ((x, (2, 3), (1, 2), "SAME"), {}, (2, 18, 5, 2), -3.1925289630889893),
            ((x.transpose(0, 2, 3, 1), (2, 2), (1, 1), "VALID"), {"dimension_numbers": ("NHWC", "OIHW", "NHWC")},
             (2, 4, 3, 12), -2.998623847961426)]:
        p = np.asarray(lax.conv_general_dilated_patches(*args, **kw))
        assert p.shape == shape
        got = float(np.sum(p.astype(np.float64) * np.arange(p.size).reshape(p.shape)) / p.size)
        assert abs(got - checksum) < 1e-5 * abs(checksum)
    # each patch feature is one input element: feature c * 6 + (i * 3 + j) at output (h, w) reads x[c, h+i-0, ...]
    p = np.asarray(lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID"))
    for c, i, j in [(0, 0, 0), (1, 1, 2), (2, 0, 1)]:
        np.testing.assert_array_equal(p[:, c * 6 + i * 3 + j], x[:, c, i:i + 4, j:j + 2])


def test_conv_general_dilated_local_matches_jax():
    x = np.sin(np.arange(2 * 3 * 5 * 4, dtype=np.float32)).reshape(2, 3, 5, 4)
    w = np.cos(np.arange(4 * 18 * 5 * 2, dtype=np.float32)).reshape(4, 18, 5, 2)
    wn = np.cos(np.arange(4 * 3 * 12 * 4, dtype=np.float32)).reshape(4, 3, 12, 4)
    # JAX 0.10.2: shape and sum(out * arange(out.size)) / out.size
    for args, kw, shape, checksum in [
            ((x, w, (1, 2), "SAME", (2, 3)), {}, (2, 4, 5, 2), -0.46146631240844727),
            ((x.transpose(0, 2, 3, 1), wn, (1, 1), "VALID", (2, 2)),
             {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}, (2, 4, 3, 4), 0.14193861186504364)]:
        o = np.asarray(lax.conv_general_dilated_local(*args, **kw))
        assert o.shape == shape
        got = float(np.sum(o.astype(np.float64) * np.arange(o.size).reshape(o.shape)) / o.size)
        assert abs(got - checksum) < 2e-5 * max(1.0, abs(checksum))


def _gpu():
    try:
        return cranax.devices("gpu")[0]
    except Exception:
        return None


@pytest.mark.skipif(_gpu() is None, reason="no GPU adapter (or cranax built without the gpu feature)")
def test_conv_and_pools_on_the_gpu_match_the_cpu():
    """Inside a GPU program the convolutions run as shaders (tests/test_gpu_conv.py) and the window steps,
    which have none, on the host (the documented fallback): the same values as the CPU backend."""
    g = _gpu()
    x, w = _rand((2, 6, 6, 3), np.float32, 1), _rand((3, 3, 3, 4), np.float32, 2)

    def f(x, w):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lax.reduce_window(jnp.maximum(y, 0.0), -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    loss = lambda x, w: jnp.sum(f(x, w) ** 2)  # noqa: E731
    xg, wg = cranax.device_put(x, g), cranax.device_put(w, g)
    out = cranax.jit(f)(xg, wg)
    assert out.devices() == {g}
    np.testing.assert_allclose(np.asarray(out), np.asarray(cranax.jit(f)(x, w)), rtol=1e-6, atol=1e-6)
    for a, b in zip(cranax.jit(cranax.grad(loss, (0, 1)))(xg, wg), cranax.grad(loss, (0, 1))(x, w)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
