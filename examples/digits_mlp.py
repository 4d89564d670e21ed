"""Train an MLP on scikit-learn's bundled digits (1,797 real 8×8 images; nothing is downloaded).

    python examples/digits_mlp.py                    # cranax
    python examples/digits_mlp.py --backend jax      # the same code under JAX (import swapped, nothing else)
    python examples/digits_mlp.py --backend numpy    # a hand-written NumPy version (manual backprop), for timing
    python examples/digits_mlp.py --compare          # all three in one process: a markdown table of the figures

Written exactly as one would for JAX: parameters in a pytree (a list of {"w", "b"} dicts), initialised with
``random``, a ``jit(value_and_grad(loss))`` training step with Adam over fixed-size minibatches (the last partial
batch of an epoch is dropped so the step never meets a new shape and never recompiles), and per-example gradient
norms through ``vmap(grad(...))``. Each epoch prints the loss, the test accuracy, the steady-state step time
(each step waited for with ``block_until_ready``) and the per-example gradient norms; the end prints the total
compile time (the first calls of the jitted functions: trace + compile + run) and the time to reach the target
accuracy, compile included.
"""
import argparse
import statistics
import sys
import time

import numpy as np

# Filled in by use_backend(): the library under test, imported the way JAX code imports JAX.
jax = jnp = random = None
jit = grad = value_and_grad = vmap = tree_map = None


def use_backend(name):
    """Imports ``jax`` (or ``cranax`` as ``jax``) into this module's globals; the rest of the file is the
    same for both."""
    global jax, jnp, random, jit, grad, value_and_grad, vmap, tree_map
    if name == "jax":
        import os
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax as lib
        import jax.numpy as lib_np
    elif name == "cranax":
        import cranax as lib
        import cranax.numpy as lib_np
    else:
        raise ValueError(name)
    jax, jnp, random = lib, lib_np, lib.random
    jit, grad, value_and_grad, vmap = lib.jit, lib.grad, lib.value_and_grad, lib.vmap
    tree_map = lib.tree_util.tree_map


# ------------------------------------------------------------------------------------------------ data

def load_data(test_size=0.2, seed=0):
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1] as float32, integer labels; a stratified
    split with a fixed seed."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_size, random_state=seed, stratify=y)
    return x_tr, y_tr, x_te, y_te


def one_hot(y, k=10):
    return np.eye(k, dtype=np.float32)[y]


# ------------------------------------------------------------------------------------------------ model
# (the few nn functions this needs, written out so the file depends on nothing beyond jax.numpy)

def relu(x):
    return jnp.maximum(x, 0.0)


def log_softmax(z):
    z = z - jax.lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


def init_params(key, sizes):
    """He-initialised weights and zero biases: a list of {"w": (m, n), "b": (n,)} dicts."""
    params = []
    keys = random.split(key, len(sizes) - 1)
    for k, m, n in zip(keys, sizes[:-1], sizes[1:]):
        w = random.normal(k, (m, n), dtype=jnp.float32) * np.float32(np.sqrt(2.0 / m))
        params.append({"w": w, "b": jnp.zeros((n,), dtype=jnp.float32)})
    return params


def predict(params, x):
    """Logits for one image (64,) or a batch (B, 64)."""
    h = x
    for layer in params[:-1]:
        h = relu(h @ layer["w"] + layer["b"])
    last = params[-1]
    return h @ last["w"] + last["b"]


def loss(params, x, y1h):
    """Mean cross-entropy of a batch (or of one example: the mean of a scalar is itself)."""
    return -jnp.mean(jnp.sum(y1h * log_softmax(predict(params, x)), axis=-1))


def adam_init(params):
    return {"t": jnp.zeros((), dtype=jnp.float32), "m": tree_map(jnp.zeros_like, params),
            "v": tree_map(jnp.zeros_like, params)}


def make_train_step(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4):
    @jit
    def train_step(params, opt, x, y1h):
        value, grads = value_and_grad(loss)(params, x, y1h)
        grads = tree_map(lambda g, p: g + weight_decay * p, grads, params)
        t = opt["t"] + 1.0
        m = tree_map(lambda m, g: b1 * m + (1.0 - b1) * g, opt["m"], grads)
        v = tree_map(lambda v, g: b2 * v + (1.0 - b2) * g * g, opt["v"], grads)
        step = lr * jnp.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)
        params = tree_map(lambda p, m, v: p - step * m / (jnp.sqrt(v) + eps), params, m, v)
        return params, {"t": t, "m": m, "v": v}, value
    return train_step


def make_eval():
    @jit
    def accuracy(params, x, y):
        return jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y)
    return accuracy


def make_per_example_grad_norms():
    """‖∇θ loss(θ; xᵢ, yᵢ)‖ for every example of a batch, via vmap(grad(...)) over the batch axis."""
    per_example_grads = vmap(grad(loss), in_axes=(None, 0, 0))

    @jit
    def norms(params, x, y1h):
        g = per_example_grads(params, x, y1h)
        sq = [jnp.sum(leaf.reshape(leaf.shape[0], -1) ** 2, axis=1) for leaf in jax.tree_util.tree_leaves(g)]
        return jnp.sqrt(sum(sq))
    return norms


# ------------------------------------------------------------------------------------------------ NumPy
# The same network, loss and Adam written by hand in NumPy (manual backprop): the baseline for timing.

def np_init(seed, sizes):
    rng = np.random.default_rng(seed)
    return [{"w": (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32),
             "b": np.zeros(n, np.float32)} for m, n in zip(sizes[:-1], sizes[1:])]


def np_value_and_grad(params, x, y1h):
    hs, h = [x], x
    for layer in params[:-1]:
        h = np.maximum(h @ layer["w"] + layer["b"], 0.0)
        hs.append(h)
    z = h @ params[-1]["w"] + params[-1]["b"]
    z = z - z.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=-1, keepdims=True))
    logp = z - lse
    n = x.shape[0]
    value = -np.sum(y1h * logp) / n
    dz = (np.exp(logp) - y1h) / n
    grads = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        grads[i] = {"w": hs[i].T @ dz, "b": dz.sum(axis=0)}
        if i:
            dz = (dz @ params[i]["w"].T) * (hs[i] > 0)
    return np.float32(value), grads


def np_train_step(params, opt, x, y1h, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4):
    value, grads = np_value_and_grad(params, x, y1h)
    t = opt["t"] + 1
    out_p, out_m, out_v = [], [], []
    step = lr * np.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)
    for p, g, m, v in zip(params, grads, opt["m"], opt["v"]):
        np_ = {}
        nm = {}
        nv = {}
        for k in p:
            gk = g[k] + weight_decay * p[k]
            nm[k] = b1 * m[k] + (1 - b1) * gk
            nv[k] = b2 * v[k] + (1 - b2) * gk * gk
            np_[k] = (p[k] - step * nm[k] / (np.sqrt(nv[k]) + eps)).astype(np.float32)
        out_p.append(np_)
        out_m.append(nm)
        out_v.append(nv)
    return out_p, {"t": t, "m": out_m, "v": out_v}, value


def np_accuracy(params, x, y):
    h = x
    for layer in params[:-1]:
        h = np.maximum(h @ layer["w"] + layer["b"], 0.0)
    return float(np.mean(np.argmax(h @ params[-1]["w"] + params[-1]["b"], axis=-1) == y))


# ------------------------------------------------------------------------------------------------ training

def train(backend="cranax", epochs=30, batch_size=128, hidden=(256, 256), lr=3e-3, seed=0, max_steps=None,
          target=0.97, log=print, data=None):
    """Trains and returns a dict: per-epoch losses / accuracies / step times, the compile time, the time to
    reach ``target`` test accuracy (compile included; None if never), the final accuracy and the per-example
    gradient norms of the last epoch. ``max_steps`` stops early (for tests)."""
    x_tr, y_tr, x_te, y_te = data if data is not None else load_data()
    sizes = [x_tr.shape[1], *hidden, 10]
    y1h_tr = one_hot(y_tr)
    n_batches = len(x_tr) // batch_size
    rng = np.random.default_rng(seed)  # minibatch order (host side, like most JAX input pipelines)
    is_np = backend == "numpy"
    if is_np:
        params = np_init(seed, sizes)
        opt = {"t": 0, "m": [{k: np.zeros_like(v) for k, v in p.items()} for p in params],
               "v": [{k: np.zeros_like(v) for k, v in p.items()} for p in params]}
        step_fn = lambda p, o, x, y: np_train_step(p, o, x, y, lr=lr)
        acc_fn = np_accuracy
        norms_fn = None
        block = lambda v: v
    else:
        use_backend(backend)
        params = init_params(random.PRNGKey(seed), sizes)
        opt = adam_init(params)
        step_fn = make_train_step(lr=lr)
        acc_fn = make_eval()
        norms_fn = make_per_example_grad_norms()
        block = jax.block_until_ready
        x_te_d, y_te_d = jax.device_put(x_te), jax.device_put(y_te)
    hist = {"backend": backend, "loss": [], "accuracy": [], "step_median_s": [], "epoch_s": [],
            "grad_norm_mean": [], "grad_norm_max": []}
    compile_s = 0.0
    first = {"step": True, "acc": True, "norms": True}
    t_start = time.perf_counter()
    time_to_target = None
    steps = 0
    done = False
    for epoch in range(epochs):
        perm = rng.permutation(len(x_tr))
        step_times, losses = [], []
        t_epoch = time.perf_counter()
        for b in range(n_batches):
            idx = perm[b * batch_size:(b + 1) * batch_size]
            xb, yb = x_tr[idx], y1h_tr[idx]
            t0 = time.perf_counter()
            params, opt, value = step_fn(params, opt, xb, yb)
            block(value)
            dt = time.perf_counter() - t0
            if first["step"]:
                compile_s += dt
                first["step"] = False
            else:
                step_times.append(dt)
            losses.append(float(value))
            steps += 1
            if max_steps is not None and steps >= max_steps:
                done = True
                break
        epoch_s = time.perf_counter() - t_epoch
        t0 = time.perf_counter()
        acc = float(acc_fn(params, x_te, y_te) if is_np else acc_fn(params, x_te_d, y_te_d))
        if first["acc"] and not is_np:
            compile_s += time.perf_counter() - t0
        first["acc"] = False
        hist["loss"].append(float(np.mean(losses)))
        hist["accuracy"].append(acc)
        hist["step_median_s"].append(statistics.median(step_times) if step_times else None)
        hist["epoch_s"].append(epoch_s)
        if time_to_target is None and acc >= target:
            time_to_target = time.perf_counter() - t_start
        msg = (f"epoch {epoch + 1:3d}  loss {hist['loss'][-1]:.4f}  test acc {acc * 100:6.2f}%  "
               f"step {_fmt(hist['step_median_s'][-1])} (median of {len(step_times)})  epoch {_fmt(epoch_s)}")
        if norms_fn is not None:
            # per-example gradient norms of one fixed batch (outside the timed steps)
            t0 = time.perf_counter()
            nrm = np.asarray(norms_fn(params, x_tr[:batch_size], y1h_tr[:batch_size]))
            if first["norms"]:
                compile_s += time.perf_counter() - t0
            first["norms"] = False
            hist["grad_norm_mean"].append(float(nrm.mean()))
            hist["grad_norm_max"].append(float(nrm.max()))
            msg += f"  per-example |grad| mean {nrm.mean():.3f} max {nrm.max():.3f}"
        log(msg)
        if done:
            break
    hist.update(compile_s=None if is_np else compile_s, time_to_target_s=time_to_target,
                total_s=time.perf_counter() - t_start, final_accuracy=hist["accuracy"][-1], steps=steps,
                params=params)
    all_steps = [s for s in hist["step_median_s"] if s is not None]
    hist["step_s"] = statistics.median(all_steps) if all_steps else None
    return hist


def _fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e6:.0f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def describe(backend):
    if backend == "numpy":
        return f"NumPy {np.__version__} (hand-written forward/backward)"
    d = jax.devices()[0]
    return f"{jax.__name__} {getattr(jax, '__version__', '?')} on {d!r} ({d.platform})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["cranax", "jax", "numpy"], default="cranax")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke test)")
    ap.add_argument("--compare", action="store_true",
                    help="train with cranax, JAX (if importable) and NumPy in turn and print a table")
    a = ap.parse_args(argv)
    if a.compare:
        return compare(a)
    if a.backend != "numpy":
        use_backend(a.backend)
    x_tr, y_tr, x_te, y_te = data = load_data()
    print(f"digits: {len(x_tr)} train / {len(x_te)} test images (8×8), MLP {[64, *a.hidden, 10]}, "
          f"batch {a.batch_size}, Adam lr {a.lr}")
    print(f"backend: {describe(a.backend)}")
    h = train(a.backend, epochs=a.epochs, batch_size=a.batch_size, hidden=tuple(a.hidden), lr=a.lr, seed=a.seed,
              max_steps=a.max_steps, data=data)
    print(f"final test accuracy {h['final_accuracy'] * 100:.2f}%  steady step {_fmt(h['step_s'])} (median)  "
          f"total compile time {_fmt(h['compile_s']) if h['compile_s'] is not None else '- (no compiler)'}  "
          f"time to 97% {_fmt(h['time_to_target_s']) if h['time_to_target_s'] else 'not reached'}  "
          f"total {_fmt(h['total_s'])}")
    return h


def compare(a):
    """Trains with each backend in turn (same data, same hyper-parameters, same process) and prints a
    markdown table: steady-state step time, compile time, time to 97% (compile included), accuracy."""
    backends = ["cranax"]
    try:
        import os
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax as _jax  # noqa: F401
        backends.append("jax")
    except Exception:
        print("JAX is not importable here: comparing cranax with NumPy only")
    backends.append("numpy")
    data = load_data()
    rows = {}
    for b in backends:
        print(f"--- {b}")
        if b != "numpy":
            use_backend(b)
        rows[b] = (describe(b), train(b, epochs=a.epochs, batch_size=a.batch_size, hidden=tuple(a.hidden),
                                      lr=a.lr, seed=a.seed, data=data, log=lambda *x: None))
        h = rows[b][1]
        print(f"    step {_fmt(h['step_s'])}, compile {_fmt(h['compile_s']) if h['compile_s'] else '-'}, "
              f"time to 97% {_fmt(h['time_to_target_s']) if h['time_to_target_s'] else 'not reached'}, "
              f"final accuracy {h['final_accuracy'] * 100:.2f}%")
    print()
    try:
        from cranax.bench._timing import machine_line
        print(f"machine: {machine_line()}")
    except ImportError:
        import platform
        print(f"machine: {platform.processor() or platform.machine()}")
    print(f"digits MLP {[64, *a.hidden, 10]}, batch {a.batch_size}, Adam lr {a.lr}, {a.epochs} epochs, "
          f"seed {a.seed}; step = median over all steps after the first, each waited for")
    print()
    print("| system | steady step (batch %d) | compile (first calls) | time to 97%% (compile incl.) | "
          "final test acc | total |" % a.batch_size)
    print("|---|---:|---:|---:|---:|---:|")
    for b, (desc, h) in rows.items():
        print(f"| {desc} | {_fmt(h['step_s'])} | {_fmt(h['compile_s']) if h['compile_s'] else '-'} | "
              f"{_fmt(h['time_to_target_s']) if h['time_to_target_s'] else 'not reached'} | "
              f"{h['final_accuracy'] * 100:.2f}% | {_fmt(h['total_s'])} |")
    if "jax" in rows:
        c, j = rows["cranax"][1], rows["jax"][1]
        print()
        print(f"cranax / JAX: step {c['step_s'] / j['step_s']:.2f}x"
              + (f", time to 97% {c['time_to_target_s'] / j['time_to_target_s']:.2f}x"
                 if c["time_to_target_s"] and j["time_to_target_s"] else ""))
    return rows


if __name__ == "__main__":
    main()
