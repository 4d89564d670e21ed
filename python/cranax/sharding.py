"""``cranax.sharding``: JAX's sharding types (``jax.sharding``).

A ``Mesh`` arranges devices (several CPU devices with ``CRANAX_NUM_CPU_DEVICES=N``) in a named grid and a
``NamedSharding`` says how an array's dimensions split over its axes: ``shard_shape``, ``devices_indices_map``
and an array's ``addressable_shards`` follow JAX exactly. The data of a sharded array is one host buffer
(CPU devices share the host's memory) and each shard is a slice of it placed on its device; computations run
unsharded, so results equal the unsharded program's. ``shard_map`` runs its body once per mesh position.
"""
import collections as _collections
import dataclasses as _dc
import enum as _enum

import numpy as _np

from . import core as _tracing   # (core is mid-import when array imports this module: read Tracer late)
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "PartitionSpec", "Mesh", "AbstractMesh", "AxisType",
           "make_single_device_sharding", "get_abstract_mesh", "get_mesh", "set_mesh", "use_abstract_mesh", "Shard",
           "RemoteDevice", "partition_axes",
           "IndivisibleError", "make_mesh", "AbstractDevice", "ManualAxisType", "reshard", "auto_axes",
           "explicit_axes"]


class RemoteDevice:
    """A CPU device of another process of a multi-process run (``jax.devices()`` lists them after
    ``cranax.distributed.initialize``); nothing runs on it from here."""

    __slots__ = ("id", "process_index")
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id, process_index):
        self.id, self.process_index = id, process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __eq__(self, other):
        return type(other) is RemoteDevice and other.id == self.id

    def __hash__(self):
        return hash(("remote", self.id))


class IndivisibleError(ValueError):
    """A sharding splits a dimension into parts that do not divide it (JAX's error)."""


class Sharding:
    """Base class: how an array is laid out across devices. ``device_set`` is the set of devices."""

    @property
    def device_set(self):
        raise NotImplementedError

    @property
    def _device_set(self):     # what device_put reads off a sharding-like object
        return self.device_set

    @property
    def is_fully_replicated(self):
        return True

    @property
    def is_fully_addressable(self):
        return True

    @property
    def num_devices(self):
        return len(self.device_set)

    @property
    def memory_kind(self):
        return None

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def addressable_devices_indices_map(self, global_shape):
        return {d: tuple(slice(None) for _ in global_shape) for d in self.device_set}

    def devices_indices_map(self, global_shape):
        return self.addressable_devices_indices_map(global_shape)

    def is_equivalent_to(self, other, ndim):
        return isinstance(other, Sharding) and self.device_set == other.device_set


class SingleDeviceSharding(Sharding):
    """The whole array on ``device``. Mirrors ``jax.sharding.SingleDeviceSharding``."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device

    @property
    def device_set(self):
        return {self._device}

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


def make_single_device_sharding(device):
    return SingleDeviceSharding(device)


class PartitionSpec(tuple):
    """Per array dimension, the mesh axis name(s) it is split over, or None. Mirrors
    ``jax.sharding.PartitionSpec`` (``P('x', None)``)."""

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        return tuple.__new__(cls, partitions)

    def __repr__(self):
        return "P" + tuple.__repr__(self)

    def __eq__(self, other):
        return isinstance(other, tuple) and tuple(self) == tuple(other)

    def __hash__(self):
        return tuple.__hash__(self)


class AxisType(_enum.Enum):
    """The kind of a mesh axis (``Auto``, ``Explicit``, ``Manual``), as ``jax.sharding.AxisType``."""
    Auto = _enum.auto()
    Explicit = _enum.auto()
    Manual = _enum.auto()

    def __repr__(self):
        return self.name


class Mesh:
    """Devices arranged in a named grid: ``Mesh(devices, axis_names)``, ``devices`` an array of distinct
    devices with one dimension per name. Raises ``ValueError`` for repeated devices or a names/dims mismatch.
    Mirrors ``jax.sharding.Mesh``."""

    # built in __new__, as JAX's (its missing-argument errors name ``Mesh.__new__()``)
    def __new__(cls, devices, axis_names, axis_types=None):
        self = object.__new__(cls)
        devs = _np.asarray(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devs.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal the length of its "
                             f"second argument (`axis_names`), but got devices.ndim == {devs.ndim} and "
                             f"len(axis_names) == {len(axis_names)}.")
        if len({id(d) for d in devs.flat}) != devs.size:
            raise ValueError(f"Mesh devices must be distinct, got {list(devs.flat)}")
        self.devices = devs
        self.axis_names = axis_names
        self.axis_types = tuple(axis_types) if axis_types else (AxisType.Auto,) * len(axis_names)
        return self

    def __reduce__(self):   # (pickle and copy would call __new__ without its arguments)
        return (type(self), (self.devices, self.axis_names, self.axis_types))

    @property
    def shape(self):
        return _collections.OrderedDict(zip(self.axis_names, self.devices.shape))   # JAX's type

    @property
    def size(self):
        return self.devices.size

    @property
    def empty(self):
        return self.devices.size == 0

    @property
    def device_ids(self):
        return _np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Mesh) and self.axis_names == other.axis_names and \
            list(self.devices.flat) == list(other.devices.flat)

    def __hash__(self):
        return hash((self.axis_names, tuple(self.devices.flat)))

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def local_devices(self):
        return [d for d in self.devices.flat if not isinstance(d, RemoteDevice)]

    def __str__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({sizes}, axis_types={self.axis_types!r})"

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes!r}, axis_names={self.axis_names!r}, "
                f"axis_types={self.axis_types!r})")


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A mesh of ``prod(axis_shapes)`` devices (the first ones of ``jax.devices()`` unless ``devices``), axes
    ``Explicit`` by default as in JAX 0.10.2. ``ValueError`` when there are not that many devices. Mirrors
    ``jax.make_mesh``."""
    from .array import devices as _all_devices   # array imports this module
    axis_shapes = tuple(int(a) for a in axis_shapes)
    n = int(_np.prod(axis_shapes, dtype=_np.int64))
    devs = list(devices) if devices is not None else [d for d in _all_devices() if d.platform == "cpu"]
    if len(devs) < n:
        raise ValueError(f"Number of devices {len(devs)} must be >= the product of mesh_shape {axis_shapes}")
    arr = _np.empty(n, dtype=object)
    arr[:] = devs[:n]
    return Mesh(arr.reshape(axis_shapes), axis_names,
                axis_types if axis_types is not None else (AxisType.Explicit,) * len(axis_shapes))


def partition_axes(p):
    """The mesh axis names one ``PartitionSpec`` entry splits a dimension over (None: none)."""
    return () if p is None else (tuple(p) if isinstance(p, tuple) else (p,))


class NamedSharding(Sharding):
    """An array split over ``mesh``'s axes as ``spec`` says (each device's block: ``devices_indices_map``).
    Raises ``ValueError`` for a spec naming an axis the mesh lacks. Mirrors ``jax.sharding.NamedSharding``."""

    def __init__(self, mesh, spec, *, memory_kind=None):
        for p in spec:
            for name in (p if isinstance(p, tuple) else (p,)):
                if name is not None and name not in mesh.axis_names:
                    raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: "
                                     f"{tuple(mesh.axis_names)}.")
        self.mesh = mesh
        self.spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)

    @property
    def device_set(self):
        devs = getattr(self.mesh, "devices", None)   # an AbstractMesh has none
        return set(devs.flat) if devs is not None else set()

    def update(self, *, mesh=None, spec=None, memory_kind=None):
        """This sharding with ``mesh`` and/or ``spec`` replaced (JAX's ``NamedSharding.update``)."""
        return NamedSharding(self.mesh if mesh is None else mesh, self.spec if spec is None else spec)

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and self.spec == other.spec

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        kind = "" if isinstance(self.mesh, AbstractMesh) else ", memory_kind=device"   # as JAX prints them
        return f"NamedSharding(mesh={self.mesh!s}, spec={self.spec!r}{kind})"

    def _factors(self, ndim):
        shape = self.mesh.shape
        f = [1] * ndim
        for d, p in enumerate(tuple(self.spec)[:ndim]):
            for a in partition_axes(p):
                f[d] *= shape[a]
        return f

    @property
    def is_fully_replicated(self):
        shape = self.mesh.shape
        return all(shape[a] == 1 for p in self.spec for a in partition_axes(p))

    @property
    def is_fully_addressable(self):
        return not any(isinstance(d, RemoteDevice) for d in self.device_set)

    @property
    def addressable_devices(self):
        return {d for d in self.device_set if not isinstance(d, RemoteDevice)}

    def shard_shape(self, global_shape):
        f = self._factors(len(global_shape))
        for d, (n, k) in enumerate(zip(global_shape, f)):
            if n % k:
                raise IndivisibleError(
                    f"Sharding {self!r} implies that array axis {d} is partitioned {k} times, but the dimension "
                    f"size is {n} (full shape: {tuple(global_shape)}, per-dimension tiling factors: {f} should "
                    f"evenly divide the shape)")
        return tuple(n // k for n, k in zip(global_shape, f))

    def devices_indices_map(self, global_shape):
        """Device → the tuple of slices of the global array it holds (row-major over the mesh)."""
        block = self.shard_shape(global_shape)
        names = self.mesh.axis_names
        sizes = self.mesh.shape
        out = {}
        for pos in _np.ndindex(self.mesh.devices.shape):
            where = dict(zip(names, pos))
            idx = []
            for d in range(len(global_shape)):
                p = tuple(self.spec)[d] if d < len(self.spec) else None
                k = 0
                for a in partition_axes(p):
                    k = k * sizes[a] + where[a]
                idx.append(slice(k * block[d], (k + 1) * block[d]) if partition_axes(p) else slice(None))
            out[self.mesh.devices[pos]] = tuple(idx)
        return out

    def addressable_devices_indices_map(self, global_shape):
        return {d: i for d, i in self.devices_indices_map(global_shape).items()
                if not isinstance(d, RemoteDevice)}


class AbstractMesh:
    """A mesh's axis names and sizes without devices. ``get_abstract_mesh()`` gives the empty one when no mesh
    is set. Mirrors ``jax.sharding.AbstractMesh``."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = tuple(axis_types) if axis_types else (AxisType.Auto,) * len(self.axis_names)

    @property
    def shape(self):
        return _collections.OrderedDict(zip(self.axis_names, self.axis_sizes))   # JAX's type

    @property
    def size(self):
        return int(_np.prod(self.axis_sizes, dtype=_np.int64))

    @property
    def empty(self):
        return not self.axis_names

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and (self.axis_sizes, self.axis_names) == \
            (other.axis_sizes, other.axis_names)

    def __hash__(self):
        return hash((self.axis_sizes, self.axis_names))

    def __repr__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items()) if self.axis_names else "()"
        return f"AbstractMesh({sizes}, axis_types={self.axis_types!r})"


_mesh_stack = [None]


def get_abstract_mesh():
    """The abstract form of the mesh ``set_mesh`` installed; an empty ``AbstractMesh`` when none."""
    m = _mesh_stack[-1]
    if m is None:
        return AbstractMesh((), ())
    return AbstractMesh(tuple(m.devices.shape), m.axis_names, m.axis_types)


def get_mesh():
    """The mesh ``set_mesh`` installed, or None."""
    return _mesh_stack[-1]


class set_mesh:
    """Installs ``mesh`` as the current mesh (as a context manager: for the block)."""

    def __init__(self, mesh):
        self._prev = _mesh_stack[-1]
        _mesh_stack[-1] = mesh

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _mesh_stack[-1] = self._prev
        return False


def use_abstract_mesh(mesh):
    """A context manager making ``mesh`` current for the block (cranax: nothing else changes)."""
    return set_mesh(_mesh_stack[-1])


class Shard:
    """One device's part of an array: ``device``, ``index`` (slices of the global array), ``replica_id`` and
    ``data`` (an Array on ``device``). Mirrors ``jax.Shard``."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
                f"data={self.data})")


@_dc.dataclass(frozen=True)
class AbstractDevice:
    """A device as a mesh describes it without the device itself: ``device_kind``, ``num_cores``,
    ``platform``. Mirrors ``jax.sharding.AbstractDevice``."""
    device_kind: str
    num_cores: object
    platform: str


@_dc.dataclass(frozen=True, kw_only=True, repr=False)
class ManualAxisType:
    """The mesh axes over which a value inside ``shard_map`` varies, is unreduced or reduced (frozensets of
    axis names). ``ValueError`` when ``varying`` meets ``unreduced`` or ``reduced``. Mirrors
    ``jax.sharding.ManualAxisType``."""
    varying: frozenset = frozenset()
    unreduced: frozenset = frozenset()
    reduced: frozenset = frozenset()

    def __post_init__(self):
        for f in ("varying", "unreduced", "reduced"):
            object.__setattr__(self, f, frozenset(getattr(self, f)))
        if self.varying & self.unreduced:
            raise ValueError("varying and unreduced cannot have common mesh axes. Got"
                             f" varying={self.varying} and unreduced={self.unreduced}")
        if self.varying & self.reduced:
            raise ValueError("varying and reduced cannot have common mesh axes. Got"
                             f" varying={self.varying} and reduced={self.reduced}")


def reshard(xs, out_shardings):
    """``xs`` (a pytree) placed by ``out_shardings`` (a sharding, or a pytree prefix of them; None leaves a
    value as it is); traced values pass unchanged (cranax computes unsharded). Mirrors
    ``jax.sharding.reshard`` (= ``jax.reshard``)."""
    from .array import device_put   # array imports this module
    leaves, tree = tree_flatten(xs)
    if _is_sharding(out_shardings):
        per = [out_shardings] * len(leaves)
    else:
        per, _ = tree_flatten(out_shardings, is_leaf=lambda s: _is_sharding(s) or s is None)
        if len(per) != len(leaves):
            raise ValueError(f"shardings must be a sharding or match the structure of the value "
                             f"({len(per)} shardings for {len(leaves)} arrays)")
    out = [v if isinstance(v, _tracing.Tracer) or s is None else device_put(v, s) for v, s in zip(leaves, per)]
    return tree_unflatten(tree, out)


def _is_sharding(s):
    return hasattr(s, "device_set") and hasattr(s, "shard_shape")


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """``f`` with the mesh ``axes`` switched to ``Auto`` inside; its results take ``out_sharding``. cranax
    computes unsharded, so only the results' placement changes. Mirrors ``jax.sharding.auto_axes``."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    def wrapped(*args, **kwargs):
        out = f(*args, **kwargs)
        return out if out_sharding is None else reshard(out, out_sharding)
    return wrapped


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """``f`` with the mesh ``axes`` switched to ``Explicit`` inside, its arguments placed by ``in_sharding``.
    Mirrors ``jax.sharding.explicit_axes``."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    def wrapped(*args, **kwargs):
        if in_sharding is not None:
            args = reshard(args, in_sharding if isinstance(in_sharding, tuple) else (in_sharding,) * len(args))
        return f(*args, **kwargs)
    return wrapped
