"""checkpoint (remat) with `policy=` and `static_argnums=`.

Without a policy, checkpoint keeps only the inputs and the backward pass recomputes the whole
function (fxad/custom_derivatives.py). A policy chooses equations whose outputs the forward
pass keeps as well, so the backward pass need not recompute them. The function is staged
once per signature into a program P (calls inlined, so the policy sees inside jitted code);
`policy(primitive, *input_avals, **params)` is asked about each equation.

  forward   evaluate P, keeping the inputs and the outputs of the chosen equations.
  backward  linearize P again at the inputs, but a chosen equation does not recompute its
            output: it is a custom_jvp call whose primal result is the kept value and whose
            JVP is that equation's linearization with the residuals computed from its inputs
            and the kept output (so `dot_general`'s needs only its inputs, `tanh`'s only its
            output). Equations only the chosen ones needed are never run again.

Derivatives are exactly those of the function (tests compare them with and without a
policy); what changes is what is stored and what is recomputed.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from ..core import BoundedCache, Tracer, avals_key, get_aval, is_float
from ..custom_derivatives import checkpoint as _checkpoint_all, custom_vjp
from ..errors import FxadTypeError, FxadValueError
from ..interpreters.jvp import Zero, instantiate
from ..interpreters.partial_eval import linearize_jaxpr
from ..interpreters.transpose import vjp_flat
from ..ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, eval_jaxpr
from ..ir.simplify import inline_calls, live_eqns
from ..ir.staging import lift_tracer_consts, stage
from ..rules.control.custom import custom_jvp_call_p
from ..tree_util import cache_key, tree_flatten, tree_unflatten
from .common import _leaf


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """Rematerialization: the backward pass recomputes values inside `fun` instead of
    keeping them from the forward pass. `policy` (see fxad.checkpoint_policies) names the
    values that are kept anyway; `static_argnums` are arguments passed as Python values
    (not traced, not differentiated: for flags and shapes that steer Python control flow).
    `prevent_cse` is accepted for JAX code (fxad's programs never merge the recomputation
    with the forward pass)."""
    if not callable(fun):
        raise FxadTypeError(f"checkpoint expects a function, got {type(fun).__name__}")
    if policy is not None and not callable(policy):
        raise FxadTypeError(f"checkpoint: policy must be a function such as "
                            f"fxad.checkpoint_policies.dots_saveable, got {policy!r}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if any(not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in static):
        raise FxadTypeError(f"checkpoint: static_argnums must be non-negative ints "
                            f"(positions of arguments), got {static_argnums!r}")
    if policy is None:
        return _checkpoint_all(fun, static_argnums=static)
    return _with_policy(fun, policy, static)


def _with_policy(fun, policy, static):
    cache = BoundedCache(32)  # (static values, tree, avals) -> custom_vjp over flat leaves

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        n = len(args)
        pos = sorted({i % n for i in static if -n <= i < n})
        if len(pos) != len(static):
            raise FxadValueError(f"checkpoint: static_argnums {static} out of range for a "
                                 f"call with {n} positional arguments")
        fixed = tuple(args[i] for i in pos)
        try:
            hash(fixed)
        except TypeError:
            raise FxadTypeError("checkpoint: static arguments must be hashable (they key the "
                                "staged program); pass a tuple instead of a list") from None
        dyn = [a for i, a in enumerate(args) if i not in pos]
        leaves, tree = tree_flatten((dyn, kwargs))
        leaves = [_leaf(x) for x in leaves]
        key = (fixed, tuple(type(a) for a in fixed), tree,
               avals_key([get_aval(x) for x in leaves]))
        f = cache.get(key)
        if f is None:
            def call(*xs):
                d, kw = tree_unflatten(tree, xs)
                it = iter(d)
                return fun(*[v if i in pos else next(it)
                             for i, v in enumerate(_fill(fixed, pos, n))], **kw)
            f = _policy_vjp(call, leaves, policy, getattr(fun, "__name__", "checkpoint"))
            frozen = cache_key(tree)
            if not f._lifted and frozen is not None:  # else for this call only
                cache[(fixed, key[1], frozen, key[3])] = f
        outs = f(*f._lifted, *leaves)
        return tree_unflatten(f._out_tree, outs)
    return wrapped


def _fill(fixed, pos, n):
    """The positional argument list with the static values in place (None elsewhere)."""
    out, it = [None] * n, iter(fixed)
    for i in pos:
        out[i] = next(it)
    return out


def _policy_vjp(call, example_leaves, policy, name):
    """A custom_vjp over flat leaves whose forward pass keeps what `policy` chooses."""
    store = {}

    def flat(*xs):
        out, store["tree"] = tree_flatten(call(*xs))
        return out
    # values of enclosing transformations the function closes over become leading inputs
    # (the recorded call must not keep their tracers)
    closed, lifted = lift_tracer_consts(
        inline_calls(stage(flat, [get_aval(x) for x in example_leaves], name=name)))
    kept = [e for e in closed.jaxpr.eqns if e.outvars and not e.primitive.effectful
            and policy(e.primitive, *[v.aval for v in e.invars], **e.params)]
    plan = _Plan(closed, kept)

    f = custom_vjp(lambda *xs: plan.run(xs)[0])
    f._check_fwd = False

    def fwd(*xs):
        outs, saved = plan.run(xs, keep=True)
        return outs, (list(xs), saved)
    f.defvjp(fwd, None)
    f._remat = plan.backward
    f._out_tree = store["tree"]
    f._lifted = lifted
    f.__name__ = name
    return f


class _Plan:
    """One signature of a policy-checkpointed function: its program and the equations whose
    outputs the forward pass keeps."""

    def __init__(self, closed, kept):
        self.closed = closed
        self.kept = {id(e): i for i, e in enumerate(kept)}
        self.kept_eqns = kept
        self.splits = {}  # (equation index, float-input mask) -> (cut known, linear)

    def run(self, xs, keep=False, saved=None, inner=None):
        """Evaluate the program. `keep`: also return the kept equations' outputs. With
        `saved` (backward pass), kept equations give their saved outputs, differentiated by
        their own linearization when an input carries a tangent of the trace `inner`."""
        j = self.closed.jaxpr
        env = dict(zip(j.constvars, self.closed.consts))
        env.update(zip(j.invars, xs))
        read = lambda v: v.val if type(v) is Literal else env[v]  # noqa: E731
        out_saved = []
        for e in j.eqns:
            k = self.kept.get(id(e))
            if saved is not None and k is not None:
                outs = self._from_saved(k, e, [read(v) for v in e.invars], saved[k], inner)
            else:
                outs = e.primitive.bind(*[read(v) for v in e.invars], **e.params)
                outs = outs if e.primitive.multiple_results else [outs]
            env.update(zip(e.outvars, outs))
            if keep and k is not None:
                out_saved.append(list(outs))
        return [read(v) for v in j.outvars], out_saved

    def _from_saved(self, k, e, ins, vals, inner):
        if not any(isinstance(x, Tracer) and x._trace in inner for x in ins):
            return vals  # no tangent reaches it: the kept value is the value
        mask = tuple(is_float(get_aval(x).dtype) for x in ins)
        known, linear, out_nz = self._split(k, e, mask)

        def jvp(primals, tangents):
            res = eval_jaxpr(known.jaxpr, known.consts, *primals, *vals)
            touts = eval_jaxpr(linear.jaxpr, linear.consts, *res,
                               *[t for t, m in zip(tangents, mask) if m])
            it = iter(touts)
            return list(vals), [next(it) if nz else instantiate(Zero(get_aval(v)))
                                for v, nz in zip(vals, out_nz)]
        return custom_jvp_call_p.bind(*ins, fun=lambda *_: list(vals), jvp=jvp,
                                      name=f"checkpoint-saved {e.primitive.name}")

    def _split(self, k, e, mask):
        """The equation's linearization, with the residual computation cut at its outputs:
        `known` maps (inputs, kept outputs) to the residuals (what computed the outputs is
        dropped), `linear` maps (residuals, input tangents) to the output tangents."""
        hit = self.splits.get((k, mask))
        if hit is not None:
            return hit
        ins = [Var(v.aval) if type(v) is Literal else v for v in e.invars]
        one = ClosedJaxpr(Jaxpr([], ins, [Eqn(e.primitive, ins, e.outvars, e.params)],
                                e.outvars), [])
        known, linear, out_nz, n_res = linearize_jaxpr(one, list(mask), instantiate=False)
        kj = known.jaxpr
        n_out = len(e.outvars)
        outs, residuals = kj.outvars[:n_out], kj.outvars[n_out:]
        produced = {v for eq in kj.eqns for v in eq.outvars}
        # an output is cut (becomes an input) when the equation computing it computes
        # nothing else; otherwise that equation stays (and recomputes it)
        cut = [v for v in outs if type(v) is not Literal and v in produced and
               all(o in outs for eq in kj.eqns if v in eq.outvars for o in eq.outvars)]
        eqns = [eq for eq in kj.eqns if not any(o in cut for o in eq.outvars)]
        fresh = [o if type(o) is not Literal and o in cut else Var(o.aval) for o in outs]
        cut_jaxpr = Jaxpr(kj.constvars, list(kj.invars) + fresh, live_eqns(eqns, residuals),
                          residuals)
        hit = self.splits[(k, mask)] = (ClosedJaxpr(cut_jaxpr, known.consts), linear, out_nz)
        return hit

    def backward(self, full, residuals, ct, needed=None):
        """custom_vjp's backward pass (its `_remat` hook): linearize the program again at
        the saved inputs, kept values not recomputed, and pull `ct` back."""
        n = len(residuals) - sum(len(e.outvars) for e in self.kept_eqns)
        xs, flat_saved = list(residuals[:n]), residuals[n:]
        saved, i = [], 0
        for e in self.kept_eqns:
            saved.append(list(flat_saved[i:i + len(e.outvars)]))
            i += len(e.outvars)
        idx = [i for i, m in enumerate(needed) if m] if needed is not None else range(n)

        def part(*sub):
            args = list(xs)
            for i, x in zip(idx, sub):
                args[i] = x
            inner = {x._trace for x in sub if isinstance(x, Tracer)}
            return self.run(args, saved=saved, inner=inner)[0]
        _, pullback, _ = vjp_flat(part, [xs[i] for i in idx], name="checkpoint")
        got = pullback(tree_flatten(ct)[0])
        out = [None] * n
        for i, c in zip(idx, got):
            out[i] = c
        return out


def checkpoint_name(x: Any, name: str) -> Any:
    """x, marked `name` for `checkpoint_policies.save_only_these_names` (and the other
    name-based policies); the identity otherwise."""
    from ..rules.control.remat import checkpoint_name as bind
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [bind(_leaf(v), name) for v in leaves])


def saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> list:
    """What reverse mode keeps from the forward pass of `f` at these arguments, as the staged
    path (under jit, or inside another transformation) keeps it: a list of (aval, origin),
    the origin an argument (named by its parameter and path) or the primitive whose output
    it is (or the name given by checkpoint_name). For seeing what a checkpoint policy
    saves. (JAX's jax.ad_checkpoint.saved_residuals; fxad records no source lines.)"""
    import inspect
    from ..tree_util import keystr, tree_flatten_with_path
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = []
    pairs, in_tree = tree_flatten_with_path((args, kwargs))
    leaves = [_leaf(x) for _, x in pairs]

    def where(path):
        top = path[0].idx if path[0].idx is not None else path[0].key
        if isinstance(top, int) and path[1:] and hasattr(path[1], "idx"):
            i = path[1].idx
            head = params[i] if i < len(params) else f"args[{i}]"
            return head + keystr(path[2:])
        return keystr(path[1:])
    names = [where(p) for p, _ in pairs]

    def flat(*xs):
        a, k = tree_unflatten(in_tree, xs)
        return tree_flatten(f(*a, **k))[0]
    avals = [get_aval(x) for x in leaves]
    closed = stage(flat, avals, name="saved_residuals")
    known, _, _, n_res = linearize_jaxpr(closed, [is_float(a.dtype) for a in avals])
    jaxpr = known.jaxpr
    producer = {v: e for e in jaxpr.eqns for v in e.outvars}
    kept = [v for v in (jaxpr.outvars[len(jaxpr.outvars) - n_res:] if n_res else [])
            if type(v) is not Literal]
    # arguments first, in argument order; then computed values, in program order
    out = [(v.aval, f"from the argument {names[i]}") for i, v in enumerate(jaxpr.invars)
           if v in kept]
    for v in kept:
        if v in jaxpr.invars:
            continue
        e = producer.get(v)
        origin = "a constant" if e is None else f"named {e.params['name']!r}" \
            if e.primitive.name == "checkpoint_name" else f"output of {e.primitive.name}"
        out.append((v.aval, origin))
    return out


def print_saved_residuals(f: Callable, *args: Any, **kwargs: Any) -> None:
    """Print saved_residuals(f, *args, **kwargs), one residual a line."""
    for aval, origin in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {origin}")
