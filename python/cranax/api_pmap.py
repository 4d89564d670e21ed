"""``pmap`` and ``shard_map``. ``pmap`` is ``jit(vmap(fun))`` over this process's devices: one compiled program
computes every local member. After ``cranax.distributed.initialize`` the mapped axis spans every process (each
holding ``local_device_count()`` members), and its collectives combine the processes through MPI."""
import functools

from . import _transport, core as _core
from .primitives.structural import reshape_p as _reshape_p
from .interpreters import batching as _batching
from .api import jit
from .api_vmap import _vmap
from .array import default_backend, devices, local_device_count
from .numpy import asarray, reshape, transpose
from .sharding import AxisType, Mesh, NamedSharding, PartitionSpec, get_mesh, partition_axes
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["pmap", "shard_map", "smap"]


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
        key = (procs, len(args))
        mapped = compiled.get(key)
        if mapped is None:
            axes = in_axes
            if static_broadcasted_argnums:   # static arguments are broadcast, never mapped
                axes = tuple(None if i in static_broadcasted_argnums else
                             (in_axes[i] if isinstance(in_axes, (tuple, list)) else in_axes) for i in range(len(args)))
            mapped = compiled[key] = jit(_vmap(fun, axes, out_axes, axis_name, axis_size, procs),
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
        # the default platform's devices, as JAX; only looked up when a mapped axis could exceed them (every
        # process has at least one), as listing devices costs more than the rest of a small call
        n = local_device_count(default_backend()) if sizes and max(sizes) > 1 else 1
        if procs > 1:
            for s in sizes:
                if s > n:
                    raise ValueError(f"compiling computation that requires {s * procs} logical devices, but only "
                                     f"{n * procs} XLA devices are available (num_replicas={s * procs})")
        elif sizes and max(sizes) > n:
            _too_few_devices(dyn, axes, n, axis_name)
        return mapped(*args, **kwargs)
    return pmap_f


def _too_few_devices(dyn, axes, n, axis_name):
    """JAX 0.10.2's error for a mapped axis longer than the ``n`` devices: its pmap is a ``shard_map`` over a
    mesh of all ``n`` devices, so an axis ``n`` does not divide fails placing the argument on that mesh
    (``IndivisibleError``), and one it divides leaves each device a block of several members, which the
    per-member squeeze refuses (``ValueError`` naming the block's shape)."""
    name = "_internal_pmap_axis_name" if axis_name is None else axis_name
    mesh = Mesh(devices(default_backend())[:n], (name,), (AxisType.Auto,))
    mapped = []
    for a, ax in zip(dyn, axes):
        if isinstance(ax, int):
            for leaf in tree_flatten(a)[0]:
                shape = tuple(getattr(leaf, "shape", ()))
                if shape:
                    mapped.append((shape, ax))
    for shape, ax in mapped:   # placing each argument on the mesh, in order
        NamedSharding(mesh, _axes_to_pspec(name, ax)).shard_shape(shape)
    shape, ax = mapped[0]
    block = tuple(d // n if i == ax else d for i, d in enumerate(shape))
    raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one, got shape={block} "
                     f"and dimensions=({ax},)")


def shard_map(f=None, /, *, out_specs, mesh=None, in_specs=None, axis_names=frozenset(), check_vma=True):
    """``f`` run once per position of ``mesh`` on that position's block of each argument, with the mesh's axis
    names bound for the collectives inside (``lax.psum(x, 'x')``...). ``in_specs``/``out_specs`` are pytree
    prefixes of the arguments/results of ``PartitionSpec``s: a dimension named ``'x'`` (or ``('x', 'y')``) is
    split over those mesh axes, the others are whole in every block; an output whose spec omits an axis must
    be the same on every member of it. The blocks run as one compiled program (nested ``vmap``s over the mesh
    axes), so results equal JAX's. ``ValueError`` when a dimension does not divide. Mirrors
    ``jax.shard_map``."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, mesh=mesh, in_specs=in_specs, axis_names=axis_names,
                                   check_vma=check_vma)
    if mesh is None:
        mesh = get_mesh()   # the mesh set_mesh installed
    if mesh is None:
        raise ValueError("shard_map requires a mesh: pass mesh= or install one with jax.set_mesh")
    names = tuple(mesh.axis_names)
    sizes = dict(mesh.shape)

    @functools.wraps(f)
    def blocked(*args):
        specs = in_specs if in_specs is not None else tree_map(lambda _: PartitionSpec(), args)
        leaves, tree = tree_flatten(args)
        spec_leaves = _broadcast_prefix(specs, args, "in_specs")
        body = lambda *xs: f(*tree_unflatten(tree, list(xs)))   # noqa: E731
        if hi_shard_map and (_is_hi_spec(out_specs) or any(map(_is_hi_spec, spec_leaves))
                             or any(_core.is_hi(_core.get_aval(x)) for x in leaves)):
            # hi-typed values cross the blocks as their lo arrays (``experimental.hijax``)
            return hi_shard_map[0](body, leaves, spec_leaves, mesh, names, sizes, out_specs, check_vma)
        split = [_split(x, sp, names, sizes) for x, sp in zip(leaves, spec_leaves)]
        used = [u for _, u in split]
        return _run_nested(body, [x for x, _ in split], used, names, sizes, out_specs, mesh)
    return jit(blocked)


# ``experimental.hijax`` installs the rule for hi-typed arguments/results or ``HiPspec`` specs here (it imports
# this module; hi-types exist only once it is imported).
hi_shard_map = []


def _is_hi_spec(s):
    """A hi-type's partition spec (``hijax.HiPspec``: it names the specs of the type's arrays, ``to_lo``)."""
    return not isinstance(s, (PartitionSpec, tuple, list, dict)) and callable(getattr(s, "to_lo", None))


class InferFromArgs:
    """``smap``'s default ``in_axes``: each argument's mapped axis is read from its sharding (the dimension its
    ``NamedSharding`` spec splits over ``axis_name``; not mapped if none). Mirrors
    ``jax._src.shard_map.InferFromArgs`` (printed ``jax.sharding.Infer``)."""

    def __repr__(self):
        return "jax.sharding.Infer"


Infer = InferFromArgs()


def _axes_to_pspec(axis_name, axis):
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def _inferred_spec(x):
    s = getattr(x, "sharding", None)
    spec = getattr(s, "spec", None)
    return spec if isinstance(spec, PartitionSpec) else PartitionSpec()


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """``shard_map`` over the one mesh axis ``axis_name`` of the context mesh (``jax.set_mesh``), described by
    axes as ``vmap`` is: ``in_axes`` (an int, None, or a tuple with one entry per positional argument, whose
    leaves are ints or None; default: inferred from the arguments' shardings) says which dimension of each
    argument is split over ``axis_name``, ``out_axes`` where the results' blocks are stacked (None: the
    result is the same on every member, e.g. after ``lax.psum``). Each instance of ``f`` sees its block and
    ``lax.axis_index(axis_name)``. Raises TypeError for malformed axes (JAX's texts) and ValueError without a
    context mesh. Mirrors ``jax.smap`` (which also requires the inputs' shardings to match ``in_axes``
    under explicit mesh axes; cranax splits them as asked)."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries corresponding "
                        f"to the positional arguments passed to the function, but got {in_axes}.")
    if in_axes is not Infer and not all(isinstance(a, int) for a in tree_flatten(in_axes)[0]):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) container with those "
                        f"types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_flatten(out_axes)[0]):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with those types as leaves, "
                        f"but got {out_axes}.")
    to_spec = functools.partial(_axes_to_pspec, axis_name)
    out_specs = tree_map(to_spec, out_axes, is_leaf=lambda x: x is None)

    programs = {}   # (mesh, in_specs) -> the shard_map (jitted once per pair, as JAX's cache does)

    @functools.wraps(f)
    def mapped(*args):
        mesh = get_mesh()
        if mesh is None or not mesh.axis_names:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh "
                             "context")
        if in_axes is Infer:
            in_specs = tuple(tree_map(_inferred_spec, a) for a in args)
        elif isinstance(in_axes, tuple):
            in_specs = tree_map(to_spec, in_axes, is_leaf=lambda x: x is None)
        else:
            in_specs = tuple(to_spec(in_axes) for _ in args)
        spec_leaves, spec_tree = tree_flatten(in_specs, is_leaf=lambda x: isinstance(x, PartitionSpec))
        key = (mesh, tuple(spec_leaves), spec_tree)
        try:
            prog = programs.get(key)
        except TypeError:   # an unhashable spec tree: no reuse
            key = prog = None
        if prog is None:
            prog = shard_map(f, out_specs=out_specs, mesh=mesh, in_specs=in_specs, axis_names={axis_name})
            if key is not None:
                programs[key] = prog
        return prog(*args)
    return mapped


def _broadcast_prefix(prefix, tree, what):
    """The leaf of ``prefix`` (a PartitionSpec or None) that covers each leaf of ``tree``."""
    leaves_out = []

    def go(pre, sub):
        if pre is None or isinstance(pre, PartitionSpec) or _is_hi_spec(pre):
            leaves_out.extend([pre] * len(tree_flatten(sub)[0]))
        elif isinstance(pre, (tuple, list)) and isinstance(sub, (tuple, list)) and len(pre) == len(sub):
            for p, s_ in zip(pre, sub):
                go(p, s_)
        elif isinstance(pre, dict) and isinstance(sub, dict) and pre.keys() == sub.keys():
            for k in sub:
                go(pre[k], sub[k])
        else:
            raise ValueError(f"shard_map {what} must be a tree prefix of the arguments, got {prefix!r}")
    go(prefix, tree)
    return leaves_out


def _split(x, spec, names, sizes):
    """``x`` reshaped so each mesh axis its spec uses is a leading dimension (mesh order), then its block."""
    x = asarray(x)
    spec = tuple(spec) if spec is not None else ()
    shape = list(x.shape)
    new_shape, axis_pos = [], {}
    for d, n in enumerate(shape):
        used = partition_axes(spec[d]) if d < len(spec) else ()
        k = 1
        for a in used:
            k *= sizes[a]
        if n % k:
            raise ValueError(f"shard_map: dimension {d} of an argument (size {n}) is not divisible by the mesh "
                             f"axes {used} (total size {k})")
        for a in used:
            axis_pos[a] = len(new_shape)
            new_shape.append(sizes[a])
        new_shape.append(n // k)
    x = reshape(x, tuple(new_shape))
    order = [axis_pos[a] for a in names if a in axis_pos]
    rest = [i for i in range(len(new_shape)) if i not in order]
    return transpose(x, order + rest), {a for a in axis_pos}


def _run_nested(g, leaves, used, names, sizes, out_specs, mesh, flat_g=None):
    """Nested vmaps over the mesh axes (the first outermost), then each output's blocks reassembled. The
    innermost call records the output tree and each output leaf's spec in ``box`` (``flat_g(box, *xs)``
    instead of ``g`` returns the flat outputs and records them itself)."""
    box = []

    def default_flat_g(*xs):
        flat, tree = tree_flatten(g(*xs))
        box.append((tree, _broadcast_prefix(out_specs, tree_unflatten(tree, [0] * tree.num_leaves), "out_specs")))
        return flat

    fun = default_flat_g if flat_g is None else functools.partial(flat_g, box)
    for a in reversed(names):
        fun = _axis_vmap(fun, tuple(0 if a in u else None for u in used), a, sizes[a], box)
    flat = fun(*leaves)
    tree, specs = box[-1][:2]
    merged = [_merge(o, sp, names, sizes, mesh) for o, sp in zip(flat, specs)]
    return (merged, box[-1]) if flat_g is not None else tree_unflatten(tree, merged)


def _axis_vmap(fun, in_axes, name, size, box):
    """``fun`` mapped over mesh axis ``name``: outputs whose spec names the axis keep it (leading), the others
    must be the same on every member of it (member 0's is kept)."""
    def h(*xs):
        _batching.shard_map_axes.append(name)
        try:
            res = _vmap(fun, in_axes, 0, name, size)(*xs)
        finally:
            _batching.shard_map_axes.pop()
        specs = box[-1][1]
        return [r if any(name in partition_axes(p) for p in (sp or ())) else r[0] for r, sp in zip(res, specs)]
    return h


def _merge(o, spec, names, sizes, mesh):
    """Undoes ``_split`` on an output: the leading mesh dimensions it keeps go back into their dimensions. As
    JAX's, the result's type is split as ``spec`` says over the mesh's ``Explicit`` axes (``float32[8@i,3]``)."""
    spec = tuple(spec) if spec is not None else ()
    kept = [a for a in names if any(a in partition_axes(p) for p in spec)]
    lead = len(kept)
    block = o.shape[lead:]
    pos = {a: i for i, a in enumerate(kept)}
    order, final = [], []
    for d, n in enumerate(block):
        used = partition_axes(spec[d]) if d < len(spec) else ()
        order.extend(pos[a] for a in used)
        order.append(lead + d)
        k = 1
        for a in used:
            k *= sizes[a]
        final.append(n * k)
    o = transpose(o, order)
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    if any(types[a] == AxisType.Explicit for a in kept):
        sharding = NamedSharding(mesh, PartitionSpec(*[spec[d] if d < len(spec) else None
                                                       for d in range(len(final))]))
        return _reshape_p.bind(o, new_sizes=tuple(final), dimensions=None, sharding=sharding)
    return reshape(o, tuple(final))
