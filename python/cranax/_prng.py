"""Threefry-2x32 and the numeric building blocks of ``cranax.random``, composed from primitives.

Everything here is built from ``shift_left``, ``shift_right_logical``, ``or``, ``xor`` and ``add`` on uint32,
``iota``, ``select_n``, ``bitcast_convert_type`` and float arithmetic, so the same program compiles on every
backend and fuses into one loop. The layout of the counters and the float recipes follow JAX 0.10.2 with
``jax_threefry_partitionable=True`` (its default), which makes the outputs bit-identical to JAX's:

* ``threefry2x32(k1, k2, x1, x2)``: Salmon et al.'s Threefry with 20 rounds (5 groups of 4), rotations
  (13, 15, 26, 6) / (17, 29, 16, 24), key schedule ``(k1, k2, k1 ^ k2 ^ 0x1BD11BDA)``, injection after
  every group of ``x0 += ks[i+1]``, ``x1 += ks[i+2] + i + 1``.
* Counters: element ``i`` (row-major flat index) of a result of shape ``S`` hashes the 64-bit counter ``i``
  split into (hi, lo) 32-bit halves; 32 random bits are ``out0 ^ out1``; a split key is ``(out0, out1)``.
* ``fold_in(key, d)`` hashes the counter ``(0, d)``.

XLA contracts ``a * b + c`` into a fused multiply-add on the CPU; :func:`fma` binds the core's (internal)
``fma`` op, one rounding as XLA's, in float32 and float64.
"""
import math

import numpy as np

from . import dtypes, lax
from . import numpy as jnp
from .core import ShapedArray, TypedScalar, get_aval, typed_scalar
from .interpreters import ad as _ad
from .interpreters import batching as _batching
from .interpreters.partial_eval import trace_to_jaxpr
from .primitives import elementwise as _ew
from .primitives import structural as _st
from .primitives.standard import standard_primitive

U32 = np.dtype(np.uint32)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
I32 = np.dtype(np.int32)

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA

# Set to False (by the test suite or a user) to round the samplers' multiply-adds twice (a multiply, then an
# add) instead of fusing them; only the last bit of a few percent of the normal samples changes.
FUSE_MULTIPLY_ADD = True


def u32(v):
    """A uint32 constant (a strongly typed literal)."""
    return typed_scalar(np.uint32(int(v) & 0xFFFFFFFF), U32, False)


def const(v, dtype):
    return typed_scalar(np.asarray(v).astype(dtype)[()], np.dtype(dtype), False)


def _rotl(x, d):
    return lax.bitwise_or(lax.shift_left(x, u32(d)), lax.shift_right_logical(x, u32(32 - d)))


def threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32 of the counters ``(x1, x2)`` under the key ``(k1, k2)``. ``k1``/``k2`` are uint32
    scalars (arrays of shape ()), ``x1``/``x2`` uint32 arrays of one shape. Returns two uint32 arrays."""
    shape = get_aval(x1).shape
    ks = [k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), u32(_PARITY))]

    def full(k):
        # keys are rank-0 values: broadcast once so every op below has one shape
        if shape and get_aval(k).shape != shape:
            return lax.broadcast_in_dim(k, shape, ())
        return k

    a = lax.add(x1, full(ks[0]))
    b = lax.add(x2, full(ks[1]))
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            a = lax.add(a, b)
            b = lax.bitwise_xor(a, _rotl(b, r))
        a = lax.add(a, full(ks[(i + 1) % 3]))
        # uint32 addition is associative (mod 2**32): add the round constant to the scalar key first
        b = lax.add(b, full(lax.add(ks[(i + 2) % 3], u32(i + 1))))
    return a, b


def flat_iota(shape):
    """uint32 array of ``shape`` holding each element's row-major flat index (the low half of JAX's
    ``iota_2x32_shape``; the high half is zero below 2**32 elements)."""
    shape = tuple(shape)
    size = int(np.prod(shape, dtype=np.int64))
    if size >= 2 ** 32:
        raise NotImplementedError("random bits arrays of 2**32 elements or more")
    if not shape:
        return None
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    out = None
    for d, s in enumerate(strides):
        if shape[d] == 1:
            continue
        t = lax.broadcasted_iota(U32, shape, d)
        if s != 1:
            t = lax.mul(t, u32(s))
        out = t if out is None else lax.add(out, t)
    if out is None:
        out = lax.full(shape, np.uint32(0), U32)
    return out


def key_halves(key):
    """(k1, k2) rank-0 uint32 values of a uint32[2] key."""
    return key[0], key[1]


def hash_counts(key, shape):
    """Threefry of the flat counters of ``shape``: (out0, out1) uint32 arrays of ``shape``."""
    k1, k2 = key_halves(key)
    lo = flat_iota(shape)
    if lo is None:
        zero = lax.full((), np.uint32(0), U32)
        return threefry2x32(k1, k2, zero, zero)
    hi = lax.full(shape, np.uint32(0), U32)
    return threefry2x32(k1, k2, hi, lo)


def stack_last(a, b):
    """``stack([a, b], axis=-1)`` from broadcast and select (no concatenate primitive needed)."""
    shape = get_aval(a).shape
    out = shape + (2,)
    dims = tuple(range(len(shape)))
    A = lax.broadcast_in_dim(a, out, dims)
    B = lax.broadcast_in_dim(b, out, dims)
    which = lax.eq(lax.broadcasted_iota(I32, out, len(shape)), 1)
    return lax.select(which, B, A)


def split(key, shape):
    """Keys of ``shape`` (uint32 ``(*shape, 2)``) from one uint32[2] key."""
    a, b = hash_counts(key, shape)
    return stack_last(a, b)


def fold_in(key, data):
    """uint32[2] key from a key and a uint32 scalar."""
    k1, k2 = key_halves(key)
    zero = lax.full((), np.uint32(0), U32)
    a, b = threefry2x32(k1, k2, zero, data)
    return stack_last(a, b)


def random_bits32(key, shape):
    a, b = hash_counts(key, shape)
    return lax.bitwise_xor(a, b)


def random_bits64_as_int64(key, shape):
    """64 random bits per element (JAX: ``out0 << 32 | out1``) in an int64 array (cranax has no uint64)."""
    a, b = hash_counts(key, shape)
    i64 = np.dtype(np.int64)
    hi = lax.convert_element_type(a, i64)
    lo = lax.convert_element_type(b, i64)
    return lax.bitwise_or(lax.shift_left(hi, const(32, i64)), lo)


# ------------------------------------------------------------------------------------------ float helpers

def to_dtype(x, dtype, bypass_canonical=False):
    """``x`` as ``dtype`` (binds convert_element_type directly so float64 works with x64 off)."""
    dtype = np.dtype(dtype)
    if isinstance(x, (bool, int, float, np.generic, np.ndarray, TypedScalar)) and np.ndim(
            x.val if isinstance(x, TypedScalar) else x) == 0:
        v = x.val if isinstance(x, TypedScalar) else x
        if bypass_canonical:
            return typed_scalar(v, dtype, False)
        with np.errstate(all="ignore"):
            return np.asarray(v).astype(dtype)[()]
    if isinstance(x, np.ndarray):
        if not bypass_canonical:
            return x.astype(dtype)
        x = lax._as_operand(x)
    av = get_aval(x)
    if av.dtype == dtype and not av.weak_type:
        return x
    if not bypass_canonical:
        return lax.convert_element_type(x, dtype)
    return _ew.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False, sharding=None)


def _bshape(*xs):
    shape = ()
    for x in xs:
        s = get_aval(x).shape if not isinstance(x, (int, float)) else ()
        if len(s) > len(shape):
            shape = s
    return shape


def _bcast(x, shape):
    if isinstance(x, (TypedScalar, int, float, np.generic)):
        return x
    av = get_aval(x)
    if av.shape == shape:
        return x
    if av.ndim == 0:
        return lax.broadcast_in_dim(x, shape, ())
    # numpy-style broadcasting of a lower-rank / size-1 operand
    nd = len(shape)
    xs = (1,) * (nd - av.ndim) + av.shape
    x = lax.reshape(x, xs) if xs != av.shape else x
    keep = tuple(i for i in range(nd) if xs[i] == shape[i])
    squeezed = tuple(i for i in range(nd) if xs[i] != shape[i])
    if squeezed:
        x = lax.reshape(x, tuple(xs[i] for i in keep))
    return lax.broadcast_in_dim(x, shape, keep)


def fma(a, b, c):
    """``a * b + c`` rounded once (XLA's contracted multiply-add on the CPU) for float32 and float64 operands
    (numpy broadcasting; Python scalars take the arrays' dtype): the core's ``fma`` op, the host's FMA
    instruction. Other dtypes, or ``FUSE_MULTIPLY_ADD = False``, round the product and the sum separately."""
    dt = None
    for v in (a, b, c):
        if not isinstance(v, (int, float, TypedScalar, np.generic)):
            dt = get_aval(v).dtype
            break
        if isinstance(v, (TypedScalar, np.generic)):
            dt = get_aval(v).dtype
    if dt not in (F32, F64) or not FUSE_MULTIPLY_ADD:
        return jnp.add(jnp.multiply(a, b), c)
    shape = _bshape(a, b, c)

    def arr(v):
        # constants as arrays of the dtype (a float64 literal would be canonicalized to float32 when a jaxpr
        # is re-traced with x64 off), everything at the full shape: fma takes operands of one shape
        if isinstance(v, (int, float, np.generic, TypedScalar)):
            val = v.val if isinstance(v, TypedScalar) else v
            v = lax.full(shape if shape else (1,), dt.type(val), dt)
            return v if shape else lax.reshape(v, ())
        return _bcast(v, shape)
    return _ew.fma_p.bind(arr(a), arr(b), arr(c))


def horner(coeffs, x):
    """``((c0 * x + c1) * x + c2) ...`` with each step a fused multiply-add (XLA's EvaluatePolynomial).
    ``coeffs`` is a list of float32 constants or arrays shaped like ``x``."""
    p = coeffs[0]
    if isinstance(p, (float, int)):
        p = lax.full(get_aval(x).shape, np.float32(p), F32)
    for c in coeffs[1:]:
        if isinstance(c, (float, int)):
            c = const(c, F32)
        p = fma(p, x, c)
    return p


def log(x):
    """Natural log as XLA's CPU backend computes it: ``lax.log``, whose float32 lowering is XLA's sequence
    (Cephes' polynomial on the mantissa reduced to [sqrt(1/2), sqrt(2)), with fused multiply-adds:
    ``rust/backend/cpu/math_f32.rs``), so it is bit-identical to XLA for every normal input on a host with
    FMA, and stays in float32 lanes (a kernel holding it vectorizes). Kept as a name so the samplers say
    which log they need."""
    return lax.log(x)


_LOG1P_NUM = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
              2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
              2.0039553499201281259648E1)
_LOG1P_DEN = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1, 2.2176239823732856465394E2,
              3.0909872225312059774938E2, 2.1642788614495947685003E2, 6.0118660497603843919306E1)


def log1p(x):
    """``log1p`` as XLA's CPU backend computes it for float32 (a Cephes rational function below
    sqrt(2) - 1, ``log(1 + x)`` above); other dtypes use the primitive."""
    if get_aval(x).dtype != F32:
        return lax.log1p(x)
    large = log(lax.add(x, const(1.0, F32)))
    x2 = lax.mul(x, x)
    small = lax.div(horner(list(_LOG1P_NUM), x), horner(list(_LOG1P_DEN), x))
    small = lax.mul(lax.mul(x, x2), small)
    small = fma(const(-0.5, F32), x2, small)
    small = lax.add(x, small)
    is_small = lax.lt(lax.abs(x), const(0.41421356237309504880, F32))
    return lax.select(is_small, small, large)


# ------------------------------------------------------------------------------ YNNPACK's exp, log, log1p
# XLA:CPU (jaxlib 0.10.2) hands a fusion rooted at a reduce to YNNPACK (XNNPACK's ``ynnpack/``, a snapshot of
# late May 2026: kernels ``exp_fp32``, ``log_fp64``, ...): there ``exp``, ``log`` and ``log1p`` are YNNPACK's own
# polynomials, not XLA's. The samplers whose tail XLA fuses so (dirichlet's softmax over log-gamma draws,
# ball's norm) call these instead of lax.exp/log/log1p. Same arithmetic, in the same order, with the same
# fused multiply-adds (YNNPACK's x86 kernels use FMA where the CPU has it; ``fma`` here rounds once too).
# exp: x = b*ln2 + r, b = round(x*log2e) by the 1.5*2**m magic-number trick, r from a two-part ln2 by FMA,
# exp(r) - 1 ~= r + r^2*P(r) (P evaluated in even/odd halves on r^2), result = 2^b + 2^b*(exp(r) - 1), 2^b
# built in the exponent bits (b = -127 gives 0). log: y = 2^e * m with m in [sqrt(1/2), sqrt(2)),
# log(m) ~= r + r^2*P(r)/Q(r) for r = m - 1, result = e*ln2 + log(m); log1p takes r = x when e = 0.

_YNN_EXP = {
    F32: ((-4.9866619520e-05, 2.2773783712e-04, 1.4132461511e-03, 8.3242934197e-03, 4.1665628552e-02,
           1.6666725278e-01, 4.9999994040e-01),
          6.9314575195e-01, 1.4286067653e-06, -88.02969360351562, 88.72283935546875),
    F64: ((2.119890244143296032e-09, 2.521079371356939368e-08, 2.755585399809175769e-07, 2.755675838881680360e-06,
           2.480158976814372031e-05, 1.984127071808468106e-04, 1.388888888680978647e-03, 8.333333332743943569e-03,
           4.166666666668113195e-02, 1.666666666666796748e-01, 4.999999999999995559e-01),
          6.93147180369123816490e-01, 1.90821492927058770002e-10, -709.0895657128241, 709.782712893384),
}
_YNN_LOG = {
    F32: ((-5.2293352783e-03, -3.3127889037e-01, -4.9999964237e-01), (3.9658042789e-01, 1.3292170763e+00, 1.0)),
    F64: ((-2.956046447212538203e-03, -6.691314126082094360e-02, -4.289980732181625789e-01,
           -1.110965361416291097e+00, -1.242991301338429500e+00, -4.999999999999990008e-01),
          (3.009181610003072455e-03, 7.942469932969810353e-02, 6.369060590899747742e-01, 2.230802780023532605e+00,
           3.823696902394678077e+00, 3.152649269343555716e+00, 1.0)),
}


def _ynn_dtype(x, name):
    dt = get_aval(x).dtype
    if dt not in (F32, F64):
        raise TypeError(f"{name} (YNNPACK's) takes float32 or float64, got {dt}")
    return dt


def _ynn_poly(coeffs, x, x2):
    """YNNPACK's polynomial evaluation (highest term first) in two halves on ``x2``, joined by one FMA."""
    dt = get_aval(x).dtype
    shape = get_aval(x).shape
    y = [lax.full(shape, dt.type(coeffs[0]), dt), lax.full(shape, dt.type(coeffs[1]), dt)]
    for i in range(2, len(coeffs)):
        y[i % 2] = fma(x2, y[i % 2], dt.type(coeffs[i]))
    return fma(x, y[1], y[0]) if len(coeffs) % 2 else fma(x, y[0], y[1])


def ynn_exp(x):
    """``exp`` as YNNPACK computes it (float32, float64)."""
    dt = _ynn_dtype(x, "ynn_exp")
    c = lambda v: const(v, dt)  # noqa: E731
    p, ln2_hi, ln2_lo, min_x, max_x = _YNN_EXP[dt]
    f32 = dt == F32
    xc = lax.min(lax.max(x, c(min_x)), c(max_x))
    magic = c(1.5 * 2.0 ** 23) if f32 else c(1.5 * 2.0 ** 52)
    b = lax.sub(lax.add(magic, lax.mul(xc, c(1.4426950408889634))), magic)
    r = fma(b, dt.type(-ln2_hi), xc)
    r = fma(b, dt.type(-ln2_lo), r)
    it, bias, mant = (np.dtype(np.int32), 127 + 2 ** 23, 23) if f32 else (np.dtype(np.int64), 1023 + 2 ** 52, 52)
    bits = lax.bitcast_convert_type(lax.add(b, c(bias)), it)
    exp2_b = lax.bitcast_convert_type(lax.shift_left(bits, const(mant, it)), dt)
    exp2_b = lax.select(lax.ne(x, x), x, exp2_b)
    r2 = lax.mul(r, r)
    exp2_r = fma(r2, _ynn_poly(p, r, r2), r)
    # fma(2^b, e, 2^b) rounds 2^b * (1 + e) once; 2^b is a power of two, so that is 2^b * fl(1 + e) wherever
    # the result is normal (a subnormal one is flushed either way), and it keeps the float64 fma emulation
    # away from 2^b near 2**-1022, where its partial products would underflow
    out = lax.mul(exp2_b, lax.add(c(1.0), exp2_r))
    return lax.select(lax.eq(exp2_b, c(np.inf)), exp2_b, out)


def _ynn_log(x, plus_one):
    dt = _ynn_dtype(x, "ynn_log1p" if plus_one else "ynn_log")
    c = lambda v: const(v, dt)  # noqa: E731
    f32 = dt == F32
    it, mant, emask, bias, mmask = ((np.dtype(np.int32), 23, 0xFF, 127, 0x007FFFFF) if f32 else
                                    (np.dtype(np.int64), 52, 0x7FF, 1023, 0x000FFFFFFFFFFFFF))
    one = c(1.0)
    y = lax.add(x, one) if plus_one else x
    bits = lax.bitcast_convert_type(y, it)
    # floor(log2 y) of a positive normal y (AVX-512's getexp; the other cases are patched below)
    e = lax.convert_element_type(
        lax.sub(lax.bitwise_and(lax.shift_right_logical(bits, const(mant, it)), const(emask, it)), const(bias, it)),
        dt)
    m = lax.bitcast_convert_type(lax.bitwise_or(lax.bitwise_and(bits, const(mmask, it)),
                                                const(int(np.array(1.0, dt).view(it)), it)), dt)
    large = lax.gt(m, c(1.41421356237309504880))
    e = lax.select(large, lax.add(e, one), e)
    m = lax.select(large, lax.mul(m, c(0.5)), m)
    r = lax.sub(m, one)
    if plus_one:
        r = lax.select(lax.eq(e, c(0.0)), x, r)
    r2 = lax.mul(r, r)
    P, Q = _YNN_LOG[dt]
    log_r = fma(r2, lax.div(_ynn_poly(P, r, r2), _ynn_poly(Q, r, r2)), r)
    out = fma(e, dt.type(6.93147180559945309e-01), log_r)
    # zero, subnormal (treated as zero), negative, inf and nan: the primitive's -inf / nan / inf
    normal = lax.bitwise_and(lax.ge(y, c(np.finfo(dt).tiny)), lax.lt(y, c(np.inf)))
    return lax.select(normal, out, lax.log1p(x) if plus_one else lax.log(x))


def ynn_log(x):
    """``log`` as YNNPACK computes it (float32, float64)."""
    return _ynn_log(x, False)


def ynn_log1p(x):
    """``log1p`` as YNNPACK computes it (float32, float64)."""
    return _ynn_log(x, True)


def xla_sum_last(x):
    """``sum(x, axis=-1)`` in XLA:CPU's own order (where YNNPACK does not take the reduce): a row of at most
    32 is added left to right; a longer one is zero-padded (low half of the padding first) to a multiple of
    32 and summed in windows of 32 (XLA's tree-reduction rewrite), the window sums reduced the same way."""
    shape = tuple(get_aval(x).shape)
    if not shape:
        raise ValueError("xla_sum_last needs an array of rank >= 1")
    dt = get_aval(x).dtype
    ax = len(shape) - 1
    k = shape[-1]
    if k == 0:
        return lax.full(shape[:-1], dt.type(0), dt)
    if k <= 32:
        s = lax.squeeze(lax.slice_in_dim(x, 0, 1, axis=ax), (ax,))
        for i in range(1, k):
            s = lax.add(s, lax.squeeze(lax.slice_in_dim(x, i, i + 1, axis=ax), (ax,)))
        return s
    padded = -(-k // 32) * 32
    lo = (padded - k) // 2
    xp = lax.pad(x, dt.type(0), [(0, 0, 0)] * ax + [(lo, padded - k - lo, 0)])
    windows = lax.reshape(xp, shape[:-1] + (padded // 32, 32))
    return xla_sum_last(xla_sum_last(windows))


# XLA:CPU hands an instruction to YNNPACK only when it or one of its operands has at least this many
# elements (``IsInstructionPreferredByYnn``); smaller ones keep XLA's own kernels.
YNN_MIN_ELEMENTS = 4096


def ynn_sized(shape):
    """Whether XLA:CPU would run an operation over an array of ``shape`` in YNNPACK."""
    return int(np.prod(shape, dtype=np.int64)) >= YNN_MIN_ELEMENTS


def ynn_sum_last(x):
    """``sum(x, axis=-1)`` in YNNPACK's order (its float ``sum_k1`` kernel, contiguous last axis): lanes of
    64 bytes (16 float32 / 8 float64); each block of 4 lane-vectors of the row is summed lanewise, blocks feed
    a tree of accumulators whose last level is Kahan-compensated, and the lanes are folded in halves
    (lane i + lane i + w/2 ...) at the end. For a row of at most 16 (8) elements that is the halving fold of
    the zero-padded row."""
    dt = _ynn_dtype(x, "ynn_sum_last")
    shape = tuple(get_aval(x).shape)
    if not shape:
        raise ValueError("ynn_sum_last needs an array of rank >= 1")
    lead, k = shape[:-1], shape[-1]
    n = 64 // dt.itemsize
    zeros = lambda: lax.full(lead + (n,), dt.type(0), dt)  # noqa: E731
    acc = [zeros(), zeros(), zeros()]
    err = zeros()

    def partial(start, count):
        # acc[0] += ((c0 + c1) + c2) + c3, the four lane-vectors of the (zero-padded) block
        blk = lax.slice_in_dim(x, start, start + count, axis=len(lead))
        if count < 4 * n:
            blk = lax.pad(blk, dt.type(0), [(0, 0, 0)] * len(lead) + [(0, 4 * n - count, 0)])
        local = zeros()
        for j in range(4):
            local = lax.add(local, lax.slice_in_dim(blk, j * n, (j + 1) * n, axis=len(lead)))
        acc[0] = lax.add(acc[0], local)

    def accumulate(clock):
        nonlocal err
        if clock & 15 == 0:
            acc[1] = lax.add(acc[1], acc[0])
            acc[0] = zeros()
            if clock & 255 == 0:
                y = lax.sub(acc[1], err)
                t = lax.add(acc[2], y)
                e = lax.sub(lax.sub(t, acc[2]), y)
                finite = lax.lt(lax.abs(e), const(np.inf, dt))
                err = lax.select(finite, e, zeros())
                acc[2] = t
                acc[1] = zeros()

    pos, rem, clock = 0, k, 0
    while rem >= 16 * n:
        for _ in range(4):
            partial(pos, 4 * n)
            pos += 4 * n
        rem -= 16 * n
        clock += 4 * n
        accumulate(clock)
    while rem >= 4 * n:
        partial(pos, 4 * n)
        pos += 4 * n
        rem -= 4 * n
        clock += n
        accumulate(clock)
    if rem > 0:
        partial(pos, rem)
    accumulate(0)
    v = lax.add(zeros(), acc[2])
    w = n
    while w > 1:
        w //= 2
        v = lax.add(lax.slice_in_dim(v, 0, w, axis=len(lead)), lax.slice_in_dim(v, w, 2 * w, axis=len(lead)))
    return lax.add(lax.full(lead, dt.type(0), dt), lax.reshape(v, lead))



# ------------------------------------------------------------------------------ the choice, on the final shape
# XLA:CPU decides per compiled program, on the shapes it sees there: under vmap that is the batched shape
# (3 keys x (1000, 3) draws span 9000 elements, each draw 3000), and an operand the vmap does not map (the
# gamma's d = alpha - 1/3 when only the key is mapped) is broadcast into the same fusion. So the samplers do
# not choose while they trace (the per-example shape); they bind ``ynn_choice``, whose batching rule binds it
# again at the batched shape (unmapped operands broadcast, as XLA fuses them) and whose lowering
# (``inline_jaxpr``, when the shape is final) picks YNNPACK's routines at >= 4096 elements, XLA's own below.
def _log_add(log_):
    # the log-gamma's tail, log(d) + log(V) + log_boost, as dirichlet's fusion holds it
    return lambda d, v, b: lax.add(lax.add(log_(d), log_(v)), b)


_YNN_CHOICES = {
    "exp": (lambda x: ynn_exp(x), lambda x: lax.exp(x)),
    "log1p": (lambda x: ynn_log1p(x), lambda x: log1p(x)),
    "log_add": (_log_add(lambda x: ynn_log(x)), _log_add(lambda x: log(x))),
    "sum_last": (lambda x: ynn_sum_last(x), lambda x: xla_sum_last(x)),
}
_YNN_ARITY = {"exp": 1, "log1p": 1, "log_add": 3, "sum_last": 1}


def _ynn_choice_abstract(*xs, fn):
    if fn not in _YNN_CHOICES:
        raise ValueError(f"ynn_choice: unknown fn {fn!r}")
    if len(xs) != _YNN_ARITY[fn]:
        raise TypeError(f"ynn_choice({fn}) takes {_YNN_ARITY[fn]} operands, got {len(xs)}")
    x = xs[0]
    if any(v.dtype != x.dtype or v.shape != x.shape for v in xs):
        raise TypeError(f"ynn_choice({fn}) needs operands of one shape and dtype, got "
                        f"{[(v.shape, str(v.dtype)) for v in xs]}")
    if x.dtype not in (F32, F64):
        raise TypeError(f"ynn_choice takes float32 or float64, got {x.dtype}")
    if fn == "sum_last":
        if x.ndim < 1:
            raise ValueError("ynn_choice(sum_last) needs an array of rank >= 1")
        return ShapedArray(x.shape[:-1], x.dtype, x.weak_type)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


ynn_choice_p = standard_primitive("ynn_choice", _ynn_choice_abstract)
_ynn_choice_cache = {}


def _ynn_choice_inline(eqn):
    fn = eqn.params["fn"]
    avals = tuple(v.aval for v in eqn.invars)
    key = (avals, fn)
    jaxpr = _ynn_choice_cache.get(key)
    if jaxpr is None:
        big, small = _YNN_CHOICES[fn]
        chosen = big if ynn_sized(avals[0].shape) else small
        jaxpr = _ynn_choice_cache[key] = trace_to_jaxpr(lambda *a: [chosen(*a)], list(avals)).jaxpr
    return jaxpr, eqn.invars


def _ynn_choice_batch(vals, dims, *, fn):
    if len(vals) == 1 and not (fn == "sum_last" and dims[0] == get_aval(vals[0]).ndim - 1):
        return ynn_choice_p.bind(vals[0], fn=fn), dims[0]
    # the batch axis first on every operand (the reduced axis stays last)
    size = _batching.axis_size_of(vals, dims)
    return ynn_choice_p.bind(*[_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)], fn=fn), 0


def _ynn_choice_jvp(primals, tangents, *, fn):
    ans = ynn_choice_p.bind(*primals, fn=fn)
    if all(type(t) is _ad.Zero for t in tangents):
        return ans, _ad.Zero(get_aval(ans))
    if fn == "sum_last":
        return ans, ynn_choice_p.bind(tangents[0], fn=fn)
    if fn == "exp":
        return ans, lax.mul(tangents[0], ans)
    if fn == "log1p":
        x = primals[0]
        return ans, lax.div(tangents[0], lax.add(x, const(1, get_aval(x).dtype)))
    # log_add: dd/d + dv/v + db
    out = None
    for i, (x, t) in enumerate(zip(primals, tangents)):
        if type(t) is _ad.Zero:
            continue
        term = t if i == 2 else lax.div(t, x)
        out = term if out is None else lax.add(out, term)
    return ans, out


def _ynn_choice_transpose(ct, *xs, fn):
    # only sum_last is linear (the jvp above applies no other choice to a tangent)
    x, = xs
    if type(ct) is _ad.Zero:
        return [_ad.Zero(x.aval)]
    shape = x.aval.shape
    return [_st.broadcast_in_dim(ct, shape, tuple(range(len(shape) - 1)))]


ynn_choice_p.inline_jaxpr = staticmethod(_ynn_choice_inline)
_batching.batching_rules[ynn_choice_p] = _ynn_choice_batch
_ad.jvp_rules[ynn_choice_p] = _ynn_choice_jvp
_ad.transpose_rules[ynn_choice_p] = _ynn_choice_transpose


def ynn_choice(fn, *xs):
    """``fn`` ("exp", "log1p", "sum_last", or "log_add": log(a) + log(b) + c) of ``xs`` as XLA:CPU computes it
    inside a reduce fusion: YNNPACK's routines where it spans >= 4096 elements once every vmap is applied,
    XLA's own below."""
    return ynn_choice_p.bind(*xs, fn=fn)

# ------------------------------------------------------------------------------ whole chains, on the final shape
# A half-float sampler's tail (bfloat16 ball, dirichlet) is, from 4096 rows of the final shape on, one YNNPACK
# fusion that XLA:CPU pulls the elementwise ops around the row sum into; inside it the half-float roundings
# between ops are gone (YNNPACK drops the convert pairs: float32 throughout, rounded once at the end). Below
# that the same ops run in XLA's own loops, each rounded. A sampler registers the two forms of its tail in
# ``YNN_CHAINS[name] = (fused, per_op, tangent)``: functions of arrays whose last axis is the reduced one (operands of
# the rows' shape drop it), and binds ``ynn_chain(name, ...)``; the lowering picks one on the final shape.
# The third entry, ``tangent(primals, tangents)``, gives the output's tangent (called only when some operand
# has one); the forms themselves round and reorder as XLA does and are not differentiated.
YNN_CHAINS = {}
_ynn_chain_avals = {}


def _ynn_chain_jaxpr(name, avals, fused):
    key = (name, avals, fused)
    jaxpr = _ynn_chain_avals.get(key)
    if jaxpr is None:
        fn = YNN_CHAINS[name][0 if fused else 1]
        jaxpr = _ynn_chain_avals[key] = trace_to_jaxpr(lambda *a: [fn(*a)], list(avals)).jaxpr
    return jaxpr


def _ynn_chain_abstract(*xs, name):
    if name not in YNN_CHAINS:
        raise ValueError(f"ynn_chain: unknown chain {name!r}")
    return _ynn_chain_jaxpr(name, tuple(xs), False).outvars[0].aval


ynn_chain_p = standard_primitive("ynn_chain", _ynn_chain_abstract)


def _ynn_chain_inline(eqn):
    avals = tuple(v.aval for v in eqn.invars)
    rows = eqn.outvars[0].aval.shape[:-1]
    return _ynn_chain_jaxpr(eqn.params["name"], avals, ynn_sized(rows)), eqn.invars


def _ynn_chain_batch(vals, dims, *, name):
    # the batch axis first on every operand (unmapped ones broadcast, as XLA fuses them): more rows
    size = _batching.axis_size_of(vals, dims)
    return ynn_chain_p.bind(*[_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)], name=name), 0


def _ynn_chain_jvp(primals, tangents, *, name):
    # the primal keeps the chain's bits; the tangent is the chain's own rule (``YNN_CHAINS[name][2]``), written
    # as JAX differentiates the sampler (its standard ops, gamma's implicit gradient)
    ans = ynn_chain_p.bind(*primals, name=name)
    if all(type(t) is _ad.Zero for t in tangents):
        return ans, _ad.Zero(get_aval(ans))
    return ans, YNN_CHAINS[name][2](list(primals), list(tangents))


ynn_chain_p.inline_jaxpr = staticmethod(_ynn_chain_inline)
_batching.batching_rules[ynn_chain_p] = _ynn_chain_batch
_ad.jvp_rules[ynn_chain_p] = _ynn_chain_jvp


def ynn_chain(name, *xs):
    """The registered chain ``name`` (``YNN_CHAINS``) of ``xs``: its fused form (float32 throughout, rounded
    once) where the result has >= 4096 rows once every vmap is applied, its per-op form below."""
    return ynn_chain_p.bind(*xs, name=name)


# Lanczos (g = 7, n = 9) coefficients, as XLA's lgamma decomposition uses them (rounded to float32 there).
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283, 771.3234287776530788486528258894,
            -176.61502916214059906584551354, 12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _xla_log1p_f32_small(t):
    """XLA's float32 log1p rational branch (|t| < sqrt(2) - 1) at one float32 point, in NumPy (the
    multiply-adds exact in float64, then rounded once to float32): for constants known at trace time."""
    f, fma_ = np.float32, lambda a, b, c: np.float32(np.float64(a) * np.float64(b) + np.float64(c))  # noqa: E731

    def horner_(cs):
        p = f(cs[0])
        for cf in cs[1:]:
            p = fma_(p, t, f(cf))
        return p
    t2 = t * t
    return t + fma_(t2, f(-0.5), (t * t2) * (horner_(_LOG1P_NUM) / horner_(_LOG1P_DEN)))


_LANCZOS_INV_GH = np.float32(1) / np.float32(_LANCZOS_G + 0.5)
# log1p(z / 7.5) for z = 1, 2, 3: the integers whose quotient falls in log1p's rational branch
_LOG1P_INT_SMALL = tuple(float(_xla_log1p_f32_small(np.float32(z) * _LANCZOS_INV_GH)) for z in (1, 2, 3))


def lgamma(x, integer_from_one=False):
    """``lgamma`` as XLA computes it for float32: its Lanczos sum in float32 arithmetic, ``log(t)`` as
    ``log(7.5) + log1p(z / 7.5)``, reflection below 1/2. ``lax.lgamma`` is more accurate (float64 inside),
    so it differs from XLA's float32 result in the last bit or two for about half the inputs; a sampler's
    accept test on ``lgamma`` (poisson's PTRS) needs XLA's bits to accept the same draws. Other dtypes use
    the primitive. Bit-identical to XLA for x >= 1/2 (2.2e6 inputs checked, 3 misses near 1e20-1e35 where
    the float64-emulated multiply-add double-rounds); below 1/2 the reflection's ``lax.sin`` is not XLA's
    (about 1% of negative inputs differ in the last bit).

    ``integer_from_one``: only the lanes holding an integer >= 1 are used (PTRS's ``k + 1``; the others are
    rejected draws). Then z / 7.5 falls in log1p's rational branch only for z = 0..3, whose values are
    constants, so the lanes skip the rational function's emulated multiply-adds, and the reflection."""
    if get_aval(x).dtype != F32:
        return lax.lgamma(x)
    shape = get_aval(x).shape
    c = lambda v: const(v, F32)  # noqa: E731
    half, one = c(0.5), c(1.0)
    refl = lax.lt(x, half)
    z = lax.sub(x, one) if integer_from_one else lax.select(refl, lax.neg(x), lax.sub(x, one))
    a = lax.full(shape, np.float32(_LANCZOS_BASE), F32)
    for i, coef in enumerate(_LANCZOS):
        a = lax.add(a, lax.div(c(coef), lax.add(z, c(i + 1))))
    t = lax.add(c(_LANCZOS_G + 0.5), z)
    # z / 7.5 as XLA's algebraic simplifier rewrites a division by a constant: times the float32 reciprocal.
    zq = lax.mul(z, c(_LANCZOS_INV_GH))
    if integer_from_one:
        small = lax.full(shape, np.float32(0), F32)
        for zi, v in zip((1, 2, 3), _LOG1P_INT_SMALL):
            small = lax.select(lax.eq(z, c(zi)), lax.full(shape, np.float32(v), F32), small)
        # log1p's branch test on zq itself, as XLA's log1p reads it: with that second use XLA's LLVM keeps
        # z * (1/7.5) rounded before the `+ 1` (a product used once would be contracted: `opt::contract`)
        l1p = lax.select(lax.lt(zq, c(0.41421356237309504880)), small, log(lax.add(zq, one)))
    else:
        l1p = log1p(zq)
    log_t = lax.add(c(math.log(_LANCZOS_G + 0.5)), l1p)
    # (z + 1/2) * log(t) - t as (z + 1/2 - t / log(t)) * log(t): no overflow for large t. The constant plus
    # that product is one fused multiply-add in XLA's kernel.
    r_sum = lax.sub(lax.add(z, half), lax.div(t, log_t))
    lg = lax.add(fma(r_sum, log_t, c((math.log(2) + math.log(math.pi)) / 2)), log(a))
    if integer_from_one:
        return lg
    # Reflection: log(pi) - log|sin(pi * frac|x|)| - lgamma(1 - x), frac folded into [0, 1/2].
    ax = lax.abs(x)
    frac = lax.sub(ax, lax.floor(ax))
    frac = lax.select(lax.lt(half, frac), lax.sub(one, frac), frac)
    rd = log(lax.sin(lax.mul(c(math.pi), frac)))
    lr = lax.sub(lax.sub(c(math.log(math.pi)), rd), lg)
    lr = lax.select(lax.is_finite(rd), lr, lax.neg(rd))
    lg = lax.select(refl, lr, lg)
    return lax.select(lax.eq(ax, c(np.inf)), lax.full(shape, np.float32(np.inf), F32), lg)


_ERF_ALPHA = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
              1.128379143519084)
_ERF_BETA = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667,
             0.11098505178285362, 0.49746925110067538, 1.0)


def erf(x):
    """``erf`` as XLA's CPU backend computes it for float32 (Eigen's odd/even rational interpolant with
    fused multiply-adds, +-1 beyond 3.8325); other dtypes use the primitive."""
    if get_aval(x).dtype != F32:
        return lax.erf(x)
    shape = get_aval(x).shape
    x2 = lax.mul(x, x)
    p = lax.mul(x, horner([lax.full(shape, np.float32(_ERF_ALPHA[0]), F32)] + list(_ERF_ALPHA[1:]), x2))
    q = horner([lax.full(shape, np.float32(_ERF_BETA[0]), F32)] + list(_ERF_BETA[1:]), x2)
    one = lax.select(lax.lt(x, const(0.0, F32)), lax.full(shape, np.float32(-1), F32),
                     lax.full(shape, np.float32(1), F32))
    # copysign(1, x): -0.0 and negative NaNs aside, the sign test above is the same
    clamp = lax.le(const(3.832506856900711, F32), lax.abs(x))
    return lax.select(clamp, one, lax.div(p, q))


__all__ = ["threefry2x32", "split", "fold_in", "random_bits32", "flat_iota", "stack_last", "fma", "log", "log1p",
           "lgamma", "erf", "horner", "u32", "const", "to_dtype"]
del dtypes
