"""Bad input everywhere: every public entry point rejects it with a Python exception that names the problem —
never a crash, an abort on allocation failure, a silent wrong answer or an unbounded cache."""
import math
import re

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import _core, lax

HUGE = 2 ** 62


def _obj():
    return object()


# (id, thunk, exception class(es), regex the message must match)
CASES = [
    # ---- huge and negative shapes
    ("zeros_2**62", lambda: jnp.zeros((HUGE,)), MemoryError, r"18446744073709551616 bytes"),
    ("ones_2**31_squared", lambda: jnp.ones((2 ** 31, 2 ** 31)), MemoryError, r"bytes"),
    ("full_huge", lambda: jnp.full((HUGE,), 1.0), MemoryError, r"bytes"),
    ("arange_huge", lambda: jnp.arange(HUGE), MemoryError, r"bytes"),
    ("broadcast_to_huge", lambda: jnp.broadcast_to(jnp.ones(1), (HUGE,)), MemoryError, r"bytes"),
    ("eye_huge", lambda: jnp.eye(2 ** 32), MemoryError, r"bytes"),
    ("jit_zeros_huge", lambda: cranax.jit(lambda: jnp.zeros((HUGE,)))(), MemoryError, r"bytes"),
    ("zeros_2**40_unallocatable", lambda: jnp.zeros((2 ** 40,)).block_until_ready(), MemoryError,
     r"4398046511104 bytes"),
    ("jit_broadcast_unallocatable", lambda: cranax.jit(lambda x: jnp.broadcast_to(x, (2 ** 40,)))(
        jnp.ones(1)).block_until_ready(), MemoryError, r"bytes"),
    ("zeros_negative", lambda: jnp.zeros((-1,)), ValueError, r"negative dimensions.*\(-1,\)"),
    ("broadcast_in_dim_negative", lambda: lax.broadcast_in_dim(jnp.ones(1), (-3,), (0,)), TypeError,
     r"nonnegative.*\(-3,\)"),
    ("iota_negative", lambda: lax.iota(np.int32, -5), ValueError, r"nonnegative.*-5"),
    ("eye_negative", lambda: jnp.eye(-2), ValueError, r"nonnegative"),
    ("random_normal_negative_shape", lambda: cranax.random.normal(cranax.random.PRNGKey(0), (-1,)), TypeError,
     r"nonnegative"),
    ("zeros_float_shape", lambda: jnp.zeros(3.5), TypeError, r"Shapes must be .*3\.5"),
    ("zeros_none_shape", lambda: jnp.zeros(None), TypeError, r"Shapes must be .*None"),
    ("reshape_bad", lambda: jnp.reshape(jnp.ones(3), (2, 2)), TypeError, r"\(3,\).*\(2, 2\)"),
    ("linspace_negative_num", lambda: jnp.linspace(0, 1, -3), ValueError, r"-3"),
    # ---- non-array leaves and unsupported dtypes
    ("jit_object_leaf", lambda: cranax.jit(lambda x: x)(_obj()), TypeError, r"type <class 'object'> .* at path x\."),
    ("jit_str_leaf", lambda: cranax.jit(lambda x: x)("abc"), TypeError, r"type <class 'str'> .* at path x\."),
    ("jit_nested_object_leaf", lambda: cranax.jit(lambda x: x)([1, _obj()]), TypeError,
     r"type <class 'object'> .* at path x\[1\]\."),
    ("jit_returns_object", lambda: cranax.jit(lambda x: _obj())(1.0), TypeError, r"not a valid JAX type"),
    ("make_jaxpr_object", lambda: cranax.make_jaxpr(lambda x: x)(_obj()), TypeError, r"not a valid JAX type"),
    ("device_put_object", lambda: cranax.device_put(_obj()), TypeError, r"dtype object"),
    ("asarray_str", lambda: jnp.asarray("x"), TypeError, r"dtype"),
    ("asarray_ragged", lambda: jnp.asarray([[1, 2], [3]]), ValueError, r"inhomogeneous"),
    ("astype_unknown", lambda: jnp.ones(3).astype("foo"), TypeError, r"foo"),
    ("from_numpy_object", lambda: _core.DeviceArray.from_numpy(np.array([_obj()])), TypeError, r"object"),
    ("from_scalar_dtype", lambda: _core.DeviceArray.from_scalar(1, "c64"), TypeError, r"c64"),
    ("from_scalar_overflow", lambda: _core.DeviceArray.from_scalar(2 ** 40, "i32"), OverflowError, r""),
    ("execute_non_array", lambda: _core.compile(_IDENT).execute([1]), TypeError, r"argument 0 is a int"),
    ("execute_wrong_count", lambda: _core.compile(_IDENT).execute([]), TypeError, r"takes 1 arguments, got 0"),
    ("execute_wrong_aval", lambda: _core.compile(_IDENT).execute([_core.DeviceArray.from_numpy(
        np.ones(2, np.int32))]), TypeError, r"argument 0: expected f32\[3\], got i32\[2\]"),
    ("reshape_view_bad", lambda: _core.DeviceArray.from_numpy(np.ones(4, np.float32)).reshape_view(
        [HUGE, HUGE, 0]), ValueError, r"cannot reshape"),
    # ---- static arguments
    ("static_list", lambda: cranax.jit(lambda x, n: x, static_argnums=1)(1.0, [1]), ValueError,
     r"Non-hashable static arguments.*list"),
    ("static_dict_by_name", lambda: cranax.jit(lambda x, n: x, static_argnames="n")(1.0, n={}), ValueError,
     r"Non-hashable static arguments.*dict"),
    ("static_array", lambda: cranax.jit(lambda x, n: x, static_argnums=1)(1.0, jnp.ones(2)), ValueError,
     r"Non-hashable static arguments"),
    ("static_argnums_out_of_range", lambda: cranax.jit(lambda x: x, static_argnums=5), ValueError,
     r"static_argnums=\(5,\).*1 positional"),
    ("static_argnames_unknown", lambda: cranax.jit(lambda x: x, static_argnames="zz"), ValueError,
     r"invalid argnames \{'zz'\}"),
    ("static_argnums_not_int", lambda: cranax.jit(lambda x: x, static_argnums="a"), TypeError,
     r"static_argnums"),
    ("jit_not_callable", lambda: cranax.jit(3), TypeError, r"callable"),
    ("jit_unexpected_kwarg", lambda: cranax.jit(lambda x: x)(1.0, y=2), TypeError, r"'y'"),
    # ---- random keys
    ("key_float", lambda: cranax.random.normal(jnp.ones(2), (3,)), TypeError, r"dtype = uint32.*float32"),
    ("key_float_numpy", lambda: cranax.random.uniform(np.array([1.0, 2.0], np.float32), (3,)), TypeError,
     r"uint32"),
    ("key_wrong_shape", lambda: cranax.random.normal(jnp.array([1, 2, 3], dtype=jnp.uint32), (3,)), TypeError,
     r"shape"),
    ("key_python_int", lambda: cranax.random.normal(3, (3,)), TypeError, r"key"),
    ("prngkey_float_seed", lambda: cranax.random.PRNGKey(1.5), TypeError, r"seed.*1\.5"),
    ("prngkey_str_seed", lambda: cranax.random.PRNGKey("a"), TypeError, r"seed"),
    # ---- pytrees and transformations
    ("tree_map_structure", lambda: cranax.tree_util.tree_map(lambda a, b: a + b, (1, 2), [1, 2]), ValueError,
     r"pytree structure error: different types at key path\n    tree_map tree\n"),
    ("tree_unflatten_count", lambda: cranax.tree_util.tree_unflatten(
        cranax.tree_util.tree_flatten((1, 2))[1], [1]), ValueError, r"expected 2, got 1"),
    ("grad_nonscalar", lambda: cranax.grad(lambda x: x)(jnp.ones(3)), TypeError, r"scalar-output"),
    ("grad_int", lambda: cranax.grad(lambda x: x)(1), TypeError, r"int32"),
    ("vmap_sizes", lambda: cranax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4)), ValueError,
     r"inconsistent sizes.*argument a.*argument b"),
    ("vmap_axis", lambda: cranax.vmap(lambda a: a, in_axes=5)(jnp.ones(3)), ValueError, r"axis 5"),
    ("vmap_in_axes_structure", lambda: cranax.vmap(lambda a, b: a, in_axes=(0,))(jnp.ones(3), jnp.ones(3)),
     ValueError, r"in_axes"),
    # ---- shapes and dtypes of operations
    ("add_shapes", lambda: jnp.ones(3) + jnp.ones(4), TypeError, r"\(3,\), \(4,\)"),
    ("lax_add_dtypes", lambda: lax.add(jnp.ones(3), jnp.ones(3, dtype=jnp.int32)), TypeError,
     r"float32, int32"),
    ("sum_axis", lambda: jnp.sum(jnp.ones(3), axis=3), ValueError, r"axis 3"),
    ("transpose_perm", lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)), ValueError, r"\(0, 0\)"),
    ("index_into_empty_axis", lambda: jnp.ones(0)[5], IndexError, r"^index is out of bounds for axis 0 with size 0$"),
    ("index_float", lambda: jnp.ones(3)[1.5], TypeError, r"float"),
    ("int_of_vector", lambda: int(jnp.ones(3)), TypeError, r"\(3,\)"),
    ("bool_of_empty", lambda: bool(jnp.ones(0)), ValueError, r"ambiguous"),
    ("int_negative_power", lambda: jnp.array(2) ** -1, TypeError, r"negative powers"),
    # ---- config and the core's own entry points
    ("config_unknown", lambda: cranax.config.update("jax_nope", 1), AttributeError, r"jax_nope"),
    ("config_cache_negative", lambda: cranax.config.update("jax_compilation_cache_max_size", -1), ValueError,
     r"jax_compilation_cache_max_size.*-1"),
    ("config_cache_str", lambda: cranax.config.update("jax_compilation_cache_max_size", "a"), TypeError,
     r"jax_compilation_cache_max_size"),
    ("compile_garbage", lambda: _core.compile("\x00\xff"), ValueError, r"cannot read program"),
    ("verify_truncated", lambda: _core.verify("{"), ValueError, r"cannot read program"),
]

_IDENT = '{"version":1,"name":"f","invars":[[0,"f32",[3]]],"eqns":[],"outvars":[0]}'


@pytest.mark.parametrize("thunk, exc, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises(thunk, exc, pattern):
    with pytest.raises(exc) as info:
        thunk()
    assert re.search(pattern, str(info.value), re.S), str(info.value)


def test_config_value_unchanged_after_rejected_update():
    before, core_before = cranax.config.jax_compilation_cache_max_size, _core.cache_max_size()
    with pytest.raises(ValueError):
        cranax.config.update("jax_compilation_cache_max_size", -5)
    assert cranax.config.jax_compilation_cache_max_size == before
    assert _core.cache_max_size() == core_before


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -0.0, (1.0, math.nan), (1, ("a", (2.0, math.nan)))])
def test_nan_inf_static_arguments_trace_once(value):
    traces = []

    @cranax.jit
    def _unused(x):
        return x

    def f(x, n):
        traces.append(1)
        return x * 2

    g = cranax.jit(f, static_argnums=1)
    for _ in range(5):
        out = g(jnp.ones(2), value)
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0])
    assert len(traces) == 1, "a NaN/inf static value must hit the cache (NaN != NaN must not retrace)"
    assert g._cache_size() == 1


def test_fresh_nan_objects_as_static_arguments_trace_once():
    traces = []

    def f(x, n):
        traces.append(1)
        return x + 1

    g = cranax.jit(f, static_argnums=1)
    for s in ["nan", "nan", "NaN", "-nan"]:
        g(1.0, float(s))  # a new NaN object each time (hashes by identity in Python >= 3.10)
    g(1.0, (1, float("nan")))
    g(1.0, (1, float("nan")))
    assert len(traces) == 2


def test_static_nan_value_is_used():
    g = cranax.jit(lambda x, n: x * n, static_argnums=1)
    assert math.isnan(float(g(1.0, math.nan)))
    assert float(g(1.0, math.inf)) == math.inf
    assert float(g(2.0, -math.inf)) == -math.inf


def test_static_argnums_negative_counts_from_the_end():
    g = cranax.jit(lambda x, n: x * n, static_argnums=-1)
    assert float(g(jnp.float32(2.0), 3)) == 6.0


def test_unhashable_static_argument_names_its_type():
    class Unhashable:
        __hash__ = None

    with pytest.raises(ValueError, match="Non-hashable static arguments.*Unhashable"):
        cranax.jit(lambda x, n: x, static_argnums=1)(1.0, Unhashable())


def test_static_value_whose_eq_raises_is_a_cache_miss_not_an_error():
    class Weird:
        def __hash__(self):
            return 1

        def __eq__(self, other):
            raise RuntimeError("no eq")

    g = cranax.jit(lambda x, n: x + 1, static_argnums=1)
    assert float(g(1.0, Weird())) == 2.0
    assert float(g(1.0, Weird())) == 2.0


@pytest.mark.parametrize("how", ["jit", "jit_arith", "grad", "vmap"])
def test_escaped_tracer_raises_unexpected_tracer_error(how):
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    if how.startswith("jit"):
        cranax.jit(f)(1.0)
    elif how == "grad":
        cranax.grad(f)(1.0)
    else:
        cranax.vmap(f)(jnp.ones(3))
    with pytest.raises(cranax.errors.UnexpectedTracerError, match="escape"):
        if how == "jit":
            cranax.jit(lambda y: y + leaked[0])(2.0)
        else:
            leaked[0] + 1.0


def test_escaped_tracer_into_numpy_raises():
    leaked = []
    cranax.jit(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises((cranax.errors.TracerArrayConversionError, cranax.errors.UnexpectedTracerError)):
        np.asarray(leaked[0])


def test_runtime_still_works_after_bad_input():
    for _, thunk, exc, _ in CASES[:12]:
        with pytest.raises(exc):
            thunk()
    np.testing.assert_array_equal(np.asarray(cranax.jit(lambda x: x + 1)(jnp.arange(3))), [1, 2, 3])
    np.testing.assert_array_equal(np.asarray(jnp.zeros(4) + 1), [1, 1, 1, 1])


@pytest.mark.parametrize("bad", [
    "", "null", "[]", "{}", '{"version": 99}', '{"version":1,"invars":[[0,"f32",[-1]]],"eqns":[],"outvars":[0]}',
    '{"version":1,"invars":[[0,"c64",[1]]],"eqns":[],"outvars":[0]}',
    '{"version":1,"invars":[[0,"f32",[3]]],"eqns":[{"prim":"add","in":[0,7],"out":[[1,"f32",[3]]]}],'
    '"outvars":[1]}',
    '{"version":1,"invars":[[0,"f32",[3]]],"eqns":[{"prim":"nope","in":[0],"out":[[1,"f32",[3]]]}],'
    '"outvars":[1]}',
    '{"version":1,"invars":[[0,"f32",[3]]],"eqns":[{"prim":"reshape","params":{"new_sizes":[4]},"in":[0],'
    '"out":[[1,"f32",[4]]]}],"outvars":[1]}',
    '{"version":1,"invars":[[0,"f32",[3]]],"eqns":[],"outvars":[5]}',
    '{"version":1,"invars":[[0,"f32",[99999999999,99999999999,99999999999]]],"eqns":[],"outvars":[0]}',
])
def test_malformed_programs_are_exceptions(bad):
    for fn in (_core.verify, _core.compile):
        with pytest.raises((ValueError, TypeError, NotImplementedError, MemoryError)):
            fn(bad)
