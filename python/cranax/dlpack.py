"""``jax.dlpack``: exchanging arrays with other libraries through DLPack.

Export is ``Array.__dlpack__`` (consumers such as ``np.from_dlpack`` or ``torch.from_dlpack`` alias the array's
read-only host buffer, no copy). :func:`from_dlpack` imports without a copy where it can, as JAX does on the
CPU: a C-contiguous buffer whose data is 64-byte aligned and whose dtype cranax holds as it is becomes the
storage of the new array (the core's ``DeviceArray.from_numpy_alias`` borrows it and holds the producer
alive); anything else is copied once.

Where cranax copies and JAX does not (the limits, precisely):

- Export reads the array's host value, the read-only NumPy array ``np.asarray(x)`` returns. It is made once
  per array, by one copy out of the core's buffer on the first host read (on the CPU backend too: the core's
  buffers are not handed to NumPy); every export after that, and ``np.asarray``, alias it with no copy. JAX's
  CPU export aliases the device buffer itself.
- Complex arrays: the core holds one as two real planes (real, imaginary). Export costs nothing more (the
  host value above is where the planes are interleaved, once); import always copies once, splitting the
  interleaved data into the two planes, so a complex array never aliases the producer's memory
  (``copy=False`` is a ValueError). Removing this copy needs a core that computes on interleaved complex
  storage.
"""
import numpy as np

from . import _core, dtypes
from .config import config
from .array import Array, DLDeviceType, _put, _resolve_device, device_put
from .core import ShapedArray

__all__ = ["from_dlpack", "is_supported_dtype", "DLDeviceType", "SUPPORTED_DTYPES"]

# The dtypes a cranax array can hold (JAX's list also has uint64 and the ml_dtypes types).
SUPPORTED_DTYPES = tuple(np.dtype(d) for d in dtypes.supported_dtypes)
_SUPPORTED = frozenset(SUPPORTED_DTYPES)

# JAX 0.10.2's text when copy=False cannot be honoured (XLA's alignment message, two spaces included).
_NEEDS_COPY = ("Specified input which requires a copy since the source data buffer is not aligned to 64 bytes.  "
               "However copy=False. Set copy=True or copy=None to perform the requested operation.")


def is_supported_dtype(dtype):
    """True if arrays of ``dtype`` can cross DLPack into or out of cranax. Raises TypeError for None and for
    what is not a dtype. Mirrors ``jax.dlpack.is_supported_dtype``."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in _SUPPORTED


class _Exported:
    """A capsule the producer already made, offered to ``np.from_dlpack`` (which asks ``__dlpack__`` again)."""

    __slots__ = ("capsule", "device")

    def __init__(self, capsule, device):
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def _single_device(device):
    """``device`` as one core Device (None stays None); a sharding over several devices is a ValueError."""
    if device is None or isinstance(device, _core.Device):
        return device
    device_set = getattr(device, "device_set", None)
    if device_set is not None and len(device_set) > 1:
        raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, but a Sharding "
                         f"with {len(device_set)} devices was provided.")
    return _resolve_device(device)


def from_dlpack(external_array, device=None, copy=None):
    """A cranax Array with the contents of ``external_array``: any object with ``__dlpack__`` and
    ``__dlpack_device__`` on the CPU (a NumPy array, a CPU torch tensor, a cranax Array).

    Without a copy (the result aliases the producer's memory and keeps the producer alive; later writes to
    that memory show through, as in JAX) when the data is C-contiguous, 64-byte aligned, of a dtype cranax
    holds unchanged (not complex: cranax splits complex data into two real planes; not float64/int64 with
    x64 off) and ``device`` is None or a CPU device. Otherwise the data is copied once (dtypes canonicalized as ``jnp.asarray`` does). ``copy=True`` always
    copies, as JAX 0.10.2 does on the CPU; ``copy=False`` raises ValueError with
    JAX's text when a copy is needed for layout or alignment. The result is committed to its device, as
    JAX's is. A cranax Array is returned as it is (or placed on ``device``).

    Raises TypeError for an object without the DLPack methods or an unsupported dtype, BufferError for
    data on another device than the CPU (and, from NumPy, for a read-only array: JAX asks for a legacy
    capsule, which cannot say "read-only"), ValueError for a sharding over several devices. Mirrors
    ``jax.dlpack.from_dlpack``."""
    device = _single_device(device)
    if not (hasattr(external_array, "__dlpack__") and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    if isinstance(external_array, Array) and copy is not True:
        return external_array if device is None else device_put(external_array, device)
    dl_device = external_array.__dlpack_device__()
    if int(dl_device[0]) != DLDeviceType.kDLCPU:
        raise BufferError(f"cranax imports DLPack data from the CPU only, got device type {int(dl_device[0])}")
    # As JAX: a legacy capsule, stream None (a CPU producer such as torch refuses any other stream).
    host = np.from_dlpack(_Exported(external_array.__dlpack__(stream=None), dl_device))
    if host.dtype == np.uint64 and not config.jax_enable_x64:
        canonical = np.dtype(np.uint32)   # as JAX canonicalizes it with x64 off (cranax has no uint64)
    elif host.dtype in _SUPPORTED:
        canonical = dtypes.canonicalize_dtype(host.dtype)
    else:
        raise TypeError(f"from_dlpack: cranax does not support dtype {host.dtype}")
    dev = _core.devices()[0] if device is None else device
    buf = None
    if not copy and dev.platform == "cpu" and canonical == host.dtype and host.dtype.kind != "c":
        buf = _core.DeviceArray.from_numpy_alias(host)
        if buf is None and copy is False and host.size:
            raise ValueError(_NEEDS_COPY)
    if buf is None:
        if copy is False and host.dtype.kind == "c" and host.size:
            raise ValueError("from_dlpack: cranax holds complex arrays as two real planes, so importing "
                             f"{host.dtype} needs a copy; copy=False forbids it")
        return device_put(np.array(host, dtype=canonical), dev)
    return Array._from_buffer(_put(buf, dev, True), ShapedArray(host.shape, host.dtype))
