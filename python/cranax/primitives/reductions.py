"""Reductions over any set of axes: reduce_sum/max/min/prod/and/or, argmax/argmin, with their ``lax``
wrappers and rules."""
import numpy as np

from .. import dtypes
from ..core import ShapedArray
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from . import elementwise as _ew
from . import structural as _st
from .standard import standard_primitive


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
    # JAX 0.10.2 gives only reduce_sum an out_sharding param (and prints it); the others carry just axes
    if name == "reduce_sum":
        p.pp_params = lambda eqn: [("axes", tuple(eqn.params["axes"])),
                                   ("out_sharding", eqn.params.get("out_sharding"))]
    else:
        p.pp_params = lambda eqn: [("axes", tuple(eqn.params["axes"]))]
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
        if np.dtype(x.dtype).kind == "c":
            # JAX's text: its reducer compares with gt / lt, which take no complex operand
            cmp = "gt" if name == "argmax" else "lt"
            raise TypeError(f"{cmp} does not accept dtype {np.dtype(x.dtype).name} at position 0. Accepted dtypes "
                            "at position 0 are subtypes of integer, floating, bool.")
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


# ---- the lax wrappers ----

def _reduce(prim):
    def op(operand, axes):
        operand = _ew._as_operand(operand)
        axes = tuple(int(a) for a in axes)
        if prim is reduce_sum_p:
            return prim.bind(operand, axes=axes, out_sharding=None)
        return prim.bind(operand, axes=axes)
    op.__name__ = prim.name
    op.__doc__ = f"``{prim.name}`` over ``axes``. Mirrors ``jax.lax.{prim.name}``."
    return op


reduce_sum = _reduce(reduce_sum_p)
reduce_prod = _reduce(reduce_prod_p)
reduce_max = _reduce(reduce_max_p)
reduce_min = _reduce(reduce_min_p)
reduce_and = _reduce(reduce_and_p)
reduce_or = _reduce(reduce_or_p)


def argmax(operand, axis, index_dtype):
    """Index of the first maximum along ``axis``. Mirrors ``jax.lax.argmax``."""
    return argmax_p.bind(_ew._as_operand(operand), axes=(int(axis),),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the first minimum along ``axis``. Mirrors ``jax.lax.argmin``."""
    return argmin_p.bind(_ew._as_operand(operand), axes=(int(axis),),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


# ---- batching rules ----
# (vmap; see cranax.interpreters.batching). The batch axis stays where it is; reduced axes shift past it.


def _shift_axes(axes, bd):
    # as JAX's reducer_batcher: the shifted axes come out of np.where, so they are NumPy ints (jaxprs print
    # them as np.int64(...))
    axes = tuple(np.where(np.less(axes, bd), axes, np.add(axes, 1)))
    return axes, bd - sum(int(a) < bd for a in axes)


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


# ---- autodiff rules (jvp, transpose) ----



def _kept(ndim, axes):
    return tuple(i for i in range(ndim) if i not in axes)


def _reduce_sum_transpose(ct, x, axes, out_sharding=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    # np.delete, as JAX's transpose rule: the dimensions are NumPy ints (printed np.int64(...))
    return [_st.broadcast_in_dim(ct, x.aval.shape, tuple(np.delete(np.arange(x.aval.ndim), axes)))]


_ad.deflinear(reduce_sum_p, _reduce_sum_transpose)
_ad.hooks["reduce_sum"] = reduce_sum


def _chooser_jvp(g, ans, x, axes, out_sharding=None):
    """reduce_max/min: the tangent averaged over the locations that attain the extremum (as JAX)."""
    xa = _ad.get_aval(x)
    # as JAX: ans reshaped to the kept-dims shape, compared with size-1 broadcasting by ``eq``
    ans_b = _st.reshape(ans, tuple(1 if i in axes else d for i, d in enumerate(xa.shape)))
    loc = _ew.convert_element_type(_ew.eq(x, ans_b), _ad.get_aval(g).dtype)
    counts = reduce_sum(loc, axes)
    return _ew.div(reduce_sum(_ew.mul(g, loc), axes), counts)


_ad.defjvp2(reduce_max_p, _chooser_jvp)
_ad.defjvp2(reduce_min_p, _chooser_jvp)


def _reduce_prod_jvp(primals, tangents, axes, out_sharding=None):
    """JAX's rule (``_reduce_jvp``): the reduced axes moved to the front and flattened, then the jvp of a
    product tree (split in halves, the shorter half padded with 1, multiplied, until one row is left), so
    it is exact with zeros and ``make_jaxpr`` prints JAX's slice/pad/mul equations. The primal output is
    the tree's too, as JAX's."""
    (x,), (t,) = primals, tangents
    if type(t) is _ad.Zero:
        ans = reduce_prod_p.bind(x, axes=axes, out_sharding=out_sharding)
        return ans, _ad.Zero(_ad.get_aval(ans).strip_weak_type())
    xa = _ad.get_aval(x)
    axes = tuple(axes)
    non_axes = tuple(d for d in range(xa.ndim) if d not in axes)
    rest = tuple(xa.shape[d] for d in non_axes)
    new_shape = (int(np.prod([xa.shape[d] for d in axes], dtype=np.int64)),) + rest
    # (JAX stages one ``reshape[dimensions=perm]``; cranax's reshape transposes first when perm moves axes)
    x = _st.reshape(x, new_shape, axes + non_axes)
    t = _st.reshape(t, new_shape, axes + non_axes)
    one = np.array(1, xa.dtype)

    def tree(v):
        while _ad.get_aval(v).shape[0] > 1:
            n = _ad.get_aval(v).shape[0]
            n1 = (n + 1) // 2
            v1, v2 = _slice_rows(v, 0, n1), _slice_rows(v, n1, n)
            if n - n1 != n1:
                v2 = _st.pad(v2, one, [(0, 1, 0)] + [(0, 0, 0)] * len(rest))
            v = _ew.mul(v1, v2)
        if _ad.get_aval(v).shape[0] == 0:
            return _st.full(rest, one)
        return _st.squeeze(v, (0,))
    (p_out,), (t_out,) = _ad.jvp_flat(lambda v: [tree(v)], [x], [t])
    return p_out, t_out


def _slice_rows(v, start, stop):
    """``lax.slice_in_dim(v, start, stop)`` on axis 0 (its params as JAX prints them)."""
    shape = _ad.get_aval(v).shape
    return _st.slice_p.bind(v, start_indices=(start,) + (0,) * (len(shape) - 1), limit_indices=(stop,) + shape[1:],
                            strides=(1,) * len(shape))


_ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp
for _p in (reduce_and_p, reduce_or_p, argmax_p, argmin_p):
    _ad.defjvp_zero(_p)
del _p
