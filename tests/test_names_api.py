"""The small program-level names of issue 18 (tree, dtypes, errors, stages, debug effects, strict promotion),
each against what JAX 0.10.2 returns or raises for the same call (recorded from jax 0.10.2 and written here)."""
import collections
import dataclasses
import operator

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import tree_util as tu


# ---------------------------------------------------------------------------------------------- trees

def test_flatten_one_level():
    assert tu.flatten_one_level({"a": 1, "b": (2, 3)}) == ((1, (2, 3)), ("a", "b"))
    assert tu.flatten_one_level((1, [2])) == ((1, [2]), None)
    assert tu.flatten_one_level(None) == ((), None)
    children, meta = tu.flatten_one_level(collections.OrderedDict(b=1, a=2))
    assert list(children) == [1, 2] and meta == ("b", "a")
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)


def test_flatten_one_level_with_keys():
    assert tu.flatten_one_level_with_keys({"a": 1, "b": (2, 3)}) == (
        ((tu.DictKey("a"), 1), (tu.DictKey("b"), (2, 3))), ("a", "b"))
    assert tu.flatten_one_level_with_keys([5, 6]) == (((tu.SequenceKey(0), 5), (tu.SequenceKey(1), 6)), None)
    with pytest.raises(ValueError):
        tu.flatten_one_level_with_keys(1.0)


def test_is_tree_node():
    assert [tu.is_tree_node(t) for t in (int, tuple, type(None), dict, list)] == [False, True, True, True, True]
    P = collections.namedtuple("P", "x y")
    assert tu.is_tree_node(P)
    assert tu.default_registry.is_node(tuple) and not tu.default_registry.is_node(float)
    assert tu.default_registry.flatten_one_level((1, 2)) == ((1, 2), None)


def test_tree_broadcast():
    assert tu.tree_broadcast([1, 2], [(3, 4), {"a": 5}]) == [(1, 1), {"a": 2}]
    assert tu.tree_broadcast(1, (3, 4)) == (1, 1)
    assert jax.tree.broadcast((1, (2, 3)), ((4, 5), (6, [7, 8]))) == ((1, 1), (2, [3, 3]))
    assert tu.tree_broadcast((1, None), ((4, 5), None)) == ((1, 1), None)
    with pytest.raises(ValueError) as e:
        tu.tree_broadcast((1, 2), (3, 4, 5))
    assert str(e.value) == (
        "pytree structure error: different lengths of tuple at key path\n    broadcast_prefix prefix_tree\n"
        "At that key path, the prefix pytree broadcast_prefix prefix_tree has a subtree of type tuple of length 2, "
        "but the full pytree has a subtree of the same type but of length 3.")


def test_tree_reduce_associative():
    assert tu.tree_reduce_associative(operator.add, [1, (2, 3), {"a": 4}]) == 10
    assert jax.tree.reduce_associative(lambda a, b: f"({a}+{b})", ["a", "b", "c", "d", "e"]) == "((a+b)+(c+(d+e)))"
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    assert tu.tree_reduce_associative(operator.add, [1, 2], identity=10) == 3
    with pytest.raises(TypeError, match="Must specify identity for parallel reduction of empty sequence."):
        tu.tree_reduce_associative(operator.add, [])


def test_register_static_and_tree_static():
    class S:
        def __init__(self, v):
            self.v = v

        def __hash__(self):
            return hash(self.v)

        def __eq__(self, o):
            return isinstance(o, S) and o.v == self.v

    assert tu.register_static(S) is S
    assert tu.tree_leaves([S(1), 2]) == [2]
    assert tu.tree_structure([S(1), 2]) == tu.tree_structure([S(1), 3])
    assert tu.tree_structure([S(1), 2]) != tu.tree_structure([S(2), 2])
    assert not tu.is_tree_node(int)

    @tu.register_dataclass
    @dataclasses.dataclass
    class MyOp:
        x: object
        y: object
        op: str = jax.tree.static(default="add")

    m = MyOp(x=jnp.ones(3), y=jnp.arange(3))
    leaves, treedef = jax.tree.flatten(m)
    assert len(leaves) == 2 and str(treedef) == "PyTreeDef(CustomNode(MyOp[('add',)], [*, *]))"
    assert jax.tree.unflatten(treedef, leaves).op == "add"
    with pytest.raises(TypeError):
        jax.tree.static(1)


def test_register_pytree_node_returns_none():
    Z = type("Z", (), {})
    assert tu.register_pytree_node(Z, lambda z: ((), None), lambda a, c: Z()) is None


# ---------------------------------------------------------------------------------------------- dtypes, errors

def test_float0_and_itemsize_bits():
    assert jax.dtypes.float0 == np.dtype([("float0", np.void, 0)]) and jax.dtypes.float0.itemsize == 0
    assert repr(jax.dtypes.float0) == "dtype([('float0', 'V')])"
    assert [jax.dtypes.itemsize_bits(d) for d in (np.float32, np.bool_, np.int8, "int4", np.float16)] == \
        [32, 8, 8, 4, 16]


def test_typed_keys_are_arrays_of_prng_key_dtype():
    k = jax.random.key(0)
    assert isinstance(k, jax.Array)
    assert jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key)
    assert jax.dtypes.issubdtype(k.dtype, jax.dtypes.extended)
    assert not jax.dtypes.issubdtype(k.dtype, np.floating)
    assert not jax.dtypes.issubdtype(np.float32, jax.dtypes.extended)
    assert not isinstance(np.zeros(2), jax.Array)


def test_errors_classes():
    e = jax.errors.JAXIndexError("some msg")
    assert isinstance(e, IndexError)
    assert str(e) == "some msg\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.JAXIndexError"
    e = jax.errors.KeyReuseError("some msg")
    assert isinstance(e, jax.errors.JAXTypeError) and isinstance(e, TypeError)
    assert str(e) == "some msg\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.KeyReuseError"
    assert str(jax.errors.JaxprTypeError("some msg")) == "some msg"
    assert issubclass(jax.errors.JaxprTypeError, TypeError)
    assert jax.errors.InconclusiveDimensionOperation.__mro__[1] is Exception


def test_stages_compiler_options_and_debug_effects():
    assert repr(jax.stages.CompilerOptions) == "dict[str, typing.Union[str, bool]]"
    assert repr(jax.debug.DebugEffect()) == "Debug"
    assert repr(jax.debug.OrderedDebugEffect()) == "OrderedDebug"
    assert jax.debug.DebugEffect() == jax.debug.DebugEffect() != jax.debug.OrderedDebugEffect()


# ---------------------------------------------------------------------------------------------- strict promotion

_STRICT_MSG = ("Input dtypes {} have no available implicit dtype promotion path when jax_numpy_dtype_promotion=strict. "
               "Try explicitly casting inputs to the desired output type, or set jax_numpy_dtype_promotion=standard.")


def test_strict_dtype_promotion():
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(jax.dtypes.TypePromotionError) as e:
            jnp.array(1, jnp.int32) + jnp.array(1.0, jnp.float32)
        # JAX names the two dtypes in the order of a Python set (it varies between runs): either order.
        assert str(e.value) in (_STRICT_MSG.format(("float32", "int32")), _STRICT_MSG.format(("int32", "float32")))
        with pytest.raises(jax.dtypes.TypePromotionError) as e:
            jnp.array(1.0, jnp.float32) + jnp.array(1.0, jnp.float16)
        assert str(e.value) in (_STRICT_MSG.format(("float32", "float16")), _STRICT_MSG.format(("float16", "float32")))
        # Weak Python scalars still meet a dtype of their kind.
        r = jnp.array(1.0, jnp.float32) + 1.0
        assert r.dtype == np.float32 and float(r) == 2.0
        assert (jnp.array(1.0, jnp.float32) + 1).dtype == np.float32
        assert (jnp.array([1, 2], jnp.int8) * 3).dtype == np.int8
        with pytest.raises(jax.dtypes.TypePromotionError):
            jnp.array(1, jnp.int32) + 1.5
        with pytest.raises(jax.dtypes.TypePromotionError):
            jax.dtypes.result_type(np.int8, np.int16)
        with pytest.raises(jax.dtypes.TypePromotionError):
            jnp.promote_types(np.float32, np.float64)
        assert jax.dtypes.result_type(np.float32, np.float32) == np.float32
    # Standard again outside the block.
    assert (jnp.array(1, jnp.int32) + jnp.array(1.0, jnp.float32)).dtype == np.float32
    assert jax.config.jax_numpy_dtype_promotion == "standard"


def test_strict_dtype_promotion_config_update():
    jax.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(jax.dtypes.TypePromotionError):
            jnp.ones(2, jnp.float32) * jnp.ones(2, jnp.int32)
    finally:
        jax.config.update("jax_numpy_dtype_promotion", "standard")
    assert (jnp.ones(2, jnp.float32) * jnp.ones(2, jnp.int32)).dtype == np.float32
    with pytest.raises(ValueError):
        jax.config.update("jax_numpy_dtype_promotion", "bad")


# ---------------------------------------------------------------------------------------------- config flags

_RANK_WARN = ("Following NumPy automatic rank promotion for add on shapes (3,) (2, 3). Set the jax_numpy_rank_promotion "
              "config option to 'allow' to disable this warning; for more information, see "
              "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
_RANK_RAISE = ("Operands could not be broadcast together for add on shapes (3,) (2, 3) and with the config option "
               "jax_numpy_rank_promotion='raise'. For more information, see "
               "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def test_numpy_rank_promotion():
    with jax.numpy_rank_promotion("raise"):
        assert jax.numpy_rank_promotion.value == "raise"
        with pytest.raises(ValueError) as e:
            jnp.ones(3) + jnp.ones((2, 3))
        assert str(e.value) == _RANK_RAISE
        # Same ranks, and scalars, are no rank promotion.
        assert (jnp.ones((2, 3)) + jnp.ones((1, 3))).shape == (2, 3)
        assert (jnp.ones((2, 3)) + jnp.float32(2)).shape == (2, 3)
    with jax.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning) as w:
            out = jnp.ones(3) + jnp.ones((2, 3))
        assert [str(x.message) for x in w] == [_RANK_WARN]
        np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.0, np.float32))
    assert jax.config.jax_numpy_rank_promotion == "allow"
    with pytest.raises(ValueError, match=r"new enum value must be in \['allow', 'warn', 'raise'\], got bad"):
        jax.numpy_rank_promotion("bad")
    with pytest.raises(ValueError):
        jax.config.update("jax_numpy_rank_promotion", "bad")


_DOT_HIGHEST = """{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a a
  in (b,) }"""
_DOT_PLAIN = """{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a a
  in (b,) }"""
_LAX_DOT_HIGH = """{ lambda ; a:f32[2,2]. let
    b:f32[2,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGH, Precision.HIGH)
    ] a a
  in (b,) }"""


def test_default_matmul_precision():
    x = jnp.ones((2, 2))
    assert str(jax.make_jaxpr(lambda a: a @ a)(x)) == _DOT_PLAIN
    with jax.default_matmul_precision("float32"):
        assert str(jax.make_jaxpr(lambda a: a @ a)(x)) == _DOT_HIGHEST
    with jax.default_matmul_precision("bfloat16"):
        p = jax.make_jaxpr(lambda a: a @ a)(x).eqns[0].params["precision"]
        assert p == (jax.lax.Precision.DEFAULT, jax.lax.Precision.DEFAULT)
    with jax.default_matmul_precision("tensorfloat32"):
        p = jax.make_jaxpr(lambda a: a @ a)(x).eqns[0].params["precision"]
        assert p == (jax.lax.Precision.HIGH, jax.lax.Precision.HIGH)
        np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a @ a)(x)), np.full((2, 2), 2.0, np.float32))
    assert str(jax.make_jaxpr(lambda a: jax.lax.dot(a, a, precision=jax.lax.Precision.HIGH))(x)) == _LAX_DOT_HIGH
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        jax.default_matmul_precision("fastest")
    with pytest.raises(TypeError, match="Context manager for default_matmul_precision config option requires an "
                                        "argument representing the new value for the config option."):
        jax.default_matmul_precision()


_H2D = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval={}, dst_sharding=SingleDeviceSharding("
        "device=CpuDevice(id=0), memory_kind=device)")


def test_transfer_guard():
    x = jnp.arange(3.0)
    y = jnp.ones(3)
    f = jax.jit(lambda a: a * 2)
    f(x)
    for mode in ("disallow", "disallow_explicit"):
        with jax.transfer_guard(mode):
            # Arrays already on the device, and reading CPU arrays (no transfer on JAX's CPU backend), pass.
            np.testing.assert_array_equal(np.asarray(f(x)), [0.0, 2.0, 4.0])
            assert (x + y).shape == (3,)
            assert float(jnp.sum(x)) == 3.0 and x.tolist() == [0.0, 1.0, 2.0]
            np.testing.assert_array_equal(jax.device_get(x), [0.0, 1.0, 2.0])
            with pytest.raises(jax.errors.JaxRuntimeError) as e:
                f(np.ones(3, np.float32))
            assert str(e.value) == _H2D.format("ShapedArray(float32[3])")
            with pytest.raises(jax.errors.JaxRuntimeError) as e:
                f(2.0)
            assert str(e.value) == _H2D.format("ShapedArray(float32[], weak_type=True)")
            with pytest.raises(jax.errors.JaxRuntimeError) as e:
                x + np.ones(3, np.float32)
            assert str(e.value) == _H2D.format("ShapedArray(float32[3])")
            with pytest.raises(jax.errors.JaxRuntimeError) as e:
                jnp.array([1.0, 2.0])
            assert str(e.value) == _H2D.format("ShapedArray(float32[2])")
            if mode == "disallow":   # explicit transfers are allowed
                np.testing.assert_array_equal(np.asarray(jax.device_put(np.ones(2))), [1.0, 1.0])
            else:
                with pytest.raises(jax.errors.JaxRuntimeError) as e:
                    jax.device_put(np.ones(2))
                assert str(e.value) == _H2D.format("ShapedArray(float32[2])")
    # Outside the block everything transfers again; a thread's guard is its own.
    np.testing.assert_array_equal(np.asarray(f(np.ones(3, np.float32))), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with jax.transfer_guard("bad"):
            pass


def test_transfer_guard_log(caplog):
    f = jax.jit(lambda a: a * 2)
    with caplog.at_level("WARNING", logger="cranax"):
        with jax.transfer_guard("log"):
            f(np.ones(3, np.float32))
            jax.device_put(np.ones(2))   # explicit: not logged under "log"
    assert [r.getMessage() for r in caplog.records] == [
        "host-to-device transfer: aval=ShapedArray(float32[3]), dst_sharding=SingleDeviceSharding("
        "device=CpuDevice(id=0), memory_kind=device)"]


def test_config_states():
    assert jax.enable_x64.value is False and jax.enable_x64.name == "jax_enable_x64"
    with jax.enable_x64(True):
        assert jnp.ones(1).dtype == np.float64
    assert jnp.ones(1).dtype == np.float32

    @jax.enable_x64(True)
    def f():
        return jnp.ones(1).dtype
    assert f() == np.float64
    assert jax.threefry_partitionable.value is True and jax.default_prng_impl.value == "threefry2x32"
    with pytest.raises(NotImplementedError):
        jax.config.update("jax_debug_key_reuse", True)
    with pytest.raises(NotImplementedError):
        jax.threefry_partitionable(False)
    with jax.softmax_custom_jvp(True):
        assert jax.config.jax_softmax_custom_jvp is True
    assert jax.config.jax_softmax_custom_jvp is False


# ---------------------------------------------------------------------------------------------- reprs

def test_tracer_reprs_as_jax_0_10_2(capsys):
    def show(tag):
        def f(x):
            print(tag, repr(x), "|", str(x), "|", f"{x}")
            return x
        return f
    jax.jit(show("jit f32"))(jnp.ones(3))
    jax.jit(show("jit i32 weak"))(1)
    jax.make_jaxpr(show("make_jaxpr"))(jnp.ones((2, 3)))
    jax.vmap(show("vmap in_axes1"), in_axes=1)(jnp.ones((2, 3)))
    jax.grad(lambda x: show("grad")(x).sum())(jnp.ones(3))
    jax.jvp(show("jvp"), (jnp.ones(2),), (jnp.ones(2),))
    jax.jit(jax.vmap(show("jit(vmap)")))(jnp.ones((2, 3)))
    jax.jit(jax.grad(show("jit(grad)")))(2.0)
    jax.lax.scan(lambda c, x: (show("scan carry")(c), show("scan x")(x)), 0.0, jnp.ones(3))
    jax.vjp(show("vjp"), 2.0)
    # Recorded from JAX 0.10.2.
    expected = """\
jit f32 JitTracer(float32[3]) | JitTracer(float32[3]) | JitTracer(float32[3])
jit i32 weak JitTracer(~int32[]) | JitTracer(~int32[]) | JitTracer(~int32[])
make_jaxpr JitTracer(float32[2,3]) | JitTracer(float32[2,3]) | JitTracer(float32[2,3])
vmap in_axes1 VmapTracer(aval=float32[2], batched=float32[2,3]) | VmapTracer(aval=float32[2], batched=float32[2,3]) | VmapTracer(aval=float32[2], batched=float32[2,3])
grad GradTracer(primal=[1. 1. 1.], typeof(tangent)=f32[3]) | GradTracer(primal=[1. 1. 1.], typeof(tangent)=f32[3]) | GradTracer(primal=[1. 1. 1.], typeof(tangent)=f32[3])
jvp JVPTracer(primal=[1. 1.], tangent=[1. 1.]) | JVPTracer(primal=[1. 1.], tangent=[1. 1.]) | JVPTracer(primal=[1. 1.], tangent=[1. 1.])
jit(vmap) VmapTracer(aval=float32[3], batched=float32[2,3]) | VmapTracer(aval=float32[3], batched=float32[2,3]) | VmapTracer(aval=float32[3], batched=float32[2,3])
jit(grad) GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[]) | GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[]) | GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[])
scan carry JitTracer(~float32[]) | JitTracer(~float32[]) | JitTracer(~float32[])
scan x JitTracer(float32[]) | JitTracer(float32[]) | JitTracer(float32[])
vjp GradTracer(primal=2.0, typeof(tangent)=f32[]) | GradTracer(primal=2.0, typeof(tangent)=f32[]) | GradTracer(primal=2.0, typeof(tangent)=f32[])
"""
    assert capsys.readouterr().out == expected


def test_jaxpr_attributes_as_jax():
    cj = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0 + jnp.array([1.0, 2.0, 3.0]))(jnp.ones(3))
    assert cj.effects == set() and cj.jaxpr.effects == set()
    assert [repr(e) for e in cj.eqns] == ["a:f32[3] = sin b", "a:f32[3] = mul b 2.0:f32[]", "a:f32[3] = add b c"]
    assert cj.eqns[0].effects == set() and type(cj.eqns[0].source_info).__name__ == "SourceInfo"
    v = cj.jaxpr.invars[0]
    assert repr(v) == f"Var(id={id(v)}):float32[3]"
    np.testing.assert_array_equal(np.asarray(cj.literals[0]), [1.0, 2.0, 3.0])
    assert cj.literals is cj.consts
    # Recorded from JAX 0.10.2 (the file and line are this test's).
    j = jax.make_jaxpr(lambda x, y: (x + 1, {"a": y}))(1.0, jnp.ones(2))
    dbg = j.jaxpr.debug_info
    assert dbg.traced_for in ("jit", "make_jaxpr") and dbg.func_name == "<lambda>"
    assert tuple(dbg.arg_names) == ("x", "y")
    assert dbg.result_paths == ("result[0]", "result[1]['a']")
    assert repr(dbg).startswith("DebugInfo(traced_for='jit', func_src_info='<lambda> at ")
    assert repr(dbg).endswith("arg_names=('x', 'y'), result_paths=('result[0]', \"result[1]['a']\"))")

    def f(a, *, b):
        return a
    assert jax.make_jaxpr(f)(1.0, b=2.0).jaxpr.debug_info.result_paths == ("result",)
    assert tuple(jax.jit(lambda x: x).trace(1.0).jaxpr.jaxpr.debug_info.arg_names) == ("x",)


# ---------------------------------------------------------------------------------------------- small top-level API

def test_linear_transpose():
    # Values recorded from JAX 0.10.2.
    f_t = jax.linear_transpose(lambda x, y: (2 * x + y, x), 1.0, 2.0)
    a, b = f_t((1.0, 3.0))
    assert repr(a) == "Array(5., dtype=float32, weak_type=True)" and repr(b) == "Array(1., dtype=float32, weak_type=True)"
    scalar = jax.ShapeDtypeStruct(shape=(), dtype=np.dtype(np.float32))
    out = jax.linear_transpose(lambda x, y: 0.5 * x - 0.5 * y, scalar, scalar)(1.0)
    assert repr(out) == "(Array(0.5, dtype=float32), Array(-0.5, dtype=float32))"
    (g,) = jax.linear_transpose(lambda x: jnp.sum(x * 3), jnp.ones(3))(2.0)
    np.testing.assert_array_equal(np.asarray(g), [6.0, 6.0, 6.0])
    assert jax.tree.leaves(f_t) == []   # a pytree with static contents: it passes through jit
    with pytest.raises(TypeError, match=r"cotangent tree does not match function output, expected PyTreeDef\(\*\) "
                                        r"but got PyTreeDef\(\(\*,\)\)"):
        jax.linear_transpose(lambda x: x, 1.0)((1.0,))
    with pytest.raises(TypeError, match=r"linear_transpose only supports \[float or complex\] -> \[float or "
                                        r"complex\], and integer -> integer functions, but got "
                                        r"\[dtype\('float32'\)\] -> \[dtype\('bool'\)\]\."):
        jax.linear_transpose(lambda x: x > 0, 1.0)


def test_fwd_and_bwd():
    fwd, bwd = jax.fwd_and_bwd(lambda x, y: x * y, argnums=(0, 1))
    out, res = fwd(2.0, 3.0)
    assert float(out) == 6.0
    gx, gy = bwd(res, 1.0)
    assert (float(gx), float(gy)) == (3.0, 2.0)
    fwd, bwd = jax.fwd_and_bwd(lambda x, y: (x * y, x), argnums=0, has_aux=True, jitted=False)
    r = fwd(2.0, 3.0)
    assert len(r) == 3 and float(r[0]) == 6.0 and float(r[2]) == 2.0
    assert float(bwd(r[1], 1.0)) == 3.0
    W = jnp.arange(4.0).reshape(2, 2)
    fwd, bwd = jax.fwd_and_bwd(lambda x, W: jnp.sum(jnp.sin(x @ W)), argnums=(0, 1))
    _, res = fwd(jnp.ones((2, 2)), W)
    cx, cW = bwd(res, 1.0)
    ex, eW = jax.grad(lambda x, W: jnp.sum(jnp.sin(x @ W)), argnums=(0, 1))(jnp.ones((2, 2)), W)
    np.testing.assert_allclose(np.asarray(cx), np.asarray(ex), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(cW), np.asarray(eW), rtol=1e-6)


def test_live_arrays_copy_to_host_env_info_memory():
    x = jnp.ones(3) + 1
    assert any(a is x for a in jax.live_arrays()) and any(a is x for a in jax.live_arrays("cpu"))
    tree = {"a": x, "b": 1}
    assert jax.copy_to_host_async(tree) is tree
    info = jax.print_environment_info(return_string=True)
    lines = info.splitlines()
    assert lines[0].startswith("cranax: ") and lines[1] == f"numpy:  {np.__version__}"
    n = len(jax.devices())   # 1 unless an earlier test set jax_num_cpu_devices
    assert lines[3] == f'device info: cpu-{n}, {n} local devices"' and lines[4] == "process_count: 1"
    assert [m.name for m in jax.memory.Space] == ["Device", "Host", "Any"]
    assert repr(jax.memory.Space.Host) == "MemorySpace.Host"


def test_make_user_context_retraces_on_change():
    ctx = jax.make_user_context(default_value=None)
    traces = []

    @jax.jit
    def f(x):
        traces.append(ctx.value)
        return x * 2
    f(1.0)
    f(1.0)
    with ctx(1):
        assert ctx.value == 1
        f(1.0)
        f(1.0)
    with ctx(2):
        f(1.0)
    assert traces == [None, 1, 2] and ctx.value is None


def test_no_tracing_and_no_execution():
    f = jax.jit(lambda x: x * 2)
    f(1.0)
    with jax.no_tracing(True):
        assert float(f(1.0)) == 2.0      # a cache hit traces nothing
        with pytest.raises(RuntimeError, match=r"re-tracing function <lambda> at .*test_names_api.py:\d+ for "
                                               r"`jit`, but 'no_tracing' is set"):
            f(jnp.ones(2))
    with jax.no_execution(True):
        with pytest.raises(RuntimeError, match=r"^JAX tried to execute function jit\(<lambda>\), but the "
                                               r"no_execution config option is set$"):
            f(1.0)
        with pytest.raises(RuntimeError, match="the no_execution config option is set"):
            jnp.ones(2) + jnp.ones(2)
    assert float(f(2.0)) == 4.0
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2))), [2.0, 2.0])


def test_sub_byte_integer_names_exist_and_arrays_raise():
    # JAX 0.10.2 exports jnp.int1/uint1 (ml_dtypes' types) beside int2/int4; cranax names them so libraries
    # import, and an array of such a dtype raises TypeError (see numpy/_ml_dtypes.py).
    import cranax.numpy as jnp
    for name in ("int1", "uint1", "int2", "uint2", "int4", "uint4"):
        t = getattr(jnp, name)
        assert t.dtype.name == name
    with pytest.raises(TypeError, match="does not support dtype int1"):
        jnp.zeros(3, jnp.int1)
