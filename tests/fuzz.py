"""Fuzzing fxad: random programs built from the primitive tables, with the transformations
checked against each other on every program.

A program is a random DAG of 1..12 operations over 1..3 float64 inputs of broadcasting shapes.
Each operation is one line of Python over fxad.numpy / fxad.lax / fxad.nn / fxad.scipy (the
printed program *is* the code that runs). Operations come from smooth families: elementwise
unary and binary math (with NumPy broadcasting and constants), reductions, softmax and
layer_norm, reshape / transpose / broadcast / squeeze / flip / roll / tile / pad / diag,
basic and advanced indexing, take, at[].add/set/multiply, traced indices (argmax, argsort),
dot / matmul / einsum / tensordot / dot_general / outer / kron, concatenate / stack / split,
where (fixed masks, comparisons, logical ops), cumsum / cumprod / sort, floor_divide /
remainder, complex intermediates (also through solves, determinants and Cholesky), linear
algebra (inv, solve, det, cholesky, triangular and Cholesky solves, eigh, svd, qr, expm,
norms, pinv, lstsq, cond, matrix_power, multi_dot), statistics (median / quantile /
percentile, ptp, NaN-ignoring reductions over NaNs put in by a mask, cov / corrcoef),
sequences (diff, gradient, trapezoid, polyval, vander, interp, convolve / correlate), pad's
edge / reflect / symmetric / wrap modes, rot90 / fliplr / flipud / meshgrid, numpy.fft's
transforms, fmax / fmin / copysign / float_power / fmod, reductions with where= and
initial=, cond / fori_loop / while_loop / scan (bodies closing over program values),
transformations inside the program (grad / jvp / vmap / jacfwd / jacrev closing over program
values), custom_jvp / custom_vjp functions, and any op wrapped in jit or checkpoint.

Domains are kept safe by looking at values. The generator evaluates every candidate
operation as it builds the program, on the vmap batch and on two 5-point stencils x0 + t*H*d
(t = -2..2, H = 0.01, d random) around the point the derivative checks use, and

  * shifts arguments into the domain of log/sqrt/reciprocal/div/pow/... (`log(v3 + 2.5)`),
    keeps exp's argument below 2 (`exp(v1 - 3.0)`), squashes arcsin's into (-0.8, 0.8);
  * uses kinked operations (abs, maximum/minimum, max/min reductions, sort, quantiles,
    argmax, clip, where / cond on comparisons, floor/round/remainder/fmod, interp's knots,
    norms) only where every value, at every stencil point, is at least 0.05 from the kink
    or tie;
  * guards matrix conditioning, eigenvalue and singular value gaps;
  * rejects an operation whose values leave [-1e3, 1e3], or that is not smooth on the
    stencils (third and fourth differences larger than the first and second): then central
    differences with eps = 1e-5 are accurate to ~(1e-5 / H)^2 = 1e-6 of the derivative, at
    first and second order, far inside check_grads' tolerances (which are not loosened).

So a failure is a real disagreement, not finite-difference noise. The checks (g = the sum of
the outputs, for the scalar ones):

  grads       fxad.test_util.check_grads(f, order=2, modes=("fwd", "rev")): JVP vs central
              differences, VJP vs differences, and the transpose identity
  linearize   linearize(f) gives f(x) and jvp's tangent
  jacobians   jacfwd(f) == jacrev(f)
  jit         jit(f) == f
  jit_grad    jit(grad(g)) == grad(g) == grad(jit(g))
  vmap        vmap(f) (random in_axes / out_axes, some inputs unbatched) == a Python loop
              over the batch == jit(vmap(f))
  vmap_grad   vmap(grad(g)) == a Python loop of grad(g)
  hessians    jacfwd(jacrev(g)) == jacrev(jacrev(g)) == jacfwd(jacfwd(g)) == jacrev(jacfwd(g))
              == jit(hessian(g))
  dtypes      on float32 inputs, jit / jvp / vmap give eager's dtypes and grad gives float32

"Agree" is up to rounding: max error <= 1e-9 * max(1, max |expected|).

`python tests/fuzz.py --n 10000 [--seed S]` runs a soak; tests/test_fuzz.py runs a
deterministic few hundred in CI. A failure is minimized (the smallest sub-program by output
node, unused inputs and wrappers dropped) and reported as a runnable script with fxad's
jaxpr. Failures explained by known, reported fxad bugs (KNOWN_BUGS) are labelled as such.
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

if __name__ == "__main__":  # `python tests/fuzz.py`: this checkout's fxad, even when another
    import os                # checkout is installed (`pip install -e` elsewhere)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fxad
import fxad.numpy as fnp
from fxad import lax, nn
from fxad.numpy.methods import _IndexUpdateHelper
from fxad.scipy import linalg as sla
from fxad.scipy import special
from fxad.test_util import check_grads
from fxad.tree_util import tree_flatten

B = 5             # vmap batch size
H = 0.01          # step of the smoothness stencils (see `smooth`)
N_DIRS = 2        # random directions the smoothness stencils look along
N_POINTS = B + 5 * N_DIRS  # value sets the generator tracks: the batch, then the stencils
MAX_SIZE = 36     # largest number of elements of any value
MAX_NDIM = 4
BOUND = 1e3       # every value stays in [-BOUND, BOUND]
MARGIN = 0.05     # distance kept from every kink / tie / domain edge
EXACT_RTOL = 1e-9  # transformations that must agree up to rounding (relative to the scale)

# Functions with user-written rules (right ones), for programs to call.
@fxad.custom_jvp
def cj_xtanh(x):
    return x * fnp.tanh(x)


@cj_xtanh.defjvp
def _cj_xtanh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    th = fnp.tanh(x)
    return x * th, (th + x * (1.0 - th * th)) * t


@fxad.custom_vjp
def cv_mulsin(x, y):
    return x * fnp.sin(y)


def _cv_mulsin_fwd(x, y):
    return x * fnp.sin(y), (x, y)


def _cv_mulsin_bwd(res, ct):
    x, y = res
    return ct * fnp.sin(y), ct * x * fnp.cos(y)


cv_mulsin.defvjp(_cv_mulsin_fwd, _cv_mulsin_bwd)


# `x.at[...]` exists on tracers only (a plain ndarray has no .at), and programs also run
# eagerly, so they spell it at(x)[idx].add(v) with fxad's own helper behind Tracer.at.
NAMESPACE = {"np": np, "fnp": fnp, "lax": lax, "fxad": fxad, "nn": nn, "special": special,
             "at": _IndexUpdateHelper, "cj_xtanh": cj_xtanh, "cv_mulsin": cv_mulsin,
             "sla": sla}


# --- programs ----------------------------------------------------------------------------------

@dataclass
class Node:
    name: str
    shape: tuple
    vals: np.ndarray  # (N_POINTS,) + shape: the batch of B examples, then the stencils


@dataclass
class Line:
    name: str
    kind: str
    expr: str         # with @0, @1, ... for the arguments
    args: list        # node indices
    wrap: str = ""    # "", "jit" or "checkpoint": the op runs as a wrapped lambda


@dataclass
class Program:
    in_shapes: list
    inputs: list              # batched values, (B,) + shape each
    lines: list
    outputs: list             # node indices
    in_axes: tuple
    out_axes: int
    shapes: list = field(default_factory=list)  # every node's shape
    values: list = field(default_factory=list)  # every node's batch of values (generator's)

    @property
    def n_in(self):
        return len(self.in_shapes)

    def node_name(self, i):
        return f"v{i}"

    def source(self):
        """The program as Python source defining `f`."""
        helpers, body = [], []
        for k, ln in enumerate(self.lines):
            node = self.n_in + k
            names = [self.node_name(i) for i in ln.args]
            if ln.wrap:
                params = [f"a{j}" for j in range(len(ln.args))]
                lam = _fill(ln.expr, params)
                helpers.append(f"_{ln.name} = fxad.{ln.wrap}(lambda {', '.join(params)}: {lam})")
                rhs = f"_{ln.name}({', '.join(names)})"
            else:
                rhs = _fill(ln.expr, names)
            body.append(f"    {self.node_name(node)} = {rhs}"
                        f"  # {ln.kind}: {self.shapes[node]}")
        outs = [self.node_name(i) for i in self.outputs]
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ",)"
        params = ", ".join(self.node_name(i) for i in range(self.n_in))
        return "\n".join(helpers + [f"def f({params}):"] + body + [f"    return {ret}"])

    def build(self):
        ns = dict(NAMESPACE)
        exec(compile(self.source(), "<fuzz program>", "exec"), ns)
        return ns["f"]

    def x0(self):
        return tuple(x[0] for x in self.inputs)

    def batched(self):
        out = []
        for x, ax in zip(self.inputs, self.in_axes):
            out.append(x[0] if ax is None else np.moveaxis(x, 0, ax))
        return tuple(out)

    def ops(self):
        return [ln.kind for ln in self.lines]

    def script(self):
        """A runnable reproduction."""
        vals = "\n".join(f"x{i} = np.array({x[0].tolist()!r})  # shape {x[0].shape}"
                         for i, x in enumerate(self.inputs))
        xs = ", ".join(f"x{i}" for i in range(self.n_in))
        return ("import numpy as np\nimport fxad, fxad.numpy as fnp\nfrom fxad import lax, nn\n"
                "from fxad.scipy import special, linalg as sla\n"
                "from fxad.numpy.methods import _IndexUpdateHelper as at\n" +
                ("from tests.fuzz import cj_xtanh, cv_mulsin  # functions with custom rules\n"
                 if "cj_" in self.source() or "cv_" in self.source() else "") +
                "\n" + self.source() + "\n\n" + vals +
                f"\nprint(fxad.make_jaxpr(f)({xs}))")

    def batch_script(self):
        return "\n".join(f"xb{i} = np.array({x.tolist()!r})  # batch of {B}, shape {x.shape}"
                         for i, x in enumerate(self.inputs))

    def sub_program(self, outputs, drop_inputs=False):
        """The program restricted to the ancestors of `outputs` (and with drop_inputs, to
        the inputs they use, unless that leaves vmap nothing batched)."""
        need, stack = set(), list(outputs)
        while stack:
            i = stack.pop()
            if i in need:
                continue
            need.add(i)
            if i >= self.n_in:
                stack.extend(self.lines[i - self.n_in].args)
        keep = [k for k in range(len(self.lines)) if self.n_in + k in need]
        ins = list(range(self.n_in))
        if drop_inputs and any(self.in_axes[i] is not None for i in ins if i in need):
            ins = [i for i in ins if i in need]
        remap = {i: new for new, i in enumerate(ins)}
        for new, k in enumerate(keep):
            remap[self.n_in + k] = len(ins) + new
        lines = [Line(f"v{len(ins) + new}", self.lines[k].kind, self.lines[k].expr,
                      [remap[a] for a in self.lines[k].args], self.lines[k].wrap)
                 for new, k in enumerate(keep)]
        shapes = [self.shapes[i] for i in ins] + [self.shapes[self.n_in + k] for k in keep]
        values = [self.values[i] for i in ins] + [self.values[self.n_in + k] for k in keep] \
            if self.values else []
        return Program([self.in_shapes[i] for i in ins], [self.inputs[i] for i in ins], lines,
                       [remap[o] for o in outputs], tuple(self.in_axes[i] for i in ins),
                       self.out_axes, shapes, values)


def _fill(expr, names):
    for j in reversed(range(len(names))):  # @10 before @1
        expr = expr.replace(f"@{j}", names[j])
    return expr


def _f(x):
    """A float literal that prints short and reads back exactly."""
    return repr(float(x))


def _arr(a):
    """A constant array (bool, int or float) as a literal that reads back exactly."""
    return f"np.array({np.asarray(a).tolist()!r})"


# --- the generator -----------------------------------------------------------------------------

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


# --- operation makers: each returns (kind, expr, args) or raises Reject ------------------------

UNARY_FREE = [
    ("neg", "-@0"), ("negative", "fnp.negative(@0)"), ("sin", "fnp.sin(@0)"),
    ("cos", "fnp.cos(@0)"), ("tanh", "fnp.tanh(@0)"), ("logistic", "lax.logistic(@0)"),
    ("arctan", "fnp.arctan(@0)"), ("arcsinh", "fnp.arcsinh(@0)"), ("square", "fnp.square(@0)"),
    ("pow2", "@0 ** 2"), ("pow3", "@0 ** 3"), ("softplus", "nn.softplus(@0)"),
    ("erf", "special.erf(@0)"), ("erfc", "special.erfc(@0)"), ("sinc", "fnp.sinc(@0)"),
    ("gelu", "nn.gelu(@0)"), ("ndtr", "special.ndtr(@0)"), ("log_ndtr", "special.log_ndtr(@0)"),
    ("silu", "nn.silu(@0)"), ("deg2rad", "fnp.deg2rad(@0)"), ("positive", "+@0"),
]


def mk_unary_free(g):
    kind, expr = g.choice(UNARY_FREE)
    return kind, expr, [g.pick()]


def mk_affine(g):
    i = g.pick()
    c, c2 = g.const(nonzero=True), g.const()
    form = g.choice(["@0 * {c}", "{c} * @0 + {c2}", "{c2} - @0", "@0 / {c}", "@0 + {c2}"])
    return "affine", form.format(c=_f(c), c2=_f(c2)), [i]


def mk_exp_family(g):
    """exp-like growth: the argument is kept <= 2 by a shift."""
    kind, fn = g.choice([("exp", "fnp.exp"), ("expm1", "fnp.expm1"), ("exp2", "fnp.exp2")])
    i = g.pick()
    return kind, f"{fn}({g.at_most(0, i, 2.0)})", [i]


def mk_hyperbolic(g):
    kind = g.choice(["sinh", "cosh"])
    i = g.pick()
    return kind, f"fnp.{kind}({g.bounded(0, i, 2.5)})", [i]


POSITIVE_DOMAIN = [  # (kind, format with {x} the shifted argument, lower bound)
    ("log", "fnp.log({x})", 0.5), ("log1p", "fnp.log1p({x})", -0.5), ("log2", "fnp.log2({x})", 0.5),
    ("log10", "fnp.log10({x})", 0.5), ("sqrt", "fnp.sqrt({x})", 0.5),
    ("rsqrt", "lax.rsqrt({x})", 0.5), ("pow0.5", "{x} ** 0.5", 0.5),
    ("pow-1.5", "{x} ** -1.5", 0.5), ("power2.5", "fnp.power({x}, 2.5)", 0.5),
    ("gammaln", "special.gammaln({x})", 0.5), ("digamma", "special.digamma({x})", 0.5),
    ("gamma", "special.gamma({x})", 0.5), ("entr", "special.entr({x})", 0.5),
    ("arccosh", "fnp.arccosh({x})", 1.2), ("erfcx", "special.erfcx({x})", -0.5),
]


def mk_positive_domain(g):
    kind, form, lo = g.choice(POSITIVE_DOMAIN)
    i = g.pick()
    return kind, form.format(x=g.at_least(0, i, lo)), [i]


def mk_reciprocal(g):
    i = g.pick()
    kind, form = g.choice([("reciprocal", "fnp.reciprocal({x})"), ("rdiv", "1.0 / {x}"),
                           ("pow-1", "{x} ** -1"), ("pow-2", "{x} ** -2")])
    return kind, form.format(x=g.away_from_zero(0, i)), [i]


def mk_bounded_domain(g):
    kind, fn, r = g.choice([("arcsin", "fnp.arcsin", 0.8), ("arccos", "fnp.arccos", 0.8),
                            ("arctanh", "fnp.arctanh", 0.8), ("tan", "fnp.tan", 1.2)])
    i = g.pick()
    return kind, f"{fn}({g.bounded(0, i, r)})", [i]


def mk_logit(g):
    """logit, ndtri and erfinv: inverse CDFs, on (0.1, 0.9) (erfinv's argument mapped to
    (-0.8, 0.8))."""
    i = g.pick()
    v = g.vals(i)
    kind, form = g.choice([("logit", "special.logit({p})"), ("ndtri", "special.ndtri({p})"),
                           ("erfinv", "special.erfinv({p} * 2.0 - 1.0)")])
    if np.all((v >= 0.1) & (v <= 0.9)):
        return kind, form.format(p="@0"), [i]
    return kind, form.format(p="(lax.logistic(@0) * 0.8 + 0.1)"), [i]


def mk_kinked_unary(g):
    i = g.pick()
    v = g.vals(i)
    kind = g.choice(["abs", "abs_op", "relu", "sign", "floor", "ceil", "round", "clip",
                     "maximum_c", "fabs"])
    if kind in ("abs", "abs_op", "relu", "sign", "fabs"):
        guard(away(v, [0.0]))
        expr = {"abs": "fnp.abs(@0)", "abs_op": "abs(@0)", "relu": "nn.relu(@0)",
                "sign": "fnp.sign(@0) * @0", "fabs": "fnp.fabs(@0)"}[kind]
        return kind, expr, [i]
    if kind in ("floor", "ceil"):
        guard(np.all(np.abs(v - np.round(v)) >= MARGIN))
        return kind, f"fnp.{kind}(@0) + @0", [i]
    if kind == "round":
        guard(np.all(np.abs(v - np.floor(v) - 0.5) >= MARGIN))
        return kind, "fnp.round(@0) + @0", [i]
    lo, hi = sorted([g.const(), g.const()])
    guard(hi - lo >= 0.5 and away(v, [lo, hi]))
    if kind == "clip":
        return kind, f"fnp.clip(@0, {_f(lo)}, {_f(hi)})", [i]
    return kind, f"fnp.maximum(@0, {_f(lo)})", [i]


def mk_floor_rem(g):
    """floor_divide / remainder by a constant, away from their jumps."""
    i = g.pick()
    c = g.const(positive=True)
    v = g.vals(i)
    guard(np.all(np.abs(v / c - np.round(v / c)) * c >= MARGIN))
    if g.coin(0.5):
        return "remainder", f"fnp.remainder(@0, {_f(c)})", [i]
    return "floor_divide", f"fnp.floor_divide(@0, {_f(c)}) * @0", [i]


def mk_where_logic(g):
    i = g.pick()
    j = g.partner(i)
    k = g.partner(i)
    try:
        np.broadcast_shapes(g.shape(i), g.shape(j), g.shape(k))
    except ValueError:
        raise Reject
    a, b = split_point(g, g.vals(i)), split_point(g, g.vals(j))
    cond = g.choice([f"fnp.logical_and(@0 > {_f(a)}, fnp.logical_not(@1 < {_f(b)}))",
                     f"fnp.logical_or(@0 < {_f(a)}, @1 > {_f(b)})",
                     "fnp.logical_not(fnp.isnan(@0))"])
    return "where_logic", f"fnp.where({cond}, @2, @1)", [i, j, k]


def mk_complex(g):
    """Complex intermediates between real values."""
    i = g.pick()
    j = g.partner(i)
    form = g.choice(["lax.real(lax.complex(@0, @1) ** 2)",
                     "lax.imag(lax.conj(lax.complex(@0, @1)) * lax.complex(@1, @0))",
                     "lax.real(lax.complex(@0, @1) * lax.complex(@1, 0.5 * @0))"])
    return "complex", form, [i, j]


def _other(g, i, allow_const=True):
    """(expr for slot 1, args): a node broadcasting with i, or a constant."""
    if allow_const and g.coin(0.2):
        if g.coin(0.5) or g.shape(i) == ():
            return _f(g.const(nonzero=True)), []
        s = g.shape(i)
        sub = s[g.int(0, len(s)):]
        return g.const_array(sub), []
    return "@1", [g.partner(i)]


def mk_binary_arith(g):
    i = g.pick()
    rhs, extra = _other(g, i)
    kind, form = g.choice([("add", "@0 + {y}"), ("sub", "@0 - {y}"), ("mul", "@0 * {y}"),
                           ("fnp.add", "fnp.add(@0, {y})"), ("fnp.subtract", "fnp.subtract({y}, @0)"),
                           ("fnp.multiply", "fnp.multiply(@0, {y})"), ("lax.mul", "lax.mul(@0, {y})"),
                           ("logaddexp", "fnp.logaddexp(@0, {y})"),
                           ("logaddexp2", "fnp.logaddexp2(@0, {y})")])
    return kind, form.format(y=rhs), [i] + extra


def mk_div(g):
    i = g.pick()
    if g.coin(0.2):
        return "div", f"@0 / {_f(g.const(nonzero=True))}", [i]
    j = g.partner(i)
    den = g.away_from_zero(1, j)
    form = g.choice(["@0 / {d}", "fnp.divide(@0, {d})", "lax.div(@0, {d})", "fnp.true_divide(@0, {d})"])
    return "div", form.format(d=den), [i, j]


def mk_pow(g):
    i = g.pick()
    j = g.partner(i)
    base = g.at_least(0, i, 0.5)
    ex = g.bounded(1, j, 2.0)
    return "pow", f"fnp.power({base}, {ex})", [i, j]


def mk_xlogy(g):
    i = g.pick()
    j = g.partner(i)
    return "xlogy", f"special.xlogy(@0, {g.at_least(1, j, 0.5)})", [i, j]


def mk_maxmin(g):
    i = g.pick()
    j = g.partner(i)
    kind = g.choice(["maximum", "minimum"])
    try:
        diff = g.evaluate("@0 - @1", [i, j])
    except ValueError:
        raise Reject
    guard(away(diff, [0.0]))
    return kind, f"fnp.{kind}(@0, @1)", [i, j]


def mk_arctan2_hypot(g):
    i = g.pick()
    j = g.partner(i)
    kind = g.choice(["arctan2", "hypot"])
    y, x = g.evaluate("@0 + 0 * @1", [i, j]), g.evaluate("@1 + 0 * @0", [i, j])
    # away from the origin and (arctan2) from the branch cut on the negative x axis
    guard(np.all(np.hypot(x, y) >= 0.3))
    if kind == "arctan2":
        guard(np.all((x > 0) | (np.abs(y) >= MARGIN)))
    return kind, f"fnp.{kind}(@0, @1)", [i, j]


def mk_where_mask(g):
    i = g.pick()
    j = g.partner(i)
    s = np.broadcast_shapes(g.shape(i), g.shape(j))
    ms = s[g.int(0, len(s)):]
    mask = g.rng.integers(0, 2, ms).astype(bool)
    return "where_mask", f"fnp.where({_arr(mask)}, @0, @1)", [i, j]


def mk_where_cmp(g):
    i = g.pick()
    j = g.partner(i)
    k = g.partner(j)
    v = g.vals(i)
    c = split_point(g, v) if g.coin(0.7) else g.const()
    guard(away(v, [c]))
    op = g.choice([">", "<", ">=", "<="])
    try:
        np.broadcast_shapes(g.shape(i), g.shape(j), g.shape(k))
    except ValueError:
        raise Reject
    return "where_cmp", f"fnp.where(@0 {op} {_f(c)}, @1, @2)", [i, j, k]


# reductions

def _axes_arg(g, ndim):
    """(text for axis=..., the reduced axes)."""
    if ndim == 0 or g.coin(0.25):
        return "None", tuple(range(ndim))
    if ndim >= 2 and g.coin(0.25):
        a, b = sorted(g.perm(range(ndim))[:2])
        return f"({a}, {b - ndim if g.coin(0.3) else b})", (a, b)
    a = g.axis(ndim)
    return str(a), (a % ndim,)


def mk_reduction(g):
    i = g.pick()
    nd = len(g.shape(i))
    ax, red = _axes_arg(g, nd)
    kd = g.coin(0.3)
    kind = g.choice(["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp",
                     "amax", "method_sum", "method_mean", "var_ddof", "norm"])
    size = int(np.prod([g.shape(i)[a] for a in red])) if red else 1
    v = g.vals(i)
    kdt = ", keepdims=True" if kd else ""
    if kind in ("max", "min", "amax"):
        guard(gap_ok(v, red, "min" if kind == "min" else "max"))
    if kind == "prod":
        guard(size <= 6)
    if kind in ("std", "var_ddof"):
        guard(size >= 2)
    if kind == "std":
        guard(np.min(np.var(v, axis=tuple(a + 1 for a in red))) >= 0.01)
    if kind == "norm":
        guard(np.min(np.sqrt(np.sum(v * v, axis=tuple(a + 1 for a in red)))) >= 0.1)
        return kind, f"fnp.linalg.norm(@0, axis={ax}{kdt})" if ax != "None" or nd <= 1 else \
            f"fnp.linalg.norm(fnp.ravel(@0){kdt})", [i]
    expr = {"sum": f"fnp.sum(@0, axis={ax}{kdt})", "mean": f"fnp.mean(@0, axis={ax}{kdt})",
            "prod": f"fnp.prod(@0, axis={ax}{kdt})", "max": f"fnp.max(@0, axis={ax}{kdt})",
            "min": f"fnp.min(@0, axis={ax}{kdt})", "var": f"fnp.var(@0, axis={ax}{kdt})",
            "std": f"fnp.std(@0, axis={ax}{kdt})", "amax": f"fnp.amax(@0, axis={ax}{kdt})",
            "logsumexp": f"nn.logsumexp(@0, axis={ax}{kdt})",
            "method_sum": f"@0.sum(axis={ax}{kdt})", "method_mean": f"@0.mean(axis={ax}{kdt})",
            "var_ddof": f"fnp.var(@0, axis={ax}, ddof=1{kdt})"}[kind]
    return kind, expr, [i]


def mk_softmax(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    a = g.axis(len(g.shape(i)))
    kind = g.choice(["softmax", "log_softmax"])
    return kind, f"nn.{kind}(@0, axis={a})", [i]


def mk_layer_norm(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] >= 2)
    guard(np.min(np.var(g.vals(i), axis=-1)) >= 0.05)
    return "layer_norm", "nn.layer_norm(@0)", [i]


# structural

def _factorizations(size, k, rng):
    primes, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            primes.append(p)
            n //= p
        p += 1
    dims = [1] * k
    for q in primes:
        dims[rng.integers(0, k)] *= q
    return tuple(dims)


def mk_reshape(g):
    i = g.pick()
    size = int(np.prod(g.shape(i)))
    k = g.int(1 if size > 1 else 0, MAX_NDIM)
    shape = _factorizations(size, k, g.rng) if k else ()
    txt = list(map(str, shape))
    if shape and g.coin(0.3):
        txt[g.int(0, len(shape) - 1)] = "-1"
    tup = "(" + ", ".join(txt) + ("," if len(txt) == 1 else "") + ")"
    form = g.choice(["fnp.reshape(@0, {s})", "@0.reshape({s})", "lax.reshape(@0, {s})"]) \
        if "-1" not in txt else g.choice(["fnp.reshape(@0, {s})", "@0.reshape({s})"])
    return "reshape", form.format(s=tup), [i]


def mk_ravel(g):
    return "ravel", g.choice(["fnp.ravel(@0)", "@0.ravel()", "@0.flatten()"]), [g.pick()]


def mk_transpose(g):
    i = g.pick(lambda n: len(n.shape) >= 2)
    nd = len(g.shape(i))
    kind = g.choice(["perm", "T", "swapaxes", "moveaxis", "default"])
    if kind == "perm":
        p = tuple(g.perm(range(nd)))
        return "transpose", f"fnp.transpose(@0, {p})", [i]
    if kind == "T":
        return "transpose", "@0.T", [i]
    if kind == "default":
        return "transpose", "fnp.transpose(@0)", [i]
    a, b = g.axis(nd), g.axis(nd)
    return kind, f"fnp.{kind}(@0, {a}, {b})", [i]


def mk_expand_squeeze(g):
    i = g.pick()
    s = g.shape(i)
    ones = [a for a, n in enumerate(s) if n == 1]
    if ones and g.coin(0.5):
        if g.coin(0.3):
            return "squeeze", "fnp.squeeze(@0)", [i]
        return "squeeze", f"fnp.squeeze(@0, {g.choice(ones)})", [i]
    guard(len(s) < MAX_NDIM)
    a = g.int(-(len(s) + 1), len(s))
    form = g.choice([f"fnp.expand_dims(@0, {a})", "@0[None]", "@0[..., None]"])
    return "expand_dims", form, [i]


def mk_broadcast_to(g):
    i = g.pick()
    s = list(g.shape(i))
    new = [n if n != 1 or g.coin(0.5) else int(g.int(2, 4)) for n in s]
    lead = g.int(0, max(0, MAX_NDIM - len(s)))
    new = [int(g.int(1, 3)) for _ in range(min(lead, 2))] + new
    guard(new != s and int(np.prod(new)) <= MAX_SIZE)
    return "broadcast_to", f"fnp.broadcast_to(@0, {tuple(new)})", [i]


def mk_flip_roll(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    nd = len(g.shape(i))
    kind = g.choice(["flip", "flip_all", "roll", "roll_flat"])
    if kind == "flip":
        return kind, f"fnp.flip(@0, {g.axis(nd)})", [i]
    if kind == "flip_all":
        return kind, "fnp.flip(@0)", [i]
    sh = g.int(-3, 3)
    if kind == "roll":
        return kind, f"fnp.roll(@0, {sh}, axis={g.axis(nd)})", [i]
    return kind, f"fnp.roll(@0, {sh})", [i]


def mk_tile_repeat_pad(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    kind = g.choice(["tile", "repeat", "pad"])
    if kind == "tile":
        reps = tuple(int(g.int(1, 2)) for _ in range(nd))
        return kind, f"fnp.tile(@0, {reps})", [i]
    if kind == "repeat":
        return kind, f"fnp.repeat(@0, 2, axis={g.axis(nd)})", [i]
    widths = tuple((int(g.int(0, 1)), int(g.int(0, 1))) for _ in range(nd))
    return kind, f"fnp.pad(@0, {widths}, constant_values={_f(g.const())})", [i]


def mk_matrix_structure(g):
    i = g.pick(lambda n: 1 <= len(n.shape) <= 2)
    s = g.shape(i)
    if len(s) == 1:
        guard(s[0] <= 5)
        return "diag", f"fnp.diag(@0, {g.int(-1, 1)})", [i]
    kind = g.choice(["diag", "diagonal", "trace", "tril", "triu"])
    m, n = s
    if kind == "diag":
        return kind, "fnp.diag(@0)", [i]
    if kind == "diagonal":
        off = g.int(-(m - 1), n - 1)
        return kind, f"fnp.diagonal(@0, {off})", [i]
    if kind == "trace":
        return kind, "fnp.trace(@0)", [i]
    return kind, f"fnp.{kind}(@0, {g.int(-1, 1)})", [i]


def mk_cumulative(g):
    i = g.pick()
    nd = len(g.shape(i))
    kind = g.choice(["cumsum", "cumprod", "sort", "cumsum_flat"])
    if kind == "cumsum_flat":
        return "cumsum", "fnp.cumsum(@0)", [i]
    a = g.axis(nd)
    if kind == "sort":
        guard(gap_ok(g.vals(i), (a % nd,)))
        return kind, f"fnp.sort(@0, axis={a})", [i]
    return kind, f"fnp.{kind}(@0, axis={a})", [i]


# indexing

def _basic_index(g, s):
    parts = []
    for n in s:
        c = g.choice(["all", "int", "slice", "slice", "step"])
        if c == "all":
            parts.append(":")
        elif c == "int":
            parts.append(str(g.int(-n, n - 1)))
        elif c == "slice":
            a = g.int(0, n - 1)
            b = g.int(a + 1, n)
            parts.append(f"{a}:{b}" if b < n else f"{a}:")
        else:
            step = g.choice([2, -1, -2])
            parts.append(f"::{step}")
    if len(parts) and g.coin(0.2):
        parts.insert(g.int(0, len(parts)), "None")
    if len(parts) > 1 and g.coin(0.2):
        parts = ["..."] + parts[g.int(1, len(parts) - 1):]
    while parts and parts[-1] == ":" and len(parts) > 1:
        parts.pop()
    return ", ".join(parts) if parts else "..."


def _advanced_index(g, s):
    nd = len(s)
    a = g.int(0, nd - 1)
    kind = g.choice(["int", "int", "bool", "two"])
    parts = [":"] * nd
    if kind == "bool":
        mask = g.rng.integers(0, 2, s[a]).astype(bool)
        mask[g.rng.integers(0, s[a])] = True
        parts[a] = _arr(mask)
    elif kind == "two" and nd >= 2:
        b = g.int(0, nd - 1)
        guard(b != a)
        k = int(g.int(1, 3))
        parts[a] = _arr(g.rng.integers(-s[a], s[a], k))
        parts[b] = _arr(g.rng.integers(-s[b], s[b], (k,) if g.coin(0.5) else (1,)))
    else:
        k = int(g.int(1, 4))
        shape = (k,) if g.coin(0.7) else (2, k)
        parts[a] = _arr(g.rng.integers(-s[a], s[a], shape))
    while len(parts) > 1 and parts[-1] == ":":
        parts.pop()
    return ", ".join(parts)


def mk_getitem(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    idx = _advanced_index(g, s) if g.coin(0.35) else _basic_index(g, s)
    return "getitem", f"@0[{idx}]", [i]


def mk_take(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    a = g.axis(len(s))
    if g.coin(0.5):
        idx = g.rng.integers(0, s[a], int(g.int(1, 4)))
        return "take", f"fnp.take(@0, {_arr(idx)}, axis={a})", [i]
    ishape = list(s)
    ishape[a] = int(g.int(1, 3))
    idx = g.rng.integers(0, s[a], ishape)
    return "take_along_axis", f"fnp.take_along_axis(@0, {_arr(idx)}, {a})", [i]


def mk_at(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    adv = g.coin(0.4)
    method = g.choice(["add", "set", "multiply"])
    idx = _advanced_index(g, s) if adv else _basic_index(g, s)
    sub = np.zeros(s)[eval(f"np.s_[{idx}]", {"np": np})].shape
    if method != "add" and adv:
        flat = np.arange(int(np.prod(s))).reshape(s)[eval(f"np.s_[{idx}]", {"np": np})].ravel()
        guard(len(np.unique(flat)) == len(flat))  # .set/.multiply need distinct indices
    c = g.choice(["node", "self", "const"])
    if c == "node":
        cands = [j for j, n in enumerate(g.nodes)
                 if len(n.shape) <= len(sub) and _bcast_to(n.shape, sub)]
        guard(cands)
        j = cands[-1] if g.coin(0.5) else g.choice(cands)
        return f"at_{method}", f"at(@0)[{idx}].{method}(@1)", [i, j]
    if c == "self":
        return f"at_{method}", f"at(@0)[{idx}].{method}(fnp.sin(@0[{idx}]))", [i]
    return f"at_{method}", f"at(@0)[{idx}].{method}({_f(g.const(nonzero=True))})", [i]


def _bcast_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


# contractions

def _size(s):
    return int(np.prod(s))


def mk_matmul(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    sa = g.shape(i)

    def ok(n):
        sb = n.shape
        if not sb:
            return False
        k = sb[-2] if len(sb) >= 2 else sb[0]
        if k != sa[-1]:
            return False
        try:
            out = np.matmul(np.zeros(sa), np.zeros(sb)).shape
        except ValueError:
            return False
        return _size(out) <= MAX_SIZE and len(out) <= MAX_NDIM
    cands = [j for j, n in enumerate(g.nodes) if ok(n)]
    form = g.choice(["fnp.matmul(@0, {b})", "@0 @ {b}", "fnp.dot(@0, {b})"])
    if cands and g.coin(0.7):
        j = cands[-1] if g.coin(0.5) else g.choice(cands)
        if form.startswith("fnp.dot") and len(g.shape(j)) > 2:
            form = "fnp.matmul(@0, {b})"
        if form.startswith("fnp.dot") and len(sa) > 2:
            form = "fnp.matmul(@0, {b})"
        return "matmul", form.format(b="@1"), [i, j]
    if len(sa) >= 2 and g.coin(0.6):
        guard(_size(sa[:-1] + sa[-2:-1]) <= MAX_SIZE)
        return "matmul_gram", "fnp.matmul(@0, fnp.swapaxes(@0, -1, -2))", [i]
    k = int(g.int(1, 3))
    guard(_size(sa[:-1]) * k <= MAX_SIZE)
    return "matmul_const", f"@0 @ {g.const_array((sa[-1], k))}", [i]


LETTERS = "abcdefgh"


def mk_einsum(g):
    i = g.pick()
    two = g.coin(0.7)
    j = g.pick() if two else None
    sa = g.shape(i)
    la = LETTERS[:len(sa)]
    sizes = dict(zip(la, sa))
    operands = [la]
    if two:
        sb = g.shape(j)
        lb, fresh = [], iter(LETTERS[len(sa):])
        for n in sb:
            share = [c for c in la if sizes[c] == n and c not in lb]
            if share and g.coin(0.6):
                lb.append(g.choice(share))
            else:
                c = next(fresh)
                sizes[c] = n
                lb.append(c)
        operands.append("".join(lb))
    labels = sorted(set("".join(operands)))
    if g.coin(0.2):  # implicit output: the labels that appear once, in alphabetical order
        spec = ",".join(operands)
        out_shape = [sizes[c] for c in labels if "".join(operands).count(c) == 1]
    else:
        out = [c for c in g.perm(labels) if g.coin(0.6)]
        spec = ",".join(operands) + "->" + "".join(out)
        out_shape = [sizes[c] for c in out]
    guard(_size(out_shape) <= MAX_SIZE)
    return "einsum", f"fnp.einsum({spec!r}, @0{', @1' if two else ''})", [i] + ([j] if two else [])


def mk_tensordot(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    j = g.pick(lambda n: len(n.shape) >= 1)
    sa, sb = g.shape(i), g.shape(j)
    pairs, used_b = [], set()
    for a in g.perm(range(len(sa))):
        bs = [b for b in range(len(sb)) if sb[b] == sa[a] and b not in used_b]
        if bs and g.coin(0.6):
            b = g.choice(bs)
            pairs.append((a, b))
            used_b.add(b)
    kind = g.choice(["tensordot", "dot_general"])
    if kind == "tensordot":
        out = [n for a, n in enumerate(sa) if a not in {p[0] for p in pairs}] + \
              [n for b, n in enumerate(sb) if b not in used_b]
        guard(_size(out) <= MAX_SIZE and len(out) <= MAX_NDIM)
        axes = ([p[0] for p in pairs], [p[1] for p in pairs])
        return kind, f"fnp.tensordot(@0, @1, axes={axes})", [i, j]
    # dot_general: some of the pairs are batch dimensions, the rest contracted
    nb = g.int(0, len(pairs))
    batch, contract = pairs[:nb], pairs[nb:]
    la = [a for a in range(len(sa)) if a not in {p[0] for p in pairs}]
    lb = [b for b in range(len(sb)) if b not in used_b]
    out = [sa[p[0]] for p in batch] + [sa[a] for a in la] + [sb[b] for b in lb]
    guard(_size(out) <= MAX_SIZE and len(out) <= MAX_NDIM)
    dn = ((tuple(p[0] for p in contract), tuple(p[1] for p in contract)),
          (tuple(p[0] for p in batch), tuple(p[1] for p in batch)))
    return kind, f"lax.dot_general(@0, @1, {dn})", [i, j]


def mk_products(g):
    kind = g.choice(["outer", "inner", "vdot", "kron"])
    i = g.pick(lambda n: len(n.shape) >= 1)
    sa = g.shape(i)
    if kind == "outer":
        j = g.pick(lambda n: _size(n.shape) * _size(sa) <= MAX_SIZE)
        return kind, "fnp.outer(@0, @1)", [i, j]
    if kind == "inner":
        j = g.pick(lambda n: len(n.shape) >= 1 and n.shape[-1] == sa[-1]
                   and len(sa) + len(n.shape) - 2 <= MAX_NDIM
                   and _size(sa[:-1]) * _size(n.shape[:-1]) <= MAX_SIZE)
        return kind, "fnp.inner(@0, @1)", [i, j]
    if kind == "vdot":
        j = g.pick(lambda n: _size(n.shape) == _size(sa))
        return kind, "fnp.vdot(@0, @1)", [i, j]
    j = g.pick(lambda n: len(n.shape) == len(sa) and _size(n.shape) * _size(sa) <= MAX_SIZE)
    return kind, "fnp.kron(@0, @1)", [i, j]


# joining and splitting

def mk_concatenate(g):
    i = g.pick()
    s = g.shape(i)
    if len(s) == 0 or g.coin(0.15):
        j = g.pick(lambda n: _size(n.shape) + _size(s) <= MAX_SIZE)
        return "concatenate", "fnp.concatenate([@0, @1], axis=None)", [i, j]
    a = g.axis(len(s))
    ap = a % len(s)

    def ok(n):
        return len(n.shape) == len(s) and all(x == y for k, (x, y) in enumerate(zip(n.shape, s))
                                              if k != ap)
    j = g.pick(ok)
    parts = g.choice([["@0", "@1"], ["@1", "@0", "@1"], ["@0", "@0"], ["@0", "@1", "@0"]])
    total = sum(g.shape(j)[ap] if p == "@1" else s[ap] for p in parts)
    guard(_size(s) // s[ap] * total <= MAX_SIZE)
    form = g.choice(["fnp.concatenate", "lax.concatenate"]) if a >= 0 else "fnp.concatenate"
    if form == "lax.concatenate":
        return "concatenate", f"lax.concatenate([{', '.join(parts)}], {a})", [i, j]
    return "concatenate", f"fnp.concatenate([{', '.join(parts)}], axis={a})", [i, j]


def mk_stack(g):
    i = g.pick()
    s = g.shape(i)
    guard(len(s) < MAX_NDIM and 2 * _size(s) <= MAX_SIZE)
    j = g.partner(i, same=True)
    a = g.int(-(len(s) + 1), len(s))
    kind = g.choice(["stack", "hstack", "vstack"])
    if kind != "stack":
        return kind, f"fnp.{kind}([@0, @1])", [i, j]
    return kind, f"fnp.stack([@0, @1], axis={a})", [i, j]


def mk_split(g):
    i = g.pick(lambda n: len(n.shape) >= 1 and max(n.shape) >= 2)
    s = g.shape(i)
    a = g.choice([k for k, n in enumerate(s) if n >= 2])
    if g.coin(0.5):
        cut = g.int(1, s[a] - 1)
        return "split", f"fnp.split(@0, [{cut}], axis={a})[{g.int(0, 1)}]", [i]
    m = g.choice([k for k in (2, 3, 4) if s[a] % k == 0] or [1])
    return "array_split", f"fnp.array_split(@0, {m}, axis={a})[{g.int(0, m - 1)}]", [i]


# linear algebra (well-conditioned by construction and by guard)

def _square_expr(g, i):
    """An expression (slot 0) for a batch of square matrices built from node i, and its n."""
    s = g.shape(i)
    base = "@0" if np.max(np.abs(g.vals(i))) <= 2 else "fnp.tanh(@0)"  # entries in [-2, 2]
    if len(s) >= 2 and s[-1] == s[-2] and s[-1] >= 2 and g.coin(0.6):
        return base, s[-1]
    guard(len(s) >= 2 and s[-2] >= 2)
    return f"({base} @ fnp.swapaxes({base}, -1, -2) * 0.5)", s[-2]


def mk_linalg(g):
    # at most 2 matrices: batched factorizations run one LAPACK call per matrix, and the
    # Hessian checks batch them again per basis vector (slow, not wrong)
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    kind = g.choice(["inv", "solve", "det", "slogdet", "cholesky", "eigvalsh", "eigh_vec2",
                     "svdvals", "qr_r", "norm_fro", "svd_recon", "qr_q", "eigh_fun", "expm",
                     "solve_triangular", "cho_solve"])
    for shift in [0.0] + g.perm([2.0, 4.0, -4.0]):  # the first well-conditioned one
        m = f"({sq} + {_f(shift)} * np.eye({n}))" if shift else sq
        mv = g.evaluate(m, [i])
        if np.max(np.linalg.cond(mv)) <= 30:
            break
    else:
        raise Reject
    if kind == "det":
        return kind, f"fnp.linalg.det({m})", [i]
    if kind == "slogdet":
        return kind, f"fnp.linalg.slogdet({m})[1]", [i]
    if kind == "inv":
        return kind, f"fnp.linalg.inv({m})", [i]
    if kind == "solve":
        vec = [j for j, nd in enumerate(g.nodes) if nd.shape == (n,)]
        if vec and g.coin(0.5):
            return kind, f"fnp.linalg.solve({m}, @1)", [i, g.choice(vec)]
        return kind, f"fnp.linalg.solve({m}, fnp.sin(@0[..., :1]))", [i]
    if kind == "expm":
        return kind, f"sla.expm({m} * 0.3)", [i]
    if kind in ("cholesky", "solve_triangular", "cho_solve"):
        spd = f"({m} @ fnp.swapaxes({m}, -1, -2) + 0.5 * np.eye({n}))"
        sv = g.evaluate(spd, [i])
        guard(np.max(np.linalg.cond(sv)) <= 100)
        if kind == "cholesky":
            return kind, f"fnp.linalg.cholesky({spd})", [i]
        rhs = "fnp.sin(@0[..., :1])"
        if kind == "solve_triangular":
            return kind, (f"sla.solve_triangular(fnp.linalg.cholesky({spd}), {rhs}, "
                          f"lower=True)"), [i]
        return kind, f"sla.cho_solve((fnp.linalg.cholesky({spd}), True), {rhs})", [i]
    if kind == "svd_recon":  # u diag(sin s) vt: the whole SVD rule, free of sign choices
        sv = np.linalg.svd(mv, compute_uv=False)
        guard(np.all(-np.diff(sv, axis=-1) >= 0.1) and np.min(sv) >= 0.1)
        return kind, (f"(lambda u, s, vt: (u * fnp.sin(s)[..., None, :]) @ vt)"
                      f"(*fnp.linalg.svd({m}, full_matrices=False))"), [i]
    if kind == "qr_q":
        r = np.linalg.qr(mv)[1]
        guard(np.min(np.abs(np.diagonal(r, axis1=-2, axis2=-1))) >= 0.1)
        return kind, f"fnp.linalg.qr({m})[0]", [i]
    if kind == "eigh_fun":  # v diag(sin w) vᵀ: a matrix function through eigh
        sym = f"({m} + fnp.swapaxes({m}, -1, -2))"
        w = np.linalg.eigvalsh(g.evaluate(sym, [i]))
        guard(np.all(np.diff(w, axis=-1) >= 0.1))
        return kind, (f"(lambda w, v: (v * fnp.sin(w)[..., None, :]) @ fnp.swapaxes(v, -1, -2))"
                      f"(*fnp.linalg.eigh({sym}))"), [i]
    if kind in ("eigvalsh", "eigh_vec2"):
        sym = f"({m} + fnp.swapaxes({m}, -1, -2))"
        w = np.linalg.eigvalsh(g.evaluate(sym, [i]))
        guard(np.all(np.diff(w, axis=-1) >= 0.1))
        if kind == "eigvalsh":
            return kind, f"fnp.linalg.eigvalsh({sym})", [i]
        return kind, f"fnp.linalg.eigh({sym})[1] ** 2", [i]  # squares: sign-free
    if kind == "svdvals":
        sv = np.linalg.svd(mv, compute_uv=False)
        guard(np.all(-np.diff(sv, axis=-1) >= 0.1) and np.min(sv) >= 0.1)
        return kind, f"fnp.linalg.svd({m}, compute_uv=False)", [i]
    if kind == "qr_r":
        r = np.linalg.qr(mv)[1]
        guard(np.min(np.abs(np.diagonal(r, axis1=-2, axis2=-1))) >= 0.1)
        return kind, f"fnp.linalg.qr({m})[1]", [i]
    guard(np.min(np.linalg.norm(mv, axis=(-2, -1))) >= 0.1)
    return kind, f"fnp.linalg.norm({m}, axis=(-2, -1))", [i]



def mk_complex_linalg(g):
    """Complex matrices through the linear algebra that takes them (solves with the
    conjugate transpose, determinants, Hermitian Cholesky); results made real."""
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    c = f"lax.complex({sq}, fnp.sin(fnp.swapaxes({sq}, -1, -2)))"
    for shift in g.perm([2.0, 4.0, -4.0]):
        m = f"({c} + {_f(shift)} * np.eye({n}))"
        if np.max(np.linalg.cond(g.evaluate(m, [i]))) <= 30:
            break
    else:
        raise Reject
    hpd = f"({m} @ lax.conj(fnp.swapaxes({m}, -1, -2)) + 0.5 * np.eye({n}))"
    rhs = "(fnp.sin(@0[..., :1]) * (1 + 0.5j))"
    kind = g.choice(["det", "slogdet", "inv", "lu_solve_C", "tri_C", "cholesky", "cho_solve"])
    form = {
        "det": f"lax.real(fnp.linalg.det({m}) * (1 - 0.5j))",
        "slogdet": f"fnp.linalg.slogdet({m})[1] + lax.imag(fnp.linalg.slogdet({m})[0])",
        "inv": f"lax.real(fnp.linalg.inv({m}) * (1 + 1j))",
        "lu_solve_C": f"lax.real(sla.lu_solve(sla.lu_factor({m}), {rhs}, trans=2))",
        "tri_C": (f"lax.imag(sla.solve_triangular(fnp.linalg.cholesky({hpd}), {rhs}, "
                  f"lower=True, trans='C'))"),
        "cholesky": f"lax.real(fnp.linalg.cholesky({hpd}) * (1 + 0.5j))",
        "cho_solve": f"lax.imag(sla.cho_solve(sla.cho_factor({hpd}), {rhs}))",
    }[kind]
    return "complex_" + kind, form, [i]

# control flow

COND_BRANCHES = ["fnp.sin(x) * y", "fnp.tanh(x) + y", "x * y - 1.0", "fnp.cos(y) * x",
                 "x + y * y"]


def mk_cond(g):
    i = g.pick()
    j = g.partner(i)
    k = g.pick()
    s = g.evaluate("fnp.sum(@0)", [k])
    c = split_point(g, s)
    t, f = g.choice(COND_BRANCHES), g.choice(COND_BRANCHES)
    op = g.choice([">", "<"])
    out_shape = np.broadcast_shapes(g.shape(i), g.shape(j))
    closed = [m for m, n in enumerate(g.nodes) if _bcast_to(n.shape, out_shape)]
    extra = []
    if closed and g.coin(0.4):  # a branch closes over another value of the program
        t = f"({t}) * fnp.tanh(@3)"
        extra = [g.choice(closed)]
    return "cond", (f"lax.cond(fnp.sum(@2) {op} {_f(c)}, lambda x, y: {t}, lambda x, y: {f}, "
                    f"@0, @1)"), [i, j, k] + extra


def mk_fori(g):
    i = g.pick()
    s = g.shape(i)
    j = g.pick(lambda n: _bcast_to(n.shape, s))
    body = g.choice(["fnp.tanh(c) * 0.5 + @1", "fnp.sin(c) * @1", "c * 0.5 + @1 * @1",
                     "lax.logistic(c + @1)"])
    n = g.int(1, 3)
    return "fori_loop", f"lax.fori_loop(0, {n}, lambda i, c: {body}, @0)", [i, j]


def mk_while(g):
    """A while_loop with a fixed trip count. Reverse mode through while_loop needs the trip
    count, so it works eagerly but not under jit (documented): programs with one skip the
    jit-over-reverse-mode checks, and the op is never wrapped in jit."""
    i = g.pick()
    s = g.shape(i)
    j = g.pick(lambda n: _bcast_to(n.shape, s))
    body = g.choice(["fnp.sin(c[0]) * @1 + 0.5", "fnp.tanh(c[0] + @1)", "c[0] * 0.5 + @1 * @1"])
    n = g.int(1, 3)
    return "while_loop", (f"lax.while_loop(lambda c: c[1] < {n}, lambda c: ({body}, c[1] + 1), "
                          f"(@0, 0))[0]"), [i, j]


def mk_scan(g):
    xs = g.pick(lambda n: len(n.shape) >= 1 and n.shape[0] <= 4)
    cs = g.shape(xs)[1:]
    cands = [j for j, n in enumerate(g.nodes) if n.shape == cs]
    if cands and g.coin(0.8):
        init, args = "@1", [xs, g.choice(cands)]
    else:
        init, args = "fnp.zeros_like(@0[0])", [xs]
    body = g.choice(["(fnp.tanh(c) * 0.5 + fnp.sin(x), c * x)",
                     "(c * x + 0.5, fnp.cos(c) + x)",
                     "(lax.logistic(c - x), c + x * x)"])
    closed = [j for j, n in enumerate(g.nodes) if _bcast_to(n.shape, cs)]
    if closed and g.coin(0.4):  # the body closes over another value of the program
        body = "(fnp.tanh(c) * @{k} + fnp.sin(x), c * x - @{k})".format(k=len(args))
        args = args + [g.choice(closed)]
    out = g.int(0, 1)
    rev = ", reverse=True" if g.coin(0.3) else ""
    return "scan", f"lax.scan(lambda c, x: {body}, {init}, @0{rev})[{out}]", args


def mk_custom(g):
    i = g.pick()
    if g.coin(0.5):
        return "custom_jvp", "cj_xtanh(@0)", [i]
    j = g.partner(i, same=True)
    return "custom_vjp", "cv_mulsin(@0, @1)", [i, j]


def mk_traced_index(g):
    """Indices computed from values (argmax, argsort): batched index arrays under vmap."""
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    if g.coin(0.5):
        j = g.pick(lambda n: 2 <= _size(n.shape) <= s[0])
        fn = g.choice(["argmax", "argmin"])
        guard(gap_ok(g.vals(j), tuple(range(len(g.shape(j)))), fn[3:]))
        # (@0 may be a plain ndarray -- e.g. unbatched under vmap -- which NumPy cannot
        # index with a traced value: fxad.numpy.take / lax.getitem are the spellings)
        form = g.choice([f"fnp.take(@0, fnp.{fn}(@1), axis=0)", f"lax.getitem(@0, fnp.{fn}(@1))"])
        return "traced_index", form, [i, j]
    j = g.partner(i, same=True)
    a = g.axis(len(s))
    guard(gap_ok(g.vals(j), (a % len(s),)))
    return "sort_by_key", f"fnp.take_along_axis(@0, fnp.argsort(@1, axis={a}), axis={a})", [i, j]


# transformations inside the program, closing over other (possibly traced) nodes: the outer
# transformations must keep their perturbations apart from the inner ones

INNER_BODIES = ["fnp.sum(fnp.sin(a * @1) ** 2)", "fnp.sum(fnp.tanh(a) * @1)",
                "fnp.sum(a * a * @1)", "fnp.sum(lax.logistic(a + @1) * a)"]


def mk_inner(g):
    i = g.pick()
    s = g.shape(i)
    kind = g.choice(["inner_grad", "inner_jvp", "inner_vmap", "inner_jacfwd", "inner_jacrev"])
    if kind == "inner_vmap":
        guard(len(s) >= 1)
        j = g.pick(lambda n: _bcast_to(n.shape, s[1:]))
        body = g.choice(INNER_BODIES)
        return kind, f"fxad.vmap(lambda a: {body})(@0)", [i, j]
    j = g.pick(lambda n: _bcast_to(n.shape, s))
    if kind == "inner_grad":
        return kind, f"fxad.grad(lambda a: {g.choice(INNER_BODIES)})(@0)", [i, j]
    elem = g.choice(["fnp.sin(a) * @1", "fnp.tanh(a * @1)", "a * a * @1", "fnp.exp(fnp.sin(a)) + @1"])
    if kind == "inner_jvp":
        k = g.pick(lambda n: n.shape == s)
        return kind, f"fxad.jvp(lambda a: {elem}, (@0,), (@2,))[1]", [i, j, k]
    guard(_size(s) ** 2 <= MAX_SIZE and 2 * len(s) <= MAX_NDIM)
    return kind, f"fxad.{kind[6:]}(lambda a: {elem})(@0)", [i, j]


# NumPy's statistics, sequence functions, padding modes, FFTs, more linear algebra and ufuncs
# (composites of the primitives above, and the fft / fmod / pinv primitives), at points where
# they are smooth: no ties among the order statistics read, no value at a kink or knot

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


def _vec(g, k, i):
    """Slot k (node i) as a 1-d value."""
    return f"@{k}" if len(g.shape(i)) == 1 else f"fnp.ravel(@{k})"


QUANTILES = [0.5, 0.25, 0.8, 0.1, 0.9, 0.3, [0.2, 0.7], [0.9, 0.05, 0.5]]


def mk_order_stats(g):
    """Quantiles (median / quantile / percentile, methods linear and midpoint), ptp, the
    NaN-ignoring reductions of a value with NaNs put in by a constant mask, cov / corrcoef."""
    kind = g.choice(["median", "quantile", "percentile", "ptp", "nanmax", "nanmin", "nanvar",
                     "nanstd", "nanprod", "nanmean", "nansum", "cov", "corrcoef", "corrcoef"])
    if kind in ("cov", "corrcoef"):
        return _cov(g, kind)
    i = g.pick(lambda n: len(n.shape) >= 1)
    s, v = g.shape(i), g.vals(i)
    ax, red = _axes_arg(g, len(s))
    kd = ", keepdims=True" if g.coin(0.3) else ""
    if kind in ("median", "quantile", "percentile"):
        q = 0.5 if kind == "median" else g.choice(QUANTILES)
        guard(quantile_gaps_ok(v, red, q))
        if kind == "median":
            return kind, f"fnp.median(@0, axis={ax}{kd})", [i]
        method = g.choice(["", ", method='linear'", ", method='midpoint'"])
        qt = repr(q) if kind == "quantile" else repr(np.round(np.multiply(q, 100), 6).tolist())
        return kind, f"fnp.{kind}(@0, {qt}, axis={ax}{method}{kd})", [i]
    if kind == "ptp":
        guard(_size([s[a] for a in red]) >= 2)
        guard(gap_ok(v, red, "max") and gap_ok(v, red, "min"))
        return kind, f"fnp.ptp(@0, axis={ax}{kd})", [i]
    mask = np.asarray(g.rng.random(s) < 0.35)
    guard(mask.any())
    count = np.sum(~mask, axis=red)
    guard(np.min(count) >= 1)
    x = f"fnp.where({_arr(mask)}, np.nan, @0)"
    if kind in ("nanmax", "nanmin"):
        guard(extreme_gap_ok(v, red, ~mask, kind[3:]))
    if kind == "nanprod":
        guard(np.max(count) <= 6)
    ddof = ""
    if kind in ("nanvar", "nanstd"):
        d = g.int(0, 1)
        guard(np.min(count) >= d + 1)
        ddof = f", ddof={d}" if d or g.coin(0.3) else ""
        if kind == "nanstd":
            var = np.nanvar(np.where(mask, np.nan, v), axis=tuple(a + 1 for a in red), ddof=d)
            guard(np.min(var) >= 0.01)
    return kind, f"fnp.{kind}({x}, axis={ax}{ddof}{kd})", [i]


def _cov(g, kind):
    """cov / corrcoef of a 1-d or 2-d value (and maybe a second one), >= 3 observations; the
    correlations kept away from +-1 (corrcoef clips there) and the variances from 0."""
    i = g.pick(lambda n: 1 <= len(n.shape) <= 2 and max(n.shape) >= 3)
    s = g.shape(i)
    # variables in rows (rowvar) or columns, with >= 3 observations
    rowvar = g.choice([r for r, obs in ((True, s[-1]), (False, s[0])) if obs >= 3])
    args, opts = [i], "" if rowvar else ", rowvar=False"
    nvar = 1 if len(s) == 1 else s[0] if rowvar else s[1]
    if g.coin(0.25) or (kind == "corrcoef" and nvar == 1):
        args.append(g.partner(i, same=True))
    with np.errstate(all="ignore"):
        xs = [g.vals(a) for a in args]
        if len(s) == 2 and not rowvar:
            xs = [np.swapaxes(x, -1, -2) for x in xs]
        rows = np.concatenate([x.reshape(N_POINTS, -1, x.shape[-1]) for x in xs], 1)
        guard(np.min(np.var(rows, axis=-1)) >= 0.01)
        nvar = rows.shape[1]
        if kind == "corrcoef":
            guard(nvar >= 2)
            # the clip at +-1 matters where derivatives are compared with differences: at
            # the point and on the stencils (the batch examples only compare transformations)
            r = np.stack([np.corrcoef(rows[k]) for k in [0] + list(range(B, N_POINTS))])
            guard(np.max(np.abs(r[:, ~np.eye(nvar, dtype=bool)])) <= 0.98)
    y = ", @1" if len(args) == 2 else ""
    if kind == "cov":
        opts += g.choice(["", "", ", bias=True", ", ddof=0", ", ddof=2"])
    return kind, f"fnp.{kind}(@0{y}{opts})", args


def mk_sequences(g):
    """diff, gradient, trapezoid, polyval, vander, interp (constant knots), convolve and
    correlate."""
    kind = g.choice(["diff", "gradient", "trapezoid", "polyval", "vander", "interp",
                     "convolve", "correlate"])
    if kind in ("convolve", "correlate"):
        i = g.pick(lambda n: _size(n.shape) <= 12)
        a, args = _vec(g, 0, i), [i]
        if g.coin(0.3):
            v = g.const_array((g.int(1, 4),))
        else:
            j = g.pick(lambda n: _size(n.shape) <= 6)
            v, args = _vec(g, 1, j), [i, j]
        mode = g.choice(["", ", mode='full'", ", mode='same'", ", mode='valid'", ", 'same'"])
        if g.coin(0.3):
            a, v = v, a
        return kind, f"fnp.{kind}({a}, {v}{mode})", args
    if kind == "polyval":
        i = g.pick()
        x = g.bounded(0, i, 1.5)
        if g.coin(0.5):
            p = repr([g.const(nonzero=True)] + [g.const() for _ in range(g.int(1, 3))])
            return kind, f"fnp.polyval({p}, {x})", [i]
        j = g.pick(lambda n: 1 <= _size(n.shape) <= 4)
        return kind, f"fnp.polyval({_vec(g, 1, j)}, {x})", [i, j]
    if kind == "vander":
        i = g.pick(lambda n: 2 <= _size(n.shape) <= 6)
        x = g.bounded(0, i, 1.5)
        x = x if len(g.shape(i)) == 1 else f"fnp.ravel({x})"
        n = g.choice(["", ", 2", ", 3", ", N=4"])
        inc = ", increasing=True" if g.coin(0.4) else ""
        return kind, f"fnp.vander({x}{n}{inc})", [i]
    if kind == "interp":
        i = g.pick()
        vec = [j for j, n in enumerate(g.nodes) if len(n.shape) == 1 and 2 <= n.shape[0] <= 6]
        if vec and g.coin(0.6):
            j = g.choice(vec)
            m, fp, args = g.shape(j)[0], "@1", [i, j]
        else:
            m = g.int(2, 5)
            fp, args = g.const_array((m,)), [i]
        # knots spanning the values, off the grids of the inputs (0.001) and of the constants
        lo, hi = float(np.min(g.vals(i))), float(np.max(g.vals(i)))
        steps = np.concatenate([[g.rng.uniform(lo - 0.6, lo + 0.2)],
                                g.rng.uniform(0.3, max(0.4, (hi - lo + 0.8) / (m - 1)), m - 1)])
        xp = np.round(np.round(np.cumsum(steps), 2) + 0.0037, 4)
        guard(away(g.vals(i), xp))
        lr = f", left={_f(g.const())}, right={_f(g.const())}" if g.coin(0.3) else ""
        return kind, f"fnp.interp(@0, {_arr(xp)}, {fp}{lr})", args
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    if kind == "diff":
        a = g.axis(nd)
        n = g.int(1, 2)
        pre, extra = g.choice(["", "scalar", "array"]), 0
        if pre == "scalar":
            pre, extra = f", prepend={_f(g.const())}", 1
        elif pre == "array":
            ps = list(s)
            ps[a] = 1
            pre, extra = f", prepend={g.const_array(tuple(ps))}", 1
        guard(s[a] + extra - n >= 1)
        nt = f", n={n}" if n > 1 or g.coin(0.3) else ""
        return kind, f"fnp.diff(@0{nt}, axis={a}{pre})", [i]
    if kind == "trapezoid":
        a = g.axis(nd)
        guard(s[a] >= 2)
        xs = g.choice(["", "dx", "x"])
        if xs == "dx":
            xs = f", dx={_f(g.const(positive=True))}"
        elif xs == "x":
            xs = f", {_arr(np.round(np.cumsum(g.rng.uniform(0.2, 1.0, s[a])), 2))}"
        return kind, f"fnp.trapezoid(@0{xs}, axis={a})", [i]
    # gradient: one array per axis (a list when several)
    e = g.choice([1, 2])
    form = g.choice(["all", "one", "pair"]) if nd >= 2 else g.choice(["all", "one"])
    if form == "all":
        axes, at = list(range(nd)), ""
    elif form == "one":
        a = g.axis(nd)
        axes, at = [a % nd], f", axis={a}"
    else:
        a, b = g.perm(range(nd))[:2]
        axes, at = [a, b], f", axis=({a}, {b})"
    guard(all(s[a] >= e + 1 for a in axes))
    hs = [g.choice([1.0, 0.5, 2.0, 0.25]) for _ in axes]
    sp = g.choice(["", "one", "each"])
    sp = "" if not sp else f", {_f(hs[0])}" if sp == "one" or len(axes) == 1 else \
        ", " + ", ".join(_f(h) for h in hs)
    eo = f", edge_order={e}" if e == 2 or g.coin(0.3) else ""
    call = f"fnp.gradient(@0{sp}{at}{eo})"
    if len(axes) == 1:
        return kind, call, [i]
    expr = g.choice([f"{call}[{g.int(0, len(axes) - 1)}]", f"fnp.stack({call}, {g.int(0, nd)})",
                     f"(lambda d: d[0] * d[-1])({call})"])
    return kind, expr, [i]


PAD_MODES = ["edge", "reflect", "symmetric", "wrap"]


def mk_pad_rotate(g):
    """pad's edge / reflect / symmetric / wrap modes, rot90, fliplr / flipud, meshgrid."""
    kind = g.choice(["pad", "pad", "rot90", "fliplr", "flipud", "meshgrid"])
    if kind == "meshgrid":
        i = g.pick(lambda n: _size(n.shape) <= 6)
        j = g.pick(lambda n: _size(n.shape) * _size(g.shape(i)) <= MAX_SIZE)
        opts = g.choice(["", ", indexing='ij'", ", indexing='xy'"]) + \
            (", sparse=True" if g.coin(0.3) else "")
        if g.coin(0.25):
            k = g.pick(lambda n: _size(n.shape) * _size(g.shape(i)) * _size(g.shape(j)) <= MAX_SIZE)
            call = f"fnp.meshgrid(@0, @1, @2{opts})"
            return kind, g.choice([f"{call}[2]", f"(lambda a, b, c: a * b + fnp.sin(c))(*{call})"]), \
                [i, j, k]
        call = f"fnp.meshgrid(@0, @1{opts})"
        return kind, g.choice([f"{call}[0]", f"{call}[1]", f"(lambda a, b: a * fnp.sin(b))(*{call})",
                               f"(lambda a, b: a - b)(*{call})"]), [i, j]
    if kind == "fliplr":
        i = g.pick(lambda n: len(n.shape) >= 2)
        return kind, "fnp.fliplr(@0)", [i]
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    if kind == "flipud":
        return kind, "fnp.flipud(@0)", [i]
    if kind == "rot90":
        guard(nd >= 2)
        k = g.int(-1, 3)
        if g.coin(0.3):
            return kind, f"fnp.rot90(@0, {k})", [i]
        a, b = g.perm(range(nd))[:2]
        a, b = (a - nd if g.coin(0.3) else a), (b - nd if g.coin(0.3) else b)
        return kind, f"fnp.rot90(@0, {k}, axes=({a}, {b}))", [i]
    mode = g.choice(PAD_MODES)
    form = g.choice(["axes", "axes", "int", "pair"])
    if form == "int":
        w = str(g.int(1, 2))
    elif form == "pair":
        w = str((g.int(0, 2), g.int(0, 2)))
    else:
        w = str(tuple((g.int(0, 2), g.int(0, 1)) for _ in range(nd)))
    return "pad_" + mode, g.choice([f"fnp.pad(@0, {w}, mode={mode!r})", f"fnp.pad(@0, {w}, {mode!r})"]), [i]


def _conditioned(g, i, core, m, n, shifts=(2.0, 3.0, -3.0), max_cond=30.0):
    """A well-conditioned (..., m, n) expression from `core` (over slot 0, node i): its
    entries squashed into [-2, 2] if need be, then maybe shifted by a multiple of eye(m, n);
    and its singular values (per point, descending)."""
    core = core if np.max(np.abs(g.vals(i))) <= 2 else core.replace("@0", "fnp.tanh(@0)")
    for shift in [0.0] + g.perm(shifts):
        e = f"({core} + {_f(shift)} * np.eye({m}, {n}))" if shift else core
        sv = np.linalg.svd(g.evaluate(e, [i]), compute_uv=False)
        if np.min(sv) >= 0.1 and np.max(sv[..., 0] / sv[..., -1]) <= max_cond:
            return e, sv
    raise Reject


def mk_linalg_more(g):
    """pinv (rectangular), lstsq (tall), cond (p None / 'fro'), matrix_power, multi_dot, eig
    (general matrices)."""
    kind = g.choice(["pinv", "lstsq", "cond", "matrix_power", "multi_dot", "eig"])
    if kind == "multi_dot":
        return _multi_dot(g)
    if kind == "lstsq":
        i = g.pick(lambda n: len(n.shape) == 2 and n.shape[0] != n.shape[1] and max(n.shape) <= 6)
        m, n = g.shape(i)
        core = "@0" if m > n else "@0.T"
        m, n = max(m, n), min(m, n)
        a, _ = _conditioned(g, i, core, m, n)
        vec = [j for j, nd in enumerate(g.nodes) if nd.shape[:1] == (m,) and len(nd.shape) <= 2
               and _size(nd.shape) <= 3 * m]
        if vec and g.coin(0.5):
            return kind, f"fnp.linalg.lstsq({a}, @1)[0]", [i, g.choice(vec)]
        b = g.choice([f"fnp.cos({a}[:, 0])", f"fnp.sin({a}[:, :1] * 2.0)"])
        return kind, f"fnp.linalg.lstsq({a}, {b})[0]", [i]
    if kind == "pinv":
        i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2
                   and 2 <= max(n.shape[-2:]) and max(n.shape[-2:]) <= 5)
        m, n = g.shape(i)[-2:]
        a, _ = _conditioned(g, i, "@0", m, n)
        return kind, f"fnp.linalg.pinv({a})", [i]
    i = g.pick(lambda n: len(n.shape) >= 2 and _size(n.shape[:-2]) <= 2)
    sq, n = _square_expr(g, i)
    guard(n <= 4)
    a, sv = _conditioned(g, i, sq, n, n, shifts=(2.0, 4.0, -4.0))
    if kind == "cond":
        p = g.choice(["", ", None", ", 'fro'", ", 'fro'"])
        if "fro" not in p:  # a ratio of the largest and smallest singular values: simple ones
            guard(np.all(-np.diff(sv, axis=-1) >= 0.1))
        return "cond_number", f"fnp.linalg.cond({a}{p})", [i]
    if kind == "eig":
        return _eig(g, i, a, n)
    k = g.choice([-2, -1, 1, 2, 3])
    scale = "" if k < 0 else f" * {_f(g.choice([0.4, 0.7]))}"
    return kind, f"fnp.linalg.matrix_power({a}{scale}, {k})", [i]


def _eig(g, i, a, n):
    """Eigenvalues, or eigenvectors made sign-free (each column times its first entry: LAPACK
    fixes the norm and the largest component's phase, not the sign), where the eigenvalues
    are 0.1 apart and each vector's largest component leads by 0.05."""
    w, v = np.linalg.eig(g.evaluate(a, [i]))
    gaps = np.abs(w[..., :, None] - w[..., None, :]) + np.eye(n) * 1e9
    guard(np.min(gaps) >= 0.1)
    top = np.sort(np.abs(v), axis=-2)
    guard(np.min(top[..., -1, :] - top[..., -2, :]) >= 0.05)
    if g.coin(0.5):
        return "eigvals", f"lax.real(fnp.linalg.eigvals({a}) * (1 - 0.5j))", [i]
    vec = f"fnp.linalg.eig({a})[1]"
    return "eig_vectors", f"lax.imag({vec} * {vec}[..., :1, :] * (1 + 0.5j))", [i]


def _multi_dot(g):
    """A chain of 2-d values (and their transposes) whose inner sizes match, maybe with 1-d
    ends."""
    i = g.pick(lambda n: len(n.shape) == 2)
    args, factors = [i], ["@0"]
    first, last = g.shape(i)
    for _ in range(g.int(1, 3)):
        cands = [(j, False) for j, n in enumerate(g.nodes) if len(n.shape) == 2 and n.shape[0] == last] \
            + [(j, True) for j, n in enumerate(g.nodes) if len(n.shape) == 2 and n.shape[1] == last]
        j, tr = g.choice(cands)
        factors.append(f"@{len(args)}" + (".T" if tr else ""))
        args.append(j)
        last = g.shape(j)[0 if tr else 1]
    for end, size in (("last", last), ("first", first)):
        vec = [j for j, n in enumerate(g.nodes) if n.shape == (size,)]
        if vec and g.coin(0.3):
            slot = f"@{len(args)}"
            args.append(g.choice(vec))
            factors = factors + [slot] if end == "last" else [slot] + factors
    return "multi_dot", f"fnp.linalg.multi_dot([{', '.join(factors)}])", args


FFT_REAL = ["lax.real({z})", "lax.imag({z})", "fnp.abs({z}) ** 2", "lax.real({z} * lax.conj({z}))"]


def mk_fft(g):
    """numpy.fft's transforms (n / s / axes / norm variations), of real or complex values,
    made real (real / imag / |z|^2) unless they are the real-output inverse transforms."""
    i = g.pick(lambda n: len(n.shape) >= 1)
    s = g.shape(i)
    nd = len(s)
    kind = g.choice(["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "irfftn", "fftn", "irfft2"])
    x = "@0"
    if kind not in ("rfft", "rfftn") and g.coin(0.4):
        x = "lax.complex(@0, fnp.sin(@0))"
    norm = g.choice(["", "", ", norm='ortho'", ", norm='forward'", ", norm='backward'"])
    if kind in ("fft", "ifft", "rfft", "irfft"):
        a = g.axis(nd)
        n = None if g.coin(0.5) else g.int(max(1, s[a] - 2), s[a] + 2)
        guard(kind != "irfft" or n is not None or s[a] >= 2)
        opts = ("" if n is None else f", n={n}") + ("" if a == -1 and g.coin(0.5) else f", axis={a}")
        call = f"fnp.fft.{kind}({x}{opts}{norm})"
    else:
        if kind in ("fft2", "irfft2"):
            guard(nd >= 2)
            axes = [nd - 2, nd - 1] if g.coin(0.5) else g.perm(range(nd))[:2]
        else:
            axes = g.perm(range(nd))[:g.int(1, min(nd, 3))] if g.coin(0.7) else list(range(nd))
        sizes = None if g.coin(0.5) else [g.int(max(1, s[a] - 1), s[a] + 2) for a in axes]
        guard(not kind.startswith("irfft") or sizes is not None or s[axes[-1]] >= 2)
        default = axes == [nd - 2, nd - 1] if kind in ("fft2", "irfft2") else axes == list(range(nd))
        opts = ("" if sizes is None else f", s={tuple(sizes)}") + \
            ("" if default and g.coin(0.5) else f", axes={tuple(axes)}")
        call = f"fnp.fft.{kind}({x}{opts}{norm})"
    if kind.startswith("irfft"):
        return kind, call, [i]
    form = g.choice(FFT_REAL)
    if "abs" in form:  # |z| is kinked at 0
        guard(np.min(np.abs(g.evaluate(call, [i]))) >= MARGIN)
    return kind, form.format(z=call), [i]


def mk_ufuncs_more(g):
    """fmax / fmin (also with NaN operands), copysign, float_power, fmod (constant and value
    divisors), cbrt (away from 0), trunc (times the value, away from integers), ldexp, modf
    and heaviside (away from their steps), and sum / prod / max / min / mean with where= and
    initial=."""
    kind = g.choice(["fmax", "fmin", "copysign", "float_power", "fmod", "fmod", "reduce_where",
                     "reduce_where", "cbrt", "trunc", "ldexp", "modf", "heaviside"])
    if kind == "reduce_where":
        return _reduce_where(g)
    i = g.pick()
    v = g.vals(i)
    if kind == "ldexp":  # x · 2**k: linear in x
        return kind, f"fnp.ldexp(@0, {g.choice([-3, -1, 0, 2])})", [i]
    if kind == "modf":  # the fraction jumps at the integers, the integral part is constant
        guard(np.all(np.abs(v - np.round(v)) >= MARGIN))
        return kind, g.choice(["fnp.modf(@0)[0]", "fnp.modf(@0)[1] * @0"]), [i]
    if kind == "heaviside":  # a step in x (kept away from 0); the value at 0 is never taken
        guard(away(v, [0.0]))
        j = g.partner(i)
        return kind, "fnp.heaviside(@0, @1) * @1", [i, j]
    if kind == "cbrt":  # infinite slope at 0
        guard(away(v, [0.0], 0.2))
        return kind, "fnp.cbrt(@0)", [i]
    if kind == "trunc":  # steps at the integers
        guard(np.all(np.abs(v - np.round(v)) >= MARGIN))
        return kind, "@0 * fnp.trunc(@0)", [i]
    if kind in ("fmax", "fmin"):
        j = g.partner(i)
        x, xi = "@0", "@0"
        if len(g.shape(i)) >= 1 and g.coin(0.4):  # NaNs in one operand: the other is taken
            mask = np.asarray(g.rng.random(g.shape(i)) < 0.3)
            guard(mask.any())
            x, xi = f"fnp.where({_arr(mask)}, np.nan, @0)", f"fnp.where({_arr(mask)}, np.inf, @0)"
        try:
            diff = g.evaluate(f"{xi} - @1", [i, j])
        except ValueError:
            raise Reject
        guard(away(diff, [0.0]))
        return kind, (f"fnp.{kind}({x}, @1)" if g.coin(0.5) else f"fnp.{kind}(@1, {x})"), [i, j]
    if kind == "copysign":
        guard(away(v, [0.0]))
        if g.coin(0.3):
            return kind, f"fnp.copysign(@0, {_f(g.const(nonzero=True))})", [i]
        j = g.partner(i)
        guard(away(g.vals(j), [0.0]))
        return kind, "fnp.copysign(@0, @1)", [i, j]
    if kind == "float_power":
        base = g.at_least(0, i, 0.5)
        if g.coin(0.4):
            return kind, f"fnp.float_power({base}, {g.choice(['2.5', '-1.5', '0.5', '3', '2'])})", [i]
        j = g.partner(i)
        return kind, f"fnp.float_power({base}, {g.bounded(1, j, 2.0)})", [i, j]
    # fmod(x, d) = x - trunc(x / d) d: jumps where x / d crosses a nonzero integer
    if g.coin(0.5):
        c = g.choice([0.7071, -1.3, 2.2, 0.9])
        ratio, den, args = v / c, np.full_like(v, abs(c)), [i]
        d = _f(c)
    else:
        j = g.partner(i)
        d, args = g.away_from_zero(1, j), [i, j]
        try:
            ratio, den = g.evaluate(f"@0 / {d}", args), np.abs(g.evaluate(f"{d} + 0 * @0", args))
        except ValueError:
            raise Reject
    k = np.round(ratio)
    guard(np.all((k == 0) | (np.abs(ratio - k) * den >= MARGIN)))
    return kind, f"fnp.fmod(@0, {d})", args


def _reduce_where(g):
    i = g.pick(lambda n: len(n.shape) >= 1)
    s, v = g.shape(i), g.vals(i)
    nd = len(s)
    ax, red = _axes_arg(g, nd)
    kd = ", keepdims=True" if g.coin(0.3) else ""
    fn = g.choice(["sum", "prod", "max", "min", "mean"])
    if fn == "mean" or g.coin(0.75):
        mask = np.asarray(g.rng.random(s[g.int(0, nd - 1):]) < 0.7)
        keep, wt = np.broadcast_to(mask, s), f", where={_arr(mask)}"
    else:
        keep, wt = np.ones(s, bool), ""
    count = np.sum(keep, axis=red)
    guard(np.max(count) >= 1)
    # max's initial mostly below the values, min's above (else the result is the constant)
    c = g.const(nonzero=True) if fn not in ("max", "min") else \
        g.choice([-3.0, -1.5, -0.5, 0.5]) * (1 if fn == "max" else -1)
    it = f", initial={_f(c)}"
    if fn == "mean":
        guard(np.min(count) >= 1)
        return "mean_where", f"fnp.mean(@0, axis={ax}{wt}{kd})", [i]
    if fn in ("max", "min"):
        guard(extreme_gap_ok(v, red, keep, fn, c))
    elif fn == "prod":
        guard(np.max(count) <= 6)
    if fn in ("sum", "prod") and wt and g.coin(0.4):
        it = ""
    return f"{fn}_where", f"fnp.{fn}(@0, axis={ax}{wt}{it}{kd})", [i]


# the table: (maker, weight)

MAKERS = [
    (mk_unary_free, 10), (mk_affine, 4), (mk_exp_family, 4), (mk_hyperbolic, 1),
    (mk_positive_domain, 6), (mk_reciprocal, 2), (mk_bounded_domain, 2), (mk_logit, 1),
    (mk_kinked_unary, 3), (mk_binary_arith, 12), (mk_div, 4), (mk_pow, 2), (mk_xlogy, 1),
    (mk_maxmin, 2), (mk_arctan2_hypot, 2), (mk_where_mask, 3), (mk_where_cmp, 2),
    (mk_reduction, 8), (mk_softmax, 2), (mk_layer_norm, 1),
    (mk_reshape, 4), (mk_ravel, 1), (mk_transpose, 4), (mk_expand_squeeze, 3),
    (mk_broadcast_to, 3), (mk_flip_roll, 2), (mk_tile_repeat_pad, 2), (mk_matrix_structure, 2),
    (mk_cumulative, 3), (mk_getitem, 6), (mk_take, 2), (mk_at, 3),
    (mk_matmul, 5), (mk_einsum, 4), (mk_tensordot, 3), (mk_products, 2),
    (mk_concatenate, 3), (mk_stack, 2), (mk_split, 2), (mk_linalg, 4),
    (mk_cond, 1), (mk_fori, 1), (mk_scan, 1), (mk_inner, 3), (mk_custom, 2),
    (mk_traced_index, 2), (mk_floor_rem, 1), (mk_where_logic, 1), (mk_complex, 1),
    (mk_complex_linalg, 1), (mk_while, 1),
    (mk_order_stats, 2), (mk_sequences, 2), (mk_pad_rotate, 1), (mk_linalg_more, 1),
    (mk_fft, 2), (mk_ufuncs_more, 2),
]
WEIGHTED = [m for m, w in MAKERS for _ in range(w)]


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
    """A random Program (see the module docstring). Hypothesis draws the seed of the
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
    weighted = WEIGHTED if makers is None else [m for m, w in MAKERS if m in makers
                                                for _ in range(w)]
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


# --- the properties ----------------------------------------------------------------------------

def _leaves(tree):
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def assert_close(what, got, want, rtol=EXACT_RTOL):
    """got == want up to rounding: max error <= rtol * max(1, max |want|)."""
    gl, gt = tree_flatten(got)
    wl, wt = tree_flatten(want)
    if gt != wt:
        raise AssertionError(f"{what}: tree structure {gt} != {wt}")
    gl, wl = [np.asarray(x) for x in gl], [np.asarray(x) for x in wl]
    scale = max([1.0] + [float(np.max(np.abs(w), initial=0.0)) for w in wl])
    for k, (a, b) in enumerate(zip(gl, wl)):
        if a.shape != b.shape:
            raise AssertionError(f"{what}: leaf {k} shape {a.shape} != {b.shape}")
        err = float(np.max(np.abs(a - b), initial=0.0))
        if not err <= rtol * scale:
            raise AssertionError(f"{what}: leaf {k} max error {err:.3g} > {rtol:.0e} * "
                                 f"{scale:.3g}\n  got  {a.ravel()[:12]}\n  want {b.ravel()[:12]}")


def _scalar(f):
    def g(*xs):
        out = f(*xs)
        leaves = out if isinstance(out, tuple) else (out,)
        s = fnp.sum(leaves[0])
        for x in leaves[1:]:
            s = s + fnp.sum(x)
        return s
    return g


def _stack(outs, axis):
    flat = [tree_flatten(o) for o in outs]
    tree = flat[0][1]
    from fxad.tree_util import tree_unflatten
    return tree_unflatten(tree, [np.stack([np.asarray(f[0][k]) for f in flat], axis=axis)
                                 for k in range(len(flat[0][0]))])


def prop_grads(p, f):
    check_grads(f, p.x0(), order=2, modes=("fwd", "rev"))


def prop_linearize(p, f):
    x = p.x0()
    v = tuple(np.random.default_rng(1).standard_normal(np.shape(a)) for a in x)
    y, t = fxad.jvp(f, x, v)
    y2, f_jvp = fxad.linearize(f, *x)
    assert_close("linearize: primal == f", y2, y)
    assert_close("linearize: f_jvp(v) == jvp(f)(v)", f_jvp(*v), t)


def prop_jacobians(p, f):
    nums = tuple(range(p.n_in))
    assert_close("jacfwd == jacrev", fxad.jacfwd(f, argnums=nums)(*p.x0()),
                 fxad.jacrev(f, argnums=nums)(*p.x0()))


def prop_jit(p, f):
    assert_close("jit(f) == f", fxad.jit(f)(*p.x0()), f(*p.x0()))


def _reverse_under_jit_ok(p):
    return "while_loop" not in p.ops()


def prop_jit_grad(p, f):
    g, nums = _scalar(f), tuple(range(p.n_in))
    want = fxad.grad(g, argnums=nums)(*p.x0())
    if not _reverse_under_jit_ok(p):
        return
    assert_close("jit(grad(g)) == grad(g)", fxad.jit(fxad.grad(g, argnums=nums))(*p.x0()), want)
    assert_close("grad(jit(g)) == grad(g)", fxad.grad(fxad.jit(g), argnums=nums)(*p.x0()), want)


def _loop(p, fn):
    outs = []
    for b in range(B):
        outs.append(fn(*[x[b] if ax is not None else x[0]
                         for x, ax in zip(p.inputs, p.in_axes)]))
    return outs


def prop_vmap(p, f):
    got = fxad.vmap(f, in_axes=p.in_axes, out_axes=p.out_axes)(*p.batched())
    want = _stack(_loop(p, f), p.out_axes)
    assert_close(f"vmap(f, in_axes={p.in_axes}, out_axes={p.out_axes}) == loop", got, want)
    got = fxad.jit(fxad.vmap(f, in_axes=p.in_axes, out_axes=p.out_axes))(*p.batched())
    assert_close(f"jit(vmap(f, in_axes={p.in_axes}, out_axes={p.out_axes})) == loop", got, want)


def prop_vmap_grad(p, f):
    gr = fxad.grad(_scalar(f), argnums=tuple(range(p.n_in)))
    got = fxad.vmap(gr, in_axes=p.in_axes)(*p.batched())
    assert_close(f"vmap(grad(g), in_axes={p.in_axes}) == loop", got, _stack(_loop(p, gr), 0))


def prop_hessians(p, f):
    g, nums = _scalar(f), tuple(range(p.n_in))
    x = p.x0()
    ref = fxad.jacfwd(fxad.jacrev(g, argnums=nums), argnums=nums)(*x)
    for name, outer, inner in [("jacrev(jacrev)", fxad.jacrev, fxad.jacrev),
                               ("jacfwd(jacfwd)", fxad.jacfwd, fxad.jacfwd),
                               ("jacrev(jacfwd)", fxad.jacrev, fxad.jacfwd)]:
        assert_close(f"hessian {name} == jacfwd(jacrev)", outer(inner(g, argnums=nums),
                                                                argnums=nums)(*x), ref)
    if _reverse_under_jit_ok(p):
        assert_close("jit(hessian) == hessian", fxad.jit(fxad.hessian(g, argnums=nums))(*x),
                     ref)


def _dtypes(tree):
    return [np.asarray(x).dtype for x in tree_flatten(tree)[0]]


def prop_dtypes(p, f):
    """On float32 inputs every transformation gives the dtypes eager evaluation gives."""
    x = tuple(a.astype(np.float32) for a in p.x0())
    try:
        want = _dtypes(f(*x))
    except Exception:  # noqa: BLE001  e.g. a scan carry that float64 constants promote
        return
    for name, got in [("jit(f)", fxad.jit(f)(*x)),
                      ("jvp(f) primal", fxad.jvp(f, x, x)[0]),
                      ("jvp(f) tangent", fxad.jvp(f, x, x)[1]),
                      ("vmap(f)", fxad.vmap(f, in_axes=p.in_axes, out_axes=p.out_axes)(
                          *[a.astype(np.float32) for a in p.batched()]))]:
        if _dtypes(got) != want:
            raise AssertionError(f"dtypes on float32 inputs: {name} gives {_dtypes(got)}, "
                                 f"eager f gives {want}")
    nums = tuple(range(p.n_in))
    gr = fxad.grad(_scalar(f), argnums=nums)(*x)
    if _dtypes(gr) != [np.dtype(np.float32)] * p.n_in:
        raise AssertionError(f"dtypes on float32 inputs: grad gives {_dtypes(gr)}")


PROPERTIES = {"grads": prop_grads, "linearize": prop_linearize,
              "jacobians": prop_jacobians, "jit": prop_jit,
              "jit_grad": prop_jit_grad, "vmap": prop_vmap, "vmap_grad": prop_vmap_grad,
              "hessians": prop_hessians, "dtypes": prop_dtypes}


# --- known fxad bugs (reported; see the docstrings for the repros) ------------------------------

def _eqns(closed):
    """Every equation of a jaxpr, nested jaxprs (jit, scan, cond, ...) included."""
    from fxad.ir.jaxpr import ClosedJaxpr, Jaxpr
    stack = [closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed]
    while stack:
        j = stack.pop()
        for e in j.eqns:
            yield e
            for v in e.params.values():
                for w in (v if isinstance(v, (list, tuple)) else [v]):
                    if isinstance(w, ClosedJaxpr):
                        stack.append(w.jaxpr)
                    elif isinstance(w, Jaxpr):
                        stack.append(w)


# Known, reported fxad bugs that explain a property failing: {property: [predicate(program)]}.
# Each fixed one is removed (the two found so far, concatenate's and expm_frechet's float32
# cotangent/tangent dtypes, are fixed and pinned by regression tests in test_fuzz.py).
KNOWN_BUGS: dict = {}


def known_bug(prop, p):
    """The name of a known (reported) fxad bug that explains `prop` failing on p, or None."""
    for pred in KNOWN_BUGS.get(prop, []):
        try:
            if pred(p):
                return pred.__name__
        except Exception:  # noqa: BLE001
            pass
    return None


class FuzzFailure(AssertionError):
    def __init__(self, prop, program, error, minimized=None):
        self.prop, self.program, self.error, self.minimized = prop, program, error, minimized
        self.known = known_bug(prop, minimized or program)
        super().__init__(report(prop, program, error, minimized, self.known))


def _error_text(e):
    if isinstance(e, AssertionError):
        return f"{type(e).__name__}: {e}"
    return "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])


def run_property(p, name):
    """None if property `name` holds on program p, else the exception."""
    try:
        f = p.build()
        PROPERTIES[name](p, f)
    except Exception as e:  # noqa: BLE001  (an fxad error is a failure too)
        return e
    return None


def minimize(p, name):
    """A small program still failing `name`: the smallest sub-program with one output node
    (its ancestors and the inputs they use), then without the jit/checkpoint wrappers that
    are not needed for the failure."""
    best = p
    for node in range(p.n_in, p.n_in + len(p.lines)):
        sub = p.sub_program([node], drop_inputs=True)
        if len(sub.lines) < len(best.lines) and run_property(sub, name) is not None:
            best = sub
    if best is p:
        sub = p.sub_program(p.outputs, drop_inputs=True)
        if (len(sub.lines), sub.n_in) < (len(p.lines), p.n_in) and \
                run_property(sub, name) is not None:
            best = sub
    for k, ln in enumerate(best.lines):
        if ln.wrap:
            lines = list(best.lines)
            lines[k] = Line(ln.name, ln.kind, ln.expr, ln.args, "")
            sub = Program(best.in_shapes, best.inputs, lines, best.outputs, best.in_axes,
                          best.out_axes, best.shapes, best.values)
            if run_property(sub, name) is not None:
                best = sub
    return best


def _float32_jaxpr(p):
    return fxad.make_jaxpr(p.build())(*[a.astype(np.float32) for a in p.x0()])


def jaxpr_text(p, float32=False):
    try:
        if float32:
            return str(_float32_jaxpr(p))
        return str(fxad.make_jaxpr(p.build())(*p.x0()))
    except Exception as e:  # noqa: BLE001
        return f"(make_jaxpr failed: {type(e).__name__}: {e})"


def fd_triage(p):
    """check_grads' error at several finite-difference steps. A wrong derivative gives an
    error independent of eps; rounding noise grows like 1/eps, truncation like eps^2."""
    import re
    f, out = p.build(), []
    for eps in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
        try:
            check_grads(f, p.x0(), order=2, modes=("fwd", "rev"), eps=eps)
            out.append(f"eps={eps:.0e}: pass")
        except AssertionError as e:
            m = re.search(r"max error (\S+)", str(e))
            out.append(f"eps={eps:.0e}: {m.group(1) if m else 'fail'}")
        except Exception as e:  # noqa: BLE001
            out.append(f"eps={eps:.0e}: {type(e).__name__}")
    return ("finite-difference triage (error per eps; constant = a wrong derivative, ~1/eps = "
            "rounding noise, ~eps^2 = truncation): " + ", ".join(out))


def report(prop, p, error, minimized=None, known=None):
    parts = [f"fuzz property {prop!r} failed" +
             (f" (known fxad bug: {known})" if known else ""), _error_text(error).rstrip()]
    if prop == "grads":
        parts.append(fd_triage(minimized or p))
    f32 = prop == "dtypes"
    for title, q in ([("minimized program", minimized)] if minimized is not None else []) + \
                    [("program", p)]:
        parts += [f"--- {title}: ops {q.ops()}; in_axes={q.in_axes} out_axes={q.out_axes}",
                  q.script() + ("  # (float32 inputs for this property)" if f32 else ""),
                  "--- make_jaxpr" + (" (float32 inputs):" if f32 else ":"),
                  jaxpr_text(q, float32=f32)]
    parts += ["--- vmap batch (inputs):", p.batch_script()]
    return "\n".join(parts)


def check_program(p, props=None, do_minimize=True, skip_known=False):
    """Run every property on p; raise FuzzFailure at the first that fails (skip_known: a
    failure explained by a known, reported fxad bug is not one)."""
    for name in props or PROPERTIES:
        err = run_property(p, name)
        if err is not None and skip_known and known_bug(name, p):
            continue
        if err is not None:
            mini = minimize(p, name) if do_minimize else None
            if mini is p:
                mini = None
            merr = run_property(mini, name) if mini is not None else None
            raise FuzzFailure(name, p, merr or err, mini)


# --- hypothesis drivers ------------------------------------------------------------------------

def fuzz_settings(n, seed=None):
    """Deterministic: derandomized, or seeded. No shrinking: hypothesis only draws a seed per
    program (shrinking it just gives other programs); `minimize` shrinks failures instead."""
    return settings(max_examples=n, deadline=None, derandomize=seed is None, database=None,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=list(HealthCheck), print_blob=False)


def run_fuzz(n, seed=None, props=None, max_ops=12, on_program=None, collect=False,
             skip_known=False):
    """Run n programs. collect=False: raise the first FuzzFailure (hypothesis shows it);
    collect=True: return the list of FuzzFailures and keep going."""
    failures = []

    @fuzz_settings(n, seed)
    @given(programs(max_ops=max_ops))
    def fuzz(p):
        try:
            check_program(p, props, skip_known=skip_known)
        except FuzzFailure as e:
            if not collect:
                raise
            failures.append(e)
        finally:
            if on_program is not None:
                on_program(p, failures)

    if seed is not None:
        fuzz = hypothesis_seed(seed)(fuzz)
    fuzz()
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="number of programs")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis seed (deterministic)")
    ap.add_argument("--max-ops", type=int, default=12)
    ap.add_argument("--props", default=",".join(PROPERTIES),
                    help="comma-separated subset of: " + ", ".join(PROPERTIES))
    ap.add_argument("--skip-known", action="store_true",
                    help="do not count failures explained by a known fxad bug (KNOWN_BUGS)")
    ap.add_argument("--show", type=int, default=3,
                    help="failures printed in full per (property, known bug) group")
    ap.add_argument("--every", type=int, default=100, help="progress line every N programs")
    args = ap.parse_args(argv)
    props = [s for s in args.props.split(",") if s]
    unknown = set(props) - set(PROPERTIES)
    if unknown:
        ap.error(f"unknown properties {sorted(unknown)}")
    from fxad.__main__ import all_primitives
    start = time.time()
    count, ops, prims, slowest = [0], Counter(), Counter(), [(0.0, None)]
    last = [time.time()]

    def on_program(p, failures):
        now = time.time()
        if now - last[0] > slowest[0][0]:
            slowest[0] = (now - last[0], count[0])
        last[0] = now
        count[0] += 1
        ops.update(p.ops())
        try:
            prims.update({e.primitive.name for e in _eqns(fxad.make_jaxpr(p.build())(*p.x0()))})
        except Exception:  # noqa: BLE001  (a failing program is reported by its property)
            pass
        if count[0] % args.every == 0:
            print(f"[{now - start:7.1f}s] {count[0]} programs, {len(failures)} failures",
                  flush=True)

    print(f"fxad fuzz: n={args.n} seed={args.seed} props={props}", flush=True)
    failures = run_fuzz(args.n, seed=args.seed, props=props, max_ops=args.max_ops,
                        on_program=on_program, collect=True, skip_known=args.skip_known)
    elapsed = time.time() - start
    groups = {}
    for e in failures:
        groups.setdefault((e.known is not None, e.prop, e.known), []).append(e)
    for (is_known, prop, known), es in sorted(groups.items(), key=lambda kv: kv[0][0]):
        for k, e in enumerate(es[:args.show]):
            print(f"\n===== {'known bug ' + known if is_known else 'NEW'}: {prop!r} failure "
                  f"{k + 1}/{len(es)} =====\n{e}", flush=True)
    new = [e for e in failures if e.known is None]
    print(f"\n===== summary =====\nprograms run: {count[0]}\nfailures: {len(failures)} "
          f"({len(new)} new, {len(failures) - len(new)} explained by known fxad bugs)\n"
          f"time: {elapsed:.1f}s ({elapsed / max(count[0], 1) * 1000:.0f} ms/program; slowest "
          f"{slowest[0][0]:.1f}s, program #{slowest[0][1]})")
    if failures:
        print("failures by property, known bug and minimized op list:")
        by = Counter((e.prop, e.known or "NEW", tuple((e.minimized or e.program).ops()))
                     for e in failures)
        for (prop, known, o), c in by.most_common():
            print(f"  {c:5d}  {prop} [{known}]: {list(o)}")
    print(f"op kinds used ({len(ops)}): " + ", ".join(f"{k}={v}" for k, v in sorted(ops.items())))
    everyone = set(all_primitives())
    missing = sorted(everyone - set(prims))
    print(f"primitives staged: {len(everyone & set(prims))} of {len(everyone)}; never: {missing}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
