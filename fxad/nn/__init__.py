"""fxad.nn: jax.nn's functions. Numerically stable activations (finite values and gradients
even at ±1e300), normalization layers as custom_vjp "fused kernels", attention, pooling,
dropout, and `fxad.nn.initializers`."""
from types import ModuleType as _ModuleType

from .activations import *  # noqa: F401,F403
from .normalization import batch_norm, layer_norm  # noqa: F401
from .attention import dot_product_attention  # noqa: F401
from .pooling import avg_pool, max_pool, min_pool, pool  # noqa: F401
from .dropout import dropout  # noqa: F401
from . import initializers  # noqa: F401

# Every function, class and constant imported above (the star-imported modules list theirs in
# their own __all__), and the public submodules.
__all__ = sorted([n for n, v in globals().items() if not n.startswith("_") and n != "annotations"
                  and not isinstance(v, _ModuleType)] + ["initializers"])
