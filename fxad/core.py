"""The kernel: abstract values, primitives, traces, tracers and the per-thread trace stack.

Every operation fxad knows is a `Primitive`. `Primitive.bind` either runs the NumPy
implementation directly (no tracer among the arguments: the eager fast path) or hands the
primitive to the highest-level trace among the arguments' tracers. Each transformation is a
`Trace` subclass (an interpreter); traces stack, and the stack is per thread.
"""
from __future__ import annotations

import math
import sys
import threading
import weakref
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from .errors import (ConcretizationError, EscapedTracerError, FxadTypeError,
                     RuleNotImplementedError, TracerArrayConversionError)

# ---------------------------------------------------------------------------------------------
# Abstract values
# ---------------------------------------------------------------------------------------------

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool", "complex128": "c128",
          "complex64": "c64", "uint32": "u32", "uint64": "u64"}


class ShapedArray:
    """Shape and dtype of a value. `weak` is the Python type of a Python-scalar literal
    (float, int, complex, bool) so dtype promotion follows NumPy's rules for scalars."""
    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak = weak

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(map(int, self.shape)))

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def str_short(self):
        return f"{_SHORT.get(self.dtype.name, self.dtype.name)}[{','.join(map(str, self.shape))}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.shape}, {self.dtype.name})"

    def sample(self):
        """A one-element stand-in with this dtype and rank (Python scalars stay weak), for
        finding output dtypes by running an impl."""
        return self.weak(1) if self.weak is not None else np.ones((1,) * self.ndim, self.dtype)


_PY_SCALARS = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
_PY_AVALS = {t: ShapedArray((), d, weak=t) for t, d in _PY_SCALARS.items()}  # shared: immutable


def avals_key(avals) -> tuple:
    """An exact, hashable key for abstract values, for caches: shape, dtype and weak type
    (ShapedArray's == ignores weak types, but a cached program must not)."""
    return tuple([(a.shape, a.dtype, a.weak) for a in avals])


def _shaped(shape, dtype):
    """ShapedArray without argument normalization (shape is a tuple, dtype an np.dtype)."""
    a = object.__new__(ShapedArray)
    a.shape, a.dtype, a.weak = shape, dtype, None
    return a


# NumPy's scalar types, so get_aval finds them by one set lookup instead of isinstance tests.
_NP_SCALAR_TYPES = frozenset(np.dtype(c).type for c in "?bhilqpBHILQPefdgFDG")
# One shared abstract value per scalar type (Python's weak, NumPy's not): scalar code asks
# for them on every primitive.
_SCALAR_AVALS = {**{t: ShapedArray((), t) for t in _NP_SCALAR_TYPES}, **_PY_AVALS}


def get_aval(x) -> ShapedArray:
    """The abstract value of any value fxad accepts (on every hot path: common cases first)."""
    t = type(x)
    if t is np.ndarray:
        return _shaped(x.shape, x.dtype)
    a = _SCALAR_AVALS.get(t)
    if a is not None:
        return a
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, np.generic):
        return _shaped(x.shape, x.dtype)
    arr = np.asarray(x)
    if arr.dtype.kind not in _NUMERIC_KINDS:
        raise FxadTypeError(f"fxad cannot use a value of type {describe_type(x, arr)}: it "
                            "is not a numeric array, a number, or a tracer. Convert it with "
                            "fxad.numpy.asarray.")
    return ShapedArray(arr.shape, arr.dtype)


def describe_type(x, arr):
    """`str`, `ndarray (dtype object)`, ...: a refused value's type, for error messages."""
    shown = arr.dtype != object or type(x) is np.ndarray
    return type(x).__name__ + (f" (dtype {arr.dtype})" if shown else "")


_NUMERIC_KINDS = frozenset("biufc")  # bool, ints, floats, complex: what primitives accept


def check_output(x, i, where):
    """An output leaf of a transformed function, or a TypeError naming it: a string or other
    non-numeric leaf would otherwise come back with a made-up "tangent" or as a tracer."""
    t = type(x)
    if t in _SCALAR_AVALS or isinstance(x, Tracer) or \
            (t is np.ndarray and x.dtype.kind in _NUMERIC_KINDS):
        return x
    kind = np.asarray(x).dtype.kind if t is not np.ndarray else x.dtype.kind
    if kind not in _NUMERIC_KINDS:
        raise FxadTypeError(
            f"{where}: output leaf {i} is a {t.__name__} ({x!r:.60}), not a numeric array or "
            "number. A transformed function's outputs must be arrays or numbers; return "
            "other values as auxiliary data (has_aux=True) or outside the function.")
    return x


_caches, _caches_lock = weakref.WeakSet(), threading.Lock()  # live BoundedCaches (clear_caches)


class BoundedCache:
    """A thread-safe least-recently-used map with at most `size` entries: every cache in fxad
    is one, so none grows without bound and concurrent use never corrupts it. Callers key on
    types, shapes and programs, never on user functions or arrays (which it would keep
    alive)."""
    __slots__ = ("size", "_data", "_lock", "peek", "__weakref__")

    def __init__(self, size=64):
        self.size = size
        self._data = OrderedDict()
        self._lock = threading.Lock()
        with _caches_lock:
            _caches.add(self)
        # peek(key, default=None): a read without the lock that does not mark the entry
        # recently used, for paths that run on every call (a dict read is atomic; a hot
        # entry dropped as if unused is only rebuilt by the caller's slow path).
        self.peek = self._data.get

    def get(self, key, default=None):
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return default
            return self._data[key]

    def __contains__(self, key):
        with self._lock:
            return key in self._data

    def __setitem__(self, key, value):
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self):
        return len(self._data)

    def clear(self):
        with self._lock:
            self._data.clear()


def is_float(dtype) -> bool:
    """Can values of this dtype carry derivatives?"""
    return (dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)).kind in "fc"


# ---------------------------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------------------------

_primitives = []  # every Primitive defined, in order (module-level singletons)


def primitives():
    """Every primitive defined so far (for `python -m fxad rules` and its tests)."""
    return list(_primitives)


def _defining_frame():
    """(module, file, line) of the statement that defines a primitive: the innermost module-level
    frame on the stack, so a primitive made by a helper (`elementwise("sin", np.sin)`) is
    placed at the helper's call in the rule file, not inside the helper. Without one (made at
    run time inside a function) it is the constructor's caller."""
    frame = sys._getframe(2)
    caller = frame
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    frame = frame or caller
    return frame.f_globals.get("__name__"), frame.f_code.co_filename, frame.f_lineno


class Primitive:
    """An operation and its whole story. Rules are registered with the `def_*` methods (or
    the helpers in fxad/rules/helpers.py, which call them):

      impl            NumPy evaluation                 def_impl(fn)
      abstract_eval   shape and dtype rule             def_abstract_eval(fn)
      jvp             forward-mode rule (every one)    def_jvp(fn)
      transpose       linear primitives only           def_transpose(fn)
      batch           vmap rule                        def_batch(fn)
      jet             Taylor-mode rule                 def_jet(fn)
      lowerings       source for jit's code, by backend   def_lowering(fn, inplace=None)
      simplify        rewrites taken part in, by pass  def_simplify(pass_name, fn)
      inline          a call primitive's body (jit)    def_inline(fn)

    `memory` says what the impl's outputs may share memory with, so compiled programs can
    return results that alias nothing the caller or fxad holds: "fresh" (always newly
    allocated, referenced by nothing else), "views" (may be views of its operands), or
    "any" (the default: may be anything, e.g. a constant kept by an inner program).
    `effectful` primitives (printing, callbacks) are never folded, merged or dropped."""

    def __init__(self, name, multiple_results=False, memory="any", effectful=False):
        self.name = name
        self.multiple_results = multiple_results
        self.memory = memory
        self.effectful = effectful
        self.linear = False
        self.impl = None
        self.abstract_eval = None
        self.jvp = None
        self.transpose = None
        self.batch = None
        self.jet = None  # Taylor mode; None: derived from the JVP rule (interpreters/jet.py)
        self.elementwise = False  # each output element from the same element of each operand
        self.lowerings = {}  # backend -> fn(ctx, args, **params) -> source expression
        self.inplace = None  # NumPy ufunc name that can write its result into a dead input
        self.simplify = {}  # pass name -> rule (fxad/ir/simplify.py says what each pass asks)
        self.inline = None  # params -> the ClosedJaxpr a call primitive runs
        # Eager grad derives this primitive's pullback from its JVP rule once per signature
        # (fxad/interpreters/tape.py); False for rules that need concrete values.
        self.derivable = True
        self.module, self.file, self.line = _defining_frame()  # where its block starts
        _primitives.append(self)

    @property
    def family(self):
        """The rule family (the folder under fxad/rules/) or, for a primitive defined elsewhere,
        its module below fxad ('interpreters.transpose' for add_any)."""
        parts = (self.module or "").split(".")
        if parts[:2] == ["fxad", "rules"] and len(parts) > 3:
            return parts[2]
        return ".".join(parts[1:]) if parts[0] == "fxad" else self.module

    def __repr__(self):
        return self.name

    def __setattr__(self, name, value):  # a replaced rule must not live on in derived caches
        if name in _RULE_ATTRS and "module" in self.__dict__:
            [forget() for forget in _on_rule_change]
        object.__setattr__(self, name, value)

    def _registers(attr):  # def_jvp(rule) etc.: set the rule, return it (usable as a decorator)
        return lambda self, rule: setattr(self, attr, rule) or rule
    def_impl, def_abstract_eval, def_jvp = _registers("impl"), _registers("abstract_eval"), \
        _registers("jvp")
    def_batch, def_jet, def_inline = _registers("batch"), _registers("jet"), _registers("inline")
    del _registers

    def def_transpose(self, rule, linear=True):
        """The transpose rule of a linear primitive (which marks it linear; `linear=False`
        for a rule that only explains why the primitive cannot be transposed)."""
        self.linear = linear
        self.transpose = rule
        return rule

    def def_lowering(self, rule, backend="numpy", inplace=None):
        """`rule(ctx, args, **params)` returns the source of a Python expression computing
        the result from the argument sources `args` (see fxad/ir/codegen.py for `ctx`).
        `inplace`: a NumPy ufunc name that can take `out=` (elementwise primitives)."""
        self.lowerings[backend] = rule
        if inplace is not None:
            self.inplace = inplace
        return rule

    def def_simplify(self, pass_name, rule):
        self.simplify[pass_name] = rule
        return rule

    def bind(self, *args, **params):
        top = None  # the highest-level trace among the arguments' tracers processes it
        for a in args:
            if isinstance(a, Tracer):
                t = a._trace
                if not t.active:
                    raise escaped_tracer(a, self.name)
                if top is None or t.level > top.level:
                    top = t
        try:
            if top is not None:
                return top.process_primitive(self, args, params)
            if _nan_hook is not None:  # eager: fxad.debug_nans is on somewhere
                return _nan_hook(self, args, params)
            return self.impl(*args, **params)
        except TracerArrayConversionError:
            # A list of traced values is an array_like too: stacked, then bound again (a
            # try costs nothing on the way that succeeds).
            lifted = _sequence_hook(args) if _sequence_hook is not None else None
            if lifted is None:
                raise
            return self.bind(*lifted, **params)


_RULE_ATTRS = frozenset({"impl", "abstract_eval", "jvp", "transpose", "batch", "jet"})
_on_rule_change: list = []  # forget() callbacks: what was derived from the old rules goes


def on_rule_change(forget):  # a decorator: forget() runs when a defined rule is replaced
    return _on_rule_change.append(forget) or forget


# Set by fxad.numpy: (args) -> args with every list/tuple that holds traced values made an
# array (as NumPy's array_like conversion would), or None when no argument is such a list.
_sequence_hook = None


def set_sequence_hook(hook):
    global _sequence_hook
    _sequence_hook = hook


# --- NaN/inf checking state (fxad.debug has the user API and the checks themselves) -----------

_nan_hook = None  # (prim, args, params) -> out, installed while anything wants checking
_global_checks = {"nan": False, "inf": False}  # config.debug_nans / debug_infs: every thread
_nan_lock = threading.Lock()
_nan_enablers = 0  # the global flags (1 each) + active debug_nans/debug_infs blocks, all threads


def set_nan_checking(hook, *, global_flag=None, thread_delta=0, kind="nan"):
    """NaN (`kind` "nan") or inf checks on/off for every thread (`global_flag`) or this thread
    (`thread_delta` +1 entering a debug_nans/debug_infs block, -1 leaving it). `hook` sits in
    bind while anything anywhere checks; with nothing checking, bind pays nothing."""
    global _nan_hook, _nan_enablers
    with _nan_lock:
        if global_flag is not None and global_flag != _global_checks[kind]:
            _global_checks[kind] = global_flag
            _nan_enablers += 1 if global_flag else -1
        _state.nan_depth += thread_delta
        _nan_enablers += thread_delta
        _nan_hook = hook if _nan_enablers else None


def nan_checking() -> bool:  # (NaN or inf checks, this thread)
    return _nan_hook is not None and (_state.nan_depth > 0 or any(_global_checks.values()))


def missing_rule(kind: str, prim: Primitive):
    return RuleNotImplementedError(f"{kind} rule for '{prim.name}' not implemented")


# ---------------------------------------------------------------------------------------------
# Traces and tracers
# ---------------------------------------------------------------------------------------------

class Trace:
    """One active transformation. `level` orders traces: the highest among the arguments
    processes a primitive. `name` appears in error messages ('jvp', 'linearize', ...).
    `differentiates`: its tracers carry derivatives (float() of one would drop them)."""
    kind = "trace"
    differentiates = False

    def __init__(self, level, name=None):
        self.level = level
        self.name = name or self.kind
        self.active = True

    def process_primitive(self, prim, args, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(level={self.level}, name={self.name!r})"


class _ThreadState(threading.local):
    def __init__(self):
        self.stack = []
        self.source = None  # the custom rule being run, recorded on staged equations
        self.nan_depth = 0  # nesting depth of debug_nans()/debug_infs() blocks here


_state = _ThreadState()


def trace_stack():
    """A copy of this thread's stack of active traces (for tests and debugging)."""
    return list(_state.stack)


class new_trace:
    """`with new_trace(TraceClass, name) as trace:` pushes a trace for the block; it is popped
    and deactivated on every exit path, so an exception inside a transformed function leaves
    the stack as it was. (A class, not a generator: every transformation call enters one.)"""
    __slots__ = ("make", "trace", "stack")

    def __init__(self, trace_cls, name=None, **kwargs):
        self.make = (trace_cls, name, kwargs)

    def __enter__(self):
        trace_cls, name, kwargs = self.make
        stack = self.stack = _state.stack  # the level is the stack height when entered
        trace = self.trace = trace_cls(len(stack), name, **kwargs)
        stack.append(trace)
        return trace

    def __exit__(self, *exc):
        stack, trace = self.stack, self.trace
        trace.active = False
        # Restore exactly: anything pushed above us and left behind is dropped as well.
        while stack and stack[-1] is not trace:
            stack.pop().active = False
        if stack:
            stack.pop()
        return False


@contextmanager
def rule_source(name):
    """Mark equations staged inside a user's custom rule, so errors can name the rule."""
    prev, _state.source = _state.source, name
    try:
        yield
    finally:
        _state.source = prev


def current_source():
    return _state.source


def escaped_tracer(tracer, where):
    t = tracer._trace
    return EscapedTracerError(
        f"A value traced by '{t.name}' was used in '{where}' after that transformation "
        f"ended (tracer with {tracer.aval.str_short()}). A traced value must not leave the "
        "function being transformed, e.g. through a global, a closure or a list kept "
        "outside; return it as an output instead.")


class Tracer:
    """A value being traced. Subclasses set `aval` and know how to concretize.

    Operators and array methods are attached by `fxad.numpy` (they bind primitives)."""
    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:  # pragma: no cover - abstract
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return self.aval.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # --- concretization -----------------------------------------------------------------
    def concrete_value(self, op):
        """The concrete value behind this tracer, or a ConcretizationError naming `op`."""
        raise ConcretizationError(
            f"{op} needs a concrete value, but got a traced value with "
            f"{self.aval.str_short()} under '{self._trace.name}'. Python control flow cannot "
            "depend on staged or batched values: compute both branches and choose with "
            "fxad.numpy.where, or mark the argument static (static_argnums in jit).")

    def _check_alive(self, op):
        if not self._trace.active:
            raise escaped_tracer(self, op)

    def __bool__(self):
        self._check_alive("bool()")
        return bool(self.concrete_value("bool() (an `if`, `while`, `and`/`or`)"))

    def __index__(self):
        self._check_alive("index")
        if not np.issubdtype(self.dtype, np.integer):
            raise FxadTypeError(f"only integer values can be used as an index, got "
                                f"{self.aval.str_short()}")
        try:
            return int(self.concrete_value("int() / indexing"))
        except ConcretizationError as e:
            raise ConcretizationError(
                f"{e} If this is an index into a NumPy array (`a[i]`), use "
                "fxad.numpy.take(a, i, axis), or make `a` with fxad.numpy "
                "(fxad.numpy.asarray(a)[i] takes traced indices); for a slice at a traced "
                "position, fxad.lax.dynamic_slice_in_dim.") from None

    def _scalar(self, conv, name):
        self._check_alive(name)
        if is_float(self.dtype) and self._trace.differentiates:
            raise ConcretizationError(
                f"{name}() of a traced value under '{self._trace.name}' would drop its "
                f"derivative ({self.aval.str_short()}). Keep it an array (fxad.numpy ops work "
                "on 0-d values), or wrap it in fxad.stop_gradient if that is what you mean.")
        return conv(self.concrete_value(f"{name}()"))

    def __int__(self):
        return self._scalar(int, "int")

    def __float__(self):
        return self._scalar(float, "float")

    def __complex__(self):
        return self._scalar(complex, "complex")

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype).kind in "iub" and is_float(self.dtype) \
                and self._trace.differentiates:
            t = np.dtype(dtype).name
            raise TracerArrayConversionError(
                f"NumPy tried to make {t} values of a traced value ({self.aval.str_short()}, "
                f"under '{self._trace.name}'), which would drop its derivative. Write "
                f"np.{t}(fxad.stop_gradient(x)) if that is what you mean (integers carry no "
                f"derivative), or x.astype('{t}') to keep the conversion traced.")
        raise TracerArrayConversionError(
            f"NumPy tried to convert a traced value ({self.aval.str_short()}, under "
            f"'{self._trace.name}') into a plain array, which would lose the trace. Use "
            "fxad.numpy (or NumPy functions fxad dispatches) on traced values: for "
            "np.asarray(x), fxad.numpy.asarray(x); for traced values in a list given to NumPy "
            "(np.array([a, b]), np.sum([a, b]), np.exp([a, b])), np.stack([a, b]) first, which "
            "NumPy hands to fxad; for `a.dot(x)` on a NumPy array, `a @ x`; "
            "for `a[i]` with a traced i, fxad.numpy.take(a, i, axis) or "
            "fxad.numpy.asarray(a)[i]. If you really want the number, compute it outside the "
            "transformation.")

    def __repr__(self):
        head = f"{type(self).__name__}<{self._trace.name}>({self.aval.str_short()}"
        value = self._known_value()
        if value is None:
            return head + ")"
        return f"{head}, value={np.array2string(np.asarray(value), separator=' ')})"

    def __format__(self, spec):
        """f-strings and str.format show the value when it is known (eager grad, jvp),
        like print(); a staged or batched value shows its repr."""
        value = self._known_value()
        if value is None:
            if not spec:
                return repr(self)
            raise ConcretizationError(
                f"formatting a traced value with {spec!r} needs its value, which is not known "
                f"under '{self._trace.name}' ({self.aval.str_short()}). Use "
                "fxad.debug.print('{x:" + spec + "}', x=x), which prints the values when the "
                "program runs.")
        value = np.asarray(value)
        return format(value[()] if value.ndim == 0 else value, spec)

    def _known_value(self):
        """The concrete value behind this tracer when it has one (eager jvp, linearize and
        grad carry their primals), else None: for printing only, never for computing."""
        try:
            return self.concrete_value("repr")
        except ConcretizationError:
            return None

    def __hash__(self):
        raise TypeError("traced arrays are unhashable")

    # A traced value is immutable, so a copy is the value itself: the same tracer of the
    # same trace (copy.copy/deepcopy must not detach it from its transformation).
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise FxadTypeError(f"a traced value ({self.aval.str_short()}, under "
                            f"'{self._trace.name}') cannot be pickled; pickle concrete "
                            "arrays outside the transformation")

    def __setitem__(self, idx, value):
        raise FxadTypeError("traced arrays are immutable: x[idx] = v cannot be traced. Use the "
                            "functional update x.at[idx].set(v) (or .add, .multiply) instead.")
