"""Compiled kernels for the windowed reductions whose windows tile the operand (max pooling
2x2 stride 2 and its kin), used by window_kernels.py's NumPy functions when Numba imports.

The NumPy forms make ~20 passes over strided views whose contiguous runs are one row of
features long; a compiled loop reads each element once. The kernels compute exactly what
the NumPy forms compute: the same comparisons in the same window order (row-major), so the
max/min and the selected position (the first extremum; with NaNs, the scan XLA's
select_and_scatter makes) are identical, and a sum adds the window's elements in the same
order. A selected cotangent is copied, never multiplied, so infinities stay where they are.
(The only difference: an unselected position is +0.0 where NumPy's mask product gives -0.0
for a negative cotangent.)

"Tiling" here: every axis either untouched (window 1, stride 1) or cut into whole windows
(stride = window, no dilation), no padding, the operand's size a multiple of the window, and
at most two windowed axes. The operand, C-contiguous, is then viewed as (A, ka, B, kb, C):
ka and kb the window sizes, A, B, C the products of the axes around them.

The kernels live in a module written to fxad's on-disk cache directory (FXAD_CACHE_DIR, see
fxad/ir/numba_backend/cache.py) and compiled with `cache=True`: a process compiles each
kernel once per dtype (float32 / float64), later processes load the machine code.
"""
from __future__ import annotations

import math
import os
import sys
import threading
import time
import warnings

import numpy as np

MIN_SIZE = 1 << 14  # smaller operands stay on NumPy: no Numba import for small arrays
# fxad.config.eager_kernels (FXAD_EAGER_KERNELS=0 turns them off); tests compare both forms
enabled = [os.environ.get("FXAD_EAGER_KERNELS", "1") != "0"]
compile_log = []    # (kernel, dtype, seconds) of each first call in this process

_SOURCE = '''
import numba as _nb
import numpy as _np

# Rows x[a, i, b, j] are taken as 1-d views first: Numba vectorizes the loops over them,
# not loops indexing the 5-d array element by element.


@_nb.njit(cache=True, nogil=True)
def tiled_reduce(x, op, out):
    """out[a, b, c] = the window's max (op 0), min (1) or sum (2), in window order; max and
    min as np.maximum / np.minimum (a NaN wins)."""
    A, ka, B, kb, C = x.shape
    for a in range(A):
        for b in range(B):
            o, r = out[a, b], x[a, 0, b, 0]
            for c in range(C):
                o[c] = r[c]
            for i in range(ka):
                for j in range(kb):
                    if i == 0 and j == 0:
                        continue
                    r = x[a, i, b, j]
                    if op == 2:
                        for c in range(C):
                            o[c] = o[c] + r[c]
                    elif op == 0:
                        for c in range(C):
                            m, v = o[c], r[c]
                            o[c] = m if m >= v or m != m else v
                    else:
                        for c in range(C):
                            m, v = o[c], r[c]
                            o[c] = m if m <= v or m != m else v


# The scan (shared by the two kernels below, written out in each: scratch arrays allocated
# in the kernel itself are known not to alias, which lets Numba vectorize the loop) keeps
# the current element unless it is not >= (max) / <= (min) the candidate, as selects: the
# choices are as random as the data, branches would be mispredicted.

@_nb.njit(cache=True, nogil=True)
def tiled_scatter(ct, x, is_max, out):
    """out (shaped like x) = ct[a, b, c] at each window's selected position, 0 elsewhere."""
    A, ka, B, kb, C = x.shape
    best = _np.empty(C, x.dtype)
    arg = _np.empty(C, _np.int32)
    for a in range(A):
        for b in range(B):
            r = x[a, 0, b, 0]
            for c in range(C):
                best[c] = r[c]
                arg[c] = 0
            for i in range(ka):
                for j in range(kb):
                    if i == 0 and j == 0:
                        continue
                    k = i * kb + j
                    r = x[a, i, b, j]
                    for c in range(C):
                        bc, v = best[c], r[c]
                        keep = bc >= v if is_max else bc <= v
                        best[c] = bc if keep else v
                        arg[c] = arg[c] if keep else k
            g = ct[a, b]
            for i in range(ka):
                for j in range(kb):
                    k = i * kb + j
                    o = out[a, i, b, j]
                    for c in range(C):
                        gc = g[c]
                        o[c] = gc if arg[c] == k else 0


@_nb.njit(cache=True, nogil=True)
def tiled_gather(t, x, is_max, out):
    """out[a, b, c] = t at each window's selected position (t shaped like x)."""
    A, ka, B, kb, C = x.shape
    best = _np.empty(C, x.dtype)
    sel = _np.empty(C, t.dtype)
    for a in range(A):
        for b in range(B):
            r, s = x[a, 0, b, 0], t[a, 0, b, 0]
            for c in range(C):
                best[c] = r[c]
                sel[c] = s[c]
            for i in range(ka):
                for j in range(kb):
                    if i == 0 and j == 0:
                        continue
                    r, s = x[a, i, b, j], t[a, i, b, j]
                    if is_max:
                        for c in range(C):
                            bc, v, w = best[c], r[c], s[c]  # loads outside the selects
                            keep = bc >= v
                            best[c] = bc if keep else v
                            sel[c] = sel[c] if keep else w
                    else:
                        for c in range(C):
                            bc, v, w = best[c], r[c], s[c]  # loads outside the selects
                            keep = bc <= v
                            best[c] = bc if keep else v
                            sel[c] = sel[c] if keep else w
            o = out[a, b]
            for c in range(C):
                o[c] = sel[c]
'''

_state = {}
_lock = threading.Lock()


def _module():
    """The kernels' module, or None when Numba is missing or loading them failed."""
    mod = _state.get("module", False)
    if mod is not False:
        return mod
    with _lock:
        if "module" not in _state:
            mod = None
            from ...ir import numba_backend
            if numba_backend.available()[0]:
                try:
                    from ...ir.numba_backend.cache import load_module
                    mod = load_module(_SOURCE)
                except Exception as e:  # noqa: BLE001 - NumPy computes the same values
                    warnings.warn(f"fxad: the compiled pooling kernels could not be loaded "
                                  f"({type(e).__name__}: {e}); NumPy computes them",
                                  RuntimeWarning, stacklevel=3)
            _state["module"] = mod
        return _state["module"]


def tiled_shape(shape, window, strides, pads, base_dilation, window_dilation):
    """(A, ka, B, kb, C) when the windows tile `shape` as the module docstring says, else
    None."""
    windowed = []
    for ax, (n, k, s, p, a, b) in enumerate(zip(shape, window, strides, pads, base_dilation,
                                                 window_dilation)):
        if tuple(p) != (0, 0) or a != 1:
            return None
        if k == 1 and s == 1:
            continue
        if k != s or b != 1 or n % k:
            return None
        windowed.append(ax)
    if not windowed or len(windowed) > 2:
        return None
    first = windowed[0]
    last = windowed[-1]
    size = lambda axes: math.prod(int(shape[i]) for i in axes)
    A = size(range(first)) * (shape[first] // window[first])
    if len(windowed) == 1:
        return A, window[first], 1, 1, size(range(first + 1, len(shape)))
    B = size(range(first + 1, last)) * (shape[last] // window[last])
    return A, window[first], B, window[last], size(range(last + 1, len(shape)))


def usable(x, window, strides, pads, base_dilation, window_dilation, other=None):
    """The (A, ka, B, kb, C) form when a compiled kernel applies to x (and to the tangent or
    cotangent `other`, which must have x's dtype), else None."""
    if not enabled[0] or x.dtype not in (np.float32, np.float64) or x.size < MIN_SIZE or \
            (other is not None and other.dtype != x.dtype):
        return None
    form = tiled_shape(x.shape, window, strides, pads, base_dilation, window_dilation)
    if form is None or _module() is None:
        return None
    return form


def _run(name, dtype, *args):
    """Call a kernel; its first call per dtype (compiling it, or loading it from the disk
    cache) is timed into compile_log (and printed under fxad.config.log_compiles)."""
    fn = getattr(_module(), name)
    key = (name, dtype)
    if key in _state:
        return fn(*args)
    t0 = time.perf_counter()
    out = fn(*args)
    seconds = time.perf_counter() - t0
    with _lock:
        if key not in _state:
            _state[key] = True
            compile_log.append((name, str(dtype), seconds))
            from ...ir.numba_backend.cache import log_compiles
            if log_compiles[0]:
                print(f"fxad: eager {name} ({dtype}) compiled or loaded in {seconds:.3f} s",
                      file=sys.stderr)
    return out


_OPS = {np.maximum: 0, np.minimum: 1, np.add: 2}


def _c(a, shape):
    """a as a C-contiguous, writeable, aligned array of this shape: the one array type each
    kernel is compiled for (a read-only view would be another type, another compile)."""
    a = np.ascontiguousarray(a)
    if not (a.flags.writeable and a.flags.aligned):
        a = a.copy()
    return a.reshape(shape)


def reduce(ufunc, x, form):
    """The windows' max / min / sum, shaped (A, B, C)."""
    out = np.empty((form[0], form[2], form[4]), x.dtype)
    _run("tiled_reduce", x.dtype, _c(x, form), _OPS[ufunc], out)
    return out


def scatter(ct, x, is_max, form):
    """Each window's cotangent at its selected position (shaped like x's form)."""
    out = np.empty(form, ct.dtype)
    _run("tiled_scatter", x.dtype, _c(ct, (form[0], form[2], form[4])), _c(x, form), is_max,
         out)
    return out


def gather(t, x, is_max, form):
    """t at each window's selected position, shaped (A, B, C)."""
    out = np.empty((form[0], form[2], form[4]), t.dtype)
    _run("tiled_gather", x.dtype, _c(t, form), _c(x, form), is_max, out)
    return out
