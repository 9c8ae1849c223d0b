"""The generator: builds a program one operation at a time, evaluating every candidate on the
vmap batch and on the smoothness stencils (`Gen`), and the guards that keep operations in
their domains and away from kinks, ties and non-smooth points. `programs` is the hypothesis
strategy: it draws the seed of a program's random generator and asks the registered makers
(fuzz/makers/, weighted) for its operations."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .program import (
    B, BOUND, H, MARGIN, MAX_NDIM, MAX_SIZE, N_DIRS, N_POINTS, NAMESPACE, Line, Node, Program,
    _arr, _f, _fill)
from .registry import MAKERS


class Reject(Exception):
    """This candidate operation does not fit here (shapes, domain, size)."""


class Gen:
    """Builds a program one operation at a time, keeping every node's batch of values."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes: list[Node] = []
        self.lines: list[Line] = []

    # random choices come from the program's own generator (seeded by hypothesis): uniform,
    # unlike hypothesis' draws, which favour the first and smallest values
    def int(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def perm(self, seq):
        seq = list(seq)
        return [seq[k] for k in self.rng.permutation(len(seq))]

    def coin(self, p=0.5):
        return bool(self.rng.random() < p)

    def choice(self, seq):
        seq = list(seq)
        return seq[int(self.rng.integers(len(seq)))]

    def const(self, nonzero=False, positive=False):
        vals = [0.5, 1.5, 2.0, 0.25, 3.0] if positive else \
               [0.5, -1.5, 2.0, -0.75, 1.25, 3.0] if nonzero else \
               [0.5, -1.5, 2.0, -0.75, 0.0, 1.25, 3.0]
        return self.choice(vals)

    def pick(self, pred=None):
        """A node index satisfying pred, biased toward the newest nodes (deep programs)."""
        cands = [i for i, n in enumerate(self.nodes) if pred is None or pred(n)]
        if not cands:
            raise Reject
        if len(cands) > 1 and not self.coin(0.4):
            return cands[-1] if self.coin(0.6) else cands[-2]
        return self.choice(cands)

    def axis(self, ndim, allow_neg=True):
        if ndim == 0:
            raise Reject
        a = self.int(0, ndim - 1)
        return a - ndim if allow_neg and self.coin(0.3) else a

    def vals(self, i):
        return self.nodes[i].vals

    def shape(self, i):
        return self.nodes[i].shape

    # values of an expression over the batch
    def evaluate(self, expr, args):
        params = [f"a{j}" for j in range(len(args))]
        fn = eval(f"lambda {', '.join(params)}: {_fill(expr, params)}", dict(NAMESPACE))
        outs = [np.asarray(fn(*[self.nodes[i].vals[b] for i in args]))
                for b in range(N_POINTS)]
        return np.stack(outs)

    # domain helpers: expressions for argument slot k (node i)
    def at_least(self, k, i, lo):
        """@k shifted so every value is >= lo."""
        m = float(np.min(self.vals(i)))
        if m >= lo:
            return f"@{k}"
        return f"(@{k} + {_f(np.ceil((lo - m) * 2) / 2)})"

    def at_most(self, k, i, hi):
        m = float(np.max(self.vals(i)))
        if m <= hi:
            return f"@{k}"
        return f"(@{k} - {_f(np.ceil((m - hi) * 2) / 2)})"

    def away_from_zero(self, k, i, lo=0.5):
        if np.min(np.abs(self.vals(i))) >= lo:
            return f"@{k}"
        return self.at_least(k, i, lo)

    def bounded(self, k, i, r):
        """@k if |values| <= r, else r * tanh(@k / r)-ish squashing into (-r, r)."""
        if np.max(np.abs(self.vals(i))) <= r:
            return f"@{k}"
        return f"(fnp.tanh(@{k}) * {_f(r)})"

    def partner(self, i, same=False):
        """A node whose shape broadcasts with node i's (or equals it if same=True)."""
        si = self.shape(i)

        def ok(n):
            if same:
                return n.shape == si
            try:
                s = np.broadcast_shapes(si, n.shape)
            except ValueError:
                return False
            return len(s) <= MAX_NDIM and int(np.prod(s)) <= MAX_SIZE
        return self.pick(ok)

    def const_array(self, shape, lo=-2.0, hi=2.0):
        return _arr(np.round(self.rng.uniform(lo, hi, shape), 2))


def guard(cond):
    if not cond:
        raise Reject


def _sorted_along(vals, axes):
    """The values over `axes` (node axes) sorted on a last axis, per example and remaining
    position."""
    v = np.asarray(vals)
    axes = tuple(a + 1 for a in axes)  # skip the batch axis
    rest = [a for a in range(v.ndim) if a not in axes]
    v = np.transpose(v, rest + list(axes)).reshape([v.shape[a] for a in rest] + [-1])
    return np.sort(v, axis=-1)


def gap_ok(vals, axes, which="all", margin=MARGIN):
    """No ties over `axes` (per example and remaining position): the values are pairwise at
    least `margin` apart (which="all", for sort), or just the two largest ("max") or the
    two smallest ("min")."""
    v = _sorted_along(vals, axes)
    if v.shape[-1] < 2:
        return True
    gaps = np.diff(v, axis=-1)
    gaps = {"all": gaps, "max": gaps[..., -1:], "min": gaps[..., :1]}[which]
    return bool(np.all(gaps >= margin))


def smooth(vals):
    """The value is smooth on the scale H around example 0, along each stencil direction:
    the third and fourth differences are no larger than the first and second (with small
    absolute floors). Then central differences with eps = 1e-5 are accurate to ~(eps/H)^2
    = 1e-6 of the derivative, far inside check_grads' tolerance, at first and second order."""
    for k in range(N_DIRS):
        m2, m1, p0, p1, p2 = vals[B + 5 * k: B + 5 * k + 5]
        d1, d2 = p1 - m1, p1 - 2 * p0 + m1
        d3, d4 = p2 - 2 * p1 + 2 * m1 - m2, p2 - 4 * p1 + 6 * p0 - 4 * m1 + m2
        if not (np.max(np.abs(d3)) <= max(np.max(np.abs(d1)), 1e-3)
                and np.max(np.abs(d4)) <= max(np.max(np.abs(d2)), 1e-4)):
            return False
    return True


def variation(vals):
    """How much the value moves on the stencils."""
    return float(np.max(np.abs(vals[B:] - vals[B + 2]), initial=0.0))


def numerically_constant(vals, arg_vals):
    """The value stays put (to ~rounding of its inputs' scale) while its inputs move: a
    cancellation like imag(conj(z) * z) == 0. Its derivatives are sums of large cancelling
    terms that finite differences cannot resolve (their error is rounding noise / eps), and
    there is no derivative to check anyway."""
    if not any(variation(a) > 0 for a in arg_vals):
        return False
    scale = max([1.0] + [float(np.max(np.abs(a), initial=0.0)) for a in arg_vals])
    return variation(vals) <= 1e-8 * scale ** 2


def split_point(g, vals):
    """A threshold between the values (at least MARGIN from each), so comparisons with it
    split them: the middle of a random wide-enough gap."""
    v = np.unique(np.round(np.ravel(vals), 6))
    mids = [(a + b) / 2 for a, b in zip(v[:-1], v[1:]) if b - a >= 2 * MARGIN + 0.02]
    guard(mids)
    c = float(np.round(g.choice(mids), 2))
    guard(away(vals, [c]))
    return c


def away(vals, points, margin=MARGIN):
    v = np.asarray(vals)[..., None]
    return bool(np.all(np.abs(v - np.asarray(points)) >= margin))


def quantile_gaps_ok(vals, axes, q):
    """The order statistics each quantile in q reads (one, or the two it interpolates
    between) are MARGIN apart from each other and from their neighbours: no tie moves a
    quantile to other values."""
    s = _sorted_along(vals, axes)
    n = s.shape[-1]
    d = np.diff(s, axis=-1)
    for p in np.ravel(q) * (n - 1):
        lo, hi = int(np.floor(p + 1e-9)), int(np.ceil(p - 1e-9))
        ks = [k for k in range(lo - 1, hi + 1) if 0 <= k < n - 1]
        if ks and np.min(d[..., ks]) < MARGIN:
            return False
    return True


def extreme_gap_ok(vals, axes, keep, which, initial=None):
    """The max (or min) over `axes` of the values `keep` selects, and `initial`: its two
    largest (smallest) candidates are MARGIN apart."""
    sign = 1.0 if which == "max" else -1.0
    s = _sorted_along(np.where(keep, sign * np.asarray(vals), -np.inf), axes)
    if initial is not None:
        s = np.sort(np.concatenate([s, np.full(s.shape[:-1] + (1,), sign * initial)], -1), -1)
    if s.shape[-1] < 2:
        return True
    return bool(np.all(s[..., -1] - s[..., -2] >= MARGIN))


def _bcast_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _size(s):
    return int(np.prod(s))


def _shapes(g, n_in):
    """Broadcasting input shapes: each a suffix of one base shape, some dims set to 1."""
    nd = g.int(0, 3)
    base = [g.int(1, 4) for _ in range(nd)]
    while _size(base) > 24:
        base[base.index(max(base))] -= 1
    shapes = []
    for _ in range(n_in):
        s = base[g.int(0, nd):] if nd and g.coin() else list(base)
        s = [1 if n > 1 and g.coin(0.2) else n for n in s]
        shapes.append(tuple(s))
    return shapes


@st.composite
def programs(draw, max_ops=12, makers=None):
    """A random Program (see the package docstring). Hypothesis draws the seed of the
    program's random generator, which makes every other choice."""
    rng = np.random.default_rng(draw(st.integers(0, 2**63 - 1)))
    g = Gen(rng)
    n_in = g.int(1, 3)
    in_shapes = _shapes(g, n_in)
    inputs = [np.round(rng.uniform(-2.0, 2.0, (B,) + s), 3) for s in in_shapes]
    dirs = [[rng.standard_normal(s) for s in in_shapes] for _ in range(N_DIRS)]
    # vmap's in_axes, chosen now: an unbatched input has one value for the whole batch, so
    # the guards below see exactly the combinations vmap and the loop will evaluate
    in_axes = [g.choice([0, 0, None, -1] + list(range(1, len(s) + 1))) for s in in_shapes]
    if all(a is None for a in in_axes):
        in_axes[0] = 0
    for x, ax in zip(inputs, in_axes):
        if ax is None:
            x[:] = x[0]
    for k, (s, x) in enumerate(zip(in_shapes, inputs)):
        stencils = [x[0] + t * H * d[k] for d in dirs for t in (-2, -1, 0, 1, 2)]
        g.nodes.append(Node(f"v{k}", s, np.concatenate([x, np.stack(stencils)])))
    weighted = [m for m, w in MAKERS if makers is None or m in makers for _ in range(w)]
    n_ops = max(g.int(1, max_ops), g.int(1, max_ops))  # favour the longer programs
    for _ in range(n_ops):
        for _attempt in range(12):
            maker = g.choice(weighted)
            expr, args = None, []
            try:
                kind, expr, args = maker(g)
                vals = g.evaluate(expr, args)
            except Reject:
                continue
            except Exception as e:  # noqa: BLE001  a generator slip (or an eager fxad bug)
                if _STRICT_GENERATOR:
                    raise RuntimeError(f"generator built a bad op {expr!r} on shapes "
                                       f"{[g.shape(a) for a in args]}: {e}") from e
                continue
            if (vals.dtype != np.float64 or vals.size == 0 or vals.ndim - 1 > MAX_NDIM
                    or vals[0].size > MAX_SIZE or not np.all(np.isfinite(vals))
                    or np.max(np.abs(vals)) > BOUND or not smooth(vals)):
                continue
            if numerically_constant(vals, [g.vals(a) for a in args]):
                continue
            wrap = g.choice([""] * 16 + ["jit", "jit", "checkpoint"])
            if kind == "while_loop":
                wrap = ""
            name = f"v{len(g.nodes)}"
            g.lines.append(Line(name, kind, expr, list(args), wrap))
            g.nodes.append(Node(name, vals.shape[1:], vals))
            break
    # outputs: the last node and maybe other sinks (nodes nothing else uses), so little of
    # the program is dead code
    n = len(g.nodes)
    used = {a for ln in g.lines for a in ln.args}
    sinks = [k for k in range(n_in, n - 1) if k not in used]
    outputs = [n - 1] + [k for k in sinks if g.coin(0.5)][:2]
    if len(outputs) == 1 and n > 1 and g.coin(0.1):
        outputs.append(g.int(0, n - 2))
    out_axes = g.choice([0, 0, -1])
    return Program(in_shapes, inputs, g.lines, outputs, tuple(in_axes), out_axes,
                   [nd.shape for nd in g.nodes], [nd.vals[:B] for nd in g.nodes])


_STRICT_GENERATOR = False  # tests turn this on: an op the generator builds must be valid
