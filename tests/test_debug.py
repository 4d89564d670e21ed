"""jax.debug: print, callback, breakpoint, inspect/visualize_array_sharding. Every printed text below was
recorded from JAX 0.10.2 running the same code."""
import io

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp


def _out(capsys):
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


def _f(x):
    jax.debug.print("x = {}", x)
    jax.debug.print("x = {x} y={y:.2f}", x=x, y=x.sum())
    return x * 2


def test_print_eager_and_jit(capsys):
    _f(jnp.arange(3.0))
    assert _out(capsys) == ["x = [0. 1. 2.]", "x = [0. 1. 2.] y=3.00"]
    np.testing.assert_array_equal(np.asarray(jax.jit(_f)(jnp.arange(3.0))), [0.0, 2.0, 4.0])
    assert _out(capsys) == ["x = [0. 1. 2.]", "x = [0. 1. 2.] y=3.00"]


def test_print_vmap_one_line_per_element(capsys):
    jax.vmap(_f)(jnp.arange(3.0))
    assert _out(capsys) == ["x = 0.0", "x = 1.0", "x = 2.0", "x = 0.0 y=0.00", "x = 1.0 y=1.00", "x = 2.0 y=2.00"]
    jax.vmap(lambda x, y: (jax.debug.print("x={x} y={y}", x=x, y=y), x + y)[1], in_axes=(0, None))(
        jnp.arange(2.0), 5.0)
    assert _out(capsys) == ["x=0.0 y=5.0", "x=1.0 y=5.0"]


def test_print_grad_shows_primals(capsys):
    g = lambda x: (jax.debug.print("g {}", x), x ** 2)[1]
    assert float(jax.grad(g)(3.0)) == 6.0
    assert float(jax.jit(jax.grad(g))(3.0)) == 6.0
    assert _out(capsys) == ["g 3.0", "g 3.0"]
    d = jax.grad(lambda x: jax.jit(lambda x: (jax.debug.print("inner {}", x), jnp.sin(x))[1])(x))(1.0)
    np.testing.assert_allclose(float(d), np.cos(1.0), rtol=1e-6)
    assert _out(capsys) == ["inner 1.0"]


def test_print_in_loop_and_branch_bodies(capsys):
    def body(i, c):
        jax.debug.print("i={i} c={c}", i=i, c=c)
        return c + i
    jax.jit(lambda: jax.lax.fori_loop(0, 3, body, 0.0))()
    assert _out(capsys) == ["i=0 c=0.0", "i=1 c=0.0", "i=2 c=1.0"]

    def f(x):
        return jax.lax.cond(x > 0, lambda x: (jax.debug.print("pos {}", x), x)[1],
                            lambda x: (jax.debug.print("neg {}", x), -x)[1], x)
    jax.jit(f)(2.0)
    jax.jit(f)(-3.0)
    assert _out(capsys) == ["pos 2.0", "neg -3.0"]

    def w(x):
        def body(c):
            jax.debug.print("c={c}", c=c)
            return c * 2
        return jax.lax.while_loop(lambda c: c < 10, body, x)
    assert int(jax.jit(w)(1)) == 16
    assert _out(capsys) == ["c=1", "c=2", "c=4", "c=8"]

    def s(xs):
        def body(c, x):
            jax.debug.print("c={} x={}", c, x)
            return c + x, c
        return jax.lax.scan(body, 0.0, xs)
    c, ys = jax.jit(s)(jnp.arange(3.0))
    assert float(c) == 3.0 and np.asarray(ys).tolist() == [0.0, 0.0, 1.0]
    assert _out(capsys) == ["c=0.0 x=0.0", "c=0.0 x=1.0", "c=1.0 x=2.0"]


def test_print_forms_and_options(capsys):
    jax.debug.print("no placeholders", jnp.arange(2), skip_format_check=True)
    jax.debug.print("{} {}", "static", jnp.float32(2.5))
    with np.printoptions(precision=2):
        jax.jit(lambda x: jax.debug.print("p {}", x))(jnp.array([1 / 3, 2 / 3]))
    jax.effects_barrier()
    jax.debug.print(ordered=True)("two-call {x}", x=jnp.int32(7))
    assert _out(capsys) == ["no placeholders [0 1]", "static 2.5", "p [0.33 0.67]", "two-call 7"]


def test_print_errors():
    with pytest.raises(ValueError, match=r"^Unused positional arguments to `jax.debug.print`: \[2\]$"):
        jax.debug.print("{}", 1, 2)
    with pytest.raises(ValueError, match=r"^Unused keyword arguments to `jax.debug.print`: \['y'\]. You may be "
                       r"passing an f-string"):
        jax.debug.print("{x}", x=1, y=2)
    with pytest.raises(TypeError, match="^debug_print received unexpected arguments in the two-call form"):
        jax.debug.print(None, 1)


def test_print_jaxpr():
    text = str(jax.make_jaxpr(_f)(jnp.arange(3.0)))
    lines = text.splitlines()
    assert lines[1] == "    debug_print["          # no binders: an effect without results, as JAX prints it
    assert "      fmt=x = {}" in lines
    assert "      in_tree=PyTreeDef(((*,), {}))" in lines
    assert "      in_tree=PyTreeDef(((), {'x': *, 'y': *}))" in lines
    assert "      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), " \
           "('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), " \
           "('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))" in lines
    assert "    ] a b" in lines


def test_debug_callback(capsys):
    seen = []
    jax.debug.callback(lambda x: seen.append((type(x), np.asarray(x).tolist())), jnp.arange(2))
    jax.jit(lambda x: jax.debug.callback(lambda x, tag: seen.append((tag, np.asarray(x).tolist())), x, tag="t"))(
        jnp.arange(2))
    jax.vmap(lambda x: jax.debug.callback(lambda v: seen.append(float(v)), x))(jnp.arange(3.0))
    jax.effects_barrier()
    assert seen == [(jax.Array, [0, 1]), ("t", [0, 1]), 0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="^first argument to jax.debug.callback must be callable, but got an object "
                       "of type <class 'int'>$"):
        jax.debug.callback(3)


def test_debug_callback_kept_when_unused_and_not_merged():
    seen = []
    def f(x):
        jax.debug.callback(lambda v: seen.append(1), x)
        jax.debug.callback(lambda v: seen.append(2), x)
        return x
    jax.jit(f)(1.0)
    jax.effects_barrier()
    assert seen == [1, 2]


class _Current:
    """Forwards to the streams of the current test (a traced breakpoint keeps the objects it was given)."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, attr):
        return getattr(getattr(_bp_target, self.name), attr)


def _bp_target(x):
    y = jnp.sin(x)
    jax.debug.breakpoint(stdin=_Current("stdin"), stdout=_Current("stdout"))
    return y * 2


def test_breakpoint_scripted():
    # JAX 0.10.2 prints (for `p y`, `p x`, `c`):
    want = ["Entering jdb:",
            "(jdb) Array([0.        , 0.84147096, 0.9092974 ], dtype=float32)",
            "(jdb) Array([0., 1., 2.], dtype=float32)",
            "(jdb) "]
    for run in (_bp_target, jax.jit(_bp_target)):
        _bp_target.stdin, _bp_target.stdout = io.StringIO("p y\np x\nc\n"), io.StringIO()
        out = run(jnp.arange(3.0))
        jax.effects_barrier()
        np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.arange(3.0, dtype=np.float32)), rtol=1e-6)
        assert _bp_target.stdout.getvalue().splitlines() == want


def test_breakpoint_list_and_errors():
    _bp_target.stdin, _bp_target.stdout = io.StringIO("l\nz\nw\nc\n"), io.StringIO()
    jax.jit(_bp_target)(jnp.arange(3.0))
    jax.effects_barrier()
    lines = _bp_target.stdout.getvalue().splitlines()
    assert lines[1].startswith("(jdb) > ") and lines[1].endswith("test_debug.py(149)")
    assert "->      jax.debug.breakpoint(stdin=_Current(\"stdin\"), stdout=_Current(\"stdout\"))" in lines
    assert "(jdb) *** NameError: name 'z' is not defined" in lines
    with pytest.raises(ValueError, match="^`ordered` and `token` are mutually exclusive arguments.$"):
        jax.debug.breakpoint(ordered=True, token=1.0)


def test_visualize_array_sharding(capsys):
    jax.debug.visualize_array_sharding(jnp.arange(8.0).reshape(2, 4))
    jax.debug.visualize_array_sharding(jnp.arange(8.0))
    blank = "│" + " " * 48 + "│"
    assert capsys.readouterr().out == "\n".join(
        ["┌" + "─" * 48 + "┐"] + [blank] * 4 + ["│" + " " * 21 + "CPU 0" + " " * 22 + "│"] + [blank] * 4
        + ["└" + "─" * 48 + "┘", "┌───────┐", "│ CPU 0 │", "└───────┘", ""])
    with pytest.raises(ValueError, match="^`visualize_sharding` only works for shapes with 1 and 2 dimensions.$"):
        jax.debug.visualize_array_sharding(jnp.zeros((2, 2, 2)))


def test_inspect_array_sharding():
    seen = []
    x = jnp.arange(3.0)
    jax.debug.inspect_array_sharding(x, callback=seen.append)
    jax.jit(lambda x: (jax.debug.inspect_array_sharding(x, callback=seen.append), x)[1])(x)
    assert [s.device_set for s in seen] == [{jax.devices()[0]}, {jax.devices()[0]}]


# --- flags: jax_debug_nans / jax_debug_infs, jax_log_compiles, checking_leaks (texts recorded from JAX 0.10.2)

_DEOPT = "Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version."


def _log_then_double(x):
    y = jnp.log(x)
    return y * 2


def test_debug_nans_names_the_primitive(capsys):
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in log$"):
            jax.jit(_log_then_double)(-1.0)
        assert capsys.readouterr().out.splitlines() == [_DEOPT, _DEOPT]   # the jit, then the eager log (stdout)
        with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in log$"):
            jnp.log(-1.0)
        with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in div$"):
            jnp.divide(0.0, 0.0)
        np.testing.assert_allclose(float(jax.jit(_log_then_double)(2.0)), 2 * np.log(2.0), rtol=1e-6)
        # infinities are not NaNs
        assert float(jax.jit(lambda x: 1 / x)(jnp.float32(0))) == np.inf
    assert not jax.config.jax_debug_nans
    assert float(jax.jit(_log_then_double)(-1.0)) != float(jax.jit(_log_then_double)(-1.0))  # NaN, no error


def test_debug_nans_reruns_the_python_function(capsys):
    # JAX 0.10.2 calls the function again with the same (Python) arguments: Python's own division raises
    with jax.debug_infs(True):
        with pytest.raises(ZeroDivisionError, match="^float division by zero$"):
            jax.jit(lambda x: 1 / x)(0.)
        inner = jax.jit(lambda x: jnp.exp(x))
        capsys.readouterr()
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered in exp$"):
            jax.jit(lambda x: inner(x) + 1)(jnp.float32(100))
        assert capsys.readouterr().out.splitlines() == [_DEOPT] * 3   # outer jit, inner jit, eager exp


def test_debug_infs():
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered in div$"):
            jax.jit(lambda x: 1 / x)(jnp.float32(0))
    jax.config.update("jax_debug_infs", True)
    try:
        inner = jax.jit(lambda x: jnp.exp(x))
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered in exp$"):
            jax.jit(lambda x: inner(x) + 1)(jnp.float32(100))   # a nested jit is inlined in the re-run
    finally:
        jax.config.update("jax_debug_infs", False)


def test_log_compiles(caplog):
    f = jax.jit(lambda x: x + 1)
    with jax.log_compiles():
        with caplog.at_level("WARNING", logger="cranax"):
            f(1.0)
            f(1.0)  # cached: nothing logged
    msgs = [r.getMessage() for r in caplog.records if r.name == "cranax"]
    assert len(msgs) == 4
    assert msgs[0].startswith("Finished tracing <lambda> for jit in ") and msgs[0].endswith(" sec")
    # JAX 0.10.2's text for the same call:
    assert msgs[1] == ("Compiling jit(<lambda>) with global shapes and types (ShapedArray(float32[], "
                       "weak_type=True),). Argument mapping: (UnspecifiedValue,).")
    assert msgs[2].startswith("Finished jaxpr to wire format conversion jit(<lambda>) in ")
    assert msgs[3].startswith("Finished cranax compilation of jit(<lambda>) in ")


_leaked = []


def test_checking_leaks():
    @jax.jit
    def g(x):
        _leaked.append(x)
        return x
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
        with pytest.raises(Exception) as e:
            g(1.0)
    assert not jax.config.jax_check_tracer_leaks
    lines = str(e.value).splitlines()
    assert lines[:2] == ["Leaked trace DynamicJaxprTrace. Leaked tracer(s):", ""]
    assert lines[3].startswith("The error occurred while tracing the function g at ")
    assert lines[3].endswith("for jit. This concrete value was not available in Python because it depends on the "
                             "value of the argument x.")
    assert lines[4].startswith("<DynamicJaxprTracer ") and " is referred to by <list " in lines[4]
    assert lines[5].endswith(" is referred to by test_debug._leaked") or lines[5].endswith(
        " is referred to by tests.test_debug._leaked")
    _leaked.clear()
    with jax.checking_leaks():
        assert float(jax.jit(lambda x: x * 2)(1.0)) == 2.0   # no leak, no error


def test_debug_log(caplog):
    with caplog.at_level("INFO", logger="cranax.debug"):
        jax.jit(lambda x: jax.debug.log("v={}", x))(jnp.float32(1.5))
        jax.effects_barrier()
    recs = [r for r in caplog.records if r.name == "cranax.debug"]
    assert [r.getMessage() for r in recs] == ["v=1.5"]
    assert recs[0].levelname == "INFO" and recs[0].pathname == __file__


def test_check_tracer_leaks_context():
    with jax.check_tracer_leaks(True):
        assert jax.config.jax_check_tracer_leaks
    assert not jax.config.jax_check_tracer_leaks
