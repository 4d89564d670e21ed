"""The dtypes and constants of ``cranax.numpy`` (the canonical ones; 64-bit names exist and canonicalize)."""
import numpy as _np

from .. import dtypes as _dtypes
from ..array import Array
from ..core import Tracer
from ._promotion import array


class _ScalarMeta(type):
    """``jnp.float32`` & co.: usable as a dtype (``np.dtype(jnp.float32)``) and, called, make a strongly
    typed array (``jnp.float32(2.0)`` is ``Array(2., dtype=float32)``), as in JAX."""

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __call__(cls, x):
        return array(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'cranax.numpy.{cls.__name__}'>"


def _scalar_type(t):
    return _ScalarMeta(t.__name__, (object,), {"dtype": _np.dtype(t)})


bool_ = _scalar_type(_np.bool_)
int32 = _scalar_type(_np.int32)
uint32 = _scalar_type(_np.uint32)
int64 = _scalar_type(_np.int64)
float32 = _scalar_type(_np.float32)
float64 = _scalar_type(_np.float64)
int8 = _scalar_type(_np.int8)
uint8 = _scalar_type(_np.uint8)
int16 = _scalar_type(_np.int16)
uint16 = _scalar_type(_np.uint16)
float16 = _scalar_type(_np.float16)
bfloat16 = _scalar_type(_dtypes.bfloat16)   # ml_dtypes' type underneath, as in JAX
uint64 = _np.uint64
complex64 = csingle = _scalar_type(_np.complex64)
complex128 = complex_ = cdouble = _scalar_type(_np.complex128)
complexfloating = _np.complexfloating
dtype = _np.dtype
pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
euler_gamma = _np.euler_gamma
newaxis = None
ndarray = Array
integer = _np.integer
floating = _np.floating
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
inexact = _np.inexact
number = _np.number
generic = _np.generic
finfo = _dtypes.finfo   # np.finfo, and ml_dtypes.finfo for bfloat16 (as JAX)
iinfo = _np.iinfo


def issubdtype(arg1, arg2):
    return _dtypes.issubdtype(arg1, arg2)


def result_type(*args):
    """The dtype of combining ``args`` under JAX's promotion rules. Mirrors ``jax.numpy.result_type``."""
    return _dtypes.result_type(*args)


def promote_types(a, b):
    return _dtypes.promote_types(a, b)


def isscalar(x):
    return _np.isscalar(x) or (isinstance(x, (Array, Tracer)) and x.ndim == 0)
