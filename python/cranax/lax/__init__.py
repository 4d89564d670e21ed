"""``cranax.lax``: the lax API, a face over the primitive families (``cranax.primitives``) that define each
wrapper next to its primitive and rules. Mirrors ``jax.lax``.

Unlike ``cranax.numpy`` these functions do not promote dtypes: operands of a binary op must share a dtype,
except Python scalars, which take the other operand's dtype (weakly typed). Shapes must match, except
rank-0 values, which broadcast.
"""
from ..primitives.elementwise import (RoundingMethod, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
    bitcast_convert_type, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz,
    convert_element_type, cos, cosh, digamma, div, div_floor_int, eq, erf, erfc, erf_inv, exp, exp2, expm1, floor, ge,
    gt, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter,
    population_count, pow, rem, round, rsqrt, select, select_n, shift_left, shift_right_arithmetic,
    shift_right_logical, sign, sin, sinh, sqrt, square, stop_gradient, sub, tan, tanh)
from ..primitives.reductions import (argmax, argmin, reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod,
    reduce_sum)
from ..primitives.structural import (broadcast, broadcast_in_dim, broadcasted_iota, expand_dims, full, full_like,
    iota, reshape, squeeze, transpose, zeros_like_array)
from ..primitives.library import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, concatenate,
    cummax, cummin, cumprod, cumsum, dot, dot_general, dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
    dynamic_update_slice, dynamic_update_slice_in_dim, gather, index_in_dim, scatter, scatter_add, scatter_max,
    scatter_min, scatter_mul, slice_in_dim, sort, sort_key_val, top_k)
from ..primitives.control_flow import (cond, fori_loop, map, scan, switch, while_loop)
from ..primitives.library import lax_pad as pad, lax_rev as rev, lax_slice as slice
# private helpers cranax.numpy shares
from ..primitives.elementwise import _as_operand, _coerce, _convert, _is_literal_scalar  # noqa: F401
# names the module has always exposed (its imports, and its control-flow submodule), kept so that
# dir(cranax.lax) does not change
import builtins  # noqa: F401
import numpy as np  # noqa: F401
from .. import dtypes  # noqa: F401
from ..core import Tracer, TypedScalar, get_aval, typed_scalar  # noqa: F401
from ..primitives import control_flow  # noqa: F401

__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "RoundingMethod", "ScatterDimensionNumbers", "abs",
           "acos", "acosh", "add", "argmax", "argmin", "asin", "asinh", "atan", "atan2", "atanh",
           "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast",
           "broadcast_in_dim", "broadcasted_iota", "cbrt", "ceil", "clamp", "clz", "concatenate", "cond",
           "convert_element_type", "cos", "cosh", "cummax", "cummin", "cumprod", "cumsum", "digamma", "div",
           "div_floor_int", "dot", "dot_general", "dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq", "erf", "erfc", "erf_inv", "exp", "exp2",
           "expand_dims", "expm1", "floor", "fori_loop", "full", "full_like", "gather", "ge", "gt", "index_in_dim",
           "integer_pow", "iota", "is_finite", "le", "lgamma", "log", "log1p", "logistic", "lt", "map", "max",
           "min", "mul", "ne", "neg", "nextafter", "pad", "population_count", "pow", "reduce_and", "reduce_max",
           "reduce_min", "reduce_or", "reduce_prod", "reduce_sum", "rem", "reshape", "rev", "round", "rsqrt",
           "scan", "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "select", "select_n",
           "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sinh", "slice",
           "slice_in_dim", "sort", "sort_key_val", "sqrt", "square", "squeeze", "stop_gradient", "sub", "switch",
           "tan", "tanh", "top_k", "transpose", "while_loop", "zeros_like_array"]
