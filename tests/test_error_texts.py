"""The error texts of common mistakes under jit (issue 18 (e)), as JAX 0.10.2 prints them: tracer bool/int/
float/array conversions, a traced slice bound, a traced shape, traced boolean masks, jnp.nonzero without size,
a leaked tracer, item assignment. Texts recorded from JAX 0.10.2 (the traced function's file and line replaced
by FILE:LINE, as they differ between the two runs)."""
import re

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import errors

RECORDED = {
    'bool_jit': ('TracerBoolConversionError', 'Attempted boolean conversion of traced array with shape bool[].\nThe error occurred while tracing the function f1 at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError'),
    'bool_array_jit': ('ValueError', 'The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()'),
    'int_jit': ('ConcretizationTypeError', 'Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]\nThe problem arose with the `int` function. If trying to convert the data type of a value, try using `x.astype(int)` or `jnp.array(x, int)` instead.\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError'),
    'float_jit': ('ConcretizationTypeError', 'Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]\nThe problem arose with the `float` function. If trying to convert the data type of a value, try using `x.astype(float)` or `jnp.array(x, float)` instead.\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError'),
    'slice_jit': ('IndexError', 'Slice entries must be static integers. Got slice(None, JitTracer(~int32[]), None) at position 0'),
    'arange_jit': ('ConcretizationTypeError', "Abstract tracer value encountered where concrete value is expected: traced array with shape int32[]\nIt arose in the jnp.arange argument 'stop'\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument n.\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError"),
    'arange_stop_jit': ('ConcretizationTypeError', "Abstract tracer value encountered where concrete value is expected: traced array with shape int32[]\nIt arose in the jnp.arange argument 'stop'\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument n.\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError"),
    'np_jit': ('TracerArrayConversionError', 'The numpy.ndarray conversion method __array__() was called on traced array with shape float32[3]\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError'),
    'zeros_jit': ('TypeError', 'Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),).\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.'),
    'bool_index_jit': ('NonConcreteBooleanIndexError', 'Array boolean indices must be concrete; got bool[3]\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError'),
    'nonzero_jit': ('ConcretizationTypeError', 'Abstract tracer value encountered where concrete value is expected: traced array with shape int32[]\nThe size argument of jnp.nonzero must be statically specified to use jnp.nonzero within JAX transformations.\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.\n\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError'),
    'leak': ('UnexpectedTracerError', 'Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a reference to an intermediate value with type float32[] wrapped in a DynamicJaxprTracer to escape the scope of the transformation.\nJAX transformations require that functions explicitly return their outputs, and disallow saving intermediate values to global state.\nThe function being traced when the value leaked was f2 at FILE:LINE traced for jit.\n------------------------------\nThe leaked intermediate value was created on line . \n------------------------------\nWhen the value was created, the final 5 stack frames (most recent last) excluding JAX-internal frames were:\n------------------------------\n\n------------------------------\n\nTo catch the leak earlier, try setting the environment variable JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError'),
    'leak_jit': ('UnexpectedTracerError', 'Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing for a reference to an intermediate value with type float32[] wrapped in a DynamicJaxprTracer to escape the scope of the transformation.\nJAX transformations require that functions explicitly return their outputs, and disallow saving intermediate values to global state.\nThe function being traced when the value leaked was f2 at FILE:LINE traced for jit.\n------------------------------\nThe leaked intermediate value was created on line . \n------------------------------\nWhen the value was created, the final 5 stack frames (most recent last) excluding JAX-internal frames were:\n------------------------------\n\n------------------------------\n\nTo catch the leak earlier, try setting the environment variable JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.UnexpectedTracerError'),
    'setitem': ('TypeError', 'JAX arrays are immutable and do not support in-place item assignment. Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html'),
    'index_list_jit': ('TracerIntegerConversionError', 'The __index__() method was called on traced array with shape int32[]\nThe error occurred while tracing the function <lambda> at FILE:LINE for jit. This concrete value was not available in Python because it depends on the value of the argument x.\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError'),
}


def f1(x):
    if x > 0:
        return x
    return -x


leak = []


def f2(x):
    leak.append(x)
    return x


jax.jit(f2)(1.0)

CASES = {
    "bool_jit": lambda: jax.jit(f1)(1.0),
    "bool_array_jit": lambda: jax.jit(lambda x: bool(x))(jnp.ones(3)),
    "int_jit": lambda: jax.jit(lambda x: int(x))(1.0),
    "float_jit": lambda: jax.jit(lambda x: float(x))(1.0),
    "slice_jit": lambda: jax.jit(lambda x, i: x[:i])(jnp.ones(3), 2),
    "arange_jit": lambda: jax.jit(lambda n: jnp.arange(n))(3),
    "arange_stop_jit": lambda: jax.jit(lambda n: jnp.arange(0, n))(3),
    "np_jit": lambda: jax.jit(lambda x: np.asarray(x))(jnp.ones(3)),
    "zeros_jit": lambda: jax.jit(lambda x: jnp.zeros(x))(3),
    "bool_index_jit": lambda: jax.jit(lambda x: x[x > 0])(jnp.ones(3)),
    "nonzero_jit": lambda: jax.jit(lambda x: jnp.nonzero(x))(jnp.ones(3)),
    "leak": lambda: leak[0] + 1,
    "leak_jit": lambda: jax.jit(lambda y: y + leak[0])(1.0),
    "setitem": lambda: jnp.ones(3).__setitem__(0, 1),
    "index_list_jit": lambda: jax.jit(lambda x: [1, 2, 3][x])(1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_text_as_jax(name):
    cls, text = RECORDED[name]
    with pytest.raises(Exception) as info:
        CASES[name]()
    assert type(info.value).__name__ == cls
    got = re.sub(r"at /\S+:\d+ ", "at FILE:LINE ", str(info.value))
    assert got == text


def test_error_classes_as_jax():
    # JAX's hierarchy: the boolean-mask error is an IndexError, the conversions are TypeErrors
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)
    assert issubclass(errors.NonConcreteBooleanIndexError, errors.JAXIndexError)
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    for c in (errors.ConcretizationTypeError, errors.TracerIntegerConversionError,
              errors.TracerArrayConversionError, errors.UnexpectedTracerError):
        assert issubclass(c, TypeError)


def test_concrete_values_still_convert():
    # under grad (no jit) the values are concrete: Python control flow and int()/slices work, as in JAX
    assert float(jax.grad(f1)(1.0)) == 1.0
    assert float(jax.grad(lambda x: x * int(x))(2.0)) == 2.0
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda x: x[:2])(jnp.ones((3, 3)))), np.ones((3, 2)))


def test_lax_map_errors_name_the_users_function_not_cranax():
    # JAX 0.10.2's texts (recorded) name its own internal lambda (jax/_src/lax/control_flow/loops.py:2735);
    # cranax keeps JAX's structure but names the user's function, file and line
    import cranax.numpy as jnp
    from cranax import lax

    def bad1(x):
        return "hello"

    def bad3(x):
        return x.sum() if x[0] > 0 else x
    line = bad1.__code__.co_firstlineno
    with pytest.raises(TypeError) as e:
        lax.map(bad1, jnp.ones((3, 2)))
    assert str(e.value) == (f"function bad1 at {__file__}:{line} traced for scan returned a value of type "
                            "<class 'str'> at output component [1], which is not a valid JAX type")
    with pytest.raises(jax.errors.TracerBoolConversionError) as e:
        lax.map(bad3, jnp.ones((3, 2)))
    assert str(e.value).startswith(
        "Attempted boolean conversion of traced array with shape bool[].\nThe error occurred while tracing the "
        f"function bad3 at {__file__}:{bad3.__code__.co_firstlineno} for scan. This concrete value was not "
        "available in Python because it depends on the value of the argument x.")
    assert "cranax" not in str(e.value).split("See https")[0].replace(__file__, "")

    def body(c, x):
        return c, {"a": "s"}
    with pytest.raises(TypeError) as e:
        lax.scan(body, 0, jnp.ones(3))
    assert str(e.value) == (f"function body at {__file__}:{body.__code__.co_firstlineno} traced for scan returned "
                            "a value of type <class 'str'> at output component [1]['a'], which is not a valid JAX "
                            "type")
    assert lax.map(lambda x: x * 2, jnp.arange(3.)).tolist() == [0.0, 2.0, 4.0]


def test_scalar_conversions_of_jvp_tracers_as_jax():
    # Recorded from JAX 0.10.2: float() of a jvp/grad tracer raises even though its primal is concrete
    # (JAX's Tracer.__float__ asks the aval); int(), bool() and .item() use the concrete primal, and item()
    # of a jit tracer names the method.
    with pytest.raises(jax.errors.ConcretizationTypeError) as e:
        jax.grad(lambda x: float(x * 2))(1.0)
    assert str(e.value).startswith(
        "Abstract tracer value encountered where concrete value is expected: traced array with shape float32[]\n"
        "The problem arose with the `float` function. If trying to convert the data type of a value, try using "
        "`x.astype(float)` or `jnp.array(x, float)` instead.")
    assert float(jax.grad(lambda x: int(x * 2) * x)(1.0)) == 2.0
    assert float(jax.grad(lambda x: (x * 2).item())(1.0)) == 0.0
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda x: (x * 2).item(1) * x[0])(np.arange(3.0, dtype=np.float32))),
                                  [2., 0., 0.])
    with pytest.raises(jax.errors.ConcretizationTypeError) as e:
        jax.jit(lambda x: x.item(0))(np.arange(3.0, dtype=np.float32))
    assert str(e.value).startswith(
        "Abstract tracer value encountered where concrete value is expected: traced array with shape float32[3]\n"
        "This occurred in the item() method of jax.Array\n"
        "The error occurred while tracing the function <lambda> at ")
    assert "for jit. This concrete value was not available in Python because it depends on the value of the " \
           "argument x." in str(e.value)
