"""The standard suite of ``python -m cranax.bench``: the seed examples, an MLP training step, and matmul and
selu swept over input sizes, for cranax, NumPy and (when importable) JAX, every figure through
:func:`cranax.bench.measure` (correctness against NumPy checked before timing)."""
import math
import os
import types

import numpy as np

from . import _timing as bu
from . import measure, ReportTable, get_system

__all__ = ["available_systems", "build_suite", "run_suite", "crossovers", "Case"]


def available_systems(want=("cranax", "numpy", "jax")):
    """The systems of ``want`` that import here (JAX is optional; it is pinned to the CPU unless
    ``JAX_PLATFORMS`` says otherwise, so its figures compare with cranax's CPU backend)."""
    out = []
    for name in want:
        if name == "jax":
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
        try:
            get_system(name)
        except Exception:
            continue
        out.append(name)
    return out


def _lib(name):
    """jnp / jit / grad / vmap / value_and_grad / tree_map of cranax or JAX, under one set of names."""
    if name == "cranax":
        import cranax as m
        import cranax.numpy as mnp
    else:
        import jax as m
        import jax.numpy as mnp
    return types.SimpleNamespace(name=name, jnp=mnp, jit=m.jit, grad=m.grad, vmap=m.vmap,
                                 value_and_grad=m.value_and_grad, tree_map=m.tree_util.tree_map,
                                 stop_gradient=m.lax.stop_gradient)


class Case:
    """One benchmark: ``make(lib)`` builds the function for cranax or JAX, ``numpy_fn`` is both the NumPy
    contender and the reference, ``args`` the host inputs (NumPy)."""

    def __init__(self, name, group, make, numpy_fn, args, size=None, flops=None, rtol=None):
        self.name, self.group, self.make, self.numpy_fn = name, group, make, numpy_fn
        self.args, self.size, self.flops, self.rtol = args, size, flops, rtol


# ------------------------------------------------------------------------------------------------- cases

def _selu(lib):
    jnp = lib.jnp

    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    return selu


def _selu_np(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def _matmul(lib):
    def matmul(a, b):
        return lib.jnp.dot(a, b)
    return matmul


def _matmul_np(a, b):
    return np.dot(a, b)


def _sum_logistic_grad(lib):
    jnp = lib.jnp

    def sum_logistic(x):
        return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))
    return lib.grad(sum_logistic)


def _sum_logistic_grad_np(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return (s * (1.0 - s)).astype(x.dtype)


def _apply_matrix_vmap(lib):
    def batched(matrix, vs):
        return lib.vmap(lambda v: lib.jnp.dot(matrix, v))(vs)
    return batched


def _apply_matrix_np(matrix, vs):
    return vs @ matrix.T


def _f200(lib):
    jnp = lib.jnp

    def f200(x):
        y = x
        for _ in range(200):
            y = jnp.sin(y) + y * 0.5
        return y
    return f200


def _f200_np(x):
    y = x
    for _ in range(200):
        y = np.sin(y) + y * np.float32(0.5)
    return y


def _inc(lib):
    return lambda i: i + 1


def _inc_np(i):
    return i + 1


MLP_SIZES = (64, 256, 256, 10)
MLP_LR = 0.01


def _mlp_step(lib):
    jnp = lib.jnp

    def loss(params, x, y1h):
        h = x
        for layer in params[:-1]:
            h = jnp.maximum(h @ layer["w"] + layer["b"], 0.0)
        z = h @ params[-1]["w"] + params[-1]["b"]
        z = z - lib.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
        logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))
        return -jnp.mean(jnp.sum(y1h * logp, axis=-1))

    def step(params, x, y1h):
        value, g = lib.value_and_grad(loss)(params, x, y1h)
        return value, lib.tree_map(lambda p, g: p - MLP_LR * g, params, g)
    return step


def _mlp_step_np(params, x, y1h):
    hs, h = [x], x
    for layer in params[:-1]:
        h = np.maximum(h @ layer["w"] + layer["b"], 0.0)
        hs.append(h)
    z = h @ params[-1]["w"] + params[-1]["b"]
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    n = x.shape[0]
    value = np.float32(-np.sum(y1h * logp) / n)
    dz = (np.exp(logp) - y1h) / n
    new = [None] * len(params)
    for i in range(len(params) - 1, -1, -1):
        gw, gb = hs[i].T @ dz, dz.sum(axis=0)
        if i:
            dz = (dz @ params[i]["w"].T) * (hs[i] > 0)
        new[i] = {"w": params[i]["w"] - np.float32(MLP_LR) * gw, "b": params[i]["b"] - np.float32(MLP_LR) * gb}
    return value, new


def _mlp_args(rng, batch=128):
    params = [{"w": (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32),
               "b": (0.1 * rng.standard_normal(n)).astype(np.float32)}
              for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]
    x = rng.random((batch, MLP_SIZES[0]), dtype=np.float32)
    y1h = np.eye(MLP_SIZES[-1], dtype=np.float32)[rng.integers(0, MLP_SIZES[-1], batch)]
    return params, x, y1h


def _mlp_flops(batch=128):
    f = 0
    for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        f += 3 * 2 * batch * m * n  # forward, and two products backward
    return f


SELU_SIZES = [10 ** k for k in range(1, 8)]             # 10 .. 1e7 elements
MATMUL_SIZES = [10 ** k for k in range(1, 8)]           # elements of each n×n operand: n = √size


def build_suite(quick=False, seed=0, only=None):
    """The list of :class:`Case` of the standard suite. ``quick`` keeps the sweeps but stops matmul at 1e6
    elements (n = 1000) and the seed dot at n = 1000. ``only``: names of groups to keep
    ("seed", "mlp", "selu", "matmul")."""
    rng = np.random.default_rng(seed)
    cases = []
    # the seed examples
    n_dot = 1000 if quick else 3000
    a = rng.standard_normal((n_dot, n_dot)).astype(np.float32)
    cases.append(Case(f"seed: dot x·xᵀ {n_dot}²", "seed", lambda lib: (lambda x, xt: lib.jnp.dot(x, xt)),
                      _matmul_np, (a, np.ascontiguousarray(a.T)), size=n_dot * n_dot, flops=2 * n_dot ** 3))
    x = rng.standard_normal(1_000_000).astype(np.float32)
    cases.append(Case("seed: selu 1M jit", "seed", _selu, _selu_np, (x,), size=x.size))
    x = rng.standard_normal(1_000_000).astype(np.float32)
    cases.append(Case("seed: grad(sum_logistic) 1M", "seed", _sum_logistic_grad, _sum_logistic_grad_np, (x,),
                      size=x.size))
    m = rng.standard_normal((150, 100)).astype(np.float32)
    vs = rng.standard_normal((10, 100)).astype(np.float32)
    cases.append(Case("seed: vmap(apply_matrix)", "seed", _apply_matrix_vmap, _apply_matrix_np, (m, vs),
                      size=vs.size))
    cases.append(Case("seed: f200 sin chain (scalar)", "seed", _f200, _f200_np, (np.float32(1.0),), size=1))
    cases.append(Case("seed: dispatch inc(ones(3))", "seed", _inc, _inc_np, (np.ones(3, np.float32),), size=3))
    # the MLP training step
    cases.append(Case("mlp step (batch 128, 64-256-256-10)", "mlp", _mlp_step, _mlp_step_np, _mlp_args(rng),
                      size=128, flops=_mlp_flops(128)))
    # the sweeps
    for s in SELU_SIZES:
        x = rng.standard_normal(s).astype(np.float32)
        cases.append(Case("selu", "selu", _selu, _selu_np, (x,), size=s))
    for s in MATMUL_SIZES:
        if quick and s > 10 ** 6:
            continue
        n = max(1, int(round(math.sqrt(s))))
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        cases.append(Case("matmul", "matmul", _matmul, _matmul_np, (a, b), size=s, flops=2 * n ** 3))
    if only:
        cases = [c for c in cases if c.group in only]
    return cases


def run_suite(cases, systems, quick=False, progress=print):
    """Measures every case on every system; returns a :class:`ReportTable`. NumPy's own result is its
    reference too (so its row reads "ok" by construction)."""
    reports = ReportTable()
    total = len(cases) * len(systems)
    budget = 0.2 if quick else 0.6
    i = 0
    libs = {s: _lib(s) for s in systems if s != "numpy"}
    for case in cases:
        for sysname in systems:
            i += 1
            big = (case.flops or 0) > 2e10 or (case.size or 0) >= 10 ** 7
            kw = dict(reference=case.numpy_fn, name=case.name, size=case.size, flops=case.flops,
                      budget=budget, warmup=1 if big else (2 if quick else 3), rtol=case.rtol,
                      max_repeat=7 if big else (21 if quick else 51))
            if sysname == "numpy":
                r = measure(case.numpy_fn, *case.args, backend="numpy", **kw)
            else:
                lib = libs[sysname]
                fn = lib.jit(case.make(lib))
                r = measure(fn, *case.args, backend=sysname, **kw)
            r.extra["group"] = case.group
            reports.append(r)
            if progress:
                if r.error:
                    st = "FAILED " + r.error[:80]
                elif r.correct is False:
                    st = f"WRONG (max|Δ| {r.max_abs_diff:.2g})"
                else:
                    st = f"steady {bu.fmt_time(r.steady_median_s)}"
                    if r.compile_s is not None:
                        st += f", compile {bu.fmt_time(r.compile_s)}"
                size = "" if case.group in ("seed", "mlp") else f" size {case.size:.0e}"
                progress(f"[{i:3d}/{total}] {case.name}{size} · {sysname}: {st}")
    return reports


def crossovers(reports, group, a="cranax", b="numpy"):
    """For a sweep ``group``: the smallest size from which ``a``'s steady-state median stays below ``b``'s at
    every larger measured size (None when ``a`` is never ahead at the largest size). Only ranked reports
    (correct, no error) count. Returns a dict with the size, and the per-size ratios a/b."""
    ta = {r.size: r.steady_median_s for r in reports if r.extra.get("group") == group and r.system == a
          and r.ranked and r.steady_median_s}
    tb = {r.size: r.steady_median_s for r in reports if r.extra.get("group") == group and r.system == b
          and r.ranked and r.steady_median_s}
    sizes = sorted(set(ta) & set(tb))
    ratios = {s: ta[s] / tb[s] for s in sizes}
    cross = None
    for s in reversed(sizes):
        if ratios[s] < 1.0:
            cross = s
        else:
            break
    return {"group": group, "faster": a, "than": b, "from_size": cross, "ratios": ratios,
            "sizes": sizes, "always": bool(sizes) and cross == sizes[0]}
