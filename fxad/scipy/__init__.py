"""SciPy's names: fxad.scipy.special (and, later, linalg)."""
from . import special  # noqa: F401
from . import linalg  # noqa: F401
from . import signal, stats  # noqa: F401,E402  (issue 18)
