"""What tracing keeps between traces to go faster must never answer for another function, signature or
program: the signatures ``arg_names`` reuses per code object (``partial_eval._signature``) and the memo of which
sub-jaxprs hold effects during one lowering (``print_order.memo``)."""
import functools

import numpy as np

import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from cranax.interpreters import lowering, partial_eval, print_order


def _factory():
    def f(x, y=1.0, *, z=2.0):
        return x
    return f


def test_arg_names_follow_each_functions_defaults():
    """Functions of one code object share the cached signature only where their defaults agree: without a
    default for ``y`` the call ``f(a)`` no longer binds, and the names fall back to ``args[i]`` (JAX's)."""
    a = np.float32(1.0)
    f, g, h = _factory(), _factory(), _factory()
    g.__defaults__ = None      # y now required
    h.__kwdefaults__ = None    # z now required
    for _ in range(2):   # either order, twice: nothing cached answers for the other function
        assert partial_eval.arg_names(g, (a,)) == ("args[0]",)
        assert partial_eval.arg_names(f, (a,)) == ("x",)
        assert partial_eval.arg_names(f, (a, a), {"z": a}) == ("x", "y", "z")
        assert partial_eval.arg_names(h, (a, a), {}) == ("args[0]", "args[1]")
        assert partial_eval.arg_names(h, (a, a), {"z": a}) == ("x", "y", "z")
        assert partial_eval.arg_names(g, (a, {"p": a}),) == ("x", "y['p']")


def test_arg_names_of_wrapped_and_partial_functions():
    """A ``functools.wraps`` wrapper is named by the function it wraps (``inspect.signature``'s rule), a
    lambda of another code object by its own parameters."""
    def inner(p, q):
        return p

    @functools.wraps(inner)
    def outer(*args):
        return inner(*args)

    a = np.float32(1.0)
    assert partial_eval.arg_names(outer, (a, a)) == ("p", "q")
    assert partial_eval.arg_names(lambda u, v: u, (a, a)) == ("u", "v")
    assert partial_eval.arg_names(lambda *xs: xs[0], (a, a)) == ("xs[0]", "xs[1]")


def test_loop_body_error_names_its_argument():
    """A tracer error inside a while body names the body's argument, fresh closures of one code object
    each by its own call (JAX 0.10.2's text ends "... depends on the value of the argument c[1].")."""
    for k in range(2):
        def body(c, k=k):
            if c[1] > k:   # a concrete value of a traced carry: TracerBoolConversionError
                return c
            return c

        try:
            jax.jit(lambda x: lax.while_loop(lambda c: c[0] < 3, body, (0, x)))(1.0)
        except jax.errors.TracerBoolConversionError as e:
            assert ("for while_body. This concrete value was not available in Python because it depends on the "
                    "value of the argument c[1].") in str(e), str(e)
        else:
            raise AssertionError("no error")


def test_print_order_memo_is_scoped_to_one_lowering():
    """The memo lives for one lowering only: a later program (whose jaxprs may reuse ids) is looked at afresh,
    and the prints of each program come out in the order JAX's CPU backend runs them."""
    def quiet(x):
        return lax.fori_loop(0, 3, lambda i, c: jnp.sin(c), x)

    def loud(x):
        jax.debug.print("a {}", x)
        y = jnp.sin(x)
        jax.debug.print("b {}", y)
        return y

    for f in (quiet, loud, quiet):
        closed = jax.make_jaxpr(f)(np.float32(1.0))
        text = lowering.lower_jaxpr(closed)
        assert print_order._memo.holds is None
        assert text == lowering.lower_jaxpr(closed)   # the same wire text without a memo left over
    holds = [e for e in jax.make_jaxpr(loud)(np.float32(1.0)).jaxpr.eqns]
    assert sum(print_order._holds_effect(e) for e in holds) == 2
    out = jax.jit(quiet)(np.float32(1.0))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.sin(np.sin(np.float32(1.0)))), rtol=1e-6)
