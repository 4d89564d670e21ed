"""``pmap`` and ``shard_map``. ``pmap`` is ``jit(vmap(fun))`` over this process's devices: one compiled program
computes every local member. After ``cranax.distributed.initialize`` the mapped axis spans every process (each
holding ``local_device_count()`` members), and its collectives combine the processes through MPI."""
import functools

from . import _transport
from .api import jit
from .api_vmap import _vmap
from .array import local_device_count
from .numpy import expand_dims
from .tree_util import tree_flatten, tree_map

__all__ = ["pmap", "shard_map"]


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         backend=None, axis_size=None, donate_argnums=(), global_arg_shapes=None):
    """Maps ``fun`` over axis ``in_axes`` of its arguments, one slice per local device, with collectives over
    ``axis_name`` (``lax.psum``...; across processes in a multi-process run, where the axis has
    ``process_count() * local_device_count()`` members). The mapped axis may be at most
    ``jax.local_device_count()`` long: longer raises ``ValueError`` as JAX does. Mirrors ``jax.pmap``."""
    if isinstance(static_broadcasted_argnums, int):
        static_broadcasted_argnums = (static_broadcasted_argnums,)
    compiled = {}   # process count -> the jitted program (initialize() may come after pmap())

    @functools.wraps(fun)
    def pmap_f(*args, **kwargs):
        procs = _transport.state.process_count
        mapped = compiled.get(procs)
        if mapped is None:
            mapped = compiled[procs] = jit(_vmap(fun, in_axes, out_axes, axis_name, axis_size, procs),
                                           static_argnums=tuple(static_broadcasted_argnums))
        dyn = [a for i, a in enumerate(args) if i not in static_broadcasted_argnums]
        axes = in_axes if isinstance(in_axes, (tuple, list)) else [in_axes] * len(dyn)
        sizes = set()
        for a, ax in zip(dyn, axes):
            if ax is None:
                continue
            for leaf in tree_flatten(a)[0]:
                shape = getattr(leaf, "shape", ())
                if isinstance(ax, int) and shape:
                    sizes.add(shape[ax])
        n = local_device_count()
        for s in sizes:
            if s > n:
                raise ValueError(f"compiling computation that requires {s * procs} logical devices, but only "
                                 f"{n * procs} XLA devices are available (num_replicas={s * procs})")
        return mapped(*args, **kwargs)
    return pmap_f


def shard_map(f=None, /, *, out_specs, mesh=None, in_specs=None, axis_names=frozenset(), check_vma=True):
    """``f`` over the shards of its arguments on ``mesh``, with the mesh's axis names bound for the collectives
    inside (``lax.psum(x, 'x')``...). cranax meshes hold one device, so every mesh axis has size 1: the one
    shard is the whole array, each name is a vmap axis of size 1, and the result equals JAX's on one device.
    ``ValueError`` for a mesh of more than one device. Mirrors ``jax.shard_map``."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, mesh=mesh, in_specs=in_specs, axis_names=axis_names,
                                   check_vma=check_vma)
    if mesh is not None and getattr(mesh, "size", 1) != 1:
        raise ValueError(f"cranax runs on one device: shard_map over a mesh of {mesh.size} devices")
    names = tuple(getattr(mesh, "axis_names", ())) if mesh is not None else tuple(axis_names)
    g = f
    for name in reversed(names):
        g = _unit_named_axis(g, name)
    return jit(g)


def _unit_named_axis(g, name):
    """``g`` with ``name`` bound to an axis of size 1 (a vmap over a new leading axis, squeezed away)."""
    @functools.wraps(g)
    def h(*args):
        mapped = _vmap(g, 0, 0, name, None)(*tree_map(lambda x: expand_dims(x, 0), args))
        return tree_map(lambda y: y[0], mapped)
    return h
