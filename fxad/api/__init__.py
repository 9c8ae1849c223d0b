"""The user-facing transformations. Each is thin: flatten pytrees, run an interpreter on flat
values, unflatten. The interpreters live in fxad/interpreters, the IR in fxad/ir."""
from .batching import vmap  # noqa: F401
from .callback import pure_callback  # noqa: F401
from .shapes import ShapeDtypeStruct  # noqa: F401
from .common import Argnums  # noqa: F401
from .forward import jvp, linearize  # noqa: F401
from .jacobians import hessian, hvp, jacfwd, jacrev  # noqa: F401
from .reverse import grad, linear_transpose, stop_gradient, value_and_grad, vjp  # noqa: F401
from .staging import make_jaxpr  # noqa: F401
