"""`fxad.tree`: the pytree functions under JAX's short names (`fxad.tree.map` is
`fxad.tree_util.tree_map`, ...)."""
from __future__ import annotations

import dataclasses

from .tree_util import (  # noqa: F401
    tree_all, tree_broadcast, tree_flatten, tree_flatten_with_path, tree_leaves,
    tree_leaves_with_path, tree_map, tree_map_with_path, tree_reduce, tree_reduce_associative,
    tree_structure, tree_transpose, tree_unflatten)

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
broadcast = tree_broadcast
reduce_associative = tree_reduce_associative


def static(**kwargs):
    """A dataclass field that `fxad.tree_util.register_dataclass` makes static metadata
    (part of the tree's structure, not a leaf): `dataclasses.field(**kwargs)` with
    `metadata["static"] = True`."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose",
           "map_with_path", "flatten_with_path", "leaves_with_path", "broadcast",
           "reduce_associative", "static"]
