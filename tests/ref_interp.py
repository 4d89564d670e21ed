"""A NumPy reference interpreter of jaxprs, for differential testing of the compiler (tests only).

``run(closed_jaxpr, args)`` evaluates a ``ClosedJaxpr`` equation by equation with NumPy, in each value's own
dtype (float32 arithmetic in float32, integers wrapping), following XLA's semantics where they differ from
NumPy's (integer division by zero, shifts past the bit width, saturating float→int conversion, NaN-propagating
max/min, round half away from zero...).

Every value also carries an elementwise **error bound** ``err`` (float64, same shape): how far a correct
implementation's value may be from the reference value. Exact operations (integer arithmetic, structural ops,
comparisons of exactly known values) add nothing; a rounded float operation adds an ulp of its result; a
transcendental adds ``TRANSCENDENTAL_ULPS`` ulps; reductions add ``n·eps·Σ|x|``. Errors of the operands are
propagated by evaluating the operation at the corners of the operands' error boxes (in float64), so chains
such as ``exp(x - y)`` get honest bounds. Discontinuous operations (floor, comparisons, float→int conversion,
select on an uncertain predicate...) mark an element **uncertain** (``err = inf``) when its operands' error
boxes straddle a jump; uncertain elements are not compared. ``compare(got, ref)`` checks a computed array
against a reference value.

Unknown primitives raise ``NotImplementedError`` (the fuzzer only generates the ones known here).
"""
import math

import numpy as np

TRANSCENDENTAL_ULPS = 8
INF = math.inf

# float64 reference implementations of the transcendental unary primitives.
_vec = np.vectorize


def _erf_inv(y):
    # Newton on erf, from a rough start; float64 is ample for a float32 reference.
    y = np.asarray(y, np.float64)
    out = np.full(y.shape, np.nan)
    ok = np.abs(y) < 1
    out[y == 1] = np.inf
    out[y == -1] = -np.inf
    yy = y[ok]
    x = np.sign(yy) * np.sqrt(-np.log((1 - yy) * (1 + yy)))  # rough
    x = np.where(np.abs(yy) < 0.7, yy * math.sqrt(math.pi) / 2, x)
    erf = _vec(math.erf, otypes=[np.float64])
    for _ in range(60):
        x = x - (erf(x) - yy) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    out[ok] = x
    return out


def _lgamma(x):
    def one(v):
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):
            return math.inf
    return _vec(one, otypes=[np.float64])(x)


def _logistic(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


UNARY_F64 = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "tanh": np.tanh, "logistic": _logistic, "erf": _vec(math.erf, otypes=[np.float64]), "erf_inv": _erf_inv,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "lgamma": _lgamma,
}
# Correctly rounded by IEEE (so bit-exact given exact inputs), vs. approximated by a math library.
EXACT_UNARY = {"sqrt"}


class V:
    """A reference value: ``val`` (NumPy array of the aval's dtype) and ``err`` (float64 bound, inf=unknown)."""

    __slots__ = ("val", "err")

    def __init__(self, val, err=None):
        self.val = np.asarray(val)
        self.err = np.zeros(self.val.shape) if err is None else np.broadcast_to(
            np.asarray(err, np.float64), self.val.shape).copy()

    def __repr__(self):
        return f"V({self.val!r}, err={self.err!r})"


def _is_float(dt):
    return np.issubdtype(dt, np.floating)


def _is_int(dt):
    return np.issubdtype(dt, np.integer)


def _ulp(x, dt):
    """One ulp of ``x`` in dtype ``dt`` (float64 array; at least the smallest subnormal)."""
    x = np.abs(np.asarray(x, np.float64))
    fi = np.finfo(dt)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.where(np.isfinite(x), np.maximum(x * float(fi.eps), float(fi.smallest_subnormal)), 0.0)
    return e


def _clean(err):
    err = np.asarray(err, np.float64)
    return np.where(np.isnan(err), INF, err)


def _f64(v):
    return np.asarray(v.val, np.float64)


def _corners(fn, vals):
    """Max |fn(corner) - fn(center)| over the corners of the operands' error boxes (float64).

    Operands with err 0 are not perturbed. NaN anywhere (but not at the center) → inf. Also returns the
    center value."""
    xs = [_f64(v) for v in vals]
    with np.errstate(all="ignore"):
        center = fn(*xs)
        worst = np.zeros(np.broadcast_shapes(*[x.shape for x in xs]))
        perturbed = [i for i, v in enumerate(vals) if np.any(v.err > 0)]
        if not perturbed:
            return center, worst
        for mask in range(1, 1 << len(perturbed)):
            for signs in _sign_choices(len(perturbed), mask):
                ys = list(xs)
                for k, i in enumerate(perturbed):
                    if mask >> k & 1:
                        ys[i] = xs[i] + signs[k] * vals[i].err
                c = fn(*ys)
                d = np.abs(c - center)
                # an infinite/NaN corner with a finite centre (or vice versa) is unbounded
                d = np.where((np.isnan(c) != np.isnan(center)) | (np.isinf(c) != np.isinf(center)) |
                             (np.isinf(c) & np.isinf(center) & (c != center)), INF, d)
                d = np.where(np.isnan(c) & np.isnan(center), 0.0, d)
                d = np.where(np.isinf(c) & (c == center), 0.0, d)
                worst = np.maximum(worst, _clean(d))
    return center, worst


def _sign_choices(n, mask):
    """Every assignment of ±1 to the set bits of ``mask`` (others 0)."""
    bits = [k for k in range(n) if mask >> k & 1]
    for s in range(1 << len(bits)):
        signs = [0] * n
        for j, k in enumerate(bits):
            signs[k] = 1 if s >> j & 1 else -1
        yield signs


def _uncertain_if(cond, err):
    return np.where(cond, INF, err)


def _any_inf(*vals, shape=None):
    out = np.zeros(shape if shape is not None else np.broadcast_shapes(*[v.err.shape for v in vals]), bool)
    for v in vals:
        out = out | np.isinf(v.err)
    return out


def _step_err(fn, v):
    """Error of a step function (floor, sign, convert-to-int...): 0 when fn is constant on the error box,
    inf otherwise. ``fn`` maps float64 → float64 and is monotone."""
    x = _f64(v)
    with np.errstate(all="ignore"):
        lo, hi = fn(x - v.err), fn(x + v.err)
        same = (lo == hi) | (np.isnan(lo) & np.isnan(hi))
    return np.where((v.err == 0) | same, 0.0, INF)


# ------------------------------------------------------------------------------------------- elementwise ops

def _wrap_int(x, dt):
    """Python/float64 integer results wrapped to ``dt``."""
    info = np.iinfo(dt)
    x = np.asarray(x).astype(object)
    span = info.max - info.min + 1
    return np.asarray(((x - info.min) % span) + info.min).astype(dt)


def _int_div(a, b, dt):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    zero = b64 == 0
    safe_b = np.where(zero, 1, b64)
    q = np.abs(a64) // np.abs(safe_b)
    q = np.where((a64 < 0) != (safe_b < 0), -q, q)
    q = np.where(zero, -1, q)
    return _wrap_int(q, dt)


def _int_rem(a, b, dt):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    zero = b64 == 0
    safe_b = np.where(zero, 1, b64)
    r = np.abs(a64) % np.abs(safe_b)
    r = np.where(a64 < 0, -r, r)
    r = np.where(zero, a64, r)
    return _wrap_int(r, dt)


def _shift(kind, a, b, dt):
    bits = np.dtype(dt).itemsize * 8
    ua = a.astype(np.uint64) & np.uint64((1 << bits) - 1)
    # XLA: the shift amount is read as unsigned; past the width: 0 (logical/left) or the sign (arithmetic).
    ub = b.astype(np.int64)
    if np.issubdtype(b.dtype, np.signedinteger):
        ub = np.where(ub < 0, ub + (1 << bits), ub)
    big = ub >= bits
    s = np.where(big, 0, ub).astype(np.uint64)
    if kind == "shift_left":
        r = (ua << s) & np.uint64((1 << bits) - 1)
        r = np.where(big, np.uint64(0), r)
        return r.astype(np.uint64).astype(np.dtype(f"u{bits // 8}")).view(dt)
    if kind == "shift_right_logical":
        r = np.where(big, np.uint64(0), ua >> s)
        return r.astype(np.dtype(f"u{bits // 8}")).view(dt)
    # arithmetic
    sa = a.astype(np.int64)
    if np.issubdtype(dt, np.unsignedinteger):
        sa = np.where(sa >= 1 << (bits - 1), sa - (1 << bits), sa)
    r = np.where(big, np.where(sa < 0, -1, 0), sa >> s.astype(np.int64))
    return _wrap_int(r, dt)


def _round_half_away(x):
    t = np.trunc(x)
    frac = np.abs(x - t)
    return np.where(frac >= 0.5, t + np.sign(x), t)


def _convert(x, dt):
    """XLA's convert_element_type: float→int truncates and saturates (NaN → 0); →bool is x != 0."""
    src = x.dtype
    dt = np.dtype(dt)
    if dt == np.bool_:
        return x != 0
    if _is_float(src) and _is_int(dt):
        info = np.iinfo(dt)
        with np.errstate(invalid="ignore"):
            t = np.trunc(x.astype(np.float64))
            t = np.where(np.isnan(t), 0, np.clip(t, info.min, info.max))
        return t.astype(dt)
    if _is_int(src) and _is_int(dt):
        return _wrap_int(x.astype(np.int64), dt)
    with np.errstate(over="ignore"):
        return x.astype(dt)


def _float_binop(name, a, b):
    with np.errstate(all="ignore"):
        if name == "add":
            return a + b
        if name == "sub":
            return a - b
        if name == "mul":
            return a * b
        if name == "div":
            return a / b
        if name == "rem":
            return np.fmod(a, b)
        if name == "max":
            return xla_max(a, b)
        if name == "min":
            return xla_min(a, b)
        if name == "pow":
            r = np.power(a, b)
            if np.issubdtype(np.asarray(r).dtype, np.floating):
                # C99/XLA: pow(-inf, y) for y not an integer is +inf (y > 0) or +0 (y < 0); NumPy's float32
                # power gives NaN there.
                a_, b_ = np.broadcast_arrays(a, b)
                frac = (a_ == -np.inf) & np.isfinite(b_) & (np.floor(b_) != b_)
                r = np.where(frac, np.where(b_ > 0, np.inf, 0.0).astype(r.dtype), r)
            return r
        if name == "atan2":
            return np.arctan2(a, b)
        if name == "nextafter":
            return np.nextafter(a, b)
    raise NotImplementedError(name)


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}


def _binary(name, a, b, out_dt):
    dt = a.val.dtype
    x, y = a.val, b.val
    if name in _CMP:
        val = _CMP[name](x, y)
        if _is_float(dt):
            # uncertain when the error intervals overlap the decision boundary
            xf, yf = _f64(a), _f64(b)
            with np.errstate(invalid="ignore"):
                close = np.abs(xf - yf) <= a.err + b.err
            err = _uncertain_if(close & ((a.err > 0) | (b.err > 0)), 0.0)
            err = _uncertain_if(_any_inf(a, b), err)
        else:
            err = _uncertain_if(_any_inf(a, b), 0.0)
        return V(val, err)
    if dt == np.bool_:
        fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor, "max": np.logical_or,
              "min": np.logical_and, "add": np.logical_or, "mul": np.logical_and}[name]
        return V(fn(x, y), _uncertain_if(_any_inf(a, b), 0.0))
    if _is_int(dt):
        with np.errstate(all="ignore"):
            if name in ("add", "sub", "mul"):
                r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[name](x, y)
            elif name == "div":
                r = _int_div(x, y, dt)
            elif name == "rem":
                r = _int_rem(x, y, dt)
            elif name in ("max", "min"):
                r = (np.maximum if name == "max" else np.minimum)(x, y)
            elif name in ("and", "or", "xor"):
                r = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name](x, y)
            elif name.startswith("shift"):
                r = _shift(name, x, y, dt)
            else:
                raise NotImplementedError(f"{name} on {dt}")
        return V(np.asarray(r).astype(dt), _uncertain_if(_any_inf(a, b), 0.0))
    # floats
    val = _float_binop(name, x, y).astype(dt)
    if name == "nextafter":
        err = _uncertain_if((a.err > 0) | (b.err > 0), 0.0)
        return V(val, err)
    if name in ("max", "min"):
        # monotone: the error is at most the larger operand error; NaN propagates
        _, err = _corners(lambda p, q: _float_binop(name, p, q), [a, b])
        return V(val, err)
    _, err = _corners(lambda p, q: _float_binop(name, p, q), [a, b])
    if name == "rem":
        # fmod jumps where x/y crosses an integer
        xf, yf = _f64(a), _f64(b)
        with np.errstate(all="ignore"):
            q = np.trunc(xf / yf)
            jump = np.zeros(q.shape, bool)
            for sx in (-1, 1):
                for sy in (-1, 1):
                    qc = np.trunc((xf + sx * a.err) / (yf + sy * b.err))
                    jump |= ~((qc == q) | (np.isnan(qc) & np.isnan(q)))
        err = _uncertain_if(((a.err > 0) | (b.err > 0)) & jump, err)
    if name in ("div", "atan2", "pow"):
        # a zero whose sign or exact value is in doubt
        err = _uncertain_if((np.abs(_f64(b)) <= b.err) & (b.err > 0), err)
    if name == "pow":
        err = _uncertain_if((np.abs(_f64(a)) <= a.err) & (a.err > 0), err)
    own = _ulp(val, dt) * (TRANSCENDENTAL_ULPS if name in ("pow", "atan2") else 1)
    if name == "rem":
        own = 0.0  # fmod is exact
    return V(val, _finish(val, err + own, dt))


def _finish(val, err, dt):
    """Uncertain where the bound reaches past the largest finite value (overflow may or may not happen)."""
    big = float(np.finfo(dt).max)
    with np.errstate(invalid="ignore"):
        v = np.abs(np.asarray(val, np.float64))
        over = np.isfinite(v) & (v + err > big)
        inf_near = np.isinf(v) & (err > 0)
    return _uncertain_if(over | inf_near, _clean(err))


def _unary(name, a, params):
    dt = a.val.dtype
    x = a.val
    if name == "not":
        r = np.logical_not(x) if dt == np.bool_ else np.invert(x)
        return V(r, _uncertain_if(np.isinf(a.err), 0.0))
    if name == "population_count":
        bits = x.astype(np.uint64) & np.uint64((1 << (dt.itemsize * 8)) - 1)
        c = np.zeros(x.shape, np.int64)
        for k in range(dt.itemsize * 8):
            c += ((bits >> np.uint64(k)) & np.uint64(1)).astype(np.int64)
        return V(c.astype(dt), _uncertain_if(np.isinf(a.err), 0.0))
    if _is_int(dt) or dt == np.bool_:
        with np.errstate(all="ignore"):
            if name == "neg":
                r = _wrap_int(-x.astype(np.int64), dt)
            elif name == "abs":
                r = _wrap_int(np.abs(x.astype(np.int64)), dt)
            elif name == "sign":
                r = np.sign(x.astype(np.int64)).astype(dt) if not np.issubdtype(dt, np.unsignedinteger) \
                    else (x != 0).astype(dt)
            elif name == "square":
                r = _wrap_int(x.astype(object) * x.astype(object), dt)
            elif name == "integer_pow":
                r = _wrap_int(np.asarray(x.astype(object) ** params["y"]), dt) if params["y"] >= 0 else None
                if r is None:
                    raise NotImplementedError("negative integer_pow of an integer")
            elif name in ("copy", "stop_gradient", "copy_p"):
                r = x
            else:
                raise NotImplementedError(f"{name} on {dt}")
        return V(np.asarray(r).astype(dt), _uncertain_if(np.isinf(a.err), 0.0))
    # floats
    with np.errstate(all="ignore"):
        if name in ("copy", "stop_gradient", "copy_p"):
            return V(x, a.err)
        if name == "neg":
            return V(-x, a.err)
        if name == "abs":
            return V(np.abs(x), a.err)
        if name == "sign":
            # XLA: sign(±0) = ±0, sign(NaN) = NaN (np.sign(-0.0) is +0.0)
            return V(np.where(x == 0, x, np.sign(x)).astype(dt), _step_err(np.sign, a))
        if name == "floor":
            return V(np.floor(x), _step_err(np.floor, a))
        if name == "ceil":
            return V(np.ceil(x), _step_err(np.ceil, a))
        if name == "round":
            fn = _round_half_away if params.get("rounding_method", 0) in (0, "0") or \
                str(params.get("rounding_method")).endswith("AWAY_FROM_ZERO") else np.rint
            return V(fn(x).astype(dt), _step_err(fn, a))
        if name == "is_finite":
            return V(np.isfinite(x), _step_err(lambda t: np.isfinite(t).astype(np.float64), a))
        if name == "square":
            val = (x * x).astype(dt)
            _, err = _corners(lambda t: t * t, [a])
            return V(val, _finish(val, err + _ulp(val, dt), dt))
        if name == "integer_pow":
            y = params["y"]
            val = _int_pow_float(x, y, dt)
            _, err = _corners(lambda t: np.power(t, float(y)), [a])
            if y < 0:
                err = _uncertain_if((np.abs(_f64(a)) <= a.err) & (a.err > 0), err)
            own = _ulp(val, dt) * (abs(y) + 1)
            return V(val, _finish(val, err + own, dt))
        if name in UNARY_F64:
            fn = UNARY_F64[name]
            val = np.asarray(fn(x.astype(np.float64))).astype(dt)
            _, err = _corners(fn, [a])
            own = _ulp(val, dt) * (1 if name in EXACT_UNARY else TRANSCENDENTAL_ULPS)
            if name in ("lgamma", "erf_inv", "tan"):
                # near poles/zeros of these the relative error of any f32 implementation grows
                own = own + _ulp(np.float64(1.0), dt) * TRANSCENDENTAL_ULPS * 4
            return V(val, _finish(val, err + own, dt))
    raise NotImplementedError(f"{name} on {dt}")


def _int_pow_float(x, y, dt):
    with np.errstate(all="ignore"):
        r = np.power(x.astype(np.float64), float(y))
        return r.astype(dt)


# -------------------------------------------------------------------------------------------- the interpreter

def _order_dependent(xf, err, dt, axis_reduce):
    """Where a float sum/product may overflow or underflow in some evaluation order but not in another
    (e.g. ``0 * 3e38 * -2.5`` is -0 or NaN depending on the order): the result is not defined by the math,
    so those elements are uncertain. ``axis_reduce(a)`` reduces (products) along the op's axes."""
    big = float(np.finfo(dt).max)
    tiny = float(np.finfo(dt).tiny)
    a = np.abs(xf) + err
    with np.errstate(all="ignore"):
        grow = axis_reduce(np.where(a > 1, a, 1.0))
        nz = np.abs(xf) - err
        shrink = axis_reduce(np.where((nz < 1) & (xf != 0), np.maximum(nz, 0.0), 1.0))
    return (grow > big) | (shrink < tiny)


def _reduce(name, v, axes, dt):
    axes = tuple(axes)
    x = v.val
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    unc = np.any(np.isinf(v.err), axis=axes) if axes else np.isinf(v.err)
    with np.errstate(all="ignore"):
        if dt == np.bool_:
            fn = {"reduce_and": np.all, "reduce_or": np.any, "reduce_max": np.any, "reduce_min": np.all,
                  "reduce_sum": np.any, "reduce_prod": np.all}[name]
            return V(fn(x, axis=axes), _uncertain_if(unc, 0.0))
        if _is_int(dt):
            if name == "reduce_sum":
                r = _wrap_int(np.sum(x.astype(object), axis=axes), dt) if x.size else np.zeros(
                    [s for i, s in enumerate(x.shape) if i not in axes], dt)
            elif name == "reduce_prod":
                r = _wrap_int(np.prod(x.astype(object), axis=axes), dt) if x.size else np.ones(
                    [s for i, s in enumerate(x.shape) if i not in axes], dt)
            elif name in ("reduce_max", "reduce_min"):
                info = np.iinfo(dt)
                init = info.min if name == "reduce_max" else info.max
                fn = np.max if name == "reduce_max" else np.min
                r = fn(x, axis=axes, initial=init)
            elif name in ("reduce_and", "reduce_or", "reduce_xor"):
                fn = {"reduce_and": np.bitwise_and, "reduce_or": np.bitwise_or,
                      "reduce_xor": np.bitwise_xor}[name]
                init = {"reduce_and": -1, "reduce_or": 0, "reduce_xor": 0}[name]
                r = fn.reduce(x, axis=axes, initial=np.array(init).astype(dt))
            else:
                raise NotImplementedError(name)
            return V(np.asarray(r).astype(dt), _uncertain_if(unc, 0.0))
        xf = _f64(v)
        if name == "reduce_sum":
            val = np.sum(xf, axis=axes).astype(dt)
            abssum = np.sum(np.abs(xf) + v.err, axis=axes)
            err = np.sum(v.err, axis=axes) + n * float(np.finfo(dt).eps) * abssum + _ulp(val, dt)
            # partial sums may overflow in some order (3e38 + 3e38 - 3e38)
            err = _uncertain_if(abssum > float(np.finfo(dt).max), err)
            return V(val, _finish(val, _clean(err), dt))
        if name == "reduce_prod":
            val = np.prod(xf, axis=axes).astype(dt)
            hi = np.prod(np.abs(xf) + v.err, axis=axes)
            err = hi - np.abs(np.prod(xf, axis=axes)) + n * float(np.finfo(dt).eps) * hi + _ulp(val, dt)
            err = _uncertain_if(_order_dependent(xf, v.err, dt, lambda a: np.prod(a, axis=axes)), err)
            return V(val, _finish(val, _clean(err), dt))
        if name in ("reduce_max", "reduce_min"):
            fn = np.max if name == "reduce_max" else np.min
            init = -np.inf if name == "reduce_max" else np.inf
            val = fn(x, axis=axes, initial=init).astype(dt)
            # XLA's zero: max is +0 when any +0 is there, min is -0 when any -0 is (NumPy's depends on order)
            want_neg = (lambda z: ~np.any(z & ~np.signbit(x), axis=axes)) if name == "reduce_max" else \
                (lambda z: np.any(z & np.signbit(x), axis=axes))
            val = np.where(val == 0, np.where(want_neg(x == 0), -0.0, 0.0), val).astype(dt)
            err = np.max(v.err, axis=axes, initial=0.0)
            return V(val, _clean(err))
    raise NotImplementedError(f"{name} on {dt}")


def _argreduce(name, v, axis, index_dtype):
    x = v.val
    if _is_float(x.dtype):
        # XLA: NaN counts as the extreme (the first NaN wins)
        nan = np.isnan(x)
        key = np.where(nan, np.inf if name == "argmax" else -np.inf, x)
        idx = (np.argmax if name == "argmax" else np.argmin)(key, axis=axis)
        first_nan = np.argmax(nan, axis=axis)
        idx = np.where(np.any(nan, axis=axis), first_nan, idx)
        # uncertain when any other element is within error of the winner
        best = np.take_along_axis(_f64(v), np.expand_dims(idx, axis), axis)
        best_err = np.take_along_axis(v.err, np.expand_dims(idx, axis), axis)
        with np.errstate(invalid="ignore"):
            near = (np.abs(_f64(v) - best) <= v.err + best_err) & ((v.err > 0) | (best_err > 0))
        unc = np.any(near | np.isinf(v.err), axis=axis)
    else:
        idx = (np.argmax if name == "argmax" else np.argmin)(x, axis=axis)
        unc = np.any(np.isinf(v.err), axis=axis)
    return V(idx.astype(index_dtype), _uncertain_if(unc, 0.0))


def _structural(name, ins, p):
    """Ops that move elements: apply the same op to value and error."""
    def both(fn):
        return V(fn(*[i.val for i in ins]), fn(*[i.err for i in ins]) if len(ins) == 1 else None)

    if name == "broadcast_in_dim":
        (v,) = ins
        shape, dims = tuple(p["shape"]), tuple(p["broadcast_dimensions"])
        src = [1] * len(shape)
        for i, d in enumerate(dims):
            src[d] = v.val.shape[i]

        def f(a):
            return np.broadcast_to(a.reshape(src), shape).copy()
        return both(f)
    if name == "reshape":
        return both(lambda a: a.reshape(tuple(p["new_sizes"])))
    if name == "squeeze":
        return both(lambda a: np.squeeze(a, axis=tuple(p["dimensions"])) if p["dimensions"] else a)
    if name == "expand_dims":
        return both(lambda a: np.expand_dims(a, tuple(p["dimensions"])))
    if name == "transpose":
        return both(lambda a: np.transpose(a, tuple(p["permutation"])).copy())
    if name == "rev":
        return both(lambda a: np.flip(a, tuple(p["dimensions"])).copy() if p["dimensions"] else a)
    if name == "slice":
        st = p.get("strides") or (1,) * len(p["start_indices"])
        sl = tuple(slice(s, l, k) for s, l, k in zip(p["start_indices"], p["limit_indices"], st))
        return both(lambda a: a[sl].copy())
    raise NotImplementedError(name)


def _pad(v, pv, config):
    def one(a, fill):
        out = a
        for ax, (lo, hi, interior) in enumerate(config):
            n = out.shape[ax]
            m = n + max(n - 1, 0) * interior
            shp = list(out.shape)
            shp[ax] = m
            tmp = np.full(shp, fill, a.dtype)
            idx = [slice(None)] * out.ndim
            idx[ax] = slice(0, m, interior + 1)
            tmp[tuple(idx)] = out
            # edges (negative = crop)
            if lo < 0:
                idx = [slice(None)] * out.ndim
                idx[ax] = slice(-lo, None)
                tmp = tmp[tuple(idx)]
            elif lo > 0:
                shp = list(tmp.shape)
                shp[ax] = lo
                tmp = np.concatenate([np.full(shp, fill, a.dtype), tmp], axis=ax)
            if hi < 0:
                idx = [slice(None)] * out.ndim
                idx[ax] = slice(0, tmp.shape[ax] + hi)
                tmp = tmp[tuple(idx)]
            elif hi > 0:
                shp = list(tmp.shape)
                shp[ax] = hi
                tmp = np.concatenate([tmp, np.full(shp, fill, a.dtype)], axis=ax)
            out = tmp
        return out
    return V(one(v.val, pv.val.item()), one(v.err, float(pv.err.item())))


def xla_max(a, b):
    """XLA's float max: NumPy's (NaN propagates) except that -0.0 < +0.0 in either order."""
    with np.errstate(invalid="ignore"):
        return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))


def xla_min(a, b):
    """XLA's float min: NumPy's (NaN propagates) except that -0.0 < +0.0 in either order."""
    with np.errstate(invalid="ignore"):
        return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))


def _accumulate(fn, a, axis):
    """``fn.accumulate`` along ``axis`` for a binary function that is not a ufunc."""
    a = np.moveaxis(np.asarray(a), axis, 0)
    out = np.array(a, copy=True)
    for i in range(1, out.shape[0]):
        out[i] = fn(out[i - 1], a[i])
    return np.moveaxis(out, 0, axis)


def _cumulative(name, v, axis, reverse):
    x = v.val
    dt = x.dtype

    def scan(a, fn):
        if reverse:
            a = np.flip(a, axis)
        r = fn(a, axis=axis)
        return np.flip(r, axis) if reverse else r

    with np.errstate(all="ignore"):
        if dt == np.bool_:
            fn = {"cumsum": np.logical_or, "cumprod": np.logical_and, "cummax": np.logical_or,
                  "cummin": np.logical_and}[name]
            val = scan(x, fn.accumulate)
            return V(val, _uncertain_if(scan(np.isinf(v.err), np.logical_or.accumulate), 0.0))
        if _is_int(dt):
            fn = {"cumsum": lambda a, axis: np.cumsum(a.astype(object), axis=axis),
                  "cumprod": lambda a, axis: np.cumprod(a.astype(object), axis=axis),
                  "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}[name]
            val = _wrap_int(scan(x, fn), dt) if x.size else x.copy()
            return V(val, _uncertain_if(scan(np.isinf(v.err), np.logical_or.accumulate), 0.0))
        xf = _f64(v)
        if name == "cumsum":
            val = scan(xf, np.cumsum).astype(dt)
            n = x.shape[axis] if x.ndim else 1
            abssum = scan(np.abs(xf) + v.err, np.cumsum)
            err = scan(v.err, np.cumsum) + n * float(np.finfo(dt).eps) * abssum
            err = _uncertain_if(abssum > float(np.finfo(dt).max), err)
            return V(val, _finish(val, err + _ulp(val, dt), dt))
        if name == "cumprod":
            val = scan(xf, np.cumprod).astype(dt)
            n = x.shape[axis] if x.ndim else 1
            hi = scan(np.abs(xf) + v.err, np.cumprod)
            err = hi - np.abs(scan(xf, np.cumprod)) + n * float(np.finfo(dt).eps) * hi
            err = _uncertain_if(_order_dependent(xf, v.err, dt, lambda a: scan(a, np.cumprod)), err)
            return V(val, _finish(val, _clean(err) + _ulp(val, dt), dt))
        fn = xla_max if name == "cummax" else xla_min
        val = scan(x, lambda a, axis: _accumulate(fn, a, axis))
        return V(val, scan(v.err, np.maximum.accumulate))


def _dot_general(a, b, dimension_numbers, out_dt):
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = map(tuple, (lc, rc, lb, rb))
    lf = [i for i in range(a.val.ndim) if i not in lc and i not in lb]
    rf = [i for i in range(b.val.ndim) if i not in rc and i not in rb]
    # einsum spec
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    la = [None] * a.val.ndim
    ra = [None] * b.val.ndim
    outl = []
    for i, j in zip(lb, rb):
        c = next(letters)
        la[i] = ra[j] = c
        outl.append(c)
    for i, j in zip(lc, rc):
        c = next(letters)
        la[i] = ra[j] = c
    for i in lf:
        c = next(letters)
        la[i] = c
        outl.append(c)
    for j in rf:
        c = next(letters)
        ra[j] = c
        outl.append(c)
    spec = f"{''.join(la)},{''.join(ra)}->{''.join(outl)}"
    dt = np.dtype(out_dt)
    with np.errstate(all="ignore"):
        if dt == np.bool_:
            r = np.einsum(spec, a.val.astype(np.int64), b.val.astype(np.int64)) != 0
            unc = np.einsum(spec, np.isinf(a.err).astype(np.int64) + 0, np.ones(b.val.shape, np.int64)) + \
                np.einsum(spec, np.ones(a.val.shape, np.int64), np.isinf(b.err).astype(np.int64))
            return V(r, _uncertain_if(unc > 0, 0.0))
        if _is_int(dt):
            r = _wrap_int(np.einsum(spec, a.val.astype(object), b.val.astype(object)), dt)
            unc = np.einsum(spec, np.isinf(a.err).astype(np.int64), np.ones(b.val.shape, np.int64)) + \
                np.einsum(spec, np.ones(a.val.shape, np.int64), np.isinf(b.err).astype(np.int64))
            return V(r, _uncertain_if(unc > 0, 0.0))
        af, bf = _f64(a), _f64(b)
        val = np.einsum(spec, af, bf).astype(dt)
        n = int(np.prod([a.val.shape[i] for i in lc])) if lc else 1
        mag = np.einsum(spec, np.abs(af) + a.err, np.abs(bf) + b.err)
        err = mag - np.einsum(spec, np.abs(af), np.abs(bf)) + (n + 1) * float(np.finfo(dt).eps) * mag
        # a product or partial sum may overflow (or 0 * inf appear) depending on the order
        err = _uncertain_if(mag > float(np.finfo(dt).max), err)
        return V(val, _finish(val, _clean(err) + _ulp(val, dt), dt))


def _sort(ins, dimension, num_keys):
    keys = ins[0].val
    if num_keys != 1:
        raise NotImplementedError("sort with several keys")
    x = keys
    if _is_float(x.dtype):
        # total order: -NaN < -inf < ... < -0 = 0? XLA sorts NaN last; -0/+0 keep order (stable)
        k = np.where(np.isnan(x), np.inf, x.astype(np.float64))
        nan_rank = np.isnan(x).astype(np.int64)
        order = _stable_argsort(k, nan_rank, dimension)
    else:
        order = np.argsort(x, axis=dimension, kind="stable")
    outs = []
    for v in ins:
        val = np.take_along_axis(v.val, order, dimension)
        err = np.take_along_axis(v.err, order, dimension)
        outs.append(V(val, err))
    # uncertain keys make every output along that axis uncertain
    unc = np.any(ins[0].err > 0, axis=dimension, keepdims=True)
    for o in outs:
        o.err = _uncertain_if(np.broadcast_to(unc, o.err.shape), o.err)
    return outs


def _stable_argsort(k, nan_rank, axis):
    # sort by (nan_rank, k) stably
    o1 = np.argsort(k, axis=axis, kind="stable")
    nr = np.take_along_axis(nan_rank, o1, axis)
    o2 = np.argsort(nr, axis=axis, kind="stable")
    return np.take_along_axis(o1, o2, axis)


def _may_flush(v):
    """``v`` with its bound widened to reach zero wherever the value may be subnormal: the CPU backend flushes
    subnormal operands and results to zero (FTZ/DAZ, as XLA's), float16 excepted (computed in float32, where
    its subnormals are normal)."""
    dt = v.val.dtype
    if not _is_float(dt) or dt == np.float16 or v.val.size == 0:
        return v
    tiny = float(np.finfo(dt).tiny)
    with np.errstate(invalid="ignore"):
        a = np.abs(v.val.astype(np.float64))
        near = np.isfinite(a) & (a - v.err < tiny) & (a != 0)
    if near.any():
        v = V(v.val, np.where(near, a + v.err, v.err))
    return v


def eval_jaxpr(jaxpr, consts, args):
    """Evaluates a ``Jaxpr`` on reference values (``V``); returns the output ``V``s."""
    from cranax.jaxpr import Literal

    env = {}

    def read(a):
        if isinstance(a, Literal):
            return _may_flush(V(np.asarray(a.val, dtype=a.aval.dtype)))
        return env[a]

    for var, c in zip(jaxpr.constvars, consts):
        env[var] = _may_flush(c)
    for var, a in zip(jaxpr.invars, args):
        env[var] = _may_flush(a)
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = eval_eqn(eqn, ins)
        for var, o in zip(eqn.outvars, outs):
            want = var.aval
            if tuple(o.val.shape) != tuple(want.shape) or o.val.dtype != want.dtype:
                raise AssertionError(f"reference interpreter: {eqn.primitive.name} gave "
                                     f"{o.val.dtype}{o.val.shape}, jaxpr says {want.dtype}{want.shape}")
            env[var] = _may_flush(o)
    return [read(a) for a in jaxpr.outvars]


def _sub_jaxpr(p):
    j = p.get("jaxpr")
    return (j.jaxpr, [V(np.asarray(c)) for c in j.consts]) if hasattr(j, "jaxpr") else (j, [])


def eval_eqn(eqn, ins):
    name = eqn.primitive.name
    p = eqn.params
    out_avals = [v.aval for v in eqn.outvars]
    out_dt = out_avals[0].dtype if out_avals else None
    if name in ("jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
                "custom_vjp_call_jaxpr", "remat"):
        key = "jaxpr" if "jaxpr" in p else "call_jaxpr" if "call_jaxpr" in p else "fun_jaxpr"
        j = p[key]
        inner, consts = (j.jaxpr, [V(np.asarray(c)) for c in j.consts]) if hasattr(j, "jaxpr") else (j, [])
        return eval_jaxpr(inner, consts, ins)
    if name == "cond":
        return _cond(eqn, ins)
    if name == "while":
        return _while(eqn, ins)
    if name == "scan":
        return _scan(eqn, ins)
    if name in _CMP or name in ("add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "nextafter",
                                "and", "or", "xor", "shift_left", "shift_right_logical",
                                "shift_right_arithmetic"):
        a, b = ins
        return [_binary(name, a, b, out_dt)]
    if name in ("neg", "abs", "sign", "floor", "ceil", "round", "is_finite", "not", "population_count",
                "square", "integer_pow", "copy", "copy_p", "stop_gradient") or name in UNARY_F64:
        return [_unary(name, ins[0], p)]
    if name == "convert_element_type":
        (a,) = ins
        dt = np.dtype(p["new_dtype"])
        val = _convert(a.val, dt)
        if _is_float(a.val.dtype) and not _is_float(dt):
            if dt == np.bool_:
                err = _step_err(lambda t: (t != 0).astype(np.float64), a)
            else:
                info = np.iinfo(dt)
                err = _step_err(lambda t: np.where(np.isnan(t), 0, np.clip(np.trunc(t), info.min, info.max)), a)
            return [V(val, err)]
        if _is_float(dt):
            err = a.err if _is_float(a.val.dtype) else _uncertain_if(np.isinf(a.err), 0.0)
            err = err + np.where(val.astype(np.float64) != a.val.astype(np.float64), _ulp(val, dt), 0.0)
            return [V(val, _finish(val, _clean(err), dt))]
        return [V(val, _uncertain_if(np.isinf(a.err), 0.0))]
    if name == "select_n":
        which, *cases = ins
        w = which.val.astype(np.int64)
        val = np.choose(w, [c.val for c in cases])
        err = np.choose(w, [c.err for c in cases])
        return [V(val, _uncertain_if(np.isinf(which.err), err))]
    if name == "clamp":
        lo, x, hi = ins
        with np.errstate(invalid="ignore"):
            f = (lambda a, b, c: np.minimum(np.maximum(b, a), c))
            val = f(lo.val, x.val, hi.val).astype(x.val.dtype)
        if _is_float(x.val.dtype):
            _, err = _corners(lambda a, b, c: np.minimum(np.maximum(b, a), c), [lo, x, hi])
            err = _uncertain_if(np.isnan(_f64(lo)) | np.isnan(_f64(hi)), err)
        else:
            err = _uncertain_if(_any_inf(lo, x, hi, shape=val.shape), 0.0)
        return [V(val, err)]
    if name.startswith("reduce_"):
        return [_reduce(name, ins[0], p["axes"], ins[0].val.dtype)]
    if name in ("argmax", "argmin"):
        (axis,) = p["axes"]
        return [_argreduce(name, ins[0], axis, p["index_dtype"])]
    if name in ("broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "rev", "slice"):
        return [_structural(name, ins, p)]
    if name == "iota":
        shape, dim, dt = tuple(p["shape"]), p["dimension"], np.dtype(p["dtype"])
        r = np.arange(shape[dim]).astype(dt)
        idx = [1] * len(shape)
        idx[dim] = shape[dim]
        return [V(np.broadcast_to(r.reshape(idx), shape).copy())]
    if name == "pad":
        return [_pad(ins[0], ins[1], p["padding_config"])]
    if name == "concatenate":
        d = p["dimension"]
        return [V(np.concatenate([i.val for i in ins], axis=d), np.concatenate([i.err for i in ins], axis=d))]
    if name in ("cumsum", "cumprod", "cummax", "cummin"):
        return [_cumulative(name, ins[0], p["axis"], p.get("reverse", False))]
    if name == "dot_general":
        return [_dot_general(ins[0], ins[1], p["dimension_numbers"], out_dt)]
    if name == "sort":
        return _sort(ins, p["dimension"], p.get("num_keys", 1))
    raise NotImplementedError(f"reference interpreter: no rule for {name}")


def _cond(eqn, ins):
    branches = eqn.params["branches"]
    idx, *ops = ins
    if np.isinf(idx.err).any():
        outs = [V(np.zeros(v.aval.shape, v.aval.dtype), np.full(v.aval.shape, INF)) for v in eqn.outvars]
        return outs
    i = int(idx.val)
    i = min(max(i, 0), len(branches) - 1)
    br = branches[i]
    inner, consts = (br.jaxpr, [V(np.asarray(c)) for c in br.consts]) if hasattr(br, "jaxpr") else (br, [])
    return eval_jaxpr(inner, consts, ops)


def _while(eqn, ins, max_iters=10_000):
    p = eqn.params
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    nc, nb = p.get("cond_nconsts", 0), p.get("body_nconsts", 0)
    cconsts, bconsts, carry = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]

    def closed(j):
        return (j.jaxpr, [V(np.asarray(c)) for c in j.consts]) if hasattr(j, "jaxpr") else (j, [])
    cin, cc = closed(cj)
    bin_, bc = closed(bj)
    for _ in range(max_iters):
        (pred,) = eval_jaxpr(cin, cc + list(cconsts), carry)
        if np.isinf(pred.err).any():
            return [V(c.val, np.full(c.val.shape, INF)) for c in carry]
        if not bool(pred.val):
            return carry
        carry = eval_jaxpr(bin_, bc + list(bconsts), carry)
    raise AssertionError("reference while_loop ran past its iteration bound")


def _scan(eqn, ins):
    p = eqn.params
    j = p["jaxpr"]
    inner, jc = (j.jaxpr, [V(np.asarray(c)) for c in j.consts]) if hasattr(j, "jaxpr") else (j, [])
    nc, nk, length = p["num_consts"], p["num_carry"], p["length"]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    ys_avals = [v.aval for v in eqn.outvars[nk:]]
    ys = [V(np.zeros(a.shape, a.dtype)) for a in ys_avals]
    order = range(length - 1, -1, -1) if p.get("reverse") else range(length)
    for t in order:
        xt = [V(x.val[t], x.err[t]) for x in xs]
        outs = eval_jaxpr(inner, jc + list(consts), list(carry) + xt)
        carry = outs[:nk]
        for y, o in zip(ys, outs[nk:]):
            y.val[t] = o.val
            y.err[t] = o.err
    return list(carry) + ys


def run(closed, args):
    """Evaluates a ``ClosedJaxpr`` on NumPy ``args``; returns a list of ``V``."""
    consts = [V(np.asarray(c)) for c in closed.consts]
    return eval_jaxpr(closed.jaxpr, consts, [V(np.asarray(a)) for a in args])


def mismatch(got, ref):
    """None if ``got`` (an ndarray) agrees with the reference ``V`` within its bound, else a description."""
    got = np.asarray(got)
    want = ref.val
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    known = ~np.isinf(ref.err)
    if _is_float(want.dtype):
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            both_nan = np.isnan(g) & np.isnan(w)
            same_inf = np.isinf(g) & np.isinf(w) & (g == w)
            close = np.abs(g - w) <= ref.err
        ok = both_nan | same_inf | close | ~known
    else:
        ok = (got == want) | ~known
    if np.all(ok):
        return None
    bad = np.argwhere(~ok)
    lines = []
    for ix in bad[:5]:
        ix = tuple(int(i) for i in ix)
        lines.append(f"  at {ix}: got {got[ix]!r}, want {want[ix]!r} (bound {ref.err[ix]:.3g})")
    return f"{len(bad)} element(s) differ:\n" + "\n".join(lines)
