"""Reductions: over static axes, running along one axis, and over sliding windows."""
from . import cumulative, reduce, windowed  # noqa: F401
