"""NaN and inf debugging: `with fxad.debug_nans():` (this thread) or
`fxad.config.debug_nans = True` (every thread) makes the first primitive that turns NaN-free
inputs into a NaN output raise `FloatingPointError`, naming the primitive and the user's source
line; `fxad.debug_infs()` and `fxad.config.debug_infs` do the same for infinities.

Every concrete value fxad computes comes from a primitive's impl, called from `bind`'s eager
path, so that is the one place checked (the switches live in fxad.core). Compiled programs
(jit, loop and branch bodies) run one NumPy call per equation with no such hook, so while
checking is on they are evaluated equation by equation instead (slower, but it can name the
primitive).
"""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

import numpy as np

from .. import core
from ..interpreters import tape
from ..jit import default_backend, set_default_backend
from ..ir.numba_backend import cache as numba_cache
from ..rules._support import window_compiled

_FXAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class Config:
    """Library-wide switches (every thread). `fxad.config.debug_nans = True` checks every
    thread; `fxad.config.eager_tape = False` makes eager grad/vjp take the staged path
    (linearize, then transpose) instead of the tape of derived pullbacks (for comparisons and
    tests); `fxad.config.jit_backend = "numba"` makes every `jit` without its own `backend`
    compile to native code, and "auto" run NumPy code at once and compiled code once a
    background compile is done (default "numpy", or the environment variable FXAD_JIT_BACKEND);
    `fxad.config.log_compiles = True` prints each numba compilation and its time;
    `fxad.config.eager_kernels = False` (or FXAD_EAGER_KERNELS=0) keeps eager pooling on
    NumPy where it would call its compiled kernels (same values; notes/13_numba_backend.md)."""

    @property
    def jit_backend(self) -> str:
        return default_backend()

    @jit_backend.setter
    def jit_backend(self, backend: str):
        set_default_backend(backend)

    @property
    def log_compiles(self) -> bool:
        return numba_cache.log_compiles[0]

    @log_compiles.setter
    def log_compiles(self, on: bool):
        numba_cache.log_compiles[0] = bool(on)

    @property
    def eager_kernels(self) -> bool:
        return window_compiled.enabled[0]

    @eager_kernels.setter
    def eager_kernels(self, on: bool):
        window_compiled.enabled[0] = bool(on)

    @property
    def eager_tape(self) -> bool:
        return tape.enabled[0]

    @eager_tape.setter
    def eager_tape(self, on: bool):
        tape.enabled[0] = bool(on)

    @property
    def debug_nans(self) -> bool:
        return core._global_checks["nan"]

    @debug_nans.setter
    def debug_nans(self, on: bool):
        core.set_nan_checking(_checked_impl, global_flag=bool(on))

    @property
    def debug_infs(self) -> bool:
        return core._global_checks["inf"]

    @debug_infs.setter
    def debug_infs(self, on: bool):
        core.set_nan_checking(_checked_impl, global_flag=bool(on), kind="inf")


config = Config()


class _Blocks(threading.local):
    def __init__(self):
        self.depth = {"nan": 0, "inf": 0}  # open debug_nans / debug_infs blocks, this thread


_blocks = _Blocks()


@contextmanager
def _checking(kind, enabled):
    if not enabled:
        yield
        return
    _blocks.depth[kind] += 1
    core.set_nan_checking(_checked_impl, thread_delta=1)
    try:
        yield
    finally:
        core.set_nan_checking(_checked_impl, thread_delta=-1)
        _blocks.depth[kind] -= 1


def debug_nans(enabled: bool = True):
    """Within the block (this thread only), raise FloatingPointError at the first primitive
    whose output has a NaN that its inputs did not have."""
    return _checking("nan", enabled)


def debug_infs(enabled: bool = True):
    """Within the block (this thread only), raise FloatingPointError at the first primitive
    whose output has an infinity that its inputs did not have (as JAX's `debug_infs`, but
    checked on every primitive fxad runs, jit's included: compiled programs run equation by
    equation meanwhile)."""
    return _checking("inf", enabled)


def _has(test, x) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_has(test, y) for y in x)
    a = np.asarray(x) if not isinstance(x, np.ndarray) else x
    return a.dtype.kind in "fc" and bool(test(a).any())


def _has_nan(x) -> bool:
    return _has(np.isnan, x)


def _has_inf(x) -> bool:
    return _has(np.isinf, x)


def _user_line():
    """The innermost frame outside fxad (the user's code that led here), as 'file:line'."""
    f = sys._getframe(2)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_FXAD_DIR):
        # (abspath: fxad imported through a path like benchmarks/../fxad is still fxad)
        f = f.f_back
    return None if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def _checked_impl(prim, args, params):
    out = prim.impl(*args, **params)
    for kind, has, what in (("nan", _has_nan, "a NaN"), ("inf", _has_inf, "an infinity")):
        if (core._global_checks[kind] or _blocks.depth[kind]) and has(out) and not has(args):
            where = _user_line()
            raise FloatingPointError(
                f"debug_{kind}s: primitive '{prim.name}' produced {what} from "
                f"{'NaN' if kind == 'nan' else 'inf'}-free inputs"
                + (f" (called from {where})" if where else "")
                + ". Guard its inputs (e.g. fxad.numpy.where on a safe value), or turn the "
                  f"check off with fxad.config.debug_{kind}s = False.")
    return out
