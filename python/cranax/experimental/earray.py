"""``jax.experimental.EArray``: an array of an extended dtype, held as its logical ``aval`` and a physical
array ``_data``. Mirrors ``jax._src.earray.EArray`` (what JAX 0.10.2 implements of it: the forwarding
properties; shards are NotImplementedError there too). A leaf for ``jax.tree`` (JAX registers it only in
its internal dispatch registry)."""
import math

from ..array import Array
from ..core import ArrayType

__all__ = ["EArray"]


class EArray(ArrayType):   # (its base: isinstance(e, jax.Array) under the alias)
    __slots__ = ["_aval", "_data"]
    __hash__ = None
    __array_priority__ = 100

    def __init__(self, aval, data):
        self._aval = aval
        self._data = data

    @property
    def aval(self):
        return self._aval

    def block_until_ready(self):
        self._data.block_until_ready()
        return self

    def copy_to_host_async(self):
        self._data.copy_to_host_async()

    def copy(self):
        return EArray(self.aval, self._data.copy())

    def __repr__(self):
        return "E" + repr(self._data)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        raise NotImplementedError

    # the logical type: the aval's
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: math.prod(self.aval.shape))
    itemsize = property(lambda self: self.aval.dtype.itemsize)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # the storage: the physical array's
    devices = property(lambda self: self._data.devices)
    delete = property(lambda self: self._data.delete)
    is_deleted = property(lambda self: self._data.is_deleted)
    is_fully_addressable = property(lambda self: self._data.is_fully_addressable)
    is_fully_replicated = property(lambda self: self._data.is_fully_replicated)
    on_device_size_in_bytes = property(lambda self: self._data.on_device_size_in_bytes)
    unsafe_buffer_pointer = property(lambda self: self._data.unsafe_buffer_pointer)
    committed = property(lambda self: self._data.committed)

    def addressable_data(self, index):
        raise NotImplementedError

    @property
    def addressable_shards(self):
        raise NotImplementedError

    @property
    def global_shards(self):
        raise NotImplementedError


Array._virtual_subclasses.add(EArray)   # isinstance(e, jax.Array), as JAX's EArray subclasses it
