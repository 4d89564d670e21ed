"""Train a small CNN on scikit-learn's bundled digits (1,797 real 8×8 images; nothing is downloaded).

    python examples/cnn_digits.py                   # cranax
    python examples/cnn_digits.py --backend jax     # the same code under JAX (import swapped, nothing else)
    python examples/cnn_digits.py --compare         # both in one process: a markdown table of the figures

Written as one would for JAX with its own example libraries: the model is a ``stax.serial`` of two 3×3
convolutions (``lax.conv_general_dilated``, NHWC/HWIO), a 2×2 max-pool (``lax.reduce_window``), and a dense
head; the loss is the mean cross-entropy from ``LogSoftmax``; ``optimizers.adam`` updates the parameters in one
``jit``-compiled step over fixed-size minibatches (the last partial batch of an epoch is dropped, so the step
never sees a new shape). The 8×8 images are used at their size, one channel. Each epoch prints the loss, the
test accuracy and the steady-state step time (each step waited for with ``block_until_ready``); the end prints
the compile time (first calls of the jitted step and evaluation: trace + compile + run), the time to reach the
target accuracy (compile included) and the final accuracy.
"""
import argparse
import statistics
import time

import numpy as np

# Filled in by use_backend(): the library under test, imported the way JAX code imports JAX.
jax = jnp = random = stax = optimizers = None


def use_backend(name):
    """Imports ``jax`` (or ``cranax`` as ``jax``) and its ``example_libraries`` into this module's globals;
    the rest of the file is the same for both."""
    global jax, jnp, random, stax, optimizers
    if name == "jax":
        import os
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax as lib
        import jax.numpy as lib_np
        from jax.example_libraries import optimizers as lib_opt, stax as lib_stax
    elif name == "cranax":
        import cranax as lib
        import cranax.numpy as lib_np
        from cranax.example_libraries import optimizers as lib_opt, stax as lib_stax
    else:
        raise ValueError(name)
    jax, jnp, random, stax, optimizers = lib, lib_np, lib.random, lib_stax, lib_opt


def load_data(test_size=0.2, seed=0):
    """(x_train, y_train, x_test, y_test): images as (N, 8, 8, 1) float32 in [0, 1], integer labels; a
    stratified split with a fixed seed."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[..., None]
    y = d.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_size, random_state=seed, stratify=y)
    return x_tr, y_tr, x_te, y_te


def make_model(width=32):
    return stax.serial(
        stax.Conv(width, (3, 3), padding="SAME"), stax.Relu,
        stax.Conv(2 * width, (3, 3), padding="SAME"), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Flatten,
        stax.Dense(128), stax.Relu,
        stax.Dense(10), stax.LogSoftmax)


def train(backend="cranax", epochs=20, batch_size=64, width=32, lr=2e-3, seed=0, target=0.98, max_steps=None,
          log=print, data=None):
    """Trains; returns a dict with per-epoch losses, accuracies and step times, ``compile_s``, ``step_s``
    (median steady step), ``time_to_target_s`` (None if never reached), ``final_accuracy`` and ``steps``."""
    use_backend(backend)
    x_tr, y_tr, x_te, y_te = data if data is not None else load_data()
    y1h_tr = np.eye(10, dtype=np.float32)[y_tr]
    init_fun, predict = make_model(width)
    _, params = init_fun(random.PRNGKey(seed), (-1, 8, 8, 1))
    opt_init, opt_update, get_params = optimizers.adam(lr)

    def loss(params, x, y1h):
        return -jnp.mean(jnp.sum(predict(params, x) * y1h, axis=-1))

    @jax.jit
    def update(i, opt_state, x, y1h):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), x, y1h)
        return opt_update(i, grads, opt_state), value

    @jax.jit
    def accuracy(params, x, y):
        return jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y)

    opt_state = opt_init(params)
    rng = np.random.default_rng(seed)  # minibatch order (host side)
    n_batches = len(x_tr) // batch_size
    hist = {"backend": backend, "loss": [], "accuracy": [], "step_median_s": []}
    compile_s, first_step, first_acc = 0.0, True, True
    x_te_d, y_te_d = jax.device_put(x_te), jax.device_put(y_te)
    t_start = time.perf_counter()
    time_to_target = None
    steps, done = 0, False
    for epoch in range(epochs):
        perm = rng.permutation(len(x_tr))
        step_times, losses = [], []
        for b in range(n_batches):
            idx = perm[b * batch_size:(b + 1) * batch_size]
            t0 = time.perf_counter()
            opt_state, value = update(steps, opt_state, x_tr[idx], y1h_tr[idx])
            jax.block_until_ready(value)
            dt = time.perf_counter() - t0
            if first_step:
                compile_s += dt
                first_step = False
            else:
                step_times.append(dt)
            losses.append(float(value))
            steps += 1
            if max_steps is not None and steps >= max_steps:
                done = True
                break
        t0 = time.perf_counter()
        acc = float(accuracy(get_params(opt_state), x_te_d, y_te_d))
        if first_acc:
            compile_s += time.perf_counter() - t0
            first_acc = False
        hist["loss"].append(float(np.mean(losses)))
        hist["accuracy"].append(acc)
        hist["step_median_s"].append(statistics.median(step_times) if step_times else None)
        if time_to_target is None and acc >= target:
            time_to_target = time.perf_counter() - t_start
        log(f"epoch {epoch + 1:3d}  loss {hist['loss'][-1]:.4f}  test acc {acc * 100:6.2f}%  "
            f"step {_fmt(hist['step_median_s'][-1])} (median of {len(step_times)})")
        if done:
            break
    all_steps = [s for s in hist["step_median_s"] if s is not None]
    hist.update(compile_s=compile_s, step_s=statistics.median(all_steps) if all_steps else None,
                time_to_target_s=time_to_target, total_s=time.perf_counter() - t_start,
                final_accuracy=hist["accuracy"][-1], steps=steps, target=target)
    return hist


def _fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e6:.0f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def summary(h):
    ttt = _fmt(h["time_to_target_s"]) if h["time_to_target_s"] is not None else "not reached"
    return (f"final test accuracy {h['final_accuracy'] * 100:.2f}%  compile time {_fmt(h['compile_s'])}  "
            f"steady step {_fmt(h['step_s'])} (median)  time to {h['target'] * 100:.0f}% {ttt}  "
            f"total {_fmt(h['total_s'])}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["cranax", "jax"], default="cranax")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--width", type=int, default=32, help="channels of the first conv (the second has twice)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", type=float, default=0.98)
    ap.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke test)")
    ap.add_argument("--compare", action="store_true", help="train with cranax, then JAX (if importable)")
    a = ap.parse_args(argv)
    data = load_data()
    backends = ["cranax", "jax"] if a.compare else [a.backend]
    results = []
    for backend in backends:
        try:
            use_backend(backend)
        except ImportError as e:
            print(f"{backend}: not importable ({e}); skipped")
            continue
        d = jax.devices()[0]
        print(f"digits: {len(data[0])} train / {len(data[2])} test images (8×8×1), CNN conv{a.width}-conv"
              f"{2 * a.width}-maxpool-dense128-dense10, batch {a.batch_size}, Adam lr {a.lr}")
        print(f"backend: {jax.__name__} {getattr(jax, '__version__', '?')} on {d!r}")
        h = train(backend, epochs=a.epochs, batch_size=a.batch_size, width=a.width, lr=a.lr, seed=a.seed,
                  target=a.target, max_steps=a.max_steps, data=data)
        print(summary(h))
        results.append(h)
    if a.compare and len(results) > 1:
        print("\n| backend | final acc | compile | steady step | time to target |\n|---|---|---|---|---|")
        for h in results:
            ttt = _fmt(h["time_to_target_s"]) if h["time_to_target_s"] is not None else "not reached"
            print(f"| {h['backend']} | {h['final_accuracy'] * 100:.2f}% | {_fmt(h['compile_s'])} | "
                  f"{_fmt(h['step_s'])} | {ttt} |")
    return results[-1] if results else None


if __name__ == "__main__":
    main()
