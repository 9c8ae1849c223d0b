"""The error for NumPy converting a traced value to a plain array, told from where NumPy's
own Python code asked for it: a list of traced values given to a NumPy function (NumPy
converts the list before it looks for traced values, so fxad never sees the call), np.r_ and
np.c_ (which convert each piece with np.array), or another NumPy function that converts its
arguments. Only read on the error path; C-level conversions (np.array, ufuncs, ndarray
methods) leave no NumPy frame and get core's general message."""
from __future__ import annotations

import sys

from ..core import Tracer
from ..errors import TracerArrayConversionError

_general = Tracer.__array__


def _holds_tracer(v, depth=0):
    if isinstance(v, Tracer):
        return True
    if isinstance(v, (list, tuple)) and depth < 3:
        return any(_holds_tracer(x, depth + 1) for x in v)
    return False


def _outermost_numpy_frame(frame):
    """The outermost of the NumPy frames directly above `frame` (NumPy's public function the
    user called), or None when the conversion did not come from NumPy's Python code."""
    found = None
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "numpy" and not module.startswith("numpy."):
            break
        found, frame = frame, frame.f_back
    return found


def _arguments(frame):
    """(name, value) of the call's parameters; *args elements one by one (a traced value
    passed in *args is an argument itself, not a list of them)."""
    code, local = frame.f_code, frame.f_locals
    n = code.co_argcount + code.co_kwonlyargcount
    out = [(k, local[k]) for k in code.co_varnames[:n] if k in local]
    if code.co_flags & 0x04:  # CO_VARARGS
        star = code.co_varnames[n]
        out += [(f"{star}[{i}]", v) for i, v in enumerate(local.get(star, ()))]
    return out


def _hint(frame):
    top = _outermost_numpy_frame(frame)
    if top is None:
        return None
    name, local = top.f_code.co_name, top.f_locals
    owner = type(local["self"]).__name__ if "self" in local else None
    if owner in ("RClass", "CClass"):
        which = "np.r_" if owner == "RClass" else "np.c_"
        return (f"{which}[...] converts each piece with np.array before joining them, which "
                "NumPy offers no hook for. Write fxad.numpy" + which[2:] + "[...] (the same "
                "syntax), or np.concatenate / np.stack / np.column_stack, which NumPy hands to "
                "fxad.")
    label = f"{owner}.{name}" if owner else name
    lists = [k for k, v in _arguments(top) if isinstance(v, (list, tuple)) and _holds_tracer(v)]
    if lists:
        arg = lists[0]
        return (f"numpy's {label} was given traced values inside a list or tuple (argument "
                f"'{arg}'); NumPy converts a list to an array before it looks for traced "
                f"values, so fxad never sees the call. Stack them first, np.stack({arg}) "
                f"(NumPy hands that list to fxad), or use fxad.numpy.asarray({arg}).")
    return (f"numpy's {label} converts its arguments to plain arrays before any dispatch; "
            "use fxad.numpy's function of that name where there is one (fxad.numpy.vectorize "
            "for np.vectorize), or a NumPy function fxad sees (notes/06_numpy_dispatch.md).")


def _array(self, dtype=None, copy=None):
    hint = _hint(sys._getframe(1))
    if hint is None:
        return _general(self, dtype, copy)
    raise TracerArrayConversionError(
        f"NumPy tried to convert a traced value ({self.aval.str_short()}, under "
        f"'{self._trace.name}') into a plain array, which would lose the trace: {hint}")


Tracer.__array__ = _array
