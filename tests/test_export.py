"""``cranax.export`` (``jax.export``): export for one signature, serialize, load in another process, call.

Values and error texts recorded from JAX 0.10.2 (``jax.export`` with the same programs)."""
import pickle
import subprocess
import sys
import os

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import export, lax

HERE = os.path.dirname(os.path.abspath(__file__))


def f(x, y):
    return jnp.sin(x) * y + 1.0


def _exp():
    return export.export(jax.jit(f))(jnp.ones((2, 3), jnp.float32), 2.0)


def test_attributes_as_jax():
    e = _exp()
    assert e.fun_name == "f"
    assert str(e.in_avals) == "(ShapedArray(float32[2,3]), ShapedArray(float32[], weak_type=True))"
    assert str(e.out_avals) == "(ShapedArray(float32[2,3]),)"
    assert str(e.in_tree) == "PyTreeDef(((*, *), {}))" and str(e.out_tree) == "PyTreeDef(*)"
    assert e.platforms == ("cpu",) and e.nr_devices == 1 and e.calling_convention_version == 10
    assert e.in_shardings_hlo == (None, None) and e.out_shardings_hlo == (None,)
    assert e.ordered_effects == () and e.unordered_effects == () and e.disabled_safety_checks == ()
    assert e.has_vjp()
    assert export.minimum_supported_calling_convention_version == 9
    assert export.maximum_supported_calling_convention_version == 10
    assert export.default_export_platform() == "cpu"
    assert str(export.DisabledSafetyCheck.platform()) == "platform"
    assert str(export.DisabledSafetyCheck.custom_call("foo")) == "custom_call:foo"
    assert export.DisabledSafetyCheck.custom_call("foo").is_custom_call() == "foo"
    e4 = export.export(jax.jit(f), platforms=("cpu", "cuda"))(jnp.ones((2, 3), jnp.float32), 2.0)
    assert e4.platforms == ("cpu", "cuda")
    assert "sin" in e.mlir_module()


def test_round_trip_values_grad_jit():
    e2 = export.deserialize(_exp().serialize())
    assert isinstance(_exp().serialize(), bytearray)
    x = np.ones((2, 3), np.float32)
    # JAX 0.10.2: sin(1) * 3 + 1 = 3.5244129
    np.testing.assert_allclose(np.asarray(e2.call(x, 3.0)), np.full((2, 3), 3.5244129, np.float32), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(e2.call)(x, 3.0)), np.full((2, 3), 3.5244129), rtol=1e-6)
    e3 = export.deserialize(_exp().serialize(vjp_order=1))
    assert e3.has_vjp() and not e2.has_vjp()
    # JAX 0.10.2: grad of sum(sin(x) * 2 + 1) = 2 cos(1) = 1.0806046
    g = jax.grad(lambda x: e3.call(x, 2.0).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.full((2, 3), 1.0806046), rtol=1e-6)
    out = jax.vmap(e2.call)(np.ones((4, 2, 3), np.float32), np.arange(4, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(out), np.sin(1.0) * np.arange(4)[:, None, None] + np.ones((4, 2, 3)),
                               rtol=1e-6)


def test_pytrees_and_kwargs():
    e = export.export(jax.jit(lambda d: {"a": d["x"] + 1, "b": (d["x"],)}))({"x": np.arange(3.0, dtype=np.float32)})
    assert str(e.in_tree) == "PyTreeDef((({'x': *},), {}))"
    assert str(e.out_tree) == "PyTreeDef({'a': *, 'b': (*,)})"
    r = export.deserialize(e.serialize()).call({"x": np.arange(3.0, dtype=np.float32)})
    np.testing.assert_array_equal(np.asarray(r["a"]), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(r["b"][0]), [0.0, 1.0, 2.0])


def test_call_errors_as_jax():
    e = _exp()
    with pytest.raises(ValueError, match=r"^Dtype mismatch for args\[0\]: expected float32 and called with int32$"):
        e.call(np.ones((2, 3), np.int32), 3.0)
    with pytest.raises(ValueError, match=r"^Rank mismatch for args\[0\]: expected \(2, 3\) and called with \(3,\)$"):
        e.call(np.ones((3,), np.float32), 3.0)
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\]\.shape\[1\] \(expected same constant\): "
                                         r"expected \(2, 3\) and called with \(2, 4\)"):
        e.call(np.ones((2, 4), np.float32), 3.0)
    with pytest.raises(ValueError) as ei:
        e.call(np.ones((2, 3), np.float32))
    assert str(ei.value) == (
        "The invocation args and kwargs must have the same pytree structure as when the function 'f' was exported, "
        "but they have the following structural differences:\n   - args is a tuple of length 1 in the invocation "
        "and a tuple of length 2 when exported, so the lengths do not match.\n")
    with pytest.raises(ValueError) as ei:
        e.call((np.ones((2, 3), np.float32), 1.0), 3.0)
    assert "   - args[0] is a <class 'tuple'> in the invocation and a <class 'int'> when exported, so their " \
           "Python types differ." in str(ei.value)
    with pytest.raises(ValueError, match="Function to be exported must be the result of `jit` but is: <function f"):
        export.export(f)(1.0, 2.0)


def test_custom_pytree_needs_registration():
    class P:
        def __init__(self, a):
            self.a = a
    jax.tree_util.register_pytree_node(P, lambda p: ((p.a,), None), lambda aux, ch: P(*ch))
    e = export.export(jax.jit(lambda p: p.a * 2))(P(np.float32(1.0)))
    with pytest.raises(ValueError, match="Cannot serialize PyTreeDef containing an unregistered type"):
        e.serialize()
    assert export.register_pytree_node_serialization(
        P, serialized_name="test_export.P", serialize_auxdata=lambda a: b"", deserialize_auxdata=lambda b: None) is P
    e2 = export.deserialize(e.serialize())
    assert str(e2.in_tree) == "PyTreeDef(((CustomNode(P[None], [*]),), {}))"
    assert float(e2.call(P(np.float32(2.0)))) == 4.0


def test_control_flow_custom_rules_and_random_serialize():
    def g(x, key):
        y = lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x)
        z = lax.cond(y.sum() > 0, lambda v: jax.nn.relu(v), lambda v: -v, y)
        return z + jax.random.uniform(key, x.shape)
    x = np.linspace(-1, 1, 5).astype(np.float32)
    key = jax.random.PRNGKey(0)
    want = np.asarray(jax.jit(g)(x, key))
    e = export.deserialize(export.export(jax.jit(g))(x, key).serialize())
    np.testing.assert_array_equal(np.asarray(e.call(x, key)), want)
    # relu's custom_jvp became its primal program: the gradient is the primal's (max's) derivative
    gr = jax.grad(lambda v: e.call(v, key).sum())(x)
    fd = [(np.asarray(e.call(x + d, key)).sum() - np.asarray(e.call(x - d, key)).sum()) / 2e-3
          for d in np.eye(5, dtype=np.float32) * 1e-3]
    np.testing.assert_allclose(np.asarray(gr), fd, rtol=2e-2)


def test_callbacks_cannot_be_serialized():
    e = export.export(jax.jit(lambda x: jax.pure_callback(lambda a: a, jax.ShapeDtypeStruct((), jnp.float32), x)))(1.0)
    with pytest.raises(NotImplementedError, match="serialization of host_callbacks is not yet implemented"):
        e.serialize()


def test_corrupt_and_foreign_blobs_are_refused_not_run(tmp_path):
    with pytest.raises(ValueError, match="not a serialized cranax Exported"):
        export.deserialize(bytearray(b"garbage"))
    blob = bytes(_exp().serialize())
    with pytest.raises(ValueError, match="corrupt"):
        export.deserialize(blob[:-40])
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    head = blob[:blob.index(b"\x80\x04")]   # keep cranax's header, replace the program
    with pytest.raises(ValueError, match="which a cranax program never holds"):
        export.deserialize(head + pickle.dumps(Evil(), protocol=4))
    assert not marker.exists()
    wrong = bytearray(blob)
    wrong[len(b"CRANAX-EXPORT\x00") + 2] ^= 1   # another cranax version
    with pytest.raises(ValueError, match="serialized by cranax"):
        export.deserialize(wrong)


def test_loaded_in_another_process(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(_exp().serialize()))
    code = ("import sys, numpy as np; from cranax import export; "
            f"e = export.deserialize(open({str(path)!r}, 'rb').read()); "
            "print(np.asarray(e.call(np.ones((2, 3), np.float32), 3.0))[0, 0])")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert p.returncode == 0, p.stderr
    assert abs(float(p.stdout.strip()) - 3.5244129) < 1e-6


def test_symbolic_shapes_parse_and_print_as_jax():
    assert str(export.symbolic_shape("a, b")) == "(a, b)"
    assert str(export.symbolic_shape("a, 2*b+1")) == "(a, 2*b + 1)"
    assert str(export.symbolic_shape("(a, b)")) == "(a, b)"
    a, b = export.symbolic_shape("a, b")
    assert (str(a + 1), str(2 * a), str(a * b)) == ("a + 1", "2*a", "a*b")
    assert a == a and export.is_symbolic_dim(a) and not export.is_symbolic_dim(3)
    assert export.symbolic_shape("a")[0] != a   # another scope
    assert str(export.symbolic_args_specs(np.ones((2, 3)), "a, b")) == "ShapeDtypeStruct(shape=(a, b), dtype=float32)"
    with pytest.raises(NotImplementedError, match="shape polymorphism"):
        export.export(jax.jit(f))(jax.ShapeDtypeStruct(export.symbolic_shape("a, b"), jnp.float32), 2.0)


def test_vjp_exported():
    v = _exp().vjp()
    assert [repr(a) for a in v.in_avals] == ["ShapedArray(float32[2,3])", "ShapedArray(float32[], weak_type=True)",
                                            "ShapedArray(float32[2,3])"]
    gx, gy = v.call(np.ones((2, 3), np.float32), 2.0, np.ones((2, 3), np.float32))
    np.testing.assert_allclose(np.asarray(gx), np.full((2, 3), 2 * np.cos(1.0)), rtol=1e-6)
    np.testing.assert_allclose(float(gy), 6 * np.sin(1.0), rtol=1e-6)
