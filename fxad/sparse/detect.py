"""Global sparsity detection: an `fxad.extend.Interpreter` over the program whose values are
dependency patterns (fxad/sparse/patterns.py), with one handler per primitive family and a
conservative default (every output element depends on everything every input depends on)
for any primitive no handler knows, so a new primitive is never a missed nonzero.

The handlers, by family:
- elementwise primitives (marked `elementwise`): broadcasting, element by element;
- data movement (reshape, transpose, broadcast, concatenate, flip, indexing, dynamic slices):
  the primitive's own impl run on arrays of element labels, so the detector and the
  primitive can never disagree on where an element goes; `scatter_add` by the same means;
- reductions over axes, cumulative scans along an axis, `dot_general` (masked by the
  nonzeros of a constant operand);
- calls (jit, custom_jvp/vjp functions) are entered; `cond` takes the union of its branches
  (the one branch when the index is a known constant); `scan` and `while_loop` iterate their
  body to a fixed point.
Values that do not depend on the inputs are folded when they are known (index arrays built
by the program), so indexing by them stays exact; indexing by anything else (a traced
index) makes every output element depend on the whole operand.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .. import extend as fe
from ..errors import FxadTypeError
from .patterns import Dep, empty, everything, gather_union, identity, take_rows, union

__all__ = ["pattern_of_program", "is_float_aval"]

# derivative zero wherever it is defined: no dependency survives them
ZERO_DERIVATIVE = {"stop_gradient", "floor", "ceil", "trunc", "round", "sign"}
MOVES = {"reshape", "transpose", "broadcast_to", "concatenate", "flip", "getitem",
         "dynamic_slice", "dynamic_update_slice"}
REDUCTIONS = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "logsumexp"}
CUMULATIVE = {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"}
_FIXPOINT_LIMIT = 64


def is_float_aval(aval) -> bool:
    return np.dtype(aval.dtype).kind in "fc"


def _known(d):
    return d.pattern is None and d.value is not None


NOT_FOLDED = {"pure_callback"}  # the user's code: not run by an analysis


def _fold(eqn, ins):
    """The outputs' values when every input is a known constant, else None."""
    prim = eqn.primitive
    if prim.effectful or prim.name in NOT_FOLDED or not all(_known(d) for d in ins):
        return None
    try:
        out = prim.bind(*[d.value for d in ins], **eqn.params)
    except Exception:  # a constant fxad cannot compute here is only less precise
        return None
    outs = out if prim.multiple_results else [out]
    if any(isinstance(o, fe.Tracer) for o in outs):
        return None
    return [Dep(v.aval, None, np.asarray(o)) for v, o in zip(eqn.outvars, outs)]


def _constants_only(eqn, ins):
    """What an equation none of whose inputs depends on the inputs returns (None if it has
    some dependent input)."""
    if any(d.pattern is not None for d in ins):
        return None
    return _fold(eqn, ins) or [Dep(v.aval) for v in eqn.outvars]


def _conservative(interp, eqn, ins):
    """Every float output element depends on everything any input depends on."""
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    n = interp.n
    return [Dep(v.aval, everything([d.pattern for d in ins], v.aval.size, n))
            if is_float_aval(v.aval) else Dep(v.aval) for v in eqn.outvars]


def _broadcast_positions(shape, out_shape):
    """For each element of an array of `out_shape`, the element of the operand of `shape`
    that NumPy broadcasting reads."""
    size = math.prod(map(int, shape))
    return np.broadcast_to(np.arange(size, dtype=np.int64).reshape(shape), out_shape).ravel()


def _elementwise(interp, eqn, ins):
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    out = eqn.outvars[0].aval
    if not is_float_aval(out) or eqn.primitive.name in ZERO_DERIVATIVE:
        return [Dep(out)]
    parts = [take_rows(d.pattern, _broadcast_positions(d.aval.shape, out.shape))
             for d in ins if d.pattern is not None]
    return [Dep(out, union(parts, out.size, interp.n))]


def _move(interp, eqn, ins):
    """Data movement: run the primitive on labels (float operands) and the known values of
    the others (indices); each output label names the element it came from."""
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    out = eqn.outvars[0].aval
    if not is_float_aval(out):
        return [Dep(out)]
    labels, stack, offset = [], [], 0
    for d in ins:
        if is_float_aval(d.aval):
            size = d.aval.size
            labels.append(np.arange(offset, offset + size, dtype=np.float64)
                          .reshape(d.aval.shape))
            stack.append(d.pattern if d.pattern is not None else empty(size, interp.n))
            offset += size
        elif d.value is None:  # an index known only when the program runs
            return _conservative(interp, eqn, ins)
        else:
            labels.append(d.value)
    got = np.asarray(eqn.primitive.impl(*labels, **eqn.params), dtype=np.float64).ravel()
    idx = got.astype(np.int64)
    if got.size != out.size or not (np.all(idx == got) and np.all((idx >= 0) & (idx < offset))):
        return _conservative(interp, eqn, ins)
    whole = stack[0] if len(stack) == 1 else sp.vstack(stack, format="csr")
    return [Dep(out, take_rows(whole, idx))]


def _scatter_add(interp, eqn, ins):
    """operand + updates added at the places `getitem` with the same spec reads."""
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    operand, idx, upd = ins[0], ins[1:-1], ins[-1]
    out = eqn.outvars[0].aval
    if not is_float_aval(out) or any(d.value is None for d in idx):
        return _conservative(interp, eqn, ins)
    where = fe.primitive("getitem").impl(np.arange(out.size, dtype=np.int64).reshape(out.shape),
                                         *[d.value for d in idx], **eqn.params)
    where = np.asarray(where)
    parts = [operand.pattern]
    if upd.pattern is not None:
        src = _broadcast_positions(upd.aval.shape, where.shape)
        parts.append(gather_union(upd.pattern, where.ravel(), src, out.size))
    return [Dep(out, union(parts, out.size, interp.n))]


def _reduce(interp, eqn, ins):
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    (x,), out = ins, eqn.outvars[0].aval
    if not is_float_aval(out):
        return [Dep(out)]
    axes = eqn.params["axes"]
    kept = [1 if a in axes else s for a, s in enumerate(x.aval.shape)]
    rows = _broadcast_positions(kept, x.aval.shape)
    return [Dep(out, gather_union(x.pattern, rows, np.arange(x.aval.size), out.size))]


def _cumulative(interp, eqn, ins):
    """Over-approximated: every element depends on its whole line along the axis."""
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    (x,), out = ins, eqn.outvars[0].aval
    axis = eqn.params["axis"] % max(len(x.aval.shape), 1)
    kept = [1 if a == axis else s for a, s in enumerate(x.aval.shape)]
    line = _broadcast_positions(kept, x.aval.shape)
    lines = gather_union(x.pattern, line, np.arange(x.aval.size), math.prod(map(int, kept)))
    return [Dep(out, take_rows(lines, line))]


def _dot_general(interp, eqn, ins):
    """out[b, i, j] = sum_k lhs[b, i, k] rhs[b, k, j]: element (b, i, j) depends on
    lhs[b, i, k] where rhs[b, k, j] may be nonzero, and on rhs[b, k, j] where lhs[b, i, k]
    may be nonzero (a known constant operand masks by its nonzeros)."""
    done = _constants_only(eqn, ins)
    if done is not None:
        return done
    lhs, rhs = ins
    out = eqn.outvars[0].aval
    if not is_float_aval(out):
        return [Dep(out)]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    ls, rs = lhs.aval.shape, rhs.aval.shape
    lf = [a for a in range(len(ls)) if a not in lc and a not in lb]
    rf = [a for a in range(len(rs)) if a not in rc and a not in rb]
    B = math.prod(int(ls[a]) for a in lb)
    Id = math.prod(int(ls[a]) for a in lf)
    K = math.prod(int(ls[a]) for a in lc)
    J = math.prod(int(rs[a]) for a in rf)

    def canonical(d, perm, shape3):
        lab = np.arange(d.aval.size, dtype=np.int64).reshape(d.aval.shape)
        lab = np.transpose(lab, perm).reshape(shape3)
        if d.pattern is None and d.value is not None:
            mask = np.transpose(np.asarray(d.value) != 0, perm).reshape(shape3)
        else:
            mask = np.ones(shape3, bool)
        return lab, mask
    llab, lmask = canonical(lhs, list(lb) + lf + list(lc), (B, Id, K))
    rlab, rmask = canonical(rhs, list(rb) + list(rc) + rf, (B, K, J))
    parts = []
    if rhs.pattern is not None:  # out (b,i,j) <- rhs (b,k,j) for lhs[b,i,k] != 0
        b, i, k = np.nonzero(lmask)
        j = np.arange(J, dtype=np.int64)
        rows = ((b * Id + i)[:, None] * J + j[None, :]).ravel()
        cols = rlab[b[:, None], k[:, None], j[None, :]].ravel()
        parts.append(gather_union(rhs.pattern, rows, cols, out.size))
    if lhs.pattern is not None:  # out (b,i,j) <- lhs (b,i,k) for rhs[b,k,j] != 0
        b, k, j = np.nonzero(rmask)
        i = np.arange(Id, dtype=np.int64)
        rows = ((b[:, None] * Id + i[None, :]) * J + j[:, None]).ravel()
        cols = llab[b[:, None], i[None, :], k[:, None]].ravel()
        parts.append(gather_union(lhs.pattern, rows, cols, out.size))
    return [Dep(out, union(parts, out.size, interp.n))]


def _call(interp, eqn, ins):
    return interp.run(eqn.primitive.inline(eqn.params), *ins)


def _custom_call(interp, eqn, ins):
    """custom_jvp / custom_vjp functions: the primal function's program."""
    fun = eqn.params["fun"]
    try:
        closed = fe.stage(lambda *a: list(fun(*a)), [v.aval for v in eqn.invars],
                          name="sparsity of a custom function")
    except Exception:  # not stageable here: nothing is known about it
        return _conservative(interp, eqn, ins)
    return interp.run(closed, *ins)


def _join(a, b, n):
    """The union of two alternatives for one value (its value kept only if the same)."""
    if a.pattern is None and b.pattern is None and a.value is not None and \
            b.value is not None and np.array_equal(a.value, b.value):
        return a
    return Dep(a.aval, union([a.pattern, b.pattern], a.aval.size, n))


def _cond(interp, eqn, ins):
    index, ops = ins[0], ins[1:]
    branches = eqn.params["branches"]
    if _known(index):
        k = int(np.clip(np.asarray(index.value), 0, len(branches) - 1))
        return interp.run(branches[k], *ops)
    outs = None
    for br in branches:
        got = interp.run(br, *ops)
        outs = got if outs is None else [_join(a, b, interp.n) for a, b in zip(outs, got)]
    return outs


def _same(a, b):
    if (a.pattern is None) != (b.pattern is None):
        return False
    if a.pattern is None:
        return a.value is b.value or (a.value is not None and b.value is not None and
                                      np.array_equal(a.value, b.value))
    return a.pattern.nnz == b.pattern.nnz and (a.pattern != b.pattern).nnz == 0


def _fixpoint(interp, carry, step):
    """Iterate `carry <- carry | step(carry)` until nothing changes; step also returns the
    other outputs of the last pass."""
    for _ in range(_FIXPOINT_LIMIT):
        new, rest = step(carry)
        joined = [_join(c, o, interp.n) for c, o in zip(carry, new)]
        if all(_same(c, j) for c, j in zip(carry, joined)):
            return joined, rest
        carry = [Dep(c.aval, j.pattern) for c, j in zip(carry, joined)]  # values vary
    return None, None


def _loop_conservative(interp, eqn, ins):
    return _conservative(interp, eqn, ins)


def _scan(interp, eqn, ins):
    """Every iteration is over-approximated by the union of all: the xs slices by the union
    of the slices, and every ys slice by the last pass of the body."""
    p = eqn.params
    nc, nk = p["n_consts"], p["n_carry"]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    body = p["jaxpr"]
    slices = []
    for x, av in zip(xs, body.in_avals[nc + nk:]):
        if x.pattern is None:
            slices.append(Dep(av))
            continue
        L = x.aval.shape[0]
        per = av.size
        rows = np.tile(np.arange(per, dtype=np.int64), L)
        slices.append(Dep(av, gather_union(x.pattern, rows, np.arange(x.aval.size), per)))

    def step(c):
        outs = interp.run(body, *consts, *c, *slices)
        return outs[:nk], outs[nk:]
    final, ys = _fixpoint(interp, [Dep(c.aval, c.pattern) for c in carry], step)
    if final is None:
        return _loop_conservative(interp, eqn, ins)
    stacked = []
    for y, v in zip(ys, eqn.outvars[nk:]):
        if y.pattern is None:
            stacked.append(Dep(v.aval))
        else:
            stacked.append(Dep(v.aval, take_rows(y.pattern, np.tile(
                np.arange(y.aval.size, dtype=np.int64), p["length"]))))
    return final + stacked


def _while(interp, eqn, ins):
    p = eqn.params
    ncc, nbc = p["n_cc"], p["n_bc"]
    bconsts, carry = ins[ncc:ncc + nbc], ins[ncc + nbc:]
    final, _ = _fixpoint(interp, [Dep(c.aval, c.pattern) for c in carry],
                         lambda c: (interp.run(p["body_jaxpr"], *bconsts, *c), None))
    if final is None:
        return _loop_conservative(interp, eqn, ins)
    return final


def _constant(value, aval):
    if isinstance(value, fe.Tracer):
        return Dep(aval)
    return Dep(aval, None, np.asarray(value))


def _interpreter():
    it = fe.Interpreter(default=_conservative, constant=_constant, name="sparsity detection")
    elementwise = _guarded(_elementwise)
    for p in fe.primitives():
        if getattr(p, "elementwise", False):  # set by defbatch_elementwise
            it.rules[p] = elementwise
    named = dict.fromkeys(MOVES, _move)
    named.update(dict.fromkeys(REDUCTIONS, _reduce))
    named.update(dict.fromkeys(CUMULATIVE, _cumulative))
    named.update(add_any=_elementwise, scatter_add=_scatter_add, dot_general=_dot_general, jit=_call,
                 custom_jvp_call=_custom_call, custom_vjp_call=_custom_call, cond=_cond,
                 scan=_scan, while_loop=_while)
    for p in fe.primitives():
        if p.name in named and p.module and p.module.startswith("fxad."):
            it.rules[p] = _guarded(named[p.name])
    return it


def _guarded(rule):
    """A family handler that cannot apply to an equation (parameters it does not expect, an
    impl that refuses labels) gives the conservative answer instead of failing."""
    def run(interp, eqn, ins):
        try:
            return rule(interp, eqn, ins)
        except FxadTypeError:
            raise
        except Exception:  # noqa: BLE001
            return _conservative(interp, eqn, ins)
    return run


def pattern_of_program(closed) -> tuple:
    """(pattern, column offsets): the dependency pattern of all the program's outputs
    (rows: their elements in order) on all its float inputs (columns: their elements in
    order; non-float inputs have no columns), as a boolean CSR matrix."""
    avals = [v.aval for v in closed.jaxpr.invars]
    sizes = [a.size if is_float_aval(a) else 0 for a in avals]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(offsets[-1])
    eye = identity(n)
    ins = [Dep(a, eye[int(o):int(o) + s] if s else None) if is_float_aval(a) else Dep(a)
           for a, o, s in zip(avals, offsets[:-1], sizes)]
    it = _interpreter()
    it.n = n
    outs = it.run(closed, *ins)
    rows = []
    for d in outs:
        if d.pattern is None:
            rows.append(empty(d.aval.size, n))
        elif d.pattern.shape != (d.aval.size, n):
            raise FxadTypeError(f"sparsity detection: a rule returned a pattern of shape "
                                f"{d.pattern.shape} for {d.aval.str_short()}")
        else:
            rows.append(d.pattern)
    pattern = rows[0] if len(rows) == 1 else sp.vstack(rows, format="csr")
    return sp.csr_array(pattern, dtype=bool), offsets
