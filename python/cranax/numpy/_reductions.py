"""Reductions: ``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``, ``mean``, ``var``, ``std``,
``argmax``/``argmin``, ``array_equal``, ``allclose``. Mirrors ``jax.numpy``."""
import builtins

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import get_aval, typed_scalar
from ._promotion import _is_float, _promote, _to_inexact, asarray, astype, int_
from ._shapes import _canon_axes, broadcast_to, ravel, reshape
from ._ufuncs import (_where, add, equal, isclose, isnan, logical_and, logical_or, maximum, minimum, multiply,
                      sqrt, subtract, true_divide)


def _keep(x, axes, shape, keepdims):
    if not keepdims:
        return x
    # as JAX's lax.expand_dims: a broadcast_in_dim (jaxprs print it so)
    new_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return lax.broadcast_in_dim(x, new_shape, tuple(i for i in range(len(shape)) if i not in axes))


def _promote_integer_dtype(dt):
    """The dtype sum/prod/cumsum/cumprod accumulate ``dt`` in, as in JAX: bool and integers narrower than
    the default int (int32, or int64 with x64) become the default int; unsigned ones narrower than
    uint32 become uint32 (cranax has no uint64); anything else stays."""
    dt = _np.dtype(dt)
    if dt == _np.bool_:
        return _dtypes.default_int_dtype()
    if dt.kind == "u":
        u = _dtypes.default_uint_dtype()
        return u if dt.itemsize < u.itemsize else dt
    if dt.kind == "i":
        i = _dtypes.default_int_dtype()
        return i if dt.itemsize < i.itemsize else dt
    return dt


_F16 = _np.dtype(_np.float16)
_F32 = _np.dtype(_np.float32)


def _reduction(name, prim_fn, identity=None, upcast_bool=False, to_float=False, upcast_f16=False):
    def op(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        (a,) = _promote(name, a)
        if where is not None:
            # Masked-out elements become the reduction's identity (or `initial`, which JAX requires for
            # max/min).
            fill = identity if identity is not None else initial
            if fill is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so to use a where "
                                 f"mask one has to specify 'initial'")
            a = _where(where, a, fill)
        av = get_aval(a)
        axes = _canon_axes(axis, av.ndim, name)
        result_dtype = None
        if dtype is not None:
            a = astype(a, dtype)
        elif upcast_f16 and av.dtype == _F16:
            # JAX's upcast_f16_for_computation: accumulate in float32, round once at the end
            a = astype(a, _F32)
            result_dtype = _F16
        elif upcast_bool:
            up = _promote_integer_dtype(av.dtype)
            if up != av.dtype:
                a = astype(a, up)
        if identity is None and builtins.any(av.shape[i] == 0 for i in axes) and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        r = prim_fn(a, axes)
        if initial is not None:
            r = _binary_combine(name, r, initial)
        r = _keep(r, axes, av.shape, keepdims)
        return r if result_dtype is None else astype(r, result_dtype)
    op.__name__ = name
    op.__doc__ = (f"``{name}`` over ``axis`` (None: all; int or tuple), with ``keepdims``. Mirrors "
                  f"``jax.numpy.{name}``.")
    return op


def _binary_combine(name, r, initial):
    if name in ("sum",):
        return add(r, initial)
    if name == "prod":
        return multiply(r, initial)
    if name in ("max", "amax"):
        return maximum(r, initial)
    return minimum(r, initial)


def _sum_prim(a, axes):
    if get_aval(a).dtype == _np.bool_:
        a = astype(a, _dtypes.canonicalize_dtype(int_))
    return lax.reduce_sum(a, axes)


def _prod_prim(a, axes):
    if get_aval(a).dtype == _np.bool_:
        a = astype(a, _dtypes.canonicalize_dtype(int_))
    return lax.reduce_prod(a, axes)


sum = _reduction("sum", _sum_prim, identity=0, upcast_bool=True, upcast_f16=True)
prod = _reduction("prod", _prod_prim, identity=1, upcast_bool=True, upcast_f16=True)
max = _reduction("max", lax.reduce_max)
min = _reduction("min", lax.reduce_min)
amax = max
amin = min


def _all_prim(a, axes):
    return lax.reduce_and(astype(a, bool), axes)


def _any_prim(a, axes):
    return lax.reduce_or(astype(a, bool), axes)


all = _reduction("all", _all_prim, identity=True)
any = _reduction("any", _any_prim, identity=False)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis`` (ints and bools average in float32). Mirrors ``jax.numpy.mean``."""
    if where is not None:
        (a,) = _promote("mean", a)
        if dtype is None:
            dtype = get_aval(a).dtype if _dtypes.issubdtype(get_aval(a).dtype, _np.inexact) else _to_inexact(get_aval(a).dtype, get_aval(a).weak_type)
        w = broadcast_to(asarray(where), get_aval(a).shape)
        num = sum(astype(a, dtype), axis=axis, keepdims=keepdims, where=w)
        den = sum(astype(w, dtype), axis=axis, keepdims=keepdims)
        return true_divide(num, den)
    (a,) = _promote("mean", a)
    av = get_aval(a)
    axes = _canon_axes(axis, av.ndim, "mean")
    n = 1
    for i in axes:
        n *= av.shape[i]
    if dtype is None and av.dtype == _F16:
        # JAX computes the mean of float16 in float32 and rounds once
        return astype(mean(astype(a, _F32), axes, keepdims=keepdims), _F16)
    if dtype is None:
        dtype = av.dtype if _dtypes.issubdtype(av.dtype, _np.inexact) else _to_inexact(av.dtype, av.weak_type)
    s = sum(astype(a, dtype), axis=axes, keepdims=keepdims)
    return lax.div(s, typed_scalar(n, dtype, False) if n else typed_scalar(_np.nan, dtype, False)) if n \
        else lax.mul(s, typed_scalar(_np.nan, dtype, False))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance over ``axis``. Mirrors ``jax.numpy.var``."""
    if correction is not None:
        ddof = correction
    (a,) = _promote("var", a, to_float=True)
    av = get_aval(a)
    if dtype is None and av.dtype == _F16:
        # JAX's _var_promote_types: float16 is computed in float32 and rounded once
        return astype(var(astype(a, _F32), axis, ddof=ddof, keepdims=keepdims), _F16)
    axes = _canon_axes(axis, av.ndim, "var")
    n = 1
    for i in axes:
        n *= av.shape[i]
    centered = subtract(a, mean(a, axes, keepdims=True))
    if av.dtype.kind == "c":  # |x - mean|^2, real (as NumPy and JAX)
        sq = lax.add(lax.square(lax.real(centered)), lax.square(lax.imag(centered)))
    else:
        sq = lax.mul(centered, centered)
    return true_divide(sum(sq, axis=axes, keepdims=keepdims), builtins.max(n - ddof, 0))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return sqrt(var(a, axis, dtype, ddof=ddof, keepdims=keepdims, correction=correction))


def _argreduce(name, fn):
    def op(a, axis=None, out=None, keepdims=False):
        (a,) = _promote(name, a)
        av = get_aval(a)
        if axis is None:
            a = ravel(a)
            ax = 0
        else:
            ax = _canon_axes(axis, av.ndim, name)[0]
        r = fn(a, ax, _dtypes.canonicalize_dtype(int_))
        if keepdims:
            if axis is None:
                return reshape(r, (1,) * av.ndim)
            return _keep(r, (ax,), av.shape, True)
        return r
    op.__name__ = name
    op.__doc__ = f"Index of the first {name[3:]}imum along ``axis``. Mirrors ``jax.numpy.{name}``."
    return op


argmax = _argreduce("argmax", lax.argmax)
argmin = _argreduce("argmin", lax.argmin)


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))
