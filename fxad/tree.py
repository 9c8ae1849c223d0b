"""`fxad.tree`: the pytree functions under JAX's short names (`fxad.tree.map` is
`fxad.tree_util.tree_map`, ...)."""
from __future__ import annotations

from typing import Any, Callable

from .tree_util import (  # noqa: F401
    broadcast_prefix, tree_all, tree_flatten, tree_flatten_with_path, tree_leaves,
    tree_leaves_with_path, tree_map, tree_map_with_path, tree_reduce, tree_structure,
    tree_transpose, tree_unflatten)

map = tree_map  # noqa: A001  (JAX's names)
leaves = tree_leaves
structure = tree_structure
flatten = tree_flatten
unflatten = tree_unflatten
reduce = tree_reduce
all = tree_all  # noqa: A001
transpose = tree_transpose
map_with_path = tree_map_with_path
flatten_with_path = tree_flatten_with_path
leaves_with_path = tree_leaves_with_path


def broadcast(prefix_tree: Any, full_tree: Any,
              is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`prefix_tree` with each of its leaves repeated over the subtree of `full_tree` it
    covers: a tree with full_tree's structure."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree,
                                                                is_leaf))


def reduce_associative(operation: Callable, tree: Any, *, identity: Any = None,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Combine the leaves with an associative `operation`, pairwise (a balanced tree of
    calls); `identity` is the result for a tree without leaves."""
    xs = tree_leaves(tree, is_leaf)
    if not xs:
        if identity is None:
            raise ValueError("reduce_associative of a tree without leaves needs identity=")
        return identity
    while len(xs) > 1:
        xs = [operation(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i]
              for i in range(0, len(xs), 2)]
    return xs[0]


__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose",
           "map_with_path", "flatten_with_path", "leaves_with_path", "broadcast",
           "reduce_associative"]
