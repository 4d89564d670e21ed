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


def _hlo(f, *args):
    return jax.jit(f).lower(*args).compiler_ir(dialect="hlo").as_hlo_text()


def _entry(text):
    """The ENTRY computation with the root's name folded, as optax's numerics_test compares them."""
    import re
    body = re.search(r"ENTRY.*", text, re.DOTALL).group()
    return re.sub("ROOT.*?=", "ROOT r =", re.sub("ENTRY.*?{", "ENTRY X", body))


def test_compiler_ir_hlo_text():
    # JAX 0.10.2 lowers x**2, x*x, jnp.square(x) and (x.conj()*x).real of a real x to the same HLO (one
    # multiply); of a complex x the last differs. optax's numerics_test checks both.
    abs_sq = lambda x: (x.conj() * x).real
    for x in (3, 3.0, np.array([4, 5.2])):
        texts = {_entry(_hlo(f, x)) for f in (lambda x: x ** 2, lambda x: x * x, jnp.square, abs_sq)}
        assert len(texts) == 1, texts
    for x in (1j, np.array([4 + 1j, 5.2 + 1j])):
        assert _entry(_hlo(jnp.square, x)) != _entry(_hlo(abs_sq, x))
    # Text recorded from JAX 0.10.2 (jax.jit(lambda x: x**5).lower(1.0)), the instruction counters aside:
    # JAX's exponentiation by squaring; the parameter is named after the argument.
    assert _hlo(lambda x: x ** 5, 1.0) == (
        "HloModule jit__lambda, entry_computation_layout={(f32[])->f32[]}\n\nENTRY main.1 {\n"
        "  x.1 = f32[] parameter(0)\n  mul.1 = f32[] multiply(x.1, x.1)\n"
        "  mul.2 = f32[] multiply(mul.1, mul.1)\n  ROOT mul.3 = f32[] multiply(x.1, mul.2)\n}\n\n")
    t = _hlo(lambda x, y: (jnp.sin(x) * 2.0 + y, x.sum()), np.ones((2, 3), np.float32), np.float32(1))
    assert t.startswith("HloModule jit__lambda, entry_computation_layout={(f32[2,3]{1,0}, f32[])->"
                        "(f32[2,3]{1,0}, f32[])}\n")
    for line in ("sin.1 = f32[2,3]{1,0} sine(x.1)", "constant.1 = f32[] constant(2)",
                 "broadcast.1 = f32[2,3]{1,0} broadcast(constant.1), dimensions={}", "y.1 = f32[] parameter(1)",
                 "reduce_sum.1 = f32[] reduce(x.1, constant.2), dimensions={0,1}, to_apply=region.1",
                 "ROOT tuple.1 = (f32[2,3]{1,0}, f32[]) tuple(add.1, reduce_sum.1)"):
        assert "\n  " + line + "\n" in t, line
    # a loop's body is a computation of its own
    t = _hlo(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * 2, x), 1.0)
    assert "jaxpr=scan.1" in t and "\nscan.1 {\n" in t
    lo = jax.jit(jnp.sin).lower(1.0)
    assert lo.compiler_ir("hlo").name() == "jit_sin"
    assert lo.compiler_ir() is None                     # no StableHLO (JAX: None when unavailable)
    with pytest.raises(ValueError, match="^unknown dialect: mhlo$"):
        lo.compiler_ir("mhlo")


def test_aot_stage_attributes_as_jax():
    # recorded from JAX 0.10.2 (the AOT guide's f with a donated second argument)
    t = jax.jit(lambda x, y: (x * 2, y), donate_argnums=1).trace(3, jnp.ones(2))
    assert str(t.in_avals) == "((ShapedArray(int32[], weak_type=True), ShapedArray(float32[2])), {})"
    assert str(t.out_avals) == "(ShapedArray(int32[], weak_type=True), ShapedArray(float32[2]))"
    assert t.donate_argnums == (1,)
    lowered = t.lower()
    assert str(lowered.in_avals) == str(t.in_avals) and lowered.donate_argnums == (1,)
    assert str(t.out_info) == ("(ShapeDtypeStruct(shape=(), dtype=int32, weak_type=True), "
                               "ShapeDtypeStruct(shape=(2,), dtype=float32))")
    assert str(lowered.out_info) == "(ShapeDtypeStruct(shape=(), dtype=int32), ShapeDtypeStruct(shape=(2,), dtype=float32))"
    compiled = lowered.compile()
    assert str(compiled.in_avals) == str(t.in_avals) and compiled.donate_argnums == (1,)
    s = str(jnp.ones(1).sharding)   # JAX on CPU: SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    assert str(compiled.input_shardings) == f"(({s}, {s}), {{}})"
    assert str(compiled.output_shardings) == f"({s}, {s})"
    assert jax.jit(lambda x: x).trace(1.0).donate_argnums == ()


def test_compiled_out_info_formats_and_shardings_as_jax():
    # recorded from JAX 0.10.2 (CPU, one device): the compiled out_info carries the sharding and the
    # row-major layout, and drops the weak type; the traced/lowered ones carry neither
    import cranax.experimental.layout as jl

    def f(x, y):
        return {"a": x * 2, "b": (y.sum(), x.astype(jnp.int32))}
    c = jax.jit(f).lower(jnp.ones((2, 3)), jnp.ones(4)).compile()
    dev = "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    lay = "Layout(major_to_minor=(0, 1), tiling=(), sub_byte_element_size_in_bits=0)"
    lay0 = "Layout(major_to_minor=(), tiling=(), sub_byte_element_size_in_bits=0)"
    assert str(c.out_info) == (
        f"{{'a': ShapeDtypeStruct(shape=(2, 3), dtype=float32, sharding={dev}, format={lay}), 'b': "
        f"(ShapeDtypeStruct(shape=(), dtype=float32, sharding={dev}, format={lay0}), "
        f"ShapeDtypeStruct(shape=(2, 3), dtype=int32, sharding={dev}, format={lay}))}}")
    o = c.out_info["a"]
    assert (o.shape, o.dtype, str(o.sharding), o.weak_type) == ((2, 3), np.float32, dev, False)
    assert str(o.format) == f"Format(layout={lay}, sharding={dev})"
    assert str(c.input_formats) == (
        f"((Format(layout={lay}, sharding={dev}), Format(layout=Layout(major_to_minor=(0,), tiling=(), "
        f"sub_byte_element_size_in_bits=0), sharding={dev})), {{}})")
    assert str(c.output_formats["b"][0]) == f"Format(layout={lay0}, sharding={dev})"
    assert str(jax.jit(f).lower(jnp.ones((2, 3)), jnp.ones(4)).out_info["a"]) == \
        "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    c1 = jax.jit(lambda x: x * 2).lower(1.0).compile()
    assert c1.out_info != jax.ShapeDtypeStruct((), jnp.float32) and c1.out_info.weak_type is False
    assert str(jax.jit(lambda x: x * 2).trace(1.0).out_info) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    assert str(jl.Layout((0, 1))) == "Layout(major_to_minor=(0, 1), tiling=None, sub_byte_element_size_in_bits=0)"
    assert jl.Layout((0, 1)) == jl.Layout((0, 1)) and hash(jl.Layout((0, 1))) == hash(jl.Layout((0, 1)))
    assert str(jl.Format()) == "Format(layout=None, sharding=None)"
    s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert str(jax.ShapeDtypeStruct((2,), jnp.float32, sharding=s)) == \
        f"ShapeDtypeStruct(shape=(2,), dtype=float32, sharding={dev})"
    assert str(jax.ShapeDtypeStruct((2,), jnp.float32, sharding=s).format) == f"Format(layout=None, sharding={dev})"
    with pytest.raises(ValueError, match="Sharding has to be concrete when layout is of type"):
        jl.Format(jl.Layout((0,)))
