"""Convolutions: ``conv_general_dilated`` (XLA's ConvGeneralDilated) with its ``lax`` wrappers (``conv``,
``conv_with_general_padding``, ``conv_transpose``), dimension numbers, abstract eval, jvp, transpose and
batching rules, and its lowering. Mirrors ``jax.lax.conv_general_dilated`` and friends.

Lowering: float32/float64 convolutions go to the core's library op ``conv_general_dilated``
(``rust/backend/cpu/library/conv.rs``: im2col blocks into ``gemm``, direct loops for depthwise); every other
case is inlined as im2col from primitives the core has (``pad``, strided ``slice``, ``concatenate``,
``dot_general``).
"""
import itertools
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..core import ShapedArray, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.partial_eval import trace_to_jaxpr
from . import elementwise as _ew
from . import library as _lib
from . import structural as _st
from .standard import standard_primitive

__all__ = ["ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_p", "conv_transpose", "conv_with_general_padding", "padtype_to_pads"]


class ConvDimensionNumbers(namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])):
    """The dimensions of a convolution's operands, as axis numbers: ``lhs_spec`` and ``out_spec`` are
    ``(batch dimension, feature dimension, spatial dimensions...)``; ``rhs_spec`` is ``(out feature
    dimension, in feature dimension, spatial dimensions...)``. Mirrors ``jax.lax.ConvDimensionNumbers``."""
    __slots__ = ()


# ----------------------------------------------------------------------------------------------- params

def _ints(xs):
    return tuple(int(x) for x in xs)


def _spec_perms(specs):
    """Three layout strings ('NCHW', 'OIHW', 'NCHW' style) → their axis numbers. The spatial dimensions
    are ordered as the kernel's string names them (as in JAX)."""
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        s = specs[i]
        if s.count(a) != 1 or s.count(b) != 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters '{a}' and '{b}' "
                            f"exactly once, got {s}.")
        if len(set(s)) != len(s):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {s}.")
    spatial = [set(s) - set(p) for s, p in zip(specs, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"convolution dimension_numbers elements must each have the same set of spatial "
                        f"characters, got {tuple(specs)}.")
    rhs = specs[1]
    out = []
    for s, (a, b) in zip(specs, pairs):
        sp = sorted((i for i, c in enumerate(s) if c not in (a, b)), key=lambda i: rhs.index(s[i]))
        out.append((s.index(a), s.index(b)) + tuple(sp))
    return ConvDimensionNumbers(*out)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` (None, a ``ConvDimensionNumbers``, or three layout strings such as
    ``('NHWC', 'HWIO', 'NHWC')``) as a ``ConvDimensionNumbers`` for operands of these shapes. Raises
    TypeError for mismatched ranks or malformed layouts. Mirrors ``jax.lax.conv_dimension_numbers``."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(_ints(s) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {len(lhs_shape)} and "
                        f"{len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)) and len(dimension_numbers) == 3:
        if all(isinstance(s, str) for s in dimension_numbers):
            for s, shape in zip(dimension_numbers[:2], (lhs_shape, rhs_shape)):
                if len(s) != len(shape):
                    raise TypeError(f"convolution dimension_numbers {tuple(dimension_numbers)} do not match "
                                    f"operand rank {len(shape)}")
            return _spec_perms(dimension_numbers)
        return ConvDimensionNumbers(*(_ints(s) for s in dimension_numbers))
    raise TypeError(f"convolution dimension_numbers must be None, a ConvDimensionNumbers or a tuple of three "
                    f"strings, got {dimension_numbers!r}")


def _dilate(n, d):
    return 0 if n == 0 else 1 + d * (n - 1)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit ``(lo, hi)`` pairs for a padding string: ``'VALID'`` (none), ``'SAME'`` (output size
    ``ceil(in / stride)``, the extra element at the end) or ``'SAME_LOWER'`` (at the start). Raises
    RuntimeError for another string. Mirrors ``jax.lax.padtype_to_pads``."""
    p = padding.upper() if isinstance(padding, str) else padding
    if p == "VALID":
        return [(0, 0)] * len(in_shape)
    if p in ("SAME", "SAME_LOWER"):
        out = []
        for n, w, s in zip(in_shape, window_shape, window_strides):
            o = -(-int(n) // int(s))
            total = max(0, (o - 1) * int(s) + int(w) - int(n))
            small = total // 2
            out.append((small, total - small) if p == "SAME" else (total - small, small))
        return out
    raise RuntimeError(f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}.")


def _conv_out_spatial(lhs_sp, rhs_sp, strides, padding, lhs_dil, rhs_dil):
    out = []
    for n, k, s, (lo, hi), ld, rd in zip(lhs_sp, rhs_sp, strides, padding, lhs_dil, rhs_dil):
        a = _dilate(n, ld) + lo + hi
        b = _dilate(k, rd)
        out.append(max(0, (a - b) // s + 1))
    return tuple(out)


def _conv_abstract(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, precision=None, preferred_element_type=None,
                   out_sharding=None):
    name = "conv_general_dilated"
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.conv_general_dilated requires arguments to have the same dtypes, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}.")
    if lhs.ndim != rhs.ndim:
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got {lhs.ndim} and {rhs.ndim}.")
    if lhs.ndim < 2:
        raise TypeError(f"convolution requires operands of rank >= 2, got shapes {lhs.shape} and {rhs.shape}")
    ls, rs, os_ = dimension_numbers
    for which, spec in (("lhs_spec", ls), ("rhs_spec", rs), ("out_spec", os_)):
        if sorted(spec) != list(range(lhs.ndim)):
            raise TypeError(f"convolution dimension_numbers.{which} must be a permutation of "
                            f"{tuple(range(lhs.ndim))}, got {tuple(spec)}")
    nsp = lhs.ndim - 2
    for what, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if len(v) != nsp:
            raise ValueError(f"{name} window and {what} must have the same number of dimensions, but got "
                             f"{nsp} and {len(v)}")
        if any(d <= 0 for d in v):
            raise ValueError(f"{name} {what} must be positive, got {tuple(v)}")
    if len(padding) != nsp:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {nsp}, got {len(padding)}.")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1:
        raise ValueError(f"{name} feature_group_count and batch_group_count must be positive, got {G} and {B}")
    if G > 1 and B > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be > 1, got "
                         f"batch_group_count={B} and feature_group_count={G}")
    N, C = lhs.shape[ls[0]], lhs.shape[ls[1]]
    O, I = rhs.shape[rs[0]], rhs.shape[rs[1]]
    if C % G:
        raise ValueError(f"{name} feature_group_count must divide lhs feature dimension size, but {G} does not "
                         f"divide {C}.")
    if C // G != I:
        raise ValueError(f"{name} lhs feature dimension size divided by feature_group_count must equal the rhs "
                         f"input feature dimension size, but {C} // {G} != {I}.")
    if O % G:
        raise ValueError(f"{name} rhs output feature dimension size must be a multiple of feature_group_count, "
                         f"but {O} is not a multiple of {G}.")
    if N % B:
        raise ValueError(f"{name} batch_group_count must divide lhs batch dimension size, but {B} does not "
                         f"divide {N}.")
    if O % B:
        raise ValueError(f"{name} rhs output feature dimension size must be a multiple of batch_group_count, "
                         f"but {O} is not a multiple of {B}.")
    lhs_sp = tuple(lhs.shape[d] for d in ls[2:])
    rhs_sp = tuple(rhs.shape[d] for d in rs[2:])
    canon = (N // B, O) + _conv_out_spatial(lhs_sp, rhs_sp, window_strides, padding, lhs_dilation, rhs_dilation)
    shape = [0] * lhs.ndim
    for i, d in enumerate(os_):
        shape[d] = canon[i]
    dt = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    return ShapedArray(tuple(shape), dt, lhs.weak_type and rhs.weak_type)


def _conv_wire(eqn):
    p = eqn.params
    dn = p["dimension_numbers"]
    # only equations whose result has the operands' dtype reach the core's op (``_conv_inline``)
    return {"window_strides": list(p["window_strides"]), "padding": [list(x) for x in p["padding"]],
            "lhs_dilation": list(p["lhs_dilation"]), "rhs_dilation": list(p["rhs_dilation"]),
            "lhs_spec": list(dn.lhs_spec), "rhs_spec": list(dn.rhs_spec), "out_spec": list(dn.out_spec),
            "feature_group_count": int(p["feature_group_count"]),
            "batch_group_count": int(p["batch_group_count"]), "preferred_element_type": None}


conv_general_dilated_p = standard_primitive("conv_general_dilated", _conv_abstract, wire=_conv_wire)


class _Raw:
    def __init__(self, s):
        self.s = s

    def __repr__(self):
        return self.s


def _conv_pp(eqn):
    """Params as JAX prints them (its ``ConvDimensionNumbers`` repr, and ``out_sharding=None``)."""
    out = dict(eqn.params, out_sharding=None)
    dn = out["dimension_numbers"]
    out["dimension_numbers"] = _Raw(f"ConvDimensionNumbers(lhs_spec={tuple(dn.lhs_spec)}, "
                                    f"rhs_spec={tuple(dn.rhs_spec)}, out_spec={tuple(dn.out_spec)})")
    pet = out.get("preferred_element_type")
    if pet is not None:
        out["preferred_element_type"] = _Raw(np.dtype(pet).name)
    return sorted(out.items())


conv_general_dilated_p.pp_params = _conv_pp


def _canon_padding(padding, lhs_sp, rhs_sp, strides, lhs_dilation, rhs_dilation):
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution using this op. "
                             "Please either exactly specify the required padding or use conv_transpose.")
        return tuple(tuple(p) for p in padtype_to_pads(lhs_sp, [_dilate(k, d) for k, d in zip(rhs_sp, rhs_dilation)],
                                                       strides, padding))
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"convolution padding must be a string or a sequence of (low, high) pairs, got "
                        f"{padding!r}") from None
    if len(pads) != len(lhs_sp):
        raise TypeError(f"Wrong number of explicit pads for convolution: expected {len(lhs_sp)}, got "
                        f"{len(pads)}.")
    return pads


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None):
    """General n-D convolution (XLA's ConvGeneralDilated): ``lhs`` (batch, feature, spatial... in the order
    ``dimension_numbers`` gives) convolved with the kernel ``rhs`` (out feature, in feature, spatial...).
    ``padding``: 'VALID', 'SAME', 'SAME_LOWER' or one ``(lo, hi)`` pair per spatial dimension (negative
    crops); ``lhs_dilation`` inserts holes in the input (transposed convolution), ``rhs_dilation`` in the
    kernel (atrous convolution); ``feature_group_count`` splits the features into groups (depthwise when it
    equals the feature count), ``batch_group_count`` splits the batch. Operands share a dtype; the result
    has it, or ``preferred_element_type``. ``precision`` is accepted and ignored (the CPU computes at full
    precision). Raises TypeError/ValueError for mismatched shapes, ranks, layouts or group counts, as JAX.
    Mirrors ``jax.lax.conv_general_dilated``."""
    lhs, rhs = _ew._as_operand(lhs), _ew._as_operand(rhs)
    la, ra = get_aval(lhs), get_aval(rhs)
    dnums = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    window_strides = _ints(window_strides)
    if len(window_strides) != nsp:
        raise ValueError(f"conv_general_dilated window and window_strides must have the same number of "
                         f"dimensions, but got {nsp} and {len(window_strides)}")
    lhs_dilation = (1,) * nsp if lhs_dilation is None else _ints(lhs_dilation)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else _ints(rhs_dilation)
    lhs_sp = tuple(la.shape[d] for d in dnums.lhs_spec[2:])
    rhs_sp = tuple(ra.shape[d] for d in dnums.rhs_spec[2:])
    pads = _canon_padding(padding, lhs_sp, rhs_sp, window_strides, lhs_dilation, rhs_dilation)
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dnums, feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=precision, preferred_element_type=pet)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with no dilation and NCHW/OIHW layouts. Mirrors ``jax.lax.conv``."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """``conv_general_dilated`` with NCHW/OIHW layouts. Mirrors ``jax.lax.conv_with_general_padding``."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """Padding of the input-dilated convolution that computes a transposed convolution (kernel size ``k``
    after dilation, stride ``s``), for 'SAME' / 'VALID'."""
    if padding == "SAME":
        pad_len = k + s - 2
        lo = k - 1 if s > k - 1 else -(-pad_len // 2)
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"conv_transpose padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}")
    return lo, pad_len - lo


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """Transposed ("deconvolution") convolution: ``conv_general_dilated`` with the input dilated by
    ``strides``; with ``transpose_kernel`` the kernel is flipped spatially and its in/out features swapped
    (the gradient of a strided convolution). ``padding``: 'SAME', 'VALID' or explicit pairs. Mirrors
    ``jax.lax.conv_transpose``."""
    lhs, rhs = _ew._as_operand(lhs), _ew._as_operand(rhs)
    la, ra = get_aval(lhs), get_aval(rhs)
    if la.ndim < 3:
        raise ValueError(f"conv_transpose requires operands of rank >= 3, got {la.shape}")
    if dimension_numbers is None:
        names = {3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if la.ndim not in names:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = names[la.ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    k_sdims = [ra.shape[d] for d in dn.rhs_spec[2:]]
    nsp = len(k_sdims)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else _ints(rhs_dilation)
    strides = _ints(strides)
    eff_k = [_dilate(k, d) for k, d in zip(k_sdims, rhs_dilation)]
    if isinstance(padding, str):
        pads = [_conv_transpose_padding(k, s, padding) for k, s in zip(eff_k, strides)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = _st.rev_p.bind(rhs, dimensions=tuple(dn.rhs_spec[2:]))
        perm = list(range(ra.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = _st.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, strides, rhs_dilation, dn, precision=precision,
                                preferred_element_type=preferred_element_type)


# ----------------------------------------------------------------------------------------------- lowering

def _im2col_conv(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                 feature_group_count, batch_group_count, out_dtype):
    """The convolution as im2col: canonical layouts, a padded/dilated input, one strided slice per kernel
    offset stacked into patches, then one batched ``dot_general`` per group."""
    ls, rs, os_ = dimension_numbers
    x = _st.transpose(lhs, tuple(ls)) if tuple(ls) != tuple(range(len(ls))) else lhs
    w = _st.transpose(rhs, tuple(rs)) if tuple(rs) != tuple(range(len(rs))) else rhs
    xa, wa = get_aval(x), get_aval(w)
    N, C = xa.shape[:2]
    O, I = wa.shape[:2]
    ksp = wa.shape[2:]
    nsp = len(ksp)
    out_sp = _conv_out_spatial(xa.shape[2:], ksp, window_strides, padding, lhs_dilation, rhs_dilation)
    G, B = feature_group_count, batch_group_count
    Nb = N // B
    dt = xa.dtype
    KK = int(np.prod(ksp)) if ksp else 1
    P = int(np.prod(out_sp)) if out_sp else 1
    if P == 0 or KK == 0 or I == 0 or Nb == 0 or O == 0:
        return _st.full(_perm_shape((Nb, O) + out_sp, os_), 0, out_dtype)
    zero = _st.full((), 0, dt)
    cfg = ((0, 0, 0), (0, 0, 0)) + tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation))
    if any(c != (0, 0, 0) for c in cfg):
        x = _st.pad(x, zero, cfg)
    cols = []
    for k in itertools.product(*(range(n) for n in ksp)):
        start = (0, 0) + tuple(ki * d for ki, d in zip(k, rhs_dilation))
        limit = (N, C) + tuple(s + (o - 1) * st + 1 for s, o, st in zip(start[2:], out_sp, window_strides))
        sl = _st.slice_p.bind(x, start_indices=start, limit_indices=limit,
                              strides=None if all(s == 1 for s in window_strides) else (1, 1) + window_strides)
        cols.append(_st.reshape(sl, (N, C, 1, P)))
    patches = cols[0] if len(cols) == 1 else _lib.concatenate_p.bind(*cols, dimension=2)   # (N, C, KK, P)
    groups = G * B
    Cg = C // G
    patches = _st.reshape(patches, (B, Nb, G, Cg, KK, P))
    wk = _st.reshape(w, (B, G, O // groups, Cg, KK))
    if out_dtype != dt:
        patches = _ew.convert_element_type(patches, out_dtype)
        wk = _ew.convert_element_type(wk, out_dtype)
    r = _lib.dot_general(patches, wk, (((3, 4), (3, 4)), ((0, 2), (0, 1))))    # (B, G, Nb, P, Oq)
    r = _st.transpose(r, (2, 0, 1, 4, 3))                                       # (Nb, B, G, Oq, P)
    r = _st.reshape(r, (Nb, O) + out_sp)
    perm = tuple(int(i) for i in np.argsort(os_))
    return _st.transpose(r, perm) if perm != tuple(range(len(perm))) else r


def _perm_shape(canon, spec):
    shape = [0] * len(canon)
    for i, d in enumerate(spec):
        shape[d] = canon[i]
    return tuple(shape)


# The core's library op takes float32/float64 operands of one dtype, with a result of that dtype.
_NATIVE = (np.dtype(np.float32), np.dtype(np.float64))
_inline_cache = {}
native_lowering = {"enabled": True}


def _conv_inline(eqn):
    lhs, rhs = eqn.invars
    p = eqn.params
    out_dt = eqn.outvars[0].aval.dtype
    if native_lowering["enabled"] and lhs.aval.dtype in _NATIVE and out_dt == lhs.aval.dtype:
        return None   # the core's library op
    key = (lhs.aval, rhs.aval, tuple(sorted((k, str(v)) for k, v in p.items())))
    jaxpr = _inline_cache.get(key)
    if jaxpr is None:
        fn = lambda a, b: [_im2col_conv(a, b, p["window_strides"], p["padding"], p["lhs_dilation"],  # noqa: E731
                                        p["rhs_dilation"], p["dimension_numbers"], p["feature_group_count"],
                                        p["batch_group_count"], out_dt)]
        closed = trace_to_jaxpr(fn, [lhs.aval, rhs.aval])
        assert not closed.consts
        jaxpr = _inline_cache[key] = closed.jaxpr
    return jaxpr, eqn.invars


conv_general_dilated_p.inline_jaxpr = staticmethod(_conv_inline)


# ----------------------------------------------------------------------------------------------- autodiff

def _split_axis(x, axis, n):
    """Axis ``axis`` of size ``n * m`` split into (n, m), ``n`` major."""
    s = get_aval(x).shape
    return _st.reshape(x, s[:axis] + (n, s[axis] // n) + s[axis + 1:])


def _merge_axis(x, src, dst):
    """Axis ``src`` merged into axis ``dst`` (numbered without ``src``) as its major part."""
    s = get_aval(x).shape
    perm = [i for i in range(len(s)) if i != src]
    perm.insert(dst, src)
    y = _st.transpose(x, tuple(perm)) if perm != list(range(len(s))) else x
    rest = [s[i] for i in range(len(s)) if i != src]
    rest[dst] *= s[src]
    return _st.reshape(y, tuple(rest))


def _swap01(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _conv_transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision=None,
                        preferred_element_type=None, **_):
    # d lhs: the cotangent convolved with the spatially flipped kernel (in/out features swapped), with
    # the forward strides as input dilation and the forward input dilation as strides.
    ls, rs, os_ = dimension_numbers
    G, B = feature_group_count, batch_group_count
    ra = get_aval(rhs)
    if G > 1 or B > 1:
        rhs = _merge_axis(_split_axis(rhs, rs[0], G * B), rs[0], rs[1])
    groups = G * B
    lhs_sp = [lhs_aval.shape[d] for d in ls[2:]]
    rhs_sp = [ra.shape[d] for d in rs[2:]]
    out_sp = [get_aval(ct).shape[d] for d in os_[2:]]
    pads = []
    for n, k, o, s, (lo, _), ld, rd in zip(lhs_sp, rhs_sp, out_sp, window_strides, padding, lhs_dilation,
                                          rhs_dilation):
        before = _dilate(k, rd) - lo - 1
        after = _dilate(n, ld) + _dilate(k, rd) - 1 - _dilate(o, s) - before
        pads.append((before, after))
    flipped = _st.rev_p.bind(rhs, dimensions=tuple(rs[2:]))
    out = conv_general_dilated_p.bind(
        ct, flipped, window_strides=tuple(lhs_dilation), padding=tuple(pads), lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation), dimension_numbers=ConvDimensionNumbers(os_, _swap01(rs), ls),
        feature_group_count=groups, batch_group_count=1, precision=precision,
        preferred_element_type=None)
    if B > 1:
        out = _merge_axis(_split_axis(out, ls[1], B), ls[1], ls[0])
    if get_aval(out).dtype != lhs_aval.dtype:
        out = _ew.convert_element_type(out, lhs_aval.dtype)
    return out


def _conv_transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count, precision=None,
                        preferred_element_type=None, **_):
    # d rhs: the input correlated with the cotangent (batch and feature roles swapped), with the forward
    # strides as kernel dilation; feature groups become batch groups and vice versa.
    ls, rs, os_ = dimension_numbers
    la = get_aval(lhs)
    lhs_sp = [la.shape[d] for d in ls[2:]]
    rhs_sp = [rhs_aval.shape[d] for d in rs[2:]]
    out_sp = [get_aval(ct).shape[d] for d in os_[2:]]
    pads = []
    for n, k, o, s, (lo, _), ld, rd in zip(lhs_sp, rhs_sp, out_sp, window_strides, padding, lhs_dilation,
                                          rhs_dilation):
        hi = (_dilate(o, s) - _dilate(n, ld)) + (_dilate(k, rd) - lo - 1)
        pads.append((lo, hi))
    out = conv_general_dilated_p.bind(
        lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads), lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(_swap01(ls), _swap01(os_), _swap01(rs)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count, precision=precision,
        preferred_element_type=None)
    if get_aval(out).dtype != rhs_aval.dtype:
        out = _ew.convert_element_type(out, rhs_aval.dtype)
    return out


def _conv_transpose_rule(ct, lhs, rhs, **params):
    out = [None, None]
    if _ad.is_undefined(lhs):
        out[0] = _ad.Zero(lhs.aval) if _ad.is_zero(ct) else _conv_transpose_lhs(ct, lhs.aval, rhs, **params)
    if _ad.is_undefined(rhs):
        out[1] = _ad.Zero(rhs.aval) if _ad.is_zero(ct) else _conv_transpose_rhs(ct, lhs, rhs.aval, **params)
    return out


def _conv_jvp(primals, tangents, **params):
    x, w = primals
    tx, tw = tangents
    ans = conv_general_dilated_p.bind(x, w, **params)
    out = None
    if not _ad.is_zero(tx):
        out = conv_general_dilated_p.bind(tx, w, **params)
    if not _ad.is_zero(tw):
        t = conv_general_dilated_p.bind(x, tw, **params)
        out = t if out is None else _ad.add_tangents(out, t)
    return ans, (_ad.Zero(get_aval(ans)) if out is None else out)


_ad.jvp_rules[conv_general_dilated_p] = _conv_jvp
_ad.transpose_rules[conv_general_dilated_p] = _conv_transpose_rule


# ----------------------------------------------------------------------------------------------- batching

def _conv_batch(vals, dims, *, dimension_numbers, feature_group_count, batch_group_count, **params):
    # Done in canonical layouts (lhs N,C,S..., rhs O,I,S..., out N,O,S...): the mapped axis is folded into
    # the batch (lhs only), the output features (rhs only) or a new level of groups (both).
    (x, w), (bx, bw) = vals, dims
    ls, rs, os_ = dimension_numbers
    nd = len(ls)
    V = _batching.axis_size_of(vals, dims)
    G, B = feature_group_count, batch_group_count
    canon = ConvDimensionNumbers(tuple(range(nd)), tuple(range(nd)), tuple(range(nd)))
    if bx is not None:
        x = _st.transpose(_batching.moveaxis(x, bx, 0), (0,) + tuple(d + 1 for d in ls))   # V, N, C, S
    else:
        x = _st.transpose(x, tuple(ls))
    if bw is not None:
        w = _st.transpose(_batching.moveaxis(w, bw, 0), (0,) + tuple(d + 1 for d in rs))   # V, O, I, K
    else:
        w = _st.transpose(w, tuple(rs))
    bind = lambda a, b, g, bg: conv_general_dilated_p.bind(  # noqa: E731
        a, b, dimension_numbers=canon, feature_group_count=g, batch_group_count=bg, **params)
    if bw is None:
        xa = get_aval(x)
        if B == 1:
            out = bind(_st.reshape(x, (V * xa.shape[1],) + xa.shape[2:]), w, G, B)
            oa = get_aval(out)
            out = _st.reshape(out, (V, oa.shape[0] // V) + oa.shape[1:])
        else:
            # the batch groups stay the major part of the batch
            x = _split_axis(x, 1, B)                                         # V, B, Nb, C, S
            x = _st.transpose(x, (1, 0) + tuple(range(2, nd + 2)))           # B, V, Nb, C, S
            s = get_aval(x).shape
            out = bind(_st.reshape(x, (s[0] * s[1] * s[2],) + s[3:]), w, G, B)
            oa = get_aval(out)
            out = _st.reshape(out, (V, oa.shape[0] // V) + oa.shape[1:])
    elif bx is None:
        groups = G * B
        w = _split_axis(w, 1, groups)                                        # V, g, Oq, I, K
        w = _st.transpose(w, (1, 0) + tuple(range(2, nd + 2)))               # g, V, Oq, I, K
        s = get_aval(w).shape
        out = bind(x, _st.reshape(w, (s[0] * s[1] * s[2],) + s[3:]), G, B)   # N', g*V*Oq, S
        oa = get_aval(out)
        out = _st.reshape(out, (oa.shape[0], groups, V, oa.shape[1] // (groups * V)) + oa.shape[2:])
        out = _st.transpose(out, (2, 0, 1) + tuple(range(3, nd + 2)))        # V, N', g, Oq, S
        out = _st.reshape(out, (V, oa.shape[0], oa.shape[1] // V) + oa.shape[2:])
    else:
        ws = get_aval(w).shape
        w = _st.reshape(w, (V * ws[1],) + ws[2:])
        if B == 1:
            x = _st.transpose(x, (1, 0) + tuple(range(2, nd + 1)))           # N, V, C, S
            s = get_aval(x).shape
            out = bind(_st.reshape(x, (s[0], s[1] * s[2]) + s[3:]), w, G * V, 1)
        else:
            s = get_aval(x).shape
            out = bind(_st.reshape(x, (s[0] * s[1],) + s[2:]), w, 1, B * V)
        oa = get_aval(out)
        out = _st.reshape(out, (oa.shape[0], V, oa.shape[1] // V) + oa.shape[2:])
        out = _st.transpose(out, (1, 0) + tuple(range(2, nd + 1)))           # V, N, O, S
    perm = (0,) + tuple(int(i) + 1 for i in np.argsort(os_))
    return _st.transpose(out, perm), 0


_batching.batching_rules[conv_general_dilated_p] = _conv_batch
