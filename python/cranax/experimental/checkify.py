"""``jax.experimental.checkify`` for checks whose predicate is concrete (chex imports it; its asserts outside
``chexify`` never reach it). ``check(pred, msg, *fmt_args)`` raises ``JaxRuntimeError`` at once when
``pred`` is a concrete False; a traced ``pred`` raises ``NotImplementedError`` (cranax cannot yet carry
errors out of compiled code). ``checkify(f)`` runs ``f`` and returns ``(error, out)``."""
import numpy as np

from ..core import Tracer
from ..errors import JaxRuntimeError

__all__ = ["check", "checkify", "check_error", "debug_check", "ErrorCategory", "Error", "JaxRuntimeError", "user_checks", "all_checks", "float_checks",
           "index_checks", "nan_checks", "div_checks", "automatic_checks"]

user_checks = frozenset({"user"})
nan_checks = frozenset({"nan"})
div_checks = frozenset({"div"})
index_checks = frozenset({"index"})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = user_checks | float_checks | index_checks


class Error:
    """The outcome of a checkified function: ``get()`` is the failure message or None; ``throw()`` raises
    ``JaxRuntimeError`` with it."""

    def __init__(self, message=None):
        self._message = message

    def get(self):
        return self._message

    def throw(self):
        if self._message is not None:
            raise JaxRuntimeError(self._message)


def check(pred, msg, *fmt_args, **fmt_kwargs):
    """Raises ``JaxRuntimeError(msg.format(*fmt_args))`` if the concrete boolean ``pred`` is False."""
    if isinstance(pred, Tracer) and pred._concrete() is None:
        raise NotImplementedError("cranax's checkify.check needs a concrete predicate (traced checks are not "
                                  "supported yet)")
    if not bool(np.all(np.asarray(pred))):
        args = [np.asarray(a) for a in fmt_args]
        raise JaxRuntimeError(msg.format(*args, **{k: np.asarray(v) for k, v in fmt_kwargs.items()}))


def checkify(f, errors=user_checks):
    """``f`` returning ``(Error, out)``: a failed ``check`` while running it becomes the error."""
    def checked(*args, **kwargs):
        try:
            out = f(*args, **kwargs)
        except JaxRuntimeError as e:
            return Error(str(e)), None
        return Error(None), out
    return checked


ErrorCategory = type     # JAX: the class of an error kind (``type[JaxException]``); annotations only


def check_error(error):
    """Raises the failure ``error`` holds (an ``Error`` from ``checkify``), if any."""
    error.throw()


debug_check = check
