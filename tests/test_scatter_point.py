"""One-element scatters (`x.at[i].set/add/mul/min/max`, nonzero's counting scatter) and cumulative ops on
the library's fast loops: every combiner and mode against NumPy's sequential oracles (duplicates combine in
index order), dropped updates, and the in-place path (a scatter writes into its operand's buffer only when
nothing else can read it: intermediates the plan no longer needs, never the caller's arrays or a live value)."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax

IDX = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64]


def np_scatter(x, i, u, op, mode):
    """JAX's `x.at[i].<op>(u)` sequentially: negatives wrap once, then clip or drop."""
    n = x.shape[0]
    x = x.copy()
    i = np.asarray(i).astype(np.int64)
    i = np.where(i < 0, i + n, i)
    for k, v in zip(i, np.broadcast_to(u, i.shape)):
        if mode == "clip":
            k = min(max(k, 0), n - 1)
        elif not 0 <= k < n:
            continue
        x[k] = {"set": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
                "min": min, "max": max}[op](x[k], v)
    return x


@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("mode", ["clip", "drop", "promise_in_bounds"])
@pytest.mark.parametrize("idt", IDX)
def test_point_scatter_combiners_modes_and_index_dtypes(op, mode, idt):
    rng = np.random.RandomState(1)
    n = 50
    x = rng.randn(n).astype(np.float32)
    lo = -70 if np.issubdtype(idt, np.signedinteger) else 0
    i = rng.randint(lo, 70 if mode != "promise_in_bounds" else n, 400).astype(idt)  # many duplicates
    if mode == "promise_in_bounds" and lo < 0:
        i = np.clip(i, -n, n - 1).astype(idt)
    u = rng.randn(400).astype(np.float32)
    f = cranax.jit(lambda x, i, u: getattr(x.at[i], op)(u, mode=mode))
    want = np_scatter(x, i, u, op, "clip" if mode == "clip" else "drop")
    np.testing.assert_array_equal(np.asarray(f(x, i, u)), want)


def test_duplicates_add_in_index_order_and_sets_keep_the_last():
    x = np.zeros(4, np.float32)
    i = np.array([1, 1, 1, 3, 3], np.int32)
    u = np.array([1e8, 1.0, -1e8, 5.0, 7.0], np.float32)
    got = cranax.jit(lambda x, i, u: x.at[i].add(u))(x, i, u)
    np.testing.assert_array_equal(np.asarray(got), [0.0, 0.0, 0.0, 12.0])  # (1e8 + 1) - 1e8 in float32
    got = cranax.jit(lambda x, i, u: x.at[i].set(u))(x, i, u)
    np.testing.assert_array_equal(np.asarray(got), [0.0, -1e8, 0.0, 7.0])


def test_integer_and_bool_operands_and_empty_updates():
    rng = np.random.RandomState(2)
    x = rng.randint(-100, 100, 30).astype(np.int32)
    i = rng.randint(-40, 40, 200).astype(np.int32)
    u = rng.randint(-5, 5, 200).astype(np.int32)
    for op in ("add", "max", "min", "set"):
        got = cranax.jit(lambda x, i, u: getattr(x.at[i], op)(u))(x, i, u)
        np.testing.assert_array_equal(np.asarray(got), np_scatter(x, i, u, op, "drop"))
    b = rng.rand(30) > 0.5
    got = cranax.jit(lambda b, i: b.at[i].set(True))(b, i)
    np.testing.assert_array_equal(np.asarray(got), np_scatter(b, i, True, "set", "drop"))
    e = np.zeros(0, np.int32)
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda x, i: x.at[i].add(1))(x, e)), x)
    assert np.asarray(cranax.jit(lambda x, i: x.at[i].add(1))(np.zeros(0, np.int32), e)).shape == (0,)


def test_two_component_scatter_matches_numpy():
    rng = np.random.RandomState(3)
    x = rng.randn(7, 9).astype(np.float32)
    i = rng.randint(-9, 9, 300).astype(np.int32)
    j = rng.randint(-11, 11, 300).astype(np.int32)
    u = rng.randn(300).astype(np.float32)
    got = np.asarray(cranax.jit(lambda x, i, j, u: x.at[i, j].add(u))(x, i, j, u))
    want = x.copy()
    for a, b, v in zip(i, j, u):
        a, b = a + 7 if a < 0 else a, b + 9 if b < 0 else b
        if 0 <= a < 7 and 0 <= b < 9:
            want[a, b] += v
    np.testing.assert_array_equal(got, want)


def test_in_place_scatter_never_clobbers_what_is_still_read():
    rng = np.random.RandomState(4)
    x = rng.randn(1000).astype(np.float32)
    i = rng.randint(0, 1000, 3000).astype(np.int32)
    xa = jnp.asarray(x)
    # the operand is an intermediate read by nothing else: written in place
    got = cranax.jit(lambda x, i: (x * 2.0).at[i].add(1.0))(xa, i)
    np.testing.assert_array_equal(np.asarray(got), np_scatter(x * np.float32(2.0), i, np.float32(1.0), "add", "drop"))
    # the operand is still read after the scatter: it must keep its values
    got = cranax.jit(lambda x, i: (lambda y: y.at[i].set(0.0) + y)(x * 2.0))(xa, i)
    y = x * np.float32(2.0)
    np.testing.assert_array_equal(np.asarray(got), np_scatter(y, i, np.float32(0.0), "set", "drop") + y)
    # the caller's array, and a reshaped view of it, are never written
    for f in (lambda x, i: x.at[i].set(-1.0), lambda x, i: x.reshape(10, 100).reshape(-1).at[i].set(-1.0)):
        out = cranax.jit(f)(xa, i)
        np.testing.assert_array_equal(np.asarray(xa), x)
        np.testing.assert_array_equal(np.asarray(out), np_scatter(x, i, np.float32(-1.0), "set", "drop"))
    # the same intermediate scattered twice: each result from the unscattered values
    got = cranax.jit(lambda x, i: (lambda y: (y.at[i].add(1.0), y.at[i].mul(3.0)))(x + 1.0))(xa, i)
    y = x + np.float32(1.0)
    np.testing.assert_array_equal(np.asarray(got[0]), np_scatter(y, i, np.float32(1.0), "add", "drop"))
    np.testing.assert_array_equal(np.asarray(got[1]), np_scatter(y, i, np.float32(3.0), "mul", "drop"))


def test_scatter_in_loops_and_segment_sum():
    rng = np.random.RandomState(5)
    seg = rng.randint(0, 10, 500).astype(np.int32)
    v = rng.randn(500).astype(np.float32)
    got = cranax.jit(lambda v, s: cranax.ops.segment_sum(v, s, num_segments=10))(v, seg)
    want = np.zeros(10, np.float32)
    np.add.at(want, seg, v)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)

    def f(x, i):
        return lax.fori_loop(0, 5, lambda k, acc: acc.at[(i + k) % 40].add(1.0), x)
    x = np.zeros(40, np.float32)
    i = rng.randint(0, 40, 100).astype(np.int32)
    want = x.copy()
    for k in range(5):
        np.add.at(want, (i + k) % 40, 1.0)
    np.testing.assert_array_equal(np.asarray(cranax.jit(f)(x, i)), want)


@pytest.mark.parametrize("n", [0, 1, 1000, 100_003])
def test_nonzero_and_argwhere_with_size(n):
    rng = np.random.RandomState(n)
    x = rng.rand(n).astype(np.float32)
    for size in (0, 1, n // 2, n + 5):
        got = np.asarray(cranax.jit(lambda x: jnp.nonzero(x > 0.5, size=size, fill_value=-1)[0])(x))
        want = np.nonzero(x > 0.5)[0][:size]
        want = np.concatenate([want, np.full(size - want.size, -1)])
        np.testing.assert_array_equal(got, want)
    m = rng.rand(max(n // 10, 1), 10) > 0.7
    got = cranax.jit(lambda m: jnp.argwhere(m, size=m.size))(m)
    want = np.argwhere(m)
    np.testing.assert_array_equal(np.asarray(got)[:len(want)], want)
    np.testing.assert_array_equal(np.asarray(got)[len(want):], 0)


@pytest.mark.parametrize("dt", [np.int32, np.float32, np.float64, np.uint8])
def test_cumulative_ops_every_axis_and_direction(dt):
    rng = np.random.RandomState(6)
    x = (rng.rand(5, 6, 7) * 4).astype(dt)
    for axis in (0, 1, 2):
        for rev in (False, True):
            for name, ref in (("cumsum", np.cumsum), ("cumprod", np.cumprod),
                              ("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)):
                f = cranax.jit(lambda x: getattr(lax, name)(x, axis=axis, reverse=rev))
                xs = np.flip(x, axis) if rev else x
                want = ref(xs, axis=axis).astype(dt)
                want = np.flip(want, axis) if rev else want
                got = np.asarray(f(x))
                if dt in (np.float32, np.float64):
                    np.testing.assert_allclose(got, want, rtol=1e-5)
                else:
                    np.testing.assert_array_equal(got, want)


def test_scatters_into_loop_carries_in_place_keep_every_value():
    """A carry updated by a point scatter is written in place from the second iteration on (the loop holds
    it alone); what is still read elsewhere — the caller's array, a const, a carry aliased by another carry
    or a y, the old carry read after the scatter — keeps its values."""
    rng = np.random.RandomState(6)
    n = 300
    x = rng.randn(n).astype(np.float32)
    i = rng.randint(0, n, 700).astype(np.int32)
    xa, ia = jnp.asarray(x), jnp.asarray(i)

    def seq(x0, steps):
        out = x0.copy()
        for k in range(steps):
            out[i[k]] += np.float32(1.0)
        return out
    # fori_loop, scan and while_loop over the caller's array: the array keeps its values
    got = cranax.jit(lambda x: lax.fori_loop(0, 700, lambda k, c: c.at[ia[k]].add(1.0), x))(xa)
    np.testing.assert_array_equal(np.asarray(got), seq(x, 700))
    np.testing.assert_array_equal(np.asarray(xa), x)
    got = cranax.jit(lambda x, i: lax.scan(lambda c, j: (c.at[j].add(1.0), None), x, i)[0])(xa, i)
    np.testing.assert_array_equal(np.asarray(got), seq(x, 700))
    got = cranax.jit(lambda x: lax.while_loop(lambda s: s[0] < 700, lambda s: (s[0] + 1, s[1].at[ia[s[0]]].add(1.0)),
                                              (0, x))[1])(xa)
    np.testing.assert_array_equal(np.asarray(got), seq(x, 700))
    np.testing.assert_array_equal(np.asarray(xa), x)
    # the scanned carry also stacked as a y: every row its own snapshot
    ys = cranax.jit(lambda x, i: lax.scan(lambda c, j: (lambda d: (d, d))(c.at[j].set(-1.0)), x, i[:20])[1])(xa, i)
    snap = x.copy()
    for k in range(20):
        snap[i[k]] = -1.0
        np.testing.assert_array_equal(np.asarray(ys)[k], snap)
    # the old carry read after the scatter, a const scattered, two carries aliased, carries rotated
    got = cranax.jit(lambda x: lax.fori_loop(0, 30, lambda k, c: c.at[ia[k]].set(0.0) + 0.5 * c, x))(xa)
    want = x.copy()
    for k in range(30):
        old = want.copy()
        want[i[k]] = 0.0
        want = want + np.float32(0.5) * old
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = cranax.jit(lambda x: lax.fori_loop(0, 30, lambda k, c: c + x.at[ia[k]].add(1.0), jnp.zeros_like(x)))(xa)
    want = np.zeros_like(x)
    for k in range(30):
        t = x.copy()
        t[i[k]] += np.float32(1.0)
        want = want + t
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    got = cranax.jit(lambda x: lax.fori_loop(0, 40, lambda k, c: (lambda d: (d, d))(c[0].at[ia[k]].add(1.0)), (x, x)))(xa)
    np.testing.assert_array_equal(np.asarray(got[0]), seq(x, 40))
    np.testing.assert_array_equal(np.asarray(got[1]), seq(x, 40))
    got = cranax.jit(lambda x: lax.fori_loop(0, 41, lambda k, c: (c[1].at[ia[k]].add(1.0), c[0]), (x, -x)))(xa)
    a, b = x.copy(), -x
    for k in range(41):
        a, b = b.copy(), a
        a[i[k]] += np.float32(1.0)
    np.testing.assert_array_equal(np.asarray(got[0]), a)
    np.testing.assert_array_equal(np.asarray(got[1]), b)
    np.testing.assert_array_equal(np.asarray(xa), x)
