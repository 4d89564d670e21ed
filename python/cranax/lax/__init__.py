"""``cranax.lax``: thin wrappers that bind primitives. Mirrors ``jax.lax``.

Unlike ``cranax.numpy`` these functions do not promote dtypes: operands of a binary op must share a dtype,
except Python scalars, which take the other operand's dtype (weakly typed). Shapes must match, except
rank-0 values, which broadcast.
"""
import builtins

import numpy as np

from .. import dtypes
from ..core import Tracer, TypedScalar, get_aval, typed_scalar
from ..primitives import elementwise as _ew
from ..primitives import reductions as _red
from ..primitives import structural as _st

_PY = (bool, int, float)


def _is_literal_scalar(x):
    return isinstance(x, _PY + (np.generic, TypedScalar)) or (isinstance(x, np.ndarray) and x.ndim == 0)


def _coerce(x, like_dtype):
    """A Python scalar as a weakly typed scalar of ``like_dtype``."""
    if isinstance(x, _PY):
        return typed_scalar(x, like_dtype, True)
    return x


def _as_operand(x):
    if isinstance(x, _PY):
        return typed_scalar(x, dtypes.dtype(x, canonicalize=True), True)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax operations require array operands, got {type(x).__name__}")
    if isinstance(x, np.ndarray) and x.ndim > 0 or isinstance(x, np.generic):
        dt = dtypes.canonicalize_dtype(x.dtype)
        return np.asarray(x, dt) if x.dtype != dt else x
    return x


def _broadcast_rank0(args, shape):
    """Broadcasts rank-0 non-literal operands to ``shape`` (jaxprs let only literals mix ranks)."""
    if not shape:
        return args
    out = []
    for a in args:
        av = get_aval(a)
        if av.shape != shape and av.ndim == 0 and not _is_literal_scalar(a):
            a = broadcast_in_dim(a, shape, ())
        out.append(a)
    return out


_FAST_TYPES = (Tracer, TypedScalar)


def _nary(prim):
    bind = prim.bind

    def op(*args):
        # Fast path: operands that already carry avals of one dtype, shapes equal or rank 0.
        try:
            avals = [a.aval for a in args]
        except AttributeError:
            avals = None
        if avals is not None:
            dt = avals[0].dtype
            shape = None
            ok = True
            for a in avals:
                if a.dtype is not dt and a.dtype != dt:
                    ok = False
                    break
                if a.shape:
                    if shape is None:
                        shape = a.shape
                    elif a.shape != shape:
                        ok = False
                        break
            if ok and (shape is None or all(a.shape or type(x) is TypedScalar for a, x in zip(avals, args))):
                return bind(*args)
        dt = None
        for a in args:
            if not isinstance(a, _PY):
                dt = get_aval(_as_operand(a)).dtype
                break
        if dt is None:  # only Python scalars: they meet at their promoted (weak) type
            dt = dtypes.result_type(*args)
        args = [_coerce(a, dt) for a in args]
        args = [_as_operand(a) for a in args]
        avals = [get_aval(a) for a in args]
        shape = _ew.broadcast_shapes_of(prim.name, avals)
        return prim.bind(*_broadcast_rank0(args, shape))
    op.__name__ = prim.name
    op.__doc__ = (f"Elementwise ``{prim.name}`` (the ``{prim.name}`` primitive). Mirrors ``jax.lax."
                  f"{prim.name}``. Raises ``TypeError`` for mismatched dtypes or shapes.")
    return op


neg = _nary(_ew.neg_p)
abs = _nary(_ew.abs_p)
sign = _nary(_ew.sign_p)
floor = _nary(_ew.floor_p)
ceil = _nary(_ew.ceil_p)
exp = _nary(_ew.exp_p)
exp2 = _nary(_ew.exp2_p)
log = _nary(_ew.log_p)
log1p = _nary(_ew.log1p_p)
expm1 = _nary(_ew.expm1_p)
sqrt = _nary(_ew.sqrt_p)
rsqrt = _nary(_ew.rsqrt_p)
cbrt = _nary(_ew.cbrt_p)
sin = _nary(_ew.sin_p)
cos = _nary(_ew.cos_p)
tan = _nary(_ew.tan_p)
tanh = _nary(_ew.tanh_p)
logistic = _nary(_ew.logistic_p)
erf = _nary(_ew.erf_p)
erf_inv = _nary(_ew.erf_inv_p)
asin = _nary(_ew.asin_p)
acos = _nary(_ew.acos_p)
atan = _nary(_ew.atan_p)
sinh = _nary(_ew.sinh_p)
cosh = _nary(_ew.cosh_p)
asinh = _nary(_ew.asinh_p)
acosh = _nary(_ew.acosh_p)
atanh = _nary(_ew.atanh_p)
lgamma = _nary(_ew.lgamma_p)
digamma = _nary(_ew.digamma_p)
bitwise_not = _nary(_ew.not_p)
square = _nary(_ew.square_p)
is_finite = _nary(_ew.is_finite_p)
population_count = _nary(_ew.population_count_p)

add = _nary(_ew.add_p)
sub = _nary(_ew.sub_p)
mul = _nary(_ew.mul_p)
div = _nary(_ew.div_p)
rem = _nary(_ew.rem_p)
max = _nary(_ew.max_p)
min = _nary(_ew.min_p)
pow = _nary(_ew.pow_p)
atan2 = _nary(_ew.atan2_p)
nextafter = _nary(_ew.nextafter_p)
bitwise_and = _nary(_ew.and_p)
bitwise_or = _nary(_ew.or_p)
bitwise_xor = _nary(_ew.xor_p)
shift_left = _nary(_ew.shift_left_p)
shift_right_logical = _nary(_ew.shift_right_logical_p)
shift_right_arithmetic = _nary(_ew.shift_right_arithmetic_p)
eq = _nary(_ew.eq_p)
ne = _nary(_ew.ne_p)
lt = _nary(_ew.lt_p)
le = _nary(_ew.le_p)
gt = _nary(_ew.gt_p)
ge = _nary(_ew.ge_p)
_clamp = _nary(_ew.clamp_p)


def clamp(min, x, max):
    """``min(max(x, min), max)`` elementwise; ``min``/``max`` scalar or shaped like ``x``. Mirrors
    ``jax.lax.clamp``."""
    return _clamp(min, x, max)


class RoundingMethod:
    """``lax.round``'s rounding modes (``jax.lax.RoundingMethod``)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=0):
    """Rounds to the nearest integer: half away from zero (``rounding_method=0``) or half to even (1).
    Mirrors ``jax.lax.round``."""
    x = _as_operand(x)
    return _ew.round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    """``x ** y`` for a static Python int ``y``. Mirrors ``jax.lax.integer_pow``."""
    return _ew.integer_pow_p.bind(_as_operand(x), y=int(y))


def select_n(which, *cases):
    """``cases[which]`` elementwise; ``which`` is bool (two cases) or int32. Mirrors ``jax.lax.select_n``."""
    dt = None
    for c in cases:
        if not isinstance(c, _PY):
            dt = get_aval(_as_operand(c)).dtype
            break
    cases = [_as_operand(_coerce(c, dt) if dt is not None else c) for c in cases]
    which = _as_operand(which)
    shape = _ew.broadcast_shapes_of("select_n", [get_aval(c) for c in cases])
    cases = _broadcast_to_shape(cases, shape)
    return _ew.select_n_p.bind(which, *cases)


def _broadcast_to_shape(args, shape):
    out = []
    for a in args:
        av = get_aval(a)
        if av.shape != shape:
            a = broadcast_in_dim(a, shape, ())
        out.append(a)
    return out


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false``. Mirrors ``jax.lax.select``."""
    return select_n(pred, on_false, on_true)


def convert_element_type(operand, new_dtype):
    """``operand`` converted to ``new_dtype`` (floats → ints truncate toward zero and saturate, NaN → 0).
    Mirrors ``jax.lax.convert_element_type``."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    return _convert(operand, new_dtype, False)


def _convert(x, new_dtype, weak_type):
    if isinstance(x, (_PY, np.generic, TypedScalar)) or isinstance(x, np.ndarray) and x.ndim == 0:
        return typed_scalar(x, new_dtype, weak_type)
    if isinstance(x, np.ndarray):
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(new_dtype)
    av = get_aval(x)
    if av.dtype == new_dtype and av.weak_type == weak_type:
        return x
    return _ew.convert_element_type_p.bind(x, new_dtype=np.dtype(new_dtype), weak_type=bool(weak_type),
                                           sharding=None)


def bitcast_convert_type(operand, new_dtype):
    """Reinterprets the bits of ``operand`` as ``new_dtype`` (same width). Mirrors
    ``jax.lax.bitcast_convert_type``."""
    return _ew.bitcast_convert_type_p.bind(_as_operand(operand), new_dtype=dtypes.canonicalize_dtype(new_dtype))


def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    """``operand`` broadcast to ``shape``; operand dim ``i`` maps to ``broadcast_dimensions[i]``. Mirrors
    ``jax.lax.broadcast_in_dim``."""
    operand = _as_operand(operand)
    shape = tuple(int(d) for d in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if get_aval(operand).shape == shape and dims == tuple(range(len(shape))):
        return operand
    if isinstance(operand, TypedScalar):
        operand = operand  # a literal broadcast still needs the equation
    return _st.broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims, sharding=None)


def broadcast(operand, sizes):
    """``operand`` with leading dimensions ``sizes`` added. Mirrors ``jax.lax.broadcast``."""
    av = get_aval(_as_operand(operand))
    sizes = tuple(sizes)
    return broadcast_in_dim(operand, sizes + av.shape, tuple(range(len(sizes), len(sizes) + av.ndim)))


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    """``operand`` reshaped (row-major) to ``new_sizes``; ``dimensions`` transposes first. Mirrors
    ``jax.lax.reshape``."""
    operand = _as_operand(operand)
    if dimensions is not None and tuple(dimensions) != tuple(range(get_aval(operand).ndim)):
        operand = transpose(operand, dimensions)
    new_sizes = tuple(int(d) for d in new_sizes)
    if get_aval(operand).shape == new_sizes:
        return operand
    return _st.reshape_p.bind(operand, new_sizes=new_sizes, dimensions=None, sharding=None)


def squeeze(array, dimensions):
    """``array`` without the size-1 ``dimensions``. Mirrors ``jax.lax.squeeze``."""
    array = _as_operand(array)
    nd = get_aval(array).ndim
    dims = tuple(sorted(int(d) % nd if nd else int(d) for d in dimensions))
    if not dims:
        return array
    return _st.squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    """``array`` with size-1 axes inserted at ``dimensions``. Mirrors ``jax.lax.expand_dims``."""
    array = _as_operand(array)
    av = get_aval(array)
    nd = av.ndim + len(dimensions)
    dims = sorted(int(d) % nd for d in dimensions)
    shape = list(av.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(nd) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


def transpose(operand, permutation):
    """``operand`` with axes permuted. Mirrors ``jax.lax.transpose``."""
    operand = _as_operand(operand)
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))):
        return operand
    return _st.transpose_p.bind(operand, permutation=perm)


def iota(dtype, size):
    """``[0, 1, ..., size-1]`` of ``dtype``. Mirrors ``jax.lax.iota``."""
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype, shape, dimension, out_sharding=None):
    """An array of ``shape`` whose value is the index along ``dimension``. Mirrors
    ``jax.lax.broadcasted_iota``."""
    return _st.iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=tuple(int(s) for s in shape),
                           dimension=int(dimension), sharding=None)


def _reduce(prim):
    def op(operand, axes):
        operand = _as_operand(operand)
        axes = tuple(int(a) for a in axes)
        return prim.bind(operand, axes=axes, out_sharding=None)
    op.__name__ = prim.name
    op.__doc__ = f"``{prim.name}`` over ``axes``. Mirrors ``jax.lax.{prim.name}``."
    return op


reduce_sum = _reduce(_red.reduce_sum_p)
reduce_prod = _reduce(_red.reduce_prod_p)
reduce_max = _reduce(_red.reduce_max_p)
reduce_min = _reduce(_red.reduce_min_p)
reduce_and = _reduce(_red.reduce_and_p)
reduce_or = _reduce(_red.reduce_or_p)


def argmax(operand, axis, index_dtype):
    """Index of the first maximum along ``axis``. Mirrors ``jax.lax.argmax``."""
    return _red.argmax_p.bind(_as_operand(operand), axes=(int(axis),),
                              index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the first minimum along ``axis``. Mirrors ``jax.lax.argmin``."""
    return _red.argmin_p.bind(_as_operand(operand), axes=(int(axis),),
                              index_dtype=dtypes.canonicalize_dtype(index_dtype))


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``. Mirrors ``jax.lax.full``."""
    shape = tuple(int(s) for s in shape) if not isinstance(shape, int) else (shape,)
    if dtype is None:
        weak = dtypes.is_weakly_typed(fill_value)
        dt = get_aval(_as_operand(fill_value)).dtype
    else:
        weak = False
        dt = dtypes.canonicalize_dtype(dtype)
    if isinstance(fill_value, Tracer) or hasattr(fill_value, "_buf"):
        v = _convert(fill_value, dt, weak)
    else:
        v = typed_scalar(np.asarray(fill_value), dt, weak)
    out = broadcast_in_dim(v, shape, ())
    if isinstance(out, TypedScalar):  # shape (): still an Array, as in JAX
        from ..array import _from_host
        out = _from_host(out)
    return out


def full_like(x, fill_value, dtype=None, shape=None):
    """Like ``full`` with ``x``'s shape and dtype by default. Mirrors ``jax.lax.full_like``."""
    av = get_aval(_as_operand(x))
    return full(av.shape if shape is None else shape, fill_value, av.dtype if dtype is None else dtype)


def zeros_like_array(x):
    return full_like(x, 0)


def stop_gradient(x):
    """``x`` with no gradient flowing through. Mirrors ``jax.lax.stop_gradient`` (identity until the
    autodiff rules are registered)."""
    from ..tree_util import tree_map
    stop = getattr(_ew, "_stop_gradient", None)
    return tree_map(stop if stop is not None else (lambda v: v), x)


def div_floor_int(x, y):
    return div(x, y)


# ---- linalg / shape / indexing primitives (primitives/linalg.py) ----
from ..primitives.linalg import (  # noqa: E402
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, concatenate, cummax, cummin, cumprod,
    cumsum, dot, dot_general, dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice,
    dynamic_update_slice_in_dim, gather, scatter, scatter_add, scatter_max, scatter_min, scatter_mul, sort,
    sort_key_val)
from ..primitives.linalg import lax_pad as pad, lax_rev as rev, lax_slice as slice  # noqa: E402
from ..primitives.linalg import slice_in_dim, index_in_dim, top_k  # noqa: E402,F401
from .control_flow import cond, switch, while_loop, fori_loop, scan, map  # noqa: E402,F401

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("np", "builtins", "dtypes", "Tracer",
                                                                   "TypedScalar", "get_aval", "typed_scalar")]
