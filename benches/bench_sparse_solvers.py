"""jax.scipy.sparse.linalg on 1-D Poisson-like systems (n=40): iteration counts (float32, float64; the first
maxiter near JAX's count whose result is the converged one), relative residuals, and a jitted solve's time.
``python benches/bench_sparse_solvers.py cranax|jax`` (the jax run needs a real JAX in the interpreter)."""
import sys, time
import numpy as np
if sys.argv[1:] != ["jax"]:
    import cranax as jax, cranax.numpy as jnp
    import cranax.scipy.sparse.linalg as spl
else:
    import jax, jax.numpy as jnp
    import jax.scipy.sparse.linalg as spl
N = 40
def systems(dt):
    P = (2 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1)).astype(dt)
    G = (P + 0.3 * np.eye(N, k=2) - 0.2 * np.eye(N, k=-3)).astype(dt)
    return P, G, (np.sin(np.arange(N) * 0.7) + 0.1).astype(dt)
JAXK = {"cg": 40, "bicgstab": 32, "gmres_b10": 6, "gmres_i10": 15, "gmres_b5": 131}
for x64 in (False, True):
    jax.config.update("jax_enable_x64", x64)
    dt = np.float64 if x64 else np.float32
    P, G, b = systems(dt)
    cases = {"cg": (spl.cg, P, {}), "bicgstab": (spl.bicgstab, G, {}), "gmres_b10": (spl.gmres, G, {"restart": 10}),
             "gmres_i10": (spl.gmres, G, {"restart": 10, "solve_method": "incremental"}),
             "gmres_b5": (spl.gmres, P, {"restart": 5})}
    row = []
    for name, (s, A, kw) in cases.items():
        full = np.asarray(s(A, b, **kw)[0])
        k0 = JAXK[name]
        k = next(k for k in range(max(0, k0 - 4), k0 + 5) if np.array_equal(np.asarray(s(A, b, maxiter=k, **kw)[0]), full))
        r = np.linalg.norm(A.astype(np.float64) @ full.astype(np.float64) - b) / np.linalg.norm(b)
        row.append(f"{name} k={k} res={r:.2e}")
    print("x64" if x64 else "f32", "; ".join(row))
jax.config.update("jax_enable_x64", False)
P, G, b = systems(np.float32)
for name, f in (("cg", jax.jit(lambda b: spl.cg(P, b)[0])), ("gmres_b10", jax.jit(lambda b: spl.gmres(G, b, restart=10)[0]))):
    f(b).block_until_ready()
    ts = []
    for _ in range(30):
        t0 = time.perf_counter(); f(b).block_until_ready(); ts.append(time.perf_counter() - t0)
    print(f"time {name} f32 jit n=40: median {np.median(ts)*1e6:.0f} us min {np.min(ts)*1e6:.0f} us")
