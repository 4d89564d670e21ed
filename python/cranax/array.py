"""``Array``: a handle to a device buffer that may still be computing (the core's ``DeviceArray``).

Operators and methods (``+``, ``x.sum()``, ``x[1:]``...) are installed by ``cranax.numpy``. Converting to
NumPy (``np.asarray(x)``), ``float(x)``, ``print(x)`` wait for the value. Mirrors ``jax.Array``.
"""
import enum
import itertools
import logging
import os
import warnings
import weakref

import numpy as np

from . import _core, _transport, dtypes
from .config import config, _transfer_guard_level, _validators
from .errors import JaxRuntimeError
from .core import AvalProperties, ShapedArray, Tracer, TypedScalar, get_aval, summarize_source, user_source
from ._pytree import register_pytree_node, tree_flatten, tree_leaves, tree_map
from .sharding import Mesh, NamedSharding, PartitionSpec, RemoteDevice, Shard, SingleDeviceSharding, get_mesh

__all__ = ["Array", "device_put", "devices", "block_until_ready"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types (those cranax names). Mirrors ``jax._src.dlpack.DLDeviceType``."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLROCM = 10


class _ArrayMeta(type):
    """``isinstance(x, Array)`` is True for tracers too, as for ``jax.Array`` (libraries test traced values so);
    code that needs a concrete array tests ``type(x)`` or excludes ``Tracer``."""

    def __instancecheck__(cls, x):
        return type.__instancecheck__(cls, x) or (cls is Array and (isinstance(x, Tracer)
                                                                  or type(x) in Array._virtual_subclasses))

    def __repr__(cls):
        # Under the alias, ``type(x)`` prints JAX's concrete class (``_alias`` sets ``_shown_as``); the class keeps
        # its real module and name, so pickle and cloudpickle still find it by reference.
        shown = cls.__dict__.get("_shown_as")
        return f"<class '{shown}'>" if shown else type.__repr__(cls)


_serials = itertools.count()


class _Deleted:
    """The buffer of a deleted (donated) Array: any use raises JAX's ``RuntimeError``; the executable's
    argument check raises it too (``rust/py/placement.rs``, through ``_deleted_message``)."""
    __slots__ = ("_deleted_message",)

    def __init__(self, message):
        self._deleted_message = message

    def __getattr__(self, name):
        raise RuntimeError(self._deleted_message)


class Array(AvalProperties, metaclass=_ArrayMeta):
    """An array on a device. ``shape``, ``dtype``, ``ndim``, ``size``, ``weak_type``; ``block_until_ready()``
    waits for pending work and returns ``self``. Mirrors ``jax.Array``."""

    __slots__ = ("_buf", "aval", "_npy", "_serial", "__weakref__")
    __array_priority__ = 100
    _virtual_subclasses = set()   # other types whose values isinstance(x, Array) accepts (typed key arrays)
    _shown_as = None   # the class path printed for this class (see _ArrayMeta.__repr__), None: its own

    @staticmethod
    def _from_buffer(buf, aval):
        a = Array.__new__(Array)
        a._buf = buf
        a.aval = aval
        a._npy = None
        # creation order: a user-staged trace tells the arrays it closes over (made before it began: JAX's
        # consts) from scalars made while it ran (literals there)
        a._serial = next(_serials)
        return a

    def __init__(self, *args, **kwargs):
        raise TypeError("Array cannot be constructed directly; use cranax.numpy.array or cranax.device_put")

    # --- properties (shape, dtype, ndim, size, weak_type, len come from AvalProperties)
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
        """The set of devices holding this array (its sharding's, also one its type carries)."""
        s = _shardings.get(id(self))
        if s is None and getattr(self.aval, "_sharding", None) is not None:
            s = self.sharding
        return set(s.device_set) if s is not None else {self._buf.device}

    @property
    def sharding(self):
        s = _shardings.get(id(self))
        if s is not None:
            return s
        t = getattr(self.aval, "_sharding", None)
        if t is not None:   # computed from arrays split over Explicit axes: the spec its type carries
            return t if isinstance(t.mesh, Mesh) else NamedSharding(get_mesh() or t.mesh, t.spec)
        return SingleDeviceSharding(self._buf.device)

    @property
    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self):
        return self.sharding.is_fully_addressable

    @property
    def addressable_shards(self):
        """Each local device's part: ``Shard(device, index, replica_id, data)``, in the mesh's device order."""
        return [s for s in self.global_shards if not isinstance(s.device, RemoteDevice)]

    @property
    def global_shards(self):
        sharding = self.sharding
        shard_aval = ShapedArray(sharding.shard_shape(self.shape), self.dtype, self.weak_type)
        seen = {}
        out = []
        for dev, idx in sharding.devices_indices_map(self.shape).items():
            key = tuple((sl.start, sl.stop) for sl in idx)
            rid = seen.get(key, 0)
            seen[key] = rid + 1
            data = None
            if not isinstance(dev, RemoteDevice):
                data = Array._from_buffer(_put(self[idx]._buf if idx else self._buf, dev, True), shard_aval)
            out.append(Shard(dev, idx, rid, data))
        return out

    @property
    def committed(self):
        """True when the array was placed with ``device_put(x, device)`` or computed from committed arrays."""
        t = type(self._buf)   # (the buffer's class says it, except a complex pair's)
        if t is _DeviceArray:
            return False
        return t is _CommittedArray or _is_committed(self._buf)

    def is_ready(self):
        return self._buf.is_ready()

    def block_until_ready(self):
        """Waits until the value is computed (raising any error from its computation); returns ``self``."""
        _block(self._buf)
        return self

    def copy_to_host_async(self):
        pass

    def is_deleted(self):
        """Whether ``delete()`` (or a jit donating it) has freed this array. Mirrors ``jax.Array.is_deleted``."""
        return type(self._buf) is _Deleted

    def delete(self):
        """Frees this array's buffer; any later use raises ``RuntimeError`` (``Array has been deleted with
        shape=float32[3].``). Mirrors ``jax.Array.delete``; a jit's donated arguments are deleted this way."""
        if type(self._buf) is not _Deleted:
            self._buf = _Deleted(f"Array has been deleted with shape={self.aval.str_short(short_dtypes=False)}.")
            self._npy = None

    # --- conversion to host
    def _value(self):
        v = self._npy
        if v is None:
            owner = self._buf.to_numpy()
            owner.flags.writeable = False
            # Hand out a view of a read-only owner: NumPy then refuses `setflags(write=True)`, so the host
            # copy can never drift from the device value (JAX's host views behave the same).
            v = owner.view()
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

    # --- DLPack (export; ``cranax.dlpack.from_dlpack`` imports)
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the array's host buffer: the read-only NumPy value that ``np.asarray`` also
        returns, so consumers alias it without a copy and keep it alive (that value is copied out of the core's
        buffer once, on the array's first host read; a complex array's two real planes are interleaved
        there). A consumer of a DLPack version
        below 1.0 cannot be told the data is read-only: it gets a fresh writable copy (``copy=False`` then
        raises BufferError), as does ``copy=True``. Raises BufferError for a ``dl_device`` other than the
        CPU."""
        if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
            raise BufferError(f"cranax exports arrays to the CPU (DLPack device (1, 0)) only, got {dl_device}")
        v = self._value()
        legacy = max_version is None or max_version[0] < 1
        if copy or legacy:
            if copy is False:
                raise BufferError("cranax arrays are read-only: a consumer of DLPack < 1.0 needs a copy, and "
                                  "copy=False forbids it")
            c = np.array(v)
            return c.__dlpack__(stream=stream) if legacy else c.__dlpack__(stream=stream, max_version=max_version)
        return v.__dlpack__(stream=stream, max_version=max_version, copy=False)

    def unsafe_buffer_pointer(self):
        """The address of the array's CPU buffer, as an int (waits for the value): to check aliasing, e.g. of
        a DLPack import. ValueError for an array on a GPU; TypeError for a complex array (cranax holds it as
        two real buffers). Mirrors ``jax.Array.unsafe_buffer_pointer``."""
        if type(self._buf) is ComplexBuffer:
            raise TypeError("unsafe_buffer_pointer: cranax holds a complex array as two real buffers")
        if type(self._buf) is _Deleted:
            raise JaxRuntimeError("INVALID_ARGUMENT: UnsafeBufferPointer( called on deleted or donated buffer")
        return self._buf.buffer_pointer()

    def __dlpack_device__(self):
        """``(DLDeviceType.kDLCPU, 0)``: exports go through the host buffer (a GPU array's is its copy)."""
        return (DLDeviceType.kDLCPU, 0)

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

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        shown = type(self).__dict__.get("_shown_as")
        raise TypeError(f"unhashable type: '{shown or type(self).__module__ + '.' + type(self).__name__}'")

    def __repr__(self):
        v = self._value()
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        if v.size == 0:
            return f"Array([], shape={v.shape}, {dtype_str})"
        width = np.get_printoptions()["linewidth"]
        s = np.array2string(v, separator=", ", prefix="Array(", suffix=",", max_line_width=width)
        # JAX's rule: when the dtype would overflow the last line, the separator widens to the prefix's width
        # (spaces, no line break: JAX 0.10.2 prints it so)
        last_line = len(s) - s.rfind("\n") + 1
        sep = " " * len("Array(") if last_line + len(dtype_str) + 2 > width else " "
        return f"Array({s},{sep}{dtype_str})"

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


class ComplexBuffer:
    """A complex array on a device as two real core buffers of its real and imaginary parts (float32 for
    complex64, float64 for complex128). The core knows only real dtypes: lowering splits each complex value
    into such a pair (``interpreters.lowering``), so every backend runs complex programs as real ones."""

    __slots__ = ("re", "im")

    def __init__(self, re, im):
        self.re = re
        self.im = im

    @property
    def device(self):
        return self.re.device

    def is_ready(self):
        return self.re.is_ready() and self.im.is_ready()

    def to_numpy(self):
        re, im = self.re.to_numpy(), self.im.to_numpy()
        out = np.empty(re.shape, np.complex64 if re.dtype == np.float32 else np.complex128)
        out.real = re
        out.imag = im
        return out


def _block(buf):
    if type(buf) is _Deleted:
        raise JaxRuntimeError("INVALID_ARGUMENT: BlockHostUntilReady() called on deleted or donated buffer")
    if type(buf) is ComplexBuffer:
        _core.block(buf.re)
        _core.block(buf.im)
    else:
        _core.block(buf)


def _put(buf, dev, commit):
    if type(buf) is ComplexBuffer:
        return ComplexBuffer(_core.put(buf.re, dev, commit), _core.put(buf.im, dev, commit))
    return _core.put(buf, dev, commit)


_DeviceArray, _CommittedArray = _core.DeviceArray, _core.CommittedArray


def _is_committed(buf):
    return _core.is_committed(buf.re if type(buf) is ComplexBuffer else buf)


def _device_ids(a):
    """The ids of the devices ``a`` is placed on, in its sharding's order (a mesh's, row-major)."""
    s = a.sharding
    mesh = getattr(s, "mesh", None)
    devs = getattr(mesh, "devices", None)
    return [d.id for d in devs.flat] if devs is not None else sorted(d.id for d in s.device_set)


def incompatible_devices(fun_name, names, leaves):
    """JAX's ValueError text for a jitted computation (``fun_name``, its argument leaves ``leaves`` named
    ``names``) whose committed arguments sit on different devices: the first committed argument and the first
    after it placed elsewhere. None when no such pair is found. Built only once the core has refused the call (its own
    check on the arrays' devices), so the steady-state call pays nothing for it."""
    first = None
    for i, x in enumerate(leaves):
        if not (isinstance(x, Array) and x.committed):
            continue
        ids = _device_ids(x)
        if first is None:
            first = (i, ids)
        elif ids != first[1]:
            j = first[0]

            def part(k, ids):
                a = leaves[k]
                name = names[k] if names and names[k] else f"args[{k}]"
                return (f"argument {name} of {fun_name} with shape {a.aval.str_short(short_dtypes=False)} and with "
                        f"device ids {ids} on platform {a.device.platform.upper()}")
            return (f"Received incompatible devices for jitted computation. Got {part(j, first[1])} and "
                    f"{part(i, ids)}")
    return None


def _check_traced_put(v, sharding):
    """JAX's error for ``device_put`` inside a traced function onto a mesh whose devices are not those of the
    function's arguments (the first argument whose type carries a mesh): one program runs on one set of
    devices."""
    mesh = getattr(sharding, "mesh", None)
    if getattr(mesh, "devices", None) is None:
        return
    trace = getattr(v, "_trace", None)
    invars = getattr(trace, "invars", None) or ()
    for i, var in enumerate(invars):
        s = getattr(var.aval, "_sharding", None)
        devs = getattr(getattr(s, "mesh", None), "devices", None)
        if devs is None:
            continue
        ids = [d.id for d in devs.flat]
        want = [d.id for d in mesh.devices.flat]
        if sorted(ids) == sorted(want):
            return
        dbg = getattr(trace, "debug", None)
        names = getattr(dbg, "arg_names", None) or ()
        name = names[i] if i < len(names) and names[i] else f"args[{i}]"
        platform = next(iter(devs.flat)).platform.upper()
        raise ValueError(
            f"Received incompatible devices for jitted computation. Got argument {name} of "
            f"{getattr(dbg, 'fun_name', '<unknown>')} with shape {var.aval.str_short(short_dtypes=False)} and with "
            f"device ids {ids} on platform {platform} and device_put inside jit with device ids {want} on platform "
            f"{next(iter(mesh.devices.flat)).platform.upper()} at {summarize_source(user_source())}")


def is_incompatible_devices(e):
    """Whether ``e`` is the core's refusal of committed arguments on different devices."""
    return type(e) is ValueError and str(e).startswith("Received incompatible devices for jitted computation ")


# Transfer guards (``jax.transfer_guard``): True while some guard option is set anywhere, so that the hot paths
# test one module global. Only host-to-device transfers are guarded: as on JAX's CPU backend, reading a CPU
# array is no transfer.
_guards_on = False
_GUARD_OPTIONS = ("jax_transfer_guard", "jax_transfer_guard_host_to_device")


def _guard_h2d(aval, explicit=False):
    """Applies the host-to-device guard to a transfer of ``aval`` (``explicit``: asked for by ``device_put``):
    "log"/"log_explicit" log it, "disallow"/"disallow_explicit" raise JaxRuntimeError with JAX's text."""
    level = _transfer_guard_level("host_to_device")
    if level == "allow" or explicit and level in ("log", "disallow"):
        return
    msg = (f"host-to-device transfer: aval={aval!r}, dst_sharding=SingleDeviceSharding(device={_default_device()!r}, "
           "memory_kind=device)")
    if level.startswith("log"):
        logging.getLogger("cranax").warning(msg)
        return
    raise JaxRuntimeError("INVALID_ARGUMENT: Disallowed " + msg)


def _arg_buffer(x, aval):
    """``_to_buffer`` for a host value passed as an argument of a compiled program (a guarded transfer)."""
    if _guards_on:
        _guard_h2d(aval)
    return _to_buffer(x, aval)


def _scalar_buffer(x, aval):
    """A core buffer for a Python scalar of ``aval``'s dtype (the jit fast path)."""
    if _guards_on:
        _guard_h2d(aval)
    dev = _default_device()
    if dev.platform != "cpu" or aval.dtype.kind == "c":
        return _to_buffer(x, aval)
    return _core.DeviceArray.from_scalar(x, _SHORT[aval.dtype])


_SHORT = {np.dtype(t): n for t, n in ((np.bool_, "bool"), (np.int8, "i8"), (np.uint8, "u8"),
                                      (np.int16, "i16"), (np.uint16, "u16"), (np.int32, "i32"), (np.uint32, "u32"),
                                      (np.int64, "i64"), (np.float16, "f16"), (np.float32, "f32"), (np.float64, "f64"))}


def _to_buffer(x, aval=None):
    """A core ``DeviceArray`` holding ``x`` (a NumPy value, Python scalar or TypedScalar) as ``aval``'s dtype."""
    if isinstance(x, Array) and not isinstance(x, Tracer) and (aval is None or (aval.shape == x.aval.shape and aval.dtype == x.aval.dtype)):
        return x._buf
    if aval is None:
        aval = get_aval(x)
    if isinstance(x, TypedScalar):
        x = x.val
    arr = np.asarray(x)
    if arr.dtype != aval.dtype:
        with np.errstate(over="ignore", invalid="ignore"):
            arr = arr.astype(aval.dtype)
    if arr.dtype.kind == "c":
        buf = ComplexBuffer(_core.DeviceArray.from_numpy(arr.real.copy()),
                            _core.DeviceArray.from_numpy(arr.imag.copy()))
    else:
        buf = _core.DeviceArray.from_numpy(arr)
    dev = _default_device()
    if dev.platform != "cpu":
        buf = _put(buf, dev, False)
    return buf


def _from_host(x, dtype=None, weak_type=None, explicit=False):
    """An Array from a NumPy array, Python scalar or nested lists (host data); a transfer the transfer guards
    see (``explicit`` when ``device_put`` asked for it)."""
    if isinstance(x, TypedScalar):
        aval = x.aval
    elif isinstance(x, (bool, int, float, complex)) and dtype is None:
        aval = get_aval(x)
    else:
        arr = np.asarray(x)
        if arr.dtype == object:
            raise TypeError(f"cranax does not support dtype object (got a value of type {type(x).__name__})")
        dt = dtypes.canonicalize_dtype(arr.dtype if dtype is None else dtype)
        aval = ShapedArray(arr.shape, dt, bool(weak_type))
        x = arr
    if _guards_on:
        _guard_h2d(aval, explicit)
    return Array._from_buffer(_to_buffer(x, aval), aval)


def _resolve_device(device):
    """A core Device from a Device, a platform name ("cpu", "gpu") or None (the default device)."""
    if device is None:
        return _default_device()
    if isinstance(device, _core.Device):
        return device
    if isinstance(device, str):
        return devices(device)[0]
    d = getattr(device, "_device_set", None)  # a sharding-like object holding one device
    if d:
        return next(iter(d))
    raise TypeError(f"device_put: expected a Device, a platform name or None for device, got {type(device).__name__}")


# Arrays placed with a sharding over several devices: id(array) -> its sharding (dropped with the array). The
# data is one host buffer on the mesh's first device; shards are slices of it (CPU devices share memory).
_shardings = {}


def _with_sharding(a, sharding):
    if len(sharding.device_set) <= 1 and getattr(sharding, "spec", None) is None:
        return a
    sharding.shard_shape(a.shape)   # IndivisibleError as JAX
    if getattr(sharding, "spec", None) is not None:
        # JAX's sharding in types: a split over Explicit mesh axes shows in the aval (``float32[8@i,3]``)
        aval = ShapedArray(a.aval.shape, a.aval.dtype, a.aval.weak_type, sharding=sharding)
        if aval._sharding is not None:
            a.aval = aval
    _shardings[id(a)] = sharding
    weakref.finalize(a, _shardings.pop, id(a), None)
    return a


def _multi_device(device):
    """Whether ``device`` is a sharding kept on the arrays put with it: over several devices, or a
    ``NamedSharding`` (its mesh, of one device too, is what results computed from them are placed on)."""
    d = getattr(device, "device_set", None)
    return d is not None and not isinstance(device, _core.Device) and (len(d) > 1 or hasattr(device, "spec"))


def device_put(x, device=None, *, may_alias=None, donate=None):
    """Puts ``x`` (a pytree of NumPy arrays, Python scalars, lists or Arrays) on ``device`` and returns Arrays.
    With ``device`` given the results are *committed* to it (computations on them run there); with
    ``device=None`` host data goes to the default device uncommitted and Arrays are returned as they are.
    Unsupported dtypes raise ``TypeError`` (float64/int64 on a GPU too). Mirrors ``jax.device_put``."""
    if isinstance(device, PartitionSpec):   # JAX: a spec is laid out on the mesh ``set_mesh`` installed
        mesh = get_mesh()
        if mesh is None:
            raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put")
        device = NamedSharding(mesh, device)
    if _multi_device(device):
        first = next(iter(device.mesh.devices.flat)) if hasattr(device, "mesh") else sorted(
            device.device_set, key=lambda d: d.id)[0]

        def put_sharded(v):
            if isinstance(v, Tracer):
                _check_traced_put(v, device)
                return v
            return _with_sharding(device_put(v, first), device)
        return tree_map(put_sharded, x)
    dev = None if device is None else _resolve_device(device)

    def put(v):
        if isinstance(v, Tracer):
            return v
        if isinstance(v, Array):
            if dev is None:
                return v
            return Array._from_buffer(_put(v._buf, dev, True), v.aval)
        a = _from_host(v, explicit=True)
        if dev is None:
            return a
        return Array._from_buffer(_put(a._buf, dev, True), a.aval)
    return tree_map(put, x)


_KNOWN_PLATFORMS = ("cpu", "gpu")
_PLATFORM_ALIASES = {"cuda": "gpu", "rocm": "gpu", "metal": "gpu", "vulkan": "gpu", "wgpu": "gpu", "host": "cpu"}


def _platforms():
    """The platforms in use, in priority order, from ``jax_platforms`` (default: cpu, then gpu)."""
    spec = config.jax_platforms
    if not spec:
        return ["cpu", "gpu"]
    out = []
    for p in str(spec).split(","):
        p = p.strip().lower()
        if not p:
            continue
        p = _PLATFORM_ALIASES.get(p, p)
        if p not in _KNOWN_PLATFORMS:
            raise RuntimeError(f"Unknown platform {p!r} in jax_platforms={spec!r}; known platforms: cpu, gpu")
        if p not in out:
            out.append(p)
    return out


def _platform_devices(p):
    return list(_core.devices()) if p == "cpu" else list(_core.gpu_devices())


def _default_device():
    """The device uncommitted computations and new arrays go to (``jax_default_device``, else the first
    device of the first platform in ``jax_platforms``, else the CPU)."""
    global _default_cache
    d = _default_cache
    if d is None:
        d = _compute_default_device()
        _default_cache = d
        _core.set_default_device(d)
    return d


_default_cache = None


def _compute_default_device():
    d = config.jax_default_device
    if d is not None:
        if isinstance(d, str):
            return devices(d)[0]
        if not isinstance(d, _core.Device):
            raise TypeError(f"jax_default_device must be a Device or a platform name, got {type(d).__name__}")
        return d
    for p in _platforms():
        devs = _platform_devices(p)
        if devs:
            return devs[0]
    plats = _platforms()
    raise RuntimeError(f"no device available for jax_platforms={','.join(plats)}"
                       + (f" ({_core.gpu_unavailable_reason()})" if "gpu" in plats else ""))


def _on_config(name, value):
    global _default_cache, _guards_on
    if name in _GUARD_OPTIONS:
        _guards_on = any(config._values[n] is not None or config._override_count(n) for n in _GUARD_OPTIONS)
    if name in ("jax_default_device", "jax_platforms", "jax_platform_name"):
        _default_cache = None
        _core.set_default_device(None)
        if name == "jax_platforms" or value is not None:
            _default_device()


def _device_count_wanted(n):
    """The CPU device count ``jax_num_cpu_devices=n`` asks for (the core's rule for the environment)."""
    if n is not None and n >= 0:
        return min(max(n, 1), 1024)
    for f in os.environ.get("XLA_FLAGS", "").split():
        if f.startswith("--xla_force_host_platform_device_count="):
            try:
                return min(max(int(f.split("=", 1)[1]), 1), 1024)
            except ValueError:
                pass
    return 1


def _check_num_cpu_devices(name, value, _typed=_validators["jax_num_cpu_devices"]):
    """``jax_num_cpu_devices``: JAX's type check, then the count handed to the core, which reads it when the
    CPU devices start (on first use). The core cannot say whether they have: they are started here with the
    new count, and a different count found means they already were: JAX's RuntimeError (the old setting kept)."""
    value = _typed(name, value)
    if value == config.jax_num_cpu_devices:
        return value
    old = os.environ.get("CRANAX_NUM_CPU_DEVICES")
    if value is not None and value >= 0:
        os.environ["CRANAX_NUM_CPU_DEVICES"] = str(value)
    else:
        os.environ.pop("CRANAX_NUM_CPU_DEVICES", None)
    if len(_core.devices()) != _device_count_wanted(value):
        if old is None:
            os.environ.pop("CRANAX_NUM_CPU_DEVICES", None)
        else:
            os.environ["CRANAX_NUM_CPU_DEVICES"] = old
        raise RuntimeError(f"{name} config should be updated before backends are initialized i.e. before any JAX "
                           "operation is executed. You should initialize this config immediately after `import jax`.")
    return value


_validators["jax_num_cpu_devices"] = _check_num_cpu_devices


def _install_config_listener():
    config._add_listener(_on_config)
    if config.jax_default_device is not None or config.jax_platforms:
        try:
            if config.jax_default_device is None and _platforms()[0] == "cpu":
                # the core's default already is the CPU: listing the devices now would fix their number
                # before the program can set XLA_FLAGS (JAX reads it when a device is first used)
                return
            _default_device()
        except RuntimeError:
            pass  # raised again where a device is needed


def devices(backend=None):
    """Every device of the platforms in use (``jax_platforms``; default cpu then gpu), or those of ``backend``
    ("cpu", "gpu"), e.g. ``[CpuDevice(id=0), GpuDevice(id=0)]``. Each has ``platform``, ``device_kind`` (the
    adapter name for a GPU) and ``description``. Mirrors ``jax.devices``."""
    plats = _platforms()
    if backend is not None:
        b = _PLATFORM_ALIASES.get(str(backend).lower(), str(backend).lower())
        devs = _platform_devices(b) if b in _KNOWN_PLATFORMS and b in plats else []
        if not devs:
            why = ""
            if b == "gpu":
                why = (" (excluded by jax_platforms)" if "gpu" not in plats
                       else f" ({_core.gpu_unavailable_reason()})")
            avail = sorted({d.platform for p in plats for d in _platform_devices(p)})
            raise RuntimeError(f"Unknown backend {backend!r}{why}; available: {', '.join(avail) or 'none'}")
        return _global(devs)
    return _global([d for p in plats for d in _platform_devices(p)])


def _global(devs):
    """This process's CPU devices among every process's, in process order (one list per run)."""
    st = _transport.state
    if st.process_count == 1:
        return devs
    local = [d for d in devs if d.platform == "cpu"]
    out = []
    for p in range(st.process_count):
        if p == st.process_index:
            out.extend(local)
        else:
            out.extend(RemoteDevice((p << 17) | i, p) for i in range(len(local)))
    return out


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices this process drives (after ``cranax.distributed.initialize``, ``process_index`` may name
    another process: its devices as ``jax.devices()`` lists them). Mirrors ``jax.local_devices``."""
    if process_index is None or process_index == _transport.state.process_index:
        devs = devices(backend)
        return [d for d in devs if not isinstance(d, RemoteDevice)]
    return [d for d in devices(backend) if d.process_index == process_index]


def device_count(backend=None):
    """The number of devices of every process. Mirrors ``jax.device_count``."""
    return len(devices(backend))


def local_device_count(backend=None):
    """The number of devices this process drives. Mirrors ``jax.local_device_count``."""
    return len(local_devices(backend=backend))


def process_count(backend=None):
    """The number of processes in the computation (1 unless ``cranax.distributed.initialize`` joined an MPI
    run). Mirrors ``jax.process_count``."""
    return _transport.state.process_count


def process_index(backend=None):
    """This process's index (its MPI rank; 0 in a single-process run). Mirrors ``jax.process_index``."""
    return _transport.state.process_index


def process_indices(backend=None):
    """The indices of the processes. Mirrors ``jax.process_indices``."""
    return list(range(_transport.state.process_count))


def _renamed(name, old, fn):
    """JAX 0.10.2's deprecated alias ``name`` of ``fn``, warning with JAX's own text (which says ``old``)."""
    def alias(backend=None):
        warnings.warn(f"jax.{old} has been renamed to jax.{fn.__name__}. This alias will eventually be removed; "
                      f"please update your code.", UserWarning, stacklevel=2)
        return fn(backend)
    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = f"Deprecated alias of ``{fn.__name__}`` (warns as JAX does). Mirrors ``jax.{name}``."
    return alias


host_count = _renamed("host_count", "process_count", process_count)
host_id = _renamed("host_id", "process_index", process_index)
host_ids = _renamed("host_ids", "process_indexs", process_indices)


def device_get(x):
    """The pytree ``x`` with every array leaf copied to the host as a NumPy array (read-only for device
    arrays, as JAX's); leaves without ``__array__`` (Python scalars, None, strings) and tracers are returned as
    they are. Waits for pending computations. Mirrors ``jax.device_get``."""
    def get(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        to_array = getattr(leaf, "__array__", None)
        return leaf if to_array is None else to_array()
    return tree_map(get, x)


def default_backend():
    return _default_device().platform


def block_until_ready(x):
    """Waits for every Array in the pytree ``x``; returns ``x``. Mirrors ``jax.block_until_ready``."""
    if type(x) is Array:   # one array, the common case: no tree walk (it was most of a µs-long call's wait)
        buf = x._buf
        if type(buf) is ComplexBuffer or type(buf) is _Deleted:
            _block(buf)
        else:
            _core.block(buf)
        return x
    for leaf in tree_leaves(x):
        if type(leaf) is Array:   # the common case, without the metaclass's isinstance hook
            _block(leaf._buf)
        elif isinstance(leaf, Array) and not isinstance(leaf, Tracer):
            _block(leaf._buf)
    return x


_install_config_listener()


class TypedNdArray(np.ndarray):
    """A host NumPy array carrying a JAX type: what JAX hands back for a ``float0`` tangent or cotangent
    (the derivative with respect to, or of, an integer or boolean value), printed as JAX 0.10.2 prints it,
    ``TypedNdArray((b'',), dtype=void)``. Mirrors ``jax._src.literals.TypedNdArray``."""

    __slots__ = ("_weak_type",)

    def __new__(cls, val, weak_type=False):
        obj = np.asarray(val).view(cls)
        obj._weak_type = bool(weak_type)
        return obj

    def __array_finalize__(self, obj):
        self._weak_type = getattr(obj, "_weak_type", False)

    @property
    def aval(self):
        return ShapedArray(self.shape, self.dtype, self._weak_type)

    @property
    def weak_type(self):
        return self._weak_type

    @property
    def val(self):
        return np.asarray(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # NumPy's own arrays in and out (as JAX's): arithmetic on it is plain NumPy
        inputs = tuple(np.asarray(x) if isinstance(x, TypedNdArray) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, TypedNdArray) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __repr__(self):
        prefix = "TypedNdArray("
        dtype_str = f"dtype={self.dtype.name}, weak_type=True)" if self._weak_type else f"dtype={self.dtype.name})"
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            s = f"[], shape={self.shape}"
        else:
            s = np.array2string(np.asarray(self), prefix=prefix, suffix=",", separator=", ", max_line_width=width)
        last = len(s) - s.rfind("\n") + 1
        sep = " " * len(prefix) if last + len(dtype_str) + 1 > width else " "
        return f"{prefix}{s},{sep}{dtype_str}"

    def __reduce__(self):
        return (TypedNdArray, (np.asarray(self), self._weak_type))


def float0_zeros(shape):
    """JAX's float0 zeros of ``shape`` for the user (a tangent or cotangent of an integer/bool value)."""
    return TypedNdArray(np.zeros(shape, dtypes.float0))


class _Float0Out:
    """A float0 output of a traced function (jit, make_jaxpr): the core has no float0 values, so it travels
    in the output tree (a node with no leaves, its shape the node data) and comes back as float0 zeros."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)


def float0_out_tree(out):
    """``(leaves, treedef)`` of a traced function's ``out`` with each float0 array moved into the tree."""
    leaves, tree = tree_flatten(out)
    if not any(getattr(x, "dtype", None) == dtypes.float0 for x in leaves):
        return leaves, tree
    return tree_flatten(tree_map(lambda x: _Float0Out(np.shape(x)) if getattr(x, "dtype", None) == dtypes.float0
                                 else x, out))


register_pytree_node(_Float0Out, lambda n: ((), n.shape), lambda shape, _: float0_zeros(shape))
