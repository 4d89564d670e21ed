"""``jnp.linspace`` bit for bit as JAX 0.10.2 computes it on the CPU (issue 22, reductions' and samplers' bits).

XLA:CPU compiles JAX's ``start * (1 - i/div) + stop * (i/div)`` as ``start * (1 - i*r) + i * (stop*r)`` (r = 1/div)
and LLVM contracts it into multiply-adds by the trip count (``numpy._creation._xla_ramp``); with literal bounds
XLA folds the samples, every op rounded (below the vector threshold). The printed jaxpr stays JAX's
(``test_api_jax_text10.py``): the compiled form is a lowering-only rule. Digests: sha256 prefixes of the three
arrays for (start, stop) = (-1.3, 2.7), (3, -7.25), (0.1, 1) concatenated, JAX 0.10.2 (x64 on) on this AMD EPYC
host (AVX-512, 2 threads; the partition thresholds 4443 / 65534 samples are its thread count's). cranax's
arithmetic here is IEEE operations and fused multiply-adds, so the values are the same on every host.
"""
import hashlib

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp

PAIRS = [(-1.3, 2.7), (3.0, -7.25), (0.1, 1.0)]

# (dtype, endpoint, div, "eager" | "folded") -> digest; "eager" also holds for jit with traced bounds
JAX = {
    ('float32', True, 1, 'eager'): 'bb48ca569be610078d4179d8',
    ('float32', True, 2, 'eager'): '12ca5c22a8acea0ccf31c187',
    ('float32', True, 3, 'eager'): '10e26b761c68e2f49e753285',
    ('float32', True, 5, 'eager'): 'fad2f3685b3a323e44af0950',
    ('float32', True, 16, 'eager'): '07909b45c600b47fae455ec6',
    ('float32', True, 32, 'eager'): 'dbacedae960017c65f50214e',
    ('float32', True, 33, 'eager'): '2ccba9683fadde1403ac8e66',
    ('float32', True, 34, 'eager'): '15884cd120e531fd1bcfd118',
    ('float32', True, 100, 'eager'): '800b62f6fef67849609ff1c0',
    ('float32', True, 351, 'eager'): 'd6445a39658e593e35dc9ffc',
    ('float32', True, 352, 'eager'): 'f8568ce5fb8ae6d411a27abd',
    ('float32', True, 353, 'eager'): '5ec6000f211263c20a419fd4',
    ('float32', True, 1000, 'eager'): 'faaefe2c22087e0d12256229',
    ('float32', True, 4441, 'eager'): 'c8341cb3c911a2f94ce08695',
    ('float32', True, 4442, 'eager'): 'd56b3a4c374cb579b3f43879',
    ('float32', True, 4443, 'eager'): '5853d1ce16c5e3ad0f2d0d4e',
    ('float32', True, 4444, 'eager'): 'e2339be8fe4e7e91b7067614',
    ('float32', True, 10001, 'eager'): '36fb4a04acf0ce546aa0d93c',
    ('float32', True, 3, 'folded'): '0e719cdd37e5cfe654cbd72d',
    ('float32', True, 10, 'folded'): '2985090403af80d7476c2ea1',
    ('float32', True, 33, 'folded'): '646fcc934eca70a488e4ef2a',
    ('float32', True, 100, 'folded'): '05aad81c52a4262d8524eee9',
    ('float32', True, 351, 'folded'): '5f42ee23d58ad5721138d38d',
    ('float32', False, 1, 'eager'): 'caaf80ba00663e6ea2245d4a',
    ('float32', False, 2, 'eager'): '0f0538c43b6aaa3f79d40798',
    ('float32', False, 3, 'eager'): '2dd6d25909c7a075f30a6461',
    ('float32', False, 5, 'eager'): '46fe5e18699c3c81b106d730',
    ('float32', False, 16, 'eager'): 'a3fb23d294cb29dc8dc9b571',
    ('float32', False, 32, 'eager'): 'be4cd2f2c13c35a624dd9db7',
    ('float32', False, 33, 'eager'): 'e827ce32b6c76985648e20e7',
    ('float32', False, 34, 'eager'): '8c4adbf9263a1bcf06b7bd91',
    ('float32', False, 100, 'eager'): '33846c8eaaf4d73210293fec',
    ('float32', False, 351, 'eager'): 'c1853833c401e25f80d26a24',
    ('float32', False, 352, 'eager'): 'cf9ba0951279d07a090bf59b',
    ('float32', False, 353, 'eager'): 'c2e64c636931fa2e4f5c659c',
    ('float32', False, 1000, 'eager'): 'f841577f6660bfda1bcfc0d7',
    ('float32', False, 4441, 'eager'): '88c4d18356fa5411eebc2667',
    ('float32', False, 4442, 'eager'): '1adb11a2c0eb32be9f46385f',
    ('float32', False, 4443, 'eager'): 'aacafad77b8d33bf32157e65',
    ('float32', False, 4444, 'eager'): '69c2451ba818b3f9da48bc06',
    ('float32', False, 10001, 'eager'): 'ada8f16ec03c4ef293af3333',
    ('float32', False, 3, 'folded'): '0247d839dd03940c830709f7',
    ('float32', False, 10, 'folded'): 'dd415051f4566660aa5ea7aa',
    ('float32', False, 33, 'folded'): 'a1c3bfc6e6f53c95de129f0b',
    ('float32', False, 100, 'folded'): '984abdcf1ad550ea4c9c5371',
    ('float32', False, 351, 'folded'): 'a1fb74a272bf17cca9af654d',
    ('float64', True, 1, 'eager'): '2062c69177ad1388f544214a',
    ('float64', True, 2, 'eager'): '5cb8f62b511550b332b225cb',
    ('float64', True, 3, 'eager'): 'dbb1c051d1f63b71c09fa74c',
    ('float64', True, 5, 'eager'): '3c33aa500a98b4accc4f64c8',
    ('float64', True, 16, 'eager'): '2063282f895dc17e81f70d91',
    ('float64', True, 32, 'eager'): '3847a8c3b9baa2f6609b56ca',
    ('float64', True, 33, 'eager'): '316531f72d758a762a6d0fef',
    ('float64', True, 34, 'eager'): 'f4c5c0f3e467ae472cf33ee2',
    ('float64', True, 100, 'eager'): '62205c2bc885818477eb78e3',
    ('float64', True, 175, 'eager'): 'eb1d28a487f0cbb384fde285',
    ('float64', True, 176, 'eager'): '1f768f0d8aa3f12a3f9942bb',
    ('float64', True, 177, 'eager'): '8e7106d1300a851428b57e5c',
    ('float64', True, 1000, 'eager'): '7cd7de3784eb2ad2da7a0cd9',
    ('float64', True, 65532, 'eager'): 'f7feca0184c14c54fca67bd0',
    ('float64', True, 65533, 'eager'): 'ace265ae69cb1d9e93284007',
    ('float64', True, 65534, 'eager'): '44fdaa33267e137e81af8dbf',
    ('float64', True, 65535, 'eager'): '4e4d3a9ea995620545889356',
    ('float64', True, 100001, 'eager'): 'ae79fb0982106c851dd9326c',
    ('float64', True, 3, 'folded'): '8e0a5e82c1e1b55308a9313c',
    ('float64', True, 33, 'folded'): 'e6f57b25c1f1dd6b04f2395c',
    ('float64', True, 100, 'folded'): 'e487fd3c30f0a007940ac63f',
    ('float64', True, 175, 'folded'): 'ff09d44b5ed6435445794fad',
    ('float64', False, 1, 'eager'): 'ba2265d458e6180e72207867',
    ('float64', False, 2, 'eager'): 'dbd8c871d1eec72c5693f6b4',
    ('float64', False, 3, 'eager'): '9bc06ac8de331acd4578e000',
    ('float64', False, 5, 'eager'): '97eff268bb930b19ccd0365d',
    ('float64', False, 16, 'eager'): '62ad0526b93112039d95461d',
    ('float64', False, 32, 'eager'): '858d4e4bca12414cf5b86cb9',
    ('float64', False, 33, 'eager'): '33f1ff074b24b075e4ef4105',
    ('float64', False, 34, 'eager'): 'c599626cb2548b32d552e184',
    ('float64', False, 100, 'eager'): '8b08ad5dcf7d3c4e2ab45fb9',
    ('float64', False, 175, 'eager'): '33a2f05969250296e962ff30',
    ('float64', False, 176, 'eager'): '41546eb6a372a80dd4ef3b8a',
    ('float64', False, 177, 'eager'): '74c81c75c3c7897706018019',
    ('float64', False, 1000, 'eager'): '39b6ce93abb8aed6563430a1',
    ('float64', False, 65532, 'eager'): 'ed6160982b065e01d48a22aa',
    ('float64', False, 65533, 'eager'): '43f0d8b5ceaeffeadb286e73',
    ('float64', False, 65534, 'eager'): 'ba36cdbe8c3da9f620701845',
    ('float64', False, 65535, 'eager'): '0d2ecc934c2628a5d1457195',
    ('float64', False, 100001, 'eager'): '3dd6d994eeb45d6d7ef36d4a',
    ('float64', False, 3, 'folded'): 'ce340b5d00620aae777749d2',
    ('float64', False, 33, 'folded'): '870a2ff17c3847c0419146b9',
    ('float64', False, 100, 'folded'): 'd15a3b4bfdaa8ec4fa76c662',
    ('float64', False, 175, 'folded'): 'a82d41320f97ba9a9f9e2d01',
}


def _digest(vs):
    return hashlib.sha256(b"".join(np.ascontiguousarray(v).tobytes() for v in vs)).hexdigest()[:24]


@pytest.mark.parametrize("case", sorted(JAX, key=str))
def test_linspace_bits_match_jax(case, x64):
    dt, ep, div, mode = case
    num = div + 1 if ep else div
    if mode == "eager":
        vs = [jnp.linspace(np.array(a, dt), np.array(b, dt), num, endpoint=ep) for a, b in PAIRS]
    else:
        vs = [jax.jit(lambda: jnp.linspace(np.array(a, dt), np.array(b, dt), num, endpoint=ep))() for a, b in PAIRS]
    vs = [np.asarray(v) for v in vs]
    assert all(v.dtype == dt and v.shape == (num,) for v in vs)
    for (a, b), v in zip(PAIRS, vs):
        want = np.linspace(a, b, num, endpoint=ep)
        np.testing.assert_allclose(v, want, rtol=0, atol=4 * np.finfo(dt).eps * max(abs(a), abs(b)))
    assert _digest(vs) == JAX[case], case


def test_linspace_traced_bounds_match_eager(x64):
    # jit with traced bounds compiles the same program as the eager call (JAX: the same bits)
    for dt, num in (("float32", 1000), ("float32", 5001), ("float64", 300)):
        f = jax.jit(lambda a, b: jnp.linspace(a, b, num))
        a, b = np.array(-1.3, dt), np.array(2.7, dt)
        assert np.array_equal(np.asarray(f(a, b)), np.asarray(jnp.linspace(a, b, num)))


def test_linspace_other_forms_match_jax():
    # integer dtype (floored), retstep, Python bounds (x64 off), no endpoint: JAX 0.10.2's sha256 prefixes
    got = {"int": jnp.linspace(np.float32(-3.3), np.float32(500.7), 400, dtype=jnp.int32),
           "int_small": jnp.linspace(np.float32(-3.3), np.float32(50.7), 20, dtype=jnp.int32),
           "pyfloat": jnp.linspace(-1.3, 2.7, 1000),
           "x32_noend": jnp.linspace(np.float32(0.1), np.float32(1.0), 5000, endpoint=False)}
    v, st = jnp.linspace(np.float32(-1.3), np.float32(2.7), 501, retstep=True)
    got["retstep"], got["step"] = v, st
    for k, v in got.items():
        assert hashlib.sha256(np.asarray(v).tobytes()).hexdigest()[:16] == JAX_OTHER[k], k


JAX_OTHER = {
    "int": "ee394306c37a3b5f",
    "int_small": "4425c3bc34d7e623",
    "retstep": "1806c9c1b4a5227b",
    "step": "41a6e3eadfed887c",
    "pyfloat": "4ff05999bfe353b8",
    "x32_noend": "dc4f71ef0060385b",
}
