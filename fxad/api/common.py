"""What every transformation shares: inputs become arrays, outputs plain NumPy values,
functions of pytrees become functions of flat leaves; the checks of arguments, argnums,
tangents and cotangents, each raising an error that names the fix."""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ..core import (Tracer, check_output, describe_type, get_aval, is_float)
from ..errors import FxadTypeError, FxadValueError
from ..interpreters.jvp import Zero
from ..tree_util import tree_flatten, tree_unflatten

Argnums = Union[int, Sequence[int]]  # which positional arguments to differentiate



def _leaf(x):
    """Inputs become arrays (Python scalars and lists too); tracers pass through."""
    if (type(x) is np.ndarray and x.dtype.kind in "biufc") or isinstance(x, Tracer):
        return x
    arr = np.asarray(x)
    if arr.dtype.kind not in "biufc":
        raise FxadTypeError(f"fxad cannot use an argument of type {describe_type(x, arr)}: "
                            "arguments must be numeric arrays, numbers, or pytrees of them")
    return arr


def _check_callable(name, f):
    if not callable(f):
        raise FxadTypeError(f"{name} expects a function as its first argument, got "
                            f"{type(f).__name__}; e.g. fxad.{name}(f)")


def _result(x):
    """Outputs are plain NumPy values: materialize symbolic zeros, copy read-only views."""
    if type(x) is Zero:
        return np.zeros(x.aval.shape, x.aval.dtype)
    if type(x) is np.ndarray:
        return x if x.flags.writeable else x.copy()
    if isinstance(x, np.ndarray):  # a subclass (fxad.numpy's indexable constants): plain
        return _result(x.view(np.ndarray))
    return x


def _flat_fun(f, in_tree, has_aux=False, where="the transformation"):
    """A function of flat leaves; after a call, `store` holds the output tree(s). Output
    leaves must be numeric (checked: a string has no tangent). With `has_aux`, numeric aux
    leaves are appended to the outputs (so they are unboxed like them); others (strings,
    objects) are kept aside as they are."""
    store = {}

    def flat(*leaves):
        out = f(*tree_unflatten(in_tree, leaves))
        numeric_aux = []
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise FxadTypeError("with has_aux=True the function must return a pair "
                                    f"(output, aux); it returned {type(out).__name__}")
            out, aux = out
            aux_leaves, store["aux"] = tree_flatten(aux)
            store["aux_kept"] = [None if _numeric(x) else x for x in aux_leaves]
            numeric_aux = [x for x in aux_leaves if _numeric(x)]
        out_leaves, store["out"] = tree_flatten(out)
        out_leaves = [check_output(o, i, where) for i, o in enumerate(out_leaves)]
        store["n_out"] = len(out_leaves)
        return out_leaves + numeric_aux
    return flat, store


def _numeric(x):
    try:
        check_output(x, 0, "")
        return True
    except FxadTypeError:
        return False


def _split_aux(leaves, store, has_aux):
    n = store["n_out"]
    out = tree_unflatten(store["out"], [_result(x) for x in leaves[:n]])
    if not has_aux:
        return out, None
    it = iter(leaves[n:])
    aux = [_result(next(it)) if k is None else k for k in store["aux_kept"]]
    return out, tree_unflatten(store["aux"], aux)


def _check_tuple(name, what, x):
    if not isinstance(x, (tuple, list)):
        raise FxadTypeError(f"{name} expects {what} as a tuple or list (one entry per "
                            f"argument), got {type(x).__name__}; e.g. {name}(f, (x,), (v,))")


def _check_tangent(name, p, t, i):
    pa, ta = get_aval(p), get_aval(t)
    if pa.shape != ta.shape or (is_float(pa.dtype) and pa.dtype != ta.dtype):
        raise FxadTypeError(
            f"{name}: tangent {i} has {ta.str_short()} but its primal has {pa.str_short()}; "
            "a tangent must have the primal's shape and dtype")


def _is_index(a):
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


_WEAK_OK = {"f": (int, float), "c": (int, float, complex)}  # Python scalars a dtype accepts


def _check_cotangent(name, i, o, ca):
    """A cotangent has its output's shape and, for a float output, its dtype (a Python
    number may stand in for a 0-d one): a mismatch would be silently cast or, for a complex
    cotangent of a real output, lose its imaginary part."""
    if ca.shape != o.shape or (is_float(o.dtype) and ca.dtype != o.dtype
                               and ca.weak not in _WEAK_OK[o.dtype.kind]):
        raise FxadTypeError(f"{name}: cotangent {i} has {ca.str_short()} but the output has "
                            f"{o.str_short()}; a cotangent must have the output's shape and "
                            "dtype")


_SPLITS: dict = {}  # (fname, number of arguments, argnums of exact ints) -> checked split


def _argnums_split(fname, args, argnums):
    """(single, nums): whether argnums is one index, and the positions it names, checked
    against the number of positional arguments."""
    t = type(argnums)
    key = (fname, len(args), argnums) if t is int or (
        t is tuple and all(type(a) is int for a in argnums)) else None
    hit = _SPLITS.get(key) if key is not None else None
    if hit is None:
        hit = _check_argnums(fname, args, argnums)
        if key is not None and len(_SPLITS) < 256:  # bounded; ints and names only
            _SPLITS[key] = hit
    return hit


def _check_argnums(fname, args, argnums):
    single = _is_index(argnums)
    nums = (argnums,) if single else \
        tuple(argnums) if isinstance(argnums, (tuple, list)) else None
    if not nums or not all(_is_index(a) for a in nums):
        raise FxadTypeError(f"{fname}: argnums must be an int or a non-empty tuple of ints "
                            f"(positions of the arguments to differentiate), got {argnums!r}")
    for a in nums:
        if not -len(args) <= a < len(args):
            raise FxadValueError(f"{fname}: argnums {a} is out of range for a call with "
                                 f"{len(args)} positional arguments")
    nums = tuple(int(a) % len(args) for a in nums)
    if len(set(nums)) != len(nums):  # the later copy would shadow the earlier: wrong result
        raise FxadValueError(f"{fname}: argnums {argnums!r} names an argument twice; list "
                             "each argument once")
    return single, nums


def _argument_of(dyn, nums, k):
    """The position (in the call) of the differentiated argument holding flat leaf `k`; only
    for error messages, so it may re-flatten."""
    for i, x in zip(nums, dyn):
        k -= len(tree_flatten(x)[0])
        if k < 0:
            return i
    raise AssertionError("leaf index out of range")  # pragma: no cover


def _check_inputs(name, dyn, nums, flat_p, holomorphic, instead="vjp"):
    """Differentiated inputs (`flat_p`, the leaves of the arguments `dyn` at positions
    `nums`) must be floats, and complex with `holomorphic`: an integer has no derivative, and
    a zero one would be silently wrong."""
    for k, x in enumerate(flat_p):
        dt = x.dtype if type(x) is np.ndarray else get_aval(x).dtype
        if dt.kind not in "fc" or (holomorphic and dt.kind != "c"):
            i = _argument_of(dyn, nums, k)
            if holomorphic and dt.kind != "c":
                raise FxadTypeError(
                    f"{name}(holomorphic=True) needs complex inputs, but argument {i} "
                    f"has dtype {dt}. Convert it with .astype(complex), or drop "
                    "holomorphic=True.")
            raise FxadTypeError(
                f"{name} requires floating-point inputs, but argument {i} has dtype "
                f"{dt}. Convert it with .astype(float), or use {instead}, which accepts "
                "integer inputs.")


def _partial(f, args, nums, kwargs):
    def g(*dyn):
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return f(*full, **kwargs)
    return g


