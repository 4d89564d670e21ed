"""The list helpers of JAX's ``jax._src.util`` (``safe_map``, ``safe_zip``, ``unzip2``, the list splitters of
JAX's interpreters), in one place for cranax's modules and for ``jax._src.util`` under the alias. Errors carry JAX
0.10.2's texts."""
import builtins

__all__ = ["safe_map", "safe_zip", "unzip2", "unzip3", "split_list", "partition_list", "merge_lists"]


def safe_map(f, *args):
    """``list(map(f, *args))`` after checking the sequences have equal lengths (``ValueError`` naming the
    first that differs; ``TypeError`` with no sequence). Mirrors ``jax._src.util.safe_map`` (which
    is also ``jax.api_util.safe_map``)."""
    if not args:
        raise TypeError("safe_map requires at least 2 arguments")
    args = [list(a) for a in args]
    n = len(args[0])
    for i, a in enumerate(args[1:], 2):
        if len(a) != n:
            raise ValueError(f"safe_map() argument {i} is {'shorter' if len(a) < n else 'longer'} than argument 1")
    return list(builtins.map(f, *args))


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
