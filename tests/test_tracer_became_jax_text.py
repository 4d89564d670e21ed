"""JAX 0.10.2's "This value became a tracer due to JAX operations on these lines:" paragraph of the tracer
errors (bool/int/index/array conversions): a traced value computed from no argument (from a closed-over
array, or from constants made inside the traced function) names the equations that read a constant or a
literal (at most 5), each printed with shapes and the user's line that staged it (file:line:col
(function)), never a cranax file. A value depending on an argument names the arguments instead. Texts
recorded from JAX 0.10.2 running ``_cases`` with this file's lines (``{FILE}`` is this file's path, ``ID`` an object id)."""
import re

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import errors, lax


def _cases(jax, jnp, lax, np):
    """The same cases run under cranax here and under JAX to record ``JAX_TEXTS`` (keep their lines: the
    recorded texts hold them)."""
    c = jnp.ones(3)
    m = jnp.ones((2, 2))

    def g_if(x):
        y = jnp.arange(3)
        if jnp.sum(y) > 0:
            return x
        return -x

    def g_int(x):
        z = jnp.zeros(3)
        w = z + 1
        return int(w[0])

    def g_many(x):
        a = x * 2
        z = jnp.ones(4)
        w = jnp.sin(z) * 3
        v = jnp.cos(w) + 2
        u = v - 1
        t = u * u / 4
        return np.asarray(t)

    def inner(x):
        return x * bool(c.sum() > 0)

    return {
        "closed_const": lambda: jax.jit(lambda x: bool((c * 2).sum() > 0))(1.0),
        "arange_if": lambda: jax.jit(g_if)(1.0),
        "zeros_int": lambda: jax.jit(g_int)(1.0),
        "many_array": lambda: jax.jit(g_many)(1.0),
        "no_args_int": lambda: jax.jit(lambda: int(c.sum() + 1))(),
        "index": lambda: jax.jit(lambda x: [1, 2, 3][(c * 0).astype(jnp.int32).sum()])(1.0),
        "make_jaxpr": lambda: jax.make_jaxpr(lambda x: bool(c.sum() > 0))(1.0),
        "nested_jit": lambda: jax.jit(lambda x: jax.jit(inner)(x) + 1)(1.0),
        "grad_of_jit": lambda: jax.grad(jax.jit(inner))(1.0),
        "vmap_in_jit": lambda: jax.jit(jax.vmap(lambda x: bool(c.sum() > 0)))(c),
        "scan_body": lambda: lax.scan(lambda s, x: (s, bool((c + 1).sum() > 0)), 0.0, c),
        "cond_branch": lambda: lax.cond(True, lambda x: x * bool(c.max() > 0), lambda x: x, 1.0),
        "no_origin_ops": lambda: jax.jit(lambda x: bool(lax.iota(jnp.int32, 1).reshape(())))(1.0),
        "argument_and": lambda: jax.jit(lambda x: x * 2 > 0 and 1)(1.0),
        "argument_plain": lambda: jax.jit(lambda x: int(x))(1.0),
        "argument_array": lambda: jax.jit(lambda x: np.asarray(x * 3))(c),
        "matmul_params": lambda: jax.jit(lambda x: bool((m @ m).sum() > 0))(1.0),
        "jit_call_alone": lambda: jax.jit(lambda x: bool(jnp.cumsum(c)[1] > 0))(1.0),
        "jit_call_literals": lambda: jax.jit(lambda x: bool(jnp.where(c > 0, 1.0, 2.0).sum() > 0))(1.0),
        "mean": lambda: jax.jit(lambda x: float(jnp.mean(c)))(1.0),
        "grad_no_trace": lambda: jax.grad(lambda x: x * int(c.sum()))(1.0),
        "grad_of_jit_int": lambda: jax.grad(jax.jit(lambda x: x * int(c.sum())))(1.0),
        "vmap_const": lambda: jax.vmap(lambda x: bool(jnp.sum(c) + x > 0))(c),
    }


def _error_text(case):
    try:
        case()
    except Exception as e:  # the recorded texts say which exception
        return re.sub(r"object id \d+", "object id ID", f"{type(e).__name__}: {e}")
    return "no error"


# Recorded from JAX 0.10.2 (the same cases, this file's lines).
JAX_TEXTS = {'arange_if': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
              'The error occurred while tracing the function g_if at {FILE}:23 for jit. This value became a '
              'tracer due to JAX operations on these lines:\n'
              '\n'
              '  operation a:bool[] = gt b 0:i32[]\n'
              '    from line {FILE}:25:11 (_cases.<locals>.g_if)\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'argument_and': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                 'bool[].\n'
                 'The error occurred while tracing the function <lambda> at {FILE}:60 for jit. This concrete '
                 'value was not available in Python because it depends on the value of the argument x.\n'
                 'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'argument_array': 'TracerArrayConversionError: The numpy.ndarray conversion method __array__() was called '
                   'on traced array with shape float32[3]\n'
                   'The error occurred while tracing the function <lambda> at {FILE}:62 for jit. This '
                   'concrete value was not available in Python because it depends on the value of the '
                   'argument x.\n'
                   'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError',
 'argument_plain': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is '
                   'expected: traced array with shape float32[]\n'
                   'The problem arose with the `int` function. If trying to convert the data type of a '
                   'value, try using `x.astype(int)` or `jnp.array(x, int)` instead.\n'
                   'The error occurred while tracing the function <lambda> at {FILE}:61 for jit. This '
                   'concrete value was not available in Python because it depends on the value of the '
                   'argument x.\n'
                   '\n'
                   'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'closed_const': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                 'bool[].\n'
                 'The error occurred while tracing the function <lambda> at {FILE}:47 for jit. This value '
                 'became a tracer due to JAX operations on these lines:\n'
                 '\n'
                 '  operation a:f32[3] = mul b 2.0:f32[]\n'
                 '    from line {FILE}:47:56 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                 '\n'
                 '  operation a:bool[] = gt b 0.0:f32[]\n'
                 '    from line {FILE}:47:55 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                 'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'cond_branch': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
                'The error occurred while tracing the function <lambda> at {FILE}:58 for cond. This value '
                'became a tracer due to JAX operations on these lines:\n'
                '\n'
                '  operation a:f32[] = reduce_max[axes=(0,)] b\n'
                '    from line {FILE}:58:65 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                '\n'
                '  operation a:bool[] = gt b 0.0:f32[]\n'
                '    from line {FILE}:58:65 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'grad_no_trace': 'no error',
 'grad_of_jit': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
                'The error occurred while tracing the function inner at {FILE}:43 for jit. This value became '
                'a tracer due to JAX operations on these lines:\n'
                '\n'
                '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                '    from line {FILE}:44:24 (_cases.<locals>.inner)\n'
                '\n'
                '  operation a:bool[] = gt b 0.0:f32[]\n'
                '    from line {FILE}:44:24 (_cases.<locals>.inner)\n'
                'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'grad_of_jit_int': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is '
                    'expected: traced array with shape float32[]\n'
                    'The problem arose with the `int` function. If trying to convert the data type of a '
                    'value, try using `x.astype(int)` or `jnp.array(x, int)` instead.\n'
                    'The error occurred while tracing the function <lambda> at {FILE}:68 for jit. This value '
                    'became a tracer due to JAX operations on these lines:\n'
                    '\n'
                    '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                    '    from line {FILE}:68:70 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                    '\n'
                    'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'index': 'TracerIntegerConversionError: The __index__() method was called on traced array with shape '
          'int32[]\n'
          'The error occurred while tracing the function <lambda> at {FILE}:52 for jit. This value became a '
          'tracer due to JAX operations on these lines:\n'
          '\n'
          '  operation a:f32[3] = mul b 0.0:f32[]\n'
          '    from line {FILE}:52:54 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
          'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError',
 'jit_call_alone': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                   'bool[].\n'
                   'The error occurred while tracing the function <lambda> at {FILE}:64 for jit. This value '
                   'became a tracer due to JAX operations on these lines:\n'
                   '\n'
                   '  operation b:f32[3] = jit[\n'
                   '  name=cumsum\n'
                   '  jaxpr={ lambda ; a:f32[3]. let\n'
                   '      b:f32[3] = cumsum[axis=0 reverse=False] a\n'
                   '    in (b,) }\n'
                   '] a\n'
                   '    from line {FILE}:64:57 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                   '\n'
                   '  operation a:bool[] = gt b 0.0:f32[]\n'
                   '    from line {FILE}:64:57 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                   'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'jit_call_literals': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                      'bool[].\n'
                      'The error occurred while tracing the function <lambda> at {FILE}:65 for jit. This '
                      'value became a tracer due to JAX operations on these lines:\n'
                      '\n'
                      '  operation a:bool[3] = gt b 0.0:f32[]\n'
                      '    from line {FILE}:65:70 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                      '\n'
                      '  operation b:f32[3] = jit[\n'
                      '  name=_where\n'
                      '  jaxpr={ lambda ; a:bool[3] c:f32[] d:f32[]. let\n'
                      '      e:f32[3] = broadcast_in_dim c\n'
                      '      f:f32[3] = broadcast_in_dim d\n'
                      '      b:f32[3] = select_n a f e\n'
                      '    in (b,) }\n'
                      '] a 1.0:f32[] 2.0:f32[]\n'
                      '    from line {FILE}:65:60 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                      '\n'
                      '  operation a:bool[] = gt b 0.0:f32[]\n'
                      '    from line {FILE}:65:60 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                      'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'make_jaxpr': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'The error occurred while tracing the function <lambda> at {FILE}:53 for jit. This value '
               'became a tracer due to JAX operations on these lines:\n'
               '\n'
               '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
               '    from line {FILE}:53:60 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
               '\n'
               '  operation a:bool[] = gt b 0.0:f32[]\n'
               '    from line {FILE}:53:60 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'many_array': 'TracerArrayConversionError: The numpy.ndarray conversion method __array__() was called on '
               'traced array with shape float32[4]\n'
               'The error occurred while tracing the function g_many at {FILE}:34 for jit. This value became '
               'a tracer due to JAX operations on these lines:\n'
               '\n'
               '  operation a:f32[] = mul b 2.0:f32[]\n'
               '    from line {FILE}:35:12 (_cases.<locals>.g_many)\n'
               '\n'
               '  operation a:f32[4] = broadcast_in_dim 1.0:f32[]\n'
               '    from line {FILE}:36:12 (_cases.<locals>.g_many)\n'
               '\n'
               '  operation a:f32[4] = mul b 3.0:f32[]\n'
               '    from line {FILE}:37:12 (_cases.<locals>.g_many)\n'
               '\n'
               '  operation a:f32[4] = add b 2.0:f32[]\n'
               '    from line {FILE}:38:12 (_cases.<locals>.g_many)\n'
               '\n'
               '  operation a:f32[4] = sub b 1.0:f32[]\n'
               '    from line {FILE}:39:12 (_cases.<locals>.g_many)\n'
               '\n'
               '(Additional originating lines are not shown.)\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError',
 'matmul_params': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                  'bool[].\n'
                  'The error occurred while tracing the function <lambda> at {FILE}:63 for jit. This value '
                  'became a tracer due to JAX operations on these lines:\n'
                  '\n'
                  '  operation a:f32[2,2] = dot_general[\n'
                  '  dimension_numbers=(([1], [0]), ([], []))\n'
                  '  preferred_element_type=float32\n'
                  '] b b\n'
                  '    from line {FILE}:63:57 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                  '\n'
                  '  operation a:bool[] = gt b 0.0:f32[]\n'
                  '    from line {FILE}:63:56 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                  'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'mean': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is expected: '
         'traced array with shape float32[]\n'
         'The problem arose with the `float` function. If trying to convert the data type of a value, try '
         'using `x.astype(float)` or `jnp.array(x, float)` instead.\n'
         'The error occurred while tracing the function <lambda> at {FILE}:66 for jit. This value became a '
         'tracer due to JAX operations on these lines:\n'
         '\n'
         '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
         '    from line {FILE}:66:48 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
         '\n'
         '  operation a:f32[] = div b 3.0:f32[]\n'
         '    from line {FILE}:66:48 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
         '\n'
         'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'nested_jit': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'The error occurred while tracing the function inner at {FILE}:43 for jit. This value became '
               'a tracer due to JAX operations on these lines:\n'
               '\n'
               '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
               '    from line {FILE}:44:24 (_cases.<locals>.inner)\n'
               '\n'
               '  operation a:bool[] = gt b 0.0:f32[]\n'
               '    from line {FILE}:44:24 (_cases.<locals>.inner)\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'no_args_int': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is '
                'expected: traced array with shape float32[]\n'
                'The problem arose with the `int` function. If trying to convert the data type of a value, '
                'try using `x.astype(int)` or `jnp.array(x, int)` instead.\n'
                'The error occurred while tracing the function <lambda> at {FILE}:51 for jit. This value '
                'became a tracer due to JAX operations on these lines:\n'
                '\n'
                '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                '    from line {FILE}:51:51 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                '\n'
                '  operation a:f32[] = add b 1.0:f32[]\n'
                '    from line {FILE}:51:51 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                '\n'
                'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError',
 'no_origin_ops': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape '
                  'int32[].\n'
                  'The error occurred while tracing the function <lambda> at {FILE}:59 for jit. \n'
                  'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'scan_body': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
              'The error occurred while tracing the function <lambda> at {FILE}:57 for scan. This value '
              'became a tracer due to JAX operations on these lines:\n'
              '\n'
              '  operation a:f32[3] = add b 1.0:f32[]\n'
              '    from line {FILE}:57:61 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
              '\n'
              '  operation a:bool[] = gt b 0.0:f32[]\n'
              '    from line {FILE}:57:60 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'vmap_const': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
               'This BatchTracer with object id ID was created on line:\n'
               '  {FILE}:69:54 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
               'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'vmap_in_jit': 'TracerBoolConversionError: Attempted boolean conversion of traced array with shape bool[].\n'
                'The error occurred while tracing the function <lambda> at {FILE}:56 for jit. This value '
                'became a tracer due to JAX operations on these lines:\n'
                '\n'
                '  operation a:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n'
                '    from line {FILE}:56:63 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                '\n'
                '  operation a:bool[] = gt b 0.0:f32[]\n'
                '    from line {FILE}:56:63 (_cases.<locals>.<lambda>.<locals>.<lambda>)\n'
                'See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError',
 'zeros_int': 'ConcretizationTypeError: Abstract tracer value encountered where concrete value is expected: '
              'traced array with shape float32[]\n'
              'The problem arose with the `int` function. If trying to convert the data type of a value, try '
              'using `x.astype(int)` or `jnp.array(x, int)` instead.\n'
              'The error occurred while tracing the function g_int at {FILE}:29 for jit. This value became a '
              'tracer due to JAX operations on these lines:\n'
              '\n'
              '  operation a:f32[3] = broadcast_in_dim 0.0:f32[]\n'
              '    from line {FILE}:30:12 (_cases.<locals>.g_int)\n'
              '\n'
              '  operation a:f32[3] = add b 1.0:f32[]\n'
              '    from line {FILE}:31:12 (_cases.<locals>.g_int)\n'
              '\n'
              'See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError'}


@pytest.mark.parametrize("name", sorted(JAX_TEXTS))
def test_became_a_tracer_text_as_jax(name):
    got = _error_text(_cases(jax, jnp, lax, np)[name]).replace(__file__, "{FILE}")
    assert got == JAX_TEXTS[name]


def test_no_cranax_file_named():
    # every "from line" names this file (the user's), none of cranax's own
    for name in JAX_TEXTS:
        got = _error_text(_cases(jax, jnp, lax, np)[name])
        for line in re.findall(r"from line (\S+)", got):
            assert line.startswith(__file__), (name, line)


def test_equation_source_info():
    # an equation reading a literal keeps the user's line that staged it (JAX's eqn.source_info)
    closed = jax.make_jaxpr(lambda x: jnp.sin(x + 1.0) * 2)(1.0)
    add, sin, mul = closed.jaxpr.eqns
    for e in (add, mul):
        s = e.source_info.summarize()
        assert s.startswith(f"{__file__}:") and s.endswith(".<lambda>)"), s


def test_lines_past_five_literal_operations():
    # past the 5th equation reading a literal none can be shown: the 6th's line is the "additional" one
    def f():
        y = c * 1.0
        for i in range(8):
            y = y + float(i)
        return bool(y.sum() > 0)
    c = jnp.ones(2)
    with pytest.raises(errors.TracerBoolConversionError) as info:
        jax.jit(f)()
    text = str(info.value)
    assert text.count("  operation ") == 5 and "(Additional originating lines are not shown.)" in text
    assert text.count(f"from line {__file__}:") == 5
