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
