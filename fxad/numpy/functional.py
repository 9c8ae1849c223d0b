"""The Array API's unique_* and NumPy's set operations, functions given by a Python function
(vectorize and apply_along_axis by vmap, piecewise, fromfunction), matvec/vecmat, and
predicates: more of NumPy's (and jax.numpy's) names, split from more.py."""
from __future__ import annotations

import re

import numpy as np

from .. import lax
from ..api.batching import vmap
from ..core import Tracer
from ..errors import FxadValueError
from ..rules.helpers import dtype_of, shape_of
from .creation import asarray
from .indexing import take
from .manipulation import broadcast_to, concatenate, expand_dims, moveaxis, ndim, ravel
from .products import einsum
from .reductions import all as _all
from .sorting import _concrete, unique
from ._lists import stack_traced_lists

# --- the Array API's unique_* and set operations ----------------------------------------------

@stack_traced_lists
def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of x, as NumPy 2's; under `jit` the result's size depends on the
    data: give `size=` (and `fill_value=`) as in JAX."""
    return unique(x, size=size, fill_value=fill_value)


@stack_traced_lists
def unique_counts(x, /, *, size=None, fill_value=None):
    """The unique values and their counts, as NumPy 2's; under `jit` the result's size depends on
    the data: give `size=` (and `fill_value=`) as in JAX."""
    return unique(x, return_counts=True, size=size, fill_value=fill_value)


@stack_traced_lists
def unique_inverse(x, /, *, size=None, fill_value=None):
    """The unique values and the indices that rebuild x from them, as NumPy 2's; under `jit` the
    result's size depends on the data: give `size=` (and `fill_value=`) as in JAX."""
    return unique(x, return_inverse=True, size=size, fill_value=fill_value)


@stack_traced_lists
def unique_all(x, /, *, size=None, fill_value=None):
    """The unique values with their first indices, inverse indices and counts, as NumPy 2's; under
    `jit` the result's size depends on the data: give `size=` (and `fill_value=`) as in JAX."""
    return unique(x, True, True, True, size=size, fill_value=fill_value)


def _gathered(a, idx):
    return take(ravel(a), np.asarray(idx, np.intp))


@stack_traced_lists
def union1d(ar1, ar2):
    """The sorted unique values of ar1 and ar2 together, as NumPy's; under `jit` the result's size
    depends on the data: give `size=` (and `fill_value=`) as in JAX."""
    return unique(concatenate([ravel(ar1), ravel(ar2)]))


@stack_traced_lists
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """Values in both, sorted (gathered from ar1, so they carry its derivative)."""
    c1, c2 = _concrete(ar1, "intersect1d"), _concrete(ar2, "intersect1d")
    vals, i1, i2 = np.intersect1d(c1, c2, assume_unique, return_indices=True)
    out = _gathered(ar1, i1)
    return (out, i1, i2) if return_indices else out


@stack_traced_lists
def setdiff1d(ar1, ar2, assume_unique=False):
    """The sorted unique values of ar1 not in ar2, as NumPy's; under `jit` the result's size
    depends on the data: give `size=` (and `fill_value=`) as in JAX."""
    c1, c2 = _concrete(ar1, "setdiff1d").ravel(), _concrete(ar2, "setdiff1d")
    _, first = np.unique(c1, return_index=True)
    keep = first[~np.isin(c1[first], c2)]
    return _gathered(ar1, keep)


@stack_traced_lists
def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values in exactly one of ar1 and ar2, as NumPy's; under `jit` the result's size
    depends on the data: give `size=` (and `fill_value=`) as in JAX."""
    c1, c2 = _concrete(ar1, "setxor1d").ravel(), _concrete(ar2, "setxor1d").ravel()
    both = np.concatenate([c1, c2])
    vals, first, counts = np.unique(both, return_index=True, return_counts=True)
    return take(concatenate([ravel(ar1), ravel(ar2)]), first[counts == 1])


@stack_traced_lists
def compress(condition, a, axis=None, *, size=None, fill_value=0):
    """The slices of a along `axis` where condition is true, as NumPy's; under `jit` the result's
    size depends on the data: give `size=` (and `fill_value=`) as in JAX; differentiable in a."""
    cond = _concrete(condition, "compress").astype(bool).ravel()
    if axis is None:
        a, axis = ravel(a), 0
    return take(a, np.nonzero(cond)[0], axis)


@stack_traced_lists
def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of arr where condition is true, flattened, as NumPy's; under `jit` the
    result's size depends on the data: give `size=` (and `fill_value=`) as in JAX;
    differentiable in arr."""
    cond = _concrete(condition, "extract").astype(bool).ravel()
    return take(ravel(arr), np.nonzero(cond)[0])


@stack_traced_lists
def trim_zeros(filt, trim="fb"):
    """filt without its leading and/or trailing zeros (`trim` "f", "b", "fb"), as NumPy's; the
    input must be concrete (the size depends on it)."""
    c = _concrete(filt, "trim_zeros")
    nz = np.nonzero(c)[0]
    lo = nz[0] if len(nz) and "f" in trim else (len(c) if not len(nz) else 0)
    hi = nz[-1] + 1 if len(nz) and "b" in trim else len(c)
    return filt[lo:max(hi, lo)]


# --- vectorize, apply_along_axis, piecewise ---------------------------------------------------

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_SIGNATURE = re.compile(rf"^{_CORE}(?:,{_CORE})*->{_CORE}(?:,{_CORE})*$")


def _parse_signature(signature):
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise FxadValueError(f"vectorize: invalid signature {signature!r}")
    ins, outs = sig.split("->")
    core = lambda part: [tuple(re.findall(_DIM, g)) for g in re.findall(r"\(([^)]*)\)", part)]  # noqa
    return core(ins), core(outs)


class vectorize:
    """np.vectorize, by vmap: `pyfunc` written for one element (or, with `signature`, for
    the core dimensions) applied over the broadcast leading dimensions as one batched
    program, not a Python loop. `excluded` arguments (positions or names) are passed
    whole."""

    def __init__(self, pyfunc, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None):
        self.pyfunc = pyfunc
        self.excluded = set(excluded or ())
        self.signature = signature
        self.otypes = otypes
        self.__doc__ = doc or getattr(pyfunc, "__doc__", None)

    def __call__(self, *args, **kwargs):
        excluded = self.excluded
        dyn_pos = [i for i in range(len(args)) if i not in excluded]
        dyn_kw = [k for k in kwargs if k not in excluded]
        vals = [asarray(args[i]) for i in dyn_pos] + [asarray(kwargs[k]) for k in dyn_kw]
        cores = ([()] * len(vals), None)
        if self.signature is not None:
            ins, _ = _parse_signature(self.signature)
            if len(ins) != len(vals):
                raise FxadValueError(f"vectorize: the signature has {len(ins)} inputs, the "
                                     f"call {len(vals)}")
            cores = (ins, None)
        loop_shapes = []
        for v, core in zip(vals, cores[0]):
            s = shape_of(v)
            if len(s) < len(core):
                raise FxadValueError(f"vectorize: an input of shape {s} has fewer dimensions "
                                     f"than its core dimensions {core}")
            loop_shapes.append(s[:len(s) - len(core)])
        loop = tuple(np.broadcast_shapes(*loop_shapes)) if loop_shapes else ()
        vals = [broadcast_to(v, loop + tuple(shape_of(v)[len(ls):]))
                for v, ls in zip(vals, loop_shapes)]

        def call(*vs):
            a, k = list(args), dict(kwargs)
            for i, v in zip(dyn_pos, vs):
                a[i] = v
            for name, v in zip(dyn_kw, vs[len(dyn_pos):]):
                k[name] = v
            out = self.pyfunc(*a, **k)
            return tuple(asarray(o) for o in out) if isinstance(out, tuple) else asarray(out)
        f = call
        for _ in loop:
            f = vmap(f)
        out = f(*vals)
        if self.otypes:
            outs = out if isinstance(out, tuple) else (out,)
            outs = tuple(lax.convert_element_type(o, t) for o, t in zip(outs, self.otypes))
            out = outs if isinstance(out, tuple) else outs[0]
        return out


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to every 1-d slice along `axis`, by vmap over the other dimensions;
    its result's dimensions take the place of `axis` (NumPy's layout)."""
    nd = ndim(arr)
    axis %= nd
    arr = moveaxis(arr, axis, -1)
    f = lambda v: asarray(func1d(v, *args, **kwargs))  # noqa: E731
    for _ in range(nd - 1):
        f = vmap(f)
    out = f(arr)
    k = ndim(out) - (nd - 1)  # the dimensions func1d made
    return moveaxis(out, tuple(range(nd - 1, nd - 1 + k)), tuple(range(axis, axis + k))) \
        if k else out


def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each axis of `axes` in turn, each result keeping the axis as
    size 1, as NumPy's; differentiable as func is."""
    for ax in (axes,) if isinstance(axes, int) else axes:
        out = func(a, ax)
        a = out if ndim(out) == ndim(a) else expand_dims(out, ax)
    return a


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i] (a function of x, or a constant) where condlist[i] holds; with one more
    function than conditions, the last applies where none holds (else 0). Every function is
    evaluated on all of x and the results selected (as JAX does under jit)."""
    x = asarray(x)
    if isinstance(condlist, (bool, np.bool_)) or (not isinstance(condlist, (list, tuple))
                                                  and ndim(condlist) == ndim(x)):
        condlist = [condlist]
    conds = [broadcast_to(asarray(c), shape_of(x)) for c in condlist]
    funcs = list(funclist)
    if len(funcs) not in (len(conds), len(conds) + 1):
        raise FxadValueError(f"piecewise: {len(conds)} conditions need {len(conds)} or "
                             f"{len(conds) + 1} functions, got {len(funcs)}")

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        return lax.convert_element_type(broadcast_to(asarray(v), shape_of(x)), dtype_of(x))
    out = value(funcs[-1]) if len(funcs) > len(conds) else np.zeros(shape_of(x), dtype_of(x))
    if len(funcs) > len(conds):
        none = conds[0]
        for c in conds[1:]:
            none = lax.logical_or(none, c)
        out = lax.select(lax.logical_not(none), out, np.zeros(shape_of(x), dtype_of(x)))
    for c, f in zip(conds, funcs):  # later conditions win, as in NumPy
        out = lax.select(c, value(f), out)
    return out


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function called once on the index arrays of `shape` (as floats unless dtype says
    otherwise), as NumPy's; differentiable as function is."""
    return function(*np.indices(shape, dtype=dtype), **kwargs)


# --- NumPy 2.2's matvec / vecmat, and aliases ----------------------------------------------------

def _check_core_dims(name, x1, x2, n1, n2):
    """NumPy's gufunc check: each operand has at least its core dimensions."""
    for k, (x, n) in enumerate(((x1, n1), (x2, n2))):
        if len(shape_of(x)) < n:
            raise FxadValueError(f"{name}: operand {k} has {len(shape_of(x))} dimension(s); "
                                 f"it needs at least {n} ({'a matrix' if n == 2 else 'a vector'})")


@stack_traced_lists
def matvec(x1, x2, /):
    """The matrix-vector product over the last axes, as NumPy 2.2's `matvec`; differentiable to
    any order."""
    _check_core_dims("matvec", x1, x2, 2, 1)
    return einsum("...ij,...j->...i", x1, x2)


@stack_traced_lists
def vecmat(x1, x2, /):
    """The vector-matrix product over the last axes (conjugating the vector), as NumPy 2.2's
    `vecmat`; differentiable to any order."""
    _check_core_dims("vecmat", x1, x2, 1, 2)
    x1 = asarray(x1)
    return einsum("...i,...ij->...j", lax.conj(x1) if dtype_of(x1).kind == "c" else x1, x2)


@stack_traced_lists
def array_equiv(a1, a2):
    """Shape-consistent (broadcastable) and equal everywhere."""
    try:
        np.broadcast_shapes(shape_of(a1), shape_of(a2))
    except ValueError:
        return np.bool_(False)
    return _all(lax.eq(a1, a2))


@stack_traced_lists
def isscalar(element):
    """Whether element is a scalar as NumPy sees it; a 0-d tracer counts as an array, not a
    scalar."""
    return isinstance(element, Tracer) and element.ndim == 0 or np.isscalar(element)


@stack_traced_lists
def iscomplexobj(x):
    """Whether x has a complex dtype, as NumPy's (a Python bool)."""
    return dtype_of(asarray(x)).kind == "c"


@stack_traced_lists
def isrealobj(x):
    """Whether x does not have a complex dtype, as NumPy's (a Python bool)."""
    return not iscomplexobj(x)


@stack_traced_lists
def iscomplex(x):
    """Whether each element has a non-zero imaginary part, as NumPy's; a boolean result, so not
    differentiable."""
    x = asarray(x)
    return lax.ne(lax.imag(x), 0) if dtype_of(x).kind == "c" else np.zeros(shape_of(x), bool)


@stack_traced_lists
def isreal(x):
    """Whether each element has a zero imaginary part, as NumPy's; a boolean result, so not
    differentiable."""
    return lax.logical_not(iscomplex(x))


@stack_traced_lists
def iterable(y):
    """Whether y can be iterated, as NumPy's (a tracer with at least one axis can)."""
    return isinstance(y, Tracer) and y.ndim > 0 or np.iterable(y)


__all__ = ["unique_values", "unique_counts", "unique_inverse", "unique_all", "union1d",
           "intersect1d", "setdiff1d", "setxor1d", "compress", "extract", "trim_zeros",
           "vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "fromfunction",
           "matvec", "vecmat", "array_equiv", "isscalar", "iscomplexobj", "isrealobj",
           "iscomplex", "isreal", "iterable"]
