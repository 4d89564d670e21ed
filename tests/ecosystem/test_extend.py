"""The extension API (``jax.extend.core``, ``jax.interpreters.{ad,batching,mlir}``) under the alias: a user
primitive defined JAX's way works eagerly and under jit, grad, jvp and vmap, with the values and jaxpr real JAX
0.10.2 gave for the same program (tests/ecosystem/custom_primitive.py)."""
import numpy as np
import pytest

import custom_primitive

EXPECTED = {"eager": [1.5, 3.0, 13.0], "jit": [1.5, 3.0, 13.0], "grad": [2.0, 4.0, 6.0], "grad_b": [1.0, 1.0, 1.0],
            "jit_grad": [6.0, 24.0, 156.0], "vmap": [[1.5, 3.0, 13.0], [4.5, 15.0, 40.0]],
            "jit_vmap": [[1.5, 3.0, 13.0], [1.25, 3.0, 19.0]], "jvp": [[1.5, 3.0, 13.0], [2.0, 4.0, 6.0]],
            "jaxpr": "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = multiply_add a a b in (c,) }"}


def test_user_primitive_matches_jax():
    got = custom_primitive.results()
    assert got["jaxpr"] == EXPECTED["jaxpr"]
    for k, v in EXPECTED.items():
        if k != "jaxpr":
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(v), rtol=0, atol=0, err_msg=k)


def test_primitive_without_impl_runs_its_lowering_eagerly():
    # JAX's default impl compiles the one-primitive program through the registered lowering.
    import jax.numpy as jnp
    from jax.extend.core import Primitive
    from jax.interpreters import mlir
    import jax.core as core
    p = Primitive("twice_plus_one")
    p.def_abstract_eval(lambda a: core.ShapedArray(a.shape, a.dtype))
    mlir.register_lowering(p, mlir.lower_fun(lambda a: 2 * a + 1, multiple_results=False))
    np.testing.assert_array_equal(np.asarray(p.bind(jnp.arange(3.0))), [1.0, 3.0, 5.0])


def test_primitive_without_lowering_raises_jax_error_under_jit():
    import jax
    import jax.numpy as jnp
    from jax.extend.core import Primitive
    import jax.core as core
    p = Primitive("no_lowering")
    p.def_abstract_eval(lambda a: core.ShapedArray(a.shape, a.dtype))
    with pytest.raises(NotImplementedError, match="MLIR translation rule for primitive 'no_lowering' not found"):
        jax.jit(lambda a: p.bind(a))(jnp.ones(2))


def test_multiple_results_primitive_and_jaxpr_helpers():
    import jax
    import jax.numpy as jnp
    from jax.extend.core import Primitive, jaxpr_as_fun, eval_jaxpr
    from jax.interpreters import mlir
    import jax.core as core
    p = Primitive("split_sum")
    p.multiple_results = True
    p.def_abstract_eval(lambda a, b: [core.ShapedArray(a.shape, a.dtype)] * 2)
    mlir.register_lowering(p, mlir.lower_fun(lambda a, b: [a + b, a - b], multiple_results=True))
    f = lambda a, b: p.bind(a, b)
    s, d = jax.jit(f)(jnp.array([3.0, 1.0]), jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(s), [4.0, 3.0])
    np.testing.assert_array_equal(np.asarray(d), [2.0, -1.0])
    closed = jax.make_jaxpr(lambda a: jnp.sin(a) * 2.0)(jnp.ones(3))
    x = jnp.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(np.asarray(jaxpr_as_fun(closed)(x)[0]), np.sin([0.0, 0.5, 1.0]) * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(eval_jaxpr(closed.jaxpr, closed.consts, x)[0]),
                               np.sin([0.0, 0.5, 1.0]) * 2, rtol=1e-6)


def test_trace_stack_queries_match_jax():
    # Recorded from JAX 0.10.2: (under a jit, under a vmap, axis names, non-empty axis env) per context.
    import jax
    import jax.numpy as jnp
    import jax.extend.core as c
    seen = []

    def f(x):
        seen.append((c.unsafe_am_i_under_a_jit_DO_NOT_USE(), c.unsafe_am_i_under_a_vmap_DO_NOT_USE(),
                     c.unsafe_get_axis_names_DO_NOT_USE(), c.nonempty_axis_env_DO_NOT_USE()))
        return x * 2.0
    x = jnp.ones(3)
    f(x)
    jax.jit(f)(x)
    jax.vmap(f)(x)
    jax.vmap(f, axis_name="i")(x)
    jax.jit(jax.vmap(f, axis_name="i"))(x)
    jax.grad(lambda x: f(x).sum())(x)
    jax.jvp(f, (x,), (x,))
    jax.vmap(jax.vmap(f, axis_name="a"), axis_name="b")(jnp.ones((2, 3)))
    assert seen == [(False, False, [], False), (True, False, [], False), (False, True, [], False),
                    (False, True, ["i"], True), (True, True, ["i"], True), (False, False, [], False),
                    (False, False, [], False), (False, True, ["b", "a"], True)]


def test_call_primitive_tokens_and_tags_match_jax():
    import jax.numpy as jnp
    from jax import lax
    from jax.extend import core as c, linear_util as lu
    p = c.CallPrimitive("my_call")
    fun = lu.wrap_init(lambda x, y: [x * y + 1.0])
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'my_call' not implemented"):
        p.bind(jnp.float32(3.0), jnp.float32(2.0), subfuns=(fun,))
    p.def_impl(c.call_impl)
    out = p.bind(jnp.float32(3.0), jnp.float32(2.0), subfuns=(fun,))
    assert isinstance(out, list) and len(out) == 1 and float(out[0]) == 7.0
    assert p.multiple_results and p.call_primitive
    assert c.TraceTag() == c.TraceTag() and hash(c.TraceTag()) == hash(c.TraceTag())
    assert isinstance(lax.create_token(), c.Token)
    assert repr(c.AbstractToken()) == "AbstractToken()" and c.AbstractToken().str_short() == "Tok"
    import jax.errors
    assert c.InconclusiveDimensionOperation is jax.errors.InconclusiveDimensionOperation
    import collections.abc
    assert lu.Callable is collections.abc.Callable
