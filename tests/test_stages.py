"""jax.stages: trace → lower → compile, static arguments, ShapeDtypeStruct inputs, argument checks, cost and
memory analysis. Texts and values recorded from JAX 0.10.2 running the same code."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp


def _f(a, b):
    return a * b + 1


def test_static_argnums_through_the_stages():
    t = jax.jit(_f, static_argnums=0).trace(7, 8)
    assert isinstance(t, jax.stages.Traced)
    assert str(t.jaxpr) == ("{ lambda ; a:i32[]. let\n    b:i32[] = mul 7:i32[] a\n    c:i32[] = add b 1:i32[]\n"
                            "  in (c,) }")
    assert repr(t.out_info) == "ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True)"
    assert t.fun_name == "_f"
    lo = t.lower()
    assert isinstance(lo, jax.stages.Lowered)
    c = lo.compile()
    assert isinstance(c, jax.stages.Compiled)
    assert int(c(5)) == 36                      # the static argument is not passed again
    assert str(c.in_tree) == "PyTreeDef(((*,), {}))"
    assert repr(c.args_info) == "((ArgInfo(_aval=ShapedArray(int32[], weak_type=True), donated=False),), {})"
    with pytest.raises(TypeError) as e:
        c(7, 5)
    assert str(e.value) == ("Function compiled with input pytree does not match the input pytree it was called "
                            "with. There are 1 mismatches, including:\n    * at args, seen tuple of length 1 but now "
                            "given tuple of length 2, so the lengths do not match")
    with pytest.raises(TypeError) as e:
        c(5.0)
    assert str(e.value) == ("Argument types differ from the types for which this computation was compiled. Perhaps "
                            "you are calling the compiled executable with a different enable_x64 mode than when it "
                            "was AOT compiled? The mismatches are:\nArgument 'b' compiled with int32[] and called "
                            "with float32[]")


def test_static_argnames():
    h = jax.jit(lambda x, n: x * n, static_argnames="n")
    ch = h.lower(jnp.ones(3), n=3).compile()
    np.testing.assert_array_equal(np.asarray(ch(jnp.ones(3))), [3.0, 3.0, 3.0])
    with pytest.raises(TypeError, match=r"\* at kwargs, seen <class 'dict'> with 0 child but now given <class "
                       r"'dict'> with 1 child, so the numbers of children do not match, with the symmetric difference "
                       r"of key sets: \{'n'\}$"):
        ch(jnp.ones(3), n=3)


def test_shape_dtype_struct_inputs_and_analyses():
    g = jax.jit(lambda x, y: jnp.sin(x) @ y)
    sds = jax.ShapeDtypeStruct
    assert sds((2,), jnp.float32).sharding is None
    lo = g.lower(sds((2, 3), jnp.float32), sds((3, 4), jnp.float32))
    assert str(lo.in_tree) == "PyTreeDef(((*, *), {}))" and str(lo.out_tree) == "PyTreeDef(*)"
    assert repr(lo.args_info) == ("((ArgInfo(_aval=ShapedArray(float32[2,3]), donated=False), "
                                  "ArgInfo(_aval=ShapedArray(float32[3,4]), donated=False)), {})")
    cost = lo.cost_analysis()
    # JAX's (XLA's) flops and transcendentals; 'bytes accessed' here counts the program's inputs and outputs
    assert cost["flops"] == 48.0 and cost["transcendentals"] == 6.0 and cost["bytes accessed"] == 104.0
    cc = lo.compile()
    assert cc.cost_analysis() == cost
    m = cc.memory_analysis()
    # recorded from JAX 0.10.2: arguments 72, outputs 32, temporaries 24 (sin's result), no aliasing
    assert (m.argument_size_in_bytes, m.output_size_in_bytes, m.alias_size_in_bytes, m.temp_size_in_bytes) == \
        (72, 32, 0, 24)
    out = cc(jnp.ones((2, 3)), jnp.ones((3, 4)))
    np.testing.assert_allclose(np.asarray(out), np.full((2, 4), 3 * np.sin(np.float32(1))), rtol=1e-6)
    with pytest.raises(TypeError, match="\nArgument 'x' compiled with float32\\[2,3\\] and called with "
                       "float32\\[2,2\\]$"):
        cc(jnp.ones((2, 2)), jnp.ones((3, 4)))
    assert "dot_general" in lo.as_text() and cc.as_text()


def test_wrapped():
    assert isinstance(jax.jit(_f), jax.stages.Wrapped)
