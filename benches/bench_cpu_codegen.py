"""CPU code generation figures (issue 3): cranax vs JAX vs NumPy in the same run.

    python benches/bench_cpu_codegen.py [--quick] [--write]

Figures: selu over 1e6 f32 under jit; ``x * 2 + 1`` over 1e7 f32 (1 thread and all threads, against NumPy
in place and a plain copy); sums over rows / columns / everything of 1e7 f32 (GB/s against the copy);
each vectorized math function's throughput on 1e6 f32; compile time (first call: fresh function, emptied
caches) of the 200-step ``sin(y) + y * 0.5`` chain and of ``tanh(x) * 1.01 + 0.1`` chains of N = 10 / 100 /
1000 ops on 1000 elements. Steady-state figures are medians after warm-up, each call waited for with
``block_until_ready``. The 1-thread cranax figures come from a child process run with
``CRANAX_NUM_THREADS=1``. ``--write`` replaces the "CPU code generation" section of benches/RESULTS.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import cranax
import cranax.numpy as cnp
from cranax.bench import _timing as bu
from cranax import lax as clax

try:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jjnp
    from jax import lax as jlax
except Exception:  # pragma: no cover
    jax = jjnp = jlax = None

try:
    from scipy.special import erf as np_erf
except Exception:  # pragma: no cover
    np_erf = None

MARK = "## CPU code generation (issue 3)"


def fws():
    out = [("cranax", cranax, cnp, clax)]
    if jax is not None:
        out.append(("jax", jax, jjnp, jlax))
    return out


def clear(name, mod):
    if name == "cranax":
        cranax._core.clear_caches()
    else:
        mod.clear_caches()


def med(fn, quick):
    return bu.median_time(fn, budget=0.2 if quick else 1.0, warmup=2 if quick else 4)


def steady(args):
    """Steady-state figures (this process's thread setting); returns {key: {framework: seconds}}."""
    q = args.quick
    res = {}

    def put(key, fw, s):
        res.setdefault(key, {})[fw] = s
        print(f"  {key:28s} {fw:8s} {bu.fmt_time(s, 12)}", file=sys.stderr, flush=True)

    rng = np.random.default_rng(0)
    x1m = rng.standard_normal(1_000_000).astype(np.float32)
    x10m = rng.standard_normal(10_000_000).astype(np.float32)
    m2d = x10m.reshape(1000, 10_000)

    # NumPy references.
    put("selu", "numpy", med(lambda: 1.05 * np.where(x1m > 0, x1m, 1.67 * np.exp(x1m) - 1.67), q))
    buf = np.empty_like(x10m)

    def np_inplace():
        np.multiply(x10m, np.float32(2), out=buf)
        np.add(buf, np.float32(1), out=buf)
    put("axpb", "numpy", med(lambda: x10m * np.float32(2) + np.float32(1), q))
    put("axpb_inplace", "numpy", med(np_inplace, q))
    put("copy", "numpy", med(lambda: np.copyto(buf, x10m), q))
    put("sum_all", "numpy", med(lambda: x10m.sum(), q))
    put("sum_rows", "numpy", med(lambda: m2d.sum(axis=1), q))
    put("sum_cols", "numpy", med(lambda: m2d.sum(axis=0), q))
    sm_in = x1m.reshape(1000, 1000)

    def np_softmax(a):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    put("sumexp", "numpy", med(lambda: np.exp(x1m).sum(), q))
    put("softmax", "numpy", med(lambda: np_softmax(sm_in), q))

    for name, mod, jnp, lax in fws():
        if name == "jax" and args.child:
            continue
        dev = lambda a: mod.device_put(a)  # noqa: E731
        d1m, d10m, d2d = dev(x1m), dev(x10m), dev(m2d)

        def selu(x):
            return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)
        fs = mod.jit(selu)
        put("selu", name, med(lambda: fs(d1m).block_until_ready(), q))
        fa = mod.jit(lambda x: x * 2.0 + 1.0)
        put("axpb", name, med(lambda: fa(d10m).block_until_ready(), q))
        for key, f, a in (("sum_all", lambda x: jnp.sum(x), d10m), ("sum_rows", lambda x: jnp.sum(x, axis=1), d2d),
                          ("sum_cols", lambda x: jnp.sum(x, axis=0), d2d)):
            g = mod.jit(f)
            put(key, name, med(lambda: g(a).block_until_ready(), q))
        if args.child:
            break
        gse = mod.jit(lambda x: jnp.sum(jnp.exp(x)))
        put("sumexp", name, med(lambda: gse(d1m).block_until_ready(), q))
        dsm = dev(x1m.reshape(1000, 1000))
        gsm = mod.jit(lambda x: mod.nn.softmax(x, axis=-1))
        put("softmax", name, med(lambda: gsm(dsm).block_until_ready(), q))
        # Math throughput on 1e6 f32.
        y1m = dev(np.abs(x1m) + np.float32(0.5))
        unary = {"exp": jnp.exp, "exp2": jnp.exp2, "expm1": jnp.expm1, "log": jnp.log, "log1p": jnp.log1p,
                 "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "tanh": jnp.tanh, "logistic": lax.logistic,
                 "erf": lax.erf, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt}
        for fn_name, f in unary.items():
            g = mod.jit(f)
            arg = y1m if fn_name in ("log", "log1p", "sqrt", "rsqrt") else d1m
            put(f"math_{fn_name}", name, med(lambda: g(arg).block_until_ready(), q))
        for fn_name, f in (("pow", jnp.power), ("atan2", jnp.arctan2)):
            g = mod.jit(f)
            put(f"math_{fn_name}", name, med(lambda: g(y1m, d1m).block_until_ready(), q))
    if not args.child:
        pos = np.abs(x1m) + np.float32(0.5)
        np_unary = {"exp": (np.exp, x1m), "exp2": (np.exp2, x1m), "expm1": (np.expm1, x1m), "log": (np.log, pos),
                    "log1p": (np.log1p, pos), "sin": (np.sin, x1m), "cos": (np.cos, x1m), "tan": (np.tan, x1m),
                    "tanh": (np.tanh, x1m), "logistic": (lambda v: 1 / (1 + np.exp(-v)), x1m),
                    "sqrt": (np.sqrt, pos), "rsqrt": (lambda v: 1 / np.sqrt(v), pos)}
        if np_erf is not None:
            np_unary["erf"] = (np_erf, x1m)
        for fn_name, (f, a) in np_unary.items():
            put(f"math_{fn_name}", "numpy", med(lambda: f(a), q))
        put("math_pow", "numpy", med(lambda: np.power(pos, x1m), q))
        put("math_atan2", "numpy", med(lambda: np.arctan2(pos, x1m), q))
    return res


def compile_times(args):
    res = {}

    def put(key, fw, s):
        res.setdefault(key, {})[fw] = s
        print(f"  {key:28s} {fw:8s} {bu.fmt_time(s, 12)}", file=sys.stderr, flush=True)

    reps = 2 if args.quick else 3
    for name, mod, jnp, _ in fws():
        def f200(x):
            y = x
            for _ in range(200):
                y = jnp.sin(y) + y * 0.5
            return y
        x0 = mod.device_put(np.array(1.0, np.float32))
        x1k = mod.device_put(np.linspace(-1, 1, 1000, dtype=np.float32))
        progs = [("first_f200", f200, x0)]
        for n in (10, 100, 1000):
            def chain(x, n=n):
                for _ in range(n):
                    x = jnp.tanh(x) * 1.01 + 0.1
                return x
            progs.append((f"first_tanh{n}", chain, x1k))
        for key, f, x in progs:
            r = 1 if (name == "jax" and key == "first_tanh1000") else reps
            ts = []
            for _ in range(r):
                clear(name, mod)
                g = mod.jit(bu.fresh_function(f))
                t, _ = bu.timeit_once(lambda: g(x))
                ts.append(t)
            put(key, name, statistics.median(ts))
    return res


ROWS = [
    ("selu", "selu 1M f32, jit (steady state)", 1e6 * 8),
    ("axpb", "x * 2 + 1, 1e7 f32, jit (NumPy: x*2+1 allocating)", 1e7 * 8),
    ("axpb_1t", "x * 2 + 1, 1e7 f32, cranax on 1 thread", 1e7 * 8),
    ("axpb_inplace", "NumPy x*2+1 in place (np.multiply/np.add out=)", 1e7 * 8),
    ("copy", "NumPy plain copy of 1e7 f32 (np.copyto)", 1e7 * 8),
    ("sum_all", "sum of 1e7 f32", 1e7 * 4),
    ("sum_all_1t", "sum of 1e7 f32, cranax on 1 thread", 1e7 * 4),
    ("sum_rows", "sum over axis 1 of f32[1000, 10000]", 1e7 * 4),
    ("sum_rows_1t", "sum over axis 1, cranax on 1 thread", 1e7 * 4),
    ("sum_cols", "sum over axis 0 of f32[1000, 10000]", 1e7 * 4),
    ("sum_cols_1t", "sum over axis 0, cranax on 1 thread", 1e7 * 4),
    ("sumexp", "sum(exp(x)), 1e6 f32 (a reduction with math)", 1e6 * 4),
    ("softmax", "softmax over rows of f32[1000, 1000]", 1e6 * 8),
]
MATH = ["exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic", "erf", "pow", "atan2",
        "sqrt", "rsqrt"]
COMPILE = [("first_f200", "200-step sin(y) + y*0.5 chain on a scalar, first call", 108.2e-3),
           ("first_tanh10", "tanh(x)*1.01+0.1 x 10 on f32[1000], first call", 39e-3),
           ("first_tanh100", "... x 100, first call", 202e-3),
           ("first_tanh1000", "... x 1000, first call", 4.1)]


def cell(d, k):
    return bu.fmt_time(d[k]) if k in d else "-"


def report(res, args):
    have_jax = jax is not None
    lines = [MARK, ""]
    w = lines.append
    w(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {bu.machine_line()}")
    w(f"- cranax {cranax.__version__ if hasattr(cranax, '__version__') else ''}: {cranax.devices()} (Cranelift JIT, "
      f"threads: {os.environ.get('CRANAX_NUM_THREADS', 'all cores')}); "
      + (f"JAX {jax.__version__}: {jax.devices()} (XLA)" if have_jax else "JAX: not installed"))
    w(f"- load average at start: {res.get('_load', '?')} (shared 2-vCPU VM: other sessions build and test in parallel;"
      " read ratios, not absolute times)")
    w("- command: `python benches/bench_cpu_codegen.py" + (" --quick" if args.quick else "") + "`")
    w("")
    w("| figure | cranax | JAX | NumPy | cranax / JAX | cranax / NumPy | cranax GB/s |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for key, label, nbytes in ROWS:
        d = res.get(key, {})
        c = d.get("cranax")
        gbs = f"{nbytes / c / 1e9:.1f}" if c else "-"
        w(f"| {label} | {cell(d, 'cranax')} | {cell(d, 'jax')} | {cell(d, 'numpy')} | "
          f"{bu.fmt_ratio(c, d.get('jax')) if c and 'jax' in d else '-'} | "
          f"{bu.fmt_ratio(c, d.get('numpy')) if c and 'numpy' in d else '-'} | {gbs} |")
    w("")
    w("Math functions, 1e6 float32 under jit (NumPy: float32 ufuncs; erf via SciPy):")
    w("")
    w("| function | cranax | JAX | NumPy | cranax / JAX | cranax / NumPy | cranax Melem/s |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    for f in MATH:
        d = res.get(f"math_{f}", {})
        c = d.get("cranax")
        w(f"| {f} | {cell(d, 'cranax')} | {cell(d, 'jax')} | {cell(d, 'numpy')} | "
          f"{bu.fmt_ratio(c, d.get('jax')) if c and 'jax' in d else '-'} | "
          f"{bu.fmt_ratio(c, d.get('numpy')) if c and 'numpy' in d else '-'} | {1e6 / c / 1e6:.0f} |" if c else f"| {f} | - | - | - | - | - | - |")
    w("")
    w("Compile time (first call = trace + compile + run, fresh function object, emptied caches; median of 3, "
      "JAX's N=1000 once):")
    w("")
    w("| program | cranax | JAX | cranax / JAX | JAX 0.10.2 reference |")
    w("|---|---:|---:|---:|---:|")
    for key, label, ref in COMPILE:
        d = res.get(key, {})
        c = d.get("cranax")
        w(f"| {label} | {cell(d, 'cranax')} | {cell(d, 'jax')} | "
          f"{bu.fmt_ratio(c, d.get('jax')) if c and 'jax' in d else '-'} | {bu.fmt_time(ref)} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        json.dump(steady(args), sys.stdout)
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("steady state (all threads)", file=sys.stderr)
    res = steady(args)
    print("steady state (1 thread, child process)", file=sys.stderr)
    env = dict(os.environ, CRANAX_NUM_THREADS="1")
    cmd = [sys.executable, __file__, "--child"] + (["--quick"] if args.quick else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    for key, d in json.loads(out.stdout).items():
        if "cranax" in d:
            res.setdefault(key + "_1t", {})["cranax"] = d["cranax"]
    print("compile times", file=sys.stderr)
    res.update(compile_times(args))
    res["_load"] = f"{load:.1f}"
    text = report(res, args)
    print(text)
    if args.write:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
        old = open(path).read() if os.path.exists(path) else ""
        if MARK in old:
            head, rest = old.split(MARK, 1)
            nxt = rest.find("\n## ")
            tail = rest[nxt:] if nxt >= 0 else ""
            new = head + text + tail
        else:
            new = old.rstrip("\n") + "\n\n" + text
        with open(path, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()
