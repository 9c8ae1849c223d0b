"""Source of compiled segments: equations become Numba code, elementwise runs fused.

A `Segment` is one compiled function; a `Block` is a run of its lines with the names of
the variables in scope (a loop body is a Block inside the loop). `emit_eqns` schedules a
block's equations: each elementwise equation joins the latest group of its shape that all
its operands precede (fusion.py), anything else is emitted by its primitive's array rule.
"""
from __future__ import annotations

import builtins
import keyword

import numpy as np

from ..printer import Namer
from ..vars import Literal
from .fusion import Group, emit_group
from .lowering import (SUPPORTED, Context, Fuser, Unsupported, dtype_src, int_arg, is_fusible,
                       literal_src)

_RECENT_GROUPS = 8  # how far back an equation looks for a group to join (keeps it linear)


class SourceNamer(Namer):
    """Variable names a, b, ...: no keyword and no builtin (generated code calls range, min,
    abs, bool)."""
    _taken = frozenset(dir(builtins)) | frozenset(keyword.kwlist)

    def _next(self):
        while True:
            s = super()._next()
            if s not in self._taken:
                return s


class Segment:
    """One compiled function being generated. `probe` decides (once per equation) whether
    an equation compiles; names, constants and NumPy loops are shared by its blocks."""

    def __init__(self, namer, find_loop, probe):
        self.namer, self.probe = namer, probe
        self.fuser = Fuser(find_loop)
        self.consts, self._const_ids = [], {}
        self.loops, self._loop_ids = [], {}
        self.count = 0
        self.scratch = False  # uses `_w`, the scratch of runtime's loop callers

    def fresh(self, hint):
        self.count += 1
        return f"_{hint}_{self.count}"

    def const(self, value):
        name = self._const_ids.get(id(value))
        if name is None:
            name = self._const_ids[id(value)] = f"_q{len(self.consts)}"
            self.consts.append((name, value))
        return name

    def loop_index(self, uf, loop, dts):
        key = (uf, dts)
        if key not in self._loop_ids:
            self._loop_ids[key] = len(self.loops)
            self.loops.append(loop)
        return self._loop_ids[key]


class Block:
    """Lines at one nesting depth with the sources of the variables in scope."""

    def __init__(self, seg, lines, depth, env):
        self.seg, self.lines, self.depth, self.env = seg, lines, depth, env

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def name(self, v):
        name = self.env.get(v)
        if name is None:
            name = self.env[v] = self.seg.namer(v)
        return name

    def src(self, v):
        return literal_src(v.val, v.aval.dtype) if type(v) is Literal else self.name(v)

    def inline(self, closed, args):
        from ..simplify import simplify
        closed = simplify(closed)
        j = closed.jaxpr
        if not all(self.seg.probe(e) for e in j.eqns):
            return None
        env = {}
        for v, c in zip(j.constvars, closed.consts):
            name = self.seg.const(c)
            if np.shape(c) == ():
                local = self.seg.fresh("q")
                self.emit(f"{local} = _as_scalar({name})")
                name = local
            env[v] = name
        env.update(zip(j.invars, args))
        child = Block(self.seg, self.lines, self.depth, env)
        emit_eqns(child, j.eqns, j.outvars)
        return [child.src(v) for v in j.outvars]

    def matmul(self, a, b, sa, sb, ta, tb, out_aval, out=None):
        """See Context.matmul. `out`: the source of an array to write into (else one is
        allocated)."""
        dt = np.dtype(out_aval.dtype)
        loop = self.seg.fuser.find_loop(np.matmul, (dt,) * 3) if dt.char in "fdFD" else None
        if loop is None or (ta and len(sa) != 2) or (tb and len(sb) != 2) or \
                not 1 <= len(sa) <= 2 or not 1 <= len(sb) <= 2:
            return None
        k = self.seg.loop_index(np.matmul, loop, (dt,) * 3)

        def dims(x, shape, t, vector_first):
            if len(shape) == 1:  # a vector: the missing dimension has size 1, stride 0
                s = f"{x}.strides[0]"
                return ((1, shape[0]), ("0", s)) if vector_first else ((shape[0], 1), (s, "0"))
            s0, s1 = f"{x}.strides[0]", f"{x}.strides[1]"
            return ((shape[1], shape[0]), (s1, s0)) if t else (tuple(shape), (s0, s1))
        (m, n), (sam, san) = dims(a, sa, ta, True)
        (n2, p), (sbn, sbp) = dims(b, sb, tb, False)
        if n != n2:
            return None
        shape = ((m,) if len(sa) == 2 else ()) + ((p,) if len(sb) == 2 else ())
        r = out
        if r is None:
            r = self.seg.fresh("d")
            self.emit(f"{r} = _np.empty({shape or (1,)!r}, {dtype_src(dt)})")
        if len(shape) == 2:
            som, sop = f"{r}.strides[0]", f"{r}.strides[1]"
        elif len(sa) == 2 and shape:
            som, sop = f"{r}.strides[0]", "0"
        elif shape:
            som, sop = "0", f"{r}.strides[0]"
        else:
            som, sop = "0", "0"
        self.seg.scratch = True
        ints = ", ".join(map(int_arg, (m, n, p, sam, san, sbn, sbp, som, sop)))
        self.emit(f"_matmul(_L, {int_arg(k)}, _w, {a}, {b}, {r}, {ints})")
        return r if shape or out is not None else f"{r}[0]"

    def reduce(self, x, aval, out, op, axes, keepdims):
        from .reduce import emit_reduce
        return emit_reduce(self, x, aval, out, op, axes, keepdims)


def probe_eqn(seg, e):
    """Does e compile (its primitive has a numba lowering that takes these operands)?"""
    if any(v.aval.dtype not in SUPPORTED for v in list(e.invars) + list(e.outvars)):
        return False
    rule = e.primitive.lowerings.get("numba")
    if rule is None:
        return False
    scratch = Block(seg, [], 1, {})
    try:
        if is_fusible(rule):
            if len(e.outvars) != 1:
                return False
            g = Group(e.outvars[0].aval.shape, 0, Fuser(seg.fuser.find_loop))
            g.add(e, rule)
            return True
        return _array_rule(scratch, e, rule) is not None
    except Unsupported:
        return False


def _array_rule(block, e, rule):
    ctx = Context(block)
    ctx.in_avals = [v.aval for v in e.invars]
    ctx.out_avals = [v.aval for v in e.outvars]
    mark = len(block.lines)
    out = rule(ctx, [block.src(v) for v in e.invars], **e.params)
    if out is None:
        del block.lines[mark:]
    return out


def emit_eqns(block, eqns, outs):
    """Emit equations (each compiles: see probe_eqn); `outs` are read after them. An
    elementwise equation joins a recent group of its shape unless that would make the group
    depend on itself (through another item); items are emitted in dependency order."""
    items, deps, producer, groups = [], [], {}, {}
    as_index = _views_read_by_index(eqns, outs)

    def depends(a, b):  # does item a (transitively) read what item b makes?
        seen, todo = set(), [a]
        while todo:
            i = todo.pop()
            if i == b:
                return True
            if i not in seen:
                seen.add(i)
                todo.extend(deps[i])
        return False

    for e in eqns:
        rule = e.primitive.lowerings.get("numba")
        if id(e) in as_index:
            rule = rule.fused
        ins = [v for v in e.invars if type(v) is not Literal]
        target = None
        if is_fusible(rule):
            for gi in reversed(groups.get(e.outvars[0].aval.shape, [])[-_RECENT_GROUPS:]):
                g = items[gi]
                if any(v not in g.node_of and v in producer and depends(producer[v], gi)
                       for v in ins):
                    continue
                try:
                    g.add(e, rule)
                except Unsupported:
                    continue
                target = gi
                break
            if target is None:
                g = Group(e.outvars[0].aval.shape, len(items), block.seg.fuser)
                g.add(e, rule)
                groups.setdefault(g.shape, []).append(len(items))
        if target is None:
            target = len(items)
            items.append(g if is_fusible(rule) else e)
            deps.append(set())
        deps[target].update(producer[v] for v in ins if v in producer and
                            producer[v] != target)
        for v in e.outvars:
            producer[v] = target
    # A group stores (materializes) what other items or the block's readers read.
    needed = {v for v in outs if type(v) is not Literal}
    for it in items:
        reads = it.inputs if isinstance(it, Group) else it.invars
        needed.update(v for v in reads if type(v) is not Literal)
    for i in _topological(deps):
        it = items[i]
        if isinstance(it, Group):
            emit_group(block, it, [v for v in it.node_of if v in needed])
        else:
            _emit_array_eqn(block, it)


def _views_read_by_index(eqns, outs):
    """ids of the equations whose lowering has an elementwise form (`rule.fused`: a
    broadcast, read with broadcasting indices) and whose result only elementwise equations
    of its shape read: those join their readers' loop, where the view costs nothing (Numba
    compiles a strided view in ~0.3 s)."""
    readers, chosen = {}, set()
    for e in eqns:
        for v in e.invars:
            if type(v) is not Literal:
                readers.setdefault(v, []).append(e)
    returned = {v for v in outs if type(v) is not Literal}
    for e in eqns:
        if getattr(e.primitive.lowerings.get("numba"), "fused", None) is None:
            continue
        v = e.outvars[0]
        rs = readers.get(v)
        if rs and v not in returned and all(
                is_fusible(r.primitive.lowerings.get("numba")) and len(r.outvars) == 1 and
                r.outvars[0].aval.shape == v.aval.shape for r in rs):
            chosen.add(id(e))
    return chosen


def _topological(deps):
    """Item indices, each after those it depends on, otherwise in order."""
    import heapq
    users = [[] for _ in deps]
    waiting = [len(d) for d in deps]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    assert len(order) == len(deps), "fxad internal error: a cycle among fused groups"
    return order


def _emit_array_eqn(block, e):
    rule = e.primitive.lowerings["numba"]
    out = _array_rule(block, e, rule)
    if out is None:
        raise AssertionError(f"fxad internal error: the numba lowering of "
                             f"{e.primitive.name} declined after probing")
    outs = out if e.primitive.multiple_results else [out]
    for v, src in zip(e.outvars, outs):
        name = block.name(v)
        if not v.aval.shape:
            src = f"_as_scalar({src})"
        if src != name:
            block.emit(f"{name} = {src}")


def segment_source(seg, fname, inputs, outputs, body_lines, input_shapes, workspace=False):
    """The decorated function of one segment: scalars normalized on entry, a tuple out;
    `workspace`: it takes `_ws` last (arena.py)."""
    params = list(inputs) + [name for name, _ in seg.consts] + (["_L"] if seg.loops else []) \
        + (["_ws"] if workspace else [])
    lines = ['@_nb.njit(cache=True, error_model="numpy", nogil=True)',
             f"def {fname}({', '.join(params)}):"]
    for name, shape in zip(inputs, input_shapes):
        if shape == ():
            lines.append(f"    {name} = _as_scalar({name})")
    if seg.scratch:
        lines.append("    _w = _np.empty((16,), _np.intp)")
    lines += body_lines
    rets = ", ".join(outputs)
    lines.append(f"    return ({rets}{',' if len(outputs) == 1 else ''})")
    return "\n".join(lines)


__all__ = ["Segment", "Block", "SourceNamer", "probe_eqn", "emit_eqns", "segment_source",
           "dtype_src"]
