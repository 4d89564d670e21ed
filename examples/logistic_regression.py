"""Logistic regression on scikit-learn's bundled breast-cancer data (569 samples, 30 features; no download).

    python examples/logistic_regression.py                 # cranax
    python examples/logistic_regression.py --backend jax   # the same code under JAX

Full-batch gradient descent with a ``jit(value_and_grad(loss))`` step on an L2-regularised binary
cross-entropy (written with ``log_sigmoid`` so large logits don't overflow), parameters in a pytree
``{"w", "b"}``, and the whole data set put on the device once with ``device_put``. Prints loss and accuracy as
it trains, the first-call (compile) time and the steady-state step time, and scikit-learn's own
LogisticRegression accuracy on the same split for comparison.
"""
import argparse
import statistics
import time

import numpy as np

jax = jnp = None


def use_backend(name):
    global jax, jnp
    if name == "jax":
        import os
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax as lib
        import jax.numpy as lib_np
    else:
        import cranax as lib
        import cranax.numpy as lib_np
    jax, jnp = lib, lib_np


def load_data(seed=0):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    d = load_breast_cancer()
    x_tr, x_te, y_tr, y_te = train_test_split(d.data, d.target, test_size=0.25, random_state=seed,
                                              stratify=d.target)
    mu, sd = x_tr.mean(0), x_tr.std(0) + 1e-8  # standardise with the training statistics only
    f = lambda x: ((x - mu) / sd).astype(np.float32)
    return f(x_tr), y_tr.astype(np.float32), f(x_te), y_te.astype(np.float32)


def log_sigmoid(z):
    return -jnp.logaddexp(0.0, -z)


def loss(params, x, y, l2=1e-3):
    z = x @ params["w"] + params["b"]
    nll = -jnp.mean(y * log_sigmoid(z) + (1.0 - y) * log_sigmoid(-z))
    return nll + 0.5 * l2 * jnp.sum(params["w"] ** 2)


def make_step(lr):
    @jax.jit
    def step(params, x, y):
        value, g = jax.value_and_grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, g), value
    return step


def make_accuracy():
    @jax.jit
    def accuracy(params, x, y):
        return jnp.mean(((x @ params["w"] + params["b"]) > 0) == (y > 0.5))
    return accuracy


def train(backend="cranax", steps=300, lr=0.5, log=print, every=50):
    use_backend(backend)
    x_tr, y_tr, x_te, y_te = load_data()
    x_tr, y_tr, x_te, y_te = jax.device_put((x_tr, y_tr, x_te, y_te))
    params = {"w": jnp.zeros((x_tr.shape[1],), dtype=jnp.float32), "b": jnp.zeros((), dtype=jnp.float32)}
    step, accuracy = make_step(lr), make_accuracy()
    losses, times = [], []
    first_call = None
    for i in range(steps):
        t0 = time.perf_counter()
        params, value = step(params, x_tr, y_tr)
        value.block_until_ready()
        dt = time.perf_counter() - t0
        if i == 0:
            first_call = dt
        else:
            times.append(dt)
        losses.append(float(value))
        if (i + 1) % every == 0 or i == 0:
            log(f"step {i + 1:4d}  loss {losses[-1]:.4f}  train acc {float(accuracy(params, x_tr, y_tr)) * 100:6.2f}%"
                f"  test acc {float(accuracy(params, x_te, y_te)) * 100:6.2f}%")
    test_acc = float(accuracy(params, x_te, y_te))
    return {"loss": losses, "test_accuracy": test_acc, "first_call_s": first_call,
            "step_s": statistics.median(times) if times else None, "params": params}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["cranax", "jax"], default="cranax")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.5)
    a = ap.parse_args(argv)
    use_backend(a.backend)
    d = jax.devices()[0]
    print(f"backend: {jax.__name__} {getattr(jax, '__version__', '?')} on {d!r}")
    h = train(a.backend, steps=a.steps, lr=a.lr)
    msg = (f"test accuracy {h['test_accuracy'] * 100:.2f}%  first call (trace+compile+run) "
           f"{h['first_call_s'] * 1e3:.1f} ms  steady step {h['step_s'] * 1e6:.0f} µs (median)")
    try:
        from sklearn.linear_model import LogisticRegression
        x_tr, y_tr, x_te, y_te = load_data()
        sk = LogisticRegression(max_iter=1000).fit(x_tr, y_tr).score(x_te, y_te)
        msg += f"  [scikit-learn LogisticRegression: {sk * 100:.2f}%]"
    except Exception:
        pass
    print(msg)
    return h


if __name__ == "__main__":
    main()
