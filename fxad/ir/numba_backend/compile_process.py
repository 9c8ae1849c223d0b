"""The "auto" backend's cold compiles, in a separate process: Numba compiling holds the GIL
for seconds, which a compiling thread would take from the caller's loop.

`compile_in_child(closed, boundary, args)` sends the pickled program and a copy of its first
call's arguments to a child Python process, which builds the numba program and runs it once
on them: that compiles each segment for exactly those argument types and leaves the machine
code in the disk cache (cache.py), where the parent's own build of the program then loads it
in a fraction of a second. A program of one segment fed by its own arguments is sent more
cheaply: the segment's module file (the parent wrote it) and its arguments' Numba types,
which the child compiles that one function for without importing fxad. The child starts
without fxad (placeholder packages, see _BOOT) and imports it for its first whole program:
ready for a segment job in ~0.35 s of CPU instead of ~1.3 s. One child at a time, serving
one job at a time (the background thread's queue is the only caller); it is started on
demand and stopped after `IDLE` seconds without a job, when the parent exits (atexit), or
by itself when its parent is gone.

The child is a new Python (`sys.executable`, with this process's `sys.path`) running `main`
and talking over a `multiprocessing` pipe, rather than a `multiprocessing` "spawn" process:
spawning re-runs the top level of the parent's main script in the child unless the script
guards it with `if __name__ == "__main__":`, which a user of jit never agreed to.
"""
from __future__ import annotations

import atexit
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time

__all__ = ["ChildFailed", "IDLE", "TIMEOUT", "compile_in_child", "enabled", "ready_numba", "start",
           "stop", "usable"]

TIMEOUT = 600.0  # seconds one job may take before the child is killed
IDLE = 60.0  # seconds without a job before the background thread stops the child
# False (or FXAD_COMPILE_PROCESS=0): compile in the background thread, as without a disk cache
enabled = [os.environ.get("FXAD_COMPILE_PROCESS", "1") != "0"]
exiting = [False]  # set at exit, when a compile under way is abandoned, not failed

# The child starts without importing fxad (~1 s): its packages are placeholders that only
# say where their files are, enough to load this module, runtime.py and generated modules.
# A whole program to compile needs fxad itself: the placeholders then give way (_real_fxad).
_BOOT = ("import json, sys, types; sys.path[:] = json.loads(sys.argv[3]); "
         "[sys.modules.setdefault(n, types.ModuleType(n)).__dict__.update("
         "__path__=[d], __package__=n, _fxad_placeholder=True) "
         "for n, d in json.loads(sys.argv[4])]; "
         "from fxad.ir.numba_backend.compile_process import main; main(sys.argv[1:3])")
_PACKAGES = ("fxad", "fxad.ir", "fxad.ir.numba_backend")
_child = {}  # "proc", "conn", "err" (its stderr, a temporary file)
_lock = threading.Lock()


class ChildFailed(Exception):
    """The child could not compile the program (the message says why)."""


def usable():
    """Whether compiles can go to a child: enabled, a POSIX system (the pipe is an inherited
    file descriptor), a Python to start, and a disk cache the child can write and the parent
    then read."""
    if not enabled[0] or os.name != "posix" or not sys.executable:
        return False
    from . import cache
    try:
        d = cache.cache_dir()
    except Exception:  # noqa: BLE001 - no disk cache: compile in the thread
        return False
    return os.path.isdir(d) and os.access(d, os.W_OK)


def compile_in_child(closed, boundary, args, lone=None):
    """Compile the numba program of `closed` for `args` in the child. Returns True when the
    child compiled it (its machine code is in the disk cache), False when the program or its
    arguments cannot be pickled, or rebuilt in the child (then compile it in this process);
    raises ChildFailed.

    `lone`: the program's one segment and its arguments (NumbaCompiled.lone_segment), when
    it has one: the child then compiles that function for those arguments' types, which
    needs Numba but not fxad; should that fail, the child gets the whole program as usual."""
    if lone is not None:
        try:
            import numba
            path, module, fname, values = lone
            sig = tuple(numba.typeof(v) for v in values)
            job = b"segment\0" + pickle.dumps((path, module, fname, sig),
                                               protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - e.g. a value Numba cannot type: the whole program
            job = None
        if job is not None:
            try:
                if _job(job)[0] == "ok":
                    return True
            except ChildFailed:
                pass
    try:
        payload = b"program\0" + pickle.dumps((closed, boundary, args),
                                               protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - e.g. a custom rule's closure: compile in-process
        return False
    status, detail = _job(payload)
    if status == "foreign":  # e.g. a primitive defined in __main__: compile it here
        return False
    if status != "ok":
        raise ChildFailed(f"in the compile process: {detail}")
    return True


def _job(payload):
    """Send one job to the child (started if need be) and return its reply."""
    with _lock:
        conn, proc, err = _start()
        try:
            conn.send_bytes(payload)
            if not conn.poll(TIMEOUT):
                _stop()
                raise ChildFailed(f"the compile process took more than {TIMEOUT:.0f} s")
            status, detail = conn.recv()
        except Exception as e:  # noqa: BLE001 - the child died (or was killed)
            if exiting[0]:  # the pipe was closed under this thread's feet
                raise ChildFailed("the process is exiting") from None
            if not isinstance(e, (EOFError, OSError)):
                raise
            code = proc.wait()
            tail = _tail(err)
            _stop()
            raise ChildFailed(f"the compile process exited with code {code}"
                              + (f": {tail}" if tail else "")) from None
    return status, detail


def ready_numba():
    """Build Numba's typing and target contexts now (and load their registries), which the
    first compile or cache load in a process does otherwise (0.2-0.3 s). The child calls it
    while it waits for its first job. (The parent's thread could do the same while the child
    compiles, making the switch ~0.3 s sooner, but that slowed the caller's own calls
    meanwhile by more: ~6% fewer calls per second over the compile.) Best effort: Numba's
    internals may change, and the compile then does this itself (a DEBUG record says so)."""
    try:
        from numba.core.registry import cpu_target
        cpu_target.typing_context.refresh()
        cpu_target.target_context.refresh()
    except Exception as e:  # noqa: BLE001 - only an optimization
        import logging
        logging.getLogger("fxad").debug("fxad: could not prepare Numba's contexts "
                                        "(%s: %s)", type(e).__name__, e)
        return False
    return True


def start():
    """Start the child now (if none is running), without waiting for it to be ready."""
    with _lock:
        _start()


def _start():
    """The running child (started if there is none); under _lock."""
    proc = _child.get("proc")
    if proc is not None and proc.poll() is None:
        return _child["conn"], proc, _child["err"]
    _stop()
    from multiprocessing import Pipe
    from . import cache
    ours, theirs = Pipe()
    err = tempfile.TemporaryFile()
    try:
        # this process's sys.path, so that the child imports the same fxad and Numba
        here = os.path.dirname(os.path.abspath(__file__))
        dirs = [os.path.dirname(os.path.dirname(here)), os.path.dirname(here), here]
        proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(theirs.fileno()), cache.cache_dir(),
             json.dumps([p for p in sys.path if isinstance(p, str)]),
             json.dumps(list(zip(_PACKAGES, dirs)))],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=err, close_fds=True)
    except BaseException:
        ours.close()
        err.close()
        raise
    finally:
        theirs.close()  # the child's end is the child's alone: its exit closes the pipe
    _child.update(proc=proc, conn=ours, err=err)
    return ours, proc, err


def _tail(err, n=400):
    try:
        err.seek(0)
        return err.read().decode(errors="replace").strip()[-n:]
    except (OSError, ValueError):
        return ""


def _stop():
    """End the child (if any); under _lock or at exit."""
    proc, conn, err = _child.pop("proc", None), _child.pop("conn", None), _child.pop("err", None)
    if conn is not None:
        conn.close()  # an idle child reads the end of its pipe and exits
    if proc is not None and proc.poll() is None:
        proc.kill()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
    if err is not None:
        err.close()


def stop():
    """Stop the child, if one is running and idle (the background thread calls it after IDLE
    seconds without a job)."""
    if _lock.acquire(blocking=False):
        try:
            _stop()
        finally:
            _lock.release()


@atexit.register
def _at_exit():
    exiting[0] = True
    _stop()


# --- the child ----------------------------------------------------------------------------------

def _watch_parent(parent):
    """Exit when the parent process is gone (then this process is re-parented)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _serve(conn, cache_dir):
    import warnings

    warnings.simplefilter("ignore")  # the parent says what it must, when it loads the program
    # (done before the first job arrives, which the parent sends once it has generated the
    # program's code: this child starts faster than that)
    from . import runtime  # noqa: F401  (imports Numba)
    ready_numba()
    while True:
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):  # the parent closed the pipe (or exited)
            return
        reply = _compile(payload, cache_dir)
        del payload
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return


def _real_fxad(cache_dir):
    """Import fxad itself in place of the placeholder packages (once): a whole program is
    unpickled and rebuilt with it. Modules loaded already (this one, runtime.py) stay."""
    for name in _PACKAGES:
        if getattr(sys.modules.get(name), "_fxad_placeholder", False):
            del sys.modules[name]
    from . import cache  # (imports the real packages, fxad's top level first)
    for name, module in list(sys.modules.items()):  # attributes of their real packages now
        parent, _, child = name.rpartition(".")
        if parent in _PACKAGES and not hasattr(sys.modules[parent], child):
            setattr(sys.modules[parent], child, module)
    cache._dir[0] = cache_dir  # the parent's cache directory, even a temporary one


def _compile_segment(path, module, fname, sig):
    """Compile one function of a generated module (a file the parent wrote) for `sig`:
    Numba saves the machine code in the disk cache beside it."""
    import importlib.util
    mod = sys.modules.get(module)
    if mod is None:
        spec = importlib.util.spec_from_file_location(module, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[module] = mod  # (Numba's cache finds a function's module by name)
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[module]
            raise
    getattr(mod, fname).compile(sig)


def _compile(payload, cache_dir):
    """The reply to one job: ("ok", detail), ("foreign", why) when the program cannot be
    rebuilt here (the parent compiles it itself), or ("error", why)."""
    kind, _, payload = payload.partition(b"\0")  # (unpickling a program needs fxad first)
    if kind == b"segment":
        try:
            _compile_segment(*pickle.loads(payload))
            return ("ok", None)
        except Exception as e:  # noqa: BLE001 - reported to the parent, which logs it
            return ("error", f"{type(e).__name__}: {str(e).strip()[:300]}")
    try:
        _real_fxad(cache_dir)
        from . import compile_program
        from .program import NumbaCompiled
        closed, boundary, args = pickle.loads(payload)
    except Exception as e:  # noqa: BLE001 - e.g. a primitive defined in the parent's __main__
        return ("foreign", f"{type(e).__name__}: {str(e).strip()[:300]}")
    try:
        program = compile_program(closed, boundary)
        if not isinstance(program, NumbaCompiled):
            raise RuntimeError("the numba backend did not generate code for it")
        program(*args)
        return ("ok", [how for _, _, how in program.report.entries])
    except Exception as e:  # noqa: BLE001 - reported to the parent, which logs it
        return ("error", f"{type(e).__name__}: {str(e).strip()[:300]}")


def main(argv):
    """The child's entry point: `argv` is the pipe's file descriptor and the cache directory."""
    from multiprocessing.connection import Connection
    conn = Connection(int(argv[0]))
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    _serve(conn, argv[1])
