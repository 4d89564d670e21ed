"""Custom derivatives as JAX runs them (issue 18 item 4): which user functions run under each transformation
(the lines JAX's custom-derivatives guide prints, recorded from JAX 0.10.2), rules running on concrete values
outside ``jit``, ``vmap`` keeping the rules, ``nondiff_argnums``, ``symbolic_zeros``, ``defjvps``,
``custom_gradient``, ``closure_convert``, ``linear_call``/``linear_transpose`` and the errors' texts."""
from functools import partial

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from cranax.custom_derivatives import (CustomVJPPrimal, SymbolicZero, closure_convert, custom_vjp_primal_tree_values,
                                       linear_call)


def _jvp_printing_f():
    @jax.custom_jvp
    def f(x):
        print('called f!')
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        print('called f_jvp!')
        x, = primals
        t, = tangents
        return f(x), jnp.cos(x) * t
    return f


def _vjp_printing_f():
    @jax.custom_vjp
    def f(x):
        print("called f!")
        return jnp.sin(x)

    def f_fwd(x):
        print("called f_fwd!")
        return f(x), jnp.cos(x)

    def f_bwd(cos_x, y_bar):
        print("called f_bwd!")
        return (cos_x * y_bar,)
    f.defvjp(f_fwd, f_bwd)
    return f


def _lines(capsys):
    return capsys.readouterr().out.splitlines()


# Recorded from JAX 0.10.2 (the guide's snippets and the transformation orders around them).
def test_custom_jvp_runs_what_jax_runs(capsys):
    f = _jvp_printing_f()
    print(f(3.))
    assert _lines(capsys) == ["called f!", "0.14112"]
    print(jax.vmap(f)(jnp.arange(3.)))
    assert _lines(capsys) == ["called f!", "[0.         0.84147096 0.9092974 ]"]
    print(jax.jit(f)(3.))
    assert _lines(capsys) == ["called f!", "0.14112"]
    y, y_dot = jax.jvp(f, (3.,), (1.,))
    print(y_dot)
    assert _lines(capsys) == ["called f_jvp!", "called f!", "-0.9899925"]
    print(jax.grad(f)(3.))
    assert _lines(capsys) == ["called f_jvp!", "called f!", "-0.9899925"]
    print(jax.jit(jax.grad(f))(3.))
    assert _lines(capsys) == ["called f_jvp!", "called f!", "-0.9899925"]
    # jit(f) was traced for this signature above: only the rule is traced now
    print(jax.grad(jax.jit(f))(3.))
    assert _lines(capsys) == ["called f_jvp!", "called f!", "-0.9899925"]
    print(jax.vmap(jax.grad(f))(jnp.arange(3.)))
    assert _lines(capsys) == ["called f_jvp!", "called f!", "[ 1.          0.5403023  -0.41614684]"]
    # grad of vmap: the batched call still uses the rule
    print(jax.grad(lambda x: jax.vmap(f)(x).sum())(jnp.arange(3.)))
    assert _lines(capsys) == ["called f_jvp!", "called f!", "[ 1.          0.5403023  -0.41614684]"]


def test_custom_vjp_runs_what_jax_runs(capsys):
    f = _vjp_printing_f()
    print(f(3.))
    assert _lines(capsys) == ["called f!", "0.14112"]
    print(jax.grad(f)(3.))
    assert _lines(capsys) == ["called f_fwd!", "called f!", "called f_bwd!", "-0.9899925"]
    y, f_vjp = jax.vjp(f, 3.)
    print(y)
    assert _lines(capsys) == ["called f_fwd!", "called f!", "0.14112"]
    print(f_vjp(1.))
    assert _lines(capsys) == ["called f_bwd!", "(Array(-0.9899925, dtype=float32, weak_type=True),)"]
    with pytest.raises(TypeError, match=r"^can't apply forward-mode autodiff \(jvp\) to a custom_vjp function.$"):
        jax.jvp(f, (3.,), (1.,))
    assert _lines(capsys) == ["called f_fwd!", "called f!"]
    print(jax.jit(jax.grad(f))(3.))
    assert _lines(capsys) == ["called f_fwd!", "called f!", "called f_bwd!", "-0.9899925"]
    print(jax.vmap(f)(jnp.arange(3.)))
    assert _lines(capsys) == ["called f!", "[0.         0.84147096 0.9092974 ]"]
    print(jax.grad(lambda x: jax.vmap(f)(x).sum())(jnp.arange(3.)))
    assert _lines(capsys) == ["called f_fwd!", "called f!", "called f_bwd!", "[ 1.          0.5403023  -0.41614684]"]
    print(jax.vmap(jax.grad(f))(jnp.arange(3.)))
    assert _lines(capsys) == ["called f_fwd!", "called f!", "called f_bwd!", "[ 1.          0.5403023  -0.41614684]"]


def test_rules_and_functions_see_concrete_values():
    @jax.custom_jvp
    def f(x):
        return x

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        if x >= 0:
            return f(x), x_dot
        return f(x), 2 * x_dot
    assert float(jax.grad(f)(1.)) == 1.0
    assert float(jax.grad(f)(-1.)) == 2.0
    assert float(jax.jvp(f, (-3.,), (1.,))[1]) == 2.0
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(f))(1.)   # under jit the primal is abstract, as in JAX

    # eagerly the function itself runs on concrete values; defjvps sums per-argument rules
    @jax.custom_jvp
    def h(x):
        if x > 0:
            return x
        return 2 * x
    h.defjvps(lambda t, ans, x: 3 * t)
    assert (float(h(1.)), float(h(-1.)), float(jax.grad(h)(2.))) == (1.0, -2.0, 3.0)

    @jax.custom_jvp
    def g(x, y):
        return jnp.sin(x) * y
    g.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
              lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)
    np.testing.assert_allclose(jax.grad(g, argnums=(0, 1))(2., 3.), (np.cos(2.) * 3., np.sin(2.)), rtol=1e-6)
    g2 = jax.custom_jvp(lambda x, y: x * y)
    g2.defjvps(None, lambda t, ans, x, y: 5 * t)
    assert jax.grad(g2, argnums=(0, 1))(2., 3.) == (0.0, 5.0)


def test_nondiff_argnums():
    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        x, = primals
        x_dot, = tangents
        return f(x), 2. * x_dot
    assert float(app(lambda x: x ** 3, 3.)) == 27.0
    assert float(jax.grad(app, 1)(lambda x: x ** 3, 3.)) == 2.0

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def app2(f, x):
        return f(x)
    app2.defvjp(lambda f, x: (f(x), x), lambda f, x, g: (5 * g,))
    assert float(app2(lambda x: x ** 2, 4.)) == 16.0
    assert float(jax.grad(app2, 1)(lambda x: x ** 2, 4.)) == 5.0

    @partial(jax.custom_vjp, nondiff_argnames=("scale",))
    def sc(x, scale):
        return x * scale
    sc.defvjp(lambda x, scale: (x * scale, None), lambda scale, r, g: (g * scale * 10,))
    assert sc.nondiff_argnums == (1,)
    assert float(jax.grad(sc)(1., 3.)) == 30.0
    assert float(jax.grad(lambda x: sc(x, scale=2.))(1.)) == 20.0

    # a custom_vjp's non-differentiable arguments may not be tracers (JAX's error)
    @partial(jax.custom_vjp, nondiff_argnums=(1,))
    def ndt(x, y):
        return x * y
    ndt.defvjp(lambda x, y: (x * y, None), lambda y, r, g: (g,))
    assert float(ndt(3., 2.)) == 6.0
    for bad in (jax.grad(lambda y: ndt(1., y)), jax.jit(lambda y: ndt(1., y))):
        with pytest.raises(jax.errors.UnexpectedTracerError, match="nondiff_argnums as non-differentiable"):
            bad(2.)

    # a custom_jvp's non-differentiable array argument gets no tangent (stop_gradient, as JAX)
    @partial(jax.custom_jvp, nondiff_argnums=(1,))
    def mul(x, y):
        return x * y
    mul.defjvp(lambda y, p, t: (p[0] * y, t[0] * y))
    assert float(jax.grad(lambda y: mul(2., y))(3.)) == 0.0
    assert float(jax.grad(lambda x: mul(x, 3.))(2.)) == 3.0


def test_fixed_point_example_of_the_guide():
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return jnp.abs(x_prev - x) > 1e-6

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)
        _, x_star = lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)
        a_bar, = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
        return a_bar, jnp.zeros_like(x_star)
    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)
    # JAX 0.10.2 prints 1.4142135, 0.35355338, -0.088388346
    assert str(newton_sqrt(2.)) == "1.4142135"
    assert str(jax.grad(newton_sqrt)(2.)) == "0.35355338"
    np.testing.assert_allclose(float(jax.grad(jax.grad(newton_sqrt))(2.)), -0.088388346, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(newton_sqrt))(jnp.array([4., 9.])), [0.25, 1 / 6], rtol=1e-6)


def test_clip_gradient_and_pytree_cotangents():
    @jax.custom_vjp
    def clip_gradient(lo, hi, x):
        return x
    clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                         lambda res, g: (None, None, jnp.clip(g, res[0], res[1])))
    t = jnp.linspace(0, 10, 10)
    g = jax.vmap(jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))))(t)
    # JAX 0.10.2's values (0.75 * cos t: the clipped cotangent flows on through sin)
    np.testing.assert_allclose(g, [0.75, 0.33274948596954346, -0.4547407329082489, -0.7362554669380188,
                                   -0.19856226444244385, 0.5600648522377014, 0.6955256462097168, 0.05709731578826904,
                                   -0.6448614597320557, -0.6293036341667175], rtol=2e-6, atol=1e-6)
    assert float(jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x)))(0.)) == 0.75

    @jax.custom_vjp
    def h(p):
        return p["a"] * p["b"]
    h.defvjp(lambda p: (h(p), p), lambda p, g: ({"a": g * 7., "b": None},))
    assert jax.grad(h)({"a": 1.0, "b": 2.0}) == {"a": 7.0, "b": 0.0}


def test_vmap_batches_the_rules():
    # vmap over a rule with an unbatched argument: bwd's cotangent for it is summed over the batch
    @jax.custom_vjp
    def f(w, x):
        return w * x
    f.defvjp(lambda w, x: (w * x, (w, x)), lambda r, g: (g * r[1] * 10., g * r[0] * 100.))
    gw, gx = jax.grad(lambda w, x: jax.vmap(f, in_axes=(None, 0))(w, x).sum(), argnums=(0, 1))(2., jnp.arange(3.))
    assert float(gw) == 30.0
    np.testing.assert_array_equal(gx, [200., 200., 200.])

    @jax.custom_jvp
    def k(w, x):
        return w * x
    k.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1] * 10. + t[1] * p[0] * 100.))
    gw, gx = jax.grad(lambda w, x: jax.vmap(k, in_axes=(None, 0))(w, x).sum(), argnums=(0, 1))(2., jnp.arange(3.))
    assert float(gw) == 30.0
    np.testing.assert_array_equal(gx, [200., 200., 200.])
    # vmap over jit over a custom rule, then grad: the staged call keeps its rule
    gx = jax.grad(lambda x: jax.vmap(jax.jit(lambda y: k(2., y)))(x).sum())(jnp.arange(3.))
    np.testing.assert_array_equal(gx, [200., 200., 200.])
    gx = jax.grad(lambda x: jax.vmap(jax.jit(lambda y: f(2., y)))(x).sum())(jnp.arange(3.))
    np.testing.assert_array_equal(gx, [200., 200., 200.])
    # second order: the rule's tangent expression is differentiated in turn (JAX 0.10.2: 110.0)
    assert float(jax.grad(jax.grad(lambda x: k(x, x)))(1.)) == 110.0


def test_symbolic_zeros(capsys):
    @jax.custom_jvp
    def f(x, y):
        return x * y

    @partial(f.defjvp, symbolic_zeros=True)
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        print("zero tangents", type(tx) is SymbolicZero, type(ty) is SymbolicZero)
        out = jnp.zeros_like(x)
        if type(tx) is not SymbolicZero:
            out = out + tx * y
        if type(ty) is not SymbolicZero:
            out = out + x * ty * 10
        return f(x, y), out
    assert float(jax.grad(f)(2., 3.)) == 3.0
    assert float(jax.grad(f, 1)(2., 3.)) == 20.0
    assert _lines(capsys) == ["zero tangents False True", "zero tangents True False"]

    @jax.custom_vjp
    def g(x, y):
        return x * y, x + y

    def g_fwd(x, y):
        print("fwd", type(x).__name__, x.perturbed, y.perturbed)
        x, y = custom_vjp_primal_tree_values((x, y))
        return g(x, y), (x, y)

    def g_bwd(res, ct):
        x, y = res
        c1, c2 = ct
        print("bwd", type(c1) is SymbolicZero, type(c2) is SymbolicZero)
        c1 = 0. if type(c1) is SymbolicZero else c1
        c2 = 0. if type(c2) is SymbolicZero else c2
        return (c1 * y + c2, c1 * x + c2)
    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    assert float(jax.grad(lambda x, y: g(x, y)[0])(2., 3.)) == 3.0
    assert jax.grad(lambda x, y: g(x, y)[1], argnums=(0, 1))(2., 3.) == (1.0, 1.0)
    assert _lines(capsys) == ["fwd CustomVJPPrimal True False", "bwd False True",
                              "fwd CustomVJPPrimal True True", "bwd True False"]
    with pytest.raises(TypeError, match="unexpected leaf type"):
        custom_vjp_primal_tree_values((1.0,))
    assert CustomVJPPrimal(1.0, True).perturbed
    with pytest.raises(NotImplementedError, match="does not support symbolic zeros"):
        g.defvjp(g_fwd, g_bwd, symbolic_zeros=True, optimize_remat=True)


def test_custom_gradient():
    @jax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)
    assert (float(f(3.)), float(jax.grad(f)(3.)), float(jax.grad(jax.grad(f))(3.))) == (9.0, 3.0, 1.0)

    @jax.custom_gradient
    def f2(x, y):
        return x * y, lambda g: (g * y, g * x)
    assert (float(f2(3., 4.)), float(jax.grad(f2)(3., 4.)), float(jax.grad(f2, 1)(3., 4.))) == (12.0, 4.0, 3.0)


def test_closure_convert():
    def outer(x, w):
        def obj(z):
            return jnp.sum((z - w) ** 2) * x
        cf, consts = closure_convert(obj, jnp.ones(2))
        return len(consts), cf(jnp.ones(2), *consts)
    n, v = outer(2., jnp.array([1., 3.]))
    assert n == 0 and float(v) == 8.0   # concrete closed-over values are not hoisted
    hoisted = []

    def loss(w):
        n, v = outer(2., w)
        hoisted.append(n)
        return v
    np.testing.assert_array_equal(jax.grad(loss)(jnp.array([1., 3.])), [-0., 8.])
    assert hoisted == [1]   # the traced w is
    assert float(jax.jit(loss)(jnp.array([1., 3.]))) == 8.0
    cf, _ = closure_convert(lambda a, b: a + b, 1., 2.)
    with pytest.raises(TypeError, match="same Pytree structure as the example arguments"):
        cf((1., 2.), 3.)

    # the guide's use: a custom_vjp taking the converted function as a non-differentiable argument
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x, *args):
        return fn(x, *args)

    def apply_fwd(fn, x, *args):
        return fn(x, *args), (x, args)

    def apply_bwd(fn, res, g):
        x, args = res
        _, vjp = jax.vjp(fn, x, *args)
        return vjp(g)

    apply.defvjp(apply_fwd, apply_bwd)

    def use(w, x):
        fn, consts = closure_convert(lambda z: jnp.sin(z) * w, x)
        return apply(fn, x, *consts)
    gw, gx = jax.grad(use, argnums=(0, 1))(2., 0.5)
    np.testing.assert_allclose((gw, gx), (np.sin(0.5), 2 * np.cos(0.5)), rtol=1e-6)


def test_linear_call():
    def f(r, x):
        return x / r

    def t(r, t):
        return t / r

    def div_add(x, denom):
        return x + linear_call(f, t, denom, x)

    def transpose(f, x_example):
        def transposed(y):
            x, = jax.linear_transpose(f, x_example)(y)
            return x
        return transposed
    # JAX 0.10.2's printed values
    assert repr(div_add(9., 3.)) == "Array(12., dtype=float32, weak_type=True)"
    assert repr(transpose(partial(div_add, denom=3.), 1.)(18.)) == "Array(24., dtype=float32, weak_type=True)"

    def custom_id(x):
        return linear_call(lambda _, x: x, lambda _, t: 7., (), x)
    assert float(custom_id(1.)) == 1.0
    assert float(transpose(custom_id, 1.)(1.)) == 7.0
    assert float(transpose(transpose(custom_id, 1.), 1.)(1.)) == 1.0
    assert float(transpose(transpose(transpose(custom_id, 1.), 1.), 1.)(1.)) == 7.0
    assert float(jax.grad(lambda x: custom_id(x) * 2.)(3.)) == 7.0   # the transpose ignores its input
    assert "linear_call" in str(jax.make_jaxpr(custom_id)(1.))
    assert float(jax.jit(jax.grad(custom_id))(3.)) == 7.0
    # cranax batches linear_call (JAX 0.10.2 has no batching rule for it)
    np.testing.assert_array_equal(jax.vmap(lambda x: div_add(x, 2.))(jnp.arange(3.)), [0., 1.5, 3.])
    np.testing.assert_array_equal(jax.grad(lambda x: jax.vmap(custom_id)(x).sum())(jnp.arange(3.)), [7., 7., 7.])
    with pytest.raises(TypeError, match="transpose output pytree structure must match"):
        jax.grad(lambda x: linear_call(lambda _, x: x, lambda _, t: (t, t), (), x))(1.)


def test_linear_transpose():
    ft = jax.linear_transpose(lambda x, y: 2 * x + 3 * y, 1., 1.)
    assert ft(1.) == (2.0, 3.0)
    m = np.arange(6.).reshape(2, 3).astype(np.float32)
    ft = jax.linear_transpose(lambda v: jnp.asarray(m) @ v, jax.ShapeDtypeStruct((3,), jnp.float32))
    np.testing.assert_allclose(ft(jnp.ones(2))[0], m.T @ np.ones(2))
    with pytest.raises(TypeError, match="cotangent tree does not match function output"):
        ft((jnp.ones(2), 1.))
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        jax.linear_transpose(lambda x, i: x, 1., 1)


def test_rule_errors():
    @jax.custom_jvp
    def bad(x):
        return x
    bad.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match=r"^Custom JVP rule <lambda> for function bad must produce a pair \(list or "
                                        r"tuple of length two\) representing primal and tangent outputs, but got 1.0"):
        jax.jvp(bad, (1.,), (1.,))

    @jax.custom_jvp
    def bad2(x):
        return x
    bad2.defjvp(lambda p, t: (p[0], jnp.ones(3)))
    with pytest.raises(TypeError, match=r"^Custom JVP rule must produce primal and tangent outputs with "
                                        r"corresponding shapes and dtypes. Expected float32\[\] \(tangent type of "
                                        r"float32\[\]\) but got float32\[3\].$"):
        jax.jvp(bad2, (1.,), (1.,))

    @jax.custom_vjp
    def bad3(x, y):
        return x * y
    bad3.defvjp(lambda x, y: (x * y, None), lambda r, g: (g,))
    with pytest.raises(TypeError, match=r"but got bwd output structure PyTreeDef\(\(\*,\)\) for primal input "
                                        r"structure PyTreeDef\(\(\*, \*\)\).$"):
        jax.grad(bad3)(1., 2.)
    bad3.defvjp(lambda x, y: (x * y, None), lambda r, g: (g, jnp.ones(3)))
    with pytest.raises(ValueError, match=r"at output\[1\] the bwd rule produced an output of type float32\[3\] "
                                         r"corresponding to an input of type float32\[\], so the shapes do not match"):
        jax.grad(bad3)(1., 2.)

    @jax.custom_jvp
    def nojvp(x):
        return x
    with pytest.raises(AttributeError, match="^No JVP defined for custom_jvp function nojvp using defjvp.$"):
        nojvp(1.)
    novjp = jax.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="^No VJP defined for custom_vjp function <lambda> using defvjp.$"):
        novjp(1.)
    with pytest.raises(TypeError, match="defjvps"):
        jax.custom_jvp(lambda f, x: x, nondiff_argnums=(0,)).defjvps(None)
    with pytest.raises(TypeError, match="could not be resolved to positional-only arguments"):
        bad(y=1.)


def test_printed_jaxpr_names_the_call():
    f = jax.custom_jvp(lambda x: jnp.sin(x))
    f.defjvp(lambda p, t: (f(p[0]), t[0]))
    text = str(jax.make_jaxpr(f)(1.))
    assert "custom_jvp_call[" in text and "name=<lambda>" in text and "symbolic_zeros=False" in text
    g = jax.custom_vjp(lambda x: jnp.sin(x))
    g.defvjp(lambda x: (g(x), x), lambda r, ct: (ct,))
    assert "custom_vjp_call[" in str(jax.make_jaxpr(g)(1.))


def test_custom_call_params_print_in_jaxs_order():
    # JAX 0.10.2: name first, then the other params sorted (jvp_jaxpr_fun printed as jvp), num_consts only
    # when nonzero
    @jax.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (jnp.cos(x), jnp.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)
    f.defvjp(f_fwd, f_bwd)
    assert str(jax.make_jaxpr(f)(1.0, 2.0)) == """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_vjp_call[
      name=f
      bwd=f_bwd
      call_jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = mul f e
        in (g,) }
      fwd=f_fwd
      symbolic_zeros=False
    ] a b
  in (c,) }"""
    assert str(jax.make_jaxpr(jax.grad(f))(1.0, 2.0)) == """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = custom_vjp_call[
      name=f
      bwd=f_bwd
      call_jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = sin c
          f:f32[] = mul e d
        in (f,) }
      fwd=f_fwd
      symbolic_zeros=False
    ] a b
    g:f32[] = cos a
    h:f32[] = sin a
    i:f32[] = mul g 1.0:f32[]
    j:f32[] = mul i b
    _:f32[] = mul h 1.0:f32[]
  in (j,) }"""

    @jax.custom_jvp
    def h(x):
        return jnp.exp(x)
    h.defjvps(lambda t, ans, x: ans * t)
    assert str(jax.make_jaxpr(lambda x, t: jax.jvp(h, (x,), (t,)))(1.0, 1.0)) == """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_jvp_call[
      name=h
      call_jaxpr={ lambda ; d:f32[]. let e:f32[] = exp d in (e,) }
      jvp=jvp
      symbolic_zeros=False
    ] a
    f:f32[] = mul c b
  in (c, f) }"""


# ----------------------------------------------------------------------------------------------- optimize_remat
# custom_vjp(...).defvjp(..., optimize_remat=True): the fwd rule is staged as one remat_opt equation.
# Values, printed lines and texts recorded from JAX 0.10.2 running the same code.

def _remat_opt_f(log):
    @jax.custom_vjp
    def f(x):
        return jnp.sin(x)

    def f_fwd(x):
        log.append("fwd ran")
        return jnp.sin(x), jnp.cos(x)

    def f_bwd(c, g):
        return (c * g,)
    f.defvjp(f_fwd, f_bwd, optimize_remat=True)
    return f


def test_optimize_remat_values_and_what_ran():
    log = []
    f = _remat_opt_f(log)
    np.testing.assert_allclose(float(f(1.0)), 0.84147096, rtol=1e-6)
    assert log == []                                  # eager primal call: fwd does not run
    np.testing.assert_allclose(float(jax.grad(f)(1.0)), 0.5403023, rtol=1e-6)
    assert log == ["fwd ran"]
    np.testing.assert_allclose(float(jax.grad(jax.remat(lambda x: f(f(x))))(1.0)), 0.36003947, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(jnp.arange(3.))), [1., 0.5403023, -0.41614684],
                               rtol=1e-6)
    np.testing.assert_allclose(float(jax.jit(jax.grad(f))(0.5)), np.cos(0.5), rtol=1e-6)
    assert jax.custom_derivatives.remat_opt_p.name == "remat_opt"
    assert jax.custom_derivatives.remat_opt_p.multiple_results


def test_optimize_remat_jaxpr_and_errors():
    f = _remat_opt_f([])
    assert str(jax.make_jaxpr(jax.grad(f))(1.0)) == """{ lambda ; a:f32[]. let
    b:f32[] _:f32[] = remat_opt[
      fun_jaxpr_thunk=<function _memoize.<locals>.memoized at 0xXXXXXXXXXXXX>
      fwd_jaxpr={ lambda ; c:f32[]. let
          d:f32[] = sin c
          e:f32[] = cos c
        in (e, d) }
      num_consts=0
      num_res=1
    ] a
    f:f32[] = mul b 1.0:f32[]
  in (f,) }"""
    with pytest.raises(ValueError, match="Linearization failed to produce known values for all output primals"):
        jax.grad(jax.grad(f))(1.0)

    @jax.custom_vjp
    def g(x):
        return jnp.sin(x)

    def g_fwd(x):   # staged, even outside jit: it cannot branch on the value
        if x > 0:
            return jnp.sin(x), jnp.cos(x)
        return jnp.sin(x), jnp.cos(x)
    g.defvjp(g_fwd, lambda c, t: (c * t,), optimize_remat=True)
    with pytest.raises(jax.errors.TracerBoolConversionError, match="g_fwd at .* for custom_vjp fwd"):
        jax.grad(g)(1.0)
    with pytest.raises(NotImplementedError, match="remat optimization for custom_vjp does not support symbolic"):
        g.defvjp(g_fwd, lambda c, t: (c * t,), symbolic_zeros=True, optimize_remat=True)
