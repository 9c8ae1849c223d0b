"""dot, matmul, tensordot, inner, outer, einsum: all lowered to the `dot_general` primitive."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..errors import FxadValueError
from .manipulation import ndim, ravel, shape, squeeze


def matmul(a, b):
    if ndim(a) == 0 or ndim(b) == 0:
        raise FxadValueError("matmul: operands must not be 0-d (use multiply)")
    a1, b1 = ndim(a) == 1, ndim(b) == 1
    if (a1 and ndim(b) <= 2) or (b1 and ndim(a) == 2):  # vector cases: one contraction
        return lax.dot_general(a, b, (((ndim(a) - 1,), (0,)), ((), ())))
    if a1:
        a = lax.reshape(a, (1,) + shape(a))
    if b1:
        b = lax.reshape(b, shape(b) + (1,))
    batch = np.broadcast_shapes(shape(a)[:-2], shape(b)[:-2])
    a = lax.broadcast_to(a, batch + shape(a)[-2:])
    b = lax.broadcast_to(b, batch + shape(b)[-2:])
    nb = len(batch)
    out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))
    if a1:
        out = squeeze(out, -2)
    if b1:
        out = squeeze(out, -1)
    return out


def dot(a, b):
    if ndim(a) == 0 or ndim(b) == 0:
        return lax.mul(a, b)
    rc = 0 if ndim(b) == 1 else ndim(b) - 2
    return lax.dot_general(a, b, (((ndim(a) - 1,), (rc,)), ((), ())))


def tensordot(a, b, axes=2):
    if isinstance(axes, (int, np.integer)):
        ac = tuple(range(ndim(a) - int(axes), ndim(a)))
        bc = tuple(range(int(axes)))
    else:
        ac, bc = axes
        ac = (ac,) if isinstance(ac, int) else tuple(ac)
        bc = (bc,) if isinstance(bc, int) else tuple(bc)
        ac = tuple(x % ndim(a) for x in ac)
        bc = tuple(x % ndim(b) for x in bc)
    return lax.dot_general(a, b, ((ac, bc), ((), ())))


def inner(a, b):
    if ndim(a) == 0 or ndim(b) == 0:
        return lax.mul(a, b)
    return lax.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())))


def outer(a, b):
    return lax.dot_general(ravel(a), ravel(b), (((), ()), ((), ())))


def vdot(a, b):
    return lax.dot_general(ravel(a), ravel(b), (((0,), (0,)), ((), ())))


def _parse_einsum(spec, n):
    spec = spec.replace(" ", "")
    if "." in spec:
        raise FxadValueError("einsum: '...' (ellipsis) subscripts are not supported yet; "
                             "write the axes out explicitly")
    ins, _, out = spec.partition("->")
    ins = ins.split(",")
    if len(ins) != n:
        raise FxadValueError(f"einsum: {len(ins)} operand subscripts for {n} operands")
    if not _:
        counts = {c: sum(s.count(c) for s in ins) for c in set("".join(ins))}
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    for s in ins:
        if len(set(s)) != len(s):
            raise FxadValueError(f"einsum: repeated subscripts within one operand ('{s}', a "
                                 "diagonal) are not supported yet; use fxad.numpy.diagonal")
    return ins, out


def _sum_out(x, idx, keep):
    """Sum the axes of x whose index letters are not in `keep`."""
    axes = tuple(i for i, c in enumerate(idx) if c not in keep)
    if axes:
        x = lax.reduce_sum(x, axes)
        idx = "".join(c for c in idx if c in keep)
    return x, idx


def _einsum_pair(a, ai, b, bi, keep):
    a, ai = _sum_out(a, ai, set(bi) | keep)
    b, bi = _sum_out(b, bi, set(ai) | keep)
    batch = [c for c in ai if c in bi and c in keep]
    contract = [c for c in ai if c in bi and c not in keep]
    dn = ((tuple(ai.index(c) for c in contract), tuple(bi.index(c) for c in contract)),
          (tuple(ai.index(c) for c in batch), tuple(bi.index(c) for c in batch)))
    out = lax.dot_general(a, b, dn)
    idx = "".join(batch) + "".join(c for c in ai if c not in bi) + \
        "".join(c for c in bi if c not in ai)
    return out, idx


def einsum(subscripts, *operands):
    """Einstein summation, contracted pairwise left to right with dot_general."""
    ins, out = _parse_einsum(subscripts, len(operands))
    cur, idx = operands[0], ins[0]
    for k in range(1, len(operands)):
        keep = set(out).union(*ins[k + 1:])
        cur, idx = _einsum_pair(cur, idx, operands[k], ins[k], keep)
    cur, idx = _sum_out(cur, idx, set(out))
    return lax.transpose(cur, tuple(idx.index(c) for c in out))


def kron(a, b):
    a2, b2 = (lax.reshape(a, (1,) * (ndim(b) - ndim(a)) + shape(a)),
              lax.reshape(b, (1,) * (ndim(a) - ndim(b)) + shape(b)))
    nd = ndim(a2)
    letters = "abcdefghijklm"[:nd], "nopqrstuvwxyz"[:nd]
    out = einsum(f"{letters[0]},{letters[1]}->" + "".join(x + y for x, y in zip(*letters)),
                 a2, b2)
    return lax.reshape(out, tuple(p * q for p, q in zip(shape(a2), shape(b2))))


def cross(a, b, axis=-1):
    """3-vector cross products along `axis` (broadcasting), from components."""
    from .manipulation import moveaxis, stack
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    if shape(a)[-1] != 3 or shape(b)[-1] != 3:
        raise FxadValueError("fxad.numpy.cross supports 3-vectors only")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = [lax.sub(lax.mul(a1, b2), lax.mul(a2, b1)), lax.sub(lax.mul(a2, b0), lax.mul(a0, b2)),
         lax.sub(lax.mul(a0, b1), lax.mul(a1, b0))]
    return stack(c, -1)
