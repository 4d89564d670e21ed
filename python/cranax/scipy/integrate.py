"""``cranax.scipy.integrate``: mirrors ``jax.scipy.integrate``."""
from .. import numpy as _jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along ``axis``: sum of (y[i] + y[i+1]) / 2 * dx_i with dx_i = diff(x) (``x``
    broadcast against ``y``, or 1-D along ``axis``) or the constant ``dx``. Shape: ``y``'s without
    ``axis``. Mirrors ``jax.scipy.integrate.trapezoid``."""
    y = _jnp.asarray(y)
    if not _jnp.issubdtype(y.dtype, _jnp.inexact):
        y = y.astype(_jnp.float_)
    y = _jnp.moveaxis(y, axis, -1)
    mid = (y[..., 1:] + y[..., :-1]) * 0.5
    if x is None:
        return _jnp.sum(mid, axis=-1) * dx
    x = _jnp.asarray(x)
    if x.ndim == 1:
        d = x[1:] - x[:-1]
    else:
        x = _jnp.moveaxis(x, axis, -1)
        d = x[..., 1:] - x[..., :-1]
    return _jnp.sum(mid * d, axis=-1)
