"""jit's "auto" backend (fxad/ir/numba_backend/background.py): the NumPy program runs at once,
Numba compiles in the background (in a child process that fills the disk cache, which the
background thread then loads: compile_process.py), later calls switch; results are the NumPy
backend's bit for bit before and after the switch; failures (the child's too) and effects
leave NumPy in place and say so on the `fxad` logger; `.lower().compile()` waits; the
switches that select it."""
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import fxad
import fxad.numpy as fnp
from fxad.errors import FxadValueError
from fxad.ir import numba_backend
from fxad.ir.numba_backend import background, compile_process
from fxad.tree_util import tree_flatten

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def assert_same(got, want):
    g, w = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(g) == len(w)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def loss(params, x):
    h = x
    for W, b in params:
        h = fnp.tanh(h @ W + b)
    return fnp.sum(h ** 2)


def data(seed=0):
    r = np.random.default_rng(seed)
    params = [(r.standard_normal((4, 5)), r.standard_normal(5)),
              (r.standard_normal((5, 3)), r.standard_normal(3))]
    return params, r.standard_normal((6, 4))


PROGRAMS = [
    ("grad_mlp", fxad.grad(loss), data()),
    ("elementwise", lambda x: fnp.exp(fnp.sin(x) * 2.0) - x, (np.linspace(-2, 2, 7),)),
    ("reduction_f32", lambda x: fnp.sum(x * x, axis=0),
     (np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),)),
    ("scan", lambda x: fxad.lax.scan(lambda c, y: (c * 0.5 + y, c), 0.0, x)[0],
     (np.linspace(0, 1, 5),)),
]


@pytest.mark.parametrize("name,f,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_auto_runs_numpy_then_switches_to_the_compiled_program(name, f, args):
    fa = fxad.jit(f, backend="auto")
    want = fxad.jit(f)(*args)
    first = fa(*args)
    assert_same(first, want)
    program = fa.lower(*args).compiled
    assert isinstance(program, background.AutoProgram)
    assert background.drain(timeout=600)
    assert program.state == "numba", program.error
    assert_same(fa(*args), want)
    assert_same(fa(*args), fxad.jit(f, backend="numba")(*args))
    assert "auto backend: numba" in fa.lower(*args).as_text()


def test_lower_compile_waits_for_the_compiled_program():
    params, x = data(1)
    f = fxad.jit(fxad.grad(loss), backend="auto")
    assert f.lower(params, x).compile_seconds is None
    compiled = f.lower(params, x).compile()
    assert compiled.compiled.state == "numba"
    assert compiled.compile_seconds is not None and compiled.compile_seconds >= 0
    assert_same(compiled(params, x), fxad.jit(fxad.grad(loss))(params, x))


def test_a_failed_compile_leaves_numpy_and_logs_it(monkeypatch, caplog):
    def refuse(closed, boundary):
        raise RuntimeError("no code for you")
    monkeypatch.setattr(numba_backend, "compile_program", refuse)
    x = np.linspace(0.0, 1.0, 5)
    f = fxad.jit(lambda x: fnp.cos(x) * 3.0 + x, backend="auto")
    with caplog.at_level(logging.WARNING, logger="fxad"):
        first = f(x)
        assert background.drain(timeout=600)
        again = f(x)
    program = f.lower(x).compiled
    assert program.state == "failed" and "no code for you" in program.error
    assert any("stays on the NumPy backend" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)
    want = np.cos(x) * 3.0 + x
    assert_same(first, want)
    assert_same(again, want)
    assert f.lower(x).compile()(x) is not None  # compile() after a failure: NumPy, no error


def test_programs_with_effects_stay_on_numpy_and_run_their_effects_once(caplog):
    seen = []

    def f(x):
        fxad.debug.callback(lambda v: seen.append(float(v.sum())), x)
        return fnp.sin(x) * 2.0
    x = np.ones(3)
    fa = fxad.jit(f, backend="auto")
    with caplog.at_level(logging.INFO, logger="fxad"):
        for _ in range(3):
            fa(x)
        assert background.drain(timeout=600)
    assert seen == [3.0, 3.0, 3.0]
    assert fa.lower(x).compiled.state == "failed"
    assert any("effects" in r.getMessage() for r in caplog.records)
    # .compile() before any call does not run the program (nor its effects) to compile it
    fresh = fxad.jit(lambda x: f(x) + 1.0, backend="auto").lower(x).compile()
    assert seen == [3.0, 3.0, 3.0] and fresh.compiled.state == "failed"


def test_a_full_queue_leaves_numpy_and_logs_it(monkeypatch, caplog):
    import queue
    full = queue.Queue(1)
    full.put_nowait(None)
    monkeypatch.setattr(background, "_queue", lambda: full)
    x = np.linspace(0.0, 1.0, 4)
    f = fxad.jit(lambda x: fnp.sqrt(x + 1.0), backend="auto")
    with caplog.at_level(logging.WARNING, logger="fxad"):
        assert_same(f(x), np.sqrt(x + 1.0))
    assert f.lower(x).compiled.state == "failed"
    assert any("waiting to compile" in r.getMessage() for r in caplog.records)
    assert_same(f(x), np.sqrt(x + 1.0))


def test_threads_calling_first_share_one_compile():
    params, x = data(2)
    f = fxad.jit(fxad.grad(loss), backend="auto")
    want = fxad.jit(fxad.grad(loss))(params, x)
    outs, errors = [], []

    def call():
        try:
            for _ in range(5):
                outs.append(f(params, x))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert background.drain(timeout=600)
    for o in outs + [f(params, x)]:
        assert_same(o, want)
    assert f.lower(params, x).compiled.state == "numba"


def test_the_caller_may_change_its_arrays_after_the_first_call():
    x = np.linspace(0.0, 1.0, 6)
    f = fxad.jit(lambda x: fnp.tanh(x) * 2.0, backend="auto")
    out = f(x)
    x[:] = np.nan  # the background run uses its own copy
    assert background.drain(timeout=600)
    assert_same(out, np.tanh(np.linspace(0.0, 1.0, 6)) * 2.0)
    assert_same(f(x), np.tanh(x) * 2.0)


def test_auto_is_a_backend_name_everywhere(monkeypatch):
    x = np.linspace(0.0, 1.0, 3)
    f = fxad.jit(lambda x: x * 2.0)
    fxad.config.jit_backend = "auto"
    try:
        assert fxad.config.jit_backend == "auto"
        assert f.lower(x).backend == "auto"
        assert_same(f(x), x * 2.0)
    finally:
        fxad.config.jit_backend = "numpy"
    with pytest.raises(FxadValueError, match="auto"):
        fxad.jit(f, backend="automatic")
    # without Numba installed, "auto" is the NumPy backend (no warning: nothing was promised)
    monkeypatch.setattr(background, "_installed", [False])
    assert sys.modules["fxad.jit"].resolve_backend("auto") == "numpy"
    assert fxad.jit(lambda x: x + 1.0, backend="auto").lower(x).backend == "numpy"


def test_environment_variable_selects_auto(tmp_path):
    env = dict(os.environ, FXAD_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT,
               FXAD_JIT_BACKEND="auto")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import numpy as np, fxad
        f = fxad.jit(lambda x: x * 2.0)
        print(fxad.config.jit_backend, f.lower(np.ones(2)).backend)
    """)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["auto", "auto"]


# --- the compile process ------------------------------------------------------------------------

def own_program(scale=1.0):
    """A program no other test compiles (a constant of this process in its source), so its
    segment is neither in memory nor, normally, on disk; and its arguments."""
    c = scale + (os.getpid() % 997) / 1024.0
    return (lambda x: fnp.cos(x) * c - x), np.linspace(-1.0, 1.0, 5)


def _switched_to_the_childs_code(fa, x, want):
    """fa's first call gives `want` (NumPy); after the background compile it has switched to
    machine code that the child left in the disk cache (not compiled here). Its program."""
    assert_same(fa(x), want)
    assert background.drain(timeout=600)
    program = fa.lower(x).compiled
    assert program.state == "numba", program.error
    assert {how for _, _, how in program.report.entries} == {"disk cache"}
    return program


def test_the_child_compiles_and_the_switch_loads_its_machine_code_from_disk():
    assert compile_process.usable()
    f, x = own_program(2.0)
    fa = fxad.jit(f, backend="auto")
    want = fxad.jit(f)(x)
    _switched_to_the_childs_code(fa, x, want)
    assert_same(fa(x), want)


def _jobs_sent(monkeypatch):
    """The kinds of job the parent sends its child, in order (b"segment" or b"program")."""
    kinds = []
    real = compile_process._job

    def job(payload):
        kinds.append(payload.partition(b"\0")[0])
        return real(payload)
    monkeypatch.setattr(compile_process, "_job", job)
    return kinds


def _child_loaded(name):
    """Whether the running compile process has a shared library whose path mentions
    `name` mapped (Linux; None elsewhere)."""
    pid = compile_process._child["proc"].pid
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return name in fh.read()
    except OSError:
        return None


def test_a_one_segment_program_compiles_in_a_child_without_fxad(monkeypatch):
    """One segment fed by the program's own arguments: the child compiles that function for
    their types (Numba only; fxad, and so scipy.special, stay unimported there); a program with a
    NumPy equation before its segments goes to the child whole (then fxad is imported)."""
    compile_process.stop()  # a new child, which has imported nothing yet
    kinds = _jobs_sent(monkeypatch)
    f, x = own_program(9.0)
    fa = fxad.jit(f, backend="auto")
    want = fxad.jit(f)(x)
    _switched_to_the_childs_code(fa, x, want)
    assert kinds == [b"segment"]
    assert _child_loaded("scipy/special") in (False, None)  # fxad imports it
    assert_same(fa(x), want)

    c = (os.getpid() % 997) / 1024.0 + 10.0  # cumsum (NumPy) first, then two segments
    g = fxad.jit(lambda v: fnp.exp(fnp.cumsum(v) * c) - fnp.sin(v), backend="auto")
    want = fxad.jit(lambda v: fnp.exp(fnp.cumsum(v) * c) - fnp.sin(v))(x)
    _switched_to_the_childs_code(g, x, want)
    assert kinds == [b"segment", b"program"]
    assert _child_loaded("scipy/special") in (True, None)
    assert_same(g(x), want)


def test_a_segment_job_with_a_workspace_argument(monkeypatch):
    """A segment whose large intermediates live in the program's workspace (arena.py) takes
    it as an argument: the child compiles it for the workspace's type too."""
    kinds = _jobs_sent(monkeypatch)
    c = 1.0 + (os.getpid() % 997) / 1024.0

    def f(x):
        return fnp.sum(fnp.tanh((x @ x.T) * c), axis=0) + fnp.sum((x @ x.T) ** 2, axis=1)
    x = np.linspace(-1.0, 1.0, 600 * 600).reshape(600, 600)
    fa = fxad.jit(f, backend="auto")
    want = fxad.jit(f)(x)
    program = _switched_to_the_childs_code(fa, x, want)
    assert program.numba_program.arena is not None
    assert kinds == [b"segment"]
    assert_same(fa(x), want)


def test_a_segment_job_that_fails_is_sent_again_as_the_whole_program(monkeypatch):
    from fxad.ir.numba_backend.program import NumbaCompiled
    real = NumbaCompiled.lone_segment

    def broken(self, args):
        path, module, fname, values = real(self, args)
        return path + ".missing", module + "_missing", fname, values
    monkeypatch.setattr(NumbaCompiled, "lone_segment", broken)
    kinds = _jobs_sent(monkeypatch)
    f, x = own_program(11.0)
    fa = fxad.jit(f, backend="auto")
    want = fxad.jit(f)(x)
    _switched_to_the_childs_code(fa, x, want)
    assert kinds == [b"segment", b"program"]
    assert_same(fa(x), want)


def test_when_numba_cannot_be_readied_nothing_fails(monkeypatch, caplog):
    """Readying Numba (what the child does while it waits for a job) uses its internals: if
    they change, it says so in a DEBUG record and returns False; compiling does that work
    itself."""
    import numba.core.registry

    class Changed:
        def __getattr__(self, name):
            raise AttributeError(name)
    monkeypatch.setattr(numba.core.registry, "cpu_target", Changed())
    with caplog.at_level(logging.DEBUG, logger="fxad"):
        assert compile_process.ready_numba() is False
    assert any("could not prepare Numba" in r.getMessage() and r.levelno == logging.DEBUG
               for r in caplog.records)
    monkeypatch.undo()
    assert compile_process.ready_numba() is True


class _ExitOnLoad:
    def __reduce__(self):  # unpickling it ends the child with exit code 3
        return (os._exit, (3,))


class _RaiseOnLoad:
    def __reduce__(self):  # unpickling it raises ValueError in the child
        return (int, ("not a number",))


@pytest.mark.parametrize("extra,message", [(_ExitOnLoad(), "exited with code 3"),
                                           (0.0, "TypeError")],  # one argument too many
                         ids=["child_dies", "child_raises"])
def test_a_failing_child_leaves_numpy_and_logs_it(monkeypatch, caplog, extra, message):
    monkeypatch.setattr(background, "_private_copies", lambda args: tuple(args) + (extra,))
    f, x = own_program(3.0)
    fa = fxad.jit(f, backend="auto")
    with caplog.at_level(logging.WARNING, logger="fxad"):
        first = fa(x)
        assert background.drain(timeout=600)
    program = fa.lower(x).compiled
    assert program.state == "failed" and message in program.error
    assert any("stays on the NumPy backend" in r.getMessage() and message in r.getMessage()
               and r.levelno == logging.WARNING for r in caplog.records)
    want = fxad.jit(f)(x)
    assert_same(first, want)
    assert_same(fa(x), want)


def test_a_child_past_its_time_is_killed_and_numpy_stays(monkeypatch, caplog):
    monkeypatch.setattr(compile_process, "TIMEOUT", 0.0)
    f, x = own_program(4.0)
    fa = fxad.jit(f, backend="auto")
    with caplog.at_level(logging.WARNING, logger="fxad"):
        assert_same(fa(x), fxad.jit(f)(x))
        assert background.drain(timeout=600)
    program = fa.lower(x).compiled
    assert program.state == "failed" and "took more than" in program.error
    assert "proc" not in compile_process._child  # killed; the next compile starts another


def test_programs_the_child_cannot_have_compile_in_the_thread_instead():
    f, x = own_program(5.0)
    program = fxad.jit(f, backend="auto").lower(x).compiled
    for args in [(x, lambda: None), (x, _RaiseOnLoad())]:  # not pickled; not unpickled there
        assert compile_process.compile_in_child(program.closed, program.boundary,
                                                args) is False


def test_without_the_child_the_thread_compiles(monkeypatch):
    def unused(*args):
        raise AssertionError("the child was asked")
    monkeypatch.setattr(compile_process, "enabled", [False])
    monkeypatch.setattr(compile_process, "compile_in_child", unused)
    assert not compile_process.usable()
    f, x = own_program(6.0)
    fa = fxad.jit(f, backend="auto")
    want = fxad.jit(f)(x)
    assert_same(fa(x), want)
    assert background.drain(timeout=600)
    program = fa.lower(x).compiled
    assert program.state == "numba", program.error
    assert_same(fa(x), want)


def _gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # exited, not reaped
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_the_child_does_not_outlive_a_killed_parent(tmp_path):
    env = dict(os.environ, FXAD_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time, numpy as np, fxad, fxad.numpy as fnp
        from fxad.ir.numba_backend import compile_process
        f = fxad.jit(lambda x: fnp.sin(x) * 7.0, backend="auto")
        f(np.ones(3))
        while "proc" not in compile_process._child:
            time.sleep(0.05)
        print(compile_process._child["proc"].pid, flush=True)
        time.sleep(600)
    """)], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        parent.stdout.close()
    for _ in range(1200):  # the child notices within a second; allow a loaded machine
        if _gone(child):
            break
        threading.Event().wait(0.05)
    assert _gone(child)
