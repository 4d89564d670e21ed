"""jax.monitoring: the listener API and the compile-path events, as JAX 0.10.2 reports them (recorded there)."""
import subprocess
import sys

import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import monitoring as m

JAX_NAMES = ['clear_event_listeners', 'record_event', 'record_event_duration_secs', 'record_event_time_span',
             'record_scalar', 'register_event_duration_secs_listener', 'register_event_listener',
             'register_event_time_span_listener', 'register_scalar_listener', 'unregister_event_duration_listener',
             'unregister_event_listener', 'unregister_event_time_span_listener', 'unregister_scalar_listener']


@pytest.fixture
def events():
    ev = []
    listeners = [(m.register_event_listener, m.unregister_event_listener,
                  lambda e, **kw: ev.append(("event", e, kw))),
                 (m.register_event_duration_secs_listener, m.unregister_event_duration_listener,
                  lambda e, d, **kw: ev.append(("dur", e, type(d).__name__, kw))),
                 (m.register_event_time_span_listener, m.unregister_event_time_span_listener,
                  lambda e, s, t, **kw: ev.append(("span", e, t >= s, kw))),
                 (m.register_scalar_listener, m.unregister_scalar_listener,
                  lambda e, v, **kw: ev.append(("scalar", e, type(v).__name__, kw)))]
    for reg, _, cb in listeners:
        reg(cb)
    yield ev
    for _, unreg, cb in listeners:
        unreg(cb)


def _step(event, name):
    # JAX's order for one compile step: the start time as a scalar, then duration and time span
    return [("scalar", event, "float", {"fun_name": name}), ("dur", event, "float", {"fun_name": name}),
            ("span", event, True, {"fun_name": name})]


def test_public_names_as_jax():
    assert sorted(n for n in dir(m) if not n.startswith("_")) == JAX_NAMES
    assert jax.monitoring is m


def test_jit_reports_trace_lowering_and_compile(events):
    def f_mon(x):
        return jnp.sin(x) * 2
    jf = jax.jit(f_mon)
    jf(1.0)
    assert events == (_step("/jax/core/compile/jaxpr_trace_duration", "f_mon")
                      + _step("/jax/core/compile/jaxpr_to_mlir_module_duration", "jit(f_mon)")
                      + _step("/jax/core/compile/backend_compile_duration", "jit(f_mon)"))
    events.clear()
    jf(2.0)   # cached: nothing compiles
    assert events == []
    jax.make_jaxpr(f_mon)(1.0)
    assert events == _step("/jax/core/compile/jaxpr_trace_duration", "f_mon")


def test_eager_primitive_reports_as_its_jit(events):
    jnp.cos(jnp.full((7, 3), 0.25, jnp.float32))   # a signature no other test compiles first
    names = [(e[1], e[-1]["fun_name"]) for e in events if e[0] == "dur"]
    assert ("/jax/core/compile/jaxpr_trace_duration", "cos") in names
    assert ("/jax/core/compile/jaxpr_to_mlir_module_duration", "jit(cos)") in names
    assert ("/jax/core/compile/backend_compile_duration", "jit(cos)") in names


def test_record_functions_and_unregister(events):
    m.record_event("/my/event", a=1)
    m.record_event_duration_secs("/my/dur", 0.5, b="x")
    m.record_scalar("/my/scalar", 3)
    m.record_event_time_span("/my/span", 1.0, 2.0)
    assert events == [("event", "/my/event", {"a": 1}), ("dur", "/my/dur", "float", {"b": "x"}),
                      ("scalar", "/my/scalar", "int", {}), ("span", "/my/span", True, {})]
    with pytest.raises(AssertionError, match="is not a registered event listener"):
        m.unregister_event_listener(lambda e: None)


def test_clear_leaves_scalar_listeners_as_jax():
    code = ("import cranax.monitoring as m\nev = []\n"
            "m.register_event_listener(lambda e, **k: ev.append(e))\n"
            "m.register_scalar_listener(lambda e, v, **k: ev.append(e))\n"
            "m.register_event_duration_secs_listener(lambda e, d, **k: ev.append(e))\n"
            "m.clear_event_listeners()\n"
            "m.record_event('/x'); m.record_scalar('/y', 1); m.record_event_duration_secs('/z', 1.0)\n"
            "print(ev)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['/y']"   # JAX 0.10.2's output
