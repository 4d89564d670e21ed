"""Run by tests/test_distributed.py under ``mpirun -n N``: each process prints one JSON line of results
(``RESULT {...}``) that the test checks against NumPy. ``mode``: ``collectives`` or ``killed_peer``."""
import json
import os
import sys

import numpy as np

import cranax as jax
import cranax.numpy as jnp
from cranax import lax
from cranax.experimental import multihost_utils


def main(mode):
    jax.distributed.initialize()
    me, n = jax.process_index(), jax.process_count()
    try:
        jax.distributed.initialize()
        again = None
    except RuntimeError as e:
        again = str(e)
    out = {"again": again, "initialized": jax.distributed.is_initialized(), "index": me, "count": n, "devices": [repr(d) for d in jax.devices()],
           "local": [repr(d) for d in jax.local_devices()], "device_count": jax.device_count()}
    if mode == "killed_peer":
        if me == n - 1:
            os._exit(3)          # dies without a word to the others
        x = jnp.full((1, 4), float(me))
        try:
            r = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
            out["psum"] = np.asarray(r).tolist()
        except RuntimeError as e:
            out["error"] = str(e)
        print("RESULT " + json.dumps(out), flush=True)
        return
    x = jnp.arange(4.0)[None] + 10.0 * me            # this process's member: [10 me + 0..3]
    pm = lambda f: jax.pmap(f, axis_name="i")
    out["psum"] = np.asarray(pm(lambda v: lax.psum(v, "i"))(x)).tolist()
    out["pmean"] = np.asarray(pm(lambda v: lax.pmean(v, "i"))(x)).tolist()
    out["pmax"] = np.asarray(pm(lambda v: lax.pmax(v, "i"))(x)).tolist()
    out["gather"] = np.asarray(pm(lambda v: lax.all_gather(v, "i"))(x)).tolist()
    out["index_"] = np.asarray(pm(lambda v: lax.axis_index("i"))(x)).tolist()
    ring = [(i, (i + 1) % n) for i in range(n)]
    out["ppermute"] = np.asarray(pm(lambda v: lax.ppermute(v, "i", ring))(x)).tolist()
    out["scatter"] = np.asarray(pm(lambda v: lax.psum_scatter(jnp.arange(2.0 * n) * (me + 1), "i", tiled=True))(x)).tolist()
    out["eager_psum"] = np.asarray(jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.ones((1, 2), np.float32))).tolist()

    # data parallel: each process holds a shard of the batch; pmean of the gradients keeps params equal
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8 * n, 3)).astype(np.float32)
    Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)
    w = jnp.zeros(3)
    b = jnp.zeros(())

    def loss(w, b, xb, yb):
        return jnp.mean((xb @ w + b - yb) ** 2)

    @jax.jit
    def step(w, b, xb, yb):
        def per(w, b, xb, yb):
            gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, xb, yb)
            gw, gb = lax.pmean(gw, "i"), lax.pmean(gb, "i")
            return w - 0.1 * gw, b - 0.1 * gb
        w2, b2 = jax.pmap(per, axis_name="i", in_axes=(None, None, 0, 0))(w, b, xb[None], yb[None])
        return w2[0], b2[0]

    xs, ys = X[me * 8:(me + 1) * 8], Y[me * 8:(me + 1) * 8]
    for _ in range(20):
        w, b = step(w, b, xs, ys)
    out["w"] = np.asarray(w).tolist()
    out["b"] = float(b)
    multihost_utils.assert_equal(w, "params differ")
    out["allgather"] = np.asarray(multihost_utils.process_allgather(jnp.array([me, me * 2]))).tolist()
    out["bcast"] = np.asarray(multihost_utils.broadcast_one_to_all(jnp.array([7.0 + me]))).tolist()
    multihost_utils.sync_global_devices("done")
    print("RESULT " + json.dumps(out), flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
