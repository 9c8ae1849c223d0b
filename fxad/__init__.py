"""fxad: composable function transformations (grad, jvp, vjp, linearize, vmap, ...) for
Python + NumPy."""
from . import _versions  # noqa: F401  (first: refuses a NumPy older than the declared minimum)
from . import lax, tree_util  # noqa: F401  (lax defines every primitive)
from . import numpy  # noqa: F401  (attaches operators to Tracer)
from .api import (  # noqa: F401
    ShapeDtypeStruct, grad, hessian, hvp, jacfwd, jacrev, jvp, linear_transpose, linearize,
    make_jaxpr, pure_callback, stop_gradient, value_and_grad, vjp, vmap)
from .core import ShapedArray, Tracer  # noqa: F401
from .jit import jit  # noqa: F401
from .custom_derivatives import checkpoint, custom_jvp, custom_vjp, remat  # noqa: F401
from . import errors, nn, scipy  # noqa: F401
from .debug import config, debug_nans  # noqa: F401

__version__ = "0.1.0"
