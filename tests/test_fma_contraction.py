"""Multiply-adds under ``jit`` round once, as XLA:CPU's (LLVM contracts ``a * b + c`` into a fused multiply-add in
the code XLA emits; ``rust/opt/contract.rs``). The bits below were recorded from JAX 0.10.2 on this host (x86-64
with FMA) running the same jitted functions; the inputs are ones where one rounding and two differ. Eager
operations stay single primitives: nothing to contract, as in JAX."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp

a = np.array([-0.8905918598175049, -0.49220651388168335, 0.35688701272010803, 0.695303201675415, -1.9012227058410645,
              -1.289537787437439], np.float32)
b = np.array([-0.37520650029182434, 1.5204473733901978, 0.6169505715370178, 0.7061138153076172, 1.2141629457473755,
              -0.8255823850631714], np.float32)
c = np.array([-1.704919457435608, 0.7441914677619934, 1.2384167909622192, 0.476248562335968, 0.7437518239021301,
              -0.4969271123409271], np.float32)
d = np.array([0.19127891957759857, 0.08092328161001205, 0.9697588086128235, 1.3193851709365845, -0.3880631923675537,
              0.05617780238389969], np.float32)

JAX_BITS = {
    "a*b+c": [3215947055, 3146321529, 1069200219, 1064803121, 3217573427, 1058100301],
    "c-a*b": [3221389366, 1069485155, 1065506183, 3161527718, 1078154844, 3217547460],
    "a*b-c": [1073905718, 3216968803, 3212989831, 1014044070, 3225638492, 1070063812],
    "a*b+c*d": [1006877981, 3207604917, 1068886056, 1066354132, 3223729542, 1065661107],
    "two_uses": [3208143385, 993457415, 1071524255, 1071652978, 1082589691, 1059250812],
    "loop": [3215002791, 1072617970, 1076080745, 1067826034, 3207129170, 1050262400],
}

CASES = {
    "a*b+c": lambda a, b, c, d: a * b + c,
    "c-a*b": lambda a, b, c, d: c - a * b,
    "a*b-c": lambda a, b, c, d: a * b - c,
    "a*b+c*d": lambda a, b, c, d: a * b + c * d,          # the left product is contracted
    "two_uses": lambda a, b, c, d: (lambda t: (t + c) * (t + d))(a * b),   # a product used twice is rounded
    "loop": lambda a, b, c, d: jax.lax.fori_loop(0, 3, lambda i, x: x * b + c, a),   # loop bodies too
}


def _f64(x, y, z):
    return (x.astype(np.float64) * y + z).astype(np.float32)   # one rounding (the product is exact in f64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_multiply_add_rounds_as_xla(name):
    out = np.asarray(jax.jit(CASES[name])(a, b, c, d))
    assert out.view(np.uint32).tolist() == JAX_BITS[name]


def test_oracles_and_eager():
    # the recorded bits are the one-rounding values (NumPy oracle), and they differ from two roundings
    assert np.asarray(jax.jit(CASES["a*b+c"])(a, b, c, d)).tolist() == _f64(a, b, c).tolist()
    assert (_f64(a, b, c) != a * b + c).all()
    assert np.asarray(jax.jit(CASES["c-a*b"])(a, b, c, d)).tolist() == _f64(-a, b, c).tolist()
    # eager: two operations, two roundings (JAX's eager ops are single primitives too)
    assert np.asarray(jnp.asarray(a) * b + c).tolist() == (a * b + c).tolist()
    # an output that is also read by the add keeps its rounding in both
    p, s = jax.jit(lambda a, b, c: (a * b, a * b + c))(a, b, c)
    assert np.asarray(s).tolist() == (a * b + c).tolist() and np.asarray(p).tolist() == (a * b).tolist()


def test_float64_contracts_too():
    A = np.array([-0.8239929939181184, -0.575031813743207, 0.9515841937752699, -1.1475827203818])
    B = np.array([1.3519608439589779, 0.5123309963255035, -1.4117413531667518, -0.6124541256278458])
    C = np.array([-1.6725767832934528, -0.024761940599537093, 0.7584447771245928, -0.6278582240135313])
    with jax.enable_x64(True):
        out = np.asarray(jax.jit(lambda a, b, c: a * b + c)(A, B, C))
    assert out.view(np.uint64).tolist() == [13836829282840322241, 13822796889331721544, 13826815981397403941,
                                            4590067554694462497]
    assert (out != A * B + C).all()
