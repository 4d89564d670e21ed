"""``check_p``: a runtime assertion (``jax.experimental.checkify.check``) with its rules.

As JAX's, a check binds the flattened leaves of an error value (``checkify.Error``: per error kind a
predicate, a code and a payload) with ``err_tree`` saying how to rebuild it. Eagerly a failing check raises
``JaxRuntimeError`` at once. Staged (``jit``, loops) it must first be functionalized by ``checkify.checkify``,
which traces with ``functionalizing`` set and discharges each check into the error value it returns; staged
without it the abstract eval refuses, with JAX's message. ``debug=True`` (``debug_check``) never raises.
"""
import threading


from ..core import Primitive
from ..jaxpr import Jaxpr
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from .._pytree import tree_unflatten

__all__ = ["check_p", "JaxRuntimeError", "functionalizing", "functionalization_error_text"]


class JaxRuntimeError(ValueError):
    """The error a failed check raises (``checkify.JaxRuntimeError``, a ValueError as JAX's)."""


class _State(threading.local):
    def __init__(self):
        self.depth = 0


functionalizing = _State()

check_p = Primitive("check", multiple_results=True)

functionalization_error_text = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably means you tried "
    "to stage (jit/scan/pmap/...) a `check` without functionalizing it through `checkify.checkify`.")


def _abstract_eval(*err_avals, err_tree, debug):
    if not functionalizing.depth and not debug:
        raise ValueError(functionalization_error_text)
    return []


def _impl(*err_vals, err_tree, debug):
    if debug:
        return []
    exc = tree_unflatten(err_tree, list(err_vals)).get_exception()
    if exc is not None:
        raise JaxRuntimeError(str(exc)) from exc
    return []


def _jvp(primals, tangents, **params):
    # the primals are checked; tangents carry no error
    return check_p.bind(*primals, **params), []


def _inline(eqn):
    # a staged debug check outside checkify is dropped (JAX lowers it to nothing); a plain one never gets
    # here (its abstract eval refused)
    return (Jaxpr([], [], [], []), []) if eqn.params["debug"] else None


check_p.abstract_eval = _abstract_eval
check_p.impl = _impl
check_p.inline_jaxpr = staticmethod(_inline)
_ad.jvp_rules[check_p] = _jvp


def _batch(vals, dims, *, err_tree, debug):
    # As JAX: the batch axis goes first, then the batched error is reduced to one failure and checked.
    # (the error value's reduction lives with the Error class, in the API module above this one)
    from ..experimental._checkify import _check_error
    size = _batching.axis_size_of(vals, dims)
    vals = [_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    _check_error(tree_unflatten(err_tree, vals), debug=debug)
    return [], []


_batching.batching_rules[check_p] = _batch
