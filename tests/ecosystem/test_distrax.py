"""distrax: Normal (log_prob, cdf, entropy, grad of log_prob), MultivariateNormalDiag (sample with a key, jitted
log_prob), a Chain(ScalarAffine, Tanh) bijector's forward/inverse and log-dets, a Lambda(exp) transformed
distribution (distrax inverts its jaxpr). Recorded from real JAX 0.10.2 (tests/ecosystem/programs.py)."""
import programs
from ecosystem_util import assert_matches, use_library

EXPECTED = {"log_prob": [-2.1120858192443848, -1.6433357000350952, -2.1120858192443848], "cdf": [0.15865527093410492, 0.40129366517066956, 0.8413447141647339], "entropy": 2.1120858192443848, "mvn_log_prob": [-4.512062072753906, -1.2418222427368164, -1.6327126026153564], "mvn_sample": [[1.622642159461975, 2.012632369995117], [-0.4335944354534149, 0.9606913328170776], [0.17609089612960815, 0.5139553546905518]], "bij_y": [1.2990039587020874, -0.1398470401763916], "bij_ldj": [1.0886287689208984, 0.9427053928375244], "bij_x": [0.09999999403953552, -0.40000009536743164], "bij_ildj": [-1.0886287689208984, -0.9427051544189453], "lognormal_log_prob": -1.8523122072219849, "grad_loc": 1.6000001430511475}


def test_distrax_program():
    use_library("distrax")
    assert_matches(programs.distrax_program(), EXPECTED)
