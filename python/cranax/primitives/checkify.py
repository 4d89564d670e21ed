"""``check_p``: a runtime assertion (``jax.experimental.checkify.check``) with its rules.

Eagerly a failing check raises ``JaxRuntimeError`` at once. Staged (``jit``, loops) it must first be
functionalized by ``checkify.checkify``, which traces with ``functionalizing`` set and turns each check into
error values the function returns; staged without it the abstract eval refuses, with JAX's message.
"""
import threading

import numpy as np

from ..core import Primitive
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from .._pytree import tree_unflatten

__all__ = ["check_p", "JaxRuntimeError", "functionalizing", "format_check"]


class JaxRuntimeError(ValueError):
    """The error a failed check raises (``checkify.JaxRuntimeError``, a ValueError as JAX's)."""


class _State(threading.local):
    def __init__(self):
        self.depth = 0


functionalizing = _State()

check_p = Primitive("check", multiple_results=True)


def format_check(msg, in_tree, values):
    args, kwargs = tree_unflatten(in_tree, list(values))
    return msg.format(*args, **kwargs) + " (`check` failed)"


def _abstract_eval(pred, *fmt_avals, msg, in_tree):
    if not functionalizing.depth:
        raise ValueError("Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
                         "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through "
                         "`checkify.checkify`.")
    return []


def _impl(pred, *fmt_args, msg, in_tree):
    if not bool(np.all(np.asarray(pred))):
        raise JaxRuntimeError(format_check(msg, in_tree, [np.asarray(a) for a in fmt_args]))
    return []


def _jvp(primals, tangents, **params):
    return check_p.bind(*primals, **params), []


check_p.abstract_eval = _abstract_eval
check_p.impl = _impl
_ad.jvp_rules[check_p] = _jvp


def _batch(vals, dims, **params):
    # The whole batch is checked at once (a failing element fails the check; its message shows the batch).
    return check_p.bind(*vals, **params), []


_batching.batching_rules[check_p] = _batch
