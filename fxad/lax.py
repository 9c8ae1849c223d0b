"""Primitive-level operations: one function per primitive (no NumPy conveniences), and
structured control flow."""
from .rules.ops import *  # noqa: F401,F403  (every primitive's bind wrapper; see __all__ there)
from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from .lax_more import *  # noqa: F401,F403  (JAX's signatures where they differ from ops')
from .implicit import custom_linear_solve, custom_root  # noqa: F401
from .lax_convolution import (  # noqa: F401,E402
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
    conv_general_dilated_local, conv_general_dilated_patches, conv_general_permutations,
    conv_general_shape_tuple, conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple,
    conv_with_general_padding, padtype_to_pads)
from .lax_dot import (  # noqa: F401,E402
    Precision, PrecisionLike, batch_matmul, dot, dot_general)
from .lax_windowed import (  # noqa: F401,E402
    reduce_window, reduce_window_max, reduce_window_min, reduce_window_shape_tuple,
    reduce_window_sum)
from .rules.collective import (  # noqa: F401,E402
    all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin, ppermute, pshuffle,
    psum, psum_scatter, pswapaxes)
