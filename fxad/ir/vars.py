"""The IR's atoms: variables and literals (in their own module so the printer and the jaxpr
types can both use them without importing each other)."""
from __future__ import annotations

from ..core import ShapedArray


class Var:
    """A variable: identity is the name. Printed names are assigned per jaxpr by the printer."""
    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A Python scalar written into the program (kept weakly typed, as NumPy treats it)."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r})"
