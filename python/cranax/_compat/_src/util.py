"""``jax._src.util`` — the list helpers JAX's guides and libraries import (``safe_map`` in "Writing custom
Jaxpr interpreters"): ``map``/``zip`` that insist on equal lengths, and the list splitters of JAX's
interpreters. Errors carry JAX 0.10.2's texts."""
import builtins

from ...api_util import safe_map  # one function, as jax.api_util.safe_map is jax._src.util.safe_map

__all__ = ["safe_map", "safe_zip", "unzip2", "unzip3", "split_list", "partition_list", "merge_lists"]


def safe_zip(*args):
    """``list(zip(*args))``; ValueError where the sequences' lengths differ."""
    if not args:
        raise TypeError("safe_zip requires at least 1 argument")
    args = [list(a) for a in args]
    lens = tuple(len(a) for a in args)
    for i, n in enumerate(lens[1:], 1):
        if n != lens[0]:
            raise ValueError(f"safe_zip() argument {i} has length {n} but argument 0 has length {lens[0]}. "
                             f"All lengths: {lens}")
    return list(builtins.zip(*args))


def unzip2(xys):
    """Pairs to a pair of tuples."""
    xs, ys = [], []
    for x, y in xys:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def unzip3(xyzs):
    """Triples to a triple of tuples."""
    xs, ys, zs = [], [], []
    for x, y, z in xyzs:
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return tuple(xs), tuple(ys), tuple(zs)


def split_list(args, ns):
    """``args`` cut into lists of the lengths ``ns``, the rest last."""
    args = list(args)
    out = []
    for n in ns:
        out.append(args[:n])
        args = args[n:]
    return out + [args]


def partition_list(bs, l):
    """(the items of ``l`` where ``bs`` is false, those where it is true)."""
    assert len(bs) == len(l)
    lists = [], []
    for b, x in builtins.zip(bs, l):
        lists[bool(b)].append(x)
    return lists


def merge_lists(bs, l0, l1):
    """The inverse of ``partition_list``: items of ``l0`` where ``bs`` is false, of ``l1`` where true."""
    assert sum(bs) == len(l1) and len(bs) - sum(bs) == len(l0)
    i0, i1 = iter(l0), iter(l1)
    return [next(i1) if b else next(i0) for b in bs]
