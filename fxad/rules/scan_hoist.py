"""Loop-invariant code motion for scan: work in the body that does not depend on the carry
is done for all steps at once, before the loop, as one batched (vmapped) program.

This is what a hand-written RNN does (`xs @ U.T` for every step at once), and it matters
most for the linear scans of reverse mode. In the linear body of an RNN, `dW @ h_t` does not
depend on the tangent carry; hoisted, it becomes one batched `dot_general` outside the loop,
so the transpose leaves the loop with a stacked cotangent and forms W's cotangent with one
matrix product (`dz_all.T @ hs`) instead of adding an outer product at every step.

Every scan is bound through `bind_scan`, so eager runs, every transformation's scans (the
known and linear halves of a JVP, transposes, batched scans) and jit all get the rewrite.
"""
from __future__ import annotations

from ..ir.jaxpr import ClosedJaxpr, Jaxpr, Literal


def _live_eqns(eqns, outs):
    """The equations needed to compute `outs`, in order."""
    live = {v for v in outs if type(v) is not Literal}
    keep = []
    for e in reversed(eqns):
        if any(v in live for v in e.outvars):
            keep.append(e)
            live.update(v for v in e.invars if type(v) is not Literal)
    keep.reverse()
    return keep


def hoist_split(jaxpr: ClosedJaxpr, n_consts: int, n_carry: int):
    """(pre, body, kept_xs, fixed) or None when there is nothing to move out of the loop.
    `fixed` lists the carries the body passes through unchanged (e.g. the zero cotangent
    accumulators of a transposed scan once their updates are hoisted): they become
    constants. `pre` (None if nothing is hoisted) maps (consts, x slices) to the hoisted
    values of one step; `body` maps (consts, fixed carries, other carries, kept x slices,
    hoisted values) to the outputs without the fixed carries. Cached on the jaxpr."""
    key = ("hoist", n_consts, n_carry)
    if key in jaxpr.cache:
        return jaxpr.cache[key]
    j = jaxpr.jaxpr
    consts_v = j.invars[:n_consts]
    carry_v = j.invars[n_consts:n_consts + n_carry]
    xs_v = j.invars[n_consts + n_carry:]
    fixed = [i for i in range(n_carry) if j.outvars[i] is carry_v[i]]
    moving = [i for i in range(n_carry) if i not in fixed]
    on_carry, on_xs = {carry_v[i] for i in moving}, set(xs_v)
    varying, in_loop = [], []  # equations on the carry; those and the ones on neither
    for e in j.eqns:
        ins = [v for v in e.invars if type(v) is not Literal]
        if any(v in on_carry for v in ins):
            on_carry.update(e.outvars)
            varying.append(e)
            in_loop.append(e)
        elif any(v in on_xs for v in ins):
            on_xs.update(e.outvars)
        else:  # constant across steps and cheap to keep: stays (and is copied into pre)
            in_loop.append(e)
    # Values computed from the xs (not the carry) that the loop still reads.
    read = [v for e in varying for v in e.invars] + list(j.outvars)
    hoisted, seen = [], set(xs_v)
    for v in read:
        if type(v) is not Literal and v in on_xs and v not in seen:
            seen.add(v)
            hoisted.append(v)
    if not hoisted and not fixed:
        jaxpr.cache[key] = None
        return None
    pre = ClosedJaxpr(Jaxpr(j.constvars, consts_v + xs_v, _live_eqns(j.eqns, hoisted), hoisted),
                      jaxpr.consts) if hoisted else None
    outvars = [j.outvars[i] for i in moving] + j.outvars[n_carry:]
    body_eqns = _live_eqns(in_loop if hoisted else j.eqns, outvars)
    used = {v for e in body_eqns for v in e.invars} | set(outvars)
    kept = [i for i, v in enumerate(xs_v) if v in used or not hoisted]
    invars = consts_v + [carry_v[i] for i in fixed] + [carry_v[i] for i in moving] + \
        [xs_v[i] for i in kept] + hoisted
    body = ClosedJaxpr(Jaxpr(j.constvars, invars, body_eqns, outvars), jaxpr.consts)
    jaxpr.cache[key] = hit = (pre, body, kept, fixed)
    return hit


def bind_scan(consts, init, xs, jaxpr, length, reverse):
    """scan_p.bind, with the carry-independent part of the body hoisted out of the loop."""
    from .loops import scan_p
    split = hoist_split(jaxpr, len(consts), len(init)) if length > 0 else None
    if split is None:
        return scan_p.bind(*consts, *init, *xs, jaxpr=jaxpr, n_consts=len(consts),
                           n_carry=len(init), length=length, reverse=reverse)
    pre, body, kept, fixed = split
    if pre is not None:
        from ..api import vmap
        from .cond import call
        in_axes = (None,) * len(consts) + (0,) * len(xs)
        stacked = vmap(call(pre), in_axes=in_axes, axis_size=length)(*consts, *xs)
        xs = [xs[i] for i in kept] + list(stacked)
    fixed_init = [init[i] for i in fixed]
    moving = [c for i, c in enumerate(init) if i not in fixed]
    outs = scan_p.bind(*consts, *fixed_init, *moving, *xs, jaxpr=body,
                       n_consts=len(consts) + len(fixed), n_carry=len(moving), length=length,
                       reverse=reverse)
    it = iter(outs)
    carry = [init[i] if i in fixed else next(it) for i in range(len(init))]
    return carry + list(it)
