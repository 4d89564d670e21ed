"""A ``jax.Ref`` keeps one buffer for its life, as JAX's: writes (eager, jitted, in loops, under vmap and
grad) land in it, so ``unsafe_buffer_pointer()`` stays put (JAX's array-refs guide, cell 28, and the jit
guide, cell 20), and the buffer stays private: a value given to ``new_ref``, a value read from the ref and a
call's output are never changed by later writes. Expected values recorded from JAX 0.10.2 (CPU)."""

import numpy as np

import cranax as jax
import cranax.numpy as jnp


def ptr(a):
    return a.unsafe_buffer_pointer()


def val(a):
    return np.asarray(a).tolist()


def test_guide_sin_inplace_keeps_the_pointer():
    @jax.jit
    def sin_inplace(x_ref):
        x_ref[...] = jnp.sin(x_ref[...])

    x_ref = jax.new_ref(jnp.arange(3.))
    p0 = ptr(x_ref)
    sin_inplace(x_ref)
    assert ptr(x_ref) == p0
    assert repr(x_ref) == "Ref([0.        , 0.84147096, 0.9092974 ], dtype=float32)"


def test_every_write_keeps_the_pointer_and_nothing_leaks():
    x = jnp.arange(3.)
    r = jax.new_ref(x)
    assert ptr(r) != ptr(x)   # new_ref copies (JAX: True)
    a = r[...]
    assert ptr(a) != ptr(r)   # an eager read is a buffer of its own (JAX: True)
    r0 = ptr(r)

    @jax.jit
    def f(x_ref):
        x_ref[...] = jnp.sin(x_ref[...])
    f(r)
    assert ptr(r) == r0 and val(x) == [0., 1., 2.] and val(a) == [0., 1., 2.]
    r[...] = jnp.ones(3)
    assert ptr(r) == r0
    r[1] = 5.
    assert ptr(r) == r0 and val(r[...]) == [1., 5., 1.]
    jax.ref.addupdate(r, ..., jnp.ones(3))
    assert ptr(r) == r0 and val(r[...]) == [2., 6., 2.]

    @jax.jit
    def g():
        r[...] = r[...] * 2
    g()
    assert ptr(r) == r0 and val(r[...]) == [4., 12., 4.]
    jax.jit(lambda q: q[...] + 1)(r)
    assert ptr(r) == r0
    b = r[...]
    f(r)
    assert ptr(r) == r0 and val(b) == [4., 12., 4.]


def test_weak_int_and_swap_of_two_refs():
    w = jax.new_ref(1.0)
    w0 = ptr(w)

    @jax.jit
    def k(w):
        w[...] += 1.
    k(w)
    assert ptr(w) == w0 and repr(w) == "Ref(2., dtype=float32)"
    ir = jax.new_ref(jnp.arange(4))
    i0 = ptr(ir)
    jax.jit(lambda q: q.__setitem__(..., jnp.flip(q[...])))(ir)
    assert ptr(ir) == i0 and repr(ir) == "Ref([3, 2, 1, 0], dtype=int32)"
    r1, r2 = jax.new_ref(jnp.zeros(3)), jax.new_ref(jnp.ones(3))
    p1, p2 = ptr(r1), ptr(r2)

    @jax.jit
    def sw(a, b):
        t = a[...]
        a[...] = b[...]
        b[...] = t
    sw(r1, r2)
    assert (ptr(r1), ptr(r2)) == (p1, p2)
    assert val(r1[...]) == [1., 1., 1.] and val(r2[...]) == [0., 0., 0.]


def test_a_jit_returning_the_ref_value_is_not_changed_by_later_writes():
    r = jax.new_ref(jnp.arange(4.))
    r0 = ptr(r)
    got = jax.jit(lambda q: q[...])(r)

    @jax.jit
    def inc(q):
        q[...] += 1.
    inc(r)
    assert (val(got), val(r[...]), ptr(r) == r0) == ([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], True)
    # swap's old value and a row read stay as they were
    old = jax.ref.swap(r, ..., jnp.full(4, 7.))
    inc(r)
    assert (val(old), val(r[...]), ptr(r) == r0) == ([1.0, 2.0, 3.0, 4.0], [8.0] * 4, True)
    r = jax.new_ref(jnp.zeros((2, 3)))
    r0 = ptr(r)
    jax.jit(lambda q, v: q.__setitem__((1, slice(None)), v))(r, jnp.array([1., 2., 3.]))
    assert (val(r[...]), ptr(r) == r0) == ([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]], True)
    row = r[1]
    jax.jit(lambda q: q.__setitem__(..., q[...] * 10))(r)
    assert (val(row), val(r[...]), ptr(r) == r0) == ([1.0, 2.0, 3.0], [[0.0, 0.0, 0.0], [10.0, 20.0, 30.0]], True)
    fz = jax.freeze(r)
    assert ptr(fz) != r0


def test_the_value_given_to_new_ref_is_unchanged():
    x = jnp.arange(3.)
    r = jax.new_ref(x)
    r[0] = 9.
    jax.jit(lambda q: q.__setitem__(..., q[...] + 1.))(r)
    assert (val(x), val(r[...])) == ([0.0, 1.0, 2.0], [10.0, 2.0, 3.0])


def test_loops_keep_the_pointer():
    r = jax.new_ref(jnp.zeros(3))
    r0 = ptr(r)

    def body(i, c):
        r[...] = r[...] + i
        return c + 1
    c = jax.lax.fori_loop(0, 4, body, 0)
    assert (int(c), val(r[...]), ptr(r) == r0) == (4, [6.0, 6.0, 6.0], True)
    r = jax.new_ref(jnp.ones(2))
    r0 = ptr(r)

    def sb(c, x):
        r[...] = r[...] * x
        return c, r[...]
    _, ys = jax.lax.scan(sb, 0., jnp.array([2., 3.]))
    assert (val(ys), val(r[...]), ptr(r) == r0) == ([[2.0, 2.0], [6.0, 6.0]], [6.0, 6.0], True)
    r = jax.new_ref(jnp.ones(2))
    r0 = ptr(r)

    def sb2(c, x):
        r[...] = r[...] * x
        return c, r[...]
    ys = jax.jit(lambda xs: jax.lax.scan(sb2, 0., xs)[1])(jnp.array([2., 3.]))
    assert (val(ys), val(r[...]), ptr(r) == r0) == ([[2.0, 2.0], [6.0, 6.0]], [6.0, 6.0], True)
    r = jax.new_ref(jnp.array(0.))
    r0 = ptr(r)

    def wb(i):
        r[...] += 2.
        return i + 1
    n = jax.jit(lambda: jax.lax.while_loop(lambda i: i < 3, wb, 0))()
    assert (int(n), float(r[...]), ptr(r) == r0) == (3, 6.0, True)


def test_vmap_and_grad_keep_the_pointer():
    vr = jax.new_ref(jnp.zeros((3, 2)))
    v0 = ptr(vr)
    jax.vmap(lambda q, v: q.__setitem__(..., v))(vr, jnp.ones((3, 2)))
    assert ptr(vr) == v0 and val(vr[...]) == [[1., 1.]] * 3
    jax.jit(jax.vmap(lambda q, v: q.__setitem__(..., v * 2)))(vr, jnp.ones((3, 2)))
    assert ptr(vr) == v0 and val(vr[...]) == [[2., 2.]] * 3
    r = jax.new_ref(jnp.arange(6.).reshape(3, 2))
    r0 = ptr(r)

    def vf(q):
        v = q[...]
        q[...] = v + 1
        return v
    vo = jax.vmap(vf)(r)
    assert (val(vo), val(r[...]), ptr(r) == r0) == (
        [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], True)
    gr = jax.new_ref(0.)
    g0 = ptr(gr)

    def loss(x):
        gr[...] += jax.lax.stop_gradient(x)
        return x ** 2
    assert float(jax.grad(loss)(3.)) == 6.0
    assert float(gr[...]) == 3.0 and ptr(gr) == g0
    jax.jit(jax.grad(loss))(3.)
    assert float(gr[...]) == 6.0 and ptr(gr) == g0


def test_complex_ref():
    r = jax.new_ref(jnp.array([1 + 2j, 3 - 1j], jnp.complex64))
    jax.jit(lambda q: q.__setitem__(..., q[...] * 1j))(r)
    assert val(r[...]) == [(-2 + 1j), (1 + 3j)]


def test_a_committed_value_is_never_written_through():
    y = jnp.arange(3.)
    x = jax.device_put(jnp.zeros(3), jax.devices()[0])   # committed: the ref rebinds it on writes
    r = jax.new_ref(x)
    r[...] = y   # rebinding to a copy of y
    r[...] = jnp.full(3, 5.)   # may land in the ref's buffer: never in y's or x's
    jax.jit(lambda q: q.__setitem__(..., q[...] + 1.))(r)
    assert val(y) == [0., 1., 2.] and val(x) == [0., 0., 0.] and val(r[...]) == [6., 6., 6.]
