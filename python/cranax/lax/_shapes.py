"""``lax.broadcast_shapes``: the NumPy broadcast of static shapes."""
__all__ = ["broadcast_shapes"]


def broadcast_shapes(*shapes):
    """The shape (tuple of ints) that ``shapes`` broadcast to under NumPy's rules: ``((2, 1), (3,))`` gives
    ``(2, 3)``. Raises ``ValueError`` naming the shapes when they do not broadcast. Mirrors
    ``jax.lax.broadcast_shapes``."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dims = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(dims) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(dims.pop() if dims else 1)
    return tuple(out)
