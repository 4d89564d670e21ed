"""diffrax's first jitted call (issue 23): a plain call against the AOT stages, each stage timed, in fresh
processes, cranax vs JAX in the same run.

    python benches/bench_first_call.py [--procs 4] [--jax-python /tmp/jaxvenv/bin/python]

Every process builds bench_programs' diffrax program (Tsit5 + PID controller, ``diffeqsolve`` under ``jax.jit``)
and times one first call of a fresh jitted function (caches cleared first), either plain (``f(*args)``) or
through the stages (``f.trace(*args)``, ``.lower()``, ``.compile()``, the call), with ``block_until_ready``:
wall time, process CPU time (user + system, what the load of a shared host does not inflate as much; the
stages are timed in CPU time) and the minor page faults (``ru_minflt``). cranax runs with ``CRANAX_CPU_BLOCK_MATH=avx2`` and the machine's default,
each with its frame-stack chunk reuse on and off (``CRANAX_STACK_CHUNK_CACHE=0``; see ``cranax/_stack_chunks.py``),
processes of all configurations interleaved. ``--ab N`` adds the in-process A/B: N fresh first calls with the
reuse on and N with it off, alternating, in one process per ISA mode. Prints min / median per configuration.
JAX: ``--jax-python`` (a venv with jax 0.10.2; the ecosystem libraries come from this interpreter's
site-packages through PYTHONPATH).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r'''
import json, os, resource, sys, time
side, mode, ab = sys.argv[1], sys.argv[2], int(sys.argv[3])
if side == "cranax":
    import cranax
    cranax.install_as_jax()
import jax, jax.numpy as jnp, diffrax


def solve(y0, k):
    term = diffrax.ODETerm(lambda t, y, args: -args * y + jnp.sin(t))
    return diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=2.0, dt0=0.1, y0=y0, args=k,
                               stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8),
                               saveat=diffrax.SaveAt(t1=True)).ys


args = (jnp.array([1.0, 2.0]), 0.7)


def flt():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def first(mode):
    jax.clear_caches()
    f = jax.jit(solve)
    f0, c0, w0 = flt(), time.process_time(), time.perf_counter()
    st = {}
    if mode == "plain":
        jax.block_until_ready(f(*args))
    else:
        tr = f.trace(*args); t1 = time.process_time()
        lo = tr.lower(); t2 = time.process_time()
        co = lo.compile(); t3 = time.process_time()
        jax.block_until_ready(co(*args)); t4 = time.process_time()
        st = {"trace": t1 - c0, "lower": t2 - t1, "compile": t3 - t2, "call": t4 - t3}   # process CPU time
    return dict(st, wall=time.perf_counter() - w0, cpu=time.process_time() - c0, flt=flt() - f0)


if ab:
    from cranax import _stack_chunks
    out = {"on": [], "off": []}
    first("plain")   # not counted: the process's first call also pays its one-time costs
    for i in range(2 * ab):
        k = "on" if i % 2 == 0 else "off"
        _stack_chunks.keep(_stack_chunks.KEEP if k == "on" else 0)
        out[k].append(first(mode))
    print(json.dumps(out))
else:
    print(json.dumps(first(mode)))
'''


def _run(py, args, env):
    r = subprocess.run([py, "-c", WORKER] + args, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def _fmt(xs, key, scale=1e3):
    v = [x[key] for x in xs if key in x]
    if not v:
        return "-"
    if key == "flt":
        return f"{min(v)} / {statistics.median(v):.0f}"
    return f"{min(v) * scale:.1f} / {statistics.median(v) * scale:.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=4, help="fresh processes per configuration (default 4)")
    ap.add_argument("--ab", type=int, default=0, help="also N in-process first calls with the reuse on and off")
    ap.add_argument("--jax-python", default=os.environ.get("JAX_PYTHON") or (
        "/tmp/jaxvenv/bin/python" if os.path.exists("/tmp/jaxvenv/bin/python") else None))
    ap.add_argument("--no-off", action="store_true", help="skip the runs with the reuse off")
    a = ap.parse_args(argv)
    base = dict(os.environ)
    base["PYTHONPATH"] = os.path.join(HERE, "..", "python") + os.pathsep + base.get("PYTHONPATH", "")
    configs = []
    for isa in ("avx2", None):
        for reuse in ((True,) if a.no_off else (True, False)):
            for mode in ("plain", "staged"):
                e = dict(base)
                e.pop("CRANAX_CPU_BLOCK_MATH", None)
                e.pop("CRANAX_STACK_CHUNK_CACHE", None)
                if isa:
                    e["CRANAX_CPU_BLOCK_MATH"] = isa
                if not reuse:
                    e["CRANAX_STACK_CHUNK_CACHE"] = "0"
                label = f"cranax {isa or 'default'}, reuse {'on' if reuse else 'off'}, {mode}"
                configs.append((label, sys.executable, [ "cranax", mode, "0"], e))
    if a.jax_python:
        for mode in ("plain", "staged"):
            e = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=sysconfig.get_paths()["purelib"])
            configs.append((f"JAX, {mode}", a.jax_python, ["jax", mode, "0"], e))
    res = {c[0]: [] for c in configs}
    load0 = os.getloadavg()
    for _ in range(a.procs):   # interleaved: a slow stretch of a shared host falls on every configuration
        for label, py, args, e in configs:
            res[label].append(_run(py, args, e))
    ab = {}
    for isa in (("avx2", None) if a.ab else ()):
        e = dict(base)
        e.pop("CRANAX_CPU_BLOCK_MATH", None)
        if isa:
            e["CRANAX_CPU_BLOCK_MATH"] = isa
        ab[isa or "default"] = _run(sys.executable, ["cranax", "plain", str(a.ab)], e)
    load1 = os.getloadavg()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
          f"{load0[0]:.2f} at the start, {load1[0]:.2f} at the end; Python {platform.python_version()}; "
          f"{a.procs} processes per row")
    print()
    print("| first call (ms; min / median) | wall | process CPU | CPU: trace | lower | compile | call | minor faults |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, xs in res.items():
        print(f"| {label} | {_fmt(xs, 'wall')} | {_fmt(xs, 'cpu')} | {_fmt(xs, 'trace')} | {_fmt(xs, 'lower')} | "
              f"{_fmt(xs, 'compile')} | {_fmt(xs, 'call')} | {_fmt(xs, 'flt')} |")
    jp = res.get("JAX, plain")
    if jp:
        jw = statistics.median(x["wall"] for x in jp)
        for label, xs in res.items():
            if label.startswith("cranax") and label.endswith("plain"):
                print(f"{label}: median wall {statistics.median(x['wall'] for x in xs) / jw:.2f}x JAX's plain first call")
    for isa, r in ab.items():
        print(f"in-process A/B, cranax {isa}, {a.ab} first calls each (ms; min / median): reuse on: wall "
              f"{_fmt(r['on'], 'wall')}, CPU {_fmt(r['on'], 'cpu')}, faults {_fmt(r['on'], 'flt')}; reuse off: wall "
              f"{_fmt(r['off'], 'wall')}, CPU {_fmt(r['off'], 'cpu')}, faults {_fmt(r['off'], 'flt')}")


if __name__ == "__main__":
    main()
