"""Host callbacks: jax.pure_callback, jax.experimental.io_callback, jax.effects_barrier. Values against
NumPy; printed lines, shapes seen by the callback and error texts recorded from JAX 0.10.2."""
from functools import partial

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax.experimental import io_callback


def _sin(x):
    return np.sin(np.asarray(x))


def _pc(f, x, **kw):
    return jax.pure_callback(f, jax.ShapeDtypeStruct(x.shape, x.dtype), x, **kw)


def test_pure_callback_eager_and_jit():
    x = jnp.arange(3.0)
    want = np.sin(np.arange(3.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(_pc(_sin, x)), want, rtol=1e-6)
    got = jax.jit(lambda x: _pc(_sin, x) * 2)(x)
    np.testing.assert_allclose(np.asarray(got), 2 * want, rtol=1e-6)
    assert got.dtype == np.float32


def test_callback_gets_arrays():
    seen = []
    jax.jit(lambda x: _pc(lambda v: (seen.append((type(v), v.dtype, v.shape)), v)[1], x))(jnp.arange(3.0)).block_until_ready()
    assert seen == [(jax.Array, np.dtype("float32"), (3,))]   # JAX passes jax.Array too


def test_pure_callback_in_jaxpr():
    def cb(x):
        return x
    text = str(jax.make_jaxpr(lambda x: _pc(cb, x))(jnp.arange(3.0)))
    assert "b:f32[3] = pure_callback[" in text
    assert "callback=_FlatCallback(callback_func=<function test_pure_callback_in_jaxpr.<locals>.cb at 0xX" in text
    assert "in_tree=PyTreeDef(((*,), {}))" in text and "vmap_method=None" in text


def np_sin(x):
    return np.sin(x)


def test_pure_callback_jaxpr_text_as_jax():
    # recorded from JAX 0.10.2 (result_avals print by repr inside the tuple)
    def fcb(x):
        return jax.pure_callback(np_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="expand_dims")
    assert str(jax.make_jaxpr(jax.vmap(fcb))(jnp.arange(6.).reshape(2, 3))) == """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = pure_callback[
      callback=_FlatCallback(callback_func=<function np_sin at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
      result_avals=(ShapedArray(float32[2,3]),)
      sharding=None
      vmap_method=expand_dims
    ] a
  in (b,) }"""
    np.testing.assert_allclose(jax.vmap(fcb)(jnp.arange(6.).reshape(2, 3)),
                               [[0., 0.841471, 0.9092974], [0.14112, -0.7568025, -0.9589243]], rtol=1e-6)


def test_pytree_args_and_results():
    def cb(d, *, scale):
        return {"a": np.asarray(d["x"]) * scale, "b": (np.asarray(d["y"]) + 1, np.int32(3))}
    shapes = {"a": jax.ShapeDtypeStruct((2,), jnp.float32),
              "b": (jax.ShapeDtypeStruct((2,), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32))}
    f = jax.jit(lambda x: jax.pure_callback(cb, shapes, {"x": x, "y": x}, scale=2.0))
    out = f(jnp.arange(2.0))
    np.testing.assert_array_equal(np.asarray(out["a"]), [0.0, 2.0])
    np.testing.assert_array_equal(np.asarray(out["b"][0]), [1.0, 2.0])
    assert int(out["b"][1]) == 3 and out["b"][1].dtype == np.int32


def test_unused_pure_callback_is_removed_io_callback_is_not():
    calls = []
    def cb(x):
        calls.append("pure")
        return x
    def io(x):
        calls.append("io")
        return x
    def f(x):
        _pc(cb, x)
        io_callback(io, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return x + 1
    jax.jit(f)(jnp.float32(1)).block_until_ready()
    jax.effects_barrier()
    assert calls == ["io"]


def test_io_callback_in_loop_in_order():
    seen = []
    def body(i, c):
        io_callback(lambda i: seen.append(int(i)), None, i, ordered=True)
        return c + i
    out = jax.jit(lambda: jax.lax.fori_loop(0, 4, body, 0))()
    assert int(out) == 6
    jax.effects_barrier()
    assert seen == [0, 1, 2, 3]


def test_callback_results_feed_the_program():
    def f(x):
        y = io_callback(lambda v: np.asarray(v) * 3, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return jnp.sum(y) + 1
    assert float(jax.jit(f)(jnp.arange(4.0))) == 19.0


# --- vmap: JAX's docstring example (shapes the callback sees, recorded from JAX 0.10.2)

def _cb_shapes(x, y):
    print(jnp.shape(x), jnp.shape(y))
    return np.asarray(x) + np.asarray(y)


def _fun(x, y, *, vmap_method):
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    dtype = jnp.result_type(x, y)
    return jax.pure_callback(_cb_shapes, jax.ShapeDtypeStruct(shape, dtype), x, y, vmap_method=vmap_method)


@pytest.mark.parametrize("method,lines", [
    ("expand_dims", ["(4,) (1,)"]),
    ("broadcast_all", ["(4,) (4,)"]),
    ("legacy_vectorized", ["(4,) ()"]),
    ("sequential", ["() ()"] * 4),
])
def test_vmap_methods(method, lines, capsys):
    out = jax.vmap(partial(_fun, vmap_method=method), in_axes=(0, None))(jnp.arange(4), 1.0)
    jax.effects_barrier()
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0, 4.0])
    assert out.dtype == np.float32
    assert capsys.readouterr().out.splitlines() == lines


def test_vmap_under_jit_sequential_and_expand_dims():
    x = jnp.arange(6.0).reshape(2, 3)
    want = np.sin(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    for m in ("sequential", "expand_dims"):
        got = jax.jit(jax.vmap(lambda v: _pc(_sin, v, vmap_method=m)))(x)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_vmap_without_method():
    with pytest.raises(NotImplementedError, match="vmap is only supported for the pure_callback primitive when "
                       "vmap_method is one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', "
                       "or 'legacy_vectorized'. Got vmap_method=None."):
        jax.vmap(lambda v: _pc(_sin, v))(jnp.ones(3))


def test_io_callback_vmap():
    got = jax.vmap(lambda x: io_callback(lambda v: np.asarray(v) * 3, jax.ShapeDtypeStruct((), jnp.float32), x))(
        jnp.arange(3.0))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 3.0, 6.0])
    with pytest.raises(ValueError, match="^Cannot `vmap` ordered IO callback.$"):
        jax.vmap(lambda x: io_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), x, ordered=True))(jnp.ones(2))


# --- differentiation: refused, and the custom_jvp pattern of JAX's guide

def test_grad_refused():
    with pytest.raises(ValueError, match=r"^Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                       r"callbacks while taking gradients.$"):
        jax.grad(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), x))(1.0)
    with pytest.raises(ValueError, match="^IO callbacks do not support JVP.$"):
        jax.grad(lambda x: io_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), x))(1.0)


@jax.custom_jvp
def _np_sin(x):
    return jax.pure_callback(_sin, jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), x,
                             vmap_method="sequential")


@_np_sin.defjvp
def _np_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    cos = jax.pure_callback(lambda v: np.cos(np.asarray(v)), jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), x,
                            vmap_method="sequential")
    return _np_sin(x), cos * t


def test_custom_jvp_around_callback():
    xs = np.linspace(-1, 2, 5).astype(np.float32)
    np.testing.assert_allclose(float(jax.grad(_np_sin)(0.5)), np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(_np_sin))(xs)), np.cos(xs), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(jax.grad(_np_sin)))(xs)), np.cos(xs), rtol=1e-6)


# --- result checks and errors (JAX 0.10.2's texts)

def test_result_checks():
    with pytest.raises(RuntimeError, match=r"^Incorrect output shape for return value #0: Expected: \(3,\), "
                       r"Actual: \(4,\)$"):
        jax.jit(lambda x: _pc(lambda v: np.zeros(4, np.float32), x))(jnp.arange(3.0)).block_until_ready()
    with pytest.raises(RuntimeError, match="^Incorrect output dtype for return value #0: Expected: float32, "
                       "Actual: int32$"):
        jax.pure_callback(lambda x: np.zeros(3, np.int32), jax.ShapeDtypeStruct((3,), jnp.float32), 1.0)
    with pytest.raises(RuntimeError, match="^Mismatched number of outputs from callback. Expected: 1, Actual: 2$"):
        jax.pure_callback(lambda x: (x, x), jax.ShapeDtypeStruct((), jnp.float32), 1.0)
    # float64 results are narrowed when x64 is off, as JAX canonicalizes them
    out = jax.jit(lambda x: _pc(lambda v: np.zeros(3, np.float64) + 1, x))(jnp.arange(3.0))
    assert out.dtype == np.float32 and np.asarray(out).tolist() == [1.0, 1.0, 1.0]


def test_argument_checks():
    with pytest.raises(ValueError, match=r"^result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` "
                       r"is disabled$"):
        jax.pure_callback(lambda x: x, np.zeros(3), 1.0)
    with pytest.raises(ValueError, match=r"^vmap_method must be on of the allowed methods \['sequential', "
                       r"'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized', None\], but got: "
                       r"bogus$"):
        jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), 1.0, vmap_method="bogus")


class _Boom(KeyError):
    pass


def _raise(x):
    raise _Boom("boom")


def test_exception_keeps_its_class():
    # JAX wraps it in JaxRuntimeError; cranax re-raises the callback's own exception (issue 18 asks for it).
    with pytest.raises(_Boom):
        jax.pure_callback(_raise, jax.ShapeDtypeStruct((3,), jnp.float32), jnp.arange(3.0))
    f = jax.jit(lambda x: _pc(_raise, x))
    with pytest.raises(_Boom):
        f(jnp.arange(3.0)).block_until_ready()
    # the program still works after a failed call
    g = jax.jit(lambda x: _pc(_sin, x))
    np.testing.assert_allclose(np.asarray(g(jnp.arange(3.0))), np.sin(np.arange(3.0)), rtol=1e-6)


def test_exception_inside_loop_body():
    def body(i, c):
        return c + jax.pure_callback(lambda i: (_ for _ in ()).throw(ZeroDivisionError("in loop")) if int(i) == 2 else
                                     np.float32(1), jax.ShapeDtypeStruct((), jnp.float32), i)
    with pytest.raises(ZeroDivisionError, match="in loop"):
        jax.jit(lambda: jax.lax.fori_loop(0, 4, body, 0.0))().block_until_ready()


def test_gpu_runs_callbacks_on_the_host():
    gpus = [d for d in jax.devices() if d.platform != "cpu"]
    if not gpus:
        pytest.skip("no GPU adapter")
    x = jax.device_put(jnp.arange(4.0), gpus[0])
    def f(x):
        z = _pc(lambda v: np.asarray(v) * 10, jnp.sin(x))
        return jax.lax.fori_loop(0, 2, lambda i, c: c + z, z)
    out = jax.jit(f)(x)
    np.testing.assert_allclose(np.asarray(out), 30 * np.sin(np.arange(4.0, dtype=np.float32)), rtol=1e-5)


def test_callback_may_call_cranax_while_the_stream_is_busy(capsys):
    # The program is queued (the stream is busy first), so its callback runs on the stream's thread; the
    # cranax work the callback dispatches runs there at once instead of waiting behind the running program.
    def cb(x):
        print("sum", jnp.sum(x), jax.jit(lambda v: v * 2)(x))
        jax.effects_barrier()   # inside a callback: nothing before it is left to wait for

    def f(x):
        def body(i, c):
            jax.debug.callback(cb, c[:3])
            return c + 1.0
        return jax.lax.fori_loop(0, 2, body, x)

    jax._core._stream_sleep(100)
    out = jax.jit(f)(jnp.ones(100000))
    jax.effects_barrier()
    assert float(out[0]) == 3.0
    assert capsys.readouterr().out.splitlines() == ["sum 3.0 [2. 2. 2.]", "sum 6.0 [4. 4. 4.]"]
