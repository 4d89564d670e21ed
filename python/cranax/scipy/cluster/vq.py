"""``cranax.scipy.cluster.vq``: mirrors ``jax.scipy.cluster.vq``."""
from ... import numpy as _jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """Assigns each observation (rows of ``obs``, shape (n, d) or (n,)) to its nearest code (rows of
    ``code_book``, (k, d) or (k,)) in Euclidean distance. Returns (codes int32 (n,), distances (n,)).
    ``check_finite`` is accepted for SciPy compatibility and ignored (as in JAX). Raises ``ValueError``
    for mismatched ranks. Mirrors ``jax.scipy.cluster.vq.vq``."""
    del check_finite
    obs, code_book = _jnp.asarray(obs), _jnp.asarray(code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    dt = _jnp.result_type(obs, code_book, _jnp.float32)
    obs, code_book = obs.astype(dt), code_book.astype(dt)
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = _jnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1)
    code = _jnp.argmin(dist, axis=-1)
    dmin = _jnp.min(dist, axis=-1)
    return code, _jnp.sqrt(dmin)
