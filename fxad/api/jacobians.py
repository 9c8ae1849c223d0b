"""Jacobians as one batched program each (vmap of jvp or of the pullback over a basis),
hessian = jacfwd(jacrev), and hvp."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from ..core import get_aval
from ..errors import FxadTypeError
from ..rules import ops
from ..tree_util import tree_flatten, tree_unflatten
from .common import (Argnums, _argnums_split, _check_callable, _check_inputs, _check_tuple, _leaf,
                     _partial, _result)
from .batching import vmap
from .forward import _jvp
from .reverse import _vjp_leaves, grad


def _std_basis(leaves):
    """Identity columns split across the leaves: leaf i gets shape (N, *leaf_shape)."""
    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    n = sum(sizes)
    dtype = np.result_type(*[a.dtype for a in avals]) if avals else np.float64
    eye = np.eye(n, dtype=dtype)
    out, start = [], 0
    for a, s in zip(avals, sizes):
        out.append(eye[:, start:start + s].reshape((n,) + a.shape).astype(a.dtype, copy=False))
        start += s
    return out, n


def _blocks(mat, in_leaves, in_tree):
    """Split one output leaf's forward-mode Jacobian, shape out_shape + (n,), into one block
    per input leaf, each of shape out_shape + in_shape (JAX's layout)."""
    out_shape = tuple(get_aval(mat).shape[:-1])
    blocks, start = [], 0
    for x in in_leaves:
        xs = get_aval(x).shape
        size = math.prod(map(int, xs))
        blocks.append(_result(ops.reshape(mat[..., start:start + size], out_shape + xs)))
        start += size
    return tree_unflatten(in_tree, blocks)


def _add_axis(tree, where):
    """Every leaf with a new axis of size 1 at the front (0) or the back (-1), as the vmap
    over a one-element basis would have made it."""
    leaves, t = tree_flatten(tree)
    shapes = [get_aval(x).shape for x in leaves]
    return tree_unflatten(t, [ops.reshape(x, (1,) + s if where == 0 else s + (1,))
                              for x, s in zip(leaves, shapes)])


def _check_complex(name, holomorphic, leaves, what, real_only):
    """A Jacobian with respect to (or of) complex values is a complex matrix only for a
    holomorphic function; otherwise forward and reverse mode would silently disagree
    (d/dx against d/dx - i d/dy), so complex values need `holomorphic=True` where JAX asks
    for it: jacfwd's inputs, jacrev's outputs. (Inputs: see also _check_inputs.)"""
    for x in leaves:
        dt = get_aval(x).dtype
        if holomorphic and dt.kind != "c":
            raise FxadTypeError(f"{name}(holomorphic=True) needs complex {what}, got {dt}")
        if real_only and not holomorphic and dt.kind == "c":
            raise FxadTypeError(
                f"{name} needs real-valued {what}, got {dt}: unless f is holomorphic there is "
                f"no complex Jacobian. Pass holomorphic=True for a holomorphic f; otherwise "
                f"differentiate the real and imaginary parts as separate real values, or use "
                f"{'jvp' if name == 'jacfwd' else 'vjp'} directly.")


def jacfwd(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """Jacobian by forward mode: one vmap of jvp over the standard basis of the inputs."""
    return _jacfwd(f, argnums, has_aux, holomorphic, "jacfwd")


def _jacfwd(f, argnums, has_aux, holomorphic, name):
    _check_callable(name, f)

    def jac(*args, **kwargs):
        single, nums = _argnums_split(name, args, argnums)
        flat_in, in_tree = tree_flatten(args[nums[0]] if single else
                                        tuple(args[i] for i in nums))
        flat_in = [_leaf(x) for x in flat_in]
        _check_inputs(name, tuple(args[i] for i in nums), nums, flat_in, holomorphic, "jvp")
        _check_complex(name, holomorphic, flat_in, "inputs", real_only=True)
        primal = tree_unflatten(in_tree, flat_in)
        g = _partial(f, args, nums, kwargs)
        call = g if single else (lambda d: g(*d))
        basis, _ = _std_basis(flat_in)

        def push(*tangent_leaves):
            res = _jvp(call, (primal,), (tree_unflatten(in_tree, list(tangent_leaves)),),
                       has_aux, name)
            return (res[1], res[2]) if has_aux else res[1]
        if sum(b.shape[0] for b in basis) == 1:  # one scalar input: no vmap level needed
            touts = push(*[b[0] for b in basis])
            touts, aux = touts if has_aux else (touts, None)
            touts = _add_axis(touts, -1)
        else:
            touts = vmap(push, out_axes=(-1, None) if has_aux else -1)(*basis)
            touts, aux = touts if has_aux else (touts, None)
        flat_t, out_tree = tree_flatten(touts)  # each: out_shape + (n,)
        _check_complex(name, holomorphic, flat_t, "outputs", real_only=False)
        jac_tree = tree_unflatten(out_tree, [_blocks(t, flat_in, in_tree) for t in flat_t])
        return (jac_tree, aux) if has_aux else jac_tree
    return jac


def jacrev(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """Jacobian by reverse mode: one vmap of the pullback over the basis of the outputs."""
    _check_callable("jacrev", f)

    def jac(*args, **kwargs):
        single, nums = _argnums_split("jacrev", args, argnums)
        dyn = tuple(args[i] for i in nums)
        flat_p, tree_p = tree_flatten(dyn)
        flat_p = [_leaf(p) for p in flat_p]
        _check_inputs("jacrev", dyn, nums, flat_p, holomorphic)
        res = _vjp_leaves(_partial(f, args, nums, kwargs), flat_p, tree_p, has_aux, "jacrev")
        out, f_vjp = res[0], res[1]
        flat_out, out_tree = tree_flatten(out)
        flat_out = [_leaf(o) for o in flat_out]
        _check_complex("jacrev", holomorphic, flat_out, "outputs", real_only=True)
        basis, _ = _std_basis(flat_out)
        if sum(b.shape[0] for b in basis) == 1:  # one scalar output (a gradient): no vmap
            cts = _add_axis(f_vjp(tree_unflatten(out_tree, [b[0] for b in basis])), 0)
        else:
            cts = vmap(lambda *b: f_vjp(tree_unflatten(out_tree, list(b))))(*basis)
        flat_ct, in_tree = tree_flatten(cts[0] if single else cts)  # each: (m, *in_shape)
        rows, start = [], 0
        for o in flat_out:  # rows start:start+size of every block belong to output leaf o
            os = get_aval(o).shape
            size = math.prod(map(int, os))
            rows.append(tree_unflatten(in_tree, [
                _result(ops.reshape(c[start:start + size], os + get_aval(c).shape[1:]))
                for c in flat_ct]))
            start += size
        jac_tree = tree_unflatten(out_tree, rows)
        return (jac_tree, res[2]) if has_aux else jac_tree
    return jac


def hessian(f: Callable, argnums: Argnums = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """jacfwd(jacrev(f)): forward over reverse. With `has_aux`, f returns (output, aux) and
    the result is (hessian, aux).

    >>> import fxad, fxad.numpy as fnp
    >>> print(fxad.hessian(lambda x: x[0] ** 2 * x[1])(fnp.array([1.0, 2.0])))
    [[4. 2.]
     [2. 0.]]
    """
    _check_callable("hessian", f)
    h = _jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                has_aux, holomorphic, "hessian")

    def hess(*args, **kwargs):
        _argnums_split("hessian", args, argnums)  # so a bad argnums error names hessian
        return h(*args, **kwargs)
    return hess


def hvp(f: Callable, primals: Sequence, tangents: Sequence) -> Any:
    """Hessian-vector product H·v by forward over reverse, without forming H. Returns the
    product with the structure of `primals` (a tuple, one entry per argument)."""
    _check_callable("hvp", f)
    _check_tuple("hvp", "primals", primals)
    _check_tuple("hvp", "tangents", tangents)
    g = grad(f, argnums=tuple(range(len(primals))))
    return _jvp(g, tuple(primals), tuple(tangents), False, "hvp")[1]
