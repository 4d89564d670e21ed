"""The implementation of ``cranax.monitoring`` (``jax.monitoring``: named events and the listeners that
receive them), and ``timed``, with which cranax's compile path reports its steps.

A program registers listeners (for plain events, durations, time spans or scalars) and the code it runs
reports events to them. cranax reports JAX's compile-path events where it has the same step, each as JAX
does (a ``record_scalar`` of the start time when the step starts, then ``record_event_duration_secs`` and
``record_event_time_span`` when it ends, all with ``fun_name=``):

* ``/jax/core/compile/jaxpr_trace_duration``: tracing a function to a jaxpr (``jit``'s first call per
  signature, ``make_jaxpr``, an eager primitive's first use per signature); ``fun_name`` the function's name;
* ``/jax/core/compile/jaxpr_to_mlir_module_duration``: lowering the jaxpr (to cranax's wire program, where
  JAX builds an MLIR module); ``fun_name`` ``jit(name)``;
* ``/jax/core/compile/backend_compile_duration``: compiling it (Cranelift, where JAX runs XLA);
  ``fun_name`` ``jit(name)``.

JAX's ``/jax/compilation_cache/...`` events are not reported (cranax's persistent cache has other steps).
Listeners run synchronously in the reporting thread, in registration order; an exception in one propagates
to the code that reported the event.
"""
import time

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_duration_secs_listener", "register_event_listener",
           "register_event_time_span_listener", "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener", "unregister_scalar_listener"]

_event_listeners = []
_duration_listeners = []
_span_listeners = []
_scalar_listeners = []


def record_event(event, **kwargs):
    """Reports ``event`` (a str) with metadata ``kwargs`` (str or int values; pass them in the same order at
    every call for one event) to each ``register_event_listener`` listener, as ``listener(event,
    **kwargs)``. Mirrors ``jax.monitoring.record_event``."""
    for callback in list(_event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(event, duration, **kwargs):
    """Reports that ``event`` took ``duration`` seconds (a float) to each duration listener, as
    ``listener(event, duration, **kwargs)``. Mirrors ``jax.monitoring.record_event_duration_secs``."""
    for callback in list(_duration_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(event, start_time, end_time, **kwargs):
    """Reports that ``event`` ran from ``start_time`` to ``end_time`` (seconds, ``time.time()``'s clock) to each
    time-span listener, as ``listener(event, start_time, end_time, **kwargs)``. Mirrors
    ``jax.monitoring.record_event_time_span``."""
    for callback in list(_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event, value, **kwargs):
    """Reports a scalar ``value`` (float or int) for ``event`` to each scalar listener, as ``listener(event,
    value, **kwargs)``. Mirrors ``jax.monitoring.record_scalar``."""
    for callback in list(_scalar_listeners):
        callback(event, value, **kwargs)


def register_event_listener(callback):
    """Adds ``callback(event, **kwargs)``, called by every ``record_event``. Mirrors
    ``jax.monitoring.register_event_listener``."""
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback):
    """Adds ``callback(event, duration_secs, **kwargs)``, called by every ``record_event_duration_secs``.
    Mirrors ``jax.monitoring.register_event_duration_secs_listener``."""
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback):
    """Adds ``callback(event, start_time, end_time, **kwargs)``, called by every ``record_event_time_span``.
    Mirrors ``jax.monitoring.register_event_time_span_listener``."""
    _span_listeners.append(callback)


def register_scalar_listener(callback):
    """Adds ``callback(event, value, **kwargs)``, called by every ``record_scalar``. Mirrors
    ``jax.monitoring.register_scalar_listener``."""
    _scalar_listeners.append(callback)


def clear_event_listeners():
    """Removes the event, duration and time-span listeners. As JAX 0.10.2's, it leaves the scalar listeners
    (remove those with ``unregister_scalar_listener``). Mirrors ``jax.monitoring.clear_event_listeners``."""
    del _event_listeners[:]
    del _duration_listeners[:]
    del _span_listeners[:]


def _unregister(listeners, callback, what):
    if callback not in listeners:
        raise AssertionError(f"{callback!r} is not a registered {what} listener")   # JAX asserts
    listeners.remove(callback)


def unregister_event_listener(callback):
    """Removes a listener added by ``register_event_listener``; ``AssertionError`` if it is not registered.
    Mirrors ``jax.monitoring.unregister_event_listener``."""
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback):
    """Removes a listener added by ``register_event_duration_secs_listener``; ``AssertionError`` if it is not
    registered. Mirrors ``jax.monitoring.unregister_event_duration_listener``."""
    _unregister(_duration_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback):
    """Removes a listener added by ``register_event_time_span_listener``; ``AssertionError`` if it is not
    registered. Mirrors ``jax.monitoring.unregister_event_time_span_listener``."""
    _unregister(_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback):
    """Removes a listener added by ``register_scalar_listener``; ``AssertionError`` if it is not registered.
    Mirrors ``jax.monitoring.unregister_scalar_listener``."""
    _unregister(_scalar_listeners, callback, "scalar")


# ----------------------------------------------------------------------------------------------- cranax's events

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWERING_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class _NoListener:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NO_LISTENER = _NoListener()


class _Timed:
    """Reports one compile step as JAX's ``log_elapsed_time`` does: the start time as a scalar on entry, the
    duration and the time span on exit."""

    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event, fun_name):
        self.event, self.fun_name = event, fun_name

    def __enter__(self):
        self.start = time.time()
        record_scalar(self.event, self.start, fun_name=self.fun_name)
        return self

    def __exit__(self, exc_type, exc, tb):
        end = time.time()   # (as JAX: a step that raised is reported too)
        record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
        return False


def timed(event, fun_name):
    """A context manager reporting the step it wraps as ``event`` (free when nothing listens)."""
    if _scalar_listeners or _duration_listeners or _span_listeners:
        return _Timed(event, fun_name)
    return _NO_LISTENER
