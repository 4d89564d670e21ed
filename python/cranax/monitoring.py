"""``cranax.monitoring``: named events and the listeners that receive them; cranax's compile path reports
JAX's ``/jax/core/compile/...`` duration events (see ``cranax._monitoring``). Mirrors ``jax.monitoring``."""
from ._monitoring import (clear_event_listeners, record_event, record_event_duration_secs, record_event_time_span,
                          record_scalar, register_event_duration_secs_listener, register_event_listener,
                          register_event_time_span_listener, register_scalar_listener,
                          unregister_event_duration_listener, unregister_event_listener,
                          unregister_event_time_span_listener, unregister_scalar_listener)

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_duration_secs_listener", "register_event_listener",
           "register_event_time_span_listener", "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener", "unregister_scalar_listener"]
