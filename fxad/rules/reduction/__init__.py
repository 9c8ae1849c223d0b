"""Reductions: over static axes, running along one axis, and over sliding windows."""
from . import cumulative, reduce, softmax, windowed  # noqa: F401
