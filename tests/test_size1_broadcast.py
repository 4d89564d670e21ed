"""Equal-rank size-1 broadcasting in binary primitives and jnp's rank promotion (issue 18 (b)): as JAX's lax
``broadcasting_shape_rule``, a binary primitive takes operands of one rank whose dimensions are equal or 1
(``f32[2,3]`` with ``f32[1,3]``), and jnp's ``promote_shapes`` only promotes ranks, by leading 1s (``f32[3]``
next to ``f32[2,3]`` becomes ``f32[1,3]``), leaving the 1s to the primitive; the lowering broadcasts them for
the core. ``broadcast_in_dim`` prints without ``shape``/``sharding`` (JAX's pp rule). Jaxpr texts and error
texts recorded from JAX 0.10.2; values against NumPy, gradients against NumPy's sums and finite differences."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

RECORDED = {
    'add_rank': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = add a c\n  in (d,) }',
    'mul_size1': '{ lambda ; a:f32[2,1,3] b:f32[4,1]. let\n    c:f32[1,4,1] = broadcast_in_dim[broadcast_dimensions=(1, 2)] b\n    d:f32[2,4,3] = mul a c\n  in (d,) }',
    'lax_add_size1': '{ lambda ; a:f32[2,3] b:f32[1,3]. let c:f32[2,3] = add a b in (c,) }',
    'jnp_add_size1': '{ lambda ; a:f32[2,3] b:f32[1,3]. let c:f32[2,3] = add a b in (c,) }',
    'bid': '{ lambda ; a:f32[3]. let\n    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n  in (b,) }',
    'maximum': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = max a c\n  in (d,) }',
    'pow': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = pow a c\n  in (d,) }',
    'arctan2': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = atan2 a c\n  in (d,) }',
    'grad_add': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = add a c\n    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d\n    e:f32[2,3] = broadcast_in_dim 1.0:f32[]\n    f:f32[3] = reduce_sum[axes=(0,) out_sharding=None] e\n    g:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] f\n    h:f32[3] = reduce_sum[axes=(0,) out_sharding=None] g\n  in (e, h) }',
    'grad_mul_rank': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = mul a c\n    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d\n    e:f32[2,3] = broadcast_in_dim 1.0:f32[]\n    f:f32[2,3] = mul a e\n    g:f32[3] = reduce_sum[axes=(0,) out_sharding=None] f\n    h:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] g\n    i:f32[3] = reduce_sum[axes=(0,) out_sharding=None] h\n  in (i,) }',
    'grad_mul_size1': '{ lambda ; a:f32[2,3] b:f32[2,1]. let\n    c:f32[2,3] = mul a b\n    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c\n    d:f32[2,3] = broadcast_in_dim 1.0:f32[]\n    e:f32[2,3] = mul a d\n    f:f32[2] = reduce_sum[axes=(1,) out_sharding=None] e\n    g:f32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] f\n  in (g,) }',
    'sub_eq': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    d:f32[2,3] = sub a c\n    e:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n    f:bool[2,3] = eq d e\n  in (f,) }',
}

a23 = jnp.ones((2, 3))
a3 = jnp.ones(3)
CASES = {
    "add_rank": (lambda a, b: a + b, (a23, a3)),
    "mul_size1": (lambda a, b: a * b, (jnp.ones((2, 1, 3)), jnp.ones((4, 1)))),
    "lax_add_size1": (lambda a, b: lax.add(a, b), (a23, jnp.ones((1, 3)))),
    "jnp_add_size1": (lambda a, b: jnp.add(a, b), (a23, jnp.ones((1, 3)))),
    "bid": (lambda a: lax.broadcast_in_dim(a, (2, 3), (1,)), (a3,)),
    "maximum": (lambda a, b: jnp.maximum(a, b), (a23, a3)),
    "pow": (lambda a, b: a ** b, (a23, a3)),
    "arctan2": (lambda a, b: jnp.arctan2(a, b), (a23, a3)),
    "grad_add": (jax.grad(lambda a, b: (a + b).sum(), argnums=(0, 1)), (a23, a3)),
    "grad_mul_rank": (jax.grad(lambda a, b: (a * b).sum(), argnums=1), (a23, a3)),
    "grad_mul_size1": (jax.grad(lambda a, b: (a * b).sum(), argnums=1), (a23, jnp.ones((2, 1)))),
    "sub_eq": (lambda a, b: (a - b) == b, (a23, a3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_text_as_jax(name):
    f, args = CASES[name]
    assert str(jax.make_jaxpr(f)(*args)) == RECORDED[name]


def _eqn_avals(jaxpr):
    return [(e.primitive.name, [str(v.aval.str_short()) for v in e.outvars]) for e in jaxpr.jaxpr.eqns]


def test_vmap_keeps_size1_dims():
    # JAX 0.10.2 prints these two with ``broadcast_dimensions=(0, np.int64(2))`` / ``(np.int64(1),
    # np.int64(2))`` (NumPy integers from its batching arithmetic); cranax prints plain ints. The equations
    # and types are JAX's: the unbatched operand gets a leading 1, and the primitive broadcasts the 1s.
    j = jax.make_jaxpr(jax.vmap(lambda a, b: a + b))(jnp.ones((5, 2, 3)), jnp.ones((5, 3)))
    assert _eqn_avals(j) == [("broadcast_in_dim", ["f32[5,1,3]"]), ("add", ["f32[5,2,3]"])]
    assert j.jaxpr.eqns[0].params["broadcast_dimensions"] == (0, 2)
    j = jax.make_jaxpr(jax.vmap(lambda a, b: a * b, in_axes=(0, None)))(jnp.ones((5, 2, 3)), jnp.ones((1, 3)))
    assert _eqn_avals(j) == [("broadcast_in_dim", ["f32[1,1,3]"]), ("mul", ["f32[5,2,3]"])]
    assert j.jaxpr.eqns[0].params["broadcast_dimensions"] == (1, 2)


SHAPES = [((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 1, 3), (4, 1)), ((1, 3), (2, 1)), ((3,), (2, 3)), ((4, 1), (4, 5))]
OPS = {
    "add": (jnp.add, np.add), "subtract": (jnp.subtract, np.subtract), "multiply": (jnp.multiply, np.multiply),
    "divide": (jnp.divide, np.divide), "maximum": (jnp.maximum, np.maximum), "minimum": (jnp.minimum, np.minimum),
    "power": (jnp.power, np.power), "arctan2": (jnp.arctan2, np.arctan2), "greater": (jnp.greater, np.greater),
    "equal": (jnp.equal, np.equal), "hypot": (jnp.hypot, np.hypot),
}


def _operands(sa, sb):
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    return (rng.uniform(0.5, 2.0, sa).astype(np.float32), rng.uniform(0.5, 2.0, sb).astype(np.float32))


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_eager_and_jit(op, shapes):
    f, ref = OPS[op]
    x, y = _operands(*shapes)
    want = ref(x, y)
    np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(x), jnp.asarray(y))), want, rtol=1e-6)


@pytest.mark.parametrize("shapes", [((2, 3), (1, 3)), ((2, 1, 3), (1, 4, 1)), ((1, 3), (2, 1))], ids=str)
def test_lax_binary_broadcasts_size1(shapes):
    x, y = _operands(*shapes)
    for f, ref in ((lax.add, np.add), (lax.mul, np.multiply), (lax.max, np.maximum), (lax.lt, np.less)):
        np.testing.assert_allclose(np.asarray(f(x, y)), ref(x, y), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), ref(x, y), rtol=1e-6)


def test_complex_operands():
    x = (np.arange(6).reshape(2, 3) + 1j).astype(np.complex64)
    y = (np.arange(3) - 2j).astype(np.complex64)
    for f in (lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a / b):
        np.testing.assert_allclose(np.asarray(f(jnp.asarray(x), jnp.asarray(y))), f(x, y), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), f(x, y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lax.complex(np.ones((2, 3), np.float32), np.full((1, 3), 2, np.float32))),
                               np.full((2, 3), 1 + 2j), rtol=0)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_grad_sums_the_broadcast_dims(shapes):
    x, y = _operands(*shapes)
    gx, gy = jax.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y)
    full = np.broadcast_shapes(x.shape, y.shape)
    bx = np.broadcast_to(x, full)
    by = np.broadcast_to(y, full)

    def down(g, shape):   # NumPy's sum of a broadcast cotangent back to the operand's shape
        g = g.sum(axis=tuple(range(g.ndim - len(shape))))
        return g.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True)
    np.testing.assert_allclose(np.asarray(gx), down(by, x.shape), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gy), down(bx, y.shape), rtol=1e-5)
    assert gx.shape == x.shape and gy.shape == y.shape


@pytest.mark.parametrize("op", ["subtract", "divide", "maximum", "power", "arctan2", "hypot", "add"])
def test_grad_against_finite_differences(op):
    f = OPS[op][0]
    x, y = _operands((2, 3), (1, 3))
    y = y + np.float32(0.01)   # keeps maximum's operands apart
    loss = lambda a, b: (f(a, b) * np.arange(1, 7, dtype=np.float32).reshape(2, 3)).sum()
    gx, gy = jax.grad(loss, argnums=(0, 1))(x, y)
    jgx, jgy = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, y)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    ref = {"subtract": np.subtract, "divide": np.divide, "maximum": np.maximum, "power": np.power,
           "arctan2": np.arctan2, "hypot": np.hypot, "add": np.add}[op]
    w = np.arange(1, 7, dtype=np.float64).reshape(2, 3)
    L = lambda a, b: (ref(a, b) * w).sum()
    eps = 1e-6
    for g, jg, v, which in ((gx, jgx, x64, 0), (gy, jgy, y64, 1)):
        fd = np.zeros(v.shape)
        for idx in np.ndindex(v.shape):
            d = np.zeros(v.shape)
            d[idx] = eps
            hi = L(x64 + d, y64) if which == 0 else L(x64, y64 + d)
            lo = L(x64 - d, y64) if which == 0 else L(x64, y64 - d)
            fd[idx] = (hi - lo) / (2 * eps)
        np.testing.assert_allclose(np.asarray(g), fd, rtol=2e-3, atol=1e-3)
        np.testing.assert_allclose(np.asarray(jg), fd, rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("op", ["sub", "div", "max", "min", "pow", "atan2", "rem", "mul"])
def test_lax_grad_size1_against_finite_differences(op):
    f = getattr(lax, op)
    ref = {"sub": np.subtract, "div": np.divide, "max": np.maximum, "min": np.minimum, "pow": np.power,
           "atan2": np.arctan2, "rem": np.fmod, "mul": np.multiply}[op]
    x, y = _operands((2, 3), (1, 3))
    y = y + np.float32(0.013)
    w = np.arange(1, 7).reshape(2, 3)
    for xs, ys in ((x, y), (y, x)):
        loss = lambda a, b: (f(a, b) * w.astype(np.float32)).sum()
        gx, gy = jax.grad(loss, argnums=(0, 1))(xs, ys)
        L = lambda a, b: (ref(a, b) * w).sum()
        for g, which in ((gx, 0), (gy, 1)):
            v = (xs, ys)[which].astype(np.float64)
            fd = np.zeros(v.shape)
            for idx in np.ndindex(v.shape):
                d = np.zeros(v.shape)
                d[idx] = 1e-6
                args_hi = [xs.astype(np.float64), ys.astype(np.float64)]
                args_lo = list(args_hi)
                args_hi[which] = v + d
                args_lo[which] = v - d
                fd[idx] = (L(*args_hi) - L(*args_lo)) / 2e-6
            np.testing.assert_allclose(np.asarray(g), fd, rtol=2e-3, atol=1e-3)


def test_jvp_of_size1_operand():
    x, y = _operands((1, 3), (2, 3))
    _, t = jax.jvp(lambda a: a + y, (x,), (np.ones((1, 3), np.float32),))
    np.testing.assert_allclose(np.asarray(t), np.ones((2, 3)))
    _, t = jax.jvp(lambda a, b: a - b, (x, y), (np.ones((1, 3), np.float32), np.zeros((2, 3), np.float32)))
    np.testing.assert_allclose(np.asarray(t), np.ones((2, 3)))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (1, 0)], ids=str)
def test_vmap_values(in_axes):
    x, y = _operands((4, 2, 3), (4, 3))
    if in_axes[1] is None:
        y = y[0]
    if in_axes[0] is None:
        x = x[0]
    if in_axes[0] == 1:
        x = np.moveaxis(x, 0, 1)
    f = jax.vmap(lambda a, b: jnp.multiply(a, b) - jnp.maximum(a, b), in_axes=in_axes)
    xs = [np.take(x, i, axis=in_axes[0]) if in_axes[0] is not None else x for i in range(4)]
    ys = [y[i] if in_axes[1] is not None else y for i in range(4)]
    want = np.stack([a * b - np.maximum(a, b) for a, b in zip(xs, ys)])
    np.testing.assert_allclose(np.asarray(f(x, y)), want, rtol=1e-6)
    # under jit the product and the subtraction round once (XLA's contraction, JAX 0.10.2's bits; the
    # product in float64 is exact)
    fused = np.stack([(a.astype(np.float64) * b - np.maximum(a, b)).astype(np.float32) for a, b in zip(xs, ys)])
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x, y)), fused, rtol=1e-6)


def test_vmap_batched_scalar_next_to_size1():
    # a per-example scalar meeting per-example f32[1,3] and f32[2,3] operands (JAX's trailing-1s case)
    s = np.arange(1, 5, dtype=np.float32)
    x, _ = _operands((2, 3), (1,))
    f = jax.vmap(lambda s, a: lax.mul(lax.broadcast_in_dim(s, (1, 3), ()), a), in_axes=(0, None))
    np.testing.assert_allclose(np.asarray(f(s, x)), s[:, None, None] * x[None], rtol=1e-6)
    g = jax.vmap(lambda s, a: a * s, in_axes=(0, None))
    np.testing.assert_allclose(np.asarray(g(s, x)), s[:, None, None] * x[None], rtol=1e-6)


def test_errors_as_jax():
    with pytest.raises(TypeError, match=r"^mul: arrays must have the same number of dimensions, got \{1, 2\}$"):
        lax.mul(jnp.ones((2, 3)), jnp.ones((3,)))
    with pytest.raises(TypeError, match=r"^mul: arrays must have the same number of dimensions, got \{2, 3\}$"):
        lax.mul(jnp.ones((2, 3)), jnp.ones((2, 1, 3)))
    with pytest.raises(TypeError, match=r"^mul got incompatible shapes for broadcasting: \(2, 3\), \(4, 3\)\.$"):
        lax.mul(jnp.ones((2, 3)), jnp.ones((4, 3)))
    with pytest.raises(TypeError, match=r"^mul got incompatible shapes for broadcasting: \(2, 3\), \(1, 4\)\.$"):
        lax.mul(jnp.ones((2, 3)), jnp.ones((1, 4)))
    with pytest.raises(TypeError, match=r"^select `which` must be scalar or have the same shape as cases, got "
                                        r"`which` shape \(1, 3\) but case shape \(2, 3\)\.$"):
        lax.select(jnp.ones((1, 3), bool), jnp.ones((2, 3)), jnp.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(4,\)\]$"):
        jnp.add(jnp.ones((2, 3)), jnp.ones((4,)))
    with pytest.raises(TypeError, match=r"^add got incompatible shapes for broadcasting: \(2, 3\), \(4, 3\)\.$"):
        jnp.add(jnp.ones((2, 3)), jnp.ones((4, 3)))


def test_gpu_backend():
    from cranax import _core
    gpus = _core.gpu_devices() if getattr(_core, "HAS_GPU_BACKEND", False) else []
    if not gpus:
        pytest.skip("no GPU adapter")
    x, y = _operands((2, 1, 3), (4, 1))
    gx, gy = jax.device_put(x, gpus[0]), jax.device_put(y, gpus[0])
    f = jax.jit(lambda a, b: jnp.maximum(a, b) * (a - b) + lax.mul(a, jnp.ones((1, 1, 3))))
    np.testing.assert_allclose(np.asarray(f(gx, gy)), np.maximum(x, y) * (x - y) + x, rtol=1e-6)


# jnp.clip is one jitted call, as JAX's (its Python bounds enter as weak scalars, converted inside)
RECORDED_CLIP = {
    'clip_min': '{ lambda ; a:f32[2,3]. let\n    b:f32[2,3] = jit[\n      name=clip\n      jaxpr={ lambda ; a:f32[2,3] c:f32[]. let\n          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n          b:f32[2,3] = max d a\n        in (b,) }\n    ] a 0.0:f32[]\n  in (b,) }',
    'clip_max_int': '{ lambda ; a:f32[2,3]. let\n    b:f32[2,3] = jit[\n      name=clip\n      jaxpr={ lambda ; a:f32[2,3] c:i32[]. let\n          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n          b:f32[2,3] = min d a\n        in (b,) }\n    ] a 1:i32[]\n  in (b,) }',
    'clip_both': '{ lambda ; a:f32[2,3]. let\n    b:f32[2,3] = jit[\n      name=clip\n      jaxpr={ lambda ; a:f32[2,3] c:f32[] d:f32[]. let\n          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n          f:f32[2,3] = max e a\n          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n          b:f32[2,3] = min g f\n        in (b,) }\n    ] a -1.0:f32[] 1.0:f32[]\n  in (b,) }',
    'clip_none': '{ lambda ; a:f32[2,3]. let\n    b:f32[2,3] = jit[name=clip jaxpr={ lambda ; a:f32[2,3]. let  in (a,) }] a\n  in (b,) }',
    'clip_int': '{ lambda ; a:i32[2,3]. let\n    b:i32[2,3] = jit[\n      name=clip\n      jaxpr={ lambda ; a:i32[2,3] c:i32[] d:i32[]. let\n          e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n          f:i32[2,3] = max e a\n          g:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d\n          b:i32[2,3] = min g f\n        in (b,) }\n    ] a 0:i32[] 1:i32[]\n  in (b,) }',
    'clip_rank': '{ lambda ; a:f32[2,3] b:f32[3]. let\n    c:f32[2,3] = jit[\n      name=clip\n      jaxpr={ lambda ; a:f32[2,3] b:f32[3] d:f32[]. let\n          e:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n          f:f32[2,3] = max e a\n          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n          c:f32[2,3] = min g f\n        in (c,) }\n    ] a b 2.0:f32[]\n  in (c,) }',
}
CLIP_CASES = {"clip_min": (lambda a: jnp.clip(a, 0.0), (a23,)), "clip_max_int": (lambda a: jnp.clip(a, max=1), (a23,)),
              "clip_both": (lambda a: jnp.clip(a, -1.0, 1.0), (a23,)), "clip_none": (lambda a: jnp.clip(a), (a23,)),
              "clip_int": (lambda a: jnp.clip(a, 0, 1), (jnp.ones((2, 3), int),)),
              "clip_rank": (lambda a, b: jnp.clip(a, b, 2.0), (jnp.ones((2, 3)), jnp.ones((3,))))}


@pytest.mark.parametrize("name", sorted(CLIP_CASES))
def test_clip_jaxpr_as_jax(name):
    f, args = CLIP_CASES[name]
    assert str(jax.make_jaxpr(f)(*args)) == RECORDED_CLIP[name]


def test_clip_values():
    x = np.array([-2., -0.5, 0.5, 3.], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, -1.0, 1.0)), np.clip(x, -1, 1))
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, max=0)), np.minimum(x, 0))
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda v: jnp.clip(v, -1.0, 1.0).sum())(x)), [0., 1., 1., 0.])
