"""SciPy's names: fxad.scipy.special, linalg, integrate, optimize."""
from . import special  # noqa: F401
from . import linalg  # noqa: F401
from . import integrate  # noqa: F401
from . import optimize  # noqa: F401
from . import signal, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]
