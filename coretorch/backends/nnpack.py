"""``coretorch.backends.nnpack``: coretorch does not use NNPACK."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: coretorch is not built with NNPACK."""
    return False
