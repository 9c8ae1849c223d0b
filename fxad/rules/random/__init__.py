"""Random-number primitives: Threefry keys and bits, and the samplers with their own rules."""
from . import bits, counts, gamma, gamma_grad  # noqa: F401
