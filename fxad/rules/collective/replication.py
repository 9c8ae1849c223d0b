"""Which outputs of an SPMD body are the same at every index of its axis: what lets pmap's
`out_axes=None` and shard_map's out specs that leave a mesh axis out take one shard's value
for all (JAX's check_rep / check_vma, in fxad's words).

A value *varies* if it depends on the index, on a mapped argument, or on a collective whose
result differs by index; psum, pmax, pmin and all_gather without index groups give every
index the same value. Loops and branches are followed (a loop's carry to a fixed point; a
branch chosen by a varying index, or a loop whose condition varies, varies); so are nested
spmd bodies (shard_map's inner mesh axes) and calls of staged programs. Anything else that
could refer to the axis unseen (a custom rule's Python function) makes its outputs varying:
the answer errs towards "varies", which refuses, never towards a wrong value.
"""
from __future__ import annotations

from ...ir.jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = ["varying_outputs"]

_REPLICATING = frozenset({"psum", "pmax", "pmin", "all_gather"})
_OPAQUE = frozenset({"custom_jvp_call", "custom_vjp_call"})


def varying_outputs(body, axis_name, in_dims):
    """For a body (index, *args) -> outputs with args mapped along `in_dims` (None: the same
    for every index): which outputs may differ between indices of `axis_name`."""
    return _varying(body.jaxpr, axis_name, [True] + [d is not None for d in in_dims])


def _jaxpr(x):
    return x.jaxpr if isinstance(x, ClosedJaxpr) else x


def _varying(j, axis_name, inputs):
    j = _jaxpr(j)
    varying = {v for v, b in zip(j.invars, inputs) if b}

    def varies(v):
        return type(v) is not Literal and v in varying
    for e in j.eqns:
        flags = [varies(v) for v in e.invars]
        outs = _eqn(e, flags, axis_name)
        varying.update(o for o, b in zip(e.outvars, outs) if b)
    return [varies(v) for v in j.outvars]


def _eqn(e, flags, axis_name):
    name, p, n_out = e.primitive.name, e.params, len(e.outvars)
    if e.primitive.collective:
        names = p.get("axis_name")
        names = names if isinstance(names, tuple) else (names,)
        if axis_name in names:
            same = name in _REPLICATING and p.get("axis_index_groups") is None
            return [not same] * n_out
        return [any(flags)] * n_out
    if name == "spmd":  # an inner mesh axis: its body, the inner index not varying here
        return _varying(p["body"], axis_name, [False] + flags)
    if name == "scan":
        nc, nk = p["n_consts"], p["n_carry"]
        return _loop(p["jaxpr"], axis_name, flags[:nc], flags[nc:nc + nk], flags[nc + nk:])
    if name == "while_loop":
        ncc, nbc = p["n_cc"], p["n_bc"]
        carry = flags[ncc + nbc:]
        while True:
            pred = _varying(p["cond_jaxpr"], axis_name, flags[:ncc] + carry)[0]
            new = [a or b for a, b in zip(carry, _varying(p["body_jaxpr"], axis_name,
                                                          flags[ncc:ncc + nbc] + carry))]
            if pred:  # shards may loop different numbers of times
                return [True] * n_out
            if new == carry:
                return carry
            carry = new
    if name == "cond":
        if flags[0]:
            return [True] * n_out
        outs = [False] * n_out
        for br in p["branches"]:
            outs = [a or b for a, b in zip(outs, _varying(br, axis_name, flags[1:]))]
        return outs
    inner = [v for v in p.values() if isinstance(v, (ClosedJaxpr, Jaxpr))]
    if len(inner) == 1 and len(_jaxpr(inner[0]).invars) == len(flags) and \
            len(_jaxpr(inner[0]).outvars) == n_out:  # a call of a staged program
        return _varying(inner[0], axis_name, flags)
    # a nested program of another form, a custom rule's Python function (which may call
    # axis_index unseen) or an effect: conservatively varying
    opaque = inner or name in _OPAQUE or e.primitive.effectful
    return [any(flags) or bool(opaque)] * n_out


def _loop(body, axis_name, consts, carry, xs):
    """A scan: the carry's flags to a fixed point; then the outputs' (carry, stacked ys)."""
    while True:
        outs = _varying(body, axis_name, consts + carry + xs)
        new = [a or b for a, b in zip(carry, outs[:len(carry)])]
        if new == carry:
            return new + outs[len(carry):]
        carry = new
