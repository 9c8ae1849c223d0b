"""`dot_general`: the one contraction primitive behind dot, matmul, tensordot, einsum, inner,
outer. dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)); the output
is (batch dims, lhs free dims, rhs free dims), each in operand order. It always runs on BLAS
(tensordot / matmul), and it is bilinear: its transposes are dot_generals too.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import Primitive, ShapedArray
from ...errors import FxadValueError
from ..helpers import bdim_to_front
from ..helpers import defbilinear, shape_of
from .. import ops


def _free(nd, contract, batch):
    return [i for i in range(nd) if i not in contract and i not in batch]


def fast_form(dimension_numbers, lnd, rnd):
    """The matrix-product forms BLAS takes directly, without tensordot's reshapes: 'ab'
    (a @ b), 'abT' (a @ b.T), 'aTb' (a.T @ b), 'outer'; None for anything else. Shared with
    the code generator, so eager and jitted programs run the same calls."""
    (lc, rc), (lb, _) = dimension_numbers
    if lb or lnd > 2 or rnd > 2:
        return None
    if lc == (lnd - 1,) and rc == (0,) and lnd >= 1 and rnd >= 1:
        return "ab"
    if lnd >= 1 and rnd == 2 and lc == (lnd - 1,) and rc == (1,):
        return "abT"
    if lnd == 2 and lc == (0,) and rc == (0,) and rnd >= 1:
        return "aTb"
    if not lc and lnd == 1 and rnd == 1:
        return "outer"
    return None


def matrix_form(dimension_numbers, lshape, rshape):
    """(M, K, N, lhs_transposed, rhs_transposed) when a contraction of operands past rank 2
    is one matrix product of the operands reshaped to 2-D in C order: the lhs's contracted
    dims trail it in order (lhs as (M, K)) or lead it in order (lhs as (K, M), read
    transposed: the weight cotangent x.T @ ct of a product x @ W whose x has leading batch
    axes), and the rhs's lead it in order (rhs as (K, N)) or are the last dim of a matrix rhs
    (rhs.T). None otherwise (and when a size is 0). Batch dims lead both operands and are
    not counted. Shared with the numba backend, so both backends make the same matmul call
    on the same arrays."""
    (lc, rc), (lb, rb) = dimension_numbers
    nb = len(lb)
    if lb != tuple(range(nb)) or rb != lb or lshape[:nb] != rshape[:nb]:
        return None
    lshape, rshape = lshape[nb:], rshape[nb:]
    lnd, nc = len(lshape), len(lc)
    if not lc or max(lnd, len(rshape)) <= 2:
        return None
    lc = tuple(i - nb for i in lc)
    if lc == tuple(range(lnd - nc, lnd)):
        ta, k_dims = False, lshape[lnd - nc:]
    elif lc == tuple(range(nc)):
        ta, k_dims = True, lshape[:nc]
    else:
        return None
    K = math.prod(k_dims)
    M = math.prod(lshape) // K if K else 0
    rc = tuple(i - nb for i in rc)
    if rc == tuple(range(nc)):
        N, t = math.prod(rshape[nc:]), False
    elif len(rshape) == 2 and rc == (1,):
        N, t = rshape[0], True
    else:
        return None
    return None if 0 in (M, K, N) else (M, K, N, ta, t)


def _matrix_product(lhs, rhs, dimension_numbers, form):
    """dot_general by one matmul on C-ordered 2-D (or stacked 2-D) views (see matrix_form):
    a copy only for an operand that is not C-contiguous."""
    M, K, N, ta, t = form
    nb = len(dimension_numbers[1][0])
    bshape = lhs.shape[:nb]
    if ta:  # (K, M) read transposed: BLAS takes the transpose without a copy
        a = np.swapaxes(np.ascontiguousarray(lhs).reshape(bshape + (K, M)), -1, -2)
    else:
        a = np.ascontiguousarray(lhs).reshape(bshape + (M, K))
    if t:  # (a batched rhs C-ordered first, as the numba backend reshapes it)
        b = np.swapaxes(np.ascontiguousarray(rhs) if nb else rhs, -1, -2)
    else:
        b = np.ascontiguousarray(rhs).reshape(bshape + (K, N))
    nc = len(dimension_numbers[0][0])
    lfree = lhs.shape[nb + nc:] if ta else lhs.shape[nb:lhs.ndim - nc]
    rfree = rhs.shape[nb + nc:] if not t else rhs.shape[nb:nb + 1]
    return np.matmul(a, b).reshape(bshape + lfree + rfree)


_FAST = {"ab": lambda a, b: a @ b, "abT": lambda a, b: a @ b.T,
         "aTb": lambda a, b: a.T @ b, "outer": np.multiply.outer}


def diagonal_of(m):
    """The diagonal of a square float matrix that is diagonal, else None. Eager jacfwd and
    jacrev push identity bases through programs, which turns products with the Jacobian's
    factors into products with diagonal matrices; scaling rows or columns instead is O(n^2)
    rather than O(n^3). A dense matrix fails the corner probe at once, so the test is cheap."""
    n = m.shape[0]
    if n < 16 or m.shape[1] != n or m.dtype.kind not in "fc" or \
            m[0, 1] != 0 or m[1, 0] != 0 or m[0, n - 1] != 0 or m[n - 1, 0] != 0:
        return None
    d = m.diagonal()
    return d if np.count_nonzero(m) == np.count_nonzero(d) else None  # NaN counts as nonzero


def _matmul_diag(form, a, b):
    """a @ b (form 'ab' / 'abT' / 'aTb') when one factor is a diagonal matrix and the other
    is finite (so no 0 * inf would have made a NaN); None otherwise."""
    if a.ndim != 2 or b.ndim != 2:
        return None
    da = diagonal_of(a)
    if da is not None and np.isfinite(b).all():  # diag(da) @ op(b): scale op(b)'s rows
        return da[:, None] * (b.T if form == "abT" else b)
    db = diagonal_of(b)
    if db is not None and np.isfinite(a).all():  # op(a) @ diag(db): scale op(a)'s columns
        return (a.T if form == "aTb" else a) * db
    return None


def _dot_general_impl(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if not lb:
        form = fast_form(dimension_numbers, lhs.ndim, rhs.ndim)
        if form is not None:
            if form != "outer":
                out = _matmul_diag(form, lhs, rhs)
                if out is not None:
                    return out.astype(np.result_type(lhs, rhs), copy=False)
            return _FAST[form](lhs, rhs)
        mform = matrix_form(dimension_numbers, lhs.shape, rhs.shape)
        if mform is not None:
            return _matrix_product(lhs, rhs, dimension_numbers, mform)
        return np.tensordot(lhs, rhs, (lc, rc))
    lf, rf = _free(lhs.ndim, lc, lb), _free(rhs.ndim, rc, rb)
    bshape = tuple(lhs.shape[i] for i in lb)
    lfs, rfs = [lhs.shape[i] for i in lf], [rhs.shape[i] for i in rf]
    if not lc:  # nothing to sum (e.g. per-example outer products): a broadcasting multiply
        a = np.transpose(lhs, lb + tuple(lf)).reshape(bshape + tuple(lfs) + (1,) * len(rfs))
        b = np.transpose(rhs, rb + tuple(rf)).reshape(bshape + (1,) * len(lfs) + tuple(rfs))
        return np.multiply(a, b)
    mform = matrix_form(dimension_numbers, lhs.shape, rhs.shape)
    if mform is not None:
        return _matrix_product(lhs, rhs, dimension_numbers, mform)
    k = math.prod([lhs.shape[i] for i in lc])
    a = np.transpose(lhs, lb + tuple(lf) + lc).reshape(bshape + (math.prod(lfs), k))
    b = np.transpose(rhs, rb + rc + tuple(rf)).reshape(bshape + (k, math.prod(rfs)))
    return np.matmul(a, b).reshape(bshape + tuple(lfs) + tuple(rfs))


_shape_memo = {}


def _dot_general_shape(lhs, rhs, dimension_numbers):
    """Memoized by operand types and dimension numbers (a program sees few of them)."""
    key = (lhs.shape, lhs.dtype, rhs.shape, rhs.dtype, dimension_numbers)
    try:
        out = _shape_memo.get(key)
    except TypeError:  # dimension numbers given as lists: not memoized
        return _dot_general_shape_of(lhs, rhs, dimension_numbers)
    if out is None:
        out = _dot_general_shape_of(lhs, rhs, dimension_numbers)
        if len(_shape_memo) < 4096:
            _shape_memo[key] = out
    return out


def _dot_general_shape_of(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lc) != len(rc) or len(lb) != len(rb) or \
            any(lhs.shape[i] != rhs.shape[j] for i, j in zip(lc + lb, rc + rb)):
        raise FxadValueError(f"dot_general: incompatible shapes {lhs.shape} and {rhs.shape} "
                             f"for dimension_numbers {dimension_numbers}")
    shape = tuple(lhs.shape[i] for i in lb) + \
        tuple(lhs.shape[i] for i in _free(lhs.ndim, lc, lb)) + \
        tuple(rhs.shape[i] for i in _free(rhs.ndim, rc, rb))
    return ShapedArray(shape, np.result_type(lhs.dtype, rhs.dtype))


def _transpose_lhs(ct, lhs_aval, rhs, dimension_numbers):
    """Cotangent of the lhs: contract ct's rhs-free dims with rhs's, then reorder the result
    (batch, lhs free, rhs contract dims in rhs order) into the lhs's own axis order."""
    (lc, rc), (lb, rb) = dimension_numbers
    nd, rnd = len(lhs_aval.shape), len(shape_of(rhs))
    lf, rf = _free(nd, lc, lb), _free(rnd, rc, rb)
    nb = len(lb)
    ct_rf = tuple(range(nb + len(lf), nb + len(lf) + len(rf)))
    out = dot_general(ct, rhs, ((ct_rf, tuple(rf)), (tuple(range(nb)), rb)))
    rc_sorted = sorted(rc)
    pos = {}
    for i, d in enumerate(lb):
        pos[d] = i
    for i, d in enumerate(lf):
        pos[d] = nb + i
    for c_l, c_r in zip(lc, rc):
        pos[c_l] = nb + len(lf) + rc_sorted.index(c_r)
    return ops.transpose(out, tuple(pos[d] for d in range(nd)))


def _swap(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return (rc, lc), (rb, lb)


_AB, _ABT, _ATB = (((1,), (0,)), ((), ())), (((1,), (1,)), ((), ())), (((0,), (0,)), ((), ()))
_OUTER = (((), ()), ((), ()))
_VM, _VMT = (((0,), (0,)), ((), ())), (((0,), (1,)), ((), ()))  # vector @ matrix (.T)
# a @ b for matrices and vectors, the common cases: each cotangent is one product, chosen by
# the ranks of (a, b), where the generic path below would add axis transposes. A vector
# cotangent stays the left operand, as in the generic path, so that under vmap (jacrev's
# basis) the batch axis leads and an identity basis meets `diagonal_of`.
_MATMUL_CT_LHS = {(2, 2): lambda ct, b: dot_general(ct, b, _ABT),    # ct @ b.T
                  (2, 1): lambda ct, b: dot_general(ct, b, _OUTER),  # outer(ct, b)
                  (1, 2): lambda ct, b: dot_general(ct, b, _VMT)}    # ct @ b.T
_MATMUL_CT_RHS = {(2, 2): lambda a, ct: dot_general(a, ct, _ATB),    # a.T @ ct
                  (2, 1): lambda a, ct: dot_general(ct, a, _VM),     # ct @ a
                  (1, 2): lambda a, ct: dot_general(a, ct, _OUTER)}  # outer(a, ct)


def _ct_lhs(ct, lhs, rhs, dimension_numbers):
    ranks = (len(lhs.shape), len(shape_of(rhs)))
    if dimension_numbers == _AB and ranks in _MATMUL_CT_LHS:
        ct_l = _MATMUL_CT_LHS[ranks](ct, rhs)
    else:
        ct_l = _transpose_lhs(ct, lhs, rhs, dimension_numbers)
    return ops.convert_element_type(ct_l, lhs.dtype)


def _ct_rhs(ct, lhs, rhs, dimension_numbers):
    ranks = (len(shape_of(lhs)), len(rhs.shape))
    if dimension_numbers == _AB and ranks in _MATMUL_CT_RHS:
        return ops.convert_element_type(_MATMUL_CT_RHS[ranks](lhs, ct), rhs.dtype)
    (lc, rc), (lb, rb) = dimension_numbers
    nb = len(lb)
    lf = _free(len(shape_of(lhs)), lc, lb)
    nlf = len(lf)
    nd = len(shape_of(ct))
    # lhs's free dims against ct's (which lead it after the batch dims): when that is one
    # matrix product (x.T @ ct for x @ W with x of rank 3 or more), no operand is transposed
    # into a copy; the result is (batch, lhs contracted dims in lhs order, rhs free dims)
    dn = ((tuple(lf), tuple(range(nb, nb + nlf))), (lb, tuple(range(nb))))
    if nlf and matrix_form(dn, shape_of(lhs), shape_of(ct)) is not None:
        out = dot_general(lhs, ct, dn)
        rf = _free(len(rhs.shape), rc, rb)
        lc_sorted = sorted(lc)
        pos = {d: i for i, d in enumerate(rb)}
        pos.update((d, nb + len(lc) + i) for i, d in enumerate(rf))
        pos.update((c_r, nb + lc_sorted.index(c_l)) for c_l, c_r in zip(lc, rc))
        return ops.convert_element_type(ops.transpose(out, tuple(pos[d] for d in
                                                               range(len(rhs.shape)))),
                                        rhs.dtype)
    # the lhs computation with the operands swapped; ct's layout swaps its free blocks
    perm = tuple(range(nb)) + tuple(range(nb + nlf, nd)) + tuple(range(nb, nb + nlf))
    ct_r = _transpose_lhs(ops.transpose(ct, perm), rhs, lhs, _swap(dimension_numbers))
    return ops.convert_element_type(ct_r, rhs.dtype)


def _dot_general_batch(vals, dims, dimension_numbers):
    (lhs, rhs), (ld, rd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda axes: tuple(a + 1 for a in axes)
    if ld is not None and rd is not None:  # both batched: a new leading batch dimension
        lhs, rhs = bdim_to_front(lhs, ld), bdim_to_front(rhs, rd)
        return dot_general(lhs, rhs, ((shift(lc), shift(rc)), ((0,) + shift(lb),
                                                               (0,) + shift(rb)))), 0
    if ld is not None:  # the batch axis becomes the first lhs free dim
        lhs = bdim_to_front(lhs, ld)
        return dot_general(lhs, rhs, ((shift(lc), rc), (shift(lb), rb))), len(lb)
    rhs = bdim_to_front(rhs, rd)
    out = dot_general(lhs, rhs, ((lc, shift(rc)), (lb, shift(rb))))
    return out, len(lb) + len(_free(len(shape_of(lhs)), lc, lb))


dot_general_p = Primitive("dot_general", memory="fresh")
dot_general_p.def_impl(_dot_general_impl)
dot_general_p.def_abstract_eval(_dot_general_shape)
defbilinear(dot_general_p, _ct_lhs, _ct_rhs)
dot_general_p.def_batch(_dot_general_batch)
def _dot_general_lowering(ctx, args, dimension_numbers):
    """The matrix-product forms as operators, for the ranks the equation has (the impl picks
    the same forms at run time); other contractions call the impl."""
    form = fast_form(dimension_numbers, *ctx.ranks)
    a, b = args
    return {"ab": f"{a} @ {b}", "abT": f"{a} @ {b}.T", "aTb": f"{a}.T @ {b}",
            "outer": f"_np.multiply.outer({a}, {b})"}.get(form)
dot_general_p.def_lowering(_dot_general_lowering)
def _dot_general_numba(ctx, args, dimension_numbers):
    """Matrix products by NumPy's own matmul loop (the BLAS call `a @ b` makes: the NumPy
    backend's result bit for bit), also per batch element; products with nothing to sum
    (outer, per-example) as one exact loop; any other contraction falls back."""
    (lc, rc), (lb, rb) = dimension_numbers
    la, ra = ctx.in_avals
    if not lc:
        return _products_numba(ctx, args, dimension_numbers)
    if la.dtype != ra.dtype:
        return None
    a, b = args
    mform = matrix_form(dimension_numbers, la.shape, ra.shape)
    if mform is not None:
        return _matrix_product_numba(ctx, a, b, len(lb), mform)
    if not lb:
        form = fast_form(dimension_numbers, *ctx.ranks)
        return ctx.matmul(a, b, ta=form == "aTb", tb=form == "abT") if form in _MATMUL else None
    form = fast_form(((tuple(i - 1 for i in lc), tuple(i - 1 for i in rc)), ((), ())),
                     len(la.shape) - 1, len(ra.shape) - 1)
    if lb != (0,) or rb != (0,) or form not in _MATMUL:
        return None
    out = ctx.out_avals[0]
    r, i = ctx.fresh("d"), ctx.fresh("i")
    ctx.emit(f"{r} = _np.empty({out.shape!r}, {ctx.dtype(out.dtype)})")
    ctx.emit(f"for {i} in range({out.shape[0]}):")
    with ctx.indent():
        ok = ctx.matmul_into(f"{r}[{i}]", f"{a}[{i}]", f"{b}[{i}]", la.shape[1:], ra.shape[1:],
                             ta=form == "aTb", tb=form == "abT")
    return r if ok and out.shape[1:] else None
_MATMUL = ("ab", "abT", "aTb")
def _matrix_product_numba(ctx, a, b, nb, form):
    """The impl's _matrix_product: one matmul on C-ordered 2-D views (per batch element
    when batch dims lead), the same arrays NumPy's matmul loop gets from the impl."""
    M, K, N, ta, t = form
    la, ra = ctx.in_avals
    out = ctx.out_avals[0]
    if out.dtype.char not in "fdFD":
        return None
    B = math.prod(la.shape[:nb])
    a2, r = ctx.fresh("m"), ctx.fresh("d")
    ctx.emit(f"{a2} = _np.ascontiguousarray({a}).reshape(({B}, {K}, {M}))" if ta else
             f"{a2} = _np.ascontiguousarray({a}).reshape(({B}, {M}, {K}))")
    if t:
        b2 = ctx.fresh("m")
        ctx.emit(f"{b2} = _np.ascontiguousarray({b}).reshape(({B}, {N}, {K}))" if nb
                 else f"{b2} = {b}")
    else:
        b2 = ctx.fresh("m")
        ctx.emit(f"{b2} = _np.ascontiguousarray({b}).reshape(({B}, {K}, {N}))")
    ctx.emit(f"{r} = _np.empty(({B}, {M}, {N}), {ctx.dtype(out.dtype)})")
    i = ctx.fresh("i")
    ctx.emit(f"for {i} in range({B}):")
    with ctx.indent():
        ok = ctx.matmul_into(f"{r}[{i}]", f"{a2}[{i}]", f"{b2}[{i}]" if (nb or not t) else b2,
                             (K, M) if ta else (M, K), (N, K) if t else (K, N), ta=ta, tb=t)
    return f"{r}.reshape({out.shape!r})" if ok else None
def _products_numba(ctx, args, dimension_numbers):
    """out[batch, lhs free, rhs free] = lhs[...] * rhs[...]: one rounding, as NumPy's."""
    (_, _), (lb, rb) = dimension_numbers
    la, ra = ctx.in_avals
    out = ctx.out_avals[0]
    if out.dtype.kind not in "iuf":
        return None
    lf, rf = _free(len(la.shape), (), lb), _free(len(ra.shape), (), rb)
    nb, nlf = len(lb), len(lf)
    lidx = [f"_d{lb.index(i)}" if i in lb else f"_d{nb + lf.index(i)}" for i in range(len(la.shape))]
    ridx = [f"_d{rb.index(i)}" if i in rb else f"_d{nb + nlf + rf.index(i)}"
            for i in range(len(ra.shape))]
    conv = lambda x: x if out.dtype == np.float64 else f"{ctx.dtype(out.dtype)}({x})"  # noqa: E731
    a = conv(f"{args[0]}[{', '.join(lidx)}]" if lidx else args[0])
    b = conv(f"{args[1]}[{', '.join(ridx)}]" if ridx else args[1])
    if not out.shape:
        return conv(f"{a} * {b}")
    r = ctx.fresh("d")
    ctx.emit(f"{r} = _np.empty({out.shape!r}, {ctx.dtype(out.dtype)})")
    for k, n in enumerate(out.shape):
        ctx.emit("    " * k + f"for _d{k} in range({n}):")
    index = ", ".join(f"_d{k}" for k in range(len(out.shape)))
    ctx.emit("    " * len(out.shape) + f"{r}[{index}] = {conv(f'{a} * {b}')}")
    return r
dot_general_p.def_lowering(_dot_general_numba, backend="numba")
def _dot_general_diagonal(e, ctx):
    """Staged twin of the impl's `diagonal_of`: a product with a tracked diagonal matrix
    (see fxad/ir/simplify.py's diagonal pass) is a scaling of rows or columns."""
    out = e.outvars[0].aval
    (lc, rc), (lb, _) = e.params["dimension_numbers"]
    a, b = e.invars
    if lb or len(lc) != 1:
        return
    da, db = ctx.diagonal(a), ctx.diagonal(b)
    if da is not None and b.aval.dtype == out.dtype and rc == (0,) and b.aval.shape:
        if da.aval.shape:  # diag(v) @ B: scale B's rows
            shape = da.aval.shape + (1,) * (len(b.aval.shape) - 1)
            da = ctx.emit(ops.reshape_p, [da], shape, out.dtype, new_shape=shape)
        ctx.replace(e.outvars[0], ctx.emit(ops.mul_p, [da, b], out.shape, out.dtype))
    elif db is not None and a.aval.dtype == out.dtype and lc == (len(a.aval.shape) - 1,):
        ctx.replace(e.outvars[0], ctx.emit(ops.mul_p, [a, db], out.shape, out.dtype))
dot_general_p.def_simplify("diagonal", _dot_general_diagonal)
def dot_general(lhs, rhs, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn)


# the bind wrappers fxad.lax exports (through rules/ops.py)
__all__ = ["dot_general"]
