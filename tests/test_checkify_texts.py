"""checkify's values and texts as JAX 0.10.2's (issue 18 (d)): Python scalar outputs come back as JAX's typed
scalars (``TypedInt(1, dtype=int32)``, ``TypedFloat``; bools stay bools; under jit weak Arrays), ``str`` of
an Error is ``Error(<message>)``, and a vmapped failure's ``get_exception()`` is a ``BatchedError`` by index
whose ``FailedCheckError``s show their formatting arguments. Texts recorded from JAX 0.10.2."""
import pickle

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.core import TypedFloat, TypedInt
from cranax.experimental import _checkify, checkify   # (_checkify: the exception classes, JAX's jax._src.checkify)

RECORDED = {
    'fail_exc_repr': 'FailedCheckError(Array(-1., dtype=float32))',
    'fail_str': 'Error(x must be positive, got -1.0 (`check` failed))',
    'fail_exc_str': 'x must be positive, got -1.0 (`check` failed)',
    'ok_str': 'Error(None)',
    'batched_repr': 'BatchedError(error_mapping={(1,): FailedCheckError(Array(-1., dtype=float32)), (2,): FailedCheckError(Array(-2., dtype=float32))})',
    'batched_str': 'at mapped index 1: x must be positive, got -1.0 (`check` failed)\nat mapped index 2: x must be positive, got -2.0 (`check` failed)',
    'batched_err_str': 'Error(at mapped index 1: x must be positive, got -1.0 (`check` failed)\nat mapped index 2: x must be positive, got -2.0 (`check` failed))',
    'batched_cls': 'BatchedError',
    'out_int': 'TypedInt(1, dtype=int32)',
    'jit_out_int': 'Array(1, dtype=int32, weak_type=True)',
    'out_float': 'TypedFloat(1.0, dtype=float32)',
    'jit_out_float': 'Array(1., dtype=float32, weak_type=True)',
    'out_tuple': '(TypedInt(1, dtype=int32), TypedFloat(2.0, dtype=float32), True)',
    'jit_out_tuple': '(Array(1, dtype=int32, weak_type=True), Array(2., dtype=float32, weak_type=True), Array(True, dtype=bool))',
    'out_dict': "{'a': TypedInt(3, dtype=int32)}",
    'jit_out_dict': "{'a': Array(3, dtype=int32, weak_type=True)}",
    'passthrough': '(TypedFloat(2.0, dtype=float32), TypedInt(3, dtype=int32))',
}


def fc(x):
    checkify.check(x > 0, "x must be positive, got {}", x)
    return x


def _measure():
    out = {}
    err, _ = checkify.checkify(fc)(jnp.float32(-1.0))
    out["fail_exc_repr"] = repr(err.get_exception())
    out["fail_str"] = str(err)
    out["fail_exc_str"] = str(err.get_exception())
    err, _ = checkify.checkify(fc)(jnp.float32(1.0))
    out["ok_str"] = str(err)
    err, _ = jax.vmap(checkify.checkify(fc))(jnp.array([1.0, -1.0, -2.0]))
    e = err.get_exception()
    out["batched_repr"] = repr(e)
    out["batched_str"] = str(e)
    out["batched_err_str"] = str(err)
    out["batched_cls"] = type(e).__name__
    for name, f in [("int", lambda x: 1), ("float", lambda x: 1.0), ("tuple", lambda x: (1, 2.0, True)),
                    ("dict", lambda x: {"a": 3})]:
        out["out_" + name] = repr(checkify.checkify(f)(jnp.float32(2.0))[1])
        out["jit_out_" + name] = repr(jax.jit(checkify.checkify(f))(jnp.float32(2.0))[1])
    out["passthrough"] = repr(checkify.checkify(lambda x: (x, 3))(2.0)[1])
    return out


MEASURED = _measure()


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_as_jax(name):
    assert MEASURED[name] == RECORDED[name]


def test_batched_error_mapping():
    err, _ = jax.vmap(checkify.checkify(fc))(jnp.array([1.0, -1.0, -2.0]))
    e = err.get_exception()
    assert isinstance(e, _checkify.JaxException) and sorted(e.error_mapping) == [(1,), (2,)]
    assert float(e.error_mapping[(2,)].args[0]) == -2.0   # JAX keeps the formatting arguments in .args


def test_typed_scalars_behave_as_python_scalars_of_their_dtype():
    err, out = checkify.checkify(lambda x: (1, 2.5))(jnp.float32(0.0))
    i, f = out
    assert type(i) is TypedInt and type(f) is TypedFloat
    assert i == 1 and f == 2.5 and isinstance(i, int) and isinstance(f, float) and str(f) == "2.5"
    assert i.dtype == np.int32 and f.dtype == np.float32
    assert str(jax.typeof(f)) == "~float32[]"   # weakly typed, as the Python scalar
    assert repr(jnp.ones(2, jnp.float16) * f) == "Array([2.5, 2.5], dtype=float16)"
    assert repr(jax.jit(lambda v: v * 2)(f)) == "Array(5., dtype=float32, weak_type=True)"
    assert repr(pickle.loads(pickle.dumps(f))) == "TypedFloat(2.5, dtype=float32)"
