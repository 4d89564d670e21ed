"""Names ``jax.numpy`` 0.10.2 no longer has but whose removal JAX explains: the module ``__getattr__`` of
``cranax.numpy`` raises JAX's text for them (a plain AttributeError for any other missing name)."""
import sys

_REMOVED = {
    "fix": "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0. Use jax.numpy.trunc "
           "instead.",
}


def __getattr__(name):
    msg = _REMOVED.get(name)
    # the package's name as it reads now: ``jax.numpy`` under the alias
    pkg = sys.modules[__name__.rpartition(".")[0]].__name__
    raise AttributeError(msg if msg is not None else f"module {pkg!r} has no attribute {name!r}")
