"""``add_any``: the sum of two tangents or cotangents (``ad.add_tangents``), JAX's ``ad_util.add_jaxvals_p``.
Typed as ``add`` and lowered as ``add``; kept apart from ``add`` so that printed jaxprs of derivatives
show where autodiff accumulated, as JAX's do. Also ``empty2`` (JAX's placeholder of a value nothing reads) and
``empty_like``, its per-aval form."""
import enum

import numpy as np

from .. import dtypes
from ..core import ShapedArray
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.partial_eval import trace_to_jaxpr
from ..jaxpr import Jaxpr, JaxprEqn, Literal, ShownParam, Var
from . import elementwise as _ew
from . import structural as _st
from .standard import standard_primitive

__all__ = ["add_any_p", "empty2_p", "empty_p", "empty_like", "MemorySpace"]


def _add_any_inline(eqn):
    a, b = (Var(v.aval) for v in eqn.invars)
    out = Var(eqn.outvars[0].aval)
    return Jaxpr([], [a, b], [out], [JaxprEqn([a, b], [out], _ew.add_p, {})]), eqn.invars


add_any_p = standard_primitive("add_any", _ew._binary_rule("add_any", _ew._NUM), elementwise=True)
add_any_p.inline_jaxpr = staticmethod(_add_any_inline)
add_any_p.broadcasts_size1 = True


def _add_any_jvp(primals, tangents):
    ans = add_any_p.bind(*primals)
    if all(_ad.is_zero(t) for t in tangents):
        return ans, _ad.Zero(_ad.get_aval(ans))
    return ans, _ad._fit(_ad.add_tangents(*tangents), ans)


_ad.jvp_rules[add_any_p] = _add_any_jvp
_ad.transpose_rules[add_any_p] = _ew._add_transpose
_ad.hooks["add"] = add_any_p.bind


# ----------------------------------------------------------------------------------------------- empty2

class MemorySpace(enum.Enum):
    """Where ``empty2`` places its value (its param prints ``memory_space=MemorySpace.Device``, as JAX's)."""
    Device = "device"


def _empty2_abstract(*, dtype, memory_space):
    return ShapedArray((), np.dtype(dtype))


def _empty2_inline(eqn):
    # an unspecified scalar, which cranax makes a zero (JAX lowers empty2 to a zero constant too)
    dt = eqn.outvars[0].aval.dtype
    out = Var(eqn.outvars[0].aval)
    lit = Literal(np.zeros((), dt)[()], ShapedArray((), dt))
    conv = JaxprEqn([lit], [out], _ew.convert_element_type_p, {"new_dtype": dt, "weak_type": False, "sharding": None})
    return Jaxpr([], [], [out], [conv]), []


empty2_p = standard_primitive("empty2", _empty2_abstract)
empty2_p.inline_jaxpr = staticmethod(_empty2_inline)
_batching.batching_rules[empty2_p] = lambda vals, dims, **params: (empty2_p.bind(**params), None)
# (no inputs: a constant, whose tangent is zero)
_ad.jvp_rules[empty2_p] = lambda primals, tangents, **params: (
    empty2_p.bind(**params), _ad.Zero(ShapedArray((), np.dtype(params["dtype"]))))


def empty_like(aval):
    """A placeholder of ``aval`` whose value nothing reads (JAX's ``ad_util.empty_like_aval``): a scalar
    ``empty2`` broadcast to the shape. Partial evaluation of ``cond`` fills the residual slots a branch does
    not produce with it."""
    e = empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device)
    return _st.broadcast_in_dim(e, aval.shape, ()) if aval.shape else e


# ----------------------------------------------------------------------------------------------- empty
# ``lax.empty``: an array whose contents are unspecified, a primitive as in JAX 0.10.2 (its params keep the
# dtype as the caller gave it, as JAX's print shows). Lowered as zeros (as JAX lowers it).

def _empty_abstract(*, shape, dtype, out_sharding):
    return ShapedArray(_shape(shape), dtypes.canonicalize_dtype(np.dtype(dtype)))


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


_empty_cache = {}


def _empty_inline(eqn):
    aval = eqn.outvars[0].aval
    jaxpr = _empty_cache.get(aval)
    if jaxpr is None:
        jaxpr = _empty_cache[aval] = trace_to_jaxpr(
            lambda: [_st.full(aval.shape, np.zeros((), aval.dtype)[()], aval.dtype)], []).jaxpr
    return jaxpr, []


def _dtype_text(dt):
    if isinstance(dt, np.dtype):
        return dt.name
    if isinstance(dt, type):
        return repr(dt)   # <class 'numpy.int32'>, <class 'float'>, cranax's scalar types
    return str(dt)


def _empty_pp_params(eqn):
    p = eqn.params
    return [("dtype", ShownParam(_dtype_text(p["dtype"]))), ("out_sharding", p["out_sharding"]), ("shape", p["shape"])]


def _empty_vmap(axis_data, vals, dims, *, shape, dtype, out_sharding):
    # as JAX 0.10.2: the value is made batched at once (one ``empty`` of the batched shape)
    return empty_p.bind(shape=(axis_data.size,) + _shape(shape), dtype=dtype, out_sharding=out_sharding), 0


empty_p = standard_primitive("empty", _empty_abstract)
empty_p.inline_jaxpr = staticmethod(_empty_inline)
empty_p.pp_params = _empty_pp_params
_batching.fancy_primitive_batchers[empty_p] = _empty_vmap
_ad.jvp_rules[empty_p] = lambda primals, tangents, **params: (
    empty_p.bind(**params), _ad.Zero(_empty_abstract(**params)))
