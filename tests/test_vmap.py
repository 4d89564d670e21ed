"""vmap: every batching rule against a Python loop over the batch (results stacked with NumPy), for
combinations of batched/unbatched operands and several in_axes/out_axes, eagerly and under jit; nesting;
composition with jit (both orders) and grad; JAX's errors."""
import itertools

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from cranax.interpreters import batching

from op_records import select

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-5, 6, size=shape).astype(dtype)
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def _take(x, i, ax):
    return jnp.asarray(np.take(np.asarray(x), i, axis=ax))


def _leaves(x):
    return jax.tree_util.tree_leaves(x)


def loop(f, args, in_axes=0, out_axes=0):
    """The reference: ``f`` applied to each example in a Python loop, outputs stacked with NumPy."""
    if not isinstance(in_axes, (tuple, list)):
        in_axes = (in_axes,) * len(args)
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for i in range(size):
        outs.append(f(*[a if ax is None else _take(a, i, ax) for a, ax in zip(args, in_axes)]))
    first = outs[0]
    flat0, tree = jax.tree_util.tree_flatten(first)
    per_leaf = list(zip(*[jax.tree_util.tree_flatten(o)[0] for o in outs]))
    oax = out_axes if isinstance(out_axes, (tuple, list)) else (out_axes,) * len(flat0)
    stacked = [np.stack([np.asarray(v) for v in vs], axis=ax) for vs, ax in zip(per_leaf, oax)]
    return jax.tree_util.tree_unflatten(tree, stacked)


def check(f, args, in_axes=0, out_axes=0, jit=True, rtol=1e-5, atol=1e-6):
    want = loop(f, args, in_axes, out_axes)
    g = jax.vmap(f, in_axes=in_axes, out_axes=out_axes)
    modes = [g, jax.jit(g)] if jit else [g]
    for h in modes:
        got = h(*args)
        for w, o in zip(_leaves(want), _leaves(got)):
            assert o.shape == w.shape, (o.shape, w.shape)
            assert np.dtype(o.dtype) == w.dtype, (o.dtype, w.dtype)
            np.testing.assert_allclose(np.asarray(o), w, rtol=rtol, atol=atol)
    return got


# ----------------------------------------------------------------------------------------------- elementwise

# the elementwise ops whose record gives a vmap sampling range (tests/op_records.py)
_ELEMENTWISE_UNARY = ("unary", "integer_pow", "convert")
UNARY = [(r.name, r.face, r.vmap) for r in select(*_ELEMENTWISE_UNARY, where=lambda r: r.vmap is not None)]


@pytest.mark.parametrize("name,fn,kw", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("in_axis,out_axis", [(0, 0), (1, 0), (-1, 1), (0, -1)])
def test_unary(name, fn, kw, in_axis, out_axis):
    check(fn, [rand(3, 4, **kw)], in_axis, out_axis)


BINARY = [(r.name, r.face) for r in select("binary", "compare", where=lambda r: r.vmap is not None)]
AXES2 = [(0, 0), (0, None), (None, 0), (1, 0), (0, 1), (1, None), (None, 1)]


def _arg(shape, ax, size=3, **kw):
    if ax is None:
        return rand(*shape, **kw)
    s = list(shape)
    s.insert(ax, size)
    return rand(*s, **kw)


@pytest.mark.parametrize("name,fn", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("axes", AXES2, ids=str)
def test_binary(name, fn, axes):
    a, b = (_arg((4, 2), ax, lo=0.5, hi=2.0) for ax in axes)
    check(fn, [a, b], axes)


@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)], ids=str)
def test_binary_scalar_examples(axes):
    # Per-example rank-0 operands against shaped ones: the front end broadcasts them explicitly.
    a = _arg((), axes[0])
    b = _arg((5,), axes[1])
    check(lambda x, y: x * y + x, [a, b], axes)
    check(lambda x, y: y - x, [a, b], axes)


@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)], ids=str)
def test_both_rank0_examples(axes):
    a, b = (_arg((), ax) for ax in axes)
    check(lambda x, y: jnp.maximum(x, y) * 2.0, [a, b], axes)


def test_python_scalar_literals():
    x = rand(3, 4)
    check(lambda v: 2.0 * v + 1.0, [x])
    check(lambda v: (v > 0.5) & (v < 1.5), [x])
    check(lambda v: v ** 2, [x])
    check(lambda v: lax.add(v, 1.0), [x])
    check(lambda v: v + np.float32(3.0), [x])


def test_integer_and_bool_ops():
    a = rand(3, 4, dtype=np.int32)
    b = np.where(rand(3, 4, dtype=np.int32) == 0, 1, rand(3, 4, dtype=np.int32)).astype(np.int32)
    for axes in [(0, 0), (0, None), (None, 1)]:
        bb = b if axes[1] != 1 else b.T.copy()
        aa = a
        check(lambda x, y: x // y, [aa, bb if axes[1] is not None else b[0]], axes)
        check(lambda x, y: (x & y) | (x ^ 3), [aa, bb if axes[1] is not None else b[0]], axes)
        check(lambda x, y: x % y, [aa, bb if axes[1] is not None else b[0]], axes)
    p, q = rand(3, 4, dtype=np.bool_), rand(4, dtype=np.bool_)
    check(lambda x, y: jnp.logical_and(x, y) ^ jnp.logical_not(x), [p, q], (0, None))


def test_unbatched_closure_and_constants():
    w = rand(4)
    c = jnp.asarray(rand(4))
    check(lambda x: x * w + c, [rand(3, 4)])
    check(lambda x: jnp.sum(x) * c, [rand(3, 4)])   # rank-0 batched times closed-over vector


# ----------------------------------------------------------------------------------------------- select_n / clamp

@pytest.mark.parametrize("axes", list(itertools.product([0, None], repeat=3))[:-1], ids=str)
def test_where_combinations(axes):
    p = _arg((4,), axes[0], dtype=np.bool_)
    x = _arg((4,), axes[1])
    y = _arg((4,), axes[2])
    check(jnp.where, [p, x, y], axes)


def test_where_with_scalars():
    check(lambda v: jnp.where(v > 0, v, 0.0), [rand(3, 4)])
    check(lambda v: jnp.where(v > 0, 1.0, -1.0), [rand(3, 4)])
    check(lambda v, p: jnp.where(p, v, 0.0), [rand(3, 4), rand(3, dtype=np.bool_)], (0, 0))
    check(lambda v, p: jnp.where(p, v, 0.0), [rand(4), rand(3, dtype=np.bool_)], (None, 0))
    check(lambda p: jnp.where(p, 2.0, 3.0), [rand(3, dtype=np.bool_)])
    check(lambda p, v: lax.select(p, v, -v), [np.bool_(True), rand(3, 4)], (None, 0))


@pytest.mark.parametrize("axes", [(0, 0, 0, 0), (0, None, None, None), (None, 0, None, 0),
                                  (None, None, 1, None), (1, 0, None, 1)], ids=str)
def test_select_n_int32(axes):
    which = _arg((4,), axes[0], dtype=np.int32)
    which = np.abs(which) % 3
    cases = [_arg((4,), ax) for ax in axes[1:]]
    check(lambda w, *c: lax.select_n(w.astype(jnp.int32), *c), [which.astype(np.int32)] + cases, axes)


def test_select_n_scalar_predicate():
    check(lambda w, x, y: lax.select_n(w, x, y), [rand(3, dtype=np.bool_), rand(4), rand(4)], (0, None, None))
    check(lambda w, x, y: lax.select_n(w, x, y), [np.bool_(False), rand(3, 4), rand(4)], (None, 0, None))


@pytest.mark.parametrize("axes", list(itertools.product([0, None], repeat=3))[:-1], ids=str)
def test_clamp_combinations(axes):
    lo = _arg((), axes[0], lo=-1, hi=0)
    x = _arg((4,), axes[1])
    hi = _arg((), axes[2], lo=0, hi=1)
    check(lax.clamp, [lo, x, hi], axes)


def test_clamp_scalar_operand_and_clip():
    check(lambda lo: lax.clamp(lo, 0.5, 1.0), [rand(3, lo=0, hi=1)])
    check(lambda lo, x: lax.clamp(lo, x, lo + 1.0), [rand(3, lo=-1, hi=0), rand(4)], (0, None))
    check(lambda x: jnp.clip(x, -0.5, 0.5), [rand(3, 4)], 1)
    check(lambda x, m: jnp.clip(x, m, 1.0), [rand(3, 4), rand(4, 3, lo=-1, hi=0)], (0, 1))


# ----------------------------------------------------------------------------------------------- reductions

RED = [
    ("sum", lambda x, ax: jnp.sum(x, axis=ax)), ("max", lambda x, ax: jnp.max(x, axis=ax)),
    ("min", lambda x, ax: jnp.min(x, axis=ax)), ("prod", lambda x, ax: jnp.prod(x, axis=ax)),
    ("mean", lambda x, ax: jnp.mean(x, axis=ax)), ("argmax", lambda x, ax: jnp.argmax(x, axis=ax)),
    ("argmin", lambda x, ax: jnp.argmin(x, axis=ax)), ("all", lambda x, ax: jnp.all(x > 0, axis=ax)),
    ("any", lambda x, ax: jnp.any(x > 1, axis=ax)),
    ("keepdims", lambda x, ax: jnp.sum(x, axis=ax, keepdims=True)),
]


# argmax/argmin take one axis, so they get no tuple of axes.
_RED_CASES = [(name, fn, ax) for name, fn in RED for ax in [0, 1, -1, None, (0, 2)]
              if not (name in ("argmax", "argmin") and isinstance(ax, tuple))]


@pytest.mark.parametrize("name,fn,red_axis", _RED_CASES, ids=[f"{n}-{a}" for n, _, a in _RED_CASES])
@pytest.mark.parametrize("in_axis", [0, 1, 3])
def test_reductions(name, fn, red_axis, in_axis):
    s = [2, 3, 4]
    s.insert(in_axis, 5)
    check(lambda x: fn(x, red_axis), [rand(*s)], in_axis)


# ----------------------------------------------------------------------------------------------- structural

@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_broadcast_in_dim(in_axis):
    s = [4, 1]
    s.insert(in_axis, 3)
    x = rand(*s)
    check(lambda v: jnp.broadcast_to(v, (2, 4, 5)), [x], in_axis)
    check(lambda v: lax.broadcast_in_dim(v, (4, 2, 5), (0, 2)), [x], in_axis)
    check(lambda v: lax.broadcast(v, (2,)), [x], in_axis, out_axes=2)


def test_broadcast_scalar_examples():
    check(lambda v: jnp.broadcast_to(v, (2, 3)), [rand(4)])
    check(lambda v: jnp.full((2,), v), [rand(4)])
    check(lambda v: jnp.zeros((2,)) + v, [rand(4)])


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_reshape(in_axis):
    s = [2, 6]
    s.insert(in_axis, 3)
    x = rand(*s)
    check(lambda v: v.reshape(3, 4), [x], in_axis)
    check(lambda v: v.reshape(-1), [x], in_axis, out_axes=1)
    check(lambda v: jnp.ravel(v.T), [x], in_axis)


@pytest.mark.parametrize("in_axis", [0, 1, 2, 3])
def test_squeeze_expand_dims(in_axis):
    s = [1, 4, 1]
    s.insert(in_axis, 3)
    x = rand(*s)
    check(lambda v: jnp.squeeze(v), [x], in_axis)
    check(lambda v: jnp.squeeze(v, axis=2), [x], in_axis)
    check(lambda v: lax.squeeze(v, (0,)), [x], in_axis, out_axes=-1)
    check(lambda v: jnp.expand_dims(v, 1), [x], in_axis)


@pytest.mark.parametrize("in_axis", [0, 1, 3])
@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 2, 1), None], ids=str)
def test_transpose(in_axis, perm):
    s = [2, 3, 4]
    s.insert(in_axis, 5)
    check(lambda v: jnp.transpose(v, perm), [rand(*s)], in_axis)


def _core_runs(fn, *args):
    """Whether the core can run ``fn`` eagerly (the slice/rev lowerings land with the Rust core)."""
    try:
        np.asarray(fn(*args))
        return True
    except ValueError as e:
        if "unknown primitive" in str(e):
            return False
        raise


INDEXING = [
    lambda v: v[1:4], lambda v: v[::2, 1:], lambda v: v[2], lambda v: v[::-1], lambda v: v[:, ::-2],
    lambda v: v[-1, 1:3],
]


@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("k", range(len(INDEXING)))
def test_slice_and_rev(in_axis, k):
    fn = INDEXING[k]
    s = [6, 5]
    s.insert(in_axis, 3)
    x = rand(*s)
    want = np.stack([fn(np.take(x, i, in_axis)) for i in range(3)])
    if _core_runs(fn, jnp.asarray(rand(6, 5))):
        check(fn, [x], in_axis)
        check(fn, [x], in_axis, out_axes=-1)
    else:   # the core cannot run slice/rev yet: check the batched program's types
        out = jax.eval_shape(jax.vmap(fn, in_axes=in_axis), x)
        assert out.shape == want.shape and out.dtype == want.dtype


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_lax_slice_and_rev_jaxpr(in_axis):
    s = [6, 5]
    s.insert(in_axis, 3)
    x = rand(*s)
    f = lambda v: lax.rev(lax.slice(v, (1, 0), (5, 5), (2, 1)), (0, 1))
    jaxpr = jax.make_jaxpr(jax.vmap(f, in_axes=in_axis))(x)
    sl, rv = jaxpr.eqns[0], jaxpr.eqns[1]
    assert sl.primitive.name == "slice" and rv.primitive.name == "rev"
    start, limit, strides = [1, 0], [5, 5], [2, 1]
    start.insert(in_axis, 0)
    limit.insert(in_axis, 3)
    strides.insert(in_axis, 1)
    assert tuple(sl.params["start_indices"]) == tuple(start)
    assert tuple(sl.params["limit_indices"]) == tuple(limit)
    assert tuple(sl.params["strides"]) == tuple(strides)
    assert tuple(rv.params["dimensions"]) == tuple(d + (d >= in_axis) for d in (0, 1))
    want = np.stack([np.take(x, i, in_axis)[1:5:2][::-1, ::-1] for i in range(3)], axis=in_axis)
    if _core_runs(f, jnp.asarray(rand(6, 5))):
        np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=in_axis, out_axes=in_axis)(x)), want)


def test_iota_unbatched():
    check(lambda v: v * jnp.arange(4.0), [rand(3, 4)])
    check(lambda v: jnp.arange(4) + v, [rand(3, dtype=np.int32)])
    check(lambda v: v + lax.broadcasted_iota(jnp.float32, (2, 4), 1), [rand(3, 2, 4)])
    check(lambda v: jnp.eye(3) * v, [rand(5)])


def test_linspace_and_like():
    check(lambda v: jnp.zeros_like(v) + jnp.ones_like(v) * 2.0, [rand(3, 4)])
    check(lambda v: jnp.full_like(v, 7.0), [rand(3, 4)])


# ----------------------------------------------------------------------------------------------- programs

def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_selu_and_logsumexp():
    check(selu, [rand(8, 5)])
    check(lambda x: jnp.log(jnp.sum(jnp.exp(x - jnp.max(x)))) + jnp.max(x), [rand(6, 7)], 1)
    check(lambda x: (x - x.mean()) / jnp.sqrt(jnp.var(x) + 1e-5), [rand(4, 10)], rtol=1e-4, atol=1e-5)


def test_softmax_axes():
    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)
    check(softmax, [rand(3, 4, 5)], in_axes=1, out_axes=2)


# ----------------------------------------------------------------------------------------------- pytrees / axes

def test_pytree_in_axes_prefix():
    def affine(p, x):
        return p["w"] * x + p["b"]
    params = {"w": jnp.arange(3.0), "b": 1.0}
    out = jax.vmap(affine, in_axes=({"w": 0, "b": None}, 0))(params, jnp.array([10.0, 20.0, 30.0]))
    np.testing.assert_allclose(np.asarray(out), [1.0, 21.0, 61.0])
    out2 = jax.vmap(lambda d: d["a"].sum(), in_axes=({"a": 1},))({"a": jnp.arange(6.0).reshape(2, 3)})
    np.testing.assert_allclose(np.asarray(out2), [3.0, 5.0, 7.0])
    out3 = jax.vmap(lambda t: t[0] + t[1], in_axes=((0, None),))((jnp.arange(3.0), 5.0))
    np.testing.assert_allclose(np.asarray(out3), [5.0, 6.0, 7.0])
    assert out3.dtype == np.float32
    a, b = jax.vmap(lambda x, y: (x * 2.0, y), in_axes=(0, None), out_axes=(0, None))(jnp.arange(3.0),
                                                                                      jnp.ones(2))
    np.testing.assert_allclose(np.asarray(a), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(np.asarray(b), [1.0, 1.0])


def test_in_axes_list_and_kwargs():
    f = jax.vmap(lambda x, y, z=None: x + y * z, in_axes=[0, None])
    x, y, z = rand(3, 4), rand(4), rand(3, 4)
    np.testing.assert_allclose(np.asarray(f(x, y, z=z)), x + y * z, rtol=1e-6)


def test_dict_and_tuple_outputs_and_out_axes_tree():
    def f(x, y):
        return {"s": x + y, "p": (x * y, jnp.sum(x))}
    x, y = rand(3, 4), rand(3, 4)
    out = jax.vmap(f, out_axes={"s": 1, "p": (0, 0)})(x, y)
    np.testing.assert_allclose(np.asarray(out["s"]), (x + y).T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["p"][0]), x * y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["p"][1]), x.sum(1), rtol=1e-5)


def test_unbatched_output_is_broadcast():
    x = rand(3, 4)
    out = jax.vmap(lambda v: (v, jnp.ones(2), 5.0))(x)
    assert out[1].shape == (3, 2) and out[2].shape == (3,)
    out = jax.vmap(lambda v: jnp.ones(2), out_axes=1)(x)
    assert out.shape == (2, 3)
    out = jax.vmap(lambda v, w: w * 2.0, in_axes=(0, None))(x, rand(5))
    assert out.shape == (3, 5)


def test_axis_size_without_mapped_args():
    out = jax.vmap(lambda: jnp.ones(2), axis_size=4)()
    assert out.shape == (4, 2)
    out = jax.vmap(lambda w: w + 1.0, in_axes=None, axis_size=3)(rand(2))
    assert out.shape == (3, 2)
    out = jax.vmap(lambda x: x * 2.0, axis_size=3)(rand(3))
    assert out.shape == (3,)


def test_negative_axes():
    x = rand(2, 3, 4)
    check(lambda v: v * 2.0, [x], -2, -1)
    check(lambda v: jnp.sum(v, axis=0), [x], -1, -1)


def test_numpy_and_list_inputs():
    out = jax.vmap(lambda v: v * 2)(np.arange(3.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(out), [0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="rank should be at least 1"):   # lists are pytrees of scalars
        jax.vmap(lambda a, b: a + b)([1.0, 2.0], [3.0, 4.0])


# ----------------------------------------------------------------------------------------------- nesting / jit

def test_nested_vmap():
    x, y = rand(3, 4, 5), rand(4, 5)
    f = lambda a, b: jnp.sum(a * b) + jnp.max(a)
    inner = jax.vmap(f, in_axes=(0, 0))
    outer = jax.vmap(inner, in_axes=(0, None))
    want = np.array([[float(f(jnp.asarray(x[i, j]), jnp.asarray(y[j]))) for j in range(4)] for i in range(3)])
    np.testing.assert_allclose(np.asarray(outer(x, y)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(outer)(x, y)), want, rtol=1e-5)
    # different axes at each level
    outer2 = jax.vmap(jax.vmap(f, in_axes=(1, 0)), in_axes=(2, None), out_axes=1)
    xt = np.transpose(x, (1, 2, 0)).copy()   # (4, 5, 3): inner axis 1 is... build directly
    z = rand(5, 4, 3)   # outer maps axis 2 (size 3); inner maps axis 1 (size 4) of the (5, 4) remainder
    want2 = np.array([[float(f(jnp.asarray(z[:, j, i]), jnp.asarray(y[j]))) for j in range(4)]
                      for i in range(3)]).T
    np.testing.assert_allclose(np.asarray(outer2(z, y)), want2, rtol=1e-5)
    del xt


def test_outer_product_nested():
    a, b = rand(3), rand(4)
    out = jax.vmap(jax.vmap(lambda x, y: x * y, in_axes=(None, 0)), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(np.asarray(out), np.outer(a, b), rtol=1e-6)


def test_vmap_of_jit_is_one_call():
    f = jax.jit(lambda x, y: jnp.sin(x) * y + jnp.sum(x))
    g = jax.vmap(f, in_axes=(0, None))
    x, y = rand(5, 3), rand(3)
    jaxpr = jax.make_jaxpr(g)(x, y)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
    inner = jaxpr.eqns[0].params["jaxpr"]
    assert inner.in_avals[0].shape == (5, 3) and inner.in_avals[1].shape == (3,)
    check(f, [x, y], (0, None))
    check(f, [x.T.copy(), y], (1, None), out_axes=1)


def test_vmap_of_jit_caches_batched_jaxpr():
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    g = jax.vmap(f)
    x = rand(4, 3)
    g(x)
    before = len(jax.api.jit_p._exe_cache) if hasattr(jax, "api") else None
    for _ in range(3):
        g(x)
    if before is not None:
        assert len(jax.api.jit_p._exe_cache) == before


def test_jit_of_vmap_of_jit_and_static():
    @jax.jit
    def inner(x, y):
        return jnp.where(x > y, x, y) ** 2
    outer = jax.jit(jax.vmap(jax.vmap(inner, in_axes=(0, None)), in_axes=(None, 0)))
    x, y = rand(3), rand(4)
    want = np.maximum(x[None, :], y[:, None]) ** 2
    np.testing.assert_allclose(np.asarray(outer(x, y)), want, rtol=1e-6)

    from functools import partial

    @partial(jax.jit, static_argnums=1)
    def scaled(x, n):
        return x * n
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda v: scaled(v, 3))(rand(2, 2) * 0 + 1)), 3 * np.ones((2, 2)))


def test_jit_with_unbatched_jit_args():
    f = jax.jit(lambda a, b: (a + b, a * 2.0))   # second output does not depend on the batched argument
    x, y = rand(4), rand(3, 4)
    s, d = jax.vmap(f, in_axes=(None, 0))(x, y)
    np.testing.assert_allclose(np.asarray(s), x + y, rtol=1e-6)
    assert d.shape == (3, 4)
    np.testing.assert_allclose(np.asarray(d), np.broadcast_to(x * 2, (3, 4)), rtol=1e-6)


def test_make_jaxpr_of_vmap():
    jaxpr = jax.make_jaxpr(jax.vmap(lambda x, y: x * y + 1.0, in_axes=(0, None)))(rand(3, 4), rand(4))
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names == ["broadcast_in_dim", "mul", "add"]
    assert jaxpr.out_avals[0].shape == (3, 4)


def test_rule_table_is_extensible():
    from cranax.core import Primitive
    from cranax.core import ShapedArray
    p = Primitive("my_double")
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    p.def_impl(lambda x: x * 2)
    batching.batching_rules[p] = lambda vals, dims: (p.bind(vals[0]), dims[0])
    try:
        out = jax.vmap(lambda v: p.bind(v))(jnp.arange(3.0))
        np.testing.assert_allclose(np.asarray(out), [0.0, 2.0, 4.0])
    finally:
        del batching.batching_rules[p]
    q = Primitive("no_rule")
    q.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="no_rule"):
        jax.vmap(lambda v: q.bind(v))(jnp.arange(3.0))


# ----------------------------------------------------------------------------------------------- grad

def _ad(name="grad"):
    f = getattr(jax, name, None)
    if f is None:
        try:
            from cranax import api_ad
        except ImportError:
            pytest.skip("autodiff not available yet")
        f = getattr(api_ad, name, None)
    if f is None:
        pytest.skip(f"{name} not available yet")
    return f


def _grad():
    return _ad("grad")


def test_per_example_gradients():
    grad = _grad()

    def loss(w, x, y):
        pred = jnp.tanh(jnp.sum(w * x))
        return (pred - y) ** 2

    w = rand(4)
    xs, ys = rand(6, 4), rand(6)
    got = jax.vmap(grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    want = np.stack([np.asarray(grad(loss)(w, xs[i], ys[i])) for i in range(6)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    got_jit = jax.jit(jax.vmap(grad(loss), in_axes=(None, 0, 0)))(w, xs, ys)
    np.testing.assert_allclose(np.asarray(got_jit), want, rtol=1e-5, atol=1e-6)


def test_grad_of_vmap():
    grad = _grad()
    f = lambda x: jnp.sum(jax.vmap(lambda v: jnp.sin(v) * v)(x))
    x = rand(5)
    np.testing.assert_allclose(np.asarray(grad(f)(x)), np.cos(x) * x + np.sin(x), rtol=1e-5)


def test_vmap_of_grad_elementwise():
    grad = _grad()
    x = jnp.linspace(-1.0, 1.0, 5)
    out = jax.vmap(grad(jnp.tanh))(x)
    np.testing.assert_allclose(np.asarray(out), 1 - np.tanh(np.asarray(x)) ** 2, rtol=1e-5)


def _mlp_loss(params, x, y):
    # A small MLP without dot_general: dense layers as broadcast-multiply-reduce.
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(jnp.sum(h[:, None] * w, axis=0) + b)
    w, b = params[-1]
    logits = jnp.sum(h[:, None] * w, axis=0) + b
    lse = jnp.log(jnp.sum(jnp.exp(logits - jnp.max(logits)))) + jnp.max(logits)
    return lse - jnp.sum(jnp.where(jnp.arange(logits.shape[0]) == y, logits, 0.0))


def _mlp_params():
    sizes = [5, 8, 8, 3]
    return [(rand(a, b, lo=-0.5, hi=0.5), rand(b, lo=-0.1, hi=0.1)) for a, b in zip(sizes[:-1], sizes[1:])]


def test_per_example_gradients_mlp():
    grad = _grad()
    params = _mlp_params()
    xs = rand(16, 5)
    ys = RNG.integers(0, 3, size=16).astype(np.int32)
    per_ex = jax.jit(jax.vmap(grad(_mlp_loss), in_axes=(None, 0, 0)))(params, xs, ys)
    eager = jax.vmap(grad(_mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    for i in range(16):
        g = grad(_mlp_loss)(params, jnp.asarray(xs[i]), jnp.asarray(ys[i]))
        for gl, pl, el in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(per_ex),
                              jax.tree_util.tree_leaves(eager)):
            np.testing.assert_allclose(np.asarray(pl)[i], np.asarray(gl), rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(np.asarray(el)[i], np.asarray(gl), rtol=1e-4, atol=1e-6)


def test_vmap_grad_in_axes_variants():
    grad = _grad()
    f = lambda a, b: jnp.sum(jnp.sin(a) * b)
    a, b = rand(4, 3), rand(3)
    got = jax.vmap(grad(f, argnums=1), in_axes=(1, None), out_axes=1)(a.T.copy(), b)
    want = np.stack([np.sin(a[i]) for i in range(4)], axis=1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_vmap_of_jit_of_grad_and_grad_of_jit_of_vmap():
    grad = _grad()
    f = lambda x: jnp.sum(x ** 3)
    xs = rand(4, 3)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.jit(grad(f)))(xs)), 3 * xs ** 2, rtol=1e-5)
    g = grad(lambda x: jnp.sum(jax.jit(jax.vmap(lambda v: jnp.sum(v ** 3)))(x)))
    np.testing.assert_allclose(np.asarray(g(xs)), 3 * xs ** 2, rtol=1e-5)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_jacobians(name):
    jac = _ad(name)
    f = lambda x: jnp.sin(x) * jnp.sum(x)
    x = rand(4)
    J = np.asarray(jac(f)(x))
    want = np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None]
    np.testing.assert_allclose(J, want, rtol=1e-5, atol=1e-6)
    Jb = np.asarray(jax.vmap(jac(f))(rand(3, 4) * 0 + x))
    np.testing.assert_allclose(Jb, np.broadcast_to(want, (3, 4, 4)), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------- errors

def test_inconsistent_sizes_error():
    def f(x, y):
        return x + y
    with pytest.raises(ValueError) as e:
        jax.vmap(f)(jnp.ones(3), jnp.ones(4))
    msg = str(e.value)
    assert msg == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                   "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
                   "  * one axis had size 4: axis 0 of argument y of type float32[4]")


def test_inconsistent_sizes_most_axes():
    with pytest.raises(ValueError) as e:
        jax.vmap(lambda a, b, c: a + b + c)(jnp.ones(3), jnp.ones(3), {"k": jnp.ones((2, 4))})
    msg = str(e.value)
    assert "most axes (2 of them) had size 3, e.g. axis 0 of argument a of type float32[3]" in msg
    assert "one axis had size 2: axis 0 of argument c['k'] of type float32[2,4]" in msg


def test_in_axes_length_mismatch():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=2, len\(args\)=3"):
        jax.vmap(lambda a, b, c: a + b + c, (0, 0))(jnp.ones(3), jnp.ones(3), 1.0)


def test_in_axes_not_a_prefix():
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        jax.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": jnp.ones(3)})
    with pytest.raises(ValueError, match="tree prefix"):
        jax.vmap(lambda t: t, in_axes=((0, 0),))(jnp.ones(3))


def test_in_axes_bad_types():
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        jax.vmap(lambda x: x, in_axes={"a": 0})
    with pytest.raises(TypeError, match="container"):
        jax.vmap(lambda x: x, in_axes=(0.5,))
    with pytest.raises(TypeError, match="out_axes"):
        jax.vmap(lambda x: x, out_axes="a")


def test_out_of_range_axes():
    with pytest.raises(ValueError, match="requested to map its argument along axis 1, which implies that its "
                                         r"rank should be at least 2, but is only 1 \(its shape is \(3,\)\)"):
        jax.vmap(lambda x: x, in_axes=1)(jnp.ones(3))
    with pytest.raises(ValueError, match="rank should be at least 3"):
        jax.vmap(lambda x: x, in_axes=-3)(jnp.ones((3, 2)))
    with pytest.raises(ValueError, match="at least 1, but is only 0"):
        jax.vmap(lambda x: x)(1.0)
    with pytest.raises(ValueError, match="out of bounds"):
        jax.vmap(lambda x: x, out_axes=2)(jnp.ones(3))


def test_nothing_mapped_needs_axis_size():
    with pytest.raises(ValueError, match="vmap must have at least one non-None value in in_axes"):
        jax.vmap(lambda x: x, in_axes=None)(jnp.ones(3))
    with pytest.raises(ValueError, match="at least one argument containing an array"):
        jax.vmap(lambda: 1.0)()


def test_mapped_output_with_out_axes_none():
    with pytest.raises(ValueError, match="vmap has mapped output but out_axes is None"):
        jax.vmap(lambda x: x, out_axes=None)(jnp.ones(3))


def test_out_axes_not_a_prefix():
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        jax.vmap(lambda x: x, out_axes=(0, 0))(jnp.ones(3))


def test_bool_of_batched_value_raises():
    from cranax.errors import TracerBoolConversionError
    with pytest.raises(TracerBoolConversionError):
        jax.vmap(lambda x: x if x > 0 else -x)(jnp.ones(3))


def test_escaped_tracer():
    from cranax.errors import UnexpectedTracerError
    leak = []
    jax.vmap(lambda x: leak.append(x) or x)(jnp.ones(3))
    with pytest.raises(UnexpectedTracerError):
        jax.vmap(lambda y: y + leak[0])(jnp.ones(3))


def test_axis_size_mismatch():
    with pytest.raises(ValueError, match="axis_size=4"):
        jax.vmap(lambda x: x, axis_size=4)(jnp.ones(3))


# ----------------------------------------------------------------------------------------------- tour

def test_tour_vmap_section():
    import io
    from cranax.tour.vmap import tour_vmap
    buf = io.StringIO()
    res = tour_vmap(out=buf, quick=True)
    assert res["agree"], buf.getvalue()
    assert set(res["times"]) == {"naive loop", "by hand (jit)", "vmap (jit)"}
    assert "vmap" in buf.getvalue()


def test_apply_matrix_seed_when_dot_exists():
    from cranax.tour.vmap import _dot_works
    if not _dot_works():
        pytest.skip("jnp.dot arrives with the linalg issue")
    matrix = rand(150, 100)
    check(lambda v: jnp.dot(matrix, v), [rand(10, 100)], rtol=1e-4, atol=1e-4)
    check(lambda v, m: jnp.dot(m, v), [rand(10, 100), rand(150, 100)], (0, None), rtol=1e-4, atol=1e-4)
    check(lambda v, m: jnp.dot(m, v), [rand(100), rand(10, 150, 100)], (None, 0), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------------------------- more rules

def test_select_n_literal_cases():
    from cranax.core import typed_scalar
    one, two = typed_scalar(1.0, np.float32, False), typed_scalar(2.0, np.float32, False)
    out = jax.vmap(lambda p: lax.select_n(p, one, two))(jnp.array([True, False, True]))
    np.testing.assert_allclose(np.asarray(out), [2.0, 1.0, 2.0])
    out = jax.jit(jax.vmap(lambda p, x: lax.select_n(p, one, x)))(jnp.array([True, False]), jnp.array([5.0, 6.0]))
    np.testing.assert_allclose(np.asarray(out), [5.0, 1.0])


def _np_pad(x, pv, cfg):
    out = x
    for ax, (lo, hi, interior) in enumerate(cfg):
        n = out.shape[ax]
        shape = list(out.shape)
        shape[ax] = n + max(n - 1, 0) * interior
        tmp = np.full(shape, pv, out.dtype)
        idx = [slice(None)] * out.ndim
        idx[ax] = slice(None, None, interior + 1)
        tmp[tuple(idx)] = out
        pads = [(0, 0)] * out.ndim
        pads[ax] = (max(lo, 0), max(hi, 0))
        tmp = np.pad(tmp, pads, constant_values=pv)
        idx = [slice(None)] * out.ndim
        idx[ax] = slice(-min(lo, 0), tmp.shape[ax] + min(hi, 0))
        out = tmp[tuple(idx)]
    return out


@pytest.mark.parametrize("axes", [(0, None), (1, None), (0, 0), (None, 0), (1, 0)], ids=str)
def test_pad(axes):
    pad = lax.pad
    cfg = [(1, 2, 1), (0, -1, 0)]
    x = _arg((3, 4), axes[0])
    pv = _arg((), axes[1])
    f = lambda v, p: pad(v, p, cfg)
    size = 3 if axes[0] is None else x.shape[axes[0]]
    want = np.stack([_np_pad(x if axes[0] is None else np.take(x, i, axes[0]),
                             pv if axes[1] is None else pv[i], cfg) for i in range(size)])
    out = jax.eval_shape(jax.vmap(f, in_axes=axes), x, pv)
    assert out.shape == want.shape
    if _core_runs(lambda v: pad(v, np.float32(0), cfg), jnp.ones((3, 4))):
        got = jax.vmap(f, in_axes=axes)(x, pv)
        np.testing.assert_allclose(np.asarray(got), want)


def test_stop_gradient_under_vmap():
    x = rand(3, 4)
    check(lambda v: lax.stop_gradient(v) * 2.0, [x])


@pytest.mark.parametrize("name", [r.name for r in select("unary", where=lambda r: r.int_semantics == "exact")])
@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_integer_unary(name, in_axis):
    """The integer unary ops (bit counting) under vmap and jit(vmap): the per-example results, exactly."""
    r = next(r for r in select("unary") if r.name == name)
    x = np.random.default_rng(4).integers(-2 ** 31, 2 ** 31 - 1, (3, 5), dtype=np.int32, endpoint=True)
    want = r.oracle(x)
    for f in (jax.vmap(r.lax, in_axes=in_axis, out_axes=in_axis), jax.jit(jax.vmap(r.lax, in_axes=in_axis,
                                                                                      out_axes=in_axis))):
        got = np.asarray(f(x))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------------------------- property

from hypothesis import given, settings, strategies as st  # noqa: E402

_OPS = [lambda a, b: a * b + a, lambda a, b: jnp.where(a > b, a, b - 1.0),
        lambda a, b: jnp.sum(a, axis=0) + jnp.max(b), lambda a, b: jnp.transpose(a) * 2.0 - jnp.transpose(b),
        lambda a, b: (a - b).reshape(-1)[::2], lambda a, b: jnp.clip(a, -0.5, b)]


@settings(max_examples=40, deadline=None)
@given(op=st.integers(0, len(_OPS) - 1), ax_a=st.sampled_from([None, 0, 1, 2, -1]),
       ax_b=st.sampled_from([None, 0, 1, 2, -1]), out_ax=st.sampled_from([0, 1, -1]),
       jit=st.booleans())
def test_random_programs(op, ax_a, ax_b, out_ax, jit):
    if ax_a is None and ax_b is None:
        ax_a = 0
    fn = _OPS[op]
    if op == 4 and not _core_runs(lambda v: v[::2], jnp.ones(4)):
        return
    shape = (2, 3)
    a = _arg(shape, None if ax_a is None else ax_a % 3, size=4)
    b = _arg(shape, None if ax_b is None else ax_b % 3, size=4)
    out_nd = len(np.shape(fn(jnp.ones(shape), jnp.ones(shape)))) + 1
    check(fn, [a, b], (ax_a, ax_b), out_ax if out_ax < out_nd else 0, jit=jit)


def test_vmap_while_loop_keeps_weak_carry():
    # JAX 0.10.2: a carry started from a Python scalar stays weakly typed through a vmapped loop, with a
    # batched predicate or not (the loop body's literals stay weak when the body is re-traced)
    b = jnp.arange(3.0)
    batched_pred = jax.vmap(lambda b: lax.while_loop(lambda s: s < b, lambda s: s + 1, 0))(b)
    assert batched_pred.dtype == np.int32 and batched_pred.weak_type
    np.testing.assert_array_equal(np.asarray(batched_pred), [0, 1, 2])
    out = jax.vmap(lambda b: lax.while_loop(lambda s: s[0] < 2, lambda s: (s[0] + 1, s[1] + b), (0, b)))(b)
    assert out[0].weak_type and not out[1].weak_type
    np.testing.assert_array_equal(np.asarray(out[1]), [0.0, 3.0, 6.0])
