"""Collectives over named axes (``vmap(..., axis_name=)``): values against NumPy and against JAX 0.10.2's
recorded outputs (written here), jvp/grad under and around the named vmap, nested names, jit/scan/cond
inside, one-device ``pmap``/``shard_map``, and JAX's errors."""
import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from cranax.sharding import Mesh, PartitionSpec as P

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)
Y = np.arange(32.0, dtype=np.float32).reshape(4, 4, 2)
Z = np.arange(64.0, dtype=np.float32).reshape(4, 2, 8)

# JAX 0.10.2's outputs for the programs in test_recorded (tests/.. gen script: the same lambdas under jax)
R_grad_psum = np.array([[0.0, 8.0, 16.0], [24.0, 32.0, 40.0], [48.0, 56.0, 64.0], [72.0, 80.0, 88.0]], np.float32)
R_grad_outer = np.array([[0.0, 8.0, 16.0], [24.0, 32.0, 40.0], [48.0, 56.0, 64.0], [72.0, 80.0, 88.0]], np.float32)
R_grad_pmean = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], np.float32)
R_grad_gather = np.array([[0.0, 8.0, 16.0], [24.0, 32.0, 40.0], [48.0, 56.0, 64.0], [72.0, 80.0, 88.0]], np.float32)
R_grad_ppermute = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]], np.float32)
R_grad_index = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 3.0, 3.0]], np.float32)
R_jvp = np.array([[36.0, 44.0, 52.0], [36.0, 44.0, 52.0], [36.0, 44.0, 52.0], [36.0, 44.0, 52.0]], np.float32)
R_a2a_tiled = np.array([[[0.0, 1.0], [8.0, 9.0], [16.0, 17.0], [24.0, 25.0], [32.0, 33.0], [40.0, 41.0], [48.0, 49.0], [56.0, 57.0]], [[2.0, 3.0], [10.0, 11.0], [18.0, 19.0], [26.0, 27.0], [34.0, 35.0], [42.0, 43.0], [50.0, 51.0], [58.0, 59.0]], [[4.0, 5.0], [12.0, 13.0], [20.0, 21.0], [28.0, 29.0], [36.0, 37.0], [44.0, 45.0], [52.0, 53.0], [60.0, 61.0]], [[6.0, 7.0], [14.0, 15.0], [22.0, 23.0], [30.0, 31.0], [38.0, 39.0], [46.0, 47.0], [54.0, 55.0], [62.0, 63.0]]], np.float32)
R_a2a_01 = np.array([[[0.0, 8.0, 16.0, 24.0], [1.0, 9.0, 17.0, 25.0]], [[2.0, 10.0, 18.0, 26.0], [3.0, 11.0, 19.0, 27.0]], [[4.0, 12.0, 20.0, 28.0], [5.0, 13.0, 21.0, 29.0]], [[6.0, 14.0, 22.0, 30.0], [7.0, 15.0, 23.0, 31.0]]], np.float32)
R_grad_scatter = np.array([[0.0, 2.0, 0.0, 6.0, 0.0, 10.0, 0.0, 14.0], [0.0, 18.0, 0.0, 22.0, 0.0, 26.0, 0.0, 30.0], [0.0, 34.0, 0.0, 38.0, 0.0, 42.0, 0.0, 46.0], [0.0, 50.0, 0.0, 54.0, 0.0, 58.0, 0.0, 62.0]], np.float32)
R_nested_gather = np.array([[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]], np.float32)
R_nested_index = np.array([[0, 1, 2], [3, 4, 5]], np.int32)
R_scan_psum = np.array([66.0, 66.0, 66.0, 66.0], np.float32)
R_cond_pmax = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [9.0, 10.0, 11.0], [9.0, 10.0, 11.0]], np.float32)

PERM = [(0, 1), (1, 2), (2, 3), (3, 0)]
RECORDED = {
    "grad_psum": (R_grad_psum, lambda: jax.vmap(jax.grad(lambda v: lax.psum(v ** 2, "i").sum()), axis_name="i")(X)),
    "grad_outer": (R_grad_outer, lambda: jax.grad(
        lambda x: jax.vmap(lambda v: lax.psum(v ** 2, "i"), axis_name="i")(x).sum())(X)),
    "grad_pmean": (R_grad_pmean, lambda: jax.vmap(jax.grad(lambda v: lax.pmean(v, "i").sum()), axis_name="i")(X)),
    "grad_gather": (R_grad_gather, lambda: jax.vmap(
        jax.grad(lambda v: (lax.all_gather(v, "i") ** 2).sum()), axis_name="i")(X)),
    "grad_ppermute": (R_grad_ppermute, lambda: jax.vmap(
        jax.grad(lambda v: (lax.ppermute(v, "i", PERM) * jnp.arange(3.0)).sum()), axis_name="i")(X)),
    "grad_index": (R_grad_index, lambda: jax.vmap(
        jax.grad(lambda v: (lax.axis_index("i") * v).sum()), axis_name="i")(X)),
    "jvp": (R_jvp, lambda: jax.jvp(jax.vmap(lambda v: lax.psum(v ** 2, "i"), axis_name="i"), (X,),
                                   (np.ones_like(X),))[1]),
    "a2a_tiled": (R_a2a_tiled, lambda: jax.vmap(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
                                                axis_name="i")(Z)),
    "a2a_01": (R_a2a_01, lambda: jax.vmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")(Y)),
    "grad_scatter": (R_grad_scatter, lambda: jax.vmap(jax.grad(
        lambda v: (lax.psum_scatter(v * v, "i", tiled=True) * jnp.arange(2.0)).sum()), axis_name="i")(
        np.arange(32.0, dtype=np.float32).reshape(4, 8))),
    "nested_gather": (R_nested_gather, lambda: jax.vmap(jax.vmap(lambda v: lax.all_gather(v, "i"), axis_name="j"),
                                                        axis_name="i")(np.arange(6.0, dtype=np.float32).reshape(2, 3))),
    "nested_index": (R_nested_index, lambda: jax.vmap(jax.vmap(lambda v: lax.axis_index(("i", "j")), axis_name="j"),
                                                      axis_name="i")(np.ones((2, 3), np.float32))),
    "scan_psum": (R_scan_psum, lambda: jax.vmap(
        lambda v: lax.scan(lambda c, e: (c + lax.psum(e, "i"), c), 0.0, v)[0], axis_name="i")(X)),
    "cond_pmax": (R_cond_pmax, lambda: jax.vmap(lambda v: lax.cond(v[0] > 4, lambda u: lax.pmax(u, "i"),
                                                                   lambda u: lax.pmin(u, "i"), v), axis_name="i")(X)),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded(name):
    want, run = RECORDED[name]
    got = np.asarray(run())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _vm(f, x=X, **kw):
    return np.asarray(jax.vmap(f, axis_name="i", **kw)(x))


def test_reductions_against_numpy():
    n = X.shape[0]
    np.testing.assert_array_equal(_vm(lambda v: lax.psum(v, "i")), np.broadcast_to(X.sum(0), X.shape))
    np.testing.assert_allclose(_vm(lambda v: lax.pmean(v, "i")), np.broadcast_to(X.mean(0), X.shape))
    np.testing.assert_array_equal(_vm(lambda v: lax.pmax(v, "i") - lax.pmin(v, "i")),
                                  np.broadcast_to(X.max(0) - X.min(0), X.shape))
    np.testing.assert_array_equal(_vm(lambda v: lax.axis_index("i")), np.arange(n, dtype=np.int32))
    assert jax.vmap(lambda v: lax.axis_size("i"), axis_name="i", out_axes=None)(X) == 4
    # out_axes=None: the psum is the same for every member
    np.testing.assert_array_equal(_vm(lambda v: lax.psum(v, "i"), out_axes=None), X.sum(0))
    # a value not mapped over the axis is multiplied by its size, keeping its weak type
    r = jax.vmap(lambda v: lax.psum(3.0, "i"), axis_name="i")(X)
    assert r.weak_type and r.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(r), np.full(4, 12.0, np.float32))
    # bool sums as int32; integers keep their dtype
    b = jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.array([True, False, True]))
    assert b.dtype == np.int32 and np.asarray(b).tolist() == [2, 2, 2]
    m = jax.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(np.array([[1, 5], [3, 2]], np.int32))
    assert np.asarray(m).tolist() == [[3, 5], [3, 5]]
    # pytrees
    t = jax.vmap(lambda a, b: lax.psum({"a": a, "b": b}, "i"), axis_name="i")(X, X[:, 0])
    np.testing.assert_array_equal(np.asarray(t["b"]), np.full(4, X[:, 0].sum(), np.float32))


def test_data_movement_against_numpy():
    g = _vm(lambda v: lax.all_gather(v, "i"))
    np.testing.assert_array_equal(g, np.broadcast_to(X, (4,) + X.shape))
    assert _vm(lambda v: lax.all_gather(v, "i", tiled=True)).shape == (4, 12)
    np.testing.assert_array_equal(_vm(lambda v: lax.all_gather(v, "i", axis=1)),
                                  np.broadcast_to(X.T, (4, 3, 4)))
    np.testing.assert_array_equal(_vm(lambda v: lax.ppermute(v, "i", PERM)), np.roll(X, 1, axis=0))
    # a member no pair sends to gets zeros (pmap's semantics)
    np.testing.assert_array_equal(_vm(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3)])),
                                  np.concatenate([np.zeros((1, 3), np.float32), X[:3]]))
    np.testing.assert_array_equal(_vm(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0])), X[::-1])
    s = _vm(lambda v: lax.psum_scatter(jnp.ones(4) * v[0], "i"))
    np.testing.assert_array_equal(s, np.full(4, X[:, 0].sum(), np.float32))
    st = _vm(lambda v: lax.psum_scatter(jnp.ones(8) * v[0], "i", tiled=True))
    np.testing.assert_array_equal(st, np.full((4, 2), X[:, 0].sum(), np.float32))
    # all_to_all over split = concat = 0 is the transpose of the (member, row) axes; pswapaxes is the same
    want = np.swapaxes(Y, 0, 1)
    np.testing.assert_array_equal(_vm(lambda v: lax.all_to_all(v, "i", 0, 0), Y), want)
    np.testing.assert_array_equal(_vm(lambda v: lax.pswapaxes(v, "i", 0), Y), want)
    np.testing.assert_array_equal(_vm(lambda v: lax.pbroadcast(v, "i", 2)), np.broadcast_to(X[2], X.shape))


def _dot(a, b):
    return float(np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64)))


@pytest.mark.parametrize("op", ["all_to_all", "ppermute", "psum_scatter", "all_gather", "pbroadcast"])
def test_transpose_is_the_adjoint(op):
    """<A x, c> == <x, A^T c>: the transposes (through vjp) are the adjoints of the batched maps."""
    fs = {
        "all_to_all": (lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), Z),
        "ppermute": (lambda v: lax.ppermute(v, "i", [(0, 2), (2, 1), (1, 0)]), X),
        "psum_scatter": (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=False), Y.reshape(4, 2, 4)),
        "all_gather": (lambda v: lax.all_gather(v, "i", axis=1, tiled=True), Y),
        "pbroadcast": (lambda v: lax.pbroadcast(v, "i", 1), X),
    }
    f, x = fs[op]
    fv = jax.vmap(f, axis_name="i")
    y, vjp = jax.vjp(fv, x)
    rng = np.random.default_rng(0)
    c = rng.standard_normal(np.shape(y)).astype(np.float32)
    xt = rng.standard_normal(x.shape).astype(np.float32)
    (ct,) = vjp(c)
    np.testing.assert_allclose(_dot(fv(xt), c), _dot(xt, ct), rtol=1e-5)


def test_nested_names_and_jit():
    r = jax.vmap(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="j"), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(r), np.broadcast_to(X.sum(0), X.shape))
    r = jax.vmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(r), np.full(X.shape, X.sum(), np.float32))
    r = jax.vmap(jax.jit(lambda v: lax.psum(v, "i")), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(r), np.broadcast_to(X.sum(0), X.shape))
    r = jax.jit(jax.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i"))(X)
    np.testing.assert_allclose(np.asarray(r), X - X.mean(0))
    # the same jitted function under axes of different sizes traces once per size
    f = jax.jit(lambda v: lax.all_gather(v, "i"))
    assert jax.vmap(f, axis_name="i")(X).shape == (4, 4, 3)
    assert jax.vmap(f, axis_name="i")(X[:2]).shape == (2, 2, 3)


def test_pmap_and_shard_map_on_one_device():
    r = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(X[:1])
    np.testing.assert_array_equal(np.asarray(r), X[:1])
    mesh = Mesh(jax.devices()[:1], ("x",))
    f = jax.shard_map(lambda a: lax.psum(a, "x") + lax.axis_index("x"), mesh=mesh, in_specs=P("x"),
                      out_specs=P("x"))
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(4.0))), np.arange(4.0, dtype=np.float32))


def test_printed_jaxpr_and_errors():
    text = str(jax.make_jaxpr(lambda v: lax.psum(v, "i"), axis_env=[("i", 4)])(X[0]))
    assert text == ("{ lambda ; a:f32[3]. let\n    b:f32[3] = psum[axes=('i',) axis_index_groups=None] a\n"
                    "  in (b,) }")
    with pytest.raises(NameError, match="^unbound axis name: i$"):
        lax.psum(X, "i")
    with pytest.raises(NameError, match=r"^Found an unbound axis name: z\. To fix this, please call psum under "
                                        r"`jax\.shard_map`\.$"):
        jax.jit(lambda v: lax.psum(v, "z"))(X)
    with pytest.raises(NameError, match="Found an unbound axis name: j"):
        jax.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="axis_index_groups not supported in vmap collectives"):
        jax.vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]), axis_name="i")(X)
    with pytest.raises(ValueError, match=r"all_to_all requires the size of the mapped axis axis_name to equal "
                                         r"x\.shape\[split_axis\], but they are 4 and 2 respectively\."):
        jax.vmap(lambda v: lax.all_to_all(v, "i", 1, 0), axis_name="i")(Y)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        jax.vmap(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(X)


def test_pmap_static_broadcast_grad_and_vmap():
    x = X[:1]
    f = jax.pmap(lambda v: lax.psum(v ** 2, "i"), axis_name="i")
    np.testing.assert_allclose(np.asarray(jax.grad(lambda z: f(z).sum())(x)), 2 * x)
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(np.stack([x, x]))), np.stack([x, x]) ** 2)
    g = jax.pmap(lambda v, s: v * s, axis_name="i", static_broadcasted_argnums=1)
    np.testing.assert_array_equal(np.asarray(g(x, 3.0)), x * 3)
    # JAX 0.10.2 on one device (its pmap is a shard_map over the devices: each gets a block of 2 members)
    with pytest.raises(ValueError) as e:
        jax.pmap(lambda v: v, axis_name="i")(np.ones((2, 3), np.float32))
    assert str(e.value) == ("cannot select an axis to squeeze out which has size not equal to one, got "
                            "shape=(2, 3) and dimensions=(0,)")


def test_pcast_and_sharding_types():
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda v: lax.pcast(v, "i", to="varying"),
                                                      axis_name="i")(X)), X)
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        lax.pcast(X, "i", to="varying")
    from cranax.sharding import AbstractDevice, ManualAxisType
    assert ManualAxisType(varying={"x"}).varying == frozenset({"x"})
    with pytest.raises(ValueError, match="varying and unreduced cannot have common mesh axes"):
        ManualAxisType(varying={"x"}, unreduced={"x"})
    assert repr(AbstractDevice("cpu", None, "cpu")) == "AbstractDevice(device_kind='cpu', num_cores=None, platform='cpu')"
    s = jax.sharding.SingleDeviceSharding(jax.devices("cpu")[0])
    np.testing.assert_array_equal(np.asarray(jax.sharding.reshard(X, s)), X)
    f = jax.sharding.auto_axes(lambda a: a * 2, out_sharding=s)
    np.testing.assert_array_equal(np.asarray(f(X)), X * 2)


# ----------------------------------------------------------------------------------------------- ragged, p2p

def _ragged_reference(op, out, io, ss, oo):
    """JAX's docstring pseudocode for ragged_all_to_all, member by member, in NumPy."""
    n, k = io.shape
    per = k // n
    res = out.copy()
    for p in range(n):            # sender
        for i in range(k):        # its slice i goes to member i // per
            j = i // per
            for r in range(ss[p, i]):
                if 0 <= oo[p, i] + r < res.shape[1]:
                    res[j, oo[p, i] + r] = op[p, io[p, i] + r]
    return res


def test_ragged_all_to_all_docstring_example():
    # The example of jax.lax.ragged_all_to_all's docstring (JAX 0.10.2): results [1, 3, 0, 0] and [2, 2, 4, 0].
    op = jnp.array([[1, 2, 2], [3, 4, 0]], jnp.float32)
    out = jnp.zeros((2, 4), jnp.float32)
    io = jnp.array([[0, 1], [0, 1]], jnp.int32)
    ss = jnp.array([[1, 2], [1, 1]], jnp.int32)
    oo = jnp.array([[0, 0], [1, 2]], jnp.int32)
    rs = jnp.array([[1, 1], [2, 1]], jnp.int32)
    f = jax.vmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(op, out, io, ss, oo, rs)), [[1, 3, 0, 0], [2, 2, 4, 0]])
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(op, out, io, ss, oo, rs)), [[1, 3, 0, 0], [2, 2, 4, 0]])


def test_ragged_all_to_all_several_slices_per_member_matches_reference():
    rng = np.random.default_rng(0)
    n, per, rows, m = 3, 2, 7, 9
    k = n * per
    op = rng.standard_normal((n, rows, 2)).astype(np.float32)
    out = rng.standard_normal((n, m, 2)).astype(np.float32)
    ss = rng.integers(0, 3, (n, k)).astype(np.int32)
    io = np.array([[rng.integers(0, rows - s + 1) for s in row] for row in ss], np.int32)
    oo = rng.integers(0, m - 2, (n, k)).astype(np.int32)
    rs = ss.copy()
    f = jax.jit(jax.vmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="x"), axis_name="x"))
    got = f(op, out, io, ss, oo, rs)
    np.testing.assert_array_equal(np.asarray(got), _ragged_reference(op, out, io, ss, oo))
    # the jvp moves the tangents' rows the same way
    _, t = jax.jvp(lambda a, b: jax.vmap(lambda *z: lax.ragged_all_to_all(*z, axis_name="x"), axis_name="x")(
        a, b, io, ss, oo, rs), (op, out), (op * 2, out * 2))
    np.testing.assert_allclose(np.asarray(t), 2 * _ragged_reference(op, out, io, ss, oo), rtol=1e-6)


def test_ragged_all_to_all_errors_and_jaxpr():
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.make_jaxpr(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"))(
            jnp.ones(3), jnp.ones(4), *[jnp.zeros(2, jnp.int32)] * 4)
    with pytest.raises(ValueError, match="input and output dtypes must be equal"):
        jax.make_jaxpr(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_env=[("i", 2)])(
            jnp.ones(3), jnp.ones(4, jnp.int32), *[jnp.zeros(2, jnp.int32)] * 4)
    with pytest.raises(ValueError, match="must be integer type"):
        jax.make_jaxpr(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_env=[("i", 2)])(
            jnp.ones(3), jnp.ones(4), jnp.zeros(2), *[jnp.zeros(2, jnp.int32)] * 3)
    jaxpr = jax.make_jaxpr(lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), axis_env=[("i", 2)])(
        jnp.ones((4, 2)), jnp.ones((5, 2)), *[jnp.zeros(2, jnp.int32)] * 4)
    assert "g:f32[5,2] = ragged_all_to_all[" in str(jaxpr) and "axis_name=('i',)" in str(jaxpr)


def test_psend_precv_raise_as_on_jax_cpu():
    # JAX 0.10.2 implements psend/precv on GPU only ("psend is currently only implemented on GPU").
    with pytest.raises(NotImplementedError, match="psend is currently only implemented on GPU"):
        jax.vmap(lambda x: lax.psend(x, "i", [(0, 1), (1, 0)]), axis_name="i")(jnp.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="precv is currently only implemented on GPU"):
        lax.precv(lax.create_token(), jax.ShapeDtypeStruct((3,), jnp.float32), "i", [(0, 1)])
