"""Elementwise functions (NumPy's ufuncs): arithmetic, comparisons, bitwise and logical ops,
transcendental functions, ``clip``, ``isclose``, with JAX's type promotion and NumPy's broadcasting.
Mirrors ``jax.numpy``."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import lax
from ..api import jit
from ..array import Array
from ..core import Tracer, get_aval, typed_scalar
from ..interpreters.dispatch import jitted_names, named_as_jitted
from ..custom_derivatives import custom_jvp
from ._promotion import (check_int_arg, _broadcast_shapes, _broadcast_to, _convert, _is_float, _operand, _promote, asarray,
                         astype)


def _unary(name, fn, to_float=True, allow_int=True):
    def op(x, /):
        try:
            (x,) = _promote(name, x, to_float=to_float)
            out = fn(x)
        except Exception as e:   # JAX jits these: its api_boundary drops internal frames, adds its note
            _errors._filtered(e)
            raise
        # Identity cases (floor of an int, positive) must still return an array, never a Python scalar.
        return out if isinstance(out, (Array, Tracer)) else asarray(out)
    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}``. Mirrors ``jax.numpy.{name}``."
    return op


# JAX's parameter names for the ``_binary`` functions whose names differ from (x, y): its placement error
# names them (the closures share one code object, registered below with a reader of the running one's name)
_JAX_PARAMS = {"arctan2": ("x1", "x2")}


def _binary(name, fn, to_float=False):
    def op(x1, x2, /):
        return fn(*_promote(name, x1, x2, to_float=to_float, rank_only=True))
    jitted_names.setdefault(op.__code__, lambda loc: (loc["name"], _JAX_PARAMS.get(loc["name"], ("x", "y"))))
    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` with NumPy broadcasting and JAX type promotion. Mirrors "
                  f"``jax.numpy.{name}``. Raises ``TypeError`` for incompatible shapes.")
    return op


subtract = _binary("subtract", lax.sub)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, to_float=True)
atan2 = arctan2
nextafter = _binary("nextafter", lax.nextafter, to_float=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)


def _ordered(lax_op):
    """A comparison that orders complex values lexicographically (real part, then imaginary), in jnp as
    JAX does (lax's comparisons take no complex operands)."""
    def cmp(x, y):
        if _is_complex(x):
            return lax.select(lax.eq(lax.real(x), lax.real(y)), lax_op(lax.imag(x), lax.imag(y)),
                              lax_op(lax.real(x), lax.real(y)))
        return lax_op(x, y)
    return cmp


less = _binary("less", _ordered(lax.lt))
less_equal = _binary("less_equal", _ordered(lax.le))
greater = _binary("greater", _ordered(lax.gt))
greater_equal = _binary("greater_equal", _ordered(lax.ge))
bitwise_and = _binary("bitwise_and", lax.bitwise_and)
bitwise_or = _binary("bitwise_or", lax.bitwise_or)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor)
left_shift = _binary("left_shift", lax.shift_left)


@named_as_jitted("add", ("x", "y"))
def add(x1, x2, /):
    """Elementwise ``x1 + x2`` (logical or for bools). Mirrors ``jax.numpy.add``."""
    a, b = _promote("add", x1, x2, rank_only=True)
    if get_aval(a).dtype == _np.bool_:
        return lax.bitwise_or(a, b)
    return lax.add(a, b)


@named_as_jitted("multiply", ("x", "y"))
def multiply(x1, x2, /):
    """Elementwise ``x1 * x2`` (logical and for bools). Mirrors ``jax.numpy.multiply``."""
    a, b = _promote("multiply", x1, x2, rank_only=True)
    if get_aval(a).dtype == _np.bool_:
        return lax.bitwise_and(a, b)
    return lax.mul(a, b)


@named_as_jitted("right_shift", ("x1", "x2"))
def right_shift(x1, x2, /):
    a, b = _promote("right_shift", x1, x2, rank_only=True)
    if _dtypes.issubdtype(get_aval(a).dtype, _np.unsignedinteger):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


def _to_bool(x):
    """JAX's logical ops' truth value: a bool stays as it is, anything else is ``ne x 0`` (the zero typed as
    ``x``, weak when ``x`` is: the result keeps ``x``'s weak type)."""
    av = get_aval(x)
    if av.dtype == _np.bool_:
        return x
    return lax.ne(x, typed_scalar(0, av.dtype, av.weak_type))


@named_as_jitted("logical_and", ("x", "y"))
def logical_and(x1, x2, /):
    return lax.bitwise_and(*map(_to_bool, _promote("logical_and", x1, x2, rank_only=True)))


@named_as_jitted("logical_or", ("x", "y"))
def logical_or(x1, x2, /):
    return lax.bitwise_or(*map(_to_bool, _promote("logical_or", x1, x2, rank_only=True)))


@named_as_jitted("logical_xor", ("x", "y"))
def logical_xor(x1, x2, /):
    return lax.bitwise_xor(*map(_to_bool, _promote("logical_xor", x1, x2, rank_only=True)))


def logical_not(x, /):
    return lax.bitwise_not(_to_bool(_promote("logical_not", x)[0]))


def invert(x, /):
    (x,) = _promote("invert", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


@named_as_jitted("true_divide", ("x1", "x2"))
def true_divide(x1, x2, /):
    """``x1 / x2`` in floating point (ints promote to float). Mirrors ``jax.numpy.true_divide``."""
    return lax.div(*_promote("true_divide", x1, x2, to_float=True, rank_only=True))


divide = true_divide


def floor_divide(x1, x2, /):
    """``x1 // x2`` rounding toward -inf. Integer division by zero gives JAX's values (``7 // 0 == -2``).
    Staged as JAX's: one jitted ``floor_divide`` call. Mirrors ``jax.numpy.floor_divide``."""
    a, b = _promote("floor_divide", x1, x2)
    dt = get_aval(a).dtype
    if dt == _np.bool_:
        raise TypeError("floor_divide does not accept dtype bool.")
    if _dtypes.issubdtype(dt, _np.unsignedinteger):
        return lax.div(a, b)
    if _dtypes.issubdtype(dt, _np.integer):
        q = lax.div(a, b)
        fix = logical_and(lax.ne(lax.sign(a), lax.sign(b)), lax.ne(lax.rem(a, b), 0))
        return _where_jit(fix, lax.sub(q, 1), q)
    return _float_divmod(a, b)[0]


def _float_divmod(a, b):
    # CPython's float divmod; a division by zero divides ``a`` itself (±inf, as JAX), not ``a - nan``
    mod = lax.rem(a, b)
    div = lax.div(_where_jit(lax.eq(b, 0), a, lax.sub(a, mod)), b)
    ind = lax.bitwise_and(lax.ne(mod, 0), lax.ne(lax.sign(b), lax.sign(mod)))
    mod = lax.select(ind, lax.add(mod, b), mod)
    div = lax.select(ind, lax.sub(div, 1), div)
    return lax.round(div), mod


def remainder(x1, x2, /):
    """``x1 % x2`` with the sign of ``x2`` (integer ``x % 0 == 0``). Mirrors ``jax.numpy.remainder``
    (staged as JAX's: one jitted ``remainder`` call, its equations in JAX's order)."""
    a, b = _promote("remainder", x1, x2)
    dt = get_aval(a).dtype
    if dt == _np.bool_:
        raise TypeError("remainder does not accept dtype bool.")
    if _dtypes.issubdtype(dt, _np.integer):
        b = _where_jit(lax.eq(b, 0), lax.full_like(b, 1), b)
    t = lax.rem(a, b)
    if _dtypes.issubdtype(dt, _np.unsignedinteger):
        return t
    not_zero = lax.ne(t, 0)
    plus = lax.bitwise_and(lax.ne(lax.lt(t, 0), lax.lt(b, 0)), not_zero)
    return lax.select(plus, lax.add(t, b), t)


mod = remainder


@named_as_jitted("fmod", ("x1", "x2"))
def fmod(x1, x2, /):
    a, b = _promote("fmod", x1, x2)
    if _dtypes.issubdtype(get_aval(a).dtype, _np.integer):
        b = lax.select(lax.eq(b, 0), lax.full_like(b, 1), b)
    return lax.rem(a, b)


def divmod(x1, x2, /):
    """``(x1 // x2, x1 % x2)``; staged as JAX's: one jitted ``divmod`` call (holding the jitted
    ``floor_divide`` and ``remainder`` for integers). Mirrors ``jax.numpy.divmod``."""
    a, b = _promote("divmod", x1, x2)
    dt = get_aval(a).dtype
    if dt == _np.bool_:
        raise TypeError("divmod does not accept dtype bool.")
    if _dtypes.issubdtype(dt, _np.integer):
        return floor_divide(a, b), remainder(a, b)
    return _float_divmod(a, b)


@named_as_jitted("_power", ("x1", "x2"))
def power(x1, x2, /):
    """``x1 ** x2``. A static integer exponent uses ``integer_pow``; integer arrays use exact repeated
    squaring. Mirrors ``jax.numpy.power``."""
    return _power(x1, x2, lax.pow)


def _power(x1, x2, pow_fn):
    """``power`` with ``pow_fn`` for a float base (the samplers pass the C library's, ``pow_libm``)."""
    if isinstance(x2, (int, _np.integer)) and not isinstance(x2, bool):
        check_int_arg(x1, "x1")   # (a static exponent is not parsed: any size goes to integer_pow)
        (a,) = _promote("power", x1)
        if int(x2) < 0 and _dtypes.issubdtype(get_aval(a).dtype, _np.integer):
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"integer_pow({get_aval(a).str_short(short_dtypes=False)}, {int(x2)})")
        return lax.integer_pow(a, int(x2))
    a, b = _promote("power", x1, x2, rank_only=True)
    dt = get_aval(a).dtype
    if _dtypes.issubdtype(dt, _np.integer):
        return _pow_int_int_jit(a, b)
    if dt == _np.bool_:
        raise TypeError("power does not accept dtype bool.")
    e = _operand(x2, "power", 1)
    ea = get_aval(e)
    if _dtypes.issubdtype(ea.dtype, _np.integer) and (ea.ndim == 0 or get_aval(a).ndim in (0, ea.ndim)):
        # as JAX: a float/complex base takes an integer exponent as it is (pow's jvp is then finite at
        # x == 0); the promoted exponent above is left unused, as in JAX's jaxprs
        if isinstance(a, (int, float, complex)):
            a = typed_scalar(a, dt, True)   # a Python base stays a weak scalar of the result's type
        return pow_fn(a, e)
    return pow_fn(a, b)


pow = power


def _pow_int_int(x1, x2):
    """JAX's ``_pow_int_int``: binary exponentiation over the exponent's low 6 bits (enough before any base
    above 1 overflows 64 bits), each step selected by ``_where`` (a jitted call, as JAX prints it)."""
    zero = _np.array(0, get_aval(x2).dtype)[()]
    one = _np.array(1, get_aval(x2).dtype)[()]
    # pow(0, x2) is 0 for x2 != 0
    acc = _where_jit(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = _where_jit(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


# JAX's _power is jit(inline=True): one compiled call when run eagerly, inlined into an enclosing trace
_pow_int_int_jit = jit(_pow_int_int, inline=True)


def float_power(x1, x2, /):
    return lax.pow(*_promote("float_power", x1, x2, to_float=True, rank_only=True))


negative = _unary("negative", lax.neg, to_float=False)
positive = _unary("positive", lambda x: x, to_float=False)
sign = _unary("sign", lax.sign, to_float=False)
floor = _unary("floor", lambda x: lax.floor(x) if _is_float(x) else x, to_float=False)
ceil = _unary("ceil", lambda x: lax.ceil(x) if _is_float(x) else x, to_float=False)
trunc = _unary("trunc", lambda x: lax.select(lax.lt(x, 0), lax.ceil(x), lax.floor(x)) if _is_float(x) else x,
               to_float=False)
fix = trunc
rint = _unary("rint", lambda x: lax.round(x, 1) if _is_float(x) else x, to_float=False)
exp = _unary("exp", lax.exp)
exp2 = _unary("exp2", lax.exp2)
expm1 = _unary("expm1", lax.expm1)
log = _unary("log", lax.log)
log1p = _unary("log1p", lax.log1p)
log2 = _unary("log2", lambda x: lax.div(lax.log(x), lax.log(lax.full_like(x, 2))))
def _log10(x):
    # JAX's rule: log(x) times 1/ln(10) rounded to the dtype (a product, not log(x)/log(10): other bits)
    r = lax.log(x)
    if _np.issubdtype(x.dtype, _np.complexfloating):
        re, im = lax.real(r), lax.imag(r)
        c = lax.full_like(re, 0.4342944819032518)
        return lax.complex(lax.mul(re, c), lax.mul(im, c))
    return lax.mul(r, lax.full_like(r, 0.4342944819032518))


log10 = _unary("log10", _log10)
sqrt = _unary("sqrt", lax.sqrt)
cbrt = _unary("cbrt", lax.cbrt)
sin = _unary("sin", lax.sin)
cos = _unary("cos", lax.cos)
tan = _unary("tan", lax.tan)
arcsin = asin = _unary("arcsin", lax.asin)
arccos = acos = _unary("arccos", lax.acos)
arctan = atan = _unary("arctan", lax.atan)
sinh = _unary("sinh", lax.sinh)
cosh = _unary("cosh", lax.cosh)
tanh = _unary("tanh", lax.tanh)
arcsinh = asinh = _unary("arcsinh", lax.asinh)
arccosh = acosh = _unary("arccosh", lax.acosh)
arctanh = atanh = _unary("arctanh", lax.atanh)
reciprocal = _unary("reciprocal", lambda x: lax.div(lax.full_like(x, 1), x))
deg2rad = radians = _unary("deg2rad", lambda x: lax.mul(x, _np.pi / 180))
rad2deg = degrees = _unary("rad2deg", lambda x: lax.mul(x, 180 / _np.pi))


def abs(x, /):
    """Elementwise absolute value. Mirrors ``jax.numpy.abs``."""
    (x,) = _promote("absolute", x)   # jnp.abs is JAX's absolute: its errors name that
    dt = get_aval(x).dtype
    if dt == _np.bool_ or _dtypes.issubdtype(dt, _np.unsignedinteger):
        return x
    return lax.abs(x)


absolute = abs


def square(x, /):
    """``x * x``. Mirrors ``jax.numpy.square``."""
    (x,) = _promote("square", x)
    return lax.square(x)


def round(a, decimals=0, out=None):
    """Rounds half to even at ``decimals`` decimal places, as one jitted call (printed ``jit[name=round]``,
    as JAX's). Mirrors ``jax.numpy.round``."""
    _operand(a, "round", jitted=True)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    return _round_jit(a, decimals=decimals)


def _round(a, decimals=0):
    (a,) = _promote("round", a)
    if not _is_float(a):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals == 0:
        return lax.round(a, 1)
    f = 10.0 ** decimals
    return lax.div(lax.round(lax.mul(a, f), 1), f)


_round.__name__ = "round"
_round_jit = jit(_round, static_argnames=("decimals",))
around = round


def isfinite(x, /):
    (x,) = _promote("isfinite", x)
    if _is_complex(x):  # of either part
        return lax.bitwise_and(isfinite(lax.real(x)), isfinite(lax.imag(x)))
    if not _is_float(x):
        return lax.full_like(x, True, _np.bool_)
    return lax.is_finite(x)


def isnan(x, /):
    (x,) = _promote("isnan", x)
    if _is_complex(x):  # of either part
        return lax.bitwise_or(isnan(lax.real(x)), isnan(lax.imag(x)))
    return lax.ne(x, x)   # integers and bools too, as JAX stages it (``ne a a``), never true for them


def _inf_like(x, sign=1.0):
    """``±inf`` typed as ``x``, strong (JAX's ``_constant_like``: the comparison gives a strong bool)."""
    return typed_scalar(sign * _np.inf, get_aval(x).dtype, False)


def _isinf(x):
    (x,) = _promote("isinf", x)
    if _is_complex(x):  # of either part
        re, im = lax.real(x), lax.imag(x)   # both parts first (JAX's equation order)
        return lax.bitwise_or(_isinf(re), _isinf(im))
    if not _is_float(x):
        return lax.full_like(x, False, _np.bool_)
    return lax.eq(lax.abs(x), _inf_like(x))


_isinf.__name__ = "isinf"   # the name the jit equation prints
_isinf_jit = jit(_isinf)


def isinf(x, /):
    """True where ``x`` is ±inf (either part of a complex), as one jitted call (printed ``jit[name=isinf]``).
    Mirrors ``jax.numpy.isinf``."""
    return _isinf_jit(x)


def isposinf(x, /):
    (x,) = _promote("isposinf", x)
    return lax.eq(x, _inf_like(x)) if _is_float(x) else lax.full_like(x, False, _np.bool_)


def isneginf(x, /):
    (x,) = _promote("isneginf", x)
    return lax.eq(x, _inf_like(x, -1.0)) if _is_float(x) else lax.full_like(x, False, _np.bool_)


def signbit(x, /):
    (x,) = _promote("signbit", x)
    if _is_float(x):
        it = {2: _np.int16, 4: _np.int32, 8: _np.int64}[get_aval(x).dtype.itemsize]   # the same width
        return lax.lt(lax.bitcast_convert_type(x, it), 0)
    return lax.lt(x, 0)


@named_as_jitted("hypot", ("x1", "x2"))
def hypot(x1, x2, /):
    a, b = _promote("hypot", x1, x2, to_float=True)
    return lax.sqrt(lax.add(lax.mul(a, a), lax.mul(b, b)))


def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` without overflow; its derivative splits evenly at ties, as JAX's custom
    rule does. Mirrors ``jax.numpy.logaddexp``."""
    a, b = _promote("logaddexp", x1, x2, to_float=True)
    return _logaddexp(a, b)


def _logaddexp_impl(a, b):
    m = lax.max(a, b)
    d = lax.sub(a, b)
    return lax.select(lax.ne(d, d), lax.add(a, b), lax.add(m, lax.log1p(lax.exp(lax.neg(lax.abs(d))))))


def _replace_inf(x):
    return lax.select(lax.eq(lax.abs(x), _np.inf), lax.full_like(x, 0), x)


def _logaddexp_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    out = _logaddexp(a, b)
    t = lax.add(lax.mul(ta, lax.exp(lax.sub(_replace_inf(a), _replace_inf(out)))),
                lax.mul(tb, lax.exp(lax.sub(_replace_inf(b), _replace_inf(out)))))
    return out, t


_logaddexp_impl.__name__ = "logaddexp"   # JAX's custom_jvp is the public function: printed name=logaddexp
_logaddexp = custom_jvp(_logaddexp_impl)
_logaddexp.defjvp(_logaddexp_jvp)


def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)``. Mirrors ``jax.numpy.logaddexp2``."""
    a, b = _promote("logaddexp2", x1, x2, to_float=True)
    ln2 = _np.log(2)
    return lax.div(_logaddexp(lax.mul(a, ln2), lax.mul(b, ln2)), ln2)


def heaviside(x1, x2, /):
    a, b = _promote("heaviside", x1, x2)
    zero = lax.full_like(a, 0)
    return lax.select(lax.lt(a, zero), zero, lax.select(lax.eq(a, zero), b, lax.full_like(a, 1)))


def _clip(arr, min, max):
    (x,) = _promote("clip", arr)
    if min is not None:
        x = maximum(min, x)
    if max is not None:
        x = minimum(max, x)
    return x


_clip.__name__ = "clip"
_clip_jit = jit(_clip)   # JAX's clip is jitted: jaxprs show it as ``jit[name=clip ...]``


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """``arr`` limited to ``[min, max]`` (either may be None), as one jitted call (printed
    ``jit[name=clip]``). Mirrors ``jax.numpy.clip`` (cranax still takes the older ``a``/``a_min``/``a_max``)."""
    x = arr if arr is not None else a
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    _operand(x, "clip", jitted=True)
    if any(v is not None and _dtypes.issubdtype(_dtypes.dtype(v), _np.complexfloating) for v in (x, lo, hi)):
        raise ValueError("Clip received a complex value either through the input or the min/max keywords. Complex "
                         "values have no ordering and cannot be clipped. Please convert to a real value or array "
                         "by taking the real or imaginary components via jax.numpy.real/imag respectively.")
    return _clip_jit(x, lo, hi)


def _where(condition, x, y):
    condition = _operand(condition, "where")
    if get_aval(condition).dtype != _np.bool_:
        condition = lax.ne(condition, _convert(typed_scalar(0, get_aval(condition).dtype, False),
                                               get_aval(condition).dtype, False))
    x, y = _promote("where", x, y)
    shape = _broadcast_shapes("where", [get_aval(condition).shape, get_aval(x).shape, get_aval(y).shape])
    # as JAX: a scalar condition stays scalar (select_n takes it with array cases)
    scalar_pred = get_aval(condition).ndim == 0
    condition, x, y = [v if (lax._is_literal_scalar(v) and not shape) or (scalar_pred and i == 0)
                       else _broadcast_to(v, shape) for i, v in enumerate((condition, x, y))]
    if 0 in shape:   # as JAX: nothing to select from (an empty ``take`` prints no select_n)
        return x
    return lax.select_n(condition, y, x)


# The three-argument ``where`` runs as one jitted call (its promotion and broadcasting are traced once per
# signature); the public ``where`` (whose one-argument form is ``nonzero``) is in ``_shape_ops``.
_where_jit = jit(_where)
remainder = jit(remainder)
floor_divide = jit(floor_divide)
divmod = jit(divmod)


def copy(a, order=None):
    return asarray(a)


def _is_complex(x):
    return get_aval(x).dtype.kind == "c"


def iscomplexobj(x):
    """True when ``x`` has a complex dtype (a Python complex included), whatever its values. Mirrors
    ``jax.numpy.iscomplexobj``."""
    if x is None:
        return False
    try:
        return _dtypes.issubdtype(_dtypes.dtype(x), _np.complexfloating)
    except (TypeError, ValueError):
        return _dtypes.issubdtype(_np.result_type(x), _np.complexfloating)


def isrealobj(x):
    """``not iscomplexobj(x)``. Mirrors ``jax.numpy.isrealobj``."""
    return not iscomplexobj(x)


def real(val, /):
    """The real part of ``val`` (a real ``val`` as it is). Mirrors ``jax.numpy.real``."""
    (x,) = _promote("real", val)
    return lax.real(x) if _is_complex(x) else asarray(x)


def imag(val, /):
    """The imaginary part of ``val`` (zeros for a real ``val``). Mirrors ``jax.numpy.imag``."""
    (x,) = _promote("imag", val)
    return lax.imag(x) if _is_complex(x) else lax.full_like(x, 0)


def conjugate(x, /):
    """The complex conjugate (a real ``x`` as it is). Mirrors ``jax.numpy.conjugate``."""
    (x,) = _promote("conjugate", x)
    return lax.conj(x) if _is_complex(x) else asarray(x)


conj = conjugate


def angle(z, deg=False):
    """The argument of ``z`` in radians (degrees with ``deg``), float: ``atan2(imag, real)``. Mirrors
    ``jax.numpy.angle``."""
    (z,) = _promote("angle", z)
    if _is_complex(z):
        re, im = lax.real(z), lax.imag(z)
    else:
        (re,) = _promote("angle", z, to_float=True)
        im = lax.full_like(re, 0)
    out = lax.atan2(im, re)
    return lax.mul(out, 180 / _np.pi) if deg else out


def _zero_like(i):   # JAX's _lax_const: a zero typed (and weak) as ``i``
    a = get_aval(i)
    return typed_scalar(0, a.dtype, a.weak_type)


@jit
def iscomplex(x):
    """True where the imaginary part of ``x`` is nonzero (one jitted call, as JAX's). Mirrors
    ``jax.numpy.iscomplex``."""
    i = imag(x)
    return lax.ne(i, _zero_like(i))


@jit
def isreal(x):
    """True where the imaginary part of ``x`` is zero (one jitted call, as JAX's). Mirrors
    ``jax.numpy.isreal``."""
    i = imag(x)
    return lax.eq(i, _zero_like(i))


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``a == b or (isfinite(b) and |a - b| <= atol + rtol * |b|)`` (NumPy's rule: an infinite
    ``b`` is close only to itself), plus NaN == NaN when ``equal_nan``; bool, the broadcast shape of ``a``
    and ``b``, promoted to an inexact dtype (``rtol``/``atol`` in its real dtype). One jitted call with
    ``equal_nan`` static, as JAX's. Mirrors ``jax.numpy.isclose``."""
    a, b = _promote("isclose", a, b, to_float=True)
    dt = _np.dtype(a.dtype)
    if _dtypes.issubdtype(dt, _np.complexfloating):
        dt = _np.array(0, dt).real.dtype
    rtol, atol = lax.convert_element_type(rtol, dt), lax.convert_element_type(atol, dt)
    both_nan = logical_and(isnan(a), isnan(b))
    check_fin = isfinite(b)
    in_range = less_equal(abs(subtract(a, b)), add(atol, multiply(rtol, abs(b))))
    out = logical_or(equal(a, b), logical_and(check_fin, in_range))
    return logical_or(out, both_nan) if equal_nan else out


_isclose.__name__ = "isclose"
isclose = jit(_isclose, static_argnames=("equal_nan",))
