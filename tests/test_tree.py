"""fxad.tree and the tree_util additions: key paths, registration helpers, Partial,
tree_reduce/transpose and friends."""
import collections
import dataclasses

import numpy as np
import pytest

import fxad
import fxad.tree as ftree
from fxad import tree_util as tu

P = collections.namedtuple("P", "x y")


def test_tree_module_names():
    t = {"a": 1, "b": (2, 3)}
    assert ftree.map(lambda v: v * 2, t) == {"a": 2, "b": (4, 6)}
    assert ftree.leaves(t) == [1, 2, 3]
    leaves, td = ftree.flatten(t)
    assert ftree.unflatten(td, leaves) == t and ftree.structure(t) == td
    assert ftree.reduce(lambda a, b: a + b, t) == 6 and ftree.reduce(lambda a, b: a + b, (), 5) == 5
    assert ftree.all([True, (True, 1)]) and not ftree.all([True, 0])
    assert ftree.transpose(ftree.structure([0, 0]), ftree.structure((0, 0, 0)),
                           [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    assert ftree.broadcast((1, 2), ((0, 0), [0])) == ((1, 1), [2])
    assert ftree.reduce_associative(lambda a, b: a * b, [1, 2, 3, 4, 5]) == 120
    with pytest.raises(ValueError, match="identity"):
        ftree.reduce_associative(lambda a, b: a, [])


def test_key_paths():
    t = {"a": [1, (2, P(3, 4))], "b": None, "c": collections.OrderedDict(z=5)}
    pairs, td = tu.tree_flatten_with_path(t)
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['a'][0]", "['a'][1][0]", "['a'][1][1].x", "['a'][1][1].y", "['c']['z']"]
    assert [v for _, v in pairs] == tu.tree_leaves(t)
    assert tu.keystr(pairs[2][0], simple=True, separator="/") == "a/1/1/x"
    assert pairs[0][0] == (tu.DictKey("a"), tu.SequenceKey(0))
    assert repr(tu.GetAttrKey("x")) == "GetAttrKey(name='x')"
    out = tu.tree_map_with_path(lambda p, v, w: (len(p), v + w), {"u": 1, "v": (2,)},
                                {"u": 10, "v": (20,)})
    assert out == {"u": (1, 11), "v": ((2, 22),)}
    assert ftree.leaves_with_path([1]) == [((tu.SequenceKey(0),), 1)]
    deep = 0
    for _ in range(3000):  # deeper than Python's recursion limit
        deep = [deep]
    assert len(tu.tree_flatten_with_path(deep)[0][0][0]) == 3000


class Box:
    def __init__(self, v, tag):
        self.v, self.tag = v, tag


tu.register_pytree_with_keys(Box, lambda b: (((tu.GetAttrKey("v"), b.v),), b.tag),
                             lambda tag, ch: Box(ch[0], tag))


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_static
class Config:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return hash(self.n)

    def __eq__(self, other):
        return isinstance(other, Config) and other.n == self.n


def test_registration_helpers_work_with_transformations():
    (path, leaf), = tu.tree_leaves_with_path(Box(np.ones(2), "t"))
    assert tu.keystr(path) == ".v"
    g = fxad.grad(lambda p: fxad.numpy.sum(p.a * p.b))(Pair(np.ones(2), 3 * np.ones(2)))
    assert isinstance(g, Pair)
    np.testing.assert_array_equal(g.a, [3.0, 3.0])
    assert tu.tree_leaves(Config(3)) == []
    f = fxad.jit(lambda c, x: x * c.n)
    np.testing.assert_array_equal(f(Config(4), np.ones(2)), [4.0, 4.0])
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1, 2))] == \
        ["[<flat index 0>]", "[<flat index 1>]"]


def test_register_dataclass_forms():
    @dataclasses.dataclass
    class A:
        x: object
        meta: str

    tu.register_dataclass(A, data_fields=["x"], meta_fields=["meta"])
    leaves, td = tu.tree_flatten(A(np.ones(1), "m"))
    assert len(leaves) == 1 and td.unflatten([2.0]) == A(2.0, "m")
    assert tu.keystr(tu.tree_leaves_with_path(A(1, "m"))[0][0]) == ".x"
    import functools

    @functools.partial(tu.register_dataclass, data_fields=["y"], meta_fields=[])
    @dataclasses.dataclass
    class B:
        y: object
    assert tu.tree_leaves(B(5)) == [5]
    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(Box)


def test_partial_and_small_helpers():
    p = tu.Partial(lambda a, b, c=0: a + b + c, 1, c=10)
    assert p(2) == 13 and tu.tree_leaves(p) == [1, 10]
    p2 = tu.Partial(p, 5)
    assert p2() == 16 and tu.tree_leaves(p2) == [1, 5, 10]
    assert tu.treedef_is_leaf(tu.tree_structure(1)) and not tu.treedef_is_leaf(
        tu.tree_structure((1,)))
    td = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2])])
    assert td == tu.tree_structure((0, [0, 0]))
    assert tu.all_leaves([1, np.ones(2)]) and not tu.all_leaves([(1,)])
    assert tu.flatten_one_level({"b": 2, "a": 1}) == ([1, 2], ("a", "b"))
    with pytest.raises(ValueError, match="leaf"):
        tu.flatten_one_level(3)
    assert tu.tree_reduce(max, [3, (9, 2)]) == 9
