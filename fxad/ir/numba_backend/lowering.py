"""What a primitive's numba lowering rule sees (the rule lives in the primitive's block).

Two kinds of rule, registered alike with `p.def_lowering(rule, backend="numba")`:

- **Fusible** (elementwise) rules are wrapped in `fusible(...)`. They get a `Fuser` and one
  `Node` per operand, and return the Node of the result, built with `fz.ufunc(np.sin, x)`,
  `fz.where(p, a, b)`, `fz.cast(x, dtype)` (operands may also be Python numbers, which are
  weak literals as in NumPy). Consecutive elementwise equations over the same shape become
  one loop (fusion.py), so a rule writes no loop and allocates nothing. Arithmetic,
  comparisons and the like are written inline (IEEE-exact, as NumPy computes them); every
  other ufunc (transcendental functions, SciPy's special functions) calls NumPy's own
  strided loop for its dtypes, so values are NumPy's bit for bit.
- **Array** rules get a `Context` (`ctx.in_avals`, `ctx.out_avals`, `ctx.emit(line)`,
  `ctx.fresh(hint)`, `ctx.inline(closed, args)` for loop bodies, `ctx.reduce(...)`, ...) and
  the operands' source names, and return the result's source expression (a list of them for
  several results), or None when they do not apply (the equation then runs on the NumPy
  backend, between compiled segments).

Raising `Unsupported` (or returning None) never fails a program: the equation falls back.
"""
from __future__ import annotations

import contextlib
import math
import re

import numpy as np

# dtypes compiled code handles; anything else (float16, datetimes, ...) falls back
SUPPORTED = frozenset(np.dtype(c) for c in "?bhilqBHILQfdFD")
# dtypes Numba keeps through arithmetic on equal operands (others are widened: cast back)
_NATIVE = frozenset(np.dtype(c) for c in "?qdfDF")


class Unsupported(Exception):
    """A lowering does not apply to these operands: the equation runs on NumPy instead."""


def fusible(rule):
    """Mark a numba lowering rule as elementwise: it builds Nodes with a Fuser."""
    rule.fusible = True
    return rule


def is_fusible(rule):
    return getattr(rule, "fusible", False)


def ufunc_rule(uf):
    """The numba lowering of a primitive that is the NumPy ufunc `uf` (as NumPy computes it:
    inline arithmetic, or NumPy's own loop)."""
    return fusible(lambda fz, args, **params: fz.ufunc(uf, *args))


def dtype_src(dt):
    """Source naming a dtype's scalar type in generated code (`_np.float32`)."""
    dt = np.dtype(dt)
    return "_np.bool_" if dt == np.bool_ else f"_np.{dt.name}"


def int_arg(src):
    """An integer argument of a runtime helper call, as source: a literal becomes
    `_np.intp(...)`. Numba types a literal argument of a call to another compiled function
    as that very value and compiles the callee once per value (a matmul per shape, a sum per
    run length, each a fraction of a second); `_np.intp(...)` is typed plain intp, so each
    helper compiles once per array types, and its disk-cached code serves every shape."""
    src = str(src)
    return f"_np.intp({src})" if re.fullmatch(r"-?[0-9]+", src) else src


def literal_src(value, dt):
    """A Python number as a constant of dtype `dt` in generated code."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return repr(bool(value))
    if dt.kind in "iu":
        v = int(value)
        return repr(v) if dt == np.int64 else f"{dtype_src(dt)}({v})"
    if dt.kind == "f":
        v = float(value)
        text = repr(v) if math.isfinite(v) else ("_np.nan" if math.isnan(v) else
                                                  "_np.inf" if v > 0 else "-_np.inf")
        return text if dt == np.float64 else f"{dtype_src(dt)}({text})"
    if dt.kind == "c":
        v = complex(value)
        re, im = literal_src(v.real, np.float64), literal_src(v.imag, np.float64)
        return f"{dtype_src(dt)}(complex({re}, {im}))"
    raise Unsupported(f"literal of dtype {dt}")


class Node:
    """A value inside a fused elementwise group. kind: "in" (read from outside the group: a
    variable `var`, or a weak Python number `value`), "inline" (`template` formatted with its
    operands' sources), "loop" (NumPy's strided loop `loop` on its operands)."""
    __slots__ = ("kind", "dtype", "weak", "args", "template", "loop", "var", "value", "native")

    def __init__(self, kind, dtype, args=(), weak=None, template=None, loop=None, var=None,
                 value=None, native=False):
        self.kind, self.dtype, self.args, self.weak = kind, np.dtype(dtype), list(args), weak
        self.template, self.loop, self.var, self.value = template, loop, var, value
        self.native = native  # the template's Numba type is already `dtype` (no cast)

    def __repr__(self):
        return f"Node({self.kind}, {self.dtype}, {self.template or self.loop or self.var})"


def _same(kinds):
    return lambda dts: len(set(dts)) == 1 and dts[0].kind in kinds


_CMP = "biuf"
# ufuncs written inline: exact in IEEE arithmetic, or comparisons. (template, operand test,
# result is Numba-native for native operand dtypes)
_INLINE = {
    "add": ("({0} + {1})", _same("iufc"), True),
    "subtract": ("({0} - {1})", _same("iufc"), True),
    "multiply": ("({0} * {1})", _same("iuf"), True),
    "divide": ("({0} / {1})", _same("f"), True),
    "negative": ("(-{0})", _same("iufc"), True),
    "positive": ("{0}", _same("iufc"), True),
    "square": ("({0} * {0})", _same("iuf"), True),
    "absolute": ("abs({0})", _same("if"), True),
    "sqrt": ("_np.sqrt({0})", _same("f"), True),
    "maximum": ("({0} if ({0} >= {1} or {0} != {0}) else {1})", _same("iuf"), True),
    "minimum": ("({0} if ({0} <= {1} or {0} != {0}) else {1})", _same("iuf"), True),
    "equal": ("({0} == {1})", _same(_CMP), True),
    "not_equal": ("({0} != {1})", _same(_CMP), True),
    "less": ("({0} < {1})", _same(_CMP), True),
    "less_equal": ("({0} <= {1})", _same(_CMP), True),
    "greater": ("({0} > {1})", _same(_CMP), True),
    "greater_equal": ("({0} >= {1})", _same(_CMP), True),
    "logical_and": ("(({0} != 0) and ({1} != 0))", _same(_CMP), True),
    "logical_or": ("(({0} != 0) or ({1} != 0))", _same(_CMP), True),
    "logical_xor": ("(({0} != 0) != ({1} != 0))", _same(_CMP), True),
    "logical_not": ("({0} == 0)", _same(_CMP), True),
    "isnan": ("({0} != {0})", _same("f"), True),
    "isfinite": ("_np.isfinite({0})", _same("f"), True),
    "isinf": ("_np.isinf({0})", _same("f"), True),
    "floor": ("_np.floor({0})", _same("f"), True),
    "ceil": ("_np.ceil({0})", _same("f"), True),
    "trunc": ("_np.trunc({0})", _same("f"), True),
    "rint": ("_np.rint({0})", _same("f"), True),
    "signbit": ("_np.signbit({0})", _same("f"), True),
}


class Fuser:
    """Builds the Nodes of elementwise equations (see the module docstring). `loops` collects
    the NumPy loops the nodes call (shared by a whole compiled segment)."""

    def __init__(self, find_loop):
        self.find_loop = find_loop  # (ufunc, dtypes) -> runtime loop or None
        self.nodes = []  # every node built, in order (a topological order)
        self.in_avals, self.out_aval = [], None  # the equation being built

    def _node(self, *a, **kw):
        n = Node(*a, **kw)
        self.nodes.append(n)
        return n

    def lift(self, x):
        """A Node for an operand: Nodes as they are, Python numbers as weak literals."""
        if isinstance(x, Node):
            return x
        if isinstance(x, (bool, np.bool_)):
            return self._node("in", np.bool_, value=bool(x))
        for t, dt in ((int, np.int64), (float, np.float64), (complex, np.complex128)):
            if type(x) is t:
                return self._node("in", dt, weak=t, value=x)
        raise Unsupported(f"operand {x!r}")

    def ufunc(self, uf, *xs):
        """uf(*xs) as NumPy computes it: operands converted to the loop dtypes NumPy's type
        resolution picks (weak Python numbers included), then the loop."""
        if uf.nout != 1 or len(xs) != uf.nin or uf.nin > 3:  # (the loop callers take <= 3)
            raise Unsupported(f"{uf.__name__} with {len(xs)} operands")
        xs = [self.lift(x) for x in xs]
        try:
            dts = uf.resolve_dtypes(tuple(x.weak or x.dtype for x in xs) + (None,))
        except Exception as e:  # noqa: BLE001 - NumPy has no loop: not compiled either
            raise Unsupported(f"{uf.__name__}: {e}") from None
        ins, out = [np.dtype(d) for d in dts[:-1]], np.dtype(dts[-1])
        if any(d not in SUPPORTED for d in ins + [out]):
            raise Unsupported(f"{uf.__name__} at {ins}")
        inline = _INLINE.get(uf.__name__)
        if inline is not None and getattr(np, uf.__name__, None) is uf and inline[1](ins):
            args = [self.convert(x, d) for x, d in zip(xs, ins)]
            return self._node("inline", out, args, template=inline[0],
                              native=inline[2] and ins[0] in _NATIVE)
        loop = self.find_loop(uf, tuple(ins) + (out,))
        if loop is None:
            raise Unsupported(f"no NumPy loop for {uf.__name__} at {ins}")
        # A loop reads whole buffers of its exact dtypes: array operands are copied in
        # (converted on the way), scalars are broadcast from a one-element buffer.
        args = [self.convert(x, d, copy=True) for x, d in zip(xs, ins)]
        return self._node("loop", out, args, loop=(uf, loop, tuple(ins) + (out,)))

    def convert(self, x, dt, copy=False):
        """x as dtype dt (NumPy's same-kind and safe casts; C casts for astype)."""
        dt = np.dtype(dt)
        if x.kind == "in" and x.value is not None:  # a literal: typed in place
            return self._node("in", dt, value=x.value)
        if x.dtype == dt and not (copy and x.kind == "in"):
            return x
        if dt == x.dtype:
            return self._node("inline", dt, [x], template="{0}", native=True)
        if dt.kind == "b":
            return self._node("inline", dt, [x], template="({0} != 0)", native=True)
        if x.dtype.kind == "c" and dt.kind != "c":
            return self._node("inline", dt, [x], template="{0}.real")
        if dt.kind == "c":
            return self._node("inline", dt, [x], template="complex({0})")
        return self._node("inline", dt, [x], template="{0}")  # the cast to dt comes after

    def cast(self, x, dt):
        """convert_element_type (astype): C conversions, complex to real keeps the real part."""
        dt = np.dtype(dt)
        if dt not in SUPPORTED:
            raise Unsupported(f"cast to {dt}")
        x = self.lift(x)
        if x.dtype == dt:
            return self._node("inline", dt, [x], template="{0}", native=True)
        return self.convert(x, dt)

    def where(self, pred, a, b, dt):
        """select / np.where: a where pred else b, both as dtype dt (the result's)."""
        pred, a, b = (self.lift(v) for v in (pred, a, b))
        return self._node("inline", dt, [self.convert(pred, np.bool_), self.convert(a, dt),
                                         self.convert(b, dt)],
                          template="({1} if {0} else {2})", native=True)

    def inline(self, template, args, dt, native=False):
        """A template of operands already of the right dtypes (for rules composing one)."""
        return self._node("inline", dt, [self.lift(a) for a in args], template=template,
                          native=native)


class Context:
    """What an array rule sees (see the module docstring). Lines go to `block`; operands of
    shape () are Numba scalars, others Numba arrays."""

    def __init__(self, block):
        self.block = block
        self.in_avals, self.out_avals = [], []

    ranks = property(lambda self: tuple(len(a.shape) for a in self.in_avals))

    def emit(self, line):
        self.block.emit(line)

    @contextlib.contextmanager
    def indent(self):
        self.block.depth += 1
        try:
            yield
        finally:
            self.block.depth -= 1

    def fresh(self, hint="t"):
        return self.block.seg.fresh(hint)

    def const(self, value):
        """A name for an array or number the code reads (passed to the segment, never baked
        into its source)."""
        return self.block.seg.const(value)

    def dtype(self, dt):
        return dtype_src(dt)

    def literal(self, value, dt):
        return literal_src(value, dt)

    def inline(self, closed, args):
        """Emit `closed` (a loop or branch body) here, its inputs bound to the sources `args`;
        returns its outputs' sources, or None when some equation in it has no compiled
        lowering (the caller then returns None: the whole construct falls back)."""
        return self.block.inline(closed, args)

    def matmul(self, a, b, ta=False, tb=False):
        """a @ b (a.T, b.T with ta, tb) for matrices and vectors of one float dtype, by
        NumPy's own matmul loop: the BLAS call `a @ b` makes, result bit for bit. `a`, `b` are
        sources of arrays with the shapes `sa`, `sb` (before transposing); returns the result's
        source, or None."""
        return self.block.matmul(a, b, self.in_avals[0].shape, self.in_avals[1].shape, ta, tb,
                                 self.out_avals[0])

    def matmul_into(self, out, a, b, sa, sb, ta=False, tb=False):
        """Like matmul, for operands of shapes sa, sb (e.g. one batch element's slices),
        writing into the array `out`; returns False if it does not apply."""
        return self.block.matmul(a, b, sa, sb, ta, tb, self.out_avals[0], out=out) is not None

    def reduce(self, x, op, axes, keepdims):
        """A reduction of x over `axes` by op in "add", "multiply", "maximum", "minimum", in
        NumPy's order (see emit.py), or None."""
        return self.block.reduce(x, self.in_avals[0], self.out_avals[0], op, axes, keepdims)
