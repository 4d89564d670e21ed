"""max/min treat -0.0 < +0.0 in either order (XLA's, IEEE 754-2019 maximum/minimum) in every op that takes a
max or min: cumulative scans, reduce_window, scatter-max/min, segment_max, reductions. The sign patterns below
were recorded from JAX 0.10.2 ('-' a negative zero, '+' a positive one)."""
import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import lax

# input (as signs: equal zeros would collide as tuple keys) -> {op: signs recorded from JAX 0.10.2}
RECORDED = {
    "-+": {"cummax": "-+", "cummin": "--", "cummax_rev": "++", "max": "+", "min": "-",
                  "window_max": "+", "scatter_max": "+", "scatter_min": "-", "segment_max": "+"},
    "+-": {"cummax": "++", "cummin": "+-", "cummax_rev": "+-", "max": "+", "min": "-",
                  "window_max": "+", "scatter_max": "+", "scatter_min": "-", "segment_max": "+"},
    "--+-+": {"cummax": "--+++", "cummin": "-----", "cummax_rev": "+++++", "max": "+",
                                   "min": "-", "window_max": "-+++", "scatter_max": "+", "scatter_min": "-",
                                   "segment_max": "+"},
}

OPS = {
    "cummax": lambda x: lax.cummax(x),
    "cummin": lambda x: lax.cummin(x),
    "cummax_rev": lambda x: lax.cummax(x, reverse=True),
    "max": lambda x: jnp.max(x),
    "min": lambda x: jnp.min(x),
    "window_max": lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2,), (1,), "VALID"),
    "scatter_max": lambda x: jnp.zeros(1, x.dtype).at[jnp.zeros(x.shape[0], jnp.int32)].max(x),
    "scatter_min": lambda x: jnp.zeros(1, x.dtype).at[jnp.zeros(x.shape[0], jnp.int32)].min(x),
    "segment_max": lambda x: cranax.ops.segment_max(x, jnp.zeros(x.shape[0], jnp.int32), 1),
}


def _signs(v):
    return "".join("-" if s else "+" for s in np.signbit(np.ravel(np.asarray(v))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("data", sorted(RECORDED))
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("jit", [False, True])
def test_zero_signs_match_jax(op, data, dtype, jit):
    x = jnp.asarray(np.array([-0.0 if c == "-" else 0.0 for c in data], dtype))
    f = cranax.jit(OPS[op]) if jit else OPS[op]
    out = np.asarray(f(x))
    assert np.all(out == 0)
    assert _signs(out) == RECORDED[data][op]


# Subnormal operands read as ±0 (XLA's DAZ): (x, y) -> (min, max) as JAX 0.10.2 printed them (float32).
SUBNORMAL_PAIRS = [
    ((1e-40, 1e-40), ("0.0", "0.0")), ((0.0, 1e-40), ("0.0", "0.0")), ((1e-40, 0.0), ("0.0", "0.0")),
    ((-1e-40, 1e-40), ("-0.0", "0.0")), ((1e-40, -1e-40), ("-0.0", "0.0")), ((2e-40, 1e-40), ("0.0", "0.0")),
    ((1e-40, 2e-40), ("0.0", "0.0")), ((-0.0, 1e-40), ("-0.0", "0.0")), ((1e-40, -0.0), ("-0.0", "0.0")),
    ((1.0, 1e-40), ("0.0", "1.0")),
]


@pytest.mark.parametrize("n", [len(SUBNORMAL_PAIRS), 4096])
def test_subnormal_operands_read_as_zero(n):
    reps = -(-n // len(SUBNORMAL_PAIRS))
    x = jnp.asarray(np.array([p[0][0] for p in SUBNORMAL_PAIRS] * reps, np.float32))
    y = jnp.asarray(np.array([p[0][1] for p in SUBNORMAL_PAIRS] * reps, np.float32))
    lo = np.asarray(cranax.jit(jnp.minimum)(x, y))
    hi = np.asarray(cranax.jit(jnp.maximum)(x, y))
    assert [repr(float(v)) for v in lo] == [p[1][0] for p in SUBNORMAL_PAIRS] * reps
    assert [repr(float(v)) for v in hi] == [p[1][1] for p in SUBNORMAL_PAIRS] * reps


def test_subnormal_through_scans_reductions_and_scatters():
    sub = jnp.asarray(np.array([1e-40, 2e-40, -1e-40], np.float32))
    # JAX 0.10.2: cummax [0.0, 0.0, 0.0]; max/min of [1e-40, 2e-40] 0.0; relu of ±1e-40 is 0.0;
    # [1e-40, 0].at[0].min(0.0) is [0.0, 0.0]
    assert [repr(float(v)) for v in lax.cummax(sub)] == ["0.0", "0.0", "0.0"]
    assert repr(float(jnp.max(sub[:2]))) == "0.0" and repr(float(jnp.min(sub[:2]))) == "0.0"
    assert [repr(float(v)) for v in cranax.nn.relu(jnp.asarray(np.array([1e-40, -1e-40], np.float32)))] == ["0.0", "0.0"]
    got = cranax.jit(lambda a: a.at[0].min(0.0))(jnp.asarray(np.array([1e-40, 0.0], np.float32)))
    assert [repr(float(v)) for v in got] == ["0.0", "0.0"]
    big = jnp.full((10, 100), 1e-40, jnp.float32)
    assert np.all(np.asarray(jnp.max(big, axis=1)) == 0) and not np.any(np.signbit(np.asarray(jnp.max(big, axis=1))))
