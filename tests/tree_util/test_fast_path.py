"""tree_flatten's fast path (trees of tuples, lists, str-keyed dicts and None, with a treedef
shared per structure and a generated rebuild) against the general walk: the same leaves, in
the same order, an equal treedef, and the same tree rebuilt; everything else falls back."""
import dataclasses
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.tree_util import _treedef, register_pytree_node, tree_flatten, tree_unflatten

from tests.racing import race

Pair = namedtuple("Pair", ["a", "b"])


@dataclasses.dataclass
class DC:
    a: object
    b: object


class Node:
    def __init__(self, kids):
        self.kids = kids

    def __eq__(self, other):
        return type(other) is Node and self.kids == other.kids


register_pytree_node(Node, lambda n: (n.kids, None), lambda _, kids: Node(list(kids)))


class MyTuple(tuple):  # a tuple subclass, neither a namedtuple nor registered: a leaf
    pass


x, y = np.arange(3.0), np.float32(2.5)
TREES = [
    ([(x, x), (x, x)], x, x),
    [],
    (),
    {},
    None,
    [None, (None,), {"a": None}],
    (x,),
    [[[]]],
    {"b": x, "a": [x, 1.0], "c": {"z": y, "y": (2, 3 + 1j, True)}},
    {"b": 1, "a": 2},  # insertion order differs from the sorted one
    [Pair(x, y), x],  # namedtuple: the general walk
    (DC(x, [y]), x),  # dataclass: the general walk
    [Node([x, y]), x],  # registered node: the general walk
    OrderedDict(b=x, a=y),  # registered type (order kept): the general walk
    {1: x, 2: y},  # non-str dict keys: the general walk
    [MyTuple((x, y)), x],  # a tuple subclass is a leaf
    ["text", object, x],  # other objects are leaves
    "DEEP",  # deeper than the limit (built below)
    [x] * 5000,  # larger than the limit
    [{"k": [x, None, (y,)]} for _ in range(20)],
]


def _deep(n):
    t = [x]
    for _ in range(n):
        t = [t]
    return t


TREES[TREES.index("DEEP")] = _deep(_treedef._MAX_DEPTH + 3)


def _general(tree):
    leaves = []
    return leaves, _treedef._flatten(tree, None, leaves)


def _same(a, b, ordered=True):
    """Equal trees with identical leaves and identical container types (and dict keys in the
    same order, when `ordered`)."""
    if type(a) is not type(b):
        return False
    if type(a) in (list, tuple, MyTuple) or isinstance(a, tuple) and hasattr(a, "_fields"):
        return len(a) == len(b) and all(_same(p, q, ordered) for p, q in zip(a, b))
    if isinstance(a, dict):
        return (list(a) == list(b) if ordered else sorted(a) == sorted(b)) and \
            all(_same(a[k], b[k], ordered) for k in a)
    if type(a) in (DC, Node):
        return a == b
    return a is b


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_the_fast_path_agrees_with_the_general_walk(tree):
    leaves, td = tree_flatten(tree)
    want_leaves, want_td = _general(tree)
    assert len(leaves) == len(want_leaves)
    assert all(a is b for a, b in zip(leaves, want_leaves))
    assert td == want_td and hash(td) == hash(want_td) and str(td) == str(want_td)
    assert td.num_leaves == want_td.num_leaves and td.num_nodes == want_td.num_nodes
    for given in (leaves, tuple(leaves), iter(leaves)):
        rebuilt = tree_unflatten(td, given)
        assert _same(rebuilt, want_td.unflatten(list(leaves)))
    if type(tree) in (list, tuple, dict):
        assert _same(tree_unflatten(td, leaves), tree, ordered=False)
    # the same structure again: the shared treedef
    assert tree_flatten(tree)[1] is td or td._build is None


def test_dict_keys_are_sorted_and_insertion_order_does_not_matter():
    l1, t1 = tree_flatten({"b": 1, "a": 2, "c": 3})
    l2, t2 = tree_flatten({"c": 3, "a": 2, "b": 1})
    assert l1 == l2 == [2, 1, 3] and t1 is t2
    assert list(tree_unflatten(t1, [7, 8, 9])) == ["a", "b", "c"]


def test_rebuilt_trees_are_new_containers_and_keep_no_reference_to_the_leaf_list():
    leaves, td = tree_flatten([(x, x), [x]])
    assert td._build is not None
    out = tree_unflatten(td, leaves)
    leaves[0] = None  # the caller's list changes afterwards: the tree does not
    assert out[0][0] is x
    assert tree_unflatten(td, [1, 2, 3]) == [(1, 2), [3]]


def test_wrong_leaf_counts_are_refused_as_by_the_general_walk():
    _, td = tree_flatten([x, (x, x)])
    for n in (2, 4):
        with pytest.raises(ValueError, match="expects 3 leaves"):
            tree_unflatten(td, [x] * n)


def test_tracers_are_leaves_on_the_fast_path():
    def f(p):
        leaves, td = tree_flatten([p, (p, None)])
        assert len(leaves) == 2 and all(v is p for v in leaves)
        q = tree_unflatten(td, leaves)
        return fnp.sum(q[0] * q[1][0])
    np.testing.assert_allclose(fxad.grad(f)(x), 2 * x)
    np.testing.assert_allclose(fxad.jit(fxad.grad(f))(x), 2 * x)
    np.testing.assert_allclose(fxad.vmap(fxad.grad(f))(np.stack([x, x])), 2 * np.stack([x, x]))


def test_gradients_of_dicts_lists_and_none_keep_their_structure():
    params = {"w": [np.ones(2), None, (np.full(3, 2.0),)], "b": np.float64(1.0)}

    def loss(p):
        return fnp.sum(p["w"][0] ** 2) + fnp.sum(p["w"][2][0]) * p["b"]
    g = fxad.grad(loss)(params)
    assert list(g) == ["b", "w"] and g["w"][1] is None and type(g["w"][2]) is tuple
    np.testing.assert_allclose(g["w"][0], 2 * np.ones(2))
    np.testing.assert_allclose(g["w"][2][0], np.ones(3))
    np.testing.assert_allclose(g["b"], 6.0)


def test_the_shared_treedefs_are_bounded(monkeypatch):
    monkeypatch.setattr(_treedef, "_shared", {})
    monkeypatch.setattr(_treedef, "_SHARED_SIZE", 8)
    for n in range(40):
        leaves, td = tree_flatten([x] * n)
        assert td == _general([x] * n)[1] and tree_unflatten(td, leaves) == [x] * n
    assert len(_treedef._shared) <= 8


def test_the_fast_path_is_thread_safe(monkeypatch):
    monkeypatch.setattr(_treedef, "_shared", {})
    monkeypatch.setattr(_treedef, "_SHARED_SIZE", 16)

    def work(k):
        for n in range(60):
            tree = {"a": [x] * ((n + k) % 23), "b": (y, None, [x] * (n % 5))}
            leaves, td = tree_flatten(tree)
            want_leaves, want_td = _general(tree)
            assert td == want_td and len(leaves) == len(want_leaves)
            assert _same(tree_unflatten(td, leaves), tree, ordered=False)
    race(work, range(8))
