"""The operators and methods of ``Array`` and ``Tracer`` (``+``, ``x[i]``, ``x.at``, ``x.sum()``, ``x.T``...),
installed when ``cranax.numpy`` is imported; each one is a ``cranax.numpy`` function."""
import numpy as _np

from ..array import Array
from ..core import Tracer, TypedScalar
from ._indexing import _IndexUpdateHelper
from ._indexing import getitem as _getitem
from ._creation import zeros_like
from ._products import _T, dot, matmul, trace
from ._promotion import astype
from ._reductions import all, any, argmax, argmin, max, mean, min, prod, std, sum, var
from ._shape_ops import argsort, cumprod, cumsum, diagonal, nonzero, repeat, searchsorted, sort, take
from ._shapes import matrix_transpose, ravel, reshape, squeeze, swapaxes, transpose
from ._ufuncs import (abs, add, bitwise_and, bitwise_or, bitwise_xor, clip, divmod, equal, floor_divide, greater,
                      greater_equal, invert, left_shift, less, less_equal, multiply, negative, not_equal, power,
                      remainder, right_shift, round, subtract, true_divide)

from ._ufuncs import conjugate, imag, real


_OPERAND_TYPES = (Array, Tracer, TypedScalar, bool, int, float, complex, _np.generic, _np.ndarray)


def _install_methods(cls):
    """Array/Tracer operators and methods, all routed through ``cranax.numpy``'s functions."""
    def rev(f):
        return lambda self, other: f(other, self)

    def _guard(f):
        # As JAX: an operand of a type cranax does not take as an array gives NotImplemented, so Python tries
        # the other operand's reflected method (``__radd__``...) before raising TypeError.
        def op(self, other):
            if isinstance(other, _OPERAND_TYPES) or hasattr(other, "__jax_array__"):
                return f(self, other)
            return NotImplemented
        return op

    ops = {
        "__add__": add, "__sub__": subtract, "__mul__": multiply, "__truediv__": true_divide,
        "__floordiv__": floor_divide, "__mod__": remainder, "__pow__": power,
        "__and__": bitwise_and, "__or__": bitwise_or, "__xor__": bitwise_xor,
        "__lshift__": left_shift, "__rshift__": right_shift,
        "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
        "__eq__": equal, "__ne__": not_equal,
    }
    for name, f in ops.items():
        setattr(cls, name, _guard(f))
        if name not in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
            setattr(cls, "__r" + name[2:], _guard(rev(f)))
    cls.__divmod__ = lambda self, o: divmod(self, o)
    cls.__rdivmod__ = lambda self, o: divmod(o, self)
    cls.__neg__ = lambda self: negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: abs(self)
    # round(x) gives an integer array, round(x, n) a rounded float one (as JAX; unittest's assertAlmostEqual)
    cls.__round__ = lambda self, ndigits=None: round(self, 0).astype(int) if ndigits is None \
        else round(self, ndigits)
    cls.__invert__ = lambda self: invert(self)
    cls.__getitem__ = lambda self, idx: _getitem(self, idx)
    cls.__matmul__ = lambda self, o: matmul(self, o)
    cls.__rmatmul__ = lambda self, o: matmul(o, self)
    cls.__hash__ = None if cls is not Array else cls.__hash__
    cls.sum = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: sum(self, axis, dtype, out,
                                                                                      keepdims, **kw)
    cls.prod = lambda self, axis=None, dtype=None, out=None, keepdims=False, **kw: prod(self, axis, dtype, out,
                                                                                        keepdims, **kw)
    cls.mean = lambda self, axis=None, dtype=None, out=None, keepdims=False: mean(self, axis, dtype, out,
                                                                                  keepdims)
    cls.var = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: var(self, axis, dtype, out,
                                                                                        ddof, keepdims)
    cls.std = lambda self, axis=None, dtype=None, out=None, ddof=0, keepdims=False: std(self, axis, dtype, out,
                                                                                        ddof, keepdims)
    cls.max = lambda self, axis=None, out=None, keepdims=False, **kw: max(self, axis, None, out, keepdims, **kw)
    cls.min = lambda self, axis=None, out=None, keepdims=False, **kw: min(self, axis, None, out, keepdims, **kw)
    cls.all = lambda self, axis=None, out=None, keepdims=False: all(self, axis, None, out, keepdims)
    cls.any = lambda self, axis=None, out=None, keepdims=False: any(self, axis, None, out, keepdims)
    cls.argmax = lambda self, axis=None, out=None, keepdims=False: argmax(self, axis, out, keepdims)
    cls.argmin = lambda self, axis=None, out=None, keepdims=False: argmin(self, axis, out, keepdims)
    cls.astype = lambda self, dtype, copy=False: astype(self, dtype)
    cls.reshape = lambda self, *shape, order="C": reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape, order)
    cls.transpose = lambda self, *axes: transpose(
        self, None if not axes else (axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes))
    cls.T = property(_T)
    cls.mT = property(lambda self: matrix_transpose(self))
    cls.squeeze = lambda self, axis=None: squeeze(self, axis)
    cls.ravel = lambda self, order="C": ravel(self, order)
    cls.flatten = lambda self, order="C": ravel(self, order)
    cls.clip = lambda self, min=None, max=None: clip(self, min, max)
    cls.round = lambda self, decimals=0: round(self, decimals)
    cls.swapaxes = lambda self, a1, a2: swapaxes(self, a1, a2)
    cls.dot = lambda self, b, *, precision=None, preferred_element_type=None: dot(
        self, b, precision=precision, preferred_element_type=preferred_element_type)
    cls.conj = cls.conjugate = lambda self: conjugate(self)
    cls.at = property(lambda self: _IndexUpdateHelper(self))
    cls.cumsum = lambda self, axis=None, dtype=None, out=None: cumsum(self, axis, dtype, out)
    cls.cumprod = lambda self, axis=None, dtype=None, out=None: cumprod(self, axis, dtype, out)
    cls.sort = lambda self, axis=-1, **kw: sort(self, axis, **kw)
    cls.argsort = lambda self, axis=-1, **kw: argsort(self, axis, **kw)
    cls.diagonal = lambda self, offset=0, axis1=0, axis2=1: diagonal(self, offset, axis1, axis2)
    cls.trace = lambda self, offset=0, axis1=0, axis2=1, dtype=None: trace(self, offset, axis1, axis2, dtype)
    cls.take = lambda self, indices, axis=None, **kw: take(self, indices, axis, **kw)
    cls.repeat = lambda self, repeats, axis=None, **kw: repeat(self, repeats, axis, **kw)
    cls.nonzero = lambda self, *, size=None, fill_value=None: nonzero(self, size=size, fill_value=fill_value)
    cls.searchsorted = lambda self, v, side="left", sorter=None: searchsorted(self, v, side, sorter)
    cls.real = property(lambda self: real(self))
    cls.imag = property(lambda self: imag(self))
    cls.copy = lambda self: self
    cls.__setitem__ = _immutable_setitem


def _immutable_setitem(self, idx, value):
    raise TypeError("JAX arrays are immutable and do not support in-place item assignment. Instead of x[idx] = y, "
                    "use x = x.at[idx].set(y) or another .at[] method: "
                    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


_install_methods(Array)
_install_methods(Tracer)
