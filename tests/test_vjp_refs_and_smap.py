"""``jax.ad`` (``jax.vjp(...)[1].with_refs``: where each input's cotangent goes) and ``jax.smap`` (one-axis
``shard_map`` described by axes). Values and texts recorded from JAX 0.10.2 running the same code (smap under a
one-device mesh with explicit axes, which JAX requires for its sharding checks)."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp


def test_vjp_with_refs():
    f = lambda x, y: jnp.sin(x) * y   # noqa: E731
    _, f_vjp = jax.vjp(f, 1.0, 2.0)
    r = jax.new_ref(jnp.float32(10.))
    assert f_vjp.with_refs(jax.ad.DontWant(), r)(1.0) == (jax.ad.DidntWant(), jax.ad.GradRef())
    np.testing.assert_allclose(float(r[...]), 10.841471, rtol=1e-6)   # the cotangent was added into the ref
    gx, none = f_vjp.with_refs(jax.ad.GradValue(), jax.ad.DontWant())(1.0)
    assert none == jax.ad.DidntWant()
    assert repr(gx) == "Array(1.0806046, dtype=float32, weak_type=True)"
    assert repr(f_vjp.with_refs()(1.0)) == ("(Array(1.0806046, dtype=float32, weak_type=True), "
                                            "Array(0.84147096, dtype=float32, weak_type=True))")
    r2 = jax.new_ref(jnp.zeros(3))
    _, g = jax.vjp(lambda d: d["a"] * 2., {"a": jnp.ones(3)})
    assert g.with_refs({"a": r2})(jnp.arange(3.)) == ({"a": jax.ad.GradRef()},)
    assert repr(r2) == "Ref([0., 2., 4.], dtype=float32)"
    with pytest.raises(ValueError, match=r"Invalid shape for `addupdate`. Ref shape: \(2,\)"):
        f_vjp.with_refs(jax.new_ref(jnp.zeros(2)), jax.ad.DontWant())(1.0)
    with pytest.raises(Exception):   # JAX raises a bare Exception for a targets tree of another structure
        f_vjp.with_refs(jax.ad.DontWant())(1.0)
    # the markers: DontWant/GradValue are leaves, GradRef/DidntWant empty pytrees
    assert (repr(jax.ad.DontWant()), repr(jax.ad.GradRef()), repr(jax.ad.DidntWant())) == (
        "DontWant()", "GradRef()", "DidntWant()")
    assert jax.tree.leaves(jax.ad.DidntWant()) == [] and jax.tree.leaves(jax.ad.DontWant()) == [jax.ad.DontWant()]


def test_vjp_called_with_two_arguments():
    _, f_vjp = jax.vjp(lambda x: (x, x), 1.0)
    with pytest.raises(TypeError) as e:
        f_vjp(2.0, 2.0)
    assert str(e.value).startswith("\nThe function returned by `jax.vjp` applied to <lambda> was called with 2 "
                                   "arguments,\nbut functions returned by `jax.vjp` must be called with a single "
                                   "argument\n")
    assert f_vjp((2.0, 3.0))[0] == 5.0


def test_vjp_pullback_is_a_pytree():
    # JAX 0.10.2: the pullback is a pytree whose leaves are residuals (here cos(x), f32[3]); it passes into
    # and out of jit and through tree_map, keeping its type and values.
    _, f_vjp = jax.vjp(lambda x: jnp.sin(x) * 2, jnp.arange(3.0))
    leaves = jax.tree.leaves(f_vjp)
    assert [leaf.shape for leaf in leaves][:1] == [(3,)]
    want = 2 * np.cos(np.arange(3.0, dtype=np.float32))   # JAX: [2., 1.0806046, -0.8322937]
    (out,) = jax.jit(lambda f, c: f(c))(f_vjp, jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
    g = jax.tree.map(lambda leaf: leaf, f_vjp)
    assert type(g) is type(f_vjp)
    np.testing.assert_allclose(np.asarray(g(jnp.ones(3))[0]), want, rtol=1e-6)
    # the leaves are what the backward pass reads: scaling them scales the cotangents
    doubled = jax.tree.map(lambda leaf: leaf * 2, f_vjp)
    np.testing.assert_allclose(np.asarray(doubled(jnp.ones(3))[0]), 2 * want, rtol=1e-6)
    # returned from jit: JAX gives [1., 0.5403023, -0.41614684]
    h = jax.jit(lambda x: jax.vjp(jnp.sin, x)[1])(jnp.arange(3.0))
    assert type(h).__name__ == "VJP"
    np.testing.assert_allclose(np.asarray(h(jnp.ones(3))[0]), [1., 0.5403023, -0.41614684], rtol=1e-6)
    assert h.with_refs()(jnp.ones(3))[0].shape == (3,)


def test_smap_on_a_one_device_mesh():
    with jax.set_mesh(jax.make_mesh((1,), ("i",))):
        f = jax.smap(lambda x, y: x * y + jax.lax.axis_index("i"), in_axes=(0, None), out_axes=0, axis_name="i")
        assert repr(f(jnp.arange(4.), 2.)) == "Array([0., 2., 4., 6.], dtype=float32)"
        g = jax.smap(lambda x: jax.lax.psum(x.sum(), "i"), in_axes=1, out_axes=None, axis_name="i")
        assert repr(g(jnp.ones((2, 3)))) == "Array(6., dtype=float32)"

        @jax.smap(in_axes=0, out_axes=1, axis_name="i")
        def h(x):
            return x * 3
        assert repr(h(jnp.ones((2, 3)))) == ("Array([[3., 3., 3.],\n       [3., 3., 3.]], dtype=float32)")
        k = jax.smap(lambda x: x + 1, out_axes=0, axis_name="i")   # in_axes inferred
        assert repr(k(jnp.arange(4.))) == "Array([1., 2., 3., 4.], dtype=float32)"
        assert repr(k(jnp.arange(4.))) == "Array([1., 2., 3., 4.], dtype=float32)"   # reused program


def test_smap_errors():
    with jax.set_mesh(jax.make_mesh((1,), ("i",))):
        for kw, text in [
                (dict(in_axes=0, out_axes=0, axis_name=("i",)),
                 "smap axis_name should be a `str` or a `Hashable`, but got ('i',)"),
                (dict(in_axes=[0], out_axes=0, axis_name="i"),
                 "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries corresponding to the "
                 "positional arguments passed to the function, but got [0]."),
                (dict(in_axes=(0.5,), out_axes=0, axis_name="i"),
                 "smap in_axes must be an int, None, jax.sharding.Infer, or (nested) container with those types as "
                 "leaves, but got (0.5,)."),
                (dict(in_axes=0, out_axes="x", axis_name="i"),
                 "smap out_axes must be an int, None, or (nested) container with those types as leaves, but got x.")]:
            with pytest.raises(TypeError) as e:
                jax.smap(lambda x: x, **kw)
            assert str(e.value) == text
    with pytest.raises(ValueError) as e:
        jax.smap(lambda x: x, in_axes=0, out_axes=0, axis_name="i")(jnp.ones(2))
    assert str(e.value) == ("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh "
                            "context")


_TAKE_VJP_JAXPR = """\
{ lambda a:f32[10] b:Ref{f32[10]}; . let
    _:f32[] c:i32[] = jit[
      name=take
      jaxpr={ lambda ; a:f32[10] d:i32[]. let
          e:bool[] = lt d 0:i32[]
          f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d
          g:i32[] = add f 10:i32[]
          c:i32[] = select_n e d g
          h:f32[1] = dynamic_slice[slice_sizes=(1,)] a c
          _:f32[] = squeeze[dimensions=(0,)] h
        in (_, c) }
    ] a 3:i32[]
    jit[
      name=take
      jaxpr={ lambda ; c:i32[] b:Ref{f32[10]} i:f32[]. let
          j:f32[1] = broadcast_in_dim i
          b[c:c+1] += j
        in () }
    ] c b 1.0:f32[]
  in () }"""


def test_vjp_with_refs_transposes_a_jit_into_the_ref():
    # the refs guide: a jitted function's transpose takes the cotangent ref and adds only the slice it read
    # (``b[c:c+1] += j``); text and values recorded from JAX 0.10.2
    @jax.jit
    def take(x, i):
        return x[i]

    x = jnp.arange(10.)
    grad_ref = jax.new_ref(jnp.zeros(10))
    for i in [3, 5, 3]:
        _, take_vjp = jax.vjp(take, x, i)
        assert take_vjp.with_refs(grad_ref, jax.ad.GradValue())(1.0)[0] == jax.ad.GradRef()
    assert repr(grad_ref) == "Ref([0., 0., 0., 2., 0., 1., 0., 0., 0., 0.], dtype=float32)"

    @jax.make_jaxpr
    def take_vjp_jaxpr():
        _, take_vjp = jax.vjp(take, x, 3)
        take_vjp.with_refs(grad_ref, jax.ad.GradValue())(1.0)
    assert str(take_vjp_jaxpr()) == _TAKE_VJP_JAXPR
    assert repr(grad_ref) == "Ref([0., 0., 0., 2., 0., 1., 0., 0., 0., 0.], dtype=float32)"   # only staged

    # refs and values mixed, DontWant dropped; a weakly typed cotangent ref stays weak (JAX 0.10.2's reprs)
    @jax.jit
    def take2(x, i, y):
        return x[i] * y + jnp.sin(y)
    r, r2 = jax.new_ref(jnp.ones(10)), jax.new_ref(0.5)
    _, vjp = jax.vjp(take2, x, 3, 2.0)
    out = vjp.with_refs(r, jax.ad.GradValue(), r2)(1.0)
    assert (out[0], out[2], out[1].dtype) == (jax.ad.GradRef(), jax.ad.GradRef(), jax.dtypes.float0)
    assert repr(r) == "Ref([1., 1., 1., 3., 1., 1., 1., 1., 1., 1.], dtype=float32)"
    assert repr(r2) == "Ref(3.0838532, dtype=float32, weak_type=True)"
    out = vjp.with_refs(jax.ad.DontWant(), jax.ad.GradValue(), r2)(2.0)
    assert (out[0], out[2]) == (jax.ad.DidntWant(), jax.ad.GradRef())
    assert repr(r2) == "Ref(8.251559, dtype=float32, weak_type=True)"
    text = str(jax.make_jaxpr(lambda: vjp.with_refs(r, jax.ad.GradValue(), jax.ad.DontWant())(1.0))())
    # JAX 0.10.2 keeps the unwanted input's equations (and prints the residuals as constvars): the ref's
    # window add and a call returning nothing are what both print
    assert "          h:f32[1] = broadcast_in_dim g\n          a[b:b+1] += h\n        in () }" in text


def test_vjp_with_refs_slices_add_their_window():
    # outside jit: a static slice's and a dynamic slice's cotangents are added at their windows only (JAX
    # 0.10.2 fails on both eagerly: its slice rule reads strides=None, its dynamic_slice discharge branches on
    # a tracer; NumPy oracle). A window that does not fit is clamped, as dynamic_slice clamps.
    x = np.arange(10, dtype=np.float32)

    def f(x, y):
        return (x[2:5] * y).sum() + (x[4:7] ** 2).sum() + jax.lax.dynamic_slice(x, (y.astype(int) + 6,), (3,)).sum()
    r = jax.new_ref(jnp.ones(10))
    _, vjp = jax.vjp(f, jnp.asarray(x), 3.0)
    assert vjp.with_refs(r, jax.ad.DontWant())(1.0) == (jax.ad.GradRef(), jax.ad.DidntWant())
    want = np.ones(10, np.float32)
    want[2:5] += 3.0
    want[4:7] += 2 * x[4:7]
    want[7:10] += 1.0   # start 9 clamped to 7
    np.testing.assert_array_equal(np.asarray(r[...]), want)
    text = str(jax.make_jaxpr(lambda: vjp.with_refs(r, jax.ad.DontWant())(1.0))())
    assert "a[2:5] += " in text and "a[4:7] += " in text and "a[7:] += " in text


def test_make_jaxpr_jit_taking_an_outer_ref():
    # an eager ref passed to a jit inside make_jaxpr is a Ref const passed in (JAX 0.10.2's text)
    r = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def f(ref, x):
        ref[...] += x
    assert str(jax.make_jaxpr(lambda: f(r, 1.0))()) == """\
{ lambda a:Ref{f32[3]}; . let
    jit[
      name=f
      jaxpr={ lambda ; a:Ref{f32[3]} b:f32[]. let
          c:f32[3] <- a[...]
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
          e:f32[3] = add c d
          f:f32[3], a[...] <- a[...], e
        in () }
    ] a 1.0:f32[]
  in () }"""
    assert repr(r) == "Ref([0., 0., 0.], dtype=float32)"
