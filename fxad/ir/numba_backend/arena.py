"""Large intermediates of compiled segments in a workspace kept between calls.

Numba's allocator takes blocks of megabytes from malloc, which maps fresh pages for each and
unmaps them when they are freed, so a program that allocates large intermediates page-faults
(and zeroes) all of them again on every call: for the nested Laplacian's ~200 MiB of
intermediates, about 40% of its call. A segment's allocations at its top level of at least
MIN_BYTES that cannot reach its results become slices of one uint8 array `_ws` passed in by
the driver (`plan`); allocations whose lifetimes do not overlap share bytes.

The driver takes the workspace from its program's `Arena` at the start of a call and gives
it back at the end: one kept per thread (a call on another thread, or a call nested inside a
running one, takes a fresh workspace), at most CAP_BYTES kept per program, all dropped with
the program, and at most TOTAL_CAP_BYTES kept by all programs together. Nothing arena-backed
leaves a segment: every value it returns or hands to the driver was allocated fresh; the
driver checks that once more on each segment output and copies one that overlaps the
workspace (`Arena.fresh`, counted in `copies`).
"""
from __future__ import annotations

import math
import re
import threading
import weakref

import numpy as np

MIN_BYTES = 1 << 20    # smaller intermediates stay with Numba's allocator (malloc reuses them)
CAP_BYTES = 256 << 20  # per program; a segment needing a larger workspace allocates as before
TOTAL_CAP_BYTES = 1 << 30  # kept by all programs together (a jitted function has up to 64)
_ALIGN = 64

_ALLOC = re.compile(r"^    (\w+) = _np\.empty\((\([\d, ]*\)|\d+), _np\.(\w+)\)$")
_TOKEN = re.compile(r"[A-Za-z_]\w*")
_FOR = re.compile(r"^\s*for (.+?) in (.*)$")


def _assignment(line):
    """(target names, right-hand side) of an assignment or `for` line, else None. Targets
    that are subscripts store values into an existing array (no alias) and are left out."""
    m = _FOR.match(line)
    if m:
        lhs, rhs = m.group(1), m.group(2)
    else:
        depth, i = 0, 0
        for i, ch in enumerate(line):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == "=" and depth == 0 and line[i + 1:i + 2] != "=" and \
                    line[i - 1:i] not in ("=", "<", ">", "!"):
                break
        else:
            return None
        lhs, rhs = line[:i].rstrip("+-*/%&|^<> "), line[i + 1:]
    names, depth, cur = [], 0, ""
    for ch in lhs + ",":  # the targets: split at commas outside brackets
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth <= 0:
            names.append(cur.strip().strip("()"))
            cur = ""
        else:
            cur += ch
    return [n for n in names if n.isidentifier()], rhs


def plan(lines, outputs):
    """Rewrite a segment body's large top-level `np.empty` allocations as slices of `_ws`.
    `lines` are the body (4 spaces of indent per depth, the body at depth 1), `outputs` the
    names the segment returns. Returns (lines, workspace bytes); 0 bytes: nothing changed.

    Aliases are found conservatively on the text: any name assigned (or looped over) from
    an expression that mentions the buffer or an alias of it is an alias, to a fixed point.
    A buffer with an alias among the outputs stays as it was; otherwise it lives from the
    top-level statement that allocates it to the last one that mentions an alias (a loop is
    one statement, so a use inside a loop keeps it for the whole loop)."""
    stmt, k = [], -1
    for line in lines:
        if line.startswith("    ") and not line.startswith("     "):
            k += 1
        stmt.append(max(k, 0))
    tokens = [set(_TOKEN.findall(line)) for line in lines]
    assigns = [_assignment(line) for line in lines]
    outs = set(outputs)
    slots = []  # [name, line index, bytes, first statement, last statement]
    for i, line in enumerate(lines):
        m = _ALLOC.match(line)
        if not m:
            continue
        dims = m.group(2)
        shape = tuple(int(d) for d in dims.strip("()").split(",") if d.strip()) \
            if dims.startswith("(") else (int(dims),)
        dt = np.dtype(getattr(np, m.group(3)))
        nbytes = math.prod(map(int, shape)) * dt.itemsize
        if nbytes < MIN_BYTES:
            continue
        alias = {m.group(1)}
        grew = True
        while grew:
            grew = False
            for j, a in enumerate(assigns):
                if a is not None and j != i and tokens[j] & alias and \
                        not alias.issuperset(a[0]) and set(_TOKEN.findall(a[1])) & alias:
                    alias.update(a[0])
                    grew = True
        if alias & outs:
            continue
        last = max(stmt[j] for j in range(len(lines)) if tokens[j] & alias)
        slots.append([m.group(1), i, nbytes, stmt[i], last, shape, dt])
    if not slots:
        return lines, 0
    placed, size = [], 0  # first fit among the slots whose lifetimes overlap
    for s in sorted(slots, key=lambda s: -s[2]):
        busy = sorted((off, off + p[2]) for off, p in placed if not (p[4] < s[3] or s[4] < p[3]))
        off = 0
        for lo, hi in busy:
            if off + s[2] <= lo:
                break
            off = max(off, -(-hi // _ALIGN) * _ALIGN)
        placed.append((off, s))
        size = max(size, off + s[2])
    if size > CAP_BYTES:
        return lines, 0
    lines = list(lines)
    for off, (name, i, nbytes, _, _, shape, dt) in placed:
        lines[i] = (f"    {name} = _ws[{off}:{off + nbytes}].view(_np.{dt.name})"
                    f".reshape({shape!r})")
    return lines, size


class Arena:
    """The workspaces of one program: one kept per thread, CAP_BYTES in all (see the module
    docstring). `kept_bytes()` says how much it holds; `copies` counts segment outputs that
    overlapped the workspace and were copied (none, when `plan`'s analysis is right)."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.copies = 0
        self._free = {}  # thread id -> its workspace, while no call on that thread holds it
        weakref.finalize(self, _forget, self._free)

    def take(self):
        with _lock:
            ws = self._free.pop(threading.get_ident(), None)
            if ws is not None:
                _total[0] -= ws.nbytes
        return np.empty(self.nbytes, np.uint8) if ws is None else ws

    def give(self, ws):
        with _lock:
            me = threading.get_ident()
            if me not in self._free and (len(self._free) + 1) * self.nbytes <= CAP_BYTES and \
                    _total[0] + ws.nbytes <= TOTAL_CAP_BYTES:
                self._free[me] = ws
                _total[0] += ws.nbytes

    def release(self):
        """Drop the calling thread's workspace (a thread that will not call again: the
        background compile's warm-up run)."""
        with _lock:
            ws = self._free.pop(threading.get_ident(), None)
            if ws is not None:
                _total[0] -= ws.nbytes

    def fresh(self, x, ws):
        """x, or a copy of it if it shares memory with the workspace."""
        if isinstance(x, np.ndarray) and np.may_share_memory(x, ws):
            self.copies += 1
            return x.copy()
        return x

    def kept_bytes(self):
        return len(self._free) * self.nbytes

    def workspaces(self):
        """The workspaces kept now (for tests: nothing returned may overlap them)."""
        return list(self._free.values())


_lock = threading.Lock()
_total = [0]  # bytes kept by all arenas


def _forget(free):
    """An arena was collected: its workspaces no longer count."""
    with _lock:
        _total[0] -= sum(ws.nbytes for ws in free.values())
        free.clear()


def total_kept_bytes():
    return _total[0]


__all__ = ["plan", "Arena", "MIN_BYTES", "CAP_BYTES", "TOTAL_CAP_BYTES", "total_kept_bytes"]
