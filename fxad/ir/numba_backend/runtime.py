"""What generated Numba code calls at run time, and NumPy's own ufunc loops for it.

Imported only when the numba backend compiles something (importing Numba takes ~0.5 s).

- `call_loop` calls one of NumPy's strided ufunc loops from compiled code: the same machine
  code `np.tanh(x)` runs (NumPy's SIMD loops, SciPy's special functions), so a compiled
  program's transcendental values are NumPy's, bit for bit, at NumPy's speed. The loops are
  found through `ufunc._resolve_dtypes_and_context` / `ufunc._get_strided_loop` (NumPy's
  experimental API for exactly this use); their addresses are passed to compiled code as
  arguments (never baked into it), so the on-disk cache stays valid across processes.
- `as_scalar` makes a 0-d array or a number a number (0-d values arrive as either).
- `pairwise_sum` is NumPy's summation order for a contiguous run, so compiled sums are
  NumPy's sums bit for bit (see `reduce` in emit.py); `tree_sum_rows` is reduce_sum's
  order across other reduced axes (its halving_sum).
"""
from __future__ import annotations

import ctypes
import threading

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

_CAPSULE = b"numpy_1.24_ufunc_call_info"
_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_IsValid.restype = ctypes.c_int
_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _CallInfo(ctypes.Structure):
    """NumPy's `ufunc_call_info` (layout documented in ufunc._get_strided_loop)."""
    _fields_ = [("strided_loop", ctypes.c_void_p), ("context", ctypes.c_void_p),
                ("auxdata", ctypes.c_void_p), ("requires_pyapi", ctypes.c_ubyte),
                ("no_floatingpoint_errors", ctypes.c_ubyte)]


class UfuncLoop:
    """One NumPy strided loop (a ufunc at fixed dtypes): its addresses, and the capsule
    that owns them (kept alive by every program that uses the loop)."""
    __slots__ = ("capsule", "addresses")

    def __init__(self, capsule, addresses):
        self.capsule, self.addresses = capsule, addresses


_loops = {}  # (ufunc, dtypes) -> UfuncLoop or None; finite: one per ufunc and loop dtypes
_loops_lock = threading.Lock()


def ufunc_loop(ufunc, dtypes):
    """NumPy's strided loop for `ufunc` at exactly these dtypes (inputs then outputs), or None
    when NumPy does not offer it (an older or newer experimental API, a loop needing the
    Python API). Programs keep the returned object, so the loop outlives them."""
    key = (ufunc, tuple(dtypes))
    with _loops_lock:
        if key in _loops:
            return _loops[key]
        _loops[key] = loop = _find_loop(ufunc, tuple(dtypes))
        return loop


def _find_loop(ufunc, dtypes):
    try:
        got, capsule = ufunc._resolve_dtypes_and_context(dtypes)
        if tuple(got) != dtypes or not _IsValid(capsule, _CAPSULE):
            return None
        ufunc._get_strided_loop(capsule)
    except Exception:  # noqa: BLE001 - no such loop, or NumPy changed the experimental API
        return None
    info = _CallInfo.from_address(_GetPointer(capsule, _CAPSULE))
    if not info.strided_loop or info.requires_pyapi:
        return None
    return UfuncLoop(capsule, (info.strided_loop, info.context or 0, info.auxdata or 0))


def loop_table(loops):
    """The int64 table (one row per loop: function, context, auxdata) a segment receives."""
    table = np.zeros((max(len(loops), 1), 3), np.int64)
    for i, loop in enumerate(loops):
        table[i] = loop.addresses
    return table


@intrinsic
def call_loop(typingctx, fn, context, data, dims, strides, aux):
    """fn(context, data, dims, strides, aux): NumPy's PyArrayMethod_StridedLoop signature,
    with every pointer passed as an integer."""
    sig = types.int32(types.int64, types.int64, types.intp, types.intp, types.intp,
                      types.int64)

    def codegen(cgctx, builder, signature, args):
        ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [ptr] * 5)
        f = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(f, [builder.inttoptr(a, ptr) for a in args[1:]])
    return sig, codegen


# The callers of NumPy's loops: one small compiled function per operand count, so that the
# generated code is one call per loop (less to compile) and the arrays whose addresses are
# passed stay alive through the call (they are arguments). `w` is the caller's scratch of at
# least 16 intp: data pointers, then the dimensions, then the strides.

@numba.njit(cache=True, nogil=True)
def loop1(L, k, w, n, a, sa, out):
    """out[:n] = ufunc(a[:n]) (NumPy loop k of table L; a's stride sa: 0 broadcasts)."""
    w[0], w[1] = a.ctypes.data, out.ctypes.data
    w[2] = n
    w[3], w[4] = sa, out.itemsize
    return call_loop(L[k, 0], L[k, 1], w.ctypes.data, w.ctypes.data + 16, w.ctypes.data + 24,
                     L[k, 2])


@numba.njit(cache=True, nogil=True)
def loop2(L, k, w, n, a, sa, b, sb, out):
    w[0], w[1], w[2] = a.ctypes.data, b.ctypes.data, out.ctypes.data
    w[3] = n
    w[4], w[5], w[6] = sa, sb, out.itemsize
    return call_loop(L[k, 0], L[k, 1], w.ctypes.data, w.ctypes.data + 24, w.ctypes.data + 32,
                     L[k, 2])


@numba.njit(cache=True, nogil=True)
def loop3(L, k, w, n, a, sa, b, sb, c, sc, out):
    w[0], w[1], w[2], w[3] = a.ctypes.data, b.ctypes.data, c.ctypes.data, out.ctypes.data
    w[4] = n
    w[5], w[6], w[7], w[8] = sa, sb, sc, out.itemsize
    return call_loop(L[k, 0], L[k, 1], w.ctypes.data, w.ctypes.data + 32, w.ctypes.data + 40,
                     L[k, 2])


@numba.njit(cache=True, nogil=True)
def matmul(L, k, w, a, b, out, dm, dn, dp, sam, san, sbn, sbp, som, sop):
    """out = a @ b by NumPy's own matmul loop (loop k of L): the BLAS call NumPy makes for
    these shapes and strides, so the result is NumPy's bit for bit. a is (dm, dn), b is
    (dn, dp), out is (dm, dp), with the given byte strides (a missing vector dimension has
    size 1 and stride 0, as NumPy gives it)."""
    w[0], w[1], w[2] = a.ctypes.data, b.ctypes.data, out.ctypes.data
    w[3], w[4], w[5], w[6] = 1, dm, dn, dp
    w[7], w[8], w[9] = 0, 0, 0
    w[10], w[11], w[12], w[13], w[14], w[15] = sam, san, sbn, sbp, som, sop
    return call_loop(L[k, 0], L[k, 1], w.ctypes.data, w.ctypes.data + 24, w.ctypes.data + 56,
                     L[k, 2])


def as_scalar(x):
    return x[()] if isinstance(x, np.ndarray) else x


@overload(as_scalar)
def _as_scalar(x):
    if isinstance(x, types.Array):
        return lambda x: x[()]
    return lambda x: x


@numba.njit(cache=True, nogil=True)
def _pairwise_block(a, start, n):
    """NumPy's pairwise sum of a run of n <= 128 (numpy/_core/src/umath/loops_utils.h):
    in order below 8 elements, else 8 accumulators combined as a tree, then the rest."""
    if n < 8:
        res = -(a[start] - a[start])  # -0.0: adding it changes nothing (NumPy's start)
        for i in range(n):
            res += a[start + i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i = 8
    end = n - n % 8
    while i < end:
        j = start + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[start + i]
        i += 1
    return res


@numba.njit(cache=True, nogil=True)
def pairwise_sum(a, start, n, acc):
    """acc + NumPy's pairwise sum of a[start:start + n]: runs of up to 128 by
    _pairwise_block, longer ones split in two halves (a multiple of 8 on the left) and the
    halves' sums added. Iterative (an explicit stack), not recursive: Numba's disk cache
    cannot link a cached caller to a recursive function."""
    if n <= 128:
        return acc + _pairwise_block(a, start, n)
    fs = np.empty(130, np.int64)  # frames: start, length, stage; depth <= log2(n) + 1
    fn = np.empty(130, np.int64)
    stage = np.empty(130, np.int64)
    res = np.empty(130, a.dtype)  # sums of finished left halves, in order
    top, nres = 0, 0
    fs[0], fn[0], stage[0] = start, n, 0
    while top >= 0:
        s0, m = fs[top], fn[top]
        if m <= 128:
            res[nres] = _pairwise_block(a, s0, m)
            nres += 1
            top -= 1
            continue
        m2 = m // 2
        m2 -= m2 % 8
        if stage[top] == 0:
            stage[top] = 1
            top += 1
            fs[top], fn[top], stage[top] = s0, m2, 0
        elif stage[top] == 1:
            stage[top] = 2
            top += 1
            fs[top], fn[top], stage[top] = s0 + m2, m - m2, 0
        else:
            res[nres - 2] = res[nres - 2] + res[nres - 1]
            nres -= 1
            top -= 1
    return acc + res[0]


@numba.njit(cache=True, nogil=True)
def tree_sum_rows(z):
    """The sum of the rows of a C-contiguous 2-d array as reduce_sum's halving_sum adds
    them: rows i and i + m//2, an odd last row into row m//2 - 1, until one is left."""
    m, n = z.shape
    h = m // 2
    s = np.empty((h, n), z.dtype)
    for i in range(h):
        for j in range(n):
            s[i, j] = z[i, j] + z[i + h, j]
    if m & 1:
        for j in range(n):
            s[h - 1, j] += z[m - 1, j]
    m = h
    while m > 1:
        h = m // 2
        for i in range(h):
            for j in range(n):
                s[i, j] += s[i + h, j]
        if m & 1:
            for j in range(n):
                s[h - 1, j] += s[m - 1, j]
        m = h
    return s[0].copy()
