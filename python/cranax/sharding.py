"""``cranax.sharding``: JAX's sharding types for the one-device case cranax runs (``jax.sharding``).

Every cranax array lives on one device, so each sharding here describes a single device: ``NamedSharding``
over a ``Mesh`` of one device with any ``PartitionSpec`` places the whole array on that device. A ``Mesh``
with more than one device raises ``ValueError``.
"""
import enum as _enum

import numpy as _np

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "PartitionSpec", "Mesh", "AbstractMesh", "AxisType",
           "make_single_device_sharding", "get_abstract_mesh", "get_mesh", "set_mesh", "use_abstract_mesh"]


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
    """Devices arranged in a named grid: ``Mesh(devices, axis_names)``. cranax holds one device, so every axis
    has size 1. Raises ``ValueError`` for more than one device or a names/dims mismatch. Mirrors
    ``jax.sharding.Mesh``."""

    def __init__(self, devices, axis_names, axis_types=None):
        devs = _np.asarray(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if devs.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal the length of its "
                             f"second argument (`axis_names`), but got devices.ndim == {devs.ndim} and "
                             f"len(axis_names) == {len(axis_names)}.")
        if devs.size != 1:
            raise ValueError(f"cranax runs on one device: a Mesh of {devs.size} devices is not supported")
        self.devices = devs
        self.axis_names = axis_names
        self.axis_types = tuple(axis_types) if axis_types else (AxisType.Auto,) * len(axis_names)

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.devices.shape))

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

    def __repr__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({sizes}, axis_types={self.axis_types!r})"


class NamedSharding(Sharding):
    """An array split over ``mesh``'s axes as ``spec`` says; with cranax's one-device meshes, the whole array
    on that device. Raises ``ValueError`` for a spec naming an axis the mesh lacks. Mirrors
    ``jax.sharding.NamedSharding``."""

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

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and self.mesh == other.mesh and self.spec == other.spec

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        kind = "" if isinstance(self.mesh, AbstractMesh) else ", memory_kind=device"   # as JAX prints them
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}{kind})"


class AbstractMesh:
    """A mesh's axis names and sizes without devices. ``get_abstract_mesh()`` gives the empty one when no mesh
    is set. Mirrors ``jax.sharding.AbstractMesh``."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = tuple(axis_types) if axis_types else (AxisType.Auto,) * len(self.axis_names)

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.axis_sizes))

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
