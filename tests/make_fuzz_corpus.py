"""Writes the seed corpus of the Rust parser/verifier fuzz tests (``rust/ir/fuzz_corpus/*.json``): real programs
in the wire format, lowered by the Python front end from the differential fuzzer's random programs plus a few
hand-picked ones (control flow, library steps, literals of every dtype).

    python tests/make_fuzz_corpus.py [N]      # N random programs (default 40)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import cranax  # noqa: E402
import cranax.numpy as jnp  # noqa: E402
from cranax import lax  # noqa: E402
from cranax.interpreters import lowering  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "rust", "ir", "fuzz_corpus")


def handpicked():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    yield "elementwise", (lambda a: jnp.sum(jnp.sin(a) * a + 1.0, axis=1)), (x,)
    yield "int_ops", (lambda a: (a // 0, a % 3, a << 2, a >> 33, -a, a.astype(jnp.uint32))), (i,)
    yield "literals", (lambda a: (a + np.float32(np.nan), a * np.inf, a > -np.inf, a + True)), (x,)
    yield "shapes", (lambda a: (a.T, a.reshape(3, 2), a[:, ::2], a[::-1], jnp.expand_dims(a, 0))), (x,)
    yield "reductions", (lambda a: (jnp.max(a), jnp.argmin(a, axis=0), jnp.prod(a, axis=1),
                                    jnp.any(a > 2))), (x,)
    yield "dot", (lambda a: a @ a.T), (x,)
    yield "concat_pad", (lambda a: (jnp.concatenate([a, a], axis=0), lax.pad(a, 0.0, ((1, -1, 1), (0, 2, 0))))), (x,)
    yield "cumsum_sort", (lambda a: (jnp.cumsum(a, axis=1), jnp.sort(a, axis=0))), (x,)
    yield "iota_select", (lambda a: jnp.where(lax.broadcasted_iota(jnp.int32, (2, 3), 1) > 0, a, -a)), (x,)
    yield "empty", (lambda a: a.reshape(0, 6) if a.size == 0 else jnp.zeros((0, 3)) + 1.0), (x,)
    yield "scalar", (lambda a: a * 2 + 1), (np.float32(3.0),)
    if hasattr(lax, "cond"):
        yield "cond", (lambda a: lax.cond(a[0, 0] > 0, lambda v: v * 2, lambda v: -v, a)), (x,)
        yield "while", (lambda a: lax.while_loop(lambda v: v[0, 0] < 100, lambda v: v * 2 + 1, a)), (x,)
        yield "fori", (lambda a: lax.fori_loop(0, 3, lambda k, v: v + k, a)), (x,)
        yield "scan", (lambda a: lax.scan(lambda c, r: (c + r, c * r), a[0], a)), (x,)


def main(n=40):
    os.makedirs(OUT, exist_ok=True)
    count = 0
    for name, f, args in handpicked():
        try:
            closed = cranax.make_jaxpr(f)(*args)
            text = lowering.lower_jaxpr(closed, name)
        except Exception as e:  # a feature not there yet: skip it
            print(f"skip {name}: {type(e).__name__}: {e}")
            continue
        with open(os.path.join(OUT, f"hand_{name}.json"), "w") as fh:
            fh.write(text + "\n")
        count += 1
    from hypothesis import HealthCheck, given, settings

    import test_fuzz_programs as tf
    made = []

    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(tf.programs())
    def gen(case):
        prog, args = case
        try:
            closed = cranax.make_jaxpr(prog.fn)(*args)
            made.append(lowering.lower_jaxpr(closed, "fuzz"))
        except Exception:
            pass
    gen()
    for k, text in enumerate(made[:n]):
        with open(os.path.join(OUT, f"gen_{k:03d}.json"), "w") as fh:
            fh.write(text + "\n")
        count += 1
    print(f"wrote {count} programs to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
