"""``cranax.scipy.stats.dirichlet``: the Dirichlet distribution. ``x`` has shape (k,) or (k, ...) and
``alpha`` shape (k,); the result drops the leading axis. Mirrors ``jax.scipy.stats.dirichlet``."""
import numpy as _np

from ... import numpy as _jnp
from ... import lax as _lax
from .. import special as _special
from ._common import c as _c, promote as _promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    x, alpha = (_jnp.asarray(v) for v in (x, alpha))
    dt = _jnp.result_type(x, alpha, _jnp.float32)
    x, alpha = x.astype(dt), alpha.astype(dt)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one entry fewer; "
                         f"got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = _jnp.concatenate([x, (1 - _jnp.sum(x, 0))[None]], axis=0)
    a = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    norm = _jnp.sum(_lax.lgamma(alpha)) - _lax.lgamma(_jnp.sum(alpha))
    val = _jnp.sum(_special.xlogy(a - 1, x), axis=0) - norm
    simplex = _jnp.all(x >= 0, axis=0) & (_jnp.abs(_jnp.sum(x, axis=0) - 1) < _c(x, 1e-6 if dt == _np.float32 else 1e-12))
    return _jnp.where(simplex, val, _c(val, -_np.inf))


def pdf(x, alpha):
    return _jnp.exp(logpdf(x, alpha))
