"""dot, matmul, tensordot, inner, outer, einsum: all lowered to the `dot_general` primitive.
JAX's `precision=` is checked and ignored, `preferred_element_type=` converts the operands
(fxad/lax/products.py)."""
from __future__ import annotations

import functools

import numpy as np

from .. import lax
from ..core import Tracer, get_aval
from ..errors import FxadValueError
from ..lax.products import to_preferred
from ..rules.contraction.dot import dot_general_p
from ..rules.helpers import dtype_of
from .manipulation import diagonal, moveaxis, ndim, ravel, shape, squeeze, stack
from ._lists import stack_traced_lists


_MATRIX_PRODUCT = (((1,), (0,)), ((), ()))


def _jax_keywords(first=0, last=2):
    """Decorator: JAX's `precision` and `preferred_element_type` of a product whose operands
    are its positional arguments first:last (lax.products.to_preferred); the product itself is
    written without them."""
    def deco(fun):
        @functools.wraps(fun)
        def product(*args, precision=None, preferred_element_type=None, **kw):
            if precision is None and preferred_element_type is None:
                return fun(*args, **kw)
            last_ = len(args) if last is None else last
            xs, finish = to_preferred(args[first:last_], preferred_element_type, precision,
                                      fun.__name__)
            return finish(fun(*args[:first], *xs, *args[last_:], **kw))
        return product
    return deco


def _rank(x):
    """The number of axes of an operand whose lists the caller has stacked."""
    return x.ndim if type(x) is np.ndarray else len(get_aval(x).shape)


@stack_traced_lists
@_jax_keywords()
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """The matrix product, as `numpy.matmul` (batched; vectors promoted);
    `precision`/`preferred_element_type` as JAX's; differentiable to any order."""
    return _matmul(a, b)


def matmul_operator(a, b):
    """`a @ b` with a traced operand: matmul without the keyword layer, stacking only when an
    operand is a list or tuple (which may hold traced values)."""
    if type(a) is list or type(a) is tuple or type(b) is list or type(b) is tuple:
        return matmul(a, b)
    return _matmul(a, b)


def _matmul(a, b):
    na, nb_ = _rank(a), _rank(b)
    if na == 0 or nb_ == 0:
        raise FxadValueError("matmul: operands must not be 0-d (use multiply)")
    if na == 2 and nb_ == 2:  # the common case: its dimension numbers already normal
        return dot_general_p.bind(a, b, dimension_numbers=_MATRIX_PRODUCT)
    a1, b1 = na == 1, nb_ == 1
    if (a1 and nb_ <= 2) or (b1 and na == 2):  # vector cases: one contraction
        return lax.dot_general(a, b, (((na - 1,), (0,)), ((), ())))
    if nb_ == 2:  # a stack of rows times one matrix (x @ W in a layer): one contraction,
        # not a broadcast W and a batched product (whose W gradient sums over the batch)
        return lax.dot_general(a, b, (((na - 1,), (0,)), ((), ())))
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


@stack_traced_lists
@_jax_keywords()
def dot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product, as `numpy.dot` (matrix product for 2-d, sum product over the last/second-
    to-last axes in general); `precision`/`preferred_element_type` as JAX's; differentiable to
    any order."""
    if ndim(a) == 0 or ndim(b) == 0:
        return lax.mul(a, b)
    rc = 0 if ndim(b) == 1 else ndim(b) - 2
    return lax.dot_general(a, b, (((ndim(a) - 1,), (rc,)), ((), ())))


@stack_traced_lists
@_jax_keywords()
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """The tensor dot product over `axes`, as NumPy's; `precision`/`preferred_element_type` as
    JAX's; differentiable to any order."""
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


@stack_traced_lists
@_jax_keywords()
def inner(a, b, *, precision=None, preferred_element_type=None):
    """The inner product over the last axes, as NumPy's; `precision`/`preferred_element_type` as
    JAX's; differentiable to any order."""
    if ndim(a) == 0 or ndim(b) == 0:
        return lax.mul(a, b)
    return lax.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())))


@stack_traced_lists
def outer(a, b):
    """The outer product of the flattened a and b, as NumPy's; differentiable to any order."""
    return lax.dot_general(ravel(a), ravel(b), (((), ()), ((), ())))


@stack_traced_lists
@_jax_keywords()
def vdot(a, b, *, precision=None, preferred_element_type=None):
    """sum(conj(a) * b) over the flattened operands (the first one is conjugated)."""
    a = ravel(a)
    if np.issubdtype(get_aval(a).dtype, np.complexfloating):
        a = lax.conj(a)
    return lax.dot_general(a, ravel(b), (((0,), (0,)), ((), ())))


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_letters(sub):
    """A sublist ([0, 1], [Ellipsis, 2]) as subscript letters: NumPy's mapping (0-25 -> A-Z,
    26-51 -> a-z), which keeps the implicit output in ascending order of the integers."""
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 <= s < 52:
            out.append(_LETTERS[int(s)])
        else:
            raise FxadValueError(f"einsum: subscripts in a sublist must be integers in "
                                 f"[0, 52) or Ellipsis, got {s!r}")
    return "".join(out)


def _interleaved(args):
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) -> ("AB,BC->AC", (a, b))."""
    operands, subs = args[0::2], args[1::2]
    out = None
    if len(args) % 2:  # a trailing output sublist
        operands, out = args[0:-1:2], args[-1]
    spec = ",".join(_sublist_letters(s) for s in subs)
    if out is not None:
        spec += "->" + _sublist_letters(out)
    return spec, tuple(operands)


def _parse_einsum(spec, operands):
    """(operand subscripts, output subscripts), with '...' spelled out in letters that the
    spec does not use (right-aligned, as NumPy broadcasts them)."""
    spec = spec.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    ins = ins.split(",")
    if len(ins) != len(operands):
        raise FxadValueError(f"einsum: {len(ins)} operand subscripts for {len(operands)} "
                             "operands")
    spare = [c for c in _LETTERS if c not in spec]
    n_ell = max([ndim(x) - len(s.replace("...", "")) for s, x in zip(ins, operands)
                 if "..." in s], default=0)
    ell = "".join(spare[:n_ell])
    ins = [s.replace("...", ell[n_ell - (ndim(x) - len(s.replace("...", ""))):])
           for s, x in zip(ins, operands)]
    if not arrow:  # NumPy's implicit output: broadcast axes, then letters used once, sorted
        counts = {c: sum(s.count(c) for s in ins) for c in set("".join(ins))}
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return ins, out


def _take_diagonals(x, idx):
    """Repeated letters within one operand ('ii') select its diagonal."""
    while len(set(idx)) != len(idx):
        c = next(c for c in idx if idx.count(c) > 1)
        p = idx.index(c)
        q = idx.index(c, p + 1)
        x = diagonal(x, 0, p, q)  # the diagonal becomes the last axis
        idx = "".join(ch for i, ch in enumerate(idx) if i not in (p, q)) + c
    return x, idx


def _broadcast_letters(operands, ins):
    """Size-1 axes broadcast against the same letter's size elsewhere (NumPy semantics)."""
    sizes = {}
    for x, s in zip(operands, ins):
        for c, n in zip(s, shape(x)):
            if n != 1:
                if sizes.get(c, n) != n:
                    raise FxadValueError(f"einsum: subscript '{c}' has sizes {sizes[c]} and {n}")
                sizes[c] = n
    out = []
    for x, s in zip(operands, ins):
        want = tuple(sizes.get(c, 1) for c in s)
        out.append(x if shape(x) == want else lax.broadcast_to(x, want))
    return out


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


@_jax_keywords(first=1, last=None)
def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation, contracted pairwise left to right with dot_general (optimize= is
    accepted and changes nothing). Both of NumPy's forms: a subscripts string, or operands
    interleaved with integer sublists, `einsum(a, [0, 1], b, [1, 2], [0, 2])`."""
    if out is not None:
        raise FxadValueError("einsum: out= is not supported (fxad returns new arrays)")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts,) + operands)
    ins, out = _parse_einsum(subscripts, operands)
    pairs = [_take_diagonals(x, s) for x, s in zip(operands, ins)]
    ins = [s for _, s in pairs]
    operands = _broadcast_letters([x for x, _ in pairs], ins)
    cur, idx = operands[0], ins[0]
    for k in range(1, len(operands)):
        keep = set(out).union(*ins[k + 1:])
        cur, idx = _einsum_pair(cur, idx, operands[k], ins[k], keep)
    cur, idx = _sum_out(cur, idx, set(out))
    return lax.transpose(cur, tuple(idx.index(c) for c in out))


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """(path, description) of a contraction order for `einsum(subscripts, *operands)`, as JAX's
    `einsum_path`: the path is a list of tuples of operand positions contracted in turn (the
    form `optimize=` takes), chosen by NumPy's `einsum_path` ('auto' and True: 'greedy'; False:
    all at once; 'optimal'; or a given path) from the operands' shapes and dtypes only, so
    traced operands are fine. The description is NumPy's text. fxad's `einsum` itself
    contracts pairwise left to right whatever `optimize` says (same values)."""
    if isinstance(optimize, str) and optimize == "auto":
        optimize = "greedy"
    elif isinstance(optimize, (list, tuple)) and optimize and optimize[0] != "einsum_path":
        optimize = ["einsum_path", *optimize]
    def stand_in(x):  # an array of x's shape and dtype (zero-strided: no memory)
        x = x if isinstance(x, Tracer) else np.asarray(x)
        return np.broadcast_to(np.zeros((), dtype_of(x)), shape(x))
    if isinstance(subscripts, str):
        args = [subscripts] + [stand_in(x) for x in operands]
    else:  # interleaved: array, sublist, array, sublist, ..., [output sublist]
        args = [x if i % 2 or i == len(operands) else stand_in(x)
                for i, x in enumerate((subscripts,) + operands)]
    path, info = np.einsum_path(*args, optimize=optimize)
    return [tuple(int(i) for i in step) for step in path[1:]], info


@stack_traced_lists
def kron(a, b):
    """The Kronecker product, as NumPy's; differentiable to any order in both."""
    a2, b2 = (lax.reshape(a, (1,) * (ndim(b) - ndim(a)) + shape(a)),
              lax.reshape(b, (1,) * (ndim(a) - ndim(b)) + shape(b)))
    nd = ndim(a2)
    letters = "abcdefghijklm"[:nd], "nopqrstuvwxyz"[:nd]
    out = einsum(f"{letters[0]},{letters[1]}->" + "".join(x + y for x, y in zip(*letters)),
                 a2, b2)
    return lax.reshape(out, tuple(p * q for p, q in zip(shape(a2), shape(b2))))


@stack_traced_lists
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross products of 2- or 3-vectors (NumPy's axes: the vectors lie along axisa of a,
    axisb of b, and the result's along axisc; `axis` sets all three). Two 2-vectors give
    the z component only, as in NumPy."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)  # (moveaxis takes array_likes)
    na, nb = shape(a)[-1], shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise FxadValueError("incompatible dimensions for cross product (dimension must be "
                             "2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = lax.sub(lax.mul(a0, b1), lax.mul(a1, b0))
    if na == 2 and nb == 2:
        return z
    a2 = a[..., 2] if na == 3 else None
    b2 = b[..., 2] if nb == 3 else None
    c0 = lax.neg(lax.mul(a2, b1)) if b2 is None else lax.mul(a1, b2) if a2 is None else \
        lax.sub(lax.mul(a1, b2), lax.mul(a2, b1))
    c1 = lax.mul(a2, b0) if b2 is None else lax.neg(lax.mul(a0, b2)) if a2 is None else \
        lax.sub(lax.mul(a2, b0), lax.mul(a0, b2))
    c0, c1, z = (lax.broadcast_to(v, np.broadcast_shapes(shape(c0), shape(c1), shape(z)))
                 for v in (c0, c1, z))
    return moveaxis(stack([c0, c1, z], -1), -1, axisc)
