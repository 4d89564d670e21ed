"""Function transforms over arrays: ``vectorize``, ``apply_along_axis``, ``apply_over_axes``,
``fromfunction``, ``piecewise``, built on ``vmap`` and ``lax.switch``. Mirrors ``jax.numpy``."""
import functools

import numpy as _np

from .. import lax
from ._creation import zeros
from ._promotion import asarray, astype
from . import _shape_ops
from ._shape_ops import indices
from ._shapes import broadcast_to, expand_dims, moveaxis
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


# ---- jnp.ufunc and frompyfunc (issue 22)

class ufunc:
    """A function of ``nin`` arrays to ``nout`` arrays with NumPy's ufunc methods: calling broadcasts
    (``vectorize``), ``outer``, and for binary ones ``reduce`` (folded from ``initial``, else ``identity``,
    else the first element), ``accumulate``, ``reduceat`` and ``at`` (``inplace=False`` only: arrays are
    immutable). ``call``/``reduce``/... override the generic methods. Mirrors ``jax.numpy.ufunc``."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self._func = func
        self.__name__ = name or getattr(func, "__name__", "<ufunc>")
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = int(nargs) if nargs is not None else self.nin
        self.identity = identity
        self._call, self._reduce, self._accumulate, self._at, self._reduceat = call, reduce, accumulate, at, \
            reduceat

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional argument(s) but {len(args)} were given")
        if self._call is not None:
            return self._call(*args)
        return vectorize(self._func)(*args)

    def _binary(self, what):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{what} only supported for binary ufuncs")

    def outer(self, A, B, /, **kwargs):
        """``self(A[i...], B[j...])`` over every pair: shape ``A.shape + B.shape``."""
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        A, B = asarray(A), asarray(B)
        fa = _vmap(_vmap(lambda x, y: self(x, y, **kwargs), in_axes=(None, 0)), in_axes=(0, None))
        res = fa(A.reshape(-1), B.reshape(-1))
        if self.nout == 1:
            return res.reshape(A.shape + B.shape)
        return tuple(r.reshape(A.shape + B.shape) for r in res)

    def _fold(self, x, start, mask=None):
        """Folds ``self`` over the leading axis of ``x`` from ``start`` (None: from x[0])."""
        if start is None:
            start, x = x[0], x[1:]
            mask = None if mask is None else mask[1:]

        def step(carry, item):
            v, m = item
            new = asarray(self(carry, v)).astype(carry.dtype)
            return (new if m is None else lax.select(m, new, carry)), None
        if mask is None:
            out, _ = lax.scan(lambda c, v: step(c, (v, None)), start, x)
        else:
            out, _ = lax.scan(step, start, (x, mask))
        return out

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """``self`` folded over ``axis`` (an int, a tuple, or None for all). ValueError for an empty axis with
        no ``initial`` or identity."""
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if self._reduce is not None and where is None and initial is None:
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims)
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        axes = tuple(range(a.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
        axes = tuple(ax % a.ndim for ax in axes) if a.ndim else ()
        rest = tuple(i for i in range(a.ndim) if i not in axes)
        n = int(_np.prod([a.shape[i] for i in axes], dtype=_np.int64))
        x = a.transpose(axes + rest).reshape((n,) + tuple(a.shape[i] for i in rest))
        m = None
        if where is not None:
            m = asarray(where)
            m = lax.broadcast_in_dim(m, a.shape, tuple(range(a.ndim - m.ndim, a.ndim))) if m.shape != a.shape \
                else m
            m = m.transpose(axes + rest).reshape(x.shape)
        start = initial if initial is not None else self.identity
        if start is None and (n == 0 or m is not None):
            if n == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            raise ValueError(f"reduction operation {self.__name__} does not have an identity, so to use a "
                             f"where mask one has to specify 'initial'.")
        if start is not None:
            start = lax.broadcast_in_dim(asarray(start).astype(a.dtype), x.shape[1:], ())
        res = self._fold(x, start, m)
        if keepdims:
            res = res.reshape(tuple(1 if i in axes else a.shape[i] for i in range(a.ndim)))
        return res

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running folds of ``self`` along ``axis`` (the first is ``a[0]``)."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        x = moveaxis(a, axis, 0)
        if x.shape[0] == 0:
            return a

        def step(carry, v):
            new = asarray(self(carry, v)).astype(carry.dtype)
            return new, new
        _, ys = lax.scan(step, x[0], x[1:])
        return moveaxis(lax.concatenate([x[:1], ys], 0), 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """``a`` with ``self`` applied at ``indices`` (with ``b``'s values for binary ufuncs), once per
        occurrence of an index. ``inplace=True`` raises NotImplementedError: pass ``inplace=False``."""
        if inplace:
            raise NotImplementedError(
                "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like\nnp.ufunc.at(). "
                "Instead, you can pass inplace=False and capture the result; e.g.\n"
                ">>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")
        if self._at is not None:
            return self._at(a, indices, b)
        a = asarray(a)
        idx = indices if isinstance(indices, tuple) else (indices,)
        idx = [asarray(i) for i in idx]
        shape = _np.broadcast_shapes(*[i.shape for i in idx])
        flat = [lax.broadcast_in_dim(i, shape, tuple(range(len(shape) - i.ndim, len(shape)))).reshape(-1)
                for i in idx]
        count = flat[0].shape[0]
        sub = a[tuple(i[0] for i in flat)] if count else a
        vals = None
        if self.nin == 2:
            if b is None:
                raise ValueError(f"{self.__name__}.at() requires a second operand for a binary ufunc")
            b = asarray(b)
            vals = broadcast_to(b, shape + tuple(sub.shape)).reshape((count,) + tuple(sub.shape))

        def body(k, arr):
            where_ = tuple(i[k] for i in flat)
            cur = arr[where_]
            new = self(cur, vals[k]) if vals is not None else self(cur)
            return arr.at[where_].set(asarray(new).astype(arr.dtype))
        return lax.fori_loop(0, count, body, a)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """``self`` folded over the slices ``a[indices[i]:indices[i+1]]`` along ``axis`` (the last to the
        end; just ``a[indices[i]]`` where ``indices[i] >= indices[i+1]``)."""
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        ind = asarray(indices).astype(_np.int32)
        if ind.ndim != 1:
            raise ValueError("reduceat: indices must be one-dimensional")
        x = moveaxis(a, axis, 0)
        n = x.shape[0]
        ends = lax.concatenate([ind[1:], asarray(_np.array([n], _np.int32))], 0)
        start = x[ind]
        pos = asarray(_np.arange(n, dtype=_np.int32))
        ex = (1,) * (x.ndim - 1)

        def step(carry, item):
            j, v = item
            inside = ((j > ind) & (j < ends)).reshape(ind.shape + ex)
            new = asarray(self(carry, v)).astype(carry.dtype)
            return lax.select(broadcast_to(inside, carry.shape), new, carry), None
        res, _ = lax.scan(step, start, (pos, x))
        return moveaxis(res, 0, axis)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """``func`` (of scalars, written with cranax operations) as a ``ufunc`` of ``nin`` inputs and ``nout``
    outputs. Mirrors ``jax.numpy.frompyfunc``."""
    return ufunc(func, nin, nout, identity=identity)


__all__ += ["ufunc", "frompyfunc"]


_shape_ops._later["apply_along_axis"] = apply_along_axis   # jnp.pad's callable mode (_shape_ops cannot import this module)
