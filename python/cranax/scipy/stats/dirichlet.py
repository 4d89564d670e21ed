"""``cranax.scipy.stats.dirichlet``: the Dirichlet distribution. ``x`` has shape (k,) or (k, ...) and
``alpha`` shape (k,); the result drops the leading axis. Mirrors ``jax.scipy.stats.dirichlet``."""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._common import c, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    x, alpha = (jnp.asarray(v) for v in (x, alpha))
    dt = jnp.result_type(x, alpha, jnp.float32)
    x, alpha = x.astype(dt), alpha.astype(dt)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one entry fewer; "
                         f"got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, (1 - jnp.sum(x, 0))[None]], axis=0)
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    norm = jnp.sum(lax.lgamma(alpha)) - lax.lgamma(jnp.sum(alpha))
    val = jnp.sum(special.xlogy(a - 1, x), axis=0) - norm
    simplex = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < c(x, 1e-6 if dt == np.float32 else 1e-12))
    return jnp.where(simplex, val, c(val, -np.inf))


def pdf(x, alpha):
    return jnp.exp(logpdf(x, alpha))
