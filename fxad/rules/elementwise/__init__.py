"""Elementwise primitives: NumPy-broadcasting operations (arithmetic, powers, exponentials,
trigonometry, comparisons), NumPy's floating-point ufuncs, and bit-level operations."""
from . import arithmetic, bitwise, floating_point, ufunc_math  # noqa: F401
