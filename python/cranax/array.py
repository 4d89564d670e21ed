"""``Array``: a handle to a device buffer that may still be computing (the core's ``DeviceArray``).

Operators and methods (``+``, ``x.sum()``, ``x[1:]``...) are installed by ``cranax.numpy``. Converting to
NumPy (``np.asarray(x)``), ``float(x)``, ``print(x)`` wait for the value. Mirrors ``jax.Array``.
"""
import numpy as np

from . import _core, dtypes
from .core import ShapedArray, TypedScalar, get_aval

__all__ = ["Array", "device_put", "devices", "block_until_ready"]


class Array:
    """An array on a device. ``shape``, ``dtype``, ``ndim``, ``size``, ``weak_type``; ``block_until_ready()``
    waits for pending work and returns ``self``. Mirrors ``jax.Array``."""

    __slots__ = ("_buf", "aval", "_npy", "__weakref__")
    __array_priority__ = 100

    @staticmethod
    def _from_buffer(buf, aval):
        a = Array.__new__(Array)
        a._buf = buf
        a.aval = aval
        a._npy = None
        return a

    def __init__(self, *args, **kwargs):
        raise TypeError("Array cannot be constructed directly; use cranax.numpy.array or cranax.device_put")

    # --- properties
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    @property
    def size(self):
        return self.aval.size

    @property
    def weak_type(self):
        return self.aval.weak_type

    @property
    def nbytes(self):
        return self.aval.size * self.aval.dtype.itemsize

    @property
    def itemsize(self):
        return self.aval.dtype.itemsize

    @property
    def device(self):
        return self._buf.device

    def devices(self):
        """The set of devices holding this array (one)."""
        return {self._buf.device}

    @property
    def committed(self):
        return False

    def is_ready(self):
        return self._buf.is_ready()

    def block_until_ready(self):
        """Waits until the value is computed (raising any error from its computation); returns ``self``."""
        self._buf.block_until_ready()
        return self

    def copy_to_host_async(self):
        pass

    def is_deleted(self):
        return False

    # --- conversion to host
    def _value(self):
        v = self._npy
        if v is None:
            v = self._buf.to_numpy()
            v.flags.writeable = False
            self._npy = v
        return v

    def _value_scalar(self):
        return self._value()[()]

    def __array__(self, dtype=None, copy=None):
        v = self._value()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        return v

    def tolist(self):
        return self._value().tolist()

    def item(self, *args):
        return self._value().item(*args)

    def _check_scalar(self, what):
        if self.size != 1:
            raise TypeError(f"only length-1 arrays can be converted to Python scalars ({what}); "
                            f"got shape {self.shape}")

    def __float__(self):
        self._check_scalar("float")
        return float(self._value().reshape(()))

    def __int__(self):
        self._check_scalar("int")
        return int(self._value().reshape(()))

    def __complex__(self):
        self._check_scalar("complex")
        return complex(self._value().reshape(()))

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. "
                             "Use a.any() or a.all()")
        return bool(self._value().reshape(()))

    def __index__(self):
        if not dtypes.issubdtype(self.dtype, np.integer) and self.dtype != np.bool_:
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index; got {self.dtype}")
        self._check_scalar("index")
        return int(self._value().reshape(()))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__module__}.{type(self).__name__}'")

    def __repr__(self):
        v = self._value()
        suffix = f", dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        if v.size == 0:
            return f"Array([], shape={v.shape}{suffix})"
        s = np.array2string(v, separator=", ", prefix="Array(", suffix=",")
        return f"Array({s}{suffix})"

    def __str__(self):
        return str(self._value())

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self._value()[()], spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (device_put, (np.array(self._value()),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _to_buffer(x, aval=None):
    """A core ``DeviceArray`` holding ``x`` (a NumPy value, Python scalar or TypedScalar) as ``aval``'s dtype."""
    if aval is None:
        aval = get_aval(x)
    if isinstance(x, TypedScalar):
        x = x.val
    arr = np.asarray(x)
    if arr.dtype != aval.dtype:
        with np.errstate(over="ignore", invalid="ignore"):
            arr = arr.astype(aval.dtype)
    return _core.DeviceArray.from_numpy(arr)


def _from_host(x, dtype=None, weak_type=None):
    """An Array from a NumPy array, Python scalar or nested lists (host data)."""
    if isinstance(x, TypedScalar):
        aval = x.aval
        return Array._from_buffer(_to_buffer(x, aval), aval)
    if isinstance(x, (bool, int, float)) and dtype is None:
        aval = get_aval(x)
        return Array._from_buffer(_to_buffer(x, aval), aval)
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"cranax does not support dtype object (got a value of type {type(x).__name__})")
    dt = dtypes.canonicalize_dtype(arr.dtype if dtype is None else dtype)
    aval = ShapedArray(arr.shape, dt, bool(weak_type))
    return Array._from_buffer(_to_buffer(arr, aval), aval)


def device_put(x, device=None, *, may_alias=None, donate=None):
    """Puts ``x`` (a pytree of NumPy arrays, Python scalars, lists or Arrays) on ``device`` (default: the
    default device) and returns Arrays. Unsupported dtypes raise ``TypeError``. Mirrors ``jax.device_put``."""
    from .tree_util import tree_map
    from .core import Tracer

    def put(v):
        if isinstance(v, (Array, Tracer)):
            return v
        return _from_host(v)
    return tree_map(put, x)


def devices(backend=None):
    """The devices of ``backend`` (default: all), e.g. ``[CpuDevice(id=0)]``. Mirrors ``jax.devices``."""
    devs = _core.devices()
    if backend is not None:
        devs = [d for d in devs if d.platform == backend]
        if not devs:
            raise RuntimeError(f"Unknown backend {backend!r}; available: cpu")
    return devs


def local_devices(backend=None):
    return devices(backend)


def device_count(backend=None):
    return len(devices(backend))


def default_backend():
    return devices()[0].platform


def block_until_ready(x):
    """Waits for every Array in the pytree ``x``; returns ``x``. Mirrors ``jax.block_until_ready``."""
    from .tree_util import tree_leaves
    for leaf in tree_leaves(x):
        if isinstance(leaf, Array):
            leaf._buf.block_until_ready()
    return x
