"""Windowed reductions: ``reduce_window`` (its monoid primitives ``reduce_window_sum``/``_max``/``_min`` and
the general ``reduce_window`` with a jaxpr computation), the max/min-pool derivatives
``select_and_gather_add`` (jvp) and ``select_and_scatter_add`` (its transpose), and ``cumlogsumexp``; with
their ``lax`` wrappers, abstract evals, jvp/transpose and batching rules. Mirrors ``jax.lax.reduce_window``
and the primitives of the same names.

Lowering: ``reduce_window_sum/max/min`` and ``select_and_scatter_add`` on float32/float64/int32/int64/
uint32 go to the core's library ops (``rust/backend/cpu/library/window.rs``, direct loops); the other
dtypes and primitives are inlined from primitives the core has: the operand padded (and base-dilated)
with the reduction's identity, one strided ``slice`` per window offset, combined elementwise. GPU: the
library steps run on the host (no window shader), the compositions on the GPU.
"""
import itertools

import numpy as np

from .. import dtypes
from ..core import ShapedArray, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.eval import eval_jaxpr
from ..interpreters.partial_eval import trace_to_jaxpr
from ..jaxpr import ClosedJaxpr
from .._pytree import tree_flatten, tree_unflatten
from . import elementwise as _ew
from . import library as _lib
from . import structural as _st
from .convolution import padtype_to_pads
from .standard import standard_primitive

__all__ = ["cumlogsumexp", "cumlogsumexp_p", "reduce_window", "reduce_window_max_p", "reduce_window_min_p",
           "reduce_window_p", "reduce_window_shape_tuple", "reduce_window_sum_p", "select_and_gather_add_p",
           "select_and_scatter_add_p"]


def _ints(xs):
    return tuple(int(x) for x in xs)


def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """The output shape of a windowed reduction. Mirrors ``jax.lax.reduce_window_shape_tuple``."""
    n = len(operand_shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(operand_shape, window_dimensions, window_strides, padding, base_dilation,
                                         window_dilation):
        a = _dilate(d, bd) + lo + hi
        b = _dilate(w, wd)
        out.append(max(0, (a - b) // s + 1))
    return tuple(out)


def _check_window(name, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    n = len(shape)
    for what, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                    ("padding", padding), ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(v) != n:
            raise TypeError(f"{name}: {what} {tuple(v)} must have one entry per operand dimension (operand shape "
                            f"{tuple(shape)})")
    for what, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                    ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if any(x < 1 for x in v):
            raise TypeError(f"{name}: {what} must be positive, got {tuple(v)}")


# ----------------------------------------------------------------------------------------------- the windows

def _windows(x, init, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """``x`` padded and base-dilated with ``init``, and its strided slice at each window offset (all of the
    output's shape), in row-major offset order."""
    shape = get_aval(x).shape
    out = reduce_window_shape_tuple(shape, window_dimensions, window_strides, padding, base_dilation,
                                    window_dilation)
    cfg = tuple((lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation))
    if any(c != (0, 0, 0) for c in cfg):
        x = _st.pad(x, init, cfg)
    if any(o == 0 for o in out):
        return out, []
    slices = []
    for k in itertools.product(*(range(w) for w in window_dimensions)):
        start = tuple(ki * wd for ki, wd in zip(k, window_dilation))
        limit = tuple(s + (o - 1) * st + 1 for s, o, st in zip(start, out, window_strides))
        strides = None if all(st == 1 for st in window_strides) else tuple(window_strides)
        slices.append(_st.slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides))
    return out, slices


def _tree_fold(f, xs):
    while len(xs) > 1:
        xs = [f(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
    return xs[0]


def _identity(kind, dt):
    dt = np.dtype(dt)
    if kind == "sum":
        return np.array(0, dt)
    if dt == np.bool_:
        return np.array(kind == "min")
    if dtypes.issubdtype(dt, np.floating):
        return np.array(-np.inf if kind == "max" else np.inf, dt)
    info = np.iinfo(dt)
    return np.array(info.min if kind == "max" else info.max, dt)


_COMBINE = {"sum": lambda a, b: _ew.add(a, b), "max": lambda a, b: _ew.max(a, b),
            "min": lambda a, b: _ew.min(a, b)}


def _monoid_fold(kind, x, params):
    dt = get_aval(x).dtype
    init = _st.full((), _identity(kind, dt), dt)
    out, slices = _windows(x, init, **params)
    if not slices:
        return _st.full(out, _identity(kind, dt), dt)
    return _tree_fold(_COMBINE[kind], slices)


_inline_cache = {}


def _inline(key, fn, avals):
    jaxpr = _inline_cache.get(key)
    if jaxpr is None:
        closed = trace_to_jaxpr(fn, list(avals))
        if closed.consts:
            raise NotImplementedError("reduce_window: a computation that closes over arrays cannot be lowered")
        jaxpr = _inline_cache[key] = closed.jaxpr
    return jaxpr


def _params_key(params):
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


# ----------------------------------------------------------------------------------------------- monoid primitives

_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")


def _monoid_abstract(name, kind):
    def abstract(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        _check_window(name, x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
        if kind == "sum" and x.dtype == np.bool_:
            raise TypeError(f"{name} does not accept dtype bool.")
        return ShapedArray(reduce_window_shape_tuple(x.shape, window_dimensions, window_strides, padding,
                                                     base_dilation, window_dilation), x.dtype, x.weak_type)
    return abstract


# dtypes the core's window ops take (``LibOp::ReduceWindow`` / ``SelectAndScatterAdd``)
_NATIVE = {np.dtype(d) for d in (np.float32, np.float64, np.int32, np.int64, np.uint32)}
native_lowering = {"enabled": True}


def _pairs(p):
    return [[int(a), int(b)] for a, b in p]


def _window_wire(eqn):
    p = eqn.params
    out = {"window_dimensions": list(p["window_dimensions"]), "window_strides": list(p["window_strides"]),
           "padding": _pairs(p["padding"])}
    for k in ("base_dilation", "window_dilation"):
        if k in p:
            out[k] = list(p[k])
    if "select_prim" in p:
        out["select_prim"] = p["select_prim"]
    return out


def _native(aval):
    return native_lowering["enabled"] and aval.dtype in _NATIVE


def _monoid_prim(kind):
    name = f"reduce_window_{kind}"
    p = standard_primitive(name, _monoid_abstract(name, kind), wire=_window_wire)

    def inline(eqn):
        x, = eqn.invars
        if _native(x.aval):
            return None   # the core's library op
        key = (name, x.aval, _params_key(eqn.params))
        return _inline(key, lambda a: [_monoid_fold(kind, a, eqn.params)], [x.aval]), eqn.invars
    p.inline_jaxpr = staticmethod(inline)
    return p


reduce_window_sum_p = _monoid_prim("sum")
reduce_window_max_p = _monoid_prim("max")
reduce_window_min_p = _monoid_prim("min")
_MONOIDS = {"sum": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p}


def _vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding, base_dilation,
                     window_dilation):
    """Padding of the cotangent (dilated by the strides) whose stride-1 window sums give the transpose."""
    pads = []
    for n, w, s, o, (lo, _), bd, wd in zip(in_shape, window_dimensions, window_strides, out_shape, padding,
                                          base_dilation, window_dilation):
        before = _dilate(w, wd) - lo - 1
        after = _dilate(n, bd) + _dilate(w, wd) - 1 - _dilate(o, s) - before
        pads.append((before, after))
    return pads


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding, base_dilation,
                                 window_dilation):
    # Every input element receives the sum of the cotangents of the windows that cover it: the cotangent
    # dilated by the strides, padded, and summed over the (all-ones, so unflipped) window.
    av = x.aval
    if _ad.is_zero(ct):
        return [_ad.Zero(av)]
    cta = get_aval(ct)
    pads = _vjp_lhs_padding(av.shape, window_dimensions, window_strides, cta.shape, padding, base_dilation,
                            window_dilation)
    cfg = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides))
    padded = _st.pad(ct, _st.full((), 0, cta.dtype), cfg)
    n = len(av.shape)
    out = reduce_window_sum_p.bind(padded, window_dimensions=tuple(window_dimensions),
                                   window_strides=tuple(base_dilation), padding=((0, 0),) * n,
                                   base_dilation=(1,) * n, window_dilation=tuple(window_dilation))
    return [out]


_ad.deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(select_prim):
    def rule(primals, tangents, **params):
        x, = primals
        t, = tangents
        prim = reduce_window_max_p if select_prim == "ge" else reduce_window_min_p
        ans = prim.bind(x, **params)
        if _ad.is_zero(t):
            return ans, _ad.Zero(get_aval(ans))
        return ans, select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)
    return rule


def _monoid_batch(prim):
    def rule(vals, dims, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        (x,), (bd,) = vals, dims
        ins = lambda v, e: tuple(v[:bd]) + (e,) + tuple(v[bd:])  # noqa: E731
        return prim.bind(x, window_dimensions=ins(window_dimensions, 1), window_strides=ins(window_strides, 1),
                         padding=ins(padding, (0, 0)), base_dilation=ins(base_dilation, 1),
                         window_dilation=ins(window_dilation, 1)), bd
    return rule


for _p in _MONOIDS.values():
    _batching.batching_rules[_p] = _monoid_batch(_p)
_ad.jvp_rules[reduce_window_max_p] = _chooser_jvp("ge")
_ad.jvp_rules[reduce_window_min_p] = _chooser_jvp("le")


# ----------------------------------------------------------------------------------------------- general reduce_window

def _general_abstract(*args, jaxpr, consts, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    for o in operands:
        if o.shape != operands[0].shape:
            raise TypeError(f"reduce_window operands must have the same shape, got "
                            f"{', '.join(str(a.shape) for a in operands)}")
    for o, i in zip(operands, inits):
        if i.shape != () or i.dtype != o.dtype:
            raise TypeError(f"reduce_window init values must be scalars of the operands' dtypes, got "
                            f"{i.str_short()} for an operand of dtype {o.dtype.name}")
    _check_window("reduce_window", operands[0].shape, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation)
    shape = reduce_window_shape_tuple(operands[0].shape, window_dimensions, window_strides, padding, base_dilation,
                                      window_dilation)
    return [ShapedArray(shape, o.dtype, o.weak_type) for o in operands]


reduce_window_p = standard_primitive("reduce_window", _general_abstract, multiple_results=True)


def _general_fold(args, jaxpr, consts, params):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    wins = [_windows(o, i, **params) for o, i in zip(operands, inits)]
    out = wins[0][0]
    if not wins[0][1]:
        return [_st.broadcast_in_dim(i, out, ()) for i in inits]
    acc = [_st.broadcast_in_dim(i, out, ()) for i in inits]
    for k in range(len(wins[0][1])):
        acc = eval_jaxpr(jaxpr, consts, *acc, *[w[1][k] for w in wins])
    return acc


def _general_inline(eqn):
    p = dict(eqn.params)
    jaxpr, consts = p.pop("jaxpr"), p.pop("consts")
    if consts:
        raise NotImplementedError("reduce_window: a computation that closes over arrays cannot be lowered")
    key = ("reduce_window", tuple(v.aval for v in eqn.invars), id(jaxpr), str(jaxpr), _params_key(p))
    fn = lambda *a: _general_fold(a, jaxpr, consts, p)  # noqa: E731
    return _inline(key, fn, [v.aval for v in eqn.invars]), eqn.invars


reduce_window_p.inline_jaxpr = staticmethod(_general_inline)


def _general_pp(eqn):
    return sorted(eqn.params.items())


reduce_window_p.pp_params = _general_pp


def _general_jvp(primals, tangents, *, jaxpr, consts, **params):
    # Forward mode through the fold itself (pads, slices and the computation, each with its jvp).
    outs = reduce_window_p.bind(*primals, jaxpr=jaxpr, consts=consts, **params)
    if all(_ad.is_zero(t) for t in tangents):
        return outs, [_ad.Zero(get_aval(o)) for o in outs]
    _, t_out = _ad.jvp_flat(lambda *a: _general_fold(a, jaxpr, consts, params), list(primals), list(tangents))
    return outs, t_out


def _general_batch(vals, dims, *, jaxpr, consts, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("vmap of reduce_window over batched init values")
    size = _batching.axis_size_of(vals, dims)
    ops = [_batching.bdim_at_front(v, d, size) for v, d in zip(vals[:n], dims[:n])]
    outs = reduce_window_p.bind(*ops, *vals[n:], jaxpr=jaxpr, consts=consts,
                                window_dimensions=(1,) + tuple(window_dimensions),
                                window_strides=(1,) + tuple(window_strides), padding=((0, 0),) + tuple(padding),
                                base_dilation=(1,) + tuple(base_dilation),
                                window_dilation=(1,) + tuple(window_dilation))
    return outs, [0] * len(outs)


_ad.jvp_rules[reduce_window_p] = _general_jvp
_batching.batching_rules[reduce_window_p] = _general_batch


# ----------------------------------------------------------------------------------------------- the lax wrapper

def _monoid_of(computation, inits):
    """The monoid primitive for ``computation`` with a concrete identity ``init`` (JAX's rule), else None."""
    if len(inits) != 1:
        return None
    kind = {id(_ew.add): "sum", id(_ew.max): "max", id(_ew.min): "min"}.get(id(computation))
    if kind is None:
        return None
    try:
        v = np.asarray(inits[0])
    except Exception:  # a tracer: not concrete
        return None
    if v.shape != () or v.dtype == object:
        return None
    return kind, v


def _saturating_cast(v, dt):
    """``v`` in dtype ``dt``, with infinities clamped to an integer dtype's range (as JAX converts inits)."""
    v = np.asarray(v)
    dt = np.dtype(dt)
    if dt.kind in "iu" and v.dtype.kind == "f" and np.isinf(v):
        info = np.iinfo(dt)
        return np.array(info.max if v > 0 else info.min, dt)
    return v.astype(dt)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """Reduces each window of ``operand`` (a pytree of arrays of one shape) with ``computation``, starting
    from ``init_value`` (a pytree of scalars of the same structure). ``padding``: 'VALID', 'SAME',
    'SAME_LOWER' or one ``(lo, hi)`` pair per dimension (padded with ``init_value``); ``base_dilation``
    inserts holes (filled with ``init_value``) between operand elements, ``window_dilation`` between window
    elements. ``lax.add`` / ``lax.max`` / ``lax.min`` with their identity bind ``reduce_window_sum`` /
    ``_max`` / ``_min``; any other computation binds ``reduce_window``. The output has shape
    ``reduce_window_shape_tuple(...)`` and the operands' dtypes. Raises TypeError for mismatched window
    parameters. Mirrors ``jax.lax.reduce_window``."""
    flat_ops, tree = tree_flatten(operand)
    flat_inits, init_tree = tree_flatten(init_value)
    if init_tree != tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    flat_ops = [_ew._as_operand(o) for o in flat_ops]
    shape = get_aval(flat_ops[0]).shape
    n = len(shape)
    window_dimensions, window_strides = _ints(window_dimensions), _ints(window_strides)
    base_dilation = (1,) * n if base_dilation is None else _ints(base_dilation)
    window_dilation = (1,) * n if window_dilation is None else _ints(window_dilation)
    if isinstance(padding, str):
        pads = padtype_to_pads([_dilate(d, b) for d, b in zip(shape, base_dilation)],
                               [_dilate(w, d) for w, d in zip(window_dimensions, window_dilation)],
                               window_strides, padding)
    else:
        pads = padding
    pads = tuple((int(lo), int(hi)) for lo, hi in pads)
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=pads,
                  base_dilation=base_dilation, window_dilation=window_dilation)
    monoid = _monoid_of(computation, flat_inits)
    if monoid is not None:
        kind, v = monoid
        dt = get_aval(flat_ops[0]).dtype
        if _saturating_cast(v, dt) == _identity(kind, dt):
            return tree_unflatten(tree, [_MONOIDS[kind].bind(flat_ops[0], **params)])
    inits = [_ew._coerce(i, get_aval(o).dtype) for i, o in zip(flat_inits, flat_ops)]
    inits = [_ew._as_operand(i) for i in inits]
    scalar = [ShapedArray((), get_aval(o).dtype) for o in flat_ops]
    m = len(flat_ops)

    def flat_comp(*xs):
        a = tree_unflatten(tree, list(xs[:m]))
        b = tree_unflatten(tree, list(xs[m:]))
        out, out_tree = tree_flatten(computation(a, b))
        if out_tree != tree:
            raise TypeError(f"reduce_window computation must return the operands' structure {tree}, got "
                            f"{out_tree}")
        return [_ew._as_operand(o) for o in out]
    closed = trace_to_jaxpr(flat_comp, scalar + scalar)
    assert isinstance(closed, ClosedJaxpr)
    outs = reduce_window_p.bind(*flat_ops, *inits, jaxpr=closed.jaxpr, consts=tuple(closed.consts), **params)
    return tree_unflatten(tree, outs)


# ----------------------------------------------------------------------------------------------- pool derivatives

def _select_abstract(name, with_dilation):
    def abstract(a, operand, *, select_prim, window_dimensions, window_strides, padding, base_dilation=None,
                 window_dilation=None):
        n = operand.ndim
        bd = (1,) * n if base_dilation is None else base_dilation
        wd = (1,) * n if window_dilation is None else window_dilation
        _check_window(name, operand.shape, window_dimensions, window_strides, padding, bd, wd)
        if select_prim not in ("ge", "le"):
            raise ValueError(f"{name}: select_prim must be ge or le, got {select_prim}")
        if a.dtype != operand.dtype:
            raise TypeError(f"{name} requires operands of one dtype, got {a.dtype.name} and {operand.dtype.name}")
        out = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides, padding, bd, wd)
        if with_dilation:     # select_and_gather_add: a is the tangent (operand's shape) → window shape
            if a.shape != operand.shape:
                raise TypeError(f"{name}: tangents shape {a.shape} must equal the operand's {operand.shape}")
            return ShapedArray(out, a.dtype, a.weak_type)
        if a.shape != out:    # select_and_scatter_add: a is the source (window shape) → operand shape
            raise TypeError(f"{name}: source shape {a.shape} must be the window output shape {out}")
        return ShapedArray(operand.shape, a.dtype, a.weak_type)
    return abstract


select_and_gather_add_p = standard_primitive("select_and_gather_add",
                                             _select_abstract("select_and_gather_add", True))
select_and_scatter_add_p = standard_primitive("select_and_scatter_add",
                                              _select_abstract("select_and_scatter_add", False), wire=_window_wire)


def _chosen(operand, select_prim, params):
    """Per window, the offset (an int32 array of the output's shape) of the element ``select_prim`` chooses:
    the first maximum (``ge``) or minimum (``le``), as XLA's select picks."""
    dt = get_aval(operand).dtype
    kind = "max" if select_prim == "ge" else "min"
    init = _st.full((), _identity(kind, dt), dt)
    out, slices = _windows(operand, init, **params)
    if not slices:
        return out, None, 0
    best, idx = slices[0], _st.full(out, 0, np.int32)
    for k, s in enumerate(slices[1:], 1):
        keep = _ew.ge(best, s) if select_prim == "ge" else _ew.le(best, s)
        best = _ew.select(keep, best, s)
        idx = _ew.select(keep, idx, _st.full(out, k, np.int32))
    return out, idx, len(slices)


def _gather_fold(t, operand, select_prim, params):
    dt = get_aval(t).dtype
    out, idx, nk = _chosen(operand, select_prim, params)
    zero = _st.full((), 0, dt)
    if idx is None:
        return _st.full(out, 0, dt)
    _, tslices = _windows(t, zero, **params)
    acc = tslices[0]
    for k in range(1, nk):
        acc = _ew.select(_ew.eq(idx, _st.full(out, k, np.int32)), tslices[k], acc)
    return acc


def _scatter_fold(source, operand, select_prim, params):
    oav = get_aval(operand)
    dt = get_aval(source).dtype
    out, idx, nk = _chosen(operand, select_prim, params)
    if idx is None:
        return _st.full(oav.shape, 0, dt)
    wd, ws, pads = params["window_dimensions"], params["window_strides"], params["padding"]
    padded = [_dilate(d, b) + lo + hi for d, b, (lo, hi) in zip(oav.shape, params["base_dilation"], pads)]
    zero = _st.full((), 0, dt)
    zeros = _st.full(out, 0, dt)
    total = None
    for k, off in enumerate(itertools.product(*(range(w) for w in wd))):
        mine = _ew.select(_ew.eq(idx, _st.full(out, k, np.int32)), source, zeros)
        # where window offset ``off`` of output position o lands in the padded operand: o * stride + off
        cfg = []
        for o, s, j, dil, n in zip(out, ws, off, params["window_dilation"], padded):
            lo = j * dil
            cfg.append((lo, n - lo - _dilate(o, s), s - 1))
        part = _st.pad(mine, zero, tuple(cfg))
        total = part if total is None else _ew.add(total, part)
    crop = tuple((-lo, -hi, 0) for lo, hi in pads)
    if any(c != (0, 0, 0) for c in crop):
        total = _st.pad(total, zero, crop)
    return total


def _select_params(eqn_params, n):
    p = dict(eqn_params)
    sp = p.pop("select_prim")
    p.setdefault("base_dilation", (1,) * n)
    p.setdefault("window_dilation", (1,) * n)
    return sp, p


def _gather_inline(eqn):
    t, x = eqn.invars
    sp, p = _select_params(eqn.params, x.aval.ndim)
    key = ("select_and_gather_add", t.aval, x.aval, sp, _params_key(p))
    return _inline(key, lambda a, b: [_gather_fold(a, b, sp, p)], [t.aval, x.aval]), eqn.invars


def _scatter_inline(eqn):
    s, x = eqn.invars
    if _native(x.aval):
        return None   # the core's library op
    sp, p = _select_params(eqn.params, x.aval.ndim)
    key = ("select_and_scatter_add", s.aval, x.aval, sp, _params_key(p))
    return _inline(key, lambda a, b: [_scatter_fold(a, b, sp, p)], [s.aval, x.aval]), eqn.invars


select_and_gather_add_p.inline_jaxpr = staticmethod(_gather_inline)
select_and_scatter_add_p.inline_jaxpr = staticmethod(_scatter_inline)


def _gather_transpose(ct, t, operand, *, select_prim, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    if any(d != 1 for d in base_dilation) or any(d != 1 for d in window_dilation):
        raise NotImplementedError("the transpose of select_and_gather_add with base or window dilation (as JAX)")
    if _ad.is_zero(ct):
        return [_ad.Zero(t.aval), None]
    return [select_and_scatter_add_p.bind(ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
                                          window_strides=window_strides, padding=padding), None]


def _scatter_transpose(ct, source, operand, *, select_prim, window_dimensions, window_strides, padding):
    if _ad.is_zero(ct):
        return [_ad.Zero(source.aval), None]
    n = len(window_dimensions)
    return [select_and_gather_add_p.bind(ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
                                         window_strides=window_strides, padding=padding, base_dilation=(1,) * n,
                                         window_dilation=(1,) * n), None]


def _linear_in_first(prim):
    # Linear in its first operand; the operand only chooses positions, so its tangent contributes nothing.
    def jvp(primals, tangents, **params):
        a, x = primals
        ans = prim.bind(a, x, **params)
        if _ad.is_zero(tangents[0]):
            return ans, _ad.Zero(get_aval(ans))
        return ans, prim.bind(tangents[0], x, **params)
    return jvp


_ad.jvp_rules[select_and_gather_add_p] = _linear_in_first(select_and_gather_add_p)
_ad.jvp_rules[select_and_scatter_add_p] = _linear_in_first(select_and_scatter_add_p)
_ad.transpose_rules[select_and_gather_add_p] = _gather_transpose
_ad.transpose_rules[select_and_scatter_add_p] = _scatter_transpose


def _select_batch(prim):
    def rule(vals, dims, **params):
        size = _batching.axis_size_of(vals, dims)
        a, x = (_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims))
        p = dict(params)
        for k, e in (("window_dimensions", 1), ("window_strides", 1), ("padding", (0, 0)), ("base_dilation", 1),
                     ("window_dilation", 1)):
            if k in p:
                p[k] = (e,) + tuple(p[k])
        return prim.bind(a, x, **p), 0
    return rule


_batching.batching_rules[select_and_gather_add_p] = _select_batch(select_and_gather_add_p)
_batching.batching_rules[select_and_scatter_add_p] = _select_batch(select_and_scatter_add_p)


# ----------------------------------------------------------------------------------------------- cumlogsumexp

def _cum_abstract(x, *, axis, reverse=False):
    if x.ndim == 0 or not 0 <= axis < x.ndim:
        raise ValueError(f"cumlogsumexp axis {axis} out of range for shape {x.shape}")
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise TypeError(f"cumlogsumexp does not accept dtype {x.dtype.name}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


cumlogsumexp_p = standard_primitive("cumlogsumexp", _cum_abstract)


def _logaddexp(a, b):
    # m + log(exp(a - m) + exp(b - m)) with m = max(a, b) held constant (so ties split the derivative
    # evenly) and 0 where m is infinite (so -inf, -inf gives -inf rather than NaN)
    m = _ew.stop_gradient(_ew.max(a, b))
    m = _ew.select(_ew.is_finite(m), m, _ew._coerce(0, get_aval(a).dtype))
    return _ew.add(m, _ew.log(_ew.add(_ew.exp(_ew.sub(a, m)), _ew.exp(_ew.sub(b, m)))))


def _cumlogsumexp_fold(x, axis, reverse):
    # Hillis-Steele scan: log2(n) steps, each combining every element with the one ``shift`` before it.
    if reverse:
        x = _st.rev_p.bind(x, dimensions=(axis,))
    n = get_aval(x).shape[axis]
    shift = 1
    while shift < n:
        head = _lib.slice_in_dim(x, 0, shift, axis=axis)
        tail = _logaddexp(_lib.slice_in_dim(x, shift, n, axis=axis), _lib.slice_in_dim(x, 0, n - shift, axis=axis))
        x = _lib.concatenate_p.bind(head, tail, dimension=axis)
        shift *= 2
    if reverse:
        x = _st.rev_p.bind(x, dimensions=(axis,))
    return x


def _cum_inline(eqn):
    x, = eqn.invars
    axis, reverse = eqn.params["axis"], eqn.params["reverse"]
    key = ("cumlogsumexp", x.aval, axis, reverse)
    return _inline(key, lambda a: [_cumlogsumexp_fold(a, axis, reverse)], [x.aval]), eqn.invars


cumlogsumexp_p.inline_jaxpr = staticmethod(_cum_inline)


def _cum_jvp(primals, tangents, *, axis, reverse):
    ans = cumlogsumexp_p.bind(*primals, axis=axis, reverse=reverse)
    if _ad.is_zero(tangents[0]):
        return ans, _ad.Zero(get_aval(ans))
    _, (t,) = _ad.jvp_flat(lambda a: [_cumlogsumexp_fold(a, axis, reverse)], list(primals), list(tangents))
    return ans, t


def _cum_batch(vals, dims, *, axis, reverse):
    (x,), (bd,) = vals, dims
    return cumlogsumexp_p.bind(x, axis=axis + (axis >= bd), reverse=reverse), bd


_ad.jvp_rules[cumlogsumexp_p] = _cum_jvp
_batching.batching_rules[cumlogsumexp_p] = _cum_batch


def cumlogsumexp(operand, axis=0, reverse=False):
    """Inclusive cumulative ``log(sum(exp(x)))`` along ``axis`` (from the end when ``reverse``), computed
    stably (no overflow for large inputs). Float dtypes only (TypeError otherwise). Mirrors
    ``jax.lax.cumlogsumexp``."""
    operand = _ew._as_operand(operand)
    nd = get_aval(operand).ndim
    return cumlogsumexp_p.bind(operand, axis=int(axis) % max(nd, 1), reverse=bool(reverse))
