"""``cranax.flatten_util.ravel_pytree``: a pytree of arrays as one flat vector and the function that undoes it.
Mirrors ``jax.flatten_util``."""
import numpy as np

from . import dtypes
from . import numpy as jnp
from .core import get_aval
from ._pytree import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """``(flat, unravel)``: ``flat`` is the leaves raveled and concatenated (1-D, their promoted dtype;
    ``float32[0]`` for no leaves), ``unravel(flat)`` rebuilds the pytree with each leaf's shape and dtype.
    ``unravel`` raises ``ValueError`` for a vector of another shape. Mirrors ``jax.flatten_util.ravel_pytree``."""
    leaves, treedef = tree_flatten(pytree)
    avals = [get_aval(x) for x in leaves]
    shapes = [a.shape for a in avals]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    from_dtypes = [a.dtype for a in avals]
    to_dtype = dtypes.result_type(*from_dtypes) if from_dtypes else dtypes.canonicalize_dtype(np.float32)
    if leaves:
        flat = jnp.concatenate([jnp.ravel(jnp.asarray(x)).astype(to_dtype) for x in leaves])
    else:
        flat = jnp.zeros((0,), to_dtype)
    total = sum(sizes)
    offsets = np.cumsum([0] + sizes)

    def unravel(v):
        if get_aval(v).shape != (total,):
            raise ValueError(f"The unravel function expected an array of shape {(total,)}, got shape "
                             f"{get_aval(v).shape}.")
        parts = [jnp.reshape(v[int(o):int(o) + n], s).astype(d)
                 for o, n, s, d in zip(offsets, sizes, shapes, from_dtypes)]
        return tree_unflatten(treedef, parts)
    return flat, unravel
