"""The fast paths of cranax's pytrees (``cranax._pytree``): generated unflatten functions (a structure
unflattened again gets one expression instead of a walk), and the public kind table (``tree_util`` flattens
key arrays as leaves without calling a predicate per node). Each test runs a structure through the first
(generic), second (generated) and later unflattens and checks they all agree with the tree itself and with
JAX's rules (sorted dict keys, None a node, custom nodes rebuilt children first)."""
import collections

import numpy as np
import pytest

import cranax
import cranax._pytree as pt
import cranax.tree_util as tu

Point = collections.namedtuple("Point", "x y")


class Box:
    """A custom node whose aux data is ``tag`` (any value); records its unflatten calls."""
    calls = []

    def __init__(self, tag, *children):
        self.tag = tag
        self.children = children

    def __eq__(self, other):
        return (type(other) is Box and type(self.tag) is type(other.tag) and self.tag == other.tag
                and self.children == other.children)

    def __repr__(self):
        return f"Box({self.tag!r}, {self.children!r})"


def _box_unflatten(tag, children):
    Box.calls.append(tag)
    return Box(tag, *children)


pt.register_pytree_node(Box, lambda b: (b.children, b.tag), _box_unflatten)


def _same(a, b):
    """Equality that also compares the container types and dict key types (1 == 1.0 == True otherwise)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return ([(type(k), k) for k in a] == [(type(k), k) for k in b]
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, Box):
        return type(a.tag) is type(b.tag) and a.tag == b.tag and _same(a.children, b.children)
    return a is b or a == b


TREES = [
    {"w": [1, 2, (3, 4)], "opt": {"m": [5] * 4, "v": [6] * 4}},
    (None, (), [], {}, [None, (7,)]),
    Point(1, {"b": 2, "a": (3,)}),
    [Box("t", 1, (2, Box(3, None))), {"k": Box(None)}],
    {2: "x", 1: ["y", {"z": 3}]},
    ((((1,),),),),
]


@pytest.mark.parametrize("tree", TREES)
def test_unflatten_round_trips_through_generic_and_generated(tree):
    leaves, td = pt.tree_flatten(tree)
    expected = td.unflatten(leaves)        # the first sightings walk the spec
    for _ in range(pt._GENERATE_AT):        # the _GENERATE_AT-th generates; later ones reuse it
        leaves2, td2 = pt.tree_flatten(tree)
        assert td2 == td
        assert _same(td2.unflatten(leaves2), expected)
        assert _same(td.unflatten(leaves), expected)
    assert td._unflat.__name__ == "unflatten"   # the generated function was used
    # JAX rebuilds dicts with sorted keys; everything else as it was
    if isinstance(tree, dict) and all(isinstance(k, int) for k in tree):
        assert list(expected) == sorted(tree)
    assert tu.tree_leaves(expected) == tu.tree_leaves(tree)


def test_generated_unflatten_takes_new_leaves():
    leaves, td = pt.tree_flatten(TREES[0])
    for _ in range(pt._GENERATE_AT):
        td.unflatten(leaves)
    assert td._unflat.__name__ == "unflatten"
    out = td.unflatten([10 * x for x in leaves])
    assert out == {"opt": {"m": [50] * 4, "v": [60] * 4}, "w": [10, 20, (30, 40)]}


def test_equal_treedefs_rebuild_their_own_static_data():
    # 1, 1.0 and True are equal and hash alike: the treedefs are equal (as in JAX), and each rebuilds
    # with its own aux data and dict keys, generated function or not.
    for tags in ([1, 1.0, True], [{"a": 1}, {"a": 1.0}]):
        for _ in range(3):
            for tag in tags:
                tree = {"b": Box(tag if not isinstance(tag, dict) else tuple(tag.items()), 5)}
                leaves, td = pt.tree_flatten(tree)
                out = td.unflatten(leaves)
                assert _same(out, tree), (out, tree)
    for _ in range(3):
        for key in (1, 1.0, True):
            tree = {key: 4}
            leaves, td = pt.tree_flatten(tree)
            out = td.unflatten(leaves)
            assert [type(k) for k in out] == [type(key)]


def test_custom_nodes_rebuilt_children_first_once_each():
    tree = [Box("outer", Box("a", 1), (Box("b", 2), Box("c", Box("d", 3))))]
    leaves, td = pt.tree_flatten(tree)
    orders = []
    for _ in range(3):
        Box.calls.clear()
        assert _same(td.unflatten(leaves), tree)
        orders.append(list(Box.calls))
    assert orders == [["a", "b", "d", "c", "outer"]] * 3


def test_unhashable_aux_data_unflattens_repeatedly():
    tree = (Box(["list", "aux"], 1, 2), 3)
    leaves, td = pt.tree_flatten(tree)
    with pytest.raises(TypeError):
        hash(td._spec)   # so no shared generated function: this treedef gets its own
    for i in range(4):
        assert _same(td.unflatten(leaves), tree)
        if i:
            assert td._unflat.__name__ == "unflatten"
        leaves2, td2 = pt.tree_flatten(tree)
        assert _same(td2.unflatten([x + 1 for x in leaves2]), (Box(["list", "aux"], 2, 3), 4))


def test_deep_and_wide_trees_fall_back_to_the_walk():
    deep = 0
    for _ in range(300):
        deep = [deep]
    wide = {f"k{i:04d}": (i, [i]) for i in range(1500)}
    many_leaves = {f"k{i:05d}": i for i in range(5000)}
    for tree in (deep, wide, many_leaves):
        leaves, td = pt.tree_flatten(tree)
        for _ in range(pt._GENERATE_AT + 1):
            assert td.unflatten(leaves) == tree
        assert td._unflat is pt._build_generic


def test_leaf_count_errors_unchanged():
    leaves, td = pt.tree_flatten({"a": (1, 2)})
    for _ in range(2):
        td.unflatten(leaves)
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 2, got 1$"):
        td.unflatten([1])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 2\.$"):
        td.unflatten([1, 2, 3])
    assert td.unflatten(iter([7, 8])) == {"a": (7, 8)}


def test_public_table_keeps_key_arrays_leaves():
    key = cranax.random.key(0)
    tree = {"k": key, "x": [np.float32(1.0)]}
    leaves, td = tu.tree_flatten(tree)
    assert len(leaves) == 2 and leaves[0] is key
    internal, _ = pt.tree_flatten(tree)
    assert internal[0] is not key and np.asarray(internal[0]).dtype == np.uint32
    assert tu.tree_map(lambda v: v, tree)["k"] is key
    assert tu.tree_map(lambda a, b: b, tree, {"k": 3, "x": [4]}) == {"k": 3, "x": [4]}
    assert tu.tree_all({"k": True, "x": [1, 2]}) and not tu.tree_all([1, 0])
    assert tu.tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10


def test_kind_cache_reset_keeps_both_tables():
    # Many dynamically created classes overflow the kind cache, which then starts again from the
    # registrations: key arrays stay nodes internally and leaves publicly, custom nodes stay nodes.
    classes = [type(f"Dyn{i}", (), {}) for i in range(pt._KIND_CACHE_LIMIT + 10)]
    for c in classes:
        pt.tree_flatten([c()])
    key = cranax.random.key(1)
    assert tu.tree_leaves([key]) == [key]
    assert pt.tree_leaves([key])[0] is not key
    assert pt.tree_leaves(Box("t", 1, 2)) == [1, 2]
    assert tu.tree_leaves(Box("t", 1, 2)) == [1, 2]
    assert pt.tree_leaves(classes[0]())[0].__class__ is classes[0]


def test_none_children_and_is_leaf_call_order_as_jax():
    # Recorded from JAX 0.10.2: None children are nodes without children (taken in the loop here), and
    # is_leaf is called on every node and leaf, parents first, in flattening order.
    t = [None, (None, 1), {"a": None, "b": [None]}]
    for flatten in (tu.tree_flatten, pt.tree_flatten):
        leaves, td = flatten(t)
        assert leaves == [1]
        assert str(td) == "PyTreeDef([None, (None, *), {'a': None, 'b': [None]}])"
        assert td.num_nodes == 9
        assert td.unflatten([2]) == [None, (None, 2), {"a": None, "b": [None]}]
        seen = []
        leaves, td = flatten(t, is_leaf=lambda x: seen.append(repr(x)) or x is None)
        assert leaves == [None, None, 1, None, None]
        assert str(td) == "PyTreeDef([*, (*, *), {'a': *, 'b': [*]}])"
        assert seen == ["[None, (None, 1), {'a': None, 'b': [None]}]", "None", "(None, 1)", "None", "1",
                        "{'a': None, 'b': [None]}", "None", "[None]", "None"]
