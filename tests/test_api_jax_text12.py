"""Issue 18, the twelfth pass on JAX 0.10.2's printed forms: ``make_jaxpr`` of functions whose nested
``jit``/``cond``/``scan``/``while_loop`` close over an eager ``Ref`` (made outside): JAX stages the ref as a
``Ref{...}`` constvar and passes it into the nested call (a jit takes it after its arguments, a cond as a
leading operand, scan/while as consts). The same functions run eagerly and under ``jit`` with JAX's values.
Texts and values recorded from JAX 0.10.2 by running the ``def``s below under JAX (each returns name ->
thunk; a thunk's ``str`` is the recorded text)."""
import numpy as np
import pytest

import cranax as jax
import cranax.extend.core
import cranax.numpy as jnp
from cranax import lax


def closed_ref_fns(jax, jnp, lax, r):
    def w_jit(a):
        def inner(a):
            r[...] = r[...] + a
            return a * r[...]
        return jax.jit(inner)(a)

    def w_cond(a):
        def t(a):
            r[...] += a
            return a + r[...]
        return lax.cond(a > 0, t, lambda a: a - r[...], a)

    def w_scan(a):
        def body(c, x):
            r[...] = r[...] * 2.
            return c + r[...] + x, c
        return lax.scan(body, a, jnp.arange(3.))

    def w_while(a):
        def body(i):
            r[...] = r[...] + 1.
            return i + r[...]
        return lax.while_loop(lambda i: i < 20., body, a)

    def w_fori(a):
        def body(i, c):
            r[...] = r[...] + c
            return c * 2.
        return lax.fori_loop(0, 3, body, a)

    def jit_in_jit(a):
        return jax.jit(lambda b: jax.jit(lambda c: c + r[...])(b) * 2.)(a)

    def cond_in_jit(a):
        return jax.jit(lambda b: lax.cond(b > 0, lambda c: c + r[...], lambda c: c, b))(a)

    def jit_in_scan(a):
        return lax.scan(lambda c, x: (jax.jit(lambda c: c + r[...] * x)(c), None), a, jnp.arange(2.))[0]

    return dict(
        mj_jit=lambda a: jax.jit(lambda a: a + r[...])(a),
        mj_cond=lambda a: lax.cond(a > 0, lambda a: a + r[...], lambda a: a, a),
        mj_scan=lambda a: lax.scan(lambda c, x: (c + r[...], None), a, None, length=2)[0],
        mj_while_body=lambda a: lax.while_loop(lambda i: i < 3, lambda i: i + r[...], a),
        mj_read_then_while=lambda a: lax.while_loop(lambda i: i < 3, lambda i: i + r[...], a + r[...]),
        w_jit=w_jit, w_cond=w_cond, w_scan=w_scan, w_while=w_while, w_fori=w_fori, jit_in_jit=jit_in_jit,
        cond_in_jit=cond_in_jit, jit_in_scan=jit_in_scan)


def closed_ref_texts(jax, jnp, lax):
    c = {}
    for name in closed_ref_fns(jax, jnp, lax, None):
        def thunk(name=name):
            r = jax.new_ref(jnp.array(1.5))
            return jax.make_jaxpr(closed_ref_fns(jax, jnp, lax, r)[name])(0.5)
        c[name] = thunk
    return c


def closed_ref_values(jax, jnp, lax):
    out = {}
    for mode in ["eager", "jit"]:
        for name in closed_ref_fns(jax, jnp, lax, None):
            r = jax.new_ref(jnp.array(1.5))
            f = closed_ref_fns(jax, jnp, lax, r)[name]
            res = f(jnp.float32(0.5)) if mode == "eager" else jax.jit(f)(jnp.float32(0.5))
            out[f"{mode}_{name}"] = [np.asarray(v).tolist() for v in jax.tree.leaves(res)] + [r[...].tolist()]
    return out


CLOSED_REF_TEXTS = {'cond_in_jit': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
                '    c:f32[] = jit[\n'
                '      name=<lambda>\n'
                '      jaxpr={ lambda ; b:f32[] a:Ref{f32[]}. let\n'
                '          d:bool[] = gt b 0.0:f32[]\n'
                '          e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d\n'
                '          c:f32[] = cond[\n'
                '            branches=(\n'
                '              { lambda ; f:Ref{f32[]} g:f32[]. let  in (g,) }\n'
                '              { lambda ; h:Ref{f32[]} i:f32[]. let\n'
                '                  j:f32[] <- h[...]\n'
                '                  k:f32[] = add i j\n'
                '                in (k,) }\n'
                '            )\n'
                '          ] e a b\n'
                '        in (c,) }\n'
                '    ] b a\n'
                '  in (c,) }',
 'jit_in_jit': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
               '    c:f32[] = jit[\n'
               '      name=<lambda>\n'
               '      jaxpr={ lambda ; b:f32[] a:Ref{f32[]}. let\n'
               '          d:f32[] = jit[\n'
               '            name=<lambda>\n'
               '            jaxpr={ lambda ; b:f32[] a:Ref{f32[]}. let\n'
               '                e:f32[] <- a[...]\n'
               '                d:f32[] = add b e\n'
               '              in (d,) }\n'
               '          ] b a\n'
               '          c:f32[] = mul d 2.0:f32[]\n'
               '        in (c,) }\n'
               '    ] b a\n'
               '  in (c,) }',
 'jit_in_scan': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
                '    c:f32[2] = iota[dimension=0 dtype=float32 shape=(2,) sharding=None] \n'
                '    d:f32[] = scan[\n'
                '      jaxpr={ lambda ; e:Ref{f32[]} f:f32[] g:f32[]. let\n'
                '          h:f32[] = jit[\n'
                '            name=<lambda>\n'
                '            jaxpr={ lambda ; e:Ref{f32[]} g:f32[] f:f32[]. let\n'
                '                i:f32[] <- e[...]\n'
                '                j:f32[] = convert_element_type[\n'
                '                  new_dtype=float32\n'
                '                  weak_type=False\n'
                '                ] i\n'
                '                k:f32[] = mul j g\n'
                '                l:f32[] = convert_element_type[\n'
                '                  new_dtype=float32\n'
                '                  weak_type=False\n'
                '                ] f\n'
                '                h:f32[] = add l k\n'
                '              in (h,) }\n'
                '          ] e g f\n'
                '        in (h,) }\n'
                '      length=2\n'
                '      num_carry=1\n'
                '      num_consts=1\n'
                '      reverse=False\n'
                '      unroll=1\n'
                '    ] a b c\n'
                '  in (d,) }',
 'mj_cond': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
            '    c:bool[] = gt b 0.0:f32[]\n'
            '    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
            '    e:f32[] = cond[\n'
            '      branches=(\n'
            '        { lambda ; f:Ref{f32[]} g:f32[]. let  in (g,) }\n'
            '        { lambda ; h:Ref{f32[]} i:f32[]. let\n'
            '            j:f32[] <- h[...]\n'
            '            k:f32[] = add i j\n'
            '          in (k,) }\n'
            '      )\n'
            '    ] d a b\n'
            '  in (e,) }',
 'mj_jit': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
           '    c:f32[] = jit[\n'
           '      name=<lambda>\n'
           '      jaxpr={ lambda ; b:f32[] a:Ref{f32[]}. let\n'
           '          d:f32[] <- a[...]\n'
           '          c:f32[] = add b d\n'
           '        in (c,) }\n'
           '    ] b a\n'
           '  in (c,) }',
 'mj_read_then_while': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
                       '    c:f32[] <- a[...]\n'
                       '    d:f32[] = add b c\n'
                       '    e:f32[] = while[\n'
                       '      body_jaxpr={ lambda ; f:Ref{f32[]} g:f32[]. let\n'
                       '          h:f32[] <- f[...]\n'
                       '          i:f32[] = add g h\n'
                       '        in (i,) }\n'
                       '      body_nconsts=1\n'
                       '      cond_jaxpr={ lambda ; j:f32[]. let k:bool[] = lt j 3.0:f32[] in (k,) }\n'
                       '      cond_nconsts=0\n'
                       '    ] a d\n'
                       '  in (e,) }',
 'mj_scan': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
            '    c:f32[] = scan[\n'
            '      jaxpr={ lambda ; d:Ref{f32[]} e:f32[]. let\n'
            '          f:f32[] <- d[...]\n'
            '          g:f32[] = add e f\n'
            '        in (g,) }\n'
            '      length=2\n'
            '      num_carry=1\n'
            '      num_consts=1\n'
            '      reverse=False\n'
            '      unroll=1\n'
            '    ] a b\n'
            '  in (c,) }',
 'mj_while_body': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
                  '    c:f32[] = while[\n'
                  '      body_jaxpr={ lambda ; d:Ref{f32[]} e:f32[]. let\n'
                  '          f:f32[] <- d[...]\n'
                  '          g:f32[] = add e f\n'
                  '        in (g,) }\n'
                  '      body_nconsts=1\n'
                  '      cond_jaxpr={ lambda ; h:f32[]. let i:bool[] = lt h 3.0:f32[] in (i,) }\n'
                  '      cond_nconsts=0\n'
                  '    ] a b\n'
                  '  in (c,) }',
 'w_cond': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
           '    c:bool[] = gt b 0.0:f32[]\n'
           '    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
           '    e:f32[] = cond[\n'
           '      branches=(\n'
           '        { lambda ; f:Ref{f32[]} g:f32[]. let\n'
           '            h:f32[] <- f[...]\n'
           '            i:f32[] = sub g h\n'
           '          in (i,) }\n'
           '        { lambda ; j:Ref{f32[]} k:f32[]. let\n'
           '            l:f32[] <- j[...]\n'
           '            m:f32[] = add l k\n'
           '            n:f32[] = convert_element_type[new_dtype=float32 weak_type=False] m\n'
           '            o:f32[], j[...] <- j[...], n\n'
           '            p:f32[] <- j[...]\n'
           '            q:f32[] = add k p\n'
           '          in (q,) }\n'
           '      )\n'
           '    ] d a b\n'
           '  in (e,) }',
 'w_fori': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
           '    _:i32[] c:f32[] = scan[\n'
           '      jaxpr={ lambda ; d:Ref{f32[]} e:i32[] f:f32[]. let\n'
           '          g:i32[] = add e 1:i32[]\n'
           '          h:f32[] <- d[...]\n'
           '          i:f32[] = add h f\n'
           '          j:f32[] = convert_element_type[new_dtype=float32 weak_type=False] i\n'
           '          k:f32[], d[...] <- d[...], j\n'
           '          l:f32[] = mul f 2.0:f32[]\n'
           '        in (g, l) }\n'
           '      length=3\n'
           '      num_carry=2\n'
           '      num_consts=1\n'
           '      reverse=False\n'
           '      unroll=1\n'
           '    ] a 0:i32[] b\n'
           '  in (c,) }',
 'w_jit': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
          '    c:f32[] = jit[\n'
          '      name=inner\n'
          '      jaxpr={ lambda ; b:f32[] a:Ref{f32[]}. let\n'
          '          d:f32[] <- a[...]\n'
          '          e:f32[] = add d b\n'
          '          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n'
          '          g:f32[], a[...] <- a[...], f\n'
          '          h:f32[] <- a[...]\n'
          '          c:f32[] = mul b h\n'
          '        in (c,) }\n'
          '    ] b a\n'
          '  in (c,) }',
 'w_scan': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
           '    c:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] \n'
           '    d:f32[] e:f32[3] = scan[\n'
           '      jaxpr={ lambda ; f:Ref{f32[]} g:f32[] h:f32[]. let\n'
           '          i:f32[] <- f[...]\n'
           '          j:f32[] = mul i 2.0:f32[]\n'
           '          k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] j\n'
           '          l:f32[], f[...] <- f[...], k\n'
           '          m:f32[] <- f[...]\n'
           '          n:f32[] = add g m\n'
           '          o:f32[] = convert_element_type[new_dtype=float32 weak_type=False] n\n'
           '          p:f32[] = add o h\n'
           '        in (p, g) }\n'
           '      length=3\n'
           '      num_carry=1\n'
           '      num_consts=1\n'
           '      reverse=False\n'
           '      unroll=1\n'
           '    ] a b c\n'
           '  in (d, e) }',
 'w_while': '{ lambda a:Ref{f32[]}; b:f32[]. let\n'
            '    c:f32[] = while[\n'
            '      body_jaxpr={ lambda ; d:Ref{f32[]} e:f32[]. let\n'
            '          f:f32[] <- d[...]\n'
            '          g:f32[] = add f 1.0:f32[]\n'
            '          h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] g\n'
            '          i:f32[], d[...] <- d[...], h\n'
            '          j:f32[] <- d[...]\n'
            '          k:f32[] = add e j\n'
            '        in (k,) }\n'
            '      body_nconsts=1\n'
            '      cond_jaxpr={ lambda ; l:f32[]. let m:bool[] = lt l 20.0:f32[] in (m,) }\n'
            '      cond_nconsts=0\n'
            '    ] a b\n'
            '  in (c,) }'}
CLOSED_REF_VALUES = {'eager_cond_in_jit': [2.0, 1.5],
 'eager_jit_in_jit': [4.0, 1.5],
 'eager_jit_in_scan': [2.0, 1.5],
 'eager_mj_cond': [2.0, 1.5],
 'eager_mj_jit': [2.0, 1.5],
 'eager_mj_read_then_while': [3.5, 1.5],
 'eager_mj_scan': [3.5, 1.5],
 'eager_mj_while_body': [3.5, 1.5],
 'eager_w_cond': [2.5, 2.0],
 'eager_w_fori': [4.0, 5.0],
 'eager_w_jit': [1.0, 2.0],
 'eager_w_scan': [24.5, [0.5, 3.5, 10.5], 12.0],
 'eager_w_while': [23.0, 6.5],
 'jit_cond_in_jit': [2.0, 1.5],
 'jit_jit_in_jit': [4.0, 1.5],
 'jit_jit_in_scan': [2.0, 1.5],
 'jit_mj_cond': [2.0, 1.5],
 'jit_mj_jit': [2.0, 1.5],
 'jit_mj_read_then_while': [3.5, 1.5],
 'jit_mj_scan': [3.5, 1.5],
 'jit_mj_while_body': [3.5, 1.5],
 'jit_w_cond': [2.5, 2.0],
 'jit_w_fori': [4.0, 5.0],
 'jit_w_jit': [1.0, 2.0],
 'jit_w_scan': [24.5, [0.5, 3.5, 10.5], 12.0],
 'jit_w_while': [23.0, 6.5]}


@pytest.mark.parametrize("name", sorted(CLOSED_REF_TEXTS))
def test_closed_ref_text_as_jax(name):
    got = closed_ref_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == CLOSED_REF_TEXTS[name]


def test_closed_ref_values_as_jax():
    got = closed_ref_values(jax, jnp, lax)
    assert sorted(got) == sorted(CLOSED_REF_VALUES)
    for k, want in CLOSED_REF_VALUES.items():
        assert len(got[k]) == len(want), k
        for g, w in zip(got[k], want):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=1e-6, err_msg=k)


# ---- a module-level (global) ref: found through the functions' names, nested ones included ----

_R = jax.new_ref(jnp.array(3.))

GLOBAL_REF_TEXTS = {
    "jit": ("{ lambda a:Ref{f32[]}; b:f32[]. let\n    c:f32[] = jit[\n      name=<lambda>\n      jaxpr={ lambda ; "
            "b:f32[] a:Ref{f32[]}. let\n          d:f32[] <- a[...]\n          c:f32[] = add b d\n        in (c,) }\n"
            "    ] b a\n  in (c,) }"),
    "while_body": ("{ lambda a:Ref{f32[]}; b:f32[]. let\n    c:f32[] = while[\n      body_jaxpr={ lambda ; "
                   "d:Ref{f32[]} e:f32[]. let\n          f:f32[] <- d[...]\n          g:f32[] = add e f\n        in "
                   "(g,) }\n      body_nconsts=1\n      cond_jaxpr={ lambda ; h:f32[]. let i:bool[] = lt h 3.0:f32[] "
                   "in (i,) }\n      cond_nconsts=0\n    ] a b\n  in (c,) }"),
}


def test_global_ref_text_as_jax():
    got = jax.make_jaxpr(lambda a: jax.jit(lambda a: a + _R[...])(a))(0.)
    assert str(got) == GLOBAL_REF_TEXTS["jit"]
    got = jax.make_jaxpr(lambda a: lax.while_loop(lambda i: i < 3, lambda i: i + _R[...], a))(0.)
    assert str(got) == GLOBAL_REF_TEXTS["while_body"]
    # the ref keeps its eager value afterwards, and the jaxpr evaluates on it
    assert float(_R[...]) == 3.0
    closed = jax.make_jaxpr(lambda a: jax.jit(lambda a: a + _R[...])(a))(1.)
    assert float(cranax.extend.core.eval_jaxpr(closed.jaxpr, closed.consts, 1.)[0]) == 4.0


# ---- weak-typed booleans: a comparison (or is_finite) of weakly typed operands is a weak bool; jnp's
# promotion makes two weak bools strong; logical ops test ``ne x 0`` as JAX's ``_to_bool`` ----

def weak_bool_texts(jax, jnp, lax):
    c = {}
    for k, f in {
        "gt_py_float": lambda x: x > 0, "eq_py_int": lambda x: x == 0, "isnan": jnp.isnan,
        "isfinite": jnp.isfinite, "invert": lambda x: ~(x > 0), "logical_not_cmp": lambda x: jnp.logical_not(x > 0),
        "logical_not_float": jnp.logical_not, "and_op": lambda x: (x > 0) & (x < 3),
        "eq_bools": lambda x: (x > 0) == (x < 3), "maximum_bools": lambda x: jnp.maximum(x > 0, x < 3),
        "where_bools": lambda x: jnp.where(x > 0, x < 3, x > 1), "select": lambda x: lax.select(x > 0, x < 3, x > 1),
        "bool_plus_int": lambda x: (x > 0) + 1, "bool_plus_i8": lambda x: (x > 0) + jnp.int8(1),
        "bool_times_float": lambda x: (x > 0) * 2.5, "sum_bool": lambda x: jnp.sum(x > 0),
        "any_bool": lambda x: jnp.any(x > 0), "logical_and_float": lambda x: jnp.logical_and(x, 2.),
        "logical_or_cmps": lambda x: jnp.logical_or(x > 1, x < 0), "xor_op": lambda x: (x > 0) ^ (x < 0),
        "or_true": lambda x: (x > 0) | True, "lax_and": lambda x: lax.bitwise_and(x > 0, x < 3),
        "isclose": lambda x: jnp.isclose(x, 1.), "signbit": jnp.signbit, "isinf": jnp.isinf,
        "isposinf": jnp.isposinf, "isneginf": jnp.isneginf, "iscomplex": jnp.iscomplex, "isreal": jnp.isreal,
        "clip_bool": lambda x: jnp.clip(x > 0, 0, 1),
    }.items():
        c["jit_" + k] = lambda f=f: repr(jax.jit(f)(1.))
    c["jit_strong_f32"] = lambda: repr(jax.jit(lambda x: x > 0)(jnp.float32(1.)))
    c["jit_py_bool"] = lambda: repr(jax.jit(lambda x: x > 0)(True))
    c["jit_logical_xor_int"] = lambda: repr(jax.jit(lambda x: jnp.logical_xor(x, 0))(1))
    c["eager_gt"] = lambda: repr(jnp.array(1.) > 0)
    c["eager_greater"] = lambda: repr(jnp.greater(1., 0.))
    c["eager_lax_gt"] = lambda: repr(lax.gt(1., 0.))
    c["vmap_gt"] = lambda: repr(jax.vmap(lambda x: x > 0)(jnp.ones(2)))
    c["full_like_weak"] = lambda: repr(lax.full_like(jnp.array(1.), 0))
    c["grad_complex_real"] = lambda: repr(jax.grad(jnp.real)(1 + 2j))
    c["jaxpr_bool_plus_int"] = lambda: jax.make_jaxpr(lambda x: (x > 0) + 1)(1.)
    c["jaxpr_logical_not"] = lambda: jax.make_jaxpr(jnp.logical_not)(1.)
    c["jaxpr_logical_not_i8"] = lambda: jax.make_jaxpr(jnp.logical_not)(jnp.int8(1))
    c["jaxpr_logical_not_complex"] = lambda: jax.make_jaxpr(jnp.logical_not)(1j)
    c["jaxpr_and_op"] = lambda: jax.make_jaxpr(lambda x: (x > 0) & (x < 3))(1.)
    c["jaxpr_eq_bools"] = lambda: jax.make_jaxpr(lambda x: (x > 0) == (x < 3))(1.)
    c["jaxpr_logical_and_float"] = lambda: jax.make_jaxpr(lambda x: jnp.logical_and(x, 2.))(1.)
    c["jaxpr_logical_or_bcast"] = lambda: jax.make_jaxpr(jnp.logical_or)(jnp.arange(3), jnp.ones((2, 1), bool))
    c["jaxpr_logical_xor_int"] = lambda: jax.make_jaxpr(lambda x: jnp.logical_xor(x, 0))(1)
    c["jaxpr_isinf"] = lambda: jax.make_jaxpr(jnp.isinf)(1.)
    c["jaxpr_isneginf"] = lambda: jax.make_jaxpr(jnp.isneginf)(1.)
    c["jaxpr_iscomplex"] = lambda: jax.make_jaxpr(jnp.iscomplex)(1.)
    c["jaxpr_isreal"] = lambda: jax.make_jaxpr(jnp.isreal)(1.)
    c["jaxpr_isinf_complex"] = lambda: jax.make_jaxpr(jnp.isinf)(jnp.ones(2, jnp.complex64))
    c["jaxpr_where_weak_bool"] = lambda: jax.make_jaxpr(lambda x: jnp.where(x > 0, x, 1))(1.)
    return c


WEAK_BOOL_TEXTS = {'eager_greater': 'Array(True, dtype=bool, weak_type=True)',
 'eager_gt': 'Array(True, dtype=bool, weak_type=True)',
 'eager_lax_gt': 'Array(True, dtype=bool, weak_type=True)',
 'full_like_weak': 'Array(0., dtype=float32, weak_type=True)',
 'grad_complex_real': 'Array(1.+0.j, dtype=complex64)',
 'jaxpr_and_op': '{ lambda ; a:f32[]. let\n'
                 '    b:bool[] = gt a 0.0:f32[]\n'
                 '    c:bool[] = lt a 3.0:f32[]\n'
                 '    d:bool[] = convert_element_type[new_dtype=bool weak_type=False] b\n'
                 '    e:bool[] = convert_element_type[new_dtype=bool weak_type=False] c\n'
                 '    f:bool[] = and d e\n'
                 '  in (f,) }',
 'jaxpr_bool_plus_int': '{ lambda ; a:f32[]. let\n'
                        '    b:bool[] = gt a 0.0:f32[]\n'
                        '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=True] b\n'
                        '    d:i32[] = add c 1:i32[]\n'
                        '  in (d,) }',
 'jaxpr_eq_bools': '{ lambda ; a:f32[]. let\n'
                   '    b:bool[] = gt a 0.0:f32[]\n'
                   '    c:bool[] = lt a 3.0:f32[]\n'
                   '    d:bool[] = convert_element_type[new_dtype=bool weak_type=False] b\n'
                   '    e:bool[] = convert_element_type[new_dtype=bool weak_type=False] c\n'
                   '    f:bool[] = eq d e\n'
                   '  in (f,) }',
 'jaxpr_iscomplex': '{ lambda ; a:f32[]. let\n'
                    '    b:bool[] = jit[\n'
                    '      name=iscomplex\n'
                    '      jaxpr={ lambda ; a:f32[]. let b:bool[] = ne 0.0:f32[] 0.0:f32[] in (b,) }\n'
                    '    ] a\n'
                    '  in (b,) }',
 'jaxpr_isinf': '{ lambda ; a:f32[]. let\n'
                '    b:bool[] = jit[\n'
                '      name=isinf\n'
                '      jaxpr={ lambda ; a:f32[]. let\n'
                '          c:f32[] = abs a\n'
                '          b:bool[] = eq c inf:f32[]\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'jaxpr_isinf_complex': '{ lambda ; a:c64[2]. let\n'
                        '    b:bool[2] = jit[\n'
                        '      name=isinf\n'
                        '      jaxpr={ lambda ; a:c64[2]. let\n'
                        '          c:f32[2] = real a\n'
                        '          d:f32[2] = imag a\n'
                        '          e:f32[2] = abs c\n'
                        '          f:bool[2] = eq e inf:f32[]\n'
                        '          g:f32[2] = abs d\n'
                        '          h:bool[2] = eq g inf:f32[]\n'
                        '          b:bool[2] = or f h\n'
                        '        in (b,) }\n'
                        '    ] a\n'
                        '  in (b,) }',
 'jaxpr_isneginf': '{ lambda ; a:f32[]. let b:bool[] = eq a -inf:f32[] in (b,) }',
 'jaxpr_isreal': '{ lambda ; a:f32[]. let\n'
                 '    b:bool[] = jit[\n'
                 '      name=isreal\n'
                 '      jaxpr={ lambda ; a:f32[]. let b:bool[] = eq 0.0:f32[] 0.0:f32[] in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'jaxpr_logical_and_float': '{ lambda ; a:f32[]. let\n'
                            '    b:bool[] = ne a 0.0:f32[]\n'
                            '    c:bool[] = ne 2.0:f32[] 0.0:f32[]\n'
                            '    d:bool[] = and b c\n'
                            '  in (d,) }',
 'jaxpr_logical_not': '{ lambda ; a:f32[]. let b:bool[] = ne a 0.0:f32[]; c:bool[] = not b in (c,) }',
 'jaxpr_logical_not_complex': '{ lambda ; a:c64[]. let b:bool[] = ne a 0j:c64[]; c:bool[] = not b in (c,) }',
 'jaxpr_logical_not_i8': '{ lambda ; a:i8[]. let b:bool[] = ne a 0:i8[]; c:bool[] = not b in (c,) }',
 'jaxpr_logical_or_bcast': '{ lambda ; a:i32[3] b:bool[2,1]. let\n'
                           '    c:i32[2,1] = convert_element_type[new_dtype=int32 weak_type=False] b\n'
                           '    d:i32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n'
                           '    e:bool[1,3] = ne d 0:i32[]\n'
                           '    f:bool[2,1] = ne c 0:i32[]\n'
                           '    g:bool[2,3] = or e f\n'
                           '  in (g,) }',
 'jaxpr_logical_xor_int': '{ lambda ; a:i32[]. let\n'
                          '    b:bool[] = ne a 0:i32[]\n'
                          '    c:bool[] = ne 0:i32[] 0:i32[]\n'
                          '    d:bool[] = xor b c\n'
                          '  in (d,) }',
 'jaxpr_where_weak_bool': '{ lambda ; a:f32[]. let\n'
                          '    b:bool[] = gt a 0.0:f32[]\n'
                          '    c:f32[] = jit[\n'
                          '      name=_where\n'
                          '      jaxpr={ lambda ; b:bool[] a:f32[] d:i32[]. let\n'
                          '          e:f32[] = convert_element_type[new_dtype=float32 weak_type=True] d\n'
                          '          c:f32[] = select_n b e a\n'
                          '        in (c,) }\n'
                          '    ] b a 1:i32[]\n'
                          '  in (c,) }',
 'jit_and_op': 'Array(True, dtype=bool)',
 'jit_any_bool': 'Array(True, dtype=bool)',
 'jit_bool_plus_i8': 'Array(2, dtype=int8)',
 'jit_bool_plus_int': 'Array(2, dtype=int32, weak_type=True)',
 'jit_bool_times_float': 'Array(2.5, dtype=float32, weak_type=True)',
 'jit_clip_bool': 'Array(1, dtype=int32, weak_type=True)',
 'jit_eq_bools': 'Array(True, dtype=bool)',
 'jit_eq_py_int': 'Array(False, dtype=bool, weak_type=True)',
 'jit_gt_py_float': 'Array(True, dtype=bool, weak_type=True)',
 'jit_invert': 'Array(False, dtype=bool, weak_type=True)',
 'jit_isclose': 'Array(True, dtype=bool)',
 'jit_iscomplex': 'Array(False, dtype=bool, weak_type=True)',
 'jit_isfinite': 'Array(True, dtype=bool, weak_type=True)',
 'jit_isinf': 'Array(False, dtype=bool)',
 'jit_isnan': 'Array(False, dtype=bool, weak_type=True)',
 'jit_isneginf': 'Array(False, dtype=bool)',
 'jit_isposinf': 'Array(False, dtype=bool)',
 'jit_isreal': 'Array(True, dtype=bool, weak_type=True)',
 'jit_lax_and': 'Array(True, dtype=bool, weak_type=True)',
 'jit_logical_and_float': 'Array(True, dtype=bool, weak_type=True)',
 'jit_logical_not_cmp': 'Array(False, dtype=bool, weak_type=True)',
 'jit_logical_not_float': 'Array(False, dtype=bool, weak_type=True)',
 'jit_logical_or_cmps': 'Array(False, dtype=bool)',
 'jit_logical_xor_int': 'Array(True, dtype=bool, weak_type=True)',
 'jit_maximum_bools': 'Array(True, dtype=bool)',
 'jit_or_true': 'Array(True, dtype=bool)',
 'jit_py_bool': 'Array(True, dtype=bool, weak_type=True)',
 'jit_select': 'Array(True, dtype=bool, weak_type=True)',
 'jit_signbit': 'Array(False, dtype=bool)',
 'jit_strong_f32': 'Array(True, dtype=bool)',
 'jit_sum_bool': 'Array(1, dtype=int32)',
 'jit_where_bools': 'Array(True, dtype=bool)',
 'jit_xor_op': 'Array(True, dtype=bool)',
 'vmap_gt': 'Array([ True,  True], dtype=bool)'}


@pytest.mark.parametrize("name", sorted(WEAK_BOOL_TEXTS))
def test_weak_bool_text_as_jax(name):
    got = weak_bool_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == WEAK_BOOL_TEXTS[name]


# ---- ``.at[...]`` with static ints, full slices and traced scalars: JAX's ``_index_to_gather`` (one window
# scatter, the ints as its index vector, sorted and unique) ----

def at_texts(jax, jnp, lax):
    v, x = jnp.arange(4.), jnp.ones((3, 4))
    c = {}
    c["neg_int_set"] = lambda: jax.make_jaxpr(lambda v: v.at[-1].set(5.))(v)
    c["row_set"] = lambda: jax.make_jaxpr(lambda x: x.at[1].set(2.))(x)
    c["two_ints_add"] = lambda: jax.make_jaxpr(lambda x: x.at[1, 2].add(2.))(x)
    c["col_mul"] = lambda: jax.make_jaxpr(lambda x: x.at[:, -2].multiply(jnp.arange(3.)))(x)
    c["ellipsis_max"] = lambda: jax.make_jaxpr(lambda x: x.at[..., 0].max(0.5))(x)
    c["traced_add"] = lambda: jax.make_jaxpr(lambda v, i: v.at[i].add(1.))(v, 2)
    c["traced_strong_set"] = lambda: jax.make_jaxpr(lambda x, i: x.at[i, 1].set(7.))(x, jnp.int32(1))
    c["grad_row_set"] = lambda: jax.make_jaxpr(jax.grad(lambda x: (x.at[1].set(2.) * x).sum()))(x)
    c["neg_oob"] = lambda: jax.make_jaxpr(lambda v: v.at[-6].add(1.))(v)
    c["out_of_range"] = lambda: jax.make_jaxpr(lambda v: v.at[7].set(1.))(v)
    return c


def at_values(jax, jnp, lax):
    x = jnp.arange(12.).reshape(3, 4)
    out = {}
    out["neg_set"] = x.at[-1].set(5.).tolist()
    out["int_add"] = x.at[1, -3].add(2.).tolist()
    out["col_min"] = x.at[:, 2].min(jnp.array([0., 100., 5.])).tolist()
    out["jit_row_mul"] = jax.jit(lambda x: x.at[2].multiply(jnp.arange(4.)))(x).tolist()
    out["jit_traced"] = jax.jit(lambda x, i: x.at[i].add(1.))(x, -1).tolist()
    out["jit_traced_oob"] = jax.jit(lambda x, i: x.at[i].set(-1.))(x, 5).tolist()
    out["vmap_traced"] = jax.vmap(lambda v, i: v.at[i].set(0.))(x, jnp.array([0, -1, 2])).tolist()
    out["grad_row"] = jax.grad(lambda x: (x.at[1].set(2.) ** 2).sum())(x).tolist()
    out["grad_values"] = jax.grad(lambda u: (x.at[0, 1:].set(u) * x).sum())(jnp.ones(3)).tolist()
    out["oob_static"] = x[0].at[7].set(1.).tolist()
    return out


AT_TEXTS = {'col_mul': '{ lambda ; a:f32[3,4]. let\n'
            '    b:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] \n'
            '    c:i32[1] = broadcast_in_dim 2:i32[]\n'
            '    d:f32[3,4] = scatter-mul[\n'
            '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(1,), '
            'scatter_dims_to_operand_dims=(1,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
            '      indices_are_sorted=True\n'
            '      mode=GatherScatterMode.FILL_OR_DROP\n'
            '      unique_indices=True\n'
            '      update_consts=()\n'
            '      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = mul e f in (g,) }\n'
            '    ] a c b\n'
            '  in (d,) }',
 'ellipsis_max': '{ lambda ; a:f32[3,4]. let\n'
                 '    b:i32[1] = broadcast_in_dim 0:i32[]\n'
                 '    c:f32[3] = broadcast_in_dim 0.5:f32[]\n'
                 '    d:f32[3,4] = scatter-max[\n'
                 '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(1,), '
                 'scatter_dims_to_operand_dims=(1,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
                 '      indices_are_sorted=True\n'
                 '      mode=GatherScatterMode.FILL_OR_DROP\n'
                 '      unique_indices=True\n'
                 '      update_consts=()\n'
                 '      update_jaxpr={ lambda ; e:f32[] f:f32[]. let g:f32[] = max e f in (g,) }\n'
                 '    ] a b c\n'
                 '  in (d,) }',
 'grad_row_set': '{ lambda ; a:f32[3,4]. let\n'
                 '    b:i32[1] = broadcast_in_dim 1:i32[]\n'
                 '    c:f32[4] = broadcast_in_dim 2.0:f32[]\n'
                 '    _:f32[4] = broadcast_in_dim 0.0:f32[]\n'
                 '    d:f32[3,4] = scatter[\n'
                 '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(0,), '
                 'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
                 '      indices_are_sorted=True\n'
                 '      mode=GatherScatterMode.FILL_OR_DROP\n'
                 '      unique_indices=True\n'
                 '      update_consts=()\n'
                 '      update_jaxpr=None\n'
                 '    ] a b c\n'
                 '    e:f32[3,4] = mul d a\n'
                 '    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] e\n'
                 '    f:f32[3,4] = broadcast_in_dim 1.0:f32[]\n'
                 '    g:f32[3,4] = mul d f\n'
                 '    h:f32[3,4] = mul f a\n'
                 '    i:f32[4] = broadcast_in_dim 0.0:f32[]\n'
                 '    j:f32[3,4] = scatter[\n'
                 '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(0,), '
                 'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
                 '      indices_are_sorted=True\n'
                 '      mode=GatherScatterMode.FILL_OR_DROP\n'
                 '      unique_indices=True\n'
                 '      update_consts=()\n'
                 '      update_jaxpr=None\n'
                 '    ] h b i\n'
                 '    k:f32[3,4] = add_any g j\n'
                 '  in (k,) }',
 'neg_int_set': '{ lambda ; a:f32[4]. let\n'
                '    b:i32[1] = broadcast_in_dim 3:i32[]\n'
                '    c:f32[4] = scatter[\n'
                '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), '
                'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
                '      indices_are_sorted=True\n'
                '      mode=GatherScatterMode.FILL_OR_DROP\n'
                '      unique_indices=True\n'
                '      update_consts=()\n'
                '      update_jaxpr=None\n'
                '    ] a b 5.0:f32[]\n'
                '  in (c,) }',
 'neg_oob': '{ lambda ; a:f32[4]. let\n'
            '    b:i32[1] = broadcast_in_dim -2:i32[]\n'
            '    c:f32[4] = scatter-add[\n'
            '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), '
            'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
            '      indices_are_sorted=True\n'
            '      mode=GatherScatterMode.FILL_OR_DROP\n'
            '      unique_indices=True\n'
            '      update_consts=()\n'
            '      update_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f,) }\n'
            '    ] a b 1.0:f32[]\n'
            '  in (c,) }',
 'out_of_range': '{ lambda ; a:f32[4]. let\n'
                 '    b:i32[1] = broadcast_in_dim 7:i32[]\n'
                 '    c:f32[4] = scatter[\n'
                 '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), '
                 'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
                 '      indices_are_sorted=True\n'
                 '      mode=GatherScatterMode.FILL_OR_DROP\n'
                 '      unique_indices=True\n'
                 '      update_consts=()\n'
                 '      update_jaxpr=None\n'
                 '    ] a b 1.0:f32[]\n'
                 '  in (c,) }',
 'row_set': '{ lambda ; a:f32[3,4]. let\n'
            '    b:i32[1] = broadcast_in_dim 1:i32[]\n'
            '    c:f32[4] = broadcast_in_dim 2.0:f32[]\n'
            '    d:f32[3,4] = scatter[\n'
            '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(0,), '
            'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
            '      indices_are_sorted=True\n'
            '      mode=GatherScatterMode.FILL_OR_DROP\n'
            '      unique_indices=True\n'
            '      update_consts=()\n'
            '      update_jaxpr=None\n'
            '    ] a b c\n'
            '  in (d,) }',
 'traced_add': '{ lambda ; a:f32[4] b:i32[]. let\n'
               '    c:bool[] = lt b 0:i32[]\n'
               '    d:i32[] = add b 4:i32[]\n'
               '    e:i32[] = select_n c b d\n'
               '    f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e\n'
               '    g:i32[1] = broadcast_in_dim f\n'
               '    h:f32[4] = scatter-add[\n'
               '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), '
               'scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
               '      indices_are_sorted=True\n'
               '      mode=GatherScatterMode.FILL_OR_DROP\n'
               '      unique_indices=True\n'
               '      update_consts=()\n'
               '      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }\n'
               '    ] a g 1.0:f32[]\n'
               '  in (h,) }',
 'traced_strong_set': '{ lambda ; a:f32[3,4] b:i32[]. let\n'
                      '    c:bool[] = lt b 0:i32[]\n'
                      '    d:i32[] = add b 3:i32[]\n'
                      '    e:i32[] = select_n c b d\n'
                      '    f:i32[1] = broadcast_in_dim e\n'
                      '    g:i32[1] = broadcast_in_dim 1:i32[]\n'
                      '    h:i32[2] = concatenate[dimension=0] f g\n'
                      '    i:f32[3,4] = scatter[\n'
                      '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, '
                      '1), scatter_dims_to_operand_dims=(0, 1), operand_batching_dims=(), '
                      'scatter_indices_batching_dims=())\n'
                      '      indices_are_sorted=True\n'
                      '      mode=GatherScatterMode.FILL_OR_DROP\n'
                      '      unique_indices=True\n'
                      '      update_consts=()\n'
                      '      update_jaxpr=None\n'
                      '    ] a h 7.0:f32[]\n'
                      '  in (i,) }',
 'two_ints_add': '{ lambda ; a:f32[3,4]. let\n'
                 '    b:i32[1] = broadcast_in_dim 1:i32[]\n'
                 '    c:i32[1] = broadcast_in_dim 2:i32[]\n'
                 '    d:i32[2] = concatenate[dimension=0] b c\n'
                 '    e:f32[3,4] = scatter-add[\n'
                 '      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1), '
                 'scatter_dims_to_operand_dims=(0, 1), operand_batching_dims=(), scatter_indices_batching_dims=())\n'
                 '      indices_are_sorted=True\n'
                 '      mode=GatherScatterMode.FILL_OR_DROP\n'
                 '      unique_indices=True\n'
                 '      update_consts=()\n'
                 '      update_jaxpr={ lambda ; f:f32[] g:f32[]. let h:f32[] = add f g in (h,) }\n'
                 '    ] a d 2.0:f32[]\n'
                 '  in (e,) }'}
AT_VALUES = {'col_min': [[0.0, 1.0, 0.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 5.0, 11.0]],
 'grad_row': [[0.0, 2.0, 4.0, 6.0], [0.0, 0.0, 0.0, 0.0], [16.0, 18.0, 20.0, 22.0]],
 'grad_values': [1.0, 2.0, 3.0],
 'int_add': [[0.0, 1.0, 2.0, 3.0], [4.0, 7.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]],
 'jit_row_mul': [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 9.0, 20.0, 33.0]],
 'jit_traced': [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [9.0, 10.0, 11.0, 12.0]],
 'jit_traced_oob': [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]],
 'neg_set': [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [5.0, 5.0, 5.0, 5.0]],
 'oob_static': [0.0, 1.0, 2.0, 3.0],
 'vmap_traced': [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 0.0], [8.0, 9.0, 0.0, 11.0]]}


@pytest.mark.parametrize("name", sorted(AT_TEXTS))
def test_at_text_as_jax(name):
    got = at_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == AT_TEXTS[name]


def test_at_values_as_jax():
    got = at_values(jax, jnp, lax)
    assert sorted(got) == sorted(AT_VALUES)
    for k, want in AT_VALUES.items():
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=1e-6, err_msg=k)


# ---- ``jnp.tril``/``triu`` (``jit[name=tril]``, JAX's ``iota + k >= iota`` mask) and ``jnp.roll``'s
# ``_roll_static`` ----

def tri_roll_texts(jax, jnp, lax):
    x, b, v = jnp.ones((3, 4)), jnp.ones((2, 3, 3)), jnp.arange(4.)
    c = {}
    c["tril"] = lambda: jax.make_jaxpr(jnp.tril)(x)
    c["tril_k_neg"] = lambda: jax.make_jaxpr(lambda x: jnp.tril(x, -1))(x)
    c["triu_k1"] = lambda: jax.make_jaxpr(lambda x: jnp.triu(x, 1))(x)
    c["triu_batched"] = lambda: jax.make_jaxpr(jnp.triu)(b)
    c["tril_int"] = lambda: jax.make_jaxpr(jnp.tril)(jnp.ones((2, 2), jnp.int32))
    c["roll"] = lambda: jax.make_jaxpr(lambda v: jnp.roll(v, 1))(v)
    c["roll_neg"] = lambda: jax.make_jaxpr(lambda v: jnp.roll(v, -3))(v)
    c["roll_axes"] = lambda: jax.make_jaxpr(lambda x: jnp.roll(x, (1, 2), (0, 1)))(x)
    c["roll_none"] = lambda: jax.make_jaxpr(lambda x: jnp.roll(x, 5))(x)
    c["roll_zero"] = lambda: jax.make_jaxpr(lambda v: jnp.roll(v, 4))(v)
    return c


def tri_roll_values(jax, jnp, lax):
    x = jnp.arange(1., 13.).reshape(3, 4)
    b = jnp.arange(18.).reshape(2, 3, 3)
    out = {}
    for k in (-2, -1, 0, 1, 3):
        out[f"tril_{k}"] = jnp.tril(x, k).tolist()
        out[f"triu_{k}"] = jnp.triu(x, k).tolist()
    out["triu_batched"] = jnp.triu(b, 1).tolist()
    out["tril_jit"] = jax.jit(lambda x: jnp.tril(x, 1))(x).tolist()
    out["tril_grad"] = jax.grad(lambda x: (jnp.tril(x) * x).sum())(x).tolist()
    out["tril_vmap"] = jax.vmap(jnp.tril)(b).tolist()
    out["roll"] = jnp.roll(x, 1).tolist()
    out["roll_axis0"] = jnp.roll(x, -1, 0).tolist()
    out["roll_axes"] = jnp.roll(x, (1, -3), (0, 1)).tolist()
    out["roll_jit_traced"] = jax.jit(lambda x, s: jnp.roll(x, s, 1))(x, 3).tolist()
    out["roll_grad"] = jax.grad(lambda x: (jnp.roll(x, 2, 1) * x).sum())(x).tolist()
    return out


TRI_ROLL_TEXTS = {'roll': '{ lambda ; a:f32[4]. let\n'
         '    b:f32[4] = jit[\n'
         '      name=_roll_static\n'
         '      jaxpr={ lambda ; a:f32[4]. let\n'
         '          c:f32[1] = slice[limit_indices=(4,) start_indices=(3,) strides=(1,)] a\n'
         '          d:f32[3] = slice[limit_indices=(3,) start_indices=(0,) strides=(1,)] a\n'
         '          b:f32[4] = concatenate[dimension=0] c d\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'roll_axes': '{ lambda ; a:f32[3,4]. let\n'
              '    b:f32[3,4] = jit[\n'
              '      name=_roll_static\n'
              '      jaxpr={ lambda ; a:f32[3,4]. let\n'
              '          c:f32[1,4] = slice[\n'
              '            limit_indices=(3, 4)\n'
              '            start_indices=(2, 0)\n'
              '            strides=(1, 1)\n'
              '          ] a\n'
              '          d:f32[2,4] = slice[\n'
              '            limit_indices=(2, 4)\n'
              '            start_indices=(0, 0)\n'
              '            strides=(1, 1)\n'
              '          ] a\n'
              '          e:f32[3,4] = concatenate[dimension=0] c d\n'
              '          f:f32[3,2] = slice[\n'
              '            limit_indices=(3, 4)\n'
              '            start_indices=(0, 2)\n'
              '            strides=(1, 1)\n'
              '          ] e\n'
              '          g:f32[3,2] = slice[\n'
              '            limit_indices=(3, 2)\n'
              '            start_indices=(0, 0)\n'
              '            strides=(1, 1)\n'
              '          ] e\n'
              '          b:f32[3,4] = concatenate[dimension=1] f g\n'
              '        in (b,) }\n'
              '    ] a\n'
              '  in (b,) }',
 'roll_neg': '{ lambda ; a:f32[4]. let\n'
             '    b:f32[4] = jit[\n'
             '      name=_roll_static\n'
             '      jaxpr={ lambda ; a:f32[4]. let\n'
             '          c:f32[1] = slice[limit_indices=(4,) start_indices=(3,) strides=(1,)] a\n'
             '          d:f32[3] = slice[limit_indices=(3,) start_indices=(0,) strides=(1,)] a\n'
             '          b:f32[4] = concatenate[dimension=0] c d\n'
             '        in (b,) }\n'
             '    ] a\n'
             '  in (b,) }',
 'roll_none': '{ lambda ; a:f32[3,4]. let\n'
              '    b:f32[12] = reshape[dimensions=None new_sizes=(12,) sharding=None] a\n'
              '    c:f32[12] = jit[\n'
              '      name=_roll_static\n'
              '      jaxpr={ lambda ; b:f32[12]. let\n'
              '          d:f32[5] = slice[limit_indices=(12,) start_indices=(7,) strides=(1,)] b\n'
              '          e:f32[7] = slice[limit_indices=(7,) start_indices=(0,) strides=(1,)] b\n'
              '          c:f32[12] = concatenate[dimension=0] d e\n'
              '        in (c,) }\n'
              '    ] b\n'
              '    f:f32[3,4] = reshape[dimensions=None new_sizes=(3, 4) sharding=None] c\n'
              '  in (f,) }',
 'roll_zero': '{ lambda ; a:f32[4]. let\n'
              '    b:f32[4] = jit[\n'
              '      name=_roll_static\n'
              '      jaxpr={ lambda ; a:f32[4]. let\n'
              '          c:f32[4] = slice[limit_indices=(4,) start_indices=(0,) strides=(1,)] a\n'
              '          d:f32[0] = slice[limit_indices=(0,) start_indices=(0,) strides=(1,)] a\n'
              '          b:f32[4] = concatenate[dimension=0] c d\n'
              '        in (b,) }\n'
              '    ] a\n'
              '  in (b,) }',
 'tril': '{ lambda ; a:f32[3,4]. let\n'
         '    b:f32[3,4] = jit[\n'
         '      name=tril\n'
         '      jaxpr={ lambda ; a:f32[3,4]. let\n'
         '          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] \n'
         '          d:i32[3,4] = add c 0:i32[]\n'
         '          e:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] \n'
         '          f:bool[3,4] = ge d e\n'
         '          g:f32[3,4] = broadcast_in_dim 0.0:f32[]\n'
         '          b:f32[3,4] = select_n f g a\n'
         '        in (b,) }\n'
         '    ] a\n'
         '  in (b,) }',
 'tril_int': '{ lambda ; a:i32[2,2]. let\n'
             '    b:i32[2,2] = jit[\n'
             '      name=tril\n'
             '      jaxpr={ lambda ; a:i32[2,2]. let\n'
             '          c:i32[2,2] = iota[dimension=0 dtype=int32 shape=(2, 2) sharding=None] \n'
             '          d:i32[2,2] = add c 0:i32[]\n'
             '          e:i32[2,2] = iota[dimension=1 dtype=int32 shape=(2, 2) sharding=None] \n'
             '          f:bool[2,2] = ge d e\n'
             '          g:i32[2,2] = broadcast_in_dim 0:i32[]\n'
             '          b:i32[2,2] = select_n f g a\n'
             '        in (b,) }\n'
             '    ] a\n'
             '  in (b,) }',
 'tril_k_neg': '{ lambda ; a:f32[3,4]. let\n'
               '    b:f32[3,4] = jit[\n'
               '      name=tril\n'
               '      jaxpr={ lambda ; a:f32[3,4]. let\n'
               '          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] \n'
               '          d:i32[3,4] = add c -1:i32[]\n'
               '          e:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] \n'
               '          f:bool[3,4] = ge d e\n'
               '          g:f32[3,4] = broadcast_in_dim 0.0:f32[]\n'
               '          b:f32[3,4] = select_n f g a\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }',
 'triu_batched': '{ lambda ; a:f32[2,3,3]. let\n'
                 '    b:f32[2,3,3] = jit[\n'
                 '      name=triu\n'
                 '      jaxpr={ lambda ; a:f32[2,3,3]. let\n'
                 '          c:i32[3,3] = iota[dimension=0 dtype=int32 shape=(3, 3) sharding=None] \n'
                 '          d:i32[3,3] = add c -1:i32[]\n'
                 '          e:i32[3,3] = iota[dimension=1 dtype=int32 shape=(3, 3) sharding=None] \n'
                 '          f:bool[3,3] = ge d e\n'
                 '          g:bool[2,3,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] f\n'
                 '          h:f32[2,3,3] = broadcast_in_dim 0.0:f32[]\n'
                 '          b:f32[2,3,3] = select_n g a h\n'
                 '        in (b,) }\n'
                 '    ] a\n'
                 '  in (b,) }',
 'triu_k1': '{ lambda ; a:f32[3,4]. let\n'
            '    b:f32[3,4] = jit[\n'
            '      name=triu\n'
            '      jaxpr={ lambda ; a:f32[3,4]. let\n'
            '          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] \n'
            '          d:i32[3,4] = add c 0:i32[]\n'
            '          e:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] \n'
            '          f:bool[3,4] = ge d e\n'
            '          g:f32[3,4] = broadcast_in_dim 0.0:f32[]\n'
            '          b:f32[3,4] = select_n f a g\n'
            '        in (b,) }\n'
            '    ] a\n'
            '  in (b,) }'}
TRI_ROLL_VALUES = {'roll': [[12.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]],
 'roll_axes': [[12.0, 9.0, 10.0, 11.0], [4.0, 1.0, 2.0, 3.0], [8.0, 5.0, 6.0, 7.0]],
 'roll_axis0': [[5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [1.0, 2.0, 3.0, 4.0]],
 'roll_grad': [[6.0, 8.0, 2.0, 4.0], [14.0, 16.0, 10.0, 12.0], [22.0, 24.0, 18.0, 20.0]],
 'roll_jit_traced': [[2.0, 3.0, 4.0, 1.0], [6.0, 7.0, 8.0, 5.0], [10.0, 11.0, 12.0, 9.0]],
 'tril_-1': [[0.0, 0.0, 0.0, 0.0], [5.0, 0.0, 0.0, 0.0], [9.0, 10.0, 0.0, 0.0]],
 'tril_-2': [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [9.0, 0.0, 0.0, 0.0]],
 'tril_0': [[1.0, 0.0, 0.0, 0.0], [5.0, 6.0, 0.0, 0.0], [9.0, 10.0, 11.0, 0.0]],
 'tril_1': [[1.0, 2.0, 0.0, 0.0], [5.0, 6.0, 7.0, 0.0], [9.0, 10.0, 11.0, 12.0]],
 'tril_3': [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]],
 'tril_grad': [[2.0, 0.0, 0.0, 0.0], [10.0, 12.0, 0.0, 0.0], [18.0, 20.0, 22.0, 0.0]],
 'tril_jit': [[1.0, 2.0, 0.0, 0.0], [5.0, 6.0, 7.0, 0.0], [9.0, 10.0, 11.0, 12.0]],
 'tril_vmap': [[[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [6.0, 7.0, 8.0]],
               [[9.0, 0.0, 0.0], [12.0, 13.0, 0.0], [15.0, 16.0, 17.0]]],
 'triu_-1': [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [0.0, 10.0, 11.0, 12.0]],
 'triu_-2': [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]],
 'triu_0': [[1.0, 2.0, 3.0, 4.0], [0.0, 6.0, 7.0, 8.0], [0.0, 0.0, 11.0, 12.0]],
 'triu_1': [[0.0, 2.0, 3.0, 4.0], [0.0, 0.0, 7.0, 8.0], [0.0, 0.0, 0.0, 12.0]],
 'triu_3': [[0.0, 0.0, 0.0, 4.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
 'triu_batched': [[[0.0, 1.0, 2.0], [0.0, 0.0, 5.0], [0.0, 0.0, 0.0]],
                  [[0.0, 10.0, 11.0], [0.0, 0.0, 14.0], [0.0, 0.0, 0.0]]]}


@pytest.mark.parametrize("name", sorted(TRI_ROLL_TEXTS))
def test_tri_roll_text_as_jax(name):
    got = tri_roll_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == TRI_ROLL_TEXTS[name]


def test_tri_roll_values_as_jax():
    got = tri_roll_values(jax, jnp, lax)
    assert sorted(got) == sorted(TRI_ROLL_VALUES)
    for k, want in TRI_ROLL_VALUES.items():
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=1e-6, err_msg=k)
    x = np.arange(1., 13.).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.tril(x, 1)), np.tril(x, 1))
    np.testing.assert_array_equal(np.asarray(jnp.roll(x, (1, -3), (0, 1))), np.roll(x, (1, -3), (0, 1)))


# ---- ``jnp.nansum``/``nanmean`` as JAX's jitted ones (nanmean: the non-NaN count in the result dtype, then
# nansum, then one div) ----

def nan_texts(jax, jnp, lax):
    v, x = jnp.arange(4.), jnp.ones((2, 3))
    c = {}
    c["nansum"] = lambda: jax.make_jaxpr(jnp.nansum)(v)
    c["nanmean"] = lambda: jax.make_jaxpr(jnp.nanmean)(v)
    c["nansum_axis_keep"] = lambda: jax.make_jaxpr(lambda x: jnp.nansum(x, axis=1, keepdims=True))(x)
    c["nanmean_axis0"] = lambda: jax.make_jaxpr(lambda x: jnp.nanmean(x, axis=0))(x)
    c["nanmean_int"] = lambda: jax.make_jaxpr(jnp.nanmean)(jnp.arange(3))
    c["nansum_int"] = lambda: jax.make_jaxpr(jnp.nansum)(jnp.arange(3))
    return c


def nan_values(jax, jnp, lax):
    x = jnp.array([[1., jnp.nan, 3.], [jnp.nan, jnp.nan, 6.]])
    out = {}
    out["nansum"] = jnp.nansum(x).tolist()
    out["nansum_axis0"] = jnp.nansum(x, axis=0).tolist()
    out["nanmean"] = jnp.nanmean(x).tolist()
    out["nanmean_axis1_keep"] = jnp.nanmean(x, axis=1, keepdims=True).tolist()
    out["nanmean_all_nan_col"] = jnp.nanmean(x, axis=0).tolist()
    out["nanmean_where"] = jnp.nanmean(x, axis=1, where=jnp.array([[True, True, False], [True, True, True]])).tolist()
    out["nanmean_jit"] = jax.jit(lambda x: jnp.nanmean(x, axis=(0, 1)))(x).tolist()
    out["nansum_grad"] = jnp.nan_to_num(jax.grad(lambda x: jnp.nansum(x * x))(x)).tolist()
    out["nanmean_int"] = jnp.nanmean(jnp.arange(4)).tolist()
    return out


NAN_TEXTS = {'nanmean': '{ lambda ; a:f32[4]. let\n'
            '    b:f32[] = jit[\n'
            '      name=nanmean\n'
            '      jaxpr={ lambda ; a:f32[4]. let\n'
            '          c:bool[4] = ne a a\n'
            '          d:bool[4] = not c\n'
            '          e:i32[4] = convert_element_type[new_dtype=int32 weak_type=False] d\n'
            '          f:f32[4] = convert_element_type[new_dtype=float32 weak_type=False] e\n'
            '          g:f32[] = reduce_sum[axes=(0,) out_sharding=None] f\n'
            '          h:f32[] = jit[\n'
            '            name=nansum\n'
            '            jaxpr={ lambda ; a:f32[4]. let\n'
            '                i:bool[4] = ne a a\n'
            '                j:f32[4] = jit[\n'
            '                  name=_where\n'
            '                  jaxpr={ lambda ; i:bool[4] k:f32[] a:f32[4]. let\n'
            '                      l:f32[4] = broadcast_in_dim k\n'
            '                      j:f32[4] = select_n i a l\n'
            '                    in (j,) }\n'
            '                ] i 0.0:f32[] a\n'
            '                h:f32[] = reduce_sum[axes=(0,) out_sharding=None] j\n'
            '              in (h,) }\n'
            '          ] a\n'
            '          b:f32[] = div h g\n'
            '        in (b,) }\n'
            '    ] a\n'
            '  in (b,) }',
 'nanmean_axis0': '{ lambda ; a:f32[2,3]. let\n'
                  '    b:f32[3] = jit[\n'
                  '      name=nanmean\n'
                  '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                  '          c:bool[2,3] = ne a a\n'
                  '          d:bool[2,3] = not c\n'
                  '          e:i32[2,3] = convert_element_type[new_dtype=int32 weak_type=False] d\n'
                  '          f:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] e\n'
                  '          g:f32[3] = reduce_sum[axes=(0,) out_sharding=None] f\n'
                  '          h:f32[3] = jit[\n'
                  '            name=nansum\n'
                  '            jaxpr={ lambda ; a:f32[2,3]. let\n'
                  '                i:bool[2,3] = ne a a\n'
                  '                j:f32[2,3] = jit[\n'
                  '                  name=_where\n'
                  '                  jaxpr={ lambda ; i:bool[2,3] k:f32[] a:f32[2,3]. let\n'
                  '                      l:f32[2,3] = broadcast_in_dim k\n'
                  '                      j:f32[2,3] = select_n i a l\n'
                  '                    in (j,) }\n'
                  '                ] i 0.0:f32[] a\n'
                  '                h:f32[3] = reduce_sum[axes=(0,) out_sharding=None] j\n'
                  '              in (h,) }\n'
                  '          ] a\n'
                  '          b:f32[3] = div h g\n'
                  '        in (b,) }\n'
                  '    ] a\n'
                  '  in (b,) }',
 'nanmean_int': '{ lambda ; a:i32[3]. let\n'
                '    b:f32[] = jit[\n'
                '      name=nanmean\n'
                '      jaxpr={ lambda ; a:i32[3]. let\n'
                '          c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
                '          d:f32[] = reduce_sum[axes=(0,) out_sharding=None] c\n'
                '          b:f32[] = div d 3.0:f32[]\n'
                '        in (b,) }\n'
                '    ] a\n'
                '  in (b,) }',
 'nansum': '{ lambda ; a:f32[4]. let\n'
           '    b:f32[] = jit[\n'
           '      name=nansum\n'
           '      jaxpr={ lambda ; a:f32[4]. let\n'
           '          c:bool[4] = ne a a\n'
           '          d:f32[4] = jit[\n'
           '            name=_where\n'
           '            jaxpr={ lambda ; c:bool[4] e:f32[] a:f32[4]. let\n'
           '                f:f32[4] = broadcast_in_dim e\n'
           '                d:f32[4] = select_n c a f\n'
           '              in (d,) }\n'
           '          ] c 0.0:f32[] a\n'
           '          b:f32[] = reduce_sum[axes=(0,) out_sharding=None] d\n'
           '        in (b,) }\n'
           '    ] a\n'
           '  in (b,) }',
 'nansum_axis_keep': '{ lambda ; a:f32[2,3]. let\n'
                     '    b:f32[2,1] = jit[\n'
                     '      name=nansum\n'
                     '      jaxpr={ lambda ; a:f32[2,3]. let\n'
                     '          c:bool[2,3] = ne a a\n'
                     '          d:f32[2,3] = jit[\n'
                     '            name=_where\n'
                     '            jaxpr={ lambda ; c:bool[2,3] e:f32[] a:f32[2,3]. let\n'
                     '                f:f32[2,3] = broadcast_in_dim e\n'
                     '                d:f32[2,3] = select_n c a f\n'
                     '              in (d,) }\n'
                     '          ] c 0.0:f32[] a\n'
                     '          g:f32[2] = reduce_sum[axes=(1,) out_sharding=None] d\n'
                     '          b:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g\n'
                     '        in (b,) }\n'
                     '    ] a\n'
                     '  in (b,) }',
 'nansum_int': '{ lambda ; a:i32[3]. let\n'
               '    b:i32[] = jit[\n'
               '      name=nansum\n'
               '      jaxpr={ lambda ; a:i32[3]. let\n'
               '          b:i32[] = reduce_sum[axes=(0,) out_sharding=None] a\n'
               '        in (b,) }\n'
               '    ] a\n'
               '  in (b,) }'}
NAN_VALUES = {'nanmean': 3.3333332538604736,
 'nanmean_all_nan_col': [1.0, np.nan, 4.5],
 'nanmean_axis1_keep': [[2.0], [6.0]],
 'nanmean_int': 1.5,
 'nanmean_jit': 3.3333332538604736,
 'nanmean_where': [1.0, 6.0],
 'nansum': 10.0,
 'nansum_axis0': [1.0, 0.0, 9.0],
 'nansum_grad': [[2.0, 0.0, 6.0], [0.0, 0.0, 12.0]]}


@pytest.mark.parametrize("name", sorted(NAN_TEXTS))
def test_nan_text_as_jax(name):
    got = nan_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == NAN_TEXTS[name]


def test_nan_values_as_jax():
    got = nan_values(jax, jnp, lax)
    assert sorted(got) == sorted(NAN_VALUES)
    for k, want in NAN_VALUES.items():
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=1e-6, err_msg=k)


# ---- ``gelu(approximate=False)``'s final ``copy`` (JAX's jnp.array of the result) ----

def gelu_texts(jax, jnp, lax):
    c = {}
    c["gelu_exact"] = lambda: jax.make_jaxpr(lambda v: jax.nn.gelu(v, approximate=False))(jnp.arange(4.))
    c["gelu_exact_int"] = lambda: jax.make_jaxpr(lambda v: jax.nn.gelu(v, approximate=False))(jnp.arange(3))
    c["erfc_grad_ops"] = lambda: " ".join(e.primitive.name for e in jax.make_jaxpr(jax.grad(lax.erfc))(1.).eqns)
    c["erf_grad_ops"] = lambda: " ".join(e.primitive.name for e in jax.make_jaxpr(jax.grad(lax.erf))(1.).eqns)
    return c


def gelu_values(jax, jnp, lax):
    v = jnp.linspace(-3., 3., 7)
    out = {}
    out["gelu_exact"] = jax.nn.gelu(v, approximate=False).tolist()
    out["gelu_exact_jit"] = jax.jit(lambda v: jax.nn.gelu(v, approximate=False))(v).tolist()
    out["gelu_exact_grad"] = jax.vmap(jax.grad(lambda v: jax.nn.gelu(v, approximate=False)))(v).tolist()
    out["erf_inv_grad"] = jax.vmap(jax.grad(lax.erf_inv))(v / 4).tolist()
    return out


GELU_TEXTS = {'erf_grad_ops': 'erf square neg exp mul mul',
 'erfc_grad_ops': 'erfc square neg exp mul mul',
 'gelu_exact': '{ lambda ; a:f32[4]. let\n'
               '    b:f32[4] = mul 0.5:f32[] a\n'
               '    c:f32[4] = neg a\n'
               '    d:f32[4] = mul c 0.7071067690849304:f32[]\n'
               '    e:f32[4] = erfc d\n'
               '    f:f32[4] = mul b e\n'
               '    g:f32[4] = copy f\n'
               '  in (g,) }',
 'gelu_exact_int': '{ lambda ; a:i32[3]. let\n'
                   '    b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a\n'
                   '    c:f32[3] = mul 0.5:f32[] b\n'
                   '    d:f32[3] = neg b\n'
                   '    e:f32[3] = mul d 0.7071067690849304:f32[]\n'
                   '    f:f32[3] = erfc e\n'
                   '    g:f32[3] = mul c f\n'
                   '    h:f32[3] = copy g\n'
                   '  in (h,) }'}
GELU_VALUES = {'erf_inv_grad': [1.7174997329711914,
                  1.1125849485397339,
                  0.9323782920837402,
                  0.8862269520759583,
                  0.9323782920837402,
                  1.1125849485397339,
                  1.7174997329711914],
 'gelu_exact': [-0.0040496960282325745,
                -0.045500267297029495,
                -0.1586552858352661,
                0.0,
                0.8413447141647339,
                1.9544997215270996,
                2.995950222015381],
 'gelu_exact_grad': [-0.011945651844143867,
                     -0.08523181825876236,
                     -0.08331544697284698,
                     0.5,
                     1.0833154916763306,
                     1.0852317810058594,
                     1.0119456052780151],
 'gelu_exact_jit': [-0.0040496960282325745,
                    -0.045500267297029495,
                    -0.1586552858352661,
                    0.0,
                    0.8413447141647339,
                    1.9544997215270996,
                    2.995950222015381]}


@pytest.mark.parametrize("name", sorted(GELU_TEXTS))
def test_gelu_text_as_jax(name):
    got = gelu_texts(jax, jnp, lax)[name]
    try:
        got = str(got())
    except Exception as e:  # noqa: BLE001 - the recorded text is the error's
        got = f"{type(e).__name__}: {e}"
    assert got == GELU_TEXTS[name]


def test_gelu_values_as_jax():
    got = gelu_values(jax, jnp, lax)
    assert sorted(got) == sorted(GELU_VALUES)
    for k, want in GELU_VALUES.items():
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=2e-6,
                                   atol=1e-7, err_msg=k)


# ---- ``jax.nn.logsumexp`` subtracts the kept-dims max (``f32[1]``, ``f32[3,1]``) directly ----

def lse_texts(jax, jnp, lax):
    x = jnp.ones((3, 4))
    c = {}
    c["lse_all"] = lambda: jax.make_jaxpr(jax.nn.logsumexp)(jnp.arange(4.))
    c["lse_axis1"] = lambda: jax.make_jaxpr(lambda x: jax.nn.logsumexp(x, axis=1))(x)
    return c


def lse_values(jax, jnp, lax):
    x = jnp.arange(12.).reshape(3, 4) / 3
    out = {}
    out["axis1"] = jax.nn.logsumexp(x, axis=1).tolist()
    out["grad_axis0"] = jax.grad(lambda x: jax.nn.logsumexp(x, axis=0).sum())(x).tolist()
    out["jit_grad_b"] = jax.jit(jax.grad(lambda x: jax.nn.logsumexp(x, axis=(0, 1), b=x)))(x).tolist()
    out["vmap"] = jax.vmap(jax.nn.logsumexp)(x).tolist()
    out["scalar"] = jax.nn.logsumexp(3.).tolist()
    out["keepdims"] = jax.nn.logsumexp(x, axis=0, keepdims=True).tolist()
    return out


LSE_TEXTS = {'lse_all': '{ lambda ; a:f32[4]. let\n'
            '    b:f32[] = reduce_max[axes=(0,)] a\n'
            '    c:f32[] = max -inf:f32[] b\n'
            '    d:bool[] = is_finite c\n'
            '    e:f32[] = select_n d 0.0:f32[] c\n'
            '    f:f32[] = stop_gradient e\n'
            '    g:f32[1] = broadcast_in_dim f\n'
            '    h:f32[4] = sub a g\n'
            '    i:f32[4] = exp h\n'
            '    j:f32[] = reduce_sum[axes=(0,) out_sharding=None] i\n'
            '    _:f32[] = sign j\n'
            '    k:f32[] = abs j\n'
            '    l:f32[] = log k\n'
            '    m:f32[] = add l f\n'
            '  in (m,) }',
 'lse_axis1': '{ lambda ; a:f32[3,4]. let\n'
              '    b:f32[3] = reduce_max[axes=(1,)] a\n'
              '    c:f32[3] = max -inf:f32[] b\n'
              '    d:bool[3] = is_finite c\n'
              '    e:f32[3] = broadcast_in_dim 0.0:f32[]\n'
              '    f:f32[3] = select_n d e c\n'
              '    g:f32[3] = stop_gradient f\n'
              '    h:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g\n'
              '    i:f32[3,4] = sub a h\n'
              '    j:f32[3,4] = exp i\n'
              '    k:f32[3] = reduce_sum[axes=(1,) out_sharding=None] j\n'
              '    _:f32[3] = sign k\n'
              '    l:f32[3] = abs k\n'
              '    m:f32[3] = log l\n'
              '    n:f32[3] = add m g\n'
              '  in (n,) }'}
LSE_VALUES = {'axis1': [1.9546756744384766, 3.2880091667175293, 4.621342658996582],
 'grad_axis0': [[0.05212246626615524, 0.05212246626615524, 0.05212246626615524, 0.05212246626615524],
                [0.19773533940315247, 0.19773535430431366, 0.19773530960083008, 0.19773535430431366],
                [0.7501422166824341, 0.7501422166824341, 0.7501422166824341, 0.7501422166824341]],
 'jit_grad_b': [[0.0, 0.004738241899758577, 0.008265937678515911, 0.013843254186213017],
                [0.022539785131812096, 0.035950638353824615, 0.05644479766488075, 0.08752787113189697],
                [0.13437046110630035, 0.20457716286182404, 0.30930304527282715, 0.464872270822525]],
 'keepdims': [[2.9541592597961426, 3.287492513656616, 3.620826005935669, 3.9541592597961426]],
 'scalar': 3.0,
 'vmap': [1.9546756744384766, 3.2880091667175293, 4.621342658996582]}


@pytest.mark.parametrize("name", sorted(LSE_TEXTS))
def test_lse_text_as_jax(name):
    assert str(lse_texts(jax, jnp, lax)[name]()) == LSE_TEXTS[name]


def test_lse_values_as_jax():
    got = lse_values(jax, jnp, lax)
    assert sorted(got) == sorted(LSE_VALUES)
    for k, want in LSE_VALUES.items():
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(want, np.float64), rtol=2e-6,
                                   atol=1e-7, err_msg=k)
