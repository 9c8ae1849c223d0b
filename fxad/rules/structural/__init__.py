"""Structural primitives: they move data without arithmetic (reshape, transpose, broadcast,
concatenate, flip), gather and scatter by index, and slice at traced positions."""
from . import dynamic_slice, indexing, shape  # noqa: F401
