"""fxad: composable function transformations (grad, jvp, vjp, linearize, vmap, ...) for
Python + NumPy."""
from . import _versions  # noqa: F401  (first: refuses a NumPy older than the declared minimum)
from . import lax, tree_util  # noqa: F401  (lax defines every primitive)
from . import numpy  # noqa: F401  (attaches operators to Tracer)
from .api import (  # noqa: F401
    grad, hessian, hvp, jacfwd, jacrev, jvp, linear_transpose, linearize, make_jaxpr,
    pure_callback, stop_gradient, value_and_grad, vjp, vmap)
from .api import jacrev as jacobian  # noqa: F401  (JAX's alias)
from .api.array import Array  # noqa: F401
from .api.closure import closure_convert, named_call  # noqa: F401
from .api.devices import (  # noqa: F401  (one CPU device: for JAX code)
    Device, block_until_ready, default_backend, device_count, device_get, device_put, devices,
    local_device_count, local_devices, process_count, process_index, typeof)
from .api.shapes import ShapeDtypeStruct, eval_shape  # noqa: F401
from .api.taylor import jet  # noqa: F401
from .api.operators import biharmonic, laplacian, weighted_laplacian  # noqa: F401
from .api.spmd import pmap, shard_map  # noqa: F401
from .core import ShapedArray, Tracer  # noqa: F401
from .jit import disable_jit, jit  # noqa: F401
from . import flatten_util, tree  # noqa: F401
from .custom_derivatives import custom_gradient, custom_jvp, custom_vjp  # noqa: F401
from .api.remat import (  # noqa: F401
    checkpoint, checkpoint_name, print_saved_residuals, saved_residuals)
from .api import checkpoint_policies  # noqa: F401  (fxad.checkpoint_policies, as JAX)
from . import debug, errors, experimental, nn, random, scipy, sharding, typing  # noqa: F401
from .debug import config, debug_infs, debug_nans  # noqa: F401
from .api.contexts import (  # noqa: F401
    clear_caches, default_matmul_precision, ensure_compile_time_eval, named_scope,
    numpy_dtype_promotion, numpy_rank_promotion)

remat = checkpoint

__all__ = [
    "Array", "Device", "ShapeDtypeStruct", "ShapedArray", "Tracer", "biharmonic",
    "block_until_ready", "checkpoint", "checkpoint_name", "checkpoint_policies",
    "clear_caches", "closure_convert", "config", "custom_gradient", "custom_jvp", "custom_vjp",
    "debug", "debug_infs", "debug_nans", "default_backend", "default_matmul_precision",
    "device_count", "device_get", "device_put", "devices", "disable_jit",
    "ensure_compile_time_eval", "errors", "eval_shape", "experimental", "flatten_util", "grad",
    "hessian", "hvp", "jacfwd", "jacobian", "jacrev", "jet", "jit", "jvp", "laplacian", "lax",
    "linear_transpose", "linearize", "local_device_count", "local_devices", "make_jaxpr",
    "named_call", "named_scope", "nn", "numpy", "numpy_dtype_promotion",
    "numpy_rank_promotion", "pmap", "print_saved_residuals", "process_count", "process_index",
    "pure_callback", "random", "remat", "saved_residuals", "scipy", "shard_map", "sharding",
    "stop_gradient", "tree", "tree_util", "typeof", "typing", "value_and_grad", "vjp", "vmap",
    "weighted_laplacian",
]

__version__ = "0.1.0"


def __getattr__(name):
    # fxad.extend and fxad.sparse load on first use (scipy.sparse is not needed before)
    if name in ("extend", "sparse"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'fxad' has no attribute {name!r}")
