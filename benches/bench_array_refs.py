"""Array refs (issue 18 item 8): dispatch of a jitted function that updates a ``jax.Ref`` (passed in, or closed
over) against the pure function returning the new value, and a 1,000-step scan accumulating into a closed-over
ref against the same sum as a carry. cranax and JAX in one run: JAX in this process when ``import jax`` works,
otherwise in the interpreter named by ``JAX_PYTHON`` (e.g. /tmp/jaxvenv/bin/python), run with ``--jax-only``.

    python benches/bench_array_refs.py [--markdown]
"""
import json
import os
import statistics
import subprocess
import sys
import time


def call_times(fn, runs, warmup):
    """Seconds of each of ``runs`` calls after ``warmup`` untimed ones (here, not cranax.bench's, so that the
    JAX child needs no cranax)."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return ts


def med(fn, n=200):
    return statistics.median(call_times(fn, n, warmup=5))


def figures(jax, jnp, lax):
    out = {}
    x = jnp.ones(1000)

    pure = jax.jit(lambda v: v + 1.)
    out["pure jit: v + 1 (f32[1000])"] = med(lambda: pure(x).block_until_ready())

    r = jax.new_ref(jnp.ones(1000))

    @jax.jit
    def bump(ref):
        ref[...] += 1.
    out["jit, ref argument: ref[...] += 1"] = med(lambda: (bump(r), r[...].block_until_ready()))

    c = jax.new_ref(jnp.ones(1000))

    @jax.jit
    def bump_closed():
        c[...] += 1.
    out["jit, closed-over ref: c[...] += 1"] = med(lambda: (bump_closed(), c[...].block_until_ready()))

    xs = jnp.ones((1000, 16))
    acc = jax.new_ref(jnp.zeros(16))

    @jax.jit
    def scan_ref(xs):
        def body(carry, x):
            acc[...] += x
            return carry, None
        lax.scan(body, 0., xs)
    out["scan 1000 steps, sum into closed-over ref"] = med(lambda: (scan_ref(xs), acc[...].block_until_ready()),
                                                           50)
    scan_carry = jax.jit(lambda xs: lax.scan(lambda s, x: (s + x, None), jnp.zeros(16), xs)[0])
    out["scan 1000 steps, sum as carry"] = med(lambda: scan_carry(xs).block_until_ready(), 50)
    return out


def jax_figures():
    try:
        import jax   # noqa: PLC0415  (optional: the reference run)
        import jax.numpy as jjnp   # noqa: PLC0415
        from jax import lax as jlax   # noqa: PLC0415
        return figures(jax, jjnp, jlax), f"JAX {jax.__version__} in-process"
    except ImportError:
        py = os.environ.get("JAX_PYTHON")
        if not py:
            return None, "JAX not run (no `import jax`, no JAX_PYTHON)"
        env = dict(os.environ, PYTHONPATH="")
        res = subprocess.run([py, __file__, "--jax-only"], capture_output=True, text=True, env=env, check=True)
        return json.loads(res.stdout.strip().splitlines()[-1]), f"JAX via {py}"


def fmt(s):
    return "-" if s is None else (f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs")


def main():
    if "--jax-only" in sys.argv:
        import jax   # noqa: PLC0415  (the child run)
        import jax.numpy as jjnp   # noqa: PLC0415
        from jax import lax as jlax   # noqa: PLC0415
        print(json.dumps(figures(jax, jjnp, jlax)))
        return
    import cranax   # noqa: PLC0415
    import cranax.numpy as cjnp   # noqa: PLC0415
    from cranax import lax as clax   # noqa: PLC0415
    cx = figures(cranax, cjnp, clax)
    jx, how = jax_figures()
    load = os.getloadavg()[0]
    print(f"device: {cranax.devices()[0]}; load average {load:.1f}; {how}; medians")
    print("| case | cranax | JAX | cranax / JAX |")
    print("|---|---:|---:|---:|")
    for k, v in cx.items():
        j = None if jx is None else jx.get(k)
        ratio = "-" if j is None else f"{v / j:.2f}"
        print(f"| {k} | {fmt(v)} | {fmt(j)} | {ratio} |")


if __name__ == "__main__":
    main()
