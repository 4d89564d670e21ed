"""What keeping a ``jax.Ref``'s buffer costs (issue 18): a jitted in-place update of a ref, an eager write
and an eager read, cranax (this tree, and ``--main PATH``'s tree) vs JAX 0.10.2, each in its own process.

Since h-ref21 a ref keeps one private buffer (JAX's in-place write: ``unsafe_buffer_pointer`` stays put):
each write is copied into it on the device stream (``runtime/ref_buffer.rs``), and a read is copied off it.
Before, a write rebound the ref to the call's new buffer. Since h-ref22 a jitted write's kernel writes the
new value straight into the ref's buffer where it can (``Plan::write_into_inputs``): no copy after the call. Times are per call, wall and process CPU, min and
median of 7 repeats of N calls, after warm-up, each ending with ``block_until_ready``.
``python benches/bench_ref_write.py [--main /work/main]`` (``JAX_PYTHON``, default /tmp/jaxvenv/bin/python).
"""
import json
import os
import subprocess
import sys

PROG = r'''
import json, time, statistics
{imp}
res = {{}}
for n in (3, 10_000, 1_000_000):
    r = jax.new_ref(jnp.zeros(n, jnp.float32))
    @jax.jit
    def inc(q):
        q[...] += 1.0
    def jit_write():
        inc(r)
    one = jnp.ones(n, jnp.float32)
    def eager_write():
        r[...] = one
    def eager_read():
        return r[...]
    for name, f in (("jit write", jit_write), ("eager write", eager_write), ("eager read", eager_read)):
        calls = 200 if n < 1_000_000 else 20
        for _ in range(3):
            f()
        jax.block_until_ready(r[...])
        walls, cpus = [], []
        for _ in range(7):
            t, c = time.perf_counter(), time.process_time()
            for _ in range(calls):
                out = f()
            jax.block_until_ready(out if out is not None else r[...])
            walls.append((time.perf_counter() - t) / calls * 1e6)
            cpus.append((time.process_time() - c) / calls * 1e6)
        res[f"{{name}} n={{n}}"] = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
print(json.dumps(res))
'''


def run(imp, python=sys.executable, pythonpath=None):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([python, "-c", PROG.format(imp=imp)], capture_output=True, text=True, env=env, timeout=900)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
    imp_cr, imp_jx = "import cranax as jax\nimport cranax.numpy as jnp", "import jax\nimport jax.numpy as jnp"
    runs = []
    jp = os.environ.get("JAX_PYTHON", "/tmp/jaxvenv/bin/python")
    if os.path.exists(jp):
        runs.append(("JAX 0.10.2", run(imp_jx, jp)))
    if "--main" in sys.argv:
        runs.append(("--main", run(imp_cr, pythonpath=os.path.join(sys.argv[sys.argv.index("--main") + 1], "python"))))
    runs.append(("this tree", run(imp_cr, pythonpath=here)))
    print(f"load: {os.getloadavg()[0]:.1f}; µs per call, wall min/median, CPU min/median")
    print("| case | " + " | ".join(l for l, _ in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for k in runs[-1][1]:
        print(f"| {k} | " + " | ".join("{:.1f}/{:.1f}, {:.1f}/{:.1f}".format(*r[k]) for _, r in runs) + " |")


if __name__ == "__main__":
    main()
