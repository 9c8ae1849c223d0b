"""`jax.experimental.jet`: Taylor-mode differentiation (`fxad.jet` is the same function)."""
from ..api.taylor import jet

__all__ = ["jet"]
