"""Sharding in types (JAX's explicit sharding): the output avals of a primitive whose operands are split over
``Explicit`` mesh axes (``float32[8@i,3]``) carry the spec JAX's sharding rules give them. cranax computes
every array on one host buffer, so only the types (and the printed jaxprs, ``jax.typeof``, ``Array.sharding``)
carry it; values are the same either way.

``propagate`` runs where output avals are made (eager dispatch, jaxpr staging) and only once some aval is
sharded (``core.sharded_types_seen``). The rules: elementwise operands combine per dimension (an unsplit
dimension takes the other operand's axis), reductions drop their axes, ``broadcast_in_dim``/``reshape``/
``squeeze``/``expand_dims``/``transpose`` move the spec with the dimensions, ``dot_general`` keeps batch and
free dimensions (or its ``out_sharding``); other primitives give unsplit results.
"""
from .. import core
from ..core import ShapedArray
from ..sharding import NamedSharding, PartitionSpec

__all__ = ["propagate", "ShardingTypeError"]


class ShardingTypeError(TypeError):
    """A result whose sharding in types is illegal (a mesh axis splitting two dimensions). Mirrors
    ``jax._src.core.ShardingTypeError``."""


def _spec(a):
    s = getattr(a, "_sharding", None) if type(a) is ShapedArray else None
    return None if s is None else tuple(s.spec)


def _given(s):
    """The spec of an ``out_sharding``/``sharding`` param (a NamedSharding or a PartitionSpec), else None."""
    if s is None:
        return None
    spec = getattr(s, "spec", s)
    return tuple(spec) if isinstance(spec, tuple) else None


def _elementwise(avals, params, shape):
    spec = [None] * len(shape)
    for a in avals:
        s = _spec(a)
        if s is None or len(a.shape) != len(shape):
            continue
        # (a size-1 dimension broadcast against a longer one is not split)
        spec = [p if p is not None or n != m else q for p, q, n, m in zip(spec, s, a.shape, shape)]
    return spec


def _reduce(avals, params, shape):
    s = _spec(avals[0])
    axes = {d % max(len(s), 1) for d in params.get("axes", ())} if s is not None else set()
    return None if s is None else [p for d, p in enumerate(s) if d not in axes]


def _broadcast_in_dim(avals, params, shape):
    given = _given(params.get("sharding"))
    if given is not None:
        return list(given)
    x = avals[0]
    s = _spec(x)
    out = [None] * len(shape)
    if s is not None:
        for i, d in enumerate(params["broadcast_dimensions"]):
            if x.shape[i] == shape[d]:
                out[d] = s[i]
    return out


def _without_ones(shape, spec):
    return [(n, p) for n, p in zip(shape, spec) if n != 1]


def _reshape(avals, params, shape):
    given = _given(params.get("sharding"))
    if given is not None:
        return list(given)
    x = avals[0]
    s = _spec(x)
    if s is None or params.get("dimensions") is not None:
        return None
    kept = _without_ones(x.shape, s)
    if [n for n, _ in kept] != [n for n in shape if n != 1]:
        return None   # (JAX asks for an out_sharding there)
    it = iter(p for _, p in kept)
    return [None if n == 1 else next(it) for n in shape]


def _squeeze(avals, params, shape):
    s = _spec(avals[0])
    nd = len(avals[0].shape)
    drop = {d % nd for d in params.get("dimensions", ())}
    return None if s is None else [p for d, p in enumerate(s) if d not in drop]


def _expand_dims(avals, params, shape):
    s = _spec(avals[0])
    if s is None:
        return None
    new = {d % len(shape) for d in params.get("dimensions", ())}
    it = iter(s)
    return [None if d in new else next(it) for d in range(len(shape))]


def _transpose(avals, params, shape):
    s = _spec(avals[0])
    return None if s is None else [s[d] for d in params["permutation"]]


def _dot_general(avals, params, shape):
    given = _given(params.get("out_sharding"))
    if given is not None:
        return list(given) + [None] * (len(shape) - len(given))
    lhs, rhs = avals[:2]
    ls = _spec(lhs) or (None,) * len(lhs.shape)
    rs = _spec(rhs) or (None,) * len(rhs.shape)
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lfree = [d for d in range(len(ls)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rs)) if d not in rc and d not in rb]
    return [ls[d] if ls[d] is not None else rs[e] for d, e in zip(lb, rb)] + [ls[d] for d in lfree] + \
        [rs[d] for d in rfree]


_RULES = {"broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "squeeze": _squeeze,
          "expand_dims": _expand_dims, "transpose": _transpose, "dot_general": _dot_general,
          "copy": _elementwise, "copy_p": _elementwise, "reduce_precision": _elementwise,
          "argmax": _reduce, "argmin": _reduce}


def _rule(prim):
    r = _RULES.get(prim.name)
    if r is not None:
        return r
    if getattr(prim, "elementwise", False):
        return _elementwise
    if prim.name.startswith("reduce_") and prim.name != "reduce_precision":
        return _reduce
    return None


def propagate(prim, avals, params, out):
    """``out`` (an aval, or a list of them for a multiple-results primitive) with the sharding its operands'
    sharded types give it under ``prim``'s rule (replicated on their mesh where none applies); ``out`` itself
    when no operand is on an Explicit mesh."""
    mesh = None
    for a in avals:
        s = getattr(a, "_sharding", None) if type(a) is ShapedArray else None
        if s is not None:
            mesh = s.mesh
            break
    if mesh is None:   # unsplit operands: only a result sharding asked for (``out_sharding=``) splits
        given = params.get("out_sharding") or params.get("sharding")
        mesh = getattr(given, "mesh", None)
        if mesh is None or _given(given) is None:
            return out
    rule = _rule(prim)

    def one(o):
        # every result of operands on an Explicit mesh is on it (replicated where no rule splits it), as JAX's
        if type(o) is not ShapedArray:
            return o
        if rule is None and o._sharding is not None:
            return o   # the primitive's own type (a jit's: its jaxpr's result) already says
        spec = rule(avals, params, o.shape) if rule is not None and o.shape else None
        if spec is None or len(spec) != len(o.shape):
            spec = [None] * len(o.shape)
        names = [a for p in spec if p is not None for a in (p if isinstance(p, tuple) else (p,))]
        if len(set(names)) != len(names):
            bad = ShapedArray(o.shape, o.dtype, sharding=NamedSharding(mesh, PartitionSpec(*spec)))
            raise ShardingTypeError(
                f"{prim.name} operation with inputs: {', '.join(a.str_short() for a in avals)} produces an "
                f"illegally sharded result: {bad.str_short()}")
        return o.update(sharding=NamedSharding(mesh, PartitionSpec(*spec)))
    if isinstance(out, (list, tuple)):
        return type(out)(one(o) for o in out)
    return one(out)


core.propagate_sharding = propagate
