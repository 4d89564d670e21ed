"""Where one factorization should take the pool's threads (`par_n` in rust/backend/cpu/library/linalg.rs):
cranax's cholesky, lu_factor, solve (one right-hand column), inv and triangular_solve (n right-hand columns)
at several n, each in worker processes that differ only in how one matrix is run:

- ``seq``: faer on one thread (``CRANAX_LINALG_PAR_N`` past every n, ``CRANAX_LINALG_CHOL_BLOCK=0``,
  ``CRANAX_LINALG_LU_BLOCK=0``);
- ``pool``: faer's own parallel factorization (``CRANAX_LINALG_PAR_N=1``) on the pool;
- ``blocked`` (cholesky; lu, solve, inv; qr): cranax's blocked driver around faer's kernels on the pool (the
  default from ``CHOL_BLOCKED_N`` / ``LU_BLOCKED_N`` / ``QR_BLOCKED_N``; here at every n from two blocks;
  ``--chol-block`` / ``--lu-block`` set the block).

qr's own size rule is not ``par_n`` (faer's parallel QR from 192³ of work): its ``seq`` is faer's QR with
``CRANAX_NUM_THREADS=1`` (the copies around it on one thread too), its ``pool`` faer's parallel QR
(``CRANAX_LINALG_QR_PANEL=0``).

Every worker runs with ``CRANAX_NUM_THREADS`` = ``--threads`` (default 2) and ``CRANAX_LINALG_YIELD=0`` (so a
loaded machine does not turn the pool off), and the copies around a one-thread factorization and the column
blocks of wide triangular solves keep their own rules in every mode. The workers take turns case by case,
the order rotated each round; each sample is one jitted call after a ``--gap`` pause (as a program's calls come
after idle time, when the pool's threads sleep), timed by the wall clock and by the process's CPU time
(all threads: spinning counts). Samples during which Linux's CPU pressure-stall counter grew by more than 2% of
their time are "loaded"; the table gives medians over the quiet ones (all when fewer than 3 are quiet).

    python benches/bench_linalg_par_n.py [--ops cholesky,lu] [--dtypes float64] [--sizes 256,512,1000]
        [--rounds 3] [--samples 5] [--threads 2] [--json out.json]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

# the worker protocol and the pressure-stall reading of the factorization bench (this folder)
from bench_linalg_factorizations import QUIET, Worker, _answer, cpu_stall

OPS = {
    "cholesky": ("lambda a: jnp.linalg.cholesky(a)", "spd"),
    "lu": ("lambda a: jax.scipy.linalg.lu_factor(a)", "gen"),
    "solve": ("lambda a: jnp.linalg.solve(a, a[:, :1])", "gen"),
    "inv": ("lambda a: jnp.linalg.inv(a)", "gen"),
    "triangular_solve": ("lambda a: jax.scipy.linalg.solve_triangular(a, a, lower=True)", "spd"),
    "qr": ("lambda a: jnp.linalg.qr(a)", "gen"),
}
FAR = "1000000"


def modes(op, chol_block, lu_block=0):
    off = {"CRANAX_LINALG_CHOL_BLOCK": "0", "CRANAX_LINALG_LU_BLOCK": "0"}
    out = {"seq": {"CRANAX_LINALG_PAR_N": FAR, **off}, "pool": {"CRANAX_LINALG_PAR_N": "1", **off}}
    if op == "qr":
        return {"seq": {"CRANAX_NUM_THREADS": "1", "CRANAX_LINALG_QR_PANEL": "0"},
                "pool": {"CRANAX_LINALG_QR_PANEL": "0"}, "blocked": {"CRANAX_LINALG_QR_BLOCKED_N": "1"}}
    if op == "cholesky":
        out["blocked"] = {"CRANAX_LINALG_PAR_N": FAR}
        if chol_block:
            out["blocked"]["CRANAX_LINALG_CHOL_BLOCK"] = str(chol_block)
    elif op in ("lu", "solve", "inv"):
        out["blocked"] = {"CRANAX_LINALG_PAR_N": FAR, "CRANAX_LINALG_LU_BLOCKED_N": "1"}
        if lu_block:
            out["blocked"]["CRANAX_LINALG_LU_BLOCK"] = str(lu_block)
    return out


def worker():
    import cranax as jax
    import cranax.numpy as jnp
    import cranax.scipy.linalg  # noqa: F401
    jax.config.update("jax_enable_x64", True)
    fns = {}
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            return
        key = (cmd["name"], cmd["dtype"], cmd["n"])
        if key not in fns:
            src, kind = OPS[cmd["name"]]
            rng = np.random.default_rng(0)
            n = cmd["n"]
            a = rng.standard_normal((n, n))
            a = a @ a.T + n * np.eye(n) if kind == "spd" else a + 2 * np.sqrt(n) * np.eye(n)
            f = jax.jit(eval(src, {"jnp": jnp, "jax": jax}))
            x = jax.device_put(a.astype(cmd["dtype"]))
            call = (lambda f, x: lambda: jax.block_until_ready(f(x)))(f, x)
            call()
            call()
            fns = {key: call}   # one case at a time: n = 2000 float64 operands are 32 MB each
        call = fns[key]
        wall, cpu, loaded = [], [], []
        for _ in range(cmd["samples"]):
            time.sleep(cmd["gap"])
            s0, c0, t0 = cpu_stall(), time.process_time(), time.perf_counter()
            call()
            t1, c1, s1 = time.perf_counter(), time.process_time(), cpu_stall()
            wall.append(t1 - t0)
            cpu.append(c1 - c0)
            loaded.append((s1 - s0) > QUIET * (t1 - t0))
        _answer([wall, cpu, loaded])


def med(xs):
    return statistics.median(xs) * 1e3 if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--sizes", default="256,384,512,768,1000,1500,2000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--gap", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--chol-block", type=int, default=0)
    ap.add_argument("--lu-block", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.worker:
        return worker()
    base = {"CRANAX_NUM_THREADS": str(args.threads), "CRANAX_LINALG_YIELD": "0"}
    print(f"# load {os.getloadavg()}, CRANAX_CPU_BLOCK_MATH={os.environ.get('CRANAX_CPU_BLOCK_MATH', '')}, "
          f"threads {args.threads}, {time.strftime('%H:%M:%S', time.gmtime())} UTC", flush=True)
    results = []
    for op in args.ops.split(","):
        ms = modes(op, args.chol_block, args.lu_block)
        workers = {m: Worker(m, [sys.executable, __file__, "--worker"], dict(os.environ, **dict(base, **env)))
                   for m, env in ms.items()}
        names = list(workers)
        for dt in args.dtypes.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                got = {m: [[], [], []] for m in names}
                for r in range(args.rounds):
                    order = names[r % len(names):] + names[:r % len(names)]
                    for m in order:
                        w, c, lo = workers[m].ask(dict(op="run", name=op, dtype=dt, n=n, samples=args.samples, gap=args.gap))
                        for acc, v in zip(got[m], (w, c, lo)):
                            acc.extend(v)
                row = {"op": op, "dtype": dt, "n": n}
                cells = []
                for m in names:
                    w, c, lo = got[m]
                    q = [i for i, x in enumerate(lo) if not x]
                    use = q if len(q) >= 3 else list(range(len(w)))
                    row[m] = dict(wall=med([w[i] for i in use]), cpu=med([c[i] for i in use]), quiet=len(q),
                                  n=len(w), wall_min=min(w) * 1e3)
                    cells.append(f"{m} {row[m]['wall']:.2f}/{row[m]['cpu']:.2f} (min {row[m]['wall_min']:.2f}, q{len(q)}/{len(w)})")
                seq = row["seq"]["wall"]
                ratios = " ".join(f"{m}/seq {row[m]['wall'] / seq:.2f}" for m in names if m != "seq")
                print(f"{op} {dt} n={n}: " + " | ".join(cells) + f" | {ratios}", flush=True)
                results.append(row)
        for w in workers.values():
            w.close()
    print(f"# load {os.getloadavg()}, {time.strftime('%H:%M:%S', time.gmtime())} UTC", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
