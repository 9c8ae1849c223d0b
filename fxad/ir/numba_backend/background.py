"""jit's "auto" backend: run the NumPy program at once, compile with Numba in the background,
switch when the compiled program is ready.

`AutoProgram` is what `compiled_for(closed, backend="auto")` builds. Its first call runs the
NumPy backend's program (generating it takes milliseconds) and then queues the program for
compiling. One daemon thread compiles queued programs one at a time, by running the numba
program once on a copy of the first call's arguments (Numba compiles each segment for the
argument types it meets, so running it is what compiles exactly what later calls need; the
result is thrown away). The compiling itself happens in a child process when it can
(compile_process.py: Numba holds the GIL while it compiles, for seconds, which the caller's
calls would wait for); the child leaves the machine code in the disk cache, and the thread's
own run then loads it from there. When that run has finished, later calls go to the compiled
program; both programs compute the same results (the numba backend's lowerings are exact), so
the switch changes only speed.

Nothing here makes a call wait, and nothing fails a call: a compile that fails (here or in
the child) leaves the NumPy program in place and says so on the `fxad` logger (a WARNING
record). Programs with effects (callbacks, printing) stay on NumPy, since compiling runs the
program once more.
`wait()` compiles now (or waits for a compile under way): `.lower(...).compile()` uses it, and
the queued entry then finds the work done.
The queue is bounded (`MAX_QUEUED`): programs queued beyond it stay on NumPy.
"""
from __future__ import annotations

import importlib.util
import logging
import queue
import threading

import numpy as np

from .. import codegen

__all__ = ["AutoProgram", "MAX_QUEUED", "compile_program", "drain", "has_effects", "installed"]

MAX_QUEUED = 64
logger = logging.getLogger("fxad")

_installed = []


def installed():
    """Whether Numba can be found, without importing it (importing takes ~0.2 s, which the
    first call of an "auto" program must not pay; the worker imports it)."""
    if not _installed:
        _installed.append(importlib.util.find_spec("numba") is not None)
    return _installed[0]


def has_effects(jaxpr):
    """Whether a program (its inner programs included) has an effectful equation."""
    stack = [jaxpr]
    while stack:
        j = stack.pop()
        for e in j.eqns:
            if e.primitive.effectful:
                return True
            for v in e.params.values():
                for p in v if isinstance(v, (tuple, list)) else (v,):
                    inner = getattr(p, "jaxpr", None)
                    if inner is not None and hasattr(inner, "eqns"):
                        stack.append(inner)
                    elif hasattr(p, "eqns"):
                        stack.append(p)
    return False


class AutoProgram(codegen.Compiled):
    """A program on the "auto" backend (see the module docstring). `state` is "numpy"
    (not queued yet), "queued", "compiling", "numba" (switched) or "failed"; `program` is
    the program calls run now."""

    def __init__(self, closed, boundary):
        numpy_program = codegen.compile_jaxpr(closed, boundary=boundary)
        super().__init__(numpy_program.fn, numpy_program.source, closed, numpy_program.shared)
        self.numpy_program = self.program = numpy_program
        self.boundary = boundary
        self.numba_program = None
        self.state = "numpy"
        self.error = None
        self._lock = threading.Lock()  # state changes
        self._compiling = threading.Lock()  # one compile at a time (not held by calls)
        self._call = self._first_call

    def __call__(self, *args):
        return self._call(*args)

    def _first_call(self, *args):
        out = self.numpy_program(*args)
        with self._lock:
            if self.state != "numpy":
                return out
            self._call = self.numpy_program
            if self._refuse_effects():
                return out
            self.state = "queued"
        try:
            _queue().put_nowait((self, _private_copies(args)))
        except queue.Full:
            with self._lock:
                self._finish(None, f"more than {MAX_QUEUED} programs are waiting to compile")
        return out

    def compile_now(self, args, in_child=False):
        """Compile by running the numba program on `args`; switch to it. Returns the numba
        program, or None if compiling failed. With `in_child` (the background thread), a
        compile process compiles it first, and this thread then loads the machine code from
        the disk cache (see compile_process.py)."""
        from . import compile_process, compile_program
        from .program import NumbaCompiled
        with self._compiling:
            with self._lock:
                if self.state in ("numba", "failed") or self._refuse_effects():
                    return self.numba_program
                self.state = "compiling"
            try:
                child = in_child and compile_process.usable()
                if child:
                    compile_process.start()  # it boots while this thread builds the program
                program = compile_program(self.closed, self.boundary)
                if not isinstance(program, NumbaCompiled):
                    raise RuntimeError("the numba backend did not generate code for it")
                # The module of its segments is on disk now, before the child writes it; its
                # machine code is compiled there, then loaded here by the run below.
                child = child and compile_process.compile_in_child(
                    self.closed, self.boundary, args, lone=program.lone_segment(args))
                program(*args)
                if program.arena is not None:  # this thread will not call it again
                    program.arena.release()
                if child and any(how == "compiled" for _, _, how in program.report.entries):
                    compile_process.enabled[0] = False
                    logger.info("fxad.jit(backend='auto'): the disk cache did not hand this "
                                "process the machine code a compile process made; later "
                                "programs compile in the background thread")
            except Exception as e:  # noqa: BLE001 - never a failure: NumPy computes it
                quiet = compile_process.exiting[0]  # abandoned at exit: nothing to report
                with self._lock:
                    self._finish(None, f"{type(e).__name__}: {str(e).strip()[:300]}",
                                 logging.DEBUG if quiet else logging.WARNING)
                return None
            with self._lock:
                self._finish(program, None)
            return program

    def _refuse_effects(self):
        """Keep a program with effects on NumPy (compiling runs it once more); under _lock."""
        if not has_effects(self.closed.jaxpr):
            return False
        self._finish(None, "it has effects (callbacks or printing), and compiling runs the "
                     "program once more", logging.INFO)
        return True

    def _finish(self, program, why, level=logging.WARNING):
        if program is not None:
            self.numba_program = self.program = program
            self.state = "numba"
            self._call = program
        else:
            self.state, self.error = "failed", why
            self._call = self.numpy_program
            logger.log(level, "fxad.jit(backend='auto'): a program of %d equations stays on the "
                           "NumPy backend (same results, no compiled speed): %s",
                           len(self.closed.jaxpr.eqns), why)

    def wait(self, args):
        """The numba program, compiled now on `args` (on this thread, not behind the queue)
        unless a compile is already under way (then it waits for that one); None if
        compiling failed or the program stays on NumPy."""
        return self.compile_now(args)

    # what .lower(...) shows: the program calls run now
    def describe(self):
        text = getattr(self.program, "describe", None)
        head = f"# auto backend: {self.state}" + (f" ({self.error})" if self.error else "")
        return head + "\n" + (text() if text is not None else self.program.source)

    segments = property(lambda self: list(getattr(self.program, "segments", [])))
    fallbacks = property(lambda self: list(getattr(self.program, "fallbacks", [])))
    report = property(lambda self: getattr(self.numba_program, "report", None))


def _private_copies(args):
    """The arguments the background run uses: copies, so the caller may change its arrays
    (and the worker keeps none of the caller's objects)."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


_worker = {}
_worker_lock = threading.Lock()


def _queue():
    with _worker_lock:
        q = _worker.get("queue")
        if q is None:
            q = _worker["queue"] = queue.Queue(MAX_QUEUED)
            t = threading.Thread(target=_work, args=(q,), name="fxad-numba-compile",
                                 daemon=True)
            t.start()
        return q


def _work(q):
    from . import compile_process
    while True:
        try:
            program, args = q.get(timeout=compile_process.IDLE)
        except queue.Empty:
            compile_process.stop()  # nothing to compile: the child need not wait
            continue
        try:
            program.compile_now(args, in_child=True)
        except BaseException:  # noqa: BLE001 - the worker must outlive any one program
            logger.exception("fxad.jit(backend='auto'): the background compile failed")
        finally:
            del program, args
            q.task_done()


def drain(timeout=None):
    """Wait until every queued program has compiled (or failed); for tests and benchmarks."""
    q = _worker.get("queue")
    if q is None:
        return True
    with q.all_tasks_done:  # Queue.join with a timeout, on this thread
        return q.all_tasks_done.wait_for(lambda: not q.unfinished_tasks, timeout)


def compile_program(closed, boundary):
    return AutoProgram(closed, boundary)


codegen.register_backend("auto", compile_program)
