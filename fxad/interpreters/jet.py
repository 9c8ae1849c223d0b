"""Taylor mode: tracers carry a primal and the raw Taylor coefficients of a path through it.

A JetTracer of a trace of order K stands for the truncated series

    x(t) = x_0 + x_1 t + x_2 t^2 + ... + x_K t^K

with `primal` = x_0 and `series` = [x_1, ..., x_K]: *raw* coefficients (the k-th derivative
along the path is k! x_k; `fxad.jet` converts at its boundary, so nothing here grows like
k!). A coefficient known to be zero is `Zero(aval)` and is never materialized; a value whose
coefficients are all zero is not boxed at all, so code that does not depend on the path runs
on the levels below.

A primitive's jet rule maps `(primals, series) -> (out, out_series)` (lists of coefficient
lists for several results; None for a series that is all zero). Where no faster rule is
written, `jet_from_jvp(prim)` derives one from the primitive's JVP rule. For y = f(x),
y'(t) = jvp_f(x(t), x'(t)), so

    y_m = [jvp_f(x(t), x'(t))]_{m-1} / m,        (x')_j = (j + 1) x_{j+1},

where the bracket is coefficient m-1 of the JVP rule run under a jet trace of order m-1 on
the series of x and of x'. The rule binds primitives, so that is legal; the primitive itself
reappears in it (`ans = f(x)`, or `exp`'s `t * ans`) at order m-1, where its coefficients
y_0..y_{m-1} are known: the derivation goes one order at a time. A memo shared by all the
inner traces of one derivation (keyed by primitive, parameters and the identity of the
series the operands truncate) makes every such reappearance a lookup, and extends the series
of other derived primitives in the rule (`sin`'s `cos`, `lgamma`'s `digamma`) one order at a
time as well: cost O(K^3) for a primitive whose rule uses fast-rule primitives, polynomial
(never exponential) for chains of derived ones. For the keys to be structural, a derivation's
traces box every value, with or without a series (a rule's `stop_gradient(m)` or `x > 0`
would otherwise be a new object on each run and miss), and key concrete constants by value.
"""
from __future__ import annotations

import numpy as np

from ..core import Trace, get_aval, is_float, missing_rule, new_trace
from .jvp import PrimalTracer, Zero

# (x, c) -> x * c and x / c for a Python int c, binding primitives when x is traced; set by
# fxad/rules/taylor.py (this layer names no primitive).
_mul = _div = None


def set_scalar_ops(mul, div):
    global _mul, _div
    _mul, _div = mul, div


def is_zero(c) -> bool:
    return type(c) is Zero


def zero_series(x, order):
    z = Zero(get_aval(x))
    return [z] * order


class JetTracer(PrimalTracer):
    __slots__ = ("series", "ref")

    def __init__(self, trace, primal, series, ref=None):
        self._trace = trace
        self.primal = primal
        self.series = series
        self.ref = ref  # inside a derivation: which series this truncates (the memo's key)
        self._aval = None


class JetTrace(Trace):
    kind = "jet"
    differentiates = True

    def __init__(self, level, name=None, order=1, memo=None):
        super().__init__(level, name)
        self.order = order
        self.memo = memo  # set for the inner traces of a derivation (jet_from_jvp)

    def unbox(self, x):
        if type(x) is JetTracer and x._trace is self:
            return x.primal, x.series
        return x, zero_series(x, self.order)

    def box(self, primal, series, ref=None):
        # Invariant: a JetTracer has a non-zero coefficient and an inexact dtype, except in
        # a derivation, whose memo must see every value (module docstring).
        if self.memo is not None:
            if series is None:
                series = zero_series(primal, self.order)
        elif series is None or all(type(c) is Zero for c in series) \
                or not is_float(get_aval(primal).dtype):
            return primal
        return JetTracer(self, primal, list(series), ref)

    def process_primitive(self, prim, args, params):
        primals, series, live = [], [], False
        for a in args:
            if type(a) is JetTracer and a._trace is self:
                primals.append(a.primal)
                series.append(a.series)
                live = True
            else:
                primals.append(a)
                series.append(None)
        if not live:  # (bind only sends a primitive here if one operand is ours)
            return prim.bind(*primals, **params)
        rule = jet_rule(prim)
        series = [zero_series(p, self.order) if s is None else s
                  for p, s in zip(primals, series)]
        if self.memo is not None:
            return self.memo.process(self, prim, rule, args, primals, series, params)
        out, out_series = rule(primals, series, **params)
        return self.box_outputs(prim, out, out_series)

    def box_outputs(self, prim, out, out_series, ref=None, memo=None):
        if not prim.multiple_results:
            return self.box(out, _check_series(prim, out_series, self.order), ref)
        if out_series is None:
            out_series = [None] * len(out)
        return [self.box(o, _check_series(prim, s, self.order),
                         None if memo is None else memo.intern((ref, i)))
                for i, (o, s) in enumerate(zip(out, out_series))]


def _check_series(prim, s, order):
    if s is not None and len(s) != order:
        raise AssertionError(f"fxad internal error: the jet rule of '{prim.name}' returned "
                             f"{len(s)} coefficients for a series of order {order}")
    return s


# --- entry points ------------------------------------------------------------------------

def jet_flat(fun, primals, series, order, name="jet"):
    """Run `fun` (flat args -> list of outputs) on Taylor series: `series[i]` holds the
    `order` raw coefficients of argument i (Zero for known zeros, or None for all zero).
    Returns (primal outputs, output series), each output series a list with Zero entries."""
    with new_trace(JetTrace, name, order=order) as trace:
        outs = fun(*[trace.box(p, s) for p, s in zip(primals, series)])
        pairs = [trace.unbox(o) for o in outs]
    return [p for p, _ in pairs], [s for _, s in pairs]


def jet_jaxpr(closed, order, nonzero, instantiate=False):
    """The jet of a closed jaxpr as a jaxpr (for the rules of primitives that carry
    programs: jit, cond, scan, while_loop). Interleaved layout: input i is followed by its
    `order` coefficients where `nonzero[i]`, and output j by its coefficients where they are
    not all zero or `instantiate` (a bool, or one per output) asks for them. Returns
    (jaxpr, out_nonzero); cached on the jaxpr."""
    from ..ir.jaxpr import eval_jaxpr
    from ..ir.staging import stage
    n_out = len(closed.out_avals)
    inst = tuple([instantiate] * n_out if isinstance(instantiate, bool) else instantiate)
    key = ("jet", order, tuple(nonzero), inst)
    hit = closed.cache.get(key)
    if hit is not None:
        return hit
    avals = []
    for a, nz in zip(closed.in_avals, nonzero):
        avals += [a] * (1 + order * nz)
    out_nz = []

    def fun(*args):
        it = iter(args)
        primals, series = [], []
        for a, nz in zip(closed.in_avals, nonzero):
            primals.append(next(it))
            series.append([next(it) for _ in range(order)] if nz else None)
        outs, out_series = jet_flat(lambda *p: eval_jaxpr(closed.jaxpr, closed.consts, *p),
                                    primals, series, order, name="jet of a jaxpr")
        flat = []
        out_nz[:] = []
        for o, s, i in zip(outs, out_series, inst):
            live = i or not all(is_zero(c) for c in s)
            out_nz.append(live)
            flat += [o] + ([_instantiate(c, get_aval(o)) for c in s] if live else [])
        return flat
    jaxpr = stage(fun, avals, name="jet of a jaxpr")
    hit = closed.cache[key] = (jaxpr, list(out_nz))
    return hit


def interleave(primals, series, nonzero, order):
    """The operands of a program from jet_jaxpr: each primal, then its coefficients (zeros
    materialized) where `nonzero` says."""
    flat = []
    for p, s, nz in zip(primals, series, nonzero):
        flat.append(p)
        if nz:
            a = get_aval(p)
            flat += [_instantiate(c, a) for c in s]
    return flat


def deinterleave(flat, out_nonzero, order):
    """The results of a program from jet_jaxpr -> (primal outputs, series or None each)."""
    it = iter(flat)
    outs, series = [], []
    for nz in out_nonzero:
        outs.append(next(it))
        series.append([next(it) for _ in range(order)] if nz else None)
    return outs, series


def series_nonzero(series):
    """Per operand: does its series have a coefficient not known to be zero?"""
    return [s is not None and not all(is_zero(c) for c in s) for s in series]


def _instantiate(c, aval):
    if type(c) is Zero:
        return np.zeros(aval.shape, aval.dtype)
    return c


# --- the derivation from the JVP rule ------------------------------------------------------

class DerivedJet:
    """The jet rule of `prim` derived from its JVP rule (see the module docstring)."""
    derived = True

    def __init__(self, prim):
        self.prim = prim

    def __repr__(self):
        return f"jet_from_jvp({self.prim.name})"

    def __call__(self, primals, series, **params):
        memo = _Memo()
        refs = [memo.atom() for _ in primals]
        key = memo.intern((self.prim, memo.params_key(params), tuple(refs)))
        order = len(series[0])
        entry = memo.derive(self.prim, params, primals, series, refs, key, order)
        return entry.get(order)


def jet_from_jvp(prim):
    """The jet rule derived from `prim`'s JVP rule (register it with `prim.def_jet`)."""
    return DerivedJet(prim)


def jet_rule(prim):
    """`prim`'s jet rule: its own, else the one derived from its JVP rule (so a primitive
    defined outside fxad has one too)."""
    rule = prim.jet
    if rule is None:
        if prim.jvp is None:
            raise missing_rule("Jet", prim)
        rule = DerivedJet(prim)
    return rule


class _Entry:
    """What a derivation knows of one primitive application: its primal output and the
    first `n` coefficients of each output."""
    __slots__ = ("out", "series", "n", "multiple", "constant")

    def __init__(self, out, multiple):
        self.out, self.multiple, self.n, self.constant = out, multiple, 0, False
        self.series = [[] for _ in out] if multiple else []

    def set(self, series, n):
        if self.multiple:
            series = [None] * len(self.out) if series is None else series
            self.series = [[Zero(get_aval(o))] * n if s is None else list(s[:n])
                           for o, s in zip(self.out, series)]
        else:
            self.series = [Zero(get_aval(self.out))] * n if series is None else list(series[:n])
        self.n = n

    def append(self, coeff):
        if self.multiple:
            for s, c in zip(self.series, coeff):
                s.append(c)
        else:
            self.series.append(coeff)
        self.n += 1

    def get(self, n):
        if self.multiple:
            return self.out, [s[:n] for s in self.series]
        return self.out, self.series[:n]


class _Memo:
    """Shared by the inner traces of one derivation: primitive applications by (primitive,
    parameters, operand series), each with the coefficients found so far."""

    def __init__(self):
        self.ids = {}  # structural key -> small int (the ref of the series it names)
        self.entries = {}  # ref -> _Entry
        self.derivs = {}  # ref -> coefficients of the derivative series, (j + 1) x_{j+1}
        self.keep = []  # objects whose id() is in a key, alive while the memo is

    def intern(self, key):
        i = self.ids.get(key)
        if i is None:
            i = self.ids[key] = len(self.ids)
        return i

    def atom(self):
        return self.intern(object.__new__(_Atom))

    def const(self, x):
        """The ref of an operand with no series. Rules make their constants afresh on each
        run (`hypot(x, 1.0)` broadcasts 1.0), so small concrete ones are keyed by value: a
        key by identity would miss the memo on every run, and the derivation would redo
        each lower order once per use (exponential in the order)."""
        if type(x) in (bool, int, float, complex):
            return self.intern(("value", type(x), x))
        if isinstance(x, (np.ndarray, np.generic)):
            return self.intern(("array", x.dtype.str, x.shape, x.tobytes()))
        self.keep.append(x)
        return self.intern(("id", id(x)))

    def params_key(self, params):
        if not params:
            return ()
        items = []
        for k, v in sorted(params.items()):
            try:
                hash(v)
                items.append((k, type(v), v))
            except TypeError:
                self.keep.append(v)
                items.append((k, "id", id(v)))
        return tuple(items)

    def process(self, trace, prim, rule, args, primals, series, params):
        refs = [a.ref if type(a) is JetTracer and a._trace is trace else self.const(a)
                for a in args]
        key = self.intern((prim, self.params_key(params), tuple(refs)))
        order = trace.order
        entry = self.entries.get(key)
        if entry is None and all(type(c) is Zero for s in series for c in s):
            out = prim.bind(*primals, **params)  # no path through it: zero coefficients
            entry = self.entries[key] = _Entry(out, prim.multiple_results)
            entry.set(None, order)
            entry.constant = True
        elif entry is not None and entry.constant:
            entry.set(None, order)
        if entry is None or entry.n < order:
            if getattr(rule, "derived", False):
                entry = self.derive(prim, params, primals, series, refs, key, order)
            else:
                out, out_series = rule(primals, series, **params)
                if entry is None:  # (kept after: operands keyed by identity stay found)
                    entry = self.entries[key] = _Entry(out, prim.multiple_results)
                entry.set(out_series, order)
        out, out_series = entry.get(order)
        return trace.box_outputs(prim, out, out_series, key, self)

    def derive(self, prim, params, primals, series, refs, key, n):
        """The entry of prim(*operands), extended to n coefficients one order at a time."""
        if prim.jvp is None:
            raise missing_rule("Jet", prim)
        entry = self.entries.get(key)
        if entry is None:
            entry = self.entries[key] = _Entry(prim.bind(*primals, **params),
                                               prim.multiple_results)
        for m in range(entry.n + 1, n + 1):
            entry.append(self._coefficient(prim, params, primals, series, refs, m))
        return entry

    def _coefficient(self, prim, params, primals, series, refs, m):
        """y_m = [jvp(x(t), x'(t))]_{m-1} / m, the JVP rule run at order m - 1."""
        if m == 1:
            tangents = [s[0] for s in series]
            _, tout = prim.jvp(list(primals), tangents, **params)
            return tout
        with new_trace(JetTrace, "jet derivation", order=m - 1, memo=self) as t:
            ins = [t.box(p, s[:m - 1], r) for p, s, r in zip(primals, series, refs)]
            tans = [self._derivative(t, p, s, r, m) for p, s, r in zip(primals, series, refs)]
            _, tout = prim.jvp(ins, tans, **params)
            if prim.multiple_results:
                return [_top(t, o, m) for o in tout]
            return _top(t, tout, m)

    def _derivative(self, trace, primal, s, ref, m):
        """The tangent x'(t) to order m - 1: coefficients j x_j, j = 1..m (Zero(aval) if
        all are zero)."""
        d = self.derivs.setdefault(ref, [])
        while len(d) < m:
            j = len(d) + 1
            c = s[j - 1]
            d.append(c if j == 1 or type(c) is Zero else _mul(c, j))
        if all(type(c) is Zero for c in d[:m]):
            return Zero(get_aval(primal))
        head = d[0]
        if type(head) is Zero:
            head = _instantiate(head, head.aval)
        return trace.box(head, d[1:m], self.intern(("d/dt", ref)))


def _top(trace, out, m):
    """Coefficient m - 1 of an output of a rule run at order m - 1, divided by m."""
    if type(out) is JetTracer and out._trace is trace:
        c = out.series[m - 2]
        return c if type(c) is Zero else _div(c, m)
    return Zero(get_aval(out)) if type(out) is not Zero else out


class _Atom:
    """An operand series of a derivation (identity only)."""
    __slots__ = ()
