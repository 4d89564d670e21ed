"""``vmap``: automatic batching (see ``cranax.interpreters.batching`` for the trace and the rule table).

``vmap(f, in_axes, out_axes)(*args)`` runs ``f`` once on ``BatchTracer``s whose batch axis is the mapped
axis of each argument; every primitive ``f`` applies runs its batching rule on the enclosing trace (eager
execution, a ``jit`` being traced, another ``vmap``...), so ``vmap`` composes with ``jit``, itself and the
autodiff transformations. Mirrors ``jax.vmap``.
"""
import collections
import functools
import inspect

import numpy as np

from . import core, dtypes
from .array import device_put, float0_zeros
from .core import extend_axis_env, get_aval, set_current_trace
from .interpreters import batching
from .interpreters.batching import BatchTrace, BatchTracer, not_mapped
from .primitives.elementwise import _as_operand as as_operand
from .primitives import state as _state
from ._pytree import _prefix_errors, broadcast_prefix, tree_flatten, tree_leaves, tree_unflatten

__all__ = ["vmap"]


# ----------------------------------------------------------------------------------------------- axis specs

def _is_none(x):
    return x is None


def _flatten_axes(name, treedef, axis_tree, kws=False):
    """One axis per leaf of ``treedef``: ``axis_tree`` is a pytree prefix of the value (None is a leaf).
    ValueError (JAX's message) when it is not a prefix."""
    axis_leaves, axis_def = tree_flatten(axis_tree, is_leaf=_is_none)
    try:
        # from the structures alone: a custom node's unflatten never sees placeholders (as in JAX)
        axes = broadcast_prefix(axis_leaves, axis_def, treedef)
    except ValueError:
        shown_tree, shown_axes = treedef, axis_tree
        if kws:   # talk about the positional arguments only, as JAX does
            shown_tree = treedef.children()[0]
            shown_axes = axis_tree[0]
        # JAX's text: each place the structures differ, found against the value's structure with placeholders
        dummy = tree_unflatten(shown_tree, [PytreeLeaf()] * shown_tree.num_leaves)
        errs = [e(name).args[0] for e in _prefix_errors((), shown_axes, dummy)]
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding value; \n"
                         f"  Mismatch details ({len(errs)} found):\n  " + "\n  ".join(errs)) from None
    assert len(axes) == treedef.num_leaves
    return axes


class PytreeLeaf:
    """Stands for a value's leaf in vmap's prefix errors; named as JAX's (its type shows in the text)."""
    __module__ = "jax._src.api_util"

    def __repr__(self):
        return "pytree leaf"


def _canonicalize_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


# ----------------------------------------------------------------------------------------------- errors

def _type_str(x):
    try:
        a = get_aval(x)
    except TypeError:
        return "unknown"
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _key_paths(x, prefix=""):
    """``(keystr, leaf)`` for each leaf of ``x`` in ``tree_flatten`` order (JAX's ``keystr`` format)."""
    if x is None:
        return []
    if isinstance(x, tuple) and hasattr(x, "_fields") and type(x) is not tuple:
        out = []
        for f in x._fields:
            out.extend(_key_paths(getattr(x, f), f"{prefix}.{f}"))
        return out
    if type(x) in (tuple, list):
        out = []
        for i, v in enumerate(x):
            out.extend(_key_paths(v, f"{prefix}[{i}]"))
        return out
    if type(x) is dict:
        out = []
        for k in sorted(x):
            out.extend(_key_paths(x[k], f"{prefix}[{k!r}]"))
        return out
    leaves = tree_leaves(x)
    if len(leaves) == 1 and leaves[0] is x:
        return [(prefix, x)]
    return [(f"{prefix}[{i}]", v) for i, v in enumerate(leaves)]


def _axis_size(shape, axis, name="vmap"):
    try:
        return shape[axis]
    except (IndexError, TypeError):
        min_rank = axis + 1 if axis >= 0 else -axis
        raise ValueError(f"{name} was requested to map its argument along axis {axis}, which implies that its "
                         f"rank should be at least {min_rank}, but is only {len(shape)} (its shape is "
                         f"{tuple(shape)})") from None


def _shape(x):
    try:
        return get_aval(x).shape
    except TypeError:
        return np.shape(x)


def _mapped_axis_size(fn, tree, vals, dims, name="vmap"):
    if not vals:
        args, kwargs = tree_unflatten(tree, vals)
        raise ValueError(f"{name} wrapped function must be passed at least one argument containing an array, "
                         f"got empty *args={args} and **kwargs={kwargs}")
    sizes = []
    for x, d in zip(vals, dims):
        if d is not None:
            s = _axis_size(_shape(x), d, name)
            if s not in sizes:
                sizes.append(s)
    if len(sizes) == 1:
        return sizes[0]
    if not sizes:
        raise ValueError(f"{name} must have at least one non-None value in in_axes")
    _raise_inconsistent(fn, tree, vals, dims, name)


def _raise_inconsistent(fn, tree, vals, dims, name):
    msg = [f"{name} got inconsistent sizes for array axes to be mapped:\n"]
    args, kwargs = tree_unflatten(tree, vals)
    try:
        ba = inspect.signature(fn).bind(*args, **kwargs)
        params = list(ba.signature.parameters.keys())
    except (TypeError, ValueError):
        params = None

    def arg_name(i, rest):
        if params is None or i >= len(params):
            return f"args[{i}]{rest}"
        p = inspect.signature(fn).parameters[params[i]]
        if p.kind == p.VAR_POSITIONAL:
            return f"args[{i}]{rest}"
        return f"argument {params[i]}{rest}"

    key_paths = []
    for i, a in enumerate(args):
        for path, x in _key_paths(a):
            key_paths.append(f"{arg_name(i, path)} of type {_type_str(x)}")
    for path, x in _key_paths(kwargs):
        key_paths.append(f"kwargs{path} of type {_type_str(x)}")
    all_sizes = [_axis_size(_shape(x), d, name) if d is not None else None for x, d in zip(vals, dims)]
    counts = collections.Counter(s for s in all_sizes if s is not None).most_common()
    for k, (sz, ct) in enumerate(counts):
        i = all_sizes.index(sz)
        ex, ax = key_paths[i], dims[i]
        if ct == 1:
            msg.append(f"  * one axis had size {sz}: axis {ax} of {ex};\n")
        elif k == 0:
            msg.append(f"  * most axes ({ct} of them) had size {sz}, e.g. axis {ax} of {ex};\n")
        else:
            msg.append(f"  * some axes ({ct} of them) had size {sz}, e.g. axis {ax} of {ex};\n")
    raise ValueError("".join(msg)[:-2])


# ----------------------------------------------------------------------------------------------- vmap

def _check_axes_spec(in_axes, out_axes):
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)   # JAX accepts a list of per-argument axes too
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                        f"positional arguments passed to the function, but got {in_axes}.")
    if not all(type(ax) is int for ax in tree_leaves(in_axes)):
        raise TypeError("vmap in_axes must be an int, None, or (nested) container with those types as "
                        f"leaves, but got {in_axes}.")
    if not all(type(ax) is int for ax in tree_leaves(out_axes)):
        raise TypeError("vmap out_axes must be an int, None, or (nested) container with those types as "
                        f"leaves, but got {out_axes}.")
    return in_axes


def _from_batched(x, d, size, dst):
    """An output of the batched function placed at output axis ``dst`` (on the current trace)."""
    if d is not_mapped:
        if dst is None:
            return x
        nd = get_aval(x).ndim
        dst = _canonicalize_axis(dst, nd + 1)
        return batching.broadcast_batched(as_operand(x), size, dst)
    if dst is None:
        raise ValueError("vmap has mapped output but out_axes is None")
    nd = get_aval(x).ndim
    return batching.moveaxis(x, d, _canonicalize_axis(dst, nd))


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorizes ``fun`` over an axis of its arguments. ``in_axes``: an int, None, or a tuple with an entry
    (itself a pytree prefix of ints/None) per positional argument, saying which axis of each leaf is mapped
    (None: not mapped; negative ints count from the end); keyword arguments are mapped over axis 0.
    ``out_axes``: a prefix of the output saying where the mapped axis goes (None: the output must not depend
    on the mapped axis). ``axis_size`` gives the size when no argument is mapped. ``axis_name`` names the
    mapped axis for the collectives inside ``fun`` (``lax.psum``, ``all_gather``, ``axis_index``...;
    ``NameError`` for a name no enclosing map binds). ``spmd_axis_name`` (a mesh axis to shard the batch over)
    changes nothing on cranax's one device. Mirrors ``jax.vmap``.
    """
    if not callable(fun):
        raise TypeError(f"vmap requires a callable as its first argument, got {fun!r}")
    return _vmap(fun, in_axes, out_axes, axis_name, axis_size)


def _vmap(fun, in_axes, out_axes, axis_name, axis_size, processes=1):
    """``vmap``; ``processes`` > 1 (a multi-process ``pmap``): the named axis spans that many processes, this
    one holding the mapped members here, so the collectives' size is ``processes`` times the local one."""
    in_axes = _check_axes_spec(in_axes, out_axes)

    @functools.wraps(fun)
    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                             "positional arguments passed to the function, but got "
                             f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
        leaves, in_tree = tree_flatten((args, kwargs))
        in_axes_flat = _flatten_axes("vmap in_axes", in_tree, (in_axes, 0), kws=True)
        if axis_size is None:
            size = _mapped_axis_size(fun, in_tree, leaves, in_axes_flat)
        else:
            size = int(axis_size)
            if any(d is not None for d in in_axes_flat):
                sizes = {_axis_size(_shape(x), d) for x, d in zip(leaves, in_axes_flat) if d is not None}
                if sizes != {size}:
                    _raise_inconsistent_with(fun, in_tree, leaves, in_axes_flat, size)
        parent = core._state.trace   # None: eager (keeps the eval fast paths)
        trace = BatchTrace(parent, size, axis_name)
        targs = []
        mapped_refs = []   # (ref, its axis, its outer binding): a mapped ref is bound to its batched value
        for x, d in zip(leaves, in_axes_flat):
            if d is None:
                targs.append(x)
            elif isinstance(x, _state.Ref):
                v = x._access()
                d = _canonicalize_axis(d, get_aval(v).ndim)
                with set_current_trace(trace):
                    mapped_refs.append((x, d, _state.bind(x, BatchTracer(trace, v, d))))
                targs.append(x)
            else:
                if isinstance(x, (list, tuple)) or not (hasattr(x, "aval") or isinstance(x, np.ndarray)):
                    x = _as_array(x)
                targs.append(BatchTracer(trace, x, _canonicalize_axis(d, get_aval(x).ndim)))
        try:
            a, k = tree_unflatten(in_tree, targs)
            with set_current_trace(trace):
                if axis_name is None:
                    out = fun(*a, **k)
                else:
                    with extend_axis_env(axis_name, size * processes, processes):
                        out = fun(*a, **k)
            outs, out_tree = tree_flatten(out)
            out_axes_flat = _flatten_axes("vmap out_axes", out_tree, out_axes)
            res = []
            with set_current_trace(parent):
                for o, dst in zip(outs, out_axes_flat):
                    if getattr(o, "dtype", None) == dtypes.float0 and not isinstance(o, BatchTracer):
                        # a float0 tangent (host zeros): JAX's has the batch axis too
                        shape = list(np.shape(o))
                        if dst is not None:
                            shape.insert(_canonicalize_axis(dst, len(shape) + 1), size)
                        res.append(float0_zeros(shape))
                        continue
                    v, d = trace.to_batch_info(o)
                    res.append(_from_batched(v, d, size, dst))
                finals = []
                for r, d, _ in mapped_refs:
                    v, vd = trace.to_batch_info(r._val)
                    finals.append(_from_batched(v, vd, size, d))
            pending = [(r, saved) for r, _, saved in mapped_refs]
            mapped_refs = []
            for r, saved in pending:
                _state.restore(r, saved)
            # an output may be a mapped ref's own buffer: copied before the writes land in it
            res = _state.detach_outputs(res, [r for r, _ in pending])
            if len(pending) > 1:   # (a ref's final value on its own buffer is a write that copies nothing)
                finals = _state.detach_outputs(finals, [r for r, _ in pending])
            for (r, _), v in zip(pending, finals):
                _state._store(r, v)
        finally:
            for r, _, saved in mapped_refs:
                _state.restore(r, saved)
            trace.invalidate()
        return tree_unflatten(out_tree, res)

    vmap_f.__wrapped__ = fun
    return vmap_f


def _as_array(x):
    return device_put(x)


def _raise_inconsistent_with(fun, tree, vals, dims, size):
    sizes = [_axis_size(_shape(x), d) for x, d in zip(vals, dims) if d is not None]
    if len(set(sizes)) > 1:
        _raise_inconsistent(fun, tree, vals, dims, "vmap")
    raise ValueError(f"vmap got axis_size={size} but the mapped axes of the arguments have size {sizes[0]}")
