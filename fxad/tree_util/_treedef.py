"""The node registry, PyTreeDef (a tree's structure, leaves elided: hashable, so
transformations cache on it) and the walk that flattens a tree into leaves and a treedef."""
from __future__ import annotations

import copy
import dataclasses
import operator
import threading
from collections import OrderedDict, defaultdict
from typing import Any, Callable, Iterable

import numpy as np

from ..core import _NP_SCALAR_TYPES, Tracer
from ._keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey


# type -> (flatten_fn, unflatten_fn). Keyed by exact type: a dict hit is the
# cheapest possible test on the hot path.
_registry: dict[type, tuple[Callable, Callable]] = {}
_key_registry: dict[type, Callable] = {}  # type -> flatten_with_keys(x) -> (((key, child),...), aux)

# Node kinds. Namedtuples/dataclasses are detected structurally rather than
# registered, so arbitrary user types work without any setup.
_LEAF, _REG, _NT, _DC = 0, 1, 2, 3


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """flatten_func(x) -> (children, aux_data); unflatten_func(aux_data, children) -> x;
    optionally flatten_with_keys_func(x) -> (((key, child), ...), aux_data) for key paths.
    aux_data is compared by equality, and hashed when it can be (a dict is fine)."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate pytree node registration for {nodetype!r}")
    _registry[nodetype] = (flatten_func, unflatten_func)
    if flatten_with_keys_func is not None:
        _key_registry[nodetype] = flatten_with_keys_func


def _dict_flatten(d):
    keys = tuple(sorted(d))  # sorted so equal dicts give equal treedefs regardless of insertion order
    return [d[k] for k in keys], keys


register_pytree_node(tuple, lambda x: (x, None), lambda _, ch: tuple(ch))
register_pytree_node(list, lambda x: (x, None), lambda _, ch: list(ch))
register_pytree_node(dict, _dict_flatten, lambda keys, ch: dict(zip(keys, ch)))
register_pytree_node(type(None), lambda _: ((), None), lambda _, __: None)
# OrderedDict's order is meaningful to the user, so it is kept (and part of the aux).
register_pytree_node(OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, ch: OrderedDict(zip(keys, ch)))
# A defaultdict is a dict (keys sorted) that keeps its default_factory, as in JAX.
def _defaultdict_flatten(d):
    children, keys = _dict_flatten(d)
    return children, (d.default_factory, keys)


register_pytree_node(defaultdict, _defaultdict_flatten,
                     lambda aux, ch: defaultdict(aux[0], zip(aux[1], ch)),
                     lambda d: (tuple((DictKey(k), d[k]) for k in sorted(d)),
                                (d.default_factory, tuple(sorted(d)))))

_dc_fields: dict[type, tuple[str, ...]] = {}


def _dataclass_names(t: type) -> tuple[str, ...]:
    names = _dc_fields.get(t)
    if names is None:
        # Only init=True fields: those are exactly what type(x)(**kw) can accept.
        names = _dc_fields[t] = tuple(f.name for f in dataclasses.fields(t) if f.init)
    return names


def _decompose(x):
    """Return (kind, children, aux, unflatten_fn) for a node, or None for a leaf."""
    t = type(x)
    h = _registry.get(t)  # registered types take precedence over structural detection
    if h is not None:
        children, aux = h[0](x)
        return _REG, children, aux, h[1]
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return _NT, x, None, None
    if hasattr(t, "__dataclass_fields__"):  # on the type: a dataclass *class* is a leaf
        names = _dataclass_names(t)
        return _DC, [getattr(x, n) for n in names], names, None
    return None


class PyTreeDef:
    """Immutable, hashable description of a tree's structure (leaves elided)."""

    __slots__ = ("_kind", "_type", "_aux", "_children", "_unflat", "num_leaves", "num_nodes",
                 "_hash", "_volatile", "_build")

    def __init__(self, kind, nodetype, aux, children, unflat):
        # _unflat is not part of identity (__eq__/__hash__): the node type determines it.
        # (Written out: every call of grad or jit flattens its arguments into these.)
        n_leaves, n_nodes = (1 if kind == _LEAF else 0), 1
        for c in children:
            n_leaves += c.num_leaves
            n_nodes += c.num_nodes
        set_ = object.__setattr__
        set_(self, "_kind", kind)
        set_(self, "_type", nodetype)
        set_(self, "_aux", aux)
        set_(self, "_children", children)
        set_(self, "_unflat", unflat)
        set_(self, "num_leaves", n_leaves)
        set_(self, "num_nodes", n_nodes)
        set_(self, "_hash", None)
        set_(self, "_volatile", False)  # some aux data in the tree is unhashable (set by hash)
        set_(self, "_build", None)  # leaves -> tree, for the shared treedefs of the fast path

    def __setattr__(self, name, value):
        raise AttributeError("PyTreeDef is immutable")

    __delattr__ = __setattr__

    def __reduce__(self):  # sent to another process (a pickled program): rebuilt there
        return (PyTreeDef, (self._kind, self._type, self._aux, self._children, self._unflat))

    # Immutable, so copies can share the original.
    __copy__ = lambda self: self
    __deepcopy__ = lambda self, memo: self

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        stack = [(self, other)]  # iterative: trees may be deeper than Python's stack
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if (a._kind != b._kind or a._type is not b._type or not _aux_equal(a._aux, b._aux)
                    or len(a._children) != len(b._children)):
                return False
            stack.extend(zip(a._children, b._children))
        return True

    def __hash__(self):
        # Computed lazily, and bottom-up without recursion.
        if self._hash is None:
            set_ = object.__setattr__
            for node in reversed(_preorder(self)):
                if node._hash is None:
                    h = _aux_hash(node._aux)
                    set_(node, "_volatile", h is None or any(c._volatile for c in node._children))
                    set_(node, "_hash", hash((node._kind, node._type, h,
                                              tuple([c._hash for c in node._children]))))
        return self._hash

    def children(self) -> list[PyTreeDef]:
        return list(self._children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        build = self._build  # reads the leaves by index and keeps nothing: no copy needed
        if build is not None and (type(leaves) is list or type(leaves) is tuple) and \
                len(leaves) == self.num_leaves:
            return build(leaves)
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"Tree structure {self} expects {self.num_leaves} leaves, "
                             f"but {len(leaves)} leaves were given")
        if self._kind == _LEAF:
            return leaves[0]
        if all(c._kind == _LEAF for c in self._children):  # flat containers: the common case
            return self._node(leaves)
        # Iterative post-order build: each node's children are built before it.
        it = iter(leaves)
        built = []  # values of finished subtrees, in order
        stack = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if node._kind == _LEAF:
                built.append(next(it))
            elif not expanded:
                stack.append((node, True))
                stack.extend((c, False) for c in reversed(node._children))
            else:
                n = len(node._children)
                ch = built[len(built) - n:] if n else []
                del built[len(built) - n:]
                built.append(node._node(ch))
        return built[0]

    def _node(self, ch):
        kind = self._kind
        if kind == _REG:
            return self._unflat(self._aux, ch)
        if kind == _NT:
            return self._type(*ch)
        return self._type(**dict(zip(self._aux, ch)))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Subtrees of `tree` at this treedef's leaf positions (self must be a prefix)."""
        out: list[Any] = []
        try:
            self._up_to(tree, out)
        except _Mismatch as e:
            try:
                got = str(tree_structure(tree))
            except Exception:  # e.g. unsortable dict keys; don't mask the real error
                got = repr(tree)
            raise ValueError(f"Tree structure mismatch: {e}.\n  expected (prefix): {self}\n"
                             f"  got: {got}") from None
        return out

    def _up_to(self, tree, out):
        stack = [(self, tree)]
        while stack:
            td, x = stack.pop()
            if td._kind == _LEAF:
                out.append(x)
                continue
            d = _decompose(x)
            if d is None:
                raise _Mismatch(f"expected a {td._type.__name__} node, got leaf {x!r}")
            kind, children, aux, _ = d
            if kind != td._kind or type(x) is not td._type:
                raise _Mismatch(f"expected a {td._type.__name__} node, got "
                                f"{type(x).__name__}")
            if not _aux_equal(aux, td._aux):
                raise _Mismatch(f"{td._type.__name__} node metadata differs: expected "
                                f"{td._aux!r}, got {aux!r}")
            children = list(children)
            if len(children) != len(td._children):
                raise _Mismatch(f"{td._type.__name__} node expected {len(td._children)} "
                                f"children, got {len(children)}")
            stack.extend(reversed(list(zip(td._children, children))))

    def __repr__(self):
        strs = {}  # node id -> its text, built bottom-up without recursion
        for node in reversed(_preorder(self)):
            strs[id(node)] = node._str([strs[id(c)] for c in node._children])
        return f"PyTreeDef({strs[id(self)]})"

    def _str(self, ch):
        kind, t = self._kind, self._type
        if kind == _LEAF:
            return "*"
        if kind == _NT:  # (JAX's text for these)
            return f"CustomNode(namedtuple[{t.__name__}], [{', '.join(ch)}])"
        if kind == _DC:
            return f"{t.__name__}({', '.join(f'{n}={c}' for n, c in zip(self._aux, ch))})"
        if t is type(None):
            return "None"
        if t is tuple:
            return "(" + ", ".join(ch) + ("," if len(ch) == 1 else "") + ")"
        if t is list:
            return "[" + ", ".join(ch) + "]"
        if t is dict or t is OrderedDict:
            body = "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self._aux, ch)) + "}"
            return body if t is dict else f"OrderedDict({body})"
        return f"CustomNode({t.__name__}[{self._aux}], [{', '.join(ch)}])"


def _aux_hash(aux):
    """hash(aux), or None for data that cannot be hashed (a dict, as JAX allows): such
    treedefs are told apart by equality alone."""
    try:
        return hash(aux)
    except TypeError:
        return None


def cache_key(treedef: PyTreeDef) -> PyTreeDef | None:
    """`treedef` as a key for a cache: itself, or, when some node's auxiliary data is
    unhashable (so may be mutable), a copy holding deep copies of that data, so a later
    change to the user's object is a cache miss rather than a stale hit (and the cache does
    not keep the object alive). None when such data cannot be copied: do not cache."""
    hash(treedef)
    if not treedef._volatile:
        return treedef
    built = {}
    try:
        for node in reversed(_preorder(treedef)):
            if not node._volatile:
                built[id(node)] = node
                continue
            aux = node._aux if _aux_hash(node._aux) is not None else copy.deepcopy(node._aux)
            built[id(node)] = PyTreeDef(node._kind, node._type, aux,
                                        tuple(built[id(c)] for c in node._children),
                                        node._unflat)
    except Exception:  # noqa: BLE001  (uncopyable data: the caller does not cache)
        return None
    return built[id(treedef)]


def _aux_equal(a, b):
    """Auxiliary data compared by equality. Data whose == gives no single truth value (arrays
    inside) is equal only to itself: at worst a cache miss, never a false match."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001  (ambiguous or failing comparisons: not equal)
        return False


def _preorder(td):
    """Every node of a treedef, parents before children (iteratively)."""
    out, stack = [], [td]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node._children)
    return out


class _Mismatch(Exception):
    """Internal: raised deep in a walk, re-raised as ValueError with both full structures."""


_LEAF_DEF = PyTreeDef(_LEAF, None, None, (), None)  # all leaves share one treedef
object.__setattr__(_LEAF_DEF, "_build", operator.itemgetter(0))
# Arrays and numbers are leaves without asking the registry (the common case, checked first).
_LEAF_TYPES = frozenset({np.ndarray, float, int, complex, bool}) | _NP_SCALAR_TYPES


def _flatten(x, is_leaf, leaves):
    if (is_leaf is not None and is_leaf(x)) or type(x) in _LEAF_TYPES:
        leaves.append(x)
        return _LEAF_DEF
    d = _decompose(x)
    if d is None:
        leaves.append(x)
        return _LEAF_DEF
    kind, children, aux, unflat = d
    children = list(children)
    if all(type(c) in _LEAF_TYPES for c in children) and is_leaf is None:
        leaves.extend(children)  # a container of arrays and numbers: the common case
        return PyTreeDef(kind, type(x), aux, (_LEAF_DEF,) * len(children), unflat)
    return _flatten_deep(x, (kind, children, aux, unflat), is_leaf, leaves)


def _flatten_deep(x, d, is_leaf, leaves, paths=None, takes_path=False):
    """_flatten without recursion, so trees deeper than Python's stack work: a stack of
    nodes whose children are still being flattened, each [type, kind, aux, unflat, children
    to do (reversed), treedefs done]. With a list `paths`, each leaf's key path is appended
    to it (the children to do are then (path, child) pairs)."""
    path = ()
    stack = [_frame(x, d, paths, path)]
    while True:
        top = stack[-1]
        if top[4]:
            c = top[4].pop()
            if paths is not None:
                path, c = c
            if is_leaf is not None and (is_leaf(path, c) if takes_path else is_leaf(c)):
                dc = None
            else:
                dc = None if type(c) in _LEAF_TYPES else _decompose(c)
            if dc is None:
                leaves.append(c)
                if paths is not None:
                    paths.append(path)
                top[5].append(_LEAF_DEF)
            else:
                stack.append(_frame(c, dc, paths, path))
            continue
        stack.pop()
        td = PyTreeDef(top[1], top[0], top[2], tuple(top[5]), top[3])
        if not stack:
            return td
        stack[-1][5].append(td)


def _frame(x, d, paths, path):
    children = list(d[1])
    if paths is None:
        todo = children[::-1]
    else:
        keys = _child_keys(x, d[0], d[2], len(children))
        todo = [(path + (k,), c) for k, c in zip(keys, children)][::-1]
    return [type(x), d[0], d[2], d[3], todo, []]


def _child_keys(x, kind, aux, n):
    t = type(x)
    if kind == _NT:
        return [GetAttrKey(f) for f in t._fields]
    if kind == _DC:
        return [GetAttrKey(f) for f in aux]
    if t is tuple or t is list:
        return [SequenceKey(i) for i in range(n)]
    if t is dict or t is OrderedDict:
        return [DictKey(k) for k in aux]
    keyed = _key_registry.get(t)
    if keyed is not None:
        return [k for k, _ in keyed(x)[0]]
    return [FlattenedIndexKey(i) for i in range(n)]


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """(leaves, treedef): the leaves of tree in order and the structure that rebuilds it
    (tree_unflatten(treedef, leaves)). Containers are tuples, lists, dicts and defaultdicts
    (keys sorted), OrderedDicts (in order), None (no leaves), namedtuples, registered
    dataclasses and classes; `is_leaf(x)` true stops at x. As JAX's."""
    leaves: list[Any] = []
    if is_leaf is None:
        t = type(tree)
        if t in _LEAF_TYPES or (isinstance(tree, Tracer) and t not in _registry and
                                not hasattr(t, "__dataclass_fields__")):  # as _decompose
            return [tree], _LEAF_DEF
        if t is tuple or t is list or t is dict:
            key: list[Any] = []
            if _walk(tree, key, leaves, 0):
                key = tuple(key)
                treedef = _shared.get(key)  # a plain dict read is atomic; writes take the lock
                return leaves, (treedef if treedef is not None else _share(key, tree))
            leaves = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


# --- the fast path: trees of tuples, lists, dicts with str keys, None and leaves -------------
# Every call of a transformation flattens its arguments and unflattens its results, mostly
# parameter lists like [(W, b), ...]. For such trees one walk lists the leaves and a key of
# the structure (each container's type and length, a dict's keys, 0 for a leaf), and the key
# finds a treedef shared by every call with that structure, built once by the general walk
# (so the two agree by construction) together with a generated function that rebuilds the
# tree from its leaves in one expression.

_MAX_DEPTH = 32  # deeper trees take the general (iterative) walk
_MAX_KEY = 1024  # so do larger ones: their keys and builders would be long
_SHARED_SIZE = 512
_shared: dict = {}  # structure key -> PyTreeDef with its _build
_shared_lock = threading.Lock()


def _walk(x, key, leaves, depth):
    """Append x's structure to `key` and its leaves to `leaves` (x a tuple, list or dict);
    False when the tree holds a node only the general walk handles (a namedtuple, a dataclass,
    a registered type, a dict with other than str keys) or is too deep or large."""
    t = type(x)
    if depth >= _MAX_DEPTH or len(key) + len(x) > _MAX_KEY:
        return False
    if t is dict:
        names = sorted(x) if all(type(k) is str for k in x) else None
        if names is None:
            return False
        key.append(dict)
        key.append(tuple(names))
        x = [x[k] for k in names]
    else:
        key.append(t)
        key.append(len(x))
    for c in x:
        tc = type(c)
        if tc in _LEAF_TYPES:
            key.append(0)
            leaves.append(c)
        elif tc is tuple or tc is list or tc is dict:
            if not _walk(c, key, leaves, depth + 1):
                return False
        elif c is None:
            key.append(None)
        elif tc in _registry or (isinstance(c, tuple) and hasattr(tc, "_fields")) or \
                hasattr(tc, "__dataclass_fields__"):
            return False
        else:  # what _decompose calls a leaf (a tracer, an object)
            key.append(0)
            leaves.append(c)
    return True


def _share(key, tree):
    """The shared treedef of the structure `key` (of `tree`), made by the general walk."""
    treedef = _flatten(tree, None, [])
    consts: list[Any] = []
    source = _build_source(treedef, iter(range(treedef.num_leaves)), consts)
    object.__setattr__(treedef, "_build", eval(f"lambda l: {source}", {"K": consts}))  # noqa: S307
    with _shared_lock:
        if len(_shared) >= _SHARED_SIZE:  # bounded: drop the oldest half
            for k in list(_shared)[:_SHARED_SIZE // 2]:
                _shared.pop(k, None)
        treedef = _shared.setdefault(key, treedef)
    return treedef


def _build_source(td, index, consts):
    """An expression of the leaves list `l` rebuilding a tree of structure td (dict keys are
    read from the list K, not written out)."""
    if td._kind == _LEAF:
        return f"l[{next(index)}]"
    ch = [_build_source(c, index, consts) for c in td._children]
    t = td._type
    if t is tuple:
        return "(" + ", ".join(ch) + ("," if len(ch) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(ch) + "]"
    if t is dict:
        first = len(consts)
        consts.extend(td._aux)
        return "{" + ", ".join(f"K[{first + i}]: {c}" for i, c in enumerate(ch)) + "}"
    assert t is type(None), t
    return "None"


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure (PyTreeDef) of tree: the second part of tree_flatten."""
    return tree_flatten(tree, is_leaf)[1]
