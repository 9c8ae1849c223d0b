"""SciPy's names: fxad.scipy.special, linalg, fft, ndimage, interpolate, cluster, sparse
(.linalg), integrate, optimize, signal, stats.

integrate, optimize and stats load on first use: they import scipy.integrate, scipy.optimize
and scipy.stats, a fifth of `import fxad`'s time, which most programs never need."""
from . import cluster  # noqa: F401
from . import fft  # noqa: F401
from . import interpolate  # noqa: F401
from . import special  # noqa: F401
from . import linalg  # noqa: F401
from . import ndimage  # noqa: F401
from . import signal  # noqa: F401
from . import sparse  # noqa: F401

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "special", "stats"]

_LAZY = ("integrate", "optimize", "stats")


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
