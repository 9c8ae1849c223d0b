"""`x.at[idx]`: JAX's functional updates (set, add, subtract, multiply, divide, power, min,
max, apply, get), `fxad.numpy.at(x)` for any array, and indexable constants (the arrays
fxad.numpy's creation functions return accept traced indices, as JAX arrays do).

Everything is built from gather (`getitem`) and `scatter_add`, so every transformation
handles it. An update writes `select(hit, scatter_add(0, idx, new), x)`: exact (no
`x + (v - x)`, which loses x's low bits and turns an infinite x into NaN).

Repeated indices (JAX's semantics): `add` accumulates; `multiply`, `divide`, `min`, `max`
apply every update; `set` keeps the last one. When the indices are not known to be distinct
(traced index arrays, or concrete ones that repeat), the updates are grouped by sorting the
index tuples and combined by a segmented scan, O(k log k) for k of them; distinct indices
(concrete and checked, scalars, or `unique_indices=True`) skip that. `power` and `apply`
need distinct indices.

Modes (for indices out of bounds; negative indices count from the end first, as in JAX):
  None, 'promise_in_bounds'  NumPy's indexing (out of bounds raises IndexError)
  'clip'                     clamped into bounds
  'fill'                     get: `fill_value` there (NaN for floats); updates: dropped
  'drop'                     updates there are dropped
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..core import Tracer
from ..errors import FxadTypeError, FxadValueError
from ..lax.control_flow import associative_scan
from ..rules.helpers import dtype_of, shape_of
from ..rules.structural.indexing import _indexed_shape, _layout, build_index, getitem, parse_index, \
    scatter_add
from .products import dot
from ._lists import stack_traced_lists

_MODES = (None, "promise_in_bounds", "clip", "fill", "drop")


def _dims_of(spec, ndim):
    """For each entry of a parsed index, the dimension of x it indexes (None: a new axis)."""
    consumed = sum(1 for e in spec if type(e) is tuple)
    out, d = [], 0
    for e in spec:
        if e is None:
            out.append(None)
        elif e is Ellipsis:
            out.append(None)
            d += ndim - consumed
        else:
            out.append(d)
            d += 1
    return out


class _Index:
    """An index with its mode applied. `arrays` are the index arrays (normalized and clamped
    for 'clip', 'fill' and 'drop'), `valid` a boolean over their broadcast shape (None:
    all valid); `shape` is x[idx]'s, with the broadcast index dims `bshape` at `k`."""

    def __init__(self, x, idx, mode):
        if mode not in _MODES:
            raise FxadValueError(f"x.at[...]: mode must be one of {_MODES}, got {mode!r}")
        self.x_shape = shape = tuple(shape_of(x))
        spec, arrays = parse_index(idx)
        self.valid = None
        if mode in ("clip", "fill", "drop"):
            spec, arrays = _ints_as_arrays(spec, arrays)
            dims = _dims_of(spec, len(shape))
            fixed, valid = list(arrays), None
            for e, d in zip(spec, dims):
                if type(e) is tuple and e[0] == "a":
                    a, n = arrays[e[1]], shape[d]
                    a = lax.select(lax.lt(a, 0), lax.add(a, n), a)
                    if mode != "clip":
                        ok = lax.logical_and(lax.ge(a, 0), lax.lt(a, n))
                        valid = ok if valid is None else lax.logical_and(valid, ok)
                    fixed[e[1]] = lax.clamp(0, a, max(n - 1, 0))
            arrays, self.valid = fixed, valid
        self.spec, self.arrays = spec, arrays
        self.shape = _indexed_shape(shape, spec, [shape_of(a) for a in arrays])
        lay = _layout(spec, len(shape))
        self.bshape = tuple(np.broadcast_shapes(*[shape_of(a) for a in arrays])) \
            if arrays else ()
        self.k = lay[1] if lay is not None else 0
        if self.valid is not None:
            self.valid = lax.broadcast_to(self.valid, self.bshape)

    def index(self):
        return build_index(self.spec, self.arrays)

    def mask(self):
        """`valid`, shaped to broadcast against x[idx]."""
        rest = len(self.shape) - self.k - len(self.bshape)
        return lax.reshape(self.valid, (1,) * self.k + self.bshape + (1,) * rest)

    def group_ids(self):
        """One integer per index tuple (the flat position of its first element in x; the
        same for tuples that write the same elements), shape bshape; invalid ones get
        distinct negative ids."""
        dims = _dims_of(self.spec, len(self.x_shape))
        strides = np.cumprod((self.x_shape + (1,))[::-1])[::-1][1:]
        ids = np.zeros((), np.int64)
        for e, d in zip(self.spec, dims):
            if type(e) is tuple and e[0] == "a":
                ids = lax.add(ids, lax.mul(lax.convert_element_type(self.arrays[e[1]],
                                                                    np.int64), int(strides[d])))
        ids = lax.broadcast_to(ids, self.bshape)
        if self.valid is not None:
            n = math.prod(map(int, self.bshape))
            ids = lax.select(self.valid, ids, -1 - np.arange(n).reshape(self.bshape))
        return ids

    def concrete(self):
        return not any(isinstance(a, Tracer) for a in self.arrays) and \
            not isinstance(self.valid, Tracer)


def _ints_as_arrays(spec, arrays):
    """Static integers become 0-d index arrays, so modes apply to them too."""
    arrays, out = list(arrays), []
    for e in spec:
        if type(e) is tuple and e[0] == "i":
            out.append(("a", len(arrays)))
            arrays.append(np.asarray(e[1], np.intp))
        else:
            out.append(e)
    return tuple(out), arrays


def _fill_value(dtype, fill_value):
    if fill_value is not None:
        return fill_value
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


def _distinct(ix, unique_indices):
    """Are the index tuples known to write distinct elements?"""
    if unique_indices or not ix.arrays or math.prod(map(int, ix.bshape)) <= 1:
        return True
    if not ix.concrete():
        return False
    ids = np.ravel(np.asarray(ix.group_ids()))
    ids = ids[ids >= 0]
    return len(np.unique(ids)) == len(ids)


def _to_front(v, ix):
    """x[idx]-shaped v with the index dims first, flattened: (k, rest)."""
    nd, nb, k = len(ix.shape), len(ix.bshape), ix.k
    perm = tuple(range(k, k + nb)) + tuple(range(k)) + tuple(range(k + nb, nd))
    v = lax.transpose(v, perm)
    kb = math.prod(map(int, ix.bshape))
    return lax.reshape(v, (kb, math.prod(map(int, ix.shape)) // max(kb, 1))), perm


def _from_front(v, ix, perm):
    shape = tuple(ix.shape[p] for p in perm)
    return lax.transpose(lax.reshape(v, shape), tuple(np.argsort(perm)))


def _grouped(op, ix, g, u):
    """New values at every update, every update of an element applied (set: the last
    one's), and which updates write (the last of each group). The index tuples are sorted
    by the element they write (stably: index order within a group), each group is combined
    by a segmented associative scan (O(k log k) for k index tuples, no k x k table), and the
    last of each group, holding the group's combination, writes."""
    kb = math.prod(map(int, ix.bshape))
    ids = lax.reshape(ix.group_ids(), (kb,))
    order = lax.argsort(ids, 0)
    back = lax.argsort(order, 0)
    sid = getitem(ids, (order,))
    change = lax.ne(sid[1:], sid[:-1])
    last = lax.concatenate([change, np.ones(1, bool)], 0)
    uB, perm = _to_front(u, ix)
    gB, _ = _to_front(g, ix)
    us = getitem(uB, (order,))
    if op == "set":
        new = us
    else:
        first = lax.concatenate([np.ones(1, bool), change], 0)
        comb = {"multiply": lax.mul, "divide": lax.mul, "min": lax.min, "max": lax.max}[op]

        def segmented(a, b):  # (starts a group?, value): restart at each group's start
            return (lax.logical_or(a[0], b[0]), lax.select(b[0], b[1], comb(a[1], b[1])))
        flags = lax.broadcast_to(lax.reshape(first, (kb, 1)), tuple(shape_of(us)))
        _, total = associative_scan(segmented, (flags, us))
        gs = getitem(gB, (order,))
        new = {"multiply": lax.mul, "divide": lax.div, "min": lax.min,
               "max": lax.max}[op](gs, total)
    new = getitem(new, (back,))
    writes = lax.broadcast_to(lax.reshape(getitem(last, (back,)), (kb, 1)), tuple(shape_of(new)))
    return _from_front(new, ix, perm), _from_front(writes, ix, perm)


def _update(x, idx, values, op, mode, unique_indices, func=None):
    ix = _Index(x, idx, "drop" if mode == "fill" else mode)
    dt = dtype_of(x)
    u = values if dtype_of(values) == dt else lax.convert_element_type(values, dt)
    try:
        u = lax.broadcast_to(u, ix.shape)
    except (ValueError, TypeError):
        raise FxadValueError(f"x.at[...].{op}: values of shape {shape_of(values)} do not "
                             f"broadcast to the indexed shape {ix.shape}") from None
    where = ix.index()
    valid = None if ix.valid is None else lax.broadcast_to(ix.mask(), ix.shape)
    if op == "add":
        return scatter_add(x, ix.arrays, u if valid is None else lax.select(valid, u, 0),
                           ix.spec)
    g = getitem(x, where)
    writes = valid
    if _distinct(ix, unique_indices):
        new = {"set": lambda: u, "multiply": lambda: lax.mul(g, u),
               "divide": lambda: lax.div(g, u), "power": lambda: lax.pow(g, u),
               "min": lambda: lax.min(g, u), "max": lambda: lax.max(g, u),
               "apply": lambda: func(g)}[op]()
    else:
        if op in ("power", "apply"):
            raise FxadTypeError(f"x.at[idx].{op} needs distinct indices (repeated ones would "
                                "be applied in an unspecified order); if they are distinct, "
                                "pass unique_indices=True")
        new, wins = _grouped(op, ix, g, u)
        writes = wins if writes is None else lax.logical_and(writes, wins)
    contrib = new if writes is None else lax.select(writes, new, 0)
    hit_from = np.ones(ix.shape, np.int8) if writes is None else \
        lax.convert_element_type(writes, np.int8)
    hit = scatter_add(np.zeros(ix.x_shape, np.int8), ix.arrays, hit_from, ix.spec)
    placed = scatter_add(np.zeros(ix.x_shape, dt), ix.arrays, contrib, ix.spec)
    return lax.select(lax.ne(hit, 0), placed, x)


class _IndexUpdateHelper:
    """`x.at`: index it to get the update methods."""
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.x!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: the functional updates, each returning a new array."""
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, *, mode=None, fill_value=None, indices_are_sorted=False,
            unique_indices=False):
        """x[idx]; `mode` says what out-of-bounds indices give (see the module doc)."""
        if mode in (None, "promise_in_bounds"):
            return getitem(self.x, self.idx)
        ix = _Index(self.x, self.idx, mode)
        g = getitem(self.x, ix.index())
        if ix.valid is None:
            return g
        fill = _fill_value(dtype_of(self.x), fill_value)
        return lax.select(lax.broadcast_to(ix.mask(), ix.shape), g,
                          lax.convert_element_type(fill, dtype_of(self.x)))

    def set(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "set", mode, unique_indices)

    def add(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "add", mode, unique_indices)

    def subtract(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, lax.neg(values), "add", mode, unique_indices)

    def multiply(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "multiply", mode, unique_indices)

    mul = multiply

    def divide(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "divide", mode, unique_indices)

    def power(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "power", mode, unique_indices)

    def min(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "min", mode, unique_indices)

    def max(self, values, *, mode=None, indices_are_sorted=False, unique_indices=False):
        return _update(self.x, self.idx, values, "max", mode, unique_indices)

    def apply(self, func, *, mode=None, indices_are_sorted=False, unique_indices=False):
        """x with func applied (elementwise) at idx."""
        return _update(self.x, self.idx, np.zeros((), dtype_of(self.x)), "apply", mode,
                       unique_indices, func)


@stack_traced_lists
def at(x):
    """`x.at` for any array (a NumPy array has no `.at`): `fxad.numpy.at(x)[i].add(v)`."""
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    return _IndexUpdateHelper(x)


# --- constants that accept traced indices -----------------------------------------------------

def _has_tracer(idx):
    if isinstance(idx, Tracer):
        return True
    if isinstance(idx, tuple):
        return any(_has_tracer(i) for i in idx)
    if isinstance(idx, slice):
        return any(isinstance(b, Tracer) for b in (idx.start, idx.stop, idx.step))
    return False


class _IndexableArray(np.ndarray):
    """An ndarray (what fxad.numpy's creation functions return) whose `[...]` also takes
    traced indices, giving a traced result, and which has `.at`, as JAX arrays do. NumPy's
    operations on it return plain ndarrays."""

    def __getitem__(self, idx):
        if _has_tracer(idx):
            return getitem(self.view(np.ndarray), idx)
        return np.ndarray.__getitem__(self, idx)

    @property
    def at(self):
        return _IndexUpdateHelper(self.view(np.ndarray))

    def dot(self, b, out=None):
        """ndarray.dot, dispatching to fxad.numpy.dot for a traced `b` (a plain ndarray's
        .dot cannot: notes/06_numpy_dispatch.md)."""
        if isinstance(b, Tracer):
            return dot(self.view(np.ndarray), b)
        return np.ndarray.dot(self, b, out)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        arr = arr.view(np.ndarray)
        return arr[()] if return_scalar else arr

    def __repr__(self):
        return repr(self.view(np.ndarray))

    def __reduce__(self):  # pickles as a plain ndarray
        return self.view(np.ndarray).__reduce__()


def indexable(a):
    """`a` (an ndarray) as an _IndexableArray view: no copy."""
    return a.view(_IndexableArray) if type(a) is np.ndarray else a
