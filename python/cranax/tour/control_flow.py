"""The tour's control-flow section (seed: "jnp.where vs lax.cond", "while loop conditioned on x and n").

* The seed's relu written with ``jnp.where`` (both branches computed, ``select_n`` picks) and with
  ``lax.cond`` (only the taken branch runs): both print ``3.0`` and ``-0.0``; the cond's jaxpr is JAX's text.
* The seed's ``g(x, n)``, whose Python ``while i < n`` raised ``TracerBoolConversionError`` under ``jit``,
  written with ``lax.while_loop``: ``jit(g)(10, 20) == 30``, timed (trace, compile, first call, steady state)
  and run for a million iterations, against the Python loop.
* Per-branch run counters (``cranax._core._control_stats()``) show that the untaken branch never ran.

``tour_control_flow(out=None, quick=False)`` prints the section and returns its figures as a dict. ``out``
may be a file or the ``cranax.tour.Tour`` object.
"""
import sys
import time

import numpy as np

import cranax
import cranax.numpy as jnp
from cranax import _core, lax
from ..bench import _timing as bu

__all__ = ["tour_control_flow", "relu_where", "relu_cond", "g_while"]


def relu_where(x):
    return jnp.where(x > 0, x, 0.0 * x)


def relu_cond(x):
    return lax.cond(x > 0, lambda v: v, lambda v: 0.0 * v, x)


def g_while(x, n):
    """The seed's ``g``: ``i = 0; while i < n: i += 1; return x + i``, as a compiled loop."""
    i = lax.while_loop(lambda i: i < n, lambda i: i + 1, 0)
    return x + i


def g_python(x, n):
    i = 0
    while i < n:
        i += 1
    return x + i


def tour_control_flow(out=None, quick=False):
    """Control flow: relu with jnp.where and lax.cond; the seed's while loop with lax.while_loop."""

    tour = out if hasattr(out, "say") else None
    if tour is not None:
        say = tour.say
        quick = getattr(tour, "quick", quick)
        tour.title("control flow: jnp.where vs lax.cond, and the seed's while loop as lax.while_loop")
    else:
        stream = sys.stdout if out is None else out

        def say(*a):
            print(*a, file=stream, flush=True)
        say("== control flow: jnp.where vs lax.cond, and the seed's while loop as lax.while_loop " + "=" * 16)
    budget = 0.1 if quick else 0.5
    figures = {}

    # relu both ways
    rw, rc = cranax.jit(relu_where), cranax.jit(relu_cond)
    a, b = rw(jnp.array(3.0)), rw(jnp.array(-2.0))
    say(f">>> relu_where(3.0), relu_where(-2.0)   {a} {b}")
    c, d = rc(jnp.array(3.0)), rc(jnp.array(-2.0))
    say(f">>> relu_cond(3.0), relu_cond(-2.0)     {c} {d}     (seed: 3.0 -0.0)")
    figures["relu"] = [float(a), float(b), float(c), float(d)]
    say("make_jaxpr(relu_cond)(jnp.array(3.0)):")
    say(str(cranax.make_jaxpr(relu_cond)(jnp.array(3.0))))
    s0 = _core._control_stats()[2]
    for _ in range(5):
        rc(jnp.array(3.0)).block_until_ready()
    s1 = _core._control_stats()[2]
    say(f"5 calls with x > 0: true branch ran {s1[1] - s0[1]} times, false branch {s1[0] - s0[0]} times")
    figures["branch_runs"] = (s1[1] - s0[1], s1[0] - s0[0])

    # the seed's while loop
    gj = cranax.jit(g_while)
    r = gj(10, 20)
    say(f">>> jit(g)(10, 20)   {r}   (the Python `while i < n` raised TracerBoolConversionError under jit)")
    figures["g_10_20"] = int(r)
    if tour is not None:
        tour.measure_jit("g(x, n) while_loop n=20", g_while, (10, 20), (10, 20), g_python)
        tour.measure_jit("g(x, n) while_loop n=1e6", g_while, (10, 1_000_000), (10, 1_000_000), g_python)
    else:
        f = cranax.jit(bu.fresh_function(g_while))
        t_first, _ = bu.timeit_once(lambda: bu.block(f(10, 20)))
        steady = bu.median_time(lambda: bu.block(f(10, 20)), budget=budget)
        big = bu.median_time(lambda: bu.block(f(10, 1_000_000)), budget=budget, min_n=3)
        t0 = time.perf_counter()
        g_python(10, 1_000_000)
        py = time.perf_counter() - t0
        say(f"{'':24s} {'first call':>12s} {'steady':>12s}")
        say(f"{'g(10, 20)':24s} {bu.fmt_time(t_first):>12s} {bu.fmt_time(steady):>12s}")
        say(f"{'g(10, 1_000_000)':24s} {'':>12s} {bu.fmt_time(big):>12s}   Python loop: {bu.fmt_time(py)}")
        figures.update(first=t_first, steady=steady, steady_1e6=big, python_1e6=py)
    fused = _core._control_stats()[1]
    say(f"(an all-scalar loop compiles to one Cranelift function with a real loop; fused-loop calls so far: "
        f"{fused})")
    return figures
