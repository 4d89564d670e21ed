"""diffrax: Tsit5 and Dopri5 with a PID step-size controller, diffeqsolve under jit and grad (recorded from
real JAX 0.10.2 running tests/ecosystem/programs.py)."""
import pytest

import programs
from ecosystem_util import assert_matches, use_library

EXPECTED = {"tsit5": [1.1185781955718994, 1.3651752471923828], "tsit5_steps": 7, "tsit5_grad": -2.559675455093384, "dopri5": [1.118578314781189, 1.3651752471923828], "dopri5_steps": 7, "dopri5_grad": -2.559674024581909}


def test_diffrax_tsit5_dopri5_jit_grad():
    use_library("diffrax")
    assert_matches(programs.diffrax_program(), EXPECTED, rtol=1e-4, atol=1e-5)
