"""JAX 0.10.2's jaxpr layout rules that the printer follows (recorded from JAX 0.10.2): a sub-jaxpr met more
than once (the same jaxpr object, e.g. a jitted function called twice) or of more than 10 equations is printed
once, before the jaxpr, as ``let name = ... in`` (named after the calling ``jit``, else ``jaxpr``), and
variable names skip those names; an equation goes on one line when it fits in 80 columns, params broken one
per line otherwise."""
import cranax
import cranax.numpy as jnp
from cranax import ad_checkpoint as adc
from cranax import lax

SHARED_TWICE = """let sin = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = jit[name=sin jaxpr=sin] c
    e:f32[] = jit[name=sin jaxpr=sin] c
    f:f32[] = add d e
  in (f,) }"""

SHARED_TWICE_2 = """let sin = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = jit[name=sin jaxpr=sin] c
    e:f32[] = mul c 2.0:f32[]
    f:f32[] = jit[name=sin jaxpr=sin] e
    g:f32[] = add d f
  in (g,) }"""

BIG_JIT = """let big = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
  in (l,) } in
{ lambda ; m:f32[]. let n:f32[] = jit[name=big jaxpr=big] m in (n,) }"""

BIG_BRANCH = """let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
  in (l,) } in
{ lambda ; m:f32[]. let
    n:bool[] = gt m 0.0:f32[]
    o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] n
    p:f32[] = cond[branches=({ lambda ; q:f32[]. let  in (q,) } jaxpr)] o m
  in (p,) }"""

BIG_REMAT_GRAD = """let jaxpr = { lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = cos a
    e:f32[] = name[name=a] c
    f:f32[] = sin e
    g:f32[] = cos e
    h:f32[] = name[name=b] f
    i:f32[] = cos h
    j:f32[] = mul b 2.0:f32[]
    k:f32[] = mul j i
    l:f32[] = mul k g
    m:f32[] = mul l d
  in (m,) } in
{ lambda ; n:f32[]. let
    o:f32[] = sin n
    p:f32[] = name[name=a] o
    q:f32[] = sin p
    r:f32[] = name[name=b] q
    s:f32[] = sin r
    _:f32[] = mul s 2.0:f32[]
    t:f32[] = remat2[
      differentiated=True
      jaxpr=jaxpr
      policy=None
      prevent_cse=True
    ] n 1.0:f32[]
  in (t,) }"""


def _text(fun, *args):
    return str(cranax.make_jaxpr(fun)(*args))


def big(x):
    for _ in range(11):
        x = jnp.sin(x)
    return x


def test_a_jitted_function_called_twice_is_printed_once():
    f = cranax.jit(jnp.sin)
    assert _text(lambda x: f(x) + f(x), 1.0) == SHARED_TWICE
    assert _text(lambda x: f(x) + f(x * 2), 1.0) == SHARED_TWICE_2


def test_big_sub_jaxprs_are_printed_first():
    assert _text(cranax.jit(big), 1.0) == BIG_JIT
    assert _text(lambda x: lax.cond(x > 0, big, lambda x: x, x), 1.0) == BIG_BRANCH


def test_big_remat_body_in_grad():
    def g(x):
        a = adc.checkpoint_name(jnp.sin(x), "a")
        b = adc.checkpoint_name(jnp.sin(a), "b")
        return jnp.sin(b) * 2.0
    assert _text(cranax.grad(cranax.checkpoint(g)), 0.5) == BIG_REMAT_GRAD
