"""jnp.isclose / jnp.allclose as JAX 0.10.2's: NumPy's rule that an infinite ``b`` is close only to itself
(cranax had called 1.0 close to inf), and one jitted call each with ``equal_nan`` static. The expected text
was printed by JAX 0.10.2 running the statements of `_lines` with jax in place of cranax."""
import numpy as np

import cranax as jax
import cranax.numpy as jnp

JAX_TEXT = 'let isclose = { lambda ; a:f32[3] b:f32[]. let\n    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n    d:bool[3] = ne a a\n    e:bool[] = ne c c\n    f:bool[3] = and d e\n    g:bool[] = is_finite c\n    h:f32[3] = sub a c\n    i:f32[3] = abs h\n    j:f32[] = abs c\n    k:f32[] = mul 9.999999747378752e-06:f32[] j\n    l:f32[] = add 9.99999993922529e-09:f32[] k\n    m:bool[3] = le i l\n    n:bool[3] = eq a c\n    o:bool[3] = and g m\n    p:bool[3] = or n o\n  in (p,) } in\n{ lambda ; q:f32[3]. let\n    r:bool[3] = jit[name=isclose jaxpr=isclose] q 1.0:f32[]\n  in (r,) }\nlet isclose = { lambda ; a:f32[3] b:f32[3] c:f32[] d:f32[]. let\n    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n    f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n    g:bool[3] = ne a a\n    h:bool[3] = ne b b\n    i:bool[3] = and g h\n    j:bool[3] = is_finite b\n    k:f32[3] = sub a b\n    l:f32[3] = abs k\n    m:f32[3] = abs b\n    n:f32[3] = mul e m\n    o:f32[3] = add f n\n    p:bool[3] = le l o\n    q:bool[3] = eq a b\n    r:bool[3] = and j p\n    s:bool[3] = or q r\n    t:bool[3] = or s i\n  in (t,) } in\n{ lambda ; u:f32[3] v:f32[3]. let\n    w:bool[] = jit[\n      name=allclose\n      jaxpr={ lambda ; u:f32[3] v:f32[3]. let\n          x:bool[3] = jit[name=isclose jaxpr=isclose] u v 1e-05:f32[] 1e-08:f32[]\n          w:bool[] = reduce_and[axes=(0,)] x\n        in (w,) }\n    ] u v\n  in (w,) }\nArray(False, dtype=bool) Array(False, dtype=bool)\nArray([ True, False, False, False], dtype=bool)\nArray([ True, False,  True, False], dtype=bool)\nArray(True, dtype=bool) Array([ True, False], dtype=bool)\n'


def _lines():
    v = jnp.arange(3.)
    yield str(jax.make_jaxpr(lambda v: jnp.isclose(v, 1.))(v))
    yield str(jax.make_jaxpr(lambda v, w: jnp.allclose(v, w, equal_nan=True))(v, v))
    yield f"{jnp.isclose(1., jnp.inf)!r} {jnp.allclose(jnp.array([1., 2.]), jnp.array([1., jnp.inf]))!r}"
    a, b = jnp.array([np.inf, -np.inf, np.nan, 1.0]), jnp.array([np.inf, np.inf, np.nan, np.inf])
    yield repr(jnp.isclose(a, b))
    yield repr(jnp.isclose(a, b, equal_nan=True))
    yield f"{jnp.isclose(3, 3)!r} {jnp.isclose(jnp.array([1 + 1j, 2]), 1 + 1j)!r}"


def test_isclose_allclose_print_and_compute_as_jax():
    assert "\n".join(_lines()) + "\n" == JAX_TEXT


def test_isclose_matches_numpy_on_infinities_and_nans():
    a = np.array([np.inf, -np.inf, np.nan, 1.0, 1.0, 1e6, 0.0], np.float32)
    b = np.array([np.inf, np.inf, np.nan, np.inf, 1.0 + 1e-6, 1.00001e6, 1e-9], np.float32)
    for equal_nan in (False, True):
        np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b, equal_nan=equal_nan)),
                                      np.isclose(a, b, equal_nan=equal_nan))
        assert bool(jnp.allclose(a, b, equal_nan=equal_nan)) == np.allclose(a, b, equal_nan=equal_nan)


# An operand passed twice to a jit: JAX names the inner jaxpr's second input afresh (cranax had printed
# ``{ lambda ; t:f32[3] t:f32[3]. ...}``); a shared jaxpr printed at the top keeps its own names.
JAX_TEXT_REPEATED_OPERAND = 'let isclose = { lambda ; a:f32[3] b:f32[3] c:f32[] d:f32[]. let\n    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n    f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n    g:bool[3] = ne a a\n    h:bool[3] = ne b b\n    i:bool[3] = and g h\n    j:bool[3] = is_finite b\n    k:f32[3] = sub a b\n    l:f32[3] = abs k\n    m:f32[3] = abs b\n    n:f32[3] = mul e m\n    o:f32[3] = add f n\n    p:bool[3] = le l o\n    q:bool[3] = eq a b\n    r:bool[3] = and j p\n    s:bool[3] = or q r\n  in (s,) } in\n{ lambda ; t:f32[3]. let\n    u:bool[] = jit[\n      name=allclose\n      jaxpr={ lambda ; t:f32[3] v:f32[3]. let\n          w:bool[3] = jit[name=isclose jaxpr=isclose] t v 1e-05:f32[] 1e-08:f32[]\n          u:bool[] = reduce_and[axes=(0,)] w\n        in (u,) }\n    ] t t\n  in (u,) }\nlet lambda = { lambda ; a:f32[3] b:f32[3] c:f32[3]. let\n    d:f32[3] = mul a b\n    e:f32[3] = add d c\n  in (e,) } in\n{ lambda ; f:f32[3] g:f32[3]. let\n    h:f32[3] = jit[name=<lambda> jaxpr=lambda] f g f\n    i:f32[3] = jit[name=<lambda> jaxpr=lambda] g g g\n    j:f32[3] = add h i\n  in (j,) }\n'


def test_operand_passed_twice_to_a_jit_prints_as_jax():
    v = jnp.arange(3.)
    f = jax.jit(lambda a, b, c: a * b + c)
    got = (str(jax.make_jaxpr(lambda v: jnp.allclose(v, v))(v)) + "\n"
           + str(jax.make_jaxpr(lambda x, y: f(x, y, x) + f(y, y, y))(v, v)) + "\n")
    assert got == JAX_TEXT_REPEATED_OPERAND
