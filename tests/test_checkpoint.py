"""``cranax.checkpoint`` / ``remat`` (the ``remat2`` primitive), ``checkpoint_name`` and the
``checkpoint_policies`` (issue 18). Printed jaxprs, residual counts and values were recorded from JAX 0.10.2;
derivatives are also checked against the un-checkpointed function and finite differences."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import ad_checkpoint as adc
from cranax import lax

cp = cranax.checkpoint_policies


def f(x):
    return jnp.sin(jnp.sin(x))


def g(x):
    a = adc.checkpoint_name(jnp.sin(x), "a")
    b = adc.checkpoint_name(jnp.sin(a), "b")
    return jnp.sin(b) * 2.0


def mlp(w, x):
    for _ in range(3):
        x = jnp.tanh(w @ x)
    return jnp.sum(x)


def _text(fun, *args, **kw):
    return str(cranax.make_jaxpr(fun, **kw)(*args))


# ----------------------------------------------------------------------------------------------- printed form

SIN_SIN = """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }
      policy=%s
      prevent_cse=%s
    ] a
  in (b,) }"""


def test_printed_checkpoint_equation():
    assert _text(cranax.checkpoint(f), 1.0) == SIN_SIN % ("None", "True")
    assert _text(cranax.remat(f), 1.0) == SIN_SIN % ("None", "True")
    assert _text(cranax.checkpoint(f, prevent_cse=False, policy=cp.nothing_saveable), 1.0) == \
        SIN_SIN % ("<function nothing_saveable at 0xXXXXXXXXXXXX>", "False")
    assert _text(cranax.checkpoint(f, policy=cp.dots_saveable), 1.0) == \
        SIN_SIN % ("DotsSaveable(only_if_no_batch_dims=False)", "True")
    assert _text(cranax.checkpoint(lambda x: x), 1.0) == """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let  in (c,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""
    assert _text(cranax.checkpoint(lambda x: jnp.sin(x) * 2.0), jnp.ones((2, 3))) == """{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[2,3]. let
          d:f32[2,3] = sin c
          e:f32[2,3] = mul d 2.0:f32[]
        in (e,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""


def test_printed_prevent_cse_tuples_and_names():
    assert _text(cranax.checkpoint(lambda x, y: (x * y, y), prevent_cse=(True, False)), 2.0, 3.0) == \
        """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = mul e f in (g, f) }
      policy=None
      prevent_cse=(True, False)
    ] a b
  in (c, d) }"""
    assert _text(cranax.checkpoint(lambda x: x * 2, prevent_cse=[True]), 2.0) == """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      policy=None
      prevent_cse=(True,)
    ] a
  in (b,) }"""
    assert _text(lambda x: adc.checkpoint_name({"a": x, "b": x + 1}, "q"), 2.0) == """{ lambda ; a:f32[]. let
    b:f32[] = add a 1.0:f32[]
    c:f32[] = name[name=q] a
    d:f32[] = name[name=q] b
  in (c, d) }"""

    def h(x):
        y = adc.checkpoint_name(jnp.sin(x), "s")
        return jnp.cos(y) * y
    assert _text(cranax.checkpoint(h, policy=cp.save_only_these_names("s")), 1.0) == """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let
          d:f32[] = sin c
          e:f32[] = name[name=s] d
          f:f32[] = cos e
          g:f32[] = mul f e
        in (g,) }
      policy=SaveOnlyTheseNames(saveable_names=frozenset({'s'}))
      prevent_cse=True
    ] a
  in (b,) }"""


def test_printed_static_argnums_jit_and_nesting():
    p = cranax.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    assert _text(p, 2.0, 3, static_argnums=1) == """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = integer_pow[y=3] c in (d,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""
    assert _text(cranax.jit(cranax.checkpoint(f)), 1.0) == """{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=f
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] = remat2[
            differentiated=False
            jaxpr={ lambda ; c:f32[]. let
                d:f32[] = sin c
                e:f32[] = sin d
              in (e,) }
            policy=None
            prevent_cse=True
          ] a
        in (b,) }
    ] a
  in (b,) }"""
    assert _text(cranax.checkpoint(cranax.jit(f)), 1.0) == """{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let
          d:f32[] = jit[
            name=f
            jaxpr={ lambda ; c:f32[]. let
                e:f32[] = sin c
                d:f32[] = sin e
              in (d,) }
          ] c
        in (d,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""


def test_printed_transformed_checkpoint():
    # jvp: a remat2 of the jvp (still differentiated=False)
    assert _text(lambda x, t: cranax.jvp(cranax.checkpoint(f), (x,), (t,)), 1.0, 1.0) == \
        """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:f32[] f:f32[]. let
          g:f32[] = sin e
          h:f32[] = cos e
          i:f32[] = mul f h
          j:f32[] = sin g
          k:f32[] = cos g
          l:f32[] = mul i k
        in (j, l) }
      policy=None
      prevent_cse=True
    ] a b
  in (c, d) }"""
    # vmap: a remat2 of the batched body
    assert _text(cranax.vmap(cranax.checkpoint(f)), jnp.ones(3)) == """{ lambda ; a:f32[3]. let
    b:f32[3] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[3]. let
          d:f32[3] = sin c
          e:f32[3] = sin d
        in (e,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""
    # grad: the primal runs outside; the backward pass recomputes inside a differentiated remat2 whose only
    # residual is the input
    assert _text(cranax.grad(cranax.checkpoint(f)), 1.0) == """{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = cos f
          i:f32[] = mul e h
          j:f32[] = mul i g
        in (j,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (c,) }"""
    assert _text(cranax.grad(cranax.checkpoint(lambda x, y: x * y), argnums=(0, 1)), 1.0, 2.0) == \
        """{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = mul a b
    c:f32[] d:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[]. let
          h:f32[] = mul e g
          i:f32[] = mul g f
        in (i, h) }
      policy=None
      prevent_cse=True
    ] a b 1.0:f32[]
  in (c, d) }"""
    assert _text(cranax.grad(cranax.grad(cranax.checkpoint(jnp.sin))), 0.5) == """{ lambda ; a:f32[]. let
    _:f32[] = sin a
    _:f32[] = cos a
    b:f32[] = cos a
    _:f32[] = mul 1.0:f32[] b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[] f:f32[]. let
          g:f32[] = sin d
          h:f32[] = mul e f
          i:f32[] = neg h
          j:f32[] = mul i g
        in (j,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[] 1.0:f32[]
  in (c,) }"""
    assert _text(lambda x: cranax.linearize(cranax.checkpoint(jnp.sin), x)[1](1.0), 0.5) == \
        """{ lambda ; a:f32[]. let
    _:f32[] = sin a
    b:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = cos c
          f:f32[] = mul d e
        in (f,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (b,) }"""


def test_printed_grad_with_everything_saveable():
    assert _text(cranax.grad(cranax.checkpoint(g, policy=cp.everything_saveable)), 0.5) == \
        """{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    d:f32[] = name[name=a] b
    e:f32[] = sin d
    f:f32[] = cos d
    g:f32[] = name[name=b] e
    h:f32[] = sin g
    i:f32[] = cos g
    _:f32[] = mul h 2.0:f32[]
    j:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; k:f32[] l:f32[] m:f32[] n:f32[]. let
          o:f32[] = mul n 2.0:f32[]
          p:f32[] = mul o m
          q:f32[] = mul p l
          r:f32[] = mul q k
        in (r,) }
      policy=<function everything_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] c f i 1.0:f32[]
  in (j,) }"""


# ----------------------------------------------------------------------------------------------- residuals

def _num_residuals(fun, *args):
    """Residuals the backward pass keeps: the operands of grad's differentiated remat2 but the cotangent."""
    closed = cranax.make_jaxpr(cranax.grad(fun))(*args)
    eqns = [e for e in closed.jaxpr.eqns if e.primitive.name == "remat2" and e.params["differentiated"]]
    assert len(eqns) == 1
    return len(eqns[0].invars) - 1


# Residual counts JAX 0.10.2 keeps for grad of checkpoint(g, policy=...) (read off its printed jaxprs).
POLICY_RESIDUALS = [
    (None, 1), (cp.nothing_saveable, 1), (cp.everything_saveable, 3),
    (cp.save_only_these_names("a"), 2), (cp.save_any_names_but_these("a"), 2),
    (cp.save_from_both_policies(cp.save_only_these_names("a"), cp.save_only_these_names("b")), 3),
    (cp.save_and_offload_only_these_names(names_which_can_be_saved=["a"], names_which_can_be_offloaded=[],
                                          offload_src="device", offload_dst="pinned_host"), 2),
]


@pytest.mark.parametrize("policy,n", POLICY_RESIDUALS)
def test_policies_choose_the_residuals(policy, n):
    assert _num_residuals(cranax.checkpoint(g, policy=policy), 0.5) == n
    # every policy gives the same derivative (recorded: 1.3945328), equal to the un-checkpointed one
    d = cranax.grad(cranax.checkpoint(g, policy=policy))(0.5)
    np.testing.assert_allclose(float(d), 1.3945328, rtol=1e-6)
    np.testing.assert_allclose(float(d), float(cranax.grad(g)(0.5)), rtol=1e-6)


MLP_GRAD_W = [[0.37713397, 1.0134577, 1.2868909], [0.23269758, 0.5962459, 0.74147296],
              [0.09213096, 0.22968328, 0.28134376]]
MLP_GRAD_X = [0.01514273, 0.02758522, 0.04002771]


@pytest.mark.parametrize("policy,n_res", [(None, 2), (cp.nothing_saveable, 2), (cp.dots_saveable, 5),
                                          (cp.dots_with_no_batch_dims_saveable, 5), (cp.checkpoint_dots, 5)])
def test_dots_policies(policy, n_res):
    w = jnp.arange(9.).reshape(3, 3) / 10
    x = jnp.arange(3.)
    gw, gx = cranax.grad(cranax.checkpoint(mlp, policy=policy), argnums=(0, 1))(w, x)
    np.testing.assert_allclose(gw, MLP_GRAD_W, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(gx, MLP_GRAD_X, rtol=2e-6, atol=1e-7)
    # residuals: w and x (x is closed over here, so an operand of the remat2) plus the saved products
    assert _num_residuals(lambda w: cranax.checkpoint(mlp, policy=policy)(w, x), w) == n_res


def test_policy_functions():
    from cranax.primitives.library import dot_general_p
    from cranax.primitives.elementwise import sin_p
    from cranax.primitives.remat import name_p
    a = cranax.core.ShapedArray((3, 3), np.float32)
    dn = (((1,), (0,)), ((), ()))
    batched = (((2,), (1,)), ((0,), (0,)))
    assert cp.dots_saveable(dot_general_p, a, a, dimension_numbers=dn) is True
    assert cp.dots_saveable(sin_p, a) is False
    assert cp.dots_with_no_batch_dims_saveable(dot_general_p, a, a, dimension_numbers=batched) is False
    assert cp.dots_with_no_batch_dims_saveable(dot_general_p, a, a, dimension_numbers=dn) is True
    assert cp.nothing_saveable(sin_p, a) is False and cp.everything_saveable(sin_p, a) is True
    assert cp.save_only_these_names("s")(name_p, a, name="s") is True
    assert cp.save_only_these_names("s")(name_p, a, name="t") is False
    assert cp.save_any_names_but_these("s")(sin_p, a) is False
    assert cp.save_any_names_but_these("s")(name_p, a, name="t") is True
    # JAX 0.10.2's save_anything_except_these_names keeps everything, the names included
    assert cp.save_anything_except_these_names("s")(sin_p, a) is True
    assert cp.save_anything_except_these_names("s")(name_p, a, name="s") is True
    assert cp.checkpoint_dots is cp.dots_saveable
    assert cp.checkpoint_dots_with_no_batch_dims is cp.dots_with_no_batch_dims_saveable
    assert repr(cp.save_only_these_names("a")) == "SaveOnlyTheseNames(saveable_names=frozenset({'a'}))"
    assert repr(cp.save_any_names_but_these("a")) == "SaveAnyNamesButThese(names=frozenset({'a'}))"
    assert repr(adc.Offloadable("device", "pinned_host")) == "Offloadable(src='device', dst='pinned_host')"
    assert sorted(n for n in dir(cp) if not n.startswith("_")) == [
        "checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable", "dots_with_no_batch_dims_saveable",
        "everything_saveable", "nothing_saveable", "offload_dot_with_no_batch_dims",
        "save_and_offload_only_these_names", "save_any_names_but_these", "save_anything_except_these_names",
        "save_from_both_policies", "save_only_these_names"]
    with pytest.raises(ValueError, match="should be a boolean"):
        cp.save_from_both_policies(cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"], names_which_can_be_offloaded=[], offload_src="d", offload_dst="h"),
            cp.nothing_saveable)(sin_p, a)
    with pytest.raises(ValueError, match="should be exclusive"):
        cp.save_and_offload_only_these_names(names_which_can_be_saved=["a"], names_which_can_be_offloaded=["a"],
                                             offload_src="d", offload_dst="h")


# ----------------------------------------------------------------------------------------------- values

def _fd(fun, x, eps=1e-3):
    x = np.float64(x)
    return (fun(x + eps) - fun(x - eps)) / (2 * eps)


def test_values_and_derivatives():
    c = cranax.checkpoint(f)
    assert float(c(1.0)) == pytest.approx(np.sin(np.sin(1.0)), rel=1e-6)
    d = float(cranax.grad(c)(1.0))
    assert d == pytest.approx(np.cos(np.sin(1.0)) * np.cos(1.0), rel=1e-6)
    assert d == pytest.approx(_fd(lambda x: np.sin(np.sin(x)), 1.0), rel=1e-5)
    # second derivative, jit of grad, vmap of grad, jvp, linearize
    d2 = float(cranax.grad(cranax.grad(c))(1.0))
    assert d2 == pytest.approx(_fd(lambda x: np.cos(np.sin(x)) * np.cos(x), 1.0), rel=1e-4)
    assert float(cranax.jit(cranax.grad(c))(1.0)) == pytest.approx(d, rel=1e-6)
    xs = jnp.array([0.1, 0.5, 1.0])
    np.testing.assert_allclose(cranax.vmap(cranax.grad(c))(xs), np.cos(np.sin(xs)) * np.cos(xs), rtol=1e-6)
    np.testing.assert_allclose(cranax.grad(lambda x: jnp.sum(cranax.checkpoint(f)(x)))(xs),
                               np.cos(np.sin(xs)) * np.cos(xs), rtol=1e-6)
    p, t = cranax.jvp(c, (1.0,), (2.0,))
    assert float(t) == pytest.approx(2 * d, rel=1e-6)
    _, lin = cranax.linearize(c, 1.0)
    assert float(lin(1.0)) == pytest.approx(d, rel=1e-6)
    # recorded from JAX 0.10.2
    assert float(cranax.grad(cranax.grad(cranax.checkpoint(g)))(0.5)) == pytest.approx(-1.9377745, rel=1e-6)
    assert float(cranax.grad(cranax.checkpoint(
        lambda x: jnp.cos(adc.checkpoint_name(jnp.sin(x), "s")) * adc.checkpoint_name(jnp.sin(x), "s"),
        policy=cp.save_only_these_names("s")))(1.0)) == pytest.approx(0.02104247, rel=1e-5)


def test_pytrees_static_args_and_closures():
    k = cranax.checkpoint(lambda x, y: {"a": x * y, "b": (x, jnp.sin(y))})
    out = k(1.0, 2.0)
    assert float(out["a"]) == 2.0 and float(out["b"][0]) == 1.0
    assert float(out["b"][1]) == pytest.approx(0.9092974, rel=1e-6)
    gx, gy = cranax.grad(lambda x, y: k(x, y)["a"] + k(x, y)["b"][1], argnums=(0, 1))(1.0, 2.0)
    assert float(gx) == 2.0 and float(gy) == pytest.approx(0.5838531, rel=1e-6)
    p = cranax.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    assert float(p(2.0, 3)) == 8.0 and float(cranax.grad(p)(2.0, 3)) == 12.0
    assert float(cranax.checkpoint(lambda x, n: x * n, static_argnums=-1)(2.0, 3)) == 6.0
    assert float(cranax.checkpoint(lambda x, n: x * n, static_argnames="n")(2.0, n=3)) == 6.0
    # a static argument need not be hashable (as JAX)
    np.testing.assert_array_equal(cranax.checkpoint(lambda x, n: x * n, static_argnums=(1,))(1.0, np.ones(2)),
                                  [1.0, 1.0])
    y = jnp.arange(3.)
    assert float(cranax.grad(lambda x: jnp.sum(cranax.checkpoint(lambda x: x * y)(x)))(1.0)) == 3.0
    assert cranax.checkpoint(f).__name__ == "f"
    # a checkpoint inside a scan body, differentiated (recorded: 0.6972664)
    r = cranax.grad(lambda x: lax.scan(lambda c, _: (cranax.checkpoint(jnp.sin)(c), None), x, None, length=3)[0])(0.5)
    assert float(r) == pytest.approx(0.6972664, rel=1e-6)


def test_traces_are_reused():
    traced = []

    def fn(x, n):
        traced.append(n)
        return jnp.sin(x) * n
    c = cranax.checkpoint(fn, static_argnums=1)
    for _ in range(3):
        assert float(cranax.grad(c)(0.5, 2)) == pytest.approx(2 * np.cos(0.5), rel=1e-6)
    assert traced == [2]
    c(0.5, 2.0)      # a static value of another type is another signature
    c(jnp.ones(2), 2)
    assert traced == [2, 2.0, 2]
    c(0.5, np.ones(1))   # unhashable static values trace every time
    c(0.5, np.ones(1))
    assert len(traced) == 5


def test_checkpoint_name():
    np.testing.assert_allclose(cranax.grad(lambda x: jnp.sum(jnp.sin(adc.checkpoint_name(x, "q"))))(jnp.ones(2)),
                               [0.5403023, 0.5403023], rtol=1e-6)
    np.testing.assert_array_equal(cranax.vmap(lambda x: adc.checkpoint_name(x * 2, "q"))(jnp.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(cranax.jit(lambda x: adc.checkpoint_name(x, "q") + 1)(jnp.ones(2)), [2.0, 2.0])
    assert float(adc.checkpoint_name(3.0, "q")) == 3.0


def test_errors():
    with pytest.raises(ValueError) as e:
        cranax.checkpoint(f, static_argnums=(3,))(1.0)
    assert str(e.value) == ("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer "
                            "values greater than or equal to `-len(args)` and less than `len(args)`, but got (3,), "
                            "while `len(args)` = 1")
    with pytest.raises(TypeError, match="must be an int, tuple of ints"):
        cranax.checkpoint(f, static_argnums=[0])(1.0)
    with pytest.raises(NotImplementedError, match="`concrete` option to `jax.checkpoint` was deprecated"):
        cranax.checkpoint(f, concrete=True)
    with pytest.raises(TypeError, match="prevent_cse must be a bool or tuple of bools"):
        cranax.checkpoint(f, prevent_cse=1)
    with pytest.raises(AttributeError) as e:
        adc.checkpoint
    assert str(e.value) == ("jax.ad_checkpoint.checkpoint was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; "
                            "use jax.checkpoint instead.")
    with pytest.raises(AttributeError, match="use jax.remat instead"):
        adc.remat
    assert [n for n in dir(adc) if not n.startswith("_")] == \
        ["Offloadable", "Recompute", "Saveable", "checkpoint_name", "checkpoint_policies", "print_saved_residuals"]
    # a traced value as a Python bool inside the checkpointed function is an error, as in JAX
    with pytest.raises(cranax.errors.TracerBoolConversionError):
        cranax.checkpoint(lambda x: x if x > 0 else -x)(1.0)


# Recorded from JAX 0.10.2: prevent_cse tuples follow the operands through grad, vmap and jvp (residuals
# True, the inputs keep their flags); a static argument that is traced is closed over (a leading operand);
# keyword arguments are dynamic; non-array outputs are literals of the body.
GRAD_CSE = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    _:f32[] = mul c b
    d:f32[] e:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; f:f32[] g:f32[] h:f32[]. let
          i:f32[] = sin f
          j:f32[] = cos f
          k:f32[] = mul i h
          l:f32[] = mul h g
          m:f32[] = mul l j
        in (m, k) }
      policy=None
      prevent_cse=(True, False, True)
    ] a b 1.0:f32[]
  in (d, e) }"""

VMAP_CSE = """{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:f32[2] e:f32[2]. let
          f:f32[2] = sin d
          g:f32[2] = mul f e
        in (g,) }
      policy=None
      prevent_cse=(True, False)
    ] a b
  in (c,) }"""

JVP_CSE = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] d:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; e:f32[] f:f32[] g:f32[] h:f32[]. let
          i:f32[] = sin e
          j:f32[] = cos e
          k:f32[] = mul g j
          l:f32[] = mul i f
          m:f32[] = mul k f
          n:f32[] = mul i h
          o:f32[] = add_any m n
        in (l, o) }
      policy=None
      prevent_cse=(True, False, True, True)
    ] a 2.0:f32[] b 0.0:f32[]
  in (c, d) }"""

STATIC_TRACED = """{ lambda ; a:f32[] b:i32[]. let
    c:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:i32[] e:f32[]. let
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=True] d
          g:f32[] = mul e f
        in (g,) }
      policy=None
      prevent_cse=True
    ] b a
  in (c,) }"""

KWARGS = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = mul d e in (f,) }
      policy=None
      prevent_cse=True
    ] a b
  in (c,) }"""

NON_ARRAY_OUT = """{ lambda ; a:f32[]. let
    b:i32[] c:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; d:f32[]. let  in (3:i32[], d) }
      policy=None
      prevent_cse=True
    ] a
  in (b, c) }"""


def test_printed_operand_flags_and_arguments():
    c = cranax.checkpoint(lambda x, y: jnp.sin(x) * y, prevent_cse=(True, False))
    assert _text(cranax.grad(c, argnums=(0, 1)), 1.0, 2.0) == GRAD_CSE
    assert _text(cranax.vmap(c), jnp.ones(2), jnp.ones(2)) == VMAP_CSE
    assert _text(lambda x, t: cranax.jvp(c, (x, 2.0), (t, 0.0)), 1.0, 1.0) == JVP_CSE
    assert _text(cranax.checkpoint(lambda x, n: x * n, static_argnums=1), 2.0, 3) == STATIC_TRACED
    assert _text(lambda x, y: cranax.checkpoint(lambda a, b=1.0: a * b)(x, b=y), 2.0, 3.0) == KWARGS
    assert _text(cranax.checkpoint(lambda x: (None, 3, x)), 1.0) == NON_ARRAY_OUT
    none, three, one = cranax.checkpoint(lambda x: (None, 3, x))(1.0)
    assert none is None and int(three) == 3 and float(one) == 1.0


def test_saved_residuals_are_rounded_and_ordered_as_jax():
    # JAX 0.10.2 puts a reduce_precision (to the dtype's own format) after the producer of every float
    # residual that the forward pass also reads, and orders the residuals by their first read in the
    # backward part (cos a, sin c before c itself)
    def h(x):
        y = jnp.sin(x)
        z = jnp.cos(y) * 2.0
        return jnp.sum(z * y)
    x = jnp.arange(3.0)
    hc = cranax.checkpoint(h, policy=cp.everything_saveable)
    assert _text(cranax.grad(hc), x) == """\
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = reduce_precision[exponent_bits=8 mantissa_bits=23] b
    d:f32[3] = cos a
    e:f32[3] = cos c
    f:f32[3] = sin c
    g:f32[3] = mul e 2.0:f32[]
    h:f32[3] = reduce_precision[exponent_bits=8 mantissa_bits=23] g
    i:f32[3] = mul h c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] i
    j:f32[3] = remat2[
      differentiated=True
      jaxpr={ lambda ; k:f32[3] l:f32[3] m:f32[3] n:f32[3] o:f32[]. let
          p:f32[3] = broadcast_in_dim o
          q:f32[3] = mul n p
          r:f32[3] = mul p m
          s:f32[3] = mul r 2.0:f32[]
          t:f32[3] = neg s
          u:f32[3] = mul t l
          v:f32[3] = add_any q u
          w:f32[3] = mul v k
        in (w,) }
      policy=<function everything_saveable at 0xXXXXXXXXXXXX>
      prevent_cse=True
    ] d f c h 1.0:f32[]
  in (j,) }"""
    want = [2.0, 0.04208494, 0.08589362]   # JAX 0.10.2
    np.testing.assert_allclose(cranax.grad(hc)(x), want, rtol=2e-7)
    np.testing.assert_allclose(cranax.jit(cranax.grad(hc))(x), want, rtol=2e-7)


def test_named_residuals_rounded_under_save_only_these_names(capsys):
    # JAX 0.10.2: the rounding sits after the name, print_saved_residuals looks through it, and a body traced
    # before (make_jaxpr first) still reports its source lines
    def gn(W, x):
        return jnp.sin(adc.checkpoint_name(jnp.dot(W, x), "dot"))
    line = gn.__code__.co_firstlineno + 1
    fc = cranax.checkpoint(lambda W1, W2, x: gn(W2, gn(W1, x)), policy=cp.save_only_these_names("dot"))
    W1, W2, x = jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones(4)
    assert _text(cranax.grad(lambda *a: fc(*a).sum()), W1, W2, x) == """\
{ lambda ; a:f32[5,4] b:f32[6,5] c:f32[4]. let
    d:f32[5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a c
    e:f32[5] = name[name=dot] d
    f:f32[5] = reduce_precision[exponent_bits=8 mantissa_bits=23] e
    g:f32[5] = sin f
    h:f32[6] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] b g
    i:f32[6] = name[name=dot] h
    j:f32[6] = reduce_precision[exponent_bits=8 mantissa_bits=23] i
    k:f32[6] = sin j
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] k
    l:f32[6] = broadcast_in_dim 1.0:f32[]
    m:f32[5,4] = remat2[
      differentiated=True
      jaxpr={ lambda ; n:f32[5] o:f32[6] p:f32[6,5] q:f32[4] r:f32[6]. let
          s:f32[5] = cos n
          t:f32[6] = cos o
          u:f32[6] = mul r t
          v:f32[5] = dot_general[
            dimension_numbers=(([0], [0]), ([], []))
            preferred_element_type=float32
          ] u p
          w:f32[5] = mul v s
          x:f32[5,4] = dot_general[
            dimension_numbers=(([], []), ([], []))
            preferred_element_type=float32
          ] w q
        in (x,) }
      policy=SaveOnlyTheseNames(saveable_names=frozenset({'dot'}))
      prevent_cse=True
    ] f j b c l
  in (m,) }"""
    adc.print_saved_residuals(fc, W1, W2, x)
    assert capsys.readouterr().out.splitlines() == [
        "f32[5,4] from the argument W1", "f32[6,5] from the argument W2", "f32[4] from the argument x",
        f"f32[5] named 'dot' from {__file__}:{line}:23 ({gn.__qualname__})", f"f32[6] named 'dot' from {__file__}:{line}:23 ({gn.__qualname__})"]
