"""Placement as JAX 0.10.2 places and reports it (issue 18, the placement guide): a one-device
``NamedSharding`` is kept on the array and on results computed from it; committed arguments on different devices
raise JAX's text naming the jitted function's arguments (``x of add`` for an eager ``a + b``, ``args[0] of add``
for ``lax.add``, ``p of f``/``d['u'] of g`` for a user's jit); ``device_put`` onto another mesh inside ``jit``
raises; ``pmap`` over more members than devices fails as JAX's (a shard_map over all devices). The device count
is per process: the program runs in a child with 8 CPU devices. Expected lines recorded from JAX 0.10.2
(``JAX_PLATFORMS=cpu /tmp/jaxvenv/bin/python prog.py``), the program's path replaced by ``prog.py``."""
import os
import subprocess
import sys

PROG = '''import sys
if sys.argv[1:] == ["cranax"]:
    import cranax
    cranax.install_as_jax()
import jax
jax.config.update("jax_num_cpu_devices", 8)
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
P = jax.P


def show(f):
    try:
        print(f())
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


full = jax.make_mesh((8,), ("x",))
mesh_a = jax.make_mesh((4,), ("x",), devices=full.devices[:4])
mesh_b = jax.make_mesh((4,), ("x",), devices=full.devices[4:])
m0 = jax.make_mesh((1,), ("x",), devices=full.devices[:1])
m1 = jax.make_mesh((1,), ("x",), devices=full.devices[1:2])
a = jax.device_put(1.0, NamedSharding(m0, P()))
b = jax.device_put(2.0, NamedSharding(m1, P()))
xa = jax.device_put(np.arange(8.0), NamedSharding(mesh_a, P("x")))
xb = jax.device_put(np.arange(8.0), NamedSharding(mesh_b, P("x")))
ya = jax.device_put(np.arange(8.0), NamedSharding(mesh_a, P()))
c = jnp.float32(3.0)
# a one-device NamedSharding is kept, and results computed from the array are on its mesh
show(lambda: a.sharding)
show(lambda: (a + c).sharding)
show(lambda: (a * 2).sharding)
show(lambda: jnp.stack([a, a]).sharding)
show(lambda: jax.jit(lambda v: v + 1)(a).sharding)
show(lambda: (ya + 1).sharding)
show(lambda: ((a + c).committed, float(a + c)))
# committed arguments on different devices


def f(p, q):
    return p + q


def g(d):
    return d["u"] + d["v"]


show(lambda: a + b)
show(lambda: a * b)
show(lambda: a / b)
show(lambda: jnp.maximum(a, b))
show(lambda: lax.add(a, b))
show(lambda: jax.jit(f)(a, b))
show(lambda: jax.jit(g)({"u": a, "v": b}))
show(lambda: xa + xb)
show(lambda: jax.jit(f)(xa, xb))
show(lambda: jnp.where(a > 0, a, b))
show(lambda: jax.jit(f).lower(a, b))   # (AOT: refused when lowering)


# device_put onto another mesh inside jit
@jax.jit
def fd(x):
    return jax.device_put(x, NamedSharding(mesh_b, P("x")))


show(lambda: fd(xa))


@jax.jit
def fd4(x, y):
    return jax.device_put(x, NamedSharding(m1, P())) + y


show(lambda: fd4(a, 1.0))


# pmap over more members than devices: JAX 0.10.2's pmap is a shard_map over a mesh of all the devices
def pm(x):
    return x * 2


show(lambda: jax.pmap(pm)(jnp.arange(16.0)))
show(lambda: jax.pmap(pm)(jnp.ones((12, 5))))
show(lambda: jax.pmap(pm, axis_name="i", in_axes=1)(jnp.ones((5, 12))))
show(lambda: jax.pmap(pm)(jnp.arange(8.0)))
'''

EXPECTED = [
    "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P(), memory_kind=device)",
    "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P(), memory_kind=device)",
    "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P(), memory_kind=device)",
    "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P(None,), memory_kind=device)",
    "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P(), memory_kind=device)",
    "NamedSharding(mesh=Mesh('x': 4, axis_types=(Explicit,)), spec=P(None,), memory_kind=device)",
    '(True, 4.0)',
    'ValueError: Received incompatible devices for jitted computation. Got argument x of add with shape float32[] and with device ids [0] on platform CPU and argument y of add with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument x of multiply with shape float32[] and with device ids [0] on platform CPU and argument y of multiply with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument x1 of true_divide with shape float32[] and with device ids [0] on platform CPU and argument x2 of true_divide with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument x of maximum with shape float32[] and with device ids [0] on platform CPU and argument y of maximum with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument args[0] of add with shape float32[] and with device ids [0] on platform CPU and argument args[1] of add with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument p of f with shape float32[] and with device ids [0] on platform CPU and argument q of f with shape float32[] and with device ids [1] on platform CPU',
    "ValueError: Received incompatible devices for jitted computation. Got argument d['u'] of g with shape float32[] and with device ids [0] on platform CPU and argument d['v'] of g with shape float32[] and with device ids [1] on platform CPU",
    'ValueError: Received incompatible devices for jitted computation. Got argument x of add with shape float32[8@x] and with device ids [0, 1, 2, 3] on platform CPU and argument y of add with shape float32[8@x] and with device ids [4, 5, 6, 7] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument p of f with shape float32[8@x] and with device ids [0, 1, 2, 3] on platform CPU and argument q of f with shape float32[8@x] and with device ids [4, 5, 6, 7] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument condition of _where with shape bool[] and with device ids [0] on platform CPU and argument y of _where with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument p of f with shape float32[] and with device ids [0] on platform CPU and argument q of f with shape float32[] and with device ids [1] on platform CPU',
    'ValueError: Received incompatible devices for jitted computation. Got argument x of fd with shape float32[8@x] and with device ids [0, 1, 2, 3] on platform CPU and device_put inside jit with device ids [4, 5, 6, 7] on platform CPU at prog.py:67:11 (fd)',
    'ValueError: Received incompatible devices for jitted computation. Got argument x of fd4 with shape float32[] and with device ids [0] on platform CPU and device_put inside jit with device ids [1] on platform CPU at prog.py:75:11 (fd4)',
    'ValueError: cannot select an axis to squeeze out which has size not equal to one, got shape=(2,) and dimensions=(0,)',
    "IndivisibleError: Sharding NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 8, axis_types=(Auto,)), spec=P('_internal_pmap_axis_name',), memory_kind=device) implies that array axis 0 is partitioned 8 times, but the dimension size is 12 (full shape: (12, 5), per-dimension tiling factors: [8, 1] should evenly divide the shape)",
    "IndivisibleError: Sharding NamedSharding(mesh=Mesh('i': 8, axis_types=(Auto,)), spec=P(None, 'i'), memory_kind=device) implies that array axis 1 is partitioned 8 times, but the dimension size is 12 (full shape: (5, 12), per-dimension tiling factors: [1, 8] should evenly divide the shape)",
    '[ 0.  2.  4.  6.  8. 10. 12. 14.]',
]


def _run(tmp_path, *args, module=None):
    path = tmp_path / "prog.py"
    path.write_text(PROG)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("CRANAX_NUM_CPU_DEVICES", None)
    env.pop("XLA_FLAGS", None)
    cmd = [sys.executable, str(path), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.replace(str(path), "prog.py").splitlines()


def test_placement_texts_and_shardings_as_jax(tmp_path):
    out = _run(tmp_path, "cranax")
    assert len(out) == len(EXPECTED)
    for got, want in zip(out, EXPECTED):
        assert got == want


ALIAS_PROG = """
import jax, jax.numpy as jnp
for stmt in ["from jax.experimental.xla_metadata import xla_metadata_call",
             "from jax.experimental.hijax import MappingSpec", "jnp.foo", "jax.lax.foo",
             "from jax.numpy import foo", "import jax.experimental.hijax as h; h.nope"]:
    try:
        exec(stmt)
    except (ImportError, AttributeError) as e:
        print(f"{type(e).__name__}: {e}")
print(jnp.__name__, jax.lax.__name__)
print(int(jax.lax.add(jnp.int32(1), 2)), jnp.add(jnp.int32(1), 2.0).dtype)
"""


def test_missing_names_under_the_alias_name_jax_modules(tmp_path):
    """Under ``python -m cranax.run`` a module reached as ``jax.X`` is named so: Python's texts for a name it
    lacks name ``jax.X``, as JAX 0.10.2's do (JAX's texts below; the file in parentheses is the module's own,
    cranax's, where JAX's gives its site-packages path). cranax's lax calls still pass Python scalars freely."""
    import cranax
    root = os.path.dirname(cranax.__file__)
    script = tmp_path / "alias_prog.py"
    script.write_text(ALIAS_PROG)
    out = subprocess.run([sys.executable, "-m", "cranax.run", str(script)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    xm = os.path.join(root, "experimental", "xla_metadata.py")
    hj = os.path.join(root, "experimental", "hijax.py")
    npi = os.path.join(root, "numpy", "__init__.py")
    assert out == [
        f"ImportError: cannot import name 'xla_metadata_call' from 'jax.experimental.xla_metadata' ({xm})",
        f"ImportError: cannot import name 'MappingSpec' from 'jax.experimental.hijax' ({hj})",
        "AttributeError: module 'jax.numpy' has no attribute 'foo'",
        "AttributeError: module 'jax.lax' has no attribute 'foo'",
        f"ImportError: cannot import name 'foo' from 'jax.numpy' ({npi})",
        "AttributeError: module 'jax.experimental.hijax' has no attribute 'nope'",
        "jax.numpy jax.lax",
        "3 float32",
    ]


def test_missing_names_without_the_alias_name_cranax_modules():
    # (a child: tests/ecosystem's conftest installs the alias in the test process)
    code = ("import cranax.numpy as cnp\ntry:\n    cnp.foo\nexcept AttributeError as e:\n    print(e)\n"
            "try:\n    from cranax.experimental.hijax import MappingSpec\nexcept ImportError as e:\n    print(e.name)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["module 'cranax.numpy' has no attribute 'foo'", "cranax.experimental.hijax"]


def test_pmap_on_one_device_fails_as_jax():
    # JAX 0.10.2 with one CPU device: each member block has 2 (3) rows, which the per-member squeeze refuses
    code = ("import cranax as jax, cranax.numpy as jnp\n"
            "for a in (jnp.arange(2.0), jnp.ones((3, 5))):\n"
            "    try:\n        jax.pmap(lambda x: x)(a)\n"
            "    except ValueError as e:\n        print(type(e).__name__, e)\n"
            "print(jax.pmap(lambda x: x * 2)(jnp.arange(1.0)))\n")
    env = dict(os.environ, CRANAX_NUM_CPU_DEVICES="1", JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.splitlines()
    assert out == [
        "ValueError cannot select an axis to squeeze out which has size not equal to one, got shape=(2,) and "
        "dimensions=(0,)",
        "ValueError cannot select an axis to squeeze out which has size not equal to one, got shape=(3, 5) and "
        "dimensions=(0,)",
        "[0.]",
    ]
