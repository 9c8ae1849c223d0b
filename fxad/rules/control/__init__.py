"""Primitives that run programs: cond, scan, while_loop, the jit call, custom rules, linear
maps with given transposes, callbacks, and checkpoint names."""
from . import (  # noqa: F401
    call, callback, cond, custom, custom_linear, debug_callback, remat, scan, while_loop)
