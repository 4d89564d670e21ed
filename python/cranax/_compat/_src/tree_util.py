"""``jax._src.tree_util`` — flax.nnx (``graphlib`` tests ``type(x) in _registry`` to treat any JAX pytree
node as one). The view answers membership for the built-in node types and the registered ones; typed key arrays,
leaves in JAX, are not in it."""
from collections.abc import Mapping as _Mapping

from ... import _pytree as _tu


class _RegistryView(_Mapping):
    """Read-only ``type -> registration`` view of cranax's pytree registry (built-ins map to None)."""

    def __getitem__(self, t):
        if t in _tu._BUILTIN_KINDS:
            return None
        if t in _tu._public_leaf_types:
            raise KeyError(t)
        return _tu._registry[t]

    def __contains__(self, t):
        return t in _tu._BUILTIN_KINDS or (t in _tu._registry and t not in _tu._public_leaf_types)

    def __iter__(self):
        yield from _tu._BUILTIN_KINDS
        yield from [t for t in list(_tu._registry) if t not in _tu._public_leaf_types]

    def __len__(self):
        return len(_tu._BUILTIN_KINDS) + len(_tu._registry) - len(_tu._public_leaf_types)


_registry = _RegistryView()
