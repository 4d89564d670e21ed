"""``jit(..., donate_argnums=/donate_argnames=)`` as JAX 0.10.2's (CPU): a donated array is deleted after the call
when an output of its shape and dtype takes its buffer, and any later use raises JAX's RuntimeError; one with no
such output is kept, with JAX's warning. cranax writes that output into the donated buffer where nothing else
holds it (the pointer stays, as JAX's), and never where a view or another array shares it. Texts and values
recorded from JAX 0.10.2."""

import warnings

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp


def fresh(n):
    return jnp.arange(float(n)) * 1.0   # computed by a program: a buffer of its own


def test_a_donated_array_is_deleted_and_its_buffer_reused():
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    x = fresh(3)
    x.block_until_ready()
    p = x.unsafe_buffer_pointer()
    y = f(x)
    assert x.is_deleted() and not y.is_deleted()
    assert np.asarray(y).tolist() == [1., 2., 3.]
    assert y.unsafe_buffer_pointer() == p   # JAX: True
    msg = "Array has been deleted with shape=float32[3]."
    with pytest.raises(RuntimeError) as e:
        print(x)
    assert str(e.value) == msg
    with pytest.raises(RuntimeError) as e:
        x + 1
    assert str(e.value) == msg
    with pytest.raises(RuntimeError) as e:
        jax.jit(lambda x: x, donate_argnums=0)(x)
    assert str(e.value) == msg


def test_delete():
    x = fresh(3)
    assert x.delete() is None and x.is_deleted()
    with pytest.raises(RuntimeError, match=r"^Array has been deleted with shape=float32\[3\]\.$"):
        np.asarray(x)


def test_no_output_to_take_it_keeps_the_array_with_jax_warning():
    g = jax.jit(lambda x: x.sum(), donate_argnums=0)
    x = fresh(3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = g(x)
    assert [str(m.message) for m in w] == [
        "Some donated buffers were not usable: float32[3].\n"
        "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation."]
    assert w[0].category is UserWarning
    assert not x.is_deleted() and float(s) == 3.0 and np.asarray(x).tolist() == [0., 1., 2.]
    g2 = jax.jit(lambda x, y: x.sum() + y.sum(), donate_argnums=(0, 1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g2(jnp.ones(3), jnp.ones((2, 2), jnp.int32))
    assert [str(m.message) for m in w] == [
        "Some donated buffers were not usable: float32[3], int32[2,2].\n"
        "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation."]


def test_several_donated_and_by_name():
    h = jax.jit(lambda x, y: (x * 2, y), donate_argnums=(0, 1))
    a, b = jnp.ones(3) * 1, jnp.zeros(3) * 1
    r = h(a, b)
    assert a.is_deleted() and b.is_deleted()
    assert [np.asarray(v).tolist() for v in r] == [[2., 2., 2.], [0., 0., 0.]]
    k = jax.jit(lambda x: x + 1, donate_argnames="x")
    x = fresh(3)
    assert np.asarray(k(x=x)).tolist() == [1., 2., 3.] and x.is_deleted()
    x = fresh(3)
    assert np.asarray(k(x)).tolist() == [1., 2., 3.] and x.is_deleted()
    ident = jax.jit(lambda x: x, donate_argnums=0)
    x = fresh(3)
    out = ident(x)
    assert x.is_deleted() and np.asarray(out).tolist() == [0., 1., 2.]


def test_a_view_or_another_holder_keeps_its_values():
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    x = fresh(4)
    v = x.reshape(2, 2)   # cranax's reshape shares x's storage
    y = f(x)
    assert x.is_deleted() and not v.is_deleted()
    assert np.asarray(v).tolist() == [[0., 1.], [2., 3.]] and np.asarray(y).tolist() == [1., 2., 3., 4.]
    x = fresh(4)
    same = jax.jit(lambda x: x)(x)   # an output sharing the input's buffer
    y = f(x)
    assert np.asarray(same).tolist() == [0., 1., 2., 3.] and np.asarray(y).tolist() == [1., 2., 3., 4.]
    x = fresh(4)
    host = np.asarray(x)
    y = f(x)
    assert host.tolist() == [0., 1., 2., 3.] and np.asarray(y).tolist() == [1., 2., 3., 4.]


def test_donation_errors():
    with pytest.raises(ValueError) as e:
        jax.jit(lambda x: x, donate_argnums=0, static_argnums=0)
    assert str(e.value) == ("static_argnames and donate_argnames cannot intersect. Argument names {'x'} appear in "
                            "both static_argnames and donate_argnames")
    x = fresh(3)
    with pytest.raises(jax.errors.JaxRuntimeError) as e:
        jax.jit(lambda x, y: x + y, donate_argnums=0)(x, x)
    assert str(e.value) == (
        "INVALID_ARGUMENT: Attempt to use a buffer that was previously donated in the same call to Execute() "
        "(flattened argument 1, replica 0, partition 0, first use: 0). Toy example for this bug: `f(donate(a), a)`.")


def test_a_training_loop_donating_its_state():
    @jax.jit
    def step(w, g):
        return w - 0.1 * g
    step_d = jax.jit(lambda w, g: w - 0.1 * g, donate_argnums=0)
    w0 = np.linspace(-1, 1, 10_001).astype(np.float32)
    g = jnp.asarray(np.cos(w0))
    a, b = jnp.asarray(w0) * 1, jnp.asarray(w0) * 1
    for _ in range(5):
        a = step(a, g)
        b = step_d(b, g)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_what_a_deleted_array_still_answers():
    x = fresh(3)
    x.delete()
    assert x.shape == (3,) and x.dtype == np.float32 and x.delete() is None
    msg = "Array has been deleted with shape=float32[3]."
    for fn in (lambda: repr(x), lambda: jnp.sin(x), lambda: float(x[0])):
        with pytest.raises(RuntimeError) as e:
            fn()
        assert str(e.value) == msg
    with pytest.raises(jax.errors.JaxRuntimeError) as e:
        x.block_until_ready()
    assert str(e.value) == "INVALID_ARGUMENT: BlockHostUntilReady() called on deleted or donated buffer"
    with pytest.raises(jax.errors.JaxRuntimeError) as e:
        x.unsafe_buffer_pointer()
    assert str(e.value) == "INVALID_ARGUMENT: UnsafeBufferPointer( called on deleted or donated buffer"


def test_an_array_sharing_the_donated_device_array_keeps_its_values():
    # cranax-internal: two Arrays over one DeviceArray object (as a no-op conversion may give): the donated
    # one's buffer must not be written into while the other can still read it
    from cranax.array import Array
    f = jax.jit(lambda x: x + 1, donate_argnums=0)
    x = fresh(5)
    twin = Array._from_buffer(x._buf, x.aval)
    p = x.unsafe_buffer_pointer()
    y = f(x)
    assert x.is_deleted() and np.asarray(twin).tolist() == [0., 1., 2., 3., 4.]
    assert np.asarray(y).tolist() == [1., 2., 3., 4., 5.] and y.unsafe_buffer_pointer() != p
