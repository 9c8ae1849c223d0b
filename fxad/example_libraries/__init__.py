"""JAX's example libraries, for JAX programs ported to fxad: `stax` (neural-network layers
as (init_fun, apply_fun) pairs) and `optimizers` (first-order optimizers as (init, update,
get_params) triples). Same signatures, same key splitting and initializers, same update
formulas: a ported program gives JAX's numbers (notes/12_jax_surface.md)."""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
