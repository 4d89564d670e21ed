"""Real programs, cranax vs JAX in one run (issue 23, item 5): the ecosystem's programs (diffrax Tsit5 solve,
blackjax HMC and NUTS steps, optax training inside one ``fori_loop``, an equinox MLP step; built by
``bench_ecosystem._programs``), the digits MLP training step (``examples/digits_mlp.py``), a 1,000-step scan
RNN (hidden 128) and the gradients of 200-step ones (separate weights; stacked weights read as ``W[0..2]``,
whose cotangents reverse mode adds as zero pads), the seed's selu on 1M float32, two while-loop micro-benchmarks (an f32[4] carry; an f32[1000]
carry through ``tanh`` and ``sin``), general float32 matmul at 256/1024/3000 and a long Adam run
(``bench_adam_long.run``: 10,000 digits-MLP steps, the median step time of the first and of the last 1,000).

    python benches/bench_programs.py [--quick] [--jax-python /tmp/jaxvenv/bin/python]

Each side runs in its own subprocess (this file with ``--worker``): cranax twice, with
``CRANAX_CPU_BLOCK_MATH=avx2`` and with the machine's default choice, and JAX once (``--jax-python``, else
``JAX_PYTHON``, else /tmp/jaxvenv/bin/python when it exists; it needs the libraries of
tests/ecosystem/requirements.txt and scikit-learn). ``--rounds N`` (default 2) runs the three workers N times, the order
reversed every other round, and pools each row's steady samples over the rounds (one worker's run can fall in
a slow stretch of a shared machine); ``--only matmul,selu`` times only the rows naming one of the substrings. Every figure: the first call of a fresh jitted function
(trace + compile + run, caches cleared) and the steady state (2 warm-up calls, then repeats until a time budget:
min and median), each call waited for with ``block_until_ready``; while-loop rows are per iteration. Prints a
markdown table (ratios cranax / JAX of the medians, of the minima and of the first calls) naming the CPU model, its ISA flags,
the cores and the load. ``--quick`` takes smaller sizes (no 3000² matmul, 2,000 Adam steps); the full run (one round)
took 13 minutes on a 2-core machine under load 15-20.

``--smoke`` runs every program once in cranax at tiny sizes and prints its outputs as JSON
(tests/test_bench_programs.py checks them against NumPy and values recorded from JAX).
"""
import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
for _p in (HERE, EXAMPLES):
    if _p not in sys.path:
        sys.path.insert(0, _p)

# Sizes of each mode: matmul sides, scan RNN steps and hidden size, selu length, while-loop iteration counts
# (and the wide carry's length), the Adam run's steps and window.
SIZES = {
    "full": dict(mm=(256, 1024, 3000), rnn_T=1000, rnn_H=128, rnn_grad_T=200, selu_n=1_000_000, w4_n=100_000, wide=1000,
                 wide_n=2_000, adam_steps=10_000, adam_window=1000, budget=1.5),
    "quick": dict(mm=(256, 1024), rnn_T=1000, rnn_H=128, rnn_grad_T=200, selu_n=1_000_000, w4_n=20_000, wide=1000,
                  wide_n=500, adam_steps=2_000, adam_window=500, budget=0.4),
    "tiny": dict(mm=(8, 33), rnn_T=10, rnn_H=8, rnn_grad_T=10, selu_n=1000, w4_n=7, wide=16, wide_n=5, adam_steps=3,
                 adam_window=1, budget=0.0),
}
ECOSYSTEM = {   # row name here -> program name in bench_ecosystem._programs
    "diffrax Tsit5 + PID solve (jit)": "diffrax Tsit5 + PID diffeqsolve",
    "blackjax HMC step (10 leapfrog steps)": "blackjax HMC step",
    "blackjax NUTS step": "blackjax NUTS step",
    "optax clip+adamw MLP training, 200 steps in one fori_loop": "optax chain(clip, adamw) 200 steps in fori_loop",
    "equinox MLP filter_jit step": "equinox MLP filter_jit step",
}


# ------------------------------------------------------------------------------------------ inputs and oracles
# NumPy only (the test rebuilds the same inputs for its NumPy oracles).

def inputs(size):
    """The NumPy inputs of the non-ecosystem programs at ``size`` (a key of SIZES), fixed seeds."""
    z = SIZES[size]
    rng = np.random.default_rng(0)
    H = z["rnn_H"]
    out = {"rnn": (rng.standard_normal((H, H)).astype(np.float32) * np.float32(0.1),
                   rng.standard_normal((H, H)).astype(np.float32) * np.float32(0.1),
                   rng.standard_normal((z["rnn_T"], H)).astype(np.float32)),
           "selu": rng.standard_normal(z["selu_n"]).astype(np.float32),
           "w4": (rng.standard_normal(4).astype(np.float32), z["w4_n"]),
           "wide": (rng.standard_normal(z["wide"]).astype(np.float32), z["wide_n"])}
    for n in z["mm"]:
        out[f"mm{n}"] = (rng.standard_normal((n, n)).astype(np.float32),
                         rng.standard_normal((n, n)).astype(np.float32))
    # (a generator of its own: the inputs above stay those of earlier runs)
    g = np.random.default_rng(1)
    xs = g.standard_normal((z["rnn_grad_T"], H)).astype(np.float32)
    out["rnn_grad"] = (out["rnn"][0], out["rnn"][1], xs)
    out["rnn3_grad"] = (g.standard_normal((3, H, H)).astype(np.float32) * np.float32(0.05), xs)
    return out


def selu_np(x):
    return np.float32(1.05) * np.where(x > 0, x, np.float32(1.67) * np.exp(x) - np.float32(1.67))


def rnn_np(W, U, xs):
    h, hs = np.zeros(W.shape[0], np.float32), []
    for x in xs:
        h = np.tanh(h @ W + x @ U)
        hs.append(h)
    return h, np.stack(hs)


def rnn_grad_np(W, U, xs):
    """(dW, dU) of sum(h_T) + sum(all h) for ``scan_rnn``'s cell, by hand-written backprop in float64."""
    W, U, xs = (np.asarray(a, np.float64) for a in (W, U, xs))
    hs = [np.zeros(W.shape[0])]
    for x in xs:
        hs.append(np.tanh(hs[-1] @ W + x @ U))
    dW, dU, gh = np.zeros_like(W), np.zeros_like(U), np.ones(W.shape[0])   # d/dh_T of sum(h_T)
    for t in range(len(xs), 0, -1):
        dz = (gh + 1.0) * (1.0 - hs[t] ** 2)   # + 1: h_t's term in sum(all h)
        dW += np.outer(hs[t - 1], dz)
        dU += np.outer(xs[t - 1], dz)
        gh = W @ dz
    return dW, dU


def rnn3_grad_np(W3, xs):
    """d/dW3 of sum(h_T) + sum(ys) for the cell h = tanh(h @ W3[0] + x @ W3[1]), y = h @ W3[2], in float64."""
    W3, xs = np.asarray(W3, np.float64), np.asarray(xs, np.float64)
    hs = [np.zeros(W3.shape[1])]
    for x in xs:
        hs.append(np.tanh(hs[-1] @ W3[0] + x @ W3[1]))
    d, gh = np.zeros_like(W3), np.ones(W3.shape[1])
    for t in range(len(xs), 0, -1):
        d[2] += np.outer(hs[t], np.ones(W3.shape[2]))
        dz = (gh + W3[2].sum(axis=1)) * (1.0 - hs[t] ** 2)
        d[0] += np.outer(hs[t - 1], dz)
        d[1] += np.outer(xs[t - 1], dz)
        gh = W3[0] @ dz
    return d


def while4_np(x, n):
    for _ in range(n):
        x = x * np.float32(0.999) + np.float32(0.001)
    return x


def while_wide_np(x, n):
    for _ in range(n):
        x = np.tanh(x) + np.float32(0.5) * np.sin(x)
    return x


# ------------------------------------------------------------------------------------------ the programs

def scan_rnn(jax, jnp, lax, W, U, xs):
    """(jitted f, args): a scan over ``xs`` (T, H) of the cell h = tanh(h @ W + x @ U); returns (h_T, all h)."""
    H = W.shape[0]

    def rnn(W, U, xs):
        def cell(h, x):
            h = jnp.tanh(h @ W + x @ U)
            return h, h
        return lax.scan(cell, jnp.zeros(H, jnp.float32), xs)
    return jax.jit(rnn), (jnp.asarray(W), jnp.asarray(U), jnp.asarray(xs))


def scan_rnn_grad(jax, jnp, lax, W, U, xs):
    """(jitted f, args): ``jit(grad)`` in (W, U) of sum(h_T) + sum(all h) over ``scan_rnn``'s cell."""
    def loss(W, U, xs):
        def cell(h, x):
            h = jnp.tanh(h @ W + x @ U)
            return h, h
        h, hs = lax.scan(cell, jnp.zeros(W.shape[0], jnp.float32), xs)
        return jnp.sum(h) + jnp.sum(hs)
    return jax.jit(jax.grad(loss, argnums=(0, 1))), (jnp.asarray(W), jnp.asarray(U), jnp.asarray(xs))


def scan_rnn3_grad(jax, jnp, lax, W3, xs):
    """(jitted f, args): ``jit(grad)`` in W3 (3, H, H) of sum(h_T) + sum(ys) over the cell
    h = tanh(h @ W3[0] + x @ W3[1]), y = h @ W3[2]: reverse mode adds each slice's cotangent to the
    carried f32[3, H, H] accumulator as a zero pad (JAX's jaxpr too)."""
    def loss(W3, xs):
        def cell(h, x):
            h = jnp.tanh(h @ W3[0] + x @ W3[1])
            return h, h @ W3[2]
        h, ys = lax.scan(cell, jnp.zeros(W3.shape[1], jnp.float32), xs)
        return jnp.sum(h) + jnp.sum(ys)
    return jax.jit(jax.grad(loss)), (jnp.asarray(W3), jnp.asarray(xs))


def programs(size):
    """name -> dict(make=fresh jitted function, args=its inputs, iters=iterations per call (per-iteration
    rows) or None), built with whatever ``import jax`` gives (cranax under ``cranax.install_as_jax()``)."""
    import jax
    import jax.numpy as jnp
    from jax import lax
    import bench_ecosystem
    import digits_mlp
    z, d = SIZES[size], inputs(size)
    progs = {}

    eco = bench_ecosystem._programs(only={"optax", "equinox", "blackjax", "diffrax"})
    for row, name in ECOSYSTEM.items():
        if name in eco:
            progs[row] = dict(make=eco[name][0], args=eco[name][1], iters=None)

    # digits MLP: one jitted Adam step on a batch of 128 (NumPy-initialised so the test's oracle can follow)
    digits_mlp.use_backend("jax")   # under the alias this ``import jax`` is cranax: the same code on both sides
    x_tr, y_tr, _, _ = digits_mlp.load_data()
    hidden = (256, 256) if size != "tiny" else (16,)
    p_np = digits_mlp.np_init(0, [x_tr.shape[1], *hidden, 10])
    params = jax.tree_util.tree_map(jnp.asarray, p_np)
    xb, yb = jnp.asarray(x_tr[:128]), jnp.asarray(digits_mlp.one_hot(y_tr[:128]))
    progs[f"digits MLP Adam step (64-{'-'.join(map(str, hidden))}-10, batch 128)"] = dict(
        make=lambda: digits_mlp.make_train_step(lr=3e-3), args=(params, digits_mlp.adam_init(params), xb, yb),
        iters=None)

    W, U, xs = d["rnn"]
    progs[f"scan RNN, {z['rnn_T']} steps, hidden {z['rnn_H']}"] = dict(
        make=lambda: scan_rnn(jax, jnp, lax, W, U, xs)[0], args=scan_rnn(jax, jnp, lax, W, U, xs)[1], iters=None)

    rg, r3 = d["rnn_grad"], d["rnn3_grad"]
    progs[f"grad of scan RNN, {z['rnn_grad_T']} steps, hidden {z['rnn_H']}"] = dict(
        make=lambda: scan_rnn_grad(jax, jnp, lax, *rg)[0], args=scan_rnn_grad(jax, jnp, lax, *rg)[1], iters=None)
    progs[f"grad of scan RNN, {z['rnn_grad_T']} steps, hidden {z['rnn_H']}, stacked weights W[0..2]"] = dict(
        make=lambda: scan_rnn3_grad(jax, jnp, lax, *r3)[0], args=scan_rnn3_grad(jax, jnp, lax, *r3)[1], iters=None)

    def selu(x):
        return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
    progs[f"selu, {z['selu_n']:,} f32"] = dict(make=lambda: jax.jit(selu), args=(jnp.asarray(d["selu"]),), iters=None)

    # while loops with a traced trip count (as the seed's g(x, n)): per-iteration overhead of the loop itself
    def while4(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 0.999 + 0.001), (0, x))[1]
    x4, n4 = d["w4"]
    progs["while_loop, f32[4] carry (per iteration)"] = dict(
        make=lambda: jax.jit(while4), args=(jnp.asarray(x4), n4), iters=n4)

    def while_wide(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.tanh(c[1]) + 0.5 * jnp.sin(c[1])),
                              (0, x))[1]
    xw, nw = d["wide"]
    progs[f"while_loop, f32[{z['wide']}] carry, tanh + sin (per iteration)"] = dict(
        make=lambda: jax.jit(while_wide), args=(jnp.asarray(xw), nw), iters=nw)

    for n in z["mm"]:
        a, b = d[f"mm{n}"]
        progs[f"matmul {n}x{n} @ {n}x{n} f32"] = dict(
            make=lambda: jax.jit(lambda a, b: a @ b), args=(jnp.asarray(a), jnp.asarray(b)), iters=None)
    return progs


# ------------------------------------------------------------------------------------------ timing

def _leaves(tree):
    """The numeric leaves of an output pytree, flattened to one float64 vector (for the smoke test)."""
    import jax
    vals = []
    for leaf in jax.tree_util.tree_leaves(tree):
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            a = np.asarray(leaf)
            if a.dtype.kind in "biuf":
                vals.append(a.astype(np.float64).ravel())
    return np.concatenate(vals) if vals else np.zeros(0)


def time_program(make, args, budget, min_reps=5, max_reps=200):
    """(first call s, the steady samples in s, output): ``make()`` a fresh jitted function after the
    caches are cleared, time its first call, 2 warm-up calls, then repeats until ``budget`` seconds have
    passed (at least ``min_reps``, at most ``max_reps``)."""
    import jax
    jax.clear_caches()
    f = make()
    t0 = time.perf_counter()
    out = jax.block_until_ready(f(*args))
    first = time.perf_counter() - t0
    for _ in range(2):
        jax.block_until_ready(f(*args))
    ts, start = [], time.perf_counter()
    while len(ts) < max_reps and (len(ts) < min_reps or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        ts.append(time.perf_counter() - t0)
    return first, ts, out


def _wanted(name, only):
    """Whether row ``name`` is selected by ``--only`` (comma-separated substrings; None selects every row)."""
    return only is None or any(o.strip() and o.strip() in name for o in only.split(","))


def _worker(side, size, smoke, only=None):
    if side == "cranax":
        import cranax
        cranax.install_as_jax()
    import jax
    z = SIZES[size]
    out = {"_info": {"version": getattr(jax, "__version__", "?"), "device": repr(jax.devices()[0]),
                     "block_math": os.environ.get("CRANAX_CPU_BLOCK_MATH", "default")}}
    for name, p in programs(size).items():
        if not _wanted(name, only):
            continue
        try:
            if smoke:
                r = jax.block_until_ready(p["make"]()(*p["args"]))
                out[name] = {"values": _leaves(r).tolist()}
                continue
            first, ts, _ = time_program(p["make"], p["args"], z["budget"])
            k = p["iters"] or 1
            ts = [t / k for t in ts]
            out[name] = {"first": first, "min": min(ts), "median": statistics.median(ts), "samples": ts,
                         "per_iter": bool(p["iters"])}
        except Exception as e:   # a program that fails on one side is reported, not fatal
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
        print(f"[{side}] {name}: {out[name] if not smoke else 'ok' if 'values' in out[name] else out[name]}",
              file=sys.stderr, flush=True)
    import bench_adam_long
    if not _wanted(f"Adam run, {z['adam_steps']:,} digits-MLP steps", only):
        print(json.dumps(out))
        return
    try:
        r = bench_adam_long.run(side, z["adam_steps"], window=z["adam_window"])
        if smoke:
            out["adam"] = {"values": [r["loss"]]}
        else:
            w = z["adam_window"]
            for key, label in (("first", "first"), ("last", "last")):
                out[f"Adam run, {z['adam_steps']:,} digits-MLP steps: median step of the {label} {w:,}"] = {
                    "first": None, "min": None, "median": r[key], "per_iter": False}
            out["_info"]["adam_last_over_first"] = r["last"] / r["first"]
            out["_info"]["adam_subnormal_moments"] = f"{r['subnormal_moments']} of {r['moments']}"
    except Exception as e:
        out["adam"] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
    print(json.dumps(out))


# ------------------------------------------------------------------------------------------ driver

def _cranax_path():
    """The folder holding the cranax this process imports (installed, or the checkout's python/)."""
    spec = importlib.util.find_spec("cranax")
    return os.path.dirname(os.path.dirname(spec.origin)) if spec else os.path.join(HERE, "..", "python")


def _run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _merge(results, label, out):
    """Pool a worker's ``out`` into ``results[label]``: steady samples concatenated (min and median
    recomputed), the first call the median over rounds, the Adam figures averaged."""
    if label not in results:
        results[label] = out
        for r in out.values():
            if isinstance(r, dict) and "first" in r:
                r["firsts"] = [r["first"]]
            if isinstance(r, dict) and "samples" not in r and r.get("median") is not None:
                r["medians"] = [r["median"]]
        return
    old = results[label]
    for name, r in out.items():
        o = old.get(name)
        if name.startswith("_") or not isinstance(r, dict) or o is None or "error" in o:
            continue
        if "error" in r:
            old[name] = r
        elif "samples" in r and "samples" in o:
            o["samples"] += r["samples"]
            o["min"], o["median"] = min(o["samples"]), statistics.median(o["samples"])
            o["firsts"].append(r["first"])
            o["first"] = statistics.median(o["firsts"])
        elif r.get("median") is not None and "medians" in o:
            o["medians"].append(r["median"])
            o["median"] = statistics.mean(o["medians"])


def machine():
    """CPU model, ISA flags (avx2 / avx512f / fma), cores and the load average."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model in ("", platform.machine(), platform.processor()):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in ("avx2", "fma", "avx512f"))
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return f"{model}; {isa}; {os.cpu_count()} cores; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"


def _fmt(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else (f"{s * 1e6:.1f} µs" if s >= 1e-6 else f"{s * 1e9:.0f} ns")


def _ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def table(results, numpy_times):
    """The markdown table of ``results`` (side -> worker output) and the NumPy medians."""
    sides = [s for s in ("cranax avx2", "cranax default") if s in results]
    jx = results.get("jax", {})
    hdr = ("| program | " + " | ".join(f"{s} steady (min / median)" for s in sides) + " | JAX steady (min / median) | "
           + " | ".join(f"{s} / JAX steady: median (min)" for s in sides) + " | "
           + " | ".join(f"{s} first call" for s in sides) + " | JAX first call | "
           + " | ".join(f"{s} / JAX first" for s in sides) + " | NumPy (median) |")
    rows = [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    names = [n for n in results[sides[0]] if not n.startswith("_")]
    for n in names:
        cs = [results[s].get(n, {}) for s in sides]
        j = jx.get(n, {})

        def mm(r):
            if "error" in r:
                return "error: " + r["error"].replace("|", "/")
            if r.get("min") is None:
                return _fmt(r.get("median"))
            return f"{_fmt(r['min'])} / {_fmt(r['median'])}"
        cells = [mm(c) for c in cs] + [mm(j) if j else "-"]
        cells += [_ratio(c.get("median"), j.get("median")) + (
            f" (min {_ratio(c['min'], j['min'])})" if c.get("min") and j.get("min") else "") for c in cs]
        cells += [_fmt(c.get("first")) for c in cs] + [_fmt(j.get("first"))]
        cells += [_ratio(c.get("first"), j.get("first")) for c in cs]
        cells.append(_fmt(numpy_times.get(n)))
        rows.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (about 3 minutes)")
    ap.add_argument("--smoke", action="store_true", help="run each program once in cranax at tiny sizes; JSON")
    ap.add_argument("--jax-python", default=os.environ.get("JAX_PYTHON") or (
        "/tmp/jaxvenv/bin/python" if os.path.exists("/tmp/jaxvenv/bin/python") else None))
    ap.add_argument("--rounds", type=int, default=2, help="times each worker runs, the order of the workers "
                    "reversed every other round; steady samples pooled over the rounds (default 2)")
    ap.add_argument("--only", default=None, help="comma-separated substrings: time only the rows naming one")
    ap.add_argument("--worker", choices=["cranax", "jax"], help=argparse.SUPPRESS)
    ap.add_argument("--size", choices=list(SIZES), default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    size = a.size or ("tiny" if a.smoke else "quick" if a.quick else "full")
    if a.worker or a.smoke:
        return _worker(a.worker or "cranax", size, a.smoke, a.only)
    t_start = time.perf_counter()
    load_before = machine()
    env = dict(os.environ, PYTHONPATH=_cranax_path())
    results = {}
    me = [os.path.abspath(__file__), "--size", size] + (["--only", a.only] if a.only else [])
    workers = []
    for label, bm in (("cranax avx2", "avx2"), ("cranax default", None)):
        e = dict(env)
        e.pop("CRANAX_CPU_BLOCK_MATH", None)
        if bm:
            e["CRANAX_CPU_BLOCK_MATH"] = bm
        workers.append((label, [sys.executable] + me + ["--worker", "cranax"], e))
    if a.jax_python:
        e = dict(os.environ, JAX_PLATFORMS="cpu")
        e.pop("PYTHONPATH", None)
        workers.append(("jax", [a.jax_python] + me + ["--worker", "jax"], e))
    # Why rounds: on this shared 2-core VM one worker's whole run can land in a slow stretch (the quiet run
    # of 2026-12-03 09:08 had the avx2 worker, always first, at 3.5x JAX on the 1024² matmul; standalone,
    # interleaved runs showed no difference between the modes). Alternating the order and pooling the
    # samples spreads such stretches over every side.
    for r in range(max(1, a.rounds)):
        for label, cmd, e in (workers if r % 2 == 0 else workers[::-1]):
            _merge(results, label, _run(cmd, e))
    d = inputs(size)
    numpy_times = {}
    z = SIZES[size]
    for n, f in [(f"selu, {z['selu_n']:,} f32", lambda: selu_np(d["selu"]))] + [
            (f"matmul {k}x{k} @ {k}x{k} f32", (lambda k=k: d[f"mm{k}"][0] @ d[f"mm{k}"][1])) for k in z["mm"]]:
        f()
        ts = []
        for _ in range(7):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        numpy_times[n] = statistics.median(ts)
    for r in results.values():   # the raw samples stay out of the printed table
        for v in r.values():
            if isinstance(v, dict):
                v.pop("samples", None)
    ci, ji = results["cranax avx2"]["_info"], results.get("jax", {}).get("_info", {})
    print(f"machine: {load_before} (at the start); {machine().split('; ')[-1]} (at the end)")
    print(f"cranax {ci['version']} on {ci['device']}; JAX {ji.get('version', 'not run')} on {ji.get('device', '-')}; "
          f"NumPy {np.__version__}; sizes: {size}; rounds {max(1, a.rounds)} (worker order reversed every other "
          f"round, steady samples pooled); total {time.perf_counter() - t_start:.0f} s")
    for s in ("cranax avx2", "cranax default", "jax"):
        info = results.get(s, {}).get("_info", {})
        if "adam_last_over_first" in info:
            print(f"{s}: Adam run last / first = {info['adam_last_over_first']:.2f}, subnormal second moments at "
                  f"the end: {info['adam_subnormal_moments']}")
    print()
    print(table(results, numpy_times))


if __name__ == "__main__":
    main()
