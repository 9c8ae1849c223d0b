"""Fusion: consecutive elementwise equations over one shape become one loop nest.

A group's values live in registers: only those used outside the group are stored (the
arrays it "materializes"); operands of other shapes are read with broadcasting indices.
Values computed inline need nothing more. A NumPy strided loop (a transcendental function)
works on a buffer, so a group that calls one runs in tiles of up to `TILE` elements: each
tile is a sequence of stages, an inline stage (a loop over the tile computing its values,
storing into tile buffers what later stages read) or a loop stage (one call of NumPy's loop
over the tile's buffers). Buffers are allocated once per group, not per element or tile.
"""
from __future__ import annotations

import numpy as np

from ..vars import Literal
from .lowering import _NATIVE, Node, Unsupported, dtype_src, int_arg, literal_src

TILE = 512  # elements per tile: a few buffers of it stay in the L1 cache


class Group:
    """Elementwise equations fused into one loop over `shape`, placed at `pos` in the
    block's schedule (their inputs are all computed before it)."""

    def __init__(self, shape, pos, fuser):
        self.shape, self.pos, self.fuser = shape, pos, fuser
        self.eqns = []
        self.node_of = {}  # var produced here -> Node
        self.inputs = {}  # var read from outside -> "in" Node
        self.start = len(fuser.nodes)

    def add(self, e, rule):
        """Build e's nodes here; raises Unsupported (leaving the group as it was)."""
        mark = len(self.fuser.nodes)
        added = []
        try:
            args = []
            for v in e.invars:
                if type(v) is not Literal:
                    n = self.node_of.get(v)
                    if n is None:
                        n = self.inputs.get(v)
                        if n is None:
                            n = self.inputs[v] = self.fuser._node(
                                "in", v.aval.dtype, weak=v.aval.weak, var=v)
                            added.append(v)
                    args.append(n)
                else:
                    args.append(self.fuser.lift(v.val))
            self.fuser.in_avals = [v.aval for v in e.invars]
            self.fuser.out_aval = e.outvars[0].aval
            out = rule(self.fuser, args, **e.params)
            if not isinstance(out, Node) or out.dtype != e.outvars[0].aval.dtype:
                raise Unsupported(f"{e.primitive.name}: result {out!r}")
            if out.kind == "in" and (out.value is not None or out.var.aval.shape !=
                                     e.outvars[0].aval.shape):
                out = self.fuser._node("inline", out.dtype, [out], template="{0}",
                                       native=True)  # not the same array: compute it
        except Unsupported:
            del self.fuser.nodes[mark:]
            for v in added:
                del self.inputs[v]
            raise
        self.eqns.append(e)
        self.node_of[e.outvars[0]] = out

    def nodes(self):
        return self.fuser.nodes[self.start:]


def emit_group(block, g, store):
    """Emit group g. `store`: the vars of g read after it (arrays, or scalars for shape
    ()), which get the names block.name(var). A var whose node is an outside variable, or
    another stored var's node, is that variable (stop_gradient, a real part of a real)."""
    mat = {}  # node -> var stored
    for v in store:
        n = g.node_of[v]
        if n.kind == "in":
            block.env[v] = block.name(n.var)
        elif n in mat:
            block.env[v] = block.name(mat[n][0])
        else:
            mat[n] = [v]
    if not mat:  # every value read later is an alias
        return
    used = _live_nodes(g.nodes(), mat)
    nodes = [n for n in g.nodes() if n in used]
    if any(n.kind == "loop" for n in nodes):
        _emit_tiled(block, g, nodes, mat)
    else:
        _emit_simple(block, g, nodes, mat)


def _live_nodes(nodes, mat):
    live = set(mat)
    for n in reversed(nodes):
        if n in live:
            live.update(n.args)
    return live


def _cast(expr, node):
    if node.native and node.dtype in _NATIVE:
        return expr
    if node.dtype == np.bool_:
        return f"bool({expr})"
    return f"{dtype_src(node.dtype)}({expr})"


class _Sources:
    """Source of each node's value at the current element."""

    def __init__(self, block, g):
        self.block, self.g = block, g
        self.local = {}  # node -> name of its value in the current stage (or element)
        self.buffer = {}  # node -> tile buffer name

    def of(self, n):
        if n.kind == "in":
            if n.value is not None:
                return literal_src(n.value, n.dtype)
            return self.read(n.var)
        name = self.local.get(n)
        if name is not None:
            return name
        return f"{self.buffer[n]}[_j]"

    def read(self, v):
        """An outside variable at the current element (NumPy broadcasting)."""
        name = self.block.name(v)
        shape, loop = v.aval.shape, self.g.shape
        if not shape:
            return name
        r, q = len(loop), len(shape)
        idx = ["0" if shape[k] == 1 and loop[r - q + k] != 1 else f"_i{r - q + k}"
               for k in range(q)]
        return f"{name}[{', '.join(idx)}]"

    def compute(self, n):
        """Lines computing an inline node into a fresh local."""
        name = self.block.seg.fresh("v")
        self.local[n] = name
        return f"{name} = {_cast(n.template.format(*[self.of(a) for a in n.args]), n)}"


def _index(g):
    return ", ".join(f"_i{k}" for k in range(len(g.shape)))


def _emit_simple(block, g, nodes, mat):
    """Only inline nodes: one loop nest, values in registers."""
    src = _Sources(block, g)
    shape = g.shape
    if not shape:
        for n in nodes:
            if n.kind == "inline":
                block.emit(src.compute(n))
            for v in mat.get(n, ()):
                block.emit(f"{block.name(v)} = {src.of(n)}")
        return
    for n, vs in mat.items():
        for v in vs:
            block.emit(f"{block.name(v)} = _np.empty({shape!r}, {dtype_src(v.aval.dtype)})")
    depth = block.depth
    for k, d in enumerate(shape):
        block.emit(f"for _i{k} in range({d}):")
        block.depth += 1
    for n in nodes:
        if n.kind == "inline":
            block.emit(src.compute(n))
        for v in mat.get(n, ()):
            block.emit(f"{block.name(v)}[{_index(g)}] = {src.of(n)}")
    block.depth = depth


def _tiling(shape):
    """(d, q, inner): dims before d are looped over whole, dim d in chunks of q, the dims
    after it (`inner` elements) lie whole inside a tile."""
    r = len(shape)
    inner, d = 1, r - 1
    while d > 0 and inner * shape[d] <= TILE:
        inner *= shape[d]
        d -= 1
    if inner * shape[d] <= TILE:
        return d, max(1, shape[d]), inner  # (an empty dim still steps by 1)
    return d, max(1, TILE // inner), inner


def _emit_tiled(block, g, nodes, mat):
    """Inline stages and loop stages over tiles (see the module docstring)."""
    seg = block.seg
    shape = g.shape
    if shape:
        d, q, inner = _tiling(shape)
        cap = q * inner
    else:
        d, q, inner, cap = None, 1, 1, 1
    # Stages: runs of inline nodes, and one stage per loop node.
    stages, stage_of = [], {}
    for n in nodes:
        if n.kind == "in":
            continue
        if n.kind == "loop" or not stages or stages[-1][0] == "loop":
            stages.append([n.kind, []])
        stages[-1][1].append(n)
        stage_of[n] = len(stages) - 1
    # Materialized values of loop stages are stored by the next inline stage.
    for i, (kind, ns) in enumerate(stages):
        if kind == "loop" and any(n in mat for n in ns):
            if i + 1 == len(stages) or stages[i + 1][0] == "loop":
                stages.insert(i + 1, ["inline", []])
                for m in stage_of:
                    if stage_of[m] > i:
                        stage_of[m] += 1
    src = _Sources(block, g)
    const = {}  # literal node -> one-element buffer read with stride 0
    for n in nodes:
        if n.kind == "loop":
            for a in n.args:
                if a.kind == "in" and a not in const:
                    if a.value is None:
                        raise Unsupported("a loop operand read from outside its group")
                    const[a] = seg.fresh("k")
                    block.emit(f"{const[a]} = _np.empty((1,), {dtype_src(a.dtype)})")
                    block.emit(f"{const[a]}[0] = {literal_src(a.value, a.dtype)}")
                elif a.kind != "in" and a not in src.buffer:
                    src.buffer[a] = seg.fresh("b")
            src.buffer[n] = seg.fresh("b")
    for n in nodes:  # inline values read by a later stage go through a buffer too
        if n.kind == "in":
            continue
        for a in n.args:
            if a.kind != "in" and stage_of[a] != stage_of[n] and a not in src.buffer:
                src.buffer[a] = seg.fresh("b")
    for n, vs in mat.items():
        if n.kind != "in" and stage_of[n] != _store_stage(stages, stage_of, n) and \
                n not in src.buffer:
            src.buffer[n] = seg.fresh("b")
    _emit_tile_buffers(block, [(name, n.dtype) for n, name in src.buffer.items()], cap)
    for vs in mat.values():
        for v in vs:
            if shape:
                block.emit(f"{block.name(v)} = _np.empty({shape!r}, "
                           f"{dtype_src(v.aval.dtype)})")
    if any(len(n.args) > 3 for n in nodes if n.kind == "loop"):
        raise Unsupported("a NumPy loop with more than 3 operands")
    block.seg.scratch = True
    depth = block.depth
    # the tile loops
    if shape:
        for k in range(d):
            block.emit(f"for _i{k} in range({shape[k]}):")
            block.depth += 1
        block.emit(f"for _o in range(0, {shape[d]}, {q}):")
        block.depth += 1
        block.emit(f"_e = min(_o + {q}, {shape[d]})")
        count = f"(_e - _o) * {inner}" if inner != 1 else "_e - _o"
    else:
        count = "1"
    for i, (kind, ns) in enumerate(stages):
        if kind == "loop":
            _emit_call(block, ns[0], src, const, count)
            continue
        stores = [n for n in mat if n.kind != "in" and _store_stage(stages, stage_of, n) == i]
        if not ns and not stores:
            continue
        _emit_inline_stage(block, g, ns, stores, mat, src, shape, d)
    block.depth = depth


def _emit_tile_buffers(block, buffers, cap):
    """Allocate the tile buffers [(name, dtype)], `cap` elements each: those of one dtype
    are slices of one array, since a small allocation in compiled code costs about as much
    as a short tile's arithmetic (a scalar chain's hundred one-element buffers took most of
    its call). They are scratch, never results, so sharing a base exposes nothing."""
    by_dtype = {}
    for name, dt in buffers:
        by_dtype.setdefault(np.dtype(dt), []).append(name)
    for dt, names in by_dtype.items():
        if len(names) == 1:
            block.emit(f"{names[0]} = _np.empty(({cap},), {dtype_src(dt)})")
            continue
        arena = block.seg.fresh("t")
        block.emit(f"{arena} = _np.empty(({len(names) * cap},), {dtype_src(dt)})")
        for i, name in enumerate(names):
            block.emit(f"{name} = {arena}[{i * cap}:{(i + 1) * cap}]")


def _store_stage(stages, stage_of, n):
    """The stage that stores a materialized node: its own if inline, else the next one."""
    s = stage_of[n]
    return s if stages[s][0] == "inline" else s + 1


def _emit_inline_stage(block, g, ns, stores, mat, src, shape, d):
    depth = block.depth
    if shape:
        block.emit("_j = 0")
        block.emit(f"for _i{d} in range(_o, _e):")
        block.depth += 1
        for k in range(d + 1, len(shape)):
            block.emit(f"for _i{k} in range({shape[k]}):")
            block.depth += 1
    else:
        block.emit("_j = 0")
    for n in ns:
        block.emit(src.compute(n))
        if n in src.buffer:
            block.emit(f"{src.buffer[n]}[_j] = {src.local[n]}")
    for n in stores:
        for v in mat[n]:
            where = f"[{_index(g)}]" if shape else ""
            block.emit(f"{block.name(v)}{where} = {src.of(n)}")
    if shape:
        block.emit("_j += 1")
    block.depth = depth
    for n in ns:  # locals do not outlive their stage
        src.local.pop(n, None)


def _emit_call(block, n, src, const, count):
    """One call of NumPy's strided loop over the tile's buffers (runtime.loop1/2/3)."""
    uf, loop, dts = n.loop
    k = block.seg.loop_index(uf, loop, dts)
    ops = []
    for a in n.args:
        ops += [const[a], int_arg(0)] if a in const else \
            [src.buffer[a], int_arg(a.dtype.itemsize)]
    block.emit(f"_loop{len(n.args)}(_L, {int_arg(k)}, _w, {int_arg(count)}, "
               f"{', '.join(ops)}, {src.buffer[n]})"
               f"  # {uf.__name__} {'/'.join(d.str for d in dts)}")
