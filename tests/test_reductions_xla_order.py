"""Sums, means and divisions by broadcasts with JAX 0.10.2's bits on the CPU (issue 22).

XLA:CPU in jaxlib 0.10.2 adds a float32/float64 reduction over trailing axes in one of two orders: from 4096
elements YNNPACK's sum kernel (64-byte lanes, blocks of 4 lane-vectors, a Kahan-compensated last level, lanes
folded in halves; rows past 128 KiB as chunks of 128 KiB whose sums are folded in halves), below that XLA's own
loop (left to right up to 32 per row, windows of 32 of the centred zero-padded row past that); a row's
128 KiB chunks' sums are added in YNNPACK's order again; products take XLA's loop at every size. Its simplifier
also turns ``A / broadcast(B)`` into ``A * broadcast(1 / B)`` (float16/32/64), so ``jnp.mean`` is the sum times
``1 / n``. cranax's CPU kernels follow both (``loop_plan::SumOrder``, ``opt::recip``). The digests are sha256
prefixes of the raw bytes of JAX's results, recorded with JAX 0.10.2 (x64 on) on an AMD EPYC host: plain IEEE
adds, multiplies and divisions, so the same on every host.
"""
import hashlib

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import _prng
from test_fma import _exact   # the correctly rounded a * b + c (exact rationals)

JAX = {
    "sum_100x20_float32": "79e487d234ad4d4fa9c0a2fb93b23db4",
    "sum_50x33_float32": "cff25060708e7f93381b22af4fd3c20c",
    "sum_30x100_float32": "41d5e8e3994dc0022cebf045f357d79b",
    "sum_3x1000_float32": "31ff57e17335ca0c32b867366809ac39",
    "sum_1x4095_float32": "14c621f34f59b354955103134379395e",
    "sum_1000x8_float32": "01bc94b002bbdc92ca436c359a799266",
    "sum_300x20_float32": "24de996eba1cc4b0696f993dfc0eea49",
    "sum_100x64_float32": "fd19929ccdd385d8a5c0ff9a2f5ca54b",
    "sum_40x300_float32": "b75760471e4430bed10beb8c8ad1a8f7",
    "sum_8x1025_float32": "0f5dd77c0b69e8f365e32b3db7c9e68e",
    "sum_4x4096_float32": "7bc5fe89cbd96375e1840effef624679",
    "sum_2x5000_float32": "238a181b5efbf35adee91c8acbca5f1b",
    "sum_1x70000_float32": "ae98f998b5769e0a6916be1a601ac8c3",
    "sum_2x100000_float32": "7588129bb8c5c099b5a55244b87f6bdf",
    "sum_3x40000_float32": "2d2a7388cf17b9fe2e604be251a7db91",
    "sum_1x300000_float32": "e818ba25e9df61a43feb92589f88b590",
    "sum_5000x3_float32": "76e41369d18dd519b8a3b1249a036e37",
    "sum_64x64_all_float32": "25637c5ecfc3d61aa12bd7d7a9fbe8d7",
    "sum_10x20x30_12_float32": "90d0a02722e261a1ab403ec4a01d8587",
    "mean_100x20_float32": "d6e9b84a7d5ede04d63bdda9c356edf8",
    "mean_1000x7_float32": "399e23af3d933fa0a22f281c05a3242b",
    "mean_50x33_float32": "f9728dfab26b7de598b4d48350c2c23c",
    "mean_40x300_float32": "d60bbbdc6905c3334ec6dde87563013c",
    "sum_100x20_float64": "69131e7afa10fe3073baab8eb62d7b36",
    "sum_50x33_float64": "7ef7b1ff1ee13190373544f2ccdd5353",
    "sum_30x100_float64": "593b67b8b8cacac4e90a00df6f7f80eb",
    "sum_3x1000_float64": "79e2bb4e2b3168614cbf984046533e68",
    "sum_1x4095_float64": "e1cb8e5334f58ef58dd6b85062247aaa",
    "sum_1000x8_float64": "e4ea46b96dac224873fd4d0958fcc2c7",
    "sum_300x20_float64": "fd2042823bed0901b088a27c5fd279b5",
    "sum_100x64_float64": "7f4bc2b5bcce7d905a682e2aeb827077",
    "sum_40x300_float64": "4d2b87dbcc4486d73d37a1a25ae31ba6",
    "sum_8x1025_float64": "e23071b4b0739e2ae36dd94cf4199cb0",
    "sum_4x4096_float64": "433a33f77c354f819c24a8883d3374a4",
    "sum_2x5000_float64": "a2b395ff349a9a2204129f06142a7313",
    "sum_1x70000_float64": "172e14c6d2648b97fd9de2f6d092aedc",
    "sum_2x100000_float64": "90e1039ee0f069551d51cd820acfe162",
    "sum_3x40000_float64": "78a488b4080e481dc382a2e210c8b284",
    "sum_1x300000_float64": "54d1cf644da9641ce6e9c1c44f2aac01",
    "sum_5000x3_float64": "3cc54e4800faf00120cd490388b0952f",
    "sum_64x64_all_float64": "2728c1c27cb325166670a5ec4ebc6e63",
    "sum_10x20x30_12_float64": "389b907411303a3a3d74267b6e7c53d7",
    "mean_100x20_float64": "aaa255664b5fca454c33eab97e03f2ee",
    "mean_1000x7_float64": "20afd81180944a0ed920c8d36a6fed17",
    "mean_50x33_float64": "7e0c9b6dd20205acf3d2b5b5aaec3c3e",
    "mean_40x300_float64": "4a5e1bda4c646fc190a598551e585928",
    "sum_1x1000000_float32": "ff3105129a141810f447ab7bc4d0dc09",
    "sum_1x600001_float32": "854138fbcc210c7912a0fc0b12402753",
    "sum_1x524305_float32": "f13f2f184a9f36fb948f9ebabcae8768",
    "sum_1x2000000_float32": "59a98be900e691e4fdf47f8eb5b10cff",
    "sum_1x1000000_float64": "2c6fff8270982b4b70b59575c12404e1",
    "sum_1x600001_float64": "91713156066967990f6a35e72658e5f4",
    "sum_1x524305_float64": "8c663aeb5cfd7ba0d60edca47fa4f66e",
    "sum_1x2000000_float64": "345946733d9dcb0cf80b460d6c7eeee3",
    "prod_100x20_float32": "be39aa071a464c2b03adff4f23a48ace",
    "prod_50x33_float32": "0ce58ecd7c924f71c8371dd0097b1228",
    "prod_30x100_float32": "b716ccc386346901732da51211d07523",
    "prod_3x1000_float32": "da5b1e27d6c45986a002d9246fade928",
    "prod_4x4096_float32": "187126bdba856371fe9a20ab6d4c6603",
    "prod_2x5000_float32": "ef7fde4d7d94e14719e3f86e0ffa84a8",
    "prod_1x70000_float32": "d7173dd8a9e81deded3f2e4719ef149e",
    "prod_200x200_float32": "31f2ca8377c196c8802c3dc72b117bbb",
    "prod_64x64_all_float32": "eb0d62a5792d742f53d6e6e943ff500f",
    "prod_10000_float32": "74d7ffcab327dfe5026430bf0003efea",
    "prod_100x20_float64": "5c5cdca7655fee761e60b168c1d620e6",
    "prod_50x33_float64": "fa146e681c53e17cce94f3a6014e711c",
    "prod_30x100_float64": "69ef6dcfe4d4c9743c97dd400ba7127e",
    "prod_3x1000_float64": "4d999847a59e0f16d2fec59a8bec7f14",
    "prod_4x4096_float64": "41912660cc5ecc4556b72239839cf17a",
    "prod_2x5000_float64": "825fd1c8a21ef4f6e575ffb3b75dab6d",
    "prod_1x70000_float64": "483cd181a8d73734e9fcda7175ffe416",
    "prod_200x200_float64": "e7d076244529aa510560d4f6ae29c7aa",
    "prod_64x64_all_float64": "f3aa08cd5c2a890a5916b2223a539a15",
    "prod_10000_float64": "74f39b27c7ab17fbac472b50978d32bf",
    "spikes_23_float64": "37c9fbb7226c259cfdfdfddcde2242b0",
    "spikes_37_float64": "ccdd768fe3bcdb65fb42a93277a66fbf",
    "spikes_62_float64": "3283d17d374dcd2f662aabbbd5378914",
    "spikes_100_float64": "ffd98718f567dab725aa30eb12fed761",
    "spikes_35_float32": "4d76c916927dc22c1008eb4a9083fb0b",
    "spikes_62_float32": "d51d2a6186c9cf87c561815d1ac3c13d",
    "div_float16": "e0c0714ef3d4f7dd9b576c3c0167c90d",
    "div_float32": "9c80bcc184fb5e6957da716c6e18d1a3",
    "div_float64": "361b13d3d36bdd475832247c9ef9ebd4",
    # sums over several axes, or one axis before a kept one, below 4096 elements (``SumOrder::XlaGrid``)
    "grid_40x50_all_float32": "e0e1a98f3d0fc984bc14375bdea58c9c",
    "grid_33x33_all_float32": "41892a2afaa3eeb9525496e3d336a848",
    "grid_50x70_all_float32": "04a4e24a6a4f56dcb5ede33feeb33086",
    "grid_40x100_all_float32": "23b88722ef78c9e0b0a4e4fdd336b15d",
    "grid_100x40_all_float32": "23b88722ef78c9e0b0a4e4fdd336b15d",
    "grid_70x40_all_float32": "849b893233aa30a6ac5776e901649b16",
    "grid_10x40x5_all_float32": "e0e1a98f3d0fc984bc14375bdea58c9c",
    "grid_40x50x2_01_float32": "2a7fb06b7326185ed6f5af3053d67c1a",
    "grid_2x40x50_12_float32": "72c0ad3a8cb7e9de37804887b2dcfcc1",
    "grid_20x5x40_02_float32": "3e2f0740a9fc6d86e9f9dcafa0d9f869",
    "grid_8x8x40_all_float32": "8bc7508b2d716b1f496a385f842dbb7f",
    "grid_63x40_all_float32": "7a79b64a418d5d96bae71415b30ce8bc",
    "grid_100x20_0_float32": "dfd857732c2902f8cfe6de0d5cfe31c6",
    "grid_40x50_0_float32": "2d0fb25d38c27935d07e839cf74f44e5",
    "grid_63x20_0_float32": "bf05c8339959815e3b91a19b11646c7d",
    "grid_3x100x10_1_float32": "cad78e0301429d8431134ec63a81dd2a",
    "grid_200x5_0_float32": "00de89b7bd613de227e3da1995b91bf7",
    "gridmean_40x50_all_float32": "f9df0efd7375c09050a64c572a7c836a",
    "gridmean_100x20_0_float32": "d8b7d469433b31008357960d60eac24e",
    "grid_40x50_all_float64": "5f5aee256e3001864ca23167a5c9b6fa",
    "grid_33x33_all_float64": "a38c34e08c464ff8f0e1341bab53431f",
    "grid_50x70_all_float64": "f0eb7e7e5b18bf961a8fea94b319cb9b",
    "grid_40x100_all_float64": "6e2af7d057bd97085cdcb31169bd38df",
    "grid_100x40_all_float64": "33a561016542ddad5a6a3412a2e2a99e",
    "grid_70x40_all_float64": "62109be7bd97d0cbf53530636986c45a",
    "grid_10x40x5_all_float64": "63c281c5343ac1c83f7df38e7819a9ee",
    "grid_40x50x2_01_float64": "99ad10edc5cbd8b1fb5bc7333cb4d3d3",
    "grid_2x40x50_12_float64": "5a9ffeb05225c6ac9e0bb0ec61e3e025",
    "grid_20x5x40_02_float64": "37ab844983fae0905da59a400db5ecf0",
    "grid_8x8x40_all_float64": "ffb705c8b89052eace8a5286a530b071",
    "grid_63x40_all_float64": "e0dbff82046186c0f07921580a8ce5c2",
    "grid_100x20_0_float64": "a39b80be0f82c461015cfdbee2781300",
    "grid_40x50_0_float64": "3fff9b9e014867908f1f8ca895b2590c",
    "grid_63x20_0_float64": "7a36175df22820caa8098ac4c6a96633",
    "grid_3x100x10_1_float64": "493b58c84b1f27b5995a4ccf416937d3",
    "grid_200x5_0_float64": "91123915d262af98c3a59cd347f1b871",
    "gridmean_40x50_all_float64": "0ad93cd0e4729a3acd574a662ff7387e",
    "gridmean_100x20_0_float64": "243180cffcc25be3295ca620d38a7baa",
}


def _input(shape, dt, seed=0):
    # signs and exponents spread (cancellation, 2**-9 .. 2**9), no randomness: the same bytes everywhere
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.float64) + seed * 7919
    x = (np.mod(i * 0.6180339887498949, 1.0) - 0.37) * np.exp2(np.mod(i, 7.0) * 3 - 9)
    return x.reshape(shape).astype(dt)


def _digest(t):
    h = hashlib.sha256()
    for a in cranax.tree_util.tree_leaves(t):
        h.update(np.ascontiguousarray(np.asarray(a)).tobytes())
    return h.hexdigest()[:32]


@pytest.fixture
def x64():
    old = cranax.config.jax_enable_x64
    cranax.config.update("jax_enable_x64", True)
    yield
    cranax.config.update("jax_enable_x64", old)


# (shape, axis): fewer than 4096 elements add in XLA's order, at least 4096 in YNNPACK's; (1, 70000) .. (1, 300000)
# cut rows into 128 KiB chunks (3, 4, 2 and 10 float32 chunks; 5, 7, 3 and 19 float64 ones)
SUMS = [((100, 20), -1), ((50, 33), -1), ((30, 100), -1), ((3, 1000), -1), ((1, 4095), -1),
        ((1000, 8), -1), ((300, 20), -1), ((100, 64), -1), ((40, 300), -1), ((8, 1025), -1), ((4, 4096), -1),
        ((2, 5000), -1), ((1, 70000), -1), ((2, 100000), -1), ((3, 40000), -1), ((1, 300000), -1),
        ((5000, 3), -1), ((64, 64), None), ((10, 20, 30), (1, 2))]
MEANS = [(100, 20), (1000, 7), (50, 33), (40, 300)]
# rows of many 128 KiB chunks: XLA:CPU sums the chunks' sums in YNNPACK's order again (31 .. 123 chunks)
LONG_SUMS = [(1, 1000000), (1, 600001), (1, 524305), (1, 2000000)]
# products: XLA's own loop and windows of 32 at every size (YNNPACK takes no products)
PRODS = [((100, 20), -1), ((50, 33), -1), ((30, 100), -1), ((3, 1000), -1), ((4, 4096), -1), ((2, 5000), -1),
         ((1, 70000), -1), ((200, 200), -1), ((10000,), None)]


def _key(shape, ax):
    return "x".join(map(str, shape)) + ("" if ax == -1 else "_all" if ax is None else "_12")


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,ax", SUMS)
def test_sum_bits_match_jax(shape, ax, dt, x64):
    x = _input(shape, dt)
    got = cranax.jit(lambda a: jnp.sum(a, axis=ax))(x)
    assert _digest(got) == JAX[f"sum_{_key(shape, ax)}_{dt}"]
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64).sum(axis=ax),
                               rtol=1e-5 if dt == "float32" else 1e-13, atol=1e-6 if dt == "float32" else 1e-15)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", LONG_SUMS)
def test_long_row_sum_bits_match_jax(shape, dt, x64):
    x = _input(shape, dt)
    got = cranax.jit(lambda a: jnp.sum(a, -1))(x)
    assert _digest(got) == JAX[f"sum_{shape[0]}x{shape[1]}_{dt}"]
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64).sum(-1), rtol=1e-5 if dt == "float32" else 1e-13)


def _spikes(m, dt):
    # one value per 128 KiB chunk (row 0 at each chunk's start, row 1 reversed at its middle): each chunk's
    # sum is exact, so the row's bits are those of the order the chunk sums are added in
    C = (128 << 10) // np.dtype(dt).itemsize
    i = np.arange(m, dtype=np.float64)
    v = (np.mod(i * 0.7548776662466927, 1.0) - 0.5) * np.exp2(np.mod(i * 5, 23.0) - 11)
    x = np.zeros((2, m * C), dt)
    x[0, ::C] = v
    x[1, C // 2::C] = v[::-1]
    return x


@pytest.mark.parametrize("dt,m", [("float64", 23), ("float64", 37), ("float64", 62), ("float64", 100),
                                  ("float32", 35), ("float32", 62)])
def test_chunk_sums_add_in_ynnpack_order(dt, m, x64):
    x = _spikes(m, dt)
    got = cranax.jit(lambda a: jnp.sum(a, -1))(x)
    assert _digest(got) == JAX[f"spikes_{m}_{dt}"]
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64).sum(-1), rtol=1e-6 if dt == "float32" else 1e-14)


def _pinput(shape, dt, seed=0):
    # near 1, so that long products neither overflow nor vanish
    return (1 + _input(shape, np.float64, seed) * 2.0 ** -12).astype(dt)


def _prod_windows(x):
    # NumPy oracle of XLA's product order over the last axis: left to right up to 32, else windows of 32 of
    # the row padded with ones (the lower half first), recursively
    k = x.shape[-1]
    if k <= 32:
        p = x[..., 0].copy()
        for i in range(1, k):
            p = p * x[..., i]
        return p
    m = -(-k // 32) * 32
    lo = (m - k) // 2
    pad = [(0, 0)] * (x.ndim - 1) + [(lo, m - k - lo)]
    w = np.pad(x, pad, constant_values=1).reshape(x.shape[:-1] + (m // 32, 32))
    return _prod_windows(_prod_windows(w))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,ax", PRODS)
def test_prod_bits_match_jax(shape, ax, dt, x64):
    x = _pinput(shape, dt, 2 if ax is None else 0)
    got = cranax.jit(lambda a: jnp.prod(a, axis=ax))(x)
    key = "x".join(map(str, shape))
    assert _digest(got) == JAX[f"prod_{key}_{dt}"]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(got), _prod_windows(x if ax == -1 else x.reshape(-1)))
    want = np.prod(x.astype(np.float64), axis=ax)
    if np.all(np.abs(want) < np.finfo(dt).max):  # (float32's (1, 70000) overflows, in JAX too)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4 if dt == "float32" else 1e-12)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", MEANS)
def test_mean_bits_match_jax(shape, dt, x64):
    x = _input(shape, dt, 1)
    got = cranax.jit(lambda a: jnp.mean(a, -1))(x)
    assert _digest(got) == JAX[f"mean_{shape[0]}x{shape[1]}_{dt}"]
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64).mean(-1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_division_by_broadcasts_matches_jax(dt, x64):
    a = _input((50, 40), dt, 2) * 8
    b = (_input((50,), dt, 3) + 2).astype(dt)
    c = (_input((40,), dt, 4) + 2).astype(dt)
    got = cranax.jit(lambda a, b, c: (a / b[:, None], a / c, a / b[3], a / 3.0, a / 7.0))(a, b, c)
    assert _digest(got) == JAX[f"div_{dt}"]
    # the product of the reciprocal rounded once, as the rewrite says
    one = np.ones((), dt)
    np.testing.assert_array_equal(np.asarray(got[3]), (a * (one / np.asarray(3.0, dt))).astype(dt))
    np.testing.assert_array_equal(np.asarray(got[0]), (a * (one / b)[:, None]).astype(dt))


def test_bfloat16_and_full_size_divisions_stay_quotients():
    a = _input((8, 16), np.float32, 5)
    d = _input((8, 16), np.float32, 6) + 3
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, d: a / d)(a, d)), a / d)
    ab = jnp.asarray(a, dtype=jnp.bfloat16)
    got = np.asarray(cranax.jit(lambda a: a / 3.0)(ab)).astype(np.float32)
    want = np.asarray(jnp.asarray(np.asarray(ab).astype(np.float32) / np.float32(3.0), dtype=jnp.bfloat16)).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n,k", [(2000, 3), (300, 20), (40, 300), (50, 33), (3, 40)])
def test_sum_kernels_follow_the_prng_compositions(n, k):
    # the orders `_prng` composes from lax ops (checked against JAX by test_random_ynn) and the kernels' agree,
    # with a fused producer too (a product: plain IEEE multiplies either way)
    x = _input((n, k), np.float32, 7)
    y = _input((n, k), np.float32, 8)
    fn = _prng.ynn_sum_last if _prng.ynn_sized((n, k)) else _prng.xla_sum_last
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: jnp.sum(a, -1))(x)), np.asarray(cranax.jit(fn)(x)))
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: jnp.sum(a * b, -1))(x, y)),
                                  np.asarray(cranax.jit(lambda a, b: fn(a * b))(x, y)))


def test_sums_of_negative_zeros_and_specials():
    # XLA's and YNNPACK's sums start at +0: a row of -0.0 sums to +0.0; inf and nan propagate, Kahan's
    # compensation drops a non-finite error
    for shape in [(3, 5), (2, 40), (5000, 3), (2, 3000)]:
        s = np.asarray(cranax.jit(lambda a: jnp.sum(a, -1))(-np.zeros(shape, np.float32)))
        assert not np.signbit(s).any() and (s == 0).all()
    x = np.ones((4, 3000), np.float32)
    x[0, 5] = np.inf
    x[1, 2000] = np.nan
    x[2, 7] = np.inf
    x[2, 2500] = -np.inf
    x[3, 1500] = 3e38
    x[3, 1501] = 3e38
    s = np.asarray(cranax.jit(lambda a: jnp.sum(a, -1))(x))
    assert s[0] == np.inf and np.isnan(s[1]) and np.isnan(s[2]) and s[3] == np.inf


def _windows(x, op, one):
    # NumPy oracle of XLA's order over the last axis for `op` with identity `one` (as `_prod_windows`)
    k = x.shape[-1]
    if k <= 32:
        p = op(np.full(x.shape[:-1], one, x.dtype), x[..., 0])
        for i in range(1, k):
            p = op(p, x[..., i])
        return p
    m = -(-k // 32) * 32
    lo = (m - k) // 2
    w = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(lo, m - k - lo)], constant_values=one)
    return _windows(_windows(w.reshape(x.shape[:-1] + (m // 32, 32)), op, one), op, one)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("k", [33, 290, 300, 1000, 1300])
def test_fused_bodies_and_two_outputs_keep_xla_windows(k, dt, x64):
    # the window chains run several at a time (`codegen::emit_xla_windows`): bodies computed in the kernel and two
    # reduced outputs in one kernel keep each window's left-to-right order
    x = _input((3, k), dt, 3)
    s, q = cranax.jit(lambda a: (jnp.sum(a * a, -1), jnp.sum(a, -1)))(x)
    np.testing.assert_array_equal(np.asarray(s), _windows(x * x, np.add, 0))
    np.testing.assert_array_equal(np.asarray(q), _windows(x, np.add, 0))
    p = _pinput((3, k), dt, 4)
    got = cranax.jit(lambda a: jnp.prod(a * a, -1))(p)
    np.testing.assert_array_equal(np.asarray(got), _windows(p * p, np.multiply, 1))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("k", [64, 161, 545, 1000, 1333])
def test_vector_windows_keep_lanes_apart(k, dt, x64):
    # full windows run a vector of windows at a time (lane i = window i, `codegen::xla_vector_groups`): an
    # iota in the body (its lanes along the row), a transposed read (scalar windows) and window counts
    # that leave groups of 4L, L and single windows must all keep each window's own chain
    p = _pinput((5, k), dt, 5)
    # `1 + 1e-4 * iota` is one fused multiply-add under jit (XLA's LLVM contracts it; JAX 0.10.2 gives these
    # bits for every k here, both dtypes: `opt::contract`)
    ramp = _exact(np.full(k, 1e-4, dt), np.arange(k, dtype=dt), np.ones(k, dt), np.dtype(dt).type)
    got = cranax.jit(lambda a: jnp.prod(a * (1 + jnp.asarray(1e-4, dt) * jnp.arange(k, dtype=dt)), -1))(p)
    np.testing.assert_array_equal(np.asarray(got), _windows(p * ramp, np.multiply, 1))
    pt = np.ascontiguousarray(p.T)
    got = cranax.jit(lambda a: jnp.prod(a.T, -1))(pt)
    np.testing.assert_array_equal(np.asarray(got), _windows(p, np.multiply, 1))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("k", [2, 3, 5, 8, 13, 31, 32])
def test_short_rows_in_vector_lanes_keep_left_to_right(k, dt, x64):
    # rows of at most 32 run L rows at a time (lane i = row i, `codegen::emit_xla_rows`): a row count that
    # leaves scalar rows, lengths that leave a tail, a fused body with two outputs, and a transposed read
    p = _pinput((4103, k), dt, 6)
    got = cranax.jit(lambda a: jnp.prod(a, -1))(p)
    np.testing.assert_array_equal(np.asarray(got), _windows(p, np.multiply, 1))
    q, r = cranax.jit(lambda a: (jnp.prod(a * a, -1), jnp.prod(a + 1, -1)))(p[:7])
    np.testing.assert_array_equal(np.asarray(q), _windows(p[:7] * p[:7], np.multiply, 1))
    np.testing.assert_array_equal(np.asarray(r), _windows(p[:7] + 1, np.multiply, 1))
    x = _input((9, k), dt, 7)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: jnp.sum(a, -1))(x)), _windows(x, np.add, 0))
    pt = np.ascontiguousarray(p[:9].T)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: jnp.prod(a.T, -1))(pt)), _windows(p[:9], np.multiply, 1))


# Below 4096 elements, a sum over several axes (or over one axis before a kept one) with an axis longer than 32:
# XLA pads every reduced axis to a multiple of 32 (lower half first), adds each 32x...x32 window row-major, and
# reduces the grid of window sums in LLVM's vectorized order (rows of windows in lanes: 2x2, 2x3, 2x4, 4x2
# grids; left to right otherwise). ``loop_plan::SumOrder::XlaGrid``.
GRID_SUMS = [((40, 50), None), ((33, 33), None), ((50, 70), None), ((40, 100), None), ((100, 40), None),
             ((70, 40), None), ((10, 40, 5), None), ((40, 50, 2), (0, 1)), ((2, 40, 50), (1, 2)),
             ((20, 5, 40), (0, 2)), ((8, 8, 40), None), ((63, 40), None), ((100, 20), 0), ((40, 50), 0),
             ((63, 20), 0), ((3, 100, 10), 1), ((200, 5), 0)]


def _gkey(shape, ax):
    return "x".join(map(str, shape)) + "_" + ("all" if ax is None else "".join(map(str, ax if isinstance(ax, tuple) else (ax,))))


def _windows_oracle(x, ax):
    """XLA:CPU 0.10.2's order for these sums, in NumPy scalars (the reference the digests were checked against)."""
    dt = x.dtype.type
    axes = tuple(range(x.ndim)) if ax is None else ((ax,) if isinstance(ax, int) else ax)
    kept = [d for d in range(x.ndim) if d not in axes]
    xt = np.transpose(x, kept + list(axes))
    out = np.empty(xt.shape[:len(kept)], x.dtype)
    for idx in np.ndindex(*out.shape):
        r = xt[idx]
        r = r.reshape([n for n in r.shape if n > 1])
        pads = [((-(-n // 32) * 32) - n) // 2 for n in r.shape]
        grid = [-(-n // 32) for n in r.shape]
        sums = np.empty(grid, x.dtype)
        # two axes, the last n = 31 mod 32 (> 32): a window whose column 31 is real adds it last, top to bottom
        split = r.ndim == 2 and r.shape[1] > 32 and r.shape[1] % 32 == 31
        for g in np.ndindex(*grid):
            lo = [max(0, 32 * gi - p) for gi, p in zip(g, pads)]
            hi = [min(n, 32 * gi + 32 - p) for gi, n, p in zip(g, r.shape, pads)]
            acc = dt(0)
            last = split and hi[1] - lo[1] == 32
            block = r[lo[0]:hi[0], lo[1]:hi[1] - 1] if last else r[tuple(slice(a, b) for a, b in zip(lo, hi))]
            for v in block.reshape(-1):
                acc = dt(acc + v)
            if last:
                for v in r[lo[0]:hi[0], hi[1] - 1]:
                    acc = dt(acc + v)
            sums[g] = acc
        sums = sums.reshape([n for n in sums.shape if n > 1] or [1])
        if sums.ndim == 2 and sums.shape[0] in (2, 4):
            lanes = []
            for row in sums:
                acc = dt(0)
                for v in row:
                    acc = dt(acc + v)
                lanes.append(acc)
            while len(lanes) > 1:
                h = len(lanes) // 2
                lanes = [dt(lanes[i] + lanes[i + h]) for i in range(h)]
            out[idx] = lanes[0]
        else:
            acc = dt(0)
            for v in sums.reshape(-1):
                acc = dt(acc + v)
            out[idx] = acc
    return out


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,ax", GRID_SUMS)
def test_window_grid_sums_match_jax(shape, ax, dt, x64):
    x = _input(shape, dt)
    got = cranax.jit(lambda a: jnp.sum(a, axis=ax))(x)
    want = _windows_oracle(x, ax)
    np.testing.assert_array_equal(np.asarray(got).reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))
    assert _digest(got) == JAX[f"grid_{_gkey(shape, ax)}_{dt}"]
    # eager too (the same kernel)
    assert _digest(jnp.sum(cranax.numpy.asarray(x), axis=ax)) == JAX[f"grid_{_gkey(shape, ax)}_{dt}"]


# Two reduced axes whose last is n = 31 mod 32 and longer than 32 (padding 0_1): LLVM splits the in-bounds test
# of each window's column 31 out of its row loop (jaxlib 0.10.2's IR for (40, 63)), so that column is added
# after the window's other 31 columns, top to bottom. JAX 0.10.2's sums (x64 on), sha256 prefixes.
SPLIT_JAX = {
    "split_40x63_float32": "72d1daeb50076503697f3f6daa74362d",
    "split_40x63_float64": "9cec3e4b87673f8c0e69f462a5bbf86e",
    "split_20x95_float32": "8b28dcbbc0996e0285879cffac617945",
    "split_20x95_float64": "b6c3067de956124f59423b55b5160bdf",
    "split_64x63_float32": "d2694c08a00675345e9d48fbc3e2cc83",
    "split_64x63_float64": "be034a995d776ee4f9de63942d61d2af",
    "split_2x63_float32": "2e4aa8485687e03df54ea4d4df25f706",
    "split_2x63_float64": "ba3eec5a86ab8a1834dc42ac789fc7e4",
    "split_33x63_float32": "9f7e7bc4364b06254a47a646b0ce2613",
    "split_33x63_float64": "654e476aa15ae356cd4f86394d28c4c1",
    "split_10x255_float32": "b594131ee496fa6bac763df791e81acc",
    "split_10x255_float64": "07d149b650e39622586c07c9f1b5d55c",
    "split_7x95_float32": "236a885ba3d72be226b4faa1cd903488",
    "split_7x95_float64": "20487b49925aa7ad81128dd9917a4e89",
    "split_31x127_float32": "f96896c523df63ddcf3090bd50592a8c",
    "split_31x127_float64": "6ff8db330a2ba698ec2c6bfe2dca73e5",
}


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(40, 63), (20, 95), (64, 63), (2, 63), (33, 63), (10, 255), (7, 95), (31, 127)])
def test_window_grid_split_last_column_matches_jax(shape, dt, x64):
    x = _input(shape, dt)
    got = cranax.jit(jnp.sum)(x)
    np.testing.assert_array_equal(np.asarray(got).reshape(-1).view(np.uint8), _windows_oracle(x, None).reshape(-1).view(np.uint8))
    assert _digest(got) == SPLIT_JAX[f"split_{shape[0]}x{shape[1]}_{dt}"]
    np.testing.assert_allclose(float(got), float(x.astype(np.float64).sum()), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,ax", [((40, 50), None), ((100, 20), 0)])
def test_window_grid_means_match_jax(shape, ax, dt, x64):
    x = _input(shape, dt)
    got = cranax.jit(lambda a: jnp.mean(a, axis=ax))(x)
    assert _digest(got) == JAX[f"gridmean_{_gkey(shape, ax)}_{dt}"]
    np.testing.assert_allclose(np.asarray(got), x.astype(np.float64).mean(axis=ax), rtol=1e-5 if dt == "float32" else 1e-13)


def test_window_grid_fused_body_and_negative_zeros(x64):
    # a fused elementwise body feeds the windows point by point; sums of -0.0 only stay +0.0 (XLA's loops start at +0)
    x = _input((40, 50), "float32")
    got = cranax.jit(lambda a: jnp.sum(a * 2.0 + 1.0, axis=(0, 1)))(x)
    np.testing.assert_array_equal(np.asarray(got), _windows_oracle(x * np.float32(2) + np.float32(1), None))
    z = np.full((40, 50), -0.0, np.float32)
    got = cranax.jit(lambda a: jnp.sum(a, axis=(0, 1)))(z)
    assert not np.signbit(np.asarray(got))   # JAX 0.10.2: +0.0 (NumPy's add.reduce starts at the first -0.0)
    got = cranax.jit(lambda a: jnp.sum(a, axis=0))(np.full((100, 20), -0.0, np.float32))
    assert not np.signbit(np.asarray(got)).any()
