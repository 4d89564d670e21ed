"""jax.device_get, the process/device counts, their deprecated host_* aliases, jax.Device, jax.typeof (and
the printed form of avals), jax.named_call and jax.named_scope — against values and texts recorded from JAX
0.10.2 (CPU)."""
import warnings

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp


def test_process_queries_are_those_of_one_process():
    assert jax.process_count() == 1 and jax.process_index() == 0 and jax.process_indices() == [0]
    assert jax.local_device_count() == len(jax.local_devices()) == jax.device_count()
    assert jax.local_device_count("cpu") == 1


@pytest.mark.parametrize("name,value,message", [
    # JAX 0.10.2's own texts (its wording repeats the old name and says "process_indexs")
    ("host_count", 1, "jax.process_count has been renamed to jax.process_count. This alias will eventually be "
                      "removed; please update your code."),
    ("host_id", 0, "jax.process_index has been renamed to jax.process_index. This alias will eventually be "
                   "removed; please update your code."),
    ("host_ids", [0], "jax.process_indexs has been renamed to jax.process_indices. This alias will eventually be "
                      "removed; please update your code."),
])
def test_deprecated_host_aliases_warn_as_jax(name, value, message):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert getattr(jax, name)() == value
    assert [(x.category, str(x.message)) for x in w] == [(UserWarning, message)]


def test_device_get_copies_array_leaves_to_numpy():
    tree = {"a": jnp.arange(3.0) * 2, "b": [1, 2.0, np.float32(3)], "c": None, "d": "s"}
    r = jax.device_get(tree)
    assert type(r["a"]) is np.ndarray and r["a"].dtype == np.float32
    np.testing.assert_array_equal(r["a"], [0.0, 2.0, 4.0])
    assert not r["a"].flags.writeable  # as JAX's: a read-only host copy
    # Python scalars, None and strings pass through; a NumPy scalar becomes a 0-d array (its __array__)
    assert r["b"][0] == 1 and type(r["b"][0]) is int and type(r["b"][1]) is float
    assert type(r["b"][2]) is np.ndarray and r["b"][2].shape == () and r["b"][2].dtype == np.float32
    assert r["c"] is None and r["d"] == "s"
    x = jax.device_get(jnp.float32(2.0))
    assert type(x) is np.ndarray and x.shape == () and x == 2.0


def test_device_get_under_a_trace_returns_the_tracer():
    seen = []

    def f(x):
        seen.append(jax.device_get(x) is x)
        return x + 1
    jax.jit(f)(1.0)
    assert seen == [True]


def test_device_type():
    assert all(isinstance(d, jax.Device) for d in jax.devices())


def test_typeof_and_the_printed_aval():
    # str/repr recorded from JAX 0.10.2
    a = jax.typeof(jnp.ones((2, 3)))
    assert (str(a), repr(a)) == ("float32[2,3]", "ShapedArray(float32[2,3])")
    assert a.shape == (2, 3) and a.dtype == np.float32 and not a.weak_type
    assert (str(jax.typeof(1.0)), repr(jax.typeof(1.0))) == ("~float32[]", "ShapedArray(float32[], weak_type=True)")
    assert str(jax.typeof(np.int32(1))) == "int32[]" and str(jax.typeof(3)) == "~int32[]"
    assert str(jax.typeof(np.ones(3))) == "float32[3]" and str(jax.typeof(True)) == "bool[]"
    with pytest.raises(TypeError, match=r"Argument '\[1, 2\]' of type '<class 'list'>' is not a valid JAX type"):
        jax.typeof([1, 2])
    printed = []
    jax.make_jaxpr(lambda x: (printed.append(str(jax.typeof(x))), x)[1])(jnp.ones(2))
    assert printed == ["float32[2]"]


def test_named_call_and_named_scope_change_no_values_or_jaxprs():
    @jax.named_call
    def f(x):
        return x * 2
    assert f(3.0) == 6.0 and f.__name__ == "f"
    plain = "{ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }"
    assert str(jax.make_jaxpr(jax.named_call(lambda x: x + 1, name="foo"))(1.0)) == plain
    assert jax.named_call(lambda x: x, name=3)(2) == 2  # JAX does not check the name either
    with jax.named_scope("bar"):
        assert str(jax.make_jaxpr(lambda x: x + 1)(1.0)) == plain
    with pytest.raises(TypeError, match="^named_scope name argument must be a string.$"):
        jax.named_scope(3)
