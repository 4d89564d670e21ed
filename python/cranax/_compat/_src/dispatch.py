"""``jax._src.dispatch`` — equinox (``jax._src.dispatch.wait_for_tokens`` in ``filter_jit``'s cleanup).
cranax has no effect tokens to wait for."""


def wait_for_tokens():
    pass
