"""The tour's vmap section (seed: "vmap은 Python loop를 batch 연산으로 바꾼다").

The seed batches ``apply_matrix(v) = jnp.dot(matrix, v)`` over 10 vectors three ways: a Python loop with
``jnp.stack``, by hand (``jnp.dot(vectors, matrix.T)``) and with ``vmap`` — results compared first, then
timed with ``block_until_ready`` (the seed saw about 7.68 ms, 68.8 µs and 105 µs). ``jnp.dot`` arrives with
the linalg issue; until it works this section runs the same comparison on a per-example function made of
elementwise ops and reductions (a normalisation), whose hand-batched form uses ``axis=-1, keepdims=True``.

``tour_vmap(out=None, quick=False)`` prints the section and returns its figures as a dict. ``out`` may be a
file or the ``cranax.tour.Tour`` object (then ``("vmap", tour_vmap)`` is a section of ``python -m cranax.tour``:
it prints through the tour and adds one summary row per variant).
"""
import sys

import numpy as np

import cranax as jax
import cranax.numpy as jnp
from ..bench import _timing as bu
from .harness import Row

__all__ = ["tour_vmap"]


def _dot_works():
    try:
        np.asarray(jnp.dot(jnp.ones((2, 3)), jnp.ones(3)))
        return True
    except (NotImplementedError, ValueError, TypeError, AttributeError):
        return False


def _stack(xs):
    """``jnp.stack`` when the concatenate primitive exists; otherwise the rows are stacked on the host and
    put back on the device (the loop's time then includes those copies)."""
    try:
        return jnp.stack(xs)
    except NotImplementedError:
        return jax.device_put(np.stack([np.asarray(x) for x in xs]))


def _examples(matrix_np):
    """(title, code lines, apply_fn, naive, manual, vmapped, numpy reference fn)."""

    matrix = jax.device_put(matrix_np)
    if _dot_works():
        def apply_matrix(vector):
            return jnp.dot(matrix, vector)

        def naively_batched(vectors):
            return _stack([apply_matrix(v) for v in vectors])

        @jax.jit
        def manually_batched(vectors):
            return jnp.dot(vectors, matrix.T)

        @jax.jit
        def vmap_batched(vectors):
            return jax.vmap(apply_matrix)(vectors)

        code = ["def apply_matrix(vector): return jnp.dot(matrix, vector)",
                "naive:  jnp.stack([apply_matrix(v) for v in vectors])",
                "manual: jax.jit(lambda vectors: jnp.dot(vectors, matrix.T))",
                "vmap:   jax.jit(lambda vectors: jax.vmap(apply_matrix)(vectors))"]
        return ("apply_matrix (the seed's example: jnp.dot)", code, naively_batched, manually_batched,
                vmap_batched, lambda vs: vs @ matrix_np.T)

    scale = jax.device_put(matrix_np[0])   # a per-feature scale, shape (100,)

    def apply_norm(vector):
        mu = jnp.mean(vector)
        var = jnp.mean((vector - mu) ** 2)
        return jnp.tanh((vector - mu) / jnp.sqrt(var + 1e-5) * scale)

    def naively_batched(vectors):
        return _stack([apply_norm(v) for v in vectors])

    @jax.jit
    def manually_batched(vectors):
        mu = jnp.mean(vectors, axis=-1, keepdims=True)
        var = jnp.mean((vectors - mu) ** 2, axis=-1, keepdims=True)
        return jnp.tanh((vectors - mu) / jnp.sqrt(var + 1e-5) * scale)

    @jax.jit
    def vmap_batched(vectors):
        return jax.vmap(apply_norm)(vectors)

    def ref(vs):
        vs = vs.astype(np.float64)
        mu = vs.mean(-1, keepdims=True)
        var = ((vs - mu) ** 2).mean(-1, keepdims=True)
        return np.tanh((vs - mu) / np.sqrt(var + 1e-5) * matrix_np[0])

    code = ["def apply_norm(v): mu = v.mean(); var = ((v - mu)**2).mean(); "
            "return jnp.tanh((v - mu) / jnp.sqrt(var + 1e-5) * scale)",
            "naive:  jnp.stack([apply_norm(v) for v in vectors])",
            "manual: the same with axis=-1, keepdims=True, under jit",
            "vmap:   jax.jit(lambda vectors: jax.vmap(apply_norm)(vectors))"]
    return ("per-example normalisation (elementwise + reductions; jnp.dot is not available yet)", code,
            naively_batched, manually_batched, vmap_batched, ref)


def tour_vmap(out=None, quick=False):
    """Runs the vmap section: results of the loop, hand-batched and vmapped versions compared first, then
    each timed (median, warm, waiting with ``block_until_ready``). Returns a dict of the figures."""

    tour = out if hasattr(out, "say") else None
    if tour is not None:
        quick = quick or bool(getattr(tour, "quick", False))
        say = tour.say
    else:
        out = sys.stdout if out is None else out

        def say(*a):
            print(*a, file=out, flush=True)

    rng = np.random.default_rng(0)
    matrix_np = rng.standard_normal((150, 100)).astype(np.float32)
    batched_np = rng.standard_normal((10, 100)).astype(np.float32)
    title, code, naive, manual, vmapped, ref = _examples(matrix_np)
    batched_x = jax.device_put(batched_np)

    say(f"== vmap: a Python loop vs batching by hand vs jax.vmap — {title}")
    for line in code:
        say("   " + line)
    say(f"   inputs: batched_x {batched_np.shape} float32, matrix {matrix_np.shape} float32")

    results = {name: np.asarray(bu.block(fn(batched_x)))
               for name, fn in (("naive", naive), ("manual", manual), ("vmap", vmapped))}
    want = ref(batched_np)
    diffs = {k: float(np.max(np.abs(v.astype(np.float64) - want))) for k, v in results.items()}
    same = all(v.shape == want.shape for v in results.values())
    say(f"   results first: shapes {', '.join(f'{k} {v.shape}' for k, v in results.items())}; "
        f"max |diff| vs NumPy float64: " + ", ".join(f"{k} {d:.2e}" for k, d in diffs.items()))
    agree = same and all(d < 1e-3 for d in diffs.values())
    say("   " + ("all three agree" if agree else "RESULTS DIFFER — timings below compare different things"))

    budget = 0.1 if quick else 0.4
    times = {}
    for name, fn in (("naive loop", naive), ("by hand (jit)", manual), ("vmap (jit)", vmapped)):
        times[name] = bu.median_time(lambda fn=fn: bu.block(fn(batched_x)), budget=budget)
    t_np = bu.median_time(lambda: ref(batched_np), budget=budget)
    say("   " + "  ".join(f"{k}: {bu.fmt_time(v)}" for k, v in times.items())
        + f"  (NumPy float64: {bu.fmt_time(t_np)})")
    if tour is not None and hasattr(tour, "add"):
        try:
            for (k, v), d in zip(times.items(), diffs.values()):
                tour.add(Row(f"vmap section: {k}", steady=v, numpy=t_np, diff=d))
        except Exception:   # the summary rows are a convenience; the section's own lines were printed
            pass
    say(f"   vmap / by hand = {times['vmap (jit)'] / times['by hand (jit)']:.2f}x; "
        f"loop / vmap = {times['naive loop'] / times['vmap (jit)']:.1f}x "
        f"(seed, JAX on its machine with jnp.dot: 7.68 ms, 68.8 µs, 105 µs)")
    return {"example": title, "agree": agree, "max_abs_diff": diffs, "times": times}
