"""``jax.dlpack``: exchanging arrays with other libraries through DLPack.

Export is ``Array.__dlpack__`` (consumers such as ``np.from_dlpack`` or ``torch.from_dlpack`` alias the array's
read-only host buffer, no copy); :func:`from_dlpack` imports. cranax's device buffers are its own aligned
allocations, so importing copies the data once into one of them (JAX aliases it on the CPU when aligned).
"""
import numpy as np

from . import dtypes
from .array import Array, DLDeviceType, device_put

__all__ = ["from_dlpack", "is_supported_dtype", "DLDeviceType", "SUPPORTED_DTYPES"]

# The dtypes a cranax array can hold (JAX's list also has uint64 and the ml_dtypes types).
SUPPORTED_DTYPES = tuple(np.dtype(d) for d in dtypes.supported_dtypes)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)


def is_supported_dtype(dtype):
    """True if arrays of ``dtype`` can cross DLPack into or out of cranax. Raises TypeError for None and for
    what is not a dtype. Mirrors ``jax.dlpack.is_supported_dtype``."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in _SUPPORTED


def from_dlpack(external_array, device=None, copy=None):
    """A cranax Array with the contents of ``external_array``, any object with ``__dlpack__`` and
    ``__dlpack_device__`` on the CPU (a NumPy array, a CPU torch tensor, a cranax Array). ``device``: where
    to put it (default: the default device). The data is copied once into a cranax buffer (dtypes
    canonicalized as ``jnp.asarray`` does: float64 is float32 unless x64 is on); ``copy=False`` therefore
    raises BufferError, except for a cranax Array, which is returned as it is. Raises TypeError for an
    object without the DLPack methods, and BufferError for data on another device. Mirrors
    ``jax.dlpack.from_dlpack``."""
    if not (hasattr(external_array, "__dlpack__") and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    if isinstance(external_array, Array) and copy is not True:
        return external_array if device is None else device_put(external_array, device)
    if copy is False:
        raise BufferError("cranax copies DLPack data into its own buffer; copy=False cannot be honoured")
    dev_type, _ = external_array.__dlpack_device__()
    if int(dev_type) != DLDeviceType.kDLCPU:
        raise BufferError(f"cranax imports DLPack data from the CPU only, got device type {int(dev_type)}")
    host = np.from_dlpack(external_array)
    if host.dtype not in _SUPPORTED:
        raise TypeError(f"from_dlpack: cranax does not support dtype {host.dtype}")
    return device_put(host, device)
