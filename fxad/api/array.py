"""`fxad.Array`: for `isinstance(x, fxad.Array)` checks in code written for `jax.Array`.
fxad's values are NumPy arrays and scalars, and traced values inside transformations; all of
them are instances."""
from __future__ import annotations

import abc

import numpy as np

from ..core import Tracer


class Array(abc.ABC):
    """What fxad computes with: numpy.ndarray, NumPy scalars, and traced values (Tracer).
    Not a wrapper: fxad never makes instances of this class itself."""


Array.register(np.ndarray)
Array.register(np.generic)
Array.register(Tracer)
