"""JAX 0.10.2's process-level config flags met in its guides: ``jax_num_cpu_devices`` (the placement and
callbacks guides set it right after ``import jax``), ``jax_dump_ir_to``/``jax_dump_ir_modes`` (the
slow-compilation guide) and ``jax_mock_gpu_topology`` (the compilation-cache guide). Each check runs in a
child process (the device count is fixed once the devices start); the texts are JAX 0.10.2's."""
import gzip
import os
import subprocess
import sys
import textwrap
from test_profiler import _pb_fields as _pb   # protobuf fields of the pprof dump

_STARTED = ("RuntimeError: jax_num_cpu_devices config should be updated before backends are initialized i.e. "
            "before any JAX operation is executed. You should initialize this config immediately after "
            "`import jax`.")


def _child(code, **env_over):
    env = dict(os.environ)
    for k in ("CRANAX_NUM_CPU_DEVICES", "XLA_FLAGS", "JAX_DUMP_IR_TO", "JAX_DUMP_IR_MODES"):
        env.pop(k, None)
    env.update(env_over)
    prog = "import cranax as jax, cranax.numpy as jnp\n" + textwrap.dedent(code)
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_num_cpu_devices_before_and_after_the_devices_start():
    out = _child("""
        def show(f):
            try:
                r = f()
                print(r if r is not None else "ok")
            except Exception as e:
                print(f"{type(e).__name__}: {e}")
        show(lambda: jax.config.update('jax_num_cpu_devices', 'x'))
        show(lambda: jax.config.update('jax_num_cpu_devices', 2.0))
        show(lambda: jax.config.update('jax_num_cpu_devices', 8))
        show(lambda: jax.config.jax_num_cpu_devices)
        show(lambda: jax.devices())
        show(lambda: jax.config.update('jax_num_cpu_devices', 8))
        show(lambda: jax.config.update('jax_num_cpu_devices', 2))
        show(lambda: jax.config.jax_num_cpu_devices)
        show(lambda: jax.device_count())
    """, JAX_PLATFORMS="cpu")
    # JAX 0.10.2's lines for the same program
    assert out.splitlines() == [
        "ValueError: new int config value must be None or of type int, got x of type <class 'str'>",
        "ValueError: new int config value must be None or of type int, got 2.0 of type <class 'float'>",
        "ok", "8",
        "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3), CpuDevice(id=4), CpuDevice(id=5), "
        "CpuDevice(id=6), CpuDevice(id=7)]",
        "ok", _STARTED, "8", "8"]


def test_num_cpu_devices_after_an_operation_and_the_xla_flag():
    out = _child("""
        print(float(jnp.sin(1.0)))
        try:
            jax.config.update('jax_num_cpu_devices', 3)
        except RuntimeError as e:
            print(f"RuntimeError: {e}")
        print(jax.device_count(), jax.config.jax_num_cpu_devices)
    """, JAX_PLATFORMS="cpu")
    assert out.splitlines() == ["0.8414709568023682", _STARTED, "1 -1"]
    # the config wins over XLA_FLAGS' count, as in JAX
    out = _child("jax.config.update('jax_num_cpu_devices', 2); print(jax.device_count())", JAX_PLATFORMS="cpu",
                 XLA_FLAGS="--xla_force_host_platform_device_count=5")
    assert out == "2\n"


def test_absl_flags_take_any_value_and_are_not_attributes():
    out = _child("""
        for name, v in [('jax_mock_gpu_topology', '4x8x1'), ('jax_dump_ir_modes', 'jaxpr'), ('jax_dump_ir_to', 3)]:
            jax.config.update(name, v)
            try:
                getattr(jax.config, name)
            except AttributeError as e:
                print(e)
        print(float(jnp.cos(0.0)))
    """, JAX_PLATFORMS="cpu")
    assert out.splitlines() == ["'Config' object has no attribute 'jax_mock_gpu_topology'",
                                "'Config' object has no attribute 'jax_dump_ir_modes'",
                                "'Config' object has no attribute 'jax_dump_ir_to'", "1.0"]


def test_dump_ir_jaxpr_and_equation_count_profile(tmp_path):
    d = tmp_path / "ir"
    src = tmp_path / "prog.py"
    src.write_text(textwrap.dedent("""
        import cranax as jax, cranax.numpy as jnp
        jax.config.update("jax_dump_ir_to", DIR)
        jax.config.update("jax_dump_ir_modes", "eqn_count_pprof,jaxpr")

        @jax.jit
        def unrolled_loop(x):
          for _ in range(50):
            x = x + 1.0
          return jnp.sin(x)

        print(unrolled_loop(jnp.zeros(10))[0])
        """).replace("DIR", repr(str(d))))
    out = _child(f"exec(compile(open({str(src)!r}).read(), {str(src)!r}, 'exec'))", JAX_PLATFORMS="cpu")
    assert out == "-0.26237485\n"   # JAX 0.10.2's value
    files = sorted(os.listdir(d))
    # JAX also dumps the eager ops it compiles (convert_element_type...): cranax runs those without jit
    assert files == ["jax_000000_unrolled_loop.eqn_count_pprof", "jax_000000_unrolled_loop.jaxpr.txt"]
    text = (d / files[1]).read_text()
    assert text.startswith("{ lambda ; a:f32[10]. let\n    b:f32[10] = add a 1.0:f32[]\n")
    assert text.count(" = add ") == 50 and text.count(" = sin ") == 1
    prof = _pb(gzip.decompress((d / files[0]).read_bytes()))
    strings = [v.decode() for f, v in prof if f == 6]
    fields = lambda n: [_pb(v) for f, v in prof if f == n]
    # JAX 0.10.2's profile of this program holds these (its string table is in another order)
    assert [(strings[dict(t)[1]], strings[dict(t)[2]]) for t in fields(1)] == [("equations", "count")]
    samples = {}
    for smp in fields(2):
        label = _pb(dict(smp)[3])
        assert strings[dict(label)[1]] == "primitive"
        samples[strings[dict(label)[2]]] = (dict(smp)[2][0], dict(smp)[1])
    lines = {dict(loc)[1]: dict(_pb(dict(loc)[4]))[2] for loc in fields(4)}
    assert {p: (n, lines[loc[0]]) for p, (n, loc) in samples.items()} == {"add": (50, 9), "sin": (1, 10)}
    (fn,) = fields(5)
    name = str(src).removesuffix(".py").replace("/", ".") + ".unrolled_loop"
    assert (strings[dict(fn)[2]], strings[dict(fn)[4]], dict(fn)[5]) == (name, str(src), 6)
    assert strings[dict(prof)[13]] == f"unrolled_loop at {src}:6"
