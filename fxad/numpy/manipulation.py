"""Shape manipulation with NumPy's signatures: reshaping, transposing and moving axes,
broadcasting, joining and splitting, flipping, rolling, tiling and repeating, diagonals and
triangles."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import parse_index, scatter_add
from ._axes import normalize_axes
from ._lists import stack_traced_lists


@stack_traced_lists
def shape(a):
    """The shape of a (works on tracers and Python values), as NumPy's."""
    return tuple(shape_of(a))


@stack_traced_lists
def ndim(a):
    """The number of axes of a (works on tracers and Python values), as NumPy's."""
    return len(shape_of(a))


@stack_traced_lists
def size(a):
    """The number of elements of a, as NumPy's."""
    return math.prod(map(int, shape_of(a)))


@stack_traced_lists
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """NumPy 2's signature (`shape`, or the older `newshape`)."""
    newshape = shape if newshape is None else newshape
    if newshape is None:
        raise FxadValueError("reshape needs the new shape: reshape(a, shape)")
    if order != "C":
        raise FxadValueError("fxad reshape supports order='C' only")
    if isinstance(newshape, (int, np.integer)):
        newshape = (newshape,)
    newshape = [int(d) for d in newshape]
    if newshape.count(-1) > 1:
        raise FxadValueError("can only specify one unknown dimension (-1)")
    if -1 in newshape:
        known = math.prod(int(d) for d in newshape if d != -1)
        total = size(a)
        if known == 0 or total % known:
            raise FxadValueError(f"cannot reshape an array of size {total} into shape "
                                 f"{tuple(newshape)}")
        newshape[newshape.index(-1)] = total // known
    return lax.reshape(a, tuple(newshape))


@stack_traced_lists
def ravel(a):
    """a flattened in C order, as NumPy's (a new array, never a view into fxad's); differentiable
    to any order."""
    return lax.reshape(a, (size(a),))


@stack_traced_lists
def transpose(a, axes=None):
    """a with its axes reversed or permuted by `axes`, as NumPy's; differentiable to any order."""
    nd = ndim(a)
    axes = tuple(reversed(range(nd))) if axes is None else tuple(int(x) % nd for x in axes)
    return lax.transpose(a, axes)


def _arr(a):
    """An array_like as an array (lax's no-op shortcuts would hand a list back unchanged)."""
    return a if isinstance(a, (Tracer, np.ndarray)) else np.asarray(a)


@stack_traced_lists
def moveaxis(a, source, destination):
    """a with the axes `source` moved to `destination`, as NumPy's; differentiable to any order."""
    a = _arr(a)
    nd = ndim(a)
    src = [s % nd for s in ((source,) if isinstance(source, int) else source)]
    dst = [d % nd for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(a, tuple(order))


@stack_traced_lists
def swapaxes(a, axis1, axis2):
    """a with axis1 and axis2 exchanged, as NumPy's; differentiable to any order."""
    perm = list(range(ndim(a)))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return lax.transpose(a, tuple(perm))


@stack_traced_lists
def broadcast_to(a, shape):
    """a broadcast to `shape`, as NumPy's; differentiable to any order (the transpose sums over
    the broadcast axes)."""
    return lax.broadcast_to(a, tuple(shape) if not isinstance(shape, int) else (shape,))


@stack_traced_lists
def expand_dims(a, axis):
    """a with an axis of size 1 inserted at each position `axis`, as NumPy's; differentiable to
    any order."""
    s = list(shape_of(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_nd = len(s) + len(axes)
    for ax in sorted(a % out_nd for a in axes):
        s.insert(ax, 1)
    return lax.reshape(a, tuple(s))


@stack_traced_lists
def squeeze(a, axis=None):
    """a without its axes of size 1 (those of `axis` only, if given), as NumPy's; differentiable
    to any order."""
    s = shape_of(a)
    if axis is None:
        axes = [i for i, d in enumerate(s) if d == 1]
    else:
        axes = normalize_axes(axis, len(s))
        if any(s[i] != 1 for i in axes):
            raise FxadValueError(f"cannot squeeze an axis whose size is not 1 (shape {s})")
    return lax.reshape(a, tuple(d for i, d in enumerate(s) if i not in axes))


@stack_traced_lists
def atleast_1d(a):
    """a with at least one axis, as NumPy's (several arguments give a list); differentiable to any
    order."""
    return a if ndim(a) >= 1 else lax.reshape(a, (1,))


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The arrays joined along `axis` (`dtype`/`casting` as NumPy 2's; `out` must be None);
    differentiable to any order."""
    arrays = _cast_all(arrays, dtype, out, "concatenate", casting)
    if axis is None:
        return lax.concatenate([ravel(a) for a in arrays], 0)
    nd = ndim(arrays[0])
    return lax.concatenate(arrays, int(axis) % nd)


_CASTING = ("no", "equiv", "safe", "same_kind", "unsafe")


def _cast_all(arrays, dtype, out, name, casting="same_kind"):
    """The arrays in the result's dtype (`dtype`, or their common type), each cast allowed
    by `casting` (NumPy's rule: "Cannot cast array data from ..." otherwise)."""
    if out is not None:
        raise FxadValueError(f"{name}: out= must be None; fxad returns new arrays")
    if casting not in _CASTING:
        raise FxadValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                             f"'unsafe' (got {casting!r})")
    arrays = list(arrays)
    dts = [dtype_of(a) if isinstance(a, Tracer) else np.asarray(a).dtype for a in arrays]
    target = np.dtype(dtype) if dtype is not None else np.result_type(*dts) if dts else None
    for dt in dts:
        if not np.can_cast(dt, target, casting):
            raise FxadTypeError(f"Cannot cast array data from {dt!r} to {target!r} according "
                                f"to the rule {casting!r}")
    if dtype is None:
        return arrays
    return [lax.convert_element_type(a, target) for a in arrays]


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """The arrays joined along a new axis `axis` (`dtype`/`casting` as NumPy 2's), as NumPy's;
    differentiable to any order."""
    arrays = _cast_all(arrays, dtype, out, "stack", casting)
    if not arrays:
        raise FxadValueError("need at least one array to stack")
    nd = ndim(arrays[0]) + 1
    return lax.concatenate([expand_dims(a, axis % nd) for a in arrays], axis % nd)


@stack_traced_lists
def split(a, indices_or_sections, axis=0):
    """a split into equal sections or at indices along `axis`, as NumPy's; differentiable to any
    order."""
    n = shape_of(a)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        if n % indices_or_sections:
            raise FxadValueError("array split does not result in an equal division")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    pre = (slice(None),) * (axis % ndim(a))
    return [a[pre + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


@stack_traced_lists
def flip(m, axis=None):
    """m with its elements reversed along `axis` (all axes if None), as NumPy's; differentiable to
    any order."""
    return lax.flip(m, normalize_axes(axis, ndim(m)))


@stack_traced_lists
def atleast_2d(a):
    """a with at least two axes (new ones in front), as NumPy's; differentiable to any order."""
    nd = ndim(a)
    return a if nd >= 2 else lax.reshape(a, (1,) * (2 - nd) + shape(a))


@stack_traced_lists
def atleast_3d(a):
    """a with at least three axes (placed as NumPy's does); differentiable to any order."""
    nd, s = ndim(a), shape(a)
    if nd >= 3:
        return a
    return lax.reshape(a, (1, 1, 1) if nd == 0 else (1,) + s + (1,) if nd == 1 else s + (1,))


def vstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays stacked along the first axis (1-d as rows), as NumPy's; differentiable to any
    order."""
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """The arrays joined along the second axis (first for 1-d), as NumPy's; differentiable to any
    order."""
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if ndim(arrs[0]) == 1 else 1, dtype=dtype, casting=casting)


def dstack(tup):
    """The arrays stacked along the third axis, as NumPy's; differentiable to any order."""
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup):
    """1-d arrays as the columns of a 2-d array (2-d arrays as they are), stacked, as NumPy's;
    differentiable to any order."""
    return concatenate([lax.reshape(a, (size(a), 1)) if ndim(a) < 2 else a for a in tup], 1)


@stack_traced_lists
def array_split(a, indices_or_sections, axis=0):
    """a split into `indices_or_sections` pieces along `axis` (unequal sizes allowed), as NumPy's;
    differentiable to any order."""
    n = shape(a)[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        indices_or_sections = np.cumsum(sizes)[:-1]
    return split(a, list(indices_or_sections), axis)


@stack_traced_lists
def roll(a, shift, axis=None):
    """a shifted cyclically by `shift` along `axis`, as NumPy's; differentiable to any order."""
    a = _arr(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape(a))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    for ax, sh in zip(axes, shifts):
        ax %= ndim(a)
        n = shape(a)[ax]
        if n == 0:
            continue
        k = int(sh) % n
        pre = (slice(None),) * ax
        a = lax.concatenate([a[pre + (slice(n - k, n),)], a[pre + (slice(0, n - k),)]], ax)
    return a


@stack_traced_lists
def tile(a, reps):
    """a repeated `reps` times along each axis, as NumPy's; differentiable to any order."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    s = shape(a)
    nd = max(len(s), len(reps))
    s = (1,) * (nd - len(s)) + s
    reps = (1,) * (nd - len(reps)) + reps
    a = lax.reshape(a, tuple(d for pair in zip((1,) * nd, s) for d in pair))
    a = lax.broadcast_to(a, tuple(d for pair in zip(reps, s) for d in pair))
    return lax.reshape(a, tuple(r * d for r, d in zip(reps, s)))


@stack_traced_lists
def repeat(a, repeats, axis=None):
    """Each element repeated `repeats` times along `axis` (flattened if None), as NumPy's;
    differentiable to any order."""
    if axis is None:
        a, axis = ravel(a), 0
    n = shape(a)[axis]
    idx = np.repeat(np.arange(n), repeats)
    return a[(slice(None),) * (axis % ndim(a)) + (idx,)]


@stack_traced_lists
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal at `offset` of the axes axis1 and axis2, as NumPy's (a new array: nothing
    aliases); differentiable to any order."""
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = shape(a)[-2:]
    rows = np.arange(max(0, -offset), min(n, m - offset)) if m - offset > 0 else np.arange(0)
    return a[(Ellipsis, rows, rows + offset)]


@stack_traced_lists
def diag(v, k=0):
    """The k-th diagonal of a 2-d v, or a 2-d array with the 1-d v on its k-th diagonal, as
    NumPy's; differentiable to any order."""
    if ndim(v) == 2:
        return diagonal(v, k)
    if ndim(v) != 1:
        raise FxadValueError("diag: input must be 1-d or 2-d")
    n = shape(v)[0]
    m = n + abs(k)
    rows = np.arange(n) + max(0, -k)
    spec, arrays = parse_index((rows, rows + k))
    return scatter_add(np.zeros((m, m), dtype_of(v)), arrays, v, spec)


@stack_traced_lists
def trace(a, offset=0, axis1=0, axis2=1):
    """The sum along the diagonal at `offset` of axis1 and axis2, as NumPy's; differentiable to
    any order."""
    d = diagonal(a, offset, axis1, axis2)
    return lax.reduce_sum(d, (ndim(d) - 1,))


def _tri_mask(a, k, lower):
    n, m = shape(a)[-2:]
    return (np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool))


@stack_traced_lists
def tril(m, k=0):  # the other triangle is a constant 0 (m * 0 would be NaN at inf entries)
    """m with the elements above the k-th diagonal set to 0, as NumPy's; differentiable to any
    order."""
    return lax.select(_tri_mask(m, k, True), m, np.zeros((), dtype_of(m)))


@stack_traced_lists
def triu(m, k=0):
    """m with the elements below the k-th diagonal set to 0, as NumPy's; differentiable to any
    order."""
    return lax.select(_tri_mask(m, k, False), m, np.zeros((), dtype_of(m)))


@stack_traced_lists
def fliplr(m):
    """m reversed along its second axis, as NumPy's; differentiable to any order."""
    return lax.flip(m, (1,))


@stack_traced_lists
def flipud(m):
    """m reversed along its first axis, as NumPy's; differentiable to any order."""
    return lax.flip(m, (0,))


@stack_traced_lists
def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes`, as NumPy's; differentiable to any
    order."""
    if len(axes) != 2 or ndim(m) < 2:
        raise FxadValueError("rot90 needs two axes of an array with at least two dimensions")
    a0, a1 = (int(a) % ndim(m) for a in axes)
    if a0 == a1:
        raise FxadValueError("rot90: the two axes must be different")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return lax.flip(m, tuple(sorted((a0, a1))))
    perm = list(range(ndim(m)))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    m = lax.transpose(m, tuple(perm))
    return lax.flip(m, (a0,)) if k == 1 else lax.flip(m, (a1,))


@stack_traced_lists
def matrix_transpose(x, /):
    """x with its last two axes swapped, as `numpy.matrix_transpose`; differentiable."""
    return swapaxes(x, -1, -2)


@stack_traced_lists
def unstack(x, /, *, axis=0):
    """The slices of x along `axis` as a tuple of arrays, as NumPy 2's; differentiable to any
    order."""
    x = _arr(x)
    return tuple(lax.reshape(t, tuple(d for i, d in enumerate(shape(t)) if i != axis % ndim(x)))
                 for t in split(x, shape(x)[axis], axis))


def block(arrays):
    """Nested lists of blocks: the innermost lists join along the last axis, the next ones
    along the axis before, ...; blocks are first given the result's rank (as in NumPy)."""
    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) else 0

    def rank(a):
        return max(rank(x) for x in a) if isinstance(a, list) else ndim(a)
    d = depth(arrays)
    nd = max(d, rank(arrays))

    def join(a, level):
        if not isinstance(a, list):
            return lax.reshape(a, (1,) * (nd - ndim(a)) + shape(a)) if ndim(a) < nd else a
        return concatenate([join(x, level + 1) for x in a], axis=-(d - level))
    return join(arrays, 0)


@stack_traced_lists
def diagflat(v, k=0):
    """A 2-d array with the flattened v on its k-th diagonal, as NumPy's; differentiable to any
    order."""
    return diag(ravel(v), k)


def broadcast_arrays(*args):
    """The arguments broadcast against each other, as NumPy's; differentiable to any order."""
    out = tuple(np.broadcast_shapes(*(shape(a) for a in args)))
    return tuple(broadcast_to(a, out) for a in args)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors (`indexing` "xy" or "ij", `sparse`), as
    NumPy's; differentiable to any order."""
    if indexing not in ("xy", "ij"):
        raise FxadValueError("meshgrid: indexing must be 'xy' or 'ij'")
    n = len(xi)
    shapes = [[1] * n for _ in xi]
    for i, x in enumerate(xi):
        shapes[i][i] = size(x)
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    grids = [lax.reshape(ravel(x), tuple(s)) for x, s in zip(xi, shapes)]
    return tuple(grids) if sparse else broadcast_arrays(*grids)


@stack_traced_lists
def append(arr, values, axis=None):
    """arr with values appended along `axis` (flattened if axis is None), as NumPy's;
    differentiable to any order in both."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# --- NumPy's other spellings -------------------------------------------------------------

@stack_traced_lists
def rollaxis(a, axis, start=0):
    """NumPy's rollaxis: move `axis` to before position `start`."""
    n = ndim(a)
    axis %= n
    start = start + n if start < 0 else start
    if not 0 <= start <= n:
        raise FxadValueError(f"rollaxis: start {start} is out of range for rank {n}")
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


@stack_traced_lists
def vsplit(ary, indices_or_sections):
    """ary split along its first axis, as NumPy's; differentiable to any order."""
    if ndim(ary) < 2:
        raise FxadValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


@stack_traced_lists
def hsplit(ary, indices_or_sections):
    """ary split along its second axis (first for 1-d), as NumPy's; differentiable to any order."""
    if ndim(ary) == 0:
        raise FxadValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ndim(ary) > 1 else 0)


@stack_traced_lists
def dsplit(ary, indices_or_sections):
    """ary split along its third axis, as NumPy's; differentiable to any order."""
    if ndim(ary) < 3:
        raise FxadValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def row_stack(tup, *, dtype=None, casting="same_kind"):
    """The arrays stacked as rows (vstack), as NumPy's; differentiable to any order."""
    return vstack(tup, dtype=dtype, casting=casting)


def concat(arrays, /, *, axis=0):
    """The Array API's name for concatenate."""
    return concatenate(arrays, axis)


@stack_traced_lists
def permute_dims(a, /, axes):
    """a with its axes permuted (the Array API's transpose), as NumPy's; differentiable to any
    order."""
    return transpose(a, axes)


__all__ = ["shape", "ndim", "size", "reshape", "ravel", "transpose", "moveaxis", "swapaxes",
           "broadcast_to", "expand_dims", "squeeze", "atleast_1d", "concatenate", "stack", "split",
           "flip", "atleast_2d", "atleast_3d", "vstack", "hstack", "dstack", "column_stack",
           "array_split", "roll", "tile", "repeat", "diagonal", "diag", "trace", "tril", "triu",
           "fliplr", "flipud", "rot90", "matrix_transpose", "unstack", "block", "diagflat",
           "broadcast_arrays", "meshgrid", "append", "rollaxis", "vsplit", "hsplit", "dsplit",
           "row_stack", "concat", "permute_dims"]
