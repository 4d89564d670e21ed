"""The tour's grad section (seed: "grad는 미분식을 직접 쓰지 않게 한다").

``grad(sum_logistic)(jnp.arange(3.))`` next to the seed's finite-difference check, the jaxpr of the gradient
(JAX's exact text), then ``jit(grad(f))`` against ``grad(jit(f))``: results, first call, steady state and how
many programs each compiled (``cranax._core.compile_count()``). ``jit(grad(f))`` is one compiled program;
``grad(jit(f))`` keeps the inner ``jit`` as compiled calls (its forward part and its transposed backward part).

``tour_grad(out=None, quick=False)`` prints the section and returns its figures as a dict. ``out`` may be a
file or the ``cranax.tour.Tour`` object (then ``("grad", tour_grad)`` is a section of ``python -m cranax.tour``).
"""
import sys

import numpy as np

import cranax
import cranax.numpy as jnp
from cranax import _core
from ..bench import _timing as bu

__all__ = ["tour_grad"]


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def first_finite_differences(function, x):
    eps = 1e-3
    return jnp.array([(function(x + eps * v) - function(x - eps * v)) / (2 * eps) for v in jnp.eye(len(x))])


def tour_grad(out=None, quick=False):
    """grad: the seed's sum_logistic gradient, finite differences, jit(grad) vs grad(jit)."""

    tour = out if hasattr(out, "say") else None
    if tour is not None:
        say = tour.say
        quick = getattr(tour, "quick", quick)
        tour.title("grad: differentiation without writing the derivative (seed)")
    else:
        stream = sys.stdout if out is None else out

        def say(*a):
            print(*a, file=stream, flush=True)
        say("== grad: differentiation without writing the derivative (seed) " + "=" * 36)
    budget = 0.1 if quick else 0.5

    x = jnp.arange(3.0)
    derivative_fn = cranax.grad(sum_logistic)
    g = derivative_fn(x)
    fd = first_finite_differences(sum_logistic, x)
    say(f"grad(sum_logistic)(jnp.arange(3.))     {g}")
    say(f"first_finite_differences(eps=1e-3)     {fd}")
    say(f"seed (JAX) output                      [0.25 0.19661197 0.10499357]")
    diff = float(np.max(np.abs(np.asarray(g) - np.asarray(fd))))
    say(f"max |grad - finite differences|        {diff:.2e}")
    say("make_jaxpr(grad(sum_logistic))(x):")
    say(str(cranax.make_jaxpr(derivative_fn)(x)))

    # jit(grad(f)) vs grad(jit(f)) on a bigger input; fresh function objects so the first call compiles.
    n = 1 << 16
    xb = cranax.device_put(np.linspace(-3, 3, n, dtype=np.float32))
    results = {}
    for label, make in (("jit(grad(f))", lambda f: cranax.jit(cranax.grad(f))),
                        ("grad(jit(f))", lambda f: cranax.grad(cranax.jit(f)))):
        f = bu.fresh_function(sum_logistic)
        fn = make(f)
        c0 = _core.compile_count()
        t_first, r = bu.timeit_once(lambda: fn(xb))
        c1 = _core.compile_count()
        steady = bu.median_time(lambda: bu.block(fn(xb)), budget=budget, min_n=3 if quick else 5)
        c2 = _core.compile_count()
        results[label] = dict(first=t_first, steady=steady, compiles_first=c1 - c0, compiles_steady=c2 - c1,
                              value=np.asarray(r))
    ref = np.asarray(results["jit(grad(f))"]["value"])
    say(f"{'variant':16s} {'first call':>12s} {'steady':>12s} {'compiles (1st)':>15s} {'compiles (then)':>16s} "
        f"{'max|Δ| vs jit(grad)':>20s}")
    for label, r in results.items():
        d = float(np.max(np.abs(r["value"] - ref)))
        say(f"{label:16s} {bu.fmt_time(r['first']):>12s} {bu.fmt_time(r['steady']):>12s} "
            f"{r['compiles_first']:>15d} {r['compiles_steady']:>16d} {d:>20.2e}")
    say(f"(f32[{n}] input; grad(jit(f)) runs the inner jit as two compiled calls: forward and transposed)")
    return dict(grad=np.asarray(g), fd=np.asarray(fd), **{k: {kk: vv for kk, vv in v.items() if kk != "value"}
                                                          for k, v in results.items()})
