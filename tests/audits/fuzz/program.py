"""Programs: their representation (input nodes, lines of Python over fxad, outputs), the
printed source that is the code that runs, sub-programs for minimization, and the constants
and namespace every part of the fuzzer shares."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import fxad
import fxad.numpy as fnp
from fxad import lax, nn
from fxad.numpy.methods import _IndexUpdateHelper
from fxad.scipy import linalg as sla, special


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


# sin and cos computed on the host (pure_callback: opaque to fxad), with rules that call each
# other, so every order of derivative is there.
def _host(fn, x):
    return fxad.pure_callback(fn, fxad.ShapeDtypeStruct(np.shape(x), x.dtype), x,
                              vmap_method="expand_dims")


@fxad.custom_jvp
def pc_sin(x):
    return _host(np.sin, x)


@fxad.custom_jvp
def pc_cos(x):
    return _host(np.cos, x)


pc_sin.defjvp(lambda primals, tangents: (pc_sin(primals[0]), pc_cos(primals[0]) * tangents[0]))
pc_cos.defjvp(lambda primals, tangents: (pc_cos(primals[0]), -pc_sin(primals[0]) * tangents[0]))


# `x.at[...]` exists on tracers only (a plain ndarray has no .at), and programs also run
# eagerly, so they spell it at(x)[idx].add(v) with fxad's own helper behind Tracer.at.
NAMESPACE = {"np": np, "fnp": fnp, "lax": lax, "fxad": fxad, "nn": nn, "special": special,
             "at": _IndexUpdateHelper, "cj_xtanh": cj_xtanh, "cv_mulsin": cv_mulsin,
             "pc_sin": pc_sin, "pc_cos": pc_cos, "sla": sla}


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
                ("from tests.audits.fuzz.program import cj_xtanh, cv_mulsin, pc_sin, pc_cos  "
                 "# functions with custom rules\n"
                 if any(f in self.source() for f in ("cj_", "cv_", "pc_")) else "") +
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
