"""Key paths: the entries that name where a leaf sits in a tree (`['a'][0].x`)."""
from __future__ import annotations

from typing import Hashable, TypeVar


class _Key:
    """One step of a key path, equal and hashed by its type and value."""
    __slots__ = ()
    _field = _fmt = ""

    def _value(self):
        return getattr(self, self._field)

    def __eq__(self, other):
        return type(other) is type(self) and other._value() == self._value()

    def __hash__(self):
        return hash((type(self), self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value()!r})"

    def __str__(self):
        return self._fmt.format(self._value())


class SequenceKey(_Key):
    """The position in a tuple or list: `[0]`."""
    __slots__, _field, _fmt = ("idx",), "idx", "[{!r}]"

    def __init__(self, idx):
        self.idx = idx


class DictKey(_Key):
    """The key in a dict: `['a']`."""
    __slots__, _field, _fmt = ("key",), "key", "[{!r}]"

    def __init__(self, key):
        self.key = key


class GetAttrKey(_Key):
    """The field of a namedtuple or dataclass: `.name`."""
    __slots__, _field, _fmt = ("name",), "name", ".{}"

    def __init__(self, name):
        self.name = name


class FlattenedIndexKey(_Key):
    """The position among a custom node's children (registered without keys)."""
    __slots__, _field, _fmt = ("key",), "key", "[<flat index {}>]"

    def __init__(self, key):
        self.key = key


KeyEntry = TypeVar("KeyEntry", bound=Hashable)  # one step of a key path (JAX's alias)
KeyPath = tuple[KeyEntry, ...]


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: `['a'][0].x`; with `simple`, bare keys joined by `separator`."""
    if not simple:
        return separator.join(str(k) for k in keys)
    return separator.join(str(k._value()) if isinstance(k, _Key) else str(k) for k in keys)


__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "keystr"]
