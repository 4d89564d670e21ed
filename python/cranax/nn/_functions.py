"""The activation functions and helpers of ``jax.nn``, each with JAX's formula, dtype behaviour and
derivative (the piecewise ones carry JAX's custom jvp rules, so their gradient at a kink matches)."""
import numpy as _np

from .. import dtypes as _dtypes
from ..config import softmax_custom_jvp as _softmax_custom_jvp
import functools as _functools

from .. import lax
from .. import numpy as jnp
from ..api import jit as _jit
from ..core import get_aval
from ..custom_derivatives import custom_jvp
from ..numpy import _promotion
from ..primitives import structural as _st

__all__ = ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
           "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish",
           "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus",
           "sparse_plus", "sparse_sigmoid", "squareplus", "standardize", "swish", "tanh"]


def _arraylike(name, x):
    """``x`` as an array; lists and other non-arrays raise ``TypeError`` naming ``name`` (JAX's
    ``ensure_arraylike``)."""
    return jnp.asarray(_promotion._operand(x, name))


def _inexact(name, x):
    """``x`` promoted to an inexact dtype (ints to the default float), as JAX's ``promote_args_inexact``."""
    return _promotion._promote(name, _arraylike(name, x), to_float=True)[0]


def _dtype(x):
    return get_aval(x).dtype


def identity(x):
    """``x`` unchanged (as an array). Mirrors ``jax.nn.identity``."""
    return _arraylike("identity", x)


def _relu(x):
    return jnp.maximum(x, 0)


_relu.__name__ = "relu"   # as JAX's: a custom_jvp around a jit, both printed name=relu
_relu_cj = custom_jvp(_jit(_relu))
_relu_cj.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


def relu(x):
    """``max(x, 0)``, any shape and real dtype (dtype kept); its derivative at 0 is 0, as JAX's custom
    rule. Mirrors ``jax.nn.relu``."""
    return _relu_cj(_arraylike("relu", x))


def _relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.)


_relu6.__name__ = "relu6"
_relu6_cj = custom_jvp(_jit(_relu6))
_relu6_cj.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


def relu6(x):
    """``min(max(x, 0), 6)``; derivative 0 at both kinks (JAX's rule). Mirrors ``jax.nn.relu6``."""
    return _relu6_cj(_arraylike("relu6", x))


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``, a smooth relu. Mirrors ``jax.nn.squareplus``."""
    # (a Python scalar ``b`` stays weakly typed: JAX's jaxpr adds it as a literal of x's dtype)
    x = _arraylike("squareplus", x)
    b = b if type(b) in (int, float) else _arraylike("squareplus", b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def softplus(x):
    """``log(1 + exp(x))`` computed as ``logaddexp(x, 0)``. Mirrors ``jax.nn.softplus``."""
    return jnp.logaddexp(_arraylike("softplus", x), 0)


def sparse_plus(x):
    """0 for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)**2 / 4`` between. Mirrors ``jax.nn.sparse_plus``."""
    x = _arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def soft_sign(x):
    """``x / (|x| + 1)``. Mirrors ``jax.nn.soft_sign``."""
    x = _arraylike("soft_sign", x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))`` (``lax.logistic``); float dtypes only (an integer
    ``x`` raises ``TypeError``, as JAX). Mirrors ``jax.nn.sigmoid``."""
    return lax.logistic(_arraylike("sigmoid", x))


def sparse_sigmoid(x):
    """``clip(x + 1, 0, 2) / 2``. Mirrors ``jax.nn.sparse_sigmoid``."""
    return 0.5 * jnp.clip(_arraylike("sparse_sigmoid", x) + 1.0, 0.0, 2.0)


def silu(x):
    """``x * sigmoid(x)``. Mirrors ``jax.nn.silu`` (alias ``swish``)."""
    x = _arraylike("silu", x)
    return x * sigmoid(x)


swish = silu


def mish(x):
    """``x * tanh(softplus(x))``. Mirrors ``jax.nn.mish``."""
    x = _arraylike("mish", x)
    return x * jnp.tanh(softplus(x))


def log_sigmoid(x):
    """``-softplus(-x)``. Mirrors ``jax.nn.log_sigmoid``."""
    return -softplus(-_arraylike("log_sigmoid", x))


def elu(x, alpha=1.0):
    """``x`` for ``x > 0`` else ``alpha * expm1(x)`` (the unused branch sees 0, so no overflow leaks into
    gradients). Mirrors ``jax.nn.elu``."""
    x = _arraylike("elu", x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


def leaky_relu(x, negative_slope=1e-2):
    """``x`` for ``x >= 0`` else ``negative_slope * x``. Mirrors ``jax.nn.leaky_relu``."""
    x = _arraylike("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]`` (dtype kept). Mirrors ``jax.nn.hard_tanh``."""
    x = _arraylike("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``. Mirrors ``jax.nn.celu``."""
    x = _arraylike("celu", x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """``scale * elu(x, alpha)`` with the self-normalizing constants (alpha ≈ 1.6733, scale ≈ 1.0507).
    Mirrors ``jax.nn.selu``."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x, approximate=True):
    """Gaussian error linear unit: ``x * Φ(x)``, with Φ in JAX's tanh approximation by default or exactly
    as ``erfc(-x/√2)/2`` with ``approximate=False``; ints give the default float. Mirrors ``jax.nn.gelu``."""
    x = _inexact("gelu", x)
    dt = _dtype(x)
    if approximate:
        c = _np.sqrt(2 / _np.pi).astype(dt)
        cdf = 0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * (x ** 3))))
        return x * cdf
    # JAX's jnp.array(..., dtype) of the result: a ``copy`` equation
    return _st.copy_p.bind(jnp.asarray(0.5 * x * lax.erfc(-x * _np.sqrt(0.5).astype(dt)), dtype=dt))


def glu(x, axis=-1):
    """Gated linear unit: ``x`` split in halves ``a, b`` along ``axis``, giving ``a * sigmoid(b)``; the axis
    length must be even (``AssertionError`` otherwise, as JAX). Mirrors ``jax.nn.glu``."""
    x = _arraylike("glu", x)
    size = x.shape[axis]
    assert size % 2 == 0, "axis size must be divisible by 2"
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``. Mirrors ``jax.nn.hard_sigmoid``."""
    return relu6(_arraylike("hard_sigmoid", x) + 3.) / 6.


def hard_silu(x):
    """``x * hard_sigmoid(x)``. Mirrors ``jax.nn.hard_silu`` (alias ``hard_swish``)."""
    x = _arraylike("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def tanh(x, /):
    """Hyperbolic tangent (``jnp.tanh``). Mirrors ``jax.nn.tanh``."""
    return jnp.tanh(x)


def _log1mexp(x):
    # log(1 - exp(-x)) for x > 0: expm1 below log 2 keeps precision near 0, log1p above it (Mächler's rule).
    return jnp.where(x < _np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


_log1mexp_cj = custom_jvp(_log1mexp)
_log1mexp_cj.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def log1mexp(x):
    """``log(1 - exp(-x))``, accurate for small and large ``x`` (NaN for ``x < 0``, ``-inf`` at 0).
    Mirrors ``jax.nn.log1mexp``."""
    return _log1mexp_cj(_arraylike("log1mexp", x))


def _axes(axis, nd):
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (int, _np.integer)):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
        out.append(a % nd)
    return tuple(out)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis`` (all axes by default), shifted by the (finite) max for
    stability; ``b`` scales each term (a term with ``b == 0`` is dropped), ``where`` masks them. With
    ``return_sign`` it gives ``(log|s|, sign(s))``; otherwise a negative sum gives NaN. Ints give the default
    float. Mirrors ``jax.nn.logsumexp`` / ``jax.scipy.special.logsumexp``."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = _promotion._promote("logsumexp", _arraylike("logsumexp", a), _arraylike("logsumexp", b),
                                   to_float=True)
        a = jnp.where(b != 0, a, -_np.inf)
    else:
        a = _inexact("logsumexp", a)
    dims = _axes(axis, a.ndim)
    cplx = _dtypes.issubdtype(_dtype(a), _np.complexfloating)
    # the shift is the (finite) max of the real parts; for complex ``a`` it is cast back to ``a``'s dtype
    amax = jnp.max(jnp.real(a) if cplx else a, axis=dims, keepdims=keepdims, where=where, initial=-_np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_b = amax if keepdims else jnp.expand_dims(amax, dims)
    if cplx:
        amax_b = amax_b.astype(_dtype(a))
    e = lax.exp(lax.sub(a, amax_b))   # the kept size-1 dims broadcast in the sub itself (as JAX's)
    if b is not None:
        e = lax.mul(e, b)
    s = jnp.sum(e, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(s)
    if return_sign or not cplx:
        s = jnp.abs(s)
    out = lax.add(lax.log(s), amax.astype(_dtype(s)) if _dtype(s) != _dtype(amax) else amax)
    if return_sign:
        return out, sign
    if b is not None and not _dtypes.issubdtype(_dtype(out), _np.complexfloating):
        out = jnp.where(sign < 0, jnp.array(_np.nan, dtype=_dtype(out)), out)
    return out


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``logsumexp(x) - log(n)``, ``n`` the number of terms reduced (those ``where`` selects). Mirrors
    ``jax.nn.logmeanexp``."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = jnp.asarray(x)
    if where is None:
        n = _np.prod([x.shape[d] for d in _axes(axis, x.ndim)], dtype=_np.int64)
        count = jnp.asarray(n, dtype=_dtype(lse))
    else:
        count = jnp.sum(jnp.broadcast_to(jnp.asarray(where), x.shape), axis=axis, keepdims=keepdims,
                        dtype=_dtype(lse))
    return lse - jnp.log(count)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x, axis, keepdims=True)``, computed stably; entries ``where`` leaves out are
    ``-inf``. Mirrors ``jax.nn.log_softmax``."""
    x = _arraylike("log_softmax", x)
    axes = _axes(axis, x.ndim)
    x_max = jnp.max(x, axes, where=where, initial=-_np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -_np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_lse = jnp.log(jnp.sum(jnp.exp(shifted), axes, where=where, keepdims=True))
    result = shifted - shifted_lse
    if where is not None:
        return jnp.where(where, result, -_np.inf)
    return result


def _softmax_impl(x, axis, where):
    x_max = jnp.max(x, axis, where=where, initial=-_np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -_np.inf)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def _softmax_rule(where):
    def rule(axis, primals, tangents):
        (x,), (x_dot,) = primals, tangents
        y = _softmax_impl(x, axis, where)
        return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))
    return rule


_softmax_cj = custom_jvp(lambda x, axis: _softmax_impl(x, axis, None), nondiff_argnums=(1,))
_softmax_cj.defjvp(_softmax_rule(None))


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis`` (int or tuple) after subtracting the max; entries ``where``
    leaves out are 0. Its jvp is JAX's custom rule ``y * (ẋ - Σ y ẋ)``. Mirrors ``jax.nn.softmax``."""
    x = _arraylike("softmax", x)
    axes = _axes(axis, x.ndim)
    if not _softmax_custom_jvp.value:
        # JAX 0.10.2's default: the max is subtracted through stop_gradient, no custom jvp
        x_max = jnp.max(x, axes, where=where, initial=-_np.inf, keepdims=True)
        x_safe = x if where is None else jnp.where(where, x, -_np.inf)
        unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
        result = unnormalized / jnp.sum(unnormalized, axes, where=where, keepdims=True)
        return result if where is None else jnp.where(where, result, 0)
    if where is None:
        return _softmax_cj(x, axes)
    cj = custom_jvp(lambda x, axis: _softmax_impl(x, axis, where), nondiff_argnums=(1,))
    cj.defjvp(_softmax_rule(where))
    return cj(x, axes)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"):
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis``; the mean and variance are computed when not
    given, the variance as ``E[x²] - E[x]²`` clipped at 0 (``algorithm="fast"``) or ``E[(x - mean)²]``
    (``"stable"``); another algorithm raises ``ValueError``. Mirrors ``jax.nn.standardize``."""
    x = _arraylike("standardize", x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """``x`` (integer class ids, any shape) as one-hot vectors of length ``num_classes`` inserted at
    ``axis``; ids out of range give all zeros; ``dtype`` defaults to the default float. Mirrors
    ``jax.nn.one_hot``."""
    try:
        num_classes = int(_np.asarray(num_classes)) if not isinstance(num_classes, int) else num_classes
    except Exception as e:  # a traced num_classes: JAX's concrete_dim_or_error
        raise TypeError("The error arose in jax.nn.one_hot argument `num_classes`: it must be a concrete "
                        f"integer, got {num_classes!r}") from e
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else jnp.float_)
    x = jnp.asarray(x)
    nd = x.ndim + 1
    if not -nd <= int(axis) < nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    return _one_hot_jit(x, num_classes=num_classes, dtype=dt, axis=int(axis) % nd)


def _one_hot(x, num_classes, *, dtype, axis):
    ax = axis
    lhs = jnp.expand_dims(x, ax)
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(ax, num_classes)
    rhs = lax.broadcasted_iota(_dtype(x), tuple(rhs_shape), ax)
    return (lhs == rhs).astype(dtype)


# as JAX's: the work is one jitted call, printed jit[name=_one_hot ...]
_one_hot_jit = _jit(_one_hot, static_argnames=("num_classes", "dtype", "axis"))


def _as_jax_jit(names, static_argnames=()):
    """Those of this module's functions that JAX's ``jax.nn`` decorates with ``jit``, jitted the same way, so
    that jaxprs show ``jit[name=silu ...]`` (and the calls between them nest as JAX's). The operand is
    checked before the call, so a list still raises the function's TypeError."""
    g = globals()
    for name in names:
        fn = g[name]
        jitted = _jit(fn, static_argnames=static_argnames)

        @_functools.wraps(fn)
        def call(x, *args, _jitted=jitted, _name=name, **kwargs):
            _promotion._operand(x, _name)
            return _jitted(x, *args, **kwargs)
        g[name] = call


_as_jax_jit(["squareplus", "softplus", "sparse_plus", "soft_sign", "sparse_sigmoid", "silu", "mish", "log_sigmoid",
             "elu", "leaky_relu", "celu", "selu", "hard_sigmoid", "hard_silu", "hard_tanh"])
_as_jax_jit(["log_softmax"], static_argnames=("axis",))
_as_jax_jit(["standardize"], static_argnames=("axis", "algorithm"))
swish = silu
hard_swish = hard_silu
