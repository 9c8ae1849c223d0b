"""Partial evaluation, as linearize uses it: JVP with known primals and unknown tangents.

The known/unknown split is carried by the value representation itself. Unknown values (the
tangents) are tracers of a staging trace, so every operation on them is recorded; known values
(the primals and everything computed only from them) are left unboxed, so they are computed
now, eagerly, and enter the recorded program as constants: the residuals. The staging trace
sits *below* the JVP trace, and a JVP rule only ever sees unboxed primals and tangents, so a
rule like `t * cos(x)` evaluates `cos(x)` now and stages `mul t c`. The recorded program is
therefore linear in its inputs, provided every JVP rule is linear in its tangents.

This fuses the JVP and partial-evaluation interpreters of Frostig et al. into one pass (one
extra tracer per primitive instead of two); see notes/architecture.md.
"""
from __future__ import annotations

from ..core import get_aval, is_float, new_trace
from ..ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ..ir.staging import StagingTrace
from .jvp import JVPTrace, Zero, jvp_jaxpr


class Linearized:
    """The result of linearizing a flat function: its linear tangent program.

    `jaxpr` maps the tangents of the float inputs (`in_mask[i]`) to the non-zero output
    tangents (`out_mask[j]`); the other outputs have symbolic-zero tangents."""

    def __init__(self, jaxpr, in_avals, in_mask, out_avals, out_mask):
        self.jaxpr = jaxpr
        self.in_avals = in_avals
        self.in_mask = in_mask
        self.out_avals = out_avals
        self.out_mask = out_mask


def linearize_flat(fun, primals, name="linearize"):
    """Returns (primal outputs, Linearized)."""
    in_avals = [get_aval(p) for p in primals]
    in_mask = [is_float(a.dtype) for a in in_avals]
    with new_trace(StagingTrace, name) as stage, new_trace(JVPTrace, name) as jvp:
        tangents = [stage.new_arg(a) if m else Zero(a) for a, m in zip(in_avals, in_mask)]
        outs = fun(*[jvp.box(p, t) for p, t in zip(primals, tangents)])
        pairs = [jvp.unbox(o) for o in outs]
        out_mask = [type(t) is not Zero for _, t in pairs]
        jaxpr = stage.to_jaxpr([t for _, t in pairs if type(t) is not Zero])
    primals_out = [p for p, _ in pairs]
    out_avals = [get_aval(p) for p in primals_out]
    return primals_out, Linearized(jaxpr, in_avals, in_mask, out_avals, out_mask)


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns, instantiate):
    """Split a jaxpr by which inputs are unknown, at the level of whole programs (used for
    call primitives like jit, whose body is a jaxpr rather than Python).

    Returns (known, unknown, out_unknown, n_res): `known` maps the known inputs to the known
    outputs followed by the residuals; `unknown` maps (residuals, unknown inputs) to the
    unknown outputs. Outputs in `instantiate` go to the unknown side even if known (they are
    then passed through as residuals)."""
    jaxpr = closed.jaxpr
    unknown_vars = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        if any(type(v) is not Literal and v in unknown_vars for v in eqn.invars):
            unknown_eqns.append(eqn)
            unknown_vars.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
    out_unknown = [(type(v) is not Literal and v in unknown_vars) or inst
                   for v, inst in zip(jaxpr.outvars, instantiate)]
    # Residuals: known variables the unknown side reads (including passed-through outputs).
    # Constants are not residuals: the unknown program closes over them directly.
    residuals, seen = [], set(jaxpr.constvars)
    needed = [v for e in unknown_eqns for v in e.invars] + \
        [v for v, u in zip(jaxpr.outvars, out_unknown) if u]
    for v in needed:
        if type(v) is not Literal and v not in unknown_vars and v not in seen:
            seen.add(v)
            residuals.append(v)
    known = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, unknowns) if not u],
                  known_eqns,
                  [v for v, u in zip(jaxpr.outvars, out_unknown) if not u] + residuals)
    unknown = Jaxpr(jaxpr.constvars,
                    residuals + [v for v, u in zip(jaxpr.invars, unknowns) if u],
                    unknown_eqns, [v for v, u in zip(jaxpr.outvars, out_unknown) if u])
    return ClosedJaxpr(known, closed.consts), ClosedJaxpr(unknown, closed.consts), \
        out_unknown, len(residuals)


def linearize_jaxpr(closed: ClosedJaxpr, nonzero, instantiate=False):
    """The JVP of a closed jaxpr (tangents for the inputs marked `nonzero`), split by partial
    evaluation: what call, loop and branch primitives need for their own JVP rules.

    Returns (known, linear, out_nonzero, n_res): `known` maps the primal inputs to the primal
    outputs followed by n_res residuals; `linear` maps (residuals, the nonzero tangents) to
    the output tangents marked in `out_nonzero` (with `instantiate`, a bool or one per
    output, symbolic zeros are materialized and count as nonzero)."""
    jvp_closed, out_nz = jvp_jaxpr(closed, nonzero, instantiate)
    n, n_out = len(closed.in_avals), len(closed.out_avals)
    known, linear, out_unknown, n_res = partial_eval_jaxpr(
        jvp_closed, [False] * n + [True] * sum(nonzero), [False] * n_out + [True] * sum(out_nz))
    if any(out_unknown[:n_out]):  # a rule bug, not a user error: say so plainly
        raise AssertionError("fxad internal error: in the JVP of a staged program a primal "
                             "output depends on a tangent")
    return known, linear, out_nz, n_res
