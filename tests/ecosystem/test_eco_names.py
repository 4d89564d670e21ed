"""Names and behaviour that flax.nnx, chex, distrax and diffrax (through equinox) need, checked directly:
jnp's narrow float names, tree_util.register_static, checkify.ErrorCategory, jax.Ref/new_ref,
jax.experimental.hijax, and custom_vjp(symbolic_zeros=True) with CustomVJPPrimal (equinox's
filter_custom_vjp, which every diffrax adjoint uses)."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental import checkify, hijax


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz"])
def test_narrow_float_names_exist_and_refuse_arrays(name):
    t = getattr(jnp, name)
    assert jnp.dtype(t).name == name
    assert t == t and hash(t) == hash(jnp.dtype(t).type)
    with pytest.raises(TypeError, match=f"does not support dtype {name}"):
        jnp.zeros(3, t)
    with pytest.raises(TypeError, match=f"does not support dtype {name}"):
        t(1.0)


def test_double_single():
    x = jnp.single(1.5)
    assert x.dtype == np.float32 and float(x) == 1.5
    assert jnp.dtype(jnp.double) == np.float64


class _Cfg:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return hash(self.n)

    def __eq__(self, other):
        return isinstance(other, _Cfg) and other.n == self.n


def test_register_static():
    assert jax.tree_util.register_static(_Cfg) is _Cfg
    tree = {"a": jnp.ones(2), "c": _Cfg(3)}
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    assert len(leaves) == 1
    assert jax.tree_util.tree_unflatten(treedef, leaves)["c"].n == 3
    # static: a different value is a different treedef (so jit retraces on it)
    assert jax.tree_util.tree_structure(_Cfg(4)) != jax.tree_util.tree_structure(_Cfg(3))
    f = jax.jit(lambda t: t["a"] * t["c"].n)
    np.testing.assert_allclose(np.asarray(f(tree)), [3.0, 3.0])


def test_checkify_error_category():
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    assert all(issubclass(e, checkify.JaxException) for e in checkify.all_checks)


def test_ref_names():
    assert not isinstance(jnp.ones(2), jax.Ref)
    with pytest.raises(NotImplementedError, match="mutable array references"):
        jax.new_ref(jnp.ones(2))


def test_hijax_definitions_and_refusal():
    class MyPrim(hijax.HiPrimitive):
        pass
    p = MyPrim("my_prim")
    assert p.name == "my_prim"
    with pytest.raises(NotImplementedError, match="my_prim"):
        p.bind(jnp.ones(2))
    z = hijax.Zero(jax.typeof(jnp.ones((2, 3))))
    np.testing.assert_array_equal(np.asarray(hijax.instantiate_zeros(z)), np.zeros((2, 3)))


def _sym_f():
    @jax.custom_vjp
    def f(x, y):
        return x * y

    seen = []

    def fwd(x, y):
        seen.append((type(x).__name__, x.perturbed, y.perturbed))
        # a Python bool residual reaches bwd as a bool (not an array), as in JAX
        return x.value * y.value, (x.value, y.value, y.perturbed)

    def bwd(res, g):
        x, y, y_perturbed = res
        assert type(y_perturbed) is bool
        # a SymbolicZero / None cotangent means zero
        return (g * y * 3.0, jax.custom_derivatives.SymbolicZero(jax.typeof(y)) if not y_perturbed else None)

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f, seen


def test_custom_vjp_symbolic_zeros_perturbed_flags():
    f, seen = _sym_f()
    g = jax.grad(lambda x: f(x, 2.0))(1.5)
    assert float(g) == 6.0       # the custom rule (3 * y), not the true derivative
    assert seen == [("CustomVJPPrimal", True, False)]
    gx, gy = jax.grad(lambda x, y: f(x, y), argnums=(0, 1))(1.5, 2.0)
    assert float(gx) == 6.0 and float(gy) == 0.0
    assert seen[-1] == ("CustomVJPPrimal", True, True)


def test_custom_vjp_symbolic_zeros_under_jit_and_plain_call():
    f, _ = _sym_f()
    assert float(jax.jit(jax.grad(lambda x: f(x, 2.0)))(1.5)) == 6.0
    assert float(f(1.5, 2.0)) == 3.0
