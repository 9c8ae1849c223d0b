"""JAX's configuration context managers and scopes that a ported program uses, with what they
mean in fxad: `named_scope`, `ensure_compile_time_eval`, `default_matmul_precision`,
`numpy_dtype_promotion`, `numpy_rank_promotion` (each also usable as a decorator), and
`clear_caches`. None of them changes a value fxad computes; the modes fxad does not
implement are refused with FxadValueError rather than silently ignored."""
from __future__ import annotations

import contextlib

from .. import core
from ..errors import FxadValueError


class _Scope(contextlib.ContextDecorator):
    """A context manager that is also a decorator, and does nothing to values."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def named_scope(name: str):
    """A context manager (or decorator) naming the computations inside it, as JAX's
    `named_scope` (which labels its compiled program for profilers). fxad has no profiler
    labels: it checks that `name` is a string and changes nothing else."""
    if not isinstance(name, str):
        raise FxadValueError(f"named_scope: the name must be a string, got {type(name).__name__}")
    return _Scope()


def ensure_compile_time_eval():
    """A context manager under which operations on concrete values run at once, even inside
    `jit`, as JAX's. fxad always does that (only operations on traced values are staged), so
    it changes nothing: a value computed from constants inside a jitted function is already
    a NumPy array there."""
    return _Scope()


_MATMUL_PRECISIONS = frozenset({
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
    "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3",
    "BF16_BF16_F32_X6", "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32",
    "F64_F64_F64"})


def default_matmul_precision(new_val=None):
    """A context manager (or decorator) setting the default precision of matrix products and
    convolutions, as JAX's: None or one of JAX's names ('default', 'high', 'highest',
    'bfloat16', 'tensorfloat32', 'float32', or a dot algorithm such as 'F32_F32_F32'). On
    fxad's CPU every product computes in its operands' own type whatever the precision (as
    `precision=` on fxad's products), so it checks the name and changes no value."""
    if new_val is not None and new_val not in _MATMUL_PRECISIONS:
        raise FxadValueError(f"default_matmul_precision: {new_val!r} is not one of JAX's "
                             f"precisions: None or one of {sorted(_MATMUL_PRECISIONS)}")
    return _Scope()


def numpy_dtype_promotion(new_val):
    """A context manager (or decorator) choosing the dtype promotion of fxad.numpy, as JAX's.
    Only 'standard' is accepted, and it changes nothing: fxad promotes as NumPy does (float64
    by default; see notes/07_differences.md). JAX's 'strict' (no implicit promotion) is not
    implemented: FxadValueError."""
    if new_val != "standard":
        raise FxadValueError(
            f"numpy_dtype_promotion({new_val!r}): fxad implements only 'standard' (it promotes "
            "as NumPy does); 'strict' is not available: convert operands explicitly with "
            "astype instead")
    return _Scope()


def numpy_rank_promotion(new_val):
    """A context manager (or decorator) choosing whether fxad.numpy broadcasts operands of
    different ranks, as JAX's. Only 'allow' (NumPy's broadcasting, JAX's default) is accepted;
    JAX's 'warn' and 'raise' are not implemented: FxadValueError."""
    if new_val != "allow":
        raise FxadValueError(
            f"numpy_rank_promotion({new_val!r}): fxad implements only 'allow' (NumPy's "
            "broadcasting); 'warn' and 'raise' are not available")
    return _Scope()


def clear_caches():
    """Empty fxad's caches (traced and compiled programs of `jit` and of the other
    transformations), as JAX's `clear_caches`: later calls trace and compile again. Values do
    not change; on-disk numba code (fxad's numba backend) is kept."""
    with core._caches_lock:
        caches = list(core._caches)  # (every live BoundedCache: fxad's caches are all one)
    for c in caches:
        c.clear()


__all__ = ["named_scope", "ensure_compile_time_eval", "default_matmul_precision",
           "numpy_dtype_promotion", "numpy_rank_promotion", "clear_caches"]
