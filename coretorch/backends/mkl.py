"""``coretorch.backends.mkl``: coretorch does not call Intel MKL itself (numpy may, through
whatever BLAS it was built with)."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: coretorch is not built with MKL."""
    return False
