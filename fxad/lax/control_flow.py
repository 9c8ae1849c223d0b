"""Structured control flow: cond, switch, while_loop, fori_loop and scan (the constructs of
fxad/control_flow.py), and lax.map and associative_scan built on them."""
from __future__ import annotations

import builtins
from typing import Any, Callable

from ..api.batching import vmap
from ..control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from ..errors import FxadTypeError, FxadValueError
from ..rules import ops
from ..rules.helpers import shape_of
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from ._axes import _axis, _ndim
from .shapes import expand_dims


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """[f(x) for x along the leading axis of xs], stacked: a scan with no carry. With
    `batch_size`, f is vmapped over chunks of that many (the remainder in one more chunk)."""
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    leaves = tree_flatten(xs)[0]
    n = shape_of(leaves[0])[0] if leaves else 0
    b = int(batch_size)
    full_n = n - n % b
    out = None
    if full_n:
        chunks = tree_map(lambda x: ops.reshape(x[:full_n], (full_n // b, b) +
                                                tuple(shape_of(x)[1:])), xs)
        out = scan(lambda c, x: (c, vmap(f)(x)), None, chunks)[1]
        out = tree_map(lambda y: ops.reshape(y, (full_n,) + tuple(shape_of(y)[2:])), out)
    if full_n < n:
        rest = vmap(f)(tree_map(lambda x: x[full_n:], xs))
        out = rest if out is None else tree_map(lambda a, r: ops.concatenate([a, r], 0),
                                                out, rest)
    return out


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """All prefix combinations [e0, fn(e0, e1), fn(fn(e0, e1), e2), ...] along `axis` for an
    associative `fn` (applied to whole slices of the pytree `elems`), in O(log n) rounds:
    pairs are combined, their prefixes found recursively, and the even positions filled in."""
    leaves, tree = tree_flatten(elems)
    if not leaves:
        return elems
    nd = _ndim(leaves[0])
    axis = _axis(axis, nd)
    n = shape_of(leaves[0])[axis]
    if any(shape_of(x)[axis] != n for x in leaves):
        raise FxadValueError("associative_scan: every leaf needs the same length along axis")

    def sl(xs, start, stop, step=1):
        return [ops.getitem(x, (builtins.slice(None),) * axis +
                            (builtins.slice(start, stop, step),)) for x in xs]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        got, got_tree = tree_flatten(out)
        if got_tree != tree:
            raise FxadTypeError(f"associative_scan: fn returned {got_tree}, but the elements "
                                f"are {tree}; it must return their structure")
        return got

    def interleave(even, odd, m):
        out = []
        for e, o in zip(even, odd):
            if shape_of(o)[axis] < shape_of(e)[axis]:  # one more even: pad odd, trim after
                o = ops.concatenate([o, ops.getitem(e, (builtins.slice(None),) * axis +
                                                    (builtins.slice(0, 1),))], axis)
            s = list(shape_of(e))
            both = ops.concatenate([expand_dims(e, (axis + 1,)), expand_dims(o, (axis + 1,))],
                                   axis + 1)
            s[axis] *= 2
            flat = ops.reshape(both, tuple(s))
            out.append(ops.getitem(flat, (builtins.slice(None),) * axis +
                                   (builtins.slice(0, m),)))
        return out

    def scan_(xs, m):
        if m < 2:
            return xs
        odd = scan_(combine(sl(xs, 0, m - 1, 2), sl(xs, 1, m, 2)), m // 2)
        if m % 2 == 0:
            even = combine(sl(odd, 0, m // 2 - 1), sl(xs, 2, m, 2))
        else:
            even = combine(odd, sl(xs, 2, m, 2))
        even = [ops.concatenate([a, b], axis) for a, b in zip(sl(xs, 0, 1), even)]
        return interleave(even, odd, m)

    if reverse:
        leaves = [ops.flip(x, (axis,)) for x in leaves]
    out = scan_(leaves, n)
    if reverse:
        out = [ops.flip(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop", "map", "associative_scan"]
