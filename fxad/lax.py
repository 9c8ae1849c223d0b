"""Primitive-level operations: one function per primitive (no NumPy conveniences), and
structured control flow."""
from .rules.ops import *  # noqa: F401,F403  (every primitive's bind wrapper; see __all__ there)
from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from .implicit import custom_linear_solve, custom_root  # noqa: F401
