"""``python -m cranax.run`` and ``cranax.install_as_jax()``: ``import jax...`` resolves to cranax, a real jax on
``sys.path`` is never loaded, missing names raise ``ModuleNotFoundError`` naming them, and the versions are
JAX's API version (0.10.2) under the alias and cranax's own on ``cranax``."""
import os
import re
import subprocess
import sys
import textwrap

import pytest

import cranax

# Where the cranax under test lives (a checkout's python/ or site-packages): subprocesses import the same one.
CRANAX_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(cranax.__file__)))


def _env(extra_path=()):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*extra_path, CRANAX_PARENT, env.get("PYTHONPATH", "")])
    return env


@pytest.fixture
def fake_real_jax(tmp_path):
    """A stand-in for a real JAX installation on sys.path: importing it would fail loudly."""
    d = tmp_path / "site"
    for name in ("jax", "jaxlib"):
        (d / name).mkdir(parents=True)
        (d / name / "__init__.py").write_text(f"raise SystemExit('the real {name} was imported')\n")
    return str(d)


def test_runner_runs_script_with_alias_and_never_loads_real_jax(tmp_path, fake_real_jax):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        import jax, jax.numpy as jnp, jax.lax, jax.tree_util, jax.sharding, jax.extend.core
        import cranax
        assert jnp is cranax.numpy and jax.lax is cranax.lax
        print(jax.__version__, jax.__version_info__, cranax.__version__, sys.argv[1:])
        print(float(jax.jit(lambda x: jnp.sum(x * 2))(jnp.arange(4.0))))
        files = [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]
        assert not [f for f in files if f.startswith({fake_real_jax!r})], files
        print("script dir first:", sys.path[0] == {str(tmp_path)!r})
    """))
    r = subprocess.run([sys.executable, "-m", "cranax.run", str(script), "a", "--b"], capture_output=True,
                       text=True, env=_env([fake_real_jax]), cwd=str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"0.10.2 (0, 10, 2) {cranax.__version__} ['a', '--b']", "12.0",
                                     "script dir first: True"]


def test_runner_dash_m_runs_a_module(tmp_path, fake_real_jax):
    (tmp_path / "mymod.py").write_text("import sys, jax\nprint(jax.__version__, sys.argv[1:])\n")
    r = subprocess.run([sys.executable, "-m", "cranax.run", "-m", "mymod", "x"], capture_output=True, text=True,
                       env=_env([str(tmp_path), fake_real_jax]), cwd=str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0.10.2 ['x']"


def test_runner_usage_and_missing_script():
    r = subprocess.run([sys.executable, "-m", "cranax.run"], capture_output=True, text=True, env=_env(),
                       timeout=300)
    assert r.returncode == 2 and "usage: python -m cranax.run" in r.stderr
    r = subprocess.run([sys.executable, "-m", "cranax.run", "no_such_file.py"], capture_output=True, text=True,
                       env=_env(), timeout=300)
    assert r.returncode == 2 and "can't open file 'no_such_file.py'" in r.stderr


def test_install_refuses_after_real_jax_was_imported(fake_real_jax, tmp_path):
    (tmp_path / "site2" / "jax").mkdir(parents=True)
    (tmp_path / "site2" / "jax" / "__init__.py").write_text("")
    code = "import jax, cranax\ntry:\n    cranax.install_as_jax()\nexcept RuntimeError as e:\n    print('refused')\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env([str(tmp_path / "site2")]), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "refused"


def test_in_process_alias_names_and_errors():
    cranax.install_as_jax()   # idempotent (conftest installed it)
    import jax
    assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2)
    assert cranax.__version__ != "0.10.2" or cranax.__version__ == jax.__version__
    assert jax.jit is cranax.jit and jax.numpy is cranax.numpy
    with pytest.raises(ModuleNotFoundError, match="jax.no_such_module") as e:
        import jax.no_such_module  # noqa: F401
    assert e.value.name == "jax.no_such_module"
    with pytest.raises(ModuleNotFoundError, match="jaxlib"):
        import jaxlib  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="jax.api"):   # cranax's own modules are not JAX names
        import jax.api  # noqa: F401
    with pytest.raises(AttributeError, match="^module 'jax' has no attribute 'no_such_name'$"):   # JAX's text
        jax.no_such_name
    # jax.core / jax._src come from cranax._compat, only under the alias.
    import jax.core
    import jax._src.traceback_util
    assert jax.core is sys.modules["cranax._compat.core"]
    assert jax.core.__name__ == "jax.core"   # named as JAX's module (Python's missing-name texts say so)
    assert jax.core.ShapedArray is cranax.core.ShapedArray
    # the profiler server prints as JAX's (the profiling guide's cell: `jax.profiler.start_server(9999)`)
    server = jax.profiler.start_server(0)
    try:
        assert re.fullmatch(r"<jaxlib\._profiler\.ProfilerServer object at 0x[0-9a-f]+>", repr(server))
    finally:
        jax.profiler.stop_server()


def test_tracers_are_jax_arrays_and_operators_defer():
    import jax
    import jax.numpy as jnp
    seen = []
    jax.jit(lambda x: seen.append(isinstance(x, jax.Array)) or x)(jnp.ones(2))
    jax.grad(lambda x: seen.append(isinstance(x, jax.Array)) or x)(1.0)
    jax.vmap(lambda x: seen.append(isinstance(x, jax.Array)) or x)(jnp.ones(2))
    assert seen == [True, True, True]
    assert not isinstance(1.0, jax.Array) and isinstance(jnp.ones(2), jax.Array)

    class Other:
        def __radd__(self, o):
            return "radd"

        def __rmul__(self, o):
            return "rmul"
    assert jnp.ones(2) + Other() == "radd" and jnp.ones(2) * Other() == "rmul"


def test_real_imag_conj_of_real_arrays_and_0d_at():
    import jax.numpy as jnp
    import numpy as np
    x = jnp.array([1.5, -2.0])
    np.testing.assert_array_equal(np.asarray(x.real), [1.5, -2.0])
    assert x.imag.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(x.imag), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(x.conj()), [1.5, -2.0])
    s = jnp.array(3.0)
    assert float(s.at[()].set(5.0)) == 5.0 and float(s.at[()].add(1.0)) == 4.0 and float(s.at[()].get()) == 3.0
