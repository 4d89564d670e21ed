"""``jax.ds`` (``dslice``) and its ``Slice``: a slice given by a start and a size, whose start may be traced.

A leaf module (it needs only ``tree_util``); indexing (``numpy/_indexing.py``) turns a ``Slice`` into a static
slice when its start is a Python int and into clamped index arrays when it is traced, so ``x[jax.ds(i, 2)]``,
``x.at[jax.ds(i, 2)].set(v)`` and ``ref[jax.ds(i, 2)]`` work under ``jit``. Mirrors ``jax._src.indexing``."""
import dataclasses
import operator

from . import _pytree as tree_util


def _is_static(v):
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


@tree_util.register_pytree_node_class
@dataclasses.dataclass(slots=True)
class Slice:
    """Elements ``start, start + stride, ..., start + (size - 1) * stride`` of one axis. ``start`` (and
    ``size``) may be an int or a scalar integer array; ``stride`` is a static int >= 0 (``ValueError``
    otherwise). A traced start is clamped so the slice fits the axis, as ``lax.dynamic_slice`` clamps.
    Mirrors ``jax._src.indexing.Slice``."""
    start: object
    size: object
    stride: int = 1

    def __post_init__(self):
        if self.stride < 0:
            raise ValueError("`stride` must be >= 0.")

    @property
    def is_dynamic_start(self):
        return not _is_static(self.start)

    @property
    def is_dynamic_size(self):
        return not _is_static(self.size)

    def tree_flatten(self):
        # static parts are aux data, traced ones children (JAX's split)
        ds, dz = self.is_dynamic_start, self.is_dynamic_size
        children = (self.start if ds else None, self.size if dz else None)
        aux = (None if ds else self.start, None if dz else self.size, self.stride)
        return children, aux

    @classmethod
    def tree_unflatten(cls, aux, children):
        start = children[0] if children[0] is not None else aux[0]
        size = children[1] if children[1] is not None else aux[1]
        return cls(start, size, aux[2])

    @classmethod
    def from_slice(cls, slc, size):
        """The ``Slice`` of a Python ``slice`` over an axis of length ``size`` (step >= 1, else ``ValueError``)."""
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, max(0, (stop - start + step - 1) // step), step)


def dslice(start, size=None, stride=None):
    """``dslice(None)`` is ``:``, ``dslice(j)`` is ``:j``, ``dslice(i, j)`` is ``i:i+j`` and
    ``dslice(i, j, s)`` is ``i:i+j:s`` — except that ``i`` may be traced. Returns a ``slice`` (for ``None``)
    or a ``Slice``; a non-int ``stride`` raises ``ValueError``. Mirrors ``jax.ds`` / ``jax._src.indexing.dslice``."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


ds = dslice
