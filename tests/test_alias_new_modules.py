"""Under the alias (``python -m cranax.run``), the JAX modules added for issue 18/22 import by their JAX names."""
import subprocess
import sys

SCRIPT = """
import jax, jax.numpy as jnp
import jax.custom_batching, jax.monitoring, jax.ffi, jax.scipy.sparse.linalg
from jax.custom_batching import custom_vmap, sequential_vmap
from jax.experimental.jet import jet
from jax.scipy.sparse.linalg import cg, gmres, bicgstab
import jax.scipy.sparse as sparse
seen = []
jax.monitoring.register_event_duration_secs_listener(lambda e, d, **k: seen.append(e))
f = custom_vmap(lambda x: x + 1.0)
f.def_vmap(lambda n, b, x: (x * 10.0, True))
print(jax.vmap(f)(jnp.arange(3.0)).tolist(), float(f(1.0)))
print(cg(jnp.eye(2) * 2.0, jnp.ones(2))[0].tolist(), sparse.linalg is jax.scipy.sparse.linalg)
print(float(jet(jnp.exp, (0.0,), ([1.0, 0.0],))[1][1]))
jax.jit(lambda x: x * 3)(1.0)
print(sorted(set(seen)))
"""


def test_new_modules_under_the_alias(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, "-m", "cranax.run", str(script)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0] == "[0.0, 10.0, 20.0] 2.0"
    assert out[1] == "[0.5, 0.5] True"
    assert out[2] == "1.0"
    assert out[3] == str(sorted(["/jax/core/compile/backend_compile_duration",
                                 "/jax/core/compile/jaxpr_to_mlir_module_duration",
                                 "/jax/core/compile/jaxpr_trace_duration"]))
