"""Integer `lax.div`/`lax.rem`, `//` and `%` on every integer dtype, by constants (magic-number multiply on
vector lanes) and by per-lane divisors (int32 lanes divide in float64), against NumPy with XLA's CPU
conventions (x/0 = -1, all ones unsigned; x%0 = x; MIN/-1 = MIN; MIN%-1 = 0), under jit, vmap and inside loop
bodies. The zero-divisor rows are JAX 0.10.2's values, recorded."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64]  # (cranax has no uint64)


def ref_div(x, y):
    """Truncating division with XLA's zero and overflow results, in Python integers."""
    info = np.iinfo(x.dtype)
    out = []
    for a, b in zip(x.tolist(), y.tolist()):
        if b == 0:
            out.append(-1 if info.min < 0 else info.max)
        else:
            q = abs(a) // abs(b)
            q = q if (a < 0) == (b < 0) else -q
            out.append(info.min if q > info.max else q)
    return np.array(out, x.dtype)


def ref_rem(x, y):
    out = []
    for a, b in zip(x.tolist(), y.tolist()):
        if b == 0:
            out.append(a)
        else:
            r = abs(a) % abs(b)
            out.append(-r if a < 0 else r)
    return np.array(out, x.dtype)


def values(dt, n, seed):
    """Random values over the whole range, the extremes and small numbers mixed in."""
    info = np.iinfo(dt)
    rng = np.random.RandomState(seed)
    x = rng.randint(info.min, int(info.max) + 1, n, dtype=np.int64).astype(dt)
    x[::5] = rng.randint(max(info.min, -9), 10, len(x[::5]))
    x[1::11] = info.min
    x[2::11] = info.max
    return x


@pytest.fixture
def wide(request, dt):
    """64-bit mode for the 64-bit dtypes (otherwise they compute as 32-bit, as in JAX)."""
    if np.dtype(dt).itemsize == 8:
        request.getfixturevalue("x64")


@pytest.mark.parametrize("dt", DTYPES)
def test_div_rem_per_lane_divisors(dt, wide):
    n = 4003
    x, y = values(dt, n, 1), values(dt, n, 2)
    y[::3] = 0
    if np.iinfo(dt).min < 0:
        y[1::7] = -1
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.div)(x, y)), ref_div(x, y))
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.rem)(x, y)), ref_rem(x, y))
    nz = np.where(y == 0, 1, y).astype(dt)
    if np.iinfo(dt).min < 0:
        nz = np.where(nz == -1, 3, nz).astype(dt)  # NumPy warns on MIN // -1
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: a // b)(x, nz)), np.floor_divide(x, nz))
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: a % b)(x, nz)), np.remainder(x, nz))


@pytest.mark.parametrize("dt", DTYPES)
def test_div_rem_by_constants(dt, wide):
    info = np.iinfo(dt)
    x = values(dt, 2001, 3)
    consts = [1, 2, 3, 7, 10, 100, 127, 1000, 4096, 12345, 2**31 - 1, 2**32 - 1, 2**40 + 1, -1, -2, -3, -7, -1000,
              -2**31, -2**63, 0]
    for c in consts:
        if not info.min <= c <= info.max:
            continue
        c = dt(c)
        y = np.full_like(x, c)
        np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: lax.div(a, c))(x)), ref_div(x, y), err_msg=f"div {c}")
        np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: lax.rem(a, c))(x)), ref_rem(x, y), err_msg=f"rem {c}")
        if c > 0 or (c < -1 and info.min < 0):
            np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: a // c)(x)), np.floor_divide(x, c))
            np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: a % c)(x)), np.remainder(x, c))


def test_zero_divisors_and_overflow_as_jax():
    # JAX 0.10.2 (CPU) on these inputs, recorded
    x = np.array([7, 2**31 - 1, -2**31, 0, 5], np.int32)
    z = np.zeros(5, np.int32)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.div)(x, z)), [-1, -1, -1, -1, -1])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.rem)(x, z)), x)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: a // b)(x, z)), [-2, -2, -2, -1, -2])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: a % b)(x, z)), [0, 0, 0, 0, 0])
    x = np.array([-2**31, -2**31, -7, 7, -7], np.int32)
    y = np.array([-1, 1, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.div)(x, y)), [-2**31, -2**31, -3, -3, 3])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.rem)(x, y)), [0, 0, -1, 1, -1])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: a // b)(x, y)), [-2**31, -2**31, -4, -4, 3])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a, b: a % b)(x, y)), [0, 0, 1, -1, -1])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: a // np.int32(0))(x)), [-2] * 5)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: a // np.int32(-1))(x)), [-2**31, -2**31, 7, -7, 7])
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda a: a % np.int32(-1))(x)), [0] * 5)
    u = np.array([7, 2**32 - 1, 0, 5], np.uint32)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.div)(u, np.zeros(4, np.uint32))), [2**32 - 1] * 4)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lax.rem)(u, np.zeros(4, np.uint32))), u)


def test_under_vmap_and_in_loop_bodies():
    x = values(np.int32, 4 * 999, 4).reshape(4, 999)
    d = np.array([7, -1000, 1, 0], np.int32)
    got = cranax.jit(cranax.vmap(lambda r, c: (lax.div(r, c), lax.rem(r, c))))(x, d)
    y = np.broadcast_to(d[:, None], x.shape)
    np.testing.assert_array_equal(np.asarray(got[0]), ref_div(x.ravel(), y.ravel()).reshape(x.shape))
    np.testing.assert_array_equal(np.asarray(got[1]), ref_rem(x.ravel(), y.ravel()).reshape(x.shape))

    i = values(np.int32, 1000, 5) // 8  # no wrap-around in i ± k or the sum

    def body(k, acc):
        return acc + (i + k) % 1000 + (i - k) // (k + 3)
    got = cranax.jit(lambda: lax.fori_loop(0, 6, body, jnp.zeros(1000, jnp.int32)))()
    want = np.zeros(1000, np.int64)
    for k in range(6):
        want += np.remainder(i.astype(np.int64) + k, 1000) + np.floor_divide(i.astype(np.int64) - k, k + 3)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_floor_patterns_feeding_indices_and_arithmetic():
    """`%` and `//` by positive constants inside larger kernels: their results reused by other integer
    operations, as two-component gather indices (`m[i % n, i // n]`, whose negative-index fix-ups and
    clamps the floor results make moot), and by `take_along_axis`, against NumPy over the whole int32 range."""
    x = values(np.int32, 4001, 6)
    for c in (2, 3, 1000, 1024, 2**20 + 3, 2**31 - 1):
        c = np.int32(c)
        got = cranax.jit(lambda a: (a % c) * np.int32(3) - a // c + (a // c) % np.int32(7))(x)
        with np.errstate(over="ignore"):
            want = (x % c) * np.int32(3) - x // c + (x // c) % np.int32(7)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"c={c}")
    m = np.random.RandomState(8).rand(100, 300).astype(np.float32)
    i = values(np.int32, 30011, 9)
    got = cranax.jit(lambda m, i: m[i % 100, (i // 100) % 300])(m, i)
    np.testing.assert_array_equal(np.asarray(got), m[i % 100, (i // 100) % 300])
    got = cranax.jit(lambda m, i: m[i % 100, i // 2**24])(m, i % 2**26)
    np.testing.assert_array_equal(np.asarray(got), m[i % 2**26 % 100, i % 2**26 // 2**24])
    j = i[:30000].reshape(100, 300)
    got = cranax.jit(lambda m, j: jnp.take_along_axis(m, j % 300, axis=1))(m, j)
    np.testing.assert_array_equal(np.asarray(got), np.take_along_axis(m, j % 300, axis=1))
    got = cranax.jit(lambda m, j: jnp.take_along_axis(m, j % 301, axis=1, mode="fill", fill_value=-1.0))(m, j)
    k = j % 301
    want = np.where(k < 300, np.take_along_axis(m, np.minimum(k, 299), axis=1), np.float32(-1.0))
    np.testing.assert_array_equal(np.asarray(got), want)
