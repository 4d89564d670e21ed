"""Reductions over any set of axes: reduce_sum/max/min/prod/and/or, argmax/argmin."""
import numpy as np

from .. import dtypes
from ..core import ShapedArray
from . import standard_primitive


def _check_axes(name, x, axes):
    axes = tuple(int(a) for a in axes)
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: invalid axes {axes} for operand of shape {x.shape}")
    return axes


def _reduce_rule(name, kind):
    def abstract_eval(x, axes, out_sharding=None):
        axes = _check_axes(name, x, axes)
        if kind == "num" and x.dtype == np.bool_:
            raise TypeError(f"{name} does not accept dtype bool.")
        if kind == "bool" and x.dtype != np.bool_ and not dtypes.issubdtype(x.dtype, np.integer):
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}.")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract_eval


def _reduce_prim(name, kind):
    p = standard_primitive(name, _reduce_rule(name, kind),
                           wire=lambda eqn: {"axes": [int(a) for a in eqn.params["axes"]]})
    p.pp_params = lambda eqn: [("axes", tuple(eqn.params["axes"])),
                               ("out_sharding", eqn.params.get("out_sharding"))]
    return p


reduce_sum_p = _reduce_prim("reduce_sum", "num")
reduce_prod_p = _reduce_prim("reduce_prod", "num")
reduce_max_p = _reduce_prim("reduce_max", "any")
reduce_min_p = _reduce_prim("reduce_min", "any")
reduce_and_p = _reduce_prim("reduce_and", "bool")
reduce_or_p = _reduce_prim("reduce_or", "bool")


def _arg_rule(name):
    def abstract_eval(x, axes, index_dtype):
        axes = _check_axes(name, x, axes)
        if len(axes) != 1:
            raise ValueError(f"{name} takes exactly one axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(f"{name} of an empty axis (operand shape {x.shape}, axis {axes[0]})")
        shape = tuple(d for i, d in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, index_dtype, False)
    return abstract_eval


def _arg_wire(eqn):
    return {"axes": [int(a) for a in eqn.params["axes"]],
            "index_dtype": dtypes.short_name(eqn.params["index_dtype"])}


argmax_p = standard_primitive("argmax", _arg_rule("argmax"), wire=_arg_wire)
argmin_p = standard_primitive("argmin", _arg_rule("argmin"), wire=_arg_wire)

# ---- batching rules ----
# (vmap; see cranax.interpreters.batching). The batch axis stays where it is; reduced axes shift past it.
from ..interpreters import batching as _batching  # noqa: E402


def _shift_axes(axes, bd):
    axes = tuple(int(a) + (int(a) >= bd) for a in axes)
    return axes, bd - sum(a < bd for a in axes)


def _reduce_batch_rule(prim):
    def rule(vals, dims, axes, **params):
        (x,), (bd,) = vals, dims
        new_axes, out_bd = _shift_axes(axes, bd)
        return prim.bind(x, axes=new_axes, **params), out_bd
    return rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p, argmax_p,
           argmin_p):
    _batching.batching_rules[_p] = _reduce_batch_rule(_p)
del _p
