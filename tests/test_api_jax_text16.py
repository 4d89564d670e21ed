"""Issue 18, the sixteenth pass on JAX 0.10.2's printed forms and behaviour: the residuals ``grad`` keeps.
JAX linearizes a ``jit`` into a forward call returning the primal outputs and only the residuals the tangent
jaxpr reads (dead tangent equations, e.g. a max's location mask under ``stop_gradient``, are removed with the
residuals only they read), without re-returning an input or a primal output as a residual; a call whose
outputs are partly used keeps only what those need. Texts recorded from JAX 0.10.2 by running
``residual_fns`` below under JAX; values against NumPy."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

def residual_fns(jax, jnp):
    """name -> (function, args) whose make_jaxpr text is recorded below."""
    x3 = jnp.array([0.5, -1.0, 2.0])
    sq = jax.jit(lambda x: x * x)
    mx = jax.jit(lambda x: jnp.sin(x) * jnp.max(x))
    ex = jax.jit(lambda x: jnp.exp(x))
    two = jax.jit(lambda x: (jnp.exp(x), jnp.exp(x)))
    fw = jax.jit(lambda x, y: (x, x * y, jnp.sin(y)))

    def nested(x):
        return jax.jit(lambda y: jnp.exp(y) + jax.lax.stop_gradient(jnp.max(y)))(x)

    def fw_loss(x, y):
        a, b, c = fw(x, y)
        return (a * b * c).sum()

    def body(c, x):
        return c + jnp.exp(x - jax.lax.stop_gradient(jnp.max(x))).sum(), None

    return dict(
        log_softmax=(jax.grad(lambda x: jax.nn.log_softmax(x).sum()), (x3,)),
        square_input_residual=(jax.grad(lambda x: sq(x).sum()), (x3,)),
        max_jvp_location_mask=(jax.grad(lambda x: mx(x).sum()), (x3,)),
        stop_gradient_nested_jit=(jax.grad(lambda x: jax.jit(nested)(x).sum()), (x3,)),
        jvp_of_jit=(lambda x: jax.jvp(mx, (x,), (x,)), (x3,)),
        scan_body=(jax.grad(lambda x: jax.lax.scan(body, 0.0, x)[0]), (jnp.ones((2, 3)),)),
        forwarded_outputs=(jax.grad(fw_loss, argnums=(0, 1)), (x3, x3)),
        residual_is_output=(jax.grad(lambda x: (two(x)[0] * 2 + two(x)[1]).sum()), (x3,)),
        exp_output_residual=(jax.grad(lambda x: ex(x).sum()), (x3,)),
        linearize_jit=(lambda x: jax.linearize(ex, x)[1](x), (x3,)),
        top_level_stop_gradient=(jax.grad(lambda x: (x - jax.lax.stop_gradient(jnp.max(x))).sum()), (x3,)),
    )


JAX_TEXT = {
    'log_softmax': """\
{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[3] d:f32[1] = jit[
      name=log_softmax
      jaxpr={ lambda ; a:f32[3]. let
          e:f32[] = reduce_max[axes=(0,)] a
          f:f32[] = max -inf:f32[] e
          g:f32[1] = broadcast_in_dim f
          h:f32[1] = stop_gradient g
          i:f32[3] = sub a h
          c:f32[3] = exp i
          j:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
          d:f32[1] = broadcast_in_dim j
          k:f32[1] = log d
          b:f32[3] = sub i k
        in (b, c, d) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    l:f32[3] = broadcast_in_dim 1.0:f32[]
    m:f32[3] = jit[
      name=log_softmax
      jaxpr={ lambda ; c:f32[3] d:f32[1] l:f32[3]. let
          n:f32[3] = neg l
          o:f32[] = reduce_sum[axes=(0,) out_sharding=None] n
          p:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] o
          q:f32[1] = div p d
          r:f32[] = reduce_sum[axes=(0,) out_sharding=None] q
          s:f32[3] = broadcast_in_dim r
          t:f32[3] = mul s c
          m:f32[3] = add_any l t
        in (m,) }
    ] c d l
  in (m,) }""",
    'square_input_residual': """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = mul a a in (b,) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3] c:f32[3]. let
          e:f32[3] = mul a c
          f:f32[3] = mul c a
          d:f32[3] = add_any e f
        in (d,) }
    ] a c
  in (d,) }""",
    'max_jvp_location_mask': """\
{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[3] d:f32[3] e:f32[] f:f32[] g:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let
          g:f32[3] = sin a
          c:f32[3] = cos a
          f:f32[] = reduce_max[axes=(0,)] a
          h:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] f
          i:bool[3] = eq a h
          d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] i
          e:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
          b:f32[3] = mul g f
        in (b, c, d, e, f, g) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    j:f32[3] = broadcast_in_dim 1.0:f32[]
    k:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[3] d:f32[3] e:f32[] f:f32[] g:f32[3] j:f32[3]. let
          l:f32[3] = mul g j
          m:f32[] = reduce_sum[axes=(0,) out_sharding=None] l
          n:f32[3] = mul j f
          o:f32[] = div m e
          p:f32[3] = broadcast_in_dim o
          q:f32[3] = mul p d
          r:f32[3] = mul n c
          k:f32[3] = add_any q r
        in (k,) }
    ] c d e f g j
  in (k,) }""",
    'stop_gradient_nested_jit': """\
{ lambda ; a:f32[3]. let
    b:f32[3] c:f32[3] = jit[
      name=nested
      jaxpr={ lambda ; a:f32[3]. let
          b:f32[3] c:f32[3] = jit[
            name=<lambda>
            jaxpr={ lambda ; a:f32[3]. let
                c:f32[3] = exp a
                d:f32[] = reduce_max[axes=(0,)] a
                e:f32[] = stop_gradient d
                b:f32[3] = add c e
              in (b, c) }
          ] a
        in (b, c) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f32[3] = jit[
      name=nested
      jaxpr={ lambda ; c:f32[3] f:f32[3]. let
          g:f32[3] = jit[
            name=<lambda>
            jaxpr={ lambda ; c:f32[3] f:f32[3]. let g:f32[3] = mul f c in (g,) }
          ] c f
        in (g,) }
    ] c f
  in (g,) }""",
    'jvp_of_jit': """\
let lambda = { lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = sin a
    d:f32[3] = cos a
    e:f32[3] = mul b d
    f:f32[] = reduce_max[axes=(0,)] a
    g:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] f
    h:bool[3] = eq a g
    i:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] h
    j:f32[] = reduce_sum[axes=(0,) out_sharding=None] i
    k:f32[3] = mul b i
    l:f32[] = reduce_sum[axes=(0,) out_sharding=None] k
    m:f32[] = div l j
    n:f32[3] = mul c f
    o:f32[3] = mul e f
    p:f32[3] = mul c m
    q:f32[3] = add_any o p
  in (n, q) } in
{ lambda ; r:f32[3]. let
    s:f32[3] t:f32[3] = jit[name=<lambda> jaxpr=lambda] r r
  in (s, t) }""",
    'scan_body': """\
{ lambda ; a:f32[2,3]. let
    _:f32[] b:f32[2,3] = scan[
      jaxpr={ lambda ; c:f32[] d:f32[3]. let
          e:f32[] = reduce_max[axes=(0,)] d
          f:f32[] = stop_gradient e
          g:f32[3] = sub d f
          h:f32[3] = exp g
          i:f32[] = reduce_sum[axes=(0,) out_sharding=None] h
          j:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          k:f32[] = add j i
        in (k, h) }
      length=2
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
    _:f32[] l:f32[2,3] = scan[
      jaxpr={ lambda ; m:f32[] n:f32[3]. let
          o:f32[3] = broadcast_in_dim m
          p:f32[3] = mul o n
        in (m, p) }
      length=2
      num_carry=1
      num_consts=0
      reverse=True
      unroll=1
    ] 1.0:f32[] b
  in (l,) }""",
    'forwarded_outputs': """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] d:f32[3] e:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3] b:f32[3]. let
          c:f32[3] = mul a b
          d:f32[3] = sin b
          e:f32[3] = cos b
        in (c, d, e) }
    ] a b
    f:f32[3] = mul a c
    g:f32[3] = mul f d
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    h:f32[3] = broadcast_in_dim 1.0:f32[]
    i:f32[3] = mul f h
    j:f32[3] = mul h d
    k:f32[3] = mul a j
    l:f32[3] = mul j c
    m:f32[3] n:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] a:f32[3] e:f32[3] l:f32[3] k:f32[3] i:f32[3]. let
          o:f32[3] = mul i e
          p:f32[3] = mul a k
          n:f32[3] = add_any o p
          q:f32[3] = mul k b
          m:f32[3] = add_any l q
        in (m, n) }
    ] b a e l k i
  in (m, n) }""",
    'residual_is_output': """\
let lambda = { lambda ; a:f32[3]. let
    b:f32[3] = exp a
    c:f32[3] = exp a
  in (b, c) } in
{ lambda ; d:f32[3]. let
    e:f32[3] _:f32[3] = jit[name=<lambda> jaxpr=lambda] d
    f:f32[3] = mul e 2.0:f32[]
    _:f32[3] g:f32[3] = jit[name=<lambda> jaxpr=lambda] d
    h:f32[3] = add f g
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] h
    i:f32[3] = broadcast_in_dim 1.0:f32[]
    j:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; g:f32[3] i:f32[3]. let j:f32[3] = mul i g in (j,) }
    ] g i
    k:f32[3] = mul i 2.0:f32[]
    l:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; e:f32[3] k:f32[3]. let l:f32[3] = mul k e in (l,) }
    ] e k
    m:f32[3] = add_any j l
  in (m,) }""",
    'exp_output_residual': """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = exp a in (b,) }
    ] a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    c:f32[3] = broadcast_in_dim 1.0:f32[]
    d:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] c:f32[3]. let d:f32[3] = mul c b in (d,) }
    ] b c
  in (d,) }""",
    'linearize_jit': """\
{ lambda ; a:f32[3]. let
    b:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = exp a in (b,) }
    ] a
    c:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; b:f32[3] a:f32[3]. let c:f32[3] = mul a b in (c,) }
    ] b a
  in (c,) }""",
    'top_level_stop_gradient': """\
{ lambda ; a:f32[3]. let
    b:f32[] = reduce_max[axes=(0,)] a
    c:f32[1] = reshape[dimensions=None new_sizes=(1,) sharding=None] b
    d:bool[3] = eq a c
    e:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] d
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    f:f32[] = stop_gradient b
    g:f32[3] = sub a f
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
    h:f32[3] = broadcast_in_dim 1.0:f32[]
  in (h,) }""",
}


@pytest.mark.parametrize("name", sorted(JAX_TEXT))
def test_residual_text_as_jax(name):
    fn, args = residual_fns(jax, jnp)[name]
    assert str(jax.make_jaxpr(fn)(*args)) == JAX_TEXT[name]


def _log_softmax_grad(x):
    # d/dx sum(log_softmax(x)) = 1 - n * softmax(x)
    e = np.exp(x - x.max())
    return 1.0 - x.size * e / e.sum()


def test_values_match_numpy():
    x = np.array([0.5, -1.0, 2.0], np.float32)
    fns = residual_fns(jax, jnp)
    np.testing.assert_allclose(fns["log_softmax"][0](x), _log_softmax_grad(x.astype(np.float64)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(fns["square_input_residual"][0](x), 2 * x, rtol=1e-6)
    # d/dx sum(sin(x) * max(x)): cos(x) * max + (sum of sin) at the argmax
    want = np.cos(x) * x.max()
    want[np.argmax(x)] += np.sin(x).sum()
    np.testing.assert_allclose(fns["max_jvp_location_mask"][0](x), want, rtol=1e-5)
    np.testing.assert_allclose(fns["stop_gradient_nested_jit"][0](x), np.exp(x), rtol=1e-6)
    gx, gy = fns["forwarded_outputs"][0](x, x)
    # sum(x * x*y * sin y): d/dx = 2 x y sin y, d/dy = x^2 (sin y + y cos y)
    np.testing.assert_allclose(gx, 2 * x * x * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(gy, x * x * (np.sin(x) + x * np.cos(x)), rtol=1e-5)
    np.testing.assert_allclose(fns["residual_is_output"][0](x), 3 * np.exp(x), rtol=1e-6)
    xs = np.array([[0.1, 0.7, -0.3], [1.0, 2.0, 0.5]], np.float32)
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    np.testing.assert_allclose(fns["scan_body"][0](xs), e, rtol=1e-6)


def test_vjp_keeps_only_the_residuals_the_backward_pass_reads():
    x = jnp.array([0.5, -1.0, 2.0])
    f = jax.jit(jax.nn.log_softmax)
    # the forward call returns the output and 2 residuals (exp of the shifted input, the sum), not the max's
    # location mask/count that only a stop_gradient'ed tangent read
    closed = jax.make_jaxpr(lambda x: jax.vjp(f, x)[1](jnp.ones(3)))(x)
    assert len(closed.eqns[0].outvars) == 3
    out, f_vjp = jax.vjp(f, x)
    (ct,) = f_vjp(jnp.ones(3))
    np.testing.assert_allclose(ct, _log_softmax_grad(np.asarray(x, np.float64)), rtol=1e-5, atol=1e-6)
    # the residuals a plain (unjitted) vjp holds: only what the linear jaxpr reads
    _, lin = jax.linearize(lambda x: x - jax.lax.stop_gradient(jnp.max(x)), x)
    np.testing.assert_allclose(lin(jnp.ones(3)), np.ones(3))


def test_debug_print_in_dead_tangent_code_still_runs(capsys):
    # an effectful equation is never removed, even where nothing reads its (absent) outputs
    @jax.jit
    def f(x):
        jax.debug.print("x={x}", x=x)
        return jnp.sin(x)
    g = jax.grad(lambda x: f(x).sum())(jnp.array([0.0, 1.0]))
    jax.effects_barrier()
    np.testing.assert_allclose(g, np.cos([0.0, 1.0]), rtol=1e-6)
    assert "x=[0. 1.]" in capsys.readouterr().out


def wide_fns(jax, jnp, lax):
    """Equations with many results: JAX fills the binders as it fills the operands (a line breaks once it
    has reached 80 columns, continuing 2 past the equation)."""
    x = jnp.ones(3)
    f = jax.jit(lambda x: tuple(jnp.sin(x) * i for i in range(12)))

    def body(c, _):
        return tuple(ci * 2.0 for ci in c), None
    g = jax.jit(lambda x: sum(jnp.tanh(x * i) for i in range(1, 7)))
    return [
        (f, x),
        (lambda x: jax.jit(f)(x), x),
        (lambda x: lax.scan(body, tuple(x * i for i in range(10)), None, length=3), x),
        (lambda x: lax.cond(x.sum() > 0, lambda x: tuple(x * i for i in range(11)),
                            lambda x: tuple(x + i for i in range(11)), x), x),
        (jax.grad(lambda x: g(x).sum()), x),
    ]


WIDE_TEXTS = [
    """\
let lambda = { lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = mul b 0.0:f32[]
    d:f32[3] = sin a
    e:f32[3] = mul d 1.0:f32[]
    f:f32[3] = sin a
    g:f32[3] = mul f 2.0:f32[]
    h:f32[3] = sin a
    i:f32[3] = mul h 3.0:f32[]
    j:f32[3] = sin a
    k:f32[3] = mul j 4.0:f32[]
    l:f32[3] = sin a
    m:f32[3] = mul l 5.0:f32[]
    n:f32[3] = sin a
    o:f32[3] = mul n 6.0:f32[]
    p:f32[3] = sin a
    q:f32[3] = mul p 7.0:f32[]
    r:f32[3] = sin a
    s:f32[3] = mul r 8.0:f32[]
    t:f32[3] = sin a
    u:f32[3] = mul t 9.0:f32[]
    v:f32[3] = sin a
    w:f32[3] = mul v 10.0:f32[]
    x:f32[3] = sin a
    y:f32[3] = mul x 11.0:f32[]
  in (c, e, g, i, k, m, o, q, s, u, w, y) } in
{ lambda ; z:f32[3]. let
    ba:f32[3] bb:f32[3] bc:f32[3] bd:f32[3] be:f32[3] bf:f32[3] bg:f32[3] bh:f32[3]
      bi:f32[3] bj:f32[3] bk:f32[3] bl:f32[3] = jit[name=<lambda> jaxpr=lambda] z
  in (ba, bb, bc, bd, be, bf, bg, bh, bi, bj, bk, bl) }""",
    """\
let lambda = { lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = mul b 0.0:f32[]
    d:f32[3] = sin a
    e:f32[3] = mul d 1.0:f32[]
    f:f32[3] = sin a
    g:f32[3] = mul f 2.0:f32[]
    h:f32[3] = sin a
    i:f32[3] = mul h 3.0:f32[]
    j:f32[3] = sin a
    k:f32[3] = mul j 4.0:f32[]
    l:f32[3] = sin a
    m:f32[3] = mul l 5.0:f32[]
    n:f32[3] = sin a
    o:f32[3] = mul n 6.0:f32[]
    p:f32[3] = sin a
    q:f32[3] = mul p 7.0:f32[]
    r:f32[3] = sin a
    s:f32[3] = mul r 8.0:f32[]
    t:f32[3] = sin a
    u:f32[3] = mul t 9.0:f32[]
    v:f32[3] = sin a
    w:f32[3] = mul v 10.0:f32[]
    x:f32[3] = sin a
    y:f32[3] = mul x 11.0:f32[]
  in (c, e, g, i, k, m, o, q, s, u, w, y) } in
{ lambda ; z:f32[3]. let
    ba:f32[3] bb:f32[3] bc:f32[3] bd:f32[3] be:f32[3] bf:f32[3] bg:f32[3] bh:f32[3]
      bi:f32[3] bj:f32[3] bk:f32[3] bl:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; z:f32[3]. let
          ba:f32[3] bb:f32[3] bc:f32[3] bd:f32[3] be:f32[3] bf:f32[3] bg:f32[3] bh:f32[3]
            bi:f32[3] bj:f32[3] bk:f32[3] bl:f32[3] = jit[
            name=<lambda>
            jaxpr=lambda
          ] z
        in (ba, bb, bc, bd, be, bf, bg, bh, bi, bj, bk, bl) }
    ] z
  in (ba, bb, bc, bd, be, bf, bg, bh, bi, bj, bk, bl) }""",
    """\
{ lambda ; a:f32[3]. let
    b:f32[3] = mul a 0.0:f32[]
    c:f32[3] = mul a 1.0:f32[]
    d:f32[3] = mul a 2.0:f32[]
    e:f32[3] = mul a 3.0:f32[]
    f:f32[3] = mul a 4.0:f32[]
    g:f32[3] = mul a 5.0:f32[]
    h:f32[3] = mul a 6.0:f32[]
    i:f32[3] = mul a 7.0:f32[]
    j:f32[3] = mul a 8.0:f32[]
    k:f32[3] = mul a 9.0:f32[]
    l:f32[3] m:f32[3] n:f32[3] o:f32[3] p:f32[3] q:f32[3] r:f32[3] s:f32[3] t:f32[3]
      u:f32[3] = scan[
      jaxpr={ lambda ; v:f32[3] w:f32[3] x:f32[3] y:f32[3] z:f32[3] ba:f32[3] bb:f32[3]
          bc:f32[3] bd:f32[3] be:f32[3]. let
          bf:f32[3] = mul v 2.0:f32[]
          bg:f32[3] = mul w 2.0:f32[]
          bh:f32[3] = mul x 2.0:f32[]
          bi:f32[3] = mul y 2.0:f32[]
          bj:f32[3] = mul z 2.0:f32[]
          bk:f32[3] = mul ba 2.0:f32[]
          bl:f32[3] = mul bb 2.0:f32[]
          bm:f32[3] = mul bc 2.0:f32[]
          bn:f32[3] = mul bd 2.0:f32[]
          bo:f32[3] = mul be 2.0:f32[]
        in (bf, bg, bh, bi, bj, bk, bl, bm, bn, bo) }
      length=3
      num_carry=10
      num_consts=0
      reverse=False
      unroll=1
    ] b c d e f g h i j k
  in (l, m, n, o, p, q, r, s, t, u) }""",
    """\
let jaxpr = { lambda ; a:f32[3]. let
    b:f32[3] = add a 0.0:f32[]
    c:f32[3] = add a 1.0:f32[]
    d:f32[3] = add a 2.0:f32[]
    e:f32[3] = add a 3.0:f32[]
    f:f32[3] = add a 4.0:f32[]
    g:f32[3] = add a 5.0:f32[]
    h:f32[3] = add a 6.0:f32[]
    i:f32[3] = add a 7.0:f32[]
    j:f32[3] = add a 8.0:f32[]
    k:f32[3] = add a 9.0:f32[]
    l:f32[3] = add a 10.0:f32[]
  in (b, c, d, e, f, g, h, i, j, k, l) } in
let jaxpr1 = { lambda ; m:f32[3]. let
    n:f32[3] = mul m 0.0:f32[]
    o:f32[3] = mul m 1.0:f32[]
    p:f32[3] = mul m 2.0:f32[]
    q:f32[3] = mul m 3.0:f32[]
    r:f32[3] = mul m 4.0:f32[]
    s:f32[3] = mul m 5.0:f32[]
    t:f32[3] = mul m 6.0:f32[]
    u:f32[3] = mul m 7.0:f32[]
    v:f32[3] = mul m 8.0:f32[]
    w:f32[3] = mul m 9.0:f32[]
    x:f32[3] = mul m 10.0:f32[]
  in (n, o, p, q, r, s, t, u, v, w, x) } in
{ lambda ; y:f32[3]. let
    z:f32[] = reduce_sum[axes=(0,) out_sharding=None] y
    ba:bool[] = gt z 0.0:f32[]
    bb:i32[] = convert_element_type[new_dtype=int32 weak_type=False] ba
    bc:f32[3] bd:f32[3] be:f32[3] bf:f32[3] bg:f32[3] bh:f32[3] bi:f32[3] bj:f32[3]
      bk:f32[3] bl:f32[3] bm:f32[3] = cond[branches=(jaxpr jaxpr1)] bb y
  in (bc, bd, be, bf, bg, bh, bi, bj, bk, bl, bm) }""",
    """\
let lambda = { lambda ; a:f32[3]. let
    b:f32[3] = mul a 1.0:f32[]
    c:f32[3] = tanh b
    d:f32[3] = sub 1.0:f32[] c
    e:f32[3] = add 0.0:f32[] c
    f:f32[3] = mul a 2.0:f32[]
    g:f32[3] = tanh f
    h:f32[3] = sub 1.0:f32[] g
    i:f32[3] = add e g
    j:f32[3] = mul a 3.0:f32[]
    k:f32[3] = tanh j
    l:f32[3] = sub 1.0:f32[] k
    m:f32[3] = add i k
    n:f32[3] = mul a 4.0:f32[]
    o:f32[3] = tanh n
    p:f32[3] = sub 1.0:f32[] o
    q:f32[3] = add m o
    r:f32[3] = mul a 5.0:f32[]
    s:f32[3] = tanh r
    t:f32[3] = sub 1.0:f32[] s
    u:f32[3] = add q s
    v:f32[3] = mul a 6.0:f32[]
    w:f32[3] = tanh v
    x:f32[3] = sub 1.0:f32[] w
    y:f32[3] = add u w
  in (y, c, d, g, h, k, l, o, p, s, t, w, x) } in
let lambda1 = { lambda ; z:f32[3] ba:f32[3] bb:f32[3] bc:f32[3] bd:f32[3] be:f32[3]
    bf:f32[3] bg:f32[3] bh:f32[3] bi:f32[3] bj:f32[3] bk:f32[3] bl:f32[3]. let
    bm:f32[3] = mul bl bk
    bn:f32[3] = mul bm bj
    bo:f32[3] = add_any bm bn
    bp:f32[3] = mul bo 6.0:f32[]
    bq:f32[3] = mul bl bi
    br:f32[3] = mul bq bh
    bs:f32[3] = add_any bq br
    bt:f32[3] = mul bs 5.0:f32[]
    bu:f32[3] = add_any bp bt
    bv:f32[3] = mul bl bg
    bw:f32[3] = mul bv bf
    bx:f32[3] = add_any bv bw
    by:f32[3] = mul bx 4.0:f32[]
    bz:f32[3] = add_any bu by
    ca:f32[3] = mul bl be
    cb:f32[3] = mul ca bd
    cc:f32[3] = add_any ca cb
    cd:f32[3] = mul cc 3.0:f32[]
    ce:f32[3] = add_any bz cd
    cf:f32[3] = mul bl bc
    cg:f32[3] = mul cf bb
    ch:f32[3] = add_any cf cg
    ci:f32[3] = mul ch 2.0:f32[]
    cj:f32[3] = add_any ce ci
    ck:f32[3] = mul bl ba
    cl:f32[3] = mul ck z
    cm:f32[3] = add_any ck cl
    cn:f32[3] = mul cm 1.0:f32[]
    co:f32[3] = add_any cj cn
  in (co,) } in
{ lambda ; cp:f32[3]. let
    cq:f32[3] cr:f32[3] cs:f32[3] ct:f32[3] cu:f32[3] cv:f32[3] cw:f32[3] cx:f32[3]
      cy:f32[3] cz:f32[3] da:f32[3] db:f32[3] dc:f32[3] = jit[
      name=<lambda>
      jaxpr=lambda
    ] cp
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] cq
    dd:f32[3] = broadcast_in_dim 1.0:f32[]
    de:f32[3] = jit[name=<lambda> jaxpr=lambda1] cr cs ct cu cv cw cx cy cz da db
      dc dd
  in (de,) }""",
]


@pytest.mark.parametrize("k", range(len(WIDE_TEXTS)))
def test_many_results_fill_lines_as_jax(k):
    fn, x = wide_fns(jax, jnp, lax)[k]
    assert str(jax.make_jaxpr(fn)(x)) == WIDE_TEXTS[k]
