"""`lax.dot`, `lax.dot_general`, `lax.batch_matmul` with JAX's signatures, and what every
product and convolution does with JAX's `precision=` and `preferred_element_type=`.

`precision` chooses, on TPUs and GPUs, how many bfloat16/tensorfloat32 passes a float32 product
takes; JAX's CPU backend ignores it, and so does fxad: NumPy and BLAS always compute in the
operands' own type (float32 products in single precision, float64 in double). It is still
checked, so a typo is an error rather than a silently different program.

`preferred_element_type` is honoured: the operands are converted to it before the product, so
the result has that type and is accumulated in it (an int8 product accumulates in int32 with
`preferred_element_type=np.int32`), as XLA does (to_preferred says which types convert the
operands and which the result). Which types are allowed is JAX's rule: for products any
number type but a narrower integer; for convolutions the stricter one of
fxad.rules.helpers.preferred_dtype. Anything else raises a TypeError naming the fix.
"""
from __future__ import annotations

import enum
from typing import Union

import numpy as np

from ..core import Tracer, get_aval
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops

__all__ = ["Precision", "PrecisionLike", "dot", "dot_general", "batch_matmul"]


class Precision(enum.Enum):
    """How precisely an accelerator computes a float32 product (JAX's enum: DEFAULT, HIGH,
    HIGHEST; also spelled 'default'/'fastest'/'bfloat16', 'high'/'bfloat16_3x'/
    'tensorfloat32', 'highest'/'float32'). fxad runs on the CPU, where every value means
    the same thing: the operands' own precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _ALIASES.get(value)

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_ALIASES = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
            "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
            "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
            "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}

PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision]]


def canonicalize_precision(precision: PrecisionLike, where: str = "precision"):
    """None, or a pair of Precision values (one per operand), as JAX spells it; a ValueError
    for anything else (JAX's dot algorithms are not available: fxad has one CPU algorithm)."""
    if precision is None:
        return None
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, str) and precision in _ALIASES:
        return _ALIASES[precision], _ALIASES[precision]
    if isinstance(precision, (tuple, list)) and len(precision) == 2 and all(
            isinstance(p, Precision) or (isinstance(p, str) and p in _ALIASES)
            for p in precision):
        return tuple(Precision(p) for p in precision)
    raise FxadValueError(
        f"{where}: precision must be None, a lax.Precision, one of the strings "
        f"{sorted(_ALIASES)}, or a pair of them; got {precision!r}. (JAX's dot algorithms are "
        "not available; on the CPU every precision computes in the operands' own type, so "
        "None is the same program.)")


def to_preferred(operands, preferred_element_type, precision=None, where="dot"):
    """(operands, finish) for a product with JAX's `precision` (checked) and
    `preferred_element_type`: `finish(product)` has that type. A type that holds the
    operands' (promoted) type gets the operands converted, so the product accumulates in
    it (int8 in int32, float32 in float64); any other (float64 to float32, float to int,
    complex to real) converts the product, as XLA does. A type narrower than the operands'
    integer, boolean or complex type is a TypeError, as in JAX."""
    canonicalize_precision(precision, where)
    if preferred_element_type is None:
        return list(operands), _same
    operands = [x if isinstance(x, (np.ndarray, Tracer)) else np.asarray(x) for x in operands]
    dtypes = [get_aval(x).dtype for x in operands]
    try:
        have = np.result_type(*dtypes)
        want = np.dtype(preferred_element_type)
    except TypeError:
        raise FxadTypeError(f"{where}: preferred_element_type {preferred_element_type!r} is "
                            f"not a dtype, or operands of types {dtypes} have no common "
                            "type") from None
    if want.kind not in "biufc":
        raise FxadTypeError(f"{where}: preferred_element_type {want} is not a number type")
    if have.kind != "f" and _bits(want) < _bits(have):
        raise FxadTypeError(f"{where}: preferred_element_type {want} is narrower than the "
                            f"operands' type {have}; pass {have} or a wider type, or None")
    if want == have:
        return operands, _same
    if np.can_cast(have, want, "safe") or (have.kind in "biu" and want.kind in "iufc"):
        return [x if d == want else ops.convert_element_type(x, want)
                for x, d in zip(operands, dtypes)], _same
    if have.kind == "c" and want.kind != "c":  # the real part (NumPy's cast would warn)
        return operands, lambda out: ops.convert_element_type(ops.real(out), want)
    return operands, lambda out: ops.convert_element_type(out, want)


def _same(out):
    return out


def _bits(dt):
    """Bits of a type's values (of its real part for complex types), as XLA counts them."""
    return 1 if dt.kind == "b" else 8 * dt.itemsize // (2 if dt.kind == "c" else 1)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Vector/matrix products contracting lhs's last axis with rhs's first (or
    `dimension_numbers`, as in dot_general)."""
    if dimension_numbers is None:
        dimension_numbers = (((len(get_aval(lhs).shape) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general contraction ((lhs contracting, rhs contracting), (lhs batch, rhs batch))."""
    if precision is None and preferred_element_type is None:  # the common case, first
        return ops.dot_general(lhs, rhs, dimension_numbers)
    (lhs, rhs), finish = to_preferred((lhs, rhs), preferred_element_type, precision,
                                      "dot_general")
    return finish(ops.dot_general(lhs, rhs, dimension_numbers))


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over the last two axes, batched over the leading ones."""
    nd = len(get_aval(lhs).shape)
    batch = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (batch, batch)), precision)
