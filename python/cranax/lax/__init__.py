"""``cranax.lax``: the lax API, a face over the primitive families (``cranax.primitives``) that define each
wrapper next to its primitive and rules. Mirrors ``jax.lax``.

Unlike ``cranax.numpy`` these functions do not promote dtypes: operands of a binary op must share a dtype,
except Python scalars, which take the other operand's dtype (weakly typed). Shapes must match, except
rank-0 values, which broadcast.
"""
from ..primitives.elementwise import (RoundingMethod, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
    bessel_i0e, bessel_i1e, bitcast_convert_type, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil,
    clamp, clz, convert_element_type, cos, cosh, digamma, div, div_floor_int, eq, erf, erfc, erf_inv, exp, exp2, ndtri,
    expm1, floor, ge, gt, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max, min, mul, ne, neg,
    nextafter, population_count, pow, rem, round, rsqrt, select, select_n, shift_left, shift_right_arithmetic,
    shift_right_logical, sign, sin, sinh, sqrt, square, stop_gradient, sub, tan, tanh)
from ..primitives.reductions import (argmax, argmin, reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod,
    reduce_sum)
from ..primitives.structural import (broadcast, broadcast_in_dim, broadcasted_iota, expand_dims, full, full_like,
    iota, reshape, squeeze, transpose, zeros_like_array)
from ..primitives.library import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, concatenate,
    cummax, cummin, cumprod, cumsum, dot, dot_general, dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim,
    dynamic_update_slice, dynamic_update_slice_in_dim, gather, index_in_dim, scatter, scatter_add, scatter_max,
    scatter_min, scatter_mul, scatter_sub, slice_in_dim, sort, sort_key_val, top_k)
from ..primitives.control_flow import (cond, fori_loop, map, scan, switch, while_loop)
from ..primitives.library import lax_pad as pad, lax_rev as rev, lax_slice as slice
# compositions of the primitive families (issue 22)
from ..primitives.lax_composites import (approx_max_k, approx_min_k, associative_scan, broadcast_shapes,
    broadcast_to_rank, collapse, dynamic_update_index_in_dim, empty, index_take, optimization_barrier,
    platform_dependent, reciprocal, reduce, reduce_precision, reduce_xor, split, stack, tile, unstack)
# the primitives, under JAX's names (jax.lax exports them too)
from ..primitives.elementwise import (abs_p, acos_p, acosh_p, add_p, and_p, asin_p, asinh_p, atan2_p, atan_p,
    atanh_p, bessel_i0e_p, bessel_i1e_p, bitcast_convert_type_p, cbrt_p, ceil_p, clamp_p, clz_p,
    convert_element_type_p, cos_p, cosh_p, digamma_p, div_p, eq_p, erf_inv_p, ndtri_p, erf_p, erfc_p, exp2_p, exp_p,
    expm1_p, floor_p, ge_p, gt_p, integer_pow_p, is_finite_p, le_p, lgamma_p, log1p_p, log_p, logistic_p, lt_p,
    max_p, min_p, mul_p, ne_p, neg_p, nextafter_p, not_p, or_p, population_count_p, pow_p, rem_p, round_p,
    rsqrt_p, select_n_p, shift_left_p, shift_right_arithmetic_p, shift_right_logical_p, sign_p, sin_p, sinh_p,
    sqrt_p, square_p, stop_gradient_p, sub_p, tan_p, tanh_p, xor_p)
from ..primitives.reductions import (argmax_p, argmin_p, reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p,
    reduce_prod_p, reduce_sum_p)
from ..primitives.structural import (broadcast_in_dim_p, copy_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
    squeeze_p, transpose_p)
from ..primitives.library import (concatenate_p, cummax_p, cummin_p, cumprod_p, cumsum_p, dot_general_p,
    dynamic_slice_p, dynamic_update_slice_p, gather_p, scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p,
    scatter_p, scatter_sub_p, sort_p)
from ..primitives.control_flow import (cond_p, scan_p, while_p)
# convolutions and windowed reductions (primitives/convolution.py, primitives/windowed.py)
from ..primitives.convolution import (ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers, conv,
    conv_dimension_numbers, conv_general_dilated, conv_general_dilated_local, conv_general_dilated_p,
    conv_general_dilated_patches,
    conv_general_permutations, conv_general_shape_tuple, conv_shape_tuple, conv_transpose,
    conv_transpose_shape_tuple, conv_with_general_padding, padtype_to_pads)
from ..primitives.windowed import (cumlogsumexp, cumlogsumexp_p, reduce_window, reduce_window_max_p,
    reduce_window_min_p, reduce_window_p, reduce_window_shape_tuple, reduce_window_sum_p, select_and_gather_add_p,
    select_and_scatter_add_p)
# the special functions (h-special)
from ..primitives.elementwise import (igamma, igamma_grad_a, igamma_grad_a_p, igamma_p, igammac, igammac_p,
    polygamma, polygamma_p, random_gamma_grad, random_gamma_grad_p, zeta, zeta_p)
# complex numbers (lowered as pairs of reals) and FFTs
from ..primitives.elementwise import complex, complex_p, conj, conj_p, imag, imag_p, real, real_p
from ..primitives.fft import FftType, fft, fft_p
# private helpers cranax.numpy shares
from ..primitives.elementwise import _as_operand, _coerce, _convert, _is_literal_scalar  # noqa: F401
# the lax.linalg face (jax.lax.linalg)
from . import linalg  # noqa: F401,E402

__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "RoundingMethod", "ScatterDimensionNumbers", "abs",
           "abs_p", "acos", "acos_p", "acosh", "acosh_p", "add", "add_p", "and_p", "argmax", "argmax_p", "argmin",
           "argmin_p", "asin", "asin_p", "asinh", "asinh_p", "atan", "atan2", "atan2_p", "atan_p", "atanh",
           "atanh_p", "bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p", "bitcast_convert_type",
           "bitcast_convert_type_p", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "broadcast",
           "broadcast_in_dim", "broadcast_in_dim_p", "broadcasted_iota", "cbrt", "cbrt_p", "ceil", "ceil_p",
           "clamp", "clamp_p", "clz", "clz_p", "concatenate", "concatenate_p", "cond", "cond_p",
           "convert_element_type", "convert_element_type_p", "copy_p", "cos", "cos_p", "cosh", "cosh_p", "cummax",
           "cummax_p", "cummin", "cummin_p", "cumprod", "cumprod_p", "cumsum", "cumsum_p", "digamma", "digamma_p",
           "div", "div_floor_int", "div_p", "dot", "dot_general", "dot_general_p", "dynamic_index_in_dim",
           "dynamic_slice", "dynamic_slice_in_dim", "dynamic_slice_p", "dynamic_update_slice",
           "dynamic_update_slice_in_dim", "dynamic_update_slice_p", "eq", "eq_p", "erf", "erf_inv", "erf_inv_p",
           # cranax's own (JAX composes jax.scipy.special.ndtri): the float32 ndtri primitive
           "ndtri", "ndtri_p",
           "erf_p", "erfc", "erfc_p", "exp", "exp2", "exp2_p", "exp_p", "expand_dims", "expm1", "expm1_p",
           "floor", "floor_p", "fori_loop", "full", "full_like", "gather", "gather_p", "ge", "ge_p", "gt", "gt_p",
           "index_in_dim", "integer_pow", "integer_pow_p", "iota", "iota_p", "is_finite", "is_finite_p", "le",
           "le_p", "lgamma", "lgamma_p", "log", "log1p", "log1p_p", "log_p", "logistic", "logistic_p", "lt",
           "lt_p", "map", "max", "max_p", "min", "min_p", "mul", "mul_p", "ne", "ne_p", "neg", "neg_p",
           "nextafter", "nextafter_p", "not_p", "or_p", "pad", "pad_p", "population_count", "population_count_p",
           "pow", "pow_p", "reduce_and", "reduce_and_p", "reduce_max", "reduce_max_p", "reduce_min",
           "reduce_min_p", "reduce_or", "reduce_or_p", "reduce_prod", "reduce_prod_p", "reduce_sum",
           "reduce_sum_p", "rem", "rem_p", "reshape", "reshape_p", "rev", "rev_p", "round", "round_p", "rsqrt",
           "rsqrt_p", "scan", "scan_p", "scatter", "scatter_add", "scatter_add_p", "scatter_max", "scatter_max_p",
           "scatter_min", "scatter_min_p", "scatter_mul", "scatter_mul_p", "scatter_p", "scatter_sub_p", "select", "select_n",
           "select_n_p", "shift_left", "shift_left_p", "shift_right_arithmetic", "shift_right_arithmetic_p",
           "shift_right_logical", "shift_right_logical_p", "sign", "sign_p", "sin", "sin_p", "sinh", "sinh_p",
           "slice", "slice_in_dim", "slice_p", "sort", "sort_key_val", "sort_p", "sqrt", "sqrt_p", "square",
           "square_p", "squeeze", "squeeze_p", "stop_gradient", "stop_gradient_p", "sub", "sub_p", "switch",
           "tan", "tan_p", "tanh", "tanh_p", "top_k", "transpose", "transpose_p", "while_loop", "while_p",
           "xor_p", "zeros_like_array",
           # issue 22
           "approx_max_k", "approx_min_k", "associative_scan", "broadcast_shapes", "broadcast_to_rank", "collapse",
           "dynamic_update_index_in_dim", "empty", "index_take", "optimization_barrier", "platform_dependent",
           "reciprocal", "reduce", "reduce_precision", "reduce_xor", "scatter_sub", "split", "stack", "tile",
           "unstack"]
__all__ += ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "conv", "conv_dimension_numbers",
            "conv_general_dilated", "conv_general_dilated_local", "conv_general_dilated_p",
            "conv_general_dilated_patches", "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose",
            "conv_transpose_shape_tuple", "conv_with_general_padding", "padtype_to_pads",
            "cumlogsumexp", "cumlogsumexp_p", "reduce_window", "reduce_window_max_p", "reduce_window_min_p",
            "reduce_window_p", "reduce_window_shape_tuple", "reduce_window_sum_p", "select_and_gather_add_p",
            "select_and_scatter_add_p"]
# the special functions (h-special)
__all__ += ["igamma", "igamma_grad_a", "igamma_grad_a_p", "igamma_p", "igammac", "igammac_p", "polygamma",
            "polygamma_p", "random_gamma_grad", "random_gamma_grad_p", "zeta", "zeta_p"]

# Issue 19 (the JAX ecosystem): names libraries use.
from ._precision import Precision
from ._shapes import broadcast_shapes
__all__ += ["Precision", "broadcast_shapes"]
__all__ = __all__ + ["FftType", "fft", "fft_p", "complex", "complex_p", "conj", "conj_p", "imag", "imag_p", "real", "real_p"]
# collectives over named axes (issue 24)
from ..primitives.collectives import (all_gather, all_gather_p, all_to_all, all_to_all_p, axis_index, axis_index_p,
    axis_size, pbroadcast, pcast, pmax, pmax_p, pmean, pmin, pmin_p, ppermute, ppermute_p, pshuffle, psum, psum_p,
    psum_scatter, pswapaxes, ragged_all_to_all, ragged_all_to_all_p, psend, precv)
__all__ += ["ragged_all_to_all", "ragged_all_to_all_p", "psend", "precv"]
__all__ += ["all_gather", "all_gather_p", "all_to_all", "all_to_all_p", "axis_index", "axis_index_p", "axis_size",
            "pbroadcast", "pcast", "pmax", "pmax_p", "pmean", "pmin", "pmin_p", "ppermute", "ppermute_p", "pshuffle", "psum",
            "psum_p", "psum_scatter", "pswapaxes"]
# placing values by sharding (issue 24; cranax computes unsharded, so this changes no value)
from ..api_sharding import with_sharding_constraint
__all__ += ["with_sharding_constraint"]
# the rest of jax.lax (issue 22 item 5)
from ._precision import (AccuracyMode, DotAlgorithm, DotAlgorithmPreset, DotDimensionNumbers, PrecisionLike,
    Tolerance)
from ..primitives.lax_composites import (RaggedDotDimensionNumbers, RandomAlgorithm, after_all, after_all_p,
    approx_top_k_p, batch_matmul, broadcast_like, composite, create_token, create_token_p, dce_sink, dce_sink_p,
    device_put_p, dtype, eq_to_p, le_to_p, lt_to_p, mulhi, mulhi_p, optimization_barrier_p, ragged_dot,
    ragged_dot_general, reduce_p, reduce_precision_p, reduce_xor_p, rng_bit_generator, rng_bit_generator_p,
    rng_uniform, rng_uniform_p, scaled_dot, scatter_apply, select_and_scatter_p, shape_as_value,
    sharding_constraint_p, split_p, stack_p, stage, stage_p, tile_p, top_k_p, unstack_p, betainc,
    regularized_incomplete_beta_p)
__all__ += ["AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers", "PrecisionLike",
            "Tolerance", "RaggedDotDimensionNumbers", "RandomAlgorithm", "after_all", "after_all_p",
            "approx_top_k_p", "batch_matmul", "broadcast_like", "composite", "create_token", "create_token_p",
            "dce_sink", "dce_sink_p", "device_put_p", "dtype", "eq_to_p", "le_to_p", "lt_to_p", "mulhi", "mulhi_p",
            "optimization_barrier_p", "ragged_dot", "ragged_dot_general", "reduce_p", "reduce_precision_p",
            "reduce_xor_p", "rng_bit_generator", "rng_bit_generator_p", "rng_uniform", "rng_uniform_p",
            "scaled_dot", "scatter_apply", "select_and_scatter_p", "shape_as_value",
            "sharding_constraint_p", "split_p", "stack_p", "stage", "stage_p", "tile_p", "top_k_p", "unstack_p",
            "betainc", "regularized_incomplete_beta_p"]
# solves differentiated implicitly (issue 22 item 5)
from ..primitives.custom_solvers import custom_linear_solve, custom_root, linear_solve_p
__all__ += ["custom_linear_solve", "custom_root", "linear_solve_p"]

# cranax's helpers that JAX 0.10.2's lax lacks stay out of its namespace (the primitive families keep them)
del div_floor_int, ndtri, ndtri_p, random_gamma_grad_p, zeros_like_array  # noqa: F821
__all__ = [n for n in __all__ if n not in ("div_floor_int", "ndtri", "ndtri_p", "random_gamma_grad_p",
                                           "zeros_like_array")]
