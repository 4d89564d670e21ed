"""``cranax.tree``: the short pytree names of ``jax.tree`` (``map``, ``leaves``, ``structure``, ``flatten``,
``unflatten``, ``all``, ``reduce``, ``transpose``, ``flatten_with_path``, ``leaves_with_path``,
``map_with_path``) over :mod:`cranax.tree_util`, which implements them,
with JAX's argument names. The ``tree_*`` names are re-exported too."""
from .tree_util import (  # noqa: F401
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    PyTreeDef,
    Partial,
    SequenceKey,
    all_leaves,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
    default_registry,
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    register_static,
    tree_broadcast,
    tree_reduce_associative,
)
from .tree_util import tree_broadcast as broadcast
from .tree_util import tree_reduce_associative as reduce_associative
from .tree_util import static_field as static
from .tree_util import tree_all as all  # noqa: A004
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A004
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = [
    "PyTreeDef", "Partial",
    "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
    "tree_all", "tree_reduce", "tree_transpose", "treedef_is_leaf", "treedef_children",
    "treedef_tuple", "all_leaves", "register_pytree_node", "register_pytree_node_class",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "GetAttrKey", "DictKey", "SequenceKey", "FlattenedIndexKey",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_dataclass",
    "flatten", "unflatten", "map", "leaves", "structure", "reduce", "all", "transpose",
    "flatten_with_path", "leaves_with_path", "map_with_path", "broadcast", "reduce_associative", "static",
]

