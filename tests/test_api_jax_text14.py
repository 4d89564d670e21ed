"""Issue 18, the fourteenth pass on JAX 0.10.2's printed forms: ``jacrev``/``jacfwd`` give each Jacobian block
the dtype and weak type of its input (jacrev) or its output (jacfwd), as JAX does (a weakly typed scalar
argument gives a weakly typed block). Values recorded from JAX 0.10.2 by running the ``def``s below under JAX
(each returns name -> thunk; a thunk's ``str`` is the recorded text)."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax


def jr(jax, jnp, lax):
    import numpy as np
    f1 = lambda x: x * 2
    f2 = lambda x, y: x * y + 1.0
    f3 = lambda x: jnp.sin(x) + 1
    out = {}
    for nm, jac in (("rev", jax.jacrev), ("fwd", jax.jacfwd)):
        out[nm+"_f1_f"] = lambda jac=jac: repr(jac(f1, allow_int=True)(3.0))
        out[nm+"_f1_i"] = lambda jac=jac: repr(jac(f1, allow_int=True)(3))
        out[nm+"_f2_if"] = lambda jac=jac: repr(jac(f2, argnums=(0,1), allow_int=True)(3, 2.0))
        out[nm+"_f2_ff"] = lambda jac=jac: repr(jac(f2, argnums=(0,1), allow_int=True)(3., 2.0))
        out[nm+"_f3_f"] = lambda jac=jac: repr(jac(f3, allow_int=True)(jnp.arange(2.)))
        out[nm+"_f3_s"] = lambda jac=jac: repr(jac(f3, allow_int=True)(1.0))
        out[nm+"_f1_plain"] = lambda jac=jac: repr(jac(f1)(3.0))
        out[nm+"_f1_arr"] = lambda jac=jac: repr(jac(f1, allow_int=True)(jnp.array([1, 2])))
    return out


JR = {'fwd_f1_arr': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f1_f': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f1_i': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f1_plain': 'Array(2., dtype=float32, weak_type=True)',
 'fwd_f2_ff': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f2_if': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f3_f': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'fwd_f3_s': "TypeError: jacfwd() got an unexpected keyword argument 'allow_int'",
 'rev_f1_arr': 'TypeError: jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but '
               'got int32. For differentiation of functions with integer outputs, use jax.vjp directly.',
 'rev_f1_f': 'Array(2., dtype=float32, weak_type=True)',
 'rev_f1_i': 'TypeError: jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but '
             'got int32. For differentiation of functions with integer outputs, use jax.vjp directly.',
 'rev_f1_plain': 'Array(2., dtype=float32, weak_type=True)',
 'rev_f2_ff': '(Array(2., dtype=float32, weak_type=True), Array(3., dtype=float32, weak_type=True))',
 'rev_f2_if': '(Array(0, dtype=int32, weak_type=True), Array(3., dtype=float32, weak_type=True))',
 'rev_f3_f': 'Array([[1.       , 0.       ],\n       [0.       , 0.5403023]], dtype=float32)',
 'rev_f3_s': 'Array(0.5403023, dtype=float32, weak_type=True)'}


def _run(fns):
    res = {}
    for k, v in fns.items():
        try:
            v = v()
        except Exception as e:
            v = f"{type(e).__name__}: {e}"
        res[k] = str(v)
    return res


@pytest.mark.parametrize("name", sorted(JR))
def test_jacobian_weak_types(name):
    assert _run(jr(jax, jnp, lax))[name] == JR[name]
