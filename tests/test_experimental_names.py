"""``jax.experimental.EArray``, ``cur_qdd`` and ``primal_tangent_dtype``: values, reprs and errors recorded
from JAX 0.10.2 running the same code."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental import EArray, cur_qdd, primal_tangent_dtype


def test_primal_tangent_dtype():
    dt = primal_tangent_dtype(jnp.float32, jnp.bfloat16)
    assert repr(dt) == str(dt) == dt.name == "PrimalTangentDType{f32/bf16}"
    assert dt.primal_dtype == np.float32 and dt.tangent_dtype == jnp.bfloat16
    assert jax.dtypes.issubdtype(dt, jax.dtypes.extended)
    assert not jax.dtypes.issubdtype(dt, np.floating)
    assert dt == primal_tangent_dtype("float32", "bfloat16") and hash(dt) == hash(primal_tangent_dtype("float32", "bfloat16"))
    assert str(primal_tangent_dtype(int, "bfloat16")) == "PrimalTangentDType{i32/bf16}"
    assert str(primal_tangent_dtype(float, complex)) == "PrimalTangentDType{f32/c64}"
    assert str(primal_tangent_dtype("int32", "float16", name="foo")) == "foo"
    with pytest.raises(TypeError, match="float0"):   # JAX: "data type 'float0' not understood"
        primal_tangent_dtype("int32", "float0")


def test_cur_qdd():
    seen = []

    def f(x):
        try:
            seen.append(cur_qdd(x))
        except AttributeError as e:
            seen.append(str(e))
        return x
    f(jnp.ones(3))
    jax.jit(f)(jnp.ones(3))
    jax.grad(lambda x: f(x) * 1.)(1.0)
    jax.vmap(f)(jnp.ones(2))
    assert seen == ["'jaxlib._jax.ArrayImpl' object has no attribute 'cur_qdd'", None,
                    "'TypedFloat' object has no attribute 'cur_qdd'",
                    "'jaxlib._jax.ArrayImpl' object has no attribute 'cur_qdd'"]


def test_earray():
    e = EArray(jax.core.ShapedArray((3,), jnp.float32), jnp.arange(3.0))
    assert repr(e) == "EArray([0., 1., 2.], dtype=float32)"
    assert (e.shape, e.dtype, e.ndim, e.size, len(e), e.itemsize) == ((3,), np.float32, 1, 3, 3, 4)
    assert isinstance(e, jax.Array)
    assert jax.tree.leaves(e) == [e] and str(jax.tree.structure(e)) == "PyTreeDef(*)"
    assert e.block_until_ready() is e and type(e.copy()) is EArray
    np.testing.assert_array_equal(np.asarray(e.copy()._data), [0., 1., 2.])
    with pytest.raises(NotImplementedError):
        iter(e)
    with pytest.raises(TypeError):
        hash(e)
    e0 = EArray(jax.core.ShapedArray((), jnp.float32), jnp.float32(1))
    with pytest.raises(TypeError, match="^len\\(\\) of unsized object$"):
        len(e0)
    with pytest.raises(TypeError, match="^iteration over a 0-d array$"):
        iter(e0)
    with pytest.raises(NotImplementedError):
        e.addressable_shards
