"""``jax.extend.source_info_util``: where equations came from. cranax records no source locations in jaxprs:
``current()`` is an empty ``SourceInfo``, ``register_exclusion`` keeps the paths (for traceback filtering
that cranax does not do), and the name-stack helpers read cranax's ``named_scope`` stack."""
import contextlib

from .. import core as _core

__all__ = ["SourceInfo", "NameStack", "current", "new_source_info", "register_exclusion", "user_context",
           "current_name_stack", "new_name_stack", "extend_name_stack", "reset_name_stack", "set_name_stack",
           "transform_name_stack", "summarize"]

_exclusions = []


class NameStack(tuple):
    """The ``named_scope`` names active at a point, outermost first."""

    def extend(self, name):
        return NameStack(self + (tuple(name) if isinstance(name, tuple) else (name,)))

    def __str__(self):
        return "/".join(self)


class SourceInfo:
    __slots__ = ("traceback", "name_stack")

    def __init__(self, traceback=None, name_stack=NameStack()):
        self.traceback = traceback
        self.name_stack = name_stack


def new_source_info():
    return SourceInfo()


def current():
    return SourceInfo(None, current_name_stack())


def summarize(source_info, num_frames=1):
    return "unknown"


def register_exclusion(path):
    _exclusions.append(path)


@contextlib.contextmanager
def user_context(c, *, name_stack=None):
    yield


def current_name_stack():
    return NameStack(_core._state.name_stack)


def new_name_stack(name=""):
    return NameStack((name,) if name else ())


def extend_name_stack(name):
    return current_name_stack().extend(name)


@contextlib.contextmanager
def _keep():
    yield


def reset_name_stack():
    return _keep()


def set_name_stack(name_stack):
    return _keep()


def transform_name_stack(name):
    return _keep()
