"""Elementwise primitives, broadcasting like NumPy: arithmetic (the linear operations, dtype
conversion, select, complex parts), transcendental functions (powers, exponentials, logarithms,
trigonometry), piecewise functions and predicates, NumPy's floating-point ufuncs, and
bit-level operations."""
from . import arithmetic, bitwise, floating_point, piecewise, transcendental, ufunc_math  # noqa: F401
