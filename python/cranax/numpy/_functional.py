"""Function transforms over arrays: ``vectorize``, ``apply_along_axis``, ``apply_over_axes``,
``fromfunction``, ``piecewise``, built on ``vmap`` and ``lax.switch``. Mirrors ``jax.numpy``."""
import functools

import numpy as _np

from .. import lax
from ._creation import zeros
from ._promotion import asarray, astype
from ._shape_ops import indices
from ._shapes import expand_dims, moveaxis
from ._reductions import sum

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "fromfunction", "piecewise"]


def _vmap(f, in_axes=0, out_axes=0):
    # vmap lives in the API layer above the faces; imported when first called
    from ..api_vmap import vmap  # noqa: PLC0415  (API layer above numpy: a module-level import would be circular)
    return vmap(f, in_axes=in_axes, out_axes=out_axes)


def _parse_gufunc_signature(signature):
    ins, outs = signature.replace(" ", "").split("->")

    def parse(s):
        out = []
        for part in s.split("),"):
            part = part.strip("()")
            out.append(tuple(d for d in part.split(",") if d))
        return out
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` mapped over its arguments' broadcast leading dimensions with ``vmap`` (the trailing
    ``signature`` core dimensions, e.g. ``"(n),(n)->()"``, are passed whole). Arguments named or numbered in
    ``excluded`` are passed through. Mirrors ``jax.numpy.vectorize``."""
    core_in = None
    if signature is not None:
        core_in, _ = _parse_gufunc_signature(signature)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        excl = {i for i in excluded if isinstance(i, int)}
        static = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        if dyn_kw:
            raise NotImplementedError("vectorize: keyword arguments must be in excluded")
        pos = [i for i in range(len(args)) if i not in excl]
        arrs = [asarray(args[i]) for i in pos]
        cores = [len(core_in[j]) if core_in is not None else 0 for j in range(len(arrs))]
        if core_in is not None and len(core_in) != len(arrs):
            raise TypeError(f"wrong number of positional arguments: expected {len(core_in)}, got {len(arrs)}")
        batch = [a.shape[:a.ndim - c] for a, c in zip(arrs, cores)]
        bshape = _np.broadcast_shapes(*batch) if batch else ()
        arrs = [a if a.shape[:a.ndim - c] == bshape else
                lax.broadcast_in_dim(a, tuple(bshape) + a.shape[a.ndim - c:],
                                     tuple(range(len(bshape) - (a.ndim - c), len(bshape) + c)))
                for a, c in zip(arrs, cores)]

        def call(*xs):
            full = list(args)
            for i, x in zip(pos, xs):
                full[i] = x
            return pyfunc(*full, **static)

        f = call
        for _ in range(len(bshape)):
            f = _vmap(f)
        return f(*arrs)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (by ``vmap``); its output axes take
    ``axis``'s place. Mirrors ``jax.numpy.apply_along_axis``."""
    arr = asarray(arr)
    nd = arr.ndim
    axis = axis % nd
    f = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(1, nd - axis):
        f = _vmap(f, in_axes=i, out_axes=-1)
    for i in range(axis):
        f = _vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func, a, axes):
    """``a = func(a, axis)`` for each axis, keeping the rank (a reduced axis is re-inserted). Mirrors
    ``jax.numpy.apply_over_axes``."""
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        if b.ndim == a.ndim - 1:
            b = expand_dims(b, axis)
        elif b.ndim != a.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*indices(shape))``: the function called once on the index grids (``vmap``-free, as NumPy
    calls it on whole arrays). Mirrors ``jax.numpy.fromfunction``."""
    shape = tuple(int(s) for s in shape)
    grids = indices(shape, dtype=dtype)
    return function(*[grids[i] for i in range(len(shape))], **kwargs)


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[i](x)`` where ``condlist[i]`` (the later condition winning), an extra last function for
    where none holds; constants stand for constant functions. Every function is evaluated on the whole
    ``x`` (selected with ``lax.switch`` per element). Mirrors ``jax.numpy.piecewise``."""
    x = asarray(x)
    if isinstance(condlist, (bool, _np.bool_)) or (hasattr(condlist, "dtype") and asarray(condlist).ndim == x.ndim
                                                   and not isinstance(condlist, (list, tuple))):
        condlist = [condlist]
    conds = [asarray(c) for c in condlist]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        default = funclist[-1]
        funcs = list(funclist[:-1])
    elif nf == nc:
        default = 0
        funcs = list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")

    def as_fn(f):
        if callable(f):
            return lambda v: asarray(f(v, *args, **kw), x.dtype)
        return lambda v: lax.full(v.shape, _np.asarray(f).astype(x.dtype)[()], x.dtype)
    out = as_fn(default)(x)
    for c, f in zip(conds, funcs):
        out = lax.select(lax.broadcast_in_dim(c, x.shape, tuple(range(x.ndim - c.ndim, x.ndim)))
                         if c.shape != x.shape else c, as_fn(f)(x), out)
    return out
