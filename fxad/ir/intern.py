"""Interning of loop and branch bodies: structurally identical jaxprs share one object.

Eager code re-traces `lax.scan`'s body on every call (the body is usually a fresh closure), so
without this every call would rebuild what is cached on the body: its JVP split, transposed
and batched bodies, generated loop code. Two bodies are the same when their equations,
wiring, parameters, literals and types are; closed-over values are not part of a body (they
are hoisted to operands), so a hit never reuses a stale value.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from ..core import avals_key, on_rule_change
from .jaxpr import ClosedJaxpr, Jaxpr, Literal, holds_user_functions

_SIZE = 512
_table: OrderedDict = OrderedDict()
_lock = threading.Lock()


@on_rule_change
def _forget_bodies():  # their derived programs came from the old rules
    with _lock:
        _table.clear()


class _Unhashable(Exception):
    pass


def _canon(x):
    """A hashable, exact stand-in for a parameter value."""
    if isinstance(x, (float, complex)):
        return (type(x), repr(x))  # 0.0 and -0.0 are different programs
    if isinstance(x, (tuple, list)):
        return (type(x),) + tuple(_canon(y) for y in x)
    if isinstance(x, ClosedJaxpr):
        if holds_user_functions(x):
            raise _Unhashable  # see below: never keep user closures alive
        return x  # by identity; the key holds it, so its id cannot be reused
    if isinstance(x, Jaxpr):
        raise _Unhashable
    if callable(x) and not isinstance(x, type):
        # A user's function (a custom rule, a callback): a body holding one is not interned,
        # so this table never keeps user closures (and what they capture) alive.
        raise _Unhashable
    try:
        hash(x)
    except TypeError:
        raise _Unhashable from None
    return (type(x), x)


def structure_key(closed: ClosedJaxpr):
    """An exact key for a jaxpr without constants, or None if a parameter is unhashable."""
    j = closed.jaxpr
    if j.constvars:
        return None
    ids = {}

    def ref(v):
        if type(v) is Literal:
            return ("lit", type(v.val), repr(v.val), avals_key([v.aval]))
        return ids[v]
    try:
        key = [avals_key([v.aval for v in j.invars])]
        for v in j.invars:
            ids[v] = len(ids)
        for e in j.eqns:
            params = tuple(sorted((k, _canon(p)) for k, p in e.params.items()))
            key.append((e.primitive, params, tuple(ref(v) for v in e.invars),
                        avals_key([v.aval for v in e.outvars]), e.source))
            for v in e.outvars:
                ids[v] = len(ids)
        key.append(tuple(ref(v) for v in j.outvars))
        return tuple(key)
    except _Unhashable:
        return None


def intern(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The canonical object for this body (the first one seen with its structure)."""
    key = structure_key(closed)
    if key is None:
        return closed
    with _lock:
        hit = _table.get(key)
        if hit is not None:
            _table.move_to_end(key)
            return hit
        _table[key] = closed
        if len(_table) > _SIZE:
            _table.popitem(last=False)
    return closed
