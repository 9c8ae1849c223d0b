"""Debugging: NaN and inf checks (`fxad.debug_nans`, `fxad.debug_infs`, `fxad.config`) and
printing from inside transformed code (`fxad.debug.print`, `fxad.debug.callback`)."""
from .nans import Config, config, debug_infs, debug_nans  # noqa: F401
from .printing import callback, print  # noqa: F401,A004

__all__ = ["callback", "config", "debug_infs", "debug_nans", "print"]
