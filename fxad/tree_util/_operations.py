"""Functions of trees built on the flatten walk: unflatten, map, reduce, broadcast,
transpose, one level at a time, and with key paths."""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable

from ._treedef import (_LEAF, _LEAF_DEF, _LEAF_TYPES, _REG, _child_keys, _decompose,
                       _flatten_deep, _registry, PyTreeDef, tree_flatten, tree_structure)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of the structure treedef with `leaves` in flattening order (the inverse of
    tree_flatten)."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of tree in flattening order (dict keys sorted, None an empty node), as JAX's."""
    return tree_flatten(tree, is_leaf)[0]


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root node's children."""
    return treedef.children()


def tree_flatten_up_to(treedef: PyTreeDef, tree: Any) -> list:
    """The subtrees of tree at the positions of treedef's leaves: treedef must be a prefix of
    tree's structure (an error names the first mismatch otherwise)."""
    return treedef.flatten_up_to(tree)


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply f to corresponding leaves; `tree` may be a prefix of each tree in `rest`."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(list(map(f, leaves, *others)))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of tree is truthy (Python's all over tree_leaves)."""
    return all(tree_leaves(tree, is_leaf))


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list:
    """For each leaf of full_tree, the leaf of prefix_tree whose subtree contains it.

    None in the prefix is a leaf ("applies to the whole subtree"), as with vmap's
    in_axes. `is_leaf` applies to the prefix; full_tree is flattened normally.
    """
    def prefix_leaf(x):
        return x is None or (is_leaf is not None and is_leaf(x))

    leaves, treedef = tree_flatten(prefix_tree, prefix_leaf)
    result: list[Any] = []
    for p, sub in zip(leaves, treedef.flatten_up_to(full_tree)):
        result.extend([p] * tree_structure(sub).num_leaves)
    return result


class _Unspecified:
    """The default of `initializer` and `identity`: none given (None is a valid value)."""

    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = _Unspecified()


def tree_reduce(function: Callable, tree: Any, initializer: Any = _UNSPECIFIED,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """functools.reduce(function, leaves[, initializer])."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation: Callable, tree: Any, *, identity: Any = _UNSPECIFIED,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Combine the leaves with an associative `operation`, pairwise (a balanced tree of
    calls); `identity` is the result for a tree without leaves."""
    xs = tree_leaves(tree, is_leaf)
    if not xs:
        if identity is _UNSPECIFIED:
            raise ValueError("tree_reduce_associative of a tree without leaves needs identity=")
        return identity
    while len(xs) > 1:
        xs = [operation(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i]
              for i in range(0, len(xs), 2)]
    return xs[0]


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`prefix_tree` with each of its leaves repeated over the subtree of `full_tree` it
    covers: a tree with full_tree's structure."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether the structure is a single leaf."""
    return treedef._kind == _LEAF


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have these treedefs."""
    return PyTreeDef(_REG, tuple, None, tuple(treedefs), _registry[tuple][1])


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Is every element a leaf (a pytree of one leaf and no node)?"""
    return all(treedef_is_leaf(tree_structure(x, is_leaf)) for x in iterable)


def flatten_one_level(tree: Any) -> tuple[list, Any]:
    """(children, node metadata) of the top node; a ValueError for a leaf."""
    d = _decompose(tree)
    if d is None:
        raise ValueError(f"flatten_one_level: {type(tree).__name__} is a leaf, not a node")
    return list(d[1]), d[2]


def flatten_one_level_with_keys(tree: Any) -> tuple[list, Any]:
    """([(key, child), ...], node metadata) of the top node; a ValueError for a leaf."""
    children, aux = flatten_one_level(tree)
    return list(zip(_child_keys(tree, _decompose(tree)[0], aux, len(children)), children)), aux


def is_tree_node(typ: type) -> bool:
    """Is `typ` a node type: registered, a namedtuple, or a dataclass (fxad flattens
    dataclasses without registration)?"""
    return (typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))
            or hasattr(typ, "__dataclass_fields__"))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """A tree with structure outer(inner(leaves)) as one with structure inner(outer(...))."""
    flat = tree_leaves(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_out, n_in = outer_treedef.num_leaves, inner_treedef.num_leaves
    if len(flat) != n_out * n_in:
        raise ValueError(f"tree_transpose: the tree has {len(flat)} leaves, but outer "
                         f"{outer_treedef} times inner {inner_treedef} makes {n_out * n_in}")
    cols = [[flat[i * n_in + j] for i in range(n_out)] for j in range(n_in)]
    return inner_treedef.unflatten([outer_treedef.unflatten(c) for c in cols])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """([(key path, leaf), ...], treedef): each leaf with the keys that lead to it. With
    `is_leaf_takes_path`, the test is called as is_leaf(path, x)."""
    if is_leaf is not None and (is_leaf((), tree) if is_leaf_takes_path else is_leaf(tree)):
        d = None
    else:
        d = None if type(tree) in _LEAF_TYPES else _decompose(tree)
    if d is None:
        return [((), tree)], _LEAF_DEF
    leaves, paths = [], []
    treedef = _flatten_deep(tree, d, is_leaf, leaves, paths, is_leaf_takes_path)
    return list(zip(paths, leaves)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list:
    """[(key path, leaf)] in flattening order: the first part of tree_flatten_with_path."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable, tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """f(key path, leaf, *corresponding leaves of `rest`) for every leaf of `tree`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(p, x, *o) for (p, x), *o in zip(pairs, *others))
