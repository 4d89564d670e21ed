"""Elementwise primitives: unary math, binary arithmetic/logic, comparisons, select_n, clamp, conversions.

Operands of a binary primitive share a dtype and a shape; a rank-0 operand may stand for a scalar that
broadcasts (jaxprs print such literals as ``1.0:f32[]``). The result is weakly typed only when every
operand is.
"""
import numpy as np

from .. import dtypes
from ..core import ShapedArray
from ..interpreters import lowering
from . import standard_primitive

_FLOAT = "float"
_NUM = "num"
_INT = "int"
_BOOL_INT = "bool_int"
_ANY = "any"

_KIND_TEXT = {
    _FLOAT: "subtypes of floating",
    _NUM: "subtypes of integer or floating",
    _INT: "subtypes of integer",
    _BOOL_INT: "bool or subtypes of integer",
    _ANY: "any",
}


def _accepts(kind, dt):
    if kind == _ANY:
        return True
    if kind == _FLOAT:
        return dtypes.issubdtype(dt, np.floating)
    if kind == _INT:
        return dtypes.issubdtype(dt, np.integer)
    if kind == _BOOL_INT:
        return dt == np.bool_ or dtypes.issubdtype(dt, np.integer)
    return dt != np.bool_


def _check_dtype(name, kind, dt):
    if not _accepts(kind, dt):
        raise TypeError(f"{name} does not accept dtype {np.dtype(dt).name}. "
                        f"Accepted dtypes are {_KIND_TEXT[kind]}.")


def _unary_rule(name, kind, out_dtype=None):
    def abstract_eval(x):
        _check_dtype(name, kind, x.dtype)
        if out_dtype is not None:
            return ShapedArray(x.shape, out_dtype, False)
        return x
    return abstract_eval


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


def _same_dtypes(name, avals):
    dt = avals[0].dtype
    for a in avals[1:]:
        if a.dtype != dt:
            raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                            f"{', '.join(np.dtype(b.dtype).name for b in avals)}.")
    return dt


def _binary_rule(name, kind, out_dtype=None):
    def abstract_eval(x, y):
        dt = _same_dtypes(name, (x, y))
        _check_dtype(name, kind, dt)
        shape = broadcast_shapes_of(name, (x, y))
        if out_dtype is not None:
            return ShapedArray(shape, out_dtype, False)
        return ShapedArray(shape, dt, x.weak_type and y.weak_type)
    return abstract_eval


def unop(name, kind, out_dtype=None):
    return standard_primitive(name, _unary_rule(name, kind, out_dtype), elementwise=True)


def binop(name, kind, out_dtype=None):
    return standard_primitive(name, _binary_rule(name, kind, out_dtype), elementwise=True)


# Unary
neg_p = unop("neg", _NUM)
abs_p = unop("abs", _NUM)
sign_p = unop("sign", _NUM)
floor_p = unop("floor", _FLOAT)
ceil_p = unop("ceil", _FLOAT)
exp_p = unop("exp", _FLOAT)
exp2_p = unop("exp2", _FLOAT)
log_p = unop("log", _FLOAT)
log1p_p = unop("log1p", _FLOAT)
expm1_p = unop("expm1", _FLOAT)
sqrt_p = unop("sqrt", _FLOAT)
rsqrt_p = unop("rsqrt", _FLOAT)
cbrt_p = unop("cbrt", _FLOAT)
sin_p = unop("sin", _FLOAT)
cos_p = unop("cos", _FLOAT)
tan_p = unop("tan", _FLOAT)
tanh_p = unop("tanh", _FLOAT)
logistic_p = unop("logistic", _FLOAT)
erf_p = unop("erf", _FLOAT)
erf_inv_p = unop("erf_inv", _FLOAT)
asin_p = unop("asin", _FLOAT)
acos_p = unop("acos", _FLOAT)
atan_p = unop("atan", _FLOAT)
sinh_p = unop("sinh", _FLOAT)
cosh_p = unop("cosh", _FLOAT)
asinh_p = unop("asinh", _FLOAT)
acosh_p = unop("acosh", _FLOAT)
atanh_p = unop("atanh", _FLOAT)
lgamma_p = unop("lgamma", _FLOAT)
digamma_p = unop("digamma", _FLOAT)
not_p = unop("not", _BOOL_INT)
square_p = unop("square", _NUM)
is_finite_p = unop("is_finite", _FLOAT, out_dtype=np.dtype(bool))
population_count_p = unop("population_count", _INT)

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
pow_p = binop("pow", _FLOAT)
atan2_p = binop("atan2", _FLOAT)
nextafter_p = binop("nextafter", _FLOAT)
and_p = binop("and", _BOOL_INT)
or_p = binop("or", _BOOL_INT)
xor_p = binop("xor", _BOOL_INT)
shift_left_p = binop("shift_left", _INT)
shift_right_logical_p = binop("shift_right_logical", _INT)
shift_right_arithmetic_p = binop("shift_right_arithmetic", _INT)

# Comparisons
_BOOL = np.dtype(bool)
eq_p = binop("eq", _ANY, _BOOL)
ne_p = binop("ne", _ANY, _BOOL)
lt_p = binop("lt", _ANY, _BOOL)
le_p = binop("le", _ANY, _BOOL)
gt_p = binop("gt", _ANY, _BOOL)
ge_p = binop("ge", _ANY, _BOOL)


def _integer_pow_abstract(x, y):
    _check_dtype("integer_pow", _NUM, x.dtype)
    if y < 0 and not dtypes.issubdtype(x.dtype, np.floating):
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow(x, {y})")
    return x


integer_pow_p = standard_primitive("integer_pow", _integer_pow_abstract,
                                   wire=lambda eqn: {"y": int(eqn.params["y"])}, elementwise=True)


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
        raise TypeError(f"select_n `which` must be scalar or have the same shape as cases, got `which` "
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

del lowering

# ---- batching rules ----
# (vmap; see cranax.interpreters.batching). Unary primitives pass the batch axis through; n-ary ones bring
# batched and unbatched operands to one batched shape (concrete scalars stay literals).
from ..interpreters import batching as _batching  # noqa: E402

for _p in (neg_p, abs_p, sign_p, floor_p, ceil_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, sqrt_p, rsqrt_p,
           cbrt_p, sin_p, cos_p, tan_p, tanh_p, logistic_p, erf_p, erf_inv_p, asin_p, acos_p, atan_p, sinh_p,
           cosh_p, asinh_p, acosh_p, atanh_p, lgamma_p, digamma_p, not_p, square_p, is_finite_p,
           population_count_p, round_p, integer_pow_p, convert_element_type_p, bitcast_convert_type_p):
    _batching.defvectorized(_p)
for _p in (add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, pow_p, atan2_p, nextafter_p, and_p, or_p, xor_p,
           shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    _batching.defbroadcasting(_p)
del _p


def _select_n_batch(vals, dims):
    # The predicate may stay a scalar when unbatched; the cases set the shape.
    shape = _batching._per_example_shape(vals[1:], dims[1:])
    ops, bd = _batching.batch_elementwise(vals, dims, shape, scalar_ok=(0,))
    return select_n_p.bind(*ops), bd


def _clamp_batch(vals, dims):
    # Unbatched bounds may stay scalars; the operand sets the shape.
    shape = _batching._per_example_shape(vals[1:2], dims[1:2])
    ops, bd = _batching.batch_elementwise(vals, dims, shape, scalar_ok=(0, 2))
    return clamp_p.bind(*ops), bd


_batching.batching_rules[select_n_p] = _select_n_batch
_batching.batching_rules[clamp_p] = _clamp_batch
