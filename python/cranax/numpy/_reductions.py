"""Reductions: ``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``, ``mean``, ``var``, ``std``,
``argmax``/``argmin``, ``array_equal``, ``allclose``. Mirrors ``jax.numpy``."""
import builtins

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..primitives import elementwise as _ew
from ..api import jit
from ..core import get_aval, typed_scalar
from ._promotion import _is_float, _promote, _to_inexact, asarray, astype, int_
from ._shapes import _canon_axes, broadcast_to, ravel, reshape
from ._ufuncs import (_where_jit, add, equal, isclose, isnan, logical_and, logical_or, maximum, minimum, multiply,
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
        if where is not None and identity is None and initial is None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a where "
                             f"mask one has to specify 'initial'")
        av = get_aval(a)
        axes = _canon_axes(axis, av.ndim, name)
        result_dtype = None
        if upcast_bool and av.dtype == _np.bool_ and dtype is not None:
            a = astype(a, _dtypes.canonicalize_dtype(int_))   # JAX's _cast_to_numeric comes first
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
        if name not in ("any", "all"):   # those cast to bool first
            # JAX converts to the computation dtype, strong: jnp.sum(2.0) is not weakly typed
            a = _ew.strip_weak(a)
        if where is not None:
            # as JAX, after the conversion to the computation dtype: masked-out elements become the
            # reduction op's identity (one jitted _where)
            a = _where_jit(where, a, _init_val(get_aval(a).dtype, _OP_IDENTITY[name]))
        r = prim_fn(a, axes)
        if initial is not None:
            r = _binary_combine(name, r, initial)
        r = _keep(r, axes, av.shape, keepdims)
        return r if result_dtype is None else astype(r, result_dtype)
    op.__name__ = name
    op.__doc__ = (f"``{name}`` over ``axis`` (None: all; int or tuple), with ``keepdims``. Mirrors "
                  f"``jax.numpy.{name}``.")
    return op


_OP_IDENTITY = {"sum": 0, "prod": 1, "max": -_np.inf, "min": _np.inf, "all": True, "any": False}


def _init_val(dt, v):
    """JAX's ``_reduction_init_val``: the identity ``v`` as a NumPy scalar of ``dt`` (an infinity an integer
    or a no-inf float cannot hold becomes its extreme value)."""
    if dt == _np.bool_:
        return _np.array(v > 0, dtype=dt)
    if _np.isinf(v) and dt.kind in "iu":
        info = _np.iinfo(dt)
        return _np.array(info.min if v < 0 else info.max, dtype=dt)
    out = _np.array(v, dtype=dt)
    if _np.isinf(v) and not _np.isinf(out.astype(_np.float32)):   # a float type without infinities
        fi = _dtypes.finfo(dt)
        return _np.array(fi.min if v < 0 else fi.max, dtype=dt)
    return out


def _binary_combine(name, r, initial):
    """JAX: ``op(initial, result)``, the initial value converted to the result's dtype (a literal)."""
    dt = get_aval(r).dtype
    init = lax.convert_element_type(initial, dt)
    if get_aval(init).shape != ():
        raise ValueError(f"initial value must be a scalar. Got array of shape {get_aval(init).shape}")
    op = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "amax": lax.max, "all": lax.bitwise_and,
          "any": lax.bitwise_or}.get(name, lax.min)
    return op(init, r)


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
        av = get_aval(a)
        result_dtype = dtype
        if dtype is None:
            result_dtype = av.dtype if _dtypes.issubdtype(av.dtype, _np.inexact) else _to_inexact(av.dtype, av.weak_type)
        comp = _F32 if result_dtype == _F16 else result_dtype   # JAX's _upcast_f16
        # JAX's _mean: the count of where first, then the masked sum
        den = sum(broadcast_to(asarray(where), av.shape), axis=axis, dtype=comp, keepdims=keepdims)
        num = sum(a, axis=axis, dtype=comp, keepdims=keepdims, where=where)
        return astype(lax.div(num, den), result_dtype)
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


def _ensure_optional_axes(axis):
    """A static axis argument as JAX's jit takes it (a list becomes a tuple)."""
    return tuple(axis) if isinstance(axis, (list, _np.ndarray)) else axis


def _correction(ddof, correction):
    """The count correction ``var``/``std`` take: ``correction`` or else ``ddof`` (JAX's error when both)."""
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Variance over ``axis`` (``correction``/``ddof`` subtracted from the count, ``where`` masking), as one
    jitted call (printed ``jit[name=_var]``). Mirrors ``jax.numpy.var``."""
    correction = _correction(ddof, correction)
    (a,) = _promote("var", a)
    return _var_jit(a, axis=_ensure_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                    keepdims=keepdims, where=where, a_mean=mean)


def _var_promote_types(a_dtype, dtype):
    if dtype is not None:
        dtype = _np.dtype(dtype)
        if dtype.kind != "c" and a_dtype.kind == "c":
            raise ValueError("jax.numpy.var does not yet support real dtype parameters when computing the variance "
                             "of an array of complex values. The semantics of numpy.var seem unclear in this case. "
                             "Please comment on https://github.com/jax-ml/jax/issues/2283 if this behavior is "
                             "important to you.")
        computation = dtype
    elif not _dtypes.issubdtype(a_dtype, _np.inexact):
        dtype = computation = _to_inexact(a_dtype, False)
    else:
        dtype = _np.array(0, a_dtype).real.dtype
        computation = a_dtype
    return (_F32 if computation == _F16 else computation), _np.dtype(dtype)


def _var(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False, where=None, a_mean=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.var is not supported.")
    av = get_aval(a)
    computation_dtype, dtype = _var_promote_types(av.dtype, dtype)
    a = astype(a, computation_dtype)
    if a_mean is None:
        a_mean = globals()["mean"](a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = astype(asarray(a_mean), computation_dtype)
    centered = lax.sub(a, a_mean)
    if computation_dtype.kind == "c":
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation_dtype = get_aval(centered).dtype   # no cast back to complex below
    else:
        centered = lax.square(centered)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    normalizer = lax.sub(normalizer, lax.convert_element_type(correction, computation_dtype))
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = astype(lax.div(result, normalizer), dtype)
    return _where_jit(lax.gt(normalizer, _np.array(0, computation_dtype)), result, _np.nan)


# JAX's _var: jitted with the axis, dtype and keepdims static
_var_jit = jit(_var, static_argnames=("axis", "dtype", "keepdims"))


def _count(a, axis, keepdims, where, dtype):
    """JAX's ``_count``: the number of elements reduced (a constant), or the sum of the ``where`` mask."""
    av = get_aval(a)
    if where is None:
        n = 1
        for i in _canon_axes(axis, av.ndim, "var"):
            n *= av.shape[i]
        return lax.convert_element_type(n, dtype)
    return sum(broadcast_to(asarray(where), av.shape), axis, dtype=dtype, keepdims=keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Standard deviation: the square root of ``var``, as one jitted call (printed ``jit[name=_std]``).
    Mirrors ``jax.numpy.std``."""
    correction = _correction(ddof, correction)
    (a,) = _promote("std", a)
    return _std_jit(a, axis=_ensure_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                    keepdims=keepdims, where=where, mean=mean)


def _std(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False, where=None, mean=None):
    if dtype is not None and not _dtypes.issubdtype(dtype, _np.inexact):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.std is not supported.")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims, where=where,
                        mean=mean))


_std_jit = jit(_std, static_argnames=("axis", "dtype", "keepdims"))


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


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to ``b`` by ``isclose``'s rule (an infinite ``b`` only to
    itself); a bool scalar. One jitted call with ``equal_nan`` static, as JAX's. Mirrors
    ``jax.numpy.allclose``."""
    return all(isclose(a, b, rtol, atol, equal_nan))


_allclose.__name__ = "allclose"
allclose = jit(_allclose, static_argnames=("equal_nan",))
