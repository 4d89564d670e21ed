"""Where unordered ``jax.debug.print`` calls run, cranax vs JAX 0.10.2 (issue 18): a conformance count, and
what the ordering costs at lowering (``interpreters/print_order.py``; the run-time path is unchanged).

Each case is a small program (``jit``, ``lax.map``/``scan``/``fori_loop``/``while_loop``/``cond`` bodies,
``vmap``, ``ordered=True``) printing several values; the script runs every case under cranax and, in a
subprocess of ``JAX_PYTHON`` (default /tmp/jaxvenv/bin/python, ``JAX_PLATFORMS=cpu``), under JAX, and counts
the cases whose printed lines are the same, in the same order. ``--main PATH`` also runs the cases on the
cranax tree at PATH (its ``python/``) for a before/after count.
``python benches/bench_debug_print_order.py [--main /work/main]``.
"""
import json
import os
import subprocess
import sys
import time

CASES = r'''
import io, json, sys
from contextlib import redirect_stdout
{imp}
P = jax.debug.print
xs1, xs2, xs3 = jnp.arange(1.0, 3.0), jnp.arange(2.0), jnp.arange(3.0)   # loops of >= 2 steps (XLA unrolls one)

def abc(x):
    a = x + 1; b = a * 2; c = b - 3
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); return c
def abcd(x):
    a = x + 1; b = a * 2; c = b - 3; d = c * 5
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); P("d {{}}", d); return d
def abcd_rev(x):
    a = x + 1; b = a * 2; c = b - 3; d = c * 5
    P("d {{}}", d); P("c {{}}", c); P("b {{}}", b); P("a {{}}", a); return d
def chain5(x):
    a = x + 1; b = a * 2; c = b - 3; d = c * 5; e = d + 7
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); P("d {{}}", d); P("e {{}}", e); return e
def sct(x):
    a = jnp.sin(x); b = jnp.cos(a); c = jnp.tanh(b)
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); return c
def xsc(x):
    a = jnp.sin(x); b = jnp.cos(a)
    P("x {{}}", x); P("a {{}}", a); P("b {{}}", b); return b
def xabc(x):
    a = jnp.sin(x); b = jnp.cos(a); c = jnp.tanh(b)
    P("x {{}}", x); P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); return c
def sib(x):
    a = jnp.sin(x); b = jnp.cos(x); c = jnp.exp(x)
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); return a + b + c
def two_branches(x):
    a = jnp.sin(x); b = jnp.cos(a); c = jnp.exp(x)
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); return b + c
def guide(x):
    P("x: {{}}", x); y = jnp.sin(x); P("y: {{}}", y); return y
def k_rev(x):
    y = x * 2; z = jnp.exp(y)
    P("z {{}}", z); P("y {{}}", y); P("x {{}}", x); return z
def params(x, y):
    P("y: {{}}", y); P("x: {{}}", x); return x + y
def ordered(x):
    y = x + 1; z = y * 2
    P("c {{}}", z, ordered=True); P("b {{}}", y, ordered=True); P("a {{}}", x, ordered=True); return z
def fori_ic(i, c):
    P("i={{}}", i); P("c={{}}", c); return c * 2.0
def fori3(i, c):
    a, b, d = c
    P("a {{}}", a); P("b {{}}", b); P("d {{}}", d); P("i {{}}", i); return a + 1.0, b * 2.0, d - 1.0
def w_iv(c):
    i, v = c
    P("i {{}}", i); P("v {{}}", v); return i + 1, v * 2
def w_is(c):
    i, s = c
    s = s + i
    P("s={{}}", s); P("i={{}}", i); return i + 1, s
def w_chain(c):
    a = c + 1; b = a * 2; d = b - 1
    P("a {{}}", a); P("b {{}}", b); P("d {{}}", d); return d
def f_cy(i, c):
    y = c * 2; P("y {{}}", y); P("c {{}}", c); return y
def f_chain(i, c):
    a = c + 1; b = a * 2
    P("a {{}}", a); P("b {{}}", b); return b
def s_xc(c, x):
    P("x {{}}", x); P("c {{}}", c); return c + x, c
def s_abc(c, x):
    a = x + 1; b = a * 2; c2 = c + b
    P("a {{}}", a); P("b {{}}", b); P("c {{}}", c2); return c2, b
def s_mixed(c, x):
    a = c + x; b = a * 2
    P("a {{}}", a); P("b {{}}", b); return b, x
def s_yz(c, x):
    y = jnp.sin(x); z = c * 2
    P("y {{}}", y); P("z {{}}", z); return z, y
def s_zy(c, x):
    z = c * 2; y = jnp.sin(x)
    P("z {{}}", z); P("y {{}}", y); return z, y
def s_two_chains(c, x):
    c1 = c + 1; c2 = c1 * 2; y1 = jnp.sin(x); y2 = jnp.cos(y1)
    P("y1 {{}}", y1); P("y2 {{}}", y2); P("c1 {{}}", c1); P("c2 {{}}", c2); return c2, y2
def s_carry_sib(c, x):
    a = jnp.sin(c); b = jnp.cos(c)
    P("a {{}}", a); P("b {{}}", b); return a + b, x
def n2(c, x):
    a = c + x; b = jnp.sin(x); P("a {{}}", a); P("b {{}}", b); return a, b
def n3(c, x):
    a = jnp.sin(x); b = c + x; P("a {{}}", a); P("b {{}}", b); return b, a
def n4(c, x):
    a = c * 2; b = a + x; d = jnp.sin(x); P("a {{}}", a); P("b {{}}", b); P("d {{}}", d); return b, d
def n6(c, x):
    a = jnp.sin(x); b = jnp.cos(c); d = jnp.exp(x); P("a {{}}", a); P("b {{}}", b); P("d {{}}", d); return b, a + d
def n7(x):
    a = jnp.sin(x); b = jnp.cos(x); c = jnp.exp(x); d = jnp.tanh(x)
    P("d {{}}", d); P("c {{}}", c); P("b {{}}", b); P("a {{}}", a); return a + b + c + d
def n10(c, x):
    a = jnp.sin(x); b = jnp.cos(c); P("a {{}}", a); P("b {{}}", b); P("c {{}}", c); P("x {{}}", x); return b, a
def n11(c, x):
    a = jnp.sin(x); b = a * c; P("a {{}}", a); P("b {{}}", b); return b, a
def n12(x):
    a = jnp.sin(x); P("a {{}}", a); P("x {{}}", x); return x
def vf1(i, c):
    P("i={{}} c={{}}", i, c); return c + 1.0
def vf2(i, c):
    P("i={{}}", i); P("c={{}}", c); return c + 1.0
def cbody(x):
    a = x + 1; b = a * 2
    P("a {{}}", a); P("b {{}}", b); P("x {{}}", x); return b

lax = jax.lax
cases = {{
    "jit a b c": lambda: jax.jit(abc)(1.0),
    "jit a b c (vector)": lambda: jax.jit(abc)(jnp.ones(3)),
    "jit a b c d": lambda: jax.jit(abcd)(1.0),
    "jit sin cos tanh": lambda: jax.jit(sct)(1.0),
    "jit x sin cos": lambda: jax.jit(xsc)(1.0),
    "jit siblings": lambda: jax.jit(sib)(1.0),
    "jit z y x": lambda: jax.jit(k_rev)(1.0),
    "jit parameters": lambda: jax.jit(params)(2.0, 3.0),
    "jit guide f": lambda: jax.jit(guide)(2.0),
    "jit ordered=True": lambda: jax.jit(ordered)(1.0),
    "vmap guide f": lambda: jax.vmap(guide)(xs3),
    "jit vmap guide f": lambda: jax.jit(jax.vmap(guide))(xs3),
    "jit vmap a b c": lambda: jax.jit(jax.vmap(abc))(xs2),
    "grad guide f": lambda: jax.grad(guide)(1.0),
    "map guide f": lambda: lax.map(guide, xs3),
    "jit map guide f": lambda: jax.jit(lambda xs: lax.map(guide, xs))(xs3),
    "map a b c": lambda: lax.map(abc, xs2),
    "map a b c d": lambda: lax.map(abcd, xs1),
    "map a b c d (printed reversed)": lambda: lax.map(abcd_rev, xs1),
    "map chain of 5": lambda: lax.map(chain5, xs1),
    "map x a b c": lambda: lax.map(xabc, xs1),
    "map a b c (rows)": lambda: lax.map(abc, jnp.ones((2, 3))),
    "map siblings": lambda: lax.map(sib, xs1),
    "map two branches": lambda: lax.map(two_branches, xs1),
    "fori i c": lambda: lax.fori_loop(0, 2, fori_ic, 1.0),
    "jit fori i c (traced bound)": lambda: jax.jit(lambda n: lax.fori_loop(0, n, fori_ic, 1.0))(2),
    "fori three carries": lambda: jax.jit(lambda: lax.fori_loop(0, 2, fori3, (0.0, 1.0, 2.0)))(),
    "fori c, y = c * 2": lambda: lax.fori_loop(0, 2, f_cy, 1.0),
    "fori chain from the carry": lambda: lax.fori_loop(0, 2, f_chain, 1.0),
    "while i v": lambda: jax.jit(lambda v: lax.while_loop(lambda c: c[0] < 2, w_iv, (0, v)))(1.0),
    "while i, s = s + i": lambda: lax.while_loop(lambda c: c[0] < 2, w_is, (0, 0.0)),
    "while chain": lambda: lax.while_loop(lambda c: c < 3, w_chain, 1.0),
    "scan x c": lambda: jax.jit(lambda xs: lax.scan(s_xc, 0.0, xs))(xs2),
    "scan chain + carry": lambda: jax.jit(lambda xs: lax.scan(s_abc, 0.0, xs))(xs2),
    "scan chain from carry and x": lambda: lax.scan(s_mixed, 1.0, xs1),
    "scan sin(x), c * 2": lambda: lax.scan(s_yz, 1.0, xs1),
    "scan c * 2, sin(x)": lambda: lax.scan(s_zy, 1.0, xs1),
    "scan two chains": lambda: lax.scan(s_two_chains, 0.0, xs1),
    "scan carry siblings": lambda: lax.scan(s_carry_sib, 1.0, xs1),
    "scan c + x, sin(x)": lambda: lax.scan(n2, 1.0, xs1),
    "scan sin(x), c + x": lambda: lax.scan(n3, 1.0, xs1),
    "scan c * 2, + x, sin(x)": lambda: lax.scan(n4, 1.0, xs1),
    "scan sin(x), cos(c), exp(x)": lambda: lax.scan(n6, 1.0, xs1),
    "map four siblings (printed reversed)": lambda: lax.map(n7, xs1),
    "scan sin(x), cos(c), c, x": lambda: lax.scan(n10, 1.0, xs1),
    "scan chain x -> a -> a * c": lambda: lax.scan(n11, 1.0, xs1),
    "map sin(x), x (x returned)": lambda: lax.map(n12, xs1),
    "jit(jit(a b c))": lambda: jax.jit(lambda x: jax.jit(abc)(x))(1.0),
    "jit(jit(a b c) + 1)": lambda: jax.jit(lambda x: jax.jit(abc)(x) + 1)(1.0),
    "jit(checkpoint(a b c))": lambda: jax.jit(jax.checkpoint(abc))(1.0),
    "jit(grad(a b c))": lambda: jax.jit(jax.grad(abc))(1.0),
    "vmap(map guide f)": lambda: jax.vmap(lambda xs: lax.map(guide, xs))(jnp.arange(4.0).reshape(2, 2)),
    "vmap(fori, one print)": lambda: jax.vmap(lambda c: lax.fori_loop(0, 2, vf1, c))(xs2),
    "vmap(fori, two prints)": lambda: jax.vmap(lambda c: lax.fori_loop(0, 2, vf2, c))(xs2),
    "cond branch": lambda: jax.jit(lambda p, x: lax.cond(p, cbody, lambda x: x, x))(True, 1.0),
}}
out = {{}}
for name, thunk in cases.items():
    buf = io.StringIO()
    with redirect_stdout(buf):
        jax.block_until_ready(thunk())
        jax.effects_barrier()
    out[name] = buf.getvalue().splitlines()
print(json.dumps(out))
'''


def run(imp, python=sys.executable, pythonpath=None):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([python, "-c", CASES.format(imp=imp)], capture_output=True, text=True, env=env,
                         timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def lowering_cost():
    """CPU milliseconds ``print_order.order`` takes on two long programs the model still takes (best of 5),
    and the first call of each under ``jit`` (trace, lower, compile, run)."""
    import cranax as jax
    import cranax.numpy as jnp
    from cranax.interpreters import print_order

    def chain(x):   # 600 elementwise equations, a print every 20 (near the model's bound)
        for i in range(600):
            x = jnp.sin(x) if i % 2 else x * 1.0001
            if i % 20 == 0:
                jax.debug.print("v {}", x)
        return x
    fan = lambda x: (jax.debug.print("a {}", x), jax.debug.print("b {}", x),   # noqa: E731
                     sum(jnp.sin(x * i) for i in range(1, 333)))[2]
    res = {}
    for name, f in (("chain", chain), ("fan-out", fan)):
        j = jax.make_jaxpr(f)(1.0).jaxpr
        ts = []
        for _ in range(5):
            t = time.process_time()
            print_order.order(j)
            ts.append(time.process_time() - t)
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            t = time.process_time()
            jax.block_until_ready(jax.jit(f)(1.0))
            jax.effects_barrier()
            first = time.process_time() - t
        prints = sum(e.primitive.name == "debug_print" for e in j.eqns)
        res[f"{name}: {len(j.eqns)} equations, {prints} prints"] = (min(ts) * 1e3, first * 1e3)
    return res


def main():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
    imp_cr, imp_jx = "import cranax as jax\nimport cranax.numpy as jnp", "import jax\nimport jax.numpy as jnp"
    jp = os.environ.get("JAX_PYTHON", "/tmp/jaxvenv/bin/python")
    if not os.path.exists(jp):
        sys.exit(f"JAX_PYTHON {jp} not found: nothing to compare with")
    jx = run(imp_jx, jp)
    runs = [("this tree", run(imp_cr, pythonpath=here))]
    if "--main" in sys.argv:
        runs.insert(0, ("--main", run(imp_cr, pythonpath=os.path.join(sys.argv[sys.argv.index("--main") + 1],
                                                                       "python"))))
    for label, cr in runs:
        differ = [k for k in jx if cr.get(k) != jx[k]]
        print(f"{label}: {len(jx) - len(differ)} of {len(jx)} cases print as JAX 0.10.2; differ: {differ}")
    sys.path.insert(0, here)
    for name, (ms, first) in lowering_cost().items():
        print(f"print_order.order, {name}: {ms:.2f} ms CPU; the jit's first call: {first:.0f} ms CPU")


if __name__ == "__main__":
    main()
