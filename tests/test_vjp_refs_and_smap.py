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
