"""The rule tables, one folder per family of primitives (elementwise, structural, reduction,
contraction, linalg, special, random, control). Importing this package defines every primitive
(`ops` imports the families; see fxad/rules/ops.py); `helpers` holds the shared rule helpers
and `_support` the NumPy kernels several families use."""
from . import ops  # noqa: F401  (first: the families import it)
from . import taylor  # noqa: F401  (registers the scalar arithmetic of Taylor mode)
from . import (  # noqa: F401
    contraction, control, elementwise, linalg, random, reduction, special, structural)
from . import collective  # noqa: F401,E402  (after the families it builds on)
