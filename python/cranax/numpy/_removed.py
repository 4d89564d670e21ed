"""Names ``jax.numpy`` 0.10.2 no longer has but whose removal JAX explains: the module ``__getattr__`` of
``cranax.numpy`` raises JAX's text for them (a plain AttributeError for any other missing name)."""

_REMOVED = {
    "fix": "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0. Use jax.numpy.trunc "
           "instead.",
}


def __getattr__(name):
    msg = _REMOVED.get(name)
    raise AttributeError(msg if msg is not None else f"module 'cranax.numpy' has no attribute {name!r}")
