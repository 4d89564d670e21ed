"""Exceptions raised by cranax's tracing machinery, mirroring ``jax.errors``.

Each message says what happened and where (the traced function, its file and line, and the argument a value
depends on), and ends with the link JAX gives for the same error.
"""

import builtins as _builtins
import os as _os
import traceback as _traceback
import types as _types

from .config import config as _config

__all__ = [
    "JAXTypeError", "ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "TracerArrayConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
    "JaxRuntimeError", "JAXIndexError", "KeyReuseError", "JaxprTypeError", "InconclusiveDimensionOperation",
]

_DOCS = "https://docs.jax.dev/en/latest/errors.html#jax.errors."

_PKG = _os.path.dirname(_os.path.abspath(__file__)) + _os.sep   # the cranax package: its frames are internal
_SIMPLIFIED = ("For simplicity, JAX has removed its internal frames from the traceback of the following exception. "
               "Set JAX_TRACEBACK_FILTERING=off to include these.")


def _filtered(e):
    """``e`` as JAX's ``api_boundary`` lets it leave a JAX entry point (a jitted function's call, a jnp
    function JAX jits): under ``jax_traceback_filtering`` "auto" (outside IPython) or "quiet_remove_frames",
    cranax's own frames are dropped from its traceback and JAX's note is added, once; "remove_frames" drops
    the frames only (JAX's unfiltered copy as ``__cause__`` is not made); "off", "tracebackhide" and "auto"
    under IPython leave it as it is. Re-raise the result with a bare ``raise``."""
    mode = _config.jax_traceback_filtering
    if mode == "auto":
        mode = "tracebackhide" if hasattr(_builtins, "get_ipython") else "quiet_remove_frames"
    if mode not in ("quiet_remove_frames", "remove_frames") or e.__traceback__ is None:
        return e
    out = None
    for frame, line in reversed(list(_traceback.walk_tb(e.__traceback__))):
        if not frame.f_code.co_filename.startswith(_PKG):
            out = _types.TracebackType(out, frame, frame.f_lasti, line)
    e.with_traceback(out)
    if mode == "quiet_remove_frames" and _SIMPLIFIED not in "".join(getattr(e, "__notes__", ())):
        e.add_note("--------------------\n" + _SIMPLIFIED)
    return e


class JAXTypeError(TypeError):
    """Base of the tracer errors below (a ``TypeError``, as in JAX)."""


def _with_link(msg, name):
    return f"{msg}\nSee {_DOCS}{name}"


def _origin(tracer):
    """JAX's ``tracer._origin_msg()``: a newline and where the value was traced ("The error occurred while
    tracing the function f at file:line for jit. ..."), or nothing when the trace does not say."""
    ctx = getattr(tracer, "_context", None)
    ctx = ctx() if ctx is not None else ""
    return f"\n{ctx}" if ctx else ""


def _shape_text(tracer):
    return f"traced array with shape {tracer.aval.str_short(short_dtypes=False)}"


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where Python needs a concrete one: ``int(x)``, ``range(x)``,
    a Python ``if`` on a traced value. Mirrors ``jax.errors.ConcretizationTypeError``. ``context`` says
    where (JAX's text: "It arose in the jnp.arange argument 'stop'"); ``what`` replaces the tracer's
    description (JAX names the count's ``int32[]`` for ``jnp.nonzero``)."""

    def __init__(self, tracer, context="", what=None):
        desc = what if what is not None else tracer._short_repr()
        msg = f"Abstract tracer value encountered where concrete value is expected: {desc}\n{context}{_origin(tracer)}\n"
        super().__init__(_with_link(msg, type(self).__name__))


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced array (a Python ``if``/``while`` on a traced value). Mirrors
    ``jax.errors.TracerBoolConversionError``."""

    def __init__(self, tracer, context=None):
        msg = f"Attempted boolean conversion of {_shape_text(tracer)}.{_origin(tracer)}"
        JAXTypeError.__init__(self, _with_link(msg, type(self).__name__))


class TracerIntegerConversionError(JAXTypeError):
    """``__index__``/``int()`` of a traced array. Mirrors ``jax.errors.TracerIntegerConversionError``."""

    def __init__(self, tracer, context=None):
        msg = f"The __index__() method was called on {_shape_text(tracer)}{_origin(tracer)}"
        super().__init__(_with_link(msg, type(self).__name__))


class TracerArrayConversionError(JAXTypeError):
    """``np.asarray`` of a traced array. Mirrors ``jax.errors.TracerArrayConversionError``."""

    def __init__(self, tracer):
        msg = f"The numpy.ndarray conversion method __array__() was called on {_shape_text(tracer)}{_origin(tracer)}"
        super().__init__(_with_link(msg, type(self).__name__))


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that made it (stored in a global, returned through a side
    channel) and was used later. Mirrors ``jax.errors.UnexpectedTracerError``."""

    def __init__(self, msg):
        super().__init__(_with_link(msg, type(self).__name__))


class JAXIndexError(IndexError):
    """An ``IndexError`` raised by cranax's indexing. Mirrors ``jax.errors.JAXIndexError``."""

    def __init__(self, message):
        super().__init__(_with_link(message, type(self).__name__))


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing with a traced mask (the result shape would depend on values). An
    ``IndexError``, as JAX's. Mirrors ``jax.errors.NonConcreteBooleanIndexError``."""

    def __init__(self, tracer):
        super().__init__(f"Array boolean indices must be concrete; got {tracer.aval.str_short(short_dtypes=False)}\n")


class JaxRuntimeError(RuntimeError):
    """An error raised while a computation runs (a failed ``checkify.check``). Mirrors
    ``jax.errors.JaxRuntimeError``."""


class KeyReuseError(JAXTypeError):
    """A PRNG key used twice while ``jax_debug_key_reuse`` is on. Mirrors ``jax.errors.KeyReuseError``."""

    def __init__(self, message):
        super().__init__(_with_link(message, type(self).__name__))


class JaxprTypeError(TypeError):
    """A jaxpr that does not type-check (an equation's operands disagree with its primitive's rule). Mirrors
    ``jax.errors.JaxprTypeError``."""


class InconclusiveDimensionOperation(Exception):
    """A comparison or operation on symbolic dimensions whose answer depends on their values. Mirrors
    ``jax.errors.InconclusiveDimensionOperation``."""
