"""`fxad.typing`: annotations for code written against `jax.typing`.

`ArrayLike` is what fxad's functions accept as an array (NumPy arrays and scalars, Python
numbers, traced values); `DTypeLike` what they accept as a dtype. For annotations only:
fxad checks values where they are used, not against these types.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, Union

import numpy as np

from .api.array import Array


class SupportsDType(Protocol):
    """Anything with a `.dtype` (an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


class DuckTypedArray(Protocol):
    """Anything with a `.shape` and a `.dtype`."""

    @property
    def dtype(self) -> np.dtype: ...

    @property
    def shape(self) -> tuple[int, ...]: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
DType = np.dtype
Shape = Sequence[int]

__all__ = ["ArrayLike", "DTypeLike", "DType", "DuckTypedArray", "Shape", "SupportsDType"]
