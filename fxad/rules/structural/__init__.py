"""Structural primitives: they move data without arithmetic (reshape, transpose, broadcast,
concatenate, flip), gather and scatter by index, slice at traced positions, and sort."""
from . import dynamic_slice, indexing, shape, sorting  # noqa: F401
