"""Reductions as loops, in the NumPy backend's order, so compiled sums are its sums bit for bit.

NumPy reduces a C-contiguous array in memory order. When the last axes are reduced, each
output adds up, in order, the pairwise sums (runtime.pairwise_sum) of its contiguous runs
over those axes; otherwise each output accumulates its elements one by one in memory order.
The reduce_sum primitive keeps that order for floats only where an output adds at most 8
terms across the reduced axes before the trailing run; past that it adds the runs' sums as
a tree (runtime.tree_sum_rows, the order of reduce_sum's halving_sum), and so does this.
Products, maxima, minima and integer sums are accumulated one by one (order does not
change integer sums, maxima or minima; NumPy multiplies in order). A non-contiguous operand
is reduced in C order too: NumPy would follow its memory order, so such sums may differ
from NumPy's by reassociation (within n·eps·sum|x|).
"""
from __future__ import annotations

import math

from .lowering import SUPPORTED, dtype_src, int_arg

_COMBINE = {
    "add": "{0} + {1}",
    "multiply": "{0} * {1}",
    "maximum": "({0} if ({0} >= {1} or {0} != {0}) else {1})",
    "minimum": "({0} if ({0} <= {1} or {0} != {0}) else {1})",
}


def emit_reduce(block, x, aval, out, op, axes, keepdims):
    shape, dt = aval.shape, out.dtype
    axes = tuple(sorted(axes))
    if op not in _COMBINE or dt not in SUPPORTED or dt.kind == "c" or aval.dtype.kind == "c" \
            or any(shape[a] == 0 for a in axes) or not shape or not axes:
        return None
    if op == "add" and dt.kind == "b":
        return None  # NumPy's add.reduce of bools gives ints: the shape rule says so
    r = len(shape)
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    k = 0  # trailing reduced axes
    while k < r and (r - 1 - k) in axes:
        k += 1
    seg = block.seg
    res = seg.fresh("r")
    cast = (lambda s: s) if aval.dtype == dt else (lambda s: f"{dtype_src(dt)}({s})")
    outer = [a for a in axes if a < r - k]
    m = math.prod(int(shape[a]) for a in outer)
    if op == "add" and dt.kind == "f" and aval.dtype == dt and m > 8:
        _tree(block, x, shape, dt, outer, k, kept, res)
    elif op == "add" and dt.kind == "f" and aval.dtype == dt and k > 0:
        _pairwise(block, x, shape, dt, axes, kept, k, res)
    else:
        _sequential(block, x, shape, dt, axes, kept, res, op, cast)
    if keepdims and kept:
        full = tuple(1 if i in axes else d for i, d in enumerate(shape))
        return f"{res}.reshape({full!r})"
    if keepdims:  # every axis reduced, kept as size 1
        full = (1,) * r
        return f"_np.full({full!r}, {res}, {dtype_src(dt)})"
    return res


def _kept_index(r, axes):
    return ", ".join(f"_a{i}" for i in range(r) if i not in axes)


def _sequential(block, x, shape, dt, axes, kept, res, op, cast):
    r = len(shape)
    if kept:
        block.emit(f"{res} = _np.empty({kept!r}, {dtype_src(dt)})")
        acc = f"{res}[{_kept_index(r, axes)}]"
    else:
        block.emit(f"{res} = {dtype_src(dt)}(0)")
        acc = res
    depth = block.depth
    for i, d in enumerate(shape):
        block.emit(f"for _a{i} in range({d}):")
        block.depth += 1
    v = block.seg.fresh("x")
    index = ", ".join(f"_a{i}" for i in range(r))
    block.emit(f"{v} = {cast(f'{x}[{index}]')}")
    first = " and ".join(f"_a{i} == 0" for i in axes)
    block.emit(f"if {first}:")
    block.emit(f"    {acc} = {v}")
    block.emit("else:")
    block.emit(f"    {acc} = {_COMBINE[op].format(acc, v)}")
    block.depth = depth


def _pairwise(block, x, shape, dt, axes, kept, k, res):
    r = len(shape)
    run = math.prod(map(int, shape[r - k:]))
    pre = shape[:r - k]
    seg = block.seg
    flat = seg.fresh("f")
    block.emit(f"{flat} = _np.ascontiguousarray({x}).reshape({math.prod(map(int, shape)),})")
    zero = f"{dtype_src(dt)}(-0.0)"
    if kept:
        block.emit(f"{res} = _np.empty({kept!r}, {dtype_src(dt)})")
        acc = f"{res}[{_kept_index(len(pre), axes)}]"
    else:
        block.emit(f"{res} = {zero}")
        acc = res
    depth = block.depth
    m = seg.fresh("m")
    block.emit(f"{m} = _np.intp(0)")  # not a literal: see int_arg
    for i, d in enumerate(pre):
        block.emit(f"for _a{i} in range({d}):")
        block.depth += 1
    reduced_pre = [i for i in axes if i < r - k]
    if reduced_pre:
        first = " and ".join(f"_a{i} == 0" for i in reduced_pre)
        block.emit(f"{acc} = _pairwise_sum({flat}, {m}, {int_arg(run)}, "
                   f"{zero} if {first} else {acc})")
    else:
        block.emit(f"{acc} = _pairwise_sum({flat}, {m}, {int_arg(run)}, {zero})")
    block.emit(f"{m} += {run}")
    block.depth = depth


def _tree(block, x, shape, dt, outer, k, kept, res):
    """Each trailing run summed pairwise (as NumPy's add.reduce over those axes), then the
    runs' sums added over the other reduced axes as a tree (runtime.tree_sum_rows), in C
    order: reduce_sum's own order past 8 terms."""
    r = len(shape)
    seg = block.seg
    y, pre = x, shape[:r - k]
    if k:
        run = math.prod(map(int, shape[r - k:]))
        flat, y, m = seg.fresh("f"), seg.fresh("y"), seg.fresh("m")
        block.emit(f"{flat} = _np.ascontiguousarray({x}).reshape({math.prod(map(int, shape)),})")
        block.emit(f"{y} = _np.empty({pre!r}, {dtype_src(dt)})")
        block.emit(f"{m} = _np.intp(0)")  # not a literal: see int_arg
        depth = _loop_nest(block, pre, "_a")
        index = ", ".join(f"_a{i}" for i in range(len(pre)))
        block.emit(f"{y}[{index}] = _pairwise_sum({flat}, {m}, {int_arg(run)}, "
                   f"{dtype_src(dt)}(-0.0))")
        block.emit(f"{m} += {run}")
        block.depth = depth
    rest = [i for i in range(len(pre)) if i not in outer]
    rows = math.prod(int(pre[a]) for a in outer)
    cols = math.prod(int(pre[a]) for a in rest)
    perm = tuple(outer) + tuple(rest)
    z = seg.fresh("z")
    if perm == tuple(range(len(pre))):
        block.emit(f"{z} = _np.ascontiguousarray({y})" +
                   ("" if tuple(pre) == (rows, cols) else f".reshape(({rows}, {cols}))"))
    else:
        # a copy loop: Numba's np.transpose with an axes tuple takes seconds to compile
        t = seg.fresh("t")
        block.emit(f"{t} = _np.empty({tuple(pre[a] for a in perm)!r}, {dtype_src(dt)})")
        depth = _loop_nest(block, [pre[a] for a in perm], "_p")
        src = ", ".join(f"_p{perm.index(a)}" for a in range(len(pre)))
        block.emit(f"{t}[{', '.join(f'_p{i}' for i in range(len(perm)))}] = {y}[{src}]")
        block.depth = depth
        block.emit(f"{z} = {t}.reshape(({rows}, {cols}))")
    block.emit(f"{res} = _tree_sum_rows({z}).reshape({kept!r})")


def _loop_nest(block, dims, name):
    """Open one loop per dim (indices name0, name1, ...); returns the depth to go back to."""
    depth = block.depth
    for i, d in enumerate(dims):
        block.emit(f"for {name}{i} in range({d}):")
        block.depth += 1
    return depth
