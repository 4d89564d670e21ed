"""``jax._src.traceback_util`` — equinox (``traceback_util.register_exclusion(__file__)`` in every module and
``api_boundary`` on its transformations). cranax does not filter tracebacks: both are no-ops that keep
their arguments."""

_exclusions = []


def register_exclusion(path):
    _exclusions.append(path)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    if fun is None:
        return lambda f: f
    return fun


def include_frame(f):
    """False for a frame whose file was registered with ``register_exclusion`` (equinox's error messages)."""
    name = f.f_code.co_filename
    return not any(name.startswith(p) for p in _exclusions)
