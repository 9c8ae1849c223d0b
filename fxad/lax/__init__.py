"""fxad.lax: JAX's lax. One function per primitive (the bind wrappers of fxad/rules/ops.py),
structured control flow, and JAX's signatures for the rest, one module per topic: shapes,
slicing, elementwise, reductions, products, sorting, special functions, convolution,
windowed reductions, collectives over named axes (parallel), implicit differentiation
(custom_root, custom_linear_solve) and `fxad.lax.linalg`."""
from types import ModuleType as _ModuleType

from ..rules.ops import *  # noqa: F401,F403  (every primitive's bind wrapper; see __all__ there)
from .control_flow import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .slicing import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403  (JAX's signatures where they differ from ops')
from .products import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .bitwise import *  # noqa: F401,F403
from .compiler_hints import *  # noqa: F401,F403  (identities on one process)
from .parallel import *  # noqa: F401,F403  (collectives over named axes)
from .implicit import custom_linear_solve, custom_root  # noqa: F401
from .convolution import (  # noqa: F401
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
    conv_general_dilated_local, conv_general_dilated_patches, conv_general_permutations,
    conv_general_shape_tuple, conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
    conv_with_general_padding, padtype_to_pads)
from . import linalg  # noqa: F401  (fxad.lax.linalg, as jax.lax.linalg)
from .windowed import (  # noqa: F401
    reduce_window, reduce_window_max, reduce_window_min, reduce_window_shape_tuple,
    reduce_window_sum)

# Every function, class and constant imported above (the star-imported modules list theirs in
# their own __all__), and the public submodules.
__all__ = sorted([n for n, v in globals().items() if not n.startswith("_") and n != "annotations"
                  and not isinstance(v, _ModuleType)] + ["linalg"])
