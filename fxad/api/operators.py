"""Differential operators from second derivatives: the Laplacian (exact or stochastic), a
weighted Laplacian, the biharmonic operator. Each returns a function, like `grad`."""
from __future__ import annotations

from math import prod
from typing import Callable

import numpy as np

from ..core import get_aval, is_float
from ..errors import FxadTypeError, FxadValueError
from ..interpreters.collapsed import collapsed_flat
from ..interpreters.jvp import Zero
from ..tree_util import tree_flatten, tree_unflatten
from .batching import vmap
from .common import _check_callable, _flat_fun, _leaf, _result
from .forward import jvp
from .jacobians import hessian
from .taylor import jet

__all__ = ["biharmonic", "laplacian", "weighted_laplacian"]

METHODS = ("collapsed", "taylor", "nested")


def laplacian(f: Callable, argnums: int = 0, method: str = "collapsed",
              samples: int | None = None, key=None,
              distribution: str = "rademacher") -> Callable:
    """The Laplacian of `f` in argument `argnums`: a function returning, for each element of
    f's output (any pytree of arrays), the sum over the elements x_i of that argument (an
    array) of d^2 f / dx_i^2.

    `method`: "collapsed" (default) propagates, in one forward pass, each value's first
    derivatives along all n coordinate directions and only the *sum* of its second
    derivatives (collapsed Taylor mode, the "Forward Laplacian"); "taylor" runs one order-2
    `jet` per direction (vmapped); "nested" is the trace of `hessian` (forward over reverse).
    All three give the same numbers to rounding.

    `samples=S` with a `key` (fxad.random) estimates it instead, unbiased, from S random
    directions v with E[v v^T] = I ("rademacher" signs or "normal"): (1/S) sum_s v_s^T H v_s,
    for inputs too large for n directions. JAX has no such function; the result is
    differentiable (grad of a loss holding it, e.g. a physics-informed network)."""
    _check_callable("laplacian", f)
    _check_method("laplacian", method)
    if samples is not None and key is None:
        raise FxadValueError("laplacian: samples= needs a key= (fxad.random.key(seed)) to "
                             "draw the directions from")
    if distribution not in ("rademacher", "normal"):
        raise FxadValueError(f"laplacian: distribution must be 'rademacher' or 'normal', got "
                             f"{distribution!r}")

    def lap(*args):
        x, g = _argument("laplacian", f, args, argnums)
        a = get_aval(x)
        if samples is None:
            n = prod(a.shape)
            dirs = np.eye(n, dtype=a.dtype).reshape((n,) + a.shape)
            return _second_sum(g, x, dirs, method, 1.0, identity=True)
        from .. import random
        draw = random.rademacher if distribution == "rademacher" else random.normal
        dirs = draw(key, (samples,) + a.shape, a.dtype)
        return _second_sum(g, x, dirs, method, 1.0 / samples)
    return lap


def weighted_laplacian(f: Callable, coefficients, argnums: int = 0,
                       method: str = "collapsed") -> Callable:
    """sum_ij C_ij d^2 f / dx_i dx_j for a symmetric coefficient matrix C (n x n, n the size
    of argument `argnums`): the trace of C H. C is split by its eigendecomposition into
    directions sqrt(|lambda_k|) u_k, the positive and negative ones propagated in one pass
    each (a diffusion tensor C = sigma sigma^T has only the first)."""
    _check_callable("weighted_laplacian", f)
    _check_method("weighted_laplacian", method)
    c = np.asarray(coefficients)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or not np.allclose(c, c.T, rtol=1e-12,
                                                                   atol=0):
        raise FxadValueError("weighted_laplacian: coefficients must be a symmetric square "
                             f"matrix, got shape {c.shape}")
    lam, u = np.linalg.eigh(c)

    def lap(*args):
        x, g = _argument("weighted_laplacian", f, args, argnums)
        a = get_aval(x)
        if c.shape[0] != prod(a.shape):
            raise FxadValueError(f"weighted_laplacian: coefficients are {c.shape} but the "
                                 f"argument has {prod(a.shape)} elements")
        total = None
        for sign in (1.0, -1.0):
            keep = sign * lam > 0
            if not keep.any():
                continue
            dirs = (u[:, keep] * np.sqrt(sign * lam[keep])).T.astype(a.dtype)
            part = _second_sum(g, x, dirs.reshape((-1,) + a.shape), method, sign)
            total = part if total is None else _tree_add(total, part)
        if total is None:  # C = 0
            return _second_sum(g, x, np.zeros((1,) + a.shape, a.dtype), method, 0.0)
        return total
    return lap


def biharmonic(f: Callable, argnums: int = 0, method: str = "collapsed") -> Callable:
    """The biharmonic operator, the Laplacian of the Laplacian: sum_ij d^4 f / dx_i^2 dx_j^2
    (the two Laplacians nest: either method runs inside the other)."""
    _check_method("biharmonic", method)
    return laplacian(laplacian(f, argnums, method), argnums, method)


# --- the three ways ---------------------------------------------------------------------------

def _second_sum(g, x, dirs, method, weight, identity=False):
    """weight * sum_d (second derivative of g at x along dirs[d]), per output leaf."""
    if method == "collapsed":
        fn, store = _flat_fun(lambda y: g(y), tree_flatten((x,))[1], where="laplacian")
        outs, seconds = collapsed_flat(fn, [x], [dirs], dirs.shape[0], name="laplacian")
        vals = [_weighted(s, o, 2.0 * weight) for o, s in zip(outs, seconds)]
        return tree_unflatten(store["out"], vals)
    if method == "taylor":
        def along(v):
            return jet(g, (x,), ((v, np.zeros_like(v)),))[1]
        terms = vmap(along)(dirs)
        return _map(lambda t: _scaled_sum(t[1], weight),
                    terms, is_leaf=lambda t: isinstance(t, list))
    if identity:  # nested, exact: the trace of the Hessian
        import fxad.numpy as fnp
        n = dirs.shape[0]
        lead = lambda t: np.shape(t)[:np.ndim(t) - 2 * np.ndim(x)]  # noqa: E731
        return _map(lambda t: fnp.trace(fnp.reshape(t, lead(t) + (n, n)), axis1=-2, axis2=-1),
                    hessian(g)(x))
    second = vmap(lambda v: jvp(lambda y: jvp(g, (y,), (v,))[1], (x,), (v,))[1])(dirs)
    return _map(lambda t: _scaled_sum(t, weight), second)


def _scaled_sum(t, weight):
    import fxad.numpy as fnp
    s = fnp.sum(t, axis=0)
    return s if weight == 1.0 else fnp.multiply(s, weight).astype(s.dtype)


def _weighted(s, o, w):
    a = get_aval(o)
    if type(s) is Zero or not is_float(a.dtype):
        return np.zeros(a.shape, a.dtype)
    import fxad.numpy as fnp
    return _result(fnp.multiply(s, w).astype(a.dtype))


def _map(fn, tree, is_leaf=None):
    leaves, tdef = tree_flatten(tree, is_leaf=is_leaf)
    return tree_unflatten(tdef, [fn(t) for t in leaves])


def _tree_add(a, b):
    la, ta = tree_flatten(a)
    lb, _ = tree_flatten(b)
    import fxad.numpy as fnp
    return tree_unflatten(ta, [fnp.add(x, y) for x, y in zip(la, lb)])


def _check_method(name, method):
    if method not in METHODS:
        raise FxadValueError(f"{name}: method must be one of {METHODS}, got {method!r}")


def _argument(name, f, args, argnums):
    if not isinstance(argnums, int) or not -len(args) <= argnums < len(args):
        raise FxadTypeError(f"{name}: argnums must be an int indexing the {len(args)} "
                            f"positional arguments, got {argnums!r}")
    argnums %= len(args)
    leaves, tree = tree_flatten(args[argnums])
    if len(leaves) != 1 or tree_unflatten(tree, [0]) != 0:
        raise FxadTypeError(f"{name}: argument {argnums} must be one array, got "
                            f"{type(args[argnums]).__name__}; for a pytree, differentiate "
                            "through fxad.flatten_util.ravel_pytree's flat vector")
    x = _leaf(args[argnums])
    if not is_float(get_aval(x).dtype):
        raise FxadTypeError(f"{name}: argument {argnums} must be a float array, got "
                            f"{get_aval(x).str_short()}")

    def g(y):
        return f(*args[:argnums], y, *args[argnums + 1:])
    return x, g
