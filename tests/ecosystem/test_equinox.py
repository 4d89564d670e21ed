"""equinox: eqx.nn.MLP (init bit-identical), filter_jit + filter_value_and_grad training steps, filter_grad, filter_vmap. Values recorded from real JAX 0.10.2 running tests/ecosystem/programs.py."""
import os

import cranax
import programs
from ecosystem_util import assert_matches, use_library

EXPECTED_EQUINOX_PROGRAM = {"loss0": 0.8304848670959473, "loss_last": 0.44608333706855774, "g_w0": [-0.03908222168684006, -0.06063760444521904, -0.07428537309169769, -0.005470765754580498], "out": [-0.04106100648641586, -0.11878982186317444, 0.032509829849004745], "init_w0": [-0.0018134117126464844, -0.22804725170135498, 0.44381237030029297, 0.07965672016143799]}


def test_equinox_program():
    use_library("equinox")
    assert_matches(programs.equinox_program(), EXPECTED_EQUINOX_PROGRAM)


def test_error_if_records_the_users_frames_only():
    """The stack an ``error_if`` records while tracing (shown by equinox's runtime error as "the stack inside of
    JIT") holds the user's frames only, as under JAX, whose internal files exclude themselves from
    ``traceback_util.include_frame``: cranax's files are excluded the same way."""
    use_library("equinox")
    import equinox as eqx
    import jax.numpy as jnp
    from equinox import _jit

    def g(x):
        return eqx.error_if(x, x < 0, "neg")

    def f(x):
        return g(x) + 1

    f_jit = eqx.filter_jit(f)
    _jit.last_error_info = None
    try:
        f_jit(jnp.array(-1.0))
    except Exception:   # equinox's runtime error (its type and text are not what this test checks)
        pass
    msg, stack = _jit.last_error_info
    assert msg == "neg"
    # innermost first: filter_jit's marker (bytes), the frames inside the jitted function, the call's marker,
    # the frames outside; JAX 0.10.2 records exactly g's error_if line and f's call of g inside
    ids = [i for i, s in enumerate(stack) if type(s) is bytes]
    assert ids[0] == 0 and len(ids) == 2
    inside = stack[1:ids[1]]
    assert [s.split(", in ")[1].split("\n")[0] for s in inside] == ["g", "f"]
    assert 'return eqx.error_if(x, x < 0, "neg")' in inside[0] and "return g(x) + 1" in inside[1]
    package = os.path.dirname(os.path.abspath(cranax.__file__)) + os.sep
    assert not any(package in s for s in stack if type(s) is str)
