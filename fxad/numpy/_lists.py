"""Lists of traced values as array_likes, as NumPy takes lists of numbers: stacked into one
traced array. Primitives do it in bind (core.set_sequence_hook, on the conversion error, so
the way that succeeds costs nothing); functions written in Python, which look at their
arguments before binding, are decorated with `stack_traced_lists`."""
from __future__ import annotations

import functools

from .. import lax
from ..core import Tracer, set_sequence_hook
from ..rules.helpers import shape_of


def has_tracer(obj):
    """Is there a traced value in `obj` (a value, or nested lists and tuples of them)?"""
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(has_tracer(o) for o in obj)
    return False


def stack_nested(obj):
    """A (nested) list holding traced values as one array, as np.array makes of numbers:
    each level stacked along a new leading axis."""
    if isinstance(obj, (list, tuple)):
        parts = [stack_nested(o) for o in obj]
        return lax.concatenate([lax.reshape(p, (1,) + tuple(shape_of(p))) for p in parts], 0)
    return obj


def lift_sequences(args):
    """`args` with every list or tuple that holds traced values stacked, or None when none
    does. A ragged one is left as it is (the function says what is wrong)."""
    out, changed = [], False
    for a in args:
        if (type(a) is list or type(a) is tuple) and has_tracer(a):
            try:
                a, changed = stack_nested(a), True
            except (ValueError, TypeError):
                pass
        out.append(a)
    return tuple(out) if changed else None


def stack_traced_lists(f):
    """`f` with its positional lists of traced values stacked first: a list of traced values
    is an array_like, as NumPy's own lists are."""
    @functools.wraps(f)
    def g(*args, **kwargs):
        for a in args:
            if type(a) is list or type(a) is tuple:
                lifted = lift_sequences(args)
                if lifted is not None:
                    args = lifted
                break
        return f(*args, **kwargs)
    g._stacks_lists = True
    return g


set_sequence_hook(lift_sequences)
