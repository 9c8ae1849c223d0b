"""Debugging: NaN checks (`fxad.debug_nans`, `fxad.config.debug_nans`) and printing from
inside transformed code (`fxad.debug.print`, `fxad.debug.callback`)."""
from .nans import Config, config, debug_nans  # noqa: F401
from .printing import callback, print  # noqa: F401,A004

__all__ = ["callback", "config", "debug_nans", "print"]
