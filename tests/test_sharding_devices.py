"""Several CPU devices in one process (``CRANAX_NUM_CPU_DEVICES`` / JAX's ``XLA_FLAGS``): meshes, shardings,
sharded arrays and ``shard_map``. The device count is read once per process, so each check runs in a child
process with 4 devices and prints JSON; values against NumPy, texts and layouts recorded from JAX 0.10.2
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest


def _child(code, env_var="CRANAX_NUM_CPU_DEVICES"):
    env = dict(os.environ)
    env.pop("CRANAX_NUM_CPU_DEVICES", None)
    env.pop("XLA_FLAGS", None)
    env[env_var] = "4" if env_var == "CRANAX_NUM_CPU_DEVICES" else "--xla_force_host_platform_device_count=4"
    prog = "import json, numpy as np\nimport cranax as jax, cranax.numpy as jnp\nfrom cranax import lax\n" \
           "from cranax.sharding import Mesh, NamedSharding, PartitionSpec as P\nout = {}\n" \
           + textwrap.dedent(code) + "\nprint('RESULT ' + json.dumps(out))\n"
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    (line,) = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    return json.loads(line[7:])


@pytest.mark.parametrize("env_var", ["CRANAX_NUM_CPU_DEVICES", "XLA_FLAGS"])
def test_devices_streams_and_placement(env_var):
    r = _child("""
        cpu = jax.devices("cpu")
        out["devices"] = [repr(d) for d in cpu]
        x = jax.device_put(jnp.arange(4.0), cpu[2])
        y = jax.jit(lambda a: a * 2)(x)
        out["y"] = np.asarray(y).tolist()
        out["y_dev"] = [repr(d) for d in y.devices()]
        try:
            jax.jit(lambda a, b: a + b)(x, jax.device_put(jnp.ones(4), cpu[1]))
        except ValueError as e:
            out["err"] = str(e)
    """, env_var)
    assert r["devices"] == [f"CpuDevice(id={i})" for i in range(4)]
    assert r["y"] == [0.0, 2.0, 4.0, 6.0] and r["y_dev"] == ["CpuDevice(id=2)"]
    # JAX 0.10.2's text (XLA_FLAGS=--xla_force_host_platform_device_count=4)
    assert r["err"] == ("Received incompatible devices for jitted computation. Got argument a of <lambda> with shape "
                        "float32[4] and with device ids [2] on platform CPU and argument b of <lambda> with shape "
                        "float32[4] and with device ids [1] on platform CPU")


def test_mesh_named_sharding_and_shards():
    r = _child("""
        mesh = jax.make_mesh((2, 2), ("x", "y"))
        out["mesh_str"], out["mesh_repr"] = str(mesh), repr(mesh)
        s = jax.NamedSharding(mesh, jax.P("x", None))
        out["s"] = repr(s)
        x = jax.device_put(jnp.arange(16.0).reshape(4, 4), s)
        out["flags"] = [x.is_fully_addressable, x.is_fully_replicated, len(x.addressable_shards)]
        out["shards"] = [[sh.device.id, [[i.start, i.stop] for i in sh.index], sh.replica_id,
                          np.asarray(sh.data).tolist()] for sh in x.addressable_shards]
        out["shard_devs"] = [repr(next(iter(sh.data.devices()))) for sh in x.addressable_shards]
        m2 = Mesh(np.array(jax.devices("cpu")).reshape(2, 2), ("a", "b"))
        out["m2"] = repr(m2)
        out["map"] = [[d.id, [[i.start, i.stop] for i in idx]]
                      for d, idx in NamedSharding(m2, P(("a", "b"))).devices_indices_map((8,)).items()]
        try:
            jax.device_put(np.arange(7.0), NamedSharding(m2, P("b")))
        except ValueError as e:
            out["indiv"] = [type(e).__name__, str(e)]
        y = jax.jit(lambda a: a * 2, out_shardings=jax.NamedSharding(mesh, jax.P(None, "y")))(x)
        out["y"] = [repr(y.sharding), np.asarray(y).tolist()]
        cb = jax.make_array_from_callback((4, 4), s, lambda idx: np.arange(16.0).reshape(4, 4)[idx])
        out["cb"] = [repr(cb.sharding), np.asarray(cb).tolist()]
        out["wsc"] = repr(lax.with_sharding_constraint(x, jax.NamedSharding(mesh, jax.P("y"))).sharding)
        out["repl"] = NamedSharding(m2, P()).is_fully_replicated
    """)
    mesh_s = "Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit))"
    assert r["mesh_str"] == mesh_s
    assert r["mesh_repr"] == "Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), axis_types=(Explicit, Explicit))"
    assert r["s"] == f"NamedSharding(mesh={mesh_s}, spec=P('x', None), memory_kind=device)"
    assert r["flags"] == [True, False, 4]
    full = np.arange(16.0).reshape(4, 4)
    # JAX 0.10.2: devices 0,1 hold rows 0:2 (replica 0, 1), devices 2,3 rows 2:4
    assert [(d, idx[0], rid) for d, idx, rid, _ in r["shards"]] == [(0, [0, 2], 0), (1, [0, 2], 1), (2, [2, 4], 0),
                                                                    (3, [2, 4], 1)]
    for d, idx, _, data in r["shards"]:
        np.testing.assert_array_equal(data, full[idx[0][0]:idx[0][1]])
    assert r["shard_devs"] == [f"CpuDevice(id={i})" for i in range(4)]
    assert r["m2"] == "Mesh(axis_sizes=(2, 2), axis_names=('a', 'b'), axis_types=(Auto, Auto))"
    assert r["map"] == [[0, [[0, 2]]], [1, [[2, 4]]], [2, [[4, 6]]], [3, [[6, 8]]]]
    assert r["indiv"][0] == "IndivisibleError" and r["indiv"][1].endswith(
        "implies that array axis 0 is partitioned 2 times, but the dimension size is 7 (full shape: (7,), "
        "per-dimension tiling factors: [2] should evenly divide the shape)")
    assert r["y"][0] == f"NamedSharding(mesh={mesh_s}, spec=P(None, 'y'), memory_kind=device)"
    np.testing.assert_array_equal(r["y"][1], full * 2)
    np.testing.assert_array_equal(r["cb"][1], full)
    assert r["wsc"] == f"NamedSharding(mesh={mesh_s}, spec=P('y',), memory_kind=device)"
    assert r["repl"] is True


def test_shard_map_over_four_devices():
    r = _child("""
        mesh = Mesh(np.array(jax.devices("cpu")).reshape(2, 2), ("x", "y"))
        a = jnp.arange(32.0).reshape(4, 8)
        sm = lambda f, i, o: jax.shard_map(f, mesh=mesh, in_specs=i, out_specs=o)
        cases = {
            "block_psum": sm(lambda b: lax.psum(b.sum(), "y")[None, None], P("x", "y"), P("x", "y"))(a),
            "scale": sm(lambda b: b * 2, P("x", "y"), P("x", "y"))(a),
            "psum_all": sm(lambda b: lax.psum(b, ("x", "y")), P("x", "y"), P())(a),
            "index": sm(lambda b: b + lax.axis_index("x") * 100 + lax.axis_index("y") * 10, P(("x", "y")),
                        P(("x", "y")))(a),
            "matmul": jax.shard_map(lambda b, c: b @ c, mesh=mesh, in_specs=(P("x", None), P(None, "y")),
                                    out_specs=P("x", "y"))(a, a.T),
            "psum_y": sm(lambda b: lax.psum(b, "y"), P(None, "y"), P())(a),
            "pmean_jit": jax.jit(sm(lambda b: lax.pmean(b, "x"), P("x"), P()))(a),
            "grad": jax.grad(lambda z: sm(lambda b: lax.psum((b ** 2).sum(), ("x", "y")), P("x", "y"), P())(z))(a),
        }
        for k, v in cases.items():
            out[k] = np.asarray(v).tolist()
    """)
    a = np.arange(32.0).reshape(4, 8)
    blocks = a.reshape(2, 2, 2, 4).transpose(0, 2, 1, 3)          # [x, y, 2, 4]
    want_block = np.broadcast_to(blocks.sum(axis=(1, 2, 3))[:, None], (2, 2))
    np.testing.assert_array_equal(r["block_psum"], want_block)    # JAX: [[120, 120], [376, 376]]
    np.testing.assert_array_equal(r["block_psum"], [[120.0, 120.0], [376.0, 376.0]])
    np.testing.assert_array_equal(r["scale"], a * 2)
    np.testing.assert_array_equal(r["psum_all"], blocks.sum(axis=(0, 1)))
    np.testing.assert_array_equal(r["index"], a + (np.arange(4) // 2 * 100 + np.arange(4) % 2 * 10)[:, None])
    np.testing.assert_array_equal(r["matmul"], a @ a.T)
    np.testing.assert_array_equal(r["psum_y"], a[:, :4] + a[:, 4:])
    np.testing.assert_array_equal(r["pmean_jit"], (a[:2] + a[2:]) / 2)
    np.testing.assert_array_equal(r["grad"], 2 * a)


def test_pure_callback_in_shard_map_runs_once_per_device():
    # JAX 0.10.2 (the callbacks guide, 4 devices here): under jit the callback gets the whole array once; in a
    # shard_map once per device with that device's block, whatever vmap_method says; a vmap around the
    # shard_map batches each device's call (expand_dims). JAX runs the per-device calls on the devices'
    # threads, so only their multiset is fixed.
    r = _child("""
        lines = []
        def host_fn(x):
            lines.append(f"callback received shape {x.shape}")
            return np.asarray(x) * 2
        def f(x):
            return jax.pure_callback(host_fn, jax.ShapeDtypeStruct.like(x), x)
        def g(x):
            return jax.pure_callback(host_fn, jax.ShapeDtypeStruct.like(x), x, vmap_method='expand_dims')
        with jax.set_mesh(jax.make_mesh((4,), ('i',))):
            x = jax.device_put(jnp.arange(8.0), jax.P('i'))
            out["jit"] = np.asarray(jax.jit(f)(x)).tolist()
            out["jit_lines"] = lines[:]
            del lines[:]
            out["smap"] = np.asarray(jax.shard_map(f, in_specs=jax.P('i'), out_specs=jax.P('i'))(x)).tolist()
            out["smap_lines"] = lines[:]
            del lines[:]
        with jax.set_mesh(jax.make_mesh((2, 2), ('a', 'b'))):
            y = jax.device_put(jnp.arange(32.0).reshape(4, 8), jax.P('a', 'b'))
            out["smap2"] = np.asarray(jax.shard_map(g, in_specs=jax.P('a', 'b'), out_specs=jax.P('a', 'b'))(y)).tolist()
            out["smap2_lines"] = lines[:]
            del lines[:]
            ys = jax.device_put(jnp.stack([y, y + 1]), jax.P(None, 'a', 'b'))
            s = jax.vmap(jax.shard_map(g, in_specs=jax.P('a', 'b'), out_specs=jax.P('a', 'b')))(ys)
            out["vmap_smap"] = float(s.sum())
            out["vmap_smap_lines"] = lines[:]
    """)
    assert r["jit"] == r["smap"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]
    assert r["jit_lines"] == ["callback received shape (8,)"]
    assert r["smap_lines"] == ["callback received shape (2,)"] * 4
    assert r["smap2"] == (np.arange(32.0).reshape(4, 8) * 2).tolist()
    assert r["smap2_lines"] == ["callback received shape (2, 4)"] * 4
    assert r["vmap_smap"] == 2048.0
    assert r["vmap_smap_lines"] == ["callback received shape (2, 2, 4)"] * 4


def test_jit_output_on_the_mesh_of_its_inputs():
    # JAX 0.10.2 (the placement guide's pipeline, on 4 devices): the same jitted function called on arrays
    # placed on two meshes of the same shape returns each result on its input's mesh (the executable is per
    # device assignment); here both printed True and the values below.
    r = _child("""
        full = jax.make_mesh((4,), ('x',))
        meshes = [jax.make_mesh((2,), ('x',), devices=full.devices[2 * i:2 * i + 2]) for i in range(2)]
        stage = jax.jit(lambda x: jnp.sin(x) + 1.0)
        mb = np.full((4, 4), 1.0)
        same, devs = [], []
        for m in meshes:
            mb = jax.device_put(mb, NamedSharding(m, P('x')))
            mb = stage(mb)
            same.append(mb.sharding.mesh == m)
            devs.append(sorted(d.id for d in mb.devices()))
        out["same"], out["devs"], out["v"] = same, devs, float(np.asarray(mb)[0, 0])
    """)
    assert r["same"] == [True, True] and r["devs"] == [[0, 1], [2, 3]]
    assert r["v"] == float(np.float32(np.sin(np.float32(np.sin(np.float32(1.0)) + 1.0)) + 1.0))
