"""Multiply-adds under ``jit`` round once, as XLA:CPU's (LLVM contracts ``a * b + c`` into a fused multiply-add in
the code XLA emits; ``rust/opt/contract.rs``). The bits below were recorded from JAX 0.10.2 on this host (x86-64
with FMA) running the same jitted functions; the inputs are ones where one rounding and two differ. Eager
operations stay single primitives: nothing to contract, as in JAX."""
import hashlib

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax

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


# ---------------------------------------------------------------- many programs against JAX's bits
# Elementwise chains, broadcasts, vmap, loop and scan bodies, derivatives, softmax/logsumexp/layernorm, polyval:
# sha256 (first 16 hex digits) of every output's bytes from JAX 0.10.2 on this host (x64 on, the same jitted
# functions on the same inputs). Some of them XLA does not contract and neither does cranax: a product read
# twice in one kernel ("shared product", "where"), a product broadcast after it is computed ("bcast product",
# "vmap s*t+y"), reductions' own adds ("softmax", "logsumexp").
def _programs():
    """name -> (jitted function, args), float32 and float64 (x64 on)."""
    rng = np.random.default_rng(18)
    def f32(*s):
        return rng.standard_normal(s).astype(np.float32)
    def f64(*s):
        return rng.standard_normal(s)
    j = jax.jit
    out = {}
    for dt, g in (("f32", f32), ("f64", f64)):
        a, b, c, d = g(777), g(777), g(777), g(777)
        M, N, P = g(33, 20), g(33, 20), g(33, 20)
        v, w = g(20), g(33)
        s = g()
        T = {
            "a*b+c": (lambda a, b, c: a * b + c, (a, b, c)),
            "c-a*b": (lambda a, b, c: c - a * b, (a, b, c)),
            "a*b-c": (lambda a, b, c: a * b - c, (a, b, c)),
            "a*b+c*d": (lambda a, b, c, d: a * b + c * d, (a, b, c, d)),
            "a*b-c*d": (lambda a, b, c, d: a * b - c * d, (a, b, c, d)),
            "chain": (lambda a, b, c, d: ((a * b + c) * d + a) * c - b, (a, b, c, d)),
            "hypot-like": (lambda a, b: jnp.sqrt(a * a + b * b), (a, b)),
            "exp(a)*b+c": (lambda a, b, c: jnp.exp(a) * b + c, (a, b, c)),
            "literals": (lambda a, c: a * 0.1 + c - 1.5 * a * c, (a, c)),
            "where": (lambda a, b, c: jnp.where(a > 0, a * b + c, c - a * b), (a, b, c)),
            "two outputs": (lambda a, b, c: (a * b + c, a * b), (a, b, c)),
            "shared product": (lambda a, b, c, d: (a * b + c) * (a * b + d), (a, b, c, d)),
            "scalar*x+y": (lambda s, b, c: s * b + c, (s, b, c)),
            "row bcast": (lambda M, v, N: M * v + N, (M, v, N)),
            "col bcast": (lambda M, w, N: M * w[:, None] + N, (M, w, N)),
            "outer+M": (lambda v, w, M: w[:, None] * v[None, :] + M, (v, w, M)),
            "bcast product": (lambda M, N, P: M[:, :1] * N[:, :1] + P, (M, N, P)),
            "size-1 operand": (lambda a, b, c: a[:1] * b + c, (a, b, c)),
            "vmap a*b+c": (jax.vmap(lambda x, y, z: x * y + z), (M, N, P)),
            "vmap s*x+y": (jax.vmap(lambda s, x, y: s * x + y), (w, M, N)),
            "vmap s*t+y": (jax.vmap(lambda s, t, y: s * t + y), (w, w[::-1], M)),
            "fori": (lambda a, b, c: lax.fori_loop(0, 4, lambda i, x: x * b + c, a), (a, b, c)),
            "while": (lambda a, b: lax.while_loop(lambda x: x[1] < 3, lambda x: (x[0] * b - a, x[1] + 1), (a, 0))[0], (a, b)),
            "scan": (lambda v, M: lax.scan(lambda h, x: (h * v + x, h * x - v), jnp.zeros_like(v), M), (v, M)),
            "scan outer acc": (lambda M, N: lax.scan(lambda acc, uv: (acc + uv[0][:, None] * uv[1][None, :], None),
                                                     jnp.zeros((20, 20), M.dtype), (M, N))[0], (M, N)),
            "softmax": (jax.nn.softmax, (M,)),
            "logsumexp": (jax.scipy.special.logsumexp, (M,)),
            "layernorm tail": (lambda x, m, s: (x - m) / s * 1.5 + 0.25, (M, M[:, :1], M[:, 1:2])),
            "polyval": (lambda x: jnp.polyval(jnp.array([1.5, -0.25, 2.0, 0.75], x.dtype), x), (a,)),
            "horner": (lambda x: ((x * 0.3 + 1.2) * x - 0.7) * x + 2.0, (a,)),
            "grad tanh": (jax.grad(lambda x: jnp.sum(jnp.tanh(x) * x)), (a,)),
            "grad poly": (jax.grad(lambda x: jnp.sum(x * x * x + 2.0 * x * x - x)), (a,)),
            "hessian": (jax.hessian(lambda x: jnp.sum(x ** 3 * x[::-1] + x * x)), (v[:6],)),
            "jvp": (lambda x, t: jax.jvp(lambda y: y * y * jnp.exp(y), (x,), (t,)), (a, b)),
        }
        for k, (fn, args) in T.items():
            out[f"{dt} {k}"] = (j(fn), args)
    return out


JAX_DIGESTS = {
    'f32 a*b+c': '409c28e31c2b0890',
    'f32 c-a*b': '661d52ae7fd4f072',
    'f32 a*b-c': '205107880f20cf40',
    'f32 a*b+c*d': '0dbad39fd5dbfd0d',
    'f32 a*b-c*d': '431c796109f90aa3',
    'f32 chain': '00d04eb90d4d7b11',
    'f32 hypot-like': '2d51a9db229d5c25',
    'f32 exp(a)*b+c': '88e1663de84ab722',
    'f32 literals': 'da4f21a34b3f268c',
    'f32 where': 'a67ca144c505ea00',
    'f32 two outputs': '598dc2fc8dc22849',
    'f32 shared product': '13c6deea0c7bbb4c',
    'f32 scalar*x+y': 'b3b1333007b6b9f7',
    'f32 row bcast': 'd3af8126991bff32',
    'f32 col bcast': '16ea059ff50b48c2',
    'f32 outer+M': '2dbf576fb5d16732',
    'f32 bcast product': 'e62c8a9ac768ee35',
    'f32 size-1 operand': '3cd05b68a70ee52c',
    'f32 vmap a*b+c': '18380bb68374d6c8',
    'f32 vmap s*x+y': '16ea059ff50b48c2',
    'f32 vmap s*t+y': 'e9c6f41459cc60ff',
    'f32 fori': '267adb6590e9fb19',
    'f32 while': 'a568b9f12973ea64',
    'f32 scan': 'd2cf03985fb2c434',
    'f32 scan outer acc': '63eb0a8e11e9988d',
    'f32 softmax': '447e5df058a8bdc1',
    'f32 logsumexp': '3397518d77fed404',
    'f32 layernorm tail': '7ca75db05f5cb7db',
    'f32 polyval': 'f1f0d5f5e638ce00',
    'f32 horner': '458aea4f9bc1a830',
    'f32 grad tanh': 'a46f3328797cb6bf',
    'f32 grad poly': 'd239833412c077cc',
    'f32 hessian': '34c2bf7c08338180',
    'f32 jvp': '299953c9231d98f8',
    'f64 a*b+c': '67949b174701e814',
    'f64 c-a*b': '561fa1387d11a214',
    'f64 a*b-c': '2f3bd22b0d42763e',
    'f64 a*b+c*d': 'c8c08647b57d6f35',
    'f64 a*b-c*d': 'ea8636ef7deda45d',
    'f64 chain': 'ac53fa6581c094ac',
    'f64 hypot-like': 'd819c18d0ab6942d',
    'f64 exp(a)*b+c': '0178be50724bc2b6',
    'f64 literals': '6862f0756a88faa8',
    'f64 where': '1d7425dad2c41efe',
    'f64 two outputs': '4e5d501e75767639',
    'f64 shared product': 'd8c52aac9fa85fd3',
    'f64 scalar*x+y': '8eb449f6d09b2b36',
    'f64 row bcast': 'fbfa53a8957b77dc',
    'f64 col bcast': '6a145684760d1bcf',
    'f64 outer+M': '73b80519e99a5d98',
    'f64 bcast product': 'affc5280fc8f6cba',
    'f64 size-1 operand': '9501307566a491bb',
    'f64 vmap a*b+c': '93dc90cd9ee31952',
    'f64 vmap s*x+y': '6a145684760d1bcf',
    'f64 vmap s*t+y': 'b4fa539ace78a69d',
    'f64 fori': 'bc19f1a248b41ef1',
    'f64 while': 'fca565cd53fd8953',
    'f64 scan': 'd4c6528437e7b95c',
    'f64 scan outer acc': '0a0af78bd4e5ae3b',
    'f64 softmax': '66b3a0a33edd0bf3',
    'f64 logsumexp': '126b5ccb5bdd3307',
    'f64 layernorm tail': '16feaea7b2219a93',
    'f64 polyval': '6b032af7afbe8fdc',
    'f64 horner': 'b3748ac0ac51d289',
    'f64 grad tanh': 'b08d9aa48d654b8b',
    'f64 grad poly': '53a4a130dd8db0e1',
    'f64 hessian': 'e84bea6f730952fd',
    'f64 jvp': 'f645d1581812c75a',
}


@pytest.mark.parametrize("name", sorted(JAX_DIGESTS))
def test_programs_match_jax_bits(name, x64):
    fn, args = _programs()[name]
    h = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(fn(*args)):
        h.update(np.asarray(leaf).tobytes())
    assert h.hexdigest()[:16] == JAX_DIGESTS[name]


def test_add_of_two_broadcast_products_keeps_its_roundings():
    # start * (1 - step) + stop * step with scalar start/stop: which product XLA contracts follows its simplifier's
    # rewrites (and the size), so in a user's program both stay rounded (h-bits17: contracting the left one matched
    # fewer of JAX's bits). jnp.linspace's own compiled form, measured, is a lowering-only rule with JAX's bits
    # (numpy._creation._xla_ramp, tests/test_linspace_bits.py).
    f = np.float32
    for num in (7, 100, 1000):
        step = np.arange(num - 1, dtype=f) * f(1 / (num - 1))
        want = f(-1.3) * (f(1) - step) + f(2.7) * step
        got = jax.jit(lambda a, b, s: a * (1 - s) + b * s)(f(-1.3), f(2.7), step)
        np.testing.assert_array_equal(np.asarray(got), want)
