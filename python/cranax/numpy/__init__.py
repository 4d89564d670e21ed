"""``cranax.numpy``: NumPy's API built from cranax primitives. Mirrors ``jax.numpy``.

Binary functions promote dtypes with JAX's lattice (Python scalars are weakly typed) and broadcast with
NumPy's rules; incompatible shapes raise ``TypeError: add got incompatible shapes for broadcasting:
(3,), (4,).``. Default dtypes are float32/int32 (64-bit under ``jax_enable_x64``).

This module is a face: the functions live in ``_scalar_types`` (dtypes, constants), ``_promotion``
(promotion, ``array``/``asarray``/``astype``), ``_shapes`` (reshape, broadcasting, joins), ``_ufuncs``
(elementwise), ``_creation``, ``_reductions``, ``_shape_ops`` (the rest of the shape, sorting, scan and
index functions), ``_indexing`` (``x[i]``, ``x.at``), ``_products`` (``dot_general`` products and the lazy
``x.T``) and ``_methods`` (the ``Array``/``Tracer`` operators and methods, installed on import), each
importing only those before it.
"""
# Not part of __all__, but always visible as attributes of cranax.numpy, so kept:

from ._scalar_types import (bool_, complex128, complex64, dtype, e, euler_gamma, finfo, float16, float32,
                            float64, floating, generic, iinfo, inexact, inf, int16, int32, int64, int8,
                            integer, isscalar, issubdtype, nan, ndarray, newaxis, number, pi, promote_types,
                            result_type, signedinteger, uint16, uint32, uint64, uint8, unsignedinteger)
from ._promotion import (array, asarray, astype, float_, int_)
from ._shapes import (broadcast_arrays, broadcast_shapes, broadcast_to, concatenate, expand_dims,
                      matrix_transpose, moveaxis, ndim, permute_dims, ravel, reshape, shape, size, squeeze,
                      stack, swapaxes, transpose)
from ._ufuncs import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
                      arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
                      bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, conj, conjugate, copy, cos,
                      cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, float_power,
                      floor, floor_divide, fmod, greater, greater_equal, heaviside, hypot, invert, isclose,
                      iscomplexobj, isfinite, isinf, isnan, isneginf, isposinf, isrealobj, left_shift, less,
                      less_equal, log, log10, log1p, log2, logaddexp, logaddexp2, logical_and, logical_not,
                      logical_or, logical_xor, maximum, minimum, mod, multiply, negative, nextafter,
                      not_equal, positive, pow, power, rad2deg, radians, real, reciprocal, remainder,
                      right_shift, rint, round, sign, signbit, sin, sinh, sqrt, square, subtract, tan, tanh,
                      true_divide, trunc)
from ._creation import (arange, empty, empty_like, eye, full, full_like, identity, linspace, ones, ones_like,
                        tri, zeros, zeros_like)
from ._reductions import (all, allclose, amax, amin, any, argmax, argmin, array_equal, max, mean, min, prod,
                          std, sum, var)
from ._shape_ops import (append, argsort, argwhere, array_split, atleast_1d, atleast_2d, atleast_3d,
                         column_stack, count_nonzero, cumprod, cumsum, cumulative_prod, cumulative_sum, diag,
                         diag_indices, diagflat, diagonal, dsplit, dstack, flatnonzero, flip, fliplr, flipud,
                         hsplit, hstack, indices, ix_, meshgrid, nonzero, pad, put_along_axis, repeat, roll,
                         rot90, searchsorted, sort, split, take, take_along_axis, tile, tril,
                         tril_indices, triu, triu_indices, vsplit, vstack, where)
from ._products import (dot, einsum, inner, kron, matmul, matvec, outer, tensordot, trace, vdot, vecdot,
                        vecmat)
# statistics, set operations, differences/interpolation/polynomials (issue 22)
from ._statistics import (average, bincount, corrcoef, cov, digitize, histogram, histogram_bin_edges, median,
                          nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmedian, nanmin,
                          nanpercentile, nanprod, nanquantile, nanstd, nansum, nanvar, percentile, ptp, quantile)
from ._setops import (intersect1d, isin, setdiff1d, setxor1d, union1d, unique, unique_all, unique_counts,
                      unique_inverse, unique_values)
from ._numeric import (array_equiv, bitwise_count, can_cast, choose, compress, concat, copysign, cross,
                       diff, ediff1d, extract, fabs, fmax, fmin, gcd, geomspace, gradient, interp,
                       isdtype, iterable, lcm, ldexp, lexsort, logspace, nan_to_num, polyadd, polyder,
                       polyint, polymul, polysub, polyval, rollaxis, select, sinc, trapezoid, unstack, vander,
                       delete, insert, resize, trim_zeros, put, place, modf, printoptions, get_printoptions,
                       set_printoptions)
from ._index_tricks import (c_, diag_indices_from, fill_diagonal, index_exp, mgrid, ogrid, r_, ravel_multi_index,
                            s_, tril_indices_from, triu_indices_from, unravel_index)
from ._functional import apply_along_axis, apply_over_axes, fromfunction, piecewise, vectorize
from ._windows import bartlett, blackman, hamming, hanning, i0, kaiser
# complex numbers (issue 20)
from ._scalar_types import cdouble, complex_, complexfloating, csingle
from ._ufuncs import angle, imag, iscomplex, isreal
from . import fft  # noqa: F401  (the jnp.fft submodule)
from ._products import convolve, correlate
from . import _methods  # noqa: F401  (installs the Array/Tracer operators and methods)
# the jnp.linalg submodule (jax.numpy.linalg)
from . import linalg  # noqa: F401,E402

__all__ = [
    "bool_", "complex128", "complex64", "dtype", "e", "euler_gamma", "finfo", "float16", "float32", "float64",
    "floating", "generic", "iinfo", "inexact", "inf", "int16", "int32", "int64", "int8", "integer", "isscalar",
    "issubdtype", "nan", "ndarray", "newaxis", "number", "pi", "promote_types", "result_type", "signedinteger",
    "uint16", "uint32", "uint64", "uint8", "unsignedinteger", "array", "asarray", "astype", "float_", "int_",
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concatenate", "expand_dims", "matrix_transpose",
    "moveaxis", "ndim", "permute_dims", "ravel", "reshape", "shape", "size", "squeeze", "stack", "swapaxes",
    "transpose", "abs", "absolute", "acos", "acosh", "add", "arccos", "arccosh", "arcsin", "arcsinh", "arctan",
    "arctan2", "arctanh", "around", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil", "clip", "conj", "conjugate", "copy", "cos",
    "cosh", "deg2rad", "degrees", "divide", "divmod", "equal", "exp", "exp2", "expm1", "float_power",
    "floor", "floor_divide", "fmod", "greater", "greater_equal", "heaviside", "hypot", "invert", "isclose",
    "iscomplexobj", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isrealobj", "left_shift", "less",
    "less_equal", "log", "log10", "log1p", "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not",
    "logical_or", "logical_xor", "maximum", "minimum", "mod", "multiply", "negative", "nextafter", "not_equal",
    "positive", "pow", "power", "rad2deg", "radians", "real", "reciprocal", "remainder", "right_shift", "rint",
    "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "true_divide",
    "trunc", "arange", "empty", "empty_like", "eye", "full", "full_like", "identity", "linspace", "ones",
    "ones_like", "tri", "zeros", "zeros_like", "all", "allclose", "amax", "amin", "any", "argmax", "argmin",
    "array_equal", "max", "mean", "min", "prod", "std", "sum", "var", "append", "argsort", "argwhere",
    "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "count_nonzero", "cumprod",
    "cumsum", "cumulative_prod", "cumulative_sum", "diag", "diag_indices", "diagflat", "diagonal", "dsplit",
    "dstack", "flatnonzero", "flip", "fliplr", "flipud", "hsplit", "hstack", "indices", "ix_", "meshgrid",
    "nonzero", "pad", "put_along_axis", "repeat", "roll", "rot90", "searchsorted", "sort",
    "split", "take", "take_along_axis", "tile", "tril", "tril_indices", "triu", "triu_indices", "vsplit",
    "vstack", "where", "dot", "einsum", "inner", "kron", "matmul", "matvec", "outer", "tensordot", "trace",
    "vdot", "vecdot", "vecmat",
    # issue 22
    "average", "bincount", "corrcoef", "cov", "digitize", "histogram", "histogram_bin_edges", "median",
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "percentile", "ptp", "quantile",
    "intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "copysign", "diff", "ediff1d", "gcd", "interp", "lcm", "ldexp", "polyadd",
    "polyder", "polyint", "polymul", "polysub", "polyval", "select", "trapezoid", "vander", "angle",
    "array_equiv", "bitwise_count", "can_cast", "choose", "compress", "concat", "cross", "extract", "fabs", "fmax",
    "fmin", "geomspace", "gradient", "imag", "iscomplex", "isdtype", "isreal", "iterable", "lexsort", "logspace",
    "nan_to_num", "rollaxis", "sinc", "unstack", "c_", "diag_indices_from", "fill_diagonal", "index_exp", "mgrid",
    "ogrid", "r_", "ravel_multi_index", "s_", "tril_indices_from", "triu_indices_from", "unravel_index",
    "apply_along_axis", "apply_over_axes", "fromfunction", "piecewise", "vectorize", "bartlett", "blackman",
    "hamming", "hanning", "i0", "kaiser", "delete", "insert", "resize", "trim_zeros", "put", "place", "modf",
    "printoptions", "get_printoptions", "set_printoptions",
]
__all__ = __all__ + ["convolve", "correlate", "cdouble", "complex_", "complexfloating", "csingle", "angle", "imag", "iscomplex", "isreal"]
from ._ml_dtypes import *  # noqa: E402,F401,F403  (issue 19: bfloat16/float8 names, double, single)
from ._ml_dtypes import __all__ as _ml_all  # noqa: E402
__all__ = __all__ + _ml_all
# the rest of jax.numpy (issue 22 item 4)
from ._bits import bitwise_left_shift, bitwise_right_shift, frexp, packbits, spacing, unpackbits
from ._polynomials import poly, polydiv, polyfit, roots
from ._shape_ops import argpartition, block, partition, sort_complex
from ._statistics import histogram2d, histogramdd
from ._products import einsum_path
from ._index_tricks import mask_indices
from ._numeric import unwrap
from ._io import (array_repr, array_str, from_dlpack, frombuffer, fromfile, fromiter, fromstring, load, save,
                  savez)
from ._functional import frompyfunc, ufunc
import numpy as _np
# scalar-type aliases, as JAX has them (NumPy's abstract classes and warning where JAX uses NumPy's)
bool = bool_  # noqa: A001
double = float64
single = float32
uint = uint64
character = _np.character
flexible = _np.flexible
object_ = _np.object_
ComplexWarning = _np.exceptions.ComplexWarning
del _np
__all__ = __all__ + ["bitwise_left_shift", "bitwise_right_shift", "frexp", "packbits", "spacing", "unpackbits", "poly",
            "polydiv", "polyfit", "roots", "argpartition", "block", "partition", "sort_complex", "histogram2d",
            "histogramdd", "einsum_path", "mask_indices", "unwrap", "array_repr", "array_str", "from_dlpack",
            "frombuffer", "fromfile", "fromiter", "fromstring", "load", "save", "savez", "frompyfunc", "ufunc",
            "bool", "double", "single", "uint", "character", "flexible", "object_", "ComplexWarning"]
# bfloat16 (issue 21)
from ._scalar_types import bfloat16  # noqa: E402
__all__ = __all__ + ["bfloat16"]

from ._removed import __getattr__  # noqa: E402,F401  (JAX's texts for names JAX 0.10.2 removed)
