"""Names and behaviour that flax.nnx, chex, distrax and diffrax (through equinox) need, checked directly:
jnp's narrow float names, checkify.ErrorCategory, jax.Ref/new_ref (test_array_refs.py has the refs themselves) and jax.experimental.hijax."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental import checkify, hijax
from cranax._compat._src.state.types import AbstractRef


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz"])
def test_narrow_float_names_make_arrays(name):
    # the names flax/optax check for are ml_dtypes' types, and cranax computes with them (tests/test_float8.py)
    t = getattr(jnp, name)
    assert jnp.dtype(t).name == name
    assert t == t and hash(t) == hash(jnp.dtype(t).type)
    z = jnp.zeros(3, t)
    assert z.dtype == jnp.dtype(t) and np.asarray(z).astype(np.float32).tolist() == [0.0, 0.0, 0.0]
    assert float(t(1.0)) == 1.0


@pytest.mark.parametrize("name", ["float8_e8m0fnu", "float4_e2m1fn"])
def test_unsupported_narrow_floats_refuse_arrays(name):
    t = getattr(jnp, name)
    with pytest.raises(TypeError, match=f"does not support dtype {name}"):
        jnp.zeros(3, t)


def test_double_single():
    x = jnp.single(1.5)
    assert x.dtype == np.float32 and float(x) == 1.5
    assert jnp.dtype(jnp.double) == np.float64


def test_checkify_error_category():
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    from cranax._compat._src import checkify as checkify_lib   # JAX keeps JaxException in jax._src.checkify
    assert all(issubclass(e, checkify_lib.JaxException) for e in checkify.all_checks)


def test_ref_names():
    # flax.nnx's checks: isinstance(x, jax.Ref) and isinstance(jax.typeof(x), jax._src.state.types.AbstractRef)
    assert not isinstance(jnp.ones(2), jax.Ref)
    assert not isinstance(jax.typeof(jnp.ones(2)), AbstractRef)
    r = jax.new_ref(jnp.ones(2))
    assert isinstance(r, jax.Ref) and isinstance(jax.typeof(r), AbstractRef)
    assert str(jax.typeof(r)) == "Ref{float32[2]}"


def test_hijax_definitions_and_refusal():
    class MyPrim(hijax.HiPrimitive):
        pass
    p = MyPrim("my_prim")
    assert p.name == "my_prim"
    with pytest.raises(NotImplementedError, match="my_prim"):
        p.bind(jnp.ones(2))
    z = hijax.Zero(jax.typeof(jnp.ones((2, 3))))
    np.testing.assert_array_equal(np.asarray(hijax.instantiate_zeros(z)), np.zeros((2, 3)))


def test_typeof_key_arrays():
    # JAX 0.10.2: repr ShapedArray(key<fry>[]), str key<fry>[]; batched keys keep their batch shape
    k = jax.random.key(0)
    t = jax.typeof(k)
    assert repr(t) == "ShapedArray(key<fry>[])" and str(t) == "key<fry>[]"
    assert t.shape == () and t.dtype == k.dtype and t.weak_type is False
    assert repr(jax.typeof(jax.random.split(k, 3))) == "ShapedArray(key<fry>[3])"
    assert t == jax.typeof(jax.random.key(1)) and t != jax.typeof(jax.random.split(k, 3))
    seen = []
    jax.jit(lambda k: seen.append(repr(jax.typeof(k))))(k)
    assert seen == ["ShapedArray(key<fry>[])"]
