"""Tree key paths (issue 18): ``tree_flatten_with_path`` & co., the key classes, ``keystr``,
``register_pytree_with_keys(_class)`` and ``register_dataclass``. Expected values and printed text were
recorded from JAX 0.10.2."""
import collections
import dataclasses

import pytest

import cranax
from cranax import tree_util as tu

Point = collections.namedtuple("Point", "x y")
TREE = {"b": [1, (2, None)], "a": Point(3, 4), "c": None, "d": {"z": 5}}


def test_paths_of_builtin_containers():
    pairs, td = tu.tree_flatten_with_path(TREE)
    assert [(repr(p), v) for p, v in pairs] == [
        ("(DictKey(key='a'), GetAttrKey(name='x'))", 3),
        ("(DictKey(key='a'), GetAttrKey(name='y'))", 4),
        ("(DictKey(key='b'), SequenceKey(idx=0))", 1),
        ("(DictKey(key='b'), SequenceKey(idx=1), SequenceKey(idx=0))", 2),
        ("(DictKey(key='d'), DictKey(key='z'))", 5),
    ]
    assert str(td) == ("PyTreeDef({'a': CustomNode(namedtuple[Point], [*, *]), 'b': [*, (*, None)], "
                       "'c': None, 'd': {'z': *}})")
    assert td == tu.tree_structure(TREE)
    assert [tu.keystr(p) for p, _ in pairs] == ["['a'].x", "['a'].y", "['b'][0]", "['b'][1][0]", "['d']['z']"]
    assert [tu.keystr(p, simple=True, separator="/") for p, _ in pairs] == ["a/x", "a/y", "b/0", "b/1/0", "d/z"]
    assert tu.tree_leaves_with_path(TREE) == pairs
    assert cranax.tree.leaves_with_path(TREE) == pairs
    assert cranax.tree.flatten_with_path(TREE) == (pairs, td)


def test_map_with_path():
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p) + str(x), TREE)
    assert out == {"a": Point(x="['a'].x3", y="['a'].y4"), "b": ["['b'][0]1", ("['b'][1][0]2", None)],
                   "c": None, "d": {"z": "['d']['z']5"}}
    assert cranax.tree.map_with_path(lambda p, x, y: (tu.keystr(p), x + y), [1, 2], [10, 20]) == \
        [("[0]", 11), ("[1]", 22)]
    with pytest.raises(ValueError, match="tree_map_with_path"):
        tu.tree_map_with_path(lambda p, x, y: x, [1, 2], [1, 2, 3])


def test_leaves_none_and_is_leaf():
    assert repr(tu.tree_flatten_with_path(5)) == "([((), 5)], PyTreeDef(*))"
    assert repr(tu.tree_flatten_with_path(None)) == "([], PyTreeDef(None))"
    assert repr(tu.tree_flatten_with_path([None, 1], is_leaf=lambda x: x is None)) == \
        "([((SequenceKey(idx=0),), None), ((SequenceKey(idx=1),), 1)], PyTreeDef([*, *]))"
    # is_leaf_takes_path: the predicate sees the path too.
    seen = []
    pairs = tu.tree_leaves_with_path({"a": [1, 2], "b": 3},
                                     is_leaf=lambda p, x: seen.append(tu.keystr(p)) or tu.keystr(p) == "['a']",
                                     is_leaf_takes_path=True)
    assert pairs == [((tu.DictKey("a"),), [1, 2]), ((tu.DictKey("b"),), 3)]
    assert seen == ["", "['a']", "['b']"]


def test_key_classes():
    cases = [(tu.GetAttrKey("x"), "GetAttrKey(name='x')", ".x", ("name",)),
             (tu.DictKey("a"), "DictKey(key='a')", "['a']", ("key",)),
             (tu.DictKey(1), "DictKey(key=1)", "[1]", ("key",)),
             (tu.SequenceKey(0), "SequenceKey(idx=0)", "[0]", ("idx",)),
             (tu.FlattenedIndexKey(2), "FlattenedIndexKey(key=2)", "[<flat index 2>]", ("key",))]
    for k, r, s, m in cases:
        assert repr(k) == r and str(k) == s and k.__match_args__ == m
        assert k == type(k)(getattr(k, m[0])) and hash(k) == hash(type(k)(getattr(k, m[0])))
    assert tu.DictKey("a") != tu.SequenceKey(0) and tu.SequenceKey(0) != tu.FlattenedIndexKey(0)
    assert (tu.GetAttrKey("x").name, tu.SequenceKey(1).idx, tu.FlattenedIndexKey(1).key, tu.DictKey("q").key) == \
        ("x", 1, 1, "q")
    match tu.SequenceKey(4):
        case tu.SequenceKey(idx=i):
            assert i == 4
    path = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"), tu.FlattenedIndexKey(3))
    assert tu.keystr(path) == "['a'][0].x[<flat index 3>]"
    assert tu.keystr(path, simple=True) == "a0x3"
    assert tu.keystr(()) == ""
    assert tu.keystr((tu.DictKey(1), tu.DictKey((1, 2)))) == "[1][(1, 2)]"
    assert tu.keystr(("a",)) == "a" and tu.keystr(("a",), simple=True) == "a"
    with pytest.raises(TypeError):
        tu.keystr(path, True)   # simple and separator are keyword-only


def test_custom_nodes_without_keys_use_flattened_index():
    class Foo:
        def __init__(self, a, b):
            self.a, self.b = a, b
    assert tu.register_pytree_node(Foo, lambda f: ((f.a, f.b), None), lambda aux, ch: Foo(*ch)) is None
    assert repr(tu.tree_flatten_with_path([Foo(1, {"k": 2})])[0]) == (
        "[((SequenceKey(idx=0), FlattenedIndexKey(key=0)), 1), "
        "((SequenceKey(idx=0), FlattenedIndexKey(key=1), DictKey(key='k')), 2)]")
    assert repr(tu.tree_flatten_with_path(tu.Partial(lambda a, b: a, 1, b=2))[0]) == \
        "[((FlattenedIndexKey(key=0), SequenceKey(idx=0)), 1), ((FlattenedIndexKey(key=1), DictKey(key='b')), 2)]"


def test_ordered_and_default_dict_paths():
    assert repr(tu.tree_flatten_with_path(collections.OrderedDict([("b", 1), ("a", 2)]))[0]) == \
        "[((DictKey(key='b'),), 1), ((DictKey(key='a'),), 2)]"
    assert repr(tu.tree_flatten_with_path(collections.defaultdict(int, {"b": 1, "a": 2}))[0]) == \
        "[((DictKey(key='a'),), 2), ((DictKey(key='b'),), 1)]"


def test_register_pytree_with_keys():
    class Bar:
        def __init__(self, a, b):
            self.a, self.b = a, b
    r = tu.register_pytree_with_keys(
        Bar, lambda f: (((tu.GetAttrKey("a"), f.a), (tu.GetAttrKey("b"), f.b)), None), lambda aux, ch: Bar(*ch))
    assert r is None
    assert repr(tu.tree_flatten_with_path(Bar(1, [2]))[0]) == \
        "[((GetAttrKey(name='a'),), 1), ((GetAttrKey(name='b'), SequenceKey(idx=0)), 2)]"
    assert tu.tree_leaves(Bar(1, [2])) == [1, 2]
    assert tu.tree_map(lambda x: x * 10, Bar(1, [2])).b == [20]
    # Keyed nodes go through jit like any pytree.
    out = cranax.jit(lambda t: t.a * t.b[0])(Bar(3.0, [4.0]))
    assert float(out) == 12.0


def test_register_pytree_with_keys_class():
    @tu.register_pytree_with_keys_class
    class Baz:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.DictKey("a"), self.a), (tu.SequenceKey(7), self.b)), "aux"

        @classmethod
        def tree_unflatten(cls, aux, ch):
            return cls(*ch)
    assert isinstance(Baz, type)
    assert repr(tu.tree_flatten_with_path(Baz(1, 2))[0]) == "[((DictKey(key='a'),), 1), ((SequenceKey(idx=7),), 2)]"
    assert repr(tu.tree_flatten(Baz(1, 2))) == "([1, 2], PyTreeDef(CustomNode(Baz[aux], [*, *])))"


def test_register_dataclass():
    @dataclasses.dataclass
    class DC:
        x: object
        y: object
        s: int
    assert tu.register_dataclass(DC, data_fields=["x", "y"], meta_fields=["s"]) is DC
    assert repr(tu.tree_flatten_with_path(DC(1, [2], 3))) == (
        "([((GetAttrKey(name='x'),), 1), ((GetAttrKey(name='y'), SequenceKey(idx=0)), 2)], "
        "PyTreeDef(CustomNode(DC[(3,)], [*, [*]])))")
    assert tu.tree_map(lambda v: v + 1, DC(1, [2], 3)) == DC(x=2, y=[3], s=3)

    @tu.register_dataclass
    @dataclasses.dataclass
    class DC2:
        a: object
        b: int = dataclasses.field(metadata=dict(static=True), default=3)
    assert repr(tu.tree_flatten_with_path(DC2(1))) == \
        "([((GetAttrKey(name='a'),), 1)], PyTreeDef(CustomNode(DC2[(3,)], [*])))"
    assert repr(tu.tree_flatten(DC2(1, 5))) == "([1], PyTreeDef(CustomNode(DC2[(5,)], [*])))"
    # meta fields are static under jit: a different value retraces, the data field is traced.
    f = cranax.jit(lambda d: d.a * d.b)
    assert float(f(DC2(2.0, 5))) == 10.0 and float(f(DC2(2.0, 7))) == 14.0

    @dataclasses.dataclass
    class DC3:
        x: object
        y: object
    with pytest.raises(ValueError) as e:
        tu.register_dataclass(DC3, data_fields=["x"], meta_fields=[])
    assert str(e.value) == ("data_fields and meta_fields must include all dataclass fields with ``init=True`` "
                            "and only them. Missing fields: {'y'}. Add them to drop_fields to suppress this error.")
    with pytest.raises(ValueError, match="Unexpected fields: {'q'}"):
        tu.register_dataclass(DC3, data_fields=["x", "y", "q"], meta_fields=[])
    with pytest.raises(ValueError, match="must not overlap"):
        tu.register_dataclass(DC3, data_fields=["x", "y"], meta_fields=["x"])

    class NotDC:
        pass
    with pytest.raises(TypeError) as e:
        tu.register_dataclass(NotDC)
    assert str(e.value) == ("register_dataclass: data_fields and meta_fields are required when nodetype is not "
                            f"a dataclass. Got nodetype={NotDC!r}.")
    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(DC3, data_fields=["x", "y"])
    assert tu.register_dataclass(NotDC, data_fields=["x"], meta_fields=[]) is NotDC

    @dataclasses.dataclass
    class DC4:
        x: object
        y: object
    tu.register_dataclass(DC4, data_fields=["x"], meta_fields=[], drop_fields=["y"])
    assert tu.tree_leaves(DC4(1, 2)) == [1]


def test_names_in_namespaces():
    for n in ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "SequenceKey",
              "keystr", "register_dataclass", "register_pytree_with_keys", "register_pytree_with_keys_class",
              "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path"]:
        assert n in dir(tu), n
    for n in ["flatten_with_path", "leaves_with_path", "map_with_path"]:
        assert n in dir(cranax.tree), n


class _Meta:
    def __init__(self, a, m):
        self.a, self.m = a, m


tu.register_pytree_node(_Meta, lambda f: ((f.a,), f.m), lambda m, c: _Meta(c[0], m))
_P = collections.namedtuple("_P", "x y")
_Q = collections.namedtuple("_Q", "x y")

# JAX 0.10.2's messages (its text; cranax adds a line naming both structures after it).
MISMATCH_MESSAGES = [
    ([1, 2], [1, 2, 3], "pytree structure error: different lengths of list at key path\n    {w} tree\nAt that key "
     "path, the prefix pytree {w} tree has a subtree of type list of length 2, but the full pytree has a subtree of "
     "the same type but of length 3."),
    ({"a": 1, "b": 2}, {"a": 1}, "pytree structure error: different numbers of pytree children at key path\n"
     "    {w} tree\nAt that key path, the prefix pytree {w} tree has a subtree of type\n    <class 'dict'>\nwith 2 "
     "child keys\n    a b\nbut at the same key path the full pytree has a subtree of the same type but with 1 child "
     "keys\n    a\nso the symmetric difference on key sets is\n    b"),
    (_P(1, 2), _Q(1, 2), "pytree structure error: different types at key path\n    {w} tree\nAt that key path, the "
     "prefix pytree {w} tree has a subtree of type\n    " + str(_P) + "\nbut at the same key path the full pytree "
     "has a subtree of different type\n    " + str(_Q) + "."),
    (_Meta(1, "m"), _Meta(1, "n"), "pytree structure error: different pytree metadata at key path\n    {w} tree\nAt "
     "that key path, the prefix pytree {w} tree has a subtree of type\n    " + str(_Meta) + "\nwith metadata\n    m\n"
     "but at the same key path the full pytree has a subtree of the same type but with metadata\n    n\nso the diff "
     "in the metadata at these pytree nodes is\n    - m\n    + n"),
    ([1, {"k": (1, 2)}], [1, {"k": (1, 2, 3)}], "pytree structure error: different lengths of tuple at key path\n"
     "    {w} tree[1]['k']\nAt that key path, the prefix pytree {w} tree has a subtree of type tuple of length 2, but "
     "the full pytree has a subtree of the same type but of length 3."),
    (None, 1, "pytree structure error: different types at key path\n    {w} tree\nAt that key path, the prefix "
     "pytree {w} tree has a subtree of type\n    <class 'NoneType'>\nbut at the same key path the full pytree has a "
     "subtree of different type\n    <class 'int'>."),
    (collections.OrderedDict(a=1), collections.OrderedDict(b=1), "pytree structure error: different pytree metadata "
     "at key path\n    {w} tree\nAt that key path, the prefix pytree {w} tree has a subtree of type\n    <class "
     "'collections.OrderedDict'>\nwith metadata\n    ('a',)\nbut at the same key path the full pytree has a subtree "
     "of the same type but with metadata\n    ('b',)\nso the diff in the metadata at these pytree nodes is\n"
     "    - ('a',)\n    ?   ^\n\n    + ('b',)\n    ?   ^\n"),
]


@pytest.mark.parametrize("a,b,msg", MISMATCH_MESSAGES)
def test_mismatch_messages_name_the_key_path(a, b, msg):
    for what, call in [("tree_map", lambda: tu.tree_map(lambda x, y: x, a, b)),
                       ("tree_map_with_path", lambda: tu.tree_map_with_path(lambda p, x, y: x, a, b))]:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == msg.format(w=what)   # JAX 0.10.2 raises the prefix error alone
    assert tu.tree_map(lambda x, y: y, 1, [1, 2]) == [1, 2]   # a leaf is a prefix of anything
