"""``jax._src.traceback_util`` — equinox (``traceback_util.register_exclusion(__file__)`` in every module and
``api_boundary`` on its transformations; ``include_frame`` on each frame of the stack an ``error_if`` records
while tracing, shown by its runtime error). cranax does not filter tracebacks: ``api_boundary`` is a no-op that
keeps its argument. cranax's own files are excluded, as JAX's register themselves: an ``error_if``'s stack shows
the user's frames and not the tracing machinery's (and formatting each of those frames costs tracing time)."""
import os

_exclusions = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep]


def register_exclusion(path):
    _exclusions.append(path)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    if fun is None:
        return lambda f: f
    return fun


def include_frame(f):
    """False for a frame of cranax's own or of a file registered with ``register_exclusion`` (equinox's)."""
    name = f.f_code.co_filename
    return not any(name.startswith(p) for p in _exclusions)
