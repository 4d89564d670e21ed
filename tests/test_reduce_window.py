"""lax.reduce_window (the monoid primitives and the general computation), the max/min-pool derivatives
(select_and_gather_add / select_and_scatter_add) and lax.cumlogsumexp against direct-loop float64 NumPy
references; gradients against finite differences and against values recorded from JAX 0.10.2 (ties: the
first maximum wins); vmap against a loop; printed jaxprs as JAX prints them."""
import functools
import itertools

import numpy as np
import pytest

import cranax
import cranax.lax as lax
import cranax.numpy as jnp


def ref_reduce_window(x, init, op, wd, ws, pads, bd=None, wdil=None):
    """XLA's ReduceWindow by direct loops, in float64 (the operand's dtype for integers)."""
    x = np.asarray(x)
    n = x.ndim
    bd = (1,) * n if bd is None else bd
    wdil = (1,) * n if wdil is None else wdil
    dil = tuple(0 if d == 0 else (d - 1) * b + 1 for d, b in zip(x.shape, bd))
    xd = np.full(dil, init, dtype=x.dtype)
    xd[tuple(slice(None, None, b) for b in bd)] = x
    for ax, (lo, hi) in enumerate(pads):
        if lo < 0:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
            lo = 0
        if hi < 0:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
            hi = 0
        pw = [(0, 0)] * n
        pw[ax] = (lo, hi)
        xd = np.pad(xd, pw, constant_values=init)
    eff = [(w - 1) * d + 1 for w, d in zip(wd, wdil)]
    out_shape = tuple(max(0, (m - e) // s + 1) for m, e, s in zip(xd.shape, eff, ws))
    out = np.empty(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        vals = [xd[tuple(oi * s + ki * d for oi, s, ki, d in zip(o, ws, k, wdil))]
                for k in itertools.product(*(range(w) for w in wd))]
        out[o] = functools.reduce(op, vals, np.asarray(init, x.dtype))
    return out


def _pads(shape, wd, ws, padding, bd=None, wdil=None):
    if not isinstance(padding, str):
        return padding
    n = len(shape)
    bd = (1,) * n if bd is None else bd
    wdil = (1,) * n if wdil is None else wdil
    return lax.padtype_to_pads([(d - 1) * b + 1 for d, b in zip(shape, bd)],
                               [(w - 1) * d + 1 for w, d in zip(wd, wdil)], ws, padding)


# (shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
WINDOWS = [
    ((7,), (3,), (1,), "VALID", None, None),
    ((8,), (2,), (2,), "SAME", None, None),
    ((5, 6), (2, 3), (1, 2), "SAME_LOWER", None, None),
    ((2, 3, 6, 5), (1, 1, 3, 3), (1, 1, 2, 2), "SAME", None, None),
    ((2, 6, 5, 3), (1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),
    ((5, 4), (2, 2), (1, 1), ((1, 2), (0, 1)), (2, 1), (1, 2)),
    ((6, 5), (3, 2), (2, 1), ((-1, 1), (2, -1)), None, (2, 1)),
    ((3, 4, 5), (2, 2, 2), (1, 2, 1), "SAME", (1, 1, 2), None),
    ((2, 3), (3, 4), (1, 1), "VALID", None, None),                      # empty output
]
IDS = [f"w{i}" for i in range(len(WINDOWS))]

MONOIDS = {"sum": (lax.add, 0, np.add), "max": (lax.max, -np.inf, np.maximum), "min": (lax.min, np.inf, np.minimum)}


def _rand(shape, dtype, seed):
    r = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return r.standard_normal(shape).astype(dtype)
    return r.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("kind", sorted(MONOIDS))
@pytest.mark.parametrize("win", WINDOWS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_monoid_reduce_window_against_loops(kind, win, dtype):
    shape, wd, ws, padding, bd, wdil = win
    comp, init, np_op = MONOIDS[kind]
    x = _rand(shape, dtype, 1)
    got = lax.reduce_window(x, init, comp, wd, ws, padding, bd, wdil)
    # JAX converts an infinite init to an integer dtype's extreme
    want_init = np.asarray(init).astype(dtype) if np.isfinite(init) or np.dtype(dtype).kind == "f" else \
        (np.iinfo(dtype).min if init < 0 else np.iinfo(dtype).max)
    want = ref_reduce_window(x, want_init, np_op, wd, ws, _pads(shape, wd, ws, padding, bd, wdil), bd, wdil)
    got = np.asarray(got)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_monoids_bind_their_primitives_and_others_the_general_one():
    x = np.ones((4, 4), np.float32)
    prims = lambda f: [e.primitive.name for e in cranax.make_jaxpr(f)(x).jaxpr.eqns]  # noqa: E731
    rw = lambda init, op: (lambda x: lax.reduce_window(x, init, op, (2, 2), (1, 1), "VALID"))  # noqa: E731
    assert prims(rw(0.0, lax.add)) == ["reduce_window_sum"]
    assert prims(rw(-np.inf, lax.max)) == ["reduce_window_max"]
    assert prims(rw(np.inf, lax.min)) == ["reduce_window_min"]
    assert prims(rw(1.0, lax.add)) == ["reduce_window"]        # not the identity (as JAX)
    assert prims(rw(1.0, lax.mul)) == ["reduce_window"]
    xi = np.ones((4,), np.int32)
    assert [e.primitive.name for e in cranax.make_jaxpr(
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID"))(xi).jaxpr.eqns] == ["reduce_window_max"]


@pytest.mark.parametrize("win", WINDOWS, ids=IDS)
def test_general_reduce_window_against_loops(win, x64):
    shape, wd, ws, padding, bd, wdil = win
    x = _rand(shape, np.float64, 2) * 0.5 + 1.0
    got = lax.reduce_window(x, 1.0, lax.mul, wd, ws, padding, bd, wdil)
    want = ref_reduce_window(x, 1.0, np.multiply, wd, ws, _pads(shape, wd, ws, padding, bd, wdil), bd, wdil)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    # init not the identity of add: the general primitive, the init counted once per window
    got = lax.reduce_window(x, 2.0, lax.add, wd, ws, padding, bd, wdil)
    want = ref_reduce_window(x, 2.0, np.add, wd, ws, _pads(shape, wd, ws, padding, bd, wdil), bd, wdil)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_general_reduce_window_on_a_pytree():
    """An (value, index) argmax-pool: the computation takes and returns tuples, as JAX allows."""
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], np.float32)
    idx = np.arange(8, dtype=np.int32)

    def comp(a, b):
        take = lax.gt(b[0], a[0])
        return lax.select(take, b[0], a[0]), lax.select(take, b[1], a[1])
    vals, arg = lax.reduce_window((x, idx), (-np.inf, np.int32(-1)), comp, (3,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(vals), [4, 4, 5, 9, 9, 9])
    np.testing.assert_array_equal(np.asarray(arg), [2, 2, 4, 5, 5, 5])


def test_reduce_window_jaxprs_print_as_jax():
    x = np.ones((2, 3, 5, 5), np.float32)
    text = str(cranax.make_jaxpr(cranax.grad(
        lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID").sum()))(x))
    # JAX 0.10.2's text for the same call
    assert text == """{ lambda ; a:f32[2,3,5,5]. let
    b:f32[2,3,2,2] = reduce_window_max[
      base_dilation=(1, 1, 1, 1)
      padding=((0, 0), (0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1, 1)
      window_dimensions=(1, 1, 2, 2)
      window_strides=(1, 1, 2, 2)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] b
    c:f32[2,3,2,2] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3,5,5] = select_and_scatter_add[
      padding=((0, 0), (0, 0), (0, 0), (0, 0))
      select_prim=ge
      window_dimensions=(1, 1, 2, 2)
      window_strides=(1, 1, 2, 2)
    ] c a
  in (d,) }"""
    text = str(cranax.make_jaxpr(lambda x: lax.reduce_window(x, 1.0, lax.mul, (1, 1, 2, 2), (1, 1, 2, 2),
                                                             "VALID"))(x))
    assert text == """{ lambda ; a:f32[2,3,5,5]. let
    b:f32[2,3,2,2] = reduce_window[
      base_dilation=(1, 1, 1, 1)
      consts=()
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = mul c d in (e,) }
      padding=((0, 0), (0, 0), (0, 0), (0, 0))
      window_dilation=(1, 1, 1, 1)
      window_dimensions=(1, 1, 2, 2)
      window_strides=(1, 1, 2, 2)
    ] a 1.0:f32[]
  in (b,) }"""


# ----------------------------------------------------------------------------------------------- gradients

def _weighted(kind, wd, ws, padding, bd=None, wdil=None):
    comp, init, _ = MONOIDS[kind] if kind in MONOIDS else (lax.mul, 1.0, None)

    def f(x):
        o = lax.reduce_window(x, init, comp, wd, ws, padding, bd, wdil)
        o = jnp.where(jnp.isfinite(o), o, 0.0)   # windows wholly in the padding hold +-inf
        n = int(np.prod(o.shape))
        return jnp.sum(o * jnp.cos(jnp.arange(n, dtype=o.dtype) * 0.9).reshape(o.shape))
    return f


def _fd(f, x, eps=1e-6):
    x = np.array(x, np.float64)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[idx] += eps
        m[idx] -= eps
        g[idx] = (float(f(p)) - float(f(m))) / (2 * eps)
    return g


@pytest.mark.parametrize("kind", ["sum", "max", "min", "mul"])
@pytest.mark.parametrize("win", [WINDOWS[i] for i in (0, 2, 3, 5, 6)], ids=[IDS[i] for i in (0, 2, 3, 5, 6)])
def test_reduce_window_gradients_against_finite_differences(kind, win, x64):
    shape, wd, ws, padding, bd, wdil = win
    if kind in ("max", "min") and (bd is not None or wdil is not None):
        # JAX: the max-pool transpose (select_and_scatter_add) has no dilation; forward mode works
        f = _weighted(kind, wd, ws, padding, bd, wdil)
        x = _rand(shape, np.float64, 3)
        t = _rand(shape, np.float64, 4)
        _, jt = cranax.jvp(f, (x,), (t,))
        np.testing.assert_allclose(float(jt), float(np.sum(_fd(f, x) * t)), rtol=1e-6, atol=1e-8)
        return
    f = _weighted(kind, wd, ws, padding, bd, wdil)
    x = _rand(shape, np.float64, 3) * 0.5 + (1.0 if kind == "mul" else 0.0)
    g = cranax.grad(f)(x)
    np.testing.assert_allclose(np.asarray(g), _fd(f, x), rtol=1e-6, atol=1e-8)


POOL_X = np.array([[1., 3., 3., 2., 0.], [3., 1., 2., 2., 5.], [0., 3., 5., 5., 1.], [2., 2., 1., 0., 4.]], np.float32)
POOL_CASES = [((2, 2), (1, 1), "VALID"), ((3, 3), (2, 2), "SAME"), ((2, 3), (2, 1), ((1, 0), (2, 1)))]
# JAX 0.10.2: jax.grad of sum(reduce_window(POOL_X, init, op, ...) * cos(0.9 * arange(out.size))) for each
# POOL_CASES entry, (max, -inf) then (min, inf); POOL_X has ties, where the first extremum gets it all.
POOL_GRADS_JAX = [
     [0.0, 1.62161, -0.227202, 0.0, 0.0, -0.896758, 0.0, 0.0, 0.0, 0.0957866, 0.0, 0.608351, -0.730777, -0.889191, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
     [1.0, 0.0, 0.0, -0.227202, -0.904072, 0.0, 0.410814, 0.634693, 0.0, 0.0, -0.288407, 0.0, 0.0, 0.0, 0.999859, 0.0, 0.0, -0.243544, -1.80032, 0.0],
     [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.227202, 0.0, -0.904072, -0.275148, -0.210796, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
     [0.0, 0.0, 0.0, 0.0, -0.227202, 0.0, 0.62161, 0.0, 0.0, 0.0, 0.095928, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.10755, 0.0],
     [1.0, -0.509664, -0.896758, -0.210796, 0.0, 1.63455, 0.0, 0.0, 0.0, -1.80032, 0.0, 0.0, 0.364808, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
     [1.39441, 0.0, 0.0, -0.904072, -1.10755, 0.0, -0.243544, 0.0, 0.0, 0.0, 2.2429, 0.0, 0.0, 0.0, -1.80032, 0.0, 0.0, 0.0, 0.0, 0.0],
]


@pytest.mark.parametrize("i", range(len(POOL_GRADS_JAX)))
def test_pool_gradients_with_ties_match_jax(i):
    (wd, ws, padding), kind = POOL_CASES[i // 2], ("max", "min")[i % 2]
    g = cranax.grad(_weighted(kind, wd, ws, padding))(POOL_X)
    np.testing.assert_allclose(np.asarray(g).ravel(), POOL_GRADS_JAX[i], rtol=1e-5, atol=1e-6)


def test_avg_pool_gradient_is_the_padded_window_sum(x64):
    x = _rand((1, 5, 6, 2), np.float64, 5)
    f = lambda x: jnp.sum(lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "SAME") ** 2) / 9.0  # noqa
    np.testing.assert_allclose(np.asarray(cranax.grad(f)(x)), _fd(f, x), rtol=1e-6, atol=1e-8)


def test_select_and_scatter_add_and_gather_are_transposes(x64):
    x = _rand((5, 6), np.float64, 6)
    params = dict(select_prim="ge", window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (0, 1)))
    out_shape = lax.reduce_window_shape_tuple(x.shape, (2, 3), (1, 2), ((1, 0), (0, 1)))
    s = _rand(out_shape, np.float64, 7)
    t = _rand(x.shape, np.float64, 8)
    scattered = np.asarray(lax.select_and_scatter_add_p.bind(s, x, **params))
    gathered = np.asarray(lax.select_and_gather_add_p.bind(t, x, base_dilation=(1, 1), window_dilation=(1, 1),
                                                           **params))
    # <scatter(s), t> == <s, gather(t)>, and each source value lands on its window's first maximum
    np.testing.assert_allclose(np.sum(scattered * t), np.sum(s * gathered), rtol=1e-12)
    want = np.zeros_like(x)
    xp = np.pad(x, ((1, 0), (0, 1)), constant_values=-np.inf)
    for o in np.ndindex(*out_shape):
        win = xp[o[0]:o[0] + 2, 2 * o[1]:2 * o[1] + 3]
        a, b = np.unravel_index(np.argmax(win), win.shape)
        want[o[0] + a - 1, 2 * o[1] + b] += s[o]
    np.testing.assert_allclose(scattered, want, rtol=1e-12)


# ----------------------------------------------------------------------------------------------- vmap

@pytest.mark.parametrize("kind", ["sum", "max", "mul"])
def test_reduce_window_vmap_against_a_loop(kind):
    xs = _rand((3, 5, 6), np.float32, 9)
    f = _weighted(kind, (2, 3), (1, 2), "SAME")
    for ax in (0, 1, 2):
        xm = np.moveaxis(xs, 0, ax)
        got = np.asarray(cranax.vmap(f, in_axes=ax)(xm))
        np.testing.assert_allclose(got, [float(f(xs[k])) for k in range(3)], rtol=1e-5)
    g = np.asarray(cranax.vmap(cranax.grad(f))(xs))
    np.testing.assert_allclose(g, np.stack([np.asarray(cranax.grad(f)(xs[k])) for k in range(3)]), rtol=1e-5)


# ----------------------------------------------------------------------------------------------- cumlogsumexp

def test_cumlogsumexp_matches_jax():
    v = np.array([0.5, -1.0, 2.0, 2.0, 30.0, -40.0], np.float32)
    # JAX 0.10.2 values
    np.testing.assert_allclose(np.asarray(lax.cumlogsumexp(v)),
                               [0.5, 0.7014132738113403, 2.2413113117218018, 2.8210642337799072, 30.0, 30.0],
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lax.cumlogsumexp(v, reverse=True)), [30.0] * 5 + [-40.0], rtol=1e-6)
    g = cranax.grad(lambda v: jnp.sum(lax.cumlogsumexp(v) * jnp.arange(6.0)))(v)
    np.testing.assert_allclose(np.asarray(g), [1.4626624584197998, 0.32636409997940063, 2.8910837173461914,
                                               1.3198895454406738, 9.0, 1.987725024133127e-30], rtol=1e-5)


@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (-1, False)])
def test_cumlogsumexp_against_numpy(axis, reverse, x64):
    x = _rand((5, 7), np.float64, 10) * 20
    got = np.asarray(lax.cumlogsumexp(x, axis, reverse))
    xx = np.flip(x, axis) if reverse else x
    want = np.logaddexp.accumulate(xx, axis=axis)
    want = np.flip(want, axis) if reverse else want
    np.testing.assert_allclose(got, want, rtol=1e-13)
    f = lambda x: jnp.sum(lax.cumlogsumexp(x, axis, reverse) * jnp.cos(jnp.arange(35.0).reshape(5, 7)))  # noqa
    np.testing.assert_allclose(np.asarray(cranax.grad(f)(x)), _fd(f, x), rtol=1e-6, atol=1e-8)
    got = np.asarray(cranax.vmap(lambda r: lax.cumlogsumexp(r, 0, reverse))(x))
    want = np.logaddexp.accumulate(np.flip(x, 1) if reverse else x, axis=1)
    np.testing.assert_allclose(got, np.flip(want, 1) if reverse else want, rtol=1e-13)
    assert lax.cumlogsumexp(np.array([-np.inf, -np.inf, 0.0])).tolist() == [-np.inf, -np.inf, 0.0]


# ----------------------------------------------------------------------------------------------- lowering

def test_pools_lower_to_the_core_library_ops():
    from cranax.interpreters import lowering
    x = np.ones((2, 6, 6, 3), np.float32)
    f = cranax.grad(lambda x: jnp.sum(lax.reduce_window(x, -np.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")))
    wire = lowering.lower_jaxpr(cranax.make_jaxpr(f)(x))
    assert '"prim":"reduce_window_max"' in wire and '"prim":"select_and_scatter_add"' in wire
    wire16 = lowering.lower_jaxpr(cranax.make_jaxpr(f)(x.astype(np.float16)))
    assert '"prim":"reduce_window_max"' not in wire16 and '"prim":"slice"' in wire16    # the composition


def _native_and_composed(run, monkeypatch):
    """``run()`` with the core's window loops, then again with the pad/slice compositions inlined instead."""
    from cranax.interpreters import dispatch
    from cranax.primitives import windowed
    native = run()
    monkeypatch.setitem(windowed.native_lowering, "enabled", False)
    dispatch.clear_cache()
    try:
        return native, run()
    finally:
        dispatch.clear_cache()


@pytest.mark.parametrize("win", WINDOWS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_core_window_ops_and_compositions_agree(win, dtype, monkeypatch):
    """The core's loops and the inlined pad/slice compositions give the same pools and pool gradients."""
    shape, wd, ws, padding, bd, wdil = win
    x = _rand(shape, dtype, 12)

    def run():
        outs = [np.asarray(lax.reduce_window(x, init, comp, wd, ws, padding, bd, wdil))
                for comp, init, _ in MONOIDS.values()]
        if dtype == np.float32 and bd is None and wdil is None:
            pads = _pads(shape, wd, ws, padding)
            out_shape = lax.reduce_window_shape_tuple(shape, wd, ws, pads)
            src = _rand(out_shape, dtype, 13)
            for sp in ("ge", "le"):
                outs.append(np.asarray(lax.select_and_scatter_add_p.bind(
                    src, x, select_prim=sp, window_dimensions=wd, window_strides=ws, padding=tuple(pads))))
        return outs
    native, composed = _native_and_composed(run, monkeypatch)
    for a, b in zip(native, composed):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("select_prim", ["ge", "le"])
def test_pool_gradient_split_over_the_batch_matches_the_composition(select_prim, monkeypatch):
    """A batch large enough for the core to scatter the images' slabs in parallel (windows that leave the
    batch axis alone), with many ties (values from a small set: the first extremum of each window wins),
    against the pad/slice composition."""
    shape, wd, ws = (4, 33, 34, 16), (1, 3, 3, 1), (1, 2, 2, 1)
    x = np.random.default_rng(21).integers(0, 4, shape).astype(np.float32)
    pads = _pads(shape, wd, ws, "SAME")
    src = _rand(lax.reduce_window_shape_tuple(shape, wd, ws, pads), np.float32, 22)

    def run():
        return np.asarray(lax.select_and_scatter_add_p.bind(
            src, x, select_prim=select_prim, window_dimensions=wd, window_strides=ws, padding=tuple(pads)))
    native, composed = _native_and_composed(run, monkeypatch)
    assert native.shape == shape and np.count_nonzero(native) > 1000
    np.testing.assert_allclose(native, composed, rtol=1e-6, atol=1e-6)
