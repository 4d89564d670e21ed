"""chex: assert_shape/assert_type under jit, a chex.dataclass carried through jit, failing asserts raising AssertionError. Values recorded from real JAX 0.10.2 running tests/ecosystem/programs.py."""
import programs
from ecosystem_util import assert_matches, use_library

EXPECTED_CHEX_PROGRAM = {"w": [7.0, 15.0, 23.0], "n": 3, "caught": [1, 1, 1, 1, 1], "n_leaves": 2}


def test_chex_program():
    use_library("chex")
    assert_matches(programs.chex_program(), EXPECTED_CHEX_PROGRAM)
