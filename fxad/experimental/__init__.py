"""JAX's `jax.experimental` modules that fxad has: `jet` (Taylor mode)."""
from . import jet  # noqa: F401

__all__ = ["jet"]
