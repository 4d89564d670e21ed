"""Pytrees, as users and libraries see them: mirrors ``jax.tree_util`` (the short names are
:mod:`cranax.tree`, ``jax.tree``).

Containers (JAX's rules): ``tuple``, ``list``, ``dict`` (children in sorted key order; unflatten
rebuilds the dict with sorted keys), ``None`` (a node with no children, not a leaf), namedtuples (any
tuple subclass with ``_fields``), ``collections.OrderedDict`` (insertion order), ``collections.defaultdict``
(sorted key order) and any type given to :func:`register_pytree_node`. Lookup is by exact type: a subclass
of ``dict`` or ``list`` is a leaf unless registered. Everything else is a leaf — typed PRNG key arrays
included, as in JAX (``tree_leaves(key) == [key]``).

The implementation is :mod:`cranax._pytree`, which cranax's own transformations use directly: there a
key array is a node over its uint32 data, so keys cross ``jit``/``vmap``/``scan`` as plain arrays. The
functions below are those of ``_pytree`` with key arrays (the types given to
``_pytree.register_internal_node``) made leaves before any ``is_leaf`` the caller passes; without an
``is_leaf`` they flatten through ``_pytree``'s public kind table, where those types are leaves (no predicate
call per node: libraries' per-step ``tree_map``s pay only the walk).
"""
import functools

from . import _pytree as _pt
from ._pytree import (  # noqa: F401  (re-exported: they do not flatten, or see no difference)
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    default_registry,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    static_field,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

__all__ = list(_pt.__all__)

_key_types = _pt._public_leaf_types


def _is_key(x):
    return type(x) in _key_types


def _leaf_pred(is_leaf):
    """``is_leaf`` with key arrays made leaves first."""
    if is_leaf is None:
        return _is_key
    return lambda x: type(x) in _key_types or is_leaf(x)


def _path_leaf_pred(is_leaf, is_leaf_takes_path):
    """The same for the key-path functions, as a ``(path, x)`` predicate."""
    if is_leaf is None:
        return lambda _, x: type(x) in _key_types
    if is_leaf_takes_path:
        return lambda p, x: type(x) in _key_types or is_leaf(p, x)
    return lambda _, x: type(x) in _key_types or is_leaf(x)


def tree_flatten(tree, is_leaf=None):
    """Flattens ``tree`` into ``(leaves, treedef)``. ``is_leaf``, if given, is called on every node (before
    looking at its type); a true result makes the node a leaf. ``None`` is a node with no children, not a
    leaf. Mirrors ``jax.tree_util.tree_flatten``."""
    if is_leaf is None:
        return _pt.tree_flatten_public(tree)   # key arrays are leaves in its kind table: no predicate calls
    return _pt.tree_flatten(tree, _leaf_pred(is_leaf))


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree``, in flattening order. Mirrors ``jax.tree_util.tree_leaves``."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The :class:`PyTreeDef` of ``tree``. Mirrors ``jax.tree_util.tree_structure``."""
    return tree_flatten(tree, is_leaf)[1]


def all_leaves(iterable, is_leaf=None):
    """True if every element of ``iterable`` is a leaf. Mirrors ``jax.tree_util.all_leaves``."""
    return _pt.all_leaves(iterable, _leaf_pred(is_leaf))


def tree_map(f, tree, *rest, is_leaf=None):
    """Applies ``f`` leafwise: ``f(x, *ys)`` for each leaf ``x`` of ``tree`` and the corresponding
    subtrees ``ys`` of the trees in ``rest`` (each must have ``tree``'s structure, or have it as a
    prefix: ValueError otherwise). Returns a pytree with ``tree``'s structure. Mirrors
    ``jax.tree_util.tree_map``."""
    if is_leaf is None:   # the common case, without predicate calls (see tree_flatten)
        leaves, treedef = _pt.tree_flatten_public(tree)
        if not rest:
            return treedef.unflatten([f(x) for x in leaves])
        columns = [leaves] + [_pt._flatten_rest_up_to("tree_map", treedef, tree, r, i, _is_key)
                              for i, r in enumerate(rest)]
        return treedef.unflatten([f(*xs) for xs in zip(*columns)])
    return _pt.tree_map(f, tree, *rest, is_leaf=_leaf_pred(is_leaf))


def tree_reduce(function, tree, initializer=_pt._no_initializer, is_leaf=None):
    """``functools.reduce(function, tree_leaves(tree), initializer)``. Mirrors ``jax.tree_util.tree_reduce``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _pt._no_initializer:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    """True if every leaf of ``tree`` is truthy. Mirrors ``jax.tree_util.tree_all``."""
    return all(tree_leaves(tree, is_leaf))


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Flattens ``tree`` into ``([(key_path, leaf), ...], treedef)``. ``is_leaf(x)`` (or, with
    ``is_leaf_takes_path=True``, ``is_leaf(key_path, x)``) true makes a node a leaf. Mirrors
    ``jax.tree_util.tree_flatten_with_path``."""
    return _pt.tree_flatten_with_path(tree, _path_leaf_pred(is_leaf, is_leaf_takes_path), True)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``[(key_path, leaf), ...]`` of ``tree``, in flattening order. Mirrors
    ``jax.tree_util.tree_leaves_with_path``."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """Like :func:`tree_map`, with each leaf's key path as ``f``'s first argument: ``f(key_path, x, *ys)``.
    Mirrors ``jax.tree_util.tree_map_with_path``."""
    return _pt.tree_map_with_path(f, tree, *rest, is_leaf=_path_leaf_pred(is_leaf, is_leaf_takes_path),
                                  is_leaf_takes_path=True)


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """Broadcasts ``prefix_tree``'s leaves over the subtrees of ``full_tree`` they stand for (ValueError
    if it is not a prefix). Mirrors ``jax.tree.broadcast``."""
    return _pt.tree_broadcast(prefix_tree, full_tree, _leaf_pred(is_leaf))


def tree_reduce_associative(operation, tree, *, identity=_pt._unspecified, is_leaf=None):
    """Reduces the leaves of ``tree`` with the associative ``operation`` in a balanced tree of calls.
    Mirrors ``jax.tree.reduce_associative``."""
    return _pt.tree_reduce_associative(operation, tree, identity=identity, is_leaf=_leaf_pred(is_leaf))


def flatten_one_level(tree):
    """``(children, metadata)`` of the node ``tree``, one level deep; ValueError for a leaf ("can't
    tree-flatten type"). Mirrors ``jax.tree_util.flatten_one_level``."""
    if _is_key(tree):
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _pt.flatten_one_level(tree)


def flatten_one_level_with_keys(tree):
    """``(((key, child), ...), metadata)`` of the node ``tree``, one level deep; ValueError for a leaf.
    Mirrors ``jax.tree_util.flatten_one_level_with_keys``."""
    if _is_key(tree):
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _pt.flatten_one_level_with_keys(tree)


def is_tree_node(typ):
    """True if values of type ``typ`` are pytree nodes, False for leaf types (key arrays included).
    Mirrors ``jax.tree_util.is_tree_node``."""
    if isinstance(typ, type) and typ in _key_types:
        return False
    return _pt.is_tree_node(typ)
