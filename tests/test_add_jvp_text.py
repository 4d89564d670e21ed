"""The jvp of ``add`` adds two tangents with ``add``, as JAX 0.10.2's rule (its jaxprs print ``add``)."""
import cranax as jax


def test_jvp_of_add_prints_add_as_jax():
    text = str(jax.make_jaxpr(lambda x, y: jax.jvp(lambda a, b: a + b, (x, y), (1.0, 1.0)))(2.0, 3.0))
    # recorded from JAX 0.10.2
    assert text == """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = add a b
    d:f32[] = add 1.0:f32[] 1.0:f32[]
  in (c, d) }"""
    p, t = jax.jvp(lambda a, b: a + b, (2.0, 3.0), (1.0, 0.5))
    assert (float(p), float(t)) == (5.0, 1.5)
