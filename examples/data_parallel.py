"""Data-parallel training of the digits MLP with ``pmap``: the global batch is split across devices (one
process, ``--devices N`` CPU devices) or across processes (``mpirun -n 2 python examples/data_parallel.py
--processes``); each member computes its shard's gradients, ``lax.pmean`` averages them, and every member
applies the same Adam update, so the parameters stay identical everywhere.

    python examples/data_parallel.py                           # one device
    python examples/data_parallel.py --devices 2               # two CPU devices in one process
    mpirun -n 2 python examples/data_parallel.py --processes   # two processes over MPI (mpi4py)
    python examples/data_parallel.py --backend jax --devices 2 # the same code under JAX

Prints the compile time (first step), the steady-state step time (each step waited for), the test accuracy,
and checks that every member holds the same parameters.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="cranax", choices=["cranax", "jax"])
    ap.add_argument("--devices", type=int, default=1, help="CPU devices in this process")
    ap.add_argument("--processes", action="store_true", help="one device per process, processes from mpirun")
    ap.add_argument("--batch", type=int, default=1024, help="global batch size")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--steps", type=int, default=200)
    return ap.parse_args()


def main():
    args = parse()
    if args.devices > 1:   # before the library starts its devices
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                                   + f" --xla_force_host_platform_device_count={args.devices}")
        os.environ["CRANAX_NUM_CPU_DEVICES"] = str(args.devices)
    if args.backend == "jax":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        from jax import lax
    else:
        import cranax as jax
        import cranax.numpy as jnp
        from cranax import lax
    if args.processes:
        jax.distributed.initialize()
    me, nproc = jax.process_index(), jax.process_count()
    ndev = args.devices if not args.processes else 1
    members = ndev * nproc

    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)

    rng = np.random.default_rng(0)
    sizes = [64, args.hidden, args.hidden, 10]
    params = [{"w": (rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32),
               "b": np.zeros(b, np.float32)} for a, b in zip(sizes[:-1], sizes[1:])]
    m = jax.tree_util.tree_map(np.zeros_like, params)
    v = jax.tree_util.tree_map(np.zeros_like, params)

    def forward(p, xb):
        h = xb
        for layer in p[:-1]:
            h = jax.nn.relu(h @ layer["w"] + layer["b"])
        return h @ p[-1]["w"] + p[-1]["b"]

    def loss(p, xb, yb):
        logits = forward(p, xb)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), yb[:, None], axis=1))

    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    def member_step(p, m, v, t, xb, yb):
        l, g = jax.value_and_grad(loss)(p, xb, yb)
        g = lax.pmean(g, "batch")
        l = lax.pmean(l, "batch")
        m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        mh = 1 - b1 ** t
        vh = 1 - b2 ** t
        p = jax.tree_util.tree_map(lambda p, m, v: p - lr * (m / mh) / (jnp.sqrt(v / vh) + eps), p, m, v)
        return p, m, v, l

    step = jax.pmap(member_step, axis_name="batch", in_axes=(0, 0, 0, None, 0, 0))

    def replicate(tree):
        return jax.tree_util.tree_map(lambda a: np.broadcast_to(a, (ndev,) + a.shape).copy(), tree)

    p, m, v = replicate(params), replicate(m), replicate(v)
    per = args.batch // members
    times = []
    compile_s = None
    for t in range(1, args.steps + 1):
        idx = rng.integers(0, len(x_tr), args.batch)          # same draw in every process (same seed)
        mine = idx.reshape(nproc, ndev, per)[me]               # this process's members' shards
        xb, yb = x_tr[mine], y_tr[mine]
        t0 = time.perf_counter()
        p, m, v, l = step(p, m, v, float(t), xb, yb)
        jax.block_until_ready(p)
        dt = time.perf_counter() - t0
        if t == 1:
            compile_s = dt
        else:
            times.append(dt)
    logits = forward(jax.tree_util.tree_map(lambda a: a[0], p), x_te)
    acc = float(np.mean(np.argmax(np.asarray(logits), 1) == y_te))
    flat = np.concatenate([np.asarray(a).reshape(ndev, -1) for a in jax.tree_util.tree_leaves(p)], axis=1)
    same_local = bool((flat == flat[0]).all())
    if args.processes:
        from cranax.experimental import multihost_utils
        multihost_utils.assert_equal(flat[0], "parameters differ across processes")
    step_ms = statistics.median(times) * 1e3
    if me == 0:
        print(f"{args.backend}: {members} member(s) ({nproc} process(es) x {ndev} device(s)), global batch "
              f"{args.batch}, hidden {args.hidden}: first step {compile_s * 1e3:.0f} ms, steady step "
              f"{step_ms:.2f} ms, loss {float(np.asarray(l)[0]):.4f}, test accuracy {acc:.3f}, "
              f"parameters identical: {same_local}")
    if args.processes:
        jax.distributed.shutdown()
    return 0 if same_local else 1


if __name__ == "__main__":
    sys.exit(main())
