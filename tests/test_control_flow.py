"""Structured control flow: lax.cond / switch / while_loop / fori_loop / scan / map.

Oracles: the Python loops they replace (with NumPy), finite differences for gradients, per-example loops
for vmap, JAX's printed jaxprs (../shared/reference) and JAX's error classes and messages.
"""
import math
import os
import resource
import time

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import _core, lax


def stats():
    runs, fused, branches = _core._control_stats()
    return runs, fused, list(branches)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=tol,
                               atol=tol)


def fd_grad(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    flat = x.reshape(-1)
    for i in range(flat.size):
        e = np.zeros_like(flat)
        e[i] = eps
        hi = float(f(jnp.asarray((flat + e).reshape(x.shape), dtype=jnp.float32)))
        lo = float(f(jnp.asarray((flat - e).reshape(x.shape), dtype=jnp.float32)))
        g.reshape(-1)[i] = (hi - lo) / (2 * eps)
    return g


# ----------------------------------------------------------------------------------------------- jaxpr texts

COND_TEXT = """{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = mul 0.0:f32[] e in (f,) }
        { lambda ; g:f32[]. let  in (g,) }
      )
    ] c a
  in (d,) }"""

FORI_TEXT = """{ lambda ; a:f32[] b:i32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let
          g:i32[] = add d 1:i32[]
          h:f32[] = mul f 2.0:f32[]
        in (g, e, h) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i32[] j:i32[] k:f32[]. let
          l:bool[] = lt i j
        in (l,) }
      cond_nconsts=0
    ] 0:i32[] b a
  in (c,) }"""


def test_cond_jaxpr_matches_jax():
    f = lambda x: lax.cond(x > 0, lambda v: v, lambda v: 0.0 * v, x)  # noqa: E731
    assert str(jax.make_jaxpr(f)(jnp.array(3.0))) == COND_TEXT


def test_fori_loop_traced_bounds_jaxpr_matches_jax():
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2., x)  # noqa: E731
    assert str(jax.make_jaxpr(f)(1., 3)) == FORI_TEXT


def test_fori_loop_static_bounds_is_a_scan():
    # JAX 0.10.2's text (its scan equation has no linear/_split_transpose params)
    assert str(jax.make_jaxpr(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2., x))(1.)) == """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d 2.0:f32[]
        in (e, f) }
      length=3
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }"""


def test_scan_jaxpr_params_and_layout():
    # JAX 0.10.2's text: the weak carry is made strong at each use
    text = str(jax.make_jaxpr(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0., xs))(jnp.arange(3.)))
    assert text == """\
{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          g:f32[] = add f e
          h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          i:f32[] = mul h e
        in (g, i) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
  in (b, c) }"""


def test_closed_over_values_become_leading_operands():
    def f(x, y):
        return lax.cond(x > 0, lambda v: v + y, lambda v: v - 1.0, x)
    jaxpr = jax.make_jaxpr(f)(1.0, 2.0)
    eqn = jaxpr.eqns[-1]
    assert eqn.primitive.name == "cond"
    assert len(eqn.invars) == 3   # index, y (const), x
    for b in eqn.params["branches"]:
        assert len(b.in_avals) == 2 and not b.consts


# ----------------------------------------------------------------------------------------------- cond / switch

def relu_cond(x):
    return lax.cond(x > 0, lambda v: v, lambda v: 0.0 * v, x)


def test_seed_relu_where_and_cond():
    where = jax.jit(lambda x: jnp.where(x > 0, x, 0.0 * x))
    cond = jax.jit(relu_cond)
    for f in (where, cond, relu_cond):
        assert float(f(jnp.array(3.0))) == 3.0
        r = float(f(jnp.array(-2.0)))
        assert r == 0.0 and math.copysign(1.0, r) == -1.0


@pytest.mark.parametrize("jit", [False, True])
def test_cond_against_python(jit):
    def f(p, x, y):
        return lax.cond(p, lambda a, b: (a * b, {"s": a + b}), lambda a, b: (a - b, {"s": a / b}), x, y)

    def ref(p, x, y):
        return (x * y, {"s": x + y}) if p else (x - y, {"s": x / y})
    g = jax.jit(f) if jit else f
    x, y = np.float32(3.0), np.float32(4.0)
    for p in (True, False):
        out, want = g(p, x, y), ref(p, x, y)
        close(out[0], want[0])
        close(out[1]["s"], want[1]["s"])


def test_cond_operand_forms_and_predicates():
    assert float(lax.cond(True, lambda x: x + 1.0, lambda x: x - 1.0, 1.0)) == 2.0
    assert float(lax.cond(False, lambda: 1.0, lambda: 2.0)) == 2.0
    assert int(lax.cond(3, lambda: 1, lambda: 2)) == 1
    assert int(lax.cond(0, lambda: 1, lambda: 2)) == 2
    a, b = lax.cond(True, lambda x: (x[0], 0), lambda x: x, (1, 1))
    assert int(a) == 1 and int(b) == 0 and isinstance(b, jax.Array)
    f = jax.jit(lambda p, x: lax.cond(p, lambda a, b: a + b, lambda a, b: a - b, x, 2.0))
    assert float(f(True, 5.0)) == 7.0 and float(f(False, 5.0)) == 3.0
    # an array operand closed over by one branch only
    w = jnp.arange(3.0)
    close(lax.cond(True, lambda x: x + w, lambda x: x, jnp.ones(3)), [1, 2, 3])
    close(jax.jit(lambda p: lax.cond(p, lambda: w * 2, lambda: w))(False), [0, 1, 2])


def test_nested_cond_and_cond_in_loop():
    def f(x):
        return lax.cond(x > 0, lambda v: lax.cond(v > 10, lambda u: u * 100, lambda u: u * 10, v),
                        lambda v: -v, x)
    for x in (-3.0, 5.0, 20.0):
        want = (x * 100 if x > 10 else x * 10) if x > 0 else -x
        assert float(f(x)) == want and float(jax.jit(f)(x)) == want

    def collatz_steps(n):
        def body(c):
            k, s = c
            k = lax.cond(k % 2 == 0, lambda k: k // 2, lambda k: 3 * k + 1, k)
            return k, s + 1
        return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]

    def ref(n):
        s = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            s += 1
        return s
    for n in (1, 6, 27):
        assert int(jax.jit(collatz_steps)(n)) == ref(n)


def test_only_the_taken_branch_runs():
    f = jax.jit(lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v * 2.0, x))
    f(True, 1.0)
    _, _, b0 = stats()
    for _ in range(3):
        assert float(f(True, 1.0)) == 2.0
    _, _, b1 = stats()
    assert b1[1] - b0[1] == 3 and b1[0] == b0[0]
    assert float(f(False, 1.0)) == 2.0
    _, _, b2 = stats()
    assert b2[0] - b1[0] == 1 and b2[1] == b1[1]


def test_untaken_branch_that_never_terminates_is_skipped():
    def forever(v):
        return lax.while_loop(lambda c: c > -1.0, lambda c: c + 1.0, v)
    g = jax.jit(lambda x: lax.cond(x > 0, lambda v: v, forever, x))
    assert float(g(5.0)) == 5.0


def test_expensive_branch_is_skipped():
    big = jnp.ones((2000, 2000))

    def expensive(x):
        def body(i, m):
            return jnp.sin(m) + x
        return lax.fori_loop(0, 50, body, big).sum()
    f = jax.jit(lambda x: lax.cond(x > 0, lambda v: v, expensive, x))
    f(1.0).block_until_ready()
    t = time.perf_counter()
    for _ in range(5):
        f(1.0).block_until_ready()
    cheap = (time.perf_counter() - t) / 5
    t = time.perf_counter()
    f(-1.0).block_until_ready()
    costly = time.perf_counter() - t
    assert costly > 20 * cheap


def test_switch_clamps_and_runs_one_branch():
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    assert [float(lax.switch(i, branches, 2.0)) for i in (-5, 0, 1, 2, 10)] == [3.0, 3.0, 20.0, -2.0, -2.0]
    f = jax.jit(lambda i: lax.switch(i, branches, 2.0))
    assert float(f(7)) == -2.0
    f(1)
    _, _, b0 = stats()
    f(1)
    _, _, b1 = stats()
    assert [y - x for x, y in zip(b0, b1)][:3] == [0, 1, 0]
    close(jax.vmap(lambda i: lax.switch(i, branches, 2.0))(jnp.array([0, 1, 2, 3, -1])), [3, 20, -2, -2, 3])
    assert float(lax.switch(0, [lambda: 4.0])) == 4.0


# ----------------------------------------------------------------------------------------------- while / fori

def test_seed_while_loop_under_jit():
    @jax.jit
    def g(x, n):
        i = lax.while_loop(lambda i: i < n, lambda i: i + 1, 0)
        return x + i
    assert int(g(10, 20)) == 30
    assert int(g(10, 0)) == 10      # zero trips
    assert int(g(10, -5)) == 10


@pytest.mark.parametrize("jit", [False, True])
def test_while_loop_against_python(jit):
    def f(x):
        return lax.while_loop(lambda s: s["n"] < 7, lambda s: {"n": s["n"] + 1, "v": s["v"] * 1.5 + s["n"]},
                              {"n": 0, "v": x})
    g = jax.jit(f) if jit else f
    out = g(jnp.arange(3.0))
    n, v = 0, np.arange(3.0, dtype=np.float32)
    while n < 7:
        n, v = n + 1, v * np.float32(1.5) + n
    assert int(out["n"]) == 7
    close(out["v"], v)
    assert int(lax.while_loop(lambda c: c < 10, lambda c: c + 3, 0)) == 12
    a, b = lax.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 2.0), (0, 1.0))
    assert int(a) == 5 and float(b) == 32.0


def test_nested_loops():
    def f(n):
        def outer(i, acc):
            return lax.fori_loop(0, i, lambda j, a: a + i * j, acc)
        return lax.fori_loop(0, n, outer, 0)

    def ref(n):
        return sum(i * j for i in range(n) for j in range(i))
    assert int(f(6)) == ref(6)
    assert int(jax.jit(f)(9)) == ref(9)
    # traced inner bound inside a scan-based outer loop
    h = jax.jit(lambda n: lax.fori_loop(0, 4, lambda i, a: a + lax.fori_loop(0, n, lambda j, b: b + 1, 0), 0))
    assert int(h(5)) == 20


def test_fori_loop_forms():
    assert float(lax.fori_loop(0, 5, lambda i, c: c + i, 0.0)) == 10.0
    assert int(jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i * i, 0))(4)) == 14
    r = lax.fori_loop(0, 5, lambda i, c: c + 0.5, 0)    # weak int init promoted to float32
    assert float(r) == 2.5 and r.dtype == np.float32
    close(lax.fori_loop(0, 3, lambda i, a: a.at[i].set(i * 10), jnp.zeros(4, dtype=jnp.int32)), [0, 10, 20, 0])
    assert float(lax.fori_loop(5, 2, lambda i, c: c + 1.0, 0.0)) == 0.0      # zero trips, static
    assert float(jax.jit(lambda lo: lax.fori_loop(lo, 2, lambda i, c: c + 1.0, 0.0))(5)) == 0.0
    assert float(lax.fori_loop(2, 5, lambda i, c: c * i, 1.0)) == 24.0


def test_million_iteration_scalar_loop_is_fused_and_fast():
    f = jax.jit(lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + 0.5), (0, 0.0)))
    f(10)
    _, fused0, _ = stats()
    t = time.perf_counter()
    i, v = f(1_000_000)
    v.block_until_ready()
    dt = time.perf_counter() - t
    assert int(i) == 1_000_000 and float(v) == 500000.0
    assert stats()[1] == fused0 + 1
    assert dt < 0.5, dt


def test_array_carry_loop_runs_in_constant_memory():
    f = jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.5 + 1.0, x))
    x = jnp.zeros(4096)
    f(x, 10).block_until_ready()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = f(x, 50_000)
    close(r[:3], [2.0, 2.0, 2.0])
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 100_000   # 50k iterations x 16 KB would be 800 MB if buffers leaked


def test_fused_and_stepwise_loops_agree():
    def prog(c):
        return lax.fori_loop(0, 37, lambda i, x: jnp.sin(x) * 1.25 + i.astype(jnp.float32) / (x * x + 1.0), c)
    a = jax.jit(prog)(jnp.float32(0.3717))
    os.environ["CRANAX_NO_FUSED_LOOPS"] = "1"
    try:
        _, f0, _ = stats()
        b = jax.jit(lambda c: prog(c) + 0.0)(jnp.float32(0.3717))   # a different program: compiled anew
        assert stats()[1] == f0
    finally:
        del os.environ["CRANAX_NO_FUSED_LOOPS"]
    # both multiply-adds (sin(x) * 1.25 + q, x * x + 1) round once, as XLA's contracted loop body: the map is
    # chaotic, so the unfused NumPy loop ends far away (17.02); JAX 0.10.2 gives 26.665009 (bits 1104499184)
    def fma(p, q, r):
        return np.float32(np.float64(p) * np.float64(q) + np.float64(r))
    x = np.float32(0.3717)
    for i in range(37):
        x = fma(np.sin(x), np.float32(1.25), np.float32(i) / fma(x, x, np.float32(1)))
    assert np.float32(x).view(np.uint32) == 1104499184
    close(a, x, 1e-5)
    close(b, x, 1e-5)


def test_small_array_loops_are_fused_and_match_stepwise_bits():
    # f32[4] / f32[2, 3] carries (at most 16 elements): one compiled function, no sub-plan runs; the values
    # are the step-by-step path's bit for bit (math, broadcasts, reductions, iota) and NumPy's within rounding.
    def wl(x, n):
        def body(c):
            i, v = c
            return i + 1, jnp.tanh(v) * 0.75 + jnp.sin(v * 1.5) * 0.5 + 0.125
        return lax.while_loop(lambda c: (c[0] < n) & (c[1].sum() < 50.0), body, (0, x))

    def fl(m, r):
        def body(i, c):
            rows = c.max(axis=1, keepdims=True)
            return c * 0.5 - rows * 0.25 + r + jnp.arange(3.0) * i.astype(jnp.float32) * 0.01
        return lax.fori_loop(0, 23, body, m)

    x = np.linspace(-1, 1, 4).astype(np.float32)
    m = np.arange(6, dtype=np.float32).reshape(2, 3) / 3.0 - 1.0
    r = np.array([0.3, -0.2, 0.1], np.float32)
    for f, args in ((wl, (x, 40)), (fl, (m, r))):
        _same_bits(*_fused_and_stepwise(f, *args))
    i, v = 0, x.astype(np.float64)
    while i < 40 and v.sum() < 50.0:
        i, v = i + 1, np.tanh(v) * 0.75 + np.sin(v * 1.5) * 0.5 + 0.125
    got = jax.jit(wl)(x, 40)
    assert int(got[0]) == i
    close(got[1], v, 1e-5)
    c = m.astype(np.float64)
    for i in range(23):
        c = c * 0.5 - c.max(axis=1, keepdims=True) * 0.25 + r + np.arange(3.0) * i * 0.01
    close(jax.jit(fl)(m, r), c, 1e-5)


@pytest.mark.parametrize("n", [5, 13, 16])
def test_fused_small_loop_sums_match_stepwise_bits(n):
    # sums the loop kernels vectorize along the reduced axis (lanes, unroll, scalar tail) in a fused loop
    def f(x):
        return lax.fori_loop(0, 50, lambda i, c: c * 0.9 + jnp.sin(c) * 0.1 - c.sum() * 0.01 + c[0] * 0.001, x)
    x = (np.arange(n, dtype=np.float32) - 3.3) * np.float32(0.37)
    jax.clear_caches()
    fused0 = stats()[1]
    a = np.asarray(jax.jit(f)(x))
    assert stats()[1] == fused0 + 1
    os.environ["CRANAX_NO_FUSED_LOOPS"] = "1"
    try:
        jax.clear_caches()
        b = np.asarray(jax.jit(f)(x))
    finally:
        del os.environ["CRANAX_NO_FUSED_LOOPS"]
        jax.clear_caches()
    _same_bits(a, b)
    c = x.astype(np.float64)
    for _ in range(50):
        c = c * 0.9 + np.sin(c) * 0.1 - c.sum() * 0.01 + c[0] * 0.001
    close(a, c, 1e-5)


def test_trip_count_does_not_change_the_program():
    f = lambda n: lambda x: lax.fori_loop(0, n, lambda i, c: c * 1.01 + 1.0, x)  # noqa: E731
    j10, j10k = jax.make_jaxpr(f(10))(1.0), jax.make_jaxpr(f(10_000))(1.0)
    assert len(j10.eqns) == len(j10k.eqns) == 1
    assert str(j10).replace("length=10", "length=10000") == str(j10k)


# ----------------------------------------------------------------------------------------------- scan / map

@pytest.mark.parametrize("reverse", [False, True])
def test_scan_against_python(reverse):
    def step(c, x):
        c = c * 0.5 + x["a"] * x["b"]
        return c, (c, x["a"] - c)
    xs = {"a": np.arange(5.0, dtype=np.float32), "b": np.linspace(1, 2, 5, dtype=np.float32)}
    carry, (y1, y2) = lax.scan(step, 1.0, xs, reverse=reverse)
    c, ys1, ys2 = np.float32(1.0), [None] * 5, [None] * 5
    order = range(4, -1, -1) if reverse else range(5)
    for i in order:
        c = c * np.float32(0.5) + xs["a"][i] * xs["b"][i]
        ys1[i], ys2[i] = c, xs["a"][i] - c
    close(carry, c)
    close(y1, ys1)
    close(y2, ys2)
    jc, (jy1, _) = jax.jit(lambda xs: lax.scan(step, 1.0, xs, reverse=reverse))(xs)
    close(jc, c)
    close(jy1, ys1)


def test_scan_forms():
    def step(c, x):
        c = c + x
        return c, c
    xs = jnp.arange(1.0, 6.0)
    c, ys = lax.scan(step, 0.0, xs)
    assert float(c) == 15.0
    close(ys, np.cumsum(np.arange(1.0, 6.0)))
    c, ys = lax.scan(step, 0.0, xs, reverse=True)
    close(ys, [15, 14, 12, 9, 5])
    n, (a, b) = lax.scan(lambda n, x: (n + 1, (n, x)), 0, jnp.arange(5), reverse=True)
    assert int(n) == 5
    close(a, [4, 3, 2, 1, 0])
    close(b, [0, 1, 2, 3, 4])
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1, None, length=4)
    assert int(c) == 16
    close(ys, [1, 2, 4, 8])
    c, ys = lax.scan(lambda c, x: (c, None), 3.0, None, length=0)   # zero trips
    assert float(c) == 3.0 and ys is None
    c, ys = lax.scan(lambda c, x: (c + x, x * 2), 1.0, jnp.zeros((0,)))
    assert float(c) == 1.0 and ys.shape == (0,)
    # matrices as carries and xs, and a scan inside a scan
    def outer(c, row):
        s, _ = lax.scan(lambda a, v: (a + v, None), 0.0, row)
        return c + s, s
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    c, sums = jax.jit(lambda m: lax.scan(outer, 0.0, m))(m)
    assert float(c) == m.sum()
    close(sums, m.sum(1))


def test_map():
    close(lax.map(lambda x: x * x + 1.0, jnp.arange(4.0)), [1, 2, 5, 10])
    out = lax.map(lambda d: d["a"] @ d["b"], {"a": jnp.ones((3, 2, 2)), "b": jnp.ones((3, 2))})
    close(out, np.full((3, 2), 2.0))
    close(lax.map(lambda x: x.sum(), jnp.arange(6.0).reshape(3, 2), batch_size=3), [1, 5, 9])


def test_rnn_scan_matches_numpy():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 8)).astype(np.float32) * 0.3
    u = rng.standard_normal((8, 8)).astype(np.float32) * 0.3
    xs = rng.standard_normal((20, 8)).astype(np.float32)

    def cell(h, x):
        h = jnp.tanh(h @ w + x @ u)
        return h, h
    h, hs = jax.jit(lambda xs: lax.scan(cell, jnp.zeros(8), xs))(xs)
    hr = np.zeros(8, np.float32)
    for x in xs:
        hr = np.tanh(hr @ w + x @ u)
    close(h, hr, 1e-4)
    close(hs[-1], hr, 1e-4)


def _run_both_ways(f, *args):
    """``f(*args)`` compiled with loop bodies run in place and again step by step (a fresh compile); loops
    compiled whole (small scans over xs qualify) are turned off for both."""
    os.environ["CRANAX_NO_FUSED_LOOPS"] = "1"
    try:
        jax.clear_caches()
        d0 = _core._direct_loop_calls()
        direct = jax.tree_util.tree_map(np.asarray, jax.jit(f)(*args))
        ran_direct = _core._direct_loop_calls() > d0
        os.environ["CRANAX_NO_DIRECT_LOOPS"] = "1"
        jax.clear_caches()
        d0 = _core._direct_loop_calls()
        stepwise = jax.tree_util.tree_map(np.asarray, jax.jit(f)(*args))
        assert _core._direct_loop_calls() == d0
    finally:
        os.environ.pop("CRANAX_NO_DIRECT_LOOPS", None)
        del os.environ["CRANAX_NO_FUSED_LOOPS"]
        jax.clear_caches()
    return direct, stepwise, ran_direct


def _same_bits(a, b):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.reshape(-1).view(np.uint8), y.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("reverse", [False, True])
def test_in_place_scan_bodies_match_stepwise_and_numpy(reverse):
    rng = np.random.default_rng(3)
    h0 = rng.standard_normal(32).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float32) * 0.2
    u = rng.standard_normal((6, 32)).astype(np.float32) * 0.2
    xs = rng.standard_normal((9, 6)).astype(np.float32)

    def rnn(h0, w, u, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u)
            return h, (h, h.sum())
        return lax.scan(cell, h0, xs, reverse=reverse)

    def rotate(a, b, xs):
        # carries rotate and pass through; ys are an input carry, the xs row and a const
        def body(c, x):
            a, b, k = c
            return (b, a + b * 0.5, k), (a, x, w[0])
        return lax.scan(body, (a, b, a[:6]), xs, reverse=reverse)

    direct, stepwise, ran = _run_both_ways(rnn, h0, w, u, xs)
    assert ran
    _same_bits(direct, stepwise)
    h, hs, ss = h0, [None] * 9, [None] * 9
    for i in (range(8, -1, -1) if reverse else range(9)):
        h = np.tanh(h @ w + xs[i] @ u)
        hs[i], ss[i] = h, h.sum()
    close(direct[0], h, 1e-4)
    close(direct[1][0], np.stack(hs), 1e-4)
    close(direct[1][1], ss, 1e-4)

    a0, b0 = h0[:6], h0[6:12]
    direct, stepwise, ran = _run_both_ways(rotate, a0, b0, xs)
    assert ran
    _same_bits(direct, stepwise)
    a, b = a0, b0
    ys_a = [None] * 9
    for i in (range(8, -1, -1) if reverse else range(9)):
        ys_a[i] = a
        a, b = b, a + b * np.float32(0.5)
    close(direct[0][0], a)
    close(direct[0][1], b)
    close(direct[0][2], a0)
    close(direct[1][0], np.stack(ys_a))
    close(direct[1][1], xs)
    close(direct[1][2], np.tile(w[0], (9, 1)))


def test_in_place_while_loops_match_stepwise_and_python():
    # (a [20] @ [20, 20] product: above `gemm::TINY_FLOPS`, so the loop is not compiled whole)
    w = (np.arange(400, dtype=np.float32).reshape(20, 20) - 199.5) / 400.0

    def f(x, n):
        # an array carry updated by a product, a rotating pair and a counter
        def body(s):
            i, v, a, b = s
            return i + 1, jnp.tanh(v @ w) + 0.5, b, a * 0.5 + b
        return lax.while_loop(lambda s: (s[0] < n) & (s[1].sum() < 100.0), body, (0, x, x[:10], x[10:]))

    x = np.linspace(-1, 1, 20).astype(np.float32)
    for n in (0, 1, 7):
        direct, stepwise, ran = _run_both_ways(f, x, n)
        assert ran
        _same_bits(direct, stepwise)
        i, v, a, b = 0, x, x[:10], x[10:]
        while i < n and v.sum() < 100.0:
            i, v, a, b = i + 1, np.tanh(v @ w) + np.float32(0.5), b, a * np.float32(0.5) + b
        assert int(direct[0]) == i
        close(direct[1], v, 1e-5)
        close(direct[2], a)
        close(direct[3], b)


def test_small_products_match_numpy():
    rng = np.random.default_rng(4)
    cases = [((1, 128), (128, 128)), ((128,), (128, 128)), ((3, 5), (5, 48)), ((4, 17), (17, 240)),
             ((2, 1), (1, 16)), ((3, 5), (5, 37)), ((8, 17), (17, 130)), ((4, 0), (0, 16))]
    for ls, rs in cases:
        a = rng.standard_normal(ls).astype(np.float32)
        b = rng.standard_normal(rs).astype(np.float32)
        want = a.astype(np.float64) @ b.astype(np.float64)
        close(jax.jit(lambda a, b: a @ b)(a, b), want, 1e-4)
        close(jax.jit(lambda a, b: a.T.T @ b)(a, b), want, 1e-4)
    # lhs read transposed, and a batch of small products
    a = rng.standard_normal((7, 3)).astype(np.float32)
    b = rng.standard_normal((7, 48)).astype(np.float32)
    close(jax.jit(lambda a, b: a.T @ b)(a, b), a.T.astype(np.float64) @ b, 1e-4)
    a = rng.standard_normal((5, 2, 16)).astype(np.float32)
    b = rng.standard_normal((5, 16, 32)).astype(np.float32)
    close(jax.jit(jax.vmap(lambda a, b: a @ b))(a, b), np.einsum("bij,bjk->bik", a, b), 1e-4)


# ----------------------------------------------------------------------------------------------- errors

def test_branch_type_errors():
    with pytest.raises(TypeError, match="true_fun and false_fun output must have identical types"):
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0)
    with pytest.raises(TypeError, match="true_fun and false_fun output must have identical types"):
        lax.cond(True, lambda x: x, lambda x: jnp.stack([x, x]), 1.0)
    with pytest.raises(TypeError, match="same type structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(TypeError, match="branch 0 and 1 outputs must have identical types"):
        lax.switch(0, [lambda x: x, lambda x: x > 0], 1.0)


def test_predicate_errors():
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number, got float32"):
        lax.cond(1.5, lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        jax.jit(lambda x: lax.cond(x, lambda: 1.0, lambda: 2.0))(1.0)
    with pytest.raises(TypeError, match="Branch index must be scalar"):
        lax.switch(jnp.array([0, 1]), [lambda: 1.0, lambda: 2.0])
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c + 1.0, 1.0)
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c < jnp.ones(2), lambda c: c + 1.0, 1.0)


def test_carry_errors():
    # JAX's texts (tests/test_loop_and_jnp_jax_text.py compares whole messages)
    with pytest.raises(TypeError, match="while_loop body function carry input and carry output must have equal "
                                        "types") as e:
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.stack([c[1], c[1]])), (0, jnp.float32(1)))
    assert "The input carry component c[1] has type float32[] but" in str(e.value)
    assert "shapes do not match" in str(e.value)
    with pytest.raises(TypeError, match="while_loop body function carry input and carry output") as e:
        lax.while_loop(lambda c: c < 3, lambda c: (c + 1).astype(jnp.float32), jnp.int32(0))
    assert "dtypes do not match" in str(e.value)
    with pytest.raises(TypeError, match="scan body function carry input and carry output must have the same "
                                        "pytree structure") as e:
        lax.fori_loop(0, 3, lambda i, c: (c, c), 1.0)
    assert "The input carry component loop_carry[1] is a" in str(e.value)
    with pytest.raises(TypeError, match="scan body function carry input and carry output"):
        lax.scan(lambda c, x: (c.astype(jnp.int32), x), jnp.float32(0), jnp.ones(3))
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c, 0.0, jnp.ones(3))
    with pytest.raises(ValueError, match="disagrees with leading axis sizes"):
        lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=4)
    with pytest.raises(ValueError, match="different leading axis sizes"):
        lax.scan(lambda c, x: (c, x), 0.0, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match="no values to scan over"):
        lax.scan(lambda c, x: (c, x), 0.0, None)


def test_reverse_mode_of_while_loop_raises_jax_error():
    msg = "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop"
    with pytest.raises(ValueError, match=msg):
        jax.grad(lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x))(1.)
    with pytest.raises(ValueError, match=msg):
        jax.grad(lambda x: jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))(x, 3))(1.5)
    # concrete bounds are a scan: reverse mode works
    assert float(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))(1.5, 3)) == 4 * 1.5 ** 3


# ----------------------------------------------------------------------------------------------- autodiff

def test_grad_through_control_flow_conformance():
    assert float(jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x))(2.0)) == 32.0
    g = jax.grad(lambda x: lax.cond(x > 1.0, lambda v: v ** 2, lambda v: -v, x))
    assert float(g(2.0)) == 4.0 and float(g(0.5)) == -1.0
    g = jax.grad(lambda x: lax.scan(lambda c, w: (c * w + x, None), 1.0, jnp.array([1.0, 2.0, 3.0]))[0])(0.5)
    assert float(g) == 10.0
    p, t = jax.jvp(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1],
                   (2.0,), (1.0,))
    assert float(p) == 16.0 and float(t) == 32.0


def test_grads_match_finite_differences():
    xs = np.array([0.3, -1.2, 0.7, 2.0], np.float32)

    def f_cond(w):
        return lax.cond(w.sum() > 0, lambda v: jnp.sin(v).sum() * v[0], lambda v: (v * v).sum(), w)

    def f_switch(w):
        return lax.switch(2, [lambda v: v.sum(), lambda v: jnp.exp(v).sum(), lambda v: (jnp.cos(v) * v).sum()], w)

    def f_scan(w):
        c, ys = lax.scan(lambda c, x: (jnp.tanh(c * w[0] + x * w[1]), c * x), w[2], jnp.asarray(xs) * w[3])
        return c + ys.sum()

    def f_scan_rev_tree(w):
        c, ys = lax.scan(lambda c, x: ({"a": c["a"] * x + c["b"], "b": c["b"] * 0.9}, c["a"] * w[0]),
                         {"a": w[1], "b": w[2]}, jnp.asarray(xs) + w[3], reverse=True)
        return c["a"] + ys.sum()

    def f_fori(w):
        return lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * w[0] + c * w[1], w[2:]).sum()

    w0 = np.array([0.5, -0.3, 0.8, 1.1], np.float32)
    for f in (f_cond, f_switch, f_scan, f_scan_rev_tree, f_fori):
        g = jax.grad(f)(jnp.asarray(w0))
        close(g, fd_grad(f, w0), 2e-2)
        close(jax.jit(jax.grad(f))(jnp.asarray(w0)), g, 1e-5)


def test_jvp_of_while_matches_finite_differences():
    def f(x):
        return lax.while_loop(lambda c: c[1] < 50.0, lambda c: (c[0] * 1.1 + jnp.sin(c[1]), c[1] + c[0] + 1.0),
                              (x, 0.0))[0]
    x = 0.7
    _, t = jax.jvp(f, (x,), (1.0,))
    close(t, (float(f(x + 1e-3)) - float(f(x - 1e-3))) / 2e-3, 2e-2)


def test_jvp_of_cond_and_scan():
    p, t = jax.jvp(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), (1.0,), (2.0,))
    close(p, math.sin(1.0))
    close(t, 2 * math.cos(1.0))
    p, t = jax.jvp(lambda x: lax.scan(lambda c, y: (c * y, c), x, jnp.arange(1.0, 4.0))[0], (2.0,), (1.0,))
    assert float(p) == 12.0 and float(t) == 6.0


# ----------------------------------------------------------------------------------------------- vmap

def test_vmap_cond():
    ps = jnp.array([True, False, True])
    xs = jnp.arange(3.0)
    close(jax.vmap(lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v - 1.0, x))(ps, xs), [1, 0, 3])
    # unbatched predicate, batched operand
    close(jax.vmap(lambda x: lax.cond(True, lambda v: v * 2, lambda v: v, x))(xs), [0, 2, 4])
    # batched predicate computed from the operand, pytree outputs
    out = jax.vmap(lambda x: lax.cond(x > 0.5, lambda v: (v, v * 2), lambda v: (-v, v), x))(xs)
    close(out[0], [0, 1, 2])
    close(out[1], [0, 2, 4])
    # a branch whose output does not depend on the batched operand
    close(jax.vmap(lambda x: lax.cond(True, lambda v: 7.0, lambda v: v, x))(xs), [7, 7, 7])
    close(jax.jit(jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)))(ps, xs),
          [0, math.cos(1), math.sin(2)])


def test_vmap_while_runs_until_every_element_is_done():
    def f(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0 + 1.0), (0, x))
    ns = jnp.array([0, 3, 1, 5])
    xs = jnp.array([1.0, 2.0, 3.0, 4.0])
    i, v = jax.vmap(f)(ns, xs)
    want_i, want_v = [], []
    for n, x in zip([0, 3, 1, 5], [1.0, 2.0, 3.0, 4.0]):
        k = 0
        while k < n:
            k, x = k + 1, x * 2.0 + 1.0
        want_i.append(k)
        want_v.append(x)
    close(i, want_i)
    close(v, want_v)
    close(jax.jit(jax.vmap(f))(ns, xs)[1], want_v)
    # unbatched predicate, batched carry
    close(jax.vmap(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1])(xs),
          np.asarray(xs) ** 4)


def test_vmap_scan_and_fori():
    xs = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    c, ys = jax.vmap(lambda row: lax.scan(lambda c, x: (c + x, c * x), 0.0, row))(xs)
    close(c, xs.sum(1))
    want = np.stack([np.concatenate([[0.0], np.cumsum(r)[:-1]]) * r for r in xs])
    close(ys, want)
    # batched init only, xs unbatched
    c, ys = jax.vmap(lambda c0: lax.scan(lambda c, x: (c * x, c), c0, jnp.arange(1.0, 4.0)))(jnp.arange(3.0))
    close(c, np.arange(3.0) * 6)
    close(ys, np.outer(np.arange(3.0), [1, 1, 2]))
    # in_axes=1 xs
    c, _ = jax.vmap(lambda col: lax.scan(lambda c, x: (c + x, None), 0.0, col), in_axes=1)(xs)
    close(c, xs.sum(0))
    close(jax.vmap(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, 1.0))(jnp.arange(3.0)),
          [lax.fori_loop(0, 4, lambda i, c: c * x + i, 1.0) for x in (0.0, 1.0, 2.0)])


def test_vmap_cond_inside_fori_loop_with_random_predicate():
    from cranax import random

    def body_fn(i, state):
        key, x = state
        key, sub = random.split(key)
        pred = random.bernoulli(sub)
        y = jnp.abs(x) - 1.0
        return key, lax.cond(pred, lambda v: v, lambda v: v * 0.5, y)

    def g(key, x):
        return lax.fori_loop(0, 4, body_fn, (key, x))[1]
    keys = random.split(random.PRNGKey(0), 3)
    out = jax.vmap(g)(keys, jnp.ones((3, 4)))
    close(out, np.repeat([[-1.0], [-0.5], [-0.75]], 4, axis=1))


def test_grad_of_vmap_and_vmap_of_grad():
    f = lambda w, x: lax.scan(lambda c, y: (jnp.sin(c * w + y), None), 0.0, x)[0]  # noqa: E731
    xs = jnp.arange(6.0).reshape(2, 3) / 4
    per = jax.vmap(jax.grad(f), in_axes=(None, 0))(0.7, xs)
    for k in range(2):
        close(per[k], jax.grad(f)(0.7, xs[k]), 1e-5)
    total = jax.grad(lambda w: jax.vmap(f, in_axes=(None, 0))(w, xs).sum())(0.7)
    close(total, per.sum(), 1e-5)


def test_scalar_loops_with_branches_and_inner_loops_compile_to_one_function():
    def collatz_steps(n):
        def body(c):
            k, s = c
            k = lax.cond(k % 2 == 0, lambda k: k // 2, lambda k: 3 * k + 1, k)
            return k, s + 1
        return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]
    f = jax.jit(collatz_steps)
    f(6)
    runs0, fused0, _ = stats()
    assert int(f(27)) == 111
    runs1, fused1, _ = stats()
    assert (runs1 - runs0, fused1 - fused0) == (0, 1)
    g = jax.jit(lambda n: lax.fori_loop(0, n, lambda i, a: a + lax.fori_loop(0, i, lambda j, b: b + j, 0), 0))
    assert int(g(300)) == sum(j for i in range(300) for j in range(i))
    h = jax.jit(lambda x: lax.fori_loop(0, 10, lambda i, c: lax.switch(
        i % 3, [lambda v: v + 1.0, lambda v: v * 2.0, lambda v: v - 3.0], c), x))
    c = 1.0
    for i in range(10):
        c = [c + 1, c * 2, c - 3][i % 3]
    assert float(h(1.0)) == c


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_input_products_are_hoisted_out_of_the_loop(reverse):
    # An RNN cell's x @ U reads only the scanned input and a loop constant: the core computes it for every
    # step at once before the loop (one product instead of `length`), values as the Python loop's.
    rng = np.random.default_rng(3)
    H, L = 16, 37
    W = (rng.standard_normal((H, H)) * 0.2).astype(np.float32)
    U = (rng.standard_normal((H, 2 * H)) * 0.2).astype(np.float32)
    xs = rng.standard_normal((L, H)).astype(np.float32)

    def rnn(W, U, xs):
        def cell(h, x):
            z = x @ U
            h = jnp.tanh(h @ W + z[:H] * z[H:])
            return h, h.sum()
        return lax.scan(cell, jnp.zeros(H, jnp.float32), xs, reverse=reverse)

    f = jax.jit(rnn)
    text = f.lower(W, U, xs).compile().as_text()
    plan = text[text.index("plan "):]
    assert plan.index("dot_general") < plan.index("scan length")  # the hoisted product precedes the loop
    h, ys = f(W, U, xs)
    hn, ysn = np.zeros(H), np.zeros(L)
    for t in (range(L - 1, -1, -1) if reverse else range(L)):
        z = xs[t].astype(np.float64) @ U
        hn = np.tanh(hn @ W + z[:H] * z[H:])
        ysn[t] = hn.sum()
    np.testing.assert_allclose(np.asarray(h), hn, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ys), ysn, rtol=1e-4, atol=1e-4)
    # gradients through the hoisted product, against finite differences of the NumPy loop
    g = jax.grad(lambda U: jax.jit(rnn)(W, U, xs)[1].sum())(U)
    assert np.all(np.isfinite(np.asarray(g)))
    eps, (i, j) = 1e-3, (2, 5)
    def loss_np(Uv):
        hh, tot = np.zeros(H), 0.0
        for t in (range(L - 1, -1, -1) if reverse else range(L)):
            z = xs[t].astype(np.float64) @ Uv
            hh = np.tanh(hh @ W + z[:H] * z[H:])
            tot += hh.sum()
        return tot
    Up, Um = U.astype(np.float64).copy(), U.astype(np.float64).copy()
    Up[i, j] += eps
    Um[i, j] -= eps
    np.testing.assert_allclose(float(np.asarray(g)[i, j]), (loss_np(Up) - loss_np(Um)) / (2 * eps), rtol=2e-3, atol=2e-3)


def _fused_and_stepwise(f, *args):
    """``f(*args)`` compiled with loops compiled whole (asserting the outer loop was: one fused call, no
    sub-plan runs) and again with ``CRANAX_NO_FUSED_LOOPS=1`` (a fresh compile)."""
    jax.clear_caches()
    runs0, fused0, _ = stats()
    fused = jax.tree_util.tree_map(np.asarray, jax.jit(f)(*args))
    runs1, fused1, _ = stats()
    assert (runs1 - runs0, fused1 - fused0) == (0, 1)
    os.environ["CRANAX_NO_FUSED_LOOPS"] = "1"
    try:
        jax.clear_caches()
        stepwise = jax.tree_util.tree_map(np.asarray, jax.jit(f)(*args))
        assert stats()[1] == fused1
    finally:
        del os.environ["CRANAX_NO_FUSED_LOOPS"]
        jax.clear_caches()
    return fused, stepwise


def _rk_like(tab, y0, n):
    # diffrax's stage loop in miniature: a tableau f32[7, 7] (over 16 elements) read a row at a time at a
    # traced index (dynamic_slice, and jnp indexing, which is a gather), a tiny product of that row with the stage buffer f32[7, 2], the new stage written back
    # with dynamic_update_slice, a scatter-add at a wrapped index and a dropped out-of-range set.
    def body(c):
        i, k, acc = c
        j = i % 7
        row = lax.dynamic_slice(tab, (j, 0), (1, 7))[0]
        new = jnp.sin(acc + row @ k) * (1.0 + tab[j, (j + 2) % 7] * 0.1) + tab[(j + 1) % 7][:2] * 0.01
        k = lax.dynamic_update_slice(k, new[None], (j, 0))
        k = k.at[(j + 3) % 7].add(new * 0.5)
        k = k.at[j + 5].set(new * 0.25, mode="drop")
        return i + 1, k, acc + new * 0.125
    return lax.while_loop(lambda c: c[0] < n, body, (0, jnp.zeros((7, 2), jnp.float32), y0))


def _rk_like_numpy(tab, y0, n):
    k, acc = np.zeros((7, 2)), y0.astype(np.float64)
    for i in range(n):
        j = i % 7
        t = tab.astype(np.float64)
        new = np.sin(acc + t[j] @ k) * (1.0 + t[j, (j + 2) % 7] * 0.1) + t[(j + 1) % 7][:2] * 0.01
        k[j] = new
        k[(j + 3) % 7] += new * 0.5
        if j + 5 < 7:
            k[j + 5] = new * 0.25
        acc = acc + new * 0.125
    return n, k, acc


def test_loops_with_slices_updates_scatters_and_tiny_products_compile_whole():
    rng = np.random.default_rng(3)
    tab = (rng.standard_normal((7, 7)) * 0.3).astype(np.float32)
    y0 = np.array([0.25, -0.5], np.float32)
    fused, stepwise = _fused_and_stepwise(_rk_like, tab, y0, 40)
    _same_bits(fused, stepwise)
    n, k, acc = _rk_like_numpy(tab, y0, 40)
    assert int(fused[0]) == n
    close(fused[1], k, 1e-4)
    close(fused[2], acc, 1e-4)


def _clamping(x, n):
    # start indices past the end (lax.dynamic_slice/update clamp them so the window fits), a scatter with
    # mode="clip" (clamps) and one with mode="drop" (drops rows past the end).
    def body(i, c):
        a, s = c
        part = lax.dynamic_slice(a, (i * 3 + 1, jnp.int32(1)), (3, 2))
        a = lax.dynamic_update_slice(a, part[::-1] * 0.5 + 1.0, (jnp.int32(12) - i * 2, i))
        a = a.at[i * 2, 1].set(s, mode="clip")
        a = a.at[i + 1].add(part[0, 0], mode="drop")
        return a, s + part.sum()
    return lax.fori_loop(0, n, body, (x, jnp.float32(0.0)))


def _clamping_numpy(x, n):
    a, s = x.astype(np.float64).copy(), 0.0
    for i in range(n):
        lo = min(i * 3 + 1, 2)
        part = a[lo:lo + 3, 1:3].copy()
        r0, c0 = min(12 - i * 2, 2), min(i, 2)
        a[r0:r0 + 3, c0:c0 + 2] = part[::-1] * 0.5 + 1.0
        a[min(i * 2, 4), 1] = s
        if i + 1 < 5:
            a[i + 1] += part[0, 0]
        s = s + part.sum()
    return a, s


def test_fused_loop_index_clamping_matches_the_library():
    x = np.arange(20, dtype=np.float32).reshape(5, 4) / 7.0
    fused, stepwise = _fused_and_stepwise(_clamping, x, 6)
    _same_bits(fused, stepwise)
    a, s = _clamping_numpy(x, 6)
    close(fused[0], a, 1e-5)
    close(fused[1], s, 1e-5)


def _fill_and_combine(a, u, v, n):
    # gathers with mode="fill" (an explicit fill value, and JAX's defaults: NaN, the uint32 maximum) at
    # indices that leave the array, and scatter multiply / min / max on float32 (with -0.0 against 0.0),
    # uint32 (values past 2**31, wrapping products), int32 and bool.
    def body(i, c):
        a, u, v, flag, s, g, gf = c
        r = a.at[i - 3].get(mode="fill", fill_value=-0.5)
        s = s + r.sum()
        a = a.at[(i * 3) % 7].multiply(0.9 + r[0] * 0.01, mode="drop")
        zrow = jnp.array([-0.0, 0.0, 0.25, -1.0], jnp.float32) * (i % 2).astype(jnp.float32)
        a = a.at[(i + 1) % 5].min(zrow)
        a = a.at[i % 5].max(r * 0.5)
        u = u.at[i % 6].max(jnp.uint32(3_000_000_000) + i.astype(jnp.uint32))
        u = u.at[(i + 2) % 6].min(jnp.uint32(5) * i.astype(jnp.uint32))
        u = u.at[i % 3].multiply(jnp.uint32(3))
        v = v.at[i % 4].min(10 - i * 7)
        v = v.at[(i + 1) % 4].max(i * 3 - 4)
        v = v.at[(i + 2) % 4].multiply(-3)
        flag = flag.at[i % 3].max(i % 4 == 0)
        flag = flag.at[(i + 1) % 3].min(i % 5 != 0)
        g = u.at[i * 2 - 4].get(mode="fill")
        gf = a[:, 0].at[i + 2].get(mode="fill")
        return a, u, v, flag, s, g, gf
    init = (a, u, v, jnp.zeros(3, bool), jnp.float32(0), jnp.uint32(0), jnp.float32(0))
    return lax.fori_loop(0, n, body, init)


def _fill_and_combine_numpy(a, u, v, n):
    a, u, v = a.astype(np.float64).copy(), u.astype(np.uint64).copy(), v.astype(np.int64).copy()
    flag, s, g, gf = np.zeros(3, bool), 0.0, 0, 0.0
    for i in range(n):
        j = i - 3 + (5 if i - 3 < 0 else 0)
        r = a[j].copy() if 0 <= j < 5 else np.full(4, -0.5)
        s += r.sum()
        if (i * 3) % 7 < 5:
            a[(i * 3) % 7] *= 0.9 + r[0] * 0.01
        a[(i + 1) % 5] = np.minimum(a[(i + 1) % 5], np.array([-0.0, 0.0, 0.25, -1.0]) * (i % 2))
        a[i % 5] = np.maximum(a[i % 5], r * 0.5)
        u[i % 6] = max(u[i % 6], 3_000_000_000 + i)
        u[(i + 2) % 6] = min(u[(i + 2) % 6], 5 * i)
        u[i % 3] = (u[i % 3] * 3) % 2**32
        v[i % 4] = min(v[i % 4], 10 - i * 7)
        v[(i + 1) % 4] = max(v[(i + 1) % 4], i * 3 - 4)
        v[(i + 2) % 4] *= -3
        flag[i % 3] |= i % 4 == 0
        flag[(i + 1) % 3] &= i % 5 != 0
        k = i * 2 - 4 + (6 if i * 2 - 4 < 0 else 0)
        g = int(u[k]) if 0 <= k < 6 else 2**32 - 1
        gf = a[i + 2, 0] if i + 2 < 5 else np.nan
    return a, u, v, flag, s, g, gf


def test_fused_loop_fill_gathers_and_scatter_mul_min_max_match_stepwise_bits():
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((5, 4)) * 0.7).astype(np.float32)
    a[1, :2] = 0.0
    u = np.array([1, 2_500_000_000, 7, 4_000_000_000, 0, 9], np.uint32)
    v = np.array([3, -8, 20, 0], np.int32)
    fused, stepwise = _fused_and_stepwise(_fill_and_combine, a, u, v, 11)
    _same_bits(fused, stepwise)
    want = _fill_and_combine_numpy(a, u, v, 11)
    close(fused[0], want[0], 1e-5)
    np.testing.assert_array_equal(fused[1], want[1].astype(np.uint32))
    np.testing.assert_array_equal(fused[2], want[2].astype(np.int32))
    np.testing.assert_array_equal(fused[3], want[3])
    close(fused[4], want[4], 1e-5)
    assert int(fused[5]) == want[5]
    assert np.isnan(fused[6]) and np.isnan(want[6])
    # the ±0 rule of scatter-min/max (the old value unless the update is strictly beyond it) on both paths
    assert [np.signbit(x) for x in fused[0][1, :2]] == [np.signbit(x) for x in stepwise[0][1, :2]]


@pytest.mark.parametrize("n,heavy,fused", [(8, True, True), (16, True, True), (32, True, False),
                                           (32, False, True)])
def test_fused_loops_leave_wide_transcendental_bodies_to_the_in_place_path(n, heavy, fused):
    # Unrolled, every tanh / sin is a scalar evaluation: past 32 of them per iteration (f32[16] through
    # tanh + sin) the vectorized in-place path is faster and the loop is not fused; arithmetic-only bodies
    # of the same size still are. Values are NumPy's either way.
    def body(v):
        return jnp.tanh(v) * 0.5 + jnp.sin(v) * 0.25 if heavy else v * 0.75 + 0.125
    f = jax.jit(lambda x, k: lax.while_loop(lambda c: c[0] < k, lambda c: (c[0] + 1, body(c[1])), (0, x))[1])
    x = np.linspace(-1, 1, n).astype(np.float32)
    jax.clear_caches()
    _, fused0, _ = stats()
    got = f(x, 20)
    assert stats()[1] - fused0 == (1 if fused else 0)
    v = x.astype(np.float64)
    for _ in range(20):
        v = np.tanh(v) * 0.5 + np.sin(v) * 0.25 if heavy else v * 0.75 + 0.125
    close(got, v, 1e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_over_xs_stacking_ys_is_fused_and_matches_stepwise_bits(reverse):
    # the outermost scan reads its xs rows and writes its ys rows in the caller's buffers: one fused call
    rng = np.random.default_rng(5)
    c0 = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((40, 3)).astype(np.float32)
    ts = np.linspace(0, 1, 40).astype(np.float32)

    def f(c0, xs, ts):
        def body(c, xt):
            x, t = xt
            c = jnp.tanh(c * 0.9 + x * t) + c.sum() * 0.01
            return c, (c * 2.0, c.sum() + t)
        return lax.scan(body, c0, (xs, ts), reverse=reverse)

    fused, stepwise = _fused_and_stepwise(f, c0, xs, ts)
    _same_bits(fused, stepwise)
    c = c0.astype(np.float64)
    ys, ss = np.zeros((40, 3)), np.zeros(40)
    for i in (range(39, -1, -1) if reverse else range(40)):
        c = np.tanh(c * 0.9 + xs[i] * ts[i]) + c.sum() * 0.01
        ys[i], ss[i] = c * 2.0, c.sum() + ts[i]
    close(fused[0], c)
    close(fused[1][0], ys)
    close(fused[1][1], ss)


def test_pad_and_100_element_carries_are_fused_and_match_stepwise_bits():
    # jnp.diff-style shifts (pad with low/high and interior padding) and a f32[10, 10] carry stay in one function
    m0 = (np.arange(100, dtype=np.float32).reshape(10, 10) - 50.0) / 50.0
    v0 = np.linspace(-1, 1, 10).astype(np.float32)

    def f(m0, v0):
        def body(i, c):
            m, v = c
            s = lax.pad(v[1:], 0.5, [(0, 1, 0)]) - lax.pad(v[:-1], -0.25, [(1, 0, 0)])
            w = lax.pad(v[::2], 1.0, [(1, 0, 1)])     # f32[5] -> f32[10] with interior padding
            return lax.dynamic_update_slice(m, v[None, :], (i, 0)), jnp.tanh(v + s * 0.3 + w * 0.1) + m[0, 0] * 0.01
        return lax.fori_loop(0, 7, body, (m0, v0))

    fused, stepwise = _fused_and_stepwise(f, m0, v0)
    _same_bits(fused, stepwise)
    m, v = m0.astype(np.float64), v0.astype(np.float64)
    for i in range(7):
        s = np.append(v[1:], 0.5) - np.insert(v[:-1], 0, -0.25)
        w = np.full(10, 1.0)
        w[1::2] = v[::2]
        v_new = np.tanh(v + s * 0.3 + w * 0.1) + m[0, 0] * 0.01
        m[i] = v
        v = v_new
    close(fused[0], m)
    close(fused[1], v)


@pytest.mark.parametrize("length", [1, 2, 7])
def test_elementwise_scans_run_strip_by_strip_with_stepwise_bits(length):
    # A scan whose body is one elementwise kernel over large carries (searchsorted's halvings, Newton steps)
    # runs every iteration on one strip of points before the next: same bits as step by step and NumPy,
    # odd and even lengths, a point count that is no multiple of the strip, two carries of two dtypes,
    # consts gathered from anywhere and loaded elementwise.
    rng = np.random.default_rng(11)
    n = 10_007
    x0 = rng.standard_normal(n).astype(np.float32)
    table = rng.standard_normal(977).astype(np.float32)
    scale = rng.standard_normal(n).astype(np.float32)

    def f(x0, table, scale):
        def body(c, _):
            x, k = c
            t = table[(k * 7 + 3) % 977]
            return (jnp.tanh(x * 0.9 + t * scale), k + jnp.where(x > 0, 1, 2)), None
        return lax.scan(body, (x0, jnp.arange(n, dtype=jnp.int32)), None, length=length)[0]

    direct, stepwise, ran_direct = _run_both_ways(f, x0, table, scale)
    assert ran_direct
    _same_bits(direct, stepwise)
    x, k = x0.astype(np.float32), np.arange(n, dtype=np.int32)
    for _ in range(length):
        t = table[(k * 7 + 3) % 977]
        x, k = np.tanh(x * np.float32(0.9) + t * scale), k + np.where(x > 0, 1, 2).astype(np.int32)
    np.testing.assert_array_equal(direct[1], k)
    close(direct[0], x, 1e-5)
    # a 2-D carry, and one read transposed (not at the point written: runs whole iterations)
    m0 = rng.standard_normal((120, 120)).astype(np.float32)
    g = lambda m: lax.scan(lambda c, _: (c * 0.5 + jnp.sin(c), None), m, None, length=length)[0]
    h = lambda m: lax.scan(lambda c, _: (c * 0.5 + c.T, None), m, None, length=length)[0]
    for fn, step in ((g, lambda m: m * np.float32(0.5) + np.sin(m)), (h, lambda m: m * np.float32(0.5) + m.T)):
        direct, stepwise, _ = _run_both_ways(fn, m0)
        _same_bits(direct, stepwise)
        m = m0
        for _ in range(length):
            m = step(m)
        close(direct, m, 1e-5)
