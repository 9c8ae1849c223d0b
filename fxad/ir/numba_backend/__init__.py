"""jit's compiled backend: whole programs, loops included, to native code with Numba.

  lowering.py  what a primitive's numba lowering rule sees (rules live in the primitives'
               blocks: `p.def_lowering(rule, backend="numba")`)
  fusion.py    elementwise equations over one shape fused into one loop nest
  reduce.py    reductions as loops in NumPy's order
  emit.py      the source of a compiled segment
  program.py   a program as compiled segments around NumPy-backend equations
  cache.py     generated modules in the on-disk cache, compile timing
  runtime.py   what generated code calls: NumPy's own ufunc loops, NumPy's summation
  background.py  the "auto" backend: NumPy at once, Numba compiled in a background thread
                 (registered when fxad.jit imports it; it imports this package, not the
                 other way round)
  compile_process.py  the background thread's cold compiles, in a child process

Numba is optional (`pip install fxad[compile]`): `available()` says whether it can be used;
nothing here imports it until a program is compiled.
"""
from __future__ import annotations

import threading

from .. import codegen

MIN_NUMBA = (0, 61)  # the oldest release tested (pyproject.toml's compile extra)

_state = {}
_lock = threading.Lock()


def available():
    """(True, "") if a Numba that fxad supports can be imported, else (False, why)."""
    known = _state.get("answer")  # asked on every call of a jitted function: no lock then
    if known is not None:
        return known
    with _lock:
        if "ok" not in _state:
            try:
                import numba
                version = tuple(int(p) for p in numba.__version__.split(".")[:2])
                if version < MIN_NUMBA:
                    raise ImportError(f"numba {numba.__version__} is older than "
                                      f"{'.'.join(map(str, MIN_NUMBA))}")
                from . import runtime  # noqa: F401  (NumPy's loop API must be there too)
                _state["ok"], _state["why"] = True, ""
            except Exception as e:  # noqa: BLE001 - any failure means "use NumPy"
                _state["ok"], _state["why"] = False, f"{type(e).__name__}: {e}"
            _state["answer"] = (_state["ok"], _state["why"])
        return _state["answer"]


# Numba's compile time grows faster than linearly with a function's size: a 200-step Python
# loop unrolled by jit(grad) (~2,400 equations) did not compile within two minutes, where a
# scan of the same RNN compiles in ~2 s. Longer programs run on the NumPy backend, which
# is at its best on exactly those (few, large operations per equation) -- write the loop
# as a scan to compile it.
MAX_EQUATIONS = 600


def compile_program(closed, boundary):
    """The NumbaCompiled program of a simplified closed jaxpr (see program.py). Should
    generating it fail (a bug), the program runs on the NumPy backend, with a warning; a
    program of more than MAX_EQUATIONS top-level equations runs there without one."""
    from .program import compile_program as compile_
    if len(closed.jaxpr.eqns) > MAX_EQUATIONS:
        return codegen.compile_jaxpr(closed, boundary=boundary)
    try:
        return compile_(closed, boundary)
    except Exception as e:  # noqa: BLE001 - never a failure: the NumPy backend computes it
        import warnings
        from ...errors import CompilationWarning
        warnings.warn(f"fxad: the numba backend could not generate code for this program "
                      f"({type(e).__name__}: {str(e).strip()[:300]}); it runs on the NumPy "
                      "backend. Please report this.", CompilationWarning, stacklevel=4)
        return codegen.compile_jaxpr(closed, boundary=boundary)


codegen.register_backend("numba", compile_program)
