"""The persistent compilation cache (jax_compilation_cache_dir, jax.experimental.compilation_cache): a second
process loads the compiled code instead of compiling (the core's compile count stays 0), entries are keyed by
what changes the code, and corrupt or foreign entries are never loaded. Processes are children, each with a
fresh core."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import _core
from cranax.experimental.compilation_cache import compilation_cache as cc

# The children import the cranax this process imported (an installed wheel or the checkout's python/).
CRANAX_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(jax.__file__)))

CHILD = r'''
import json, sys
import numpy as np
import cranax as jax
import cranax.numpy as jnp
from cranax import lax, _core
from cranax.experimental.compilation_cache import compilation_cache as cc

cache_dir, which, opts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for k, v in opts.items():
    jax.config.update(k, v)
cc.set_cache_dir(cache_dir)

def tanh_chain(x):
    for _ in range(40):
        x = jnp.tanh(x * 1.01 + 0.1)
    return x

def loops(x, w):
    n = lax.fori_loop(0, 7, lambda i, c: c * 1.5 + i, jnp.float32(1.0))
    s, ys = lax.scan(lambda c, xi: (c + jnp.sin(xi), c * xi), 0.0, x)
    b = lax.cond(s > 0, lambda v: v @ w, lambda v: -(v @ w), x[:8])
    i, v = lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, jnp.cos(c[1]) + c[1]), (0, x))
    return n, s, ys, b, v

def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)

def mlp_step(p, x, y):
    g = jax.grad(loss)(p, x, y)
    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

r = np.random.default_rng(0)
if which == "tanh":
    outs = [jax.jit(tanh_chain)(np.linspace(-2, 2, 1000, dtype=np.float32))]
elif which == "loops":
    outs = jax.jit(loops)(r.standard_normal(64).astype(np.float32), r.standard_normal((8, 3)).astype(np.float32))
elif which == "mlp":
    p = {"w1": r.standard_normal((16, 32)).astype(np.float32) * 0.3, "b1": np.zeros(32, np.float32),
         "w2": r.standard_normal((32, 4)).astype(np.float32) * 0.3}
    out = jax.jit(mlp_step)(p, r.standard_normal((8, 16)).astype(np.float32), r.standard_normal((8, 4)).astype(np.float32))
    outs = jax.tree.leaves(out)
st = cc._stats()
print(json.dumps({"compiles": _core.compile_count(), "stats": {k: st[k] for k in st},
                  "outs": [np.asarray(o).tobytes().hex() for o in outs]}))
'''


def child(tmp_path, cache_dir, which, env=None, **opts):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    opts.setdefault("jax_persistent_cache_min_compile_time_secs", 0)
    e = dict(os.environ, PYTHONPATH=CRANAX_PARENT)
    e.pop("JAX_COMPILATION_CACHE_DIR", None)
    e.update(env or {})
    p = subprocess.run([sys.executable, str(script), str(cache_dir), which, json.dumps(opts)], capture_output=True,
                       text=True, env=e, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def entries(d):
    return sorted(p for p in d.iterdir() if p.name.endswith(".cex")) if d.exists() else []


@pytest.mark.parametrize("which", ["tanh", "loops", "mlp"])
def test_second_process_loads_instead_of_compiling(tmp_path, which):
    d = tmp_path / "cache"
    first = child(tmp_path, d, which)
    assert first["compiles"] > 0
    assert first["stats"]["writes"] == first["compiles"] == first["stats"]["misses"]
    assert len(entries(d)) == first["compiles"]
    second = child(tmp_path, d, which)
    assert second["compiles"] == 0
    assert second["stats"]["hits"] == first["compiles"]
    assert second["stats"]["misses"] == second["stats"]["rejected"] == second["stats"]["writes"] == 0
    # The loaded code computes bit for bit what the compiled code did.
    assert second["outs"] == first["outs"]
    assert len(entries(d)) == first["compiles"]


def test_corrupt_entries_are_rejected_and_rewritten(tmp_path):
    d = tmp_path / "cache"
    first = child(tmp_path, d, "loops")
    files = entries(d)
    for i, f in enumerate(files):
        b = bytearray(f.read_bytes())
        if i % 3 == 0:
            b[len(b) // 2] ^= 0x40            # a flipped bit in the code
        elif i % 3 == 1:
            b = b[: len(b) - 7]               # truncated
        else:
            b[:8] = b"NOTCRNX!"               # not an entry at all
        f.write_bytes(bytes(b))
    second = child(tmp_path, d, "loops")
    assert second["stats"]["rejected"] == len(files)
    assert second["compiles"] == len(files) and second["stats"]["hits"] == 0
    assert second["outs"] == first["outs"]
    assert "checksum" in second["stats"]["last_error"] or "not a cranax cache entry" in second["stats"]["last_error"]
    third = child(tmp_path, d, "loops")          # rewritten: loads again
    assert third["compiles"] == 0 and third["stats"]["hits"] == len(files)
    assert third["outs"] == first["outs"]


def test_foreign_entry_is_never_loaded(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    child(tmp_path, a, "tanh")
    first_b = child(tmp_path, b, "mlp")
    # Every file of b's cache now holds one of a's entries (valid, but for another program).
    src = entries(a)
    for i, f in enumerate(entries(b)):
        f.write_bytes(src[i % len(src)].read_bytes())
    second = child(tmp_path, b, "mlp")
    assert second["stats"]["hits"] == 0
    assert second["stats"]["rejected"] == first_b["compiles"] == second["compiles"]
    assert "another key" in second["stats"]["last_error"]
    assert second["outs"] == first_b["outs"]


def test_codegen_switches_and_build_are_part_of_the_key(tmp_path):
    d = tmp_path / "cache"
    first = child(tmp_path, d, "tanh")
    other = child(tmp_path, d, "tanh", env={"CRANAX_CPU_NO_SIMD": "1"})
    assert other["compiles"] == first["compiles"] and other["stats"]["hits"] == 0
    assert other["stats"]["rejected"] == 0
    np.testing.assert_allclose(np.frombuffer(bytes.fromhex(other["outs"][0]), np.float32),
                               np.frombuffer(bytes.fromhex(first["outs"][0]), np.float32), rtol=1e-5)
    assert len(entries(d)) == 2 * first["compiles"]


def test_thresholds_and_switch_decide_what_is_written(tmp_path):
    # JAX's default minimum compile time (1 s) keeps these fast compiles out of the cache.
    d = tmp_path / "slow_only"
    r = child(tmp_path, d, "tanh", jax_persistent_cache_min_compile_time_secs=1.0)
    assert r["compiles"] > 0 and r["stats"]["writes"] == 0 and entries(d) == []
    d = tmp_path / "big_only"
    r = child(tmp_path, d, "tanh", jax_persistent_cache_min_entry_size_bytes=1 << 40)
    assert r["stats"]["writes"] == 0 and entries(d) == []
    d = tmp_path / "off"
    r = child(tmp_path, d, "tanh", jax_enable_compilation_cache=False)
    assert r["stats"]["writes"] == r["stats"]["misses"] == 0 and entries(d) == []


@pytest.fixture
def restore_cache_config():
    keep = {k: getattr(jax.config, k) for k in cc._options}
    yield
    for k, v in keep.items():
        jax.config.update(k, v)
    cc.reset_cache()


def test_in_process_reload_after_clear_caches(tmp_path, restore_cache_config):
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    cc.set_cache_dir(str(tmp_path))
    assert jax.config.jax_compilation_cache_dir == str(tmp_path)
    cc.reset_cache()
    assert cc._stats()["writes"] == 0
    f = jax.jit(lambda x: jnp.sum(jnp.exp(x) * 3.0 - x))
    x = np.arange(10, dtype=np.float32)
    want = float(np.sum(np.exp(x) * 3.0 - x))
    assert float(f(x)) == pytest.approx(want, rel=1e-6)
    assert cc._stats()["writes"] >= 1
    jax.clear_caches()
    n = _core.compile_count()
    g = jax.jit(lambda x: jnp.sum(jnp.exp(x) * 3.0 - x))
    assert float(g(x)) == pytest.approx(want, rel=1e-6)
    assert _core.compile_count() == n and cc._stats()["hits"] >= 1
    # Turning the cache off: compiles again, writes nothing.
    cc.set_cache_dir(None)
    jax.clear_caches()
    w = cc._stats()["writes"]
    assert float(jax.jit(lambda x: jnp.sum(jnp.exp(x) * 3.0 - x))(x)) == pytest.approx(want, rel=1e-6)
    assert _core.compile_count() == n + 1 and cc._stats()["writes"] == w


def test_options_as_jax(restore_cache_config):
    # Defaults and messages recorded from JAX 0.10.2.
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 1.0
    assert jax.config.jax_persistent_cache_min_entry_size_bytes == 0
    assert jax.config.jax_enable_compilation_cache is True
    assert jax.config.jax_raise_persistent_cache_errors is False
    assert jax.config.jax_persistent_cache_enable_xla_caches == "xla_gpu_per_fusion_autotune_cache_dir"
    with pytest.raises(ValueError, match="new float config value must be None or of type float, got a of type <class 'str'>"):
        jax.config.update("jax_persistent_cache_min_compile_time_secs", "a")
    with pytest.raises(ValueError, match=r"new int config value must be None or of type int, got 1.5 of type <class 'float'>"):
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 1.5)
    with pytest.raises(ValueError, match=r"new string config value must be None or of type str, got 3 of type <class 'int'>\."):
        jax.config.update("jax_compilation_cache_dir", 3)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 2)
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 2
    jax.config.update("jax_enable_compilation_cache", "no")      # JAX keeps the truth of any value
    assert jax.config.jax_enable_compilation_cache is True
    from cranax.experimental import compilation_cache as pkg
    assert pkg.compilation_cache.set_cache_dir is cc.set_cache_dir
    assert sorted(n for n in dir(cc) if not n.startswith("_") and callable(getattr(cc, n))) == ["reset_cache", "set_cache_dir"]


def test_unusable_dir_warns_and_compiles_without_cache(tmp_path, restore_cache_config):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.warns(UserWarning, match="^Error initializing the persistent compilation cache: compilation cache directory .*file/sub: Not a directory"):
        cc.set_cache_dir(str(f / "sub"))
    jax.clear_caches()
    n = _core.compile_count()
    assert float(jax.jit(lambda x: x * 2.0 + 1.0)(np.float32(3))) == 7.0
    assert _core.compile_count() == n + 1 and cc._stats()["writes"] == 0 and not (f / "sub").exists()


def test_processes_writing_one_dir_at_once(tmp_path):
    # Writers rename finished files into place: racing processes never leave a partial entry.
    d = tmp_path / "cache"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    e = dict(os.environ, PYTHONPATH=CRANAX_PARENT)
    e.pop("JAX_COMPILATION_CACHE_DIR", None)
    opts = json.dumps({"jax_persistent_cache_min_compile_time_secs": 0})
    procs = [subprocess.Popen([sys.executable, str(script), str(d), "mlp", opts], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=e) for _ in range(3)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert all(o["outs"] == outs[0]["outs"] for o in outs)
    assert not [p for p in d.iterdir() if p.name.endswith(".tmp")]
    last = child(tmp_path, d, "mlp")
    assert last["compiles"] == 0 and last["stats"]["rejected"] == 0 and last["outs"] == outs[0]["outs"]
