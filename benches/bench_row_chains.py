"""Row chains on and off in one process (rust/backend/cpu/row_chain.rs): softmax-like runs of kernels
executed a block of rows at a time vs one kernel at a time (``CRANAX_NO_ROW_CHAINS=1``).

Cases: ``nn.dot_product_attention`` forward (bench_nn's shape: batch 8, 512 tokens, 8 heads, head dim 64),
``nn.softmax`` and ``nn.log_softmax`` over the last axis of a [64, 512, 512] float32 array. Both
executables are compiled in this process (the variable is read when an executable is built) and called in
alternation, so machine load hits both alike; each row gives the median wall time and the median CPU time
(process time, all threads) per call, and off/on ratios.

    python benches/bench_row_chains.py                       # 9 alternating rounds
    CRANAX_NUM_THREADS=1 python benches/bench_row_chains.py  # one thread
    CRANAX_CPU_BLOCK_MATH=avx2 python benches/bench_row_chains.py
"""
import argparse
import os
import statistics
import time

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args(argv)
    import cranax
    from cranax.bench._timing import block, machine_line
    print(machine_line())
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15 min); "
          f"CRANAX_NUM_THREADS={os.environ.get('CRANAX_NUM_THREADS', '(all)')}, "
          f"CRANAX_CPU_BLOCK_MATH={os.environ.get('CRANAX_CPU_BLOCK_MATH', '(default)')}")
    rng = np.random.default_rng(0)
    qkv = [cranax.numpy.asarray(rng.standard_normal((8, 512, 8, 64), dtype=np.float32)) for _ in range(3)]
    x = cranax.numpy.asarray(rng.standard_normal((64, 512, 512), dtype=np.float32))
    cases = {
        "attention fwd": (cranax.nn.dot_product_attention, qkv),
        "softmax": (lambda v: cranax.nn.softmax(v, axis=-1), [x]),
        "log_softmax": (lambda v: cranax.nn.log_softmax(v, axis=-1), [x]),
    }
    exes = {}
    for env in ("on", "off"):
        if env == "off":
            os.environ["CRANAX_NO_ROW_CHAINS"] = "1"
        else:
            os.environ.pop("CRANAX_NO_ROW_CHAINS", None)
        cranax.clear_caches()  # the executable cache would hand back the other variant
        for name, (f, args) in cases.items():
            exe = cranax.jit(f).lower(*args).compile()
            assert ("row chain" in exe.as_text()) == (env == "on"), (name, env)
            exes[name, env] = exe
    os.environ.pop("CRANAX_NO_ROW_CHAINS", None)
    print(f"{'case':14s} {'on ms':>8s} {'off ms':>8s} {'on/off':>7s} {'on cpu':>8s} {'off cpu':>8s} {'on/off':>7s}")
    for name, (f, args) in cases.items():
        res = {"on": ([], []), "off": ([], [])}
        for env in ("on", "off"):
            for _ in range(2):
                block(exes[name, env](*args))
        for _ in range(a.runs):
            for env in ("on", "off"):
                w, c = time.perf_counter(), time.process_time()
                block(exes[name, env](*args))
                res[env][0].append(time.perf_counter() - w)
                res[env][1].append(time.process_time() - c)
        on_w, on_c = (statistics.median(v) * 1e3 for v in res["on"])
        off_w, off_c = (statistics.median(v) * 1e3 for v in res["off"])
        print(f"{name:14s} {on_w:8.2f} {off_w:8.2f} {on_w / off_w:7.3f} {on_c:8.2f} {off_c:8.2f} {on_c / off_c:7.3f}")


if __name__ == "__main__":
    main()
