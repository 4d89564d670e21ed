"""equinox: eqx.nn.MLP (init bit-identical), filter_jit + filter_value_and_grad training steps, filter_grad, filter_vmap. Values recorded from real JAX 0.10.2 running tests/ecosystem/programs.py."""
import programs
from ecosystem_util import assert_matches, use_library

EXPECTED_EQUINOX_PROGRAM = {"loss0": 0.8304848670959473, "loss_last": 0.44608333706855774, "g_w0": [-0.03908222168684006, -0.06063760444521904, -0.07428537309169769, -0.005470765754580498], "out": [-0.04106100648641586, -0.11878982186317444, 0.032509829849004745], "init_w0": [-0.0018134117126464844, -0.22804725170135498, 0.44381237030029297, 0.07965672016143799]}


def test_equinox_program():
    use_library("equinox")
    assert_matches(programs.equinox_program(), EXPECTED_EQUINOX_PROGRAM)
