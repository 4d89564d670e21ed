"""Pytrees: flattening nested containers into leaves and a structure — the implementation behind
:mod:`cranax.tree_util` (the public face, ``jax.tree_util``) and the flattening cranax's own
transformations use.

The two differ in one way only. Types registered with :func:`register_internal_node` (typed PRNG key
arrays) are leaves for users, as in JAX, but nodes here: a transformation flattening its arguments with
this module sees a key array's uint32 data as the leaf, so keys cross ``jit``/``vmap``/``scan``/... as
plain arrays and are rebuilt inside. Cranax's own modules import this module; user-facing names come
from :mod:`cranax.tree_util`.

Containers (JAX's rules): ``tuple``, ``list``, ``dict`` (children in sorted key order; unflatten
rebuilds the dict with sorted keys), ``None`` (a node with no children, not a leaf), namedtuples (any
tuple subclass with ``_fields``), ``collections.OrderedDict`` (insertion order), ``collections.defaultdict``
(sorted key order) and any type given to :func:`register_pytree_node`. Lookup is by exact type: a subclass
of ``dict`` or ``list`` is a leaf unless registered. Everything else is a leaf.

A :class:`PyTreeDef` stores its structure as a nested, hashable "spec":

* ``None`` stands for a leaf;
* ``(kind, data, children)`` for a node, ``children`` a tuple of specs and ``data`` the node's static
  data: ``None`` for tuple/list/None nodes, the sorted key tuple for dicts, the class for namedtuples,
  and ``(registration, aux_data)`` for custom nodes.

Equality and hashing of treedefs are those of the spec tuples (computed in C), so they include dict keys,
namedtuple classes, the registration of custom nodes and their aux data (compared with ``==``).

Speed (per-call flattening is Python; JAX's is C++, see benches/bench_pytree.py): flattening is one closure
per kind table with leaf children taken in the loop; unflattening a structure seen before runs a function
generated for it (see ``_generate_builder``).
"""
import builtins as _builtins
import collections as _collections
import dataclasses as _dataclasses
import difflib as _difflib
import functools as _functools
import operator as _operator
import typing as _typing

__all__ = [
    "PyTreeDef", "Partial",
    "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
    "tree_all", "tree_reduce", "tree_transpose", "treedef_is_leaf", "treedef_children",
    "treedef_tuple", "all_leaves", "register_pytree_node", "register_pytree_node_class",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "GetAttrKey", "DictKey", "SequenceKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_dataclass",
    "default_registry", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node", "register_static",
    "tree_broadcast", "tree_reduce_associative",
]

_b_all = _builtins.all
_b_map = _builtins.map
_b_zip = _builtins.zip
_b_len = _builtins.len

# Node kinds. 0 means "leaf" in the per-type classification cache.
_LEAF_KIND = 0
_NONE = 1
_TUPLE = 2
_LIST = 3
_DICT = 4
_NAMEDTUPLE = 5
_CUSTOM = 6

_NONE_SPEC = (_NONE, None, ())


class _Registration:
    """A registered custom node type (compared by identity inside treedef specs)."""

    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys", "__weakref__")

    def __init__(self, nodetype, flatten_func, unflatten_func, flatten_with_keys=None):
        self.type = nodetype
        self.flatten = flatten_func
        self.unflatten = unflatten_func
        self.flatten_with_keys = flatten_with_keys   # None: children's keys are FlattenedIndexKey(i)

    def __repr__(self):
        return f"<pytree registration {self.type.__name__}>"


# Exact type -> node kind; built-in kinds are fixed, other types are classified lazily. Two tables: cranax's
# own (``_kinds``, internal nodes such as key arrays are nodes) and the public one (``_pub_kinds``, where they
# are leaves), so that the public tree_util flattens without a per-node ``is_leaf`` call.
_BUILTIN_KINDS = {type(None): _NONE, tuple: _TUPLE, list: _LIST, dict: _DICT}
_kinds = dict(_BUILTIN_KINDS)
_pub_kinds = dict(_BUILTIN_KINDS)
_registry = {}          # exact type -> _Registration
_leaf_types = set()     # types known to be leaves (for the all-leaves fast path)
_pub_leaf_types = set()  # the same for the public table (internal nodes included)
_public_leaf_types = set()   # registered node types that the public tree_util treats as leaves
_KIND_CACHE_LIMIT = 8192


def _set_kind(t, kind):
    """Records the kind of exact type ``t`` in both tables."""
    _kinds[t] = kind
    pub = _LEAF_KIND if t in _public_leaf_types else kind
    _pub_kinds[t] = pub
    if kind == _LEAF_KIND:
        _leaf_types.add(t)
    else:
        _leaf_types.discard(t)
    if pub == _LEAF_KIND:
        _pub_leaf_types.add(t)
    else:
        _pub_leaf_types.discard(t)


def _classify(t):
    """Kind of values of exact type ``t`` (cranax's table); caches the answer in both tables."""
    if t in _registry:
        kind = _CUSTOM
    elif issubclass(t, tuple) and hasattr(t, "_fields"):
        kind = _NAMEDTUPLE
    else:
        kind = _LEAF_KIND
    if _b_len(_kinds) > _KIND_CACHE_LIMIT:   # dynamically created classes must not leak forever
        for table, leaves in ((_kinds, _leaf_types), (_pub_kinds, _pub_leaf_types)):
            table.clear()
            table.update(_BUILTIN_KINDS)
            leaves.clear()
        for rt in _registry:
            _set_kind(rt, _CUSTOM)
    _set_kind(t, kind)
    return kind


def _sorted_keys(d):
    """The keys of dict ``d`` in JAX's order (sorted)."""
    try:
        return sorted(d)
    except TypeError as e:   # keys of mutually unorderable types: JAX 0.10.2's error
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


# ----------------------------------------------------------------------------------------------
# Flattening
# ----------------------------------------------------------------------------------------------

def _make_flatten(kinds, leaf_types):
    """The flattening function over one kind table: ``flatten(x, leaves)`` appends the leaves of ``x`` to
    ``leaves`` and returns the spec of ``x``. Per-call flattening of jitted arguments and of libraries'
    ``tree_map``s is dominated by Python's call overhead: the tables are closure cells, and children of a
    known leaf type (most are arrays) are taken in the loop without a recursive call."""
    kinds_get = kinds.get

    def flatten(x, leaves):
        t = type(x)
        kind = kinds_get(t)
        if kind is None:
            _classify(t)
            kind = kinds[t]
        if kind == _LEAF_KIND:
            leaves.append(x)
            return None
        if kind == _DICT:
            try:
                keys = sorted(x)
            except TypeError:
                keys = _sorted_keys(x)
            specs = []   # the loop below, over x[k] (a list of the values first measured 20% slower)
            for k in keys:
                c = x[k]
                if type(c) in leaf_types:
                    leaves.append(c)
                    specs.append(None)
                elif c is None:
                    specs.append(_NONE_SPEC)
                else:
                    specs.append(flatten(c, leaves))
            return (kind, tuple(keys), tuple(specs))
        if kind == _TUPLE or kind == _LIST:
            data = None
            xs = x
        elif kind == _NONE:
            return _NONE_SPEC
        elif kind == _NAMEDTUPLE:
            data = t
            xs = x
        else:
            reg = _registry[t]
            xs, aux = _custom_flatten(reg, x)
            data = (reg, aux)
        specs = []   # (bound methods kept in locals measured slower: they are made per node)
        for c in xs:
            if type(c) in leaf_types:
                leaves.append(c)
                specs.append(None)
            elif c is None:   # a node without children (equinox's filtered halves hold many)
                specs.append(_NONE_SPEC)
            else:
                specs.append(flatten(c, leaves))
        return (kind, data, tuple(specs))

    return flatten


_flatten = _make_flatten(_kinds, _leaf_types)
_flatten_public = _make_flatten(_pub_kinds, _pub_leaf_types)


def _flatten_pred(x, leaves, is_leaf):
    """Like :func:`_flatten`, but ``is_leaf(node)`` true makes that node a leaf (it is called on every
    node and leaf, as JAX calls it)."""
    if is_leaf(x):
        leaves.append(x)
        return None
    return _flatten_pred_node(x, leaves, is_leaf)


def _flatten_pred_node(x, leaves, is_leaf):
    """:func:`_flatten_pred` of ``x`` once ``is_leaf(x)`` said no."""
    t = type(x)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _LEAF_KIND:
        leaves.append(x)
        return None
    if kind == _DICT:
        keys = _sorted_keys(x)
        data = tuple(keys)
        xs = [x[k] for k in keys]
    elif kind == _TUPLE or kind == _LIST:
        data = None
        xs = x
    elif kind == _NONE:
        return _NONE_SPEC
    elif kind == _NAMEDTUPLE:
        data = t
        xs = x
    else:
        reg = _registry[t]
        xs, aux = _custom_flatten(reg, x)
        data = (reg, aux)
    specs = []
    for c in xs:   # leaves of a known leaf type without a recursive call (see _make_flatten)
        if is_leaf(c) or type(c) in _leaf_types:
            leaves.append(c)
            specs.append(None)
        elif c is None:
            specs.append(_NONE_SPEC)
        else:
            specs.append(_flatten_pred_node(c, leaves, is_leaf))
    return (kind, data, tuple(specs))


def _custom_flatten(reg, x):
    out = reg.flatten(x)
    try:
        children, aux = out
    except (TypeError, ValueError):
        raise ValueError(
            f"The flatten function registered for {reg.type.__name__} must return a pair "
            f"(children, aux_data); got {out!r}") from None
    return children, aux


# Treedefs of flat tuples/lists of leaves, by (kind, length): the common case of jitted arguments.
_flat_seq_treedefs = {}


def tree_flatten(tree, is_leaf=None):
    """Flattens ``tree`` into ``(leaves, treedef)``.

    ``is_leaf``, if given, is called on every node (before looking at its type); a true result makes
    the node a leaf. ``None`` is a node with no children, not a leaf (unless ``is_leaf`` says so).
    """
    if is_leaf is None:
        return _tree_flatten(tree, _flatten, _leaf_types)
    leaves = []
    spec = _flatten_pred(tree, leaves, is_leaf)
    return leaves, _make_treedef(spec, _b_len(leaves))


def tree_flatten_public(tree):
    """:func:`tree_flatten` without ``is_leaf`` as the public ``tree_util`` sees trees: the types given to
    :func:`register_internal_node` (key arrays) are leaves."""
    return _tree_flatten(tree, _flatten_public, _pub_leaf_types)


def _tree_flatten(tree, flatten, leaf_types):
    t = type(tree)
    if (t is tuple or t is list) and set(_b_map(type, tree)) <= leaf_types:
        # Fast path: a flat tuple/list of leaves (e.g. the arguments of a jitted call).
        n = _b_len(tree)
        kind = _TUPLE if t is tuple else _LIST
        td = _flat_seq_treedefs.get((kind, n))
        if td is None:
            td = _flat_seq_treedefs[(kind, n)] = _make_treedef((kind, None, (None,) * n), n)
        return list(tree), td
    leaves = []
    spec = flatten(tree, leaves)
    return leaves, _make_treedef(spec, _b_len(leaves))


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree``, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The :class:`PyTreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def all_leaves(iterable, is_leaf=None):
    """True if every element of ``iterable`` is a leaf."""
    if is_leaf is None:
        for x in iterable:
            t = type(x)
            kind = _kinds.get(t)
            if kind is None:
                kind = _classify(t)
            if kind != _LEAF_KIND:
                return False
        return True
    return _b_all(tree_structure(x, is_leaf)._spec is None for x in iterable)


# ----------------------------------------------------------------------------------------------
# Unflattening
# ----------------------------------------------------------------------------------------------

def _build(spec, it):
    """Rebuilds the value of ``spec`` taking leaves from iterator ``it``."""
    if spec is None:
        return next(it)
    kind, data, children = spec
    if kind == _NONE:
        return None
    # Leaf children are taken inline (no recursive call per leaf; see _flatten_children).
    vals = [next(it) if c is None else _build(c, it) for c in children]
    if kind == _TUPLE:
        return tuple(vals)
    if kind == _LIST:
        return vals
    if kind == _DICT:
        return dict(_b_zip(data, vals))
    if kind == _NAMEDTUPLE:
        return data(*vals)
    reg, aux = data
    return reg.unflatten(aux, tuple(vals))


# Unflattening with generated code. ``_build`` walks the spec, one Python call per node; a structure that
# is unflattened again (every call of a jitted function rebuilds the same output tree; optax and equinox
# rebuild the same parameter trees) gets a function generated for it instead, one expression
# ``{s[1][0]: [l[0], l[1]], ...}`` that reads the leaves by index and the static data (dict keys, custom
# aux data) from the spec it is given, so treedefs that are equal but hold different (equal) data still
# rebuild their own. Only the parts that equality compares by identity (namedtuple classes, custom node
# registrations) are constants of the generated code.
_builders = {}                  # spec -> generated function, or how many times it was seen before
_BUILDERS_LIMIT = 2048
# Generating costs ~0.2 ms (an exec); tracing a library like diffrax unflattens ~60 structures 2-7 times and
# never again, so a structure is generated for on its _GENERATE_AT-th unflatten, not its second.
_GENERATE_AT = 8
_MAX_GENERATED_NODES = 2000     # nodes and leaves; bigger or deeper structures keep the generic walk
_MAX_GENERATED_DEPTH = 40


def _build_generic(leaves, spec):
    return _build(spec, iter(leaves))


def _build_once(leaves, spec):
    """The generic walk for a structure seen once (a distinct function object: the next unflatten of the
    structure generates its function)."""
    return _build_generic(leaves, spec)


def _builder(td):
    """The function ``(leaves, spec) -> tree`` to unflatten treedef ``td`` with; kept on ``td`` once final.
    Hashable structures share generated functions through ``_builders``; an unhashable one (custom aux
    data holding a list) gets its own on the second unflatten of the same treedef."""
    spec = td._spec
    try:
        entry = _builders.get(spec)
    except Exception:   # unhashable aux data, or an __eq__ that does not give a bool
        if td._unflat is _build_once:
            td._unflat = _generate_builder(spec) or _build_generic
        else:
            td._unflat = _build_once
        return td._unflat
    if entry is None:
        if _b_len(_builders) >= _BUILDERS_LIMIT:
            _builders.clear()
        _builders[spec] = 1
        return _build_once
    if type(entry) is int:
        if entry + 1 < _GENERATE_AT:
            _builders[spec] = entry + 1
            return _build_once
        entry = _builders[spec] = _generate_builder(spec) or _build_generic
    td._unflat = entry
    return entry


def _generate_builder(spec):
    """Generated code for ``spec`` (see above), or None when it is too large or deep."""
    consts = {}
    leaf = [0]
    nodes = [0]

    def expr(sp, path, depth):
        nodes[0] += 1
        if nodes[0] > _MAX_GENERATED_NODES or depth > _MAX_GENERATED_DEPTH:
            raise OverflowError
        if sp is None:
            leaf[0] += 1
            return f"l[{leaf[0] - 1}]"
        kind, data, children = sp
        if kind == _NONE:
            return "None"
        parts = [expr(c, f"{path}[2][{j}]", depth + 1) for j, c in enumerate(children)]
        if kind == _TUPLE:
            return "(" + "".join(p + ", " for p in parts) + ")"
        if kind == _LIST:
            return "[" + ", ".join(parts) + "]"
        if kind == _DICT:
            return "{" + ", ".join(f"{path}[1][{j}]: {p}" for j, p in enumerate(parts)) + "}"
        name = f"c{_b_len(consts)}"
        if kind == _NAMEDTUPLE:
            consts[name] = data
            return f"{name}({', '.join(parts)})"
        consts[name] = data[0].unflatten
        return f"{name}({path}[1][1], (" + "".join(p + ", " for p in parts) + "))"

    try:
        body = expr(spec, "s", 0)
        exec(f"def unflatten(l, s):\n    return {body}\n", consts)   # noqa: S102 (code built from the spec above)
    except (OverflowError, RecursionError, SyntaxError, MemoryError):   # too big for the compiler: walk it
        return None
    return consts["unflatten"]


def tree_unflatten(treedef, leaves):
    """Rebuilds a pytree of structure ``treedef`` from an iterable of leaves."""
    return treedef.unflatten(leaves)


# ----------------------------------------------------------------------------------------------
# Spec utilities
# ----------------------------------------------------------------------------------------------

def _count(spec):
    """(num_leaves, num_nodes) of a spec."""
    if spec is None:
        return 1, 1
    n_leaves, n_nodes = 0, 1
    for c in spec[2]:
        if c is None:
            n_leaves += 1
            n_nodes += 1
        else:
            a, b = _count(c)
            n_leaves += a
            n_nodes += b
    return n_leaves, n_nodes


def _spec_str(spec):
    if spec is None:
        return "*"
    kind, data, children = spec
    parts = [_spec_str(c) for c in children]
    if kind == _TUPLE:
        return "(" + ", ".join(parts) + ("," if _b_len(parts) == 1 else "") + ")"
    if kind == _LIST:
        return "[" + ", ".join(parts) + "]"
    if kind == _DICT:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in _b_zip(data, parts)) + "}"
    if kind == _NONE:
        return "None"
    if kind == _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{data.__name__}], [{', '.join(parts)}])"
    reg, aux = data
    return f"CustomNode({reg.type.__name__}[{aux}], [{', '.join(parts)}])"


def _spec_hash(spec):
    """Hash of a spec whose custom aux data may be unhashable (those aux data are skipped)."""
    if spec is None:
        return 0x5bd1e995
    kind, data, children = spec
    if kind == _CUSTOM:
        reg, aux = data
        try:
            h = hash((reg, aux))
        except TypeError:
            h = hash(reg)
    else:
        h = hash((kind, data))
    return hash((h, tuple([_spec_hash(c) for c in children])))


def _spec_compose(spec, inner):
    if spec is None:
        return inner
    kind, data, children = spec
    return (kind, data, tuple([_spec_compose(c, inner) for c in children]))


def _type_name(x):
    return type(x).__name__


def _same_node_data(a, b):
    try:
        return a is b or bool(a == b)
    except Exception:   # static data whose == is not a bool (arrays): the same object only
        return False


def broadcast_prefix(prefix_leaves, prefix_def, full_def):
    """One entry per leaf of ``full_def``: each leaf of the prefix tree (``prefix_leaves``/``prefix_def``)
    repeated over the leaves of the subtree it covers, as JAX's ``broadcast_flattened_prefix_with_treedef``:
    no value of ``full_def``'s structure is built, so custom nodes' unflatten functions never see
    placeholders. ValueError when ``prefix_def`` is not a prefix of ``full_def``."""
    out = []
    it = iter(prefix_leaves)

    def go(p, f):
        if p is None:
            v = next(it)
            out.extend([v] * (1 if f is None else _count(f)[0]))
            return
        if f is None or p[0] != f[0] or _b_len(p[2]) != _b_len(f[2]) or not _same_node_data(p[1], f[1]):
            raise ValueError("not a tree prefix")
        for a, b in zip(p[2], f[2]):
            go(a, b)
    go(prefix_def._spec, full_def._spec)
    return out


def _flatten_up_to(spec, x, out):
    """Appends to ``out`` the subtrees of ``x`` found at the leaf positions of ``spec``.

    Raises ValueError (with a description of the first mismatch) when ``spec`` is not a prefix of
    the structure of ``x``.
    """
    if spec is None:
        out.append(x)
        return
    kind, data, children = spec
    t = type(x)
    if kind == _TUPLE:
        if t is not tuple:
            raise ValueError(f"Expected tuple, got {_short_repr(x)}.")
        if _b_len(x) != _b_len(children):
            raise ValueError(f"Tuple arity mismatch: {_b_len(x)} != {_b_len(children)}; "
                             f"tuple: {_short_repr(x)}.")
        _children_up_to(children, x, out)
    elif kind == _LIST:
        if t is not list:
            raise ValueError(f"Expected list, got {_short_repr(x)}.")
        if _b_len(x) != _b_len(children):
            raise ValueError(f"List arity mismatch: {_b_len(x)} != {_b_len(children)}; "
                             f"list: {_short_repr(x)}.")
        _children_up_to(children, x, out)
    elif kind == _DICT:
        if t is not dict:
            raise ValueError(f"Expected dict, got {_short_repr(x)}.")
        keys = tuple(_sorted_keys(x))
        if keys != data:
            raise ValueError(f"Dict key mismatch; expected keys: {list(data)!r}; "
                             f"dict: {_short_repr(x)}.")
        _children_up_to(children, [x[k] for k in keys], out)
    elif kind == _NONE:
        if x is not None:
            raise ValueError(f"Expected None, got {_short_repr(x)}.")
    elif kind == _NAMEDTUPLE:
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            raise ValueError(f"Expected named tuple, got {_short_repr(x)}.")
        if _b_len(x) != _b_len(children):
            raise ValueError(f"Named tuple arity mismatch: {_b_len(x)} != {_b_len(children)}; "
                             f"tuple: {_short_repr(x)}.")
        if t is not data:
            raise ValueError(f"Named tuple type mismatch: expected type: {data!r}, "
                             f"tuple: {_short_repr(x)}.")
        _children_up_to(children, x, out)
    else:
        reg, aux = data
        if _registry.get(t) is not reg:
            raise ValueError(f"Custom node type mismatch; expected type: {reg.type!r}; "
                             f"value: {_short_repr(x)}.")
        sub, aux2 = _custom_flatten(reg, x)
        sub = list(sub)
        try:
            same = aux2 == aux
            same = bool(same)
        except Exception:  # e.g. array-valued aux data
            same = aux2 is aux
        if not same:
            raise ValueError(f"Mismatch custom node data: {aux2!r} != {aux!r}; "
                             f"value: {_short_repr(x)}.")
        if _b_len(sub) != _b_len(children):
            raise ValueError(f"Custom type arity mismatch: {_b_len(sub)} != {_b_len(children)}; "
                             f"value: {_short_repr(x)}.")
        _children_up_to(children, sub, out)


def _children_up_to(children, xs, out):
    """``_flatten_up_to`` over matched children: a leaf position takes its value without a recursive call
    (the per-call cost of tree_map & co. is mostly Python calls)."""
    for c, v in _b_zip(children, xs):
        if c is None:
            out.append(v)
        else:
            _flatten_up_to(c, v, out)


def _short_repr(x, limit=200):
    try:
        r = repr(x)
    except Exception:
        r = f"<{_type_name(x)} object>"
    return r if _b_len(r) <= limit else r[:limit] + "..."


# ----------------------------------------------------------------------------------------------
# PyTreeDef
# ----------------------------------------------------------------------------------------------

_FAST_TUPLE = 1
_FAST_LIST = 2


class PyTreeDef:
    """The structure of a pytree: hashable, comparable, with ``unflatten``, ``children`` and counts.

    Construct treedefs with :func:`tree_structure` / :func:`tree_flatten`, not directly.
    """

    __slots__ = ("_spec", "_num_leaves", "_num_nodes", "_hash", "_fast", "_unflat")

    def __init__(self, *args, **kwargs):
        raise TypeError("PyTreeDef objects are created by tree_flatten/tree_structure")

    # -- properties ---------------------------------------------------------------------------
    @property
    def num_leaves(self):
        return self._num_leaves

    @property
    def num_nodes(self):
        n = self._num_nodes
        if n is None:
            n = self._num_nodes = _count(self._spec)[1]
        return n

    # -- (un)flattening -----------------------------------------------------------------------
    def unflatten(self, leaves):
        """Builds the pytree of this structure from ``leaves`` (any iterable)."""
        fast = self._fast
        if fast:
            vals = tuple(leaves) if fast == _FAST_TUPLE else list(leaves)
            if _b_len(vals) != self._num_leaves:
                self._leaf_count_error(_b_len(vals))
            return vals
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        if _b_len(leaves) != self._num_leaves:
            self._leaf_count_error(_b_len(leaves))
        build = self._unflat
        if build is None or build is _build_once:
            build = _builder(self)
        return build(leaves, self._spec)

    def _leaf_count_error(self, got):
        # JAX 0.10.2's words (the count it got only when too few)
        if got < self._num_leaves:
            raise ValueError(f"Too few leaves for PyTreeDef; expected {self._num_leaves}, got {got}")
        raise ValueError(f"Too many leaves for PyTreeDef; expected {self._num_leaves}.")

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this structure's leaf positions (this must be a prefix of
        ``tree``'s structure; ValueError otherwise)."""
        out = []
        _flatten_up_to(self._spec, tree, out)
        return out

    def children(self):
        """The treedefs of the root node's children (``[]`` for a leaf)."""
        spec = self._spec
        if spec is None:
            return []
        return [_make_treedef(c, _count(c)[0]) for c in spec[2]]

    def compose(self, inner):
        """The treedef obtained by replacing every leaf of this one with ``inner``."""
        return _make_treedef(_spec_compose(self._spec, inner._spec),
                             self._num_leaves * inner._num_leaves)

    def node_data(self):
        """``(type, static data)`` of the root node, or None for a leaf."""
        spec = self._spec
        if spec is None:
            return None
        kind, data, _ = spec
        if kind == _NONE:
            return (type(None), None)
        if kind == _TUPLE:
            return (tuple, None)
        if kind == _LIST:
            return (list, None)
        if kind == _DICT:
            return (dict, list(data))
        if kind == _NAMEDTUPLE:
            return (data, None)
        reg, aux = data
        return (reg.type, aux)

    # -- comparisons --------------------------------------------------------------------------
    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self._num_leaves == other._num_leaves and self._spec == other._spec

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = hash(self._spec)
            except TypeError:   # unhashable custom aux data
                h = _spec_hash(self._spec)
            self._hash = h
        return h

    def __repr__(self):
        return f"PyTreeDef({_spec_str(self._spec)})"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("PyTreeDef objects cannot be pickled in cranax")


def _make_treedef(spec, num_leaves):
    td = object.__new__(PyTreeDef)
    td._spec = spec
    td._num_leaves = num_leaves
    td._num_nodes = None
    td._hash = None
    td._unflat = None
    fast = 0
    if spec is not None and (spec[0] == _TUPLE or spec[0] == _LIST):
        children = spec[2]
        if children.count(None) == _b_len(children):   # a flat tuple/list of leaves
            fast = _FAST_TUPLE if spec[0] == _TUPLE else _FAST_LIST
    td._fast = fast
    return td


def treedef_is_leaf(treedef):
    """True if ``treedef`` has a single node (a leaf, ``None`` or an empty container), as in JAX."""
    return treedef.num_nodes == 1


def treedef_children(treedef):
    """The treedefs of the root's children."""
    return treedef.children()


def treedef_tuple(treedefs):
    """The treedef of a tuple whose children have the given treedefs."""
    treedefs = list(treedefs)
    return _make_treedef((_TUPLE, None, tuple(td._spec for td in treedefs)),
                         sum(td._num_leaves for td in treedefs))


# ----------------------------------------------------------------------------------------------
# Mapping, reducing, transposing
# ----------------------------------------------------------------------------------------------

def tree_map(f, tree, *rest, is_leaf=None):
    """Applies ``f`` leafwise: ``f(x, *ys)`` for each leaf ``x`` of ``tree`` and the corresponding
    subtrees ``ys`` of the trees in ``rest`` (each must have ``tree``'s structure, or have it as a
    prefix). Returns a pytree with ``tree``'s structure."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves_ = [leaves]
    for i, r in enumerate(rest):
        all_leaves_.append(_flatten_rest_up_to("tree_map", treedef, tree, r, i, is_leaf))
    return treedef.unflatten([f(*xs) for xs in _b_zip(*all_leaves_)])


def _flatten_rest_up_to(what, treedef, tree, r, i, is_leaf):
    """``treedef.flatten_up_to(r)``; on a mismatch, JAX's "pytree structure error" naming the key path
    where ``r`` (argument ``i + 2`` of ``what``) first differs, then both structures."""
    try:
        return treedef.flatten_up_to(r)
    except ValueError as e:
        err = next(_prefix_errors((), tree, r, is_leaf), None)
        both = (f"the tree at argument position {i + 2} does not match the structure of the first tree (or have "
                f"it as a prefix): {treedef} vs {_safe_structure(r)}.")
        if err is None:
            raise ValueError(f"{what}: {both} {e}") from None
        raise err(what + " tree") from None   # JAX raises the prefix error alone


def _one_level(x):
    """``(children, metadata, keys)`` of a node, as JAX's ``flatten_one_level(_with_keys)``."""
    t = type(x)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _TUPLE or kind == _LIST:
        return list(x), None, [SequenceKey(i) for i in range(_b_len(x))]
    if kind == _DICT:
        keys = _sorted_keys(x)
        return [x[k] for k in keys], tuple(keys), [DictKey(k) for k in keys]
    if kind == _NONE:
        return [], None, []
    if kind == _NAMEDTUPLE:
        return list(x), t, [GetAttrKey(n) for n in t._fields]
    reg = _registry[t]
    if reg.flatten_with_keys is not None:
        pairs, aux = reg.flatten_with_keys(x)
        pairs = list(pairs)
        return [c for _, c in pairs], aux, [k for k, _ in pairs]
    children, aux = _custom_flatten(reg, x)
    children = list(children)
    return children, aux, [FlattenedIndexKey(i) for i in range(_b_len(children))]


def equality_errors(path, t1, t2, is_leaf=None):
    """Yields ``(path, thing1, thing2, explanation)`` for the first place (per branch) where the structures of
    ``t1`` and ``t2`` differ: Python types, sequence lengths, numbers of children, node metadata. JAX's
    private ``jax._src.tree_util.equality_errors`` (its carry-type errors are built from it)."""
    s1, s2 = tree_structure(t1, is_leaf), tree_structure(t2, is_leaf)
    if s1.num_nodes == 1 and s1.num_leaves == 1 and s2.num_nodes == 1 and s2.num_leaves == 1:
        return
    if type(t1) != type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and _b_len(t1) != _b_len(t2):
        yield (path, f"{type(t1).__name__} of length {_b_len(t1)}", f"{type(t2).__name__} of length {_b_len(t2)}",
               "the lengths do not match")
        return
    c1, m1, k1 = _one_level(t1)
    c2, m2, k2 = _one_level(t2)
    if _b_len(c1) != _b_len(c2):
        try:
            diff = " ".join(repr(k._value()) for k in set(k1).symmetric_difference(set(k2)))
        except Exception:   # unhashable keys: no key-set text, as JAX
            diff = ""

        def kids(t, n):
            return f"{type(t)} with {n} child{'ren' if n > 1 else ''}"
        yield (path, kids(t1, _b_len(c1)), kids(t2, _b_len(c2)),
               "the numbers of children do not match" + (f", with the symmetric difference of key sets: {{{diff}}}"
                                                          if diff else ""))
        return
    if m1 != m2:
        yield (path, f"{type(t1)} with pytree metadata {m1}", f"{type(t2)} with pytree metadata {m2}",
               "the pytree node metadata does not match")
        return
    for k, a, b in _b_zip(k1, c1, c2):
        yield from equality_errors((*path, k), a, b, is_leaf)


def _key_text(k):
    return str(k._value()) if isinstance(k, _Key) else str(k)


def _prefix_errors(path, prefix, full, is_leaf=None):
    """Yields, for each place where ``prefix`` is not a prefix of ``full``, a function of the tree's name
    giving JAX's ValueError for it (``is_leaf`` applies at the root, as in JAX)."""
    pdef = tree_structure(prefix, is_leaf)
    if pdef.num_nodes == 1 and pdef.num_leaves == 1:   # a leaf is a prefix of anything
        return
    at = keystr(path)
    if type(prefix) is not type(full):
        yield lambda name: ValueError(
            f"pytree structure error: different types at key path\n    {name}{at}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
            f"but at the same key path the full pytree has a subtree of different type\n    {type(full)}.")
        return
    p_children, p_meta, p_keys = _one_level(prefix)
    f_children, f_meta, f_keys = _one_level(full)
    if isinstance(prefix, (list, tuple)):
        if _b_len(prefix) != _b_len(full):
            ty = type(prefix).__name__
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {ty} at key path\n    {name}{at}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type {ty} of length "
                f"{_b_len(prefix)}, but the full pytree has a subtree of the same type but of length "
                f"{_b_len(full)}.")
            return
    elif _b_len(p_children) != _b_len(f_children):
        try:
            diff = set(p_keys).symmetric_difference(set(f_keys))
        except TypeError:
            diff = None
        yield lambda name: ValueError(
            f"pytree structure error: different numbers of pytree children at key path\n    {name}{at}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
            f"with {_b_len(p_children)} child keys\n    {' '.join(_b_map(_key_text, p_keys))}\n"
            f"but at the same key path the full pytree has a subtree of the same type but with "
            f"{_b_len(f_children)} child keys\n    {' '.join(_b_map(_key_text, f_keys))}\n"
            + ("" if diff is None else
               f"so the symmetric difference on key sets is\n    {' '.join(_b_map(_key_text, diff))}"))
        return
    try:
        same = bool(p_meta == f_meta)
    except Exception:  # e.g. array-valued aux data
        same = p_meta is f_meta
    if not same:
        p_str, f_str = str(p_meta), str(f_meta)
        diff = "\n".join("    " + ln for ln in _difflib.ndiff(p_str.splitlines(), f_str.splitlines()))
        yield lambda name: ValueError(
            f"pytree structure error: different pytree metadata at key path\n    {name}{at}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n    {type(prefix)}\n"
            f"with metadata\n    {p_str}\n"
            f"but at the same key path the full pytree has a subtree of the same type but with metadata\n"
            f"    {f_str}\nso the diff in the metadata at these pytree nodes is\n{diff}")
        return
    for k, a, b in _b_zip(p_keys, p_children, f_children):
        yield from _prefix_errors(path + (k,), a, b)


def _safe_structure(x):
    try:
        return tree_structure(x)
    except Exception:
        return f"<structure of {_type_name(x)}>"


_no_initializer = object()


def tree_reduce(function, tree, initializer=_no_initializer, is_leaf=None):
    """``functools.reduce(function, tree_leaves(tree), initializer)``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _no_initializer:
        return _functools.reduce(function, leaves)
    return _functools.reduce(function, leaves, initializer)


def tree_all(tree, *, is_leaf=None):
    """True if every leaf of ``tree`` is truthy."""
    return _b_all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns a tree of structure ``outer(inner)`` into one of structure ``inner(outer)``.

    ``inner_treedef`` may be None: it is then inferred from the first outer-level subtree.
    """
    if inner_treedef is None:
        firsts = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not firsts:
            raise ValueError("tree_transpose: cannot infer inner_treedef from an empty outer tree")
        inner_treedef = tree_structure(firsts[0])
    flat, treedef = tree_flatten(pytree_to_transpose)
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    expected = outer_treedef.compose(inner_treedef)
    if treedef.num_leaves != inner_size * outer_size or treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    subtrees = [outer_treedef.unflatten(col) for col in _b_zip(*rows)] if rows else \
        [outer_treedef.unflatten([]) for _ in range(inner_size)]
    return inner_treedef.unflatten(subtrees)


# ----------------------------------------------------------------------------------------------
# Key paths
# ----------------------------------------------------------------------------------------------

class _Key:
    """A key path entry: immutable, compared and hashed by type and value, printed as JAX prints it."""

    __slots__ = ()
    __match_args__ = ()

    def _value(self):
        return getattr(self, self.__match_args__[0])

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other):
        return type(other) is type(self) and self._value() == other._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self.__match_args__[0]}={self._value()!r})"

    def __reduce__(self):
        return (type(self), (self._value(),))


class GetAttrKey(_Key):
    """The key of a child reached by attribute ``name`` (namedtuple fields, dataclass fields): ``.name``."""

    __slots__ = ("name",)
    __match_args__ = ("name",)

    def __init__(self, name):
        object.__setattr__(self, "name", name)

    def __str__(self):
        return f".{self.name}"


class DictKey(_Key):
    """The key of a dict entry: ``['a']``."""

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key):
        object.__setattr__(self, "key", key)

    def __str__(self):
        return f"[{self.key!r}]"


class SequenceKey(_Key):
    """The key of a tuple/list element: ``[0]``."""

    __slots__ = ("idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx):
        object.__setattr__(self, "idx", idx)

    def __str__(self):
        return f"[{self.idx!r}]"


class FlattenedIndexKey(_Key):
    """The key of the ``key``-th child of a custom node registered without keys: ``[<flat index 0>]``."""

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key):
        object.__setattr__(self, "key", key)

    def __str__(self):
        return f"[<flat index {self.key}>]"


KeyEntry = _typing.TypeVar("KeyEntry", bound=_typing.Any)
KeyPath = _typing.Tuple[KeyEntry, ...]


def keystr(keys, *, simple=False, separator=""):
    """The key path ``keys`` as text: ``"['a'][0].x"``, or with ``simple=True`` the bare keys joined by
    ``separator`` (``keystr(p, simple=True, separator="/")`` gives ``"a/0/x"``)."""
    str_fn = _simple_keystr if simple else str
    return separator.join(_b_map(str_fn, keys))


def _simple_keystr(key):
    if isinstance(key, _Key):
        return str(key._value())
    return str(key)


def _flatten_with_path(x, path, out, is_leaf):
    """Appends ``(path, leaf)`` pairs of ``x`` to ``out``; returns the spec of ``x`` (as :func:`_flatten`)."""
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        return None
    t = type(x)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _LEAF_KIND:
        out.append((path, x))
        return None
    if kind == _TUPLE or kind == _LIST:
        return (kind, None, tuple([_flatten_with_path(c, path + (SequenceKey(i),), out, is_leaf)
                                   for i, c in enumerate(x)]))
    if kind == _DICT:
        keys = _sorted_keys(x)
        return (_DICT, tuple(keys), tuple([_flatten_with_path(x[k], path + (DictKey(k),), out, is_leaf)
                                           for k in keys]))
    if kind == _NONE:
        return _NONE_SPEC
    if kind == _NAMEDTUPLE:
        return (_NAMEDTUPLE, t, tuple([_flatten_with_path(c, path + (GetAttrKey(f),), out, is_leaf)
                                       for f, c in _b_zip(t._fields, x)]))
    reg = _registry[t]
    if reg.flatten_with_keys is None:
        children, aux = _custom_flatten(reg, x)
        keyed = [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
    else:
        out_ = reg.flatten_with_keys(x)
        try:
            keyed, aux = out_
            keyed = [(k, c) for k, c in keyed]
        except (TypeError, ValueError):
            raise ValueError(
                f"The flatten_with_keys function registered for {reg.type.__name__} must return a pair "
                f"(((key, child), ...), aux_data); got {out_!r}") from None
    return (_CUSTOM, (reg, aux), tuple([_flatten_with_path(c, path + (k,), out, is_leaf)
                                        for k, c in keyed]))


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Flattens ``tree`` into ``([(key_path, leaf), ...], treedef)``. ``is_leaf(x)`` (or, with
    ``is_leaf_takes_path=True``, ``is_leaf(key_path, x)``) true makes a node a leaf."""
    if is_leaf is not None and not is_leaf_takes_path:
        pred = is_leaf
        is_leaf = lambda _, x: pred(x)  # noqa: E731
    out = []
    spec = _flatten_with_path(tree, (), out, is_leaf)
    return out, _make_treedef(spec, _b_len(out))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``[(key_path, leaf), ...]`` of ``tree``, in flattening order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """Like :func:`tree_map`, with each leaf's key path as ``f``'s first argument:
    ``f(key_path, x, *ys)``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    columns = [[p for p, _ in pairs], [x for _, x in pairs]]
    root_is_leaf = None if is_leaf is None else (lambda x: is_leaf((), x)) if is_leaf_takes_path else is_leaf
    for i, r in enumerate(rest):
        columns.append(_flatten_rest_up_to("tree_map_with_path", treedef, tree, r, i, root_is_leaf))
    return treedef.unflatten([f(*xs) for xs in _b_zip(*columns)])


# ----------------------------------------------------------------------------------------------
# Registration
# ----------------------------------------------------------------------------------------------

def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Registers ``nodetype`` as a pytree node; returns None, as JAX's does.

    ``flatten_func(x) -> (children, aux_data)``: ``children`` an iterable of subtrees, ``aux_data``
    hashable static data (it is part of the treedef, so it is compared and hashed when treedefs are
    used as cache keys). ``unflatten_func(aux_data, children) -> x``. ``flatten_with_keys_func(x) ->
    (((key, child), ...), aux_data)`` gives the children's keys for key paths (without it they are
    ``FlattenedIndexKey(i)``).
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node expects a type, got {nodetype!r}")
    if nodetype in _registry or nodetype in _BUILTIN_KINDS:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype!r}.")
    _registry[nodetype] = _Registration(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)
    _set_kind(nodetype, _CUSTOM)


def register_internal_node(nodetype, flatten_func, unflatten_func):
    """Registers ``nodetype`` as a node for cranax's own flattening only: :mod:`cranax.tree_util` (and
    so users and libraries) sees its values as leaves, as JAX sees key arrays."""
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    _public_leaf_types.add(nodetype)
    _set_kind(nodetype, _CUSTOM)   # now a leaf in the public table


def register_pytree_node_class(cls):
    """Class decorator: registers ``cls`` using its ``tree_flatten`` method and ``tree_unflatten``
    classmethod."""
    register_pytree_node(cls, _operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Registers ``nodetype`` with keyed children: ``flatten_with_keys(x) -> (((key, child), ...),
    aux_data)``. ``flatten_func`` (the same without keys, faster) is derived when not given. Returns None."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    """Class decorator: registers ``cls`` with its ``tree_flatten_with_keys`` method, ``tree_unflatten``
    classmethod and, when it has one, ``tree_flatten`` method."""
    flatten_func = _operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, _operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten,
                              flatten_func)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass-like ``nodetype``: ``data_fields`` are children (keyed ``GetAttrKey``),
    ``meta_fields`` static aux data (a tuple of their values). For a dataclass both may be omitted: fields
    whose ``metadata`` has ``static=True`` are meta, the others data. Returns ``nodetype`` (a decorator)."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified"
                            f" when either is specified. Got {data_fields=} {meta_fields=}.")
        if not _dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got {nodetype=}.")
        fields = _dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    meta_fields = tuple(meta_fields)
    data_fields = tuple(data_fields)
    if _dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in _dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if {*meta_fields, *data_fields} != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with"
                   " ``init=True`` and only them.")
            missing = init_fields - {*meta_fields, *data_fields}
            if missing:
                msg += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
            unexpected = {*meta_fields, *data_fields} - init_fields
            if unexpected:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields: {overlap}.")
    keys = tuple(GetAttrKey(name) for name in data_fields)

    def flatten(x):
        return tuple([getattr(x, n) for n in data_fields]), tuple([getattr(x, n) for n in meta_fields])

    def flatten_with_keys(x):
        return (tuple(_b_zip(keys, [getattr(x, n) for n in data_fields])),
                tuple([getattr(x, n) for n in meta_fields]))

    def unflatten(meta, data):
        return nodetype(**dict(_b_zip(meta_fields, meta)), **dict(_b_zip(data_fields, data)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


# collections.OrderedDict: children in insertion order, keys as aux data.
register_pytree_with_keys(
    _collections.OrderedDict,
    lambda d: (tuple([(DictKey(k), v) for k, v in d.items()]), tuple(d.keys())),
    lambda keys, values: _collections.OrderedDict(_b_zip(keys, values)),
    lambda d: (tuple(d.values()), tuple(d.keys())),
)


def _flatten_defaultdict(d):
    keys = tuple(_sorted_keys(d))
    return tuple([d[k] for k in keys]), (d.default_factory, keys)


def _flatten_defaultdict_with_keys(d):
    keys = tuple(_sorted_keys(d))
    return tuple([(DictKey(k), d[k]) for k in keys]), (d.default_factory, keys)


register_pytree_with_keys(
    _collections.defaultdict,
    _flatten_defaultdict_with_keys,
    lambda aux, values: _collections.defaultdict(aux[0], _b_zip(aux[1], values)),
    _flatten_defaultdict,
)


# ----------------------------------------------------------------------------------------------
# Partial
# ----------------------------------------------------------------------------------------------

class _CallableBox:
    """Wraps a ``functools.partial`` used as the function of a :class:`Partial`, so that
    ``functools.partial`` does not merge its arguments into the outer Partial (the inner partial's
    arguments stay static, the outer Partial's are the pytree children). Hash/eq delegate."""

    __slots__ = ("wrapped", "func", "args", "keywords")

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.func = wrapped.func
        self.args = wrapped.args
        self.keywords = wrapped.keywords

    def __call__(self, *args, **kwargs):
        return self.wrapped(*args, **kwargs)

    def __eq__(self, other):
        if isinstance(other, _CallableBox):
            return self.wrapped == other.wrapped
        return self.wrapped == other

    def __hash__(self):
        return hash(self.wrapped)

    def __repr__(self):
        return repr(self.wrapped)


class Partial(_functools.partial):
    """A ``functools.partial`` that is a pytree: ``func`` is static (treedef aux data); the bound
    positional arguments and keywords are the children. Useful for passing closures through jit."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, _functools.partial):
            func = _CallableBox(func)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)



# ----------------------------------------------------------------------------------------------
# One level of flattening, the registry object, broadcasting and associative reduction
# ----------------------------------------------------------------------------------------------

def _require_node(tree):
    t = type(tree)
    kind = _kinds.get(t)
    if kind is None:
        kind = _classify(t)
    if kind == _LEAF_KIND:
        raise ValueError(f"can't tree-flatten type: {t}")
    return kind


def flatten_one_level(tree):
    """``(children, metadata)`` of the node ``tree``, one level deep: a tuple/list gives its items and None,
    a dict its values (sorted keys) and the key tuple, a custom node what its flatten function returns.
    Raises ValueError for a leaf ("can't tree-flatten type"). Mirrors ``jax.tree_util.flatten_one_level``."""
    kind = _require_node(tree)
    if kind == _CUSTOM:
        return _custom_flatten(_registry[type(tree)], tree)
    children, meta, _ = _one_level(tree)
    return tuple(children), meta


def flatten_one_level_with_keys(tree):
    """``(((key, child), ...), metadata)`` of the node ``tree``, one level deep (keys as in key paths).
    Raises ValueError for a leaf. Mirrors ``jax.tree_util.flatten_one_level_with_keys``."""
    _require_node(tree)
    children, meta, keys = _one_level(tree)
    return tuple(_b_zip(keys, children)), meta


def is_tree_node(typ):
    """True if values of type ``typ`` are pytree nodes (tuple, list, dict, None's type, namedtuples and
    registered types), False for leaf types. Mirrors ``jax.tree_util.is_tree_node``."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node expects a type, got {typ!r}")
    kind = _kinds.get(typ)
    if kind is None:
        kind = _classify(typ)
    return kind != _LEAF_KIND


def register_static(cls):
    """Registers ``cls`` as a node with no children whose value is its own static data: instances vanish from
    the leaves and become part of the treedef (so they must be hashable). Returns ``cls`` (a decorator).
    Mirrors ``jax.tree_util.register_static``."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree`` with each of its leaves repeated over the subtree of ``full_tree`` at its place: the
    result has ``full_tree``'s structure. Raises ValueError (JAX's pytree structure error, naming the key
    path) when ``prefix_tree`` is not a prefix of ``full_tree``. Mirrors ``jax.tree_util.tree_broadcast``."""
    full_def = tree_structure(full_tree, is_leaf)
    pdef = tree_structure(prefix_tree, is_leaf)
    try:
        subtrees = pdef.flatten_up_to(full_tree)
    except ValueError:
        err = next(_prefix_errors((), prefix_tree, full_tree, is_leaf), None)
        if err is None:
            raise
        raise err("broadcast_prefix prefix_tree") from None
    leaves = []
    for x, sub in _b_zip(tree_leaves(prefix_tree, is_leaf), subtrees):
        leaves.extend([x] * tree_structure(sub, is_leaf).num_leaves)
    return full_def.unflatten(leaves)


class Unspecified:
    """The default of ``identity`` in :func:`tree_reduce_associative` (no identity given)."""

    def __repr__(self):
        return "Unspecified"


_unspecified = Unspecified()


def _parallel_reduce(seq, operation):
    if _b_len(seq) == 1:
        return seq[0]
    mid = _b_len(seq) // 2
    return operation(_parallel_reduce(seq[:mid], operation), _parallel_reduce(seq[mid:], operation))


def tree_reduce_associative(operation, tree, *, identity=_unspecified, is_leaf=None):
    """Reduces the leaves of ``tree`` with the associative ``operation`` as a balanced tree (the first half's
    result with the second half's: ``((a+b)+(c+(d+e)))``). ``identity`` is returned for a tree without
    leaves; without it that raises TypeError. Mirrors ``jax.tree_util.tree_reduce_associative``."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _unspecified:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    return _parallel_reduce(leaves, operation)


class PyTreeRegistry:
    """The registry of pytree node types (``jax.tree_util.default_registry``): ``flatten``,
    ``flatten_one_level(_with_keys)``, ``flatten_with_path``, ``is_node``, ``register_node`` and
    ``register_dataclass_node`` over the one registry cranax has."""

    def flatten(self, tree, leaf_predicate=None):
        leaves, treedef = tree_flatten(tree, leaf_predicate)
        return leaves, treedef

    def flatten_one_level(self, tree):
        try:
            return flatten_one_level(tree)
        except ValueError:
            return None

    def flatten_one_level_with_keys(self, tree):
        try:
            return flatten_one_level_with_keys(tree)
        except ValueError:
            return None

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, leaf_predicate)

    def is_node(self, typ):
        return is_tree_node(typ)

    def register_node(self, nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
        register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)

    def register_dataclass_node(self, nodetype, data_fields, meta_fields):
        register_dataclass(nodetype, data_fields, meta_fields)


default_registry = PyTreeRegistry()


def static_field(**kwargs):
    """A ``dataclasses.field`` marked static (``metadata={"static": True}``): under
    :func:`register_dataclass` that field is treedef data, not a child. Takes ``dataclasses.field``'s
    arguments. Mirrors ``jax.tree.static``."""
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return _dataclasses.field(metadata=metadata, **kwargs)


static_field.__name__ = static_field.__qualname__ = "static"
