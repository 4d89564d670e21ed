"""Array creation: ``full``, ``zeros``, ``ones``, the ``*_like`` forms, ``arange``, ``linspace``, ``eye``,
``identity``, ``tri``. Mirrors ``jax.numpy``. (``array``/``asarray`` live with promotion.)"""
import builtins
import operator as _operator
import weakref

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..array import Array, _from_host
from ..core import Tracer, concrete_or_error, get_aval
from ..primitives import elementwise as _ew
from ._promotion import _to_inexact, _is_array, _shape_tuple, asarray, astype, float_, int_
from ._shapes import broadcast_to
from ._ufuncs import _where_jit


def _check_shape(shape, fn):
    shape = _shape_tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError(f"{fn}: negative dimensions are not allowed, got shape {shape}")
    return shape


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value``. Mirrors ``jax.numpy.full``."""
    shape = _check_shape(shape, "full")
    if dtype is None and not _is_array(fill_value):
        # lax.full without a dtype: a Python scalar gives a weakly typed array, as JAX's
        return lax.full(shape, fill_value)
    if _is_array(fill_value) and fill_value.ndim > 0:
        return broadcast_to(asarray(fill_value, dtype), shape)
    return lax.full(shape, fill_value, dtype)


def zeros(shape, dtype=None):
    """An array of zeros (float32 by default). Mirrors ``jax.numpy.zeros``."""
    return lax.full(_check_shape(shape, "zeros"), 0, _dtypes.canonicalize_dtype(dtype or float_))


def ones(shape, dtype=None):
    """An array of ones (float32 by default). Mirrors ``jax.numpy.ones``."""
    return lax.full(_check_shape(shape, "ones"), 1, _dtypes.canonicalize_dtype(dtype or float_))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    if not _is_array(a) and hasattr(a, "shape") and hasattr(a, "dtype"):
        # a ShapeDtypeStruct (or anything with both): JAX's *_like take its shape and dtype (optax does)
        av = get_aval(a) if hasattr(a, "aval") else None
        a_shape, a_dtype = (av.shape, av.dtype) if av is not None else (tuple(a.shape), a.dtype)
        return (a_shape if shape is None else _shape_tuple(shape)), (a_dtype if dtype is None else dtype)
    av = get_aval(asarray(a) if not _is_array(a) else a)
    return (av.shape if shape is None else _shape_tuple(shape)), (av.dtype if dtype is None else dtype)


def zeros_like(a, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return lax.full(s, 0, d)


def ones_like(a, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return lax.full(s, 1, d)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    s, d = _like(a, dtype, shape)
    return lax.full(s, fill_value, d)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``, 1-D, of ``dtype`` (default: the promoted type of the bounds,
    int32 or float32). Bounds must be concrete scalars (ValueError for arrays and complex values). Computed as
    JAX computes it: ``start + step * iota`` in float32 (or the dtype if wider), so float values can differ from
    NumPy's float64 ``arange`` in the last bit. Mirrors ``jax.numpy.arange``."""
    # JAX's texts; a lone bound is the stop
    start = concrete_or_error(start, f"It arose in the jnp.arange argument '{'stop' if stop is None else 'start'}'")
    stop = concrete_or_error(stop, "It arose in the jnp.arange argument 'stop'")
    step = concrete_or_error(step, "It arose in the jnp.arange argument 'step'")
    for name, v in (("stop" if stop is None and step is None else "start", start), ("stop", stop), ("step", step)):
        if v is not None and _np.ndim(v) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
        if v is not None and _np.iscomplexobj(v):
            raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported starting in "
                             "JAX v0.10.0.")
    if dtype is None:
        vals = [v for v in (start, stop, step) if v is not None]
        dtype = _dtypes.result_type(*[_np.asarray(v).item() if isinstance(v, Array) and not isinstance(v, Tracer) else v for v in vals])
        if builtins.all(isinstance(v, (bool, int, _np.integer)) for v in vals):
            dtype = _dtypes.canonicalize_dtype(int_)
    dtype = _dtypes.canonicalize_dtype(dtype)
    # As JAX 0.10.2: an iota, shifted and scaled by scalar literals (so a traced arange is ``iota`` equations,
    # and float steps are computed in float32 or wider, not in NumPy's float64).
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = _np.dtype(_np.float32) if (_dtypes.issubdtype(dtype, _np.floating)
                                             and _dtypes.finfo(dtype).bits < 32) else _np.dtype(dtype)
        size = builtins.max(0, int(_np.ceil((stop - start) / step)))
        out = _ew.add(working.type(start), _ew.mul(working.type(step), lax.iota(working, size)))
        return out if working == dtype else lax.convert_element_type(out, dtype)
    if start == 0:
        return lax.iota(dtype, builtins.max(0, int(_np.ceil(stop))))
    size = builtins.max(0, int(_np.ceil(stop - start)))
    return _ew.add(_np.dtype(dtype).type(start), lax.iota(dtype, size))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced samples over ``[start, stop]`` (arrays broadcast, the samples along ``axis``),
    computed as JAX's: ``start * (1 - step) + stop * step`` with ``step = iota / div`` in the computation
    dtype, as one jitted ``_linspace`` call. Mirrors ``jax.numpy.linspace``."""
    num = _operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return _linspace_jit(start, stop, num, bool(endpoint), bool(retstep),
                         None if dtype is None else _np.dtype(dtype), _operator.index(axis))


def _inexact(dt):
    return dt if _dtypes.issubdtype(dt, _np.inexact) else _to_inexact(dt, False)


def _linspace(start, stop, num, endpoint, retstep, dtype, axis, ramp=None):
    # (``ramp``: the compiled form's samples before the endpoint, ``_xla_ramp``; None traces JAX's jaxpr)
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = _inexact(_np.dtype(_dtypes.result_type(start, stop)))
    dtype = _np.dtype(_dtypes.canonicalize_dtype(dtype))
    cdt = _inexact(dtype)
    start, stop = astype(start, cdt), astype(stop, cdt)
    bounds = list(_np.broadcast_shapes(start.shape, stop.shape))
    bstart, bstop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    bounds.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = _ew.div(lax.convert_element_type(_ew.sub(stop, start), cdt), asarray(div, dtype=cdt))
        iota_shape = [1] * len(bounds)
        iota_shape[axis] = div
        real = _np.dtype(_dtypes.finfo(cdt).dtype)
        step = _ew.div(lax.reshape(lax.iota(real, div), tuple(iota_shape)), asarray(div, real))
        step = astype(step, cdt)
        if ramp is not None:
            out = ramp(start, stop, div, num, cdt)
        else:
            out = _ew.add(_ew.mul(lax.reshape(bstart, tuple(bounds)), _ew.sub(1, step)),
                          _ew.mul(lax.reshape(bstop, tuple(bounds)), step))
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(bstop, (axis,))], axis)
    elif num == 1:
        delta = asarray(_np.nan if endpoint else _ew.sub(stop, start), dtype=cdt)
        out = lax.reshape(bstart, tuple(bounds))
    else:   # num == 0: NumPy's empty result
        empty_shape = list(_np.broadcast_shapes(start.shape, stop.shape))
        empty_shape.insert(axis, 0)
        delta = full((), _np.nan, cdt)
        out = empty(tuple(empty_shape), dtype)
    if _dtypes.issubdtype(dtype, _np.integer) and not _dtypes.issubdtype(out.dtype, _np.integer):
        out = lax.floor(out)
    result = lax.convert_element_type(out, dtype)
    return (result, delta) if retstep else result


def eye(N, M=None, k=0, dtype=None):
    """The ``N×M`` identity (ones on diagonal ``k``). Mirrors ``jax.numpy.eye``."""
    M = N if M is None else M
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else float_)
    r = lax.broadcasted_iota(_np.int32, (N, M), 0)
    c = lax.broadcasted_iota(_np.int32, (N, M), 1)
    return lax.convert_element_type(lax.eq(lax.add(r, int(k)), c), dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dt = _dtypes.canonicalize_dtype(dtype if dtype is not None else float_)
    r = lax.broadcasted_iota(_np.int32, (N, M), 0)
    c = lax.broadcasted_iota(_np.int32, (N, M), 1)
    return lax.convert_element_type(lax.ge(lax.add(r, int(k)), c), dt)


# JAX's linspace is this jitted _linspace, num/endpoint/retstep/dtype/axis static (printed ``jit[name=_linspace]``)
from ..api import jit as _jit   # noqa: E402  (the API layer imports numpy lazily; bound last to avoid the cycle)
_linspace_jit = _jit(_linspace, static_argnums=(2, 3, 4, 5, 6))


# XLA:CPU compiles JAX's start * (1 - i/div) + stop * (i/div) (scalar bounds) as start * (1 - i*r) + i * (stop*r),
# r = 1/div rounded (its simplifier), and LLVM contracts it into FMAs in a way that depends on the trip count div
# (h-bits17, JAX 0.10.2 on this AMD EPYC AVX-512 host, XLA's preferred vector width 256 bits, 2 threads):
#   A = fma(i, stop*r, start * (1 - i*r))        B = fma(i, stop*r, start * fma(-i, r, 1))
#   C = fma(start, fma(-i, r, 1), i * (stop*r))  E = fma(start, 1 - i*r, stop*r)
# div <= 33: element 1 E, the others A; then A up to the vector threshold (on div); from there the vector body
# (the first div // width * width) B and the remainder A; from the partition threshold (on num, the fusion's
# elements: XLA splits the loop into parallel partitions) B for an even div, C for an odd one. float32: vector
# threshold 352, width 32, partitions from 4443 samples; float64: 176, 16, 65534 (bf20 refined h-bits17's
# unroll and partition limits with endpoint on and off). The element-1 rule and the vector width are LLVM's code
# for XLA's 256-bit preferred width (the same on an AVX2 host); the partition threshold is XLA's cost model
# for this host's 2 threads (another core count moves it). Float16/bfloat16 and array bounds keep JAX's form.
_XLA_RAMP = {_np.dtype(_np.float32): (352, 32, 4443), _np.dtype(_np.float64): (176, 16, 65534)}


def _xla_ramp_folded(start, stop, div, num, cdt):
    # XLA folds the samples of constant bounds: below the vector threshold (measured) every op rounded,
    # start * (1 - i*r) + i * (stop*r); above it its loops are not followed (the traced form is kept)
    return _xla_ramp(start, stop, div, num, cdt, folded=True)


def _xla_ramp(start, stop, div, num, cdt, folded=False):
    T = cdt.type
    vec, width, part = _XLA_RAMP[cdt]
    r = T(1) / T(div)
    sr = _ew.mul(stop, r)
    iota = lax.iota(cdt, div)

    def seg(lo, hi, form):
        n = hi - lo
        b = lambda v: lax.broadcast_in_dim(v, (n,), ())  # noqa: E731
        c = lambda v: lax.full((n,), T(v), cdt)  # noqa: E731
        i = lax.slice(iota, (lo,), (hi,))
        if form in "AEP":
            # 1 - i*r with the product rounded (an fma with 0, which the contraction pass leaves alone)
            om = _ew.sub(c(1), _ew.fma(i, c(r), c(0)))
        else:
            om = _ew.fma(_ew.neg(i), c(r), c(1))
        if form == "A" or form == "B":
            return _ew.fma(i, b(sr), _ew.mul(b(start), om))
        if form == "C":
            return _ew.fma(b(start), om, _ew.mul(i, b(sr)))
        if form == "P":
            # (both products as fmas with 0: rounded, with no product left for the contraction pass)
            return _ew.add(_ew.fma(b(start), om, c(0)), _ew.fma(i, b(sr), c(0)))
        return _ew.fma(b(start), om, b(sr))

    if folded and div < vec:
        parts = [(0, div, "P")]
    elif div <= 33:
        parts = [(0, 1, "A"), (1, min(2, div), "E"), (2, div, "A")]
    elif div < vec:
        parts = [(0, div, "A")]
    elif num < part:
        body = div // width * width
        parts = [(0, body, "B"), (body, div, "A")]
    else:
        parts = [(0, div, "C" if div % 2 else "B")]
    outs = [seg(lo, hi, f) for lo, hi, f in parts if hi > lo]
    return outs[0] if len(outs) == 1 else lax.concatenate(outs, 0)


_linspace_forms = weakref.WeakKeyDictionary()


def _linspace_lowering(closed, invars):
    """``_linspace``'s compiled form for scalar float32/float64 bounds (``_xla_ramp``; folded where both bounds
    are literals), when ``closed`` is the jaxpr ``_linspace`` traces for them; None otherwise
    (``interpreters.lowering.lowering_forms``)."""
    folded = invars is not None and len(invars) == 2 and builtins.all(type(v) is _Literal for v in invars)
    try:
        forms = _linspace_forms.setdefault(closed, {})
    except TypeError:
        return None
    if folded in forms:
        return forms[folded]
    alt = None
    ins, outs = list(closed.in_avals), list(closed.out_avals)
    if (len(ins) == 2 and builtins.all(a.ndim == 0 for a in ins) and len(outs) in (1, 2)
            and outs[0].ndim == 1 and outs[0].shape[0] > 1):
        num, retstep, dtype = outs[0].shape[0], len(outs) == 2, _np.dtype(outs[0].dtype)

        def traced(endpoint, ramp):
            def f(a, b):
                res = _linspace(a, b, num, endpoint, retstep, dtype, 0, ramp)
                return list(res) if retstep else [res]
            return _trace_to_jaxpr(f, ins)

        text = str(closed.jaxpr)
        for endpoint in (True, False):
            try:
                same = str(traced(endpoint, None).jaxpr) == text
            except Exception:   # (a signature _linspace cannot take: not its jaxpr)
                same = False
            if same:
                if _inexact(dtype) in _XLA_RAMP:
                    alt = traced(endpoint, _xla_ramp_folded if folded else _xla_ramp)
                break
    forms[folded] = alt
    return alt


from ..interpreters import lowering as _lowering   # noqa: E402
from ..interpreters.partial_eval import trace_to_jaxpr as _trace_to_jaxpr   # noqa: E402
from ..jaxpr import Literal as _Literal   # noqa: E402
_lowering.lowering_forms["_linspace"] = _linspace_lowering
