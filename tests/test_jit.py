"""``cranax.jit``: the signature cache (retrace counting with side effects), static arguments, pytrees,
closures, AOT lowering, the lambda-in-a-loop seed compiling once, and thread safety.

Trace counts marked "recorded" were produced by JAX 0.10.2 on the same programs (conformance corpus).
"""
import functools
import threading
from collections import namedtuple

import numpy as np
import pytest

import cranax
import cranax.lax as lax
import cranax.numpy as jnp
from cranax.config import config


def check(actual, expected, dtype, weak=None):
    expected = np.asarray(expected)
    assert isinstance(actual, cranax.Array), type(actual)
    assert actual.dtype == np.dtype(dtype), (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if weak is not None:
        assert actual.weak_type is weak
    np.testing.assert_allclose(np.asarray(actual), expected.astype(dtype), rtol=1e-6)


# ----------------------------------------------------------------------------------------------- retracing

def test_retrace_counting():
    traces = []

    @cranax.jit
    def f(x):
        traces.append(x.shape)
        return x * 2.0 + 1.0

    check(f(jnp.arange(3.0)), [1.0, 3.0, 5.0], np.float32)
    assert len(traces) == 1 and f._cache_size() == 1
    # same shape, new values: no retrace
    check(f(jnp.array([5.0, 6.0, 7.0])), [11.0, 13.0, 15.0], np.float32)
    check(f(np.array([1.0, 1.0, 1.0], np.float32)), [3.0, 3.0, 3.0], np.float32)
    assert len(traces) == 1 and f._cache_size() == 1
    # new shape: retrace
    check(f(jnp.ones((2, 2))), np.full((2, 2), 3.0), np.float32)
    assert len(traces) == 2 and f._cache_size() == 2
    # new dtype: retrace
    check(f(jnp.arange(3)), [1.0, 3.0, 5.0], np.float32)
    assert len(traces) == 3 and f._cache_size() == 3
    # the old signatures are still cached
    f(jnp.zeros(3))
    f(jnp.zeros((2, 2)))
    f(jnp.zeros(3, jnp.int32))
    assert len(traces) == 3 and f._cache_size() == 3


def test_retrace_weak_vs_strong_recorded():
    # recorded: jit_trace_count_weak_type_scalars -> 2 traces, values 0.5 1.0 1.5 1.5 2.5
    traces = []

    @cranax.jit
    def f(x):
        traces.append(1)
        return x + jnp.float32(0.5)

    y = f(0.0)  # weak float32 scalar -> trace 1
    z = f(y)  # strong float32 scalar -> trace 2
    w = f(z)  # cached
    v = f(1.0)  # weak again -> cached
    u = f(jnp.asarray(2.0))  # jnp.asarray of a Python float is weak -> cached
    assert len(traces) == 2
    for got, want in zip((y, z, w, v, u), (0.5, 1.0, 1.5, 1.5, 2.5)):
        check(got, want, np.float32)
    assert f._cache_size() == 2


def test_retrace_python_scalar_types():
    traces = []

    @cranax.jit
    def f(x):
        traces.append(1)
        return x * 2

    check(f(3), 6, np.int32, weak=True)
    check(f(4), 8, np.int32, weak=True)
    assert len(traces) == 1
    check(f(3.5), 7.0, np.float32, weak=True)
    assert len(traces) == 2
    check(f(True), 2, np.int32, weak=True)  # bool * 2 -> weak int
    assert len(traces) == 3
    check(f(np.int32(5)), 10, np.int32, weak=False)
    assert len(traces) == 4


def test_retrace_on_new_static_value():
    traces = []

    @functools.partial(cranax.jit, static_argnums=(1,))
    def f(x, n):
        traces.append(n)
        return x * n

    check(f(jnp.ones(2), 3), [3.0, 3.0], np.float32)
    check(f(jnp.ones(2), 3), [3.0, 3.0], np.float32)
    assert traces == [3]
    check(f(jnp.ones(2), 4), [4.0, 4.0], np.float32)
    assert traces == [3, 4]
    check(f(jnp.ones(2), 3.0), [3.0, 3.0], np.float32)  # 3.0 == 3 but a different type: JAX retraces
    assert traces == [3, 4, 3.0]
    assert f._cache_size() == 3


def test_static_argnames_kw_vs_positional_recorded():
    # recorded: jit_trace_count_static_argnames_kw_vs_positional -> 4 traces [3, 3, 2, 2]
    traces = []

    def power(x, p=2):
        traces.append(p)
        return x ** p

    f = cranax.jit(power, static_argnames="p")
    x = jnp.arange(3.0)
    outs = [f(x, p=3), f(x, 3), f(x), f(x, p=2), f(x, p=3), f(x, 3)]
    assert len(traces) == 4 and traces == [3, 3, 2, 2]
    for o, want in zip(outs, [[0, 1, 8], [0, 1, 8], [0, 1, 4], [0, 1, 4], [0, 1, 8], [0, 1, 8]]):
        check(o, want, np.float32)


def test_lambda_partial_in_loop_trace_counts_recorded():
    # recorded: jit_trace_count_lambda_partial_in_loop -> named 1, lambda 3, partial 3; i == 3
    traces = []

    def body(i):
        traces.append(1)
        return i + 1

    def run(make_fn):
        del traces[:]
        i = 0
        for _ in range(3):
            i = make_fn()(i)
        return len(traces), i

    for make, n in [(lambda: cranax.jit(body), 1), (lambda: cranax.jit(lambda v: body(v)), 3),
                    (lambda: cranax.jit(functools.partial(body)), 3)]:
        count, i = run(make)
        assert count == n
        check(i, 3, np.int32)


def test_lambda_in_loop_compiles_once():
    """The seed's ``jax.jit(lambda x: ...)`` in a loop retraces every time but compiles once (the core's
    executable cache is keyed by the optimized program)."""
    x = jnp.arange(7.0)
    before = cranax._core.compile_count()
    for k in range(20):
        y = cranax.jit(lambda v: v * 0.731 + 0.269)(x)
    after = cranax._core.compile_count()
    assert after - before == 1
    check(y, np.arange(7.0) * np.float32(0.731) + np.float32(0.269), np.float32)


def test_seed_g_inner_jitted_variants():
    def unjitted_loop_body(prev_i):
        return prev_i + 1

    def g_inner_jitted_partial(x, n):
        i = 0
        while i < n:
            i = cranax.jit(functools.partial(unjitted_loop_body))(i)
        return x + i

    def g_inner_jitted_lambda(x, n):
        i = 0
        while i < n:
            i = cranax.jit(lambda x: unjitted_loop_body(x))(i)
        return x + i

    def g_inner_jitted_normal(x, n):
        i = 0
        while i < n:
            i = cranax.jit(unjitted_loop_body)(i)
        return x + i

    before = cranax._core.compile_count()
    for g in (g_inner_jitted_partial, g_inner_jitted_lambda, g_inner_jitted_normal):
        r = g(10, 20)
        check(r, 30, np.int32, weak=True)
    # the three variants trace the same program: at most one compilation for the loop body (+ one for the
    # final eager add, which may already be cached)
    assert cranax._core.compile_count() - before <= 2


# ----------------------------------------------------------------------------------------------- static args

def test_static_argnums_and_argnames_seed():
    def f(x):
        if x > 0:
            return x
        else:
            return 2 * x

    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    f_jit_correct = cranax.jit(f, static_argnums=0)
    assert f_jit_correct(10) == 10
    g_jit_correct = cranax.jit(g, static_argnames=["n"])
    assert int(g_jit_correct(10, 20)) == 30

    @cranax.jit(static_argnames=["n"])
    def g_jit_decorated(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    assert int(g_jit_decorated(10, 20)) == 30
    check(g_jit_decorated(10, 20), 30, np.int32)


def test_static_args_recorded():
    # recorded: jit_static_args_enable_python_control -> 30.0, 13.0, -1.5, 1.5 (float32)
    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    def maybe_negate(x, neg):
        return -x if neg else x

    g_jit = cranax.jit(g, static_argnames="n")
    neg_jit = cranax.jit(maybe_negate, static_argnums=1)
    check(g_jit(10.0, 20), 30.0, np.float32)
    check(g_jit(10.0, n=3), 13.0, np.float32)
    check(neg_jit(1.5, True), -1.5, np.float32)
    check(neg_jit(1.5, False), 1.5, np.float32)


def test_partial_jit_static_argnames():
    traces = []

    @functools.partial(cranax.jit, static_argnames=["axis"])
    def s(x, axis):
        traces.append(axis)
        return jnp.sum(x, axis=axis)

    x = jnp.arange(6.0).reshape(2, 3)
    check(s(x, axis=0), [3.0, 5.0, 7.0], np.float32)
    check(s(x, axis=1), [3.0, 12.0], np.float32)
    check(s(x, axis=0), [3.0, 5.0, 7.0], np.float32)
    assert traces == [0, 1]
    check(s(x, axis=(0, 1)), 15.0, np.float32)  # tuples are hashable static values
    assert len(traces) == 3


@pytest.mark.parametrize("bad", [[1, 2], {"a": 1}, np.ones(2), "array"])
def test_unhashable_static_arg_raises(bad):
    f = cranax.jit(lambda x, v: x, static_argnums=(1,))
    if isinstance(bad, str):
        bad = jnp.array([1, 2, 3])
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        f(jnp.ones(2), bad)


def test_unhashable_static_argname_raises():
    f = cranax.jit(lambda x, v: x, static_argnames=("v",))
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        f(jnp.ones(2), v=[1, 2])


# ----------------------------------------------------------------------------------------------- closures

def test_closures_frozen_at_trace_time():
    state = {"scale": 2.0, "offset": jnp.array(1.0)}

    @cranax.jit
    def f(x):
        return x * state["scale"] + state["offset"]

    check(f(jnp.ones(2)), [3.0, 3.0], np.float32)
    state["scale"] = 100.0
    state["offset"] = jnp.array(50.0)
    check(f(jnp.ones(2)), [3.0, 3.0], np.float32)  # cached trace: the values read when it was traced
    check(f(jnp.ones(3)), [150.0, 150.0, 150.0], np.float32)  # a retrace reads the new values


def test_side_effects_only_while_tracing():
    log = []

    @cranax.jit
    def f(x):
        log.append("traced")
        print_like = x + 1
        return print_like

    for _ in range(5):
        f(jnp.ones(3))
    assert log == ["traced"]


# ----------------------------------------------------------------------------------------------- pytrees

Point = namedtuple("Point", ["x", "y"])


def test_pytree_inputs_and_outputs():
    @cranax.jit
    def f(d, t, p, none):
        assert none is None
        return {"sum": d["a"] + t[0], "pair": (p.x * 2, p.y - 1), "nothing": None, "list": [t[1]]}

    out = f({"a": jnp.ones(2)}, (jnp.arange(2.0), jnp.array(3)), Point(jnp.array(1.5), 2), None)
    assert set(out) == {"sum", "pair", "nothing", "list"}
    check(out["sum"], [1.0, 2.0], np.float32)
    assert isinstance(out["pair"], tuple)
    check(out["pair"][0], 3.0, np.float32)
    check(out["pair"][1], 1, np.int32)
    assert out["nothing"] is None
    assert isinstance(out["list"], list)
    check(out["list"][0], 3, np.int32)


def test_namedtuple_output_type_and_selu_recorded():
    @cranax.jit
    def f(x):
        return Point(x, -x)

    p = f(jnp.ones(2))
    assert type(p) is Point
    check(p.y, [-1.0, -1.0], np.float32)

    # recorded: jit_selu_and_pytree_io
    @cranax.jit
    def combine(d):
        return {"total": d["a"] + d["b"][0], "scaled": (d["a"] * d["b"][1],)}

    tree = combine({"a": jnp.ones(2), "b": (jnp.arange(2.0), 3.0)})
    check(tree["total"], [1.0, 2.0], np.float32)
    assert isinstance(tree["scaled"], tuple)
    check(tree["scaled"][0], [3.0, 3.0], np.float32)


def test_pytree_structure_change_retraces():
    traces = []

    @cranax.jit
    def f(t):
        traces.append(1)
        return sum(t)

    f((jnp.ones(2), jnp.ones(2)))
    f((jnp.zeros(2), jnp.zeros(2)))
    assert len(traces) == 1
    f([jnp.ones(2), jnp.ones(2)])
    assert len(traces) == 2
    f((jnp.ones(2), jnp.ones(2), jnp.ones(2)))
    assert len(traces) == 3


def test_kwargs_and_outputs_of_python_scalars():
    @cranax.jit
    def f(x, *, scale):
        return x * scale, 7

    a, b = f(jnp.ones(2), scale=jnp.array(3.0))
    check(a, [3.0, 3.0], np.float32)
    check(b, 7, np.int32)


def test_jit_of_constant_function_and_zero_size():
    f = cranax.jit(lambda: jnp.arange(4) * 2)
    check(f(), [0, 2, 4, 6], np.int32)
    g = cranax.jit(lambda x: x + 1)
    check(g(jnp.zeros((0, 3))), np.zeros((0, 3)), np.float32)


# ----------------------------------------------------------------------------------------------- AOT

def test_lower_and_compile_text():
    def f(x, y):
        return jnp.sum(x * y + jnp.sin(x))

    jf = cranax.jit(f)
    x = jnp.ones(3)
    lowered = jf.lower(x, x)
    t = lowered.as_text()
    assert t and all(p in t for p in ("mul", "sin", "add", "reduce_sum"))
    compiled = lowered.compile()
    ct = compiled.as_text()
    assert ct and ("sin" in ct.lower()) and ("add" in ct.lower())
    out = compiled(jnp.arange(3.0), jnp.ones(3))
    np.testing.assert_allclose(float(out), 4.750768661499023, rtol=1e-6)


def test_clear_caches():
    traces = []

    @cranax.jit
    def f(x):
        traces.append(1)
        return x + 1

    f(jnp.ones(2))
    assert f._cache_size() == 1
    cranax.clear_caches()
    assert f._cache_size() == 0
    check(f(jnp.ones(2)), [2.0, 2.0], np.float32)
    assert len(traces) == 2


def test_explain_cache_misses_logs(caplog):
    config.update("jax_explain_cache_misses", True)

    @cranax.jit
    def explained(x):
        return x + 1

    with caplog.at_level("WARNING", logger="cranax"):
        explained(jnp.ones(2))
        explained(jnp.ones(3))
    text = caplog.text
    # JAX 0.10.2's text: the call site, the function and its definition, then the argument's types
    assert "  never seen function:\n    explained id=" in text
    assert "  for explained defined at " in text
    assert ("  all previously seen cache keys differ. For the closest previous key:\n  different input types:\n"
            "  * at x, now f32[3] and before f32[2]") in text


def test_jit_inside_jit():
    inner = cranax.jit(lambda x: x * 3.0)

    @cranax.jit
    def outer(x):
        return inner(x) + inner(x + 1.0)

    check(outer(jnp.arange(3.0)), [3.0, 9.0, 15.0], np.float32)


def test_x64_signature():
    traces = []

    @cranax.jit
    def f(x):
        traces.append(1)
        return x * 2

    check(f(1.5), 3.0, np.float32)
    config.update("jax_enable_x64", True)
    check(f(1.5), 3.0, np.float64)
    check(f(np.arange(2)), [0, 2], np.int64)
    assert len(traces) == 3


# ----------------------------------------------------------------------------------------------- threads

def test_threads_share_one_cache():
    traces = []
    lock = threading.Lock()

    @cranax.jit
    def f(x):
        with lock:
            traces.append(x.shape)
        return jnp.sin(x) * 2.0 + x

    shapes = [(3,), (4, 5), (7,)]
    inputs = {s: jnp.arange(float(np.prod(s))).reshape(s) for s in shapes}
    expected = {s: (np.sin(np.arange(float(np.prod(s)))).astype(np.float32) * 2 +
                    np.arange(float(np.prod(s)), dtype=np.float32)).reshape(s) for s in shapes}
    errors = []
    barrier = threading.Barrier(8)

    def worker(tid):
        try:
            barrier.wait()
            for k in range(200):
                s = shapes[(tid + k) % 3]
                out = f(inputs[s])
                np.testing.assert_allclose(np.asarray(out), expected[s], rtol=1e-6, atol=1e-6)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    before = cranax._core.compile_count()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(traces) == 3 and sorted(traces) == sorted(shapes)
    assert f._cache_size() == 3
    assert cranax._core.compile_count() - before <= 3


def test_steady_calls_reuse_the_first_calls_entry():
    # The first call (general path) and later positional calls (the fast path in __call__) share one
    # signature entry: Python scalars of new values and a fresh Array of the same aval compile nothing new.
    f = cranax.jit(lambda x, k: x * k + 1.0)
    x = jnp.arange(3.0)
    np.testing.assert_allclose(np.asarray(f(x, 2.0)), np.arange(3.0) * 2 + 1)
    for k in (0.5, -3.0, 7.25):
        out = f(jnp.asarray(np.arange(3.0, dtype=np.float32)), k)
        np.testing.assert_allclose(np.asarray(out), np.arange(3.0) * k + 1, rtol=1e-6)
        assert cranax.block_until_ready(out) is out
    assert f._cache_size() == 1
    f(x, 2)   # a Python int is another weak-typed signature (as JAX: int32 vs float32)
    assert f._cache_size() == 2
