"""``python -m cranax.tour`` — the seed documents' examples, run and timed honestly.

The examples come from the three seed documents (JAX's "Just-in-time compilation", the quickstart notes on
benchmarking honestly, and "02. jit과 XLA 컴파일"). Each section prints what the document says should happen
and a row of figures:

    trace      ``cranax.make_jaxpr(f)(*args)``: Python tracing to a jaxpr only (median of 3)
    compile    ``jit(f).lower(*args).compile()``: lowering the jaxpr to the core's IR, verifying, optimizing
               and Cranelift codegen (the core's executable cache is emptied first so this really compiles)
    first      the first call of a fresh ``jit`` of a fresh function object, waited for (trace + compile + run)
    steady     median of warm calls with ``block_until_ready()``
    transfer   host→device: ``cranax.device_put(numpy_input).block_until_ready()`` for the inputs
    numpy      NumPy running the same computation on the same (host) inputs, median
    max|Δ|     largest absolute difference between cranax's result and NumPy's

Sections are plain functions of a ``Tour``, one module per part: ``seeds`` (the seed documents' jit
examples), ``grad``, ``vmap``, ``control_flow`` and ``gpu``; ``runner.SECTIONS`` lists them in order, and
later work appends its own. ``harness`` holds the ``Tour`` and its ``Row`` of figures.
``python -m cranax.tour --list`` names them, ``python -m cranax.tour selu jaxpr`` runs a subset,
``--quick`` shortens the timing loops.
"""
from .harness import Row, Tour
from .runner import SECTIONS, main

__all__ = ["main", "SECTIONS", "Tour", "Row"]
