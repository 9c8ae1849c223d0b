"""scipy.cluster's names: fxad.scipy.cluster.vq."""
from . import vq  # noqa: F401

__all__ = ["vq"]
