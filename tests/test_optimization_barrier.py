"""``lax.optimization_barrier``: one equation in jaxprs (with JAX's jvp, transpose and batching rules), arrays
out of any leaves, and, as in JAX 0.10.2 on the CPU, no change in bits: XLA's LLVM still contracts
``barrier(a * b) + c`` into one multiply-add, and so does cranax (``rust/opt/barrier.rs`` runs before
``contract``). Texts and bits recorded from JAX 0.10.2 (CPU) running the same code."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from test_fma_contraction import JAX_BITS, a, b, c, d

B = lax.optimization_barrier

# JAX 0.10.2's bits (float32 as uint32) for the same inputs; the first four round once (as a*b+c does)
BARRIER_BITS = {
    "bar(a*b)+c": JAX_BITS["a*b+c"],
    "bar(a)*b+c": JAX_BITS["a*b+c"],
    "a*b+bar(c)": JAX_BITS["a*b+c"],
    "bar((a*b,c))": JAX_BITS["a*b+c"],
    "bar(a*b+c)": JAX_BITS["a*b+c"],
    "c-bar(a*b)": [3221389366, 1069485155, 1065506183, 3161527718, 1078154844, 3217547460],
    "bar(a*b)+c*d": [1006877981, 3207604917, 1068886056, 1066354132, 3223729542, 1065661107],
    "loop": [3215002791, 1072617970, 1076080745, 1067826034, 3207129170, 1050262400],
}

CASES = {
    "bar(a*b)+c": lambda a, b, c, d: B(a * b) + c,
    "bar(a)*b+c": lambda a, b, c, d: B(a) * b + c,
    "a*b+bar(c)": lambda a, b, c, d: a * b + B(c),
    "bar((a*b,c))": lambda a, b, c, d: (lambda t: t[0] + t[1])(B((a * b, c))),
    "bar(a*b+c)": lambda a, b, c, d: B(a * b + c),
    "c-bar(a*b)": lambda a, b, c, d: c - B(a * b),
    "bar(a*b)+c*d": lambda a, b, c, d: B(a * b) + c * d,
    "loop": lambda a, b, c, d: lax.fori_loop(0, 3, lambda i, x: B(x * b) + c, a),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_barrier_changes_no_bits_as_xla(name):
    out = np.asarray(jax.jit(CASES[name])(a, b, c, d))
    assert out.view(np.uint32).tolist() == BARRIER_BITS[name]
    # the one-rounding value: a barrier between the product and the add does not keep it apart
    if BARRIER_BITS[name] == JAX_BITS["a*b+c"]:
        assert out.tolist() == (a.astype(np.float64) * b + c).astype(np.float32).tolist() != (a * b + c).tolist()


def test_jaxprs_show_the_barrier():
    assert str(jax.make_jaxpr(lambda x, y: B((x * y, x)))(1., 2.)) == (
        "{ lambda ; a:f32[] b:f32[]. let\n    c:f32[] = mul a b\n    d:f32[] e:f32[] = optimization_barrier c a\n"
        "  in (d, e) }")
    assert str(jax.make_jaxpr(lambda x: B(x) + 1)(1.)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = optimization_barrier a\n    c:f32[] = add b 1.0:f32[]\n  in (c,) }")
    # grad: the primal and the cotangent each pass their own barrier (JAX's jvp and transpose rules)
    assert str(jax.make_jaxpr(jax.grad(lambda x: B(x * x)))(3.)) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = mul a a\n    _:f32[] = optimization_barrier b\n"
        "    c:f32[] = optimization_barrier 1.0:f32[]\n    d:f32[] = mul a c\n    e:f32[] = mul c a\n"
        "    f:f32[] = add_any d e\n  in (f,) }")
    assert float(jax.grad(lambda x: B(x * x).sum())(3.)) == 6.0
    assert str(jax.make_jaxpr(jax.vmap(lambda x: B(x * 2)))(jnp.arange(3.))) == (
        "{ lambda ; a:f32[3]. let\n    b:f32[3] = mul a 2.0:f32[]\n    c:f32[3] = optimization_barrier b\n"
        "  in (c,) }")
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda x: B(x * 2))(jnp.arange(3.))), [0., 2., 4.])


def test_leaves_become_arrays_and_errors():
    one = B(1)
    assert isinstance(one, jax.Array) and one.dtype == np.int32 and one.weak_type and int(one) == 1
    pair = B([1, 2.5])
    assert type(pair) is list and [x.dtype for x in pair] == [np.int32, np.float32] and pair[1].weak_type
    np.testing.assert_array_equal(np.asarray(B(jnp.ones(2))), [1.0, 1.0])
    assert B(()) == ()
    with pytest.raises(TypeError, match=r"^Error interpreting argument to optimization_barrier as a JAX value\. "
                       r"The problematic value is of type <class 'str'> and was passed to optimization_barrier "
                       r"at position 0\.$"):
        B("a")


def test_complex_keys_and_bools_pass_through_jit():
    z = jnp.array([1 + 2j, 3 - 1j], jnp.complex64)
    out, re = jax.jit(lambda z: B((z, z.real)))(z)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(z))
    np.testing.assert_array_equal(np.asarray(re), [1.0, 3.0])
    np.testing.assert_allclose(np.asarray(jax.jit(lambda z: jnp.abs(B(z * 2)))(z)), np.abs(2 * np.asarray(z)),
                               rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: B(x > 0))(jnp.array([1.0, -1.0]))), [True, False])
    k = jax.jit(B)(jax.random.key(0))
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(k)), [0, 0])
    assert float(jax.jit(jax.grad(lambda x: B(x * x)))(3.0)) == 6.0
