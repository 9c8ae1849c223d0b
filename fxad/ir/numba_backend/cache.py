"""Where compiled segments come from: a module per program, in the on-disk cache.

Numba's own cache (`cache=True`) needs each function's source in a file, so the source of a
program's segments is written once to `<cache dir>/fxad_<hash>.py`, named by a hash of the
source, of runtime.py (which the segments call) and of the Numba, NumPy and Python versions;
Numba keeps the machine code beside it (`__pycache__`, keyed by argument types). A new
process that stages the same program finds the file and loads the machine code instead of
compiling. The cache directory is `$FXAD_CACHE_DIR/numba`, else `$XDG_CACHE_HOME/fxad/numba`
(`~/.cache/fxad/numba`); at most `MAX_FILES` programs are kept (oldest dropped first).

Loaded modules are registered in sys.modules (Numba looks them up by name when it loads
machine code), and each segment is
first called through `Pending`, which times its compilation (or cache load), records it on
the program's `report`, and then puts the Numba dispatcher itself in its place.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import time
import warnings

from ...core import BoundedCache
from ...errors import CompilationWarning

MAX_FILES = 2048
log_compiles = [False]  # fxad.config.log_compiles: print each compilation to stderr

_modules = BoundedCache(256)  # source hash -> loaded module (a shortcut to sys.modules)
_dir_lock = threading.Lock()
_dir = [None]


def cache_dir():
    """The directory of generated modules (created on first use; a private temporary one
    when the user's cache directory is not writable)."""
    with _dir_lock:
        if _dir[0] is None:
            root = os.environ.get("FXAD_CACHE_DIR") or os.path.join(
                os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache"), "fxad")
            path = os.path.join(root, "numba")
            try:
                os.makedirs(path, exist_ok=True)
                if not os.access(path, os.W_OK):
                    raise OSError(f"{path} is not writable")
            except OSError as e:
                path = tempfile.mkdtemp(prefix="fxad-numba-")
                warnings.warn(f"fxad: cannot use {root} for the numba cache ({e}); compiled "
                              f"code is cached in {path} for this process only. Set "
                              "FXAD_CACHE_DIR to a writable directory.", CompilationWarning,
                              stacklevel=2)
            _dir[0] = path
        return _dir[0]


def _versions_key():
    import numba
    import numpy
    from . import runtime
    with open(runtime.__file__, "rb") as f:
        rt = f.read()
    return b"|".join([rt, numba.__version__.encode(), numpy.__version__.encode(),
                      sys.version.encode()])


_key_prefix = []


def source_key(source):
    if not _key_prefix:
        _key_prefix.append(_versions_key())
    return hashlib.sha256(_key_prefix[0] + source.encode()).hexdigest()[:32]


_load_lock = threading.Lock()


def load_module(source):
    """The module of this source (in memory, else from the disk cache, else written). One
    thread at a time loads: another thread (jit's background compiles, or two callers of
    one program) must not find the module registered but not yet executed."""
    key = source_key(source)
    mod = _modules.get(key)
    if mod is not None:
        return mod
    with _load_lock:
        return _load(key, source)


def _load(key, source):
    mod = _modules.get(key)
    if mod is not None:
        return mod
    d = cache_dir()
    name = f"fxad_{key}"
    path = os.path.join(d, name + ".py")
    if not os.path.exists(path):
        _prune(d)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: a reader never sees half a file
    mod = sys.modules.get(name)
    if mod is None:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        # Numba's cache finds a function's module by name when it loads machine code, so the
        # module is registered like an imported one (and, like one, stays loaded).
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
    _modules[key] = mod
    return mod


def _prune(d):
    """Keep at most MAX_FILES modules: drop the oldest half (and their machine code)."""
    try:
        files = [f for f in os.listdir(d) if f.startswith("fxad_") and f.endswith(".py")]
        if len(files) < MAX_FILES:
            return
        files.sort(key=lambda f: os.path.getmtime(os.path.join(d, f)))
        gone = {f[:-3] for f in files[:len(files) // 2]}
        for f in gone:
            os.remove(os.path.join(d, f + ".py"))
        pyc = os.path.join(d, "__pycache__")
        for f in os.listdir(pyc) if os.path.isdir(pyc) else ():
            if f.split(".")[0] in gone:
                os.remove(os.path.join(pyc, f))
    except OSError:  # another process pruned first: nothing to do
        pass


class Report:
    """What compiling a program cost: one entry per segment call site that compiled."""

    def __init__(self, name):
        self.name = name
        # (segment index, seconds, "compiled" | "disk cache" | "in memory" | "failed"); "in
        # memory": another program of the same source compiled it already in this process
        self.entries = []

    @property
    def seconds(self):
        return sum(s for _, s, _ in self.entries)

    def __repr__(self):
        parts = [f"segment {i}: {s:.3f} s ({how})" for i, s, how in self.entries]
        return f"<compile report of {self.name}: {'; '.join(parts) or 'not compiled yet'}>"


_SAID = {"disk cache": "loaded from the disk cache", "in memory": "found in memory"}


class Pending:
    """A segment's first call: compile (or load) and time it, then get out of the way."""

    def __init__(self, dispatcher, ns, name, index, report, fallback):
        self.dispatcher, self.ns, self.name = dispatcher, ns, name
        self.index, self.report, self.fallback = index, report, fallback

    def __call__(self, *args):
        t0 = time.perf_counter()
        hits = sum(self.dispatcher.stats.cache_hits.values())
        known = len(self.dispatcher.overloads)
        try:
            out = self.dispatcher(*args)
        except Exception as e:  # noqa: BLE001 - a lowering Numba refuses: run it on NumPy
            fn = self.fallback()
            self.ns[self.name] = fn
            self.report.entries.append((self.index, time.perf_counter() - t0, "failed"))
            warnings.warn(f"fxad: numba could not compile segment {self.index} of "
                          f"{self.report.name} ({type(e).__name__}: {str(e).strip()[:300]}); "
                          "it runs on the NumPy backend. Please report this.",
                          CompilationWarning, stacklevel=3)
            return fn(*args)
        seconds = time.perf_counter() - t0
        how = "disk cache" if sum(self.dispatcher.stats.cache_hits.values()) > hits \
            else "compiled" if len(self.dispatcher.overloads) > known else "in memory"
        self.report.entries.append((self.index, seconds, how))
        self.ns[self.name] = self.dispatcher
        if log_compiles[0]:
            print(f"fxad: jit(numba) {self.report.name}: segment {self.index} "
                  f"{_SAID.get(how, how)} "
                  f"in {seconds:.3f} s", file=sys.stderr)
        return out
