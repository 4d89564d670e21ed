"""Public pytree API, mirroring ``jax.tree_util`` (implementation in :mod:`cranax.tree`)."""
from .tree import (  # noqa: F401
    PyTreeDef,
    Partial,
    all_leaves,
    register_pytree_node,
    register_pytree_node_class,
    tree_all,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

__all__ = [
    "PyTreeDef", "Partial", "all_leaves", "register_pytree_node", "register_pytree_node_class",
    "tree_all", "tree_flatten", "tree_leaves", "tree_map", "tree_reduce", "tree_structure",
    "tree_transpose", "tree_unflatten", "treedef_children", "treedef_is_leaf", "treedef_tuple",
]
