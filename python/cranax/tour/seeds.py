"""The tour's sections from the seed documents (JAX's "Just-in-time compilation", the quickstart notes on
benchmarking honestly, and "02. jit과 XLA 컴파일"): selu, first call vs replay, a jaxpr, retracing, static
arguments, the tracer errors, ``jnp.where``, closures and ``jit`` inside a loop."""
import functools

import numpy as np

import cranax
import cranax.numpy as jnp
from ..bench import _timing as bu
from .harness import Row, _clear_exe_cache, _compile_count

__all__ = ["section_selu", "section_first_call", "section_jaxpr", "section_retracing", "section_static",
           "section_errors", "section_where", "section_closure", "section_jit_in_loop"]


def selu(x, alpha=1.67, lmbda=1.05):
    return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def selu_np(x, alpha=1.67, lmbda=1.05):
    return lmbda * np.where(x > 0, x, alpha * np.exp(x) - alpha)


def section_selu(tour):
    """jit of selu on 1e6 elements vs eager op-by-op vs NumPy (seed: Just-in-time compilation, quickstart)."""
    tour.title("selu on 1,000,000 float32: jit vs eager (op-by-op) vs NumPy")
    xh = tour.normal((1_000_000,))
    (x,), t_put = tour.put(xh)
    row_jit, out = tour.measure_jit("selu 1M jit", selu, (x,), (xh,), selu_np, transfer=t_put)

    # eager: every jnp op runs as its own one-equation program
    cranax.clear_caches()
    t_first, out_e = bu.timeit_once(lambda: selu(x))
    t_eager = tour.median(lambda: selu(x).block_until_ready())
    d_e = bu.max_abs_diff(out_e, selu_np(xh))
    row_e = tour.add(Row("selu 1M eager (op-by-op)", first=t_first, steady=t_eager, transfer=t_put,
                         numpy=row_jit.numpy, diff=d_e, note="first call compiles each primitive once"))
    tour.say(f"speed-up of jit (steady state) over eager: {bu.fmt_ratio(row_e.steady, row_jit.steady)}, "
             f"over NumPy: {bu.fmt_ratio(row_jit.numpy, row_jit.steady)} (above 1x: jit is faster). "
             f"JAX 0.10.2 on the reference 2-core Zen 4: jit 345.5 µs, eager 2598.5 µs, NumPy 4822.7 µs")


def f200(x):
    y = x
    for _ in range(200):
        y = jnp.sin(y) + y * 0.5
    return y


def f200_np(x):
    y = x
    for _ in range(200):
        y = np.sin(y) + y * np.float32(0.5)
    return y


def section_first_call(tour):
    """The 200-step ``sin(y) + y * 0.5`` function: first call vs cached replay (seed: 02. jit과 XLA 컴파일)."""
    tour.title("first call vs cached replay: 200 × (sin(y) + y * 0.5) on a scalar")
    xh = np.array(1.0, dtype=np.float32)
    (x,), t_put = tour.put(xh)
    row, out = tour.measure_jit("f200 (200-step sin)", f200, (x,), (xh,), f200_np, transfer=t_put)
    n_eqns = len(cranax.make_jaxpr(f200)(x).jaxpr.eqns)
    tour.say(f"jaxpr has {n_eqns} equations; result {float(out):.6f} (NumPy float32: {float(f200_np(xh)):.6f})")
    tour.say(f"first call / replay = {bu.fmt_ratio(row.first, row.steady)} "
             f"(the seed saw ~7000x; JAX 0.10.2 here: first 108.2 ms, replay 7.3 µs, trace 477.8 µs)")


def _sum_fn(x, y):
    return jnp.sum(x * y + jnp.sin(x))


_SUM_JAXPR_JAX = """{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3] = mul a b
    d:f32[3] = sin a
    e:f32[3] = add c d
    f:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }"""


def section_jaxpr(tour):
    """``jnp.sum(x * y + jnp.sin(x))`` and its jaxpr (seed: 02. jit과 XLA 컴파일)."""
    tour.title("make_jaxpr(lambda x, y: jnp.sum(x * y + jnp.sin(x)))(ones(3), ones(3) * 2)")
    xh = np.ones(3, np.float32)
    yh = np.ones(3, np.float32) * 2
    (x, y), t_put = tour.put(xh, yh)
    text = str(cranax.make_jaxpr(_sum_fn)(x, y))
    tour.say(text)
    tour.say(f"same text as JAX 0.10.2: {'yes' if text.strip() == _SUM_JAXPR_JAX else 'NO'}")
    row, out = tour.measure_jit("sum(x*y + sin(x)) f32[3]", _sum_fn, (x, y), (xh, yh),
                                lambda a, b: np.sum(a * b + np.sin(a)), transfer=t_put)
    tour.say(f"result {float(out):.6f}")
    low = cranax.jit(_sum_fn).lower(x, y)
    try:
        lines = []
        for line in str(low.compile().as_text()).strip().splitlines():
            if line.startswith(";") and "cranelift" in line.lower():
                break  # the machine-level IR follows; too long for the tour
            lines.append(line)
        tour.say("optimized program and fused kernels (jit(f).lower(x, y).compile().as_text(), "
                 "Cranelift IR omitted):")
        tour.say("  " + "\n  ".join(lines[:40]).rstrip())
    except Exception as e:  # as_text is informative only
        tour.say(f"(optimized program text unavailable: {type(e).__name__}: {e})")


def section_retracing(tour):
    """A side-effect print shows when tracing happens: new shapes retrace, new values don't."""
    tour.title("retracing: shape changes retrace, values don't (side-effect print runs only while tracing)")
    events = []

    def f(x):
        print("  tracing with", x)
        events.append(x.shape)
        return x * 2

    f_jit = cranax.jit(f)
    c0 = _compile_count()
    tour.say(">>> f_jit(jnp.array([1.0, 2.0, 3.0]))"); r1 = f_jit(jnp.array([1.0, 2.0, 3.0]))
    tour.say(f"  -> {r1}")
    tour.say(">>> f_jit(jnp.array([4.0, 5.0, 6.0]))   # same shape/dtype: replay, no print")
    r2 = f_jit(jnp.array([4.0, 5.0, 6.0]))
    tour.say(f"  -> {r2}")
    tour.say(">>> f_jit(jnp.array([1.0, 2.0]))        # new shape: traces again")
    r3 = f_jit(jnp.array([1.0, 2.0]))
    tour.say(f"  -> {r3}")
    tour.say(">>> f_jit(jnp.array([1, 2, 3]))         # new dtype (int32): traces again")
    r4 = f_jit(jnp.array([1, 2, 3]))
    tour.say(f"  -> {r4}")
    c1 = _compile_count()
    tour.say(f"traced {len(events)} times for 4 calls (expected 3); f_jit._cache_size() = {f_jit._cache_size()}"
             + (f"; core compiles: {c1 - c0}" if c0 is not None else ""))
    ok = len(events) == 3 and np.allclose(np.asarray(r2), [8.0, 10.0, 12.0])
    tour.say("as the seed says" if ok else "UNEXPECTED: the seed says 3 traces")
    xh = np.array([4.0, 5.0, 6.0], np.float32)
    (x,), t_put = tour.put(xh)

    def f_quiet(x):
        return x * 2
    tour.measure_jit("x * 2 f32[3]", f_quiet, (x,), (xh,), lambda a: a * 2, transfer=t_put)


def _power_iter(x, n):
    for _ in range(n):
        x = x * x
    return x


def _power_iter_np(x, n):
    for _ in range(n):
        x = x * x
    return x


def _seed_f_g():
    """The seed's ``f`` (``if x > 0``) and ``g`` (``while i < n``), defined with the seed's names so error
    messages name them as the seed shows."""
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
    return f, g


def section_static(tour):
    """static_argnums / static_argnames (seeds: Just-in-time compilation; 02. jit과 XLA 컴파일)."""
    tour.title("static arguments: power_iter (static_argnames=['n']), f_jit_correct, g_jit_correct")
    f, g = _seed_f_g()
    power_iter = functools.partial(cranax.jit, static_argnames=["n"])(_power_iter)
    a = power_iter(jnp.array(2.0), 3)
    b = power_iter(jnp.array(2.0), 4)
    c = power_iter(jnp.array(3.0), 3)
    tour.say(">>> print(power_iter(jnp.array(2.0), 3), power_iter(jnp.array(2.0), 4), "
             "power_iter(jnp.array(3.0), 3))")
    tour.say(a, b, c)
    tour.say(f"power_iter._cache_size() = {power_iter._cache_size()} (n=3 and n=4; x=3.0 with n=3 replays)")
    f_jit_correct = cranax.jit(f, static_argnums=0)
    tour.say(">>> print(jax.jit(f, static_argnums=0)(10))")
    tour.say(f_jit_correct(10))
    g_jit_correct = cranax.jit(g, static_argnames=["n"])
    tour.say(">>> print(jax.jit(g, static_argnames=['n'])(10, 20))")
    tour.say(g_jit_correct(10, 20))

    @cranax.jit(static_argnames=["n"])
    def g_jit_decorated(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    tour.say(">>> print(g_jit_decorated(10, 20))   # @jax.jit(static_argnames=['n'])")
    tour.say(g_jit_decorated(10, 20))
    tour.say(">>> jax.jit(g, static_argnums=0)(jnp.ones(2), 20)   # an array as a static argument")
    try:
        cranax.jit(g, static_argnums=0)(jnp.ones(2), 20)
        tour.say("UNEXPECTED: no error")
    except ValueError as e:
        tour.say(f"ValueError: {str(e).splitlines()[0]}")
    xh = np.array(2.0, np.float32)
    (x,), t_put = tour.put(xh)
    tour.measure_jit("power_iter(2.0, n=3)", _power_iter, (x,), (xh,), _power_iter_np, static={"n": 3},
                     transfer=t_put)


def section_errors(tour):
    """The errors tracers raise for Python control flow on traced values (seeds)."""
    tour.title("TracerBoolConversionError: `if x > 0` and `while i < n` under jit")
    f, g = _seed_f_g()
    for label, fn, args in (("jax.jit(f)(10)", f, (10,)), ("jax.jit(g)(10, 20)", g, (10, 20))):
        tour.say(f">>> {label}")
        try:
            r = cranax.jit(fn)(*args)
            tour.say(f"UNEXPECTED: returned {r}")
        except cranax.errors.TracerBoolConversionError as e:
            tour.say(f"{type(e).__name__}: {e}")
    tour.say(">>> relu_broken(jnp.array(3.0))")

    @cranax.jit
    def relu_broken(x):
        if x > 0:
            return x
        else:
            return 0.0 * x
    try:
        relu_broken(jnp.array(3.0))
        tour.say("UNEXPECTED: no error")
    except cranax.errors.TracerBoolConversionError as e:
        tour.say(f"{type(e).__name__}: {str(e).splitlines()[0]} ...")

    tour.say(">>> g_inner_jitted(10, 20)   # jit only the loop body")

    @cranax.jit
    def loop_body(prev_i):
        return prev_i + 1

    def g_inner_jitted(x, n):
        i = 0
        while i < n:
            i = loop_body(i)
        return x + i
    tour.say(repr(g_inner_jitted(10, 20)))


def relu_where(x):
    return jnp.where(x > 0, x, 0.0 * x)


def section_where(tour):
    """relu with jnp.where instead of a Python if (seed: 02. jit과 XLA 컴파일)."""
    tour.title("relu with jnp.where: both branches computed, select_n picks")
    rj = cranax.jit(relu_where)
    tour.say(">>> print(relu_where(jnp.array(3.0)), relu_where(jnp.array(-2.0)))")
    tour.say(rj(jnp.array(3.0)), rj(jnp.array(-2.0)))
    tour.say(str(cranax.make_jaxpr(relu_where)(jnp.array(3.0))))
    xh = tour.normal((1_000_000,))
    (x,), t_put = tour.put(xh)
    tour.measure_jit("relu_where 1M", relu_where, (x,), (xh,),
                     lambda a: np.where(a > 0, a, np.float32(0.0) * a), transfer=t_put)


def section_closure(tour):
    """Closed-over Python values are frozen at trace time (seed: 02. jit과 XLA 컴파일)."""
    tour.title("closures: a captured Python value is frozen when the function is traced")
    hyper = {"scale": 2.0}

    def scaled(x):
        return x * hyper["scale"]
    sj = cranax.jit(scaled)
    x3 = jnp.ones(3)
    tour.say(f">>> scale = 2.0; scaled_jit(ones(3)) -> {sj(x3)}")
    hyper["scale"] = 3.0
    r_same = sj(x3)
    tour.say(f">>> scale = 3.0; scaled_jit(ones(3)) -> {r_same}   # cached trace: still 2.0")
    r_new = sj(jnp.ones(2))
    tour.say(f">>> scaled_jit(ones(2)) -> {r_new}   # new shape retraces and reads 3.0")
    ok = np.allclose(np.asarray(r_same), 2.0) and np.allclose(np.asarray(r_new), 3.0)
    tour.say("as the seed says" if ok else "UNEXPECTED")

    def scaled_arg(x, scale):
        return x * scale
    sa = cranax.jit(scaled_arg)
    tour.say(f"fix: pass it as an argument: {sa(x3, 2.0)} then {sa(x3, 3.0)} "
             f"(one trace: _cache_size() = {sa._cache_size()})")
    xh = tour.normal((1000,))
    (x,), t_put = tour.put(xh)
    s = np.float32(3.0)
    tour.measure_jit("x * scale (arg) f32[1000]", scaled_arg, (x, 3.0), (xh, s), lambda a, b: a * b,
                     transfer=t_put)


_loop_traces = []


def unjitted_loop_body(prev_i):
    _loop_traces.append(1)  # runs only while tracing
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


def section_jit_in_loop(tour):
    """``jax.jit(lambda ...)`` in a loop vs ``jax.jit(unjitted_loop_body)`` (seed: Just-in-time compilation)."""
    tour.title("jit inside a loop: jax.jit(lambda/partial) retraces every time; the core still compiles once")
    tour.say("JAX 0.10.2 here: g_inner_jitted_lambda(10, 20) 537.6 ms (recompiles each time), "
             "g_inner_jitted 419.1 µs")
    for name, fn in (("g_inner_jitted_normal", g_inner_jitted_normal),
                     ("g_inner_jitted_partial", g_inner_jitted_partial),
                     ("g_inner_jitted_lambda", g_inner_jitted_lambda)):
        _clear_exe_cache()
        cranax.clear_caches()
        del _loop_traces[:]
        c0 = _compile_count()
        t_first, r = bu.timeit_once(lambda: fn(10, 20))
        c1 = _compile_count()
        traces = len(_loop_traces)
        t_steady = tour.median(lambda: bu.block(fn(10, 20)), n=3 if tour.quick else 7, inner=1)
        comp = f"{c1 - c0}" if c0 is not None else "?"
        note = f"= {int(r)}; first call: {traces} traces, {comp} compiles"
        tour.add(Row(f"{name}(10, 20)", first=t_first, steady=t_steady, numpy=None, note=note))
        if int(r) != 30:
            tour.say("UNEXPECTED result")
