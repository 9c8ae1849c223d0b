"""Pytrees: nested containers whose leaves are flattened into a list (JAX semantics).

A tree is split into a flat list of leaves plus a hashable PyTreeDef describing
its shape, so transformations can work on flat lists and cache on structure.
"""
from __future__ import annotations

from ._keys import (DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath,  # noqa: F401
                    SequenceKey, keystr)
from ._treedef import (PyTreeDef, cache_key, register_pytree_node, tree_flatten,  # noqa: F401
                       tree_structure)
from ._operations import (all_leaves, broadcast_prefix, flatten_one_level,  # noqa: F401
                          flatten_one_level_with_keys, is_tree_node, tree_all, tree_broadcast,
                          tree_flatten_up_to, tree_flatten_with_path, tree_leaves,
                          tree_leaves_with_path, tree_map, tree_map_with_path, tree_reduce,
                          tree_reduce_associative, tree_transpose, tree_unflatten,
                          treedef_children, treedef_is_leaf, treedef_tuple)
from ._registration import (Partial, register_dataclass, register_pytree_node_class,  # noqa: F401
                            register_pytree_with_keys, register_pytree_with_keys_class,
                            register_static)

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_leaves", "tree_structure", "tree_map", "treedef_children", "tree_all",
           "tree_flatten_up_to", "broadcast_prefix", "tree_broadcast", "tree_reduce",
           "tree_reduce_associative", "tree_transpose", "treedef_is_leaf", "treedef_tuple",
           "all_leaves", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
           "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "keystr", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "register_pytree_with_keys", "register_pytree_node_class",
           "register_pytree_with_keys_class", "register_dataclass", "register_static",
           "Partial"]
