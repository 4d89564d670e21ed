"""Products: ``dot``, ``matmul`` (``@``), ``vdot``, ``inner``, ``outer``, ``tensordot``, ``einsum``,
``trace`` and ``linalg``-style helpers, all built on ``dot_general`` (the core runs it through the ``gemm``
crate), and the lazy eager transpose ``x.T`` that they fold into ``dot_general``. Mirrors ``jax.numpy``'s
functions of the same names."""
import builtins
import string

import numpy as _np

from .. import core
from .. import dtypes as _dtypes
from .. import lax
from ..array import Array
from ..core import get_aval
from ..interpreters.dispatch import named_as_jitted
from ._promotion import asarray
from ._reductions import sum
from ._shape_ops import diagonal, take
from ._shapes import (broadcast_arrays, broadcast_shapes, broadcast_to, expand_dims, moveaxis, ravel, reshape,
                      transpose)
from ._ufuncs import conjugate, multiply

__all__ = ["convolve", "correlate", "dot", "matmul", "vdot", "vecdot", "inner", "outer", "tensordot", "einsum", "trace", "kron",
           "matvec", "vecmat"]


def _prep(name, *args):
    """Arrays of a common dtype (JAX's promotion), shapes untouched."""
    args = [asarray(a) if not hasattr(a, "aval") else a for a in args]
    dt, weak = _dtypes.result_type(*args, return_weak_type_flag=True)
    out = []
    for a in args:
        av = get_aval(a)
        if av.dtype != dt or av.weak_type != weak:
            a = lax._convert(a, dt, weak)
        out.append(a)
    return out, dt


def _dg(a, b, lc, rc, lb=(), rb=(), dt=None, precision=None):
    return lax.dot_general(a, b, ((lc, rc), (lb, rb)), precision=precision, preferred_element_type=dt)


def _check_contract(name, a_shape, b_shape, ad, bd):
    if a_shape[ad] != b_shape[bd]:
        # JAX's text (its jnp functions reach dot_general's shape check); ``name`` is for the caller's reader
        raise TypeError(f"dot_general requires contracting dimensions to have the same shape, got ({a_shape[ad]},) "
                        f"and ({b_shape[bd]},).")


def _gram(a, b, preferred_element_type):
    """``a @ a.T`` as one ``dot_general`` of ``a`` with itself when ``b`` is a NumPy transposed view of the
    2-D NumPy array ``a`` (so ``a`` crosses to the device once and the core sees a Gram product, which it
    computes as a symmetric product); None otherwise."""
    if not (type(a) is _np.ndarray and type(b) is _np.ndarray and a.ndim == 2 and b.ndim == 2):
        return None
    if (b.dtype != a.dtype or b.shape != a.shape[::-1] or b.strides != a.strides[::-1]
            or b.__array_interface__["data"][0] != a.__array_interface__["data"][0]):
        return None
    (a,), dt = _prep("dot", a)
    if preferred_element_type is not None:
        dt = _dtypes.canonicalize_dtype(preferred_element_type)
    return _dg(a, a, (1,), (1,), dt=dt)


def _unlazy(a, b):
    """``(a, b, lhs contracting dim, rhs contracting dim)`` for a 2-D product, with an eager lazy transpose
    (``x.T`` of a large array) replaced by its source and the transpose folded into the contraction."""
    la, lb = type(a) is _LazyTranspose, type(b) is _LazyTranspose
    if not (la or lb) or not (hasattr(a, "aval") and hasattr(b, "aval")):
        return None
    if get_aval(a).ndim != 2 or get_aval(b).ndim != 2:
        return None
    return (a._src if la else a, b._src if lb else b, 0 if la else 1, 1 if lb else 0)


def _folded(a, b, preferred_element_type, name="dot", precision=None):
    """``a @ b`` for 2-D operands when one is a lazy transpose or a NumPy transposed view of the other; None
    when neither applies."""
    if precision is not None:   # (the Gram and lazy-view shortcuts record no precision)
        return None
    g = _gram(a, b, preferred_element_type)
    if g is not None:
        return g
    u = _unlazy(a, b)
    if u is None:
        return None
    _check_contract(name, get_aval(a).shape, get_aval(b).shape, 1, 0)
    a, b, ac, bc = u
    (a, b), dt = _prep(name, a, b)
    if preferred_element_type is not None:
        dt = _dtypes.canonicalize_dtype(preferred_element_type)
    return _dg(a, b, (ac,), (bc,), dt=dt)


@named_as_jitted("dot", ("a", "b"))
def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Dot product: scalars multiply; otherwise contracts ``a``'s last axis with ``b``'s second-to-last
    (last for 1-D ``b``). ``out_sharding`` is accepted and, cranax running on one device, has no effect (as
    ``lax.reshape``'s). Mirrors ``jax.numpy.dot``."""
    g = _folded(a, b, preferred_element_type, precision=precision)
    if g is not None:
        return g
    (a, b), dt = _prep("dot", a, b)
    if preferred_element_type is not None:
        dt = _dtypes.canonicalize_dtype(preferred_element_type)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if len(sa) == 0 or len(sb) == 0:
        return multiply(a, b)
    bd = len(sb) - 2 if len(sb) >= 2 else 0
    _check_contract("dot", sa, sb, len(sa) - 1, bd)
    return _dg(a, b, (len(sa) - 1,), (bd,), dt=dt, precision=precision)


@named_as_jitted("matmul", ("a", "b"))
def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's rules: a 1-D operand is a vector (contracted directly, no unit axis), the
    leading (batch) axes broadcast, size-1 batch axes are squeezed rather than broadcast. ``a [..., M, K]``,
    ``b [..., K, N]`` give ``[..., M, N]`` in their promoted dtype (or ``preferred_element_type``). A 0-d
    operand is a ``ValueError``, unequal contracting sizes a ``TypeError``. ``out_sharding``: the result's
    sharding in types (JAX's explicit sharding; values are the same with or without it).
    Mirrors ``jax.numpy.matmul`` / ``@``, and like it is one ``dot_general`` (with a ``squeeze`` before and a
    ``transpose`` after where needed)."""
    g = _folded(a, b, preferred_element_type, "matmul", precision)
    if g is not None:
        return g
    (a, b), dt = _prep("matmul", a, b)
    if preferred_element_type is not None:
        dt = _dtypes.canonicalize_dtype(preferred_element_type)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    for i, s in enumerate((sa, sb)):
        if len(s) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim {len(s)}")
    a_mat, b_mat = len(sa) > 1, len(sb) > 1
    ba = sa[:-2] if a_mat else ()
    bb = sb[:-2] if b_mat else ()
    nb = builtins.max(len(ba), len(bb))
    ba = (None,) * (nb - len(ba)) + ba
    bb = (None,) * (nb - len(bb)) + bb
    # As JAX: each batch axis is either shared (a dot_general batch dim), free on one side (an axis the other
    # operand lacks or has as size 1, which is squeezed away), or size 1 on both (squeezed, restored after).
    a_squeeze, b_squeeze, both_squeeze, a_batch, b_batch = [], [], [], [], []
    idx_batch, idx_a, idx_b = [], [], []
    for i, (da, db) in enumerate(zip(ba, bb)):
        if da is None:
            idx_b.append(i)
        elif db is None:
            idx_a.append(i)
        elif da == 1 and db == 1:
            a_squeeze.append(len(idx_batch) + len(idx_a) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b) + len(b_squeeze))
            both_squeeze.append(i)
        elif da == 1:
            idx_b.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a) + len(a_squeeze))
        elif db == 1:
            idx_a.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b) + len(b_squeeze))
        elif da == db:
            a_batch.append(len(idx_batch) + len(idx_a))
            b_batch.append(len(idx_batch) + len(idx_b))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible types for matmul arguments: {get_aval(a).str_short()} and "
                             f"{get_aval(b).str_short()}")
    if a_mat:
        idx_a.append(nb)
    if b_mat:
        idx_b.append(nb + a_mat)
    order = idx_batch + idx_a + idx_b   # distinct ints: their argsort without a NumPy round trip
    perm = tuple(sorted(range(len(order)), key=order.__getitem__))
    if a_squeeze:
        a = lax.squeeze(a, tuple(a_squeeze))
    if b_squeeze:
        b = lax.squeeze(b, tuple(b_squeeze))
    na, nbd = get_aval(a).ndim, get_aval(b).ndim
    plain = perm == tuple(range(len(perm))) and not both_squeeze   # out_sharding is the product's own
    out = lax.dot_general(a, b, (((na - 1,), (nbd - 1 - b_mat,)), (tuple(a_batch), tuple(b_batch))),
                          precision=precision, preferred_element_type=dt,
                          out_sharding=out_sharding if plain else None)
    if perm != tuple(range(len(perm))):
        out = lax.transpose(out, perm)
    if both_squeeze:
        out = lax.expand_dims(out, tuple(both_squeeze))
    return out


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, the first conjugated when complex. Mirrors ``jax.numpy.vdot``."""
    a = asarray(a)
    if get_aval(a).dtype.kind == "c":
        a = conjugate(a)
    return dot(ravel(a), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    x1, x2 = broadcast_arrays(x1, x2)
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if get_aval(x1).dtype.kind == "c":  # the array API's vecdot conjugates its first argument
        x1 = conjugate(x1)
    return sum(multiply(x1, x2), axis=-1)


def matvec(x1, x2, /):
    return matmul(x1, expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2, /):
    return matmul(expand_dims(x1, -2), x2)[..., 0, :]


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contracts the last axes of ``a`` and ``b``. Mirrors ``jax.numpy.inner``."""
    (a, b), dt = _prep("inner", a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if len(sa) == 0 or len(sb) == 0:
        return multiply(a, b)
    _check_contract("inner", sa, sb, len(sa) - 1, len(sb) - 1)
    return _dg(a, b, (len(sa) - 1,), (len(sb) - 1,), dt=dt, precision=precision)


def outer(a, b, out=None):
    """``a.ravel()[:, None] * b.ravel()[None, :]``. Mirrors ``jax.numpy.outer``."""
    a, b = ravel(a), ravel(b)
    return multiply(a[:, None], b[None, :])


def kron(a, b):
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ea = reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    eb = reshape(b, tuple(x for d in b.shape for x in (1, d)))
    return reshape(multiply(ea, eb), tuple(x * y for x, y in zip(a.shape, b.shape)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Contracts ``axes`` (an int: the last ``axes`` of ``a`` with the first of ``b``; or a pair of
    sequences). Mirrors ``jax.numpy.tensordot``."""
    (a, b), dt = _prep("tensordot", a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if isinstance(axes, (int, _np.integer)):
        n = int(axes)
        if n < 0 or n > builtins.min(len(sa), len(sb)):
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks ({sa} and {sb})")
        ca, cb = tuple(range(len(sa) - n, len(sa))), tuple(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot axes argument must be an int or a pair of sequences, got {axes!r}") \
                from None
        ax_a = (ax_a,) if isinstance(ax_a, (int, _np.integer)) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, (int, _np.integer)) else tuple(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError(f"tensordot requires axes lists to have equal length, got {ax_a} and {ax_b}.")
        ca = tuple(int(x) % len(sa) for x in ax_a)
        cb = tuple(int(x) % len(sb) for x in ax_b)
    for x, y in zip(ca, cb):
        _check_contract("tensordot", sa, sb, x, y)
    return _dg(a, b, ca, cb, dt=dt, precision=precision)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the diagonal ``offset`` of the 2-D planes (``axis1``, ``axis2``). Mirrors
    ``jax.numpy.trace``."""
    d = diagonal(a, offset, axis1, axis2)
    return sum(d, axis=-1, dtype=dtype)


# ------------------------------------------------------------------------------------------ lazy transpose

_LAZY_T_MIN = 1 << 16


class _LazyTranspose(Array):
    """The eager ``x.T`` of a large 2-D ``Array``: a view whose data is computed on first use. Products
    (``jnp.dot``, ``jnp.matmul``/``@``) read ``_src`` instead and fold the transpose into ``dot_general``'s
    dimensions, so ``jnp.dot(x, x.T)`` is a Gram product of ``x`` with itself, as under ``jit``; anything
    else that touches ``_buf`` materializes the transpose once."""

    __slots__ = ("_src",)

    @staticmethod
    def _of(src):
        t = _LazyTranspose.__new__(_LazyTranspose)
        t._src = src
        t.aval = src.aval.update(shape=src.aval.shape[::-1])
        t._npy = None
        return t

    @property
    def _buf(self):
        try:
            return _ARRAY_BUF.__get__(self, Array)
        except AttributeError:
            # Threads racing here each compute the same value; the source stays referenced (as a NumPy
            # view keeps its base), so products can still fold it after materialization.
            buf = lax.transpose(self._src, (1, 0))._buf
            _ARRAY_BUF.__set__(self, buf)
            return buf


_ARRAY_BUF = Array.__dict__["_buf"]  # Array's own slot, which the property above shadows


def _T(self):
    """``x.T``. Eagerly, a large 2-D ``Array``'s transpose is a lazy view (``_LazyTranspose``) so that
    ``jnp.dot(x, x.T)`` and ``x @ y.T`` contract without copying; under a trace it is ``lax.transpose``."""
    if type(self) is Array and self.ndim == 2 and self.size >= _LAZY_T_MIN and core._state.trace is None:
        return _LazyTranspose._of(self)
    return transpose(self)


# ------------------------------------------------------------------------------------------------ einsum

def _parse_einsum(subscripts, shapes):
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
        explicit = True
    else:
        ins, out, explicit = s, None, False
    terms = ins.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} operands")
    used = set(c for c in s if c.isalpha())
    free = [c for c in string.ascii_letters if c not in used]
    ell_n = 0
    for t, sh in zip(terms, shapes):
        if "..." in t:
            ell_n = builtins.max(ell_n, len(sh) - (len(t) - 3))
    ell = "".join(free[:ell_n])
    labels = []
    for t, sh in zip(terms, shapes):
        if "..." in t:
            n = len(sh) - (len(t) - 3)
            t = t.replace("...", ell[ell_n - n:] if n else "")
        if len(t) != len(sh):
            raise ValueError(f"einsum: subscripts {t!r} do not match operand of rank {len(sh)}")
        labels.append(t)
    if out is None:
        counts = {}
        for t in labels:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    del explicit
    return labels, out


def _diag_labels(x, lab):
    """Removes repeated labels of one operand by taking diagonals."""
    while True:
        dup = next((c for c in lab if lab.count(c) > 1), None)
        if dup is None:
            return x, lab
        i = lab.index(dup)
        j = lab.index(dup, i + 1)
        x = diagonal(x, 0, i, j)  # moves the diagonal axis last
        lab = "".join(c for k, c in enumerate(lab) if k not in (i, j)) + dup


def _sum_labels(x, lab, keep):
    axes = tuple(i for i, c in enumerate(lab) if c not in keep)
    if axes:
        x = sum(x, axis=axes)
        lab = "".join(c for c in lab if c in keep)
    return x, lab


def einsum(subscripts, *operands, out=None, optimize="optimal", precision=None, preferred_element_type=None,
           _use_xeinsum=False):
    """Einstein summation, evaluated left to right as pairwise ``dot_general`` contractions (diagonals for
    repeated labels, sums for labels used once). Mirrors ``jax.numpy.einsum`` (string subscripts)."""
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum supports string subscripts only")
    ops, dt = _prep("einsum", *operands)
    if preferred_element_type is not None:
        dt = _dtypes.canonicalize_dtype(preferred_element_type)
    labels, out_lab = _parse_einsum(subscripts, [get_aval(o).shape for o in ops])
    sizes = {}
    for o, lab in zip(ops, labels):
        for c, n in zip(lab, get_aval(o).shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise ValueError(f"einsum: size of label {c!r} differs between operands ({sizes[c]} vs {n}), "
                                 f"shapes {[get_aval(o).shape for o in ops]}")
            sizes[c] = n if (n != 1 or c not in sizes) else sizes[c]
    # size-1 broadcast labels: broadcast to the common size
    xs = []
    for o, lab in zip(ops, labels):
        sh = get_aval(o).shape
        want = tuple(sizes[c] for c in lab)
        if sh != want:
            o = broadcast_to(o, want)
        o, lab = _diag_labels(o, lab)
        xs.append((o, lab))
    # each operand: sum out labels used nowhere else
    def needed_elsewhere(k):
        s = set(out_lab)
        for j, (_, lab) in enumerate(xs):
            if j != k:
                s |= set(lab)
        return s
    xs = [_sum_labels(o, lab, needed_elsewhere(k)) for k, (o, lab) in enumerate(xs)]
    acc, acc_lab = xs[0]
    for k in range(1, len(xs)):
        b, b_lab = xs[k]
        later = set(out_lab)
        for _, lab in xs[k + 1:]:
            later |= set(lab)
        shared = [c for c in acc_lab if c in b_lab]
        batch = [c for c in shared if c in later]
        contract = [c for c in shared if c not in later]
        # labels of one side not needed later and not shared: sum them out first
        acc, acc_lab = _sum_labels(acc, acc_lab, later | set(b_lab))
        b, b_lab = _sum_labels(b, b_lab, later | set(acc_lab))
        lb = tuple(acc_lab.index(c) for c in batch)
        rb = tuple(b_lab.index(c) for c in batch)
        lc = tuple(acc_lab.index(c) for c in contract)
        rc = tuple(b_lab.index(c) for c in contract)
        acc = _dg(acc, b, lc, rc, lb, rb, dt=dt, precision=precision)
        acc_lab = ("".join(batch) + "".join(c for c in acc_lab if c not in shared)
                   + "".join(c for c in b_lab if c not in shared))
    acc, acc_lab = _sum_labels(acc, acc_lab, set(out_lab))
    for c in out_lab:
        if c not in acc_lab:
            raise ValueError(f"einsum: output label {c!r} does not appear in the inputs")
    perm = tuple(acc_lab.index(c) for c in out_lab)
    if perm != tuple(range(len(perm))):
        acc = lax.transpose(acc, perm)
    if get_aval(acc).dtype != dt:
        acc = lax.convert_element_type(acc, dt)
    return acc


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of 1-D ``a`` and ``v`` (``mode`` 'full', 'same' or 'valid', as
    NumPy), computed directly: the sliding windows of the zero-padded longer operand times the reversed
    shorter one. Raises ``ValueError`` for empty or non-1-D inputs and unknown modes. Mirrors
    ``jax.numpy.convolve``."""
    (a, v), _ = _prep("convolve", a, v)
    if get_aval(a).ndim != 1 or get_aval(v).ndim != 1:
        raise ValueError("convolve() only support 1-dimensional inputs.")
    n, m = get_aval(a).shape[0], get_aval(v).shape[0]
    if n == 0 or m == 0:
        raise ValueError("convolve: inputs cannot be empty, got shapes {} and {}.".format((n,), (m,)))
    if m > n:  # convolution commutes: slide the shorter one
        a, v, n, m = v, a, m, n
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    cfg = [(m - 1, m - 1, 0)]
    padded = lax.pad(a, _np.zeros((), get_aval(a).dtype)[()], cfg)
    idx = _np.arange(n + m - 1)[:, None] + _np.arange(m)[None, :]
    windows = take(padded, idx.reshape(-1), axis=0).reshape(n + m - 1, m)
    full = dot(windows, lax.rev(v, (0,)), preferred_element_type=preferred_element_type)
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2
        return lax.slice_in_dim(full, start, start + n)
    return lax.slice_in_dim(full, m - 1, n)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation ``c[k] = Σ_n a[n + k] conj(v[n])`` of 1-D ``a`` and ``v``, i.e.
    ``convolve(a, conj(v[::-1]))``. Mirrors ``jax.numpy.correlate``."""
    (a, v), _ = _prep("correlate", a, v)
    if get_aval(v).ndim != 1:
        raise ValueError("correlate() only support 1-dimensional inputs.")
    if get_aval(v).dtype.kind == "c":
        v = conjugate(v)
    return convolve(a, lax.rev(v, (0,)), mode, preferred_element_type=preferred_element_type)



def einsum_path(subscripts, /, *operands, optimize="auto"):
    """``(path, description)``: the order of pairwise contractions ``einsum`` would take for operands of
    these shapes (NumPy's path search: 'optimal' for up to four operands under 'auto', else 'greedy'; a
    given list is checked and returned). Mirrors ``jax.numpy.einsum_path``."""
    shaped = [_np.broadcast_to(_np.zeros((), _np.float32), _np.shape(o)) for o in operands]
    if optimize == "auto" or optimize is True:
        optimize = "optimal" if len(operands) <= 4 else "greedy"
    elif optimize is False:
        optimize = False
    elif isinstance(optimize, (list, tuple)):
        optimize = ["einsum_path"] + [tuple(p) for p in optimize if p != "einsum_path"]
    path, text = _np.einsum_path(subscripts, *shaped, optimize=optimize)
    return [tuple(p) for p in path[1:]], text

__all__ += ['einsum_path']
