"""Tests for cranax.tree / cranax.tree_util (pytrees), with expected values hard-coded from JAX."""
import collections
import functools
import importlib.util
import os
import pickle
import sys

import numpy as np
import pytest

if importlib.util.find_spec("cranax") is None:  # run from a checkout without installing
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

from cranax import tree_util as tu  # noqa: E402
from cranax import tree as jtree  # noqa: E402

Point = collections.namedtuple("Point", ["x", "y"])


class ANamedTupleSubclass(Point):
    pass


class Special:
    """A custom node with no aux data (None)."""

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __eq__(self, other):
        return type(other) is Special and self.x == other.x and self.y == other.y

    def __repr__(self):
        return f"Special({self.x!r}, {self.y!r})"


tu.register_pytree_node(Special, lambda s: ((s.x, s.y), None), lambda _, c: Special(*c))


@tu.register_pytree_node_class
class Foo:
    """A custom node with aux data, registered through the class decorator."""

    def __init__(self, a, b, name):
        self.a = a
        self.b = b
        self.name = name

    def tree_flatten(self):
        return (self.a, self.b), self.name

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, aux)

    def __eq__(self, other):
        return (type(other) is Foo and self.a == other.a and self.b == other.b
                and self.name == other.name)

    def __repr__(self):
        return f"Foo({self.a!r}, {self.b!r}, {self.name!r})"


class ListAux:
    """A custom node whose aux data is unhashable (a list)."""

    def __init__(self, v, meta):
        self.v = v
        self.meta = meta


tu.register_pytree_node(ListAux, lambda s: ((s.v,), list(s.meta)), lambda m, c: ListAux(c[0], m))


# (tree, expected leaves, expected repr)
CASES = [
    (None, [], "PyTreeDef(None)"),
    ((None,), [], "PyTreeDef((None,))"),
    ((), [], "PyTreeDef(())"),
    ([()], [], "PyTreeDef([()])"),
    ((1, 2), [1, 2], "PyTreeDef((*, *))"),
    ((1,), [1], "PyTreeDef((*,))"),
    (((1, "foo"), ["bar", (3, None, 7)]), [1, "foo", "bar", 3, 7],
     "PyTreeDef(((*, *), [*, (*, None, *)]))"),
    ([3], [3], "PyTreeDef([*])"),
    ({"b": 2, "a": 1}, [1, 2], "PyTreeDef({'a': *, 'b': *})"),
    ({"a": 1, "b": [2, None]}, [1, 2], "PyTreeDef({'a': *, 'b': [*, None]})"),
    (Point(1, (2, 3)), [1, 2, 3], "PyTreeDef(CustomNode(namedtuple[Point], [*, (*, *)]))"),
    (ANamedTupleSubclass("hello", 3.5), ["hello", 3.5],
     "PyTreeDef(CustomNode(namedtuple[ANamedTupleSubclass], [*, *]))"),
    (Special(2, 3.0), [2, 3.0], "PyTreeDef(CustomNode(Special[None], [*, *]))"),
    (Foo(1, [2], "n"), [1, 2], "PyTreeDef(CustomNode(Foo[n], [*, [*]]))"),
    (collections.OrderedDict([("foo", 34), ("baz", 101), ("something", -42)]), [34, 101, -42],
     "PyTreeDef(CustomNode(OrderedDict[('foo', 'baz', 'something')], [*, *, *]))"),
    (collections.defaultdict(dict, [("foo", 34), ("baz", 101), ("something", -42)]),
     [101, 34, -42],
     "PyTreeDef(CustomNode(defaultdict[(<class 'dict'>, ('baz', 'foo', 'something'))], "
     "[*, *, *]))"),
    (1, [1], "PyTreeDef(*)"),
    ("foo", ["foo"], "PyTreeDef(*)"),
]


@pytest.mark.parametrize("tree,leaves,rep", CASES, ids=[c[2] for c in CASES])
def test_flatten_roundtrip_and_repr(tree, leaves, rep):
    got_leaves, treedef = tu.tree_flatten(tree)
    assert got_leaves == leaves
    assert repr(treedef) == rep
    assert str(treedef) == rep
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, got_leaves)
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == treedef
    assert hash(tu.tree_structure(tree)) == hash(treedef)


def test_leaves_are_not_copied():
    a, b = np.ones(3), np.zeros(2)
    leaves, _ = tu.tree_flatten({"x": [a, (b,)]})
    assert leaves[0] is a and leaves[1] is b


def test_none_is_a_node_not_a_leaf():
    assert tu.tree_leaves([None, 1, None]) == [1]
    td = tu.tree_structure(None)
    assert td.num_leaves == 0 and td.num_nodes == 1
    assert tu.tree_unflatten(td, []) is None
    assert tu.tree_map(lambda x: x + 1, (None, 1)) == (None, 2)
    assert tu.treedef_is_leaf(td)   # JAX: any single-node treedef
    # is_leaf can make None a leaf
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_dict_unflatten_sorted_keys():
    leaves, td = tu.tree_flatten({"b": 1, "a": 2, "c": 3})
    assert leaves == [2, 1, 3]
    out = td.unflatten(["A", "B", "C"])
    assert list(out.keys()) == ["a", "b", "c"]
    assert out == {"a": "A", "b": "B", "c": "C"}


def test_dict_subclass_is_leaf_but_ordered_dict_is_node():
    class MyDict(dict):
        pass

    d = MyDict(a=1)
    assert tu.tree_leaves(d) == [d]
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    out = tu.tree_map(lambda x: x * 10, od)
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", 10), ("a", 20)]


def test_defaultdict_roundtrip_keeps_factory():
    dd = collections.defaultdict(list, {"z": 1, "a": 2})
    out = tu.tree_map(lambda x: -x, dd)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"z": -1, "a": -2}


def test_namedtuple_roundtrip_and_treedef_equality():
    p = Point(1, 2)
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 2]
    assert td.unflatten([3, 4]) == Point(3, 4)
    assert type(td.unflatten([3, 4])) is Point
    assert td != tu.tree_structure((1, 2))
    Other = collections.namedtuple("Point", ["x", "y"])
    assert td != tu.tree_structure(Other(1, 2))


def test_custom_node_children_and_aux():
    f = Foo(np.ones(2), {"k": 3}, "name")
    leaves, td = tu.tree_flatten(f)
    assert len(leaves) == 2 and leaves[1] == 3
    out = td.unflatten([1, 2])
    assert out == Foo(1, {"k": 2}, "name")
    # aux data is part of the structure
    assert tu.tree_structure(Foo(1, 2, "a")) != tu.tree_structure(Foo(1, 2, "b"))
    assert tu.tree_structure(Foo(1, 2, "a")) == tu.tree_structure(Foo(5, 6, "a"))
    assert hash(tu.tree_structure(Foo(1, 2, "a"))) == hash(tu.tree_structure(Foo(5, 6, "a")))


def test_unhashable_aux_data_still_hashes():
    t1 = tu.tree_structure(ListAux(1, [1, 2]))
    t2 = tu.tree_structure(ListAux(2, [1, 2]))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != tu.tree_structure(ListAux(1, [3]))


def test_duplicate_registration_raises():
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(Special, lambda s: ((), None), lambda a, c: Special(1, 2))
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda s: ((), None), lambda a, c: ())


def test_registering_a_type_after_it_was_seen_as_leaf():
    class Late:
        def __init__(self, v):
            self.v = v

    x = Late(1)
    assert tu.tree_leaves((x, x)) == [x, x]          # seen as a leaf (fast path cache)
    tu.register_pytree_node(Late, lambda s: ((s.v,), None), lambda a, c: Late(c[0]))
    assert tu.tree_leaves((x, x)) == [1, 1]
    assert tu.tree_leaves(x) == [1]


def test_partial_is_a_pytree():
    def f(a, b, c=0):
        return a + b + c

    p = tu.Partial(f, 1, c=3)
    assert isinstance(p, functools.partial)
    assert p(2) == 6
    leaves, td = tu.tree_flatten(p)
    assert leaves == [1, 3]
    assert repr(td).startswith("PyTreeDef(CustomNode(Partial[<function ")
    assert repr(td).endswith("], [(*,), {'c': *}]))")
    q = tu.tree_map(lambda x: x * 10, p)
    assert isinstance(q, tu.Partial) and q.func is f and q.args == (10,) and q.keywords == {"c": 30}
    assert q(2) == 42
    # func is static: same func -> equal treedefs; different func -> different
    assert tu.tree_structure(tu.Partial(f, 5, c=6)) == td
    assert tu.tree_structure(tu.Partial(lambda a, b, c=0: 0, 5, c=6)) != td
    assert tu.tree_leaves(tu.Partial(f)) == []


def test_partial_of_functools_partial_keeps_inner_args_static():
    inner = functools.partial(lambda a, b, c: a * 100 + b * 10 + c, 1)
    p = tu.Partial(inner, 2)
    assert tu.tree_leaves(p) == [2]
    assert p(3) == 123
    assert tu.tree_map(lambda x: x + 1, p)(3) == 133
    assert p.func.func is inner.func


def test_tree_map_several_trees_and_prefix():
    t1 = {"a": 1, "b": (2, 3)}
    t2 = {"a": 10, "b": (20, 30)}
    assert tu.tree_map(lambda x, y: x + y, t1, t2) == {"a": 11, "b": (22, 33)}
    # the first tree may be a prefix of the others: leaves of the first get whole subtrees
    out = tu.tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"a": [1, 2], "b": (3,)})
    assert out == {"a": (1, [1, 2]), "b": (2, (3,))}
    assert tu.tree_map(lambda x, y, z: x + y + z, [1, 2], [3, 4], [5, 6]) == [9, 12]
    assert jtree.map(lambda x: x * 2, (1, [2])) == (2, [4])


def test_tree_map_is_leaf():
    tree = {"a": (1, 2), "b": [3, (4, 5)]}
    out = tu.tree_map(lambda x: ("leaf", x), tree, is_leaf=lambda x: isinstance(x, tuple))
    assert out == {"a": ("leaf", (1, 2)), "b": [("leaf", 3), ("leaf", (4, 5))]}
    leaves = tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, list))
    assert leaves == [1, 2, [3, (4, 5)]]
    # is_leaf applies to the root too
    assert tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, dict)) == [tree]
    # is_leaf with several trees: the other trees follow the first tree's structure
    out = tu.tree_map(lambda x, y: len(x) + y, [(1, 2), (3,)], [10, 20],
                      is_leaf=lambda x: isinstance(x, tuple))
    assert out == [12, 21]


@pytest.mark.parametrize("t1,t2", [
    ((1, 2), (1, 2, 3)),
    ((1, 2), [1, 2]),
    ({"a": 1}, {"b": 1}),
    ([1, None], [1, 2]),
    (Point(1, 2), (1, 2)),
    (Foo(1, 2, "a"), Foo(1, 2, "b")),
    (Special(1, 2), Foo(1, 2, "b")),
    ([1, 2], 3),
])
def test_tree_map_mismatch_raises_value_error_naming_the_key_path(t1, t2):
    # JAX 0.10.2's prefix error alone (the exact texts: test_tree_paths.py)
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda x, y: x, t1, t2)
    msg = str(info.value)
    assert msg.startswith("pytree structure error: ") and "\n    tree_map tree" in msg, msg


def test_unflatten_wrong_leaf_count():
    td = tu.tree_structure((1, (2, 3)))
    with pytest.raises(ValueError, match="Too few leaves"):
        tu.tree_unflatten(td, [1, 2])
    with pytest.raises(ValueError, match="Too many leaves"):
        tu.tree_unflatten(td, [1, 2, 3, 4])
    flat = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match="Too few leaves"):
        flat.unflatten([1])
    with pytest.raises(ValueError, match="Too many leaves"):
        flat.unflatten(iter([1, 2, 3]))
    assert flat.unflatten(iter([7, 8])) == (7, 8)


def test_treedef_properties():
    td = tu.tree_structure({"a": (1, 2), "b": [3, None], "c": 4})
    assert td.num_leaves == 4
    # nodes: dict, tuple, 2 leaves, list, leaf, None, leaf = 8
    assert td.num_nodes == 8
    kids = td.children()
    assert [repr(k) for k in kids] == ["PyTreeDef((*, *))", "PyTreeDef([*, None])", "PyTreeDef(*)"]
    assert tu.treedef_children(td) == kids
    assert kids[0].num_leaves == 2 and kids[1].num_leaves == 1
    assert tu.tree_structure(1).children() == []
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert not tu.treedef_is_leaf(td)
    assert tu.treedef_tuple(kids) == tu.tree_structure(((1, 2), [3, None], 4))
    assert td.node_data() == (dict, ["a", "b", "c"])
    assert tu.tree_structure(1).node_data() is None


def test_treedef_equality_and_hash():
    a = tu.tree_structure({"x": (1, 2), "y": [3]})
    b = tu.tree_structure({"y": [np.ones(3)], "x": (4.0, "s")})
    assert a == b and hash(a) == hash(b)
    assert a != tu.tree_structure({"x": (1, 2), "z": [3]})
    assert a != tu.tree_structure({"x": [1, 2], "y": [3]})
    assert a != tu.tree_structure({"x": (1, 2), "y": [3, 4]})
    assert tu.tree_structure((1, 2)) != tu.tree_structure([1, 2])
    assert tu.tree_structure((1, 2)) == tu.tree_structure((np.ones(2), "leaf"))
    assert tu.tree_structure(None) != tu.tree_structure(())
    assert tu.tree_structure(None) != tu.tree_structure(1)
    assert (tu.tree_structure(1) == 1) is False
    # usable as dict keys (jit caches)
    cache = {tu.tree_structure((1, 2)): "flat2", tu.tree_structure({"a": 1}): "dict"}
    assert cache[tu.tree_structure((np.ones(1), np.ones(2)))] == "flat2"
    assert cache[tu.tree_structure({"a": object()})] == "dict"
    # the fast path and the general path produce equal treedefs
    slow = tu.tree_structure((1, 2), is_leaf=lambda x: False)
    fast = tu.tree_structure((1, 2))
    assert slow == fast and hash(slow) == hash(fast)


def test_tree_all_reduce():
    assert tu.tree_all([True, (1, {"a": True})])
    assert not tu.tree_all([True, (0, {"a": True})])
    assert tu.tree_all([])
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, {"a": 3})]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, {"a": 3})], 10) == 16
    assert tu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    with pytest.raises(TypeError):
        tu.tree_reduce(lambda a, b: a + b, [])
    assert jtree.reduce(max, [1, 5, (3,)]) == 5
    assert jtree.all({"a": 1, "b": 2})


def test_tree_transpose():
    outer = tu.tree_structure([0, 0, 0])
    inner = tu.tree_structure({"a": 0, "b": (0, 0)})
    tree = [{"a": i, "b": (10 * i, 100 * i)} for i in range(3)]
    out = tu.tree_transpose(outer, inner, tree)
    assert out == {"a": [0, 1, 2], "b": ([0, 10, 20], [0, 100, 200])}
    assert tu.tree_transpose(outer, None, tree) == out
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), tree)


def test_compose_and_flatten_up_to():
    outer = tu.tree_structure((0, 0))
    inner = tu.tree_structure([0, 0, 0])
    comp = outer.compose(inner)
    assert repr(comp) == "PyTreeDef(([*, *, *], [*, *, *]))"
    assert comp.num_leaves == 6
    assert outer.flatten_up_to(([1], {"a": 2})) == [[1], {"a": 2}]


def test_all_leaves():
    assert tu.all_leaves([1, np.ones(2), "s"])
    assert not tu.all_leaves([1, (2,)])
    assert not tu.all_leaves([None])
    assert tu.all_leaves([None], is_leaf=lambda x: x is None)


def test_short_names_module():
    leaves, td = jtree.flatten({"a": 1})
    assert jtree.unflatten(td, leaves) == {"a": 1}
    assert jtree.leaves([1, [2]]) == [1, 2]
    assert jtree.structure([1]) == tu.tree_structure([2])
    assert jtree.transpose is tu.tree_transpose


def test_treedef_not_constructible_or_picklable():
    with pytest.raises(TypeError):
        tu.PyTreeDef()
    with pytest.raises(TypeError):
        pickle.dumps(tu.tree_structure((1, 2)))


def test_flat_sequence_fast_path_gives_the_general_paths_results():
    # a flat tuple/list of leaves takes the all-leaves fast path (its speed is measured in
    # benches/bench_pytree.py, not here); its leaves and treedef must be the general path's
    a, b = np.ones(3), np.ones(4)
    for tree in [(a, b), [a, b], (a,), [a, 1.0, None]]:
        leaves, td = tu.tree_flatten(tree)
        assert all(x is y for x, y in zip(leaves, [x for x in tree if x is not None]))
        nested, ntd = tu.tree_flatten({"k": tree})
        assert [x is y for x, y in zip(nested, leaves)] == [True] * len(leaves)
        assert td.num_leaves == len(leaves) and td.num_nodes == ntd.num_nodes - 1
        back = tu.tree_unflatten(td, leaves)
        assert type(back) is type(tree) and len(back) == len(tree)
        assert all(x is y for x, y in zip(back, tree))


# ----------------------------------------------------------------------------------------------
# Typed PRNG key arrays are leaves, as in JAX 0.10.2 (values below recorded from it)
# ----------------------------------------------------------------------------------------------

def test_key_arrays_are_leaves_for_users():
    import cranax
    from cranax import random
    k = random.key(0)
    ks = random.split(k, 3)
    tree = {"a": k, "b": [ks, 1.0]}
    leaves = cranax.tree.leaves(tree)
    assert len(leaves) == 3 and leaves[0] is k and leaves[1] is ks and leaves[2] == 1.0
    assert str(cranax.tree.structure(tree)) == "PyTreeDef({'a': *, 'b': [*, *]})"
    assert str(cranax.tree.structure(k)) == "PyTreeDef(*)"
    shapes = cranax.tree.map(lambda x: (x.shape, str(x.dtype)), {"a": k, "b": ks})
    assert shapes == {"a": ((), "key<fry>"), "b": ((3,), "key<fry>")}
    assert cranax.tree_util.tree_flatten_with_path({"a": k})[0][0][0] == (cranax.tree_util.DictKey("a"),)
    assert cranax.tree_util.all_leaves([k, ks]) is True
    assert cranax.tree_util.is_tree_node(type(k)) is False
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        cranax.tree_util.flatten_one_level(k)
    # a user is_leaf still applies to the other nodes
    assert cranax.tree.leaves({"a": k, "b": (1, 2)}, is_leaf=lambda x: isinstance(x, tuple)) == [k, (1, 2)]


def test_key_leaves_cross_transformations_and_keep_values():
    import cranax
    from cranax import random
    k = random.key(0)
    # JAX 0.10.2: random.normal(key(0), (2,)) and split(key(0))
    out = cranax.jit(lambda d: {"n": random.normal(d["k"], (2,)), "k2": random.split(d["k"])})({"k": k})
    np.testing.assert_array_equal(np.asarray(out["n"]), np.array([1.6226422, 2.0252647], np.float32))
    np.testing.assert_array_equal(np.asarray(random.key_data(out["k2"])),
                                  np.array([[1797259609, 2579123966], [928981903, 3453687069]], np.uint32))
    # tree_map over keys inside a trace sees key arrays, not their data
    assert cranax.jit(lambda d: cranax.tree.map(lambda x: x.shape, d) and d["a"])({"a": k}).shape == ()
    leaves, treedef = cranax.tree_util.tree_flatten((k, random.split(k, 3)))
    back = cranax.tree_util.tree_unflatten(treedef, leaves)
    np.testing.assert_array_equal(np.asarray(random.key_data(back[1])), np.asarray(random.key_data(leaves[1])))


def test_stack_and_concatenate_of_key_arrays():
    import cranax
    from cranax import random
    import cranax.numpy as jnp
    k = random.split(random.key(0), 2)
    # shapes as JAX 0.10.2 gives them
    assert jnp.stack([k[0], k[1]]).shape == (2,)
    assert jnp.stack([k, k], axis=1).shape == (2, 2)
    assert jnp.stack([k, k], axis=-1).shape == (2, 2)
    assert jnp.concatenate([k, k]).shape == (4,)
    np.testing.assert_array_equal(np.asarray(random.key_data(jnp.stack([k, k], axis=-1))[0]),
                                  np.array([[1797259609, 2579123966]] * 2, np.uint32))
    assert cranax.jit(lambda a: jnp.stack([a[0], a[1]]))(k).shape == (2,)
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jnp.stack([k[0], jnp.zeros(())])
