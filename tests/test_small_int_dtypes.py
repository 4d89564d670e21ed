"""int8 / uint8 / int16 / uint16 end to end: creation, promotion with weak scalars, wrapping arithmetic,
XLA's integer division / shift / conversion semantics, reductions (sum/prod accumulate in int32/uint32),
indexing and library ops, eager vs jit, and jaxpr printing. Expected values come from NumPy (with
wrapping) or from the XLA semantics spelled out in Python."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax
from cranax.config import config

SMALL = [np.int8, np.uint8, np.int16, np.uint16]
IDS = ["i8", "u8", "i16", "u16"]
SHORT = {np.int8: "i8", np.uint8: "u8", np.int16: "i16", np.uint16: "u16"}


def full_range(dt, n=64, seed=0):
    info = np.iinfo(dt)
    rng = np.random.default_rng(seed)
    edge = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=np.int64)
    r = rng.integers(info.min, int(info.max) + 1, size=n - len(edge), dtype=np.int64)
    return np.concatenate([edge, r]).astype(dt)


def check(got, want):
    got_np = np.asarray(got)
    assert got.dtype == np.dtype(want.dtype), (got.dtype, want.dtype)
    assert got_np.shape == want.shape
    np.testing.assert_array_equal(got_np, want)


def both(f, *args):
    """f eagerly and under jit: identical results."""
    a = f(*args)
    b = cranax.jit(f)(*args)
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    return a


# ------------------------------------------------------------------------------------------ creation


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_array_round_trip_and_repr(dt):
    x = full_range(dt)
    a = jnp.array(x)
    check(a, x)
    assert jnp.array(x.astype(np.int32), dtype=dt).dtype == np.dtype(dt)
    assert repr(jnp.array([1, 2], dtype=dt)) == f"Array([1, 2], dtype={np.dtype(dt).name})"
    s = getattr(jnp, np.dtype(dt).name)(3)
    assert s.dtype == np.dtype(dt) and not s.weak_type
    assert np.dtype(getattr(jnp, np.dtype(dt).name)) == np.dtype(dt)
    z = jnp.zeros((2, 3), dt)
    check(z, np.zeros((2, 3), dt))
    check(jnp.arange(5, dtype=dt), np.arange(5, dtype=dt))
    check(jnp.full((2,), 7, dtype=dt), np.full((2,), 7, dt))


def test_image_like_uint8():
    img = np.arange(48, dtype=np.uint8).reshape(4, 4, 3) * 5
    a = jnp.array(img, dtype=jnp.uint8)
    check(a, img)
    # JAX 0.10.2 (eager too) multiplies by the rounded reciprocal: XLA's A / broadcast(B) => A * broadcast(1 / B)
    check(a.astype(jnp.float32) / 255.0, img.astype(np.float32) * (np.float32(1) / np.float32(255.0)))
    check(jnp.mean(a.astype(jnp.float32), axis=(0, 1)), img.astype(np.float32).mean(axis=(0, 1)))


# ---------------------------------------------------------------------------------------- promotion


def test_weak_scalars_keep_small_dtypes():
    i8 = jnp.arange(3, dtype=jnp.int8)
    assert (2 * i8).dtype == np.int8 and (i8 + 1).dtype == np.int8
    r = jnp.int8(3) + 1
    assert r.dtype == np.int8 and not r.weak_type and int(r) == 4
    assert (i8 + 3.5).dtype == np.float32
    assert (jnp.uint8(250) + 10).dtype == np.uint8 and int(jnp.uint8(250) + 10) == 4


@pytest.mark.parametrize("a,b,want", [
    (np.uint8, np.int8, np.int16), (np.uint8, np.uint16, np.uint16), (np.uint16, np.int8, np.int32),
    (np.uint16, np.int16, np.int32), (np.int8, np.int16, np.int16), (np.uint8, np.int32, np.int32),
    (np.uint16, np.uint32, np.uint32), (np.int16, np.uint32, np.int32), (np.int8, np.float32, np.float32),
    (np.bool_, np.uint8, np.uint8),
])
def test_array_promotion(a, b, want):
    x = jnp.ones(2, a)
    y = jnp.ones(2, b)
    assert (x + y).dtype == np.dtype(want)
    assert (y + x).dtype == np.dtype(want)
    assert jnp.promote_types(a, b) == np.dtype(want if want != np.int32 or b != np.uint32 else np.int64)


def test_promote_types_not_canonicalized():
    assert jnp.promote_types(np.int16, np.uint32) == np.dtype(np.int64)
    assert jnp.promote_types(np.uint8, int) == np.dtype(np.uint8)
    assert jnp.promote_types(np.int8, float) == np.dtype(np.float64)


# --------------------------------------------------------------------------------------- arithmetic


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_wrapping_arithmetic(dt):
    x = full_range(dt, seed=1)
    y = full_range(dt, seed=2)
    with np.errstate(over="ignore"):
        for f, g in [(jnp.add, np.add), (jnp.subtract, np.subtract), (jnp.multiply, np.multiply),
                     (jnp.maximum, np.maximum), (jnp.minimum, np.minimum),
                     (jnp.bitwise_and, np.bitwise_and), (jnp.bitwise_or, np.bitwise_or),
                     (jnp.bitwise_xor, np.bitwise_xor)]:
            check(both(f, jnp.array(x), jnp.array(y)), g(x, y))
        check(both(jnp.negative, jnp.array(x)), np.negative(x))
        check(both(jnp.bitwise_not, jnp.array(x)), np.bitwise_not(x))
        check(both(lambda a: a * a, jnp.array(x)), x * x)
        check(both(lambda a: lax.integer_pow(a, 3), jnp.array(x)), x * x * x)
        for op in ("eq", "ne", "lt", "le", "gt", "ge"):
            check(both(getattr(lax, op), jnp.array(x), jnp.array(y)), getattr(np, {"eq": "equal", "ne": "not_equal",
                  "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}[op])(x, y))
    if np.dtype(dt).kind == "i":
        with np.errstate(over="ignore"):
            check(both(jnp.abs, jnp.array(x)), np.abs(x))
        check(both(jnp.sign, jnp.array(x)), np.sign(x))
    else:
        check(both(jnp.sign, jnp.array(x)), (x != 0).astype(dt))


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_scalar_wraps(dt):
    info = np.iinfo(dt)
    a = jnp.array([info.max], dtype=dt) + jnp.array(1, dtype=dt)
    check(a, np.array([info.min], dt))
    b = jnp.array([info.min], dtype=dt) - 1
    check(b, np.array([info.max], dt))


def _xla_div(a, b, dt, rem):
    info = np.iinfo(dt)
    out = []
    for p, q in zip(a.tolist(), b.tolist()):
        if q == 0:
            out.append(p if rem else -1)
        elif info.min < 0 and p == info.min and q == -1:
            out.append(0 if rem else info.min)
        else:
            qq = abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1)
            out.append(p - qq * q if rem else qq)
    return np.array(out, dtype=np.int64).astype(dt)


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_div_rem_xla_semantics(dt):
    x = full_range(dt, seed=3)
    y = full_range(dt, seed=4)
    y[::5] = 0
    info = np.iinfo(dt)
    if info.min < 0:
        x[:3] = info.min
        y[:3] = -1
    check(both(lax.div, jnp.array(x), jnp.array(y)), _xla_div(x, y, dt, False))
    check(both(lax.rem, jnp.array(x), jnp.array(y)), _xla_div(x, y, dt, True))
    nz = y != 0
    if info.min < 0:
        nz &= ~((x == info.min) & (y == -1))
    with np.errstate(over="ignore"):
        check(jnp.floor_divide(jnp.array(x[nz]), jnp.array(y[nz])), np.floor_divide(x[nz], y[nz]))
        check(jnp.remainder(jnp.array(x[nz]), jnp.array(y[nz])), np.remainder(x[nz], y[nz]))


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_shifts(dt):
    bits = np.iinfo(dt).bits
    udt = np.dtype(f"u{bits // 8}")
    sdt = np.dtype(f"i{bits // 8}")
    x = full_range(dt, n=40, seed=5)
    amounts = np.arange(40) % (2 * bits + 2)
    if np.dtype(dt).kind == "i":
        amounts[::7] = -1
    s = amounts.astype(dt)
    u = s.astype(np.int64) & ((1 << bits) - 1)   # the amount read as unsigned
    xu = x.view(udt).astype(np.int64)
    xs = x.view(sdt).astype(np.int64)
    mask = (1 << bits) - 1

    def wrap(v):
        return (np.asarray(v, np.int64) & mask).astype(udt).view(dt)

    k = np.minimum(u, bits)
    check(both(lax.shift_left, jnp.array(x), jnp.array(s)), wrap(np.where(u >= bits, 0, xu << k)))
    check(both(lax.shift_right_logical, jnp.array(x), jnp.array(s)), wrap(np.where(u >= bits, 0, xu >> k)))
    check(both(lax.shift_right_arithmetic, jnp.array(x), jnp.array(s)), wrap(xs >> np.minimum(u, bits - 1)))


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_population_count(dt):
    x = full_range(dt, seed=6)
    bits = np.iinfo(dt).bits
    want = np.array([bin(int(v) & ((1 << bits) - 1)).count("1") for v in x], dtype=dt)
    check(both(lax.population_count, jnp.array(x)), want)


# ---------------------------------------------------------------------------------------- conversion


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_float_to_small_int_saturates(dt):
    info = np.iinfo(dt)
    f = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, info.max + 0.9, info.min - 0.9, 2.7, -2.7, 0.5,
                  info.max + 1.0, info.min - 1.0, -0.0], np.float32)
    want = np.nan_to_num(np.trunc(f.astype(np.float64)), nan=0.0, posinf=info.max, neginf=info.min)
    want = np.clip(want, info.min, info.max).astype(dt)
    check(both(lambda a: a.astype(dt), jnp.array(f)), want)
    check(both(lambda a: lax.convert_element_type(a, dt), jnp.array(f.astype(np.float64) if config.jax_enable_x64
                                                                     else f)), want)


@pytest.mark.parametrize("src", SMALL, ids=IDS)
@pytest.mark.parametrize("dst", SMALL + [np.int32, np.uint32, np.float32, np.bool_],
                         ids=IDS + ["i32", "u32", "f32", "bool"])
def test_int_conversions_wrap(src, dst):
    x = full_range(src, seed=7)
    with np.errstate(over="ignore"):
        want = x.astype(dst)
    check(both(lambda a: a.astype(dst), jnp.array(x)), want)


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_wide_to_small_wraps(dt):
    x = np.array([0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 300, -300], np.int32)
    check(both(lambda a: a.astype(dt), jnp.array(x)), x.astype(dt))
    b = np.array([True, False, True])
    check(both(lambda a: a.astype(dt), jnp.array(b)), b.astype(dt))


def test_bitcast_equal_widths():
    x = np.array([-1, 5, -128], np.int8)
    check(lax.bitcast_convert_type(jnp.array(x), np.uint8), x.view(np.uint8))
    y = np.array([-1, 300], np.int16)
    check(cranax.jit(lambda a: lax.bitcast_convert_type(a, np.uint16))(jnp.array(y)), y.view(np.uint16))


# ---------------------------------------------------------------------------------------- reductions


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_reductions(dt):
    x = full_range(dt, n=50, seed=8).reshape(5, 10)
    acc = np.uint32 if np.dtype(dt).kind == "u" else np.int32
    with np.errstate(over="ignore"):
        check(both(jnp.sum, jnp.array(x)), np.sum(x.astype(acc), dtype=acc))
        check(both(lambda a: jnp.sum(a, axis=1), jnp.array(x)), np.sum(x.astype(acc), axis=1, dtype=acc))
        check(both(lambda a: jnp.prod(a, axis=0), jnp.array(x)), np.prod(x.astype(acc), axis=0, dtype=acc))
        check(both(lambda a: jnp.cumsum(a, axis=1), jnp.array(x)), np.cumsum(x.astype(acc), axis=1, dtype=acc))
    check(both(jnp.max, jnp.array(x)), np.max(x))
    check(both(lambda a: jnp.min(a, axis=0), jnp.array(x)), np.min(x, axis=0))
    check(both(lambda a: jnp.argmax(a, axis=1), jnp.array(x)), np.argmax(x, axis=1).astype(np.int32))
    check(both(lambda a: jnp.argmin(a, axis=0), jnp.array(x)), np.argmin(x, axis=0).astype(np.int32))
    # lax reductions keep the dtype (and wrap)
    with np.errstate(over="ignore"):
        check(both(lambda a: lax.reduce_sum(a, (0, 1)), jnp.array(x)), np.sum(x, dtype=dt))
    m = jnp.mean(jnp.array(x))
    assert m.dtype == np.float32
    np.testing.assert_allclose(float(m), x.astype(np.float64).mean(), rtol=1e-6)


def test_reduction_dtypes_like_jax():
    assert jnp.sum(jnp.ones(3, dtype=jnp.int8)).dtype == np.int32
    assert jnp.sum(jnp.ones(3, dtype=jnp.uint8)).dtype == np.uint32
    assert jnp.sum(jnp.ones(3, dtype=jnp.int16)).dtype == np.int32
    assert jnp.sum(jnp.ones(3, dtype=jnp.uint16)).dtype == np.uint32
    assert jnp.prod(jnp.full(3, 2, dtype=jnp.int8)).dtype == np.int32
    assert int(jnp.prod(jnp.full(3, 2, dtype=jnp.int8))) == 8
    assert jnp.max(jnp.array([1, 5, 3], dtype=jnp.int8)).dtype == np.int8
    assert jnp.sum(jnp.ones(3, dtype=jnp.int8), dtype=jnp.int8).dtype == np.int8
    assert jnp.cumsum(jnp.ones(3, dtype=jnp.uint8)).dtype == np.uint32


def test_reduction_dtypes_x64():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    try:
        assert jnp.sum(jnp.ones(3, dtype=jnp.int8)).dtype == np.int64
        assert jnp.sum(jnp.ones(3, dtype=jnp.uint8)).dtype == np.uint32
        assert jnp.array([1, 2], dtype=jnp.int16).dtype == np.int16
    finally:
        config.update("jax_enable_x64", old)


def test_large_reduction_threads():
    # Big enough for the threaded (chunked) reduction path.
    x = (np.arange(3_000_000) % 251).astype(np.uint8)
    check(lax.reduce_max(jnp.array(x), (0,)), np.max(x))
    check(jnp.sum(jnp.array(x)), np.sum(x, dtype=np.uint32))
    with np.errstate(over="ignore"):
        check(lax.reduce_sum(jnp.array(x), (0,)), np.sum(x, dtype=np.uint8))
        y = (np.arange(3_000_000) % 3000 - 1500).astype(np.int16)
        check(lax.reduce_sum(jnp.array(y), (0,)), np.sum(y, dtype=np.int16))


# ------------------------------------------------------------------------------ indexing and library


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_indexing_and_shape_ops(dt):
    x = full_range(dt, n=24, seed=9).reshape(4, 6)
    a = jnp.array(x)
    check(a[1], x[1])
    check(a[:, 2:5], x[:, 2:5])
    idx = np.array([3, 0, 2])
    check(both(lambda v: v[jnp.array(idx)], a), x[idx])
    check(a.T, x.T)
    check(jnp.concatenate([a, a], axis=0), np.concatenate([x, x], axis=0))
    check(jnp.pad(a, ((1, 0), (0, 2))), np.pad(x, ((1, 0), (0, 2))))
    check(jnp.reshape(a, (6, 4)), x.reshape(6, 4))
    check(jnp.where(a > 0, a, jnp.zeros_like(a)), np.where(x > 0, x, np.zeros_like(x)))
    y = x.copy()
    y[[0, 2], 1] = 7
    check(a.at[jnp.array([0, 2]), 1].set(7), y)
    z = x.copy()
    with np.errstate(over="ignore"):
        np.add.at(z, (np.array([0, 0, 3]), 2), np.array(5, dt))
    check(a.at[jnp.array([0, 0, 3]), 2].add(5), z)
    check(jnp.sort(a, axis=1), np.sort(x, axis=1))
    check(jnp.flip(a, 0), x[::-1])
    # out-of-bounds gather fill is the minimum signed / maximum unsigned value, as in JAX
    info = np.iinfo(dt)
    fill = info.min if info.min < 0 else info.max
    g = a.at[jnp.array([0, 10])].get(mode="fill")
    check(g, np.stack([x[0], np.full(6, fill, dt)]))


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_integer_matmul(dt):
    x = full_range(dt, n=12, seed=10).reshape(3, 4)
    y = full_range(dt, n=8, seed=11).reshape(4, 2)
    with np.errstate(over="ignore"):
        want = (x.astype(np.int64) @ y.astype(np.int64)).astype(dt)
    check(both(jnp.matmul, jnp.array(x), jnp.array(y)), want)
    check(both(jnp.dot, jnp.array(x[0]), jnp.array(y[:, 0])), want[0, 0])


def test_iota_and_control_flow():
    check(lax.iota(np.int8, 5), np.arange(5, dtype=np.int8))
    check(jnp.arange(300, dtype=np.uint8)[-3:], np.arange(300).astype(np.uint8)[-3:])

    def body(i, c):
        return c * jnp.uint8(3)
    r = lax.fori_loop(0, 10, body, jnp.uint8(1))
    assert r.dtype == np.uint8 and int(r) == (3 ** 10) % 256
    out = lax.cond(jnp.int8(1) > 0, lambda v: v + 1, lambda v: v - 1, jnp.int16(7))
    assert out.dtype == np.int16 and int(out) == 8
    s = lax.scan(lambda c, v: (c + v, c), jnp.int8(0), jnp.arange(20, dtype=np.int8))
    check(s[0], np.array(np.arange(20).sum() % 256 - 256 * ((np.arange(20).sum() % 256) > 127), np.int8))


def test_select_n_with_small_ints():
    p = jnp.array([True, False, True])
    check(lax.select(p, jnp.array([1, 2, 3], np.int8), jnp.array([4, 5, 6], np.int8)), np.array([1, 5, 3], np.int8))


# ------------------------------------------------------------------------------------------- jaxprs


@pytest.mark.parametrize("dt", SMALL, ids=IDS)
def test_jaxpr_printing(dt):
    s = str(cranax.make_jaxpr(lambda a: a + 1)(jnp.zeros(2, dt)))
    assert f"a:{SHORT[dt]}[2]" in s
    assert f"1:{SHORT[dt]}[]" in s
    s2 = str(cranax.make_jaxpr(jnp.sum)(jnp.zeros(3, dt)))
    acc = "u32" if np.dtype(dt).kind == "u" else "i32"
    assert f"new_dtype={'uint32' if acc == 'u32' else 'int32'}" in s2


def test_unsupported_dtypes_still_raise():
    for dt, name in [(np.uint64, "uint64")]:
        with pytest.raises(TypeError, match=name):
            jnp.array([1, 2], dtype=dt)
        with pytest.raises(TypeError, match=name):
            jnp.zeros(2, dt)
