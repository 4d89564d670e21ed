"""Printed jaxprs and loop carry-type errors against JAX 0.10.2's text (recorded from JAX and written here):
``lax.scan``'s two forwardings (a carry returned unchanged becomes a const; a ``ys`` that is an ``xs`` is taken
from ``xs``), nested jaxprs naming unread outputs (only the top level prints ``_``), the params group breaking
only past the width, ``jnp.cumsum``/``cumprod``/``sort``/``argsort``/``flip`` as one jitted call each, and
``_check_carry_type``'s messages for scan, while_loop and fori_loop."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def _cases():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    x23 = jnp.ones((2, 3))
    J = jax.make_jaxpr
    return {
        "scan_forward_ys": lambda: J(lambda a: lax.scan(lambda c, y: ((c * 2, c + 1)[1], y), a, xs)[0])(x23[:, :2].T),
        "scan_forward_carry": lambda: J(lambda xs: lax.scan(lambda c, x: ((c[0] + x, c[1]), x),
                                                           (jnp.zeros(2), jnp.ones(2)), xs))(xs),
        "inner_jit_unused": lambda: J(lambda a: jax.jit(lambda a: (a * 2, a + 1)[1])(a))(x23),
        "inner_cond_unused": lambda: J(lambda a: lax.cond(True, lambda a: (a * 2, a + 1)[1], lambda a: a, a))(x23),
        "inner_while_unused": lambda: J(lambda a: lax.while_loop(lambda a: a.sum() < 3,
                                                                 lambda a: (a * 2, a + 1)[1], a))(x23),
        "top_sort_unused": lambda: J(lambda a: lax.sort((a, a), num_keys=1)[1])(x23),
        "cumsum_axis1": lambda: J(lambda x: jnp.cumsum(x, axis=1))(x23),
        "cumsum_flat": lambda: J(lambda x: jnp.cumsum(x))(x23),
        "cumsum_bool": lambda: J(lambda x: jnp.cumsum(x.astype(jnp.bool_), axis=0))(x23),
        "cumsum_dtype": lambda: J(lambda x: jnp.cumsum(x, axis=0, dtype=jnp.int32))(x23),
        "cumsum_scalar": lambda: J(lambda x: jnp.cumsum(x[0, 0]))(x23),
        "cumprod": lambda: J(lambda x: jnp.cumprod(x, axis=0))(x23),
        "sort_flat": lambda: J(lambda x: jnp.sort(x, axis=None))(x23),
        "sort_descending": lambda: J(lambda x: jnp.sort(x, descending=True))(x23),
        "argsort": lambda: J(lambda x: jnp.argsort(x))(x23),
        "argsort_descending": lambda: J(lambda x: jnp.argsort(x, axis=0, descending=True))(x23),
        "flip": lambda: J(lambda x: jnp.flip(x, 1))(x23),
        "flip_all": lambda: J(lambda x: jnp.flip(x))(x23),
        "fliplr": lambda: J(lambda x: jnp.fliplr(x))(x23),
    }


def _error_cases():
    xs = np.ones((3, 2), np.float32)
    return {
        "scan_one": lambda: lax.scan(lambda c, x: (c + x, None), 0., xs),
        "scan_two": lambda: lax.scan(lambda carry, x: ({"a": carry["a"] + x, "b": carry["b"].astype(jnp.int32)},
                                                       None), {"a": 0., "b": 1.}, xs),
        "scan_dtype_and_shape": lambda: lax.scan(lambda c, x: (jnp.zeros(2), None), jnp.int32(0), xs),
        "while": lambda: lax.while_loop(lambda v: False, lambda v: v + xs, 0.),
        "fori_static": lambda: lax.fori_loop(0, 3, lambda i, v: v + xs, 0.),
        "fori_traced": lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, v: v + xs, 0.))(3),
        "scan_varargs": lambda: lax.scan(lambda *a: (a[0] + xs[0], None), 0., xs),
        "while_structure_list": lambda: lax.while_loop(lambda c: True, lambda c: [c[0], c[1]], (1.0, 2.0)),
        "scan_structure_dict_keys": lambda: lax.scan(lambda c, x: ({"a": c["a"], "c": 1.}, None),
                                                     {"a": 0., "b": 1.}, xs),
        "scan_structure_length": lambda: lax.scan(lambda c, x: ((c[0],), None), (0., 1.), xs),
    }


# Recorded from JAX 0.10.2 (str(jax.make_jaxpr(...)) of the same cases).
JAX_TEXTS = {'argsort': '{ lambda ; a:f32[2,3]. let\n'
            '    b:i32[2,3] = jit[\n'
            '      name=argsort\n'
            '      jaxpr={ lambda ; a:f32[2,3]. let\n'
            '          c:i32[2,3] = iota[dimension=1 dtype=int32 shape=(2, 3) sharding=None] \n'
            '          d:f32[2,3] b:i32[2,3] = sort[dimension=1 is_stable=True num_keys=1] a c\n'
            '        in (b,) }\n'
            '    ] a\n'
            '  in (b,) }',
 'argsort_descending': '{ lambda ; a:f32[2,3]. let\n'
                       '    b:i32[2,3] = jit[\n'
                       '      name=argsort\n'
                       '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                       '          c:i32[2,3] = iota[dimension=0 dtype=int32 shape=(2, 3) sharding=None] \n'
                       '          d:f32[2,3] = rev[dimensions=(0,)] a\n'
                       '          e:i32[2,3] = rev[dimensions=(0,)] c\n'
                       '          f:f32[2,3] g:i32[2,3] = sort[dimension=0 is_stable=True num_keys=1] d e\n'
                       '          b:i32[2,3] = rev[dimensions=(0,)] g\n'
                       '        in (b,) }\n'
                       '    ] a\n'
                       '  in (b,) }',
 'cumprod': '{ lambda ; a:f32[2,3]. let\n'
            '    b:f32[2,3] = jit[\n'
            '      name=cumprod\n'
            '      jaxpr={ lambda ; a:f32[2,3]. let\n'
            '          b:f32[2,3] = cumprod[axis=0 reverse=False] a\n'
            '        in (b,) }\n'
            '    ] a\n'
            '  in (b,) }',
 'cumsum_axis1': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:f32[2,3] = jit[\n'
                 '      name=cumsum\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                 '          b:f32[2,3] = cumsum[axis=1 reverse=False] a\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'cumsum_bool': '{ lambda ; a:f32[2,3]. let\n'
                '    b:bool[2,3] = convert_element_type[new_dtype=bool weak_type=False] a\n'
                '    c:i32[2,3] = jit[\n'
                '      name=cumsum\n'
                '      jaxpr={ lambda ; b:bool[2,3]. let\n'
                '          d:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] b\n'
                '          c:i32[2,3] = cumsum[axis=0 reverse=False] d\n'
                '        in (c,) }\n'
                '    ] b\n'
                '  in (c,) }',
 'cumsum_dtype': '{ lambda ; a:f32[2,3]. let\n'
                 '    b:i32[2,3] = jit[\n'
                 '      name=cumsum\n'
                 '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                 '          c:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
                 '          b:i32[2,3] = cumsum[axis=0 reverse=False] c\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'cumsum_flat': '{ lambda ; a:f32[2,3]. let\n'
                '    b:f32[6] = jit[\n'
                '      name=cumsum\n'
                '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                '          c:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n'
                '          b:f32[6] = cumsum[axis=0 reverse=False] c\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'cumsum_scalar': '{ lambda ; a:f32[2,3]. let\n'
                  '    b:f32[1,1] = slice[limit_indices=(1, 1) start_indices=(0, 0) strides=None] a\n'
                  '    c:f32[] = squeeze[dimensions=(0, 1)] b\n'
                  '    d:f32[1] = jit[\n'
                  '      name=cumsum\n'
                  '      jaxpr={ lambda ; c:f32[]. let\n'
                  '          e:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] c\n'
                  '          d:f32[1] = cumsum[axis=0 reverse=False] e\n'
                  '        in (d,) }\n'
                  '    ] c\n'
                  '  in (d,) }',
 'flip': '{ lambda ; a:f32[2,3]. let\n'
         '    b:f32[2,3] = jit[\n'
         '      name=_flip\n'
         '      jaxpr={ lambda ; a:f32[2,3]. let\n'
         '          b:f32[2,3] = rev[dimensions=(1,)] a\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'flip_all': '{ lambda ; a:f32[2,3]. let\n'
             '    b:f32[2,3] = jit[\n'
             '      name=_flip\n'
             '      jaxpr={ lambda ; a:f32[2,3]. let\n'
             '          b:f32[2,3] = rev[dimensions=(0, 1)] a\n'
             '        in (b,) }\n'
             '    ] a\n'
             '  in (b,) }',
 'fliplr': '{ lambda ; a:f32[2,3]. let\n'
           '    b:f32[2,3] = jit[\n'
           '      name=_flip\n'
           '      jaxpr={ lambda ; a:f32[2,3]. let\n'
           '          b:f32[2,3] = rev[dimensions=(1,)] a\n'
           '        in (b,) }\n'
           '    ] a\n'
           '  in (b,) }',
 'inner_cond_unused': '{ lambda ; a:f32[2,3]. let\n'
                      '    b:f32[2,3] = cond[\n'
                      '      branches=(\n'
                      '        { lambda ; c:f32[2,3]. let  in (c,) }\n'
                      '        { lambda ; d:f32[2,3]. let\n'
                      '            e:f32[2,3] = mul d 2.0:f32[]\n'
                      '            f:f32[2,3] = add d 1.0:f32[]\n'
                      '          in (f,) }\n'
                      '      )\n'
                      '    ] 1:i32[] a\n'
                      '  in (b,) }',
 'inner_jit_unused': '{ lambda ; a:f32[2,3]. let\n'
                     '    b:f32[2,3] = jit[\n'
                     '      name=<lambda>\n'
                     '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                     '          c:f32[2,3] = mul a 2.0:f32[]\n'
                     '          b:f32[2,3] = add a 1.0:f32[]\n'
                     '        in (b,) }\n'
                     '    ] a\n'
                     '  in (b,) }',
 'inner_while_unused': '{ lambda ; a:f32[2,3]. let\n'
                       '    b:f32[2,3] = while[\n'
                       '      body_jaxpr={ lambda ; c:f32[2,3]. let\n'
                       '          d:f32[2,3] = mul c 2.0:f32[]\n'
                       '          e:f32[2,3] = add c 1.0:f32[]\n'
                       '        in (e,) }\n'
                       '      body_nconsts=0\n'
                       '      cond_jaxpr={ lambda ; f:f32[2,3]. let\n'
                       '          g:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] f\n'
                       '          h:bool[] = lt g 3.0:f32[]\n'
                       '        in (h,) }\n'
                       '      cond_nconsts=0\n'
                       '    ] a\n'
                       '  in (b,) }',
 'scan_forward_carry': '{ lambda ; a:f32[3,2]. let\n'
                       '    b:f32[2] = broadcast_in_dim 0.0:f32[]\n'
                       '    c:f32[2] = broadcast_in_dim 1.0:f32[]\n'
                       '    d:f32[2] = scan[\n'
                       '      jaxpr={ lambda ; e:f32[2] f:f32[2] g:f32[2]. let\n'
                       '          h:f32[2] = add f g\n'
                       '        in (h,) }\n'
                       '      length=3\n'
                       '      num_carry=1\n'
                       '      num_consts=1\n'
                       '      reverse=False\n'
                       '      unroll=1\n'
                       '    ] c b a\n'
                       '  in (d, c, a) }',
 'scan_forward_ys': '{ lambda a:f32[3,2]; b:f32[2,2]. let\n'
                    '    c:f32[2,2] = scan[\n'
                    '      jaxpr={ lambda ; d:f32[2,2] e:f32[2]. let\n'
                    '          f:f32[2,2] = mul d 2.0:f32[]\n'
                    '          g:f32[2,2] = add d 1.0:f32[]\n'
                    '        in (g,) }\n'
                    '      length=3\n'
                    '      num_carry=1\n'
                    '      num_consts=0\n'
                    '      reverse=False\n'
                    '      unroll=1\n'
                    '    ] b a\n'
                    '  in (c,) }',
 'sort_descending': '{ lambda ; a:f32[2,3]. let\n'
                    '    b:f32[2,3] = jit[\n'
                    '      name=sort\n'
                    '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                    '          c:f32[2,3] = sort[dimension=1 is_stable=True num_keys=1] a\n'
                    '          b:f32[2,3] = rev[dimensions=(1,)] c\n'
                    '        in (b,) }\n'
                    '    ] a\n'
                    '  in (b,) }',
 'sort_flat': '{ lambda ; a:f32[2,3]. let\n'
              '    b:f32[6] = jit[\n'
              '      name=sort\n'
              '      jaxpr={ lambda ; a:f32[2,3]. let\n'
              '          c:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] a\n'
              '          b:f32[6] = sort[dimension=0 is_stable=True num_keys=1] c\n'
              '        in (b,) }\n'
              '    ] a\n'
              '  in (b,) }',
 'top_sort_unused': '{ lambda ; a:f32[2,3]. let\n'
                    '    _:f32[2,3] b:f32[2,3] = sort[dimension=1 is_stable=True num_keys=1] a a\n'
                    '  in (b,) }'}

JAX_ERRORS = {'fori_static': 'scan body function carry input and carry output must have equal types, but they differ:\n'
                '\n'
                'The input carry component loop_carry[1] has type float32[] but the corresponding output carry '
                'component has type float32[3,2], so the shapes do not match.\n'
                '\n'
                'Revise the function so that all output types match the corresponding input types.',
 'fori_traced': 'while_loop body function carry input and carry output must have equal types, but they differ:\n'
                '\n'
                'The input carry component loop_carry[2] has type float32[] but the corresponding output carry '
                'component has type float32[3,2], so the shapes do not match.\n'
                '\n'
                'Revise the function so that all output types match the corresponding input types.',
 'scan_dtype_and_shape': 'scan body function carry input and carry output must have equal types, but they differ:\n'
                         '\n'
                         'The input carry c has type int32[] but the corresponding output carry component has type '
                         'float32[2], so the dtypes do not match, and the shapes do not match.\n'
                         '\n'
                         'Revise the function so that all output types match the corresponding input types.',
 'scan_one': 'scan body function carry input and carry output must have equal types, but they differ:\n'
             '\n'
             'The input carry c has type float32[] but the corresponding output carry component has type '
             'float32[2], so the shapes do not match.\n'
             '\n'
             'Revise the function so that all output types match the corresponding input types.',
 'scan_two': 'scan body function carry input and carry output must have equal types, but they differ:\n'
             '\n'
             "  * the input carry component carry['a'] has type float32[] but the corresponding output carry "
             'component has type float32[2], so the shapes do not match;\n'
             "  * the input carry component carry['b'] has type float32[] but the corresponding output carry "
             'component has type int32[], so the dtypes do not match.\n'
             '\n'
             'Revise the function so that all output types match the corresponding input types.',
 'scan_varargs': 'scan body function carry input and carry output must have equal types, but they differ:\n'
                 '\n'
                 'The input carry a has type float32[] but the corresponding output carry component has type '
                 'float32[2], so the shapes do not match.\n'
                 '\n'
                 'Revise the function so that all output types match the corresponding input types.',
 'while': 'while_loop body function carry input and carry output must have equal types, but they differ:\n'
          '\n'
          'The input carry v has type float32[] but the corresponding output carry component has type '
          'float32[3,2], so the shapes do not match.\n'
          '\n'
          'Revise the function so that all output types match the corresponding input types.',
 'while_structure_list': "while_loop body function carry input and carry output must have the same pytree structure, but they differ:\n\nThe input carry c is a <class 'tuple'> but the corresponding component of the carry output is a <class 'list'>, so their Python types differ.\n\nRevise the function so that the carry output has the same pytree structure as the carry input.",
 'scan_structure_dict_keys': "scan body function carry input and carry output must have the same pytree structure, but they differ:\n\nThe input carry c is a <class 'dict'> with pytree metadata ('a', 'b') but the corresponding component of the carry output is a <class 'dict'> with pytree metadata ('a', 'c'), so the pytree node metadata does not match.\n\nRevise the function so that the carry output has the same pytree structure as the carry input.",
 'scan_structure_length': 'scan body function carry input and carry output must have the same pytree structure, but they differ:\n\nThe input carry c is a tuple of length 2 but the corresponding component of the carry output is a tuple of length 1, so the lengths do not match.\n\nRevise the function so that the carry output has the same pytree structure as the carry input.'}


@pytest.mark.parametrize("name", sorted(JAX_TEXTS))
def test_jaxpr_text_as_jax(name):
    assert str(_cases()[name]()) == JAX_TEXTS[name]


@pytest.mark.parametrize("name", sorted(JAX_ERRORS))
def test_carry_type_error_as_jax(name):
    with pytest.raises(TypeError) as e:
        _error_cases()[name]()
    assert str(e.value) == JAX_ERRORS[name]


def test_scan_forwarding_values():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    # a forwarded carry comes back as given (JAX returns the Python float itself); a forwarded xs as an array
    c, (ys, zs) = lax.scan(lambda c, x: (c, (x, c * x)), 1.0, xs)
    assert c == 1.0 and type(c) is float
    assert isinstance(ys, jax.Array)
    np.testing.assert_array_equal(np.asarray(ys), xs)
    np.testing.assert_array_equal(np.asarray(zs), xs)
    (a, b), ys = lax.scan(lambda c, x: ((c[0] + x, c[1]), x), (jnp.zeros(2), jnp.ones(2)), xs, reverse=True)
    np.testing.assert_array_equal(np.asarray(a), xs.sum(0))
    np.testing.assert_array_equal(np.asarray(b), np.ones(2))
    np.testing.assert_array_equal(np.asarray(ys), xs)


def test_scan_forwarding_under_grad_and_vmap():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)

    def f(w):
        (s, _), _ = lax.scan(lambda c, x: ((c[0] + x * c[1], c[1]), x), (jnp.zeros(2), w), xs)
        return s.sum()
    assert float(jax.grad(f)(2.0)) == pytest.approx(xs.sum())
    out = jax.vmap(lambda w: lax.scan(lambda c, x: ((c[0] + x * c[1], c[1]), x), (jnp.zeros(2), w), xs)[0][0])(
        jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out), np.arange(3.0)[:, None] * xs.sum(0), rtol=1e-6)
    out = jax.jit(lambda xs: lax.scan(lambda c, x: (c, x), 0., xs))(xs)
    assert float(out[0]) == 0.0
    np.testing.assert_array_equal(np.asarray(out[1]), xs)


def test_jitted_jnp_values():
    x = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 0.5]], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(x, axis=1)), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(np.asarray(jnp.cumprod(x)), np.cumprod(x))
    assert jnp.cumsum(np.array([True, True])).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(jnp.sort(x, descending=True)), -np.sort(-x))
    np.testing.assert_array_equal(np.asarray(jnp.argsort(x, axis=0, descending=True)),
                                  np.argsort(-x, axis=0, kind="stable"))
    np.testing.assert_array_equal(np.asarray(jnp.argsort(x, axis=None)), np.argsort(x, axis=None, kind="stable"))
    np.testing.assert_array_equal(np.asarray(jnp.flip(x)), np.flip(x))
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.cumsum(x, out=x)
