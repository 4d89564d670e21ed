"""A jitted write of a ``jax.Ref`` lands in the ref's buffer with no copy, as XLA's aliasing of the ref's input
and output buffers does: the kernel computing the new value writes it there (``Plan::write_into_inputs``,
``backend/cpu/exec.rs::run_into``), where it reads the old value only at the point it writes and nothing
reads the old value after it; otherwise the new value goes to a fresh buffer and is copied into the ref's
(``runtime/ref_buffer.rs::write_into``). The counters (``_core._ref_copies``: copies into a ref's buffer,
copies off it, kernel outputs written into an input) show which happened; the values are NumPy's."""

import numpy as np

import cranax as jax
import cranax.numpy as jnp
from cranax import _core, lax


def counts():
    return _core._ref_copies()


def delta(before):
    """The counters' growth since ``before`` (read after the work counted has been waited for)."""
    after = counts()
    return tuple(a - b for a, b in zip(after, before))


def val(a):
    return np.asarray(a)


def test_a_jitted_increment_writes_into_the_ref_with_no_copy():
    for n in (3, 1000, 1_000_003):
        r = jax.new_ref(jnp.zeros(n, jnp.float32))
        p0 = r.unsafe_buffer_pointer()

        @jax.jit
        def inc(q):
            q[...] += 1.0
        inc(r)   # compile
        jax.block_until_ready(r[...])
        c = counts()
        for _ in range(5):
            inc(r)
        got = val(r[...])
        writes, _, aliased = delta(c)
        assert (writes, aliased) == (0, 5), (n, writes, aliased)
        assert r.unsafe_buffer_pointer() == p0
        np.testing.assert_array_equal(got, np.full(n, 6, np.float32))


def test_closed_over_ref_and_strip_mode_math_in_place():
    n = 100_003   # odd: vector tails; big: threads and strip-mode block routines
    x = np.linspace(-3, 3, n, dtype=np.float32)
    r = jax.new_ref(jnp.asarray(x))
    want = val(jax.jit(lambda v: jnp.sin(jnp.exp(v) * 0.5))(jnp.asarray(x)))

    @jax.jit
    def f():
        r[...] = jnp.sin(jnp.exp(r[...]) * 0.5)
    c = counts()
    f()
    got = val(r[...])
    writes, _, aliased = delta(c)
    np.testing.assert_array_equal(got, want)
    assert (writes, aliased) == (0, 1)


def test_a_second_output_reading_the_old_value_in_the_same_kernel():
    n = 50_001
    x = np.arange(n, dtype=np.float32) / 7
    r = jax.new_ref(jnp.asarray(x))

    @jax.jit
    def f(q):
        old = q[...]
        q[...] = jnp.tanh(old) * 2
        return jnp.exp(-old) + 1   # reads the old value at each point, beside the write
    out = f(r)
    np.testing.assert_allclose(val(out), np.exp(-x) + 1, rtol=2e-6)
    np.testing.assert_allclose(val(r[...]), np.tanh(x) * 2, rtol=2e-6, atol=1e-6)


def test_returning_the_old_value_keeps_the_copy():
    r = jax.new_ref(jnp.arange(4.))

    @jax.jit
    def f(q):
        old = q[...]
        q[...] = old * 2
        return old
    c = counts()
    old = f(r)
    assert val(old).tolist() == [0., 1., 2., 3.] and val(r[...]).tolist() == [0., 2., 4., 6.]
    writes, _, aliased = delta(c)
    assert aliased == 0 and writes == 1   # the old value is an output: the new one is copied in
    f(r)
    assert val(old).tolist() == [0., 1., 2., 3.] and val(r[...]).tolist() == [0., 4., 8., 12.]


def test_reads_before_the_write_in_the_same_program():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    r = jax.new_ref(jnp.asarray(x))

    @jax.jit
    def f(q):
        s = q[...].sum(axis=1)          # a reduction of the old value
        m = q[...] @ jnp.ones((4, 2))   # a product of the old value
        q[...] = q[...] + 1
        return s, m
    s, m = f(r)
    assert val(s).tolist() == x.sum(1).tolist() and val(m).tolist() == (x @ np.ones((4, 2))).tolist()
    assert val(r[...]).tolist() == (x + 1).tolist()
    s, m = f(r)
    assert val(s).tolist() == (x + 1).sum(1).tolist() and val(r[...]).tolist() == (x + 2).tolist()


def test_reads_at_other_points_are_never_written_over():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    cases = [
        (lambda v: v.T, lambda a: a.T),
        (lambda v: v[::-1], lambda a: a[::-1]),
        (lambda v: jnp.roll(v, 1, axis=1), lambda a: np.roll(a, 1, axis=1)),
        (lambda v: v + v[0], lambda a: a + a[0]),     # a broadcast row of the old value
        (lambda v: v - v.sum(), lambda a: a - a.sum()),
        (lambda v: v.reshape(2, 8)[:, ::-1].reshape(4, 4), lambda a: a.reshape(2, 8)[:, ::-1].reshape(4, 4)),
        (lambda v: jnp.take(v, jnp.array([3, 2, 1, 0]), axis=0) * 2, lambda a: a[[3, 2, 1, 0]] * 2),
        (lambda v: jnp.cumsum(v, axis=1), lambda a: np.cumsum(a, axis=1)),
    ]
    for fn, ref_fn in cases:
        r = jax.new_ref(jnp.asarray(x))

        @jax.jit
        def f(q):
            q[...] = fn(q[...])
        f(r)
        np.testing.assert_array_equal(val(r[...]), ref_fn(x))
        f(r)
        np.testing.assert_array_equal(val(r[...]), ref_fn(ref_fn(x)))


def test_two_refs_sharing_nothing_and_swapped():
    a = jax.new_ref(jnp.arange(5.))
    b = jax.new_ref(jnp.ones(5))

    @jax.jit
    def f(p, q):
        p[...] = p[...] * 2 + q[...]
        q[...] = q[...] - p[...]
    c = counts()
    f(a, b)
    assert val(a[...]).tolist() == [1., 3., 5., 7., 9.] and val(b[...]).tolist() == [0., -2., -4., -6., -8.]
    writes, _, aliased = delta(c)
    assert (writes, aliased) == (0, 2)

    @jax.jit
    def swap(p, q):
        p[...], q[...] = q[...], p[...]
    pa, pb = a.unsafe_buffer_pointer(), b.unsafe_buffer_pointer()
    swap(a, b)
    assert val(a[...]).tolist() == [0., -2., -4., -6., -8.] and val(b[...]).tolist() == [1., 3., 5., 7., 9.]
    assert (a.unsafe_buffer_pointer(), b.unsafe_buffer_pointer()) == (pa, pb)


def test_a_ref_read_and_written_in_a_loop():
    r = jax.new_ref(jnp.zeros(6))

    @jax.jit
    def f(q):
        def body(i, c):
            q[...] = q[...] * 0.5 + i
            return c + q[...].sum()
        return lax.fori_loop(0, 4, body, 0.)
    s = f(r)
    v, tot = np.zeros(6, np.float32), 0.
    for i in range(4):
        v = v * 0.5 + i
        tot += v.sum()
    np.testing.assert_allclose(val(r[...]), v)
    np.testing.assert_allclose(float(s), tot)
    p0 = r.unsafe_buffer_pointer()
    for _ in range(3):   # a Python loop of jitted writes
        f(r)
    assert r.unsafe_buffer_pointer() == p0
    w = v
    for _ in range(3):
        for i in range(4):
            w = w * 0.5 + i
    np.testing.assert_allclose(val(r[...]), w)


def test_vmap_grad_and_eager_writes():
    r = jax.new_ref(jnp.arange(6.).reshape(2, 3))

    def add(q, x):
        q[...] += x
    jax.vmap(jax.jit(add))(r, jnp.ones((2, 3)))
    assert val(r[...]).tolist() == [[1., 2., 3.], [4., 5., 6.]]
    s = jax.new_ref(jnp.zeros(3))

    def loss(x):
        s[...] = lax.stop_gradient(x * 3)
        return (x ** 2).sum()
    g = jax.jit(jax.grad(loss))(jnp.arange(3.))
    assert val(g).tolist() == [0., 2., 4.] and val(s[...]).tolist() == [0., 3., 6.]
    s[...] = jnp.ones(3)   # eager writes still copy into the buffer
    s[1] = 7.
    assert val(s[...]).tolist() == [1., 7., 1.]


def test_values_read_before_a_write_stay_as_read():
    r = jax.new_ref(jnp.arange(3.))
    before = r[...]
    frozen = jax.ref.freeze(jax.new_ref(jnp.arange(3.)))

    @jax.jit
    def inc(q):
        q[...] += 10.
    inc(r)
    out = jax.jit(lambda q: q[...])(r)   # a jit returning the ref's value: detached from its buffer
    inc(r)
    assert val(before).tolist() == [0., 1., 2.] and val(out).tolist() == [10., 11., 12.]
    assert val(r[...]).tolist() == [20., 21., 22.] and val(frozen).tolist() == [0., 1., 2.]


def test_a_callback_keeps_the_value_it_was_given():
    """A debug callback handed a ref's value (the ref's own buffer, zero-copy) and keeping it: the program's
    later write into the ref must not change what the callback holds (JAX 0.10.2 prints
    [[0, 1, 2, 3], [1, 2, 3, 4]] and the ref [2, 3, 4, 5])."""
    kept = []
    r = jax.new_ref(jnp.arange(4.0))

    @jax.jit
    def f():
        jax.debug.callback(lambda v: kept.append(v), r[...])
        r[...] = r[...] + 1

    f()
    f()
    assert [np.asarray(k).tolist() for k in kept] == [[0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]]
    assert np.asarray(r[...]).tolist() == [2.0, 3.0, 4.0, 5.0]
