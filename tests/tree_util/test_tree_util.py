import copy
import dataclasses
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fxad.tree_util import (
    PyTreeDef, broadcast_prefix, register_pytree_node, tree_all, tree_flatten,
    tree_flatten_up_to, tree_leaves, tree_map, tree_structure, tree_unflatten,
    treedef_children,
)

Point = namedtuple("Point", ["x", "y"])


@dataclasses.dataclass
class DC:
    a: object
    b: object
    c: int = dataclasses.field(default=7, init=False)


@dataclasses.dataclass(frozen=True)
class FrozenDC:
    p: object
    q: object


class Box:
    def __init__(self, value, meta):
        self.value, self.meta = value, meta

    def __eq__(self, other):
        return type(other) is Box and self.meta == other.meta and self.value == other.value


register_pytree_node(Box, lambda b: ([b.value], b.meta), lambda meta, ch: Box(ch[0], meta))


def roundtrip(tree):
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, leaves)


@pytest.mark.parametrize("tree", [
    (1, (2, 3), [4, [5]]),
    {"b": 1, "a": (2, {"z": 3, "y": None})},
    None,
    [None, (), [], {}],
    Point(1, Point(2, 3)),
    DC(a=(1, 2), b={"k": 3}),
    FrozenDC(p=[1], q=None),
    Box((1, 2), meta="m"),
    OrderedDict([("z", 1), ("a", [2, 3])]),
    defaultdict(list, {"z": 1, "a": [2, 3]}),
])
def test_roundtrip(tree):
    out = roundtrip(tree)
    assert out == tree
    assert type(out) is type(tree)
    assert tree_structure(out) == tree_structure(tree)


def test_namedtuple_and_dataclass_types_preserved():
    out = roundtrip([Point(1, 2), DC(3, 4)])
    assert type(out[0]) is Point and out[0] == Point(1, 2)
    assert type(out[1]) is DC and (out[1].a, out[1].b) == (3, 4)
    # init=False fields are not children
    assert tree_leaves(DC(3, 4)) == [3, 4]


def test_dataclass_is_node_but_class_is_leaf():
    assert tree_leaves(DC) == [DC]
    assert tree_structure(DC(1, 2)).num_leaves == 2


def test_none_is_not_a_leaf():
    assert tree_leaves(None) == []
    leaves, td = tree_flatten((1, None, [None]))
    assert leaves == [1]
    assert td.num_leaves == 1
    assert td.unflatten([9]) == (9, None, [None])


def test_arrays_and_objects_are_leaves():
    a, b, obj = np.ones(3), np.zeros(2), object()
    leaves = tree_leaves((a, [b, obj], 2.5))
    assert len(leaves) == 4
    assert leaves[0] is a and leaves[1] is b and leaves[2] is obj and leaves[3] == 2.5


def test_dict_leaves_sorted_by_key():
    tree = {"b": 1, "a": 2, "c": {"z": 3, "y": 4}}
    leaves, td = tree_flatten(tree)
    assert leaves == [2, 1, 4, 3]
    out = td.unflatten(leaves)
    assert type(out) is dict and list(out) == ["a", "b", "c"] and list(out["c"]) == ["y", "z"]


def test_ordereddict_keeps_insertion_order():
    od = OrderedDict([("b", 1), ("a", 2)])
    leaves, td = tree_flatten(od)
    assert leaves == [1, 2]
    out = td.unflatten(leaves)
    assert type(out) is OrderedDict and list(out) == ["b", "a"]
    assert td != tree_structure(OrderedDict([("a", 1), ("b", 2)]))
    assert td != tree_structure({"b": 1, "a": 2})


def test_defaultdict_is_a_dict_node_that_keeps_its_factory():
    """As in JAX: keys sorted, the default_factory part of the structure."""
    d = defaultdict(list, [("b", 1), ("a", 2)])
    leaves, td = tree_flatten(d)
    assert leaves == [2, 1]
    out = td.unflatten([20, 10])
    assert type(out) is defaultdict and out.default_factory is list
    assert dict(out) == {"a": 20, "b": 10}
    assert td == tree_structure(defaultdict(list, [("a", 0), ("b", 0)]))
    assert td != tree_structure(defaultdict(int, [("a", 0), ("b", 0)]))
    assert td != tree_structure({"a": 0, "b": 0})
    import fxad
    import fxad.numpy as fnp
    g = fxad.grad(lambda p: fnp.sum(p["a"] ** 2) + p["b"])(
        defaultdict(list, a=np.arange(3.0), b=1.0))
    assert type(g) is defaultdict and g.default_factory is list
    np.testing.assert_array_equal(g["a"], 2 * np.arange(3.0))
    assert g["b"] == 1.0


def test_treedef_equality_and_hash():
    t1 = tree_structure((1, {"a": 2, "b": [3]}))
    t2 = tree_structure(("x", {"b": ["y"], "a": "z"}))
    assert t1 == t2 and hash(t1) == hash(t2)
    assert {t1: "hit"}[t2] == "hit"
    assert t1 != tree_structure((1, {"a": 2, "c": [3]}))   # different keys (aux)
    assert t1 != tree_structure([1, {"a": 2, "b": [3]}])   # list vs tuple
    assert t1 != tree_structure((1, {"a": 2, "b": (3,)}))
    assert tree_structure(Box(1, "m")) != tree_structure(Box(1, "n"))  # different aux
    assert tree_structure(Box(1, "m")) == tree_structure(Box(2, "m"))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure(None) != tree_structure(())


def test_treedef_immutable_and_copy():
    td = tree_structure((1, 2))
    with pytest.raises(AttributeError):
        td.num_leaves = 5
    assert copy.deepcopy(td) == td and copy.copy(td) is td


def test_treedef_counts_repr_children():
    td = tree_structure((1, {"a": 2, "b": None}))
    assert isinstance(td, PyTreeDef)
    assert td.num_leaves == 2
    assert td.num_nodes == 5  # tuple, leaf, dict, leaf, None
    assert repr(td) == "PyTreeDef((*, {'a': *, 'b': None}))"
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    # JAX's texts for a namedtuple and a registered node (its auxiliary data printed by str)
    assert repr(tree_structure([Point(1, 2)])) == "PyTreeDef([CustomNode(namedtuple[Point], [*, *])])"
    assert repr(tree_structure(Box(1, "m"))) == "PyTreeDef(CustomNode(Box[m], [*]))"
    kids = td.children()
    assert kids == treedef_children(td)
    assert kids == [tree_structure(1), tree_structure({"a": 0, "b": None})]
    assert tree_structure(5).children() == []


def test_unflatten_wrong_count():
    td = tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=r"3.*2|2.*3"):
        td.unflatten([1, 2])
    with pytest.raises(ValueError, match="4"):
        tree_unflatten(td, [1, 2, 3, 4])


def test_is_leaf():
    tree = ((1, 2), [3, (4, 5)])
    leaves, td = tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple) and x == (4, 5))
    assert leaves == [1, 2, 3, (4, 5)]
    assert td.unflatten(leaves) == tree
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_registered_type_precedence_and_duplicates():
    Pair = namedtuple("Pair", ["first", "second"])

    @dataclasses.dataclass
    class D2:
        u: object
        v: object

    register_pytree_node(Pair, lambda p: ([p.first], p.second), lambda aux, ch: Pair(ch[0], aux))
    register_pytree_node(D2, lambda d: ([d.v], d.u), lambda aux, ch: D2(aux, ch[0]))
    assert tree_leaves(Pair(1, 2)) == [1]
    assert roundtrip(Pair(1, 2)) == Pair(1, 2)
    assert tree_leaves(D2(1, 2)) == [2]
    assert roundtrip(D2(1, 2)) == D2(1, 2)
    with pytest.raises(ValueError):
        register_pytree_node(Pair, lambda p: ((), None), lambda a, c: None)
    with pytest.raises(ValueError):
        register_pytree_node(tuple, lambda p: ((), None), lambda a, c: None)


def test_tree_map_multiple_trees():
    a = {"x": 1, "y": (2, 3)}
    b = {"y": (20, 30), "x": 10}
    c = {"x": 100, "y": (200, 300)}
    assert tree_map(lambda p, q, r: p + q + r, a, b, c) == {"x": 111, "y": (222, 333)}
    assert tree_map(lambda v: v * 2, [1, None, Point(2, 3)]) == [2, None, Point(4, 6)]


def test_tree_map_leaf_prefix():
    out = tree_map(lambda p, sub: (p, sub), (1, 2), ([3, 4], {"k": 5}))
    assert out == ((1, [3, 4]), (2, {"k": 5}))


@pytest.mark.parametrize("first,other", [
    ((1, 2), (1, 2, 3)),
    ((1, 2), [1, 2]),
    ({"a": 1}, {"b": 1}),
    ([1, [2]], [1, 2]),
    (Box(1, "m"), Box(1, "n")),
    (Point(1, 2), (1, 2)),
    ((1, None), (1, 2)),
])
def test_tree_map_mismatch(first, other):
    with pytest.raises(ValueError) as exc:
        tree_map(lambda *xs: xs, first, other)
    msg = str(exc.value)
    assert str(tree_structure(first)) in msg and str(tree_structure(other)) in msg


def test_flatten_up_to():
    td = tree_structure((0, {"a": 0, "b": 0}))
    tree = ([1, 2], {"a": None, "b": {"c": 3}})
    assert tree_flatten_up_to(td, tree) == [[1, 2], None, {"c": 3}]
    assert td.flatten_up_to(tree) == [[1, 2], None, {"c": 3}]
    with pytest.raises(ValueError, match="mismatch"):
        tree_flatten_up_to(td, ([1, 2], {"a": 1}))


def test_broadcast_prefix():
    x = np.ones(2)
    full = ((x, x), {"p": x, "q": x}, x)
    assert broadcast_prefix((0, None, 1), full) == [0, 0, None, None, 1]
    assert broadcast_prefix(0, full) == [0] * 5
    assert broadcast_prefix(None, full) == [None] * 5
    assert broadcast_prefix((0, {"p": None, "q": 1}, None), full) == [0, 0, None, 1, None]
    # a None subtree in the full tree has no leaves, so its prefix entry contributes nothing
    assert broadcast_prefix((0, 1, 2), (x, None, x)) == [0, 2]
    with pytest.raises(ValueError):
        broadcast_prefix((0, 1), (x,))
    with pytest.raises(ValueError):
        broadcast_prefix([0, 1], (x, x))


def test_tree_all():
    assert tree_all((1, [True, {"a": 2}]))
    assert not tree_all((1, [True, {"a": 0}]))
    assert tree_all(None)


# ---- property-based round trip -------------------------------------------------

_leaf = st.one_of(st.integers(), st.text(max_size=3), st.booleans())


def _extend(children):
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), children, max_size=3),
        st.builds(Point, children, children),
        st.builds(DC, children, children),
        st.builds(Box, children, st.sampled_from(["m", "n"])),
        st.lists(st.tuples(st.text(max_size=2), children), max_size=3).map(OrderedDict),
        st.none(),
    )


_trees = st.recursive(_leaf, _extend, max_leaves=12)


def _same_types(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        # plain dicts come back in sorted-key order; only OrderedDict order is kept
        same_keys = list(a) == list(b) if isinstance(a, OrderedDict) else set(a) == set(b)
        return same_keys and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return all(_same_types(x, y) for x, y in zip(a, b))
    if isinstance(a, DC):
        return _same_types(a.a, b.a) and _same_types(a.b, b.b)
    return True


@settings(max_examples=200, deadline=None, database=None)
@given(_trees)
def test_hypothesis_roundtrip(tree):
    leaves, td = tree_flatten(tree)
    assert td.num_leaves == len(leaves)
    out = td.unflatten(leaves)
    assert out == tree
    assert _same_types(out, tree)
    td2 = tree_structure(out)
    assert td2 == td and hash(td2) == hash(td)
    # tree_map preserves structure and visits leaves in flatten order
    wrapped = tree_map(_Wrap, tree)
    assert tree_structure(wrapped) == td
    assert [w.v for w in tree_leaves(wrapped)] == leaves


class _Wrap:  # an opaque leaf (a tuple would itself be a node)
    def __init__(self, v):
        self.v = v
