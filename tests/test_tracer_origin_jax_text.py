"""Tracer errors' origin text against JAX 0.10.2's (recorded from JAX and written here, with this file's path
as ``{FILE}`` and object ids as ``ID``): the user line that made a ``BatchTracer`` ("This BatchTracer with
object id ... was created on line: file:line:col (qualname)"), the traced function, what traced it (jit,
scan, cond, switch, while_cond, while_body, fori_loop) and the arguments the value depends on, named by
their key paths (``d['a'][1]``, ``xs[1]`` for ``*xs``, ``kw['b']`` for ``**kw``, "x, y, and z")."""
import re

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def _cases(jax, jnp, lax):
    """The same cases run under cranax here and under JAX to record ``JAX_TEXTS`` (keep their lines: the
    recorded texts hold them)."""
    def f1(x):
        if x > 0:
            return x
        return -x
    ones = jnp.ones(3)
    return {
        "jit_bool": lambda: jax.jit(f1)(1.0),
        "jit_dict_arg": lambda: jax.jit(lambda d: f1(d['a'][1]))({'a': (1.0, 2.0)}),
        "jit_int": lambda: jax.jit(lambda x: jnp.zeros(int(x)))(3),
        "jit_float": lambda: jax.jit(lambda x: float(x))(1.0),
        "jit_kwonly": lambda: jax.jit(lambda x, *, y: f1(y))(1.0, y=2.0),
        "jit_array": lambda: jax.jit(lambda x: np.asarray(x))(1.0),
        "jit_three": lambda: jax.jit(lambda x, y, z: bool(x + y + z))(1.0, 2.0, 3.0),
        "jit_kwargs": lambda: jax.jit(lambda x, **kw: bool(x + kw['b']))(1.0, b=2.0, a=3.0),
        "jit_varargs": lambda: jax.jit(lambda *xs: bool(xs[1]))(1.0, 2.0),
        "jit_static": lambda: jax.jit(lambda x, n, y: bool(y), static_argnums=1)(1.0, 2, 3.0),
        "jit_list": lambda: jax.jit(lambda l: bool(l[1]))([1.0, 2.0]),
        "vmap_bool": lambda: jax.vmap(f1)(ones),
        "vmap_in_jit": lambda: jax.jit(jax.vmap(f1))(ones),
        "vmap_arg": lambda: jax.vmap(lambda x: bool(x))(ones),
        "vmap_arg_int": lambda: jax.vmap(lambda x: int(x))(ones),
        "vmap_jnp": lambda: jax.vmap(lambda x: bool(jnp.sum(x)))(jnp.ones((3, 2))),
        "vmap_array": lambda: jax.vmap(lambda x: np.asarray(jnp.sin(x)))(ones),
        "scan_carry": lambda: lax.scan(lambda c, x: (f1(c), x), 0.0, ones),
        "scan_x": lambda: lax.scan(lambda c, x: (c, f1(x)), 0.0, ones),
        "scan_tree": lambda: lax.scan(lambda c, x: (c, bool(x['b'][1])), 0.0,
                                      {'a': ones, 'b': (ones, ones)}),
        "scan_varargs": lambda: lax.scan(lambda *a: (a[0], bool(a[1])), 0.0, ones),
        "cond": lambda: lax.cond(True, lambda x: f1(x), lambda x: x, 1.0),
        "cond_two": lambda: lax.cond(True, lambda x, y: bool(x + y), lambda x, y: x, 1.0, 2.0),
        "cond_three": lambda: lax.cond(True, lambda x, y, z: bool(x + y + z), lambda x, y, z: x, 1.0, 2.0, 3.0),
        "switch": lambda: lax.switch(0, [lambda x: bool(x), lambda x: x], 1.0),
        "while_cond": lambda: lax.while_loop(lambda c: bool(c < 3), lambda c: c, 0.0),
        "while_body": lambda: lax.while_loop(lambda c: c < 3, lambda c: f1(c), 0.0),
        "fori_body": lambda: lax.fori_loop(0, 3, lambda i, c: f1(c), 0.0),
        "fori_index": lambda: lax.fori_loop(0, 3, lambda i, c: c + bool(i), 0.0),
        "fori_traced_bounds": lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: bool(c), 0.0))(3),
    }


def _error_text(case):
    try:
        case()
    except Exception as e:  # the recorded texts say which exception
        return f"{type(e).__name__}: {e}"
    return "no error"


def _normalized(text, path):
    return re.sub(r"object id \d+", "object id ID", text).replace(path, "{FILE}")


# Recorded from JAX 0.10.2 (the same cases, this file's lines).
JAX_TEXTS = {'cond': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
         'The error occurred while tracing the function <lambda> at {FILE}:47 for cond. This concrete value '
         'was not available in Python because it depends on the value of the argument x.\n'
         'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'cond_three': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
               'float32[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:49 for cond. This concrete '
               'value was not available in Python because it depends on the values of the arguments x, y, '
               'and z.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'cond_two': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape float32[].\n'
             'The error occurred while tracing the function <lambda> at {FILE}:48 for cond. This concrete '
             'value was not available in Python because it depends on the values of the arguments x and y.\n'
             'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'fori_body': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
              'The error occurred while tracing the function <lambda> at {FILE}:53 for fori_loop. This '
              'concrete value was not available in Python because it depends on the value of the argument '
              'c.\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'fori_index': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape int32[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:54 for fori_loop. This '
               'concrete value was not available in Python because it depends on the value of the argument '
               'i.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'fori_traced_bounds': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                       'float32[].\n'
                       'The error occurred while tracing the function <lambda> at {FILE}:55 for fori_loop. '
                       'This concrete value was not available in Python because it depends on the value of '
                       'the argument c.\n'
                       'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_array': 'TracerArrayConversionError: The numpy.ndarray conversion method __array__() was called on '
              'traced array with shape float32[]\n'
              'The error occurred while tracing the function <lambda> at {FILE}:30 for jit. This concrete '
              'value was not available in Python because it depends on the value of the argument x.\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError',
 'jit_bool': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
             'The error occurred while tracing the function f1 at {FILE}:19 for jit. This concrete value was '
             'not available in Python because it depends on the value of the argument x.\n'
             'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_dict_arg': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                 'bool[].\n'
                 'The error occurred while tracing the function <lambda> at {FILE}:26 for jit. This concrete '
                 'value was not available in Python because it depends on the value of the argument '
                 "d['a'][1].\n"
                 'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_float': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is expected: '
              'traced array with shape float32[]\n'
              'The problem arose with the `float` function. If trying to convert the data type of a value, '
              'try using `x.astype(float)` or `jnp.array(x, float)` instead.\n'
              'The error occurred while tracing the function <lambda> at {FILE}:28 for jit. This concrete '
              'value was not available in Python because it depends on the value of the argument x.\n'
              '\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'jit_int': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is expected: '
            'traced array with shape int32[]\n'
            'The problem arose with the `int` function. If trying to convert the data type of a value, try '
            'using `x.astype(int)` or `jnp.array(x, int)` instead.\n'
            'The error occurred while tracing the function <lambda> at {FILE}:27 for jit. This concrete '
            'value was not available in Python because it depends on the value of the argument x.\n'
            '\n'
            'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'jit_kwargs': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
               'float32[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:32 for jit. This concrete '
               'value was not available in Python because it depends on the values of the arguments x and '
               "kw['b'].\n"
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_kwonly': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:29 for jit. This concrete '
               'value was not available in Python because it depends on the value of the argument y.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_list': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape float32[].\n'
             'The error occurred while tracing the function <lambda> at {FILE}:35 for jit. This concrete '
             'value was not available in Python because it depends on the value of the argument l[1].\n'
             'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_static': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
               'float32[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:34 for jit. This concrete '
               'value was not available in Python because it depends on the value of the argument y.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_three': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
              'float32[].\n'
              'The error occurred while tracing the function <lambda> at {FILE}:31 for jit. This concrete '
              'value was not available in Python because it depends on the values of the arguments x, y, and '
              'z.\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_varargs': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                'float32[].\n'
                'The error occurred while tracing the function <lambda> at {FILE}:33 for jit. This concrete '
                'value was not available in Python because it depends on the value of the argument xs[1].\n'
                'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'scan_carry': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:42 for scan. This concrete '
               'value was not available in Python because it depends on the value of the argument c.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'scan_tree': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
              'float32[].\n'
              'The error occurred while tracing the function <lambda> at {FILE}:44 for scan. This concrete '
              "value was not available in Python because it depends on the value of the argument x['b'][1].\n"
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'scan_varargs': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                 'float32[].\n'
                 'The error occurred while tracing the function <lambda> at {FILE}:46 for scan. This '
                 'concrete value was not available in Python because it depends on the value of the argument '
                 'a[1].\n'
                 'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'scan_x': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
           'The error occurred while tracing the function <lambda> at {FILE}:43 for scan. This concrete '
           'value was not available in Python because it depends on the value of the argument x.\n'
           'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'switch': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape float32[].\n'
           'The error occurred while tracing the function <lambda> at {FILE}:50 for switch. This concrete '
           'value was not available in Python because it depends on the value of the argument x.\n'
           'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'vmap_arg': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape float32[].\n'
             'This BatchTracer with object id ID was created on line:\n'
             '  {FILE}:38:28 (_cases.<locals>.<lambda>)\n'
             'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'vmap_arg_int': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is '
                 'expected: traced array with shape float32[]\n'
                 'The problem arose with the `int` function. If trying to convert the data type of a value, '
                 'try using `x.astype(int)` or `jnp.array(x, int)` instead.\n'
                 'This BatchTracer with object id ID was created on line:\n'
                 '  {FILE}:39:32 (_cases.<locals>.<lambda>)\n'
                 '\n'
                 'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'vmap_array': 'TracerArrayConversionError: The numpy.ndarray conversion method __array__() was called on '
               'traced array with shape float32[]\n'
               'This BatchTracer with object id ID was created on line:\n'
               '  {FILE}:41:60 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError',
 'vmap_bool': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
              'This BatchTracer with object id ID was created on line:\n'
              '  {FILE}:20:11 (_cases.<locals>.f1)\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'vmap_in_jit': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
                'This BatchTracer with object id ID was created on line:\n'
                '  {FILE}:20:11 (_cases.<locals>.f1)\n'
                'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'vmap_jnp': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape float32[].\n'
             'This BatchTracer with object id ID was created on line:\n'
             '  {FILE}:40:52 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
             'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'while_body': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:52 for while_body. This '
               'concrete value was not available in Python because it depends on the value of the argument '
               'c.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'while_cond': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:51 for while_cond. This '
               'concrete value was not available in Python because it depends on the value of the argument '
               'c.\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError'}


@pytest.mark.parametrize("name", sorted(JAX_TEXTS))
def test_tracer_origin_text_as_jax(name):
    assert _normalized(_error_text(_cases(jax, jnp, lax)[name]), __file__) == JAX_TEXTS[name]


def test_jit_arg_names_are_key_paths():
    traced = jax.jit(lambda d, *xs, **kw: d).trace({'a': (1.0, 2.0)}, 3.0, 4.0, b=5.0)
    assert traced.jaxpr.jaxpr.debug_info.arg_names == ("d['a'][0]", "d['a'][1]", "xs[0]", "xs[1]", "kw['b']")


def test_tree_map_structure_error_is_jax_text():
    # recorded from JAX 0.10.2: the prefix error alone
    with pytest.raises(ValueError) as e:
        jax.tree_util.tree_map(lambda x, y: x + y, [1, 2], [1, 2, 3])
    assert str(e.value) == ("pytree structure error: different lengths of list at key path\n    tree_map tree\n"
                            "At that key path, the prefix pytree tree_map tree has a subtree of type list of length 2, "
                            "but the full pytree has a subtree of the same type but of length 3.")
