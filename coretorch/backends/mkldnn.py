"""``coretorch.backends.mkldnn``: coretorch does not call oneDNN (mkldnn); its cpu kernels are
numba and numpy. `enabled` is kept and changes nothing."""

from __future__ import annotations

import sys

from ._flags import switched

__all__ = ["is_available", "flags"]

enabled: bool = True
deterministic: bool = False


def is_available() -> bool:
    """False: coretorch is not built on oneDNN."""
    return False


def flags(enabled: bool = False, deterministic: bool = False):
    """Context manager setting the switches for its body."""
    return switched(sys.modules[__name__], enabled=enabled, deterministic=deterministic)
