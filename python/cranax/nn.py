"""``cranax.nn``: common activation functions and helpers, numerically stable as JAX's. Mirrors
``jax.nn``."""
import numpy as _np

from . import dtypes as _dtypes
from . import lax
from . import numpy as jnp
from .core import get_aval
from .custom_derivatives import custom_jvp

__all__ = ["relu", "relu6", "gelu", "sigmoid", "silu", "swish", "softplus", "log_sigmoid", "elu", "leaky_relu",
           "tanh", "softmax", "log_softmax", "logsumexp", "one_hot", "standardize", "hard_tanh"]


def _float(x):
    x = jnp.asarray(x)
    if not _dtypes.issubdtype(get_aval(x).dtype, _np.floating):
        x = x.astype(_dtypes.canonicalize_dtype(jnp.float_))
    return x


def _relu(x):
    x = jnp.asarray(x)
    return jnp.maximum(x, jnp.zeros((), get_aval(x).dtype))


def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    x = jnp.asarray(x)
    return _relu(x), lax.select(x > 0, t, lax.full_like(t, 0))


_relu_cj = custom_jvp(_relu)
_relu_cj.defjvp(_relu_jvp)


def relu(x):
    """``max(x, 0)``; its derivative is 0 at 0, as JAX's custom rule. Mirrors ``jax.nn.relu``."""
    return _relu_cj(x)


def relu6(x):
    return jnp.minimum(relu(x), 6.0)


def hard_tanh(x):
    return jnp.clip(x, -1.0, 1.0)


def sigmoid(x):
    return lax.logistic(_float(x))


def silu(x):
    x = _float(x)
    return x * sigmoid(x)


swish = silu


def softplus(x):
    """``log(1 + exp(x))`` computed as ``logaddexp(x, 0)``."""
    x = _float(x)
    return jnp.logaddexp(x, jnp.zeros((), x.dtype))


def log_sigmoid(x):
    return -softplus(-_float(x))


def elu(x, alpha=1.0):
    x = _float(x)
    safe = jnp.where(x > 0, jnp.zeros((), x.dtype), x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


def leaky_relu(x, negative_slope=0.01):
    x = _float(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def tanh(x):
    return jnp.tanh(x)


def gelu(x, approximate=True):
    """Gaussian error linear unit: the tanh approximation by default, the exact ``erf`` form with
    ``approximate=False``. Mirrors ``jax.nn.gelu``."""
    x = _float(x)
    dt = x.dtype
    if approximate:
        c = _np.sqrt(2 / _np.pi).astype(dt)
        cdf = 0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * (x * x * x))))
        return x * cdf
    return x * (lax.erf(x * _np.asarray(1 / _np.sqrt(2), dt)) + 1) / 2


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(int(a) % nd for a in axis)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, shifted by the max for stability (infinite maxima handled
    as JAX does). Mirrors ``jax.nn.logsumexp`` / ``jax.scipy.special.logsumexp``."""
    a = _float(a)
    nd = a.ndim
    axes = _axes(axis, nd)
    amax = jnp.max(a, axis=axes, keepdims=True, initial=-jnp.inf) if axes else a
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, jnp.zeros((), a.dtype)))
    e = jnp.exp(a - amax)
    if b is not None:
        e = e * jnp.asarray(b)
    s = jnp.sum(e, axis=axes, keepdims=True) if axes else e
    sign = jnp.sign(s)
    out = jnp.log(jnp.abs(s)) + amax
    if not keepdims:
        out = jnp.squeeze(out, axis=axes) if axes else out
        sign = jnp.squeeze(sign, axis=axes) if axes else sign
    if return_sign:
        return out, sign
    return out


def log_softmax(x, axis=-1, where=None, initial=None):
    """``x - logsumexp(x)`` along ``axis``, computed stably. Mirrors ``jax.nn.log_softmax``."""
    x = _float(x)
    axes = _axes(axis, x.ndim)
    shifted = x - lax.stop_gradient(jnp.max(x, axis=axes, keepdims=True, initial=-jnp.inf))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axes, keepdims=True))


def softmax(x, axis=-1, where=None, initial=None):
    """``exp(x) / sum(exp(x))`` along ``axis`` after subtracting the max. Mirrors ``jax.nn.softmax``."""
    x = _float(x)
    axes = _axes(axis, x.ndim)
    unnormalized = jnp.exp(x - lax.stop_gradient(jnp.max(x, axis=axes, keepdims=True, initial=-jnp.inf)))
    return unnormalized / jnp.sum(unnormalized, axis=axes, keepdims=True)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    x = _float(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True)
    if variance is None:
        variance = jnp.mean(jnp.square(x), axis, keepdims=True) - jnp.square(mean)
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """``x`` (integer class ids) as one-hot vectors of length ``num_classes`` along ``axis``; ids out of
    range give all zeros. Mirrors ``jax.nn.one_hot``."""
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else jnp.float_)
    x = jnp.asarray(x)
    num_classes = int(num_classes)
    nd = x.ndim + 1
    ax = int(axis) % nd
    shape = x.shape[:ax] + (num_classes,) + x.shape[ax:]
    ids = lax.broadcasted_iota(get_aval(x).dtype if _dtypes.issubdtype(get_aval(x).dtype, _np.integer)
                               else _np.int32, shape, ax)
    xb = lax.broadcast_in_dim(x if get_aval(x).dtype == get_aval(ids).dtype else x.astype(get_aval(ids).dtype),
                              shape, tuple(d for d in range(nd) if d != ax))
    return lax.eq(xb, ids).astype(dt)
