"""``cranax.typing`` and ``cranax.disable_jit`` / ``jax_disable_jit`` (issue 18). Expected behaviour and
values recorded from JAX 0.10.2."""
import typing

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
import cranax.typing
from cranax import lax


def test_typing_aliases():
    assert [n for n in dir(cranax.typing) if not n.startswith("_")] == ["ArrayLike", "DTypeLike"]
    assert typing.get_origin(cranax.typing.ArrayLike) is typing.Union
    assert typing.get_args(cranax.typing.ArrayLike) == (cranax.Array, np.ndarray, np.bool_, np.number, bool, int,
                                                        float, complex)
    args = typing.get_args(cranax.typing.DTypeLike)
    assert args[:3] == (str, type[typing.Any], np.dtype)
    assert args[3].__name__ == "SupportsDType"
    assert isinstance(jnp.ones(2), args[3]) and isinstance(np.ones(2), args[3]) and not isinstance(3, args[3])

    def f(x: cranax.typing.ArrayLike, dt: cranax.typing.DTypeLike = "float32") -> cranax.Array:
        return jnp.asarray(x, dt)
    assert typing.get_type_hints(f)["x"] == cranax.typing.ArrayLike
    assert float(f(2)) == 2.0


def test_disable_jit_runs_python():
    seen = []

    @cranax.jit
    def f(x):
        seen.append(type(x).__name__)
        return x * 2
    assert cranax.config.jax_disable_jit is False
    with cranax.disable_jit():
        assert cranax.config.jax_disable_jit is True
        assert f(3.0) == 6.0                  # the function ran as Python on the Python float
        np.testing.assert_array_equal(f(jnp.ones(2)), [2.0, 2.0])
        # make_jaxpr still traces; the jit is inlined rather than staged as a jit equation
        assert str(cranax.make_jaxpr(f)(1.0)) == "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"
        assert float(cranax.grad(f)(1.0)) == 2.0
        np.testing.assert_array_equal(cranax.vmap(f)(jnp.ones(2)), [2.0, 2.0])
        g = cranax.jit(lambda x, n: x * n, static_argnums=1)
        assert g(2.0, 3) == 6.0
    assert seen[:2] == ["float", "Array"]
    assert cranax.config.jax_disable_jit is False
    out = f(3.0)
    assert isinstance(out, cranax.Array) and float(out) == 6.0
    assert seen[-1] != "float"   # traced again, not run as Python
    with cranax.disable_jit(False):
        assert cranax.config.jax_disable_jit is False


def test_disable_jit_config_flag():
    calls = []
    f = cranax.jit(lambda x: calls.append(x) or x + 1)
    cranax.config.update("jax_disable_jit", True)
    try:
        assert f(4.0) == 5.0 and calls == [4.0]
    finally:
        cranax.config.update("jax_disable_jit", False)
    cranax.config.update("jax_disable_jit", 3)   # as JAX: any value, kept as its truth
    try:
        assert cranax.config.jax_disable_jit is True
    finally:
        cranax.config.update("jax_disable_jit", False)


def test_disable_jit_restores_on_error():
    with pytest.raises(ZeroDivisionError):
        with cranax.disable_jit():
            1 / 0
    assert cranax.config.jax_disable_jit is False


def test_control_flow_under_disable_jit():
    with cranax.disable_jit():
        r = lax.fori_loop(0, 3, lambda i, c: c + i, 0)
        assert r == 3 and type(r) is int
        r = lax.fori_loop(0, 3, lambda i, c: c + i, 0.5)
        assert r == 3.5 and type(r) is float
        assert lax.fori_loop(0, 0, lambda i, c: c + i, 7) == 7
        c, ys = lax.scan(lambda c, x: (c + x, c), 0., jnp.arange(3.))
        assert repr(c) == "Array(3., dtype=float32)" and repr(ys) == "Array([0., 0., 1.], dtype=float32)"
        c, (a, b) = lax.scan(lambda c, x: (c + x, (c, x * 2)), 0, jnp.arange(3), reverse=True)
        assert repr(c) == "Array(3, dtype=int32)"
        assert repr(a) == "Array([3, 2, 0], dtype=int32)" and repr(b) == "Array([0, 2, 4], dtype=int32)"
        assert lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1) == 2
        assert lax.switch(5, [lambda x: x, lambda x: x * 2], 1.0) == 2.0   # index clamped
        assert repr(lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0)) == "Array(3, dtype=int32, weak_type=True)"
        assert float(cranax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0)) == 12.0
        # a traced predicate falls back to the primitives
        np.testing.assert_array_equal(
            cranax.vmap(lambda x: lax.while_loop(lambda c: c < x, lambda c: c + 1, 0.))(jnp.arange(3.)), [0, 1, 2])
        assert repr(cranax.vmap(lambda x: lax.cond(x > 1, lambda: x, lambda: -x))(jnp.arange(3.))) == \
            "Array([-0., -1.,  2.], dtype=float32)"
        with pytest.raises(ValueError) as e:
            lax.scan(lambda c, x: (c, x), 0, None, length=0)
        assert str(e.value) == ("zero-length scan is not supported in disable_jit() mode because the output type "
                                "is unknown.")


def test_disable_jit_is_per_thread():
    import threading
    ran = []
    f = cranax.jit(lambda x: ran.append(type(x).__name__) or x + 1)
    seen = {}

    def other():
        seen["flag"] = cranax.config.jax_disable_jit
        seen["out"] = float(f(1.0))
    with cranax.disable_jit():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert seen == {"flag": False, "out": 2.0}
        assert ran == ["DynamicJaxprTracer"]        # the other thread compiled it
        assert cranax.config.jax_disable_jit is True
        with cranax.disable_jit(False):
            assert cranax.config.jax_disable_jit is False
            assert float(f(2.0)) == 3.0 and len(ran) == 1   # compiled and cached: not run again
        # the block's value wins over the global flag on this thread, as in JAX
        cranax.config.update("jax_disable_jit", False)
        assert cranax.config.jax_disable_jit is True
    assert cranax.config.jax_disable_jit is False
    cranax.config.update("jax_disable_jit", True)
    try:
        with cranax.disable_jit(False):
            assert cranax.config.jax_disable_jit is False
        assert cranax.config.jax_disable_jit is True
    finally:
        cranax.config.update("jax_disable_jit", False)
