"""Elementwise primitives: unary math, binary arithmetic/logic, comparisons, select_n, clamp, conversions —
each with its ``lax`` wrapper and its rules.

Operands of a binary primitive share a dtype and a shape; a rank-0 operand may stand for a scalar that
broadcasts (jaxprs print such literals as ``1.0:f32[]``). The result is weakly typed only when every
operand is.
"""
import sys
import warnings

import numpy as np

from .. import core, dtypes
from ..array import Array, _from_host
from ..core import ShapedArray, Tracer, TypedScalar, get_aval, typed_scalar
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters import lowering
from ..interpreters import partial_eval as _pe
from ..jaxpr import Jaxpr, Var
from .._pytree import tree_map
from . import structural as _st   # broadcast_in_dim and full (structural uses the arithmetic wrappers here)
from .standard import standard_primitive

_FLOAT = "float"
_INEXACT = "inexact"  # floating or complex (the complex ones are lowered by ``primitives.complex``)
_NUM = "num"
_INT = "int"
_BOOL_INT = "bool_int"
_ORDERED = "ordered"  # integer, floating or bool: what lt/le/gt/ge compare (complex has no order in lax)
_SIGNED = "signed"    # floating, complex or signed integer: what abs takes (jnp.abs passes the others through)
_ANY = "any"

_KIND_TEXT = {   # JAX's words: the dtype categories its rule accepts
    _FLOAT: "subtypes of floating",
    _INEXACT: "subtypes of floating, complexfloating",
    _NUM: "subtypes of integer, floating, complexfloating",
    _INT: "subtypes of integer",
    _BOOL_INT: "subtypes of integer, bool",
    _ANY: "any",
    _ORDERED: "subtypes of integer, floating, bool",
    _SIGNED: "subtypes of floating, complexfloating, signedinteger",
}
# primitives whose JAX rule names other categories than their kind's
_ACCEPTED_TEXT = {
    "abs": "subtypes of floating, complexfloating, signedinteger",
    "rem": "subtypes of integer, floating",
    **dict.fromkeys(("lt", "le", "gt", "ge"), "subtypes of integer, floating, bool"),
    # JAX's take complex operands too (cranax's acos, asin, atan and logistic do; the others not yet)
    **dict.fromkeys(("acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "exp2", "logistic"),
                    "subtypes of floating, complexfloating"),
}


_KIND_OF = {}  # (kind, dtype) -> bool, memoized


def _accepts(kind, dt):
    r = _KIND_OF.get((kind, dt))
    if r is None:
        r = _KIND_OF[(kind, dt)] = _accepts_slow(kind, dt)
    return r


def _accepts_slow(kind, dt):
    if kind == _ANY:
        return True
    if kind == _FLOAT:
        return dtypes.issubdtype(dt, np.floating)
    if kind == _INEXACT:
        return dtypes.issubdtype(dt, np.inexact)
    if kind == _INT:
        return dtypes.issubdtype(dt, np.integer)
    if kind == _BOOL_INT:
        return dt == np.bool_ or dtypes.issubdtype(dt, np.integer)
    if kind == _ORDERED:
        return dt == np.bool_ or dtypes.issubdtype(dt, np.integer) or dtypes.issubdtype(dt, np.floating)
    if kind == _SIGNED:
        return dtypes.issubdtype(dt, np.inexact) or dtypes.issubdtype(dt, np.signedinteger)
    return dt != np.bool_


def _check_dtype(name, kind, dt, position=None):
    """JAX's dtype-rule error; an n-ary primitive's names the operand's position (``at position 0``)."""
    if not _accepts(kind, dt):
        text = _ACCEPTED_TEXT.get(name) or _KIND_TEXT[kind]
        at = "" if position is None else f" at position {position}"
        raise TypeError(f"{name} does not accept dtype {np.dtype(dt).name}{at}. "
                        f"Accepted dtypes{at} are {text}.")


def _unary_rule(name, kind, out_dtype=None):
    def abstract_eval(x):
        if not _accepts(kind, x.dtype):
            _check_dtype(name, kind, x.dtype)
        if out_dtype is not None:   # (is_finite) weak when its input is, as JAX's naryop weak-type rule
            return ShapedArray(x.shape, out_dtype, x.weak_type)
        return x
    return abstract_eval


def binary_shape(name, x, y):
    """The result shape of a binary primitive on avals ``x`` and ``y``, as JAX's ``broadcasting_shape_rule``:
    a rank-0 operand goes with any shape; otherwise the ranks must be equal and each dimension pair equal
    or 1 (``f32[2,3]`` with ``f32[1,3]`` gives ``f32[2,3]``; jnp's rank promotion reshapes ``f32[3]`` to
    ``f32[1,3]`` first, as JAX's jaxprs show). Raises ``TypeError`` with JAX's texts."""
    xs, ys = x.shape, y.shape
    if xs == ys or not ys:
        return xs
    if not xs:
        return ys
    if len(xs) != len(ys):
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {({len(xs), len(ys)})}")
    out = []
    for a, b in zip(xs, ys):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {tuple(xs)}, {tuple(ys)}.")
    return tuple(out)


def broadcast_shapes_of(name, avals):
    """The common shape of elementwise operands: equal shapes, or rank-0 operands that broadcast."""
    shape = None
    for a in avals:
        if a.shape == ():
            continue
        if shape is None:
            shape = a.shape
        elif a.shape != shape:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(b.shape) for b in avals)}.")
    return () if shape is None else shape


# The jnp function that promotes where the lax one requires equal dtypes (named in JAX's error text).
_JNP_EQUIVALENT = {"add": "add", "atan2": "arctan2", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
                   "bitwise_xor": "bitwise_xor", "div": "divide", "eq": "equal", "max": "maximum", "min": "minimum",
                   "mul": "multiply", "ne": "not_equal", "nextafter": "nextafter", "pow": "float_power",
                   "select": "where", "shift_left": "left_shift", "shift_right_logical": "right_shift",
                   "shift_right_arithmetic": "right_shift", "sub": "subtract"}


def _dtype_mismatch(name, dts):
    msg = f"lax.{name} requires arguments to have the same dtypes, got {', '.join(np.dtype(d).name for d in dts)}."
    if name in _JNP_EQUIVALENT:
        msg += f" (Tip: jnp.{_JNP_EQUIVALENT[name]} is a similar function that does automatic type promotion on inputs)."
    return TypeError(msg)


def _same_dtypes(name, avals):
    dt = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != dt:
            raise _dtype_mismatch(name, [b.dtype for b in avals])
    return dt


def _binary_rule(name, kind, out_dtype=None):
    def abstract_eval(x, y):
        dt = x.dtype
        # as JAX's rule: each operand's dtype kind first (named by position), then equal dtypes
        if not _accepts(kind, dt):
            _check_dtype(name, kind, dt, 0)
        if dt != y.dtype:
            if not _accepts(kind, y.dtype):
                _check_dtype(name, kind, y.dtype, 1)
            _same_dtypes(name, (x, y))
        xs, ys = x.shape, y.shape
        shape = xs if (xs == ys or not ys) else ys if not xs else binary_shape(name, x, y)
        # a comparison of weakly typed operands is a weak bool (JAX's naryop weak-type rule)
        return ShapedArray(shape, dt if out_dtype is None else out_dtype, x.weak_type and y.weak_type)
    return abstract_eval


def unop(name, kind, out_dtype=None):
    return standard_primitive(name, _unary_rule(name, kind, out_dtype), elementwise=True)


def binop(name, kind, out_dtype=None):
    p = standard_primitive(name, _binary_rule(name, kind, out_dtype), elementwise=True)
    p.dtype_kind = kind   # (the lax wrapper's mismatch error checks it first)
    p.broadcasts_size1 = True   # operands of equal rank broadcast their size-1 dimensions (``binary_shape``)
    return p


# Unary
neg_p = unop("neg", _NUM)


def _abs_abstract(x):
    _check_dtype("abs", _SIGNED, x.dtype)
    if x.dtype.kind == "c":  # |z| of a complex z is real (JAX: abs of complex64 is float32)
        return ShapedArray(x.shape, np.dtype(np.float32 if x.dtype == np.complex64 else np.float64), x.weak_type)
    return x


abs_p = standard_primitive("abs", _abs_abstract, elementwise=True)
sign_p = unop("sign", _NUM)
floor_p = unop("floor", _FLOAT)
ceil_p = unop("ceil", _FLOAT)
exp_p = unop("exp", _INEXACT)
exp2_p = unop("exp2", _FLOAT)
log_p = unop("log", _INEXACT)
log1p_p = unop("log1p", _INEXACT)
expm1_p = unop("expm1", _INEXACT)
sqrt_p = unop("sqrt", _INEXACT)
rsqrt_p = unop("rsqrt", _INEXACT)
cbrt_p = unop("cbrt", _FLOAT)
sin_p = unop("sin", _INEXACT)
cos_p = unop("cos", _INEXACT)
tan_p = unop("tan", _INEXACT)
tanh_p = unop("tanh", _INEXACT)
logistic_p = unop("logistic", _INEXACT)
erf_p = unop("erf", _FLOAT)
erfc_p = unop("erfc", _FLOAT)
erf_inv_p = unop("erf_inv", _FLOAT)
# The inverse standard normal CDF (cranax's own primitive: JAX composes it; `scipy.special.ndtri` binds it
# for float32, where the CPU backend computes XLA's sequence as one vectorized function).
ndtri_p = unop("ndtri", _FLOAT)
asin_p = unop("asin", _INEXACT)
acos_p = unop("acos", _INEXACT)
atan_p = unop("atan", _INEXACT)
sinh_p = unop("sinh", _INEXACT)
cosh_p = unop("cosh", _INEXACT)
asinh_p = unop("asinh", _FLOAT)
acosh_p = unop("acosh", _FLOAT)
atanh_p = unop("atanh", _FLOAT)
lgamma_p = unop("lgamma", _FLOAT)
digamma_p = unop("digamma", _FLOAT)
bessel_i0e_p = unop("bessel_i0e", _FLOAT)
bessel_i1e_p = unop("bessel_i1e", _FLOAT)
not_p = unop("not", _BOOL_INT)
square_p = unop("square", _NUM)
is_finite_p = unop("is_finite", _FLOAT, out_dtype=np.dtype(bool))
population_count_p = unop("population_count", _INT)
clz_p = unop("clz", _INT)

round_p = standard_primitive(
    "round", lambda x, rounding_method=0: _unary_rule("round", _FLOAT)(x),
    wire=lambda eqn: {"rounding_method": int(eqn.params.get("rounding_method", 0))}, elementwise=True)

# Binary
add_p = binop("add", _NUM)
sub_p = binop("sub", _NUM)
mul_p = binop("mul", _NUM)
div_p = binop("div", _NUM)
rem_p = binop("rem", _NUM)
max_p = binop("max", _ANY)
min_p = binop("min", _ANY)
pow_p = binop("pow", _INEXACT)


_pow_same_dtypes = _binary_rule("pow", _INEXACT)


def _pow_abstract(x, y):
    # as JAX's pow: an integer exponent may go with a float or complex base (the result takes the base's type)
    if dtypes.issubdtype(y.dtype, np.integer) and dtypes.issubdtype(x.dtype, np.inexact):
        return _pow_same_dtypes(x, y.update(dtype=x.dtype))
    return _pow_same_dtypes(x, y)


def _pow_inline(eqn):
    """The core's pow takes operands of one dtype: an integer exponent is converted to the base's first."""
    x, y = eqn.invars
    if not dtypes.issubdtype(y.aval.dtype, np.integer):
        return None
    p = eqn.primitive   # (pow or its C-library twin)
    return _pe.trace_to_jaxpr(lambda a, b: [p.bind(a, _convert(b, a.aval.dtype, False))],
                              [x.aval, y.aval]).jaxpr, eqn.invars


pow_p.abstract_eval = _pow_abstract
pow_p.inline_jaxpr = staticmethod(_pow_inline)


def _libm_twin(p, wire_name):
    """A primitive that prints, checks, differentiates and batches as ``p`` (its rules are registered beside
    ``p``'s below) but lowers to the core op ``wire_name``: float32 through the C library's function, per
    element, as XLA:CPU calls it. The samplers whose draws must be JAX's bits bind it (gamma's boost,
    weibull_min's and generalized_normal's pow). (``tan`` needs none: its vectorized function has ``tanf``'s
    bits, so ``random.cauchy`` binds ``tan`` itself.)"""
    t = standard_primitive(p.name, p.abstract_eval, elementwise=True)
    t.wire_name = wire_name
    t.broadcasts_size1 = getattr(p, "broadcasts_size1", False)
    if getattr(p, "inline_jaxpr", None) is not None:
        t.inline_jaxpr = p.inline_jaxpr
    return t


pow_libm_p = _libm_twin(pow_p, "pow_libm")
atan2_p = binop("atan2", _FLOAT)
nextafter_p = binop("nextafter", _FLOAT)
and_p = binop("and", _BOOL_INT)
or_p = binop("or", _BOOL_INT)
xor_p = binop("xor", _BOOL_INT)
shift_left_p = binop("shift_left", _INT)
shift_right_logical_p = binop("shift_right_logical", _INT)
shift_right_arithmetic_p = binop("shift_right_arithmetic", _INT)
# Special functions (binary; the scalar math is rust/backend/cpu/special.rs). Operands: (a, x) for the
# incomplete gamma family, (m, x) for polygamma, (x, q) for the Hurwitz zeta.
igamma_p = binop("igamma", _FLOAT)
igammac_p = binop("igammac", _FLOAT)
igamma_grad_a_p = binop("igamma_grad_a", _FLOAT)
random_gamma_grad_p = binop("random_gamma_grad", _FLOAT)
polygamma_p = binop("polygamma", _FLOAT)
zeta_p = binop("zeta", _FLOAT)

# Comparisons
_BOOL = np.dtype(bool)
eq_p = binop("eq", _ANY, _BOOL)
ne_p = binop("ne", _ANY, _BOOL)
lt_p = binop("lt", _ORDERED, _BOOL)
le_p = binop("le", _ORDERED, _BOOL)
gt_p = binop("gt", _ORDERED, _BOOL)
ge_p = binop("ge", _ORDERED, _BOOL)


def _integer_pow_abstract(x, y):
    _check_dtype("integer_pow", _NUM, x.dtype)
    if y < 0 and not dtypes.issubdtype(x.dtype, np.inexact):
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short(short_dtypes=False)}, {y})")
    return x


integer_pow_p = standard_primitive("integer_pow", _integer_pow_abstract,
                                   wire=lambda eqn: {"y": int(eqn.params["y"])}, elementwise=True)
_POW_SPLIT = 2**30
_big_pow_cache = {}


def _big_pow_fold(x, y):
    """``x ** y`` for ``|y| >= 2**31`` from 32-bit exponents: ``(x ** 2**30) ** (y // 2**30) * x ** (y % 2**30)``
    (a negative ``y``: the reciprocal), the same squarings JAX's repeated-squaring lowering does."""
    if y < 0:
        return div(typed_scalar(1, get_aval(x).dtype, False), _big_pow_fold(x, -y))
    q, r = divmod(y, _POW_SPLIT)
    hi = integer_pow_p.bind(integer_pow_p.bind(x, y=_POW_SPLIT), y=q) if q < 2**31 else \
        _big_pow_fold(integer_pow_p.bind(x, y=_POW_SPLIT), q)
    return mul(hi, integer_pow_p.bind(x, y=r)) if r else hi


def _integer_pow_inline(eqn):
    """The core takes a 32-bit exponent: a larger one (JAX's ``x ** 2**40``) is lowered as a few of them."""
    y = eqn.params["y"]
    if -2**31 < y < 2**31:
        return None
    (x,) = eqn.invars
    key = (x.aval.strip_weak_type() if hasattr(x.aval, "strip_weak_type") else x.aval, y)
    jaxpr = _big_pow_cache.get(key)
    if jaxpr is None:
        jaxpr = _big_pow_cache[key] = _pe.trace_to_jaxpr(lambda a: [_big_pow_fold(a, y)], [x.aval]).jaxpr
    return jaxpr, eqn.invars


integer_pow_p.inline_jaxpr = staticmethod(_integer_pow_inline)


def _select_n_abstract(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    dt = _same_dtypes("select_n", cases)
    shape = cases[0].shape
    for c in cases[1:]:
        if c.shape != shape:
            raise TypeError(f"select_n cases must have the same shapes, got "
                            f"{[c.shape for c in cases]}.")
    if which.shape not in ((), shape):
        raise TypeError(f"select `which` must be scalar or have the same shape as cases, got `which` "
                        f"shape {which.shape} but case shape {shape}.")
    if which.dtype != np.bool_ and which.dtype != np.int32:
        raise TypeError(f"which must be a boolean or int32 type, got {np.dtype(which.dtype).name}")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select_n with a boolean `which` takes at most two cases")
    return ShapedArray(shape, dt, all(c.weak_type for c in cases))


select_n_p = standard_primitive("select_n", _select_n_abstract, elementwise=True)


def _clamp_abstract(lo, x, hi):
    _same_dtypes("clamp", (lo, x, hi))
    for b in (lo, hi):
        if b.shape not in ((), x.shape):
            raise TypeError(f"clamp requires min and max to be scalars or have the same shape as the operand, "
                            f"got {lo.shape}, {x.shape}, {hi.shape}.")
    return x


clamp_p = standard_primitive("clamp", _clamp_abstract, elementwise=True)


def _fma_abstract(a, b, c):
    dt = _same_dtypes("fma", (a, b, c))
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"fma takes float32 or float64 operands, got {np.dtype(dt).name}")
    if not a.shape == b.shape == c.shape:
        raise TypeError(f"fma requires operands of one shape, got {a.shape}, {b.shape}, {c.shape}")
    return ShapedArray(a.shape, dt, a.weak_type and b.weak_type and c.weak_type)


# a * b + c rounded once: the fused multiply-add XLA:CPU contracts a multiply and an add into, which the
# samplers need for JAX's bits (``_prng.fma``). JAX 0.10.2 exports no such primitive, so it stays internal
# (no ``lax.fma``); the core lowers it to the hardware FMA (Cranelift's ``fma``; software where the host
# lacks one).
fma_p = standard_primitive("fma", _fma_abstract, elementwise=True)


def _convert_abstract(x, new_dtype, weak_type=False, sharding=None):
    return ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = standard_primitive(
    "convert_element_type", _convert_abstract,
    wire=lambda eqn: {"new_dtype": dtypes.short_name(eqn.params["new_dtype"])}, elementwise=True)
convert_element_type_p.pp_params = lambda eqn: [("new_dtype", eqn.params["new_dtype"]),
                                                 ("weak_type", eqn.params.get("weak_type", False))]


def _bitcast_abstract(x, new_dtype):
    if np.dtype(new_dtype).itemsize != x.dtype.itemsize:
        raise TypeError(f"bitcast_convert_type between types of different widths is not supported: "
                        f"{x.dtype} -> {np.dtype(new_dtype)}")
    return ShapedArray(x.shape, new_dtype, False)


bitcast_convert_type_p = standard_primitive(
    "bitcast_convert_type", _bitcast_abstract,
    wire=lambda eqn: {"new_dtype": dtypes.short_name(eqn.params["new_dtype"])}, elementwise=True)


# ---- complex parts (their lowering as pairs of reals: ``primitives.complex_lowering``) ----

def _real_of(dt):
    return np.dtype(np.float32 if np.dtype(dt) == np.complex64 else np.float64)


def _complex_of(dt):
    return np.dtype(np.complex64 if np.dtype(dt) == np.float32 else np.complex128)


def _part_abstract(name):
    def abstract_eval(x):
        if x.dtype.kind != "c":
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of "
                            f"complexfloating.")
        return ShapedArray(x.shape, _real_of(x.dtype), x.weak_type)
    return abstract_eval


real_p = standard_primitive("real", _part_abstract("real"), elementwise=True)
imag_p = standard_primitive("imag", _part_abstract("imag"), elementwise=True)


def _complex_abstract(x, y):
    dt = _same_dtypes("complex", (x, y))
    if dt not in (np.float32, np.float64):
        raise TypeError(f"complex does not accept dtype {np.dtype(dt).name} at position 0. Accepted dtypes at "
                        f"position 0 are subtypes of float32, float64.")
    shape = binary_shape("complex", x, y)
    return ShapedArray(shape, _complex_of(dt), x.weak_type and y.weak_type)


complex_p = standard_primitive("complex", _complex_abstract, elementwise=True)
complex_p.broadcasts_size1 = True


def _conj_abstract(x, input_dtype=None):
    if x.dtype.kind == "c":
        return x
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise TypeError(f"conj does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of floating "
                        f"or complexfloating.")
    return ShapedArray(x.shape, _complex_of(x.dtype), x.weak_type)


conj_p = standard_primitive("conj", _conj_abstract, elementwise=True)

del lowering


# ---- the lax wrappers ----
# Unlike ``cranax.numpy`` these do not promote dtypes: operands of a binary op share a dtype, except Python
# scalars, which take the other operand's dtype (weakly typed). Shapes must match, except rank-0 values.

_PY = (bool, int, float, complex)
_PKG = __name__.split(".")[0]   # "cranax": the package whose lax calls may pass Python scalars of any kind


def _ours(g):
    """Whether the frame with globals ``g`` runs cranax's code. Read from ``__package__``: under the alias a
    module serving ``jax.X`` is named so (its ``__name__``)."""
    return (g.get("__package__") or g.get("__name__") or "").partition(".")[0] == _PKG


def _is_literal_scalar(x):
    return isinstance(x, _PY + (np.generic, TypedScalar)) or (isinstance(x, np.ndarray) and x.ndim == 0)


def _coerce(x, like_dtype):
    """A Python scalar as a weakly typed scalar of ``like_dtype``."""
    if isinstance(x, _PY):
        return typed_scalar(x, like_dtype, True)
    return x


def _as_operand(x):
    if isinstance(x, _PY):
        return typed_scalar(x, dtypes.dtype(x, canonicalize=True), True)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax operations require array operands, got {type(x).__name__}")
    if isinstance(x, np.ndarray) and x.ndim > 0 or isinstance(x, np.generic):
        dt = dtypes.canonicalize_dtype(x.dtype)
        return np.asarray(x, dt) if x.dtype != dt else x
    return x


def _broadcast_rank0(args, shape):
    """Broadcasts rank-0 non-literal operands to ``shape`` (jaxprs let only literals mix ranks)."""
    if not shape:
        return args
    out = []
    for a in args:
        av = get_aval(a)
        if av.shape != shape and av.ndim == 0 and not _is_literal_scalar(a):
            a = _st.broadcast_in_dim(a, shape, ())
        out.append(a)
    return out



def _nary(prim):
    bind = prim.bind
    strict = prim.name != "pow"   # lax.pow takes an integer exponent with a float base, as JAX's

    def op(*args):
        # Fast path: operands that already carry avals of one dtype, shapes equal or rank 0.
        try:
            avals = [a.aval for a in args]
        except AttributeError:
            avals = None
        if avals is not None:
            dt = avals[0].dtype
            shape = None
            ok = True
            for a in avals:
                if a.dtype is not dt and a.dtype != dt:
                    ok = False
                    break
                if a.shape:
                    if shape is None:
                        shape = a.shape
                    elif a.shape != shape:
                        ok = False
                        break
            if ok and (shape is None or all(a.shape or type(x) is TypedScalar for a, x in zip(avals, args))):
                return bind(*args)
        dt = None
        for a in args:
            if not isinstance(a, _PY):
                dt = get_aval(_as_operand(a)).dtype
                break
        if dt is None:  # only Python scalars: they meet at their promoted (weak) type
            dt = dtypes.result_type(*args)
        if strict and not _ours(sys._getframe(1).f_globals):
            # Called by a user, lax is strict as JAX's: a Python scalar is a value of its default dtype
            # (int32/float32/complex64, 64-bit under x64) that must equal the other operands' dtype. cranax's
            # own code may pass scalars that take the operand's dtype (JAX's internals write lax._const).
            dts = [dtypes.dtype(a, canonicalize=True) if isinstance(a, _PY) else get_aval(_as_operand(a)).dtype
                   for a in args]
            if any(d != dts[0] for d in dts[1:]):
                kind = getattr(prim, "dtype_kind", None)   # JAX names an unaccepted dtype by position first
                for i, d in enumerate(dts if kind is not None else ()):
                    _check_dtype(prim.name, kind, d, i)
                raise _dtype_mismatch(prim.name, dts)
        args = [_coerce(a, dt) for a in args]
        args = [_as_operand(a) for a in args]
        if len(args) == 2:   # a binary primitive takes a rank-0 operand with an array, as JAX's (and size 1s)
            return prim.bind(*args)
        avals = [get_aval(a) for a in args]
        shape = broadcast_shapes_of(prim.name, avals)
        return prim.bind(*_broadcast_rank0(args, shape))
    op.__name__ = prim.name
    op.__doc__ = (f"Elementwise ``{prim.name}`` (the ``{prim.name}`` primitive). Mirrors ``jax.lax."
                  f"{prim.name}``. Raises ``TypeError`` for mismatched dtypes or shapes.")
    return op


neg = _nary(neg_p)
abs = _nary(abs_p)
sign = _nary(sign_p)
floor = _nary(floor_p)
ceil = _nary(ceil_p)
exp = _nary(exp_p)
exp2 = _nary(exp2_p)
log = _nary(log_p)
log1p = _nary(log1p_p)
expm1 = _nary(expm1_p)
sqrt = _nary(sqrt_p)
rsqrt = _nary(rsqrt_p)
cbrt = _nary(cbrt_p)
sin = _nary(sin_p)
cos = _nary(cos_p)
tan = _nary(tan_p)
tanh = _nary(tanh_p)
logistic = _nary(logistic_p)
erf = _nary(erf_p)
erfc = _nary(erfc_p)
erf_inv = _nary(erf_inv_p)
ndtri = _nary(ndtri_p)
asin = _nary(asin_p)
acos = _nary(acos_p)
atan = _nary(atan_p)
sinh = _nary(sinh_p)
cosh = _nary(cosh_p)
asinh = _nary(asinh_p)
acosh = _nary(acosh_p)
atanh = _nary(atanh_p)
lgamma = _nary(lgamma_p)
digamma = _nary(digamma_p)
bessel_i0e = _nary(bessel_i0e_p)
bessel_i1e = _nary(bessel_i1e_p)
bitwise_not = _nary(not_p)
square = _nary(square_p)
is_finite = _nary(is_finite_p)
population_count = _nary(population_count_p)
clz = _nary(clz_p)

add = _nary(add_p)
sub = _nary(sub_p)
mul = _nary(mul_p)
div = _nary(div_p)
rem = _nary(rem_p)
max = _nary(max_p)
min = _nary(min_p)
pow = _nary(pow_p)
# (internal: the samplers' fused multiply-add, operands of one float32/float64 dtype and shape)
fma = _nary(fma_p)
# (internal: the samplers' C-library pow, see ``_libm_twin``)
pow_libm = _nary(pow_libm_p)
atan2 = _nary(atan2_p)
nextafter = _nary(nextafter_p)
bitwise_and = _nary(and_p)
bitwise_or = _nary(or_p)
bitwise_xor = _nary(xor_p)
shift_left = _nary(shift_left_p)
shift_right_logical = _nary(shift_right_logical_p)
igamma = _nary(igamma_p)
igammac = _nary(igammac_p)
igamma_grad_a = _nary(igamma_grad_a_p)
random_gamma_grad = _nary(random_gamma_grad_p)
polygamma = _nary(polygamma_p)
zeta = _nary(zeta_p)
igamma.__doc__ = ("The regularized lower incomplete gamma function P(a, x) (the ``igamma`` primitive). Mirrors "
                  "``jax.lax.igamma``. Float operands of one dtype; NaN outside a >= 0, x >= 0.")
igammac.__doc__ = ("The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (``igammac``). "
                   "Mirrors ``jax.lax.igammac``.")
igamma_grad_a.__doc__ = "dP(a, x)/da (``igamma_grad_a``). Mirrors ``jax.lax.igamma_grad_a``; not differentiable."
random_gamma_grad.__doc__ = ("The derivative in ``a`` of a standard Gamma(a) sample ``x`` at fixed quantile, "
                             "-(dP/da)/(dP/dx) (``random_gamma_grad``). Mirrors ``jax.lax.random_gamma_grad``.")
polygamma.__doc__ = ("The polygamma function psi^(m)(x) for integer-valued float ``m >= 0`` (NaN otherwise). "
                     "Mirrors ``jax.lax.polygamma``; differentiable in ``x`` only (ValueError for ``m``).")
zeta.__doc__ = ("The Hurwitz zeta function zeta(x, q) = sum_k (k + q)^-x (``zeta``). Mirrors ``jax.lax.zeta``; "
                "not differentiable (as in JAX).")
shift_right_arithmetic = _nary(shift_right_arithmetic_p)
eq = _nary(eq_p)
ne = _nary(ne_p)
lt = _nary(lt_p)
le = _nary(le_p)
gt = _nary(gt_p)
ge = _nary(ge_p)
_clamp = _nary(clamp_p)
_complex = _nary(complex_p)


def real(x):
    """The real part of complex ``x`` (float32 for complex64, float64 for complex128). Raises ``TypeError`` for
    a real ``x``. Mirrors ``jax.lax.real``."""
    return real_p.bind(_as_operand(x))


def imag(x):
    """The imaginary part of complex ``x`` (float32 for complex64, float64 for complex128). Raises
    ``TypeError`` for a real ``x``. Mirrors ``jax.lax.imag``."""
    return imag_p.bind(_as_operand(x))


def complex(x, y):
    """``x + 1j * y`` elementwise for float32 (→ complex64) or float64 (→ complex128) ``x``, ``y`` of one dtype;
    shapes equal or rank 0. Mirrors ``jax.lax.complex``."""
    return _complex(x, y)


def conj(x):
    """The complex conjugate of ``x`` (a real float ``x`` gives its complex dtype). Mirrors ``jax.lax.conj``."""
    x = _as_operand(x)
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


def _strict_dtypes(name, args):
    """JAX's lax check for a call made by a user (see ``_nary``): Python scalars have their default dtype, and
    all operands one dtype."""
    if _ours(sys._getframe(2).f_globals):
        return
    dts = [dtypes.dtype(a, canonicalize=True) if isinstance(a, _PY) else get_aval(_as_operand(a)).dtype
           for a in args]
    if any(d != dts[0] for d in dts[1:]):
        raise _dtype_mismatch(name, dts)


def clamp(min, x, max):
    """``min(max(x, min), max)`` elementwise; ``min``/``max`` scalar or shaped like ``x``. Mirrors
    ``jax.lax.clamp``. Raises TypeError, as JAX's, when the three dtypes differ (a Python scalar has its
    default dtype)."""
    _strict_dtypes("clamp", (min, x, max))
    return _clamp(min, x, max)


class RoundingMethod:
    """``lax.round``'s rounding modes (``jax.lax.RoundingMethod``)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=0):
    """Rounds to the nearest integer: half away from zero (``rounding_method=0``) or half to even (1).
    Mirrors ``jax.lax.round``."""
    x = _as_operand(x)
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    """``x ** y`` for a static Python int ``y``. Mirrors ``jax.lax.integer_pow``."""
    return integer_pow_p.bind(_as_operand(x), y=int(y))


def select_n(which, *cases):
    """``cases[which]`` elementwise; ``which`` is bool (two cases) or int32. Mirrors ``jax.lax.select_n``."""
    dt = None
    for c in cases:
        if not isinstance(c, _PY):
            dt = get_aval(_as_operand(c)).dtype
            break
    cases = [_as_operand(_coerce(c, dt) if dt is not None else c) for c in cases]
    which = _as_operand(which)
    shape = broadcast_shapes_of("select_n", [get_aval(c) for c in cases])
    cases = _broadcast_to_shape(cases, shape)
    return select_n_p.bind(which, *cases)


def _broadcast_to_shape(args, shape):
    out = []
    for a in args:
        av = get_aval(a)
        if av.shape != shape:
            a = _st.broadcast_in_dim(a, shape, ())
        out.append(a)
    return out


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false``. Mirrors ``jax.lax.select``; raises TypeError, as JAX's,
    when the two cases' dtypes differ (a Python scalar has its default dtype)."""
    _strict_dtypes("select", (on_false, on_true))
    return select_n(pred, on_false, on_true)


def convert_element_type(operand, new_dtype):
    """``operand`` converted to ``new_dtype`` (floats → ints truncate toward zero and saturate, NaN → 0).
    Mirrors ``jax.lax.convert_element_type``."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if new_dtype.kind != "c" and get_aval(_as_operand(operand)).dtype.kind == "c":
        warnings.warn("Casting complex values to real discards the imaginary part", np.exceptions.ComplexWarning,
                      stacklevel=2)
        operand = real(operand)
    return _convert(operand, new_dtype, False)


def strip_weak(v):
    """``v`` without a weak type: one ``convert_element_type[weak_type=False]`` to its own dtype when it is
    weak, else ``v`` itself (JAX's reductions make their operand strong; written-back refs are never weak)."""
    a = get_aval(v)
    if not a.weak_type:
        return v
    return convert_element_type_p.bind(v, new_dtype=a.dtype, weak_type=False, sharding=None)


_DAZ_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _convert(x, new_dtype, weak_type):
    if isinstance(x, (_PY, np.generic, TypedScalar)) or isinstance(x, np.ndarray) and x.ndim == 0:
        return typed_scalar(x, new_dtype, weak_type)
    if isinstance(x, np.ndarray):
        if np.dtype(new_dtype) == np.bool_ and x.dtype in _DAZ_DTYPES:
            # JAX converts an array on the device, whose denormals-are-zero reads a subnormal as zero (a
            # complex one by its real part, as JAX's)
            r = x.real
            return np.isnan(r) | (np.abs(r) >= np.finfo(r.dtype).tiny)
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(new_dtype)
    av = get_aval(x)
    if av.dtype == new_dtype and av.weak_type == weak_type:
        return x
    if (type(x) is Array and av.shape == () and isinstance(core._state.trace, _pe.DynamicJaxprTrace)
            and not _pe.is_user_const(x)):
        # a scalar made while staging is a literal there, converted in place as JAX folds it (``mul a 2.0:f32[]``
        # for a bfloat16 ``jnp.array(2.0)``)
        with np.errstate(over="ignore", invalid="ignore"):
            return _from_host(typed_scalar(x._value_scalar(), new_dtype, weak_type))
    return convert_element_type_p.bind(x, new_dtype=np.dtype(new_dtype), weak_type=bool(weak_type),
                                       sharding=None)


def bitcast_convert_type(operand, new_dtype):
    """Reinterprets the bits of ``operand`` as ``new_dtype`` (same width). Mirrors
    ``jax.lax.bitcast_convert_type``."""
    return bitcast_convert_type_p.bind(_as_operand(operand), new_dtype=dtypes.canonicalize_dtype(new_dtype))


def stop_gradient(x):
    """``x`` with no gradient flowing through. Mirrors ``jax.lax.stop_gradient``."""
    return tree_map(_stop_gradient, x)


def div_floor_int(x, y):
    return div(x, y)


# ---- batching rules ----
# (vmap; see cranax.interpreters.batching). Unary primitives pass the batch axis through; n-ary ones bring
# batched and unbatched operands to one batched shape (concrete scalars stay literals).

for _p in (neg_p, abs_p, sign_p, floor_p, ceil_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, sqrt_p, rsqrt_p,
           cbrt_p, sin_p, cos_p, tan_p, tanh_p, logistic_p, erf_p, erfc_p, erf_inv_p, ndtri_p, asin_p, acos_p, atan_p, sinh_p,
           cosh_p, asinh_p, acosh_p, atanh_p, lgamma_p, digamma_p, bessel_i0e_p, bessel_i1e_p, not_p, square_p, is_finite_p,
           population_count_p, clz_p, round_p, integer_pow_p, convert_element_type_p, bitcast_convert_type_p,
           real_p, imag_p, conj_p):
    _batching.defvectorized(_p)
for _p in (add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, pow_p, pow_libm_p, atan2_p, nextafter_p, and_p, or_p, xor_p,
           shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p,
           igamma_p, igammac_p, igamma_grad_a_p, random_gamma_grad_p, polygamma_p, zeta_p, complex_p):
    _batching.defbroadcasting(_p)
del _p


def _select_n_batch(vals, dims):
    # The predicate may stay a scalar when unbatched; the cases set the shape and must all have it.
    shape = _batching._per_example_shape(vals[1:], dims[1:])
    ops, bd = _batching.batch_elementwise(vals, dims, shape, scalar_ok=(0,), literals=False)
    return select_n_p.bind(*ops), bd


def _clamp_batch(vals, dims):
    # Unbatched bounds may stay scalars; the operand sets the shape.
    shape = _batching._per_example_shape(vals[1:2], dims[1:2])
    ops, bd = _batching.batch_elementwise(vals, dims, shape, scalar_ok=(0, 2))
    return clamp_p.bind(*ops), bd


_batching.batching_rules[select_n_p] = _select_n_batch
_batching.batching_rules[clamp_p] = _clamp_batch


def _fma_batch(vals, dims):
    shape = _batching._per_example_shape(vals, dims)
    ops, bd = _batching.batch_elementwise(vals, dims, shape, literals=False)
    return fma_p.bind(*ops), bd


_batching.batching_rules[fma_p] = _fma_batch


# ---- autodiff rules (jvp, transpose) ----
# Written with the lax wrappers (this module's and the sibling families'); rules run on the parent trace
# and follow JAX's formulas (so ``make_jaxpr(grad(f))`` prints JAX's equations).



def _c(x, v):
    """The Python constant ``v`` as a weakly typed literal of ``x``'s dtype."""
    return typed_scalar(v, get_aval(x).dtype, True)


def _zeros(x):   # strong (JAX's rules use np.zeros((), dtype) constants), whatever x's weak type
    return _st.full_like(x, 0, get_aval(_as_operand(x)).dtype)


def _ones(x):
    return _st.full_like(x, 1, get_aval(_as_operand(x)).dtype)


_ad.deflinear(neg_p, lambda ct, x: [_ad.Zero(x.aval) if _ad.is_zero(ct) else neg(ct)])


def _abs_jvp(g, ans, x):
    if get_aval(x).dtype.kind != "c":
        return select(ge(x, _c(x, 0)), g, neg(g))
    # d|z| = Re(conj(z) dz) / |z|, taken as 0 at z = 0 (|z| replaced by 1 there, as JAX does)
    a = convert_element_type(ans, get_aval(x).dtype)
    safe = select(eq(a, _c(a, 0)), _ones(a), a)
    return real(mul(g, div(conj(x), safe)))


_ad.defjvp2(abs_p, _abs_jvp)
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p, population_count_p, clz_p, nextafter_p,
           and_p, or_p, xor_p, shift_left_p, shift_right_logical_p, shift_right_arithmetic_p,
           eq_p, ne_p, lt_p, le_p, gt_p, ge_p, bitcast_convert_type_p):
    _ad.defjvp_zero(_p)
del _p

_ad.defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
_ad.defjvp2(exp2_p, lambda g, ans, x: mul(g, mul(_c(x, np.log(2.0)), ans)))
_ad.defjvp(log_p, lambda g, x: div(g, x))
_ad.defjvp(log1p_p, lambda g, x: div(g, add(x, _c(x, 1))))
_ad.defjvp2(expm1_p, lambda g, ans, x: mul(g, add(ans, _c(x, 1))))
_ad.defjvp2(sqrt_p, lambda g, ans, x: mul(g, div(_c(x, 0.5), ans)))
_ad.defjvp2(rsqrt_p, lambda g, ans, x: mul(g, mul(_c(x, -0.5), div(ans, x))))
_ad.defjvp2(cbrt_p, lambda g, ans, x: mul(g, mul(_c(x, 1 / 3), integer_pow(ans, -2))))
_ad.defjvp(sin_p, lambda g, x: mul(g, cos(x)))
_ad.defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))
_ad.defjvp2(tan_p, lambda g, ans, x: mul(g, add(_c(x, 1), integer_pow(ans, 2))))
_ad.defjvp2(tanh_p, lambda g, ans, x: mul(add(g, mul(g, ans)), sub(_c(x, 1), ans)))
_ad.defjvp2(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(_c(x, 1), ans))))
# (``square``, as JAX's rules print it)
_ad.defjvp(erf_p, lambda g, x: mul(_c(x, 2 / np.sqrt(np.pi)),
                                   mul(g, exp(neg(square(x))))))
_ad.defjvp(erfc_p, lambda g, x: mul(_c(x, -2 / np.sqrt(np.pi)),
                                    mul(g, exp(neg(square(x))))))
_ad.defjvp2(erf_inv_p, lambda g, ans, x: mul(g, mul(_c(x, np.sqrt(np.pi) / 2),
                                                    exp(square(ans)))))
# d/dp ndtri(p) = 1 / φ(ndtri(p)) = √(2π)·exp(x²/2); 0 at p = 0 and 1 (±inf), where JAX's composition
# differentiates a constant branch.
_ad.defjvp2(ndtri_p, lambda g, ans, x: mul(g, select_n(
    eq(abs(ans), _c(x, np.inf)),
    mul(_c(x, np.sqrt(2 * np.pi)), exp(mul(_c(x, 0.5), integer_pow(ans, 2)))), _c(x, 0.0))))
_ad.defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_c(x, 1), integer_pow(x, 2)))))
_ad.defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(_c(x, 1), integer_pow(x, 2))))))
_ad.defjvp(atan_p, lambda g, x: div(g, add(_c(x, 1), integer_pow(x, 2))))
_ad.defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
_ad.defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
_ad.defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(integer_pow(x, 2), _c(x, 1)))))
_ad.defjvp(acosh_p, lambda g, x: mul(g, rsqrt(mul(sub(x, _c(x, 1)),
                                                  add(x, _c(x, 1))))))
_ad.defjvp(atanh_p, lambda g, x: mul(div(_c(x, 1), add(_c(x, 1), x)),
                                     div(g, sub(_c(x, 1), x))))
_ad.defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))


_ad.defjvp(digamma_p, lambda g, x: mul(g, polygamma(_c(x, 1), x)))


# The special functions' jvps (JAX's rules; zeta and igamma_grad_a have none in JAX).
def _igamma_dx(a, x):
    return exp(sub(sub(mul(sub(a, _c(a, 1)), log(x)), x), lgamma(a)))


def _polygamma_dm(g, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


_ad.defjvp(igamma_p, lambda g, a, x: mul(g, igamma_grad_a(a, x)), lambda g, a, x: mul(g, _igamma_dx(a, x)))
_ad.defjvp(igammac_p, lambda g, a, x: neg(mul(g, igamma_grad_a(a, x))),
           lambda g, a, x: neg(mul(g, _igamma_dx(a, x))))
_ad.defjvp(polygamma_p, _polygamma_dm, lambda g, m, x: mul(g, polygamma(add(m, _c(m, 1)), x)))


# random_gamma_grad: JAX composes it from lax ops, so forward mode differentiates through it (reverse mode
# fails there on its while loop). Here, from r = -P_a / p (P the regularized lower incomplete gamma, p = P_x
# = x^(a-1) e^-x / Gamma(a)): dr/dx = -(log x - digamma(a)) - r ((a - 1) / x - 1), and dr/da = -P_aa / p
# - r (log x - digamma(a)) with P_aa a central difference of igamma_grad_a. Computed in float64 (the
# difference at a step of 6e-6 * a: ~1e-10 relative), rounded once to the operands' dtype.
def _rgg_parts(ans, a, x):
    f64 = np.dtype(np.float64)
    dt = get_aval(ans).dtype
    a, x, r = (convert_element_type(v, f64) for v in (a, x, ans))
    lx_psi = sub(log(x), digamma(a))
    return dt, a, x, r, lx_psi


def _rgg_da(g, ans, a, x):
    dt, a, x, r, lx_psi = _rgg_parts(ans, a, x)
    log_p = sub(sub(mul(sub(a, _c(a, 1)), log(x)), x), lgamma(a))
    h = mul(a, _c(a, 6e-6))
    p_aa = div(sub(igamma_grad_a(add(a, h), x), igamma_grad_a(sub(a, h), x)), add(h, h))
    d = neg(add(mul(p_aa, exp(neg(log_p))), mul(r, lx_psi)))
    return mul(g, convert_element_type(d, dt))


def _rgg_dx(g, ans, a, x):
    dt, a, x, r, lx_psi = _rgg_parts(ans, a, x)
    d = neg(add(lx_psi, mul(r, sub(div(sub(a, _c(a, 1)), x), _c(x, 1)))))
    return mul(g, convert_element_type(d, dt))


_ad.defjvp2(random_gamma_grad_p, _rgg_da, _rgg_dx)
_ad.defjvp2(bessel_i0e_p, lambda g, ans, x: mul(g, sub(bessel_i1e(x), mul(sign(x), ans))))


def _bessel_i1e_jvp(g, ans, x):
    # i1e' = i0e - i1e (sign(x) + 1/x), whose limit at 0 is 1/2 (JAX's formula: x clamped away from 0)
    eps = float(np.finfo(get_aval(x).dtype).eps)
    not_tiny = gt(abs(x), _c(x, eps))
    safe_x = select(not_tiny, x, _st.full_like(x, eps))
    d = sub(bessel_i0e(safe_x), mul(ans, add(sign(safe_x), div(_c(x, 1), safe_x))))
    return mul(g, select(not_tiny, d, _st.full_like(x, 0.5)))


_ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
_ad.defjvp(square_p, lambda g, x: mul(g, mul(_c(x, 2), x)))


def _integer_pow_jvp(g, x, *, y):
    # JAX's special cases: x ** 1 passes the tangent through, x ** 2 multiplies by 2 * x (no integer_pow[y=1])
    if y == 0:
        return _ad.Zero(get_aval(x))
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_c(x, 2), x))
    return mul(g, mul(_c(x, y), integer_pow(x, y - 1)))


_ad.defjvp(integer_pow_p, _integer_pow_jvp)


# add / sub: linear; a literal rank-0 operand never carries a tangent, but the cotangent of a rank-0 linear
# operand that was broadcast is summed back.
def _add_jvp(primals, tangents):
    ans = add_p.bind(*primals)
    tx, ty = tangents
    if _ad.is_zero(tx) and _ad.is_zero(ty):
        return ans, _ad.Zero(get_aval(ans))
    # two tangents add with ``add`` itself, as JAX's rule (its jaxprs print ``add``, not ``add_any``)
    return ans, _ad._fit(add(tx, ty) if not (_ad.is_zero(tx) or _ad.is_zero(ty))
                         else (ty if _ad.is_zero(tx) else tx), ans)


def _add_transpose(ct, x, y):
    if _ad.is_zero(ct):
        return [None, None]
    return [_ad.unbroadcast(x.aval, ct) if _ad.is_undefined(x) else None,
            _ad.unbroadcast(y.aval, ct) if _ad.is_undefined(y) else None]


def _sub_jvp(primals, tangents):
    ans = sub_p.bind(*primals)
    tx, ty = tangents
    if _ad.is_zero(ty):
        return ans, (_ad.Zero(get_aval(ans)) if _ad.is_zero(tx) else _ad._fit(tx, ans))
    if _ad.is_zero(tx):
        return ans, _ad._fit(neg(ty), ans)
    return ans, _ad._fit(sub(tx, ty), ans)


def _sub_transpose(ct, x, y):
    if _ad.is_zero(ct):
        return [None, None]
    return [_ad.unbroadcast(x.aval, ct) if _ad.is_undefined(x) else None,
            _ad.unbroadcast(y.aval, neg(ct)) if _ad.is_undefined(y) else None]


_ad.jvp_rules[add_p] = _add_jvp
_ad.transpose_rules[add_p] = _add_transpose

_ad.jvp_rules[sub_p] = _sub_jvp
_ad.transpose_rules[sub_p] = _sub_transpose

_ad.defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))


def _mul_transpose(ct, x, y):
    if _ad.is_undefined(x) and _ad.is_undefined(y):
        raise TypeError("mul is not linear in both operands at once (a non-linear program was transposed)")
    if _ad.is_zero(ct):
        return [None, None]
    if _ad.is_undefined(x):
        return [_ad.unbroadcast(x.aval, mul(ct, y)), None]
    return [None, _ad.unbroadcast(y.aval, mul(x, ct))]


_ad.transpose_rules[mul_p] = _mul_transpose

_ad.defjvp(div_p, lambda g, x, y: div(g, y),
           lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))


def _div_transpose(ct, x, y):
    if _ad.is_undefined(y):
        raise TypeError("div is linear only in its numerator (a non-linear program was transposed)")
    if _ad.is_zero(ct):
        return [None, None]
    return [_ad.unbroadcast(x.aval, div(ct, y)), None]


_ad.transpose_rules[div_p] = _div_transpose

_ad.defjvp(rem_p, lambda g, x, y: g,
           lambda g, x, y: mul(neg(g), mul(sign(div(x, y)),
                                           floor(abs(div(x, y))))))


def _balanced_eq(x, z, y):
    """1 where x == z (0.5 where y == z too), else 0: the share of a tied max/min."""
    return select(eq(x, z), select(eq(y, z), _st.full_like(z, 0.5), _st.full_like(z, 1)), _st.full_like(z, 0))


_ad.defjvp2(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
            lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
_ad.defjvp2(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
            lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


def _like_ans(v, ans):
    """An operand whose size-1 dimensions the primitive broadcast, broadcast to the result's shape (so the
    ``select`` of a derivative rule sees one shape); rank-0 operands and full ones as they are."""
    av, aa = get_aval(v), get_aval(ans)
    if av.ndim and av.shape != aa.shape:
        return _st.broadcast_in_dim(v, aa.shape, tuple(range(av.ndim)))
    return v


def _pow_jvp_lhs(g, ans, x, y):
    # as JAX's: both operands strong in their common dtype (a weak base gets its convert_element_type),
    # then y * x ** (y - 1) (pow's operands are floats here, so no case for y == 0)
    y_int = dtypes.issubdtype(get_aval(y).dtype, np.integer)
    dt = dtypes.result_type(get_aval(x).dtype, get_aval(y).dtype)
    x, y = _like_ans(convert_element_type(x, dt), ans), _like_ans(convert_element_type(y, dt), ans)
    if not y_int:
        return mul(g, mul(y, pow(x, sub(y, _ones(y)))))
    # an integer exponent: both at the result's shape, and 0 where y == 0 (x ** -1 would be inf at x == 0)
    shape = get_aval(ans).shape
    x, y = (v if get_aval(v).shape == shape else _st.broadcast_in_dim(v, shape, ()) for v in (x, y))
    is0 = eq(y, _c(y, 0))
    zeros = _zeros(y)
    safe_y = select(eq(y, _c(y, 0)), _ones(y), y)
    return mul(g, select(is0, zeros, mul(safe_y, pow(x, sub(y, _ones(y))))))


def _pow_jvp_rhs(g, ans, x, y):
    x = _like_ans(x, ans)
    safe_x = select(eq(x, _c(x, 0)), _ones(x), x)
    return convert_element_type(mul(g, mul(log(safe_x), ans)), get_aval(y).dtype)


_ad.defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
_ad.defjvp2(pow_libm_p, _pow_jvp_lhs, _pow_jvp_rhs)


def _atan2_den(x, y):
    return add(integer_pow(x, 2), integer_pow(y, 2))


_ad.defjvp(atan2_p, lambda g, x, y: mul(g, div(y, _atan2_den(x, y))),
           lambda g, x, y: mul(g, div(neg(x), _atan2_den(x, y))))


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n_p.bind(which, *cases)
    cts = tangents[1:]
    if all(_ad.is_zero(t) for t in cts):
        return ans, _ad.Zero(get_aval(ans))
    return ans, select_n_p.bind(which, *[_ad.instantiate_zeros(t) for t in cts])


def _select_n_transpose(ct, which, *cases):
    if _ad.is_undefined(which):
        raise TypeError("select_n is not linear in its predicate")
    out = [None]
    for i, c in enumerate(cases):
        if not _ad.is_undefined(c):
            out.append(None)
        elif _ad.is_zero(ct):
            out.append(_ad.Zero(c.aval))
        else:
            z = _zeros(ct)
            out.append(select_n_p.bind(which, *[ct if j == i else z for j in range(len(cases))]))
    return out


_ad.jvp_rules[select_n_p] = _select_n_jvp
_ad.transpose_rules[select_n_p] = _select_n_transpose


def _clamp_jvp_lo(g, lo, x, hi):
    return select(bitwise_and(gt(lo, x), lt(lo, hi)), _ad._fit(g, x), _zeros(x))


def _clamp_jvp_x(g, lo, x, hi):
    return select(bitwise_and(gt(x, lo), lt(x, hi)), g, _zeros(x))


def _clamp_jvp_hi(g, lo, x, hi):
    return select(lt(hi, x), _ad._fit(g, x), _zeros(x))


_ad.defjvp(clamp_p, _clamp_jvp_lo, _clamp_jvp_x, _clamp_jvp_hi)
# d(a b + c) = da b + a db + dc
_ad.defjvp(fma_p, lambda g, a, b, c: mul(g, b), lambda g, a, b, c: mul(a, g), lambda g, a, b, c: g)


def _convert_jvp(primals, tangents, new_dtype, weak_type=False, sharding=None):
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    if _ad.is_zero(t) or not _ad.is_float(new_dtype) or not _ad.is_float(get_aval(x).dtype):
        return ans, _ad.Zero(get_aval(ans))
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)


def _convert_transpose(ct, x, new_dtype, weak_type=False, sharding=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    ca = get_aval(ct)
    if ca.dtype == x.aval.dtype and ca.weak_type == x.aval.weak_type and ca.shape == x.aval.shape:
        return [ct]   # an identity convert: JAX's staging drops it (convert_element_type's forwarding rule)
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type, sharding=None)]


_ad.jvp_rules[convert_element_type_p] = _convert_jvp
_ad.transpose_rules[convert_element_type_p] = _convert_transpose


# stop_gradient: the value unchanged, no tangent. Eagerly the identity; lowered by inlining the identity.
def _stop_gradient_inline(eqn):
    v = Var(eqn.invars[0].aval)
    return Jaxpr([], [v], [v], []), eqn.invars


stop_gradient_p = standard_primitive("stop_gradient", lambda x: x, elementwise=True)
stop_gradient_p.impl = lambda x: x
stop_gradient_p.inline_jaxpr = _stop_gradient_inline
_ad.defjvp_zero(stop_gradient_p)


def _stop_gradient(x):
    """``lax.stop_gradient`` of one leaf (float arrays only; others pass through, as in JAX)."""
    if not isinstance(x, Tracer):
        return x
    if not _ad.is_float(get_aval(x).dtype):
        return x
    return stop_gradient_p.bind(x)


# complex parts: all linear (JAX's transposes: real ↦ complex(t, 0), imag ↦ complex(0, -t), complex(x, y) ↦
# (real t, -imag t)... as the transpose of the real-linear map, not its conjugate).
def _real_transpose(ct, x):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [complex(ct, _zeros(ct))]


def _imag_transpose(ct, x):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    return [complex(_zeros(ct), neg(ct))]


def _complex_transpose(ct, x, y):
    if _ad.is_zero(ct):
        return [None, None]
    return [_ad.unbroadcast(x.aval, real(ct)) if _ad.is_undefined(x) else None,
            _ad.unbroadcast(y.aval, neg(imag(ct))) if _ad.is_undefined(y) else None]


def _conj_transpose(ct, x, input_dtype=None):
    if _ad.is_zero(ct):
        return [_ad.Zero(x.aval)]
    if x.aval.dtype.kind == "c":
        return [conj(ct)]
    return [real(ct)]


_ad.deflinear(real_p, _real_transpose)
_ad.deflinear(imag_p, _imag_transpose)
_ad.deflinear(conj_p, _conj_transpose)
_ad.defjvp(complex_p, lambda g, x, y: complex(g, _zeros(g)), lambda g, x, y: complex(_zeros(g), g))
_ad.transpose_rules[complex_p] = _complex_transpose


# ----------------------------------------------------------------------------------------------
# nextafter on 16- and 8-bit floats: the core computes it for float32/float64 only, so it is lowered as
# XLA's NextAfter on the bit patterns (sign-magnitude): NaN if either is NaN, y if x == y, the smallest
# subnormal with y's sign if x is zero, else the pattern of |x| one up (moving away from zero) or down.
# ----------------------------------------------------------------------------------------------

_nextafter_inline_cache = {}


def _nextafter_bits(x, y):
    dt = get_aval(x).dtype
    u = np.dtype(f"uint{8 * np.dtype(dt).itemsize}")
    one, sign = np.array(1, u)[()], np.array(1 << (8 * u.itemsize - 1), u)[()]
    bx, by = bitcast_convert_type(x, u), bitcast_convert_type(y, u)
    zero = np.array(0, dt)[()]
    from_zero = bitwise_or(bitwise_and(by, sign), one)
    away = eq(lt(x, y), gt(x, zero))          # |x| grows when moving toward y
    step = select_n(away, sub(bx, one), add(bx, one))
    out = select_n(eq(x, zero), step, from_zero)
    out = select_n(eq(x, y), out, by)
    res = bitcast_convert_type(out, dt)
    nan = bitwise_or(ne(x, x), ne(y, y))
    return select_n(nan, res, add(x, y))


def _nextafter_inline(eqn):
    x, y = eqn.invars
    if np.dtype(x.aval.dtype).itemsize > 2:
        return None                             # the core's own nextafter
    key = (x.aval, y.aval)
    jaxpr = _nextafter_inline_cache.get(key)
    if jaxpr is None:
        from ..interpreters.partial_eval import trace_to_jaxpr   # partial_eval imports this module's wrappers
        closed = trace_to_jaxpr(lambda a, b: [_nextafter_bits(a, b)], [x.aval, y.aval])
        jaxpr = _nextafter_inline_cache[key] = closed.jaxpr
    return jaxpr, eqn.invars


nextafter_p.inline_jaxpr = staticmethod(_nextafter_inline)
