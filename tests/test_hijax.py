"""``jax.experimental.hijax`` as JAX 0.10.2 runs it (issue 18: the custom-derivatives and hijax-types guides):
``VJPHiPrimitive`` subclasses evaluated, staged (one ``call_hi_primitive`` equation), differentiated by their
own rules (``vjp_fwd``/``vjp_bwd``/``vjp_bwd_retval`` for grad, ``jvp`` for jvp, ``lin``/``linearized`` for
linearize), batched (``batch``/``batch_dim_rule``) and nested (jit, scan, cond, grad of grad, hessian); the
errors of missing rules; and hi-types (``HiType``/``register_hitype``) eager, staged, jitted and differentiated.
Every value and text is JAX 0.10.2's, recorded from the same snippets."""
from dataclasses import dataclass

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental.hijax import (HiType, ShapedArray, VJPHiPrimitive, Zero, aval_method, instantiate_zeros,
                                       register_hitype)


class Cube(VJPHiPrimitive):
    def __init__(self, x_aval, scale=1.0):
        self.in_avals = (x_aval,)
        self.out_aval = x_aval
        self.params = dict(scale=scale)
        super().__init__()

    def expand(self, x):
        return self.scale * x ** 3

    def vjp_fwd(self, nzs_in, x):
        return self(x), x

    def vjp_bwd_retval(self, x, g):
        return (3 * self.scale * x ** 2 * g,)

    def jvp(self, primals, tangents):
        (x,), (t,) = primals, tangents
        return self(x), 3 * self.scale * x ** 2 * t

    def batch_dim_rule(self, axis_data, dims):
        return dims[0]


def cube(x, scale=1.0):
    return Cube(jax.typeof(x), scale)(x)


def _close(got, want, dtype=np.float32):
    got = np.asarray(got)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_eval_and_jit():
    assert cube(2.0, 0.5) == 4.0
    _close(jax.jit(cube)(jnp.float32(1.5)), 3.375)


def test_jaxpr_text():
    assert str(jax.make_jaxpr(lambda x: cube(x, 2.0))(1.0)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = call_hi_primitive[_prim=Cube[{'scale': 2.0}]] a\n  in (b,) }")
    # grad under jit: the primal is the primitive's equation (unused), the backward pass the rule's ops
    assert str(jax.jit(jax.grad(cube)).trace(2.0).jaxpr) == (
        "{ lambda ; a:f32[]. let\n    _:f32[] = call_hi_primitive[_prim=Cube[{'scale': 1.0}]] a\n"
        "    b:f32[] = integer_pow[y=2] a\n    c:f32[] = mul 3.0:f32[] b\n    d:f32[] = mul c 1.0:f32[]\n"
        "  in (d,) }")
    assert repr(Cube(jax.typeof(1.0), 2)) == "Cube[{'scale': 2}]"
    assert Cube(jax.typeof(1.0)) == Cube(jax.typeof(jnp.ones(3)))   # equal params: equal primitives


def test_grad_and_nesting():
    for f in (jax.grad(cube), jax.grad(jax.jit(cube)), jax.grad(jax.grad(cube)), jax.hessian(cube)):
        g = f(2.0)
        assert g.weak_type
        _close(g, 12.0)
    _close(jax.vjp(cube, 3.0)[1](2.0)[0], 54.0)
    scan = jax.grad(lambda x: jax.lax.scan(lambda c, _: (cube(c, 0.5), None), x, None, length=2)[0])
    _close(scan(1.5), 14.41626)
    _close(jax.grad(lambda x: jax.lax.cond(x > 0, cube, jnp.sin, x))(1.5), 6.75)


def test_jvp_and_vmap():
    y, t = jax.jvp(cube, (jnp.float32(2.0),), (jnp.float32(0.5),))
    _close(y, 8.0)
    _close(t, 6.0)
    _close(jax.vmap(cube)(jnp.arange(4.0)), [0., 1., 8., 27.])
    _close(jax.vmap(jax.grad(cube))(jnp.arange(4.0)), [0., 3., 12., 27.])
    _close(jax.vmap(cube, in_axes=1)(jnp.arange(6.0).reshape(2, 3)), [[0., 27.], [1., 64.], [8., 125.]])


class Mul(VJPHiPrimitive):
    seen = []

    def __init__(self, xa, ya):
        self.in_avals = (xa, ya)
        self.out_aval = xa
        self.params = {}
        super().__init__()

    def expand(self, x, y):
        return x * y

    def vjp_fwd(self, nzs_in, x, y):
        self.seen.append(nzs_in)
        return self(x, y), (x, y)

    def vjp_bwd_retval(self, res, g):
        x, y = res
        return (g * y, None)   # None: no cotangent for y

    def jvp(self, primals, tangents):
        self.seen.append(tuple(type(t).__name__ for t in tangents))
        (x, y), (tx, ty) = primals, tangents
        return self(x, y), instantiate_zeros(tx) * y + x * instantiate_zeros(ty)

    def batch(self, axis_data, args, dims):
        x, y = args
        dx, dy = dims
        x = jnp.moveaxis(x, dx, 0) if dx is not None else x
        y = jnp.moveaxis(y, dy, 0) if dy is not None else y
        return x * y, 0


def mul(x, y):
    return Mul(jax.typeof(x), jax.typeof(y))(x, y)


def test_nonzeros_symbolic_zeros_and_batch():
    Mul.seen.clear()
    _close(jax.grad(mul, 0)(2.0, 3.0), 3.0)
    _close(jax.grad(mul, 1)(2.0, 3.0), 0.0)
    assert Mul.seen == [(True, False), (False, True)]
    Mul.seen.clear()
    y, t = jax.jvp(lambda x: mul(x, 4.0), (2.0,), (1.0,))
    assert y == 8.0
    _close(t, 4.0)
    assert Mul.seen == [("float", "Zero")]   # the constant's tangent reaches the rule as a symbolic zero
    _close(jax.vmap(mul, in_axes=(1, None))(jnp.arange(6.0).reshape(2, 3), 2.0), [[0., 6.], [2., 8.], [4., 10.]])


class Sin(VJPHiPrimitive):
    def __init__(self, xa):
        self.in_avals = (xa,)
        self.out_aval = xa
        self.params = {}
        super().__init__()

    def expand(self, x):
        return jnp.sin(x)

    def lin(self, nzs_in, x):
        return self(x), jnp.cos(x)

    def linearized(self, c, t):
        return c * t


def test_linearize_and_missing_rules():
    sin = lambda x: Sin(jax.typeof(x))(x)   # noqa: E731
    y, f = jax.linearize(sin, 1.0)
    _close(y, 0.84147096)
    _close(f(2.0), 1.0806046)
    name = "<class 'test_hijax.Sin'>"
    with pytest.raises(NotImplementedError, match=f"^for grad support, subclass {name} must implement `vjp_fwd`$"):
        jax.grad(sin)(1.0)
    with pytest.raises(NotImplementedError, match=f"^for jvp support, subclass {name} must implement `jvp`$"):
        jax.jvp(sin, (1.0,), (1.0,))
    with pytest.raises(NotImplementedError,
                       match=f"^for vmap support, subclass {name} must implement `batch` or `batch_dim_rule`$"):
        jax.vmap(sin)(jnp.ones(2))
    with pytest.raises(NotImplementedError, match="^for linearize support, subclass <class 'test_hijax.Cube'> must "
                                                  "implement `lin` and `linearized`$"):
        jax.linearize(cube, 1.0)


class Acc(VJPHiPrimitive):
    """Pytrees in and out; the general backward rule with one accumulator per input leaf."""

    def __init__(self, xa, ya):
        self.in_avals = ((xa, ya),)
        self.out_aval = {"s": xa, "d": xa}
        self.params = {}
        super().__init__()

    def expand(self, p):
        x, y = p
        return {"s": x + y, "d": x - y}

    def vjp_fwd(self, nzs_in, p):
        return self(p), None

    def vjp_bwd(self, res, g, p_acc):
        xa, ya = p_acc
        gs, gd = instantiate_zeros(g["s"]), g["d"]
        xa.accum(gs)
        ya.accum(gs)
        if not isinstance(gd, Zero):   # "d" unused: a symbolic zero
            xa.accum(gd)
            ya.accum(-gd)


def test_pytrees_and_accumulators():
    acc = lambda x, y: Acc(jax.typeof(x), jax.typeof(y))((x, y))   # noqa: E731
    assert acc(1.0, 2.0) == {"d": -1.0, "s": 3.0}
    gx, gy = jax.grad(lambda x, y: acc(x, y)["s"], (0, 1))(1.0, 2.0)
    _close(gx, 1.0)
    _close(gy, 1.0)
    gx, gy = jax.grad(lambda x, y: (lambda o: o["s"] * o["d"])(acc(x, y)), (0, 1))(1.0, 2.0)
    _close(gx, 2.0)
    _close(gy, -4.0)


def test_definition_errors():
    class NoRules(VJPHiPrimitive):
        def __init__(self, xa):
            self.in_avals = (xa,)
            self.out_aval = xa
            self.params = {}
            super().__init__()

    class Both(NoRules):
        def vjp_bwd(self, res, g, a):
            pass

        def vjp_bwd_retval(self, res, g):
            pass

    class NoAvals(VJPHiPrimitive):
        def __init__(self):
            super().__init__()

    class Logs(Cube):
        vjp_bwd_retval = VJPHiPrimitive.vjp_bwd_retval

        def vjp_bwd(self, x, g, acc):
            acc.accum(g)
            return {"log": g}   # JAX 0.10.2 has no backward-pass logs: an assertion fails

    with pytest.raises(NotImplementedError, match="must implement `expand`$"):
        NoRules(jax.typeof(1.0))(1.0)
    with pytest.raises(AttributeError, match="should not override both `vjp_bwd` and `vjp_bwd_retval`$"):
        Both(jax.typeof(1.0))
    with pytest.raises(AttributeError, match=r"^subclass __init__ should set `self.in_avals`$"):
        NoAvals()
    with pytest.raises(AssertionError):   # arguments not of the in_avals' structure
        Cube(jax.typeof(1.0))((1.0, 2.0))
    with pytest.raises(AssertionError):
        jax.grad(lambda x: Logs(jax.typeof(x))(x))(1.0)


# ----------------------------------------------------------------------------------------------- hi-types

@dataclass(frozen=True)
class Pair:
    a: object
    b: object


@dataclass(frozen=True)
class PairTy(HiType):
    n: int

    def lo_ty(self):
        return [ShapedArray((self.n,), jnp.dtype('float32'))] * 2

    def lower_val(self, p):
        return [p.a, p.b]

    def raise_val(self, a, b):
        return Pair(a, b)

    def to_tangent_aval(self):
        return ShapedArray((2, self.n), jnp.dtype('float32'))

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return f'pair[{self.n}]'

    __repr__ = str_short
    seven = aval_method(lambda self: 7)


register_hitype(Pair, lambda p: PairTy(p.a.shape[0]))


class MakePair(VJPHiPrimitive):
    def __init__(self, xa):
        self.in_avals = (xa,)
        self.out_aval = PairTy(xa.shape[1])
        self.params = {}
        super().__init__()

    def expand(self, x):
        return Pair(x[0], x[1])

    def vjp_fwd(self, nzs, x):
        return self(x), None

    def vjp_bwd_retval(self, _, g):
        return (g,)


class Dot(VJPHiPrimitive):
    def __init__(self, pa):
        self.in_avals = (pa,)
        self.out_aval = ShapedArray((), jnp.dtype('float32'))
        self.params = {}
        super().__init__()

    def expand(self, p):
        return jnp.dot(p.a, p.b)

    def vjp_fwd(self, nzs, p):
        return self(p), p

    def vjp_bwd_retval(self, p, g):
        return (jnp.stack([g * p.b, g * p.a]),)


def make_pair(x):
    return MakePair(jax.typeof(x))(x)


def dot(p):
    return Dot(jax.typeof(p))(p)


XS = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def test_hitype_eval_and_jaxprs():
    p = make_pair(jnp.asarray(XS))
    assert (p.a.tolist(), p.b.tolist(), str(jax.typeof(p))) == ([0.0, 1.0, 2.0], [3.0, 4.0, 5.0], 'pair[3]')
    assert str(jax.make_jaxpr(lambda x: dot(make_pair(x)))(XS)) == (
        '{ lambda ; a:f32[2,3]. let\n    b:pair[3] = call_hi_primitive[_prim=MakePair[{}]] a\n'
        '    c:f32[] = call_hi_primitive[_prim=Dot[{}]] b\n  in (c,) }')
    assert str(jax.make_jaxpr(dot)(p)) == (
        '{ lambda ; a:pair[3]. let b:f32[] = call_hi_primitive[_prim=Dot[{}]] a in (b,) }')


def test_hitype_jit():
    p = make_pair(jnp.asarray(XS))
    _close(jax.jit(lambda x: dot(make_pair(x)))(XS), 14.0)   # hi-typed intermediate
    q = jax.jit(make_pair)(XS)                              # hi-typed result
    assert type(q) is Pair and (q.a.tolist(), q.b.tolist()) == ([0.0, 1.0, 2.0], [3.0, 4.0, 5.0])
    _close(jax.jit(dot)(p), 14.0)                           # hi-typed argument
    _close(jax.jit(dot)(q), 14.0)                           # (the same signature again: the cached program)
    with pytest.raises(AttributeError, match="^DynamicJaxprTracer has no attribute a$"):
        jax.jit(lambda q: q.a)(p)
    assert jax.jit(lambda q: jnp.zeros(q.seven()))(p).shape == (7,)   # the aval's method, on its tracer


def test_hitype_grad():
    _close(jax.grad(lambda x: dot(make_pair(x)))(XS), [[3., 4., 5.], [0., 1., 2.]])
    g = jax.grad(dot)(make_pair(jnp.asarray(XS)))   # the cotangent of a pair: its tangent type
    assert str(jax.typeof(g)) == 'float32[2,3]'
    _close(g, [[3., 4., 5.], [0., 1., 2.]])


def test_hitype_inside_loops_and_conds():
    body = lambda c, x: (c + dot(make_pair(jnp.stack([x, x]))), None)   # noqa: E731
    _close(jax.lax.scan(body, 0.0, XS)[0], 55.0)
    _close(jax.jit(lambda xs: jax.lax.scan(body, 0.0, xs)[0])(XS), 55.0)
    out = jax.lax.cond(True, lambda x: dot(make_pair(x)), lambda x: 0.0, XS)
    assert out.weak_type
    _close(out, 14.0)


def test_hitype_closed_over():
    p = make_pair(jnp.asarray(XS))
    assert str(jax.make_jaxpr(lambda s: s * dot(p))(2.0)) == (
        '{ lambda a:pair[3]; b:f32[]. let\n    c:f32[] = call_hi_primitive[_prim=Dot[{}]] a\n'
        '    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n    e:f32[] = mul d c\n'
        '  in (e,) }')
    _close(jax.jit(lambda s: s * dot(p))(2.0), 28.0)
    _close(jax.grad(lambda s: s * dot(p))(2.0), 14.0)
    # the value class built on traced arrays outside a hi-primitive: JAX's error
    with pytest.raises(TypeError, match=r"^No constant handler for type: <class '.*DynamicJaxprTracer'>$"):
        jax.jit(lambda x: Pair(x[0], x[1]))(XS)


def test_vmap_of_rule_text_and_nesting():
    # the default batch rule binds VmapOf (JAX's name and params; an unnamed axis is named by a fresh object)
    assert str(jax.make_jaxpr(jax.vmap(jax.vmap(cube), in_axes=1))(jnp.ones((2, 3)))) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[3,2] = call_hi_primitive[\n      _prim=VmapOf[{'prim': VmapOf[{'prim': "
        "Cube[{'scale': 1.0}], 'axis_data': AxisData(name=<object object at 0xXXXXXXXXXXXX>, size=2, spmd_name=None, "
        "explicit_mesh_axis=None), 'in_dims': (0,), 'out_dim': 0}], 'axis_data': AxisData(name=<object object at "
        "0xXXXXXXXXXXXX>, size=3, spmd_name=None, explicit_mesh_axis=None), 'in_dims': (1,), 'out_dim': 0}]\n    ] a\n"
        "  in (b,) }")
    _close(jax.jit(jax.vmap(cube))(jnp.arange(4.0)), [0., 1., 8., 27.])
    _close(jax.vmap(jax.vmap(cube), in_axes=1)(jnp.arange(6.).reshape(2, 3)), [[0., 27.], [1., 64.], [8., 125.]])
    _close(jax.vmap(jax.grad(lambda x: jnp.sum(jax.vmap(cube)(x))))(jnp.arange(6.).reshape(2, 3)),
           [[0., 3., 12.], [27., 48., 75.]])


def test_hitype_scan_carries_and_ys():
    def body(c, x):
        q = make_pair(jnp.stack([x, x]) + dot(c))
        return q, dot(q)
    xs = np.arange(9.0, dtype=np.float32).reshape(3, 3) / 10
    c, ys = jax.lax.scan(body, make_pair(jnp.asarray(xs[:2])), xs)
    assert str(jax.typeof(c)) == 'pair[3]'
    _close(c.a, [1.6742355823516846, 1.774235486984253, 1.8742356300354004])
    _close(ys, [0.19280000030994415, 1.0742355585098267, 9.463735580444336])
    c2, ys2 = jax.jit(lambda xs: jax.lax.scan(body, make_pair(xs[:2]), xs))(xs)   # (JAX 0.10.2 fails here)
    _close(c2.a, c.a)
    _close(ys2, ys)
    # hi-typed ys: their arrays stacked, then raised
    _, qs = jax.lax.scan(lambda c, x: (c, make_pair(jnp.stack([x, x]))), 0.0, xs)
    assert str(jax.typeof(qs)) == 'pair[3]' and qs.a.shape == (3, 3)
