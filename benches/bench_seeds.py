"""The seed examples' figures, measured with cranax, NumPy and (when installed) JAX in the same run.

    python benches/bench_seeds.py                      # prints a markdown report
    python benches/bench_seeds.py --write benches/RESULTS.md
    python benches/bench_seeds.py --quick              # shorter loops (smoke test)

Every figure: warm-up first, then the median of repeated calls, each waited for with ``block_until_ready``.
"First call" figures use a fresh function object each time (and empty compile caches), so they include
tracing, compiling and running; trace time (``make_jaxpr``) and compile time (``lower(...).compile()``) are
reported separately. JAX is measured in this same process when ``import jax`` works; absolute times on
shared machines drift, so compare the ratios. The reference figures of JAX 0.10.2 on the project's reference
machine (2-core Zen 4) are in ``../shared/reference/jax-0.10.2-cpu-figures.txt``.
"""
import argparse
import datetime
import functools
import os
import platform
import statistics
import sys
import time

import numpy as np

import cranax
import cranax.numpy as cnp
from cranax.bench import _timing as bu

try:  # JAX is optional: measured in the same run when installed
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jjnp
except Exception:  # pragma: no cover - depends on the environment
    jax = None
    jjnp = None


# JAX 0.10.2 on the reference machine (../shared/reference/jax-0.10.2-cpu-figures.txt), in seconds
REFERENCE = {
    "dispatch_add3": 4.9e-6,
    "dispatch_int": 5.5e-6,
    "f200_first": 108201.9e-6,
    "f200_replay": 7.3e-6,
    "f200_trace": 477.8e-6,
    "selu_jit": 345.5e-6,
    "selu_eager": 2598.5e-6,
    "selu_numpy": 4822.7e-6,
    "lambda_loop": 537566.1e-6,
    "inner_jitted_loop": 419.1e-6,
}


class Framework:
    """The pieces of the API a benchmark needs, for cranax or JAX."""

    def __init__(self, name, mod, np_mod):
        self.name = name
        self.mod = mod
        self.jnp = np_mod

    def jit(self, f, **kw):
        return self.mod.jit(f, **kw)

    def put(self, x):
        return self.mod.device_put(x)

    def clear(self):
        """Empties the compile caches so the next first call really compiles."""
        if self.name == "cranax":
            f = getattr(cranax._core, "clear_caches", None)
            if f is not None:
                f()
        else:
            self.mod.clear_caches()

    def device(self):
        d = self.mod.devices()
        return f"{d} ({d[0].platform})"

    def version(self):
        return getattr(self.mod, "__version__", "?")


def frameworks():
    fws = [Framework("cranax", cranax, cnp)]
    if jax is not None:
        fws.append(Framework("jax", jax, jjnp))
    return fws


# ---------------------------------------------------------------------------------------------- programs

def make_f200(jnp):
    def f200(x):
        y = x
        for _ in range(200):
            y = jnp.sin(y) + y * 0.5
        return y
    return f200


def make_selu(jnp):
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    return selu


def selu_np(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def f200_np(x):
    y = x
    for _ in range(200):
        y = np.sin(y) + y * np.float32(0.5)
    return y


# ---------------------------------------------------------------------------------------------- measurements

class Bench:
    def __init__(self, quick):
        self.quick = quick
        self.results = {}  # key -> {framework name: seconds}
        self.notes = {}
        self.diffs = {}

    def med(self, fn, **kw):
        kw.setdefault("budget", 0.15 if self.quick else 1.0)
        kw.setdefault("warmup", 2 if self.quick else 5)
        return bu.median_time(fn, **kw)

    def put(self, key, fw, s):
        self.results.setdefault(key, {})[fw] = s
        print(f"  {key:24s} {fw:7s} {bu.fmt_time(s, 12)}", file=sys.stderr, flush=True)


def bench_dispatch(b, fw):
    inc = fw.jit(lambda i: i + 1)
    a = fw.jnp.ones(3)
    inc(a).block_until_ready()
    b.put("dispatch_add3", fw.name, b.med(lambda: inc(a).block_until_ready(), inner=200))
    inc(1)
    b.put("dispatch_int", fw.name, b.med(lambda: inc(1), inner=200))


def bench_f200(b, fw):
    f200 = make_f200(fw.jnp)
    x = fw.put(np.array(1.0, np.float32))
    # trace only
    ts = []
    for _ in range(3 if b.quick else 5):
        g = bu.fresh_function(f200)
        t, _ = bu.timeit_once(lambda: fw.mod.make_jaxpr(g)(x))
        ts.append(t)
    b.put("f200_trace", fw.name, statistics.median(ts))
    # compile only (lowering + compiler), traced beforehand
    ts = []
    for _ in range(3):
        lowered = fw.jit(bu.fresh_function(f200)).lower(x)
        fw.clear()
        t0 = time.perf_counter()
        lowered.compile()
        ts.append(time.perf_counter() - t0)
    b.put("f200_compile", fw.name, statistics.median(ts))
    # first call: fresh function, empty caches: trace + compile + run, waited for
    ts = []
    for _ in range(3):
        fw.clear()
        g = fw.jit(bu.fresh_function(f200))
        t, out = bu.timeit_once(lambda: g(x))
        ts.append(t)
    b.put("f200_first", fw.name, statistics.median(ts))
    b.diffs.setdefault("f200", {})[fw.name] = bu.max_abs_diff(out, f200_np(np.array(1.0, np.float32)))
    b.put("f200_replay", fw.name, b.med(lambda: g(x).block_until_ready(), inner=50))


def bench_selu(b, fw, xh):
    selu = make_selu(fw.jnp)
    x = fw.put(xh)
    x.block_until_ready()
    sj = fw.jit(selu)
    out = sj(x).block_until_ready()
    b.diffs.setdefault("selu", {})[fw.name] = bu.max_abs_diff(out, selu_np(xh))
    b.put("selu_jit", fw.name, b.med(lambda: sj(x).block_until_ready()))
    selu(x).block_until_ready()
    b.put("selu_eager", fw.name, b.med(lambda: selu(x).block_until_ready()))
    b.put("selu_transfer", fw.name, b.med(lambda: fw.put(xh).block_until_ready()))


def bench_lambda_loop(b, fw):
    def unjitted_loop_body(prev_i):
        return prev_i + 1

    def g_lambda(x, n):
        i = 0
        while i < n:
            i = fw.jit(lambda x: unjitted_loop_body(x))(i)
        return x + i

    inner = fw.jit(unjitted_loop_body)

    def g_inner(x, n):
        i = 0
        while i < n:
            i = inner(i)
        return x + i
    g_inner(10, 20)
    b.put("inner_jitted_loop", fw.name, b.med(lambda: bu.block(g_inner(10, 20)), n=11))
    n = 1 if (fw.name == "jax" or b.quick) else 5
    b.put("lambda_loop", fw.name, b.med(lambda: bu.block(g_lambda(10, 20)), n=n, inner=1, warmup=1))


def bench_numpy(b, xh):
    b.put("selu_numpy", "numpy", b.med(lambda: selu_np(xh)))
    xs = np.array(1.0, np.float32)
    b.put("f200_numpy", "numpy", b.med(lambda: f200_np(xs)))
    a = np.ones(3, np.float32)
    b.put("add3_numpy", "numpy", b.med(lambda: a + 1, inner=200))


# ---------------------------------------------------------------------------------------------- report

ROWS = [
    # key, label, target (max cranax/JAX ratio) or None, numpy key or None
    ("dispatch_add3", "warm dispatch: jit(i + 1)(ones(3)).block_until_ready()", 1.0, "add3_numpy"),
    ("dispatch_int", "warm dispatch: jit(i + 1)(python int)", None, None),
    ("f200_first", "f200 first call (trace + compile + run)", 0.10, None),
    ("f200_trace", "f200 trace only (make_jaxpr)", None, None),
    ("f200_compile", "f200 compile only (lower(x).compile())", None, None),
    ("f200_replay", "f200 steady-state replay", None, "f200_numpy"),
    ("selu_jit", "selu 1M f32 jit", None, "selu_numpy"),
    ("selu_eager", "selu 1M f32 eager (op-by-op)", None, "selu_numpy"),
    ("selu_transfer", "host→device 1M f32 (device_put)", None, None),
    ("inner_jitted_loop", "g_inner_jitted(10, 20) (20 dispatches)", None, None),
    ("lambda_loop", "g_inner_jitted_lambda(10, 20) (jit(lambda) in loop)", None, None),
]


def report(b, fws, args):
    have_jax = any(f.name == "jax" for f in fws)
    cpu, ncpu = bu.cpu_model()
    lines = []
    w = lines.append
    w("# Seed benchmark results")
    w("")
    w(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    w(f"- machine: {cpu}, {ncpu} CPUs, {platform.system()} {platform.release()} {platform.machine()}")
    w(f"- Python {sys.version.split()[0]}, NumPy {np.__version__}")
    for f in fws:
        backend = "Cranelift JIT, CPU" if f.name == "cranax" else "XLA, CPU"
        w(f"- {f.name} {f.version()}: devices {f.device()}, backend {backend}")
    if not have_jax:
        w("- JAX: **not installed** in this run; the JAX column shows JAX 0.10.2's reference figures from "
          "another run (marked *ref*)")
    else:
        w("- JAX: installed, measured in the same process")
    w(f"- command: `python benches/bench_seeds.py{' --quick' if args.quick else ''}`; medians after "
      "warm-up, each call waited with `block_until_ready()`; first calls use a fresh function object and "
      "emptied compile caches")
    w("")
    w("| figure | cranax | JAX | NumPy | cranax / JAX | target | JAX 0.10.2 reference |")
    w("|---|---:|---:|---:|---:|---|---:|")
    for key, label, target, npkey in ROWS:
        r = b.results.get(key, {})
        c = r.get("cranax")
        j = r.get("jax")
        jcell = bu.fmt_time(j) if j is not None else (f"*ref* {bu.fmt_time(REFERENCE[key])}"
                                                       if key in REFERENCE else "-")
        jj = j if j is not None else REFERENCE.get(key)
        n = b.results.get(npkey, {}).get("numpy") if npkey else None
        ratio = bu.fmt_ratio(c, jj)
        if target is None:
            tcell = ""
        else:
            met = c is not None and jj is not None and c / jj <= target
            tcell = f"≤ {target:g}× JAX: {'met' if met else '**missed**'}"
        ref = bu.fmt_time(REFERENCE[key]) if key in REFERENCE else "-"
        w(f"| {label} | {bu.fmt_time(c)} | {jcell} | {bu.fmt_time(n)} | {ratio} | {tcell} | {ref} |")
    w("")
    dl = []
    for k, d in b.diffs.items():
        dl.append(f"{k}: " + ", ".join(f"{fw} {v:.1e}" for fw, v in d.items()))
    w("Max abs difference from NumPy: " + "; ".join(dl) + ".")
    w("")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short loops (smoke test)")
    p.add_argument("--write", metavar="PATH", help="also write the markdown report to PATH")
    p.add_argument("--no-jax", action="store_true", help="do not measure JAX even if installed")
    args = p.parse_args(argv)
    fws = frameworks()
    if args.no_jax:
        fws = [f for f in fws if f.name != "jax"]
    print(f"host: {bu.machine_line()}", file=sys.stderr)
    for f in fws:
        print(f"{f.name} {f.version()}: {f.device()}", file=sys.stderr)
    b = Bench(args.quick)
    xh = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    for fw in fws:  # warm each framework's backend once so no figure includes its start-up
        w = fw.jit(lambda v: v * 2.0)
        w(fw.jnp.ones(4)).block_until_ready()
    bench_numpy(b, xh)
    for fw in fws:
        print(f"[{fw.name}]", file=sys.stderr, flush=True)
        bench_dispatch(b, fw)
        bench_f200(b, fw)
        bench_selu(b, fw, xh)
        bench_lambda_loop(b, fw)
    text = report(b, fws, args)
    print(text)
    if args.write:
        # Sections written by other benchmarks (from the KEEP marker on) survive a rewrite.
        kept = ""
        try:
            with open(args.write) as fh:
                old = fh.read()
            if KEEP_MARKER in old:
                kept = "\n" + old[old.index(KEEP_MARKER):]
        except OSError:
            pass
        with open(args.write, "w") as fh:
            fh.write(text + "\n" + kept)
    return 0


KEEP_MARKER = "<!-- sections below are written by other benchmarks and kept by bench_seeds.py --write -->"


if __name__ == "__main__":
    sys.exit(main())
