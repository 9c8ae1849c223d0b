"""Eager reverse mode through derived, cached pullbacks (DESIGN §1 "Derived pullbacks").

When `grad`/`vjp` run at the bottom of the trace stack on concrete inputs, each primitive
application is recorded on a tape as (pullback, residuals). The pair of programs

    forward   primals -> (outputs, residuals)
    pullback  (residuals, output cotangents) -> input cotangents

is *derived* from the primitive's one JVP rule, once per signature (primitive, parameters,
input types, which inputs carry derivatives): `linearize_jaxpr` runs the rule abstractly on
a one-equation program and splits known from linear work by partial evaluation, the backward
pass transposes the linear part, and both are compiled with the same lowerings `jit` uses.
There is no second, hand-written VJP table: the staged path (linearize -> linear jaxpr ->
transpose) stays the reference, runs under outer transformations, and handles what cannot be
derived once and cached (parameters holding user functions, rules that look at values).

Residuals are the only memory kept (no staged program per call). Pullbacks run on concrete
cotangents as generated code; on traced ones (jacrev's vmap over a basis, hvp's jvp of a
pullback) they are evaluated as programs, so they compose like the staged path.
"""
from __future__ import annotations

import threading

import numpy as np

from ..core import (_shaped, on_rule_change, Trace, Tracer, get_aval, nan_checking,
                    new_trace, trace_stack)
from ..ir.codegen import compile_jaxpr
from ..ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Var, eval_jaxpr, holds_user_functions
from ..ir.simplify import simplify
from ..ir.staging import stage
from .jvp import Zero
from .partial_eval import linearize_flat, linearize_jaxpr
from .transpose import UndefinedPrimal, backward_pass


# --- derivations ---------------------------------------------------------------------------

class Derived:
    """The compiled forward and pullback of one primitive signature."""
    __slots__ = ("forward", "pullback", "pullback_jaxpr", "out_avals", "out_nz", "n_res",
                 "n_out", "single", "_partial", "_by_mask")

    def __init__(self, forward, pullback, pullback_jaxpr, out_avals, out_nz, n_res,
                 partial=None):
        self.forward = forward  # (*primals) -> (*outputs, *residuals)
        self.pullback = pullback  # (*residuals, *cts of nonzero outputs) -> cts of diff inputs
        self.pullback_jaxpr = pullback_jaxpr  # the same, as a program (for traced cotangents)
        self.out_avals = out_avals
        self.out_nz = out_nz  # outputs that carry derivatives
        self.n_res = n_res
        self.n_out = len(out_avals)
        self.single = False  # one output of a primitive without multiple results (set by _derive)
        self._partial = partial  # mask -> (pullback, program) for some cotangents absent
        self._by_mask = {}

    def pullback_for(self, present):
        """The pullback when only the outputs marked in `present` (over the nonzero ones)
        receive cotangents: the others are symbolic zeros, as in the staged backward pass,
        not arrays of zeros (0 · inf = NaN where a rule's factor overflows, e.g. svd's
        1 / (s_j² - s_i²) when only s is used). Derived once per mask (at most 2^n_out)."""
        hit = self._by_mask.get(present)
        if hit is None:
            hit = self._by_mask[present] = self._partial(present)
        return hit


_UNDERIVABLE = object()  # cached answer for signatures that take the staged path
_CACHE_SIZE = 2048
_cache: dict = {}
_lock = threading.Lock()
stats = {"derived": 0}  # how many signatures were derived (tests count them)


@on_rule_change
def _forget_derivations():
    with _lock:
        _cache.clear()


def _derive(prim, params, avals, diff):
    """Forward and pullback of `prim` at these input types, from its JVP rule."""
    invars = [Var(a) for a in avals]
    out_avals = prim.abstract_eval(*avals, **params)
    outs = [Var(a) for a in (out_avals if prim.multiple_results else [out_avals])]
    closed = ClosedJaxpr(Jaxpr([], invars, [Eqn(prim, invars, outs, params)], outs), [])
    known, linear, out_nz, n_res = linearize_jaxpr(closed, list(diff))
    n_out = len(outs)
    res_avals = known.out_avals[n_out:]
    ct_avals = [a for a, nz in zip(closed.out_avals, out_nz) if nz]
    t_avals = [a for a, d in zip(avals, diff) if d]

    def staged_pullback(present):
        def pullback(*args):
            res, given = args[:n_res], iter(args[n_res:])
            cts = [next(given) if p else None for p in present]
            full = list(res) + [UndefinedPrimal(a) for a in t_avals]
            got = backward_pass(linear.jaxpr, linear.consts, cts, args=full)[n_res:]
            return [np.zeros(a.shape, a.dtype) if type(g) is Zero else g
                    for g, a in zip(got, t_avals)]
        pb = stage(pullback, list(res_avals) + [a for a, p in zip(ct_avals, present) if p],
                   name="pullback")
        return compile_jaxpr(simplify(pb)).fn, pb
    pb_fn, pb = staged_pullback((True,) * len(ct_avals))
    d = Derived(compile_jaxpr(simplify(known)).fn, pb_fn, pb, closed.out_avals,
                tuple(out_nz), n_res, staged_pullback)
    d.single = n_out == 1 and not prim.multiple_results
    return d


def derived(prim, params, key, args):
    """The cached derivation for the signature `key`, or _UNDERIVABLE (take the staged path).
    Parameters are part of the key (in the order the bind wrapper gives them; another order
    is only another entry); a primitive whose parameters hold user functions is not
    derivable (its block says so), so the cache never keeps user objects alive."""
    hit = _cache.get(key)  # a plain dict read is atomic; writes take the lock
    if hit is None:
        try:
            diff = tuple(k[-1] for k in key[1:len(args) + 1])
            hit = _derive(prim, params, [get_aval(a) for a in args], diff)
            with _lock:
                stats["derived"] += 1
        except Exception:  # noqa: BLE001  (a rule that needs concrete values: staged path)
            hit = _UNDERIVABLE
        with _lock:
            if len(_cache) >= _CACHE_SIZE:  # bounded: drop the oldest half
                for k in list(_cache)[:_CACHE_SIZE // 2]:
                    _cache.pop(k, None)
            _cache[key] = hit
    return hit


def _holds_user_functions(params):
    """Do the parameters hold a program with a user's function (a custom rule, a callback)?
    Such a signature is never a cache key, so the cache keeps no user object alive; it is
    asked on a miss only, since a key found in the cache passed it (programs compare by
    identity)."""
    for v in params.values():
        if (type(v) is ClosedJaxpr or (type(v) is tuple and v and type(v[0]) is ClosedJaxpr)) \
                and holds_user_functions(v):
            return True
    return False


def _type_key(v):
    """An exact key for a value's type (the avals_key of one value, without building it)."""
    t = type(v)
    if t is np.ndarray:
        return (v.shape, v.dtype)
    if t in _WEAK:
        return t
    a = get_aval(v)
    return (a.shape, a.dtype, a.weak)


def _odd_key(vals, i):
    """The key of vals[i], neither an ndarray nor a scalar; a list or tuple operand (an
    array_like) becomes the array it stands for, since derived code computes on arrays."""
    v = vals[i]
    if type(v) is list or type(v) is tuple:
        vals[i] = v = np.asarray(v)
    return _type_key(v)


_WEAK = frozenset({bool, int, float, complex})
_SCALARS = _WEAK | frozenset(np.dtype(c).type for c in "?bhilqpBHILQPefdgFDG")


# --- the tape ------------------------------------------------------------------------------

class TapeTracer(Tracer):
    """A concrete value the tape tracks: `val`, and `slot`, the number of the tape's value
    it is (where its cotangent is collected in the backward pass)."""
    __slots__ = ("val", "slot", "_aval")

    def __init__(self, trace, val, slot):
        self._trace = trace
        self.val = val
        self.slot = slot
        self._aval = None

    @property
    def aval(self):
        a = self._aval
        if a is None:
            v = self.val
            a = self._aval = _shaped(v.shape, v.dtype) if type(v) is np.ndarray else get_aval(v)
        return a

    def concrete_value(self, op):
        return self.val


# A recorded application is a tuple (first output slot, derivation or Linearized, residuals,
# the slots of its tracked inputs). Tape inputs take slots 0..n-1.

class TapeTrace(Trace):
    kind = "grad"
    differentiates = True

    def __init__(self, level, name=None):
        super().__init__(level, name)
        self.nodes = []
        self.n_slots = 0

    def new_slots(self, n):
        first = self.n_slots
        self.n_slots = first + n
        return first

    def process_primitive(self, prim, args, params):
        # This runs for every primitive of eager grad, so it is written flat and unrolled
        # for one and two operands. The cache key holds each operand's type (a NumPy or
        # Python scalar's type determines its aval, weakness included) and whether it is
        # tracked, then the parameters.
        n = len(args)
        if n == 2:
            a, b = args
            if type(a) is TapeTracer and a._trace is self:
                if type(b) is TapeTracer and b._trace is self:
                    inputs = [a.slot, b.slot]
                    a, b, ta, tb = a.val, b.val, True, True
                else:
                    inputs, a, ta, tb = [a.slot], a.val, True, False
            elif type(b) is TapeTracer and b._trace is self:
                inputs, b, ta, tb = [b.slot], b.val, False, True
            else:
                inputs, ta, tb = [], False, False
            vals = [a, b]
            t, u = type(a), type(b)
            key = (prim,
                   (a.shape, a.dtype, ta) if t is np.ndarray else (t, ta) if t in _SCALARS
                   else (_odd_key(vals, 0), ta),
                   (b.shape, b.dtype, tb) if u is np.ndarray else (u, tb) if u in _SCALARS
                   else (_odd_key(vals, 1), tb))
        elif n == 1:
            a = args[0]
            if type(a) is TapeTracer and a._trace is self:
                inputs, a, ta = [a.slot], a.val, True
            else:
                inputs, ta = [], False
            vals = [a]
            t = type(a)
            key = (prim, (a.shape, a.dtype, ta) if t is np.ndarray else (t, ta)
                   if t in _SCALARS else (_odd_key(vals, 0), ta))
        else:
            vals, inputs, key = [], [], [prim]
            for a in args:
                if type(a) is TapeTracer and a._trace is self:
                    inputs.append(a.slot)
                    a, tracked = a.val, True
                else:
                    tracked = False
                vals.append(a)
                t = type(a)
                key.append((a.shape, a.dtype, tracked) if t is np.ndarray else (t, tracked)
                           if t in _SCALARS else (_odd_key(vals, len(vals) - 1), tracked))
            key = tuple(key)
        d = None
        if prim.derivable:
            if params:
                key = (*key, tuple(params.items()))
            try:
                d = _cache.get(key)  # a plain dict read is atomic; misses derive (locked)
            except TypeError:  # an unhashable parameter: not cached
                d = _UNDERIVABLE
            if d is None:
                d = _UNDERIVABLE if params and _holds_user_functions(params) else \
                    derived(prim, params, key, vals)
            if d is _UNDERIVABLE:
                d = None
        if d is None:
            return self._staged(prim, vals, params, [k[-1] for k in key[1:n + 1]], inputs)
        res = d.forward(*vals)
        first = self.n_slots
        if d.single:
            self.n_slots = first + 1
            self.nodes.append((first, d, res[1:], inputs))
            return TapeTracer(self, res[0], first) if d.out_nz[0] else res[0]
        n_out = d.n_out
        self.n_slots = first + n_out
        self.nodes.append((first, d, res[n_out:], inputs))
        return [TapeTracer(self, o, first + i) if nz else o
                for i, (o, nz) in enumerate(zip(res[:n_out], d.out_nz))]

    def _staged(self, prim, vals, params, diff, inputs):
        """One application through the staged path (linearized now, transposed later): for
        primitives whose rules need concrete values or hold user functions."""
        idx = [i for i, dd in enumerate(diff) if dd]

        def fun(*xs):
            full = list(vals)
            for i, x in zip(idx, xs):
                full[i] = x
            out = prim.bind(*full, **params)
            return list(out) if prim.multiple_results else [out]
        outs, lin = linearize_flat(fun, [vals[i] for i in idx], name="grad")
        first = self.new_slots(len(outs))
        self.nodes.append((first, lin, None, inputs))
        res = [TapeTracer(self, o, first + i) if m else o
               for i, (o, m) in enumerate(zip(outs, lin.out_mask))]
        return res if prim.multiple_results else res[0]


def backward(trace, outs, cts_out, free=False):
    """Run the pullbacks in reverse; returns the list of cotangents by slot (None where none
    flowed, and for the slots nodes produced: each is dropped once its node has used it). An
    accumulated cotangent that this pass made itself is updated in place; one a pullback
    returned may be shared (an input passed through, or one object given to two operands), so
    the first addition makes a new array. `free` drops residuals as it goes (grad runs a tape
    once)."""
    n = trace.n_slots
    cts, owned = [None] * n, [False] * n
    for o, ct in zip(outs, cts_out):
        if type(o) is TapeTracer and o._trace is trace and ct is not None and \
                type(ct) is not Zero:
            _put(cts, owned, o.slot, ct)
    traced = any(isinstance(ct, Tracer) for ct in cts_out)
    nodes = trace.nodes
    for k in range(len(nodes) - 1, -1, -1):
        first, d, res, inputs = nodes[k]
        if type(d) is not Derived:
            got = _linearized_pullback(d, cts, first)
            if got is None:
                continue
        elif d.n_out == 1:  # the common case
            c = cts[first]
            if c is None:
                continue
            got = eval_jaxpr(d.pullback_jaxpr.jaxpr, d.pullback_jaxpr.consts, *res, c) \
                if traced else d.pullback(*res, c)
        else:
            slots = cts[first:first + d.n_out]
            if all(c is None for c in slots):
                continue
            ct_nz = [c for c, nz in zip(slots, d.out_nz) if nz]
            if any(c is None for c in ct_nz):  # some outputs unused: symbolic zeros
                pb_fn, pb = d.pullback_for(tuple(c is not None for c in ct_nz))
                ct_nz = [c for c in ct_nz if c is not None]
            else:
                pb_fn, pb = d.pullback, d.pullback_jaxpr
            got = eval_jaxpr(pb.jaxpr, pb.consts, *res, *ct_nz) if traced else \
                pb_fn(*res, *ct_nz)
        # This node's outputs got every contribution (their readers come later on the tape):
        # their cotangents can go now, not at the end of the pass.
        if type(d) is Derived and d.n_out == 1:
            cts[first] = None
        else:
            n_out = d.n_out if type(d) is Derived else len(d.out_avals)
            cts[first:first + n_out] = [None] * n_out
        for s, ct in zip(inputs, got):
            c = cts[s]
            if c is None:
                cts[s] = ct
            elif owned[s] and type(c) is np.ndarray and type(ct) is np.ndarray and \
                    c.shape == ct.shape and c.dtype == ct.dtype:
                c += ct
            else:
                cts[s], owned[s] = c + ct, True
        if free:
            nodes[k] = None
    return cts


def _put(cts, owned, s, ct):
    c = cts[s]
    if c is None:
        cts[s] = ct
    else:
        cts[s], owned[s] = c + ct, True


def _linearized_pullback(lin, cts, first):
    slots = cts[first:first + len(lin.out_avals)]
    if all(c is None for c in slots):
        return None
    cts_in = [c for c, m in zip(slots, lin.out_mask) if m]  # None: a symbolic zero
    got = backward_pass(lin.jaxpr.jaxpr, lin.jaxpr.consts, cts_in)
    return [np.zeros(a.shape, a.dtype) if type(g) is Zero else g
            for g, a, m in zip(got, lin.in_avals, lin.in_mask) if m]


def tape_active():
    """Can eager reverse mode use the tape here? Only at the bottom of the trace stack (no
    outer transformation), with NaN checking off (compiled pullbacks skip its hook), and
    when not switched off (fxad.config.eager_tape)."""
    return enabled[0] and not trace_stack() and not nan_checking()


enabled = [True]  # fxad.config.eager_tape


def _shape_dtype(x):
    a = get_aval(x)
    return a.shape, a.dtype


class TapeVJP:
    """A function run on the tape: its outputs, and a pullback."""

    def __init__(self, fun, primals, name="grad"):
        # (shape, dtype) of each input, for the zero cotangents of those none flows to
        self.in_types = [(p.shape, p.dtype) if type(p) is np.ndarray else _shape_dtype(p)
                         for p in primals]
        self.in_mask = [dt.kind in "fc" for _, dt in self.in_types]
        with new_trace(TapeTrace, name) as trace:
            trace.new_slots(len(primals))  # the inputs' slots: 0 .. n-1
            args = [TapeTracer(trace, p, i) if m else p
                    for i, (p, m) in enumerate(zip(primals, self.in_mask))]
            self.outs = fun(*args)
        self.trace = trace
        self.primal_outs = [o.val if type(o) is TapeTracer and o._trace is trace else o
                            for o in self.outs]
        self.out_avals = [get_aval(o) for o in self.primal_outs]

    def pullback(self, cts_out, free=False):
        """Cotangents of the inputs (zeros where none flows). `free`: the last use."""
        cts = backward(self.trace, self.outs, cts_out, free)
        return [np.zeros(*a) if c is None or not m else c
                for c, a, m in zip(cts, self.in_types, self.in_mask)]

    def snapshot(self):
        """Private copies of the residuals (for a pullback that outlives its call)."""
        nodes = self.trace.nodes
        for k, (first, d, res, inputs) in enumerate(nodes):
            if type(d) is Derived:
                res = tuple(r.copy() if type(r) is np.ndarray else r for r in res)
            else:
                d.jaxpr = d.jaxpr.snapshot()
            nodes[k] = (first, d, res, inputs)
