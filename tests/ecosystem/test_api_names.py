"""Public JAX names libraries use, under the alias: ``lax.Precision``, the legacy five-argument ``lax.cond``,
``jax.flatten_util.ravel_pytree``, ``jax.sharding`` on one device, ``jax.test_util.check_grads``, ``jax.pmap``
on one device. Expected values and texts recorded from real JAX 0.10.2."""
import numpy as np
import pytest


def test_precision():
    from jax import lax
    assert str(lax.Precision.HIGHEST) == "HIGHEST" and repr(lax.Precision("bfloat16")) == "Precision.DEFAULT"
    assert lax.Precision("float32") is lax.Precision.HIGHEST and lax.Precision.HIGH.value == 1


def test_legacy_five_argument_cond():
    import jax
    import jax.numpy as jnp
    from jax import lax
    assert float(lax.cond(True, 2.0, lambda x: x * 3, jnp.ones(()), lambda y: y - 1)) == 6.0
    assert float(lax.cond(False, 2.0, lambda x: x * 3, jnp.ones(()), lambda y: y - 1)) == 0.0
    assert float(jax.jit(lambda p: lax.cond(p, 2.0, lambda x: x * 3, 5.0, lambda y: y - 1))(False)) == 4.0


def test_ravel_pytree():
    import jax.numpy as jnp
    from jax.flatten_util import ravel_pytree
    tree = {"a": jnp.ones(2), "b": (jnp.arange(3), 2.0)}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(flat), [1.0, 1.0, 0.0, 1.0, 2.0, 2.0])
    back = unravel(flat)
    assert back["b"][0].dtype == np.int32 and back["b"][1].dtype == np.float32
    np.testing.assert_array_equal(np.asarray(back["b"][0]), [0, 1, 2])
    with pytest.raises(ValueError):
        unravel(jnp.ones(5))


def test_sharding_one_device():
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
    m = Mesh(jax.devices()[:1], ("x",))
    assert str(m) == "Mesh('x': 1, axis_types=(Auto,))"   # JAX 0.10.2's str and repr
    assert repr(m) == "Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Auto,))"
    assert repr(NamedSharding(m, P("x"))) == \
        "NamedSharding(mesh=Mesh('x': 1, axis_types=(Auto,)), spec=P('x',), memory_kind=device)"
    assert repr(P("x", None)) == "P('x', None)" and P("x") != P("x", None) and P("x") == P("x")
    assert repr(SingleDeviceSharding(jax.devices("cpu")[0])) == \
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert isinstance(jnp.ones(2).sharding, jax.sharding.Sharding)
    with pytest.raises(ValueError, match=r"Resource axis: y of P\('y',\) is not found in mesh: \('x',\)."):
        NamedSharding(m, P("y"))
    x = jax.device_put(np.arange(3.0, dtype=np.float32), NamedSharding(m, P("x")))
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_check_grads_and_pmap():
    import jax
    import jax.numpy as jnp
    import jax.test_util as tu
    tu.check_grads(lambda x: jnp.sin(x) * x, (jnp.array([0.3, 1.2]),), 2)
    with pytest.raises(AssertionError):   # a wrong jvp is caught
        tu.check_jvp(lambda x: x * 2.0, lambda a, t: (a[0] * 2.0, t[0] * 3.0), (jnp.ones(2),))
    np.testing.assert_array_equal(np.asarray(jax.pmap(lambda x: x * 2)(jnp.ones((1, 3)))), [[2.0, 2.0, 2.0]])
    with pytest.raises(ValueError, match=r"squeeze out which has size not equal to one, got shape=\(5, 2\)"):
        jax.pmap(lambda x: x)(jnp.ones((5, 2)))


def test_ensure_compile_time_eval_inside_jit():
    # JAX 0.10.2: concrete operations in the block compute at once; traced ones stay traced.
    import jax
    import jax.numpy as jnp
    seen = []

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(x) + 1
            z = jnp.sin(2.0)
            seen.append((isinstance(y, jax.core.Tracer), isinstance(z, jax.core.Tracer)))
        return y, z
    y, z = f(1.0)
    assert seen == [(True, False)]
    np.testing.assert_allclose([float(y), float(z)], [1.841471, 0.9092974], rtol=1e-6)
    np.testing.assert_allclose(float(jax.grad(lambda x: f(x)[0])(1.0)), 0.5403023, rtol=1e-6)


def test_numpy_dtype_promotion():
    import jax
    import jax.numpy as jnp
    with jax.numpy_dtype_promotion("standard"):
        assert (jnp.ones(2, jnp.int32) + 1.5).dtype == np.float32
    with pytest.raises(ValueError):
        with jax.numpy_dtype_promotion("loose"):
            pass


def test_python_round_of_array():
    # unittest's assertAlmostEqual calls round(abs(a - b), 7) on arrays (optax's tests do).
    import unittest
    import jax.numpy as jnp
    r = round(jnp.array(1.6))
    assert r.dtype == np.int32 and int(r) == 2
    assert abs(float(round(jnp.array(1.26), 1)) - 1.3) < 1e-6
    unittest.TestCase().assertAlmostEqual(jnp.array(0.1), jnp.array(0.1 + 1e-9))


def test_custom_gradient():
    # JAX 0.10.2 values: 1.6829419 20.0 1.0 20.0 / 6.0 [0. 3. 6.]
    import jax
    import jax.numpy as jnp

    @jax.custom_gradient
    def f(x, y):
        return jnp.sin(x) * y, lambda g: (g * 10.0 * y, g * x)
    np.testing.assert_allclose(float(f(1.0, 2.0)), 1.6829419, rtol=1e-6)
    assert float(jax.grad(f)(1.0, 2.0)) == 20.0 and float(jax.grad(f, argnums=1)(1.0, 2.0)) == 1.0
    assert float(jax.jit(jax.grad(f))(1.0, 2.0)) == 20.0

    @jax.custom_gradient
    def g(x):
        return x ** 2, lambda ct: 3.0 * ct * x
    assert float(jax.grad(g)(2.0)) == 6.0
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.grad(g))(jnp.arange(3.0))), [0.0, 3.0, 6.0])


def test_lax_broadcast_shapes():
    from jax import lax
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3) and lax.broadcast_shapes((1,), ()) == (1,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2,\), \(3,\)\]"):
        lax.broadcast_shapes((2,), (3,))


def test_cond_operand_none_is_passed():
    # optax's conditionally_transform calls lax.cond(..., operand=None): the branches get None.
    from jax import lax
    assert float(lax.cond(True, lambda x: 1.0 if x is None else 2.0, lambda x: 3.0, operand=None)) == 1.0
    with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional operands can be passed"):
        lax.cond(True, lambda x, y: x, lambda x, y: y, 1.0, operand=2.0)


def test_like_functions_take_shape_dtype_structs():
    # JAX 0.10.2: zeros_like/ones_like/full_like of a ShapeDtypeStruct (optax builds states from them)
    import jax
    import jax.numpy as jnp
    s = jax.ShapeDtypeStruct((2, 3), jnp.float16)
    z, o, f = jnp.zeros_like(s), jnp.ones_like(s, dtype=jnp.int32), jnp.full_like(s, 2.0)
    assert (z.shape, z.dtype, o.dtype, f.dtype) == ((2, 3), np.float16, np.int32, np.float16)
    np.testing.assert_array_equal(np.asarray(f), np.full((2, 3), 2.0))


def test_aval_sharding_and_dot_method_precision():
    import jax
    import jax.numpy as jnp
    assert repr(jax.typeof(jnp.ones((2, 3))).sharding) == \
        "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None, None))"
    a = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(a.dot(a, precision=jax.lax.Precision.HIGHEST)), [[7, 10], [15, 22]])


def test_log_compiles_records_each_compile():
    # JAX 0.10.2 logs "Finished XLA compilation of jit(<lambda>) in ... sec" on jax._src.dispatch.
    import logging
    import jax
    records = []

    class H(logging.Handler):
        def emit(self, r):
            records.append(r.getMessage())
    h = H()
    logging.getLogger("jax").addHandler(h)
    try:
        f = jax.jit(lambda x: x + 1)
        with jax.log_compiles():
            f(1.0)
            f(2.0)      # cached: no second compile
            f(np.ones(2, np.float32))
        f(np.ones(3, np.float32))   # outside the block: not logged
    finally:
        logging.getLogger("jax").removeHandler(h)
    done = [m for m in records if m.startswith("Finished XLA compilation of jit(<lambda>) in ")]
    assert len(done) == 2, records
