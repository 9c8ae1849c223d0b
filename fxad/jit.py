"""jit: stage a function to a jaxpr once per signature, simplify it, generate NumPy code
(or, with the "numba" backend, native code: fxad/ir/numba_backend).

A jitted call is the call primitive `jit` (fxad/rules/control/call.py), whose parameter is the staged
program, so every transformation understands it. This module is the user-facing decorator:
signatures, static arguments, the caches, the choice of backend.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import os
import threading
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from . import core
from .core import (_PY_SCALARS, BoundedCache, ShapedArray, Tracer, avals_key, check_output,
                   get_aval)
from .errors import CompilationWarning, FxadTypeError, FxadValueError
from .interpreters.named_axes import env_key
from .ir import codegen, numba_backend
from .ir.codegen import compiled_for
from .ir.numba_backend import background
from .ir.staging import lift_tracer_consts, stage
from .rules.control.call import jit_p
from .tree_util import cache_key, tree_flatten, tree_unflatten

# --- backends ------------------------------------------------------------------------------------

BACKENDS = ("numpy", "numba", "auto")
_default = {"backend": "numpy"}  # fxad.config.jit_backend (every thread)
_warned = threading.Event()


def check_backend(backend, where="jit"):
    if backend not in BACKENDS:
        raise FxadValueError(f"{where}: unknown backend {backend!r}; choose one of "
                             f"{', '.join(map(repr, BACKENDS))} (\"numba\" and \"auto\" "
                             "compile with `pip install fxad[compile]`)")
    return backend


def set_default_backend(backend):
    _default["backend"] = check_backend(backend, "fxad.config.jit_backend")


def default_backend():
    return _default["backend"]


def resolve_backend(backend):
    """The backend a call runs on: "numba" only when Numba can be imported (else NumPy,
    with one warning per process); "auto" when Numba is installed (else NumPy, silently:
    "auto" asks for compiled code only where it can be had)."""
    if backend is None:
        backend = _default["backend"]
    if backend == "auto":
        return "auto" if background.installed() else "numpy"
    if backend == "numba":
        ok, why = numba_backend.available()
        if not ok:
            if not _warned.is_set():
                _warned.set()
                warnings.warn(f"fxad.jit: the numba backend is not available ({why}); using "
                              "the NumPy backend, which gives the same results. Install "
                              "it with `pip install fxad[compile]`.", CompilationWarning,
                              stacklevel=3)
            return "numpy"
    return backend


_default["backend"] = check_backend(os.environ.get("FXAD_JIT_BACKEND") or "numpy",
                                    "the environment variable FXAD_JIT_BACKEND")


# --- the user-facing decorator ----------------------------------------------------------------

class Lowered:
    """What jit runs for one signature: the staged jaxpr (`.jaxpr`), the compiled program
    (`.compiled`), its code (`.as_text()`). On the numba backend `.as_text()` also shows the
    Numba source and the equations that run on NumPy; `.segments` and `.fallbacks` list
    them. `.compile()` gives the callable program (JAX's staged-compilation API), compiling
    it now; `.compile_seconds` then says how long compiling (or loading from the disk cache)
    took."""

    def __init__(self, jaxpr, backend="numpy", args=(), jitted=None, key=None, static=None):
        self.jaxpr, self.backend, self._args = jaxpr, backend, args
        self.compiled = compiled_for(jaxpr, boundary=True, backend=backend)
        self._jitted, self._key, self._static = jitted, key, static

    def as_text(self):
        describe = getattr(self.compiled, "describe", None)
        return describe() if describe is not None else self.compiled.source

    segments = property(lambda self: list(getattr(self.compiled, "segments", [])))
    fallbacks = property(lambda self: list(getattr(self.compiled, "fallbacks", [])))

    @property
    def compile_seconds(self):
        """Seconds spent compiling (or loading from the disk cache) so far; 0.0 for the NumPy
        backend, None before the first run (on "auto": before the compile is done)."""
        report = getattr(self.compiled, "report", None)
        if report is None:
            return None if self.backend == "auto" else 0.0
        return report.seconds if report.entries else None

    def __str__(self):
        return self.as_text()

    def compile(self) -> "Compiled":
        """The callable program. On the numba backend it compiles now (or loads from the disk
        cache), by running once on the lowered arguments when they are arrays; on the "auto"
        backend too (or it waits for the background compile already under way), so that the
        compiled program is what later calls run."""
        if self.backend != "numpy" and not any(_shape_struct(a) for a in self._args):
            if self.backend == "auto":
                self.compiled.wait(self._args)
            else:
                self.compiled(*self._args)
        return Compiled(self)


class Compiled:
    """A lowered signature, callable: called with the dynamic arguments only (static ones
    were fixed when lowering, as in JAX), which must have the lowered structure, shapes and
    dtypes."""

    def __init__(self, lowered):
        self.lowered = lowered
        self._fast = None  # _fast_key of a call found to have the lowered signature

    def as_text(self):
        return self.lowered.as_text()

    compile_seconds = property(lambda self: self.lowered.compile_seconds)
    compiled = property(lambda self: self.lowered.compiled)  # the program (backend's form)

    def __call__(self, *args, **kwargs):
        low = self.lowered
        jitted, (nums, names) = low._jitted, low._static
        if self._fast is not None and not kwargs:  # (set only without static arguments)
            fast = _fast_key(args)
            if fast is not None and fast[0] == self._fast:  # the lowered signature again
                return jitted(*args)
        full, it = [], iter(args)
        for i in range(len(args) + len(nums)):
            full.append(nums[i] if i in nums else next(it, _MISSING))
        if any(a is _MISSING for a in full):
            raise FxadTypeError("compiled program called with too few arguments; pass the "
                                "dynamic arguments only (static ones are fixed by lower)")
        kwargs = dict(kwargs, **names)
        key = jitted._signature(full, kwargs)
        if key != low._key:
            raise FxadTypeError("compiled program called with arguments whose structure, "
                                "shapes or dtypes differ from those it was lowered for; "
                                "lower it again for these arguments")
        if not nums and not names and not kwargs:
            fast = _fast_key(args)
            if fast is not None:
                self._fast = fast[0]
        return jitted(*full, **kwargs)


_MISSING = object()


def _static_key(v, i):
    try:
        hash(v)
    except TypeError:
        raise FxadTypeError(f"jit: static argument {i!r} of type {type(v).__name__} is not "
                            "hashable; static arguments are part of the cache key. Pass a "
                            "tuple instead of a list, or make it a regular (traced) "
                            "argument.") from None
    return (type(v), v)


def _as_tuple(x, kind, what):
    xs = (x,) if isinstance(x, kind) or not isinstance(x, (tuple, list)) else tuple(x)
    for v in xs:
        if not isinstance(v, kind) or isinstance(v, bool):
            raise FxadTypeError(f"jit: {what} must be {kind.__name__}s, got {v!r}")
    return xs


def _resolve_static(fun, nums, names):
    """(static_argnums, static_argnames, strict): each static argument named both ways, so
    it is static whether passed by position or by keyword (JAX does the same), checked
    against fun's signature when it has one; `strict` is False when the signature cannot
    be known (then positions are checked against each call instead)."""
    fname = getattr(fun, "__name__", "the function")
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return nums, names, False
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_pos = any(p.kind == p.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    n = len(positional)
    if not var_pos:
        for i in nums:
            if not -n <= i < n:
                raise FxadValueError(
                    f"jit: static_argnums contains {i}, but {fname} takes {n} positional "
                    f"argument{'s' if n != 1 else ''}; static_argnums are positions of its "
                    "parameters (counting from 0)")
        nums = tuple(i % n for i in nums)
    for name in names:
        p = sig.parameters.get(name)
        if (p is None and not var_kw) or (p is not None and p.kind in (p.VAR_POSITIONAL,
                                                                        p.VAR_KEYWORD)):
            raise FxadValueError(f"jit: static_argnames contains {name!r}, which is not a "
                                 f"named parameter of {fname}{sig}")
    by_name = tuple(i for i, p in enumerate(positional) if p.name in names)
    by_num = tuple(positional[i].name for i in nums
                   if 0 <= i < n and positional[i].kind == positional[i].POSITIONAL_OR_KEYWORD)
    return (tuple(dict.fromkeys(nums + by_name)), tuple(dict.fromkeys(names + by_num)),
            not var_pos)


def _array_argument(x, i):
    """A leaf of jit's arguments as the array it stands for; a string is refused here, as JAX
    refuses it, rather than traced as an array of characters."""
    a = np.asarray(x)
    if a.dtype.kind in "US":
        raise FxadTypeError(f"jit: argument leaf {i} is a {type(x).__name__} ({x!r:.40}), not "
                            "an array or a number; pass it as a static argument "
                            "(static_argnums / static_argnames), or keep it in a pytree "
                            "node's auxiliary data")
    return a


_CACHES = "__fxad_jit_caches__"


def _caches_of(fun, options, size):
    """The caches of `jit(fun, **options)`. They live on the function object, as JAX keys its
    compilation cache on the function: `jit(f)(x)` written inline (a new wrapper each time)
    traces once, and the caches die with `f` (nothing global keeps user functions alive).
    A bound method (its attributes are its function's, shared by every instance, while the
    instance is baked into the program) or a callable without attributes gets its own."""
    d = None if inspect.ismethod(fun) else getattr(fun, "__dict__", None)
    if not isinstance(d, dict):
        return BoundedCache(size), BoundedCache(size)
    table = d.setdefault(_CACHES, {})
    return table.setdefault(options, (BoundedCache(size), BoundedCache(size)))


class _Jitted:
    CACHE_SIZE = 64  # signatures kept per function (least recently used dropped)

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums=(),
                 donate_argnames=(), backend=None):
        if not callable(fun):
            raise FxadTypeError(f"jit expects a function, got {type(fun).__name__}")
        self.fun = fun
        self.backend = None if backend is None else check_backend(backend)
        self.static_argnums, self.static_argnames, self._strict = _resolve_static(
            fun, _as_tuple(static_argnums, int, "static_argnums"),
            _as_tuple(static_argnames, str, "static_argnames"))
        # Donation lets XLA reuse an input's buffer; fxad's programs never write into their
        # inputs, so it is checked for well-formedness and otherwise has no effect.
        _as_tuple(donate_argnums, int, "donate_argnums")
        _as_tuple(donate_argnames, str, "donate_argnames")
        # self.cache: signature -> (program, output tree); self.fast: _fast_key -> _runner.
        # Shared by every jit of the same function with the same options.
        self.cache, self.fast = _caches_of(fun, (self.static_argnums, self.static_argnames,
                                                 self._strict, self.backend), self.CACHE_SIZE)
        functools.update_wrapper(self, fun)
        self.__dict__.pop(_CACHES, None)  # (update_wrapper copied fun's attributes)

    def __get__(self, obj, objtype=None):
        """A jitted function in a class body binds to the instance like a plain function."""
        return self if obj is None else _BoundJitted(self, obj)

    def _static_positions(self, n):
        static = []
        for i in self.static_argnums:
            if -n <= i < n:
                static.append(i % n)
            elif not self._strict:
                raise FxadValueError(
                    f"jit: static_argnums contains {i}, but this call of "
                    f"{getattr(self.fun, '__name__', 'the function')} passed {n} positional "
                    "argument(s); pass that argument positionally, or fix static_argnums")
        return tuple(static)

    def _prepare(self, args, kwargs):
        n = len(args)
        static = self._static_positions(n)
        dyn_args = [a for i, a in enumerate(args) if i not in static]
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        flat, in_tree = tree_flatten((dyn_args, dyn_kw))
        # Python scalars stay Python scalars: their avals are weak, so they promote as they do
        # eagerly (float32 array * 2.0 is float32), and the weak flag is part of the key.
        flat = [x if hasattr(x, "aval") or isinstance(x, np.ndarray) or type(x) in _PY_SCALARS
                or _shape_struct(x) else _array_argument(x, i) for i, x in enumerate(flat)]
        avals = [ShapedArray(x.shape, x.dtype) if _shape_struct(x) else get_aval(x)
                 for x in flat]
        skey = tuple(_static_key(args[i], i) for i in static) + \
            tuple((k, _static_key(kwargs[k], k)) for k in sorted(kwargs)
                  if k in self.static_argnames)
        # A program staged inside named axes may depend on their sizes (all_gather's shape).
        key = (in_tree, avals_key(avals), skey, env_key())
        entry = self.cache.get(key)
        if entry is None:
            store = {}

            def flat_fun(*leaves):
                d_args, d_kw = tree_unflatten(in_tree, leaves)
                it = iter(d_args)
                full = [args[i] if i in static else next(it) for i in range(n)]
                kw = dict(d_kw, **{k: kwargs[k] for k in kwargs if k in self.static_argnames})
                out_leaves, store["out"] = tree_flatten(self.fun(*full, **kw))
                return [check_output(o, i, "jit") for i, o in enumerate(out_leaves)]
            closed, lifted = lift_tracer_consts(stage(flat_fun, avals, name="jit"))
            # Closed-over arrays are snapshotted now (JAX's rule): the cached program does
            # not see later in-place changes to them.
            entry = (closed.snapshot(), store["out"])
            if lifted:  # closes over an outer transformation's values: valid for this call only
                return entry, lifted + flat
            frozen = cache_key(in_tree)
            if frozen is not None:  # None: node data that can be neither hashed nor copied
                self.cache[(frozen,) + key[1:]] = entry
        return entry, flat

    def _signature(self, args, kwargs):
        """The cache key of a call (for Compiled's check)."""
        static = self._static_positions(len(args))
        dyn = ([a for i, a in enumerate(args) if i not in static],
               {k: v for k, v in kwargs.items() if k not in self.static_argnames})
        flat, tree = tree_flatten(dyn)
        return cache_key(tree) or tree, tuple((tuple(np.shape(x)), _dtype(x)) for x in flat)

    def __call__(self, *args, **kwargs):
        if _state.disabled:
            return self.fun(*args, **kwargs)
        requested = self.backend or _default["backend"]
        fast = None if kwargs or self.static_argnums else _fast_key(args)
        if fast is not None:  # arrays, scalars, lists and tuples only: skip pytree flattening
            key, flat = fast
            if requested != "numpy":  # (keyed by the backend asked for: resolved on a miss)
                key = (requested, key)
            names = env_key()
            if names:
                key = (names, key)
            run = self.fast.peek(key)
            if run is not None:
                return run(flat)
        backend = requested if requested == "numpy" else resolve_backend(requested)
        (closed, out_tree), flat = self._prepare(args, kwargs)
        outs = jit_p.bind(*flat, jaxpr=closed, name=getattr(self.fun, "__name__", "jit"),
                          backend=backend)
        # Remember the compiled program, unless the call closed over an outer
        # transformation's values (they are passed as extra leading arguments: not cached).
        compiled = closed.cache.get(("compiled", True, backend))
        if fast is not None and len(flat) == len(fast[1]) and compiled is not None:
            self.fast[key] = _runner(compiled, out_tree)
        return tree_unflatten(out_tree, [_writeable(o) for o in outs])

    def lower(self, *args, **kwargs):
        """The staged and compiled program for these arguments (`.as_text()` shows it;
        `.compile()` makes it callable). ShapeDtypeStructs may stand for arrays."""
        (closed, _), flat = self._prepare(args, kwargs)
        static = self._static_positions(len(args))
        fixed = ({i: args[i] for i in static},
                 {k: v for k, v in kwargs.items() if k in self.static_argnames})
        return Lowered(closed, resolve_backend(self.backend), flat, self,
                       self._signature(args, kwargs), fixed)


class _BoundJitted:
    """A jitted method bound to its instance (what `obj.method` gives for a jitted method)."""
    __slots__ = ("jitted", "obj")

    def __init__(self, jitted, obj):
        self.jitted, self.obj = jitted, obj

    def __call__(self, *args, **kwargs):
        return self.jitted(self.obj, *args, **kwargs)

    def lower(self, *args, **kwargs):
        return self.jitted.lower(self.obj, *args, **kwargs)


_MAX_FAST_DEPTH = 32  # deeper argument nests take the general (iterative) path


def _fast_key(args):
    """(key, leaves) for calls whose arguments are arrays, scalars, and lists and tuples of
    them (no dicts, custom nodes or tracers), found in one walk without building a tree
    (the general path costs ~30 µs for a list of parameter pairs); None for any other call.
    The key lists, in order, each container's type and length and each leaf's shape and
    dtype (a Python scalar's type), so it determines the tree and the leaves' avals. The
    leaves are those `_prepare` would pass (NumPy scalars as 0-d arrays)."""
    if len(args) == 1 and type(args[0]) is np.ndarray:  # the most common call, written out
        return ((args[0].shape, args[0].dtype),), args
    key, scalars = [], False
    for a in args:  # the common call: arrays and scalars, no containers
        t = type(a)
        if t is np.ndarray:
            key.append((a.shape, a.dtype))
        elif t in _PY_SCALARS:
            key.append(t)
        elif isinstance(a, np.generic):
            key.append(((), a.dtype))
            scalars = True
        else:
            break
    else:
        if scalars:
            return tuple(key), [np.asarray(a) if isinstance(a, np.generic) else a for a in args]
        return tuple(key), args
    key, leaves = [], []
    return (tuple(key), leaves) if _walk(args, key, leaves, 0) else None


def _walk(xs, key, leaves, depth):
    if depth > _MAX_FAST_DEPTH:
        return False
    for a in xs:
        t = type(a)
        if t is np.ndarray:
            key.append((a.shape, a.dtype))
            leaves.append(a)
        elif t in _PY_SCALARS:
            key.append(t)
            leaves.append(a)
        elif t is list or t is tuple:
            key.append((t, len(a)))
            if not _walk(a, key, leaves, depth + 1):
                return False
        elif isinstance(a, np.generic):
            key.append((a.shape, a.dtype))
            leaves.append(np.asarray(a))
        elif isinstance(a, np.ndarray):  # a subclass (fxad.numpy's arrays): as a plain one
            key.append((a.shape, a.dtype))
            leaves.append(a.view(np.ndarray))
        else:
            return False
    return True


def _runner(compiled, out_tree):
    """The fast path's whole call of a cached program, given the leaves: the program's
    generated function called directly (its wrapper only adds debug_nans' check, made here
    too), the results made writeable and put in the output tree (a single result without
    building a tree). Built once per signature; holds no per-call state."""
    fn = compiled.fn if type(compiled).__call__ is codegen.Compiled.__call__ else compiled

    if out_tree.num_nodes == 1 and out_tree.num_leaves == 1:  # one array: no tree to build
        def run(flat):
            outs = fn(*flat) if core._nan_hook is None else compiled(*flat)
            return _writeable(outs[0])
    else:
        def run(flat):
            outs = fn(*flat) if core._nan_hook is None else compiled(*flat)
            return out_tree.unflatten([_writeable(o) for o in outs])
    return run


def _writeable(x):
    if type(x) is np.ndarray:
        return x if x.flags.writeable else x.copy()
    if isinstance(x, np.ndarray):  # a subclass (fxad.numpy's indexable constants): plain
        return _writeable(x.view(np.ndarray))
    return x


def _shape_struct(x):
    """A stand-in for an array (a ShapeDtypeStruct): shape and dtype, but no values."""
    return (not isinstance(x, (np.ndarray, np.generic, Tracer)) and type(x) not in _PY_SCALARS
            and hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"))


def _dtype(x):
    if _shape_struct(x) or isinstance(x, Tracer):
        return np.dtype(x.dtype)
    return type(x) if type(x) in _PY_SCALARS else np.asarray(x).dtype


class _State(threading.local):
    disabled = False


_state = _State()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Within the block (this thread), jitted functions run their Python code eagerly, on
    concrete values: print and pdb see numbers. Nested blocks restore the previous state."""
    prev, _state.disabled = _state.disabled, bool(disable)
    try:
        yield
    finally:
        _state.disabled = prev


def jit(fun: Callable | None = None, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), donate_argnums: int | Sequence[int] = (),
        donate_argnames: str | Sequence[str] = (), keep_unused: bool = False,
        device: Any = None, backend: str | None = None, inline: bool = False) -> Any:
    """Stage `fun` once per signature (pytree structure, shapes, dtypes, static values),
    simplify the program and run generated code on later calls: NumPy code (backend
    "numpy"), or native code compiled with Numba (backend "numba": elementwise chains fused,
    loops compiled; needs `pip install fxad[compile]`, else NumPy is used; the first call
    waits for the compiler), or both (backend "auto": the NumPy program runs at once while
    Numba compiles in a background thread, and calls switch to the compiled program when
    it is ready, with the same results). The default,
    None (or JAX's "cpu"), follows `fxad.config.jit_backend` (environment variable
    FXAD_JIT_BACKEND) at each call. `donate_argnums`, `donate_argnames`, `keep_unused`,
    `device` and `inline` are accepted for JAX code and change nothing (fxad runs on the
    CPU and never writes into its inputs).

    >>> import fxad, fxad.numpy as fnp
    >>> f = fxad.jit(lambda x: fnp.sum(fnp.tanh(x)) * 2)
    >>> print(f(fnp.zeros(3)), fxad.grad(f)(fnp.zeros(2)))     # staged once, then reused
    0.0 [2. 2.]
    """
    backend = None if backend == "cpu" else backend
    if fun is None:
        return lambda f: jit(f, static_argnums, static_argnames, donate_argnums,
                             donate_argnames, backend=backend)
    return _Jitted(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                   backend)
