"""Newton's method inside ``lax.while_loop``, with the derivative from ``grad``.

    python examples/newton.py                  # cranax: sqrt(2) as the root of x² - 2
    python examples/newton.py --backend jax    # the same code under JAX

The whole iteration is one compiled program: ``jit`` traces ``while_loop(cond, body, state)`` once, the loop
runs in the compiled code (no Python per iteration), and ``body`` uses ``grad(f)`` for f'(x). It stops when
|f(x)| ≤ tol or after ``max_iter`` steps and returns the root and the number of steps.
"""
import argparse
import time

import numpy as np

jax = jnp = lax = None


def use_backend(name):
    global jax, jnp, lax
    if name == "jax":
        import os
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax as lib
        import jax.numpy as lib_np
    else:
        import cranax as lib
        import cranax.numpy as lib_np
    jax, jnp, lax = lib, lib_np, lib.lax


def newton(f, x0, tol=1e-6, max_iter=50):
    """(root, iterations) of Newton's method x ← x - f(x)/f'(x) from ``x0``, run in ``lax.while_loop``."""
    df = jax.grad(f)

    def cond(state):
        x, i = state
        return jnp.logical_and(jnp.abs(f(x)) > tol, i < max_iter)

    def body(state):
        x, i = state
        return x - f(x) / df(x), i + 1

    return lax.while_loop(cond, body, (x0, jnp.asarray(0, dtype=jnp.int32)))


def make_sqrt(tol=1e-6, max_iter=50):
    """A jitted sqrt(a) by Newton on f(x) = x² - a, starting from x0 = max(a, 1); stops when
    |x² - a| ≤ tol·max(a, 1)."""
    @jax.jit
    def newton_sqrt(a):
        scale = jnp.maximum(a, 1.0)
        return newton(lambda x: x * x - a, scale, tol=tol * scale, max_iter=max_iter)
    return newton_sqrt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["cranax", "jax"], default="cranax")
    ap.add_argument("--a", type=float, nargs="+", default=[2.0, 3.0, 10.0, 1e4])
    a = ap.parse_args(argv)
    use_backend(a.backend)
    newton_sqrt = make_sqrt()
    results = {}
    for i, v in enumerate(a.a):
        t0 = time.perf_counter()
        root, n = newton_sqrt(jnp.asarray(v, dtype=jnp.float32))
        root.block_until_ready()
        dt = time.perf_counter() - t0
        root, n = float(root), int(n)
        results[v] = (root, n)
        what = "first call (trace + compile + run)" if i == 0 else "cached call"
        print(f"sqrt({v:g}) = {root:.7f}  (numpy {np.sqrt(v):.7f}, |Δ| {abs(root - np.sqrt(v)):.1e})  "
              f"in {n} Newton steps; {what} {dt * 1e3:.2f} ms")
    print(jax.make_jaxpr(lambda x: make_sqrt()(x))(jnp.asarray(2.0, dtype=jnp.float32)))
    return results


if __name__ == "__main__":
    main()
