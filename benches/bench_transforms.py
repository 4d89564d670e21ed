"""Transformation figures (issues 4, 5 and 6): cranax, JAX (when ``import jax`` works) and NumPy in one process.

    python benches/bench_transforms.py                 # prints a markdown section
    python benches/bench_transforms.py --write         # ... and replaces its own section of benches/RESULTS.md
    python benches/bench_transforms.py --quick         # shorter loops (smoke test)

Figures:

- issue 4: ``jit(grad(loss))`` of a 3-layer MLP (784-512-512-10, relu, batch 128, softmax cross-entropy,
  parameters from ``np.random.default_rng(0)``): steady state, compile only (``lower(...).compile()``) and
  first call (trace + compile + run of a fresh function object with emptied caches). NumPy column: the same
  forward + backward written by hand (float32).
- issue 5: the seed's ``apply_matrix`` (matrix 150x100, batch 10x100) batched by a Python loop, by hand
  (``jnp.dot(vectors, matrix.T)`` under jit) and by ``vmap`` under jit -- results compared first, then timed;
  per-example gradients ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))`` of a small MLP (32-64-64-10, batch 128).
  NumPy column: ``vectors @ matrix.T`` and per-example gradients by hand (einsum).
- issue 6: the workloads of ``bench_control_flow.py`` (imported from it): compile time of ``fori_loop`` with
  10 and 10,000 iterations and of a scan whose body has 75 and 300 ops, steady state of a 1,000-step scan RNN
  cell (hidden 128) and of the seed's ``g(x, n)`` while loop. NumPy column: the RNN as a Python loop.

Every steady-state figure is a median after warm-up, each call waited for with ``block_until_ready``; the
frameworks alternate over ``--rounds`` rounds (default 5) and the median of the rounds is reported, so a load
burst on a shared machine does not land on one framework only. The RNN's steady state is timed here that way
(the same program as bench_control_flow.py's); its compile and while-loop figures come from
``bench_control_flow.figures``. Results are compared (against NumPy float64 references and between
frameworks) before anything is timed. ``--write`` replaces only the text between this script's markers in
RESULTS.md (appending the section when absent) and keeps everything else in the file.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

# NumPy's BLAS on one thread unless told otherwise: on a shared 2-vCPU machine OpenBLAS's two threads wait
# for each other (medians of a 128x784x512 product 20-40x its best time); set OPENBLAS_NUM_THREADS to change.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import cranax  # noqa: E402
import cranax.numpy as cnp  # noqa: E402
from cranax.bench import _timing as bu  # noqa: E402
from cranax import lax as clax  # noqa: E402

try:  # JAX is optional: measured in the same process when installed
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jjnp
    from jax import lax as jlax
except Exception:  # pragma: no cover - depends on the environment
    jax = jjnp = jlax = None

HEADING = "## Transformations vs JAX: grad, vmap, control flow (issues 4, 5, 6)"
BEGIN = "<!-- bench_transforms.py --write: begin (only the text between these markers is replaced) -->"
END = "<!-- bench_transforms.py --write: end -->"


class FW:
    """The pieces of the API a benchmark needs, for cranax or JAX."""

    def __init__(self, name, mod, jnp, lax):
        self.name, self.mod, self.jnp, self.lax = name, mod, jnp, lax

    def clear(self):
        self.mod.clear_caches()

    def put(self, x):
        return self.mod.device_put(x)

    def put_tree(self, params):
        return [tuple(self.put(a) for a in layer) for layer in params]

    def describe(self):
        if self.name == "cranax":
            return (f"cranax {getattr(cranax, '__version__', '?')}: default device {cranax.devices()[0]} "
                    f"(Cranelift JIT, CPU; all devices {cranax.devices()}, threads: "
                    f"{os.environ.get('CRANAX_NUM_THREADS', 'all cores')})")
        return f"JAX {jax.__version__}: devices {jax.devices()}, backend {jax.default_backend()} (XLA)"


def frameworks(no_jax=False):
    out = [FW("cranax", cranax, cnp, clax)]
    if jax is not None and not no_jax:
        out.append(FW("jax", jax, jjnp, jlax))
    return out


def leaves(tree):
    """The arrays of a list of tuples (the parameter / gradient pytrees used here), in order."""
    return [a for layer in tree for a in layer]


def tree_diff(a, b):
    return max(bu.max_abs_diff(x, y) for x, y in zip(leaves(a), leaves(b)))


class Bench:
    def __init__(self, quick, rounds):
        self.quick = quick
        self.rounds_n = rounds
        self.res = {}    # key -> {framework: seconds}
        self.spread = {}  # key -> {framework: (fastest round, slowest round)}
        self.diffs = []  # (what, text)
        self.loads = []

    def med(self, fn, budget=None, warmup=None):
        """Median seconds per call of ``fn`` (``bu.median_time``) with samples of >= ~20 µs (not 1 ms): on a
        loaded machine a long sample nearly always contains a stall, a short one mostly does not."""
        budget = budget if budget is not None else (0.1 if self.quick else 0.4)
        warmup = warmup if warmup is not None else (2 if self.quick else 5)
        for _ in range(warmup):
            fn()
        one, _ = bu.timeit_once(fn)
        one = max(one, 1e-9)
        inner = max(1, min(1000, int(20e-6 / one)))
        n = max(11, min(301, int(budget / (one * inner))))
        return bu.median_time(fn, n=n, inner=inner, warmup=0)

    def rounds(self, timed, **kw):
        """``timed``: [(key, framework, fn)]. Each round times every entry once (frameworks alternate, so slow
        drifts of the machine's load hit all of them alike); the figure is the median over the rounds."""
        got = {}
        for _ in range(self.rounds_n):
            for key, fw, fn in timed:
                got.setdefault((key, fw), []).append(self.med(fn, **kw))
        for (key, fw), ts in got.items():
            self.spread.setdefault(key, {})[fw] = (min(ts), max(ts))
            self.put(key, fw, statistics.median(ts),
                     f"rounds {', '.join(bu.fmt_time(t) for t in ts)}" if len(ts) > 1 else "")

    def put(self, key, fw, s, extra=""):
        self.res.setdefault(key, {})[fw] = s
        print(f"  {key:28s} {fw:7s} {bu.fmt_time(s, 12)}  {extra}", file=sys.stderr, flush=True)

    def load(self):
        if hasattr(os, "getloadavg"):
            self.loads.append(os.getloadavg()[0])


# ---------------------------------------------------------------------------------------------- MLP (issue 4)

def make_loss(jnp):
    """Softmax cross-entropy of a relu MLP; ``params`` is a list of (W, b); works on a batch (x: [B, in],
    y: one-hot [B, classes]) and on one example (x: [in], y: [classes])."""
    def loss(params, x, y):
        h = x
        for W, b in params[:-1]:
            h = jnp.maximum(h @ W + b, 0.0)
        W, b = params[-1]
        logits = h @ W + b
        m = jnp.max(logits, axis=-1, keepdims=True)
        lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=-1, keepdims=True)) + m
        return -jnp.mean(jnp.sum(y * (logits - lse), axis=-1))
    return loss


def mlp_data(sizes, batch, seed):
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        W = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)
        b = (rng.standard_normal(n_out) * 0.01).astype(np.float32)
        params.append((W, b))
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    y = np.eye(sizes[-1], dtype=np.float32)[labels]
    return params, x, y


def np_loss_grad(params, x, y, per_example=False):
    """Forward + backward of ``make_loss`` by hand in NumPy (in the dtype of the inputs). With
    ``per_example`` the gradients of each example's loss, stacked on a leading axis."""
    h, hs, pre = x, [x], []
    for W, b in params[:-1]:
        z = h @ W + b
        pre.append(z)
        h = np.maximum(z, 0)
        hs.append(h)
    W, b = params[-1]
    logits = h @ W + b
    m = logits.max(-1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(-1, keepdims=True)
    loss = -np.mean(np.sum(y * (logits - m - np.log(s)), -1))
    g = e / s * y.sum(-1, keepdims=True) - y           # d(sum over examples) / d logits
    if not per_example:
        g = g / x.shape[0]
    grads = []
    for i in reversed(range(len(params))):
        W = params[i][0]
        if per_example:
            grads.append((np.einsum("bi,bj->bij", hs[i], g), g))
        else:
            grads.append((hs[i].T @ g, g.sum(0)))
        if i:
            g = (g @ W.T) * (pre[i - 1] > 0)
    return loss, grads[::-1]


def bench_mlp(b, fws):
    b.load()
    print("[issue 4: jit(grad(loss)), MLP 784-512-512-10, batch 128]", file=sys.stderr)
    params_np, x_np, y_np = mlp_data([784, 512, 512, 10], 128, 0)
    p64 = [tuple(a.astype(np.float64) for a in layer) for layer in params_np]
    _, want = np_loss_grad(p64, x_np.astype(np.float64), y_np.astype(np.float64))
    timed = [("mlp_steady", "numpy", lambda: np_loss_grad(params_np, x_np, y_np))]
    got = {}
    for fw in fws:
        loss = make_loss(fw.jnp)
        params, x, y = fw.put_tree(params_np), fw.put(x_np), fw.put(y_np)
        bu.block(leaves(params))
        # first call: fresh function object, emptied caches: trace + compile + run, waited for
        ts = []
        for _ in range(5):
            fw.clear()
            g = fw.mod.jit(fw.mod.grad(bu.fresh_function(loss)))
            t, out = bu.timeit_once(lambda: g(params, x, y))
            ts.append(t)
        b.put("mlp_first", fw.name, statistics.median(ts))
        got[fw.name] = [tuple(np.asarray(a) for a in layer) for layer in out]
        # compile only (traced and lowered beforehand)
        ts = []
        for _ in range(5):
            lowered = fw.mod.jit(fw.mod.grad(bu.fresh_function(loss))).lower(params, x, y)
            fw.clear()
            t0 = time.perf_counter()
            lowered.compile()
            ts.append(time.perf_counter() - t0)
        b.put("mlp_compile", fw.name, statistics.median(ts))
        timed.append(("mlp_steady", fw.name, lambda g=g, params=params, x=x, y=y: bu.block(g(params, x, y))))
    b.rounds(timed)
    b.diffs.append(("MLP gradients, max abs diff from NumPy float64",
                    ", ".join(f"{k} {tree_diff(v, want):.1e}" for k, v in got.items())
                    + (f"; cranax vs JAX {tree_diff(got['cranax'], got['jax']):.1e}" if "jax" in got else "")))


# ---------------------------------------------------------------------------------------------- vmap (issue 5)

def make_apply_matrix(jax, jnp, matrix):
    """The seed's three batchings of ``apply_matrix`` (as in ../shared/reference/jax_seed_bench.py)."""
    def apply_matrix(vector):
        return jnp.dot(matrix, vector)

    def naively_batched(vectors):
        return jnp.stack([apply_matrix(v) for v in vectors])

    @jax.jit
    def manually_batched(vectors):
        return jnp.dot(vectors, matrix.T)

    @jax.jit
    def vmap_batched(vectors):
        return jax.vmap(apply_matrix)(vectors)

    return naively_batched, manually_batched, vmap_batched


def bench_apply_matrix(b, fws):
    b.load()
    print("[issue 5: apply_matrix, matrix 150x100, batch 10x100]", file=sys.stderr)
    rng = np.random.default_rng(0)
    matrix_np = rng.standard_normal((150, 100)).astype(np.float32)
    batched_np = rng.standard_normal((10, 100)).astype(np.float32)
    want = batched_np.astype(np.float64) @ matrix_np.astype(np.float64).T
    timed = [("am_manual", "numpy", lambda: batched_np @ matrix_np.T),
             ("am_naive", "numpy", lambda: np.stack([matrix_np @ v for v in batched_np]))]
    diffs = []
    for fw in fws:
        matrix = fw.put(matrix_np)
        batched_x = fw.put(batched_np)
        naively_batched, manually_batched, vmap_batched = make_apply_matrix(fw.mod, fw.jnp, matrix)
        fns = (("am_naive", naively_batched), ("am_manual", manually_batched), ("am_vmap", vmap_batched))
        outs = {k: np.asarray(bu.block(f(batched_x))) for k, f in fns}   # results first
        diffs.append(f"{fw.name} " + "/".join(f"{bu.max_abs_diff(o, want):.1e}" for o in outs.values()))
        for k, f in fns:
            timed.append((k, fw.name, lambda f=f, batched_x=batched_x: bu.block(f(batched_x))))
    b.rounds(timed)
    b.diffs.append(("apply_matrix (loop / by hand / vmap), max abs diff from NumPy float64", "; ".join(diffs)))


def bench_per_example(b, fws):
    b.load()
    print("[issue 5: per-example grads, MLP 32-64-64-10, batch 128]", file=sys.stderr)
    params_np, x_np, y_np = mlp_data([32, 64, 64, 10], 128, 1)
    p64 = [tuple(a.astype(np.float64) for a in layer) for layer in params_np]
    _, want = np_loss_grad(p64, x_np.astype(np.float64), y_np.astype(np.float64), per_example=True)
    timed = [("pex", "numpy", lambda: np_loss_grad(params_np, x_np, y_np, per_example=True))]
    got = {}
    for fw in fws:
        loss = make_loss(fw.jnp)
        params, x, y = fw.put_tree(params_np), fw.put(x_np), fw.put(y_np)
        f = fw.mod.jit(fw.mod.vmap(fw.mod.grad(loss), in_axes=(None, 0, 0)))
        got[fw.name] = [tuple(np.asarray(a) for a in layer) for layer in bu.block(f(params, x, y))]
        timed.append(("pex", fw.name, lambda f=f, params=params, x=x, y=y: bu.block(f(params, x, y))))
    b.rounds(timed)
    b.diffs.append(("per-example gradients, max abs diff from NumPy float64",
                    ", ".join(f"{k} {tree_diff(v, want):.1e}" for k, v in got.items())))


# ---------------------------------------------------------------------------------------------- control flow (issue 6)

CF_KEYS = {  # bench_control_flow.figures() label -> key here
    "fori_loop compile, 10 iterations": "fori10",
    "fori_loop compile, 10000 iterations": "fori10000",
    "scan compile, body of 75 ops": "scan75",
    "scan compile, body of 300 ops": "scan300",
    "scan RNN cell, 1000 steps, hidden 128 (steady)": "rnn",
    "g(x, n) while_loop, n = 20 (steady)": "while20",
    "g(x, n) while_loop, n = 1,000,000 (steady)": "while1e6",
}


def rnn_np(W, U, xs):
    h = np.zeros(W.shape[0], W.dtype)
    for x in xs:
        h = np.tanh(h @ W + x @ U)
    return h


def make_rnn(jax, jnp, lax, H):
    """bench_control_flow.py's RNN: ``h = tanh(h @ W + x @ U)`` scanned over ``xs``."""
    @jax.jit
    def rnn(W, U, xs):
        def cell(h, x):
            h = jnp.tanh(h @ W + x @ U)
            return h, h
        return lax.scan(cell, jnp.zeros(H), xs)
    return rnn


def bench_control_flow(b, fws):
    import bench_control_flow as bcf   # the same workloads as benches/bench_control_flow.py
    b.load()
    print("[issue 6: control flow]", file=sys.stderr)
    # the RNN's inputs exactly as bench_control_flow builds them, for the result check and NumPy's figure
    rng = np.random.default_rng(0)
    H = 128
    W = rng.standard_normal((H, H)).astype(np.float32) * 0.1
    U = rng.standard_normal((H, H)).astype(np.float32) * 0.1
    xs = rng.standard_normal((1000, H)).astype(np.float32)
    want = rnn_np(W.astype(np.float64), U.astype(np.float64), xs.astype(np.float64))
    timed = [("rnn", "numpy", lambda: rnn_np(W, U, xs))]
    diffs = []
    for fw in fws:
        rnn = make_rnn(fw.mod, fw.jnp, fw.lax, H)
        args = (fw.put(W), fw.put(U), fw.put(xs))
        h, ys = rnn(*args)
        diffs.append(f"{fw.name} {bu.max_abs_diff(h, want):.1e}")
        timed.append(("rnn", fw.name, lambda rnn=rnn, args=args: bu.block(rnn(*args)[0])))
    b.rounds(timed, budget=0.3 if b.quick else 1.0, warmup=2)
    for fw in fws:
        figs = bcf.figures(fw.mod, fw.jnp, fw.lax, fw.clear)
        for label, s in figs.items():
            key = CF_KEYS.get(label, label)
            if key != "rnn":   # timed above (same program), in rounds alternating with the others
                b.put(key, fw.name, s)
    b.diffs.append(("scan RNN final state, max abs diff from NumPy float64", ", ".join(diffs)))


# ---------------------------------------------------------------------------------------------- report

# key, label, target: None or (kind, bound) with kind "jax" (cranax / JAX ≤ bound)
ROWS = [
    ("issue 4: jit(grad(loss)), MLP 784-512-512-10, relu, softmax cross-entropy, batch 128, float32", None),
    ("mlp_steady", "steady state (NumPy: forward + backward by hand)", ("jax", 1.2)),
    ("mlp_first", "first call: trace + compile + run (fresh function, emptied caches)",
     ("jax", 0.2)),
    ("mlp_compile", "compile only: `lower(...).compile()`", None),
    ("issue 5: the seed's apply_matrix, matrix 150×100, batch 10×100", None),
    ("am_naive", "naive Python loop + `jnp.stack` (NumPy: loop of `matrix @ v`)", None),
    ("am_manual", "by hand: `jit(jnp.dot(vectors, matrix.T))` (NumPy: `vectors @ matrix.T`)", None),
    ("am_vmap", "`jit(vmap(apply_matrix))`", ("jax", 1.0)),
    ("pex", "per-example grads: `jit(vmap(grad(loss), in_axes=(None, 0, 0)))`, MLP 32-64-64-10, batch 128 "
     "(NumPy: by hand with einsum)", None),
    ("issue 6: control flow (workloads of bench_control_flow.py)", None),
    ("fori10", "`fori_loop` compile, 10 iterations, f32[16] carry (median of 5)", None),
    ("fori10000", "`fori_loop` compile, 10,000 iterations", None),
    ("scan75", "`scan` compile, body of 75 ops", None),
    ("scan300", "`scan` compile, body of 300 ops", None),
    ("rnn", "scan RNN cell, 1,000 steps, hidden 128, steady (NumPy: Python loop)", ("jax", 1.0)),
    ("while20", "seed's `g(x, n)` with `while_loop`, n = 20, steady", None),
    ("while1e6", "seed's `g(x, n)` with `while_loop`, n = 1,000,000, steady", None),
]


def git_rev():
    """The repository's commit (and whether its work tree had changes), or ``?``."""
    try:
        rev = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"commit {rev}" + (" + uncommitted changes in the work tree" if dirty else "") if rev else "?"
    except Exception:
        return "?"


def ratio(a, b):
    """``a / b`` with three decimals (so a figure just past a target's bound does not print as the bound)."""
    if a is None or b is None or not b:
        return "-"
    r = a / b
    return f"{r:.3f}x" if r >= 0.1 else f"{r:.3g}x"


def report(b, fws, args):
    have_jax = any(f.name == "jax" for f in fws)
    r = b.res

    def get(key, fw):
        return r.get(key, {}).get(fw)

    lines = [HEADING, BEGIN, ""]
    w = lines.append
    w(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {bu.machine_line()}")
    w(f"- repository at run time: {git_rev()}; cranax imported from "
      f"`{os.path.dirname(os.path.dirname(cranax.__file__))}` (a build of the work tree, possibly older than HEAD)")
    for f in fws:
        w(f"- {f.describe()}")
    w(f"- NumPy's BLAS threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')} (the script's "
      "default; two OpenBLAS threads on this loaded 2-vCPU VM wait for each other)")
    if not have_jax:
        w("- JAX: **not installed** in this run (JAX column empty): rerun where `import jax` works")
    else:
        w("- JAX measured in the same process on the same inputs (steady-state timings interleaved with cranax's)")
    if b.loads:
        w(f"- load average (1 min) during the run: {min(b.loads):.1f}–{max(b.loads):.1f} "
          f"(sampled at each workload) on {bu.cpu_model()[1]} CPUs — shared machine: read the ratios rather than "
          "absolute times")
    w("- command: `python benches/bench_transforms.py" + (" --quick" if args.quick else "") + " --write`. "
      f"Steady state: median over {b.rounds_n} rounds (cranax, JAX and NumPy alternate within each round) of "
      "the median of samples of ≥ 20 µs after warm-up, every call waited with `block_until_ready()`; "
      "compile and first-call figures: median of 5 (fresh function object, emptied caches); results "
      "compared before timing")
    w("")
    w("| figure | cranax | JAX | NumPy | cranax / JAX | target | rounds, fastest–slowest: cranax; JAX |")
    w("|---|---:|---:|---:|---:|---|---|")
    header = None
    for row in ROWS:
        if len(row) == 2 and row[1] is None:
            header = row[0]   # printed before the group's first measured row (--only leaves groups out)
            continue
        key, label, target = row
        c, j, n = get(key, "cranax"), get(key, "jax"), get(key, "numpy")
        if c is None and j is None and n is None:
            continue
        if header is not None:
            w(f"| ***{header}*** | | | | | | |")
            header = None
        if target is None:
            tcell = ""
        else:
            _, bound = target
            if c is None or j is None:
                tcell = f"≤ {bound:g}× JAX: not measured"
            else:
                tcell = f"≤ {bound:g}× JAX: {'met' if c / j <= bound else '**missed**'}"
        sp = b.spread.get(key, {})
        scell = "; ".join(f"{bu.fmt_time(sp[f][0])}–{bu.fmt_time(sp[f][1])}" for f in ("cranax", "jax") if f in sp)
        w(f"| {label} | {bu.fmt_time(c)} | {bu.fmt_time(j)} | {bu.fmt_time(n)} | {ratio(c, j)} | {tcell} | {scell} |")
    w("")
    # derived figures: targets that are ratios within one framework
    cv, cm = get("am_vmap", "cranax"), get("am_manual", "cranax")
    d = []
    if cv and cm:
        d.append(f"apply_matrix `vmap` / by hand: cranax {cv / cm:.3f}×"
                 + (f", JAX {get('am_vmap', 'jax') / get('am_manual', 'jax'):.3f}×" if have_jax else "")
                 + f" (target for cranax ≤ 1.2×: {'met' if cv / cm <= 1.2 else '**missed**'})")
    for f in fws:
        a, z = get("fori10", f.name), get("fori10000", f.name)
        s75, s300 = get("scan75", f.name), get("scan300", f.name)
        if a and z and s75 and s300:
            d.append(f"{f.name}: fori_loop compile 10,000 / 10 iterations {z / a:.2f}× (should be ≈ 1: not "
                     f"unrolled); scan compile 300 / 75 ops {s300 / s75:.2f}× (4× = linear)")
    for f in fws:
        ln, lm = get("am_naive", f.name), get("am_vmap", f.name)
        if ln and lm:
            d.append(f"{f.name}: apply_matrix loop / vmap {ln / lm:.0f}×")
    for line in d:
        w(f"- {line}")
    w("- results (compared before timing): " + "; ".join(f"{what}: {txt}" for what, txt in b.diffs))
    w("")
    w(END)
    return "\n".join(lines) + "\n"


def write_section(path, text):
    """Replaces this script's section of ``path`` (from HEADING, or from BEGIN, through END) with ``text``;
    appends it when absent. Everything else in the file is kept byte for byte."""
    old = open(path).read() if os.path.exists(path) else ""
    if BEGIN in old or HEADING in old:
        start = old.index(HEADING) if HEADING in old else old.index(BEGIN)
        if END in old[start:]:
            stop = old.index(END, start) + len(END)
            if old[stop:stop + 1] == "\n":
                stop += 1
        else:  # END lost (hand edit): the section runs to the next top-level heading or the end of the file
            nxt = [i for i in (old.find("\n## ", start + 1), old.find("\n# ", start + 1)) if i >= 0]
            stop = min(nxt) if nxt else len(old)
        new = old[:start] + text + old[stop:]
    else:
        new = old.rstrip("\n") + "\n\n" + text if old else text
    with open(path, "w") as f:
        f.write(new)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short loops (smoke test)")
    ap.add_argument("--write", nargs="?", const=os.path.join(HERE, "RESULTS.md"), metavar="PATH",
                    help="replace this script's section of PATH (default benches/RESULTS.md)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of steady-state timing (5)")
    ap.add_argument("--no-jax", action="store_true", help="do not measure JAX even if installed")
    ap.add_argument("--only", choices=["mlp", "vmap", "cf"], action="append",
                    help="run only these workloads (repeatable)")
    args = ap.parse_args(argv)
    fws = frameworks(args.no_jax)
    print(f"host: {bu.machine_line()}", file=sys.stderr)
    for f in fws:
        print(f.describe(), file=sys.stderr)
    for fw in fws:  # warm each backend once so that no figure includes its start-up
        fw.mod.jit(lambda v: v * 2.0)(fw.jnp.ones(4)).block_until_ready()
    b = Bench(args.quick, 1 if args.quick and args.rounds == 5 else args.rounds)
    only = set(args.only or ["mlp", "vmap", "cf"])
    if "mlp" in only:
        bench_mlp(b, fws)
    if "vmap" in only:
        bench_apply_matrix(b, fws)
        bench_per_example(b, fws)
    if "cf" in only:
        bench_control_flow(b, fws)
    b.load()
    text = report(b, fws, args)
    print(text)
    if args.write:
        write_section(args.write, text)
        print(f"wrote its section of {args.write}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
