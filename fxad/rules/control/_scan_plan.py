"""Hoisting for scan bodies: loop-invariant code motion, so only work that feeds the carry
stays in the loop. `bind_scan` (fxad/rules/control/scan.py) splits every body by its Plan.

- Work that depends on the xs but not on the carry is done for all steps at once, before
  the loop, as one batched (vmapped) program. A hand-written RNN does this (`xs @ U.T` for
  every step at once); in reverse mode it matters more: in the linear body of an RNN,
  `dW @ h_t` does not depend on the tangent carry, so hoisted it becomes one batched
  `dot_general`, and the transpose then forms W's cotangent with one matrix product
  (`dz_all.T @ hs`) instead of adding an outer product at every step.
- Work on the carry whose results only leave as stacked outputs (not as the next carry) is
  done after the loop, batched, from the stacked values it needs.
- Pass-through carries become constants; carries that only accumulate an output that is
  stacked anyway (`acc + y_t`) become one sum of the stack after the loop.
"""
from __future__ import annotations

from ...ir.jaxpr import ClosedJaxpr, Jaxpr, Literal, has_effects
from ...ir.simplify import live_eqns


class Plan:
    """How to run a scan body as (pre, loop, post). Sources of stacked values: ('x', k) is
    the k-th stacked input of the loop (original xs, then pre's outputs), ('y', k) the k-th
    stacked output of the loop, ('post', k) the k-th output of post."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _producers(eqns):
    return {v: e for e in eqns for v in e.outvars}


_MISSING = object()


def plan_scan(jaxpr: ClosedJaxpr, n_consts: int, n_carry: int):
    """The Plan for a scan body, or None when nothing moves (cached on the jaxpr)."""
    key = ("plan", n_consts, n_carry)
    plan = jaxpr.cache.get(key, _MISSING)
    if plan is _MISSING:  # (None is a valid, cached answer)
        jaxpr.cache[key] = plan = _plan(jaxpr, n_consts, n_carry)
    return plan


def _plan(jaxpr, n_consts, n_carry):
    j = jaxpr.jaxpr
    if any(e.primitive.effectful for e in j.eqns):
        return None  # effects (debug prints) happen every step, in order: nothing moves
    consts_v = j.invars[:n_consts]
    carry_v = j.invars[n_consts:n_consts + n_carry]
    xs_v = j.invars[n_consts + n_carry:]
    carry_out, ys_out = j.outvars[:n_carry], j.outvars[n_carry:]
    prod = _producers(j.eqns)
    readers = {}
    for e in j.eqns:
        for v in e.invars:
            if type(v) is not Literal:
                readers.setdefault(v, []).append(e)
    fixed = [i for i in range(n_carry) if carry_out[i] is carry_v[i]]
    accum = {}  # carry index -> the per-step value it adds up (one that is stacked anyway)
    for i in range(n_carry):
        e = prod.get(carry_out[i])
        if i in fixed or e is None or e.primitive.name not in ("add", "add_any") or \
                readers.get(carry_v[i]) != [e] or carry_v[i] in j.outvars or \
                carry_out[i] in readers or carry_out[i] in ys_out:
            continue
        a, b = e.invars
        v = b if a is carry_v[i] else a if b is carry_v[i] else None
        if v is not None and type(v) is not Literal and v in ys_out and \
                v.aval.shape == carry_v[i].aval.shape and v.aval.dtype == carry_v[i].aval.dtype:
            accum[i] = v
    moving = [i for i in range(n_carry) if i not in fixed and i not in accum]
    consts_v = consts_v + [carry_v[i] for i in fixed]  # pass-through carries are constants

    # Classify: on the carry / on the xs only / on neither (constant across steps).
    on_carry, on_xs = {carry_v[i] for i in moving} | {carry_v[i] for i in accum}, set(xs_v)
    kind = {}
    for e in j.eqns:
        ins = [v for v in e.invars if type(v) is not Literal]
        if any(v in on_carry for v in ins) or has_effects(e):
            # an effectful equation (a callback) runs once per step, where the body says
            on_carry.update(e.outvars)
            kind[e] = "carry"
        elif any(v in on_xs for v in ins):
            on_xs.update(e.outvars)
            kind[e] = "xs"
        else:
            kind[e] = "const"
    # The loop keeps what the next carry needs.
    need = {v for i in moving for v in [carry_out[i]] if type(v) is not Literal}
    in_loop = set()
    for e in reversed(j.eqns):
        if kind[e] == "carry" and (any(v in need for v in e.outvars) or has_effects(e)):
            in_loop.add(e)
            need.update(v for v in e.invars if type(v) is not Literal)

    # Where each stacked output comes from; what post computes and what it reads.
    ys_all = list(ys_out) + [accum[i] for i in sorted(accum)]
    loop_ys, pre_out = [], []  # vars the loop stacks; xs-only vars pre computes

    def from_loop(v):
        if v not in loop_ys:
            loop_ys.append(v)
        return ("y", loop_ys.index(v))

    def from_pre(v):
        if v not in pre_out:
            pre_out.append(v)
        return ("x", len(xs_v) + pre_out.index(v))

    post_out, post_eqns, post_in = [], set(), []  # post_in: (var, source)
    boundary = {}

    def source_outside(v):
        """A per-step value read by post, stacked by someone else."""
        if v in xs_v:
            return ("x", xs_v.index(v))
        if v in on_xs and v not in carry_v:
            return from_pre(v)
        return from_loop(v)

    ys_src = []
    for v in ys_all:
        e = prod.get(v) if type(v) is not Literal else None
        if type(v) is Literal or v in consts_v or (e is not None and kind[e] == "const"):
            ys_src.append(from_loop(v))
        elif v in xs_v:
            ys_src.append(("x", xs_v.index(v)))
        elif e is not None and kind[e] == "xs":
            ys_src.append(from_pre(v))
        elif e is None or e in in_loop:  # an old carry value, or computed for the carry
            ys_src.append(from_loop(v))
        else:  # on the carry but not needed by it: after the loop
            if v not in post_out:
                post_out.append(v)
            ys_src.append(("post", post_out.index(v)))
    # Post's equations: back from its outputs, stopping at values stacked elsewhere.
    want = list(post_out)
    while want:
        v = want.pop()
        if type(v) is Literal or v in boundary or v in consts_v:
            continue
        e = prod.get(v)
        if e is not None and e not in in_loop and kind[e] in ("carry", "const"):
            if e not in post_eqns:
                post_eqns.add(e)
                want.extend(e.invars)
        else:
            boundary[v] = source_outside(v)
            post_in.append(v)
    # Pre also computes what the loop reads from the xs-only part.
    body_eqns = [e for e in j.eqns if e in in_loop or kind[e] == "const"]
    body_reads = [v for e in body_eqns if e in in_loop for v in e.invars] + loop_ys + \
        [carry_out[i] for i in moving]
    for v in body_reads:
        if type(v) is not Literal and v in on_xs and v not in xs_v and v not in carry_v:
            from_pre(v)
    if not fixed and not accum and not pre_out and not post_out and \
            all(s[0] != "x" for s in ys_src):
        return None
    outvars = [carry_out[i] for i in moving] + loop_ys
    body_eqns = live_eqns(body_eqns, outvars)
    body = ClosedJaxpr(Jaxpr(j.constvars, consts_v + [carry_v[i] for i in moving] + xs_v +
                             pre_out, body_eqns, outvars),
                       jaxpr.consts)
    pre = ClosedJaxpr(Jaxpr(j.constvars, consts_v + xs_v,
                            live_eqns([e for e in j.eqns if kind[e] != "carry"], pre_out), pre_out),
                      jaxpr.consts) if pre_out else None
    post = ClosedJaxpr(Jaxpr(j.constvars, consts_v + post_in,
                             [e for e in j.eqns if e in post_eqns], post_out),
                       jaxpr.consts) if post_out else None
    return Plan(fixed=fixed, accum=sorted(accum), moving=moving, body=body, pre=pre, post=post,
                post_src=[boundary[v] for v in post_in], ys_src=ys_src, n_ys=len(ys_out))
