"""More ways to make a type a node: with keys, by class decorator, dataclasses with static
fields, static values, and Partial (functools.partial as a pytree)."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from ._keys import GetAttrKey
from ._treedef import register_pytree_node


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Like register_pytree_node, with `flatten_with_keys(x) -> (((key, child), ...), aux)`
    naming each child in key paths."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: the class's own `tree_flatten()` and classmethod
    `tree_unflatten(aux, children)` make it a node."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator with `tree_flatten_with_keys()` and `tree_unflatten(aux, children)`."""
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              getattr(cls, "tree_flatten", None) and (lambda x: x.tree_flatten()))
    return cls


def register_dataclass(nodetype: type, data_fields=None, meta_fields=None,
                       drop_fields=()) -> Any:
    """A dataclass whose `data_fields` are children and `meta_fields` static metadata (part
    of the treedef, compared by equality). Without field lists, a field is metadata when
    declared with `dataclasses.field(metadata=dict(static=True))` (`fxad.tree.static()`).
    Usable as a decorator, also through functools.partial."""
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; pass "
                            "data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        if meta_fields is None:
            meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        if data_fields is None:
            data_fields = [f.name for f in fields if f.name not in meta_fields]
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data],
                tuple(getattr(x, n) for n in meta))

    def unflatten(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))
    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten,
                              lambda x: ([getattr(x, n) for n in data],
                                         tuple(getattr(x, n) for n in meta)))
    return nodetype


def register_static(cls: type) -> type:
    """Instances of `cls` are nodes with no children: the value itself is metadata (so it
    must be hashable), and transformations never see it as an array."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


class Partial(functools.partial):
    """functools.partial that is a pytree: the bound arguments are its children (so arrays
    in them are traced), the function is metadata. Pass one to a transformed function."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):  # flatten, as functools.partial does
            args, kw = func.args + args, {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, ch: Partial(func, *ch[0], **ch[1]))
